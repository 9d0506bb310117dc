"""figures/ are pure functions: importing every module of figures/ and core/, subpackages included,
loads no Streamlit, no ui/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import importlib, pkgutil, sys
import core, figures
for package in (core, figures):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
print(sorted(m for m in sys.modules if m == "streamlit" or m.startswith(("streamlit.", "ui.")) or m == "ui"))
"""


def test_figures_and_core_load_neither_streamlit_nor_ui():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
