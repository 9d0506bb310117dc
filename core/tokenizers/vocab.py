"""Special tokens and a plain token <-> id vocabulary shared by the tokenizers, the model and training.

The special tokens take the first ids in every vocabulary of the project, so ``[PAD]`` is id 0,
which is ``ModelConfig.pad_id``'s default.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

PAD, UNK, BOS, EOS, MASK = "[PAD]", "[UNK]", "[BOS]", "[EOS]", "[MASK]"
SPECIAL_TOKENS: tuple[str, ...] = (PAD, UNK, BOS, EOS, MASK)
PAD_ID, UNK_ID, BOS_ID, EOS_ID, MASK_ID = range(len(SPECIAL_TOKENS))


class Vocab:
    """Maps tokens to ids; the special tokens come first, then ``tokens`` in the order given.

    >>> v = Vocab(["你", "好"])
    >>> v.encode(["你", "们"])
    [5, 1]
    >>> v.decode([5, 6])
    ['你', '好']
    """

    def __init__(self, tokens: Iterable[str]) -> None:
        self.itos: list[str] = list(SPECIAL_TOKENS)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        for token in tokens:
            if token not in self.stoi:
                self.stoi[token] = len(self.itos)
                self.itos.append(token)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Tokens to ids; a token outside the vocabulary becomes ``[UNK]``."""
        return [self.stoi.get(t, UNK_ID) for t in tokens]

    def decode(self, ids: Sequence[int]) -> list[str]:
        return [self.itos[i] if 0 <= i < len(self.itos) else UNK for i in ids]

    def to_list(self) -> list[str]:
        """The tokens in id order (what a checkpoint stores)."""
        return list(self.itos)

    @classmethod
    def from_list(cls, itos: Sequence[str]) -> Vocab:
        if tuple(itos[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ValueError(f"a vocabulary must start with the special tokens {SPECIAL_TOKENS}")
        return cls(itos[len(SPECIAL_TOKENS) :])
