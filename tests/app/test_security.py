"""User text is never Markdown or HTML: every text input and every URL parameter, on every page.

Streamlit renders the body of st.markdown, st.caption, st.info/warning/error, titles and widget labels
as Markdown (with $math$, links, images and, with unsafe_allow_html, HTML). User text must reach the
browser only as text (st.code, a text widget's value, escaped plotly labels, a dataframe cell) or
inside a Markdown code span (``ui.page.settings.literal``), where nothing is interpreted.

Also here: a scan of the source tree (ast, not regex) for eval/exec, pickle and unsafe torch.load,
and the server config (localhost by default, upload cap, XSRF on).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from apphelpers import PAGE_SCRIPTS, ROOT, assert_clean, open_app, open_page
from streamlit.testing.v1 import AppTest

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](http://example.com)",
    "![x](http://example.com/x.png)",
    r"$\frac{a}{b}$",
    "$$x$$",
    "**bold**",
]
# What must not appear outside a code span: the payload, or its active core when the message cut it.
FRAGMENTS = {
    "<script>alert(1)</script>": ["<script"],
    "<img src=x onerror=alert(1)>": ["<img", "onerror"],
    "[click](http://example.com)": ["](http://example.com"],
    "![x](http://example.com/x.png)": ["](http://example.com"],
    r"$\frac{a}{b}$": [r"\frac{a}{b}"],
    "$$x$$": ["$$x$$"],
    "**bold**": ["**bold**"],
}
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def markdown_bodies(at: AppTest) -> list[str]:
    """Every string the browser will render as Markdown (or LaTeX)."""
    bodies = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "header",
                 "subheader", "latex", "toast", "exception"):  # fmt: skip
        bodies += [str(el.value) for el in at.get(kind)]
    # widget labels and help texts are Markdown too; radio options as well
    for kind in ("text_area", "text_input", "selectbox", "slider", "select_slider", "radio",
                 "multiselect", "number_input", "checkbox", "button", "toggle"):  # fmt: skip
        for el in at.get(kind):
            bodies.append(str(getattr(el, "label", "")))
            bodies.append(str(getattr(el, "help", "") or ""))
            if kind == "radio":
                bodies += [str(o) for o in el.options]
    return bodies


def assert_inert(at: AppTest, payload: str, where: str) -> None:
    """No Markdown body holds the payload (or its active part) outside a code span."""
    assert_clean(at)
    for body in markdown_bodies(at):
        outside = CODE_SPAN.sub("", body)
        for fragment in [payload, *FRAGMENTS[payload]]:
            assert fragment not in outside, f"{where}: {fragment!r} rendered as Markdown in {body!r}"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_in_the_sentence_and_target_on_every_page(payload):
    at = open_app()
    at.text_area(key="sentence").input(f"hi {payload} 你好").run()
    at.text_area(key="target").input(payload).run()
    for page in PAGE_SCRIPTS:
        at.switch_page(page).run()
        assert_inert(at, payload, page)
    # it is still the text as typed
    assert at.text_area(key="sentence").value == f"hi {payload} 你好"
    assert at.text_area(key="target").value == payload


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_in_the_url_sentence_is_shown_as_code(payload):
    at = open_app({"sentence": payload})
    assert_inert(at, payload, "overview")
    assert payload in [c.value for c in at.code]




@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_in_the_tokenizer_training_text(payload):
    at = open_page("pages/tokenization.py", {"tok_source": "pasted text"})
    at.text_area(key="tok_text").input(f"{payload} {payload} low lower").run()
    assert_inert(at, payload, "tok_text")
    at.text_area(key="tok_text").input(payload).run()
    assert_inert(at, payload, "tok_text alone")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_in_the_extra_mask_sentences(payload):
    at = open_page("pages/masks.py", {"mask_extra_1": payload})
    assert_inert(at, payload, "mask_extra_1 from the URL")
    assert at.text_input(key="mask_extra_1").value == payload
    at.text_input(key="mask_extra_2").input(payload).run()
    assert_inert(at, payload, "mask_extra_2")


# Every parameter a page reads from its URL (sidebar settings, page widgets, hand-read values).
URL_KEYS = {
    "pages/overview.py": [],
    "pages/tokenization.py": ["tok_source", "tok_kind", "tok_labels", "tok_merges", "tok_step", "tok_text"],
    "pages/embeddings.py": [],
    "pages/positional.py": ["pe_dims", "pe_max_pos", "pe_tab"],
    "pages/attention.py": ["attn_kind", "attn_layer", "attn_head", "attn_query", "attn_bar", "attn_view",
                           "attn_explore", "hv_kind", "hv_layer", "nv_kind", "nv_layer", "nv_head",
                           "nv_query", "nv_key"],
    "pages/masks.py": ["mask_kind", "mask_row", "mask_head", "mask_extra_1", "mask_extra_2"],
    "pages/model.py": ["model_layer", "model_token", "model_head", "model_position", "model_topk",
                       "model_temperature", "model_step", "model_view"],
    "pages/training.py": ["train_task", "train_steps", "train_minutes"],
    "pages/lecture.py": ["step"],
    "pages/interventions.py": ["iv_view", "patch_pair", "patch_clean", "patch_corrupt"],
}  # fmt: skip
SIDEBAR_KEYS = ["lang", "sentence", "target", "weights", "d_model", "num_heads", "num_layers", "d_ff", "seed",
                "norm", "positions", "max_tokens", "ablate", "ablate_mode"]


def test_every_page_is_covered():
    assert sorted(URL_KEYS) == sorted(PAGE_SCRIPTS)


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_payload_in_every_url_parameter(page, payload):
    """Tampered values are echoed in warnings ("Ignored d_model=…"): only inside code spans."""
    at = open_page(page, {key: payload for key in [*SIDEBAR_KEYS, *URL_KEYS[page]]})
    assert_inert(at, payload, page)
    assert any("Ignored d_model=" in w.value for w in at.warning), [w.value for w in at.warning]


@pytest.mark.parametrize("payload", PAYLOADS[:2])
@pytest.mark.parametrize("view", ["stream", "output", "decoding"])
def test_payload_in_the_model_pages_other_tabs(view, payload):
    """The Full model page draws one tab at a time (?model_view=<label>): the others' parameters too."""
    from i18n import t

    query = {key: payload for key in [*SIDEBAR_KEYS, *URL_KEYS["pages/model.py"]]}
    at = open_page("pages/model.py", {**query, "lang": "en", "model_view": t(f"model.tab.{view}", "en")})
    assert_inert(at, payload, view)
    section = "greedy" if view == "decoding" else view
    assert [h.value for h in at.header] == [t(f"model.{section}.header", "en")]


