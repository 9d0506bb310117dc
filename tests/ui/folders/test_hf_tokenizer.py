"""ui.folders.hf_tokenizer: a model folder's tokenizer as (labels, ids), against transformers' AutoTokenizer.

Three tokenizer.json tokenizers are trained on the project's corpus by `tokenizers` and saved in
tmp_path with a tokenizer_config.json, as a Hub folder has them: GPT-2-style byte-level BPE, a
Qwen2 / Llama 3-style byte-level BPE (another pre-tokenizer regex, NFC, a BOS added by the
post-processor) and a Llama 2-style SentencePiece BPE (``▁`` for spaces, ``<0xNN>`` byte fallback,
``<s>`` added). Core's own GPT-2 and WordPiece tokenizers are wrapped and checked the same way.
Nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never ask the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import transformers  # noqa: E402
from tokenizers import (  # noqa: E402
    BertWordPieceTokenizer,
    ByteLevelBPETokenizer,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from core.tokenizers.bpe import BYTE_TO_CHAR  # noqa: E402
from core.tokenizers.gpt2 import GPT2Tokenizer  # noqa: E402
from core.tokenizers.protocol import Tokenizer as CoreTokenizer  # noqa: E402
from core.tokenizers.wordpiece import WordPieceTokenizer  # noqa: E402
from core.tracing.pipeline import corpus_tokenizer, display_token  # noqa: E402
from ui.folders.hf_tokenizer import FolderTokenizer, byte_level_label, bytes_label, folder_tokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CORPUS = (ROOT / "assets" / "corpus" / "en_zh.txt").read_text(encoding="utf-8")
EOT = "<|endoftext|>"
TEXTS = {
    "english": "Attention is all you need.",
    "chinese": "注意力就是一切",
    "emoji": "I ❤️ 🤗 😀👍🏽 🇫🇷",
    "code": "def f(x):\n\treturn x[0] + 1  # ok\n",
    "whitespace": "  two  spaces\n\n\tand a tab  ",
    "mixed": "注意力 is all you need 鑫",
    "empty": "",
}
# Qwen2's pre-tokenizer regex (its tokenizer.json): digits one by one, no space before a letter run
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]


def _save(folder: Path, tok: Tokenizer, settings: dict | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    if settings is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(settings), encoding="utf-8")
    return folder


def byte_level_tokenizer() -> Tokenizer:
    """GPT-2's kind: ByteLevelBPETokenizer, vocabulary 600, as tests/core/loading/test_llama.py trains it."""
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator([CORPUS], vocab_size=600, special_tokens=[EOT], show_progress=False)
    return Tokenizer.from_str(tok.to_str())


