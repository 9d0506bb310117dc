"""Interventions on a whole pipeline (tokenizer + model + weights): what the app and a notebook call.

    pipe = load_pipeline(PipelineSettings(weights="gpt"))
    off = ablated(pipe, "dec.2.1,dec.2.3", "zero")       # the same weights, those heads off in every run
    run_pipeline(off, "the cat sat on the mat").predicted

``ablated`` keeps its pipelines in ``pipe.twins`` (they live exactly as long as ``pipe``); the mean of a
part (``mode="mean"``) is taken over :func:`reference_sentences`, run through the intact model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from core.interventions.ablation import (
    Part,
    ablation_edits,
    check_mode,
    format_ablation,
    parse_ablation,
    reference_means,
)
from core.interventions.lens import logit_lens
from core.interventions.patching import Inputs, PatchError, Patching, patch
from core.model.edits import Site
from core.names import Weights
from core.tracing.pipeline import Pipeline
from core.training.splits import split_of

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "assets" / "corpus"
REFERENCE_SIZE = 32  # sentences the mean of a part is taken over
REFERENCE_TOKENS = 24  # at most this many tokens of each


def reference_sentences(task: str = "", n: int = REFERENCE_SIZE) -> list[str]:
    """The sentences a part's mean is taken over, in the language of the model's input: for the pinyin
    model, Chinese phrases of the validation split (assets/corpus/zh_phrases.txt, never trained on);
    for the toy tasks, their validation inputs; for every other model, sentences of the shipped
    bilingual corpus (assets/corpus/en_zh.txt), English and Chinese in turn."""
    if task == "pinyin":
        lines = (CORPUS / "zh_phrases.txt").read_text(encoding="utf-8").splitlines()
        phrases = [line.split("\t")[0] for line in lines if "\t" in line and not line.startswith("#")]
        return [p for p in phrases if split_of(p, hash_bytes=4) == "valid"][:n]
    if task in ("copy", "reverse"):
        from core.training.pairs import load_task

        return [" ".join(src) for src, _ in load_task(task).splits["valid"][:n]]
    text = (CORPUS / "en_zh.txt").read_text(encoding="utf-8").splitlines()[3:]
    english, chinese = [], []
    for paragraph in filter(None, (line.strip() for line in text)):
        is_zh = any("\u4e00" <= ch <= "\u9fff" for ch in paragraph)
        cut = paragraph.replace("。", "。\n") if is_zh else paragraph.replace(". ", ".\n")
        (chinese if is_zh else english).extend(s.strip() for s in cut.splitlines() if len(s.strip()) > 3)
    mixed = [s for pair in zip(english, chinese, strict=False) for s in pair]
    return mixed[:n]


def default_parts(pipe) -> tuple[Part, ...]:
    """What a lecture switches off when the lecturer chose nothing: the small GPT's two induction heads
    (2.1 and 2.3), the pinyin model's last layer of cross-attention heads; another model's last
    attention layer (cross-attention for an encoder-decoder, self-attention for one stack)."""
    c = pipe.config
    if pipe.weights == Weights.GPT:
        return (Part("dec", 2, "1"), Part("dec", 2, "3"))
    if pipe.task == "pinyin":
        return tuple(Part("cross", c.num_layers, str(h)) for h in range(1, c.num_heads + 1))
    stack = {"encoder_decoder": "cross", "decoder": "dec", "encoder": "enc"}[c.stack]
    return (Part(stack, c.num_layers, "attn"),)


def intact_and_ablated(pipe) -> tuple:
    """(the intact pipeline, one with parts off): ``pipe``'s ``intact`` and ``pipe`` when it has parts
    off, else ``pipe`` and the same with :func:`default_parts` off."""
    if pipe.intact is not None:
        return pipe.intact, pipe
    return pipe, ablated(pipe, default_parts(pipe))


def part_means(pipe) -> dict[Site, object]:
    """Every part's mean over :func:`reference_sentences` through the intact ``pipe``, kept in its twins."""
    from core.tracing.pipeline import EmptyInput, run_pipeline

    means = pipe.twins.get("reference-means")
    if means is None:
        traces = []
        for sentence in reference_sentences(pipe.task):
            try:
                traces.append(run_pipeline(pipe, sentence, max_tokens=REFERENCE_TOKENS).trace)
            except EmptyInput:
                continue
        means = pipe.twins["reference-means"] = reference_means(traces)
    return means


