import dataclasses

import pytest

from core.model.config import ModelConfig


def test_defaults_and_hashable():
    c = ModelConfig(src_vocab_size=100, tgt_vocab_size=80)
    assert (c.d_model, c.num_heads, c.norm, c.pad_id) == (64, 4, "post", 0)
    assert c.d_k == 16
    assert hash(c) == hash(ModelConfig(100, 80))
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.d_model = 32


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(d_model=10, num_heads=3), "d_model=10 is not divisible by num_heads=3"),
        (dict(num_heads=0), "num_heads=0 must be a positive integer"),
        (dict(d_model=-8), "d_model=-8 must be a positive integer"),
        (dict(num_layers=2.5), "num_layers=2.5 must be a positive integer"),
        (dict(norm="sandwich"), "norm='sandwich' must be one of ('post', 'pre')"),
        (dict(dropout=1.0), "dropout=1.0 must be a number in [0, 1)"),
        (dict(pad_id=100), "pad_id=100 is outside a vocabulary of size 80"),
        (dict(seed="x"), "seed='x' must be an integer"),
    ],
)
def test_invalid_values_name_themselves(kwargs, message):
    with pytest.raises(ValueError) as e:
        ModelConfig(100, 80, **kwargs)
    assert str(e.value) == message
