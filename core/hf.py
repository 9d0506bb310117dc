"""A Hugging Face model folder in our own Transformer: ``config.json`` + weights + tokenizer files.

    model, tokenizer, info = load_folder("models/gpt2")
    tr = model.trace(torch.tensor([tokenizer.encode("Attention is all you need")]))
    tr.decoder[i].self_attn.weights, tr.logits          # causal self-attention, next-token logits

Nothing in the folder is executed: the weights are read from ``model.safetensors`` by core's own
reader (core/pretrained.py) or from ``pytorch_model.bin`` with ``torch.load(weights_only=True)``,
which unpickles tensors and plain containers only.

Every file of a folder is read through one :class:`FolderFiles`: a regular file, inside the models
root it was found in (links followed, never out of it), no larger than the cap of its kind
(``FILE_CAPS``), checked before a byte of it is read. A file that fails is a :class:`FolderFileError`
saying why.

The family is chosen by config.json's ``model_type``; each family is a config translation
(its config.json -> ModelConfig), a renaming of its tensors into ours, and its tokenizer:

    gpt2   GPT2LMHeadModel (gpt2, distilgpt2, ...): learned positions, pre-norm, GELU (tanh),
           tied input/output embeddings, one causal stack -> ModelConfig(encoder=False, ...)
    bert   BertModel, BertForMaskedLM, BertForPreTraining, BertLMHeadModel (bert-base-chinese,
           all-MiniLM-L6-v2, ...): the encoder alone (core/pretrained.py), heads left out, with
           its WordPiece (vocab.txt, switches from tokenizer_config.json) -> ModelConfig(decoder=False)
    llama  LlamaForCausalLM, and qwen2 Qwen2ForCausalLM: RMSNorm, SwiGLU, grouped-query attention,
           RoPE with HF's rotate-half pairing, Qwen2's q/k/v biases -> ModelConfig(encoder=False,
           norm_kind="rms", ...). Their tokenizer.json is not read by core: tokenizer is None, ids
           come from outside (the reference ``tokenizers`` in tests)
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch

from core.config import ModelConfig
from core.gpt2_tokenizer import GPT2Tokenizer
from core.model import Transformer
from core.pretrained import (
    MAX_HEADER_BYTES,
    bert_config,
    bert_state_dict,
    read_safetensors_file,
    safetensors_header,
)
from core.wordpiece import WordPieceTokenizer


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


@dataclass(frozen=True)
class TokenizerSource:
    """Which tokenizer file(s) a tokenizer came from, and which that disagree with it were left unused."""

    used: str
    unused: str = ""


# -- reading a folder's files ------------------------------------------------------------------------

KB, MB, GB = 2**10, 2**20, 2**30
# The most bytes a file of each kind may hold: a larger one is refused before it is read. Real files
# are far smaller (a config.json: a few kB; GPT-2's vocab.json 1 MB; Llama 3's tokenizer.json 9 MB);
# the weights' cap is the caller's (the app's memory budget), this one only when none is given.
FILE_CAPS: Mapping[str, int] = {
    "config": 512 * KB,  # config.json
    "settings": 4 * MB,  # tokenizer_config.json, special_tokens_map.json (chat templates)
    "vocab": 32 * MB,  # vocab.json, merges.txt, vocab.txt
    "tokenizer": 64 * MB,  # tokenizer.json
    "index": 16 * MB,  # a sharded model's <weights>.index.json
    "header": MAX_HEADER_BYTES,  # a safetensors header (its length is read first)
    "ref": 1 * KB,  # the hub cache's refs/main: a commit hash
    "weights": 64 * GB,  # every weights file of a model together
}


# how a refusal names what the cap is for
_CAP_WORDS = {
    "config": "a config.json",
    "settings": "a tokenizer settings file",
    "vocab": "a vocabulary file",
    "tokenizer": "a tokenizer.json",
    "index": "a weights index",
    "header": "a safetensors header",
    "ref": "a hub reference",
    "weights": "a model's weights",
}


class FolderFileError(ValueError):
    """A file of a model folder that is not read; ``str()`` says why (it names the file, not where
    the folder is), ``reason``: "missing", "outside", "not_a_file", "too_big" or "unreadable"."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _size_text(n: int) -> str:
    for unit, size in (("GB", GB), ("MB", MB), ("kB", KB)):
        if n >= size:
            return f"{n / size:,.1f} {unit}".replace(".0 ", " ")
    return f"{n:,} bytes"


