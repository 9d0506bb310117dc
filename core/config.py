"""Every size of the model in one frozen dataclass (hashable, so the app can cache a model by it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

NORMS = ("post", "pre")


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of an encoder-decoder Transformer; names follow the paper.

    norm="post" is the paper's ``LayerNorm(x + Sublayer(x))``; norm="pre" is
    ``x + Sublayer(LayerNorm(x))`` (used by most modern models; trains more easily).
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2  # N, for the encoder and the decoder alike
    d_ff: int = 256
    dropout: float = 0.1
    max_len: int = 512
    norm: str = "post"
    pad_id: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        def positive(name: str) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be a positive integer")

        for name in (
            "src_vocab_size",
            "tgt_vocab_size",
            "d_model",
            "num_heads",
            "num_layers",
            "d_ff",
            "max_len",
        ):
            positive(name)
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}")
        if (
            not isinstance(self.dropout, (int, float))
            or isinstance(self.dropout, bool)
            or not 0.0 <= self.dropout < 1.0
        ):
            raise ValueError(f"dropout={self.dropout!r} must be a number in [0, 1)")
        if self.norm not in NORMS:
            raise ValueError(f"norm={self.norm!r} must be one of {NORMS}")
        if isinstance(self.pad_id, bool) or not isinstance(self.pad_id, int) or self.pad_id < 0:
            raise ValueError(f"pad_id={self.pad_id!r} must be a non-negative integer")
        smallest_vocab = min(self.src_vocab_size, self.tgt_vocab_size)
        if self.pad_id >= smallest_vocab:
            raise ValueError(f"pad_id={self.pad_id} is outside a vocabulary of size {smallest_vocab}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed={self.seed!r} must be an integer")

    @property
    def d_k(self) -> int:
        """Size of one head's queries, keys and values: d_k = d_v = d_model / h."""
        return self.d_model // self.num_heads

    def to_dict(self) -> dict:
        return asdict(self)
