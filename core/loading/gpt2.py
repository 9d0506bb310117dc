"""GPT-2 (GPT2LMHeadModel: gpt2, distilgpt2, ...) read into our Transformer, with its tokenizer.

Learned positions, pre-norm, GELU (tanh), tied input/output embeddings and one causal stack:
``ModelConfig(encoder=False, norm="pre", ...)``. Its Conv1D matrices are stored (in, out), the
transpose of our Linear's, and its attention's W_Q, W_K, W_V are one (d, 3d) matrix, split here. The
tokenizer is core's byte-level BPE with GPT-2's ids (core/tokenizers/gpt2.py), read from the folder's
``tokenizer.json`` or ``vocab.json`` + ``merges.txt``.
"""

from __future__ import annotations

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
from core.tokenizers.gpt2 import GPT2Tokenizer, merge_pairs, merges_txt_pairs, vocab_json_ids


def gpt2_config(hf: dict) -> ModelConfig:
    """A GPT-2 ``config.json`` (as a dict) -> ModelConfig: one causal, pre-norm stack."""
    activation = hf.get("activation_function", "gelu_new")
    if activation not in ("gelu_new", "gelu_pytorch_tanh"):
        raise ValueError(f"activation_function={activation!r}: only GPT-2's gelu_new is supported")
    for option in ("scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"):
        if hf.get(option):
            raise ValueError(f"{option}=True is not supported")
    if not hf.get("scale_attn_weights", True):
        raise ValueError("scale_attn_weights=False is not supported: attention divides by sqrt(d_k)")
    d_model, vocab = hf["n_embd"], hf["vocab_size"]
    return ModelConfig(
        src_vocab_size=vocab,  # unused: there is no encoder
        tgt_vocab_size=vocab,
        d_model=d_model,
        num_heads=hf["n_head"],
        num_layers=hf["n_layer"],
        d_ff=hf.get("n_inner") or 4 * d_model,
        dropout=hf.get("resid_pdrop", 0.1),
        max_len=hf["n_positions"],
        norm="pre",
        # GPT-2 has no pad token (None): a padded batch passes attention_mask (Transformer.decode)
        pad_id=hf.get("pad_token_id"),
        positions="learned",
        activation="gelu_tanh",
        layer_norm_eps=hf.get("layer_norm_epsilon", 1e-5),
        scale_embeddings=False,
        final_norm=True,
        encoder=False,
        tie_embeddings=hf.get("tie_word_embeddings", True),
    )