def ablated(pipe, ablate: str | tuple[Part, ...], mode: str = "zero"):
    """``pipe`` with the parts ``ablate`` names (an ``ablate=`` value, or parsed parts) switched off in
    every run; ``pipe`` itself when it names none. ``AblationError`` for a value that names no part.

    The result shares ``pipe``'s weights and tokenizers; its ``settings`` carry ``ablate`` (canonical)
    and ``ablate_mode``, so whatever is keyed by settings keys it apart from the intact pipeline.
    """
    parts = parse_ablation(ablate, pipe.config) if isinstance(ablate, str) else tuple(sorted(set(ablate)))
    check_mode(mode)
    if not parts:
        return pipe
    key = ("ablated", format_ablation(parts), mode)
    twin = pipe.twins.get(key)
    if twin is None:  # two threads may both build one: the same numbers, the last one is kept
        means = part_means(pipe) if mode == "mean" else None
        edits = ablation_edits(parts, mode, pipe.config, means)
        settings = replace(pipe.settings, ablate=format_ablation(parts), ablate_mode=mode)
        # a plain Pipeline (random weights' lazy drawing would draw a model without the edits)
        fields = {f.name: getattr(pipe, f.name) for f in dataclasses.fields(Pipeline)}
        fields.update(settings=settings, model=pipe.model.with_edits(edits), twins={}, intact=pipe)
        twin = pipe.twins[key] = Pipeline(**fields)
    return twin


def answer_probs(run) -> list[tuple[str, float]]:
    """Each token of a run's answer (``WholeRun.answer``) and the probability the model gave it: what
    greedy decoding wrote, or the most probable next token after each decoder position."""
    if run.decoded is not None:
        chosen = run.decoded.tokens[0, 1:].tolist()  # step i chose token i + 1
        probs = [float(p[0, i]) for p, i in zip(run.decoded.probs, chosen, strict=False)]
        return list(zip(run.answer, probs[: len(run.answer)], strict=True))
    probs = run.trace.probs[0].max(-1).values.tolist()  # (T,) the argmax's probability
    return list(zip(run.answer, probs, strict=True))


def copy_losses(pipe) -> tuple[float, float] | None:
    """A language model's mean loss (nats) on the first and the second copy of a random sequence
    written twice (``core.training.language.induction_probe``); None for a model that reads a source."""
    if pipe.config.stack != "decoder":
        return None
    from core.training.language import induction_probe

    probe = induction_probe(pipe.model)
    return probe["loss_first_copy"], probe["loss_second_copy"]


# -- patching one sentence into another, and every layer's guess, on a pipeline ------------------------


@dataclass(frozen=True)
class PairPatch:
    """``core.interventions.patching.patch`` of a pair of inputs, with what the screen names."""

    patching: Patching
    clean_tokens: list[str]  # the first stack's input (the encoder's, or a decoder-only model's)
    corrupted_tokens: list[str]
    answer: str  # the clean run's answer at the position (a token's label)
    foil: str | None  # the corrupted run's, when it differs
    decoder_tokens: list[str]  # the decoder's input ([BOS] …); a decoder-only model's: the clean tokens


def patch_ids(pipe, clean: list[int], corrupted: list[int], position: int | None = None) -> PairPatch:
    """Patch the run of ``clean`` ids into that of ``corrupted`` ids (the first stack's input). A
    decoder-only model's answer is the next token after ``position`` (None: the last); an
    encoder-decoder's is the output token at ``position`` (None: the first), its decoder reading
    [BOS] and the clean input's greedy answer before it. ``PatchError`` says why a pair cannot be."""
    if pipe.config.stack == "encoder":
        raise PatchError("an encoder alone predicts no token: patching needs a model that writes one")
    if not clean or not corrupted:
        raise PatchError("both inputs need at least one token")
    if len(clean) != len(corrupted):
        n, m = len(clean), len(corrupted)
        raise PatchError(f"the two inputs must have the same number of tokens: {n} and {m}")
    labels = pipe.src_labels
    ids, bad = torch.tensor([clean]), torch.tensor([corrupted])
    if pipe.config.stack == "decoder":
        position = len(clean) - 1 if position is None else position
        result = patch(pipe.model, Inputs(ids), Inputs(bad), position)
        decoder = [labels[i] for i in clean]
    else:
        from core.tokenizers.vocab import EOS_ID
        from core.tracing.pipeline import greedy

        position = 0 if position is None else position
        written = greedy(pipe, clean, len(clean) + 2).tokens[0].tolist()  # [BOS] and its answer
        if EOS_ID in written[1:]:
            written = written[: written.index(EOS_ID, 1)]
        if not 0 <= position < len(written):
            raise PatchError(f"the answer has {len(written) - 1} tokens: position {position + 1} is past it")
        tgt = torch.tensor([written[: position + 1]])
        result = patch(pipe.model, Inputs(ids, tgt), Inputs(bad, tgt), position)
        decoder = [pipe.tgt_labels[i] for i in tgt[0].tolist()]
    out = pipe.tgt_labels
    return PairPatch(result, [labels[i] for i in clean], [labels[i] for i in corrupted], out[result.answer],
                     None if result.foil is None else out[result.foil], decoder)


