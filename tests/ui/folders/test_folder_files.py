"""Every file of a model folder is read through FolderFiles: under the cap of its kind, checked
before a byte is read, and only inside the models root it was found in (links followed, never out).

For each kind of file the app reads, a sparse file far over its cap is planted in a copy of a tiny
model folder and the real entry point (the scan, or loading the model) refuses it with a reason that
names the file and the cap; the process's own read count (``rchar`` of /proc/self/io, every byte any
code of the process read, Python's or the tokenizers library's) shows that it was not read. Then each
file as a link out of the root is refused, and a hub cache made of links into its blobs/ still loads.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest
import torch

from core.loading.safetensors import read_safetensors
from ui.folders.hf_pipeline import ModelUnusable, load_model
from ui.folders.models import find_models

MB = 2**20
# the cap of each kind of file (FILE_CAPS), written out: a changed cap is a visible decision
FILE_CAPS = {
    "config": 512 * 2**10,
    "settings": 4 * MB,
    "vocab": 32 * MB,
    "tokenizer": 64 * MB,
    "index": 16 * MB,
    "header": 16 * MB,
    "ref": 2**10,
}
SLACK = 64 * MB  # every planted file is this much over its cap: reading it would show in rchar
READ_AT_MOST = 32 * MB  # what the rest of a load may read (the tiny model's own files, imports)
WEIGHTS_CAP_MB = 256  # GLASSBOX_CACHE_MB (its least) for these tests: the weights' cap is the memory budget


def bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def sparse(path: Path, size: int, head: bytes = b"") -> None:
    """A file of ``size`` bytes that takes no disk: ``head``, then a hole."""
    if path.is_symlink() or path.exists():
        path.unlink()
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)


@pytest.fixture
def roots(model_root, tmp_path, monkeypatch):
    """A models root of our own (copies of the tiny folders, to plant files in) and a folder outside it."""
    root, outside = tmp_path / "models", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    monkeypatch.setenv("GLASSBOX_MODELS", str(root))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub"))
    monkeypatch.setenv("GLASSBOX_CACHE_MB", str(WEIGHTS_CAP_MB))

    def copy(name: str, as_name: str, drop=()) -> Path:
        folder = root / as_name
        shutil.copytree(model_root / name, folder)
        for file in drop:
            (folder / file).unlink()
        return folder

    return root, outside, copy


def refused(value: str) -> str:
    find_models(refresh=True)
    before = bytes_read()
    with pytest.raises(ModelUnusable) as e:
        load_model(value)
    assert bytes_read() - before < READ_AT_MOST, "the planted file was read"
    assert e.value.reason == "unreadable"
    return str(e.value)


# (tiny folder, file planted, its kind, files of the copy removed so that the planted one is read)
LOADED = [
    ("gpt2-tiny", "vocab.json", "vocab", ()),
    ("gpt2-tiny", "merges.txt", "vocab", ()),
    ("bert-tiny", "vocab.txt", "vocab", ()),
    ("bert-tiny", "tokenizer.json", "tokenizer", ("vocab.txt",)),  # a BERT saved by transformers 5
    ("qwen2-tiny", "tokenizer.json", "tokenizer", ()),
    ("bert-tiny", "tokenizer_config.json", "settings", ()),
    ("qwen2-tiny", "special_tokens_map.json", "settings", ()),
    ("gpt2-tiny", "model.safetensors.index.json", "index", ("model.safetensors",)),
]


@pytest.mark.parametrize("name, planted, kind, drop", LOADED, ids=[f"{p}-{n}" for n, p, _, _ in LOADED])
def test_a_file_over_its_cap_is_refused_unread(roots, name, planted, kind, drop):
    root, _, copy = roots
    folder = copy(name, "m", drop)
    if planted.endswith(".index.json"):  # the scan needs a weights file to see a model: a shard
        (folder / "model-00001-of-00002.safetensors").write_bytes(b"\0" * 8)
    size = FILE_CAPS[kind] + SLACK
    sparse(folder / planted, size)
    message = refused("hf:m")
    assert f"{planted} is {size // MB} MB, more than the {FILE_CAPS[kind] // MB} MB" in message, message
    assert message.endswith("may have here: not read"), message


def test_a_safetensors_header_over_its_cap_is_refused_unread(roots):
    _, _, copy = roots
    folder = copy("gpt2-tiny", "m")
    length = FILE_CAPS["header"] + SLACK
    sparse(folder / "model.safetensors", 8 + length, head=length.to_bytes(8, "little"))
    message = refused("hf:m")
    assert f"its header would be {length:,} bytes, more than the 16 MB" in message, message


def test_weights_over_the_memory_budget_are_refused_unread(roots):
    """A header that fits, naming one tensor as large as the file: loading it would fill memory with it."""
    _, _, copy = roots
    folder = copy("gpt2-tiny", "m")
    size = WEIGHTS_CAP_MB * MB + SLACK
    header = b'{"junk": {"dtype": "U8", "shape": [%d], "data_offsets": [0, %d]}}' % (size, size)
    header += b" " * (-len(header) % 8)
    sparse(folder / "model.safetensors", 8 + len(header) + size, len(header).to_bytes(8, "little") + header)
    message = refused("hf:m")
    assert f"more than the {WEIGHTS_CAP_MB} MB a model's weights may have here: not read" in message, message


def test_a_huge_refs_main_is_not_read(roots, caplog):
    """The hub cache's refs/main, read at every scan: over its cap, the newest snapshot is taken."""
    root, _, _ = roots
    entry = root / "models--org--tiny"
    snapshot = entry / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "t5"}')
    (snapshot / "model.safetensors").write_bytes(b"\0" * 8)
    (entry / "refs").mkdir()
    sparse(entry / "refs" / "main", FILE_CAPS["ref"] + SLACK)
    before = bytes_read()
    with caplog.at_level(logging.WARNING, logger="glassbox.models"):
        found = find_models(refresh=True)
    assert bytes_read() - before < READ_AT_MOST, "refs/main was read"
    assert found["hf:tiny"].path == snapshot
    assert any("refs/main is 64 MB, more than the 1 kB a hub reference may have here: not read"
               in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_a_huge_config_is_described_unread(roots):
    _, _, copy = roots
    folder = copy("gpt2-tiny", "m")
    sparse(folder / "config.json", FILE_CAPS["config"] + SLACK)
    before = bytes_read()
    found = find_models(refresh=True)
    assert bytes_read() - before < READ_AT_MOST
    assert found["hf:m"].problem == "config.json is over 512 KB: not a model's configuration"


# -- links out of the root --------------------------------------------------------------------------


# (tiny folder, the file made a link out, files removed so that it is the one read)
LINKED = [
    ("gpt2-tiny", "vocab.json", ()),
    ("gpt2-tiny", "merges.txt", ()),
    ("bert-tiny", "vocab.txt", ()),
    ("qwen2-tiny", "tokenizer.json", ()),
    ("bert-tiny", "tokenizer_config.json", ()),
    ("gpt2-tiny", "model.safetensors", ()),
]


@pytest.mark.parametrize("name, linked, drop", LINKED, ids=[f"{f}-{n}" for n, f, _ in LINKED])
def test_a_file_linked_out_of_the_root_is_refused(roots, name, linked, drop):
    root, outside, copy = roots
    folder = copy(name, "m", drop)
    if linked == "model.safetensors":  # the scan needs a weights file inside to list the folder
        torch.save(read_safetensors(folder / "model.safetensors"), folder / "pytorch_model.bin")
    if not (folder / linked).exists():
        (folder / linked).write_text("{}")
    shutil.move(folder / linked, outside / linked)  # the same, valid file, outside the root
    (folder / linked).symlink_to(outside / linked)
    message = refused("hf:m")
    assert f"{linked} is a link to a file outside the models folder: not read" in message, message


def test_hub_cache_links_into_its_blobs_still_load(model_root, tmp_path, monkeypatch):
    """A hub cache's snapshot is links into blobs/ of the same root: loaded, with the same numbers."""
    hub = tmp_path / "hub"
    entry = hub / "models--someorg--gpt2-tiny"
    snapshot = entry / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (entry / "blobs").mkdir()
    for file in sorted((model_root / "gpt2-tiny").iterdir()):
        blob = entry / "blobs" / f"sha-{file.name}"
        shutil.copy(file, blob)
        (snapshot / file.name).symlink_to(os.path.relpath(blob, snapshot))
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text("0123abc")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("GLASSBOX_MODELS", str(tmp_path / "none"))
    assert find_models(refresh=True)["hf:gpt2-tiny"].path == snapshot
    pipe = load_model("hf:gpt2-tiny")
    monkeypatch.setenv("GLASSBOX_MODELS", str(model_root))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub"))
    find_models(refresh=True)
    plain = load_model("hf:gpt2-tiny")
    text = "注意力 is all you need 🙂"
    assert pipe.src_encode(text) == plain.src_encode(text)
    for (k, a), (_, b) in zip(pipe.model.state_dict().items(), plain.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), k
