"""torch.nn.Transformer's weights copied into our model: the reference the stack is proven against
(tests/core/model/test_model_vs_torch.py) and timed against (benchmarks/trace.py).

    ref = nn.Transformer(d_model, nhead, N, N, d_ff, dropout=0.0, batch_first=True)   # post-norm, ReLU
    load_torch_stack(ours, ref)   # ours: a Transformer of the same sizes; embeddings and generator kept
"""

from __future__ import annotations

import torch
from torch import nn

from core.model.transformer import Transformer


@torch.no_grad()
def load_torch_stack(ours: Transformer, ref: nn.Transformer) -> None:
    """Copy the encoder/decoder weights of ``torch.nn.Transformer(d_model, nhead, N, N, d_ff,
    dropout=0, batch_first=True)`` (post-norm, ReLU) into ``ours``'s stack.

    Embeddings and the output projection are not part of nn.Transformer and stay as they are.
    """
    c = ours.config
    if c.stack != "encoder_decoder":
        raise ValueError(f"nn.Transformer has an encoder and a decoder; this model is stack={c.stack!r}")
    if len(ref.encoder.layers) != c.num_layers or len(ref.decoder.layers) != c.num_layers:
        raise ValueError("reference has a different number of layers")
    if ref.d_model != c.d_model or ref.nhead != c.num_heads:
        raise ValueError(
            f"reference has d_model={ref.d_model}, nhead={ref.nhead}; ours {c.d_model}, {c.num_heads}"
        )

    def attention(mine, theirs: nn.MultiheadAttention) -> None:
        # torch stacks W_Q, W_K, W_V as one (3·d_model, d_model) in_proj matrix
        stacked = zip(theirs.in_proj_weight.chunk(3), theirs.in_proj_bias.chunk(3), strict=True)
        for linear, (w, b) in zip((mine.w_q, mine.w_k, mine.w_v), stacked, strict=True):
            linear.weight.copy_(w)
            linear.bias.copy_(b)
        mine.w_o.weight.copy_(theirs.out_proj.weight)
        mine.w_o.bias.copy_(theirs.out_proj.bias)

    def ffn_and_norms(mine, theirs, n_norms: int) -> None:
        mine.ffn.linear1.load_state_dict(theirs.linear1.state_dict())
        mine.ffn.linear2.load_state_dict(theirs.linear2.state_dict())
        for i in range(1, n_norms + 1):  # our sublayer{i}.norm is torch's norm{i}
            getattr(mine, f"sublayer{i}").norm.load_state_dict(getattr(theirs, f"norm{i}").state_dict())

    for mine, theirs in zip(ours.encoder.layers, ref.encoder.layers, strict=True):
        attention(mine.self_attn, theirs.self_attn)
        ffn_and_norms(mine, theirs, 2)
    for mine, theirs in zip(ours.decoder.layers, ref.decoder.layers, strict=True):
        attention(mine.self_attn, theirs.self_attn)
        attention(mine.cross_attn, theirs.multihead_attn)
        ffn_and_norms(mine, theirs, 3)
    ours.encoder.norm.load_state_dict(ref.encoder.norm.state_dict())
    ours.decoder.norm.load_state_dict(ref.decoder.norm.state_dict())
