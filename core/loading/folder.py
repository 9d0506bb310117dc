"""A Hugging Face model folder in our own Transformer: ``config.json`` + weights + tokenizer files.

    model, tokenizer, info = load_folder("models/gpt2")
    tr = model.trace(torch.tensor([tokenizer.encode("Attention is all you need")]))
    tr.decoder[i].self_attn.weights, tr.logits          # causal self-attention, next-token logits

The family is config.json's ``model_type``, looked up in ``FAMILIES``: each family is one module
(gpt2.py, bert.py, llama.py) with its config translation (config.json -> ModelConfig), the renaming
of its tensors into ours, and its tokenizer. Adding a family is one module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.loading.bert import load_bert
from core.loading.files import FolderFileError, FolderFiles, Progress, no_progress
from core.loading.gpt2 import load_gpt2
from core.loading.llama import load_llama
from core.model.transformer import Transformer
from core.tokenizers.protocol import Tokenizer


@dataclass(frozen=True)
class FolderInfo:
    """What was loaded: the folder's name, its family (a key of FAMILIES) and its architecture;
    ``tokenizer_file``: the file(s) core's tokenizer was read from ("" when core read none), and
    ``tokenizer_unused``: tokenizer files beside it holding another vocabulary, left unused."""

    name: str
    family: str
    architecture: str
    weights_file: str
    tokenizer_file: str = ""
    tokenizer_unused: str = ""




# model_type -> loader(FolderFiles, config.json as a dict, progress) -> Loaded
FAMILIES: dict[str, Callable] = {
    "gpt2": load_gpt2,
    "bert": load_bert,
    "llama": load_llama,
    "qwen2": load_llama,
}


def load_folder(
    path, progress: Progress = no_progress, *, root=None, max_weight_bytes: int | None = None
) -> tuple[Transformer, Tokenizer | None, FolderInfo]:
    """A Hugging Face model folder -> (our model in eval mode, its tokenizer or None, FolderInfo).

    The family is config.json's ``model_type``; an unsupported one raises a ValueError that names
    it (and its ``architectures``) and lists what is supported. ``progress(fraction, what)`` hears
    of each weights file read and of the model being built (for a progress bar), then of 1.0.
    ``root``: every file read must stay inside it (:class:`FolderFiles`); ``max_weight_bytes``: the
    most the weights files may hold together. A file refused is a :class:`FolderFileError`.
    """
    caps = {} if max_weight_bytes is None else {"weights": max_weight_bytes}
    files = FolderFiles(Path(path), root, caps)
    folder = files.folder
    if not files.has("config.json"):
        raise FileNotFoundError(f"{folder.name} has no config.json: not a Hugging Face model folder")
    hf = files.read_json("config.json", "config")
    if not isinstance(hf, dict):
        raise FolderFileError("unreadable", "config.json is not a JSON object")
    family = hf.get("model_type")
    archs = hf.get("architectures") if isinstance(hf.get("architectures"), list) else []
    architecture = ", ".join(a for a in archs if isinstance(a, str)) or "unknown architecture"
    if family not in FAMILIES:
        raise ValueError(
            f"{folder.name}: model_type={str(family)[:40]!r} ({architecture[:80]}) is not supported; "
            f"supported: {', '.join(sorted(FAMILIES))}"
        )
    model, tokenizer, weights_file, source = FAMILIES[family](files, hf, progress)
    progress(1.0, "loaded")
    used, unused = (source.used, source.unused) if source is not None else ("", "")
    return model, tokenizer, FolderInfo(folder.name, family, architecture, weights_file, used, unused)
