"""Llama and Qwen2 through our own core (core/loading/llama.py: RMSNorm, SwiGLU, grouped-query attention, RoPE
with HF's rotate-half pairing) against transformers' LlamaForCausalLM and Qwen2ForCausalLM, on tiny
random models saved with save_pretrained into tmp_path. The ids come from a byte-level BPE trained on
the project's corpus by `tokenizers` and saved as tokenizer.json, read here, outside core (core does
not read tokenizer.json). Nothing is downloaded.
"""

import pytest
import torch
import transformers
from tokenizers import ByteLevelBPETokenizer, Tokenizer

from core.loading.folder import load_folder
from core.model.config import ModelConfig
from core.model.positional import apply_rope
from core.model.transformer import Transformer
from core.tracing.generate import greedy
from tests.modelfolders import CORPUS, EOT

ATOL = 1e-4
TEXTS = [
    "Attention is all you need.",
    "注意力就是一切 Attention is all you need",
    "I ❤️ 🤗 emoji 😀👍🏽 and 🇫🇷",
]
SIZES = dict(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    initializer_range=0.2,  # larger than the usual 0.02: peaked attention, no near-ties in argmax
)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    """A byte-level BPE trained on the corpus, saved as tokenizer.json and read back (by `tokenizers`)."""
    path = tmp_path_factory.mktemp("llama_tokenizer") / "tokenizer.json"
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator([CORPUS], vocab_size=600, special_tokens=[EOT], show_progress=False)
    tok.save(str(path))
    return Tokenizer.from_file(str(path))


def _config(family: str, vocab: int, eot: int, **extra):
    cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config}[family]
    return cls(vocab_size=vocab, bos_token_id=eot, eos_token_id=eot, **SIZES, **extra)


# llama untied with biases (attention_bias, mlp_bias), qwen2 tied (its q/k/v biases are always there)
VARIANTS = {
    "llama": dict(family="llama", tie_word_embeddings=False, attention_bias=True, mlp_bias=True),
    "llama_plain": dict(family="llama", tie_word_embeddings=False, rope_theta=500000.0),
    "qwen2": dict(family="qwen2", tie_word_embeddings=True),
}


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def pair(request, tmp_path_factory, tokenizer):
    """(ours: model, tokenizer (None), info; theirs: the eager-attention *ForCausalLM)."""
    options = dict(VARIANTS[request.param])
    family = options.pop("family")
    eot = tokenizer.token_to_id(EOT)
    config = _config(family, tokenizer.get_vocab_size(), eot, **options)
    cls = {"llama": transformers.LlamaForCausalLM, "qwen2": transformers.Qwen2ForCausalLM}[family]
    torch.manual_seed(0)
    model = cls(config)
    with torch.no_grad():  # HF draws biases as zeros and norms as ones: random ones test them too
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    folder = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(folder)
    theirs = cls.from_pretrained(folder, attn_implementation="eager").eval()
    return load_folder(folder), theirs, family, options


def test_config_is_llama_in_our_terms(pair):
    (model, tok, info), theirs, family, options = pair
    c = model.config
    assert tok is None and info.family == family and not model.training
    assert (c.stack, c.d_model, c.num_heads, c.num_kv_heads, c.num_layers, c.d_ff) == (
        "decoder",
        32,
        4,
        2,
        2,
        64,
    )
    assert (c.positions, c.rope_pairing, c.norm, c.norm_kind, c.activation) == (
        "rope",
        "half",
        "pre",
        "rms",
        "swiglu",
    )
    assert c.rope_theta == options.get("rope_theta", 10000.0)
    attn = model.decoder.layers[0].self_attn
    assert attn.w_k.weight.shape == (16, 32)  # 2 key/value heads of d_k = 8
    assert (attn.w_q.bias is not None) == (family == "qwen2" or options.get("attention_bias", False))
    assert (attn.w_o.bias is not None) == options.get("attention_bias", False)
    assert model.generator.bias is None
    assert (model.generator.weight is model.tgt_embed.lookup.weight) == options["tie_word_embeddings"]


@pytest.mark.parametrize("text", TEXTS)
def test_every_layer_head_and_logit_equal_transformers(pair, tokenizer, text):
    (model, _, _), theirs, _, _ = pair
    ids = torch.tensor([tokenizer.encode(text).ids])
    tr = model.trace(ids)
    with torch.no_grad():
        out = theirs(input_ids=ids, output_attentions=True, output_hidden_states=True)
    # hidden states: the embedding, each layer's output, the last one after the final RMSNorm
    ours_hidden = [tr.tgt_embedded, *(layer.output for layer in tr.decoder[:-1]), tr.decoder_output]
    assert len(ours_hidden) == len(out.hidden_states) == 3
    for mine, ref in zip(ours_hidden, out.hidden_states, strict=True):
        torch.testing.assert_close(mine, ref, atol=ATOL, rtol=0)
    for layer, ref in zip(tr.decoder, out.attentions, strict=True):  # (1, h, T, T): every query head
        torch.testing.assert_close(layer.self_attn.weights, ref, atol=ATOL, rtol=0)
        # grouped-query attention: query heads 0, 1 read key head 0; heads 2, 3 key head 1
        k = layer.self_attn.k
        assert torch.equal(k[:, 0], k[:, 1]) and torch.equal(k[:, 2], k[:, 3])
    torch.testing.assert_close(tr.logits, out.logits, atol=ATOL, rtol=0)


