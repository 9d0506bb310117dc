"""ui.folders.models: model folders found on disk, described from their config.json, chosen by name only.

Tiny models of each family are saved with transformers' own ``save_pretrained`` (nothing is downloaded);
the hub cache's layout (``models--ORG--NAME/snapshots/<rev>/``, files linked to ``blobs/``) is built by
hand. Every test points ``HF_HUB_CACHE`` at its own folder, so the machine's real cache is never read.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time

import pytest

import ui.folders.models as models
from tests.modelfolders import GPT2_CONFIG as GPT2
from ui.caches.budget import MB
from ui.folders.models import ModelChoiceError, check_size, choice, find_models, hub_cache_dir, model_dirs

TINY = dict(vocab_size=50)


def tiny_configs():
    """One tiny config of each supported architecture, and an unsupported one (T5)."""
    import transformers as tf

    llama = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4, **TINY)
    return {
        "gpt2": (tf.GPT2LMHeadModel, tf.GPT2Config(n_embd=16, n_layer=2, n_head=2, n_positions=32, **TINY)),
        "bert": (tf.BertModel, tf.BertConfig(max_position_embeddings=32, **llama)),
        "bert-mlm": (tf.BertForMaskedLM, tf.BertConfig(max_position_embeddings=32, **llama)),
        "llama": (tf.LlamaForCausalLM, tf.LlamaConfig(num_key_value_heads=2, **llama)),
        "llama-biased": (
            tf.LlamaForCausalLM,
            tf.LlamaConfig(num_key_value_heads=1, attention_bias=True, mlp_bias=True, head_dim=8, **llama),
        ),
        "qwen2": (tf.Qwen2ForCausalLM, tf.Qwen2Config(num_key_value_heads=2, **llama)),
        "qwen2-tied": (
            tf.Qwen2ForCausalLM,
            tf.Qwen2Config(num_key_value_heads=2, tie_word_embeddings=True, **llama),
        ),
        "t5": (
            tf.T5ForConditionalGeneration,
            tf.T5Config(d_model=16, d_kv=4, d_ff=24, num_layers=1, num_heads=2, **TINY),
        ),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each tiny model saved once, by save_pretrained: name -> (folder, its num_parameters())."""
    import torch

    torch.manual_seed(0)
    base = tmp_path_factory.mktemp("saved")
    out = {}
    for name, (cls, config) in tiny_configs().items():
        model = cls(config)
        model.save_pretrained(base / name)
        out[name] = (base / name, model.num_parameters())
    return out


@pytest.fixture(autouse=True)
def no_real_cache(tmp_path, monkeypatch):
    """No test reads this machine's hub cache or a GLASSBOX_MODELS set outside."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub"))
    monkeypatch.delenv(models.ENV_VAR, raising=False)


def fake_model(folder, config: dict | bytes, weights: bytes = b"\0" * 400, name="model.safetensors"):
    """A model folder with this config.json and a weight file of these bytes (never loaded here)."""
    folder.mkdir(parents=True, exist_ok=True)
    raw = config if isinstance(config, bytes) else json.dumps(config).encode()
    (folder / "config.json").write_bytes(raw)
    (folder / name).write_bytes(weights)
    return folder




def use_roots(monkeypatch, *roots) -> dict:
    monkeypatch.setenv(models.ENV_VAR, os.pathsep.join(map(str, roots)))
    return find_models(refresh=True)


# -- described from config.json --------------------------------------------------------------------------


def test_sizes_from_the_config_equal_transformers(saved, monkeypatch):
    found = use_roots(monkeypatch, next(iter(saved.values()))[0].parent)
    families = {
        "gpt2": "gpt2",
        "bert": "bert",
        "bert-mlm": "bert",
        "llama": "llama",
        "llama-biased": "llama",
        "qwen2": "llama",
        "qwen2-tied": "llama",
    }
    for name, family in families.items():
        m = found[f"hf:{name}"]
        assert (m.family, m.problem) == (family, None), name
        assert m.params == saved[name][1], name  # tied embeddings once, biases, the pooler or MLM head
        assert m.bytes_float32 == 4 * saved[name][1]
        assert m.weight_files == ("model.safetensors",)
        assert m.path == saved[name][0]
    assert found["hf:qwen2"].model_type == "qwen2"
    assert found["hf:qwen2"].architectures == ("Qwen2ForCausalLM",)


def test_an_unsupported_architecture_is_listed_with_a_message(saved, monkeypatch):
    t5 = use_roots(monkeypatch, saved["t5"][0])["hf:t5"]  # a root that is a model folder itself
    assert t5.family is None and t5.model_type == "t5"
    assert t5.problem == (
        "`T5ForConditionalGeneration` is not supported. Supported: gpt2: GPT2LMHeadModel, GPT2Model;"
        " bert: BertModel, BertForMaskedLM, BertForPreTraining, BertLMHeadModel;"
        " llama: LlamaForCausalLM, Qwen2ForCausalLM."
    )
    # no formula for T5: the tensors its safetensors file holds, counted from the header
    from safetensors import safe_open

    with safe_open(str(saved["t5"][0] / "model.safetensors"), "pt") as f:
        stored = sum(
            f.get_slice(k).get_shape().numel()
            if hasattr(f.get_slice(k).get_shape(), "numel")
            else math.prod(f.get_slice(k).get_shape())
            for k in f.keys()
        )
    assert t5.params == stored
    assert t5.params >= saved["t5"][1]


def safetensors_bytes(shapes: dict, dtype="BF16", width=2, header_length=None) -> bytes:
    """A safetensors file by hand: 8-byte little-endian header length, the JSON header, the buffer."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in shapes.items():
        size = math.prod(shape) * width
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    length = len(raw) if header_length is None else header_length
    return length.to_bytes(8, "little") + raw + b"\0" * offset


