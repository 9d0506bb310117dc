"""Random-weight model folders at the sizes real courses use (issue 29, part 6), for benchmarks/app.py.

    .venv/bin/python benchmarks/models.py                  # both, under the system temp dir
    .venv/bin/python benchmarks/models.py gpt2-small --root /tmp/models

- "gpt2-small": ``GPT2Config()``'s defaults, GPT-2 small's sizes (12 layers × 12 heads, n_embd 768,
  1024 positions, 50,257 vocabulary rows), with ``vocab.json`` + ``merges.txt``;
- "qwen2.5-0.5b": Qwen2.5-0.5B's sizes (24 layers, 14 query heads sharing 2 key/value heads, 896,
  SwiGLU 4864, RoPE θ 1e6, 151,936 rows, tied embeddings), with a ``tokenizer.json``.

Both tokenizers are byte-level BPE trained by ``tokenizers`` on assets/corpus/*.txt: a corpus this
small stops merging long before 50,257 (or 151,936) tokens, so the model keeps every row of the real
model's embedding (its size and memory are the real ones) and the ids above the tokenizer's vocabulary
are rows no text ever reaches (Qwen2.5's own tokenizer leaves ~270 such padding rows). The end-of-text
id in config.json is the trained tokenizer's ``<|endoftext|>``, so generation stops on a real token.

Saved with ``save_pretrained`` (safetensors, float32): ~0.5 GB and ~2 GB. Nothing is downloaded; the
folders are made once and reused (a folder whose config.json exists is kept). Never inside the repo.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never ask the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
CORPUS_DIR = REPO / "assets" / "corpus"
DEFAULT_ROOT = Path(tempfile.gettempdir()) / "glassbox-bench-models"
EOT = "<|endoftext|>"
KINDS = ("gpt2-small", "qwen2.5-0.5b")
QWEN_SIZES = dict(
    hidden_size=896,
    intermediate_size=4864,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    vocab_size=151936,
    max_position_embeddings=32768,
    rope_theta=1e6,
    tie_word_embeddings=True,
    rms_norm_eps=1e-6,
)


def _tokenizer(vocab_size: int):
    """A byte-level BPE trained on the project's corpus (all of assets/corpus/*.txt)."""
    from tokenizers import ByteLevelBPETokenizer

    texts = [p.read_text(encoding="utf-8") for p in sorted(CORPUS_DIR.glob("*.txt"))]
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(texts, vocab_size=vocab_size, special_tokens=[EOT], show_progress=False)
    return tok


def _gpt2_small(folder: Path):
    import transformers

    tok = _tokenizer(50257)
    tok.save_model(str(folder))  # vocab.json + merges.txt: core's own GPT-2 tokenizer reads them
    eot = tok.token_to_id(EOT)
    config = transformers.GPT2Config(bos_token_id=eot, eos_token_id=eot)  # sizes: the defaults
    return transformers.GPT2LMHeadModel(config), tok.get_vocab_size()


def _qwen_small(folder: Path):
    import transformers

    tok = _tokenizer(QWEN_SIZES["vocab_size"])
    tok.save(str(folder / "tokenizer.json"))  # read through Hugging Face tokenizers, outside core
    eot = tok.token_to_id(EOT)
    config = transformers.Qwen2Config(**QWEN_SIZES, bos_token_id=eot, eos_token_id=eot)
    return transformers.Qwen2ForCausalLM(config), tok.get_vocab_size()


MAKERS = {"gpt2-small": _gpt2_small, "qwen2.5-0.5b": _qwen_small}


def make(kind: str, root: Path | str = DEFAULT_ROOT) -> Path:
    """The folder ``root/kind`` holding a random-weight model of that kind (made once, then reused)."""
    if kind not in MAKERS:
        raise ValueError(f"unknown model kind {kind!r}: one of {', '.join(KINDS)}")
    root = Path(root)
    if REPO in root.resolve().parents or root.resolve() == REPO:
        raise ValueError(f"{root} is inside the repository: model folders are GBs, keep them outside")
    folder = root / kind
    if (folder / "config.json").is_file():
        print(f"{kind}: {parameters(folder):,} parameters (reused): {folder}")
        return folder
    import torch

    started = time.monotonic()
    scratch = root / f".{kind}.partial"  # renamed when complete: a killed run leaves no half folder
    scratch.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model, tokens = MAKERS[kind](scratch)
    model = model.to(torch.float32)
    model.save_pretrained(scratch)  # safetensors
    params = sum(p.numel() for p in model.parameters())
    rows = model.get_input_embeddings().weight.shape[0]
    scratch.rename(folder)
    print(
        f"{kind}: {params:,} parameters ({4 * params / 2**20:,.0f} MB in float32); tokenizer"
        f" {tokens:,} tokens, embedding {rows:,} rows; made in {time.monotonic() - started:.0f} s: {folder}"
    )
    return folder


def parameters(folder: Path) -> int:
    """The number of parameters in ``folder``'s safetensors files, from their headers alone."""
    import json
    import math
    import struct

    total = 0
    for path in folder.glob("*.safetensors"):
        with path.open("rb") as f:
            (size,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(size))
        total += sum(math.prod(v["shape"]) for k, v in header.items() if k != "__metadata__")
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kinds", nargs="*", default=list(KINDS), help=f"any of {', '.join(KINDS)}")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help=f"default {DEFAULT_ROOT}")
    args = ap.parse_args()
    for kind in args.kinds:
        make(kind, args.root)


if __name__ == "__main__":
    main()
