"""Every tokenizer of core answers the same three questions (core/tokenizers/protocol.py): ``encode``
-> ids, ``tokenize`` -> pieces (one per id), ``special_tokens``; and ``allow_special`` means the same
in each: a special token typed in the text is one token, and the model's own specials are added
(WordPiece's [CLS] ... [SEP]); without it the text is plain text and nothing is added."""

import pytest

from core.tokenizers.bpe import BPETokenizer
from core.tokenizers.gpt2 import GPT2Tokenizer
from core.tokenizers.protocol import Tokenizer
from core.tokenizers.wordpiece import WordPieceTokenizer


def tokenizers() -> dict[str, Tokenizer]:
    text = "the cat and the hat [MASK]"
    bpe = BPETokenizer.train(text, 8)
    wordpiece_vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "hat", "##s", "[", "]",
                       "mask"]
    gpt2 = GPT2Tokenizer({"a": 0, "b": 1, "ab": 2, "<|endoftext|>": 3}, [("a", "b")])
    return {"bpe": bpe, "classic": BPETokenizer.train(text, 8, byte_level=False),
            "wordpiece": WordPieceTokenizer(wordpiece_vocab), "gpt2": gpt2}


@pytest.mark.parametrize("name", ["bpe", "classic", "wordpiece", "gpt2"])
def test_each_is_a_tokenizer(name):
    assert isinstance(tokenizers()[name], Tokenizer)


@pytest.mark.parametrize(("name", "special"), [("bpe", "[BOS]"), ("wordpiece", "[MASK]"),
                                               ("gpt2", "<|endoftext|>")])
def test_a_typed_special_token_is_one_token_only_with_allow_special(name, special):
    tok = tokenizers()[name]
    assert special in tok.special_tokens
    assert special in tok.tokenize(f"the{special}")
    assert special not in tok.tokenize(f"the{special}", allow_special=False)


def test_wordpiece_adds_cls_and_sep_only_with_allow_special():
    tok = tokenizers()["wordpiece"]
    assert tok.encode("the cats") == [2, 5, 6, 8, 3]
    assert tok.encode("the cats", allow_special=False) == [5, 6, 8]
    assert tok.encode("[MASK]", allow_special=False) == [9, 11, 10]


@pytest.mark.parametrize(("name", "text"), [("bpe", "the hat[EOS]"), ("classic", "the hat"),
                                            ("gpt2", "abab<|endoftext|>a")])
def test_one_piece_per_id(name, text):
    tok = tokenizers()[name]
    assert len(tok.tokenize(text)) == len(tok.encode(text)) > 1