def test_parameters_from_the_weight_files(tmp_path, monkeypatch):
    t5 = {"model_type": "t5", "dtype": "bfloat16"}
    fake_model(tmp_path / "m" / "st", t5, safetensors_bytes({"a": [3, 5], "b": [7]}))
    fake_model(tmp_path / "m" / "bad-header", t5, safetensors_bytes({"a": [3, 5]}, header_length=2**60))
    fake_model(tmp_path / "m" / "bin", t5, b"\0" * 1000, name="pytorch_model.bin")
    found = use_roots(monkeypatch, tmp_path / "m")
    assert found["hf:st"].params == 15 + 7
    size = len(safetensors_bytes({"a": [3, 5]}))
    assert found["hf:bad-header"].params == size // 2  # not a header: the bytes over bfloat16's 2
    assert found["hf:bin"].params == 500


def test_a_known_model_type_with_a_foreign_architecture_is_refused(tmp_path, monkeypatch):
    fake_model(
        tmp_path / "m" / "mistral", {**GPT2, "model_type": "llama", "architectures": ["MistralForCausalLM"]}
    )
    fake_model(tmp_path / "m" / "no-sizes", {"model_type": "gpt2"})
    found = use_roots(monkeypatch, tmp_path / "m")
    assert found["hf:mistral"].family is None
    assert found["hf:mistral"].problem.startswith("`MistralForCausalLM` is not supported.")
    assert found["hf:no-sizes"].family is None
    assert found["hf:no-sizes"].problem == "config.json has no usable `vocab_size`"


def test_tokenizer_files_present(tmp_path, monkeypatch):
    bpe = fake_model(tmp_path / "m" / "bpe", GPT2)
    (bpe / "vocab.json").write_text("{}")
    (bpe / "merges.txt").write_text("")
    half = fake_model(tmp_path / "m" / "half", GPT2)
    (half / "vocab.json").write_text("{}")  # merges.txt missing: no BPE
    both = fake_model(tmp_path / "m" / "both", GPT2)
    (both / "vocab.txt").write_text("[PAD]\n")
    (both / "tokenizer.json").write_text("{}")
    found = use_roots(monkeypatch, tmp_path / "m")
    assert found["hf:bpe"].tokenizer_files == ("vocab.json+merges.txt",)
    assert found["hf:half"].tokenizer_files == ()
    assert found["hf:both"].tokenizer_files == ("vocab.txt", "tokenizer.json")


