"""A Hugging Face model folder in our own Transformer: ``config.json`` + weights + tokenizer files.

    model, tokenizer, info = load_folder("models/gpt2")
    tr = model.trace(torch.tensor([tokenizer.encode("Attention is all you need")]))
    tr.decoder[i].self_attn.weights, tr.logits          # causal self-attention, next-token logits

Nothing in the folder is executed: the weights are read from ``model.safetensors`` by core's own
reader (core/pretrained.py) or from ``pytorch_model.bin`` with ``torch.load(weights_only=True)``,
which unpickles tensors and plain containers only.

The family is chosen by config.json's ``model_type``; each family is a config translation
(its config.json -> ModelConfig), a renaming of its tensors into ours, and its tokenizer:

    gpt2   GPT2LMHeadModel (gpt2, distilgpt2, ...): learned positions, pre-norm, GELU (tanh),
           tied input/output embeddings, one causal stack -> ModelConfig(encoder=False, ...)
    bert   BertModel, BertForMaskedLM, BertForPreTraining, BertLMHeadModel (bert-base-chinese,
           all-MiniLM-L6-v2, ...): the encoder alone (core/pretrained.py), heads left out, with
           its WordPiece (vocab.txt, switches from tokenizer_config.json) -> ModelConfig(decoder=False)
    llama  LlamaForCausalLM, and qwen2 Qwen2ForCausalLM: RMSNorm, SwiGLU, grouped-query attention,
           RoPE with HF's rotate-half pairing, Qwen2's q/k/v biases -> ModelConfig(encoder=False,
           norm_kind="rms", ...). Their tokenizer.json is not read by core: tokenizer is None, ids
           come from outside (the reference ``tokenizers`` in tests)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from core.config import ModelConfig
from core.gpt2_tokenizer import GPT2Tokenizer
from core.model import Transformer
from core.pretrained import bert_config, bert_state_dict, read_safetensors
from core.wordpiece import WordPieceTokenizer


@dataclass(frozen=True)
class FolderInfo:
    """What was loaded: the folder's name, its family (a key of FAMILIES) and its architecture."""

    name: str
    family: str
    architecture: str
    weights_file: str


def _read_pickled(path: Path) -> dict[str, torch.Tensor]:
    # weights_only: tensors and plain containers only, never an object that runs code
    return torch.load(path, map_location="cpu", weights_only=True)


Progress = Callable[[float, str], None]  # (fraction done, what is being done), for a progress bar
# what a family's loader gives: our model, its tokenizer (None: not read by core) and the weights file
Loaded = tuple[Transformer, GPT2Tokenizer | WordPieceTokenizer | None, str]


def _no_progress(fraction: float, what: str) -> None:
    pass


def read_weights(folder: Path, progress: Progress = _no_progress) -> tuple[dict[str, torch.Tensor], str]:
    """The folder's tensors and the file they came from; safetensors first (no pickle at all).

    A big model is saved in shards: ``<name>.index.json`` maps every tensor to its shard's file.
    ``progress`` hears of each file before it is read (fractions 0 to 1 of the files).
    """
    for name, read in (("model.safetensors", read_safetensors), ("pytorch_model.bin", _read_pickled)):
        if (folder / name).is_file():
            progress(0.0, name)
            return read(folder / name), name
        index = folder / f"{name}.index.json"
        if index.is_file():
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
            weights = {}
            for n, shard in enumerate(shards):
                progress(n / len(shards), Path(shard).name)
                weights.update(read(folder / Path(shard).name))  # .name: never a path out of the folder
            return weights, index.name
    raise FileNotFoundError(
        f"{folder} has neither model.safetensors nor pytorch_model.bin (nor their shards)"
    )


def _part(progress: Progress, start: float, end: float) -> Progress:
    """``progress`` for one stage of a load: its fractions mapped to [start, end]."""
    return lambda fraction, what: progress(start + (end - start) * fraction, what)


# -- GPT-2 -----------------------------------------------------------------------------------------


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
        return  # old checkpoints store the causal mask as a buffer: ours is built by core/masks.py
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