def qwen2_style_tokenizer() -> Tokenizer:
    """Byte-level BPE behind Qwen2's regex and NFC; the post-processor adds a BOS (as Llama 3's)."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>"]
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=specials, initial_alphabet=alphabet, show_progress=False
    )
    tok.train_from_iterator([CORPUS], trainer)
    bos = ("<|begin_of_text|>", tok.token_to_id("<|begin_of_text|>"))
    template = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", pair="$A $B", special_tokens=[bos]
    )
    tok.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=False), template])
    return tok


def sentencepiece_tokenizer() -> Tokenizer:
    """Llama 2 / TinyLlama's kind: BPE with byte fallback, ``▁`` for a space, ``<s>`` added in front.

    The 256 byte tokens are in the model's vocabulary and not among the added tokens, as in a
    converted Llama tokenizer.json (the trainer lists them as added: they are taken out again).
    """
    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    specials = ["<unk>", "<s>", "</s>"]
    trainer = trainers.BpeTrainer(vocab_size=800, special_tokens=specials + BYTE_TOKENS, show_progress=False)
    tok.train_from_iterator([CORPUS], trainer)
    bos = ("<s>", tok.token_to_id("<s>"))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[bos]
    )
    spec = json.loads(tok.to_str())
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] in specials]
    return Tokenizer.from_str(json.dumps(spec))


# name -> (tokenizer, tokenizer_config.json); the class names are those of real folders
KINDS = {
    "byte_level": (
        byte_level_tokenizer,
        {"tokenizer_class": "GPT2Tokenizer", "bos_token": EOT, "eos_token": EOT},
    ),
    "qwen2_style": (
        qwen2_style_tokenizer,
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": "<|begin_of_text|>",
            "eos_token": "<|end_of_text|>",
        },
    ),
    "sentencepiece": (
        sentencepiece_tokenizer,
        {
            "tokenizer_class": "LlamaTokenizer",
            "bos_token": "<s>",
            "eos_token": "</s>",
            "unk_token": "<unk>",
            "add_bos_token": True,
            "add_eos_token": False,
        },
    ),
}
BYTE_LEVEL = ("byte_level", "qwen2_style")


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tokenizers")
    return {name: _save(root / name, make(), settings) for name, (make, settings) in KINDS.items()}


@pytest.fixture(scope="module")
def ours(folders) -> dict[str, FolderTokenizer]:
    return {name: folder_tokenizer(folder, "llama") for name, folder in folders.items()}


@pytest.fixture(scope="module")
def theirs(folders) -> dict:
    return {name: transformers.AutoTokenizer.from_pretrained(folder) for name, folder in folders.items()}


def _unshown(labels: list[str]) -> str:
    return "".join(labels).replace("␣", " ").replace("⏎", "\n").replace("⇥", "\t")


def _label_bytes(label: str) -> bytes:
    """``⟨e4 bd⟩`` -> b'\\xe4\\xbd'."""
    assert label[0] == "⟨" and label[-1] == "⟩", label
    return bytes.fromhex(label[1:-1].replace("\u2009", ""))


# -- tokenizer.json --------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
@pytest.mark.parametrize("kind", KINDS)
def test_ids_equal_auto_tokenizer(ours, theirs, kind, text):
    labels, ids = ours[kind].labelled(text)
    assert ids == theirs[kind](text)["input_ids"]
    assert labels == [ours[kind].labels[i] for i in ids] and all(labels)


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
@pytest.mark.parametrize("kind", BYTE_LEVEL)
def test_byte_level_labels_give_back_the_text(ours, theirs, kind, text):
    labels, ids = ours[kind].labelled(text)
    special = set(theirs[kind].all_special_ids)
    pieces = [label for label, i in zip(labels, ids, strict=True) if i not in special]
    if any(p.startswith("⟨") for p in pieces):  # a character cut into bytes: its bytes, in order
        joined = b"".join(_label_bytes(p) if p.startswith("⟨") else _unshown([p]).encode() for p in pieces)
        assert joined.decode("utf-8") == text
    else:
        assert _unshown(pieces) == text


def test_some_texts_are_cut_into_bytes_and_some_are_not(ours):
    """The round trip above checks both of its branches."""
    cut = {
        name: any(label.startswith("⟨") for label in ours["byte_level"].labelled(t)[0])
        for name, t in TEXTS.items()
    }
    assert cut["emoji"] and cut["mixed"] and not cut["english"] and not cut["code"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_chinese_character_split_into_bytes_shows_its_bytes(ours, kind):
    labels, _ = ours[kind].labelled("鑫")  # not in the corpus: no merge knows it
    pieces = [label for label in labels if label.startswith("⟨")]
    assert len(pieces) > 1 and b"".join(map(_label_bytes, pieces)) == "鑫".encode()


@pytest.mark.parametrize("kind", KINDS)
def test_every_id_has_a_label_and_none_is_empty(ours, theirs, kind):
    tok = ours[kind]
    assert tok.vocab_size == len(tok.labels) == len(theirs[kind])
    assert all(isinstance(label, str) and label for label in tok.labels)


def test_kinds(ours):
    assert ours["byte_level"].kind == "byte-level BPE (tokenizer.json, tokenizers), 600 tokens"
    assert ours["qwen2_style"].kind == "byte-level BPE (tokenizer.json, tokenizers), 600 tokens"
    n = ours["sentencepiece"].vocab_size
    assert ours["sentencepiece"].kind == (
        f"SentencePiece-style BPE with byte fallback (tokenizer.json, tokenizers), {n} tokens"
    )


def test_sentencepiece_labels(folders, ours):
    raw = Tokenizer.from_file(str(folders["sentencepiece"] / "tokenizer.json"))
    label = {t: ours["sentencepiece"].labels[raw.token_to_id(t)] for t in ("<s>", "</s>", "<unk>", "▁")}
    assert label == {"<s>": "<s>", "</s>": "</s>", "<unk>": "<unk>", "▁": "␣"}
    by_id = ours["sentencepiece"].labels
    assert [by_id[raw.token_to_id(f"<0x{b:02X}>")] for b in (0xE4, 0x0A, 0x09, 0x20, 0x41)] == [
        "⟨e4⟩",
        "⏎",
        "⇥",
        "␣",
        "A",
    ]
    labels, _ = ours["sentencepiece"].labelled("the end")
    assert labels[0] == "<s>" and labels[1].startswith("␣") and _unshown(labels[1:]) == " the end"


def test_byte_level_labels(folders, ours):
    raw = Tokenizer.from_file(str(folders["byte_level"] / "tokenizer.json"))
    label = {t: ours["byte_level"].labels[raw.token_to_id(t)] for t in (EOT, "Ġ", "Ċ", "ĉ", "ä", "Ġthe")}
    assert label == {EOT: EOT, "Ġ": "␣", "Ċ": "⏎", "ĉ": "⇥", "ä": "⟨e4⟩", "Ġthe": "␣the"}


def test_bos_and_eos_from_tokenizer_config(ours, theirs):
    for kind in KINDS:
        assert (ours[kind].bos_id, ours[kind].eos_id) == (
            theirs[kind].bos_token_id,
            theirs[kind].eos_token_id,
        )


def test_bos_and_eos_without_or_with_null_settings(tmp_path):
    tok = sentencepiece_tokenizer()
    bare = folder_tokenizer(_save(tmp_path / "bare", tok, None), "llama")
    assert (bare.bos_id, bare.eos_id) == (tok.token_to_id("<s>"), tok.token_to_id("</s>"))
    none = folder_tokenizer(
        _save(tmp_path / "none", tok, {"bos_token": None, "eos_token": {"content": "<s>"}}), "llama"
    )
    assert (none.bos_id, none.eos_id) == (None, tok.token_to_id("<s>"))
    # byte-level without settings: <|endoftext|> is the end, there is no beginning
    gpt = folder_tokenizer(_save(tmp_path / "gpt", byte_level_tokenizer(), None), "qwen2")
    assert (gpt.bos_id, gpt.eos_id) == (None, 0)


def legacy_sentencepiece_tokenizer() -> Tokenizer:
    """The same, as an older converter wrote Llama 2's file: ``▁`` prepended by the normaliser."""
    tok = sentencepiece_tokenizer()
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.pre_tokenizer = None
    return tok


