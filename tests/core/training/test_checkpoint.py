"""Checkpoints: round trip, refusal of anything that is not ours, and the shipped pinyin model."""

from pathlib import Path

import pytest
import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.vocab import Vocab
from core.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from core.training.pairs import encode_source, load_pinyin_pairs, load_task, make_batch
from core.training.seq2seq import evaluate

ASSET = Path(__file__).resolve().parents[3] / "assets" / "pinyin.pt"


@pytest.fixture
def saved(tmp_path):
    vocabs = Vocab(list("abc")), Vocab(list("xyz"))
    sizes = dict(d_model=16, num_heads=2, num_layers=1, d_ff=32, seed=3)
    config = ModelConfig(len(vocabs[0]), len(vocabs[1]), **sizes)
    model = Transformer(config).eval()
    path = tmp_path / "m.pt"
    save_checkpoint(path, model, vocabs, "copy", {"test_token_acc": 0.5})
    return path, model, vocabs


def logits(model):
    return model(torch.tensor([[5, 6, 7]]), torch.tensor([[2, 5, 6]]))


def test_round_trip_gives_the_same_logits(saved):
    path, model, vocabs = saved
    loaded, (src, tgt), task, metrics = load_checkpoint(path)
    assert torch.equal(logits(loaded), logits(model)) and not loaded.training
    assert loaded.config == model.config
    assert (src.itos, tgt.itos) == (vocabs[0].itos, vocabs[1].itos)
    assert (task, metrics) == ("copy", {"test_token_acc": 0.5})
    torch.load(path, weights_only=True)  # plain data only: no pickled code needed


def test_half_precision_round_trip(saved, tmp_path):
    _, model, vocabs = saved
    save_checkpoint(tmp_path / "h.pt", model, vocabs, "copy", {}, half=True)
    loaded = load_checkpoint(tmp_path / "h.pt")[0]
    assert next(loaded.parameters()).dtype == torch.float32
    assert torch.allclose(logits(loaded), logits(model), atol=1e-2)


def rewrite(path, change):
    ckpt = torch.load(path, weights_only=True)
    change(ckpt)
    torch.save(ckpt, path)


def test_refuses_random_bytes(tmp_path):
    path = tmp_path / "noise.pt"
    path.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(CheckpointError, match=r"noise.pt: not a readable torch file \(corrupted"):
        load_checkpoint(path)


def test_refuses_truncated_file(saved):
    path = saved[0]
    path.write_bytes(path.read_bytes()[:-500])
    with pytest.raises(CheckpointError, match=r"not a readable torch file \(corrupted or truncated\?\)"):
        load_checkpoint(path)


def test_refuses_foreign_torch_file(tmp_path):
    path = tmp_path / "other.pt"
    torch.save({"weight": torch.zeros(3)}, path)
    message = r"not a Glassbox checkpoint \(no format tag 'glassbox-checkpoint'\)"
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)
    torch.save(torch.zeros(3), path)
    with pytest.raises(CheckpointError, match="not a Glassbox checkpoint"):
        load_checkpoint(path)


def test_refuses_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="no such checkpoint file"):
        load_checkpoint(tmp_path / "absent.pt")


def test_refuses_wrong_shapes(saved):
    path = saved[0]
    rewrite(path, lambda c: c["state_dict"].__setitem__("generator.weight", torch.zeros(8, 4)))
    message = r"weight generator.weight has shape \(8, 4\), the config needs \(8, 16\)"
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


def test_refuses_missing_and_unexpected_weights(saved):
    path = saved[0]

    def change(c):
        c["state_dict"].pop("generator.bias")
        c["state_dict"]["extra.weight"] = torch.zeros(1)

    rewrite(path, change)
    with pytest.raises(CheckpointError, match="missing generator.bias, unexpected extra.weight"):
        load_checkpoint(path)


def test_refuses_missing_parts_bad_config_and_vocab_mismatch(saved):
    path = saved[0]
    rewrite(path, lambda c: c.pop("vocabs"))
    with pytest.raises(CheckpointError, match="checkpoint is missing vocabs"):
        load_checkpoint(path)
    vocabs = {"src": Vocab(["a"]).to_list(), "tgt": Vocab(list("xyz")).to_list()}
    rewrite(path, lambda c: c.update(vocabs=vocabs))
    with pytest.raises(CheckpointError, match="source vocabulary has 6 tokens but the config says 8"):
        load_checkpoint(path)
    rewrite(path, lambda c: c["config"].update(num_heads=3))
    with pytest.raises(CheckpointError, match="invalid model config: d_model=16 is not divisible by"):
        load_checkpoint(path)
    rewrite(path, lambda c: c.update(version=99))
    with pytest.raises(CheckpointError, match="checkpoint version 99 is not supported"):
        load_checkpoint(path)