def load_gpt2(folder: Path, hf: dict, progress: Progress = _no_progress) -> Loaded:
    config = gpt2_config(hf)
    tokenizer = GPT2Tokenizer.from_files(folder / "vocab.json", folder / "merges.txt")
    if len(tokenizer) > config.tgt_vocab_size:
        raise ValueError(f"vocab.json has {len(tokenizer)} tokens, config.json says {config.tgt_vocab_size}")
    weights, source = read_weights(folder, _part(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, gpt2_state_dict(weights, config)).eval()
    return model, tokenizer, source


# -- BERT ------------------------------------------------------------------------------------------

# tokenizer_config.json's names -> WordPieceTokenizer's (BertTokenizer's defaults when absent)
_WORDPIECE_OPTIONS = {
    "do_lower_case": "lowercase",
    "tokenize_chinese_chars": "chinese_chars",
    "strip_accents": "strip_accents",
}


def bert_tokenizer(folder: Path) -> WordPieceTokenizer:
    """``vocab.txt`` normalised as ``tokenizer_config.json`` says: a cased or a Chinese BERT keeps
    its case (``do_lower_case=false``); without the file, BERT's uncased defaults.

    transformers 5 saves no vocab.txt, only ``tokenizer.json``: then its WordPiece vocabulary
    (token -> id) is read from there.
    """
    options = {}
    settings = folder / "tokenizer_config.json"
    if settings.is_file():
        saved = json.loads(settings.read_text(encoding="utf-8"))
        options = {ours: saved[theirs] for theirs, ours in _WORDPIECE_OPTIONS.items() if theirs in saved}
    if (folder / "vocab.txt").is_file():
        return WordPieceTokenizer.from_file(folder / "vocab.txt", **options)
    if (folder / "tokenizer.json").is_file():
        model = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8")).get("model", {})
        if model.get("type") == "WordPiece":
            vocab = sorted(model["vocab"], key=model["vocab"].get)
            if [model["vocab"][t] for t in vocab] != list(range(len(vocab))):
                raise ValueError(f"{folder}/tokenizer.json: the WordPiece ids are not 0, 1, 2, ...")
            return WordPieceTokenizer(vocab, **options)
    raise FileNotFoundError(f"{folder} has neither vocab.txt nor a WordPiece tokenizer.json")


def load_bert(folder: Path, hf: dict, progress: Progress = _no_progress) -> Loaded:
    """The encoder of any BERT checkpoint (``bert.`` prefix of BertFor* stripped, heads ignored)."""
    if hf.get("is_decoder") or hf.get("add_cross_attention"):
        # a causal BERT (BertLMHeadModel as a decoder) masks the future: not what our encoder does
        raise ValueError("is_decoder or add_cross_attention: only BERT's bidirectional encoder is supported")
    config = bert_config(hf)
    tokenizer = bert_tokenizer(folder)
    if len(tokenizer) > config.src_vocab_size:
        raise ValueError(f"vocab.txt has {len(tokenizer)} tokens, config.json says {config.src_vocab_size}")
    weights, source = read_weights(folder, _part(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, bert_state_dict(weights)).eval()
    return model, tokenizer, source


# -- Llama, Qwen2 ----------------------------------------------------------------------------------


def _rope_theta(hf: dict) -> float:
    """RoPE's base: transformers 5 writes ``rope_parameters``, older files ``rope_theta`` and
    ``rope_scaling``; only the plain ("default") rotation is supported."""
    rope = dict(hf.get("rope_parameters") or {})
    scaling = hf.get("rope_scaling") or {}
    kind = rope.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default"
    if kind != "default":
        raise ValueError(f"rope_type={kind!r}: only the default RoPE (no scaling) is supported")
    return float(rope.get("rope_theta", hf.get("rope_theta", 10000.0)))


def llama_config(hf: dict) -> ModelConfig:
    """A Llama or Qwen2 ``config.json`` -> ModelConfig: one causal, pre-norm, RMSNorm stack."""
    qwen2 = hf.get("model_type") == "qwen2"
    if hf.get("hidden_act", "silu") != "silu":
        raise ValueError(f"hidden_act={hf['hidden_act']!r}: only SiLU (SwiGLU) is supported")
    if qwen2 and hf.get("use_sliding_window"):
        raise ValueError("use_sliding_window=True is not supported: every layer reads all earlier tokens")
    if hf.get("pretraining_tp", 1) != 1:
        raise ValueError("pretraining_tp != 1 is not supported")
    d_model, heads, vocab = hf["hidden_size"], hf["num_attention_heads"], hf["vocab_size"]
    if hf.get("head_dim") not in (None, d_model // heads):
        raise ValueError(f"head_dim={hf['head_dim']} is not hidden_size / num_attention_heads")
    attention_bias = hf.get("attention_bias", False)
    return ModelConfig(
        src_vocab_size=vocab,  # unused: there is no encoder
        tgt_vocab_size=vocab,
        d_model=d_model,
        num_heads=heads,
        num_layers=hf["num_hidden_layers"],
        d_ff=hf["intermediate_size"],
        dropout=hf.get("attention_dropout", 0.0),
        max_len=hf.get("max_position_embeddings", 2048),  # RoPE: not a hard limit
        norm="pre",
        pad_id=hf.get("pad_token_id"),
        positions="rope",
        activation="swiglu",
        layer_norm_eps=hf.get("rms_norm_eps", 1e-6),
        scale_embeddings=False,
        final_norm=True,
        encoder=False,
        tie_embeddings=hf.get("tie_word_embeddings", False),
        norm_kind="rms",
        num_kv_heads=hf.get("num_key_value_heads") or heads,
        rope_theta=_rope_theta(hf),
        rope_pairing="half",
        qkv_bias=True if qwen2 else attention_bias,  # Qwen2: q/k/v biases, none on o_proj
        out_bias=False if qwen2 else attention_bias,
        ffn_bias=False if qwen2 else hf.get("mlp_bias", False),
        generator_bias=False,
    )


# Llama's names inside model.layers.{i} -> ours inside decoder.layers.{i}
_LLAMA_LAYER = {
    "input_layernorm": "sublayer1.norm",  # pre-norm: x + Attention(RMSNorm(x))
    "self_attn.q_proj": "self_attn.w_q",
    "self_attn.k_proj": "self_attn.w_k",
    "self_attn.v_proj": "self_attn.w_v",
    "self_attn.o_proj": "self_attn.w_o",
    "post_attention_layernorm": "sublayer3.norm",
    "mlp.gate_proj": "ffn.gate",
    "mlp.up_proj": "ffn.linear1",
    "mlp.down_proj": "ffn.linear2",
}


def llama_state_dict(weights: dict[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    """Rename a Llama / Qwen2 checkpoint's tensors to ours (nn.Linear on both sides: no transpose)."""
    ours = {}
    for name, tensor in weights.items():
        parts = name.split(".")
        if name == "model.embed_tokens.weight":
            ours["tgt_embed.lookup.weight"] = tensor
        elif name == "model.norm.weight":
            ours["decoder.norm.weight"] = tensor
        elif name == "lm_head.weight":
            ours["generator.weight"] = tensor
        elif parts[:2] == ["model", "layers"] and ".".join(parts[3:-1]) in _LLAMA_LAYER:
            ours[f"decoder.layers.{parts[2]}.{_LLAMA_LAYER['.'.join(parts[3:-1])]}.{parts[-1]}"] = tensor
        elif not name.endswith("rotary_emb.inv_freq"):  # old files store RoPE's θ_i: ours computes it
            raise ValueError(f"unexpected tensor {name!r} in a Llama / Qwen2 checkpoint")
    if config.tie_embeddings:  # save_pretrained leaves the tied copy out
        ours["generator.weight"] = ours["tgt_embed.lookup.weight"]
    return ours


def load_llama(folder: Path, hf: dict, progress: Progress = _no_progress) -> Loaded:
    """Llama or Qwen2; the tokenizer (tokenizer.json) is left to the caller: None."""
    config = llama_config(hf)
    weights, source = read_weights(folder, _part(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, llama_state_dict(weights, config)).eval()
    return model, None, source


# -- any folder ------------------------------------------------------------------------------------

# model_type -> loader(folder, config.json as a dict) -> (model, tokenizer, weights file name)
FAMILIES: dict[str, Callable] = {
    "gpt2": load_gpt2,
    "bert": load_bert,
    "llama": load_llama,
    "qwen2": load_llama,
}


def load_folder(
    path, progress: Progress = _no_progress
) -> tuple[Transformer, GPT2Tokenizer | WordPieceTokenizer | None, FolderInfo]:
    """A Hugging Face model folder -> (our model in eval mode, its tokenizer or None, FolderInfo).

    The family is config.json's ``model_type``; an unsupported one raises a ValueError that names
    it (and its ``architectures``) and lists what is supported. ``progress(fraction, what)`` hears
    of each weights file read and of the model being built (for a progress bar), then of 1.0.
    """
    folder = Path(path)
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"{folder} has no config.json: not a Hugging Face model folder")
    hf = json.loads(config_file.read_text(encoding="utf-8"))
    family = hf.get("model_type")
    architecture = ", ".join(hf.get("architectures") or []) or "unknown architecture"
    if family not in FAMILIES:
        raise ValueError(
            f"{folder.name}: model_type={family!r} ({architecture}) is not supported; "
            f"supported: {', '.join(sorted(FAMILIES))}"
        )
    model, tokenizer, source = FAMILIES[family](folder, hf, progress)
    progress(1.0, "loaded")
    return model, tokenizer, FolderInfo(folder.name, family, architecture, source)
