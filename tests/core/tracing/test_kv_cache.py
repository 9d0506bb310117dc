"""Generation's key/value cache (``Transformer.decode_next``): the new tokens alone, reading the keys
and values of the tokens before them, compute what the whole sequence computes at those rows; and
``core.tracing.generate.sample`` writes the same tokens with and without it. Tiny random GPT-2 (learned
positions) and Qwen2 (RoPE, grouped-query attention) folders saved by transformers (tests/modelfolders.py).
"""

import pytest
import torch

from core.loading.folder import load_folder
from core.tracing.generate import sample
from tests.modelfolders import make_model_folders

ATOL = 1e-5


@pytest.fixture(scope="module", params=["gpt2-tiny", "qwen2-tiny"])
def model(request, tmp_path_factory):
    root = make_model_folders(tmp_path_factory.mktemp("models"), names=(request.param,))
    return load_folder(root / request.param)[0]


def _ids(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 500, (2, 14), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, :5] = 0  # the second row left-padded, as a batch of prompts is
    return ids, mask


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("split", [1, 9, 13])
def test_new_tokens_with_the_cache_equal_the_whole_run(model, padded, split):
    ids, mask = _ids()
    mask = mask if padded else None
    whole = model.decode(ids, None, None, mask)
    first = model.decode(ids[:, :split], None, None, None if mask is None else mask[:, :split])
    past = [(t.self_attn.k, t.self_attn.v) for t in first[3]]
    rest = model.decode_next(ids[:, split:], past, mask)
    torch.testing.assert_close(rest[0], whole[0][:, split:], atol=ATOL, rtol=0)  # logits
    for theirs, ours in zip(whole[3], rest[3], strict=True):  # every layer
        torch.testing.assert_close(ours.output, theirs.output[:, split:], atol=ATOL, rtol=0)
        torch.testing.assert_close(ours.self_attn.k, theirs.self_attn.k, atol=ATOL, rtol=0)
        torch.testing.assert_close(ours.self_attn.weights, theirs.self_attn.weights[:, :, split:],
                                   atol=ATOL, rtol=0)  # fmt: skip


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("options", [dict(temperature=0.0), dict(temperature=1.5, top_k=50, seed=3),
                                     dict(temperature=0.9, top_p=0.8, seed=7)])  # fmt: skip
def test_generation_is_the_same_with_and_without_the_cache(model, padded, options):
    ids, mask = _ids(1)
    mask = mask if padded else None
    cached = sample(model, ids, 20, attention_mask=mask, **options)
    whole = sample(model, ids, 20, attention_mask=mask, cache=False, **options)
    assert torch.equal(cached.tokens, whole.tokens)
    for a, b in zip(cached.probs, whole.probs, strict=True):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)


def test_a_cache_needs_a_decoder_only_model():
    from core.model.config import ModelConfig
    from core.model.transformer import Transformer

    paper = Transformer(ModelConfig(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32))
    with pytest.raises(ValueError, match="decoder-only"):
        paper.decode_next(torch.tensor([[1]]), [(torch.zeros(1, 2, 1, 8), torch.zeros(1, 2, 1, 8))])
