"""GPT-2 through our own core (core/loading/gpt2.py, core/tokenizers/gpt2.py, core/tracing/generate.py)
against
transformers' GPT2LMHeadModel and the reference byte-level BPE, on a tiny random model saved with
save_pretrained into tmp_path, its tokenizer trained on the project's corpus. Nothing is downloaded.
"""

import json
from pathlib import Path

import pytest
import torch
import transformers
from tokenizers import ByteLevelBPETokenizer

from core.loading.folder import load_folder
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.gpt2 import GPT2Tokenizer
from core.tracing.generate import filter_logits, greedy, sample
from tests.modelfolders import CORPUS, EOT

ATOL = 1e-4

TEXTS = [
    "",
    CORPUS[:3000],
    "Attention is all you need.",
    "注意力就是一切 Attention is all you need",
    "I ❤️ 🤗 emoji 😀👍🏽 and 🇫🇷 👩‍👩‍👧",
    "def f(x):\n    return x ** 2  # square\n\n\nprint(f(3))",
    "  leading   spaces\t\ttabs \n\n trailing  ",
    "don't stop... it's 5'o clock, we'll see; they'd've",
    f"one{EOT}two {EOT} three",
    "Café naïve résumé Ångström 한국어 日本語のテキスト",
]
# a padded batch: English, Chinese, emoji (right padding, as GPT-2 is trained: positions 0, 1, ...)
SENTENCES = ["Attention is all you need.", "注意力就是一切 Attention", "I ❤️ 🤗 😀👍🏽", "Hi"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """vocab.json + merges.txt of a byte-level BPE trained on the corpus by `tokenizers`."""
    folder = tmp_path_factory.mktemp("gpt2_tokenizer")
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator([CORPUS], vocab_size=600, special_tokens=[EOT], show_progress=False)
    tok.save_model(str(folder))
    return folder


def _save_gpt2(folder: Path, tokenizer_folder: Path, safe: bool, **save) -> transformers.GPT2LMHeadModel:
    vocab = json.loads((tokenizer_folder / "vocab.json").read_text(encoding="utf-8"))
    config = transformers.GPT2Config(
        n_layer=2,
        n_head=4,
        n_embd=32,
        vocab_size=len(vocab),
        n_positions=64,
        bos_token_id=vocab[EOT],
        eos_token_id=vocab[EOT],
        initializer_range=0.2,  # larger than GPT-2's 0.02: peaked attention, no near-ties in argmax
    )
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).eval()
    model.save_pretrained(folder, safe_serialization=safe, **save)
    for name in ("vocab.json", "merges.txt"):
        (folder / name).write_bytes((tokenizer_folder / name).read_bytes())
    return model


@pytest.fixture(scope="module", params=["safetensors", "pytorch_model.bin"])
def pair(request, tmp_path_factory, trained):
    """(ours: model, tokenizer, info; theirs: the eager-attention GPT2LMHeadModel)."""
    folder = tmp_path_factory.mktemp(f"gpt2_{request.param}")
    _save_gpt2(folder, trained, safe=request.param == "safetensors")
    theirs = transformers.GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").eval()
    return load_folder(folder), theirs


# -- the tokenizer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TEXTS)
def test_gpt2_bpe_equals_the_references(trained, text):
    ours = GPT2Tokenizer.from_files(trained / "vocab.json", trained / "merges.txt")
    files = (str(trained / "vocab.json"), str(trained / "merges.txt"))
    ref = ByteLevelBPETokenizer(*files)
    ref.add_special_tokens([EOT])
    hf = transformers.GPT2Tokenizer(*files)
    ids = ours.encode(text)
    assert ids == ref.encode(text).ids == hf(text)["input_ids"]
    assert ours.tokenize(text) == hf.tokenize(text)
    assert ours.decode(ids) == text == hf.decode(ids)


def test_gpt2_tokenizer_ids_are_vocab_json(trained):
    vocab = json.loads((trained / "vocab.json").read_text(encoding="utf-8"))
    tok = GPT2Tokenizer.from_files(trained / "vocab.json", trained / "merges.txt")
    assert tok.token_to_id == vocab and len(tok) == len(vocab)
    assert tok.eos_id == vocab[EOT] and tok.special_tokens == [EOT]
    assert tok.encode(EOT, allow_special=False) != [vocab[EOT]]  # then it is plain text


# -- loading ---------------------------------------------------------------------------------------


