"""A page reads as the page looks: every script in pages/ is at most 300 lines and defines no function
or class. Its sections, helpers and dataclasses live below it, in ui/sections/<page>.py."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py"))
MAX_LINES = 300
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def test_there_are_pages():
    assert len(PAGES) >= 9


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_is_short(page: Path):
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{page.name}: {lines} lines"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_defines_nothing(page: Path):
    tree = ast.parse(page.read_text(encoding="utf-8"))
    defined = [f"{node.name} (line {node.lineno})" for node in ast.walk(tree)
               if isinstance(node, DEFINITIONS)]
    assert defined == [], f"{page.name} defines {defined}: move them to ui/sections/{page.name}"


def test_ui_sections_holds_at_most_twelve_modules():
    """A folder a newcomer can read: one module per page, and one per section two pages share."""
    modules = [p for p in (ROOT / "ui" / "sections").glob("*.py") if p.name != "__init__.py"]
    assert 0 < len(modules) <= 12, [p.name for p in modules]
