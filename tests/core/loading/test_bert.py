"""A BERT folder through our own core (core/loading/bert.py, core/tokenizers/wordpiece.py) against
transformers' BertModel and BertTokenizer, on tiny random models saved with save_pretrained into
tmp_path, their WordPiece trained on the project's corpus by `tokenizers`. Nothing is downloaded.
"""

import json
import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never ask the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import transformers  # noqa: E402
from tokenizers import BertWordPieceTokenizer  # noqa: E402

from core.loading.bert import bert_state_dict  # noqa: E402
from core.loading.folder import load_folder  # noqa: E402
from core.tokenizers.wordpiece import normalize  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CORPUS = (ROOT / "assets" / "corpus" / "en_zh.txt").read_text(encoding="utf-8")
EMOJI = list("❤🤗😀👍🏽🇫🇷👩‍👧")  # single code points, so each is a word piece of its own
ATOL = 1e-4

TEXTS = [
    "",
    CORPUS[:2000],
    "Attention is all you need.",
    "注意力就是一切 Attention is all you need",
    "I ❤️ 🤗 emoji 😀👍🏽 and 🇫🇷 👩‍👩‍👧",
    "Café naïve résumé Ångström ÉCOLE Zürich",
    "don't stop... (really?) $5+3=8 a/b_c #tag",
    "[CLS] a [MASK] b [SEP] [UNK]x[PAD]",
    "tab\tnew\nline\u3000ideographic",
]
# a padded batch: English, Chinese, emoji (BERT pads on the right with [PAD] = id 0)
SENTENCES = ["Attention is all you need.", "注意力就是一切 Attention 😀", "I ❤️ 🤗 😀👍🏽", "Hi"]

# (architecture, weights file, tokenizer_config.json switches, vocab.txt or tokenizer.json alone)
FOLDERS = [
    ("BertModel", "safetensors", {}, "vocab.txt"),
    ("BertModel", "pytorch_model.bin", {"do_lower_case": False}, "vocab.txt"),
    (
        "BertForMaskedLM",
        "safetensors",
        {"do_lower_case": False, "tokenize_chinese_chars": False},
        "vocab.txt",
    ),
    ("BertForPreTraining", "pytorch_model.bin", {"strip_accents": False}, "tokenizer.json"),
    ("BertLMHeadModel", "safetensors", {}, "vocab.txt"),  # is_decoder=False: bidirectional
]


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    """vocab.txt of a cased WordPiece trained on the corpus (Chinese inside) plus emoji."""
    folder = tmp_path_factory.mktemp("wordpiece")
    tok = BertWordPieceTokenizer(lowercase=False)
    tok.train_from_iterator(
        [CORPUS, " ".join(EMOJI)], vocab_size=800, initial_alphabet=EMOJI, show_progress=False
    )
    tok.save_model(str(folder))
    return folder / "vocab.txt"


def _save_bert(
    folder: Path, vocab_file: Path, architecture: str, weights: str, switches: dict, vocab_from: str
):
    vocab = vocab_file.read_text(encoding="utf-8").splitlines()
    config = transformers.BertConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        vocab_size=len(vocab),
        max_position_embeddings=64,
        initializer_range=0.2,  # larger than BERT's 0.02: peaked attention that tells heads apart
    )
    torch.manual_seed(0)
    model = getattr(transformers, architecture)(config).eval()
    model.save_pretrained(folder, safe_serialization=weights == "safetensors")
    # transformers 5 writes tokenizer.json + tokenizer_config.json; a Hub folder has vocab.txt
    transformers.BertTokenizer(str(vocab_file), **switches).save_pretrained(folder)
    if vocab_from == "vocab.txt":
        (folder / "tokenizer.json").unlink()
        (folder / "vocab.txt").write_bytes(vocab_file.read_bytes())
    return model


@pytest.fixture(scope="module", params=FOLDERS, ids=lambda p: f"{p[0]}-{p[1]}-{p[3]}")
def pair(request, tmp_path_factory, vocab_file):
    """(ours: model, tokenizer, info; theirs: the eager-attention BertModel; their tokenizer)."""
    architecture = request.param[0]
    folder = tmp_path_factory.mktemp(f"bert_{architecture}")
    _save_bert(folder, vocab_file, *request.param)
    theirs = getattr(transformers, architecture).from_pretrained(folder, attn_implementation="eager")
    theirs = theirs.eval() if architecture == "BertModel" else theirs.bert.eval()
    return load_folder(folder), theirs, transformers.BertTokenizer.from_pretrained(folder)


# -- the tokenizer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TEXTS)
def test_wordpiece_equals_bert_tokenizer(pair, text):
    (_, tok, _), _, ref = pair
    assert tok.tokenize(text) == ref.tokenize(text)
    assert tok.encode(text) == ref(text)["input_ids"]


