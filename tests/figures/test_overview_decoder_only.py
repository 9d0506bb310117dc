"""A decoder-only model (GPT-2, Llama: ``encoder=False``) in the overview diagram and the Full model
page's figures: one row, no encoder or cross-attention, names from the config; the plotted numbers are
the trace's."""

import numpy as np
import pytest
import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tracing.generate import sample
from figures.model import (
    _cell,
    generation_table,
    hidden_formula,
    next_token_table,
    residual_stages,
    stream_norms,
)
from figures.overview import DiagramSizes, pipeline_diagram, stack_detail
from i18n import t

GPT2 = dict(positions="learned", activation="gelu_tanh", tie_embeddings=True)
LLAMA = dict(
    positions="rope",
    activation="swiglu",
    norm_kind="rms",
    num_kv_heads=2,
    rope_pairing="half",
    qkv_bias=False,
    out_bias=False,
    ffn_bias=False,
    generator_bias=False,
)


def config(**options) -> ModelConfig:
    return ModelConfig(
        src_vocab_size=40,
        tgt_vocab_size=40,
        d_model=16,
        num_heads=4,
        num_layers=2,
        d_ff=32,
        dropout=0.0,
        encoder=False,
        norm="pre",
        pad_id=None,
        scale_embeddings=False,
        **options,
    )


def annotations(fig) -> str:
    return " ".join(a.text or "" for a in fig.layout.annotations)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("options", [GPT2, LLAMA], ids=["gpt2", "llama"])
def test_one_row_without_encoder_or_cross_attention(options, lang):
    sizes = DiagramSizes.of_model(config(**options), 7, 7, "sentence")
    assert sizes.stack == "decoder"
    fig = pipeline_diagram(sizes, lang=lang)
    texts = annotations(fig)
    assert len([s for s in fig.layout.shapes if s.type == "rect"]) == 5  # five boxes, one row
    assert len({s.y0 for s in fig.layout.shapes if s.type == "rect"}) == 1
    assert t("overview.diagram.encoder", lang, n=2) not in texts
    assert t("overview.diagram.decoder_detail", lang) not in texts  # "masked self-attn, cross-attn, FFN"
    assert "cross-attn" not in texts and "memory" not in texts
    assert t("overview.diagram.no_encoder", lang) in texts
    assert t("overview.diagram.layer", lang, n=2) in texts
    assert "(1, 7, 40)" in texts  # the probabilities: T positions × vocabulary


def test_layer_box_names_the_configs_norm_activation_and_heads():
    gpt2 = DiagramSizes.of_model(config(**GPT2), 5, 5, "sentence")
    assert stack_detail(gpt2).split("<br>")[1:] == ["FFN: GELU (tanh)", "pre-LayerNorm → LayerNorm"]
    llama = DiagramSizes.of_model(config(**LLAMA), 5, 5, "sentence")
    assert stack_detail(llama).split("<br>")[1:] == ["FFN: SwiGLU", "pre-RMSNorm → RMSNorm"]
    assert "ReLU" not in annotations(pipeline_diagram(llama)) and "LayerNorm" not in annotations(
        pipeline_diagram(llama)
    )
    assert t("overview.diagram.gqa", "en", h=4, kv=2) in annotations(pipeline_diagram(llama))
    assert "key/value" not in annotations(pipeline_diagram(gpt2))
    assert "RoPE" in annotations(pipeline_diagram(llama))


def test_an_encoder_decoder_is_drawn_as_before():
    paper = ModelConfig(src_vocab_size=40, tgt_vocab_size=40, d_model=16, num_heads=4, num_layers=2, d_ff=32)
    texts = annotations(pipeline_diagram(DiagramSizes.of_model(paper, 5, 6, "greedy")))
    assert (
        t("overview.diagram.encoder", "en", n=2) in texts
        and t("overview.diagram.decoder", "en", n=2) in texts
    )
    assert t("overview.diagram.no_encoder", "en") not in texts


@pytest.fixture(scope="module")
def llama():
    torch.manual_seed(0)
    model = Transformer(config(**LLAMA)).eval()
    return model, model.trace(torch.tensor([[3, 1, 4, 1, 5, 9]]))


def test_residual_stages_of_a_stack_layer(llama):
    _, trace = llama
    layer = trace.decoder[1]
    stages = residual_stages(layer, 2, "pre", norm_kind="rms")
    assert [s.name for s in stages][1:4] == [
        "MultiHead(RMSNorm(x))",
        "x₁ = x + MultiHead(RMSNorm(x))",
        "FFN(RMSNorm(x₁))",
    ]
    np.testing.assert_allclose(stages[2].vector, layer.after_self_attn[0, 2].double().numpy(), atol=1e-6)
    np.testing.assert_allclose(stages[-1].vector, layer.output[0, 2].double().numpy(), atol=1e-6)


def test_stream_norms_of_one_stack(llama):
    _, trace = llama
    labels, norms = stream_norms(trace, final_norm=True, norm_kind="rms")
    assert labels[-1] == "RMSNorm → h" and len(labels) == 2 + 2 * 2
    np.testing.assert_allclose(norms[-1], trace.decoder_output[0].double().norm(dim=-1).numpy(), atol=1e-5)


def test_hidden_formula_follows_the_config():
    assert hidden_formula("relu") == "ReLU(xW₁+b₁)"
    assert hidden_formula("gelu_tanh") == "GELU(xW₁+b₁)"
    assert hidden_formula("swiglu", bias=False) == "SiLU(xW_g)⊙(xW₁)"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_next_token_table_is_the_softmax_of_the_logits(llama, lang):
    _, trace = llama
    tokens = [f"t{i}" for i in trace.tgt_ids[0].tolist()]
    labels = [f"w {i}" for i in range(40)]
    table = next_token_table(trace, tokens, labels, lang=lang)
    probs = torch.softmax(trace.logits[0].double(), -1)
    assert table[t("model.fig.next.best", lang)] == [_cell(labels[i]) for i in probs.argmax(-1).tolist()]
    assert table[t("model.fig.next.best", lang)][0].startswith("w␣")  # a space is shown
    np.testing.assert_allclose(
        table[t("model.fig.next.best_p", lang)], probs.max(-1).values.numpy(), atol=1e-9
    )
    actual = table[t("model.fig.next.actual_p", lang)]
    assert actual[-1] is None
    ids = trace.tgt_ids[0]
    np.testing.assert_allclose(
        actual[:-1], [probs[i, ids[i + 1]].item() for i in range(len(ids) - 1)], atol=1e-9
    )


def test_generation_table_reads_the_distribution_drawn_from(llama):
    model, _ = llama
    result = sample(model, torch.tensor([[3, 1, 4]]), 5, temperature=1.5, top_k=4, seed=11)
    labels = [f"w{i}" for i in range(40)]
    table = generation_table(result, labels, 3)
    ids = result.tokens[0, 3:].tolist()
    assert table[t("model.fig.gen.chosen", "en")] == [labels[i] for i in ids]
    assert table[t("model.fig.gen.kept", "en")] == [4] * len(ids)  # top-k = 4 kept
    assert table[t("model.fig.gen.p", "en")] == [
        float(p[0, i]) for p, i in zip(result.probs, ids, strict=True)
    ]