def test_what_counts_as_a_model_folder(tmp_path, monkeypatch):
    root = tmp_path / "m"
    fake_model(root / "bin", GPT2, name="pytorch_model.bin")
    fake_model(root / "sharded", GPT2, name="pytorch_model-00001-of-00002.bin")
    fake_model(root / "Org" / "deep", GPT2)  # root/org/name
    fake_model(root / "a" / "b" / "too-deep", GPT2)  # three levels: not looked at
    fake_model(root / "no-weights", GPT2, name="notes.txt")
    (root / "no-config").mkdir()
    (root / "no-config" / "model.safetensors").write_bytes(b"\0")
    fake_model(root / ".hidden", GPT2)
    assert list(use_roots(monkeypatch, root)) == ["hf:bin", "hf:sharded", "hf:deep"]


# -- where: roots, the hub cache, duplicate names ---------------------------------------------------------


def test_where_the_hub_cache_is(tmp_path):
    assert hub_cache_dir({"HF_HUB_CACHE": "/x/hub", "HF_HOME": "/y"}) == models.Path("/x/hub")
    assert hub_cache_dir({"HF_HOME": "/y"}) == models.Path("/y/hub")
    assert hub_cache_dir({}) == models.Path("~/.cache/huggingface/hub").expanduser()
    (tmp_path / "a").mkdir()
    (tmp_path / "hub").mkdir()
    env = {
        models.ENV_VAR: os.pathsep.join(
            [str(tmp_path / "a"), "", str(tmp_path / "missing"), str(tmp_path / "a")]
        ),
        "HF_HUB_CACHE": str(tmp_path / "hub"),
    }
    assert model_dirs(env) == [tmp_path / "a", tmp_path / "hub"]  # in order, each once, existing only


def hub_model(hub, repo: str, rev: str, config: dict, weights: bytes = b"\0" * 800):
    """A model in the hub cache's layout: snapshot files are links to blobs/ (relative, as the hub makes)."""
    entry = hub / f"models--{repo.replace('/', '--')}"
    snapshot = entry / "snapshots" / rev
    snapshot.mkdir(parents=True)
    (entry / "blobs").mkdir(exist_ok=True)
    for name, data in (("config.json", json.dumps(config).encode()), ("model.safetensors", weights)):
        blob = entry / "blobs" / f"{rev}-{name}"
        blob.write_bytes(data)
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    return snapshot


