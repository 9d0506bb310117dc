"""What a model folder lacks of the paper's Transformer (ui/page/sidebar.py ``paper_differences``), checked
per family against the model really loaded: an output matrix of its own where the paper ties it to the
embedding (section 3.4), no feed-forward biases where the paper has b₁ and b₂ (equation 2). The caption
is chosen from the configuration, so it is the same on every page, in English and 中文.

Families: GPT-2 (tied, biases), Llama (untied, no bias), Qwen2 (tied, no feed-forward bias), BERT (an
encoder only: no output layer to tie), each a tiny random folder saved by transformers itself.
"""

from __future__ import annotations

import pytest
from apphelpers import assert_clean, open_page

from core.loading.folder import load_folder
from i18n import t
from tests.modelfolders import make_model_folders
from ui.folders.models import find_models
from ui.page.sidebar import paper_differences

FOLDERS = ("gpt2-tiny", "qwen2-tiny", "bert-tiny", "llama-tiny")
PAGES = ("pages/tokenization.py", "pages/attention.py")


@pytest.fixture(scope="module")
def llama_root(tmp_path_factory):
    return make_model_folders(tmp_path_factory.mktemp("llama"), names=("llama-tiny",))


@pytest.fixture
def folders(model_folders, llama_root, monkeypatch):
    """The tiny GPT-2, Qwen2 and BERT folders, and a Llama with an untied output matrix."""
    monkeypatch.setenv("GLASSBOX_MODELS", f"{model_folders}:{llama_root}")
    find_models(refresh=True)
    return {name: (llama_root if name == "llama-tiny" else model_folders) / name for name in FOLDERS}


def facts(model) -> tuple[bool, bool]:
    """(the output matrix is the embedding's own tensor, the feed-forward layers have biases), read
    from the loaded weights, not from the configuration."""
    c = model.config
    layer = (model.decoder if c.decoder else model.encoder).layers[0]
    tied = c.decoder and model.generator.weight is model.tgt_embed.lookup.weight
    biased = layer.ffn.linear1.bias is not None and layer.ffn.linear2.bias is not None
    return tied, biased


# what each family is, from transformers' own saved config: (tied output matrix, feed-forward biases)
EXPECTED = {"gpt2-tiny": (True, True), "qwen2-tiny": (True, False), "bert-tiny": (False, True),
            "llama-tiny": (False, False)}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", FOLDERS)
def test_the_caption_says_what_the_loaded_model_lacks(folders, name, lang):
    model, _, _ = load_folder(folders[name])
    tied, biased = facts(model)
    assert (tied, biased) == EXPECTED[name]  # the folders are what this test means them to be
    text = paper_differences(model.config, name, lang)
    untied = t("models.paper.untied", lang)
    no_bias = t("models.paper.no_ffn_bias", lang)
    has_output_layer = model.config.decoder
    assert (untied in text) == (has_output_layer and not tied), text
    assert (no_bias in text) == (not biased), text
    if not has_output_layer:  # BERT: the caption says there is no output layer at all
        assert t("models.paper.encoder", lang) in text


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", FOLDERS)
def test_the_caption_on_screen_is_the_same_on_every_page(folders, name, lang):
    model = load_folder(folders[name])[0]
    expected = paper_differences(model.config, name, lang)
    for page in PAGES:
        at = open_page(page, {"lang": lang}, weights=f"hf:{name}")
        assert_clean(at)
        captions = [c.value for c in at.caption]
        assert expected in captions, (page, captions)
