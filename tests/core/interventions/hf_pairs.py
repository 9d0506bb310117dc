"""Tiny random Hugging Face models and the same weights in our Transformer, for the interventions' tests.

    hf = hf_model("gpt2")          # GPT2LMHeadModel | LlamaForCausalLM | Qwen2ForCausalLM | BertModel
    ours = ours_from(hf, "gpt2")   # core/loading's own conversion of the config and the tensors

Nothing is downloaded: the weights are drawn here (HF draws biases as zeros and norms as ones, so they
are drawn again at random: a bias the ablation must keep, or drop, then shows). The conversion is the
one ``load_folder`` runs after reading the files (core/loading/gpt2.py, llama.py, bert.py); reading
the files and the tokenizers are proven in tests/core/loading.

The modules a hook goes on, by family:

    heads  the input of the output projection: Concat(head_1 … head_h), (B, L, h·d_k), head i at
           columns i·d_k … (i+1)·d_k   (GPT-2 attn.c_proj, Llama/Qwen2 self_attn.o_proj,
           BERT attention.output.dense)
    attn   the attention sublayer's output, its bias included, before the residual (GPT-2 attn and
           Llama self_attn return a tuple (output, weights); BERT: attention.output.dense, whose
           output then goes through dropout, + x, LayerNorm)
    ffn    the feed-forward sublayer's output (GPT-2 and Llama mlp, BERT output.dense)
    block  a layer, whose first input is the residual stream entering it
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never ask the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
from torch import Tensor, nn  # noqa: E402

from core.loading.bert import bert_config, bert_state_dict  # noqa: E402
from core.loading.gpt2 import gpt2_config, gpt2_state_dict  # noqa: E402
from core.loading.llama import llama_config, llama_state_dict  # noqa: E402
from core.model.transformer import Transformer  # noqa: E402

VOCAB = 101
D, HEADS, LAYERS, KV_HEADS = 32, 4, 3, 2
D_K = D // HEADS
DECODERS = ("gpt2", "llama", "qwen2")
FAMILIES = (*DECODERS, "bert")


def hf_config(family: str):
    if family == "gpt2":
        return transformers.GPT2Config(
            n_layer=LAYERS,
            n_head=HEADS,
            n_embd=D,
            vocab_size=VOCAB,
            n_positions=64,
            bos_token_id=1,
            eos_token_id=1,
            initializer_range=0.2,  # larger than the usual 0.02: answers and heads far apart
        )
    if family == "bert":
        return transformers.BertConfig(
            hidden_size=D,
            num_hidden_layers=LAYERS,
            num_attention_heads=HEADS,
            intermediate_size=2 * D,
            vocab_size=VOCAB,
            max_position_embeddings=64,
            initializer_range=0.2,
        )
    sizes = dict(
        vocab_size=VOCAB,
        hidden_size=D,
        intermediate_size=2 * D,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,  # grouped-query attention: two query heads read each key/value head
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=1,
        initializer_range=0.2,
    )
    if family == "llama":  # untied, with o_proj's bias: a head switched off must keep it
        return transformers.LlamaConfig(
            **sizes, tie_word_embeddings=False, attention_bias=True, mlp_bias=True
        )
    return transformers.Qwen2Config(**sizes, tie_word_embeddings=True)  # q/k/v biases, none on o_proj


HF_CLASSES = {
    "gpt2": "GPT2LMHeadModel",
    "llama": "LlamaForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "bert": "BertModel",
}


@torch.no_grad()
def hf_model(family: str, seed: int = 0) -> nn.Module:
    """A random float32 model of the family in eval mode, eager attention, biases and norms drawn."""
    config = hf_config(family)
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, HF_CLASSES[family])(config).float().eval()
    for name, p in model.named_parameters():
        if name.endswith("bias") or "norm" in name.lower():
            p.add_(torch.randn_like(p) * 0.1)
    return model


def ours_from(hf: nn.Module, family: str) -> Transformer:
    """Our Transformer holding ``hf``'s weights, converted as core/loading converts a folder's."""
    config_dict = hf.config.to_dict()
    weights = {k: v.detach().clone() for k, v in hf.state_dict().items()}
    if family == "gpt2":
        config = gpt2_config(config_dict)
        state = gpt2_state_dict(weights, config)
    elif family == "bert":
        config = bert_config(config_dict)
        state = bert_state_dict(weights)
    else:
        config = llama_config(config_dict)
        state = llama_state_dict(weights, config)
    return Transformer.from_state_dict(config, state).eval()


def random_ids(batch: int, length: int, seed: int) -> Tensor:
    """(batch, length) ids in 1 … VOCAB - 1 (never 0: BERT's pad id)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(1, VOCAB, (batch, length), generator=g)


# -- where the hooks go ----------------------------------------------------------------------------


def hf_layers(hf: nn.Module, family: str) -> list[nn.Module]:
    if family == "gpt2":
        return list(hf.transformer.h)
    if family == "bert":
        return list(hf.encoder.layer)
    return list(hf.model.layers)


def heads_module(hf: nn.Module, family: str, layer: int) -> nn.Module:
    """The output projection, whose input is Concat(head_1 … head_h)."""
    block = hf_layers(hf, family)[layer]
    if family == "gpt2":
        return block.attn.c_proj
    if family == "bert":
        return block.attention.output.dense
    return block.self_attn.o_proj


def attn_module(hf: nn.Module, family: str, layer: int) -> nn.Module:
    """The module whose output is the attention sublayer's output MultiHead(…) (first of a tuple
    for GPT-2 and Llama)."""
    block = hf_layers(hf, family)[layer]
    if family == "gpt2":
        return block.attn
    if family == "bert":
        return block.attention.output.dense
    return block.self_attn


def ffn_module(hf: nn.Module, family: str, layer: int) -> nn.Module:
    block = hf_layers(hf, family)[layer]
    return block.output.dense if family == "bert" else block.mlp


def hf_output(hf: nn.Module, family: str, ids: Tensor) -> Tensor:
    """Logits (B, L, vocab), or BERT's last hidden states (B, L, d)."""
    with torch.no_grad():
        out = hf(input_ids=ids, attention_mask=torch.ones_like(ids))
    return out.last_hidden_state if family == "bert" else out.logits


def our_output(model: Transformer, ids: Tensor, edits=None) -> Tensor:
    trace = model.trace(ids, edits=edits)
    return trace.memory if model.decoder is None else trace.logits


# -- hooks -----------------------------------------------------------------------------------------


def _first(output):
    return output[0] if isinstance(output, tuple) else output


def _with_first(output, value: Tensor):
    return (value, *output[1:]) if isinstance(output, tuple) else value


def replace_heads(module: nn.Module, fn: Callable[[int, Tensor], Tensor], heads, d_k: int = D_K):
    """A forward pre-hook on an output projection: head i's columns of its input -> fn(i, columns)."""

    def hook(mod, args):
        x = args[0].clone()
        for i in heads:
            cols = slice(i * d_k, (i + 1) * d_k)
            x[..., cols] = fn(i, x[..., cols])
        return (x, *args[1:])

    return module.register_forward_pre_hook(hook)


def replace_output(module: nn.Module, fn: Callable[[Tensor], Tensor]):
    """A forward hook: the module's output (or the first of its tuple) -> fn(output)."""

    def hook(mod, args, output):
        return _with_first(output, fn(_first(output)))

    return module.register_forward_hook(hook)


def capture_input(module: nn.Module, into: list):
    """A forward pre-hook keeping a copy of the module's first input (the residual stream for a block,
    Concat(heads) for an output projection)."""

    def hook(mod, args, kwargs):
        x = args[0] if args else kwargs["hidden_states"]
        into.append(x.detach().clone())

    return module.register_forward_pre_hook(hook, with_kwargs=True)


def capture_output(module: nn.Module, into: list):
    def hook(mod, args, output):
        into.append(_first(output).detach().clone())

    return module.register_forward_hook(hook)


def replace_input(module: nn.Module, fn: Callable[[Tensor], Tensor]):
    """A forward pre-hook: the module's first input (positional or ``hidden_states=``) -> fn(input)."""

    def hook(mod, args, kwargs):
        if args:
            return (fn(args[0].clone()), *args[1:]), kwargs
        return args, {**kwargs, "hidden_states": fn(kwargs["hidden_states"].clone())}

    return module.register_forward_pre_hook(hook, with_kwargs=True)


@contextmanager
def hooked(*handles) -> Iterator[None]:
    """Remove the hooks on leaving, whatever happens inside."""
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
