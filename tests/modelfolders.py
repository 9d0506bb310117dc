"""Tiny random Hugging Face model folders for the app's tests: one of each family, saved with
transformers' save_pretrained beside a tokenizer trained on the project's corpus. Nothing is
downloaded. The weights are random: the app must say so by never calling them pretrained.

    root = make_model_folders(tmp_path)    # root/gpt2-tiny, root/qwen2-tiny, root/bert-tiny
    make_model_folders(tmp_path, names=("llama-tiny", "gpt2-saved"))   # the others, by name
    monkeypatch.setenv("GLASSBOX_MODELS", str(root))
    # weights "hf:gpt2-tiny", "hf:qwen2-tiny", "hf:bert-tiny"
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never ask the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
CORPUS = (ROOT / "assets" / "corpus" / "en_zh.txt").read_text(encoding="utf-8")
EOT = "<|endoftext|>"
NAMES = ("gpt2-tiny", "qwen2-tiny", "bert-tiny")
SIZES = dict(d=32, layers=2, heads=4, kv_heads=2, positions=128)
# A GPT-2 config.json the folder scan reads (no weights needed to be listed or refused)
GPT2_CONFIG = {
    "model_type": "gpt2",
    "architectures": ["GPT2LMHeadModel"],
    "vocab_size": 50,
    "n_embd": 16,
    "n_layer": 2,
    "n_positions": 32,
    "n_head": 2,
}


def _byte_level_bpe():
    """The tiny folders' byte-level BPE, learned on the shipped corpus."""
    from tokenizers import ByteLevelBPETokenizer

    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator([CORPUS], vocab_size=600, special_tokens=[EOT], show_progress=False)
    return tok


def _save_gpt2(folder: Path, vocab_size: int, eot: int) -> None:
    import torch
    import transformers

    config = transformers.GPT2Config(
        n_layer=SIZES["layers"],
        n_head=SIZES["heads"],
        n_embd=SIZES["d"],
        vocab_size=vocab_size,
        n_positions=SIZES["positions"],
        bos_token_id=eot,
        eos_token_id=eot,
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)


def _gpt2(folder: Path, scratch: Path) -> None:
    """A GPT-2 with the classic tokenizer files, vocab.json and merges.txt."""
    tok = _byte_level_bpe()
    folder.mkdir(parents=True)
    tok.save_model(str(folder))  # vocab.json + merges.txt
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    _save_gpt2(folder, len(vocab), vocab[EOT])


def _llama_like(folder: Path, config_class: str, model_class: str, tied: bool) -> None:
    """A Llama-family folder (tokenizer.json, grouped-query attention) of the tiny sizes."""
    import torch
    import transformers

    tok = _byte_level_bpe()
    folder.mkdir(parents=True)
    tok.save(str(folder / "tokenizer.json"))
    eot = tok.token_to_id(EOT)
    config = getattr(transformers, config_class)(
        vocab_size=tok.get_vocab_size(),
        hidden_size=SIZES["d"],
        intermediate_size=2 * SIZES["d"],
        num_hidden_layers=SIZES["layers"],
        num_attention_heads=SIZES["heads"],
        num_key_value_heads=SIZES["kv_heads"],
        max_position_embeddings=SIZES["positions"],
        bos_token_id=eot,
        eos_token_id=eot,
        tie_word_embeddings=tied,
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    getattr(transformers, model_class)(config).save_pretrained(folder)


def _qwen2(folder: Path, scratch: Path) -> None:
    """A Qwen2: its output matrix is the embedding's (tied)."""
    _llama_like(folder, "Qwen2Config", "Qwen2ForCausalLM", tied=True)


def _llama(folder: Path, scratch: Path) -> None:
    """A Llama whose output matrix is its own (untied) and with no bias anywhere, as Llama's are."""
    _llama_like(folder, "LlamaConfig", "LlamaForCausalLM", tied=False)


def _gpt2_saved_by_transformers(folder: Path, scratch: Path) -> None:
    """A GPT-2 as transformers 5 saves one today: ``GPT2TokenizerFast(...).save_pretrained`` writes
    tokenizer.json (and tokenizer_config.json) only, no vocab.json or merges.txt."""
    import transformers

    tok = _byte_level_bpe()
    folder.mkdir(parents=True)
    fast = transformers.GPT2TokenizerFast(tokenizer_object=tok._tokenizer, eos_token=EOT, bos_token=EOT)
    fast.save_pretrained(folder)
    _save_gpt2(folder, tok.get_vocab_size(), tok.token_to_id(EOT))


def _bert(folder: Path, scratch: Path) -> None:
    import torch
    import transformers
    from tokenizers import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator([CORPUS], vocab_size=800, show_progress=False)
    folder.mkdir(parents=True)
    tok.save_model(str(folder))  # vocab.txt
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    config = transformers.BertConfig(
        hidden_size=SIZES["d"],
        num_hidden_layers=SIZES["layers"],
        num_attention_heads=SIZES["heads"],
        intermediate_size=2 * SIZES["d"],
        vocab_size=len(vocab),
        max_position_embeddings=SIZES["positions"],
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(folder)


MAKERS = {
    "gpt2-tiny": _gpt2,
    "qwen2-tiny": _qwen2,
    "bert-tiny": _bert,
    # made only by the tests that ask for them (make_model_folders(root, names=...))
    "llama-tiny": _llama,
    "gpt2-saved": _gpt2_saved_by_transformers,
}


def make_model_folders(root: Path, names=NAMES) -> Path:
    """``root`` with one folder per name of ``NAMES`` (made once: an existing folder is kept)."""
    for name in names:
        if not (root / name / "config.json").is_file():
            MAKERS[name](root / name, root)
    return root
