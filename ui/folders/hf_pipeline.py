"""The pipeline of a model folder chosen by its name (``hf:<name>``): found, checked, loaded, tokenized.

    pipe = load_model("hf:gpt2", progress=lambda fraction, what: ...)

In order, and nothing is read before the checks that can refuse it have passed:
1. the name is one found on disk (``ui.folders.models.choice``: a path or an unknown name is refused);
2. its family is supported (a message names its architecture and lists what is);
3. its float32 weights fit in the memory the server allows (``ui.folders.models.check_size``);
4. core reads it (``core.loading.folder.load_folder``, no code executed), reporting progress;
5. its tokenizer: core's own for GPT-2 and BERT, ``ui.folders.hf_tokenizer`` for the others.

No Streamlit here: ``ui.caches.cache`` keeps the pipeline in the server's budget and draws the progress bar.
Decisions (what each check says, how files are read): docs/decisions.md, ui/folders/hf_pipeline.py.
"""

from __future__ import annotations

import ui.folders.models as models
from core.loading.files import FolderFiles, Progress, TokenizerSource
from core.loading.folder import load_folder
from core.names import Weights
from core.tracing.pipeline import Pipeline, PipelineSettings, folder_pipeline
from ui.folders.hf_tokenizer import folder_tokenizer


class ModelUnusable(ValueError):
    """A model that cannot be shown: ``str()`` says why in English, safe to show (Markdown-inert);
    ``reason`` is "unsupported", "too_big", "no_tokenizer" or "unreadable"; ``found``: the model."""

    def __init__(self, reason: str, message: str, found: models.FoundModel | None = None) -> None:
        super().__init__(message)
        self.reason, self.found = reason, found


def settings_of(value: str) -> PipelineSettings:
    """The pipeline settings (and cache key) of the model named ``value``: its name alone, since its
    sizes are its own."""
    return PipelineSettings(weights=Weights.HF, model=value)


def check(value: str) -> models.FoundModel:
    """The model named ``value`` if it can be loaded here, else ``ModelChoiceError`` (the name) or
    :class:`ModelUnusable` (the folder): steps 1 to 3, nothing read but config.json."""
    found = models.choice(value)
    if found.family is None:  # its problem names the architecture and lists the supported ones
        raise ModelUnusable("unsupported", found.problem or f"{found.name}: config.json cannot be read")
    too_big = models.check_size(found, models.memory_limit())
    if too_big:
        raise ModelUnusable("too_big", too_big, found)
    return found


def load_model(value: str, progress: Progress | None = None) -> Pipeline:
    """The pipeline of the model named ``value`` (``hf:<name>``); ``progress(fraction, what)`` hears of
    the load. Raises ``ModelChoiceError`` or :class:`ModelUnusable` with a message to show."""
    found = check(value)
    limit = models.memory_limit()
    try:
        model, core_tokenizer, info = load_folder(
            found.path, progress or (lambda fraction, what: None), root=found.root, max_weight_bytes=limit
        )
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise ModelUnusable("unreadable", f"{found.name}: {exc}") from exc
    files = FolderFiles(found.path, found.root)
    source = TokenizerSource(info.tokenizer_file, info.tokenizer_unused) if info.tokenizer_file else None
    try:
        tokenizer = folder_tokenizer(found.path, info.family, core_tokenizer, files=files, source=source)
    except ValueError as exc:
        raise ModelUnusable("unreadable", f"{found.name}: {exc}") from exc
    if tokenizer is None:
        raise ModelUnusable(
            "no_tokenizer",
            f"{found.name} has no tokenizer files (vocab.json + merges.txt, vocab.txt or tokenizer.json)",
        )
    labels = list(tokenizer.labels)
    vocab = model.config.tgt_vocab_size if model.config.stack != "encoder" else model.config.src_vocab_size
    labels += [f"⟨id {i}⟩" for i in range(len(labels), vocab)]  # rows the tokenizer never gives (Qwen pads)
    return folder_pipeline(
        settings_of(value),
        model,
        tokenizer.labelled,
        labels,
        architecture=info.architecture,
        family=info.family,
        tokenizer_kind=tokenizer.kind,
        eos_id=_eos_id(found, tokenizer.eos_id),
    )


def _eos_id(found: models.FoundModel, fallback: int | None) -> int | None:
    """config.json's ``eos_token_id`` (the first, when it lists several: Llama 3), else the tokenizer's."""
    config, _ = models.read_config(found.path / "config.json", found.root)
    eos = (config or {}).get("eos_token_id")
    if isinstance(eos, list):
        eos = eos[0] if eos else None
    return eos if isinstance(eos, int) and not isinstance(eos, bool) else fallback