# -- the source tree and the server config -----------------------------------------------------------

SOURCE_DIRS = ["app.py", "streamlit_app.py", "core", "ui", "pages", "figures", "i18n", "benchmarks", "deploy"]


def python_files() -> list[Path]:
    files = []
    for name in SOURCE_DIRS:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def call_name(node: ast.Call) -> str:
    """``torch.load`` for ``torch.load(...)``, ``eval`` for ``eval(...)``, ``?.eval`` for ``m().eval()``."""
    parts = []
    func = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    parts.append(func.id if isinstance(func, ast.Name) else "?")
    return ".".join(reversed(parts))


def findings(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                if name and name.split(".")[0] in ("pickle", "cPickle", "dill", "marshal", "shelve"):
                    out.append(f"{where}: imports {name}")
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        keywords = {k.arg: k.value for k in node.keywords}
        if name in ("eval", "exec", "compile", "__import__", "builtins.eval", "builtins.exec"):
            out.append(f"{where}: {name}()")
        if name.endswith("torch.load") or name == "load" and "weights_only" in keywords:
            wo = keywords.get("weights_only")
            if not (isinstance(wo, ast.Constant) and wo.value is True):
                out.append(f"{where}: {name}() without weights_only=True")
        raw_html = ("st.html", "st.iframe", "components.html", "components.v1.html", "st.components.v1.html")
        if name.endswith(raw_html):
            out.append(f"{where}: {name}() renders raw HTML")
        allow = keywords.get("unsafe_allow_html")
        if allow is not None and not (isinstance(allow, ast.Constant) and allow.value is False):
            out.append(f"{where}: unsafe_allow_html")
        if name.endswith("file_uploader") and not {"type", "max_upload_size"} <= keywords.keys():
            out.append(f"{where}: file_uploader without type= and max_upload_size=")
    return out


def test_the_scanner_finds_what_it_looks_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import pickle\nimport torch\nimport streamlit as st\neval('1')\ntorch.load('x')\n"
        "torch.load('x', weights_only=False)\nst.markdown('x', unsafe_allow_html=True)\n"
        "st.file_uploader('f')\nst.html('<b>')\n"
    )
    found = findings(bad, tmp_path)
    assert len(found) == 7, found


