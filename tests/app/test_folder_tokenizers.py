"""Which tokenizer a GPT-2 or BERT folder gets: the files transformers' ``AutoTokenizer`` reads.

transformers 5 saves a GPT-2's tokenizer as ``tokenizer.json`` alone (no vocab.json or merges.txt) and
a BERT's without vocab.txt: such folders load, with the ids AutoTokenizer gives on awkward text. A
folder with both kinds of files holding different vocabularies gets tokenizer.json's, as AutoTokenizer
does, and the screen says which file is used and which is not. Every folder here is saved by
transformers 5 itself.
"""

from __future__ import annotations

import os
import shutil

import pytest
from apphelpers import assert_clean, open_page

from tests.modelfolders import CORPUS, EOT, make_model_folders
from ui.folders.hf_pipeline import load_model
from ui.folders.models import find_models

TEXTS = {
    "english": "Attention is all you need.",
    "chinese": "注意力就是一切，中文分词",
    "emoji": "I ❤️ 🤗 😀👍🏽 🇫🇷",
    "leading space": "  two  spaces\n\tand a tab ",
    "special": f"one{EOT}two",
}


def _byte_level(size: int):
    from tokenizers import ByteLevelBPETokenizer

    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator([CORPUS], vocab_size=size, special_tokens=[EOT], show_progress=False)
    return tok


def _wordpiece(size: int):
    from tokenizers import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator([CORPUS], vocab_size=size, show_progress=False)
    return tok


@pytest.fixture(scope="module")
def root(tmp_path_factory, model_root):
    """gpt2-saved (tokenizer.json only); gpt2-both (a tokenizer.json beside vocab.json + merges.txt of
    a smaller BPE); bert-saved (BertTokenizerFast.save_pretrained: no vocab.txt); bert-both (a vocab.txt
    of another WordPiece beside it). Weights: the tiny folders' own."""
    import transformers

    base = make_model_folders(tmp_path_factory.mktemp("tokenizers"), names=("gpt2-saved",))
    both = base / "gpt2-both"
    shutil.copytree(base / "gpt2-saved", both)
    _byte_level(400).save_model(str(both))  # another vocabulary and merges, in the classic files
    for name, extra in (("bert-saved", None), ("bert-both", _wordpiece(500))):
        folder = base / name
        folder.mkdir()
        for weights in ("config.json", "model.safetensors"):
            shutil.copy(model_root / "bert-tiny" / weights, folder)
        tok = _wordpiece(800)  # the vocabulary bert-tiny's weights were made for
        transformers.BertTokenizerFast(tokenizer_object=tok._tokenizer).save_pretrained(folder)
        if extra is not None:
            extra.save_model(str(folder))  # vocab.txt: another vocabulary
    assert not (base / "gpt2-saved" / "vocab.json").exists()  # as transformers 5 saves it
    assert not (base / "bert-saved" / "vocab.txt").exists()
    return base


@pytest.fixture
def folders(root, monkeypatch):
    monkeypatch.setenv("GLASSBOX_MODELS", str(root))
    monkeypatch.setenv("HF_HUB_CACHE", str(root / "no-hub-cache"))
    find_models(refresh=True)
    return root


def auto_ids(folder, text: str) -> list[int]:
    import transformers

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return transformers.AutoTokenizer.from_pretrained(str(folder))(text)["input_ids"]


@pytest.mark.parametrize("name", ["gpt2-saved", "gpt2-both", "bert-saved", "bert-both"])
def test_ids_equal_autotokenizers(folders, name):
    pipe = load_model(f"hf:{name}")
    for label, text in TEXTS.items():
        if name.startswith("bert") and label == "special":
            continue  # BERT has no <|endoftext|>: the English text is enough
        assert pipe.src_encode(text)[1] == auto_ids(folders / name, text), label


@pytest.mark.parametrize(
    "name, used, unused",
    [
        ("gpt2-saved", "GPT-2's tokenizer.json", None),
        ("gpt2-both", "GPT-2's tokenizer.json", "vocab.json + merges.txt"),
        ("bert-saved", "BERT's tokenizer.json", None),
        ("bert-both", "BERT's tokenizer.json", "vocab.txt"),
    ],
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_screen_says_which_file_is_used(folders, name, used, unused, lang):
    at = open_page("pages/tokenization.py", {"lang": lang}, weights=f"hf:{name}")
    assert_clean(at)
    shown = " ".join(c.value for c in at.caption)
    assert used in shown, shown
    if unused is None:
        assert "not used" not in shown
    else:
        assert f"{unused} beside it: another vocabulary, not used" in shown, shown
