"""Model folders on disk: found, described and chosen by name, never by path.

Where (:func:`model_dirs`): the folders named by ``GLASSBOX_MODELS`` (separated as in ``PATH``), then
the local Hugging Face hub cache. A model folder holds ``config.json`` and its weights
(``*.safetensors``, or ``pytorch_model.bin`` and its shards); a root may be one, hold them (two levels
deep at most) or be laid out as a hub cache (``models--ORG--NAME/snapshots/<revision>/``).

Each model is a choice of the sidebar's ``weights``, ``hf:<name>`` (``hf:gpt2``, ``hf:Qwen2.5-0.5B``;
a name found twice: ``hf:<name>@<where>``); a URL names a model only by that value (:func:`choice`),
never by a path. A symlink is followed only while it stays inside its root. No Streamlit and no
``transformers``: every file is read through ``core.loading.files.FolderFiles``, and the scan never
raises (a folder that cannot be read is skipped with a log line).

Decisions (names, duplicates, symlinks, what is read): docs/decisions.md, ui/folders/models.py.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from core.loading.files import FILE_CAPS, FolderFileError, FolderFiles
from figures.drawing.text import literal
from ui.caches.budget import ENV_VAR as BUDGET_ENV_VAR
from ui.caches.budget import MB, limit_from_env

log = logging.getLogger("glassbox.models")

ENV_VAR = "GLASSBOX_MODELS"
PREFIX = "hf:"
MAX_FOLDERS = 256  # directories looked into, over all roots: a huge tree must not stall a page
MAX_DEPTH = 2  # root/name or root/org/name
MAX_CONFIG_BYTES = FILE_CAPS["config"]  # a real config.json is a few kB; Qwen's with its layer list ~ 2 kB
MAX_HEADER_BYTES = FILE_CAPS["header"]  # a safetensors header: ~100 bytes a tensor (a 7B Llama's: ~30 kB)
MAX_VALUE_CHARS = 120  # a URL value longer than this is no model's name
SCAN_SECONDS = 30.0  # find_models() looks again after this long (a copied folder shows within 30 s)

# family -> the architectures (config.json "architectures") read as that family; its model_types
SUPPORTED = {
    "gpt2": ("GPT2LMHeadModel", "GPT2Model"),
    "bert": ("BertModel", "BertForMaskedLM", "BertForPreTraining", "BertLMHeadModel"),
    "llama": ("LlamaForCausalLM", "Qwen2ForCausalLM"),
}
MODEL_TYPES = {"gpt2": "gpt2", "bert": "bert", "llama": "llama", "qwen2": "llama"}
# which files make which tokenizer: GPT-2's byte-level BPE, BERT's WordPiece, or Hugging Face's own
TOKENIZER_FILES = {
    "vocab.json+merges.txt": ("vocab.json", "merges.txt"),
    "vocab.txt": ("vocab.txt",),
    "tokenizer.json": ("tokenizer.json",),
}
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1}
_BIN_SHARD = re.compile(r"pytorch_model(-\d+-of-\d+)?\.bin")
_DRIVE = re.compile(r"[A-Za-z]:")


@dataclass(frozen=True)
class FoundModel:
    """One model folder: where it is, what its config says, how much memory it needs."""

    value: str  # the choice's value, "hf:<name>" (made unique)
    name: str  # the folder's name, or the hub repo's name
    path: Path  # the folder holding config.json (as found under its root)
    root: Path  # the root it was found in
    repo: str | None  # for the hub cache: "ORG/NAME" (or "NAME")
    model_type: str | None
    architectures: tuple[str, ...]
    family: str | None  # "gpt2" | "bert" | "llama", None when unsupported or unreadable
    params: int | None  # the config's sizes (supported families), else safetensors headers or file sizes
    weight_files: tuple[str, ...]
    weight_bytes: int
    tokenizer_files: tuple[str, ...]  # keys of TOKENIZER_FILES present
    problem: str | None = None  # why it cannot be loaded (safe to show: Markdown-inert)

    @property
    def bytes_float32(self) -> int:
        """The weights' memory in float32 (4 bytes a parameter), what loading them takes at least."""
        return 4 * (self.params or 0)