# Raw HTML we wrote and audited: fixed markup whose only inserted values are escaped (html.escape,
# or JSON with <, >, & as \u escapes) and set with textContent. A new call site fails the test below
# until it is reviewed and listed here with the test that shows user text stays text.
AUDITED_RAW_HTML = {
    # the SVG/PNG buttons: fixed markup; the chart's key class and translated labels, escaped
    "ui/page/figure.py": "st.html",  # tests/figures/drawing/test_export.py, tests/browser/test_lecture.py
    # a stylesheet hiding the hidden shortcut buttons: a constant
    "ui/page/keys.py": "st.html",
    # the lecture page's fixed stylesheet: a constant
    "pages/lecture.py": "st.html",
    # every page: stale elements stay opaque during a rerun, tab labels at 1rem (STEADY_RERUN_CSS,
    # TAB_LABEL_CSS): constants
    "ui/page/sidebar.py": "st.html",
    # the presenter's and the member's cookies: a script whose names and values are our own codes, ids
    # and secrets, each checked against [A-Za-z0-9_.-] (tests/app/test_classroom.py: anything else is
    # not written)
    "ui/classroom/panels.py": "st.html",
    # the exercise card's stylesheet: constants and a widget key of ours
    "ui/sections/exercises.py": "st.html",
    # the head view: tokens as escaped JSON, drawn with textContent (tests/figures/test_attention_views.py,
    # tests/browser/test_head_view.py: a <script> sentence stays text)
    "ui/components/head_view.py": "st.iframe",
}


def test_no_eval_pickle_unsafe_torch_load_or_raw_html_in_the_source():
    files = python_files()
    assert len(files) > 20
    problems = [f for path in files for f in findings(path)]
    unaudited = [
        f for f in problems
        if not (f.endswith("renders raw HTML") and AUDITED_RAW_HTML.get(f.split(":")[0], "?") in f)
    ]
    assert unaudited == []


def test_checkpoints_are_loaded_with_weights_only():
    text = (ROOT / "core" / "training" / "checkpoint.py").read_text()
    assert "weights_only=True" in text


def test_server_config_is_safe_by_default():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server = config["server"]
    assert server["address"] == "127.0.0.1"  # localhost unless deliberately exposed (docs/deploy.md)
    assert 1 <= server["maxUploadSize"] <= 5  # MB; the one uploader takes 1 MB .txt files
    assert server.get("enableXsrfProtection", True) is True
    assert server.get("enableCORS", True) is True
    assert config.get("client", {}).get("toolbarMode") == "viewer"  # no developer menu for students
    # closed tabs are not kept for Streamlit's default 120 s: 200 visits piled up +300 MB (benchmarks/soak.py)
    assert server.get("disconnectedSessionTTL", 120) <= 60


def test_no_message_is_sent_as_a_reference_to_a_browser_copy():
    """Streamlit's message cache is off: every message is smaller than the smallest one it would cache,
    so a browser that dropped its copy during quick reruns never gets a reference it cannot resolve
    (the page disconnected for good; tests/browser/test_lecture_keys.py presses keys on a busy server)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    largest = config["server"]["maxMessageSize"] * 1e6  # MB: no message can be larger
    assert config["global"]["minCachedMessageSize"] > largest
