"""Shared fixtures of the figure tests."""

import pytest

import figures.attention as fa


@pytest.fixture(scope="module")
def plotly_validation():
    """Build figures with plotly's validation on (figures.attention skips it for speed in the app):
    a misspelt property fails the test instead of being dropped by the browser."""
    fa.VALIDATE = True
    yield
    fa.VALIDATE = False