LLAMA = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
# transformers 5 does not run every tokenizer.json as saved (ui.folders.hf_tokenizer.as_transformers_runs_it)
SETTINGS_VARIANTS = {
    "legacy_file_llama_class": (
        legacy_sentencepiece_tokenizer,
        {"tokenizer_class": "LlamaTokenizer", **LLAMA},
    ),
    "legacy_file_fast_class": (
        legacy_sentencepiece_tokenizer,
        {"tokenizer_class": "PreTrainedTokenizerFast", **LLAMA},
    ),
    "llama_legacy_true": (
        sentencepiece_tokenizer,
        {"tokenizer_class": "LlamaTokenizer", "legacy": True, **LLAMA},
    ),
    "llama_no_prefix_space": (
        sentencepiece_tokenizer,
        {"tokenizer_class": "LlamaTokenizer", "add_prefix_space": False, **LLAMA},
    ),
    "add_bos_and_eos": (
        sentencepiece_tokenizer,
        {"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": True, **LLAMA},
    ),
    "add_no_bos": (
        sentencepiece_tokenizer,
        {"tokenizer_class": "PreTrainedTokenizerFast", "add_bos_token": False, **LLAMA},
    ),
    "byte_level_add_eos": (
        qwen2_style_tokenizer,
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": "<|begin_of_text|>",
            "eos_token": "<|end_of_text|>",
            "add_eos_token": True,
        },
    ),
}