class ModelChoiceError(ValueError):
    """A ``weights`` value that names no model found. ``reason``: "type", "long", "control", "path" or
    "unknown"; ``str()`` is the message, safe to show (the value appears only shortened, in a code span)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# -- where -------------------------------------------------------------------------------------------------


def hub_cache_dir(environ=None) -> Path:
    """The Hugging Face hub cache: ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
    ``~/.cache/huggingface/hub``."""
    env = os.environ if environ is None else environ
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    return Path("~/.cache/huggingface/hub").expanduser()


def model_dirs(environ=None) -> list[Path]:
    """The roots searched, in order: ``GLASSBOX_MODELS``' folders, then the hub cache; only those that
    exist, each once."""
    env = os.environ if environ is None else environ
    named = [Path(p).expanduser() for p in env.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    roots, seen = [], set()
    for root in [*named, hub_cache_dir(env)]:
        try:
            real = root.resolve()
        except (OSError, RuntimeError):  # a symlink loop as a root
            continue
        if real.is_dir() and real not in seen:
            seen.add(real)
            roots.append(root)
    return roots


# -- finding -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    """A folder that looks like a model, before it is named uniquely."""

    name: str
    path: Path
    root: Path
    repo: str | None = None
    where: str = ""  # what tells it apart from another of the same name


def _inside(path: Path, real_root: Path) -> bool:
    """Does ``path``, symlinks resolved, stay inside ``real_root``?"""
    try:
        return path.resolve().is_relative_to(real_root)
    except (OSError, RuntimeError):  # a loop
        return False


def _weights(folder: Path, real_root: Path) -> list[Path]:
    """The weight files of ``folder`` that exist and stay inside the root."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = [folder / n for n in names if n.endswith(".safetensors") or _BIN_SHARD.fullmatch(n)]
    return [p for p in found if _inside(p, real_root) and p.is_file()]


def _is_model(folder: Path, real_root: Path) -> bool:
    config = folder / "config.json"
    return _inside(config, real_root) and config.is_file() and bool(_weights(folder, real_root))


def _hub_models(root: Path, budget: list[int]) -> list[_Candidate]:
    """The hub cache's models: one snapshot each (the one ``refs/main`` names, else the newest)."""
    real_root, found = root.resolve(), []
    for entry in sorted(root.glob("models--*")):
        if budget[0] <= 0:
            break
        budget[0] -= 1
        repo = entry.name.removeprefix("models--").replace("--", "/", 1)
        snapshots = entry / "snapshots"
        if not _inside(snapshots, real_root) or not snapshots.is_dir():
            continue
        revs = sorted(snapshots.iterdir(), key=_newest_first)
        named = _ref_main(entry, root)
        if named:
            revs.sort(key=lambda p: p.name != named)  # stable: the named one first, then the newest
        for rev in revs:
            if _inside(rev, real_root) and _is_model(rev, real_root):
                org, _, name = repo.rpartition("/")
                found.append(_Candidate(name, rev, root, repo, org or "hub"))
                break
    return found


def _ref_main(entry: Path, root: Path) -> str:
    """The revision the hub's ``refs/main`` names ("" when none can be read: the newest is taken)."""
    files = FolderFiles(entry, root)
    try:
        if not files.has("refs/main"):
            return ""
        return files.read_bytes("refs/main", "ref").decode("ascii", errors="replace").strip()
    except FolderFileError as e:
        log.warning("model folder %r: %s", str(entry), e)
        return ""


def _newest_first(path: Path) -> tuple[float, str]:
    try:
        return (-path.stat().st_mtime, path.name)
    except OSError:  # (a dangling link): last
        return (float("inf"), path.name)


def _folder_models(root: Path, budget: list[int]) -> list[_Candidate]:
    """The model folders under a root (the root itself included), breadth first, sorted by name."""
    real_root, found, seen = root.resolve(), [], set()
    level = [root]
    for depth in range(MAX_DEPTH + 1):
        below = []
        for folder in level:
            if budget[0] <= 0 or not _inside(folder, real_root) or folder.resolve() in seen:
                continue
            budget[0] -= 1
            seen.add(folder.resolve())
            if _is_model(folder, real_root):
                found.append(_Candidate(folder.name or str(folder), folder, root, None, root.name or "root"))
            elif depth < MAX_DEPTH:
                try:
                    below += sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
                except OSError:
                    continue
        level = below
    return found


