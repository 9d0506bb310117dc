"""Induction-head measures (core/teaching/induction.py) on hand-built attention patterns and circuits, where
the
answer is known, and on a small decoder-only model against the definition computed the long way."""

from types import SimpleNamespace

import pytest
import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.teaching.induction import (
    copying,
    loss_by_copy,
    ov_copying_score,
    prefix_matching,
    prefix_matching_scores,
    previous_token_scores,
    repeated_tokens,
)

L, OFFSET = 6, 1  # a beginning-of-text token, then two copies of 6 tokens: T = 13
T = OFFSET + 2 * L


def _pattern(target) -> torch.Tensor:
    """(1, 1, T, T) causal weights, each query's row one-hot on ``target(i)`` (clamped to [0, i])."""
    weights = torch.zeros(1, 1, T, T)
    for i in range(T):
        weights[0, 0, i, min(max(target(i), 0), i)] = 1.0
    return weights


def _small_gpt(vocab: int, **sizes) -> ModelConfig:
    """A tiny decoder-only config (GPT-2's arrangement) with ``vocab`` tokens and these ``sizes``."""
    return ModelConfig(
        vocab,
        vocab,
        d_model=16,
        num_layers=2,
        d_ff=32,
        encoder=False,
        norm="pre",
        positions="learned",
        pad_id=None,
        scale_embeddings=False,
        **sizes,
    )


def test_repeated_tokens_are_two_copies_of_distinct_ids():
    ids = repeated_tokens(600, L, seed=3, low=10, prefix=[0], batch=2)
    assert ids.shape == (2, T)
    assert torch.equal(ids[:, OFFSET : OFFSET + L], ids[:, OFFSET + L :]) and (ids[:, 0] == 0).all()
    assert all(len(set(row[OFFSET : OFFSET + L].tolist())) == L for row in ids)
    assert ids[:, OFFSET:].min() >= 10 and not torch.equal(ids[0], ids[1])
    assert torch.equal(ids, repeated_tokens(600, L, seed=3, low=10, prefix=[0], batch=2))


def test_a_perfect_induction_pattern_scores_one():
    induction = _pattern(lambda i: i - L + 1 if i >= OFFSET + L else 0)
    assert prefix_matching_scores(induction, L, OFFSET).item() == pytest.approx(1.0)


def test_attending_to_itself_or_the_previous_token_is_not_induction():
    diagonal = _pattern(lambda i: i)
    previous = _pattern(lambda i: i - 1)
    assert prefix_matching_scores(diagonal, L, OFFSET).item() == pytest.approx(0.0)
    assert prefix_matching_scores(previous, L, OFFSET).item() == pytest.approx(0.0)
    assert previous_token_scores(previous).item() == pytest.approx(1.0)
    assert previous_token_scores(diagonal).item() == pytest.approx(0.0)


def test_uniform_attention_scores_what_it_spreads():
    weights = torch.tril(torch.ones(T, T))
    weights = (weights / weights.sum(-1, keepdim=True))[None, None]  # (1, 1, T, T)
    expected = torch.tensor([1 / (i + 1) for i in range(OFFSET + L, T)]).mean()
    assert prefix_matching_scores(weights, L, OFFSET).item() == pytest.approx(expected.item())


def test_too_short_a_pattern_is_refused():
    with pytest.raises(ValueError, match="second copy"):
        prefix_matching_scores(torch.zeros(1, 1, 8, 8), L, OFFSET)


@pytest.mark.parametrize("sign, expected", [(1.0, 1.0), (-1.0, -1.0)])
def test_a_circuit_that_writes_the_token_it_reads_copies(sign, expected):
    eye = torch.eye(8)
    assert ov_copying_score(eye, eye, sign * eye, eye) == pytest.approx(expected)


def test_a_circuit_that_turns_the_token_away_does_not_copy():
    turn = torch.zeros(8, 8)
    for i in range(0, 8, 2):  # a quarter turn in each pair of dimensions: eigenvalues ±i
        turn[i, i + 1], turn[i + 1, i] = 1.0, -1.0
    eye = torch.eye(8)
    assert ov_copying_score(eye, eye, turn, eye) == pytest.approx(0.0, abs=1e-9)


def test_copying_scores_equal_the_whole_vocabulary_circuit():
    """The d_k × d_k shortcut gives the eigenvalues of the vocabulary × vocabulary OV circuit."""
    config = _small_gpt(30, num_heads=4, num_kv_heads=2)
    model = Transformer(config).eval()
    scores = copying(model)
    assert scores.shape == (2, 4) and (scores.abs() <= 1 + 1e-9).all()
    d_k, e, u = config.d_k, model.tgt_embed.lookup.weight, model.generator.weight.T
    for i, layer in enumerate(model.decoder.layers):
        for h in range(4):
            kv = h // 2  # two query heads read each key/value head
            v = layer.self_attn.w_v.weight[kv * d_k : (kv + 1) * d_k].T
            o = layer.self_attn.w_o.weight[:, h * d_k : (h + 1) * d_k].T
            full = torch.linalg.eigvals(
                e.double() @ v.double() @ o.double() @ u.double()
            ).detach()  # (30,) most of them 0
            assert scores[i, h].item() == pytest.approx((full.real.sum() / full.abs().sum()).item(), abs=1e-6)


