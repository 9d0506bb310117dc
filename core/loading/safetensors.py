"""The safetensors format, read by core itself (no package beyond torch, nothing executed).

A file is an 8-byte little-endian header length, a JSON header (tensor name -> dtype, shape and byte
offsets into the buffer that follows), then the raw little-endian buffer.

    weights = read_safetensors("model.safetensors")     # {name: tensor}
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import torch

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
