"""The path the app takes: text -> tokens -> trace, with either kind of weights."""

import pytest
import torch

import core.pipeline as P
from core.checkpoint import save_checkpoint
from core.config import ModelConfig
from core.model import Transformer
from core.vocab import Vocab


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


def test_target_is_teacher_forced(random_pipe):
    run = P.run_pipeline(random_pipe, "hello world", target="bonjour le monde")
    assert run.target_given and run.decoded is None
    assert (
        run.tgt_tokens[0] == "[BOS]" and "".join(run.tgt_tokens[1:]).replace("␣", " ") == "bonjour le monde"
    )


def test_long_input_is_truncated_and_says_so(random_pipe):
    run = P.run_pipeline(random_pipe, "word " * 5000, max_tokens=16)
    assert run.truncated and len(run.src_tokens) == 16 and run.total_tokens > 16


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_input_is_refused_clearly(random_pipe, text):
    with pytest.raises(P.EmptyInput, match="The sentence has no tokens: type some text."):
        P.run_pipeline(random_pipe, text)


def test_missing_or_broken_checkpoint_falls_back_with_a_warning(tmp_path):
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"), checkpoint=tmp_path / "missing.pt")
    assert pipe.kind == "random" and "no such checkpoint file" in pipe.warning
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"\x00garbage" * 100)
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"), checkpoint=bad)
    assert pipe.kind == "random" and "could not be used" in pipe.warning


def test_trained_pipeline_decodes_greedily_and_marks_unknowns(tmp_path):
    src_vocab, tgt_vocab = Vocab(list("中国人")), Vocab(["zhōng", "guó", "rén"])
    model = Transformer(
        ModelConfig(len(src_vocab), len(tgt_vocab), d_model=16, num_heads=2, num_layers=1, d_ff=32)
    )
    path = tmp_path / "tiny.pt"
    save_checkpoint(path, model, (src_vocab, tgt_vocab), "pinyin", {"test_token_acc": 0.5})
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"), checkpoint=path)
    assert (
        pipe.kind == "trained"
        and pipe.warning is None
        and "汉字→拼音" in pipe.label
        and "50.0%" in pipe.label
    )
    run = P.run_pipeline(pipe, "中国 ok", target="")
    assert run.src_tokens == ["中", "国", "[UNK]", "[UNK]"]
    assert run.decoded is not None and torch.equal(run.decoded.steps[-1].tgt_ids, run.trace.tgt_ids)
    assert run.tgt_tokens[0] == "[BOS]"
    run = P.run_pipeline(pipe, "中国", target="zhōng xyz")
    assert run.tgt_tokens == ["[BOS]", "zhōng", "[UNK]"]


def test_the_shipped_model_decodes_one_syllable_per_character():
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"))
    assert pipe.kind == "trained"
    run = P.run_pipeline(pipe, "注意力就是一切", target="")
    out = [t for t in run.decoded.tokens[0, 1:].tolist()]
    assert [pipe.tgt_labels[i] for i in out] == ["zhù", "yì", "lì", "jiù", "shì", "yī", "qiè"]
