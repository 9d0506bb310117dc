"""The two passes of .ci/run split the suite by folder as well as by marker: the browser pass collects
tests/browser only, the other pass deselects ``-m browser``. So every browser test lives in
tests/browser, and every test module there is marked ``browser`` (else it would run on both cores)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
BROWSER = TESTS / "browser"
MARK = re.compile(r"^pytestmark = \[?pytest\.mark\.browser\b", re.MULTILINE)  # alone or with others


def test_every_browser_test_module_is_marked():
    modules = sorted(BROWSER.glob("test_*.py"))
    assert modules
    unmarked = [p.name for p in modules if not MARK.search(p.read_text(encoding="utf-8"))]
    assert unmarked == []


def test_no_browser_test_outside_tests_browser():
    elsewhere = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("*.py")
                 if BROWSER not in p.parents and p != Path(__file__).resolve()
                 and "mark.browser" in p.read_text(encoding="utf-8")]
    assert elsewhere == []