def patch_texts(pipe, clean: str, corrupted: str, position: int | None = None) -> PairPatch:
    """``patch_ids`` of two texts, each tokenized as the model reads it (cut at ``REFERENCE_TOKENS``·4)."""
    limit = 4 * REFERENCE_TOKENS
    return patch_ids(pipe, pipe.src_encode(clean)[1][:limit] if clean.strip() else [],
                     pipe.src_encode(corrupted)[1][:limit] if corrupted.strip() else [], position)


READY_PINYIN = ("重庆", "重要")  # 重 read chóng in 重庆, zhòng in 重要: which heads carry the context?


def ready_pairs(pipe) -> dict[str, tuple[list[int], list[int], int | None]]:
    """Pairs that teach, for this model: ``{name: (clean ids, corrupted ids, position)}``.

    "pinyin" (the 汉字→拼音 model): 重庆 vs 重要, the answer the first syllable (chóng vs zhòng).
    "induction" (any decoder-only model): a random sequence of distinct words written once and then
    again up to its middle, vs the same with its first copy made of other words: the clean run can
    predict the next token from the first copy, the corrupted run cannot.
    """
    pairs = {}
    if pipe.task == "pinyin":
        clean, corrupted = (pipe.src_encode(text)[1] for text in READY_PINYIN)
        pairs["pinyin"] = (clean, corrupted, 0)
    if pipe.config.stack == "decoder":
        pair = induction_pair(pipe)
        if pair is not None:
            pairs["induction"] = (*pair, None)
    return pairs


def induction_pair(pipe, length: int = 12, seed: int = 0) -> tuple[list[int], list[int]] | None:
    """(clean, corrupted) ids: half + half[: length // 2] and other + half[: length // 2], ``half`` and
    ``other`` two different random sequences of ``length`` tokens (``core.teaching.induction``)."""
    from core.teaching.induction import repeated_text

    halves = []
    for s in range(seed, seed + 40):
        text = repeated_text(pipe.src_encode, pipe.src_labels, length=length, seed=s)
        if text:
            ids = pipe.src_encode(text)[1]
            half = ids[: len(ids) // 2]
            if halves and len(half) == len(halves[0]) and not set(half) & set(halves[0]):
                halves.append(half)
                break
            if not halves:
                halves.append(half)
    if len(halves) < 2:
        return None
    half, other = halves
    cut = len(half) // 2
    return half + half[:cut], other + half[:cut]


def lens_of(pipe, run, k: int = 5):
    """Every layer's guess (``core.interventions.lens.logit_lens``) of a run of ``pipe`` (a
    ``WholeRun`` or ``SentenceRun``): ValueError for a model without a decoder."""
    return logit_lens(pipe.model, run.trace, k)


def intact_and_ablated_traces(pipe, sentence: str, target: str = "", max_tokens: int = 64):
    """(intact pipeline, ablated pipeline, intact trace, ablated trace): the two models
    (:func:`intact_and_ablated`) on the same input, the intact run's (an encoder-decoder's decoder
    reads what the intact model wrote, or the given target)."""
    from core.tracing.pipeline import run_pipeline

    intact, off = intact_and_ablated(pipe)
    before = run_pipeline(intact, sentence, target, max_tokens).trace
    if before.src_ids is None:  # one stack: its ids
        after = off.model.trace(before.tgt_ids)
    elif before.tgt_ids is None:  # an encoder only
        after = off.model.trace(before.src_ids)
    else:
        after = off.model.trace(before.src_ids, before.tgt_ids)
    return intact, off, before, after
