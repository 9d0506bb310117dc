"""ui.page.settings without Streamlit: validation falls back with a notice and never raises."""

import pytest

from ui.page.settings import DEFAULTS, MAX_CHARS, Settings, head_choices, to_query, validate


def test_defaults_are_valid_and_silent():
    checked = validate({})
    assert checked.settings == DEFAULTS
    assert checked.notices == []
    assert DEFAULTS.d_model == 64 and DEFAULTS.num_layers == 2 and DEFAULTS.d_ff_value == 256


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("d_model", "abc", 64),
        ("d_model", "7", 64),
        ("d_model", "", 64),
        ("d_model", "1e999", 64),
        ("num_heads", "0", 4),
        ("num_heads", "3", 4),
        ("num_heads", "-4", 4),
        ("num_layers", "99", 2),
        ("num_layers", "nan", 2),
        ("d_ff", "100", 0),
        ("seed", "-1e99", 0),
        ("seed", "-1", 0),
        ("seed", "1.5", 0),
        ("norm", "foo", "post"),
        ("weights", "pretrained", "random"),
    ],
)
def test_bad_values_fall_back_with_a_notice(key, raw, expected):
    checked = validate({key: raw}, checkpoint=False)
    assert getattr(checked.settings, key) == expected
    assert len(checked.notices) == 1
    assert checked.notices[0].startswith(f"Ignored {key}=")


def test_trained_without_checkpoint_falls_back():
    checked = validate({"weights": "trained"}, checkpoint=False)
    assert checked.settings.weights == "random"
    assert "assets/pinyin.pt" in checked.notices[0]
    assert validate({"weights": "trained"}, checkpoint=True).settings.weights == "trained"


def test_good_values_round_trip_through_the_url():
    s = Settings(
        sentence="你好", target="ni hao", d_model=128, num_heads=8, num_layers=3, d_ff=512, seed=7, norm="pre"
    )
    query = to_query(s)
    assert query == {
        "sentence": "你好",
        "target": "ni hao",
        "d_model": "128",
        "num_heads": "8",
        "num_layers": "3",
        "d_ff": "512",
        "seed": "7",
        "norm": "pre",
    }
    assert validate(query).settings == s
    assert to_query(DEFAULTS) == {}


def test_long_text_is_cut_and_control_characters_dropped():
    checked = validate({"sentence": "x" * 10_000})
    assert len(checked.settings.sentence) == MAX_CHARS
    assert "10,000 characters" in checked.notices[0]
    checked = validate({"sentence": "a\x00b\x1bc\nd"})
    assert checked.settings.sentence == "abc\nd"
    assert checked.notices == ["Control characters were removed from the sentence."]


def test_heads_divide_every_d_model_on_offer():
    for d_model in (16, 32, 64, 128, 256, 512):
        assert all(d_model % h == 0 for h in head_choices(d_model))
    assert head_choices(12) == (1, 2, 3, 4, 6, 12)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope", "alibi"])
def test_positions_reach_the_random_model(positions):
    from core.tracing.pipeline import load_pipeline

    checked = validate({"positions": positions, "weights": "random"})
    assert checked.notices == [] and checked.settings.positions == positions
    pipe = load_pipeline(checked.settings.pipeline_settings())
    assert pipe.config.positions == positions


def test_bad_positions_fall_back_with_a_notice():
    checked = validate({"positions": "rotary"})
    assert checked.settings.positions == "sinusoidal"
    assert checked.notices == ["Ignored positions=`rotary` (must be one of ('sinusoidal', 'learned', 'rope', "
                               "'alibi')); using positions=`sinusoidal`."]
