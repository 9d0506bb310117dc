"""The examples in core/'s docstrings run with the suite: a docstring that shows a wrong result fails.

One test per docstring with examples, found in every module of ``core`` and its packages (a new
module is searched without being listed here). A test file rather than ``--doctest-modules``: pytest
would then import every file under tests/ a second time as a doctest module, and the examples run
once, in the non-browser pass, as part of tests/core.
"""

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import core

MODULES = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core.")
                 if not m.name.endswith("__main__"))
EXAMPLES = sorted(
    (test for name in MODULES for test in doctest.DocTestFinder().find(importlib.import_module(name))
     if test.examples),
    key=lambda test: test.name,
)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_docstring_examples_give_what_they_show(example):
    # a fresh copy of the module's namespace per run: the runner empties the one it is given
    test = doctest.DocTest(example.examples, dict(example.globs), example.name, example.filename,
                           example.lineno, example.docstring)
    report: list[str] = []
    result = doctest.DocTestRunner(verbose=False).run(test, out=report.append)
    assert result.attempted == len(example.examples)
    assert result.failed == 0, "".join(report)


def test_the_modules_with_examples_are_all_searched():
    found = {Path(e.filename).stem for e in EXAMPLES}
    assert found >= {"bpe", "pairs", "masks", "positional", "vocab", "wordpiece"}, found
    assert len(EXAMPLES) >= 24  # when written; fewer means examples were lost, not moved
