"""Predict, then reveal: questions about the model on screen, generated from its trace and the sentence.

No question is written by hand. Each generator reads the model's own numbers (attention weights,
logits, a BPE training on the sentence) and returns a :class:`Question` whose right option is what
the model does, with plausible wrong options beside it, chosen and shuffled by a seeded RNG.

    run = SentenceRun(pipe, "重庆很重要")
    for question in questions_for(run, seed=3):
        question.kind, question.params, question.options, question.answer, question.value

Options are labels, all distinct; ``Question.id`` is a short digest that every server asking the
same question gives it (:func:`run_identity`). What this module returns is data; the words around
it (the question's sentence, in either language) are the UI's.
How options are labelled and what the id digests: docs/decisions.md, core/teaching/questions.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from core.model.trace import AttentionTrace, ModelTrace
from core.tokenizers.bpe import BPETokenizer

KINDS = ("cross_attention", "self_attention", "bpe_count", "next_token", "ablation")
MIN_OPTIONS, MAX_OPTIONS = 3, 5
DEFAULT_OPTIONS = 4
BPE_MERGE_CAP = 64  # questions_for asks about one of the first merges: a sentence rarely needs more


@dataclass(frozen=True)
class Question:
    """One multiple-choice question: ``options[answer]`` is the model's answer.

    ``params`` are the question's parameters (which layer, head, position ...; the labels of the tokens
    it names; the seed: plain JSON values, the input of ``id``) and what each option stands for
    (``keys``: key positions; ``ids``: target ids). ``value`` is the model's number behind
    the right option (an attention weight, a probability, a token count) and ``values`` the number
    behind every option, in the options' order: what a reveal shows next to the tally.
    """

    kind: str
    id: str
    params: dict
    options: tuple[str, ...]
    answer: int
    value: float | int
    values: tuple[float | int, ...] = ()

    def __hash__(self) -> int:  # params is a dict: equal questions have equal ids
        return hash(self.id)


class NoQuestion(ValueError):
    """This run cannot ask that question (fewer than three candidates, a position out of range ...)."""


# -- ids -----------------------------------------------------------------------------------------------


def stable_id(kind: str, params: dict, identity: str = "") -> str:
    """12 hex digits of SHA-256 over (kind, params, identity) as canonical JSON: the same on every
    server and every run of Python (``hash()`` is salted per process, JSON with sorted keys is not).

    >>> stable_id("bpe_count", {"k": 3, "text": "aaab"}) == stable_id("bpe_count", {"text": "aaab", "k": 3})
    True
    """
    blob = json.dumps([kind, params, identity], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def run_identity(run) -> str:
    """What makes two runs the same run, as one short string: the weights on screen (their kind, the
    model's sizes and seed, a session model's tag, the model's name and task), the sentence, the
    target and the token limit. ``run``: a ``core.tracing.run.SentenceRun`` (anything with ``pipe``,
    ``sentence``,
    ``target`` and ``max_tokens``)."""
    pipe = run.pipe
    config = {k: str(v) for k, v in dataclasses.asdict(pipe.config).items()}
    parts = {
        "weights": str(pipe.weights),
        "config": config,
        "tag": pipe.settings.tag,
        "name": pipe.name,
        "task": pipe.task,
        "merges": pipe.merges,
        "sentence": run.sentence,
        "target": run.target,
        "max_tokens": run.max_tokens,
    }
    return stable_id("run", parts)


# -- options -------------------------------------------------------------------------------------------


def distinct_labels(labels: Sequence[str], tags: Sequence[object]) -> list[str]:
    """``labels``, each told apart by its tag ("重 (3)") where the label occurs more than once; every
    label tagged if that still leaves two equal (a token spelt like another's tagged label).

    >>> distinct_labels(["重", "庆", "很", "重", "要"], range(5))
    ['重 (0)', '庆', '很', '重 (3)', '要']
    """
    counts = Counter(labels)
    out = [
        f"{label} ({tag})" if counts[label] > 1 else label for label, tag in zip(labels, tags, strict=True)
    ]
    if len(set(out)) < len(out):
        out = [f"{label} ({tag})" for label, tag in zip(labels, tags, strict=True)]
    return out


def _choose(values: dict[int, float], rng: random.Random, n_options: int) -> tuple[list[int], int]:
    """(candidates offered, index of the best among them): the candidate of the highest value (the
    lowest one of equal values, as ``torch.argmax``), its two runners-up (plausible), others drawn by
    ``rng``; shuffled by ``rng``. A candidate tied with the best would be a second right answer: never
    offered. NoQuestion when fewer than MIN_OPTIONS can be offered."""
    if not MIN_OPTIONS <= n_options <= MAX_OPTIONS:
        raise ValueError(f"n_options={n_options} must be between {MIN_OPTIONS} and {MAX_OPTIONS}")
    ranked = sorted(values, key=lambda c: (-values[c], c))
    best = ranked[0] if ranked else None
    others = [c for c in ranked[1:] if values[c] != values[best]]
    if len(others) < MIN_OPTIONS - 1:
        raise NoQuestion(f"{len(others) + (best is not None)} candidates: a question needs {MIN_OPTIONS}")
    n_wrong = min(n_options, 1 + len(others)) - 1
    near = others[: min(2, n_wrong)]
    chosen = [best, *near, *rng.sample(others[len(near) :], n_wrong - len(near))]
    rng.shuffle(chosen)
    return chosen, chosen.index(best)


def _question(
    kind: str, asked: dict, identity: str, labels: list[str], values: list, answer: int, offered: dict
) -> Question:
    """The question: its id from what was ``asked`` (not from ``offered``: what the options stand for,
    chosen by the model's numbers), its params both."""
    return Question(
        kind,
        stable_id(kind, asked, identity),
        asked | offered,
        tuple(labels),
        answer,
        values[answer],
        tuple(values),
    )


def _rng(kind: str, params: dict, identity: str) -> random.Random:
    # seeded by a string: random.Random hashes it with SHA-512, the same in every process
    return random.Random(f"{kind}:{stable_id(kind, params, identity)}")


def _index(i: int, n: int, what: str) -> int:
    """``i`` as a position in 0..n-1 (negative counts from the end); NoQuestion outside."""
    if not -n <= i < n:
        raise NoQuestion(f"{what}={i} is out of range (there are {n})")
    return i % n


# -- attention -----------------------------------------------------------------------------------------


def _attention_question(
    kind: str,
    attn: AttentionTrace,
    head: int | None,
    query: int,
    k_tokens: Sequence[str],
    params: dict,
    identity: str,
    n_options: int,
) -> Question:
    """Which key ``query`` attends to most: weights of ``head`` (None: their mean over heads)."""
    weights = attn.weights[0].double()  # (h, L_q, L_k)
    row = weights[:, query].mean(0) if head is None else weights[head, query]  # (L_k,)
    allowed = attn.mask[0, 0 if head is None else head, query].tolist()  # the same for every head
    if len(k_tokens) != row.numel():
        raise ValueError(f"{len(k_tokens)} key tokens for {row.numel()} keys")
    values = {j: float(row[j]) for j in range(row.numel()) if allowed[j]}  # a masked key is no option
    keys, answer = _choose(values, _rng(kind, params, identity), n_options)
    every = distinct_labels(list(k_tokens), range(len(k_tokens)))
    return _question(
        kind, params, identity, [every[j] for j in keys], [values[j] for j in keys], answer, {"keys": keys}
    )


def cross_attention_question(
    trace: ModelTrace,
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    position: int,
    layer: int = -1,
    head: int | None = None,
    *,
    seed: int = 0,
    identity: str = "",
    n_options: int = DEFAULT_OPTIONS,
) -> Question:
    """Which source token decoder position ``position`` attends to most in the cross-attention of
    ``layer`` (negative: from the last): in head ``head``, or (None) in the mean of the heads' weights.
    ``params``: ``layer`` and ``position`` (from 0), ``head`` (None: the mean, and ``over`` says
    "mean of heads"), the query's label, the seed, ``keys`` (the source position of every option)."""
    if not trace.decoder:
        raise NoQuestion("an encoder-only model has no cross-attention")
    layer = _index(layer, len(trace.decoder), "layer")
    attn = trace.decoder[layer].cross_attn
    position = _index(position, attn.weights.size(2), "position")
    if head is not None:
        head = _index(head, attn.weights.size(1), "head")
    params = {
        "attn_kind": "cross",
        "layer": layer,
        "head": head,
        "over": "mean of heads" if head is None else "head",
        "position": position,
        "query_token": str(tgt_tokens[position]),
        "seed": seed,
    }
    return _attention_question(
        "cross_attention", attn, head, position, src_tokens, params, identity, n_options
    )


def self_attention_question(
    trace: ModelTrace,
    attn_kind: str,
    layer: int,
    head: int,
    query: int,
    q_tokens: Sequence[str],
    k_tokens: Sequence[str],
    *,
    seed: int = 0,
    identity: str = "",
    n_options: int = DEFAULT_OPTIONS,
) -> Question:
    """Which key head ``head`` of the ``attn_kind`` ("encoder" or "decoder") self-attention of ``layer``
    attends to most from ``query``. Masked keys (a decoder's later positions, padding) are never
    offered, so a decoder query needs at least three earlier-or-equal positions."""
    if attn_kind not in ("encoder", "decoder"):
        raise ValueError(f"attn_kind={attn_kind!r} must be 'encoder' or 'decoder'")
    layers = trace.encoder if attn_kind == "encoder" else trace.decoder
    if not layers:
        raise NoQuestion(f"this model has no {attn_kind} layers")
    layer = _index(layer, len(layers), "layer")
    attn = layers[layer].self_attn
    head = _index(head, attn.weights.size(1), "head")
    query = _index(query, attn.weights.size(2), "query")
    params = {
        "attn_kind": attn_kind,
        "layer": layer,
        "head": head,
        "query": query,
        "query_token": str(q_tokens[query]),
        "seed": seed,
    }
    return _attention_question("self_attention", attn, head, query, k_tokens, params, identity, n_options)


# -- BPE -----------------------------------------------------------------------------------------------


def bpe_token_count(text: str, merges_k: int, byte_level: bool = True) -> int:
    """How many tokens ``text`` has after merge ``merges_k`` of BPE trained on ``text`` itself
    (``core.tokenizers.bpe``; fewer merges if the text runs out of pairs first).

    >>> bpe_token_count("aaabdaaabac", 0), bpe_token_count("aaabdaaabac", 3)
    (11, 5)
    """
    return len(BPETokenizer.train(text, merges_k, byte_level=byte_level).tokenize(text))


def bpe_count_question(
    text: str,
    merges_k: int,
    byte_level: bool = True,
    *,
    seed: int = 0,
    identity: str = "",
    n_options: int = DEFAULT_OPTIONS,
) -> Question:
    """How many tokens ``text`` has after merge ``merges_k`` of BPE trained on it. The wrong options are
    the nearest other counts (between 1 and the count before any merge where there are enough), the
    nearest first, ties drawn by the seed."""
    if not MIN_OPTIONS <= n_options <= MAX_OPTIONS:
        raise ValueError(f"n_options={n_options} must be between {MIN_OPTIONS} and {MAX_OPTIONS}")
    if not text:
        raise NoQuestion("an empty text has no tokens")
    answer = bpe_token_count(text, merges_k, byte_level)
    params = {"text": text, "k": merges_k, "byte_level": byte_level, "seed": seed}
    rng = _rng("bpe_count", params, identity)
    most = max(bpe_token_count(text, 0, byte_level), answer + n_options - 1)
    near = [c for c in range(1, most + 1) if c != answer]
    near.sort(key=lambda c: (abs(c - answer), rng.random()))
    counts = [answer, *near[: n_options - 1]]
    rng.shuffle(counts)
    return _question(
        "bpe_count", params, identity, [str(c) for c in counts], counts, counts.index(answer), {}
    )


# -- the next token ------------------------------------------------------------------------------------


def next_token_question(
    trace: ModelTrace,
    tgt_labels: Sequence[str],
    position: int,
    *,
    seed: int = 0,
    identity: str = "",
    n_options: int = DEFAULT_OPTIONS,
) -> Question:
    """Which next token the model ranks first at decoder position ``position``: the options are the
    top ``n_options`` of its logits there (a token tied with the first is left out), ``values`` their
    probabilities. ``tgt_labels``: the label of every target id (``Pipeline.tgt_labels``)."""
    position, ids, probs, best = _ranked(trace, position, n_options)
    return _token_question("next_token", trace, tgt_labels, position, ids, probs, best, {"seed": seed},
                           identity, {})


def ablation_question(
    intact: ModelTrace,
    ablated: ModelTrace,
    tgt_labels: Sequence[str],
    position: int,
    parts: str,
    *,
    seed: int = 0,
    identity: str = "",
    n_options: int = DEFAULT_OPTIONS,
) -> Question:
    """With ``parts`` switched off (an ``ablate=`` value), which token does the model rank first at
    decoder position ``position``? Both traces read the same input. The options come from the two real
    runs: the ablated run's first (the answer), the intact run's first, then the ablated run's next
    best; ``values`` are the ablated run's probabilities, ``params["intact"]`` the intact run's first."""
    if intact.logits is None:
        raise NoQuestion("an encoder-only model predicts no next token")
    before = int(intact.logits[0, _index(position, intact.logits.size(1), "position")].argmax())
    position, ids, probs, best = _ranked(ablated, position, n_options, first=(before,))
    return _token_question("ablation", ablated, tgt_labels, position, ids, probs, best,
                           {"parts": parts, "seed": seed}, identity, {"intact": str(tgt_labels[before])})


def _ranked(trace: ModelTrace, position: int, n_options: int, first: Sequence[int] = ()):
    """(position, ids, probabilities, best) for a question about the token ranked first at
    ``position``: the first-ranked token, then ``first`` (another run's answer), then the next best;
    no token tied with the first (it would be a second right answer)."""
    if trace.logits is None:
        raise NoQuestion("an encoder-only model predicts no next token")
    if not MIN_OPTIONS <= n_options <= MAX_OPTIONS:
        raise ValueError(f"n_options={n_options} must be between {MIN_OPTIONS} and {MAX_OPTIONS}")
    position = _index(position, trace.logits.size(1), "position")
    logits = trace.logits[0, position].double()  # (V,)
    order = torch.sort(logits, descending=True, stable=True).indices  # ties: the lower id first, as argmax
    best = int(order[0])
    ids = [best] + [i for i in first if i != best and logits[i] != logits[best]]
    ids += [int(i) for i in order[1 : 2 * n_options] if logits[i] != logits[best] and int(i) not in ids]
    ids = ids[:n_options]
    if len(ids) < MIN_OPTIONS:
        raise NoQuestion(f"{len(ids)} distinct next tokens: a question needs {MIN_OPTIONS}")
    return position, ids, torch.softmax(logits, dim=-1), best


def _token_question(kind: str, trace: ModelTrace, tgt_labels: Sequence[str], position: int, ids: list[int],
                    probs, best: int, asked: dict, identity: str, offered: dict) -> Question:
    """The question of ``kind`` whose options are the tokens ``ids`` (shuffled by its seeded RNG)."""
    input_id = int(trace.tgt_ids[0, position]) if trace.tgt_ids is not None else None
    params = {"position": position, "input_token": None if input_id is None else str(tgt_labels[input_id]),
              **asked}
    rng = _rng(kind, params, identity)
    rng.shuffle(ids)
    labels = distinct_labels([str(tgt_labels[i]) for i in ids], [f"id {i}" for i in ids])
    values = [float(probs[i]) for i in ids]
    return _question(kind, params, identity, labels, values, ids.index(best), {"ids": ids, **offered})


def changed_position(intact: ModelTrace, ablated: ModelTrace, last: bool) -> int:
    """Where to ask: a language model's last position (``last``); else the first decoder position
    where switching parts off changes the first-ranked token (0 when none does)."""
    if last:
        return ablated.logits.size(1) - 1
    differs = (intact.logits[0].argmax(-1) != ablated.logits[0].argmax(-1)).nonzero()
    return int(differs[0, 0]) if len(differs) else 0


# -- the questions a run can ask -----------------------------------------------------------------------


def questions_for(run, seed: int = 0) -> list[Question]:
    """Every kind of question this run can ask, its parameters drawn from ``seed``: cross-attention
    (last layer, mean of heads) and the next token at a decoder position, encoder and decoder
    self-attention (a layer, head and query), the BPE count of the sentence after a merge. An
    encoder-only model asks no cross-attention or next-token question; a question the run cannot ask
    (a sentence of two tokens: three options are needed) is left out. ``run``: a
    ``core.tracing.run.SentenceRun``."""
    identity = run_identity(run)
    rng = random.Random(f"questions:{seed}")
    makers = (_cross_for, _encoder_self_for, _decoder_self_for, _next_for, _bpe_for)
    out = []
    for make in makers:
        try:
            out.append(make(run, rng, seed, identity))
        except NoQuestion:
            continue
    return out


def _cross_for(run, rng: random.Random, seed: int, identity: str) -> Question:
    if run.config.stack == "encoder" or run.config.stack == "decoder":
        raise NoQuestion("no cross-attention: one stack only")
    position = rng.randrange(len(run.tgt_tokens))
    return cross_attention_question(
        run.trace, run.src_tokens, run.tgt_tokens, position, -1, None, seed=seed, identity=identity
    )


def _self_for(run, rng: random.Random, seed: int, identity: str, attn_kind: str) -> Question:
    tokens = run.src_tokens if attn_kind == "encoder" else run.tgt_tokens
    first = 0 if attn_kind == "encoder" else MIN_OPTIONS - 1  # a decoder query sees itself and before
    if len(tokens) < MIN_OPTIONS:
        raise NoQuestion("too few tokens")
    config = run.config
    layer, head = rng.randrange(config.num_layers), rng.randrange(config.num_heads)
    query = rng.randrange(first, len(tokens))
    trace = run.trace_of(attn_kind)
    return self_attention_question(
        trace, attn_kind, layer, head, query, tokens, tokens, seed=seed, identity=identity
    )


def _encoder_self_for(run, rng: random.Random, seed: int, identity: str) -> Question:
    if run.config.stack == "decoder":
        raise NoQuestion("decoder only")
    return _self_for(run, rng, seed, identity, "encoder")


def _decoder_self_for(run, rng: random.Random, seed: int, identity: str) -> Question:
    if run.config.stack == "encoder":
        raise NoQuestion("encoder only")
    return _self_for(run, rng, seed, identity, "decoder")


def _next_for(run, rng: random.Random, seed: int, identity: str) -> Question:
    if run.config.stack == "encoder":
        raise NoQuestion("encoder only")
    position = rng.randrange(len(run.tgt_tokens))
    return next_token_question(run.trace, run.pipe.tgt_labels, position, seed=seed, identity=identity)


def bpe_merges_possible(text: str, byte_level: bool = True, cap: int = BPE_MERGE_CAP) -> int:
    """How many merges (at most ``cap``) BPE trained on ``text`` can learn before every word is one token."""
    return len(BPETokenizer.train(text, cap, byte_level=byte_level).merges)


def _bpe_for(run, rng: random.Random, seed: int, identity: str) -> Question:
    possible = bpe_merges_possible(run.sentence)
    if possible < 1:
        raise NoQuestion("the sentence has no pair to merge")
    k = rng.randint(1, possible)
    return bpe_count_question(run.sentence, k, seed=seed, identity=identity)
