"""Comments explain the code: module docstrings say what a module is for in at most 15 lines, and no
comment or docstring in the app's code carries an issue number (decisions and measurements live in
docs/decisions.md and docs/performance.md)."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("core", "ui", "figures", "pages", "i18n")
CODE = sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")) + [ROOT / "app.py"]
ISSUE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_docstring_is_at_most_15_lines(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
    assert doc.count("\n") + 1 <= 15, f"{doc.count(chr(10)) + 1} lines"


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_numbers_in_code(path):
    found = [line for line in path.read_text(encoding="utf-8").splitlines() if ISSUE.search(line)]
    assert not found, found
