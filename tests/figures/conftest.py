"""Shared fixtures of the figure tests."""

import pytest

import figures.drawing.toolbox as toolbox


@pytest.fixture(scope="module")
def plotly_validation():
    """Build figures with plotly's validation on (figures.drawing.toolbox skips it for speed in the app):
    a misspelt property fails the test instead of being dropped by the browser."""
    toolbox.VALIDATE = True
    yield
    toolbox.VALIDATE = False