@dataclass(frozen=True)
class FolderFiles:
    """The files of one model folder, read only through here.

    ``root``: the models root the folder was found in; every file, links followed, must stay inside
    it (the hub cache's snapshot files link to its ``blobs/``: inside). None: no such rule (a folder
    named by a program, not found by the app). ``caps``: FILE_CAPS, with the caller's own for some kinds.
    """

    folder: Path
    root: Path | None = None
    caps: Mapping[str, int] = field(default_factory=lambda: dict(FILE_CAPS))

    def __post_init__(self) -> None:
        object.__setattr__(self, "folder", Path(self.folder))
        object.__setattr__(self, "caps", {**FILE_CAPS, **self.caps})

    def _real(self, name: str) -> Path:
        """The file ``name`` with its links resolved, checked to stay inside the root."""
        try:
            real = (self.folder / name).resolve(strict=True)
        except FileNotFoundError:
            raise FolderFileError("missing", f"{self.folder.name} has no {name}") from None
        except (OSError, RuntimeError) as e:  # a loop, a permission
            raise FolderFileError("unreadable", f"{name} cannot be opened ({type(e).__name__})") from None
        if self.root is not None:
            try:
                root = Path(self.root).resolve()
            except (OSError, RuntimeError) as e:
                raise FolderFileError("unreadable", f"the models folder cannot be opened ({e})") from None
            if not real.is_relative_to(root):
                raise FolderFileError(
                    "outside", f"{name} is a link to a file outside the models folder: not read"
                )
        return real

    def has(self, name: str) -> bool:
        """Is there a regular file ``name``? A link out of the root is no absence: it raises
        :class:`FolderFileError` ("outside"), so a folder is refused rather than read otherwise."""
        try:
            return self._real(name).is_file()
        except FolderFileError as e:
            if e.reason == "outside":
                raise
            return False
        except OSError:
            return False

    def size(self, name: str) -> int:
        """The bytes of ``name``, checked as :meth:`open` checks it (but for the cap)."""
        with self._open(name) as f:
            return os.fstat(f.fileno()).st_size

    def _open(self, name: str):
        real = self._real(name)
        try:
            # O_NONBLOCK: a FIFO named like a model's file must not hang the page waiting for a writer
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise FolderFileError("unreadable", f"{name} cannot be opened ({type(e).__name__})") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise FolderFileError("not_a_file", f"{name} is not a regular file: not read")
        return os.fdopen(fd, "rb")

    def check_size(self, name: str, size: int, kind: str) -> None:
        cap = self.caps[kind]
        if size > cap:
            raise FolderFileError(
                "too_big",
                f"{name} is {_size_text(size)}, more than the {_size_text(cap)} {_CAP_WORDS[kind]} may"
                " have here: not read",
            )

    def open(self, name: str, kind: str):
        """``name`` open for reading (binary), after every check: a regular file, inside the root, no
        larger than the cap of ``kind`` (a key of FILE_CAPS). Else :class:`FolderFileError`."""
        f = self._open(name)
        try:
            self.check_size(name, os.fstat(f.fileno()).st_size, kind)
        except FolderFileError:
            f.close()
            raise
        return f

    def read_bytes(self, name: str, kind: str) -> bytes:
        with self.open(name, kind) as f:
            data = f.read(self.caps[kind] + 1)  # the file may have grown since it was measured
        self.check_size(name, len(data), kind)
        return data

    def read_text(self, name: str, kind: str) -> str:
        try:
            return self.read_bytes(name, kind).decode("utf-8")
        except UnicodeDecodeError:
            raise FolderFileError("unreadable", f"{name} is not UTF-8 text") from None

    def read_json(self, name: str, kind: str):
        try:
            return json.loads(self.read_text(name, kind))
        except (ValueError, RecursionError) as e:
            if isinstance(e, FolderFileError):
                raise
            raise FolderFileError("unreadable", f"{name} is not JSON") from None

    def safetensors_header(self, name: str) -> dict:
        """The header of the safetensors file ``name`` (the header's cap only: nothing else is read)."""
        with self._open(name) as f:
            try:
                return safetensors_header(f, name, os.fstat(f.fileno()).st_size)[0]
            except ValueError as e:
                raise FolderFileError("unreadable", str(e)) from None


