"""Every layer's guess (the logit lens, nostalgebraist 2020): the residual stream read part-way up.

The model turns its last stream into a prediction with its final norm and its output layer,
P(y_t) = softmax(Norm(x_N[t]) W_U). The lens does the same after every layer l = 0 … N (0: the
embeddings): P_l(y_t) = softmax(Norm(x_l[t]) W_U), as if the model stopped there. Norm is the final
norm the model really has (LayerNorm; RMSNorm for Llama and Qwen2; none); W_U its output layer (GPT-2's:
the embedding, transposed). At l = N this is the model's own output.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from core.model.trace import ModelTrace
from core.model.transformer import Transformer


@dataclass(frozen=True)
class Lens:
    """Every layer's guess at every decoder position: rows l = 0 (embeddings) … N (the output)."""

    answer: Tensor  # (T,) the model's final answer at each position: argmax of its own logits
    answer_prob: Tensor  # (N + 1, T) P_l(answer[t])
    top_ids: Tensor  # (N + 1, T, k) each layer's k most probable tokens
    top_probs: Tensor  # (N + 1, T, k) and their probabilities
    norm: str  # the final norm read through: "LayerNorm", "RMSNorm" or "none"


def norm_name(model: Transformer) -> str:
    """What the lens reads through: the decoder's final norm, named as on screen."""
    norm = model.decoder.norm
    if isinstance(norm, nn.RMSNorm):
        return "RMSNorm"
    return "none" if isinstance(norm, nn.Identity) else "LayerNorm"


def streams(trace: ModelTrace) -> Tensor:
    """(N + 1, T, d_model) the decoder's residual stream after each layer (row 0: its input) of the
    trace's first sentence, before the final norm."""
    layers = trace.decoder
    return torch.stack([layers[0].input[0], *(layer.output[0] for layer in layers)])


@torch.no_grad()
def logit_lens(model: Transformer, trace: ModelTrace, k: int = 5) -> Lens:
    """The lens on the decoder of ``trace`` (a run of ``model``, its first sentence)."""
    if model.decoder is None or not trace.decoder:
        raise ValueError("the logit lens reads a decoder: an encoder alone has no output layer")
    stream = streams(trace)  # (N + 1, T, d_model)
    logits = model.generator(model.decoder.norm(stream))  # (N + 1, T, vocab)
    probs = logits.softmax(-1)
    answer = trace.logits[0].argmax(-1)  # (T,)
    top = probs.topk(min(k, probs.size(-1)), dim=-1)
    answer_prob = probs.gather(-1, answer.expand(probs.size(0), -1)[..., None])[..., 0]  # (N + 1, T)
    return Lens(answer, answer_prob, top.indices, top.values, norm_name(model))
