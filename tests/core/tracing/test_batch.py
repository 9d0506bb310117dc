"""core.tracing.batch: a padded batch, its masks (True = may attend), and rows equal to the sentence alone."""

import pytest
import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.vocab import BOS, BOS_ID, PAD_ID, Vocab
from core.tracing.batch import run_batch
from core.tracing.pipeline import (
    EmptyInput,
    PipelineSettings,
    load_pipeline,
    pipeline_from_model,
    run_pipeline,
)

SENTENCES = ["注意力就是一切 Attention is all you need", "你好", "Hi 👋"]


@pytest.fixture(scope="module")
def pipe():
    return load_pipeline(PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=64))


@pytest.fixture(scope="module")
def batch(pipe):
    return run_batch(pipe, SENTENCES)


def test_ids_are_padded_with_pad_id(pipe, batch):
    B = len(SENTENCES)
    lengths = [len(pipe.src_encode(s)[1]) for s in SENTENCES]
    assert batch.src_lengths == lengths
    assert batch.src_ids.shape == (B, max(lengths))
    assert batch.tgt_ids.shape == (B, max(lengths) + 1)  # [BOS] + the sentence (random weights)
    for b, n in enumerate(lengths):
        assert batch.src_ids[b, :n].tolist() == pipe.src_encode(SENTENCES[b])[1]
        assert (batch.src_ids[b, n:] == PAD_ID).all()
        assert batch.tgt_ids[b, 0] == BOS_ID and batch.tgt_tokens[b][0] == BOS
        assert (batch.tgt_ids[b, n + 1 :] == PAD_ID).all()


def test_mask_shapes(batch):
    B, S = batch.src_ids.shape
    T = batch.tgt_ids.shape[1]
    h = 4
    assert batch.src_padding.shape == (B, 1, 1, S) and batch.src_padding.dtype == torch.bool
    assert batch.tgt_padding.shape == (B, 1, 1, T)
    assert batch.causal.shape == (1, 1, T, T)
    assert batch.trace.src_mask.shape == (B, 1, 1, S)
    assert batch.trace.tgt_mask.shape == (B, 1, T, T)
    assert batch.trace.encoder[0].self_attn.mask.shape == (B, h, S, S)
    assert batch.trace.decoder[0].self_attn.mask.shape == (B, h, T, T)
    assert batch.trace.decoder[0].cross_attn.mask.shape == (B, h, T, S)


def test_pad_positions_are_false(batch):
    for b, (n, m) in enumerate(zip(batch.src_lengths, batch.tgt_lengths, strict=True)):
        assert batch.src_padding[b, 0, 0, :n].all() and not batch.src_padding[b, 0, 0, n:].any()
        assert batch.tgt_padding[b, 0, 0, :m].all() and not batch.tgt_padding[b, 0, 0, m:].any()
        enc = batch.trace.encoder[0].self_attn.mask[b]  # (h, S, S): no query may look at a pad key
        assert not enc[:, :, n:].any() and enc[:, :, :n].all()


def test_merged_mask_is_padding_and_causal(batch):
    T = batch.tgt_ids.shape[1]
    expected = batch.tgt_padding & batch.causal  # (B, 1, T, T)
    assert torch.equal(batch.trace.tgt_mask, expected)
    assert torch.equal(batch.causal[0, 0], torch.ones(T, T, dtype=torch.bool).tril())
    for layer in batch.trace.decoder:
        assert torch.equal(layer.self_attn.mask, expected.expand_as(layer.self_attn.mask))
        cross = layer.cross_attn.mask  # (B, h, T, S): key padding of the source only
        assert torch.equal(cross, batch.src_padding.expand_as(cross))


def test_masked_weights_are_zero_and_rows_sum_to_one(batch):
    for attn in (batch.trace.encoder[1].self_attn, batch.trace.decoder[1].self_attn):
        assert (attn.weights[~attn.mask] == 0).all()
        torch.testing.assert_close(attn.weights.sum(-1), torch.ones(attn.weights.shape[:-1]))


def _assert_rows_equal_single(pipe, batch, single_trace, b):
    n, m = batch.src_lengths[b], batch.tgt_lengths[b]
    tr = batch.trace
    close = dict(atol=1e-5, rtol=0)
    torch.testing.assert_close(tr.memory[b, :n], single_trace.memory[0], **close)
    for lb, ls in zip(tr.encoder, single_trace.encoder, strict=True):
        torch.testing.assert_close(lb.self_attn.weights[b, :, :n, :n], ls.self_attn.weights[0], **close)
        torch.testing.assert_close(lb.output[b, :n], ls.output[0], **close)
    for lb, ls in zip(tr.decoder, single_trace.decoder, strict=True):
        torch.testing.assert_close(lb.self_attn.weights[b, :, :m, :m], ls.self_attn.weights[0], **close)
        torch.testing.assert_close(lb.cross_attn.weights[b, :, :m, :n], ls.cross_attn.weights[0], **close)
        torch.testing.assert_close(lb.output[b, :m], ls.output[0], **close)
    torch.testing.assert_close(tr.logits[b, :m], single_trace.logits[0], **close)