def test_tokenizer_config_switches_are_read(pair):
    (_, tok, _), _, ref = pair
    assert tok.normalizer["lowercase"] == ref.do_lower_case
    assert tok.normalizer["chinese_chars"] == ref.tokenize_chinese_chars
    assert tok.normalizer["strip_accents"] == ref.strip_accents
    # the trained vocabulary has the corpus's Chinese characters and the emoji: no [UNK] to hide behind
    assert tok.tokenize("注 意 😀") == ref.tokenize("注 意 😀") == ["注", "意", "😀"]


def test_normalize_switches():
    assert normalize("Héllo 你好") == "hello  你  好 "
    assert normalize("Héllo 你好", lowercase=False) == "Héllo  你  好 "
    assert normalize("Héllo 你好", lowercase=False, strip_accents=True) == "Hello  你  好 "
    assert normalize("Héllo 你好", chinese_chars=False, strip_accents=False) == "héllo 你好"


# -- loading ---------------------------------------------------------------------------------------


def test_config_is_bert_in_our_terms(pair):
    (model, tok, info), theirs, _ = pair
    c = model.config
    assert (c.d_model, c.num_heads, c.num_layers, c.d_ff, c.max_len) == (32, 4, 2, 64, 64)
    assert (c.positions, c.norm, c.activation, c.embed_norm, c.final_norm) == (
        "learned",
        "post",
        "gelu",
        True,
        False,
    )
    assert model.decoder is None and model.generator is None and not model.training
    assert info.family == "bert" and info.weights_file in ("model.safetensors", "pytorch_model.bin")
    assert info.architecture in ("BertModel", "BertForMaskedLM", "BertForPreTraining", "BertLMHeadModel")
    assert len(tok) == c.src_vocab_size and (tok.pad_id, c.pad_id) == (0, 0)


def test_heads_and_old_names_are_mapped():
    w = torch.zeros(2)
    weights = {
        "bert.embeddings.LayerNorm.gamma": w,  # TensorFlow-era names (bert-base-chinese's .bin)
        "bert.embeddings.LayerNorm.beta": w,
        "cls.predictions.bias": w,
        "cls.seq_relationship.weight": w,
        "bert.pooler.dense.bias": w,
    }
    assert list(bert_state_dict(weights)) == ["src_embed.norm.weight", "src_embed.norm.bias"]


def test_causal_bert_is_refused(tmp_path, vocab_file):
    _save_bert(tmp_path, vocab_file, "BertModel", "safetensors", {}, "vocab.txt")
    config = json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps({**config, "is_decoder": True}))
    with pytest.raises(ValueError, match="only BERT's bidirectional encoder"):
        load_folder(tmp_path)


# -- every number ----------------------------------------------------------------------------------


def test_every_layer_and_every_head_equal_transformers(pair):
    (model, tok, _), theirs, ref = pair
    rows = [tok.encode(s) for s in SENTENCES]
    assert rows == [ref(s)["input_ids"] for s in SENTENCES]
    lengths = [len(r) for r in rows]
    width = max(lengths)
    ids = torch.tensor([r + [tok.pad_id] * (width - len(r)) for r in rows])  # (B, S)
    mask = (ids != tok.pad_id).long()  # BERT: 1 = real token
    assert mask.sum(1).tolist() == lengths and len(set(lengths)) > 1  # real padding in the batch

    tr = model.trace(ids)
    with torch.no_grad():
        out = theirs(input_ids=ids, attention_mask=mask, output_hidden_states=True, output_attentions=True)
    assert len(tr.encoder) == len(out.attentions) == 2 and tr.decoder == [] and tr.logits is None
    real = mask.bool()
    ours_hidden = [tr.src_embedded, *(layer.output for layer in tr.encoder)]
    assert len(ours_hidden) == len(out.hidden_states)
    for mine, hf in zip(ours_hidden, out.hidden_states, strict=True):
        torch.testing.assert_close(mine[real], hf[real], atol=ATOL, rtol=0)
    for layer, hf in zip(tr.encoder, out.attentions, strict=True):  # (B, h, S, S) per layer
        for b, n in enumerate(lengths):
            torch.testing.assert_close(
                layer.self_attn.weights[b, :, :n, :n], hf[b, :, :n, :n], atol=ATOL, rtol=0
            )
            assert torch.all(layer.self_attn.weights[b, :, :, n:] == 0)  # padding is never attended
    torch.testing.assert_close(tr.memory[real], out.last_hidden_state[real], atol=ATOL, rtol=0)


def test_minilm_is_one_of_them():
    """all-MiniLM-L6-v2's folder (the optional extra) through load_folder is load_minilm's model."""
    from core.loading.bert import load_minilm, minilm_directory

    model, tok, info = load_folder(minilm_directory())
    assert (info.family, info.architecture, info.weights_file) == ("bert", "BertModel", "model.safetensors")
    reference, reference_tok = load_minilm()
    ids = torch.tensor([tok.encode("Attention 注意力 😀")])
    assert ids[0].tolist() == reference_tok.encode("Attention 注意力 😀")
    assert torch.equal(model.trace(ids).memory, reference.trace(ids).memory)
