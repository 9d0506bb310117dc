"""The README's screenshots are what a fresh run of the browser tests makes of today's app.

A browser test writes each picture through ``browserhelpers.screenshot`` (or ``record_screenshot``),
which records beside it (``<name>.json``) the test, the PNG's SHA-256 and every text of the app on
screen, key by key. Here, without a browser: every picture the README shows has such a record; the
PNG is the one the test wrote; that test still exists and still writes pictures; and every text it
showed is still the app's text (one changed since makes the picture older than the app).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

import pytest

from i18n import strings

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "assets" / "screenshots"
WRITERS = {"screenshot", "record_screenshot"}  # tests/browser/browserhelpers.py


def readme_shots() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"assets/screenshots/([\w.-]+\.png)", text)))


def test_the_readme_shows_screenshots():
    assert len(readme_shots()) >= 10


@pytest.mark.parametrize("name", readme_shots())
def test_each_readme_screenshot_is_a_fresh_browser_test_picture(name: str):
    png, record_path = SHOTS / name, (SHOTS / name).with_suffix(".json")
    assert png.is_file(), f"the README shows {name}, which is not in {SHOTS}"
    assert record_path.is_file(), (
        f"{name}: no browser test wrote it through browserhelpers.screenshot (no {record_path.name})")
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert hashlib.sha256(png.read_bytes()).hexdigest() == record["png_sha256"], (
        f"{name} is not the picture {record['test']} wrote: run that test again and commit both files")

    # the test that wrote it still exists and still writes a picture
    file, function = record["test"].split("::")
    source = ROOT / file
    assert source.is_file(), f"{name}: {file} is gone"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    tests = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == function]
    test = tests[0] if tests else None
    assert test is not None, f"{name}: {record['test']} is gone"
    calls = {node.func.id for node in ast.walk(test)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert calls & WRITERS, f"{name}: {record['test']} no longer writes a picture"

    # every text of the app it shows is still the app's text
    stale = [f"{lang} {key}: the picture shows {text!r}, the app now says {strings(lang).get(key)!r}"
             for lang, texts in record["texts"].items() for key, text in texts.items()
             if strings(lang).get(key) != text]
    assert not stale, f"{name} is older than the app:\n" + "\n".join(stale)
