"""A model folder's own tokenizer, as the app's pipelines need it.

:func:`folder_tokenizer` gives a pipeline a tokenizer's ids (with the special tokens the model was
trained with) and the display label of every id, as a :class:`FolderTokenizer`, a
``core.tokenizers.protocol.Tokenizer`` (``encode``, ``tokenize``, ``special_tokens``) with ``labels``
and ``labelled(text)``. GPT-2 and BERT are read by core itself (``load_folder`` hands them over);
anything else is the folder's ``tokenizer.json``, run by Hugging Face ``tokenizers`` (:class:`TokenizerJson`).

Labels follow core.tracing.pipeline.display_token's rule: a space as ``␣``, a newline as ``⏎``, a tab
as ``⇥``, a piece of a multi-byte character as its bytes (``⟨e4 bd⟩``), special tokens as spelled,
and ``∅`` for an empty label. Nothing here touches the network; every file is read through
``core.loading.files.FolderFiles`` (a ``tokenizer.json`` over 64 MB is refused unread).

Decisions (the kinds of tokenizer, labels, why this is in ui/): docs/decisions.md, ui/folders/hf_tokenizer.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tokenizers import Tokenizer, pre_tokenizers

from core.loading.files import FILE_CAPS, FolderFileError, FolderFiles, TokenizerSource, folder_files
from core.tokenizers.bpe import CHAR_TO_BYTE
from core.tokenizers.gpt2 import GPT2Tokenizer
from core.tokenizers.protocol import Tokenizer as CoreTokenizer
from core.tokenizers.wordpiece import WordPieceTokenizer

MAX_TOKENIZER_JSON_BYTES = FILE_CAPS["tokenizer"]  # Llama 3's is 9 MB, Qwen2's 7 MB
MAX_SETTINGS_BYTES = FILE_CAPS["settings"]  # tokenizer_config.json / special_tokens_map.json (chat templates)
EMPTY = "∅"
_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # SentencePiece's byte fallback: one byte a token

# Where tokenizer_config.json names no BOS / EOS: the usual spellings, taken only if the tokenizer has them
_BOS_NAMES = ("<s>", "<|begin_of_text|>")
_EOS_NAMES = ("</s>", "<|end_of_text|>", "<|endoftext|>")
_LLAMA_CLASSES = ("LlamaTokenizer", "LlamaTokenizerFast")  # tokenizer_config.json's tokenizer_class
# GPT-2's byte alphabet -> latin-1, one str.translate per token (151,665 of them in Qwen2); the
# latin-1 characters outside the alphabet go to U+FFFF so that encoding them fails
_ALPHABET_TO_LATIN1 = {ord(c): chr(b) for c, b in CHAR_TO_BYTE.items()}
_ALPHABET_TO_LATIN1.update({cp: "\uffff" for cp in range(256) if chr(cp) not in CHAR_TO_BYTE})


class TokenizerJson:
    """A ``tokenizer.json`` run by ``tokenizers``, as core's tokenizers are called. ``allow_special``
    is the post-processor's specials (``<s>``, ``[CLS]``); a special token typed in the text stays
    one token either way, as ``tokenizers`` has no switch for that."""

    def __init__(self, tok: Tokenizer) -> None:
        self._tok = tok
        self.special_tokens = [t.content for t in tok.get_added_tokens_decoder().values() if t.special]

    def encode(self, text: str, allow_special: bool = True) -> list[int]:
        return self._tok.encode(text, add_special_tokens=allow_special).ids

    def tokenize(self, text: str, allow_special: bool = True) -> list[str]:
        return self._tok.encode(text, add_special_tokens=allow_special).tokens

    def __len__(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)


@dataclass(frozen=True, eq=False)
class FolderTokenizer:
    """A folder's tokenizer: what it is (``kind``, one English line), the label of every id, and the
    tokenizer itself (core's, or :class:`TokenizerJson`) behind the same protocol."""

    kind: str
    labels: list[str] = field(repr=False)  # labels[id], for every id incl. added tokens
    tokenizer: CoreTokenizer = field(repr=False)
    bos_id: int | None = None
    eos_id: int | None = None

    @property
    def vocab_size(self) -> int:
        return len(self.labels)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def special_tokens(self) -> list[str]:
        return list(self.tokenizer.special_tokens)

    def encode(self, text: str, allow_special: bool = True) -> list[int]:
        """Text -> ids, special tokens included (what ``AutoTokenizer(text)`` gives)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return list(self.tokenizer.encode(text, allow_special))

    def tokenize(self, text: str, allow_special: bool = True) -> list[str]:
        return self.tokenizer.tokenize(text, allow_special)

    def labelled(self, text: str) -> tuple[list[str], list[int]]:
        """Text -> (display labels, ids): what a pipeline shows and what the model reads."""
        ids = self.encode(text)
        return [self.labels[i] for i in ids], ids

    def padded_labels(self, size: int) -> list[str]:
        """The labels of ids 0..size-1: a model's output layer may be larger than its tokenizer
        (Qwen2.5-0.5B: 151,936 rows, 151,665 tokens); the rows no text can reach are ``∅``."""
        return self.labels[:size] + [EMPTY] * (size - len(self.labels))


# -- labels ----------------------------------------------------------------------------------------


def visible(text: str) -> str:
    """Whitespace made visible as core.tracing.pipeline.display_token does; never an empty string."""
    return text.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥") or EMPTY


def bytes_label(data: bytes) -> str:
    """Bytes as a label: their text if they are whole UTF-8 characters, else the bytes themselves.

    >>> bytes_label(b" hi"), bytes_label("中".encode()[:2])
    ('␣hi', '⟨e4\\u2009b8⟩')
    """
    try:
        return visible(data.decode("utf-8"))
    except UnicodeDecodeError:
        # thin spaces: a plain space would be drawn as ␣, the mark of a real space token
        return "⟨" + data.hex(" ").replace(" ", "\u2009") + "⟩"


def byte_level_label(token: str) -> str:
    """A token in GPT-2's printable byte alphabet (``Ġthe``, ``ä¸``) as a label (``␣the``, ``⟨e4 b8⟩``)."""
    try:
        data = token.translate(_ALPHABET_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:  # not spelled in bytes (a special token kept in the model's vocabulary)
        return visible(token)
    return bytes_label(data)


def sentencepiece_label(token: str, byte_fallback: bool) -> str:
    """``▁the`` -> ``␣the``; with byte fallback ``<0xE4>`` -> ``⟨e4⟩`` (and ``<0x0A>`` -> ``⏎``)."""
    byte = _BYTE_TOKEN.fullmatch(token) if byte_fallback else None
    if byte:
        return bytes_label(bytes([int(byte.group(1), 16)]))
    return visible(token.replace("▁", " "))


# -- BOS / EOS -------------------------------------------------------------------------------------


def read_settings(folder) -> dict:
    """special_tokens_map.json then tokenizer_config.json (the latter wins), as far as they are JSON
    and may be read (``folder``: a path or a ``core.loading.files.FolderFiles``)."""
    files, settings = folder_files(folder), {}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        if not files.has(name):
            continue
        try:
            data = files.read_json(name, "settings")
        except FolderFileError as e:
            if e.reason != "unreadable":  # too big, a link out: refused, as every such file is
                raise
            continue  # a broken settings file costs the BOS / EOS ids, not the tokenizer
        if isinstance(data, dict):
            settings.update(data)
    return settings


def _token_name(value: object) -> str | None:
    """A settings file names a token as ``"</s>"`` or ``{"content": "</s>", ...}``; ``null``: none."""
    value = value.get("content") if isinstance(value, Mapping) else value
    return value if isinstance(value, str) else None


def bos_eos(
    settings: dict, token_id: Callable[[str], int | None], specials: set[str]
) -> tuple[int | None, int | None]:
    """(bos_id, eos_id) as tokenizer_config.json names them; unnamed, the usual spelling among
    ``specials`` (``<s>``, ``</s>``, ``<|endoftext|>``...)."""
    found = []
    for key, usual in (("bos_token", _BOS_NAMES), ("eos_token", _EOS_NAMES)):
        if key in settings:
            name = _token_name(settings[key])
            found.append(token_id(name) if name is not None else None)
        else:
            found.append(next((token_id(n) for n in usual if n in specials), None))
    return found[0], found[1]


# -- the three sources -----------------------------------------------------------------------------


def _source_words(source: TokenizerSource | None, default: str) -> str:
    """Which file a tokenizer came from, and the disagreeing files left unused, as the kind says it."""
    if source is None:
        return default
    words = source.used
    if source.unused:  # transformers' AutoTokenizer reads tokenizer.json first, and so does core
        words += f"; {source.unused} beside it: another vocabulary, not used, as in transformers"
    return words


def _gpt2(folder, tok: GPT2Tokenizer, source: TokenizerSource | None = None) -> FolderTokenizer:
    labels = [EMPTY] * (max(tok.vocab, default=-1) + 1)
    for i, token in tok.vocab.items():
        labels[i] = (token or EMPTY) if token in tok.special_tokens else byte_level_label(token)
    bos, eos = bos_eos(read_settings(folder), tok.token_to_id.get, set(tok.special_tokens))
    where = _source_words(source, "vocab.json + merges.txt")
    kind = f"byte-level BPE (GPT-2's {where}, read by core), {len(labels):,} tokens"
    return FolderTokenizer(kind, labels, tok, bos, eos)


def _wordpiece(folder, tok: WordPieceTokenizer, source: TokenizerSource | None = None) -> FolderTokenizer:
    labels = [visible(t) for t in tok.itos]  # as WordPiece spells them: "##ing"
    bos, eos = bos_eos(read_settings(folder), tok.stoi.get, set())  # BERT has [CLS] and [SEP], no BOS / EOS
    case = "uncased" if tok.normalizer["lowercase"] else "cased"
    where = _source_words(source, "vocab.txt")
    kind = f"WordPiece (BERT's {where}, read by core), {case}, {len(labels):,} tokens"
    return FolderTokenizer(kind, labels, tok, bos, eos)  # encode: [CLS] ... [SEP]


def read_tokenizer_json(path, files: FolderFiles | None = None) -> Tokenizer:
    """A ``tokenizer.json`` run by ``tokenizers``; over ``MAX_TOKENIZER_JSON_BYTES``, outside the
    models root (``files``) or unreadable: ValueError."""
    path = Path(path)
    files = files or FolderFiles(path.parent)
    text = files.read_text(path.name, "tokenizer")  # FolderFileError (a ValueError) says why not
    try:
        tok = Tokenizer.from_str(text)
    except Exception as e:  # tokenizers raises a bare Exception for a file it cannot use
        raise ValueError(f"{path.name} is not a tokenizer.json that tokenizers can read: {e}") from e
    # a saved file may carry padding or truncation; transformers switches both off when called
    # without those options, and so do we: the ids are the text's, whatever its length
    tok.no_truncation()
    tok.no_padding()
    return tok


def _pipeline_json(tok: Tokenizer) -> str:
    """The normaliser, pre-tokenizer and decoder as their JSON (what tokenizer.json says of them),
    to see what kind of tokenizer this is without parsing the whole file again."""
    parts = (tok.normalizer, tok.pre_tokenizer, tok.decoder)
    return " ".join(p.__getstate__().decode("utf-8") for p in parts if p is not None)


def _added_label(content: str, special: bool, byte_fallback: bool) -> str:
    """An added token's label: a special one as it is spelled, another with its spaces shown.
    A byte token ``<0xE4>`` stays a byte even when a file lists it among the added tokens."""
    if byte_fallback and _BYTE_TOKEN.fullmatch(content):
        return sentencepiece_label(content, byte_fallback)
    return (content or EMPTY) if special else visible(content)


def as_transformers_runs_it(tok: Tokenizer, settings: dict) -> None:
    """Change ``tok`` as transformers 5 does when it loads the folder, so that the ids are the ones
    ``AutoTokenizer`` gives: its ``LlamaTokenizer`` (the class a Llama 2 or TinyLlama folder names)
    keeps the file's vocabulary and merges but puts its own Metaspace in place of the normaliser and
    pre-tokenizer. An older file prepends ``▁`` in its normaliser, so a text that starts with a space
    would otherwise get one ``▁`` more than in transformers.

    The post-processor stays the file's: transformers 5.23 does not rebuild it from
    tokenizer_config.json's ``add_bos_token`` / ``add_eos_token`` either (tested).
    """
    if settings.get("tokenizer_class") in _LLAMA_CLASSES and type(tok.model).__name__ == "BPE":
        prefix = settings.get("add_prefix_space")
        scheme = "always" if settings.get("legacy") else "first"  # its default: legacy=False
        scheme = scheme if prefix is None or prefix else "never"  # its default: add_prefix_space=True
        tok.normalizer = None
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=scheme, split=False)


def _tokenizer_json(files: FolderFiles) -> FolderTokenizer:
    tok = read_tokenizer_json(files.folder / "tokenizer.json", files)
    pipeline = _pipeline_json(tok)  # the file's, before transformers' changes below
    settings = read_settings(files)
    as_transformers_runs_it(tok, settings)
    byte_level = '"type":"ByteLevel"' in pipeline
    byte_fallback = bool(getattr(tok.model, "byte_fallback", False))  # BPE only
    vocab = tok.get_vocab(with_added_tokens=False)
    added = tok.get_added_tokens_decoder()  # id -> AddedToken: matched in the raw text, not in bytes
    labels = [EMPTY] * (max([*vocab.values(), *added], default=-1) + 1)
    for token, i in vocab.items():
        labels[i] = byte_level_label(token) if byte_level else sentencepiece_label(token, byte_fallback)
    for i, token in added.items():
        labels[i] = _added_label(token.content, token.special, byte_fallback)
    bos, eos = bos_eos(settings, tok.token_to_id, {t.content for t in added.values() if t.special})
    model = type(tok.model).__name__  # BPE, Unigram, WordPiece, WordLevel
    if byte_level:
        name = f"byte-level {model}"
    elif "▁" in pipeline:  # SentencePiece's mark for a space, in the normaliser, pre-tokenizer or decoder
        name = f"SentencePiece-style {model}"
    else:
        name = model
    name += " with byte fallback" if byte_fallback else ""
    kind = f"{name} (tokenizer.json, tokenizers), {len(labels):,} tokens"
    return FolderTokenizer(kind, labels, TokenizerJson(tok), bos, eos)


def folder_tokenizer(
    folder, family: str, core_tokenizer=None, *, files: FolderFiles | None = None,
    source: TokenizerSource | None = None,
) -> FolderTokenizer | None:
    """The tokenizer of a model folder: core's (``load_folder``'s second value) when it gave one,
    else the folder's ``tokenizer.json`` through ``tokenizers``, else None (the caller says so).

    ``family``: FolderInfo.family, named in the error for a tokenizer.json that cannot be used.
    ``files``: how the folder's files are read (``core.loading.files.FolderFiles`` with the models root);
    ``source``: which files core's tokenizer came from (FolderInfo), said in ``kind``.
    ValueError for a tokenizer.json over 64 MB or one ``tokenizers`` cannot read.
    """
    files = files or FolderFiles(Path(folder))
    if isinstance(core_tokenizer, GPT2Tokenizer):  # before any other BPETokenizer: it is one
        return _gpt2(files, core_tokenizer, source)
    if isinstance(core_tokenizer, WordPieceTokenizer):
        return _wordpiece(files, core_tokenizer, source)
    if core_tokenizer is not None:
        raise TypeError(f"no wrapper for core's {type(core_tokenizer).__name__}")
    if not files.has("tokenizer.json"):
        return None
    try:
        return _tokenizer_json(files)
    except ValueError as e:
        raise ValueError(f"the {family} model {files.folder.name}: {e}") from e
