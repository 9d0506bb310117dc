"""Generation from a decoder-only model (``config.encoder=False``, e.g. GPT-2 from core/loading/gpt2.py), one
token at a time, each step with the trace of the run that chose it.

    greedy:   y_t = argmax_y P(y | y_<t)
    sampling: y_t ~ softmax(logits / τ) restricted to the top k tokens and to the smallest set whose
              probability reaches p (nucleus), renormalised

Each step runs only the new token, reading the keys and values of the tokens before it from a cache
(``Transformer.decode_next``): the same numbers as running the whole sequence again, at the cost of
one row. The model is causal, so the run of the whole sequence holds every step's run: position i
computes the same numbers whatever follows it. Each step's trace is therefore a view of one last trace
(``ModelTrace.target_prefix``), not a trace of its own: at GPT-2 small's sizes a 64-token trace is
tens of megabytes, and sixteen of them would be most of a server's memory. The encoder-decoder model
has its own ``Transformer.greedy_decode``, which keeps its steps the same way.
"""

from __future__ import annotations

import torch

from core.model.trace import DecodeResult
from core.model.transformer import Transformer, _eval_mode


def _check(model: Transformer, ids: torch.Tensor, max_new_tokens: int) -> None:
    if model.encoder is not None or model.decoder is None:
        raise ValueError(f"generation here is for a decoder-only model, not a {model.config.stack!r} one")
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens={max_new_tokens} must be ≥ 0")
    if ids.dim() != 2 or ids.size(1) == 0:
        raise ValueError(f"ids must be (batch, length ≥ 1), got {tuple(ids.shape)}")


def filter_logits(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> torch.Tensor:
    """(B, vocab) logits -> the distribution sampling draws from, (B, vocab) probabilities.

    τ → 0 leaves all the probability on the argmax (greedy); top_k=1 likewise. Tokens outside the top
    k, or past the nucleus (sorted by probability, those after the cumulative sum first reaches p),
    get probability 0; the most probable token always stays.
    """
    if temperature < 0:
        raise ValueError(f"temperature={temperature} must be ≥ 0")
    if temperature == 0:  # the limit τ → 0: one-hot on the argmax (ties: the first, as argmax)
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.size(-1)).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None:
        if top_k < 1:
            raise ValueError(f"top_k={top_k} must be ≥ 1")
        kth = scaled.topk(min(top_k, scaled.size(-1)), dim=-1).values[..., -1:]  # (B, 1)
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probs = scaled.softmax(dim=-1)
    if top_p is not None:
        if not 0 < top_p <= 1:
            raise ValueError(f"top_p={top_p} must be in (0, 1]")
        sorted_p, order = probs.sort(dim=-1, descending=True)
        before = sorted_p.cumsum(-1) - sorted_p  # probability of the tokens ranked above each one
        drop = (before >= top_p).scatter(-1, order, before >= top_p)  # back to vocabulary order
        probs = probs.masked_fill(drop, 0.0)
        probs = probs / probs.sum(-1, keepdim=True)
    return probs


@torch.no_grad()
def sample(
    model: Transformer,
    ids: torch.Tensor,
    max_new_tokens: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
    eos_id: int | None = None,
    attention_mask: torch.Tensor | None = None,
    cache: bool = True,
) -> DecodeResult:
    """Continue ``ids`` (B, L) by ``max_new_tokens`` tokens, each drawn from
    :func:`filter_logits` of the last position's logits with a generator seeded by ``seed`` (the same
    seed, the same tokens). ``temperature=0`` is greedy. A row that has produced ``eos_id`` is
    padded with it from then on; generation stops when every row has. Prompts of different lengths
    are padded on the left, with ``attention_mask`` (B, L) 1 = a real token (as transformers does):
    every row's next token then sits at the same column. ``cache=False`` runs the whole sequence at
    every step instead of the new token alone (the same tokens: the tests compare both).

    Returns DecodeResult: ``tokens`` (B, L + n) the prompt and what followed, ``steps[t]`` the trace
    of the run that chose token t (the first L + t tokens), ``probs[t]`` (B, vocab) the distribution
    it was drawn from.
    """
    _check(model, ids, max_new_tokens)
    generator = torch.Generator(device=ids.device).manual_seed(seed)
    tokens, probs, mask = ids, [], attention_mask
    done = torch.zeros(ids.size(0), dtype=torch.bool, device=ids.device)
    limit = model.config.max_len if model.config.positions == "learned" else None
    cache = cache and _cacheable(model, ids, attention_mask)
    past = None  # per layer, its self-attention's (k, v) of every token so far
    with _eval_mode(model):
        for _ in range(max_new_tokens):
            if done.all() or (limit is not None and tokens.size(1) >= limit):
                break  # learned positions have no row past max_len
            if past is None:
                logits, _, _, traces, *_ = model.decode(tokens, None, None, mask)
            else:  # the new token alone, reading the cached keys and values
                logits, _, _, traces, *_ = model.decode_next(tokens[:, -1:], past, mask)
            if cache:
                past = [(t.self_attn.k, t.self_attn.v) for t in traces]
            logits = logits[:, -1]  # (B, vocab): the last position
            p = filter_logits(logits, temperature, top_k, top_p)  # (B, vocab)
            next_id = torch.multinomial(p, 1, generator=generator)[:, 0] if temperature else p.argmax(-1)
            if eos_id is not None:
                next_id = next_id.masked_fill(done, eos_id)
                done |= next_id == eos_id
            tokens = torch.cat([tokens, next_id[:, None]], dim=1)
            if mask is not None:  # the new token is real (after EOS too, as transformers)
                mask = torch.cat([mask, mask.new_ones(len(tokens), 1)], dim=1)
            probs.append(p)
        steps = []
        if probs:  # the run of every token but the last holds each step's run (causal)
            last = model.trace(tokens[:, :-1], attention_mask=None if mask is None else mask[:, :-1])
            steps = [last.target_prefix(ids.size(1) + t) for t in range(len(probs))]
    return DecodeResult(tokens=tokens, steps=steps, probs=probs)


def _cacheable(model: Transformer, ids: torch.Tensor, attention_mask: torch.Tensor | None) -> bool:
    """Whether the cache gives the numbers of the whole run: not with ALiBi (its bias is built for the
    whole square), nor for a prompt holding pad_id with no mask (the whole run masks those tokens by
    their id and counts positions 0, 1, ... over them)."""
    if model.config.positions == "alibi":
        return False
    pad = model.config.pad_id
    return attention_mask is not None or pad is None or not bool((ids == pad).any())


def greedy(
    model: Transformer,
    ids: torch.Tensor,
    max_new_tokens: int,
    eos_id: int | None = None,
    attention_mask: torch.Tensor | None = None,
) -> DecodeResult:
    """y_t = argmax_y P(y | y_<t): :func:`sample` at temperature 0 (no random number is drawn)."""
    return sample(model, ids, max_new_tokens, temperature=0.0, eos_id=eos_id, attention_mask=attention_mask)