# GPT-2's names inside block h.{i} -> ours inside decoder.layers.{i}
_GPT2_LAYER = {
    "ln_1": "sublayer1.norm",  # pre-norm: x + Attention(LayerNorm(x))
    "attn.c_proj": "self_attn.w_o",
    "ln_2": "sublayer3.norm",  # the FFN's residual is sublayer3 in every decoder layer
    "mlp.c_fc": "ffn.linear1",
    "mlp.c_proj": "ffn.linear2",
}
# Conv1D stores (in, out), the transpose of a Linear's (out, in)
_CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def gpt2_state_dict(weights: dict[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    """Rename a GPT-2 checkpoint's tensors to ours: Conv1D matrices transposed, c_attn's (d, 3d)
    split into W_Q, W_K, W_V, the output matrix tied to the token embedding when the config says so."""
    ours = {}
    for name, tensor in weights.items():
        name = name.removeprefix("transformer.")
        parts = name.split(".")
        if name in ("wte.weight", "wpe.weight"):
            ours[{"wte": "tgt_embed.lookup", "wpe": "tgt_embed.position"}[parts[0]] + ".weight"] = tensor
        elif parts[0] == "ln_f":
            ours[f"decoder.norm.{parts[1]}"] = tensor
        elif name == "lm_head.weight":
            ours["generator.weight"] = tensor
        elif parts[0] == "h" and len(parts) >= 4:
            _gpt2_layer(ours, parts[1], ".".join(parts[2:-1]), parts[-1], tensor)
        else:
            raise ValueError(f"unexpected tensor {name!r} in a GPT-2 checkpoint")
    if config.tie_embeddings:  # save_pretrained leaves the tied copy out of model.safetensors
        ours["generator.weight"] = ours["tgt_embed.lookup.weight"]
    return ours


def _gpt2_layer(ours: dict, i: str, module: str, leaf: str, tensor: torch.Tensor) -> None:
    if module == "attn" and leaf in ("bias", "masked_bias"):
        return  # old checkpoints store the causal mask as a buffer: ours is built by core/model/masks.py
    key = f"{module}.{leaf}"
    if leaf == "weight" and module in _CONV1D:
        tensor = tensor.t()
    if module == "attn.c_attn":  # (3d, d) weight or (3d,) bias: queries, keys, values stacked
        for ours_name, part in zip(("w_q", "w_k", "w_v"), tensor.chunk(3, dim=0), strict=True):
            ours[f"decoder.layers.{i}.self_attn.{ours_name}.{leaf}"] = part.contiguous()
        return
    if module not in _GPT2_LAYER:
        raise ValueError(f"unexpected tensor h.{i}.{key} in a GPT-2 checkpoint")
    ours[f"decoder.layers.{i}.{_GPT2_LAYER[module]}.{leaf}"] = tensor.contiguous()


def _classic_gpt2(files: FolderFiles) -> tuple[dict, list[tuple[str, str]]]:
    """vocab.json + merges.txt (GPT-2's own files, as tokenizers and transformers 4 write them)."""
    vocab = vocab_json_ids(files.read_json("vocab.json", "vocab"))
    return vocab, merges_txt_pairs(files.read_text("merges.txt", "vocab"))


def _added_tokens(data: dict) -> dict[str, int]:
    added = data.get("added_tokens") or []
    return {t["content"]: t["id"] for t in added
            if isinstance(t, dict) and isinstance(t.get("content"), str) and type(t.get("id")) is int}


def gpt2_tokenizer(folder) -> tuple[GPT2Tokenizer, TokenizerSource]:
    """GPT-2's byte-level BPE, read from the files transformers' ``AutoTokenizer`` reads: ``tokenizer.json``
    when there is one (transformers 5 saves only that), else ``vocab.json`` + ``merges.txt``. Both
    present and holding other vocabularies or merges: tokenizer.json, and the source says the others
    were left unused."""
    files = folder_files(folder)
    classic = files.has("vocab.json") and files.has("merges.txt")
    if not files.has("tokenizer.json"):
        if not classic:
            raise FolderFileError(
                "missing", f"{files.folder.name} has neither tokenizer.json nor vocab.json + merges.txt"
            )
        vocab, merges = _classic_gpt2(files)
        return GPT2Tokenizer(vocab, merges), TokenizerSource("vocab.json + merges.txt")
    model, data = tokenizer_json_model(files, "BPE")
    vocab, merges = dict(model["vocab"]), merge_pairs(model.get("merges") or [], "tokenizer.json")
    added = _added_tokens(data)  # matched in the raw text before BPE, as tokenizers does
    vocab.update(added)
    unused = ""
    if classic and _classic_gpt2(files) != (model["vocab"], merges):
        unused = "vocab.json + merges.txt"
    return GPT2Tokenizer(vocab, merges, special_tokens=list(added)), TokenizerSource("tokenizer.json", unused)


def load_gpt2(folder, hf: dict, progress: Progress = no_progress) -> Loaded:
    files = folder_files(folder)
    config = gpt2_config(hf)
    tokenizer, source = gpt2_tokenizer(files)
    if len(tokenizer.vocab) > config.tgt_vocab_size:
        raise ValueError(
            f"{source.used} has {len(tokenizer.vocab)} tokens, config.json says {config.tgt_vocab_size}"
        )
    weights, weights_file = read_weights(files, stage(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, gpt2_state_dict(weights, config)).eval()
    return model, tokenizer, weights_file, source

