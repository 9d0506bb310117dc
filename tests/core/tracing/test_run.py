"""core.tracing.run.SentenceRun: the object every page reads. Each attribute equals run_pipeline's, and a
part the
reader does not ask for is never computed (random weights: never drawn)."""

import pytest
import torch

import core.tracing.pipeline as P
from core.tracing.run import DirectParts, SentenceRun

SENTENCE = "注意力就是一切 Attention is all you need 🙂"


def random_pipe(**sizes):
    settings = dict(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=64, seed=11) | sizes
    return P.load_pipeline(P.PipelineSettings(**settings))


class Counting(DirectParts):
    """DirectParts that records which parts were asked for."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked: list[str] = []

    def whole(self):
        self.asked.append("whole")
        return super().whole()

    def source(self):
        self.asked.append("source")
        return super().source()

    def encoder(self, norm):
        self.asked.append(f"encoder {norm}")
        return super().encoder(norm)

    def greedy(self):
        self.asked.append("greedy")
        return super().greedy()


def lazy(pipe, sentence=SENTENCE, target="", max_tokens=64) -> SentenceRun:
    return SentenceRun(pipe, sentence, target, max_tokens, parts=Counting(pipe, sentence, target, max_tokens))


def same_trace(a, b) -> bool:
    return all(torch.equal(x.self_attn.weights, y.self_attn.weights) and torch.equal(x.output, y.output)
               for x, y in zip(a.encoder, b.encoder, strict=True))


@pytest.mark.parametrize(("target", "max_tokens"), [("", 64), ("", 5), ("attention is all", 8)])
def test_every_attribute_is_run_pipelines(target, max_tokens):
    pipe = random_pipe()
    eager = P.run_pipeline(pipe, SENTENCE, target, max_tokens=max_tokens)
    run = lazy(pipe, target=target, max_tokens=max_tokens)
    for name in ("src_tokens", "tgt_tokens", "predicted", "truncated", "total_tokens", "target_given",
                 "answer", "answer_kind"):
        assert getattr(run, name) == getattr(eager, name), name
    assert run.decoded is None and eager.decoded is None
    assert torch.equal(run.trace.logits, eager.trace.logits)
    assert torch.equal(run.source.src_embedded, eager.trace.src_embedded)
    assert same_trace(run.encoder_trace(), eager.trace)
    assert torch.equal(run.attention("cross", 1).weights, eager.trace.decoder[1].cross_attn.weights)
    assert torch.equal(run.attention("decoder", 0).scores, eager.trace.decoder[0].self_attn.scores)


def test_random_weights_compute_only_what_is_read():
    pipe = random_pipe(seed=12)
    run = lazy(pipe)
    assert run.src_tokens and run.tgt_tokens[0] == "[BOS]" and not run.target_given
    assert run.parts.asked == [] and not pipe.drawn  # tokens: the tokenizer alone
    embedded = run.source.src_embedded
    assert run.parts.asked == ["source"] and not pipe.drawn  # the embedding table alone is drawn
    encoder = run.encoder
    assert run.parts.asked == ["source", "encoder None"] and not pipe.drawn  # the decoder is not drawn
    assert run.trace_of("encoder").encoder is encoder and run.attention("encoder", 1) is encoder[1].self_attn
    other = run.encoder_trace("pre")
    assert run.parts.asked[-1] == "encoder pre" and not pipe.drawn
    decoding = run.decoding  # random weights read the sentence: greedy decoding is made apart
    assert run.parts.asked[-1] == "greedy" and pipe.drawn
    whole = run.trace
    assert run.parts.asked[-1] == "whole"
    assert same_trace(whole, run._encoder_alone)  # the same numbers either way
    assert torch.equal(embedded, whole.src_embedded)
    assert torch.equal(other.memory, P.encoder_trace(P.with_norm(pipe, "pre"), SENTENCE).memory)
    assert torch.equal(decoding.tokens, P.greedy_sentence(pipe, SENTENCE).tokens)
    run.encoder, run.source  # noqa: B018 (read again: nothing more is computed)
    assert run.parts.asked.count("whole") == 1 and run.parts.asked.count("encoder None") == 1


def test_after_the_whole_run_every_part_is_read_from_it():
    pipe = random_pipe(seed=13)
    run = lazy(pipe)
    run.trace  # noqa: B018
    run.source, run.encoder, run.trace_of("encoder"), run.tgt_tokens  # noqa: B018
    assert run.parts.asked == ["whole"]


def test_trained_weights_decode_their_own_output_and_read_it_once():
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"))
    assert pipe.weights == "trained" and pipe.task == "pinyin"
    run = lazy(pipe, "天气预报")
    eager = P.run_pipeline(pipe, "天气预报")
    assert run.answer == eager.answer == ["tiān", "qì", "yù", "bào"]
    assert run.decoding is run.decoded and torch.equal(run.decoded.tokens, eager.decoded.tokens)
    assert run.tgt_tokens == eager.tgt_tokens and run.answer_kind == "greedy"
    assert same_trace(run.encoder_trace(), eager.trace)
    assert run.parts.asked == ["whole"]  # loaded weights are whole: the encoder is the run's


@pytest.mark.parametrize("sentence", ["", "   ", "\n\t"])
def test_no_tokens_is_said_when_the_run_is_made(sentence):
    with pytest.raises(P.EmptyInput):
        lazy(random_pipe(), sentence)


def test_an_encoder_only_model_is_cut_as_run_pipeline_cuts_it(minilm_pipe):
    pipe = minilm_pipe
    assert pipe.weights == "minilm", pipe.warning  # the optional package is installed in CI
    long = "attention is all you need " * 20
    for max_tokens in (5, 64):
        run = lazy(pipe, long, max_tokens=max_tokens)
        eager = P.run_pipeline(pipe, long, max_tokens=max_tokens)
        assert (run.src_tokens, run.total_tokens, run.truncated) == (
            eager.src_tokens, eager.total_tokens, eager.truncated)
        assert run.parts.asked == []
        assert run.tgt_tokens == [] and run.decoding is None and run.config.stack == "encoder"
        assert same_trace(run.encoder_trace(), eager.trace) and run.src_tokens[-1] == "[SEP]"


def test_what_the_decoder_reads_is_known_without_running_the_model():
    random, trained = random_pipe(seed=14), P.load_pipeline(P.PipelineSettings(weights="trained"))
    cases = [(random, "", "sentence"), (random, "a target", "target"), (trained, "", "own"),
             (trained, "tiān qì", "target")]
    for pipe, target, reads in cases:
        run = lazy(pipe, "天气预报", target=target)
        assert (run.decoder_reads, run.answer_kind) == (reads, {"own": "greedy", "target": "teacher"}.get(
            reads, "sentence"))
        assert run.parts.asked == []
        assert run.answer_kind == P.run_pipeline(pipe, "天气预报", target).answer_kind
        assert (run.decoded is not None) == (reads == "own")