def test_the_hub_cache_layout(tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    chosen = hub_model(hub, "Qwen/TinyQwen", "aaa", {**GPT2, "n_layer": 1})
    newer = hub_model(hub, "Qwen/TinyQwen", "bbb", GPT2)
    os.utime(chosen, (time.time() - 100, time.time() - 100))
    (hub / "models--Qwen--TinyQwen" / "refs").mkdir()
    (hub / "models--Qwen--TinyQwen" / "refs" / "main").write_text("aaa")
    hub_model(hub, "gpt2", "ccc", GPT2, weights=b"\0" * 1234)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    found = find_models(refresh=True)
    assert list(found) == ["hf:TinyQwen", "hf:gpt2"]  # the repo's name, without its organisation
    qwen = found["hf:TinyQwen"]
    assert (qwen.repo, qwen.path) == ("Qwen/TinyQwen", chosen)  # refs/main wins over the newer one
    assert found["hf:gpt2"].repo == "gpt2" and found["hf:gpt2"].weight_bytes == 1234  # link followed
    (hub / "models--Qwen--TinyQwen" / "refs" / "main").unlink()
    assert find_models(refresh=True)["hf:TinyQwen"].path == newer  # no refs/main: the newest


def test_two_roots_and_duplicate_names(tmp_path, monkeypatch):
    first, second, hub = tmp_path / "first", tmp_path / "second", tmp_path / "hub"
    fake_model(first / "tiny", GPT2)
    fake_model(second / "tiny", GPT2)
    fake_model(second / "Org" / "tiny", GPT2)
    fake_model(second / "other", GPT2)
    hub_model(hub, "someorg/tiny", "r1", GPT2)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    found = use_roots(monkeypatch, first, second)
    assert {v: (m.root.name, m.path.parent.name) for v, m in found.items()} == {
        "hf:tiny": ("first", "first"),  # the first root keeps the plain name, as PATH does
        "hf:other": ("second", "second"),
        "hf:tiny@second": ("second", "second"),
        "hf:tiny@second-2": ("second", "Org"),
        "hf:tiny@someorg": ("hub", "snapshots"),
    }
    assert list(use_roots(monkeypatch, first, second)) == list(found)  # the same names every scan


# -- bounded: huge, binary, loops, links out, many folders -----------------------------------------------


def test_a_huge_or_binary_config_is_listed_unreadable(tmp_path, monkeypatch):
    root = tmp_path / "m"
    huge = fake_model(root / "huge", b"")
    with open(huge / "config.json", "wb") as f:  # 1 GB, sparse: read whole, it would take seconds
        f.truncate(2**30)
    fake_model(root / "padded", json.dumps({**GPT2, "pad": " " * models.MAX_CONFIG_BYTES}).encode())
    fake_model(root / "binary", bytes(range(256)) * 4)
    fake_model(root / "latin1", '{"model_type": "gpt2é"}'.encode("latin-1"))
    fake_model(root / "list", b"[1, 2]")
    fake_model(root / "deep", b"[" * 100_000 + b"]" * 100_000)
    start = time.perf_counter()
    found = use_roots(monkeypatch, root)
    assert time.perf_counter() - start < 2
    assert found["hf:huge"].problem == "config.json is over 512 KB: not a model's configuration"
    assert found["hf:padded"].problem == "config.json is over 512 KB: not a model's configuration"
    assert found["hf:binary"].problem == "config.json is not JSON"
    assert found["hf:latin1"].problem == "config.json is not JSON"
    assert found["hf:list"].problem == "config.json is not a JSON object"
    assert found["hf:deep"].problem in ("config.json is not JSON", "config.json is not a JSON object")
    assert all(m.family is None and m.params == 100 for m in found.values())  # 400 bytes / float32


def test_symlinks_stay_inside_their_root(tmp_path, monkeypatch):
    root, outside = tmp_path / "m", tmp_path / "outside"
    fake_model(root / "tiny", GPT2)
    fake_model(outside / "secret", GPT2)
    (root / "loop").symlink_to(root)  # a loop back to the root
    (root / "loop2").symlink_to("loop2")  # a link to itself
    (root / "alias").symlink_to(root / "tiny")  # inside: allowed, but the same folder is listed once
    (root / "escape").symlink_to(outside / "secret")
    (root / "escape-parent").symlink_to(outside)
    leaky = root / "leaky"
    leaky.mkdir()
    (leaky / "config.json").write_text(json.dumps(GPT2))
    (leaky / "model.safetensors").symlink_to(outside / "secret" / "model.safetensors")
    found = use_roots(monkeypatch, root, root / "loop2")
    assert list(found) == ["hf:alias"]  # sorted: "alias" is met before "tiny", which is then the same
    assert found["hf:alias"].path.resolve() == (root / "tiny").resolve()
    assert not any("secret" in str(m.path.resolve()) or m.name == "leaky" for m in found.values())


def test_the_number_of_folders_looked_at_is_bounded(tmp_path, monkeypatch):
    for i in range(10):
        fake_model(tmp_path / "m" / f"model{i}", GPT2)
    monkeypatch.setattr(models, "MAX_FOLDERS", 5)
    found = use_roots(monkeypatch, tmp_path / "m")
    assert list(found) == ["hf:model0", "hf:model1", "hf:model2", "hf:model3"]  # the root is the 5th


def test_a_folder_whose_name_could_not_be_chosen_is_skipped(tmp_path, monkeypatch):
    fake_model(tmp_path / "m" / "v1..v2", GPT2)
    fake_model(tmp_path / "m" / "~home", GPT2)
    fake_model(tmp_path / "m" / "back\\slash", GPT2)
    fake_model(tmp_path / "m" / ("x" * 130), GPT2)
    fake_model(tmp_path / "m" / "中文-bert", GPT2)
    assert list(use_roots(monkeypatch, tmp_path / "m")) == ["hf:中文-bert"]


# -- cached --------------------------------------------------------------------------------------------------


def test_the_list_is_kept_for_a_while(tmp_path, monkeypatch):
    fake_model(tmp_path / "m" / "one", GPT2)
    found = use_roots(monkeypatch, tmp_path / "m")
    fake_model(tmp_path / "m" / "two", GPT2)
    assert find_models() is found  # within SCAN_SECONDS: no new scan
    monkeypatch.setattr(models, "SCAN_SECONDS", 0.0)
    assert list(find_models()) == ["hf:one", "hf:two"]  # after it: the new folder is seen
    monkeypatch.setattr(models, "SCAN_SECONDS", 30.0)
    fake_model(tmp_path / "n" / "three", GPT2)
    monkeypatch.setenv(models.ENV_VAR, str(tmp_path / "n"))
    assert list(find_models()) == ["hf:three"]  # other roots: scanned again at once


# -- choosing by name only ----------------------------------------------------------------------------------


@pytest.fixture
def listed(tmp_path, monkeypatch):
    fake_model(tmp_path / "m" / "gpt2", GPT2)
    return use_roots(monkeypatch, tmp_path / "m")


def test_a_listed_value_is_chosen(listed):
    assert choice("hf:gpt2") is listed["hf:gpt2"]
    assert choice("hf:gpt2", listed) is listed["hf:gpt2"]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("/etc/passwd", "path"),
        ("hf:/etc/passwd", "path"),
        ("hf:../gpt2", "path"),
        ("hf:..", "path"),
        ("hf:gpt2/../../x", "path"),
        ("hf:~root", "path"),
        ("~/.ssh/id_rsa", "path"),
        ("hf:C:gpt2", "path"),
        ("C:\\Windows", "path"),
        ("hf:a\\b", "path"),
        ("hf:https://example.com/model", "path"),
        ("file:///etc/passwd", "path"),
        ("hf:gpt2\x00", "control"),
        ("hf:gpt2\n", "control"),
        ("hf:gpt2\u202e", "control"),  # right-to-left override
        ("hf:" + "a" * 5000, "long"),
        (None, "type"),
        (123, "type"),
        ("gpt2", "unknown"),  # the folder's name without hf:
        ("hf:GPT2", "unknown"),
        ("hf:gpt2 ", "unknown"),
        ("hf:", "unknown"),
        ("hf:<script>alert(1)</script>", "path"),  # its "/" is enough
        ("hf:<img src=x onerror=alert(1)>", "unknown"),
    ],
)
def test_tampered_values_are_refused(listed, value, reason):
    with pytest.raises(ModelChoiceError) as e:
        choice(value)
    assert e.value.reason == reason
    message = str(e.value)
    assert len(message) < 260
    if isinstance(value, str) and len(value) > 40:
        assert value[:41] not in message  # never more than a short form of it


