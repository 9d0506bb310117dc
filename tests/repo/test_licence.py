"""The code's licence and every shipped asset's: a file without a named source and licence does not ship."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"


def test_the_code_is_under_the_mit_licence():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def asset_rows() -> dict[str, list[str]]:
    """assets/README.md's table: the file column (glob or path) -> the row's cells."""
    rows = {}
    for line in (ASSETS / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and (name := re.fullmatch(r"`([^`]+)`", cells[0])):
            rows[name.group(1)] = cells
    return rows


def test_every_asset_has_a_source_and_a_licence():
    rows = asset_rows()
    files = [p for p in ASSETS.rglob("*") if p.is_file() and p.name != "README.md"]
    shipped = [p.relative_to(ASSETS).as_posix() for p in files]
    assert shipped
    for name in shipped:
        row = next((cells for pattern, cells in rows.items() if Path(name).match(pattern)), None)
        assert row is not None, f"assets/{name} has no row in assets/README.md"
        source, licence = row[2], row[3]
        assert source and licence, name
        # a licence is named, never deferred to a file that does not exist
        assert re.search(r"\bMIT\b|\bCC\b|\bBSD\b|\bApache\b|public domain", licence), (name, licence)
    assert "Same licence as Glassbox" not in (ASSETS / "README.md").read_text(encoding="utf-8")
