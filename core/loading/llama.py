"""Llama (LlamaForCausalLM) and Qwen2 (Qwen2ForCausalLM) read into our Transformer.

RMSNorm, SwiGLU, grouped-query attention and RoPE with Hugging Face's rotate-half pairing, Qwen2's
q/k/v biases: ``ModelConfig(encoder=False, norm_kind="rms", activation="swiglu", positions="rope",
rope_pairing="half", ...)``. Their tokenizer (tokenizer.json, a byte-level or SentencePiece-style BPE)
is not read here: the loader gives None, and the app runs the file through Hugging Face
``tokenizers`` (ui/folders/hf_tokenizer.py).
"""

from __future__ import annotations

import torch

from core.loading.files import Loaded, Progress, folder_files, no_progress, read_weights, stage
from core.model.config import ModelConfig
from core.model.transformer import Transformer


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


def load_llama(folder, hf: dict, progress: Progress = no_progress) -> Loaded:
    """Llama or Qwen2; the tokenizer (tokenizer.json) is left to the caller: None."""
    config = llama_config(hf)
    weights, weights_file = read_weights(folder_files(folder), stage(progress, 0.0, 0.8))
    progress(0.8, "building the model")
    # strict: every parameter of ours is filled, and no tensor of theirs is left over
    model = Transformer.from_state_dict(config, llama_state_dict(weights, config)).eval()
    return model, None, weights_file, None
