"""``ablate=`` ids (core/interventions/ablation.py): every value that names no part of the model is an
AblationError whose message says which id and why, and stays short enough to read; good values come
back in one canonical form; and on any text at all, parse_ablation raises nothing but AblationError
(hypothesis).
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.interventions.ablation import ablation_edits, site
from core.interventions.parts import (
    MAX_PARTS,
    MAX_TEXT,
    AblationError,
    Part,
    check_mode,
    check_part,
    format_ablation,
    parse_ablation,
    read_ids,
    stacks_of,
)
from core.model.config import ModelConfig

SEQ2SEQ = ModelConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=16, num_heads=4, num_layers=2)
DECODER = ModelConfig(
    src_vocab_size=10, tgt_vocab_size=10, d_model=48, num_heads=12, num_layers=6, encoder=False, pad_id=None
)
ENCODER = ModelConfig(
    src_vocab_size=10, tgt_vocab_size=10, d_model=16, num_heads=2, num_layers=3, decoder=False
)
CONFIGS = {"seq2seq": SEQ2SEQ, "decoder": DECODER, "encoder": ENCODER}
READABLE = 200  # characters: a message longer than this echoes the input instead of explaining it
# any text: 40 characters of it shown, each at most 10 once escaped by repr (\U0001ffff), and the words
BOUNDED = 40 * 10 + 100
FORM = "is not <stack>.<layer>.<head|attn|ffn> (e.g. dec.2.1)"
ALL_IDS = ",".join(f"dec.{layer}.{head}" for layer in range(1, 7) for head in range(1, 13))  # 72 parts

# (config, value, the reason (core/interventions/parts.py: Problem.reason, an i18n key), what the
# message must say)
BAD = [
    # no stack of this model
    (SEQ2SEQ, "foo.1.1", "format", f"'foo.1.1' {FORM}"),
    (DECODER, "enc.1.1", "stack", "'enc.1.1': this model has no such stack; it has dec"),
    (DECODER, "cross.1.attn", "stack", "it has dec"),
    (ENCODER, "dec.1.1", "stack", "'dec.1.1': this model has no such stack; it has enc"),
    # layers
    (SEQ2SEQ, "dec.3.1", "layer", "'dec.3.1': the layer must be a number from 1 to 2"),
    (DECODER, "dec.7.attn", "layer", "the layer must be a number from 1 to 6"),
    (SEQ2SEQ, "dec.9999.1", "layer", "the layer must be a number from 1 to 2"),
    (SEQ2SEQ, "dec.0.1", "format", FORM),
    (SEQ2SEQ, "dec.-1.1", "format", FORM),
    (SEQ2SEQ, "dec.+1.1", "format", FORM),
    (SEQ2SEQ, "dec.1e0.1", "format", FORM),
    (SEQ2SEQ, "dec.99999.1", "format", FORM),  # at most four digits
    # heads
    (SEQ2SEQ, "dec.1.5", "head", "'dec.1.5': the head must be a number from 1 to 4, attn or ffn"),
    (DECODER, "dec.1.13", "head", "the head must be a number from 1 to 12"),
    (SEQ2SEQ, "dec.1.0", "format", FORM),
    (SEQ2SEQ, "dec.1.heads", "format", FORM),
    (SEQ2SEQ, "dec.1.resid", "format", FORM),  # a site of edits.py, not a part to switch off
    (SEQ2SEQ, "cross.1.ffn", "cross_ffn", "cross-attention has no feed-forward layer of its own (dec.1.ffn)"),
    # not an id at all
    (SEQ2SEQ, "garbage", "format", f"'garbage' {FORM}"),
    (SEQ2SEQ, "dec.1", "format", FORM),
    (SEQ2SEQ, "dec.1.1.1", "format", FORM),
    (SEQ2SEQ, ".....", "format", FORM),
    (SEQ2SEQ, "dec,1,1", "format", "'dec' "),  # commas split ids: "dec" alone
    (SEQ2SEQ, "dec . 1 . 2", "format", FORM),  # spaces around an id are dropped, not inside it
    # empty pieces of an id
    (SEQ2SEQ, "..", "format", FORM),
    (SEQ2SEQ, "dec..1", "format", FORM),
    (SEQ2SEQ, "dec.1.", "format", FORM),
    (SEQ2SEQ, ".1.1", "format", FORM),
    # digits that are not ASCII: full-width, Arabic-Indic, superscript (str.isdigit says yes to all)
    (SEQ2SEQ, "dec.１.1", "format", FORM),
    (SEQ2SEQ, "dec.1.１", "format", FORM),
    (SEQ2SEQ, "dec.٣.1", "format", FORM),
    (SEQ2SEQ, "dec.1.²", "format", FORM),
    (SEQ2SEQ, "dec.1.attn\u200b", "format", FORM),  # a zero-width space is not stripped
    (SEQ2SEQ, "dec.1.\ufb00n", "format", FORM),  # the ligature ﬀ is not "ff"
    # one bad id among good ones names the bad one
    (SEQ2SEQ, "dec.1.1,enc.2.attn,dec.7.2", "layer", "'dec.7.2'"),
    (SEQ2SEQ, "dec.1.1,enc.2.attn,dec.x.2", "format", "'dec.x.2'"),
    # huge values: the message shows 40 characters of them
    (SEQ2SEQ, "dec.1.1," * 300, "too_long", f"at most {MAX_TEXT} characters are read"),
    (SEQ2SEQ, "dec.1." + "9" * 1900, "format", FORM),
    (SEQ2SEQ, "dec." + "9" * 1990 + ".1", "format", FORM),
    (SEQ2SEQ, "x" * 1990, "format", "'" + "x" * 40 + "…'"),
    (SEQ2SEQ, "x" * 1500 + ".1.1", "format", FORM),
    (SEQ2SEQ, "dec" * 600 + ".1.attn", "format", FORM),
    (DECODER, ALL_IDS, "too_many", f"at most {MAX_PARTS} can be switched off"),
]


@pytest.mark.parametrize(
    ("config", "text", "reason", "says"), BAD, ids=[f"{i}:{t[:24]}" for i, (_, t, _, _) in enumerate(BAD)]
)
def test_a_bad_value_says_which_id_and_why(config, text, reason, says):
    with pytest.raises(AblationError) as raised:
        parse_ablation(text, config)
    message = str(raised.value)
    assert says in message
    assert len(message) <= READABLE, message[:300]
    assert isinstance(raised.value, ValueError)  # callers that catch ValueError still catch it
    parts, problems = read_ids(text)  # the same reason, for the interface to say in its language
    problems += [p for p in (check_part(part, config) for part in parts) if p is not None]
    assert problems and problems[0].reason == reason and str(problems[0]) == message


# -- good values and the canonical form ------------------------------------------------------------


def test_nothing_to_switch_off():
    for text in ("", "   ", ",", ",,,", " , ", None):
        assert parse_ablation(text, SEQ2SEQ) == ()
    assert format_ablation(()) == ""


def test_ids_read_as_parts():
    parts = parse_ablation("dec.2.1,cross.1.attn,enc.2.ffn", SEQ2SEQ)
    assert parts == (Part("cross", 1, "attn"), Part("dec", 2, "1"), Part("enc", 2, "ffn"))
    assert [p.head for p in parts] == [None, 1, None]
    assert [site(p) for p in parts] == [("cross", 0, "attn"), ("dec", 1, "heads"), ("enc", 1, "ffn")]


def test_case_spaces_zeros_repeats_and_empty_pieces_are_one_canonical_form():
    same = [
        "dec.1.2,enc.2.attn",
        "enc.2.attn,dec.1.2",
        " DEC.1.2 , Enc.2.ATTN ",
        "\tdec.1.2\n,enc.2.attn",
        "dec.01.002,enc.02.attn",
        "dec.1.2,,enc.2.attn,",
        "dec.1.2,enc.2.attn,dec.1.2,dec.1.02",  # the same part twice is one part
    ]
    forms = {format_ablation(parse_ablation(text, SEQ2SEQ)) for text in same}
    assert forms == {"dec.1.2,enc.2.attn"}


def test_every_part_of_a_model_round_trips():
    for config in CONFIGS.values():
        every = []
        for stack in stacks_of(config):
            for layer in range(1, config.num_layers + 1):
                whats = [str(h) for h in range(1, config.num_heads + 1)] + ["attn"]
                every += [Part(stack, layer, w) for w in whats + ([] if stack == "cross" else ["ffn"])]
        for start in range(0, len(every), MAX_PARTS):
            chunk = every[start : start + MAX_PARTS]
            text = format_ablation(chunk)
            assert parse_ablation(text, config) == tuple(sorted(chunk))
            assert format_ablation(parse_ablation(text, config)) == text


def test_at_most_max_parts():
    ids = [f"dec.{layer}.{head}" for layer in range(1, 7) for head in range(1, 13)]
    assert len(parse_ablation(",".join(ids[:MAX_PARTS]), DECODER)) == MAX_PARTS
    with pytest.raises(AblationError, match=f"at most {MAX_PARTS} can be switched off"):
        parse_ablation(",".join(ids[: MAX_PARTS + 1]), DECODER)


def test_modes():
    assert check_mode("zero") == "zero" and check_mode("mean") == "mean"
    for mode in ("", "ZERO", "off", "x" * 500):
        with pytest.raises(AblationError) as raised:
            check_mode(mode)
        assert "zero, mean" in str(raised.value) and len(str(raised.value)) <= READABLE
    parts = parse_ablation("dec.1.1", SEQ2SEQ)
    with pytest.raises(AblationError):
        ablation_edits(parts, "half", SEQ2SEQ)
    with pytest.raises(ValueError, match="reference means"):
        ablation_edits(parts, "mean", SEQ2SEQ)


def test_the_edits_switch_off_what_was_named():
    parts = parse_ablation("dec.2.1,dec.2.3,cross.1.attn,enc.1.ffn", SEQ2SEQ)
    edits = ablation_edits(parts, "zero", SEQ2SEQ)
    assert edits.sites() == [("cross", 0, "attn"), ("dec", 1, "heads"), ("enc", 0, "ffn")]
    heads = torch.ones(2, 4, 3, 4)  # (B, h, L, d_k)
    off = edits.replacements[("dec", 1, "heads")](heads)
    assert off[:, [0, 2]].abs().sum() == 0 and (off[:, [1, 3]] == 1).all()
    assert (edits.replacements[("cross", 0, "attn")](torch.ones(2, 3, 16)) == 0).all()


# -- any text at all ------------------------------------------------------------------------------

PIECES = [
    "enc",
    "dec",
    "cross",
    "attn",
    "ffn",
    "DEC",
    ".",
    ",",
    " ",
    "0",
    "1",
    "2",
    "5",
    "12",
    "１",
    "²",
    "-",
    "x",
]


def _check_parsed(text: str, config: ModelConfig) -> None:
    """parse_ablation(text) is AblationError, or parts of this model in canonical form; read_ids never
    raises, and what it reads is what parse_ablation reads."""
    read, problems = read_ids(text)
    assert all(str(problem) for problem in problems)
    try:
        parts = parse_ablation(text, config)
    except AblationError as error:
        assert 0 < len(str(error)) <= BOUNDED
        return
    assert not problems and tuple(read) == parts
    assert list(parts) == sorted(set(parts)) and len(parts) <= MAX_PARTS
    for p in parts:
        assert p.stack in stacks_of(config) and 1 <= p.layer <= config.num_layers
        assert p.what in ("attn", "ffn") or 1 <= int(p.what) <= config.num_heads
        assert p.what == str(p.head) or p.head is None
        assert not (p.stack == "cross" and p.what == "ffn")
    assert parse_ablation(format_ablation(parts), config) == parts
    ablation_edits(parts, "zero", config)  # builds for every part it names


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=3000), st.sampled_from(sorted(CONFIGS)))
def test_any_text_is_parts_or_an_ablation_error(text, config):
    _check_parsed(text, CONFIGS[config])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), st.sampled_from(sorted(CONFIGS)))
def test_id_like_text_is_parts_or_an_ablation_error(text, config):
    _check_parsed(text, CONFIGS[config])