def _candidates(roots: list[Path]) -> list[_Candidate]:
    budget = [MAX_FOLDERS]  # shared by every root
    found: list[_Candidate] = []
    for root in roots:
        try:
            is_hub = any(root.glob("models--*"))
            found += _hub_models(root, budget) if is_hub else _folder_models(root, budget)
        except Exception:  # a root that cannot be listed costs its models, never the page
            log.warning("models root %r skipped: it cannot be read", str(root), exc_info=True)
    if budget[0] <= 0:
        log.warning("model search stopped after %d folders (%s)", MAX_FOLDERS, ENV_VAR)
    return found


def _unique_values(candidates: list[_Candidate]) -> list[tuple[str, _Candidate]]:
    """``hf:<name>`` for the first of each name, ``hf:<name>@<where>`` (then ``-2``...) for the others.
    A name :func:`refusal` would refuse (``..`` in it, a control character...) is skipped: no URL could
    choose it."""
    taken: set[str] = set()
    named = []
    for c in candidates:
        value = PREFIX + c.name
        if value in taken:
            stem = f"{value}@{_tidy(c.where)}"
            value, n = stem, 2
            while value in taken:
                value, n = f"{stem}-{n}", n + 1
        if refusal(value) is not None:
            log.warning("model folder %r skipped: %s cannot be a choice", str(c.path), literal(value))
            continue
        taken.add(value)
        named.append((value, c))
    return named


def _tidy(where: str) -> str:
    """A root's name usable after ``@``: no dots in a row, no ``~``, no spaces."""
    return re.sub(r"[^\w.-]+|\.{2,}", "-", where).strip("-.") or "root"


# -- describing ------------------------------------------------------------------------------------------


def read_config(path: Path, root: Path | None = None) -> tuple[dict | None, str | None]:
    """``config.json`` as a dict, or None and why (too large, outside ``root``, not UTF-8 JSON, not an
    object)."""
    path = Path(path)
    try:
        raw = FolderFiles(path.parent, root).read_bytes(path.name, "config")
    except FolderFileError as e:
        if e.reason == "too_big":
            return None, f"config.json is over {MAX_CONFIG_BYTES // 1024} KB: not a model's configuration"
        return None, f"config.json cannot be read ({literal(e, 80)})"
    except OSError as e:
        return None, f"config.json cannot be read ({type(e).__name__})"
    try:
        config = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, "config.json is not JSON"
    if not isinstance(config, dict):
        return None, "config.json is not a JSON object"
    return config, None


def family_of(config: dict) -> tuple[str | None, str | None]:
    """(family, None) for a supported model, else (None, a message naming its architecture and what is
    supported). The model_type says the layout; the architecture must be one whose weights we map."""
    model_type = config.get("model_type") if isinstance(config.get("model_type"), str) else None
    archs = _architectures(config)
    family = MODEL_TYPES.get(model_type or "")
    if family and (not archs or all(a in SUPPORTED[family] for a in archs)):
        return family, None
    named = ", ".join(archs) or (f"model_type {model_type}" if model_type else "an unnamed architecture")
    listed = "; ".join(f"{f}: {', '.join(a)}" for f, a in SUPPORTED.items())
    return None, f"{literal(named, 80)} is not supported. Supported: {listed}."


def _architectures(config: dict) -> tuple[str, ...]:
    archs = config.get("architectures")
    return tuple(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else ()


def _size(config: dict, key: str, default: int | None = None) -> int:
    value = config.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**40:
        raise ValueError(key)
    return value


def count_params(family: str, config: dict) -> int:
    """The parameters ``transformers`` builds for this config (tied embeddings counted once); ValueError
    when a size is missing or not a positive whole number."""
    return {"gpt2": _gpt2_params, "bert": _bert_params, "llama": _llama_params}[family](config)


def _sizes(config: dict, *keys: str) -> list[int]:
    return [_size(config, key) for key in keys]


def _tied(config: dict) -> bool:
    # absent: PretrainedConfig's default (save_pretrained leaves out a value equal to it)
    return config.get("tie_word_embeddings", True) is not False


def _gpt2_params(config: dict) -> int:
    v, d, n, p = _sizes(config, "vocab_size", "n_embd", "n_layer", "n_positions")
    ff = _size(config, "n_inner", 4 * d)
    block = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * ff + ff) + (ff * d + d)  # 2 norms, attn, mlp
    return (v + p) * d + n * block + 2 * d + (0 if _tied(config) else v * d)


