"""Model folders in the app (issue 29, part 5): offered in the sidebar as ``hf:<name>``, named by a URL
only by that value, refused with the reason (a path, an unknown name, an unsupported architecture, too
big for the server's memory, unreadable files) before anything is loaded, in both languages; the badge
says where the weights come from and what the model lacks of the paper's, from its configuration.
"""

import json

import pytest
from apphelpers import assert_clean, badges, messages, open_page, plotly_specs

from ui.folders.hf_pipeline import ModelUnusable, check, load_model
from ui.folders.models import find_models

BIG = {  # a config.json whose float32 weights need ~6 GB: refused before its weights are read
    "model_type": "gpt2",
    "architectures": ["GPT2LMHeadModel"],
    "n_layer": 48,
    "n_head": 25,
    "n_embd": 1600,
    "vocab_size": 50257,
    "n_positions": 1024,
}


@pytest.fixture
def extra_folders(model_folders, tmp_path, monkeypatch):
    """The tiny models plus: a huge one (config only; its weights file is not a safetensors file), an
    unsupported T5 and a GPT-2 whose weights file is corrupt."""
    other = tmp_path / "more"
    for name, config in (
        ("huge-gpt2", BIG),
        ("t5-small", {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"]}),
        ("broken-gpt2", json.loads((model_folders / "gpt2-tiny" / "config.json").read_text())),
    ):
        (other / name).mkdir(parents=True)
        (other / name / "config.json").write_text(json.dumps(config))
        (other / name / "model.safetensors").write_bytes(b"\x01not a safetensors file")
    for part in ("vocab.json", "merges.txt"):
        (other / "broken-gpt2" / part).write_bytes((model_folders / "gpt2-tiny" / part).read_bytes())
    monkeypatch.setenv("GLASSBOX_MODELS", f"{model_folders}:{other}")
    find_models(refresh=True)
    return other


def _weights_radio(at):
    return next(r for r in at.radio if r.key == "weights")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sidebar_offers_supported_folders_and_names_the_others(extra_folders, lang):
    at = open_page("pages/tokenization.py", {"lang": lang})
    assert_clean(at)
    options = _weights_radio(at).options
    for name in ("gpt2-tiny", "qwen2-tiny", "bert-tiny", "huge-gpt2", "broken-gpt2"):
        assert any(name in option for option in options), (name, options)
    assert not any("t5-small" in option for option in options)
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "hf:t5-small" in captions and (
        "not usable" in captions if lang == "en" else "无法使用" in captions
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["gpt2-tiny", "qwen2-tiny"])
def test_badge_says_where_the_weights_come_from_and_what_the_paper_has(model_folders, name, lang):
    at = open_page("pages/tokenization.py", {"lang": lang}, weights=f"hf:{name}")
    assert_clean(at)
    badge = " ".join(badges(at))
    assert name in badge and ("model folder" if lang == "en" else "模型文件夹") in badge
    text = badge + " ".join(c.value for c in at.caption)
    for word in ("pretrained", "random", "trained", "预训练", "随机"):
        assert word not in text.replace("Weights:", ""), word  # a folder's weights may be either
    paper = next(c.value for c in at.caption if ("paper" in c.value or "论文" in c.value))
    assert ("no encoder" if lang == "en" else "没有编码器") in paper
    if name == "qwen2-tiny":
        assert "RMSNorm" in paper and "SwiGLU" in paper and "RoPE" in paper
        assert (
            "4 query heads, 2 key/value" if lang == "en" else "4 个查询头共享 2 个键/值头"
        ) in paper
    else:
        assert "GELU" in paper and "RMSNorm" not in paper
        assert ("learned position embeddings" if lang == "en" else "学习得到的位置嵌入") in paper
    info = " ".join(i.value for i in at.sidebar.info)
    assert "d_model=32" in info and ("model folder" if lang == "en" else "模型文件夹") in info


@pytest.mark.parametrize(
    "value, en, zh",
    [
        ("hf:../../etc/passwd", "looks like a path", "看起来像路径"),
        ("hf:/etc", "looks like a path", "看起来像路径"),
        ("hf:nope", "no model of that name was found", "没有找到这个名称的模型"),
        ("hf:t5-small", "T5ForConditionalGeneration", "T5ForConditionalGeneration"),
        ("hf:huge-gpt2", "the server allows", "服务器只允许"),
        ("hf:a\u202eb", "control characters", "控制字符"),
    ],
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_url_naming_no_usable_model_is_refused_with_the_reason(extra_folders, value, en, zh, lang):
    at = open_page("pages/attention.py", {"lang": lang}, weights=value)
    assert_clean(at)
    notices = " ".join(messages(at))
    assert (en if lang == "en" else zh) in notices, notices
    assert _weights_radio(at).value in ("trained", "random")  # the app's own weights instead
    assert at.query_params.get("weights") in (None, "random", ["random"])
    if value == "hf:nope":
        assert "hf:gpt2-tiny" in notices  # what was found, to choose from
    if value == "hf:t5-small":
        assert "LlamaForCausalLM" in notices and "GPT2LMHeadModel" in notices  # what is supported


def test_too_big_is_refused_before_its_weights_are_read(extra_folders):
    with pytest.raises(ModelUnusable) as refused:
        check("hf:huge-gpt2")
    assert refused.value.reason == "too_big"
    assert "MB in float32" in str(refused.value) and "GLASSBOX_CACHE_MB" in str(refused.value)
    # the same folder's corrupt weights, had they been read, would have said "unreadable"
    with pytest.raises(ModelUnusable) as unreadable:
        load_model("hf:broken-gpt2")
    assert unreadable.value.reason == "unreadable"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_unreadable_weights_are_said_and_the_app_goes_on(extra_folders, lang):
    at = open_page("pages/overview.py", {"lang": lang}, weights="hf:broken-gpt2")
    assert_clean(at)
    notices = " ".join(messages(at))
    assert "hf:broken-gpt2" in notices
    assert ("could not be used" if lang == "en" else "无法使用") in notices
    assert _weights_radio(at).value in ("trained", "random")


def test_loading_reports_progress_to_the_end(model_folders):
    heard = []
    pipe = load_model("hf:qwen2-tiny", lambda fraction, what: heard.append((fraction, what)))
    fractions = [f for f, _ in heard]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(heard) >= 3
    assert heard[0][1] == "model.safetensors"
    assert pipe.name == "hf:qwen2-tiny" and pipe.config.num_kv_heads == 2


def test_a_url_with_a_model_folder_reproduces_it(model_folders):
    at = open_page("pages/tokenization.py", weights="hf:qwen2-tiny")
    assert_clean(at)
    assert at.query_params["weights"] in ("hf:qwen2-tiny", ["hf:qwen2-tiny"])
    assert _weights_radio(at).value == "hf:qwen2-tiny"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["gpt2-tiny", "qwen2-tiny", "bert-tiny"])
def test_tokenization_page_shows_the_models_own_pieces(model_folders, name, lang):
    """The real tokenizer's pieces and ids, first on the page, equal to the tokenizer's own."""
    from ui.folders.hf_tokenizer import folder_tokenizer

    sentence = "注意力就是一切 Attention is all you need 😀"
    at = open_page("pages/tokenization.py", {"lang": lang, "sentence": sentence}, weights=f"hf:{name}")
    assert_clean(at)
    pipe = load_model(f"hf:{name}")
    core_tokenizer = None
    if name != "qwen2-tiny":  # GPT-2 and BERT: core's own tokenizers, as the loader uses them
        from core.loading.folder import load_folder

        core_tokenizer = load_folder(model_folders / name)[1]
    labels, ids = folder_tokenizer(model_folders / name, pipe.family, core_tokenizer).labelled(sentence)
    assert name in at.subheader[0].value  # the model's own tokenizer comes first
    shown_ids = " ".join(map(str, ids))
    assert any(shown_ids in c.value for c in at.code), "the ids the model reads"
    boxes = json.dumps(plotly_specs(at)[0], ensure_ascii=False)  # the first figure: the model's pieces
    assert all(json.dumps(label, ensure_ascii=False)[1:-1] in boxes for label in labels)
    assert pipe.tokenizer_kind in " ".join(c.value for c in at.caption)
    assert (labels, ids) == pipe.src_encode(sentence)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["gpt2-tiny", "bert-tiny"])
def test_a_one_stack_model_reads_no_target_and_the_sidebar_says_so(model_folders, name, lang):
    at = open_page("pages/masks.py", {"lang": lang, "target": "ignored"}, weights=f"hf:{name}")
    assert_clean(at)
    target = next(a for a in at.text_area if a.key == "target")
    sentence = next(a for a in at.text_area if a.key == "sentence")
    assert target.disabled and ("Not read" if lang == "en" else "不读取") in target.placeholder
    if name == "gpt2-tiny":  # one causal stack: the sentence is not an encoder's input
        assert sentence.label == ("Sentence (the model's input)" if lang == "en" else "句子（模型的输入）")


@pytest.mark.parametrize("payload", ["<script>alert(1)</script>", "[click](http://example.com)", "nan", "-5"])
def test_tampered_generation_values_are_inert(model_folders, payload):
    """The generation tab's own URL values (gen_*) tampered: a message, never a traceback or Markdown."""
    from test_security import assert_inert

    keys = ("gen_temperature", "gen_top_k", "gen_top_p", "gen_seed", "gen_tokens", "gen_step")
    query = {key: payload for key in keys}
    at = open_page("pages/model.py", {**query, "model_view": "decoding"}, weights="hf:gpt2-tiny")
    if payload.startswith(("<", "[")):
        assert_inert(at, payload, "generation")
    assert_clean(at)
    assert any("gen_" in m for m in messages(at)), messages(at)


def test_no_pad_token_is_named_where_the_model_has_none(model_folders):
    """GPT-2 has no [PAD]: the Masks page names the filler it really uses, and the sidebar says the
    model's own depth and its size in parameters."""
    from ui.folders.models import find_models

    at = open_page("pages/masks.py", weights="hf:gpt2-tiny")
    assert_clean(at)
    assert not any("[PAD]" in m.value for m in at.markdown)
    layers = next(s for s in at.sidebar.slider if s.key == "num_layers")
    assert layers.label == "Layers N (of its one stack)" and layers.value == 2
    params = find_models()["hf:gpt2-tiny"].params
    assert f"gpt2-tiny (model folder, {params:,})" in _weights_radio(at).options