def _files(folder) -> FolderFiles:
    return folder if isinstance(folder, FolderFiles) else FolderFiles(Path(folder))


def _read_pickled(f, name: str, size: int) -> dict[str, torch.Tensor]:
    # weights_only: tensors and plain containers only, never an object that runs code
    return torch.load(f, map_location="cpu", weights_only=True)


Progress = Callable[[float, str], None]  # (fraction done, what is being done), for a progress bar
# what a family's loader gives: our model, its tokenizer (None: not read by core), the weights file
# and where the tokenizer came from (None: not read by core)
Loaded = tuple[Transformer, GPT2Tokenizer | WordPieceTokenizer | None, str, TokenizerSource | None]


def _no_progress(fraction: float, what: str) -> None:
    pass


def read_weights(folder, progress: Progress = _no_progress) -> tuple[dict[str, torch.Tensor], str]:
    """The folder's tensors and the file they came from; safetensors first (no pickle at all).

    ``folder``: a path or a :class:`FolderFiles`. A big model is saved in shards: ``<name>.index.json``
    maps every tensor to its shard's file. Every weights file together must fit the cap of "weights",
    checked before any is read. ``progress`` hears of each file before it is read (fractions 0 to 1).
    """
    files = _files(folder)
    for name, read in (("model.safetensors", read_safetensors_file), ("pytorch_model.bin", _read_pickled)):
        index = f"{name}.index.json"
        if files.has(name):
            shards = [name]
        elif files.has(index):
            weight_map = files.read_json(index, "index").get("weight_map")
            if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
                raise FolderFileError("unreadable", f"{index} has no weight_map of file names")
            shards = sorted({Path(shard).name for shard in weight_map.values()})  # .name: never a path out
        else:
            continue
        files.check_size(" + ".join(shards[:2]) + (" + ..." if len(shards) > 2 else ""),
                         sum(files.size(shard) for shard in shards), "weights")
        weights = {}
        for n, shard in enumerate(shards):
            progress(n / len(shards), shard)
            with files.open(shard, "weights") as f:
                weights.update(read(f, shard, os.fstat(f.fileno()).st_size))
        return weights, name if len(shards) == 1 and shards[0] == name else index
    raise FileNotFoundError(
        f"{files.folder.name} has neither model.safetensors nor pytorch_model.bin (nor their shards)"
    )


def _part(progress: Progress, start: float, end: float) -> Progress:
    """``progress`` for one stage of a load: its fractions mapped to [start, end]."""
    return lambda fraction, what: progress(start + (end - start) * fraction, what)


# -- GPT-2 -----------------------------------------------------------------------------------------


def gpt2_config(hf: dict) -> ModelConfig:
    """A GPT-2 ``config.json`` (as a dict) -> ModelConfig: one causal, pre-norm stack."""
    activation = hf.get("activation_function", "gelu_new")
    if activation not in ("gelu_new", "gelu_pytorch_tanh"):
        raise ValueError(f"activation_function={activation!r}: only GPT-2's gelu_new is supported")
    for option in ("scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"):
        if hf.get(option):
            raise ValueError(f"{option}=True is not supported")
    if not hf.get("scale_attn_weights", True):
        raise ValueError("scale_attn_weights=False is not supported: attention divides by sqrt(d_k)")
    d_model, vocab = hf["n_embd"], hf["vocab_size"]
    return ModelConfig(
        src_vocab_size=vocab,  # unused: there is no encoder
        tgt_vocab_size=vocab,
        d_model=d_model,
        num_heads=hf["n_head"],
        num_layers=hf["n_layer"],
        d_ff=hf.get("n_inner") or 4 * d_model,
        dropout=hf.get("resid_pdrop", 0.1),
        max_len=hf["n_positions"],
        norm="pre",
        # GPT-2 has no pad token (None): a padded batch passes attention_mask (Transformer.decode)
        pad_id=hf.get("pad_token_id"),
        positions="learned",
        activation="gelu_tanh",
        layer_norm_eps=hf.get("layer_norm_epsilon", 1e-5),
        scale_embeddings=False,
        final_norm=True,
        encoder=False,
        tie_embeddings=hf.get("tie_word_embeddings", True),
    )


