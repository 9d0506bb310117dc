"""What every tokenizer offers its callers, whichever algorithm is inside.

BPE (bpe.py: ours, classic or byte-level), GPT-2's byte-level BPE with its own ids (gpt2.py), BERT's
WordPiece (wordpiece.py) and a folder's ``tokenizer.json`` (run by Hugging Face ``tokenizers`` in
ui/folders/hf_tokenizer.py, outside core) all answer the same three questions:

    tok.encode(text)        -> ids            (the model's input)
    tok.tokenize(text)      -> pieces         (the tokens as the tokenizer spells them, one per id)
    tok.special_tokens      -> specials       (the tokens never cut, each one id)

``allow_special`` is the one switch for special tokens: True (the default) reads a special token
written in the text as one token and adds the ones the model expects around a text (BERT's
``[CLS] ... [SEP]``); False reads the text as plain text and adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Tokenizer(Protocol):
    """Text -> ids, text -> pieces, the special tokens, and how many ids there are."""

    special_tokens: Sequence[str]

    def encode(self, text: str, allow_special: bool = True) -> list[int]: ...

    def tokenize(self, text: str, allow_special: bool = True) -> list[str]: ...

    def __len__(self) -> int: ...