def _bert_params(config: dict) -> int:
    v, d, n, ff, p = _sizes(
        config,
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "intermediate_size",
        "max_position_embeddings",
    )
    types = _size(config, "type_vocab_size", 2)
    block = 4 * (d * d + d) + 4 * d + (d * ff + ff) + (ff * d + d)  # q k v out, two norms, ffn
    body = (v + p + types) * d + 2 * d + n * block
    if set(_architectures(config)) & {"BertForMaskedLM", "BertForPreTraining", "BertLMHeadModel"}:
        return body + (d * d + d) + 2 * d + v  # the MLM head: transform, its norm, the decoder's bias
    return body + d * d + d  # BertModel's pooler


def _llama_params(config: dict) -> int:
    v, d, n, ff, h = _sizes(
        config, "vocab_size", "hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads"
    )
    kv, hd = _size(config, "num_key_value_heads", h), _size(config, "head_dim", d // h)
    if config.get("model_type") == "qwen2":  # Qwen2: q, k, v always biased, o and the MLP never
        qkv_bias, o_bias, mlp_bias = True, False, False
    else:
        qkv_bias = o_bias = bool(config.get("attention_bias"))
        mlp_bias = bool(config.get("mlp_bias"))
    attn = d * (h + 2 * kv) * hd + (h + 2 * kv) * hd * qkv_bias + h * hd * d + d * o_bias
    mlp = 3 * d * ff + (2 * ff + d) * mlp_bias  # gate, up, down (SwiGLU)
    return v * d + n * (attn + mlp + 2 * d) + d + (0 if _tied(config) else v * d)


def _params_from_files(config: dict | None, weights: list[Path], files: FolderFiles) -> int:
    """The parameters the weight files hold: counted from each safetensors header (its shapes), else
    the file's bytes over the bytes of the dtype the config names (float32 when it names none)."""
    dtype = (config or {}).get("dtype") or (config or {}).get("torch_dtype")
    width = DTYPE_BYTES.get(dtype if isinstance(dtype, str) else "", 4)
    total = 0
    for path in weights:
        counted = _safetensors_params(files, path.name) if path.suffix == ".safetensors" else None
        total += path.stat().st_size // width if counted is None else counted
    return total


def _safetensors_params(files: FolderFiles, name: str) -> int | None:
    """The elements of every tensor a safetensors file holds, from its header alone (8-byte little-endian
    length, then JSON: name -> dtype, shape, offsets); None when the header is not one: too long, not
    JSON, or a shape that is not a list of whole sizes (``[1e999]``, ``[-1]``, ``["2"]``)."""
    try:
        header = files.safetensors_header(name)
    except (FolderFileError, OSError):
        return None
    total = 0
    for info in header.values():
        shape = info.get("shape") if isinstance(info, dict) else None
        if not isinstance(shape, list) or not all(type(n) is int and 0 <= n < 2**48 for n in shape):
            return None
        total += math.prod(shape)
    return total


def _present(files: FolderFiles, name: str) -> bool:
    try:
        return files.has(name)
    except FolderFileError:  # a link out of the root: as good as absent here, refused when loading
        return False


def describe(value: str, c: _Candidate) -> FoundModel:
    """What a found folder is: its config, family, size and tokenizer files."""
    real_root = c.root.resolve()
    files = FolderFiles(c.path, c.root)
    weights = _weights(c.path, real_root)
    weight_bytes = sum(p.stat().st_size for p in weights)
    config, problem = read_config(c.path / "config.json", c.root)
    family = None
    if config is not None:
        family, problem = family_of(config)
    params = None
    if family is not None:
        try:
            params = count_params(family, config)
        except ValueError as e:
            family, problem = None, f"config.json has no usable {literal(e, 40)}"
    if params is None:
        params = _params_from_files(config, weights, files)
    names = {n for needed in TOKENIZER_FILES.values() for n in needed}
    present = {n for n in names if _present(files, n)}
    tokenizer = tuple(k for k, needed in TOKENIZER_FILES.items() if set(needed) <= present)
    model_type = (config or {}).get("model_type")
    return FoundModel(
        value=value,
        name=c.name,
        path=c.path,
        root=c.root,
        repo=c.repo,
        model_type=model_type if isinstance(model_type, str) else None,
        architectures=_architectures(config or {}),
        family=family,
        params=params,
        weight_files=tuple(p.name for p in weights),
        weight_bytes=weight_bytes,
        tokenizer_files=tokenizer,
        problem=problem,
    )


# -- the list, cached ------------------------------------------------------------------------------------

_lock = threading.Lock()
_scan: dict = {"roots": None, "when": 0.0, "models": {}}


def find_models(refresh: bool = False, environ=None) -> dict[str, FoundModel]:
    """Every model found, by its value ``hf:<name>``, in the order found. Scanned again when the roots
    changed, after ``SCAN_SECONDS``, or when ``refresh``; in between every call returns the same dict
    (read it, never change it)."""
    try:
        roots = model_dirs(environ)
    except Exception:  # a root that cannot even be looked at: no models, and a log line
        log.warning("the models roots cannot be read (%s)", ENV_VAR, exc_info=True)
        roots = []
    with _lock:
        fresh = time.monotonic() - _scan["when"] < SCAN_SECONDS
        if not refresh and fresh and _scan["roots"] == roots:
            return _scan["models"]
        models = {}
        try:
            named = _unique_values(_candidates(roots))
        except Exception:  # never: _candidates skips what it cannot read; still, a page must not fall
            log.exception("the model search failed")
            named = []
        for value, c in named:
            try:
                models[value] = describe(value, c)
            except Exception:  # a folder that cannot be read is left out, never the page
                log.warning("model folder %r skipped: it cannot be read", str(c.path), exc_info=True)
        _scan.update(roots=roots, when=time.monotonic(), models=models)
        return models


# -- choosing -----------------------------------------------------------------------------------------------


def refusal(value: object) -> tuple[str, str] | None:
    """(reason, message) when ``value`` cannot be a model's name whatever is on disk, else None."""
    if not isinstance(value, str):
        return "type", f"weights must be text, not {type(value).__name__}."
    shown = literal(value)
    if len(value) > MAX_VALUE_CHARS:
        return "long", f"Refused weights={shown}: {len(value):,} characters, at most {MAX_VALUE_CHARS}."
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") for ch in value):
        return "control", f"Refused weights={shown}: it holds control characters."
    name = value.removeprefix(PREFIX)
    if "/" in value or "\\" in value or ".." in value or "~" in value or "://" in value or _DRIVE.match(name):
        return "path", (
            f"Refused weights={shown}: it looks like a path. A model is chosen by its name in"
            f" the list ({PREFIX}<name>), never by where it is."
        )
    return None


def choice(value: str, models: dict[str, FoundModel] | None = None) -> FoundModel:
    """The model named ``value`` (``hf:<name>``), or :class:`ModelChoiceError` with a message safe to
    show. ``models``: the list to choose from (default :func:`find_models`)."""
    refused = refusal(value)
    if refused is not None:
        raise ModelChoiceError(*refused)
    models = find_models() if models is None else models
    if value not in models:
        offered = ", ".join(literal(v) for v in list(models)[:5]) or f"none (set {ENV_VAR})"
        more = f" and {len(models) - 5} more" if len(models) > 5 else ""
        raise ModelChoiceError("unknown", f"No model {literal(value)} was found. Found: {offered}{more}.")
    return models[value]


def memory_limit(environ=None) -> int:
    """The memory the server allows a model, in bytes: the cache budget (``GLASSBOX_CACHE_MB``), which
    holds the loaded model with everything else the pages cache."""
    return limit_from_env(environ)


def check_size(found: FoundModel, limit_bytes: int) -> str | None:
    """None when the model's float32 weights fit in ``limit_bytes``, else why it is refused (before
    anything is loaded), with its size and the limit."""
    need = found.bytes_float32
    if need <= limit_bytes:
        return None
    return (
        f"{literal(found.value)} needs {need / MB:,.0f} MB in float32 ({found.params:,} parameters);"
        f" the server allows {limit_bytes / MB:,.0f} MB ({BUDGET_ENV_VAR})."
    )