# GPT-2's names inside block h.{i} -> ours inside decoder.layers.{i}
_GPT2_LAYER = {
    "ln_1": "sublayer1.norm",  # pre-norm: x + Attention(LayerNorm(x))
    "attn.c_proj": "self_attn.w_o",
    "ln_2": "sublayer3.norm",  # the FFN's residual is sublayer3 in every decoder layer
    "mlp.c_fc": "ffn.linear1",
    "mlp.c_proj": "ffn.linear2",
}
# Conv1D stores (in, out), the transpose of a Linear's (out, in)
_CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def gpt2_state_dict(weights: dict[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    """Rename a GPT-2 checkpoint's tensors to ours: Conv1D matrices transposed, c_attn's (d, 3d)
    split into W_Q, W_K, W_V, the output matrix tied to the token embedding when the config says so."""
    ours = {}
    for name, tensor in weights.items():
        name = name.removeprefix("transformer.")
        parts = name.split(".")
        if name in ("wte.weight", "wpe.weight"):
            ours[{"wte": "tgt_embed.lookup", "wpe": "tgt_embed.position"}[parts[0]] + ".weight"] = tensor
        elif parts[0] == "ln_f":
            ours[f"decoder.norm.{parts[1]}"] = tensor
        elif name == "lm_head.weight":
            ours["generator.weight"] = tensor
        elif parts[0] == "h" and len(parts) >= 4:
            _gpt2_layer(ours, parts[1], ".".join(parts[2:-1]), parts[-1], tensor)
        else:
            raise ValueError(f"unexpected tensor {name!r} in a GPT-2 checkpoint")
    if config.tie_embeddings:  # save_pretrained leaves the tied copy out of model.safetensors
        ours["generator.weight"] = ours["tgt_embed.lookup.weight"]
    return ours


def _gpt2_layer(ours: dict, i: str, module: str, leaf: str, tensor: torch.Tensor) -> None:
    if module == "attn" and leaf in ("bias", "masked_bias"):
        return  # old checkpoints store the causal mask as a buffer: ours is built by core/masks.py
    key = f"{module}.{leaf}"
    if leaf == "weight" and module in _CONV1D:
        tensor = tensor.t()
    if module == "attn.c_attn":  # (3d, d) weight or (3d,) bias: queries, keys, values stacked
        for ours_name, part in zip(("w_q", "w_k", "w_v"), tensor.chunk(3, dim=0), strict=True):
            ours[f"decoder.layers.{i}.self_attn.{ours_name}.{leaf}"] = part.contiguous()
        return
    if module not in _GPT2_LAYER:
        raise ValueError(f"unexpected tensor h.{i}.{key} in a GPT-2 checkpoint")
    ours[f"decoder.layers.{i}.{_GPT2_LAYER[module]}.{leaf}"] = tensor.contiguous()


def _merge_pairs(merges, where: str) -> list[tuple[str, str]]:
    """BPE merges as pairs: merges.txt's lines or tokenizer.json's ``"a b"`` strings / ``["a", "b"]``."""
    pairs = []
    for n, merge in enumerate(merges, 1):
        pair = merge.split(" ") if isinstance(merge, str) else merge
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise ValueError(f"{where}: merge {n} is not two tokens: {str(merge)[:40]!r}")
        pairs.append((pair[0], pair[1]))
    return pairs


def _classic_gpt2(files: FolderFiles) -> tuple[dict, list[tuple[str, str]]]:
    """vocab.json + merges.txt (GPT-2's own files, as tokenizers and transformers 4 write them)."""
    vocab = files.read_json("vocab.json", "vocab")
    lines = [line for line in files.read_text("merges.txt", "vocab").splitlines()
             if line.strip() and not line.startswith("#version")]
    if not isinstance(vocab, dict) or not all(type(i) is int for i in vocab.values()):
        raise ValueError("vocab.json is not a map of tokens to ids")
    return vocab, _merge_pairs(lines, "merges.txt")


def _tokenizer_json_model(files: FolderFiles, model_type: str) -> tuple[dict, dict]:
    """tokenizer.json's model (its type checked) and the file as a whole."""
    data = files.read_json("tokenizer.json", "tokenizer")
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type") != model_type:
        found = model.get("type") if isinstance(model, dict) else None
        raise ValueError(
            f"tokenizer.json holds a {str(found)[:20]} model, not the {model_type} this family uses"
        )
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(type(i) is int for i in vocab.values()):
        raise ValueError("tokenizer.json's vocabulary is not a map of tokens to ids")
    return model, data


def _added_tokens(data: dict) -> dict[str, int]:
    added = data.get("added_tokens") or []
    return {t["content"]: t["id"] for t in added
            if isinstance(t, dict) and isinstance(t.get("content"), str) and type(t.get("id")) is int}


def gpt2_tokenizer(folder) -> tuple[GPT2Tokenizer, TokenizerSource]:
    """GPT-2's byte-level BPE, read from the files transformers' ``AutoTokenizer`` reads: ``tokenizer.json``
    when there is one (transformers 5 saves only that), else ``vocab.json`` + ``merges.txt``. Both
    present and holding other vocabularies or merges: tokenizer.json, and the source says the others
    were left unused."""
    files = _files(folder)
    classic = files.has("vocab.json") and files.has("merges.txt")
    if not files.has("tokenizer.json"):
        if not classic:
            raise FolderFileError(
                "missing", f"{files.folder.name} has neither tokenizer.json nor vocab.json + merges.txt"
            )
        vocab, merges = _classic_gpt2(files)
        return GPT2Tokenizer(vocab, merges), TokenizerSource("vocab.json + merges.txt")
    model, data = _tokenizer_json_model(files, "BPE")
    vocab, merges = dict(model["vocab"]), _merge_pairs(model.get("merges") or [], "tokenizer.json")
    added = _added_tokens(data)  # matched in the raw text before BPE, as tokenizers does
    vocab.update(added)
    unused = ""
    if classic and _classic_gpt2(files) != (model["vocab"], merges):
        unused = "vocab.json + merges.txt"
    return GPT2Tokenizer(vocab, merges, special_tokens=list(added)), TokenizerSource("tokenizer.json", unused)


def load_gpt2(folder, hf: dict, progress: Progress = _no_progress) -> Loaded:
    files = _files(folder)
    config = gpt2_config(hf)
    tokenizer, source = gpt2_tokenizer(files)
    if len(tokenizer.vocab) > config.tgt_vocab_size:
        raise ValueError(
            f"{source.used} has {len(tokenizer.vocab)} tokens, config.json says {config.tgt_vocab_size}"
        )
    weights, weights_file = read_weights(files, _part(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, gpt2_state_dict(weights, config)).eval()
    return model, tokenizer, weights_file, source


# -- BERT ------------------------------------------------------------------------------------------

# tokenizer_config.json's names -> WordPieceTokenizer's (BertTokenizer's defaults when absent)
_WORDPIECE_OPTIONS = {
    "do_lower_case": "lowercase",
    "tokenize_chinese_chars": "chinese_chars",
    "strip_accents": "strip_accents",
}


def _vocab_txt(files: FolderFiles) -> list[str]:
    lines = files.read_text("vocab.txt", "vocab").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]  # the token on line i has id i


def bert_tokenizer(folder) -> WordPieceTokenizer:
    """BERT's WordPiece (see :func:`bert_tokenizer_source`)."""
    return bert_tokenizer_source(folder)[0]


def bert_tokenizer_source(folder) -> tuple[WordPieceTokenizer, TokenizerSource]:
    """The WordPiece vocabulary from the file transformers' ``AutoTokenizer`` reads: ``tokenizer.json``
    when there is one (transformers 5 saves no vocab.txt), else ``vocab.txt``; normalised as
    ``tokenizer_config.json`` says (a cased or a Chinese BERT keeps its case: ``do_lower_case=false``;
    without the file, BERT's uncased defaults). A vocab.txt beside a tokenizer.json with another
    vocabulary is left unused, and the source says so."""
    files = _files(folder)
    options = {}
    if files.has("tokenizer_config.json"):
        saved = files.read_json("tokenizer_config.json", "settings")
        if isinstance(saved, dict):
            options = {ours: saved[theirs] for theirs, ours in _WORDPIECE_OPTIONS.items() if theirs in saved}
    if files.has("tokenizer.json"):
        model, _ = _tokenizer_json_model(files, "WordPiece")
        vocab = sorted(model["vocab"], key=model["vocab"].get)
        if [model["vocab"][t] for t in vocab] != list(range(len(vocab))):
            raise ValueError("tokenizer.json: the WordPiece ids are not 0, 1, 2, ...")
        unused = "vocab.txt" if files.has("vocab.txt") and _vocab_txt(files) != vocab else ""
        return WordPieceTokenizer(vocab, **options), TokenizerSource("tokenizer.json", unused)
    if files.has("vocab.txt"):
        return WordPieceTokenizer(_vocab_txt(files), **options), TokenizerSource("vocab.txt")
    raise FolderFileError("missing", f"{files.folder.name} has neither tokenizer.json nor vocab.txt")


def load_bert(folder, hf: dict, progress: Progress = _no_progress) -> Loaded:
    """The encoder of any BERT checkpoint (``bert.`` prefix of BertFor* stripped, heads ignored)."""
    if hf.get("is_decoder") or hf.get("add_cross_attention"):
        # a causal BERT (BertLMHeadModel as a decoder) masks the future: not what our encoder does
        raise ValueError("is_decoder or add_cross_attention: only BERT's bidirectional encoder is supported")
    files = _files(folder)
    config = bert_config(hf)
    tokenizer, source = bert_tokenizer_source(files)
    if len(tokenizer) > config.src_vocab_size:
        raise ValueError(
            f"{source.used} has {len(tokenizer)} tokens, config.json says {config.src_vocab_size}"
        )
    weights, weights_file = read_weights(files, _part(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, bert_state_dict(weights)).eval()
    return model, tokenizer, weights_file, source


# -- Llama, Qwen2 ----------------------------------------------------------------------------------


def _rope_theta(hf: dict) -> float:
    """RoPE's base: transformers 5 writes ``rope_parameters``, older files ``rope_theta`` and
    ``rope_scaling``; only the plain ("default") rotation is supported."""
    rope = dict(hf.get("rope_parameters") or {})
    scaling = hf.get("rope_scaling") or {}
    kind = rope.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default"
    if kind != "default":
        raise ValueError(f"rope_type={kind!r}: only the default RoPE (no scaling) is supported")
    return float(rope.get("rope_theta", hf.get("rope_theta", 10000.0)))


def llama_config(hf: dict) -> ModelConfig:
    """A Llama or Qwen2 ``config.json`` -> ModelConfig: one causal, pre-norm, RMSNorm stack."""
    qwen2 = hf.get("model_type") == "qwen2"
    if hf.get("hidden_act", "silu") != "silu":
        raise ValueError(f"hidden_act={hf['hidden_act']!r}: only SiLU (SwiGLU) is supported")
    if qwen2 and hf.get("use_sliding_window"):
        raise ValueError("use_sliding_window=True is not supported: every layer reads all earlier tokens")
    if hf.get("pretraining_tp", 1) != 1:
        raise ValueError("pretraining_tp != 1 is not supported")
    d_model, heads, vocab = hf["hidden_size"], hf["num_attention_heads"], hf["vocab_size"]
    if hf.get("head_dim") not in (None, d_model // heads):
        raise ValueError(f"head_dim={hf['head_dim']} is not hidden_size / num_attention_heads")
    attention_bias = hf.get("attention_bias", False)
    return ModelConfig(
        src_vocab_size=vocab,  # unused: there is no encoder
        tgt_vocab_size=vocab,
        d_model=d_model,
        num_heads=heads,
        num_layers=hf["num_hidden_layers"],
        d_ff=hf["intermediate_size"],
        dropout=hf.get("attention_dropout", 0.0),
        max_len=hf.get("max_position_embeddings", 2048),  # RoPE: not a hard limit
        norm="pre",
        pad_id=hf.get("pad_token_id"),
        positions="rope",
        activation="swiglu",
        layer_norm_eps=hf.get("rms_norm_eps", 1e-6),
        scale_embeddings=False,
        final_norm=True,
        encoder=False,
        tie_embeddings=hf.get("tie_word_embeddings", False),
        norm_kind="rms",
        num_kv_heads=hf.get("num_key_value_heads") or heads,
        rope_theta=_rope_theta(hf),
        rope_pairing="half",
        qkv_bias=True if qwen2 else attention_bias,  # Qwen2: q/k/v biases, none on o_proj
        out_bias=False if qwen2 else attention_bias,
        ffn_bias=False if qwen2 else hf.get("mlp_bias", False),
        generator_bias=False,
    )


# Llama's names inside model.layers.{i} -> ours inside decoder.layers.{i}
_LLAMA_LAYER = {
    "input_layernorm": "sublayer1.norm",  # pre-norm: x + Attention(RMSNorm(x))
    "self_attn.q_proj": "self_attn.w_q",
    "self_attn.k_proj": "self_attn.w_k",
    "self_attn.v_proj": "self_attn.w_v",
    "self_attn.o_proj": "self_attn.w_o",
    "post_attention_layernorm": "sublayer3.norm",
    "mlp.gate_proj": "ffn.gate",
    "mlp.up_proj": "ffn.linear1",
    "mlp.down_proj": "ffn.linear2",
}


def llama_state_dict(weights: dict[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    """Rename a Llama / Qwen2 checkpoint's tensors to ours (nn.Linear on both sides: no transpose)."""
    ours = {}
    for name, tensor in weights.items():
        parts = name.split(".")
        if name == "model.embed_tokens.weight":
            ours["tgt_embed.lookup.weight"] = tensor
        elif name == "model.norm.weight":
            ours["decoder.norm.weight"] = tensor
        elif name == "lm_head.weight":
            ours["generator.weight"] = tensor
        elif parts[:2] == ["model", "layers"] and ".".join(parts[3:-1]) in _LLAMA_LAYER:
            ours[f"decoder.layers.{parts[2]}.{_LLAMA_LAYER['.'.join(parts[3:-1])]}.{parts[-1]}"] = tensor
        elif not name.endswith("rotary_emb.inv_freq"):  # old files store RoPE's θ_i: ours computes it
            raise ValueError(f"unexpected tensor {name!r} in a Llama / Qwen2 checkpoint")
    if config.tie_embeddings:  # save_pretrained leaves the tied copy out
        ours["generator.weight"] = ours["tgt_embed.lookup.weight"]
    return ours


def load_llama(folder, hf: dict, progress: Progress = _no_progress) -> Loaded:
    """Llama or Qwen2; the tokenizer (tokenizer.json) is left to the caller: None."""
    config = llama_config(hf)
    weights, weights_file = read_weights(_files(folder), _part(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, llama_state_dict(weights, config)).eval()
    return model, None, weights_file, None


# -- any folder ------------------------------------------------------------------------------------

# model_type -> loader(FolderFiles, config.json as a dict, progress) -> Loaded
FAMILIES: dict[str, Callable] = {
    "gpt2": load_gpt2,
    "bert": load_bert,
    "llama": load_llama,
    "qwen2": load_llama,
}


def load_folder(
    path, progress: Progress = _no_progress, *, root=None, max_weight_bytes: int | None = None
) -> tuple[Transformer, GPT2Tokenizer | WordPieceTokenizer | None, FolderInfo]:
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
