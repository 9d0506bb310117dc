"""core.teaching.questions: predict-then-reveal questions made from the model on screen. The right option is
what the trace says (argmax of the weights or logits, recomputed here with torch), the options are
distinct and hold it once, masked keys are never offered, a seed gives the same question (and id)
everywhere; BPE counts match core.tokenizers.bpe and Hugging Face `tokenizers`."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import core.tracing.pipeline as P
from core.teaching.questions import (
    MAX_OPTIONS,
    MIN_OPTIONS,
    NoQuestion,
    Question,
    bpe_count_question,
    cross_attention_question,
    distinct_labels,
    next_token_question,
    questions_for,
    run_identity,
    self_attention_question,
)
from core.tokenizers.bpe import BPETokenizer
from core.tracing.run import SentenceRun
from tests.hf_reference import hf_count

ROOT = Path(__file__).resolve().parents[3]
SENTENCE = "重庆很重要"
MIXED = "注意力就是一切 Attention is all you need"


@pytest.fixture(scope="module")
def minilm(minilm_pipe):
    return SentenceRun(minilm_pipe, 'The cat sat on the mat with the other cat')


@pytest.fixture(params=["trained", "mixed_random"])
def seq2seq(request):
    return request.getfixturevalue(request.param)


def expected_label(tokens, j):
    """The label the question must give token j: itself, with its position when it is not unique."""
    return tokens[j] if list(tokens).count(tokens[j]) == 1 else f"{tokens[j]} ({j})"


def assert_well_formed(q: Question):
    assert MIN_OPTIONS <= len(q.options) <= MAX_OPTIONS
    assert len(set(q.options)) == len(q.options)  # unique, so the answer is there exactly once
    assert 0 <= q.answer < len(q.options)
    assert len(q.values) == len(q.options) and q.value == q.values[q.answer]
    assert isinstance(q.id, str) and len(q.id) == 12
    json.dumps(q.params)  # plain data: it travels to other servers


# -- attention ----------------------------------------------------------------------------------------


def test_cross_attention_answer_is_the_argmax_of_the_mean_or_of_a_head(seq2seq):
    run = seq2seq
    trace, src, tgt = run.trace, run.src_tokens, run.tgt_tokens
    for layer in range(len(trace.decoder)):
        weights = trace.decoder[layer].cross_attn.weights[0]  # (h, T, S)
        for position in range(len(tgt)):
            for head in [None, *range(weights.size(0))]:
                q = cross_attention_question(trace, src, tgt, position, layer, head, seed=position)
                row = weights[:, position].mean(0) if head is None else weights[head, position]
                best = int(torch.argmax(row))
                assert_well_formed(q)
                assert q.options[q.answer] == expected_label(src, best)
                assert q.params["keys"][q.answer] == best
                assert q.value == pytest.approx(float(row[best]))
                assert (q.params["head"], q.params["over"]) == (
                    head,
                    "mean of heads" if head is None else "head",
                )
                assert (q.params["layer"], q.params["position"]) == (layer, position)
                for label, key, value in zip(q.options, q.params["keys"], q.values, strict=True):
                    assert label == expected_label(src, key) and value == pytest.approx(float(row[key]))


def test_cross_attention_layer_minus_one_is_the_last_layer(trained):
    run = trained
    last = len(run.trace.decoder) - 1
    a = cross_attention_question(run.trace, run.src_tokens, run.tgt_tokens, 2, -1, seed=1)
    b = cross_attention_question(run.trace, run.src_tokens, run.tgt_tokens, 2, last, seed=1)
    assert a == b and a.params["layer"] == last


def test_the_trained_models_cross_attention_tells_the_two_zhong_apart(trained):
    """重庆很重要: 重 twice. Decoder position 0 ([BOS], about to write 'chóng') looks at the first 重,
    position 3 (reads 'hěn', writes 'zhòng') at the second: the options say which."""
    run = trained
    assert run.src_tokens == ["重", "庆", "很", "重", "要"]
    assert distinct_labels(run.src_tokens, range(5)) == ["重 (0)", "庆", "很", "重 (3)", "要"]
    for position, answer in ((0, "重 (0)"), (3, "重 (3)")):
        q = cross_attention_question(run.trace, run.src_tokens, run.tgt_tokens, position)
        row = run.trace.decoder[-1].cross_attn.weights[0, :, position].mean(0)
        assert q.options[q.answer] == answer == expected_label(run.src_tokens, int(row.argmax()))
        assert "重" not in q.options


def test_self_attention_answer_is_the_argmax_and_masked_keys_are_never_offered(seq2seq):
    run = seq2seq
    for attn_kind, tokens, layers in (
        ("encoder", run.src_tokens, run.trace.encoder),
        ("decoder", run.tgt_tokens, run.trace.decoder),
    ):
        for layer, block in enumerate(layers):
            attn = block.self_attn
            for head in range(attn.weights.size(1)):
                for query in range(len(tokens)):
                    allowed = attn.mask[0, head, query].nonzero().flatten().tolist()
                    if len(allowed) < MIN_OPTIONS:  # a decoder's first two positions see 1 and 2 keys
                        with pytest.raises(NoQuestion):
                            self_attention_question(run.trace, attn_kind, layer, head, query, tokens, tokens)
                        continue
                    q = self_attention_question(run.trace, attn_kind, layer, head, query, tokens, tokens)
                    row = attn.weights[0, head, query]
                    best = int(torch.argmax(row))
                    assert_well_formed(q)
                    assert q.options[q.answer] == expected_label(tokens, best)
                    assert set(q.params["keys"]) <= set(allowed)
                    if attn_kind == "decoder":
                        assert max(q.params["keys"]) <= query  # never a later position


def test_a_masked_key_is_never_offered_even_when_its_weight_is_highest(trained):
    """Padding: keys 1 and 3 masked (with the highest weights left in): neither is an option."""
    trace = trained.trace
    attn = trace.encoder[0].self_attn
    weights = torch.tensor([0.05, 0.4, 0.2, 0.3, 0.05]).expand_as(attn.weights).contiguous()
    mask = torch.tensor([True, False, True, False, True]).expand_as(attn.mask).contiguous()
    layer = dataclasses.replace(
        trace.encoder[0], self_attn=dataclasses.replace(attn, weights=weights, mask=mask)
    )
    padded = dataclasses.replace(trace, encoder=[layer])
    q = self_attention_question(padded, "encoder", 0, 0, 0, trained.src_tokens, trained.src_tokens)
    assert sorted(q.params["keys"]) == [0, 2, 4]
    assert q.params["keys"][q.answer] == 2  # the highest weight among the keys it may attend
    assert len(q.options) == 3  # four asked for, three allowed
    mask = torch.tensor([True, False, True, False, False]).expand_as(attn.mask).contiguous()
    layer = dataclasses.replace(layer, self_attn=dataclasses.replace(layer.self_attn, mask=mask))
    with pytest.raises(NoQuestion, match="2 candidates: a question needs 3"):
        self_attention_question(
            dataclasses.replace(trace, encoder=[layer]),
            "encoder",
            0,
            0,
            0,
            trained.src_tokens,
            trained.src_tokens,
        )


def test_ties_with_the_best_are_not_offered_and_the_answer_is_argmaxs(trained):
    trace = trained.trace
    attn = trace.encoder[0].self_attn
    weights = torch.tensor([0.3, 0.1, 0.3, 0.2, 0.1]).expand_as(attn.weights).contiguous()
    layer = dataclasses.replace(trace.encoder[0], self_attn=dataclasses.replace(attn, weights=weights))
    tied = dataclasses.replace(trace, encoder=[layer])
    q = self_attention_question(tied, "encoder", 0, 0, 0, trained.src_tokens, trained.src_tokens)
    assert q.params["keys"][q.answer] == 0 == int(torch.argmax(weights[0, 0, 0]))  # argmax: the first
    assert 2 not in q.params["keys"]  # a second right answer


def test_bad_attention_arguments(trained, minilm):
    run = trained
    with pytest.raises(ValueError, match="attn_kind='cross' must be 'encoder' or 'decoder'"):
        self_attention_question(run.trace, "cross", 0, 0, 2, run.tgt_tokens, run.src_tokens)
    with pytest.raises(NoQuestion, match="layer=7 is out of range"):
        self_attention_question(run.trace, "encoder", 7, 0, 2, run.src_tokens, run.src_tokens)
    with pytest.raises(NoQuestion, match="position=9 is out of range"):
        cross_attention_question(run.trace, run.src_tokens, run.tgt_tokens, 9)
    with pytest.raises(NoQuestion, match="encoder-only"):
        cross_attention_question(minilm.trace, minilm.src_tokens, [], 0)
    with pytest.raises(NoQuestion, match="no decoder layers"):
        self_attention_question(minilm.trace, "decoder", 0, 0, 0, [], [])
    with pytest.raises(ValueError, match="n_options=2 must be between 3 and 5"):
        cross_attention_question(run.trace, run.src_tokens, run.tgt_tokens, 1, n_options=2)


@pytest.mark.parametrize("n_options", [3, 4, 5])
def test_the_number_of_options_is_asked_for(trained, n_options):
    run = trained
    q = cross_attention_question(run.trace, run.src_tokens, run.tgt_tokens, 1, n_options=n_options)
    assert len(q.options) == n_options
    q = next_token_question(run.trace, run.pipe.tgt_labels, 1, n_options=n_options)
    assert len(q.options) == n_options


# -- the next token -----------------------------------------------------------------------------------


def test_next_token_answer_is_the_argmax_and_the_options_are_the_top_k(seq2seq):
    run = seq2seq
    labels = run.pipe.tgt_labels
    for position in range(len(run.tgt_tokens)):
        q = next_token_question(run.trace, labels, position, seed=3)
        logits = run.trace.logits[0, position]
        assert_well_formed(q)
        assert q.params["ids"][q.answer] == int(torch.argmax(logits))
        assert q.options[q.answer] == run.predicted[position]  # the run's own prediction
        assert set(q.params["ids"]) == set(torch.topk(logits, 4).indices.tolist())
        probs = torch.softmax(logits.double(), -1)
        assert list(q.values) == pytest.approx([float(probs[i]) for i in q.params["ids"]])


def test_next_token_labels_shared_by_two_ids_carry_the_id(trained):
    labels = list(trained.pipe.tgt_labels)
    logits = trained.trace.logits[0, 1]
    top = torch.topk(logits, 4).indices.tolist()
    labels[top[1]] = labels[top[0]]  # two of the top tokens spelt alike
    q = next_token_question(trained.trace, labels, 1)
    assert q.options[q.answer] == f"{labels[top[0]]} (id {top[0]})"
    assert len(set(q.options)) == 4


# -- BPE ----------------------------------------------------------------------------------------------



@pytest.mark.parametrize("text", [SENTENCE, "aaabdaaabac", "the cat and the hat", MIXED, "🙂🙂 ok 🙂"])
@pytest.mark.parametrize("k", [0, 1, 3, 8, 200])
def test_bpe_count_against_core_bpe_and_hugging_face(text, k):
    q = bpe_count_question(text, k, seed=k)
    expected = len(BPETokenizer.train(text, k).tokenize(text))
    assert_well_formed(q)
    assert q.options[q.answer] == str(expected) and q.value == expected
    assert expected == hf_count(text, k)
    counts = [int(o) for o in q.options]
    assert counts == list(q.values) and min(counts) >= 1
    assert max(abs(c - expected) for c in counts) <= len(counts) - 1  # the nearest counts


def test_bpe_count_of_an_empty_text_is_no_question():
    with pytest.raises(NoQuestion):
        bpe_count_question("", 2)


# -- ids and seeds ------------------------------------------------------------------------------------


def test_questions_are_deterministic_for_a_seed_and_ids_are_stable(trained):
    again = SentenceRun(P.load_pipeline(P.PipelineSettings(weights="trained")), SENTENCE)  # another server
    first, second = questions_for(trained, 7), questions_for(again, 7)
    assert first == second
    assert [q.id for q in first] == [q.id for q in second]
    other_seed = questions_for(trained, 8)
    assert {q.id for q in first}.isdisjoint(q.id for q in other_seed)
    other_sentence = questions_for(SentenceRun(trained.pipe, "重庆很重要。"), 7)
    assert {q.id for q in first}.isdisjoint(q.id for q in other_sentence)
    assert len({q.id for q in first}) == len(first)
    assert len(set(first)) == len(first)  # hashable (by id): usable as a key


def test_the_same_question_under_other_seeds_differs_only_in_its_shuffle(trained):
    run = trained
    asked = [cross_attention_question(run.trace, run.src_tokens, run.tgt_tokens, 2, seed=s) for s in range(8)]
    assert len({q.options[q.answer] for q in asked}) == 1  # the model's answer
    assert len({q.id for q in asked}) == 8
    assert len({q.options for q in asked}) > 1  # shuffled by the seed


def test_ids_do_not_depend_on_the_process(mixed_random, tmp_path):
    """Another Python process (another hash salt) gives the same ids: what several servers need."""
    script = (
        "import core.tracing.pipeline as P; from core.tracing.run import SentenceRun\n"
        "from core.teaching.questions import questions_for\n"
        "s = P.PipelineSettings(weights='random', d_model=32, num_heads=4, num_layers=2, d_ff=64, seed=5)\n"
        f"print(' '.join(q.id for q in questions_for(SentenceRun(P.load_pipeline(s), {MIXED!r}), 11)))"
    )
    env = os.environ | {"PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert out.stdout.split() == [q.id for q in questions_for(mixed_random, 11)]


def test_run_identity_tells_weights_and_sentences_apart(trained, mixed_random):
    assert run_identity(trained) == run_identity(SentenceRun(trained.pipe, SENTENCE))
    assert run_identity(trained) != run_identity(SentenceRun(trained.pipe, "重要"))
    assert run_identity(trained) != run_identity(SentenceRun(trained.pipe, SENTENCE, target="chong qing"))
    reseeded = P.load_pipeline(dataclasses.replace(mixed_random.pipe.settings, seed=6))
    assert run_identity(mixed_random) != run_identity(SentenceRun(reseeded, MIXED))


# -- what a run asks ----------------------------------------------------------------------------------


def kinds(questions):
    return [(q.kind, q.params.get("attn_kind")) for q in questions]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_questions_for_an_encoder_decoder(seq2seq, seed):
    questions = questions_for(seq2seq, seed)
    assert kinds(questions) == [
        ("cross_attention", "cross"),
        ("self_attention", "encoder"),
        ("self_attention", "decoder"),
        ("next_token", None),
        ("bpe_count", None),
    ]
    for q in questions:
        assert_well_formed(q)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_questions_for_minilm_has_no_cross_attention_or_next_token(minilm, seed):
    questions = questions_for(minilm, seed)
    assert kinds(questions) == [("self_attention", "encoder"), ("bpe_count", None)]
    q = questions[0]
    row = minilm.trace.encoder[q.params["layer"]].self_attn.weights[0, q.params["head"], q.params["query"]]
    assert q.options[q.answer] == expected_label(minilm.src_tokens, int(torch.argmax(row)))
    assert distinct_labels(minilm.src_tokens, range(len(minilm.src_tokens)))[1:3] == ["the (1)", "cat (2)"]


def test_a_two_token_sentence_asks_what_it_can(trained):
    run = SentenceRun(trained.pipe, "重庆")  # two source tokens: three options cannot be found
    questions = questions_for(run, 0)
    assert "cross_attention" not in [q.kind for q in questions]
    assert "next_token" in [q.kind for q in questions]
    for q in questions:
        assert_well_formed(q)


def test_a_question_about_heads_switched_off_offers_both_runs_answers():
    """The small GPT on a repeated sentence, its induction heads off: the right option is what the
    changed model ranks first, the intact model's first is offered beside it, every value is the
    changed model's probability."""
    from core.interventions.runs import intact_and_ablated_traces
    from core.teaching.questions import ablation_question, changed_position
    from core.tracing.pipeline import PipelineSettings, load_pipeline

    pipe = load_pipeline(PipelineSettings(weights="gpt"))
    sentence = "To be, or not to be, that is the question. To be, or not"
    _, off, before, after = intact_and_ablated_traces(pipe, sentence)
    assert off.settings.ablate == "dec.2.1,dec.2.3"
    position = changed_position(before, after, last=True)
    q = ablation_question(before, after, pipe.tgt_labels, position, off.settings.ablate, seed=1)
    ids = q.params["ids"]
    probs = torch.softmax(after.logits[0, position].double(), -1)
    assert ids[q.answer] == int(after.logits[0, position].argmax())
    intact_first = int(before.logits[0, position].argmax())
    assert intact_first != ids[q.answer] and intact_first in ids  # switching them off changed the answer
    assert q.params["intact"] == pipe.tgt_labels[intact_first]
    assert list(q.values) == [float(probs[i]) for i in ids]
    assert q.id == ablation_question(before, after, pipe.tgt_labels, position, off.settings.ablate, seed=1).id
