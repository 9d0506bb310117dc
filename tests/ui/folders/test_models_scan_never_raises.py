"""The model search (ui.folders.models.find_models) never raises: every page calls it, so one bad folder under
GLASSBOX_MODELS would otherwise take every page down. Folders with malformed config.json files and
safetensors headers, made by hypothesis, are described (unsupported, a problem said) or skipped with a
log line; the good folder beside them is still found, the same as when it is alone.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ui.folders.models as models
from tests.modelfolders import GPT2_CONFIG as GPT2
from ui.folders.models import find_models

# JSON numbers Python reads as inf or as huge ints, and values of every type
NUMBERS = st.sampled_from(["1e999", "-1e999", "1e308", "-1", "0", "2.5", "NaN", "Infinity", "1" + "0" * 400])
RAW = NUMBERS.map(lambda n: ("num", n))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), RAW)


def _json(value) -> str:
    """JSON text of a value whose ("num", text) leaves are written as that raw number text."""
    if isinstance(value, tuple):
        return value[1]
    if isinstance(value, list):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_json(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=6), inner, max_size=3), max_leaves=8)
MODEL_TYPES = st.sampled_from(["gpt2", "bert", "llama", "qwen2", "t5", "", None, 3])
SHAPES = st.one_of(st.lists(st.one_of(st.integers(-5, 2**70), RAW), max_size=3),
                   VALUES)


@st.composite
def configs(draw) -> str:
    """config.json text: a known or unknown model_type with sizes of any JSON type, or no object at all."""
    if draw(st.booleans()):
        return _json(draw(VALUES))
    config = {"model_type": draw(MODEL_TYPES)}
    for key in draw(st.lists(st.sampled_from(sorted(GPT2) + ["hidden_size", "num_key_value_heads",
                                                             "head_dim", "dtype", "architectures"]),
                             max_size=6)):
        config[key] = draw(VALUES)
    return _json(config)


@st.composite
def headers(draw) -> bytes:
    """A safetensors file: a length (true, or any) and a header whose tensors have shapes of any kind."""
    tensors = {name: {"dtype": draw(st.sampled_from(["F32", "BF16", "X", 7])), "shape": draw(SHAPES),
                      "data_offsets": draw(VALUES)}
               for name in draw(st.lists(st.text(min_size=1, max_size=4), max_size=3, unique=True))}
    text = _json(tensors) if draw(st.booleans()) else _json(draw(VALUES))
    raw = text.encode("utf-8")
    length = draw(st.one_of(st.just(len(raw)), st.integers(0, 2**64 - 1)))
    return length.to_bytes(8, "little") + raw + draw(st.binary(max_size=16))


def scan(root: Path) -> dict:
    environ = {models.ENV_VAR: str(root), "HF_HUB_CACHE": str(root / "no-hub")}
    return find_models(refresh=True, environ=environ)


def write(folder: Path, config: str, weights: bytes) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(config, encoding="utf-8")
    (folder / "model.safetensors").write_bytes(weights)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs(), weights=headers())
@example(  # the shape of the report: an unsupported model_type, a header whose shape is [1e999]
    config='{"model_type": "t5"}',
    weights=(lambda raw: len(raw).to_bytes(8, "little") + raw)(
        b'{"w": {"dtype": "F32", "shape": [1e999], "data_offsets": [0, 4]}}'),
)
@example(config='{"model_type": "gpt2", "vocab_size": 1e999}', weights=b"\0" * 8)
def test_the_scan_never_raises(config, weights):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root / "good", json.dumps(GPT2), b"\0" * 400)
        alone = scan(root)["hf:good"]
        write(root / "bad", config, weights)
        found = scan(root)  # must not raise
        assert found["hf:good"] == alone  # its neighbour changes nothing of it
        bad = found.get("hf:bad")
        if bad is not None:  # described: a family with a size, or a problem said
            assert bad.params is not None and bad.params >= 0
            assert bad.family is not None or bad.problem is not None


def test_a_folder_that_cannot_be_described_is_skipped_with_a_log_line(tmp_path, monkeypatch, caplog):
    write(tmp_path / "good", json.dumps(GPT2), b"\0" * 400)
    write(tmp_path / "odd", json.dumps(GPT2), b"\0" * 400)
    real = models.describe

    def describe(value, c):
        if c.name == "odd":
            raise OverflowError("cannot convert float infinity to integer")  # whatever a folder raises
        return real(value, c)

    monkeypatch.setattr(models, "describe", describe)
    with caplog.at_level(logging.WARNING, logger="glassbox.models"):
        found = scan(tmp_path)
    assert list(found) == ["hf:good"]
    assert any("odd" in r.getMessage() and "skipped" in r.getMessage() for r in caplog.records)
