"""core.tracing.batch with a decoder-only model folder (GPT-2, Qwen2): the sentences padded on the right, the
padding given as an attention mask (GPT-2 has no pad token), padding ∧ causal as the mask, and every
real row of the batch computing exactly what the sentence alone computes (issue 29)."""

import pytest
import torch

from core.model.masks import causal_mask
from core.tracing.batch import filler_id, run_batch
from core.tracing.pipeline import EmptyInput, run_pipeline

SENTENCES = ["注意力就是一切 Attention is all you need", "你好", "Hi 👋", "🙂🙂 emoji 表情"]
MODELS = ("hf:gpt2-tiny", "hf:qwen2-tiny")
CLOSE = dict(atol=1e-5, rtol=0)


@pytest.fixture(scope="module")
def pipes(tmp_path_factory):
    """The tiny random model folders of tests/modelfolders.py, loaded as the app loads them."""
    from tests.modelfolders import make_model_folders
    from ui.folders.hf_pipeline import load_model
    from ui.folders.models import find_models

    root = make_model_folders(tmp_path_factory.mktemp("models"), names=("gpt2-tiny", "qwen2-tiny"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GLASSBOX_MODELS", str(root))
        mp.setenv("HF_HUB_CACHE", str(root / "no-hub-cache"))
        find_models(refresh=True)
        loaded = {name: load_model(name) for name in MODELS}
    find_models(refresh=True)
    return loaded


@pytest.fixture(scope="module")
def batches(pipes):
    return {name: run_batch(pipe, SENTENCES) for name, pipe in pipes.items()}


@pytest.mark.parametrize("name", MODELS)
def test_the_model_is_one_causal_stack_without_a_pad_token(pipes, name):
    config = pipes[name].config
    assert config.encoder is False and config.stack == "decoder"
    assert config.pad_id is None  # so the padding must be said by the attention mask, not by an id


@pytest.mark.parametrize("name", MODELS)
def test_sentences_are_padded_on_the_right_with_a_filler_no_real_token_uses(pipes, batches, name):
    pipe, batch = pipes[name], batches[name]
    lengths = [len(pipe.src_encode(s)[1]) for s in SENTENCES]
    assert batch.trace.src_ids is None and batch.trace.decoder  # one causal stack: src_* is tgt_*
    assert batch.src_lengths == batch.tgt_lengths == lengths
    assert batch.src_ids is batch.tgt_ids and batch.src_tokens == batch.tgt_tokens
    assert batch.src_ids.shape == (len(SENTENCES), max(lengths))
    real_ids = set()
    for b, n in enumerate(lengths):
        labels, ids = pipe.src_encode(SENTENCES[b])
        assert batch.src_ids[b, :n].tolist() == ids and batch.src_tokens[b] == labels
        assert (batch.src_ids[b, n:] == batch.pad_id).all()
        real_ids |= set(ids)
    assert batch.pad_id not in real_ids
    assert batch.pad_id == pipe.eos_id  # GPT-2's way: its end-of-text token fills (none typed here)
    assert batch.trace.src_ids is None and batch.trace.encoder == []


@pytest.mark.parametrize("name", MODELS)
def test_the_mask_is_padding_and_causal(batches, name):
    batch = batches[name]
    B, L = batch.tgt_ids.shape
    lengths = torch.tensor(batch.tgt_lengths)
    real = torch.arange(L)[None, :] < lengths[:, None]  # (B, L)
    assert torch.equal(batch.tgt_padding, real[:, None, None, :])
    assert torch.equal(batch.src_padding, batch.tgt_padding)
    assert torch.equal(batch.causal, causal_mask(L)) and batch.causal.shape == (1, 1, L, L)
    expected = real[:, None, None, :] & torch.ones(L, L, dtype=torch.bool).tril()  # (B, 1, L, L)
    assert torch.equal(batch.trace.tgt_mask, expected)
    for layer in batch.trace.decoder:
        assert layer.cross_attn is None
        attn = layer.self_attn
        assert torch.equal(attn.mask, expected.expand_as(attn.mask))
        assert (attn.weights[~attn.mask] == 0).all()
        torch.testing.assert_close(attn.weights.sum(-1), torch.ones(attn.weights.shape[:-1]))


@pytest.mark.parametrize("b", range(len(SENTENCES)))
@pytest.mark.parametrize("name", MODELS)
def test_every_real_row_equals_the_sentence_alone(pipes, batches, name, b):
    pipe, batch = pipes[name], batches[name]
    alone = run_pipeline(pipe, SENTENCES[b], max_tokens=32)
    n = batch.tgt_lengths[b]
    assert alone.tgt_tokens == batch.tgt_tokens[b] and n == len(alone.tgt_tokens)
    tr, single = batch.trace, alone.trace
    torch.testing.assert_close(tr.tgt_embedded[b, :n], single.tgt_embedded[0], **CLOSE)
    for lb, ls in zip(tr.decoder, single.decoder, strict=True):
        torch.testing.assert_close(lb.self_attn.weights[b, :, :n, :n], ls.self_attn.weights[0], **CLOSE)
        torch.testing.assert_close(lb.output[b, :n], ls.output[0], **CLOSE)
    torch.testing.assert_close(tr.logits[b, :n], single.logits[0], **CLOSE)


@pytest.mark.parametrize("name", MODELS)
def test_the_first_layer_alone_is_the_whole_models_first_layer(pipes, batches, name):
    first = run_batch(pipes[name], SENTENCES, layers=1)
    whole = batches[name]
    assert first.layers == 1 and len(first.trace.decoder) == 1
    assert torch.equal(first.tgt_ids, whole.tgt_ids)
    assert torch.equal(first.trace.decoder[0].self_attn.weights, whole.trace.decoder[0].self_attn.weights)


def test_a_typed_end_of_text_token_is_not_taken_for_padding(pipes):
    pipe = pipes["hf:gpt2-tiny"]
    eos = pipe.eos_id
    assert filler_id(pipe, [[5, 6], [7]]) == eos
    assert filler_id(pipe, [[5, eos], [7]]) not in {5, 6, 7, eos}
    ids = pipe.src_encode("<|endoftext|> Hi")[1]
    assert ids[0] == eos  # the tokenizer reads it as the special token: the batch fills with another id
    batch = run_batch(pipe, ["<|endoftext|> Hi", "x"])
    assert batch.tgt_lengths == [len(ids), 1]
    assert batch.pad_id != eos and batch.src_ids[0].tolist() == ids
    assert batch.tgt_padding[0].all() and batch.tgt_padding[1, 0, 0].tolist() == [True] + [False] * (
        len(ids) - 1
    )
    alone = run_pipeline(pipe, "<|endoftext|> Hi", max_tokens=32).trace
    torch.testing.assert_close(batch.trace.logits[0, : len(ids)], alone.logits[0], **CLOSE)


@pytest.mark.parametrize("name", MODELS)
def test_truncation_and_empty_sentences(pipes, name):
    pipe = pipes[name]
    cut = run_batch(pipe, [SENTENCES[0], "你好"], max_tokens=4)
    assert cut.truncated == [True, False] and cut.tgt_lengths[0] == 4
    with pytest.raises(EmptyInput, match="sentence 2 has no tokens") as empty:
        run_batch(pipe, ["你好", "   "])
    assert empty.value.index == 1