@pytest.mark.parametrize("variant", SETTINGS_VARIANTS)
def test_ids_equal_auto_tokenizer_as_transformers_reads_the_settings(tmp_path, variant):
    make, settings = SETTINGS_VARIANTS[variant]
    folder = _save(tmp_path, make(), settings)
    ours, theirs = folder_tokenizer(folder, "llama"), transformers.AutoTokenizer.from_pretrained(folder)
    for text in [*TEXTS.values(), " leading space", "  two leading"]:
        assert ours.encode(text) == theirs(text)["input_ids"], text
    assert (ours.bos_id, ours.eos_id) == (theirs.bos_token_id, theirs.eos_token_id)


def test_the_settings_change_the_ids(tmp_path):
    """What the variants above prove: the rule for LlamaTokenizer is needed, and no other."""
    ids = {}
    for variant, (make, settings) in SETTINGS_VARIANTS.items():
        tok = folder_tokenizer(_save(tmp_path / variant, make(), settings), "llama")
        ids[variant] = tok.encode("  two leading")
        ids[variant, "no space"] = tok.encode("two")
    assert ids["legacy_file_llama_class"] != ids["legacy_file_fast_class"]
    assert ids["llama_no_prefix_space", "no space"] != ids["legacy_file_llama_class", "no space"]
    # add_bos_token / add_eos_token change nothing: transformers 5 runs the file's post-processor
    assert ids["add_bos_and_eos"][-1] != 2 and ids["add_no_bos"][0] == 1
    assert ids["byte_level_add_eos"][-1] != 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_folder_saved_by_transformers(tmp_path, theirs, kind):
    """What save_pretrained writes (transformers 5: tokenizer.json + its own tokenizer_config.json)."""
    theirs[kind].save_pretrained(tmp_path)
    ours = folder_tokenizer(tmp_path, "llama")
    for text in TEXTS.values():
        assert ours.encode(text) == theirs[kind](text)["input_ids"]
    assert (ours.bos_id, ours.eos_id) == (theirs[kind].bos_token_id, theirs[kind].eos_token_id)


def test_saved_padding_and_truncation_are_ignored(tmp_path, theirs):
    tok = byte_level_tokenizer()
    tok.enable_truncation(4)
    tok.enable_padding(length=64, pad_id=0, pad_token=EOT)
    ours = folder_tokenizer(_save(tmp_path, tok, KINDS["byte_level"][1]), "qwen2")
    text = TEXTS["english"]
    assert ours.encode(text) == theirs["byte_level"](text)["input_ids"] and len(ours.encode(text)) > 4


def test_padded_labels(ours):
    tok = ours["qwen2_style"]
    assert tok.padded_labels(605) == tok.labels + ["∅"] * 5
    assert tok.padded_labels(3) == tok.labels[:3]


def test_each_byte_of_the_alphabet():
    for b, c in BYTE_TO_CHAR.items():
        assert byte_level_label(c) == bytes_label(bytes([b])) == display_token(corpus_tokenizer(), c)
    assert byte_level_label("a b") == "a␣b"  # a plain space is not in the alphabet: shown as it is


# -- refusals --------------------------------------------------------------------------------------


def test_no_tokenizer_is_none(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    assert folder_tokenizer(tmp_path, "llama") is None


def test_a_tokenizer_json_over_64_mb_is_refused_unread(tmp_path):
    tmp_path = tmp_path / "big"
    tmp_path.mkdir()
    with open(tmp_path / "tokenizer.json", "wb") as f:
        f.truncate(65 * 2**20)  # sparse: nothing is written, and nothing may be read
    with pytest.raises(ValueError) as e:
        folder_tokenizer(tmp_path, "llama")
    assert str(e.value) == (
        "the llama model big: tokenizer.json is 65 MB, "
        "more than the 64 MB a tokenizer.json may have here: not read"
    )


def test_a_broken_tokenizer_json_is_a_value_error(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "Nope"}}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"tokenizer.json is not a tokenizer.json that tokenizers can read"):
        folder_tokenizer(tmp_path, "qwen2")


def test_text_must_be_a_str(ours):
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        ours["byte_level"].encode(b"hi")


