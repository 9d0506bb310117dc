"""Fixtures every test folder may use: a real redis-server, and tiny model folders of each family."""

from __future__ import annotations

import pytest
from redisserver import RedisServer


@pytest.fixture(scope="session")
def redis_server():
    """One real redis-server per test process (tests empty it with ``flushdb`` as they need)."""
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def model_root(tmp_path_factory):
    """Tiny random model folders, one per family (tests/modelfolders.py), made once per worker."""
    from tests.modelfolders import make_model_folders

    return make_model_folders(tmp_path_factory.mktemp("models"))


@pytest.fixture
def model_folders(model_root, monkeypatch):
    """GLASSBOX_MODELS names the tiny model folders for this test (weights hf:gpt2-tiny,
    hf:qwen2-tiny, hf:bert-tiny)."""
    from ui.folders.models import find_models

    monkeypatch.setenv("GLASSBOX_MODELS", str(model_root))
    monkeypatch.setenv("HF_HUB_CACHE", str(model_root / "no-hub-cache"))  # never the machine's own
    find_models(refresh=True)
    return model_root