def test_config_is_gpt2_in_our_terms(pair):
    (model, tok, info), theirs = pair
    c = model.config
    assert (c.stack, c.d_model, c.num_heads, c.num_layers, c.d_ff, c.max_len) == (
        "decoder",
        32,
        4,
        2,
        128,
        64,
    )
    assert (c.positions, c.norm, c.activation, c.scale_embeddings, c.tie_embeddings) == (
        "learned",
        "pre",
        "gelu_tanh",
        False,
        True,
    )
    assert model.encoder is None and model.src_embed is None and model.generator.bias is None
    assert model.generator.weight is model.tgt_embed.lookup.weight  # tied
    assert (info.family, info.architecture) == ("gpt2", "GPT2LMHeadModel")
    assert info.weights_file in ("model.safetensors", "pytorch_model.bin")
    assert len(tok) == c.tgt_vocab_size and not model.training and c.pad_id is None


def test_end_of_text_inside_a_text_is_a_token_not_padding(pair):
    (model, tok, _), theirs = pair
    ids = torch.tensor([tok.encode(f"one{EOT}two {EOT} three")])
    assert (ids == tok.eos_id).sum() == 2
    with torch.no_grad():
        torch.testing.assert_close(model.trace(ids).logits, theirs(ids).logits, atol=ATOL, rtol=0)


def test_sharded_weights_are_read(tmp_path, trained):
    theirs = _save_gpt2(tmp_path, trained, safe=True, max_shard_size="20KB")
    assert len(list(tmp_path.glob("model-*.safetensors"))) > 1
    ours, _, info = load_folder(tmp_path)
    assert info.weights_file == "model.safetensors.index.json"
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        torch.testing.assert_close(ours.trace(ids).logits, theirs(ids).logits, atol=ATOL, rtol=0)


def test_unsupported_architecture_is_named(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "mamba", "architectures": ["MambaForCausalLM"]})
    )
    with pytest.raises(ValueError) as e:
        load_folder(tmp_path)
    assert str(e.value) == (
        f"{tmp_path.name}: model_type='mamba' (MambaForCausalLM) is not supported; "
        "supported: bert, gpt2, llama, qwen2"
    )


# -- every number ----------------------------------------------------------------------------------


def _batch(tok, texts):
    rows = [tok.encode(t) for t in texts]
    width = max(len(r) for r in rows)
    ids = torch.tensor([r + [tok.eos_id] * (width - len(r)) for r in rows])  # (B, T)
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])  # 1 = real token
    return ids, mask


def test_every_layer_head_and_logit_equal_transformers(pair):
    (model, tok, _), theirs = pair
    ids, mask = _batch(tok, SENTENCES)
    tr = model.trace(ids, attention_mask=mask)
    with torch.no_grad():
        out = theirs(input_ids=ids, attention_mask=mask, output_attentions=True, output_hidden_states=True)
    assert tr.encoder == [] and tr.memory is None and tr.src_ids is None
    assert all(layer.cross_attn is None for layer in tr.decoder)
    assert tr.logits.shape == (*ids.shape, model.config.tgt_vocab_size)
    real = mask.bool()
    # hidden states: the embedding sum, each block's output, and the last one after ln_f
    ours_hidden = [tr.tgt_embedded, *(layer.output for layer in tr.decoder[:-1]), tr.decoder_output]
    assert len(ours_hidden) == len(out.hidden_states) == 3
    for mine, ref in zip(ours_hidden, out.hidden_states, strict=True):
        torch.testing.assert_close(mine[real], ref[real], atol=ATOL, rtol=0)
    for layer, ref in zip(tr.decoder, out.attentions, strict=True):  # (B, h, T, T) per layer
        for b in range(ids.size(0)):
            n = int(mask[b].sum())
            torch.testing.assert_close(
                layer.self_attn.weights[b, :, :n, :n], ref[b, :, :n, :n], atol=ATOL, rtol=0
            )
        assert not layer.self_attn.mask[:, :, 0, 1:].any()  # causal: the first token sees itself only
    torch.testing.assert_close(tr.logits[real], out.logits[real], atol=ATOL, rtol=0)
    # a padded row's real positions read as the row alone
    alone = model.trace(ids[3:, : int(mask[3].sum())])
    torch.testing.assert_close(alone.logits[0], tr.logits[3, : int(mask[3].sum())], atol=ATOL, rtol=0)