def test_scores_of_a_model_run_and_the_loss_on_each_copy():
    config = _small_gpt(40, num_heads=2)
    model = Transformer(config).eval()
    ids = repeated_tokens(40, L, seed=1, prefix=[0], batch=3)
    trace = model.trace(ids)
    pm = prefix_matching(trace, L, OFFSET)
    assert pm.shape == (2, 2)
    by_hand = trace.decoder[1].self_attn.weights[:, 0, OFFSET + L + 2, OFFSET + 3].mean()  # one query's term
    assert 0 <= by_hand <= 1 and ((0 <= pm) & (pm <= 1)).all()
    # a "model" that knows the second copy: logits one-hot on the next token there, uniform elsewhere
    logits = torch.zeros(3, T, 40)
    for t in range(OFFSET + L - 1, T - 1):
        logits[torch.arange(3), t, ids[:, t + 1]] = 50.0
    first, second = loss_by_copy(SimpleNamespace(logits=logits), ids, L, OFFSET)
    assert first == pytest.approx(torch.log(torch.tensor(40.0)).item(), abs=1e-6) and second < 1e-6


# -- head roles and the repeated text -------------------------------------------------------------------


def test_head_roles_follow_the_thresholds():
    from core.teaching.induction import INDUCTION_MIN_PM, PREVIOUS_MIN_PT, head_roles

    pm = [[INDUCTION_MIN_PM, INDUCTION_MIN_PM - 0.01, 0.9, 0.0]]
    pt = [[0.0, PREVIOUS_MIN_PT, 0.9, PREVIOUS_MIN_PT - 0.01]]
    c = [[0.5, 0.5, 0.5, 0.5]]
    assert head_roles(pm, pt, c) == [["induction", "previous-token", "induction", "other"]]
    # prefix matching without copying is not an induction head (Olsson et al. ask for both)
    assert head_roles([[0.9], [0.9]], [[0.0], [0.5]], [[0.0], [-0.4]]) == [["other"], ["previous-token"]]


def test_head_roles_refuse_scores_of_different_shapes():
    from core.teaching.induction import head_roles

    with pytest.raises(ValueError, match="different shapes"):
        head_roles([[0.1, 0.2]], [[0.1]], [[0.1, 0.2]])


def _bpe_encoder():
    from core.tokenizers.bpe import BPETokenizer
    from core.tracing.pipeline import display_token

    text = ("the cat sat on the mat and the dog ran after the cat, which was not amused at all. "
            "Every word here is a word of the text. 床前明月光，疑是地上霜。举头望明月，低头思故乡。") * 3
    tok = BPETokenizer.train(text, 120, byte_level=True)
    labels = [display_token(tok, tok.vocab[i]) for i in range(len(tok.vocab))]

    def encode(s: str):
        ids = tok.encode(s)
        return [labels[i] for i in ids], ids

    return encode, labels


@pytest.mark.parametrize("seed", range(4))
def test_a_repeated_text_tokenizes_into_the_same_tokens_twice(seed):
    from core.teaching.induction import repeated_text, text_pieces

    encode, labels = _bpe_encoder()
    text = repeated_text(encode, labels, length=12, seed=seed)
    tokens, ids = encode(text)
    half = len(ids) // 2
    assert len(ids) == 2 * half and ids[:half] == ids[half:]
    assert 2 <= half <= 12 and len(set(ids[:half])) == half  # distinct: one earlier occurrence each
    words, chars = text_pieces(labels)
    shown = set(tokens)
    assert any(w.replace(" ", "␣") in shown for w in words) and any(c in shown for c in chars)
    assert repeated_text(encode, labels, length=12, seed=seed) == text  # the seed decides


def test_no_repeated_text_without_words_and_characters():
    from core.teaching.induction import repeated_text

    encode, _ = _bpe_encoder()
    assert repeated_text(encode, ["[PAD]", "a", "␣b"], length=8) == ""


def test_a_piece_that_merges_with_its_neighbour_is_left_out():
    """An encoder that glues "月" to a word before it: such a piece never lands in the text."""
    from core.teaching.induction import repeated_text

    labels = ["␣moon", "␣bright", "␣light", "␣frost", "月", "光", "霜"]

    def encode(s: str):
        import re

        pieces = re.findall(r" ?[a-z]+月|[^\x00-\x7f]| [a-z]+", s)
        return pieces, [hash(p) % 10_000 for p in pieces]

    for seed in range(6):
        text = repeated_text(encode, labels, length=6, seed=seed)
        _, ids = encode(text)
        assert ids and ids[: len(ids) // 2] == ids[len(ids) // 2 :]
        assert len(encode(text[: len(text) // 2])[1]) == len(ids) // 2
