"""Every size of the model in one frozen dataclass (hashable, so the app can cache a model by it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from core.model.positional import POSITIONS, ROPE_PAIRINGS

NORMS = ("post", "pre")
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "swiglu")
NORM_KINDS = ("layer", "rms")


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of an encoder-decoder Transformer; names follow the paper.

    norm="post" is the paper's ``LayerNorm(x + Sublayer(x))``; norm="pre" is
    ``x + Sublayer(LayerNorm(x))`` (used by most modern models; trains more easily).

    The fields after ``seed`` are options a pretrained model needs (see core/loading/bert.py); their
    defaults are the paper's model. BERT (and so all-MiniLM-L6-v2) is
    ``positions="learned", activation="gelu", layer_norm_eps=1e-12, embed_norm=True,
    scale_embeddings=False, type_vocab_size=2, final_norm=False, decoder=False``.

    ``positions`` (core/model/positional.py) says how the model knows where a token is: "sinusoidal"
    (the paper) and "learned" add a vector per position to the embeddings; "rope" rotates each
    head's queries and keys, "alibi" adds a distance penalty to each head's scores (both in self-
    attention only). max_len is a hard limit only for "learned" (one row per position); the other
    three run on longer inputs.

    A decoder-only model (GPT-2, core/loading/gpt2.py) is one causal stack: ``encoder=False`` (no source
    embedding, no encoder, no cross-attention), ``positions="learned", norm="pre",
    activation="gelu_tanh", scale_embeddings=False, tie_embeddings=True``.
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
    pad_id: int | None = 0  # None: no pad token (GPT-2); a decoder-only model only, see decode
    seed: int = 0
    positions: str = "sinusoidal"  # | "learned" (a trained table of max_len rows, BERT) | "rope" | "alibi"
    activation: str = "relu"  # the FFN's non-linearity; "gelu" is the exact (erf) GELU, "gelu_tanh"
    # its tanh approximation (GPT-2's gelu_new)
    layer_norm_eps: float = 1e-5  # ε in every LayerNorm (torch's default; BERT uses 1e-12)
    embed_norm: bool = False  # a LayerNorm on the embedding sum, before the stack (BERT)
    scale_embeddings: bool = True  # multiply the lookup by sqrt(d_model) (BERT does not)
    type_vocab_size: int = 0  # token-type (segment) embeddings, added to the sum; 0 = none
    final_norm: bool = True  # a LayerNorm after each stack (BERT's encoder ends without one)
    decoder: bool = True  # False: an encoder only; no target embedding, decoder or generator
    encoder: bool = True  # False: a decoder only (GPT); no source embedding, encoder or cross-attention
    # the generator's matrix is the target embedding's (GPT-2: logits = h Eᵀ, and no bias)
    tie_embeddings: bool = False
    # Llama / Qwen2 (core/loading/llama.py): norm_kind="rms", activation="swiglu", positions="rope" with
    # rope_pairing="half" and their rope_theta, num_kv_heads < num_heads, no biases but Qwen2's q/k/v
    norm_kind: str = "layer"  # | "rms": RMSNorm(x) = x / sqrt(mean(x²) + ε) · g, no mean, no bias
    num_kv_heads: int | None = None  # grouped-query attention: this many key/value heads; None = num_heads
    rope_theta: float = 10000.0  # RoPE's base: θ_i = rope_theta^(-2i/d_k)
    rope_pairing: str = "interleaved"  # | "half" (HF's rotate_half), see core/model/positional.py
    qkv_bias: bool = True  # biases of W_Q, W_K, W_V
    out_bias: bool = True  # bias of W_O
    ffn_bias: bool = True  # biases of the feed-forward matrices
    generator_bias: bool = True  # bias of an untied output matrix

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
        if self.pad_id is None and self.encoder:
            raise ValueError("pad_id=None (no pad token) is for a decoder-only model (encoder=False)")
        pad = 0 if self.pad_id is None else self.pad_id
        if isinstance(pad, bool) or not isinstance(pad, int) or pad < 0:
            raise ValueError(f"pad_id={self.pad_id!r} must be a non-negative integer")
        smallest_vocab = min(self.src_vocab_size, self.tgt_vocab_size)
        if pad >= smallest_vocab:
            raise ValueError(f"pad_id={self.pad_id} is outside a vocabulary of size {smallest_vocab}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed={self.seed!r} must be an integer")
        if self.positions not in POSITIONS:
            raise ValueError(f"positions={self.positions!r} must be one of {POSITIONS}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation={self.activation!r} must be one of {ACTIVATIONS}")
        eps = self.layer_norm_eps
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0.0 < eps < 1.0:
            raise ValueError(f"layer_norm_eps={eps!r} must be a number in (0, 1)")
        for name in ("embed_norm", "scale_embeddings", "final_norm", "decoder", "encoder", "tie_embeddings"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r} must be True or False")
        if not (self.encoder or self.decoder):
            raise ValueError("encoder=False and decoder=False: a model needs at least one stack")
        if self.tie_embeddings and not self.decoder:
            raise ValueError("tie_embeddings=True needs a decoder: an encoder only has no generator")
        self._check_llama_options()
        types = self.type_vocab_size
        if isinstance(types, bool) or not isinstance(types, int) or types < 0:
            raise ValueError(f"type_vocab_size={types!r} must be a non-negative integer")

    def _check_llama_options(self) -> None:
        if self.norm_kind not in NORM_KINDS:
            raise ValueError(f"norm_kind={self.norm_kind!r} must be one of {NORM_KINDS}")
        if self.rope_pairing not in ROPE_PAIRINGS:
            raise ValueError(f"rope_pairing={self.rope_pairing!r} must be one of {ROPE_PAIRINGS}")
        kv = self.num_kv_heads
        bad_kv = isinstance(kv, bool) or not isinstance(kv, int) or kv < 1 or self.num_heads % kv
        if kv is not None and bad_kv:
            raise ValueError(f"num_kv_heads={kv!r} must be a positive divisor of num_heads={self.num_heads}")
        theta = self.rope_theta
        if isinstance(theta, bool) or not isinstance(theta, (int, float)) or theta <= 1:
            raise ValueError(f"rope_theta={theta!r} must be a number > 1")
        for name in ("qkv_bias", "out_bias", "ffn_bias", "generator_bias"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r} must be True or False")
        options = (self.norm_kind, self.num_kv_heads, self.rope_theta, self.rope_pairing)
        biases = (self.qkv_bias, self.out_bias, self.ffn_bias)
        if self.encoder and (options != ("layer", None, 10000.0, "interleaved") or not all(biases)):
            # only a decoder-only stack is built with them (core/model/transformer.py: _decoder_options)
            raise ValueError(
                "norm_kind, num_kv_heads, rope_theta, rope_pairing and the bias options need encoder=False"
            )

    @property
    def stack(self) -> str:
        """Which stacks the model has: "encoder_decoder" (the paper), "encoder" (BERT) or "decoder" (GPT)."""
        if self.encoder and self.decoder:
            return "encoder_decoder"
        return "encoder" if self.encoder else "decoder"

    @property
    def d_k(self) -> int:
        """Size of one head's queries, keys and values: d_k = d_v = d_model / h."""
        return self.d_model // self.num_heads

    def to_dict(self) -> dict:
        return asdict(self)
