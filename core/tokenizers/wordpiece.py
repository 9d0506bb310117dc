"""WordPiece, the tokenizer of BERT, reading a ``vocab.txt`` (one token a line, id = line).

Basic tokenization (control characters dropped, CJK ideographs spaced, accents stripped, lowercased,
split on whitespace and punctuation), then WordPiece on each word: greedy longest-match-first, pieces
after the first spelled ``##…``; a word with an unknown piece (or over 100 characters) is ``[UNK]``.
As ``BertTokenizerFast``, token for token; ids, details: docs/decisions.md, core/tokenizers/wordpiece.py.

>>> tok = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "!"])
>>> tok.tokenize("Unaffable!")
['un', '##aff', '##able', '!']
>>> tok.tokenize("unaffablé xyz")  # accents go; "xyz" has no first piece, so the word is [UNK]
['un', '##aff', '##able', '[UNK]']
>>> tok.encode("Unaffable!")  # [CLS] ... [SEP]
[2, 5, 6, 7, 8, 3]
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIALS = (PAD, UNK, CLS, SEP, MASK)
MAX_WORD_CHARS = 100  # a longer word is [UNK] without trying

# CJK Unified Ideographs and their extensions, as BERT defines them. Hangul, kana and CJK
# punctuation are not in these blocks: they go through the usual whitespace/punctuation rules.
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    # Google's BERT (and transformers' Python tokenizer) start this block at 0x2B820; the Rust
    # tokenizer that everyone runs starts at 0x2B920, so U+2B820..U+2B91F stay inside words. We
    # follow Rust; none of those 256 characters is in the vocabulary anyway.
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def _is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or ch.isspace() or unicodedata.category(ch) == "Zs"


def _is_control(ch: str) -> bool:
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def _is_punctuation(ch: str) -> bool:
    # ASCII symbols such as $ + < = > ^ ` | ~ are not Unicode punctuation, but BERT splits on them too
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def normalize(
    text: str, lowercase: bool = True, chinese_chars: bool = True, strip_accents: bool | None = None
) -> str:
    """BERT's normaliser: clean, space out CJK, strip accents, lowercase (uncased BERT: all four).

    A cased BERT (``do_lower_case=False`` in its tokenizer_config.json) keeps case and accents:
    ``strip_accents=None`` follows ``lowercase``, as in Google's BERT and Hugging Face's.

    >>> normalize("Héllo\\tWÖRLD 你好")
    'hello world  你  好 '
    >>> normalize("Héllo 你好", lowercase=False, chinese_chars=False)
    'Héllo 你好'
    """
    chars = []
    for ch in text:
        if ch in ("\0", "\ufffd") or _is_control(ch):
            continue
        if _is_whitespace(ch):
            chars.append(" ")
        elif chinese_chars and _is_cjk(ch):
            chars.extend((" ", ch, " "))
        else:
            chars.append(ch)
    text = "".join(chars)
    if lowercase if strip_accents is None else strip_accents:
        decomposed = unicodedata.normalize("NFD", text)
        text = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    if lowercase:
        text = "".join(ch.lower() for ch in text)  # per character, as the Rust normaliser
    return text


def pre_tokenize(text: str) -> list[str]:
    """Split normalised text on whitespace, and isolate each punctuation character.

    >>> pre_tokenize("don't stop...")
    ['don', "'", 't', 'stop', '.', '.', '.']
    """
    words: list[str] = []
    current: list[str] = []
    for ch in text:
        if _is_whitespace(ch) or _is_punctuation(ch):
            if current:
                words.append("".join(current))
                current = []
            if not _is_whitespace(ch):
                words.append(ch)
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


class WordPieceTokenizer:
    def __init__(
        self,
        vocab: list[str],
        lowercase: bool = True,
        chinese_chars: bool = True,
        strip_accents: bool | None = None,
    ) -> None:
        # the normaliser's switches, as a BERT folder's tokenizer_config.json names them
        # (do_lower_case, tokenize_chinese_chars, strip_accents): see normalize()
        self.normalizer = dict(lowercase=lowercase, chinese_chars=chinese_chars, strip_accents=strip_accents)
        self.itos: list[str] = list(vocab)
        self.stoi: dict[str, int] = {}
        for i, token in enumerate(self.itos):
            self.stoi.setdefault(token, i)
        missing = [t for t in SPECIALS if t not in self.stoi]
        if missing:
            raise ValueError(f"vocabulary lacks the special tokens {missing}")
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (self.stoi[t] for t in SPECIALS)

    @classmethod
    def from_file(cls, path, **normalizer) -> WordPieceTokenizer:
        """Read a BERT ``vocab.txt`` (``normalizer``: see __init__)."""
        return cls(vocab_txt_tokens(Path(path).read_text(encoding="utf-8")), **normalizer)

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return SPECIALS

    def __len__(self) -> int:
        return len(self.itos)

    def word_pieces(self, word: str) -> list[str]:
        """Greedy longest-match-first: ``unaffable`` -> ``un ##aff ##able``; no match -> ``[UNK]``."""
        if len(word) > MAX_WORD_CHARS:
            return [UNK]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.stoi:
                    break
                end -= 1
            if end == start:  # not even one character matched: the whole word is unknown
                return [UNK]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str, allow_special: bool = True) -> list[str]:
        """Text -> WordPiece tokens, without [CLS]/[SEP]; ``allow_special=False``: a special token
        written in the text is read as text (``[``, ``mask``, ``]``)."""
        tokens: list[str] = []
        chunks = self._split_specials(text) if allow_special else [(text, False)]
        for chunk, special in chunks:
            if special:
                tokens.append(chunk)
                continue
            for word in pre_tokenize(normalize(chunk, **self.normalizer)):
                tokens.extend(self.word_pieces(word))
        return tokens

    def _split_specials(self, text: str) -> list[tuple[str, bool]]:
        """Cut literal special tokens out of the text: [(chunk, is_special), ...]."""
        parts: list[tuple[str, bool]] = []
        start = i = 0
        while i < len(text):
            found = next((t for t in SPECIALS if text.startswith(t, i)), None) if text[i] == "[" else None
            if found is None:
                i += 1
                continue
            if i > start:
                parts.append((text[start:i], False))
            parts.append((found, True))
            i = start = i + len(found)
        if start < len(text):
            parts.append((text[start:], False))
        return parts

    def encode(self, text: str, allow_special: bool = True) -> list[int]:
        """Text -> ids, ``[CLS] ... [SEP]`` around them; ``allow_special=False``: the text's own ids
        only, a special token written in it read as text."""
        ids = [self.stoi[t] for t in self.tokenize(text, allow_special)]
        return [self.cls_id, *ids, self.sep_id] if allow_special else ids

    def convert_ids_to_tokens(self, ids) -> list[str]:
        return [self.itos[i] for i in ids]

    def decode(self, ids) -> str:
        """Ids -> text the BERT way: tokens joined by spaces, ``##`` continuations glued on."""
        return " ".join(self.convert_ids_to_tokens(ids)).replace(" ##", "")


def vocab_txt_tokens(text: str) -> list[str]:
    """A BERT ``vocab.txt``: the token on line i has id i.

    >>> vocab_txt_tokens("[PAD]\\r\\n[UNK]\\n##ing\\n")
    ['[PAD]', '[UNK]', '##ing']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]