@pytest.mark.parametrize("text", ["Attention is", "注意力", "😀👍🏽"])
def test_greedy_generation_equals_transformers(pair, tokenizer, text):
    (model, _, _), theirs, _, _ = pair
    eot = tokenizer.token_to_id(EOT)
    ids = torch.tensor([tokenizer.encode(text).ids])
    ref = theirs.generate(
        ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=12, pad_token_id=eot
    )
    ours = greedy(model, ids, 12, eos_id=eot)
    assert ours.tokens.tolist() == ref.tolist()
    assert len(set(ref[0, ids.size(1) :].tolist())) > 1  # a real continuation, not one token repeated


def test_batched_greedy_with_left_padding_equals_transformers(pair, tokenizer):
    (model, _, _), theirs, _, _ = pair
    eot = tokenizer.token_to_id(EOT)
    rows = [tokenizer.encode(t).ids for t in ["Attention is all", "注意力", "I ❤️ 🤗"]]
    width = max(len(r) for r in rows)
    ids = torch.tensor([[eot] * (width - len(r)) + r for r in rows])  # left padding
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    ref = theirs.generate(ids, attention_mask=mask, do_sample=False, max_new_tokens=10, pad_token_id=eot)
    ours = greedy(model, ids, 10, eos_id=eot, attention_mask=mask)
    assert ours.tokens.tolist() == ref.tolist()
    # RoPE counts a left-padded row's positions from its first real token: it reads as the row alone.
    # (The scores would agree anyway, a rotation by a shift common to q and k cancels in q·k; the
    # rotated q and k the trace shows would not.)
    tr = model.trace(ids, attention_mask=mask)
    for b, row in enumerate(rows):
        alone, pad = model.trace(torch.tensor([row])), width - len(row)
        torch.testing.assert_close(tr.logits[b, pad:], alone.logits[0], atol=ATOL, rtol=0)
        for mine, ref in zip(tr.decoder, alone.decoder, strict=True):
            torch.testing.assert_close(mine.self_attn.q[b, :, pad:], ref.self_attn.q[0], atol=ATOL, rtol=0)
            torch.testing.assert_close(mine.self_attn.k[b, :, pad:], ref.self_attn.k[0], atol=ATOL, rtol=0)


# -- the core options alone ------------------------------------------------------------------------


def test_rope_positions_per_row():
    x = torch.randn(2, 3, 5, 8)  # (B, h, L, d_k)
    positions = torch.tensor([[0, 1, 2, 3, 4], [0, 0, 0, 1, 2]])  # row 1: two pads, then 0, 1, 2
    out = apply_rope(x, positions, pairing="half")
    torch.testing.assert_close(out[0], apply_rope(x[0], pairing="half"))
    torch.testing.assert_close(out[1, :, 2:], apply_rope(x[1, :, 2:], pairing="half"))


def test_rope_half_pairing_is_the_interleaved_rotation_permuted():
    x = torch.randn(2, 5, 8)
    half_order = torch.tensor([0, 4, 1, 5, 2, 6, 3, 7])  # (i, i + d/2) placed side by side
    rotated = apply_rope(x[..., half_order], base=500.0)
    torch.testing.assert_close(apply_rope(x, base=500.0, pairing="half")[..., half_order], rotated)
    with pytest.raises(ValueError, match="pairing"):
        apply_rope(x, pairing="spiral")


def test_llama_options_validated_and_off_by_default():
    c = ModelConfig(50, 50, d_model=16, num_heads=4, d_ff=32)
    assert (c.norm_kind, c.num_kv_heads, c.rope_pairing, c.qkv_bias) == ("layer", None, "interleaved", True)
    for bad in (dict(norm_kind="batch"), dict(num_kv_heads=3), dict(rope_pairing="x"), dict(rope_theta=0.5)):
        with pytest.raises(ValueError):
            ModelConfig(50, 50, d_model=16, num_heads=4, encoder=False, pad_id=None, **bad)
    with pytest.raises(ValueError, match="need encoder=False"):  # an encoder's layers never read them
        ModelConfig(50, 50, d_model=16, num_heads=4, norm_kind="rms")
    llama = ModelConfig(
        50, 50, d_model=16, num_heads=4, d_ff=32, encoder=False, pad_id=None, norm="pre", positions="rope",
        activation="swiglu", norm_kind="rms", num_kv_heads=1, rope_pairing="half", qkv_bias=False,
    )  # fmt: skip
    drawn = Transformer(llama)
    assert torch.equal(drawn.decoder.norm.weight, torch.ones(16))  # RMSNorm's gain starts at 1
    model = Transformer.from_state_dict(llama, drawn.state_dict())
    assert model.trace(torch.randint(0, 50, (1, 6))).decoder[0].self_attn.weights.shape == (1, 4, 6, 6)