@pytest.mark.parametrize("b", range(len(SENTENCES)))
def test_batch_rows_equal_the_sentence_alone(pipe, batch, b):
    alone = run_pipeline(pipe, SENTENCES[b], max_tokens=32)
    assert alone.src_tokens == batch.src_tokens[b] and alone.tgt_tokens == batch.tgt_tokens[b]
    _assert_rows_equal_single(pipe, batch, alone.trace, b)


def test_trained_weights_feed_the_greedy_output():
    src_vocab, tgt_vocab = Vocab(list("你好中国人")), Vocab(["nǐ", "hǎo", "zhōng", "guó", "rén"])
    config = ModelConfig(
        len(src_vocab), len(tgt_vocab), d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0
    )
    pipe = pipeline_from_model(Transformer(config), src_vocab, tgt_vocab, "pinyin", {})
    sentences = ["中国人", "你好"]
    batch = run_batch(pipe, sentences)
    for b, sentence in enumerate(sentences):
        alone = run_pipeline(pipe, sentence, max_tokens=32)  # no target: greedy decoding
        assert batch.tgt_tokens[b] == alone.tgt_tokens
        assert batch.tgt_ids[b, : batch.tgt_lengths[b]].tolist() == alone.trace.tgt_ids[0].tolist()
        _assert_rows_equal_single(pipe, batch, alone.trace, b)


def test_truncation_and_bad_input(pipe):
    long = run_batch(pipe, ["a b c d e f g h i j", "你好"], max_tokens=4)
    assert long.truncated == [True, False] and long.src_lengths == [4, 2]
    with pytest.raises(EmptyInput, match="sentence 2 has no tokens") as empty:
        run_batch(pipe, ["你好", "   "])
    assert empty.value.index == 1
    with pytest.raises(EmptyInput) as empty:
        run_batch(pipe, [" ", "你好"])
    assert empty.value.index == 0
    with pytest.raises(ValueError, match="at least one sentence"):
        run_batch(pipe, [])


def test_an_encoder_only_batch_pads_the_source_and_has_no_decoder_side():
    """A pretrained-like encoder (decoder=False): padding changes nothing in a real row."""
    from core.model.config import ModelConfig
    from core.model.transformer import Transformer
    from core.tracing.pipeline import Pipeline, PipelineSettings

    model = Transformer(ModelConfig(50, 50, d_model=16, num_heads=2, decoder=False, seed=1)).eval()
    words = {"[CLS]": 1, "[SEP]": 2, "a": 5, "b": 6, "c": 7}

    def encode(text):
        tokens = ["[CLS]", *text.split(), "[SEP]"]
        return tokens, [words[t] for t in tokens]

    pipe = Pipeline(PipelineSettings(weights="random"), model, "minilm", "", encode, encode, [], [])
    batch = run_batch(pipe, ["a b c a", "b"], max_tokens=4)
    assert batch.src_tokens == [["[CLS]", "a", "b", "[SEP]"], ["[CLS]", "b", "[SEP]"]]
    assert batch.truncated == [True, False]
    assert batch.tgt_ids.shape == (2, 0) and batch.trace.decoder == []
    alone = model.trace(torch.tensor([[1, 6, 2]]))
    torch.testing.assert_close(batch.trace.memory[1, :3], alone.memory[0], atol=1e-5, rtol=1e-5)
    with pytest.raises(EmptyInput, match="sentence 2 has no tokens") as empty:
        run_batch(pipe, ["a", ""], max_tokens=4)
    assert empty.value.index == 1


def test_first_layer_batch_has_the_whole_models_first_layer_self_attention(pipe, batch):
    first = run_batch(load_pipeline(PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2,
                                                     d_ff=64)), SENTENCES, layers=1)
    assert first.layers == 1 and batch.layers is None and len(first.trace.encoder) == 1
    assert torch.equal(first.src_ids, batch.src_ids) and torch.equal(first.tgt_ids, batch.tgt_ids)
    assert torch.equal(first.trace.encoder[0].self_attn.weights, batch.trace.encoder[0].self_attn.weights)
    assert torch.equal(first.trace.decoder[0].self_attn.weights, batch.trace.decoder[0].self_attn.weights)
    assert torch.equal(first.trace.decoder[0].self_attn.mask, batch.trace.decoder[0].self_attn.mask)
    assert run_batch(pipe, SENTENCES, layers=2).layers is None  # every layer: the whole model
