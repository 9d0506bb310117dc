"""Hugging Face ``tokenizers`` as the reference a BPE count is checked against
(tests/core/teaching/test_exercises.py, test_questions.py)."""

from __future__ import annotations

from tokenizers import Tokenizer, models, pre_tokenizers, trainers


def hf_count(text: str, k: int) -> int:
    """Tokens of ``text`` under Hugging Face byte-level BPE trained on it with k merges."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=256 + k,
        special_tokens=[],
        min_frequency=0,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([text], trainer)
    return len(tok.encode(text).tokens)