# -- the shipped model ---------------------------------------------------------------------------

# The checkpoint ships with the repository: a missing one is a failure, not a skip.


@pytest.fixture(scope="module")
def shipped():
    """The shipped model and a fixed slice of the test split (never trained on), evaluated again here:
    every 12th test phrase (192, the split's own mix of 2-6 characters) and every test phrase of 7 or 8
    characters (8: the known weakness the README describes), not phrases picked for success."""
    assert ASSET.stat().st_size <= 5 * 2**20
    model, _, task, _ = load_checkpoint(ASSET)
    assert task == "pinyin"
    data = load_task(task)
    test = data.splits["test"]
    data.splits = {"common": test[::12], "long": [pair for pair in test if len(pair[0]) >= 7]}
    return model, data


@pytest.fixture(scope="module")
def evaluated(shipped):
    """``python -m core.training --evaluate``'s measure (greedy decoding) on each part of the slice."""
    model, data = shipped
    return {part: evaluate(model, data, part) for part in data.splits}


def test_shipped_pinyin_model_meets_its_targets_on_held_out_phrases(shipped, evaluated):
    """On the slice, a little below the README's figures on all 2,301 test phrases: syllable accuracy
    95.07 %, alignment 99.76 %. When written the slice gave 94.7 % and 100 %; the long phrases 60 %
    and 78 %."""
    _, data = shipped
    common = evaluated["common"]
    assert common["n"] == 192 and sum(len(x) for x, _ in data.splits["common"]) == 584
    assert common["token_acc"] >= 0.93 and common["alignment"] >= 0.97, common
    assert common["exact_acc"] >= 0.80, common
    long = evaluated["long"]
    assert long["n"] == 8 and long["token_acc"] >= 0.5 and long["alignment"] >= 0.7, long


@pytest.mark.parametrize("part", ["common", "long"])
def test_shipped_pinyin_models_alignment_is_read_from_its_cross_attention(shipped, evaluated, part):
    """The alignment, counted here from the trace: teacher-forced on the reference, the decoder position
    that writes syllable j (it reads [BOS] or syllable j-1) has the head-averaged cross-attention of the
    last decoder layer peak on character j. The same share as ``evaluate`` reports."""
    model, data = shipped
    pairs = data.splits[part]
    src, tgt = make_batch(pairs, data.src_vocab, data.tgt_vocab)
    weights = model.trace(src, tgt[:, :-1]).decoder[-1].cross_attn.weights.mean(1)  # (B, T, S)
    peaks = weights.argmax(-1).tolist()
    hits = [peaks[b][j] == j for b, (chars, _) in enumerate(pairs) for j in range(len(chars))]
    share = sum(hits) / len(hits)
    assert share == evaluated[part]["alignment"]
    assert share >= {"common": 0.97, "long": 0.7}[part], share


def test_shipped_pinyin_model_reads_held_out_phrases(predict):
    model, (src_vocab, tgt_vocab), _, _ = load_checkpoint(ASSET)
    test = {"".join(c): s for c, s in load_pinyin_pairs()["test"]}
    for phrase in HELD_OUT:  # never trained on: the split puts them in "test"
        assert predict(model, tgt_vocab, encode_source(phrase, src_vocab).ids) == test[phrase], phrase
    # a phrase from training and unknown input
    assert predict(model, tgt_vocab, encode_source("中国", src_vocab).ids) == ["zhōng", "guó"]
    enc = encode_source("中国abc", src_vocab)
    assert enc.tokens[2:] == ["[UNK]"] and len(predict(model, tgt_vocab, enc.ids)) >= 2


# Test-split phrases (never trained on) that the shipped model reads right, 会 and 射 in context: examples
# picked because they are read right; how often the model is right is measured on the fixed slice above.
HELD_OUT = ["一会儿", "一叶报秋", "一品红", "一定不易", "一射之地"]
