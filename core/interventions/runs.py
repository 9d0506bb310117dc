"""Interventions on a whole pipeline (tokenizer + model + weights): what the app and a notebook call.

    pipe = load_pipeline(PipelineSettings(weights="gpt"))
    off = ablated(pipe, "dec.2.1,dec.2.3", "zero")       # the same weights, those heads off in every run
    run_pipeline(off, "the cat sat on the mat").predicted

``ablated`` keeps its pipelines in ``pipe.twins`` (they live exactly as long as ``pipe``); the mean of a
part (``mode="mean"``) is taken over :func:`reference_sentences`, run through the intact model.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from core.interventions.ablation import (
    Part,
    ablation_edits,
    check_mode,
    format_ablation,
    parse_ablation,
    reference_means,
)
from core.model.edits import Site
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
        twin = pipe.twins[key] = replace(
            pipe, settings=settings, model=pipe.model.with_edits(edits), twins={}
        )
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