# -- core's tokenizers, wrapped --------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory) -> Path:
    """vocab.json + merges.txt (GPT-2's files) and GPT-2's tokenizer_config.json."""
    folder = tmp_path_factory.mktemp("gpt2")
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator([CORPUS], vocab_size=600, special_tokens=[EOT], show_progress=False)
    tok.save_model(str(folder))
    settings = {"tokenizer_class": "GPT2Tokenizer", "bos_token": EOT, "eos_token": EOT}
    (folder / "tokenizer_config.json").write_text(json.dumps(settings), encoding="utf-8")
    return folder


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_gpt2_wrapper(gpt2_folder, text):
    core_tok = GPT2Tokenizer.from_files(gpt2_folder / "vocab.json", gpt2_folder / "merges.txt")
    tok = folder_tokenizer(gpt2_folder, "gpt2", core_tok)
    ref = transformers.GPT2Tokenizer(str(gpt2_folder / "vocab.json"), str(gpt2_folder / "merges.txt"))
    labels, ids = tok.labelled(text)
    assert ids == core_tok.encode(text) == ref(text)["input_ids"]
    assert labels == [display_token(core_tok, core_tok.vocab[i]) for i in ids]


def test_gpt2_wrapper_labels_are_the_apps(gpt2_folder):
    core_tok = GPT2Tokenizer.from_files(gpt2_folder / "vocab.json", gpt2_folder / "merges.txt")
    tok = folder_tokenizer(gpt2_folder, "gpt2", core_tok)
    assert tok.labels == [display_token(core_tok, core_tok.vocab[i]) for i in range(len(core_tok))]
    assert tok.kind == "byte-level BPE (GPT-2's vocab.json + merges.txt, read by core), 600 tokens"
    assert tok.bos_id == tok.eos_id == core_tok.eos_id


@pytest.fixture(scope="module")
def vocab_txt(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("wordpiece")
    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator([CORPUS], vocab_size=800, show_progress=False)
    tok.save_model(str(folder))
    return folder / "vocab.txt"


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_wordpiece_wrapper(vocab_txt, text):
    core_tok = WordPieceTokenizer.from_file(vocab_txt)
    tok = folder_tokenizer(vocab_txt.parent, "bert", core_tok)
    labels, ids = tok.labelled(text)
    assert ids == transformers.BertTokenizer(str(vocab_txt))(text)["input_ids"]
    assert labels == core_tok.convert_ids_to_tokens(ids) and labels[0] == "[CLS]" and labels[-1] == "[SEP]"
    assert tok.labels == core_tok.itos and any(label.startswith("##") for label in tok.labels)
    assert tok.kind == "WordPiece (BERT's vocab.txt, read by core), uncased, 800 tokens"
    assert (tok.bos_id, tok.eos_id) == (None, None)


# -- bounded ---------------------------------------------------------------------------------------


def test_encoding_2000_characters_is_fast(ours, gpt2_folder, vocab_txt):
    gpt2 = GPT2Tokenizer.from_files(gpt2_folder / "vocab.json", gpt2_folder / "merges.txt")
    tokenizers = [
        *ours.values(),
        folder_tokenizer(gpt2_folder, "gpt2", gpt2),
        folder_tokenizer(vocab_txt.parent, "bert", WordPieceTokenizer.from_file(vocab_txt)),
    ]
    texts = [CORPUS[:2000], "a" * 2000, "鑫" * 2000, "😀👍🏽" * 500, " " * 2000, "x\n" * 1000]
    for tok in tokenizers:
        for text in texts:
            start = time.perf_counter()
            labels, ids = tok.labelled(text)
            assert time.perf_counter() - start < 0.5, (tok.kind, text[:10])
            assert len(labels) == len(ids) > 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_folder_tokenizer_is_a_core_tokenizer(ours, kind):
    """The app calls a tokenizer.json as it calls core's tokenizers (core/tokenizers/protocol.py)."""
    tok = ours[kind]
    assert isinstance(tok, CoreTokenizer) and isinstance(tok.tokenizer, CoreTokenizer)
    assert len(tok.tokenize("the end")) == len(tok.encode("the end")) == len(tok.labelled("the end")[0])
    assert set(tok.special_tokens) <= {label for label in tok.labels}