def test_the_messages_say_what_was_refused(listed):
    with pytest.raises(
        ModelChoiceError,
        match=r"^Refused weights=`hf:\.\./x`: it looks like a path\. A model"
        r" is chosen by its name in the list \(hf:<name>\)",
    ):
        choice("hf:../x")
    with pytest.raises(ModelChoiceError) as e:
        choice("hf:`**bold**`<b>")
    assert str(e.value) == "No model `hf:ˋ**bold**ˋ<b>` was found. Found: `hf:gpt2`."  # inert Markdown
    with pytest.raises(ModelChoiceError) as e:
        choice("hf:" + "a" * 5000)
    assert str(e.value) == f"Refused weights=`hf:{'a' * 37}…`: 5,003 characters, at most 120."
    with pytest.raises(ModelChoiceError) as e:
        choice("hf:x\x1b[31m")
    assert str(e.value) == "Refused weights=`hf:x�[31m`: it holds control characters."
    with pytest.raises(ModelChoiceError, match=r"Found: none \(set GLASSBOX_MODELS\)\.$"):
        choice("hf:gpt2", {})


# -- the memory the server allows ----------------------------------------------------------------------


def test_a_model_too_big_is_refused_before_loading(listed):
    tiny = listed["hf:gpt2"]
    assert check_size(tiny, tiny.bytes_float32) is None
    assert check_size(tiny, tiny.bytes_float32 - 1) is not None
    small = dataclasses.replace(tiny, value="hf:gpt2-small", params=124_439_808)  # GPT-2 small's count
    assert check_size(small, 1536 * MB) is None
    assert check_size(small, 256 * MB) == (
        "`hf:gpt2-small` needs 475 MB in float32 (124,439,808 parameters); the server allows 256 MB"
        " (GLASSBOX_CACHE_MB)."
    )


def test_the_limit_is_the_cache_budget():
    assert models.memory_limit({"GLASSBOX_CACHE_MB": "3000"}) == 3000 * MB
    assert models.memory_limit({}) == 1536 * MB