@pytest.mark.parametrize("text", ["Attention is", "注意力", "😀👍🏽"])
def test_greedy_generation_equals_transformers(pair, text):
    (model, tok, _), theirs = pair
    ids = torch.tensor([tok.encode(text)])
    ref = theirs.generate(
        ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=12, pad_token_id=tok.eos_id
    )
    ours = greedy(model, ids, 12, eos_id=tok.eos_id)
    assert ours.tokens.tolist() == ref.tolist()
    assert len(set(ref[0, ids.size(1) :].tolist())) > 1  # a real continuation, not one token repeated
    assert len(ours.steps) == len(ours.probs) == ours.tokens.size(1) - ids.size(1)
    step = ours.steps[-1]  # the trace of the run that chose the last token
    assert step.tgt_ids.size(1) == ours.tokens.size(1) - 1


def test_batched_greedy_with_left_padding_equals_transformers(pair):
    (model, tok, _), theirs = pair
    rows = [tok.encode(t) for t in ["Attention is all", "注意力", "I ❤️ 🤗"]]
    width = max(len(r) for r in rows)
    ids = torch.tensor([[tok.eos_id] * (width - len(r)) + r for r in rows])  # left padding
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    ref = theirs.generate(
        ids, attention_mask=mask, do_sample=False, max_new_tokens=10, pad_token_id=tok.eos_id
    )
    ours = greedy(model, ids, 10, eos_id=tok.eos_id, attention_mask=mask)
    assert ours.tokens.tolist() == ref.tolist()
    # a left-padded row's real positions read as the row alone (its positions start at 0)
    tr = model.trace(ids, attention_mask=mask)
    alone = model.trace(torch.tensor([rows[1]]))
    torch.testing.assert_close(tr.logits[1, width - len(rows[1]) :], alone.logits[0], atol=ATOL, rtol=0)


# -- sampling --------------------------------------------------------------------------------------


def test_sampling_is_determined_by_the_seed(pair):
    (model, tok, _), _ = pair
    ids = torch.tensor([tok.encode("Attention")] * 2)
    kwargs = dict(temperature=1.5, top_k=50, top_p=0.9)
    a, b = (sample(model, ids, 10, seed=7, **kwargs) for _ in range(2))
    assert torch.equal(a.tokens, b.tokens)
    c = sample(model, ids, 10, seed=8, **kwargs)
    assert not torch.equal(a.tokens, c.tokens)  # another seed, other tokens (at τ = 1.5 over 600 tokens)
    for p in a.probs:  # at most 50 tokens kept, a distribution
        assert ((p > 0).sum(-1) <= 50).all() and torch.allclose(p.sum(-1), torch.ones(2))


def test_greedy_is_temperature_zero_and_top_k_one(pair):
    (model, tok, _), _ = pair
    ids = torch.tensor([tok.encode("注意力 Attention")])
    expected = greedy(model, ids, 8).tokens
    assert torch.equal(sample(model, ids, 8, temperature=1e-6, seed=3).tokens, expected)
    assert torch.equal(sample(model, ids, 8, top_k=1, seed=3).tokens, expected)


def test_filter_logits_top_p_keeps_the_nucleus():
    logits = torch.tensor([[0.5, 0.3, 0.15, 0.05]]).log()
    p = filter_logits(logits, top_p=0.75)  # 0.5 < 0.75 ≤ 0.5 + 0.3: the first two
    torch.testing.assert_close(p, torch.tensor([[0.625, 0.375, 0.0, 0.0]]))
    assert filter_logits(logits, temperature=0).tolist() == [[1.0, 0.0, 0.0, 0.0]]


# -- the core options alone ------------------------------------------------------------------------


def test_decoder_only_model_from_config():
    c = ModelConfig(50, 50, d_model=16, num_heads=2, d_ff=32, encoder=False, tie_embeddings=True, norm="pre")
    model = Transformer(c).eval()
    ids = torch.randint(1, 50, (2, 7))
    tr = model.trace(ids)
    torch.testing.assert_close(model(ids), tr.logits)
    assert tr.decoder[0].self_attn.weights.shape == (2, 2, 7, 7) and tr.positional.shape == (7, 16)
    prefix = tr.target_prefix(3)
    assert prefix.logits.shape == (2, 3, 50) and prefix.decoder[1].cross_attn is None
    with pytest.raises(ValueError, match="decoder only"):
        model.trace(ids, ids)
    with pytest.raises(ValueError, match="for a decoder-only model"):
        ModelConfig(50, 50, pad_id=None)
    with pytest.raises(ValueError, match="at least one stack"):
        ModelConfig(50, 50, encoder=False, decoder=False)
