"""Traces survive pickling exactly (the app's st.cache_data pickles every run it keeps)."""

import dataclasses
import gc
import pickle

import pytest
import torch

import core.pipeline as P
from core.config import ModelConfig
from core.model import Transformer
from core.trace import DecodeResult, ModelTrace


def tensors(obj, path="run"):
    """Every tensor inside ``obj`` (dataclasses, lists, dicts), by its path."""
    if isinstance(obj, torch.Tensor):
        yield path, obj
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from tensors(getattr(obj, f.name), f"{path}.{f.name}")
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            yield from tensors(item, f"{path}[{i}]")
    elif isinstance(obj, dict):
        for key, item in obj.items():
            yield from tensors(item, f"{path}[{key!r}]")


def assert_same_tensors(a, b):
    ta, tb = dict(tensors(a)), dict(tensors(b))
    assert ta.keys() == tb.keys() and len(ta) > 50
    for path, x in ta.items():
        y = tb[path]
        assert (x.dtype, x.shape) == (y.dtype, y.shape), path
        assert torch.equal(x, y), path


@pytest.mark.parametrize("positions", ["sinusoidal", "alibi"])
def test_a_pipeline_run_round_trips_through_pickle(positions):
    pipe = P.load_pipeline(P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2,
                                              d_ff=64, positions=positions))
    run = P.run_pipeline(pipe, "注意力就是一切 Attention 🙂 <b>", target="")
    back = pickle.loads(pickle.dumps(run))
    assert back.src_tokens == run.src_tokens and back.tgt_tokens == run.tgt_tokens
    assert isinstance(back.trace, ModelTrace)
    assert_same_tensors(run, back)
    # broadcast masks (and ALiBi's bias) come back as the same kind of view: one stored slice
    for before, after in ((run.trace.encoder[0].self_attn, back.trace.encoder[0].self_attn),
                          (run.trace.decoder[1].cross_attn, back.trace.decoder[1].cross_attn)):
        assert after.mask.stride() == before.mask.stride() and 0 in after.mask.stride()
        if before.bias is not None:
            assert after.bias.stride() == before.bias.stride()
    if positions == "alibi":
        assert back.trace.encoder[0].self_attn.bias is not None


def test_greedy_decoding_round_trips_with_every_step():
    model = Transformer(ModelConfig(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32, seed=1)).eval()
    result = model.greedy_decode(torch.tensor([[5, 6, 7, 8]]), max_new_tokens=4, bos_id=1, eos_id=2)
    back = pickle.loads(pickle.dumps(result))
    assert isinstance(back, DecodeResult) and len(back.steps) == len(result.steps) > 1
    assert all(isinstance(step, ModelTrace) for step in back.steps)
    assert_same_tensors(result, back)


def test_unpickled_tensors_own_their_memory_and_are_writable():
    model = Transformer(ModelConfig(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32)).eval()
    trace = model.trace(torch.tensor([[5, 6, 7]]), torch.tensor([[1, 5]]))
    back = pickle.loads(pickle.dumps(trace))
    expected = trace.memory.clone()
    gc.collect()  # nothing but the tensor holds the bytes it was read from
    assert torch.equal(back.memory, expected)
    back.memory.add_(1)  # a writable tensor of its own: the original is untouched
    assert torch.equal(trace.memory, expected)


def test_empty_and_odd_tensors_round_trip():
    model = Transformer(ModelConfig(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32)).eval()
    trace = model.trace(torch.tensor([[5, 6, 7]]))
    odd = dataclasses.replace(
        trace,
        logits=torch.empty(1, 0, 20),  # no bytes at all
        decoder_output=torch.arange(12.0).reshape(3, 4).t(),  # a transposed (non-contiguous) view
        tgt_ids=torch.tensor([[1, 2]], dtype=torch.int64),
    )
    back = pickle.loads(pickle.dumps(odd))
    assert back.logits.shape == (1, 0, 20)
    assert torch.equal(back.decoder_output, odd.decoder_output)
    assert torch.equal(back.tgt_ids, odd.tgt_ids) and back.tgt_ids.dtype == torch.int64
