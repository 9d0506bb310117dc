"""What several training tests share."""

import pytest
import torch

from core.training.seq2seq import greedy_predict


@pytest.fixture
def predict():
    """predict(model, tgt_vocab, src_ids) -> the target tokens greedy decoding writes for one encoded
    source (e.g. ``encode_source(text, src_vocab).ids``): the model's answer as a reader sees it."""

    def predict(model, tgt_vocab, src_ids: list[int]) -> list[str]:
        if not src_ids:
            return []
        model.eval()
        return tgt_vocab.decode(greedy_predict(model, torch.tensor([src_ids]), len(src_ids) + 2)[0])

    return predict
