"""Our traced stack against torch.nn.Transformer with the same weights, inputs and masks."""

import dataclasses

import pytest
import torch
from torch import nn

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from tests.torch_reference import load_torch_stack

PAD = 0
ATOL = 1e-5


def build(d_model, heads, layers, d_ff, seed=0):
    torch.manual_seed(seed)
    ref = nn.Transformer(d_model, heads, layers, layers, d_ff, dropout=0.0, batch_first=True).eval()
    cfg = ModelConfig(
        50, 60, d_model=d_model, num_heads=heads, num_layers=layers, d_ff=d_ff, dropout=0.0, seed=seed
    )
    ours = Transformer(cfg).eval()
    load_torch_stack(ours, ref)
    return ref, ours


def padded_batch(lengths, total, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (len(lengths), total), generator=g)
    for b, n in enumerate(lengths):
        ids[b, n:] = PAD
    return ids


def torch_attention_weights(mha: nn.MultiheadAttention, x_q, x_kv, key_pad, attn_mask=None):
    _, w = mha(
        x_q,
        x_kv,
        x_kv,
        key_padding_mask=key_pad,
        attn_mask=attn_mask,
        need_weights=True,
        average_attn_weights=False,
    )
    return w  # (B, h, Lq, Lk)


CASES = [
    # d_model, heads, layers, d_ff, src lengths, tgt lengths
    (16, 2, 1, 32, [5], [4]),
    (32, 4, 2, 64, [7, 3], [5, 2]),
    (64, 8, 3, 128, [9, 9, 4], [6, 3, 6]),
    (24, 3, 2, 48, [1, 6], [1, 4]),
]


@pytest.mark.parametrize("d_model,heads,layers,d_ff,src_lens,tgt_lens", CASES)
def test_stack_and_every_head_equal_torch(d_model, heads, layers, d_ff, src_lens, tgt_lens):
    ref, ours = build(d_model, heads, layers, d_ff)
    src = padded_batch(src_lens, max(src_lens), 50, seed=1)
    tgt = padded_batch(tgt_lens, max(tgt_lens), 60, seed=2)
    tr = ours.trace(src, tgt)

    src_pad, tgt_pad = src == PAD, tgt == PAD  # torch: True = ignore
    T = tgt.size(1)
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # torch: True = not allowed
    with torch.no_grad():
        memory = ref.encoder(tr.src_embedded, src_key_padding_mask=src_pad)
        out = ref.decoder(
            tr.tgt_embedded,
            memory,
            tgt_mask=causal,
            tgt_key_padding_mask=tgt_pad,
            memory_key_padding_mask=src_pad,
        )

        real_src, real_tgt = ~src_pad, ~tgt_pad
        # Padded rows carry no meaning (torch's fast path fills them differently): compare real ones.
        torch.testing.assert_close(tr.memory[real_src], memory[real_src], atol=ATOL, rtol=0)
        torch.testing.assert_close(tr.decoder_output[real_tgt], out[real_tgt], atol=ATOL, rtol=0)

        x = tr.src_embedded
        for i, layer in enumerate(ref.encoder.layers):
            w = torch_attention_weights(layer.self_attn, x, x, src_pad)
            ours_w = tr.encoder[i].self_attn.weights
            for b, n in enumerate(src_lens):
                torch.testing.assert_close(ours_w[b, :, :n], w[b, :, :n], atol=ATOL, rtol=0)
            x = tr.encoder[i].output  # torch's layer input = our previous output (checked via memory)

        y = tr.tgt_embedded
        for i, layer in enumerate(ref.decoder.layers):
            w_self = torch_attention_weights(layer.self_attn, y, y, tgt_pad, attn_mask=causal)
            sa = layer.self_attn(y, y, y, attn_mask=causal, key_padding_mask=tgt_pad, need_weights=False)[0]
            h = layer.norm1(y + sa)
            w_cross = torch_attention_weights(layer.multihead_attn, h, memory, src_pad)
            for b, n in enumerate(tgt_lens):
                torch.testing.assert_close(
                    tr.decoder[i].self_attn.weights[b, :, :n], w_self[b, :, :n], atol=ATOL, rtol=0
                )
                torch.testing.assert_close(
                    tr.decoder[i].cross_attn.weights[b, :, :n], w_cross[b, :, :n], atol=ATOL, rtol=0
                )
            torch.testing.assert_close(
                tr.decoder[i].after_self_attn[real_tgt], h[real_tgt], atol=ATOL, rtol=0
            )
            y = tr.decoder[i].output


def randomise_layer_norms(ref: nn.Transformer, seed: int) -> int:
    """Give every LayerNorm of ``ref`` (the layers' and both final ones) random weights and biases.

    With weights 1 and biases 0 a LayerNorm applied to an already normalised vector changes it by
    ~1e-5: a final norm left out, or applied once too often, would pass a comparison within 1e-5."""
    g = torch.Generator().manual_seed(seed)
    norms = [m for m in ref.modules() if isinstance(m, nn.LayerNorm)]
    with torch.no_grad():
        for norm in norms:
            norm.weight.copy_(0.5 + torch.rand(norm.weight.shape, generator=g))  # U(0.5, 1.5)
            norm.bias.copy_(0.5 * torch.randn(norm.bias.shape, generator=g))
    return len(norms)


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("d_model,heads,layers,d_ff,src_lens,tgt_lens", [CASES[1], CASES[2]])
def test_every_layer_and_head_equal_torch_for_either_norm_with_random_layer_norms(
    norm, d_model, heads, layers, d_ff, src_lens, tgt_lens
):
    """Post-norm and pre-norm (torch's ``norm_first=True``), every LayerNorm with random weights and
    biases, the final norms of encoder and decoder included: each layer's output and each head's
    weights equal torch's, computed by torch's own layers from torch's own intermediate values."""
    torch.manual_seed(0)
    ref = nn.Transformer(d_model, heads, layers, layers, d_ff, dropout=0.0, batch_first=True,
                         norm_first=norm == "pre").eval()
    assert randomise_layer_norms(ref, seed=layers) == 5 * layers + 2  # 2 + 3 per layer pair, 2 final
    cfg = ModelConfig(50, 60, d_model=d_model, num_heads=heads, num_layers=layers, d_ff=d_ff, dropout=0.0,
                      norm=norm)
    ours = Transformer(cfg).eval()
    load_torch_stack(ours, ref)
    src = padded_batch(src_lens, max(src_lens), 50, seed=1)
    tgt = padded_batch(tgt_lens, max(tgt_lens), 60, seed=2)
    tr = ours.trace(src, tgt)
    pre = norm == "pre"
    src_pad, tgt_pad = src == PAD, tgt == PAD  # torch: True = ignore
    real_src, real_tgt = ~src_pad, ~tgt_pad  # padded rows carry no meaning: compare the real ones
    causal = torch.ones(tgt.size(1), tgt.size(1), dtype=torch.bool).triu(1)  # torch: True = not allowed

    def close(ours_rows, theirs_rows, real):
        torch.testing.assert_close(ours_rows[real], theirs_rows[real], atol=ATOL, rtol=0)

    def same_heads(ours_w, theirs_w, lengths):
        for b, n in enumerate(lengths):  # the real queries of each sequence
            torch.testing.assert_close(ours_w[b, :, :n], theirs_w[b, :, :n], atol=ATOL, rtol=0)

    with torch.no_grad():
        x = tr.src_embedded
        for i, layer in enumerate(ref.encoder.layers):
            attn_in = layer.norm1(x) if pre else x
            same_heads(tr.encoder[i].self_attn.weights,
                       torch_attention_weights(layer.self_attn, attn_in, attn_in, src_pad), src_lens)
            x = layer(x, src_key_padding_mask=src_pad)
            close(tr.encoder[i].output, x, real_src)
        memory = ref.encoder.norm(x)  # the encoder's final LayerNorm
        close(tr.memory, memory, real_src)
        close(tr.memory, ref.encoder(tr.src_embedded, src_key_padding_mask=src_pad), real_src)

        y = tr.tgt_embedded
        for i, layer in enumerate(ref.decoder.layers):
            self_in = layer.norm1(y) if pre else y
            same_heads(tr.decoder[i].self_attn.weights,
                       torch_attention_weights(layer.self_attn, self_in, self_in, tgt_pad, causal), tgt_lens)
            sa = layer.self_attn(self_in, self_in, self_in, attn_mask=causal, key_padding_mask=tgt_pad,
                                 need_weights=False)[0]
            h = y + sa if pre else layer.norm1(y + sa)
            close(tr.decoder[i].after_self_attn, h, real_tgt)
            cross_in = layer.norm2(h) if pre else h
            same_heads(tr.decoder[i].cross_attn.weights,
                       torch_attention_weights(layer.multihead_attn, cross_in, memory, src_pad), tgt_lens)
            y = layer(y, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_pad,
                      memory_key_padding_mask=src_pad)
            close(tr.decoder[i].output, y, real_tgt)
        close(tr.decoder_output, ref.decoder.norm(y), real_tgt)  # the decoder's final LayerNorm
        whole = ref.decoder(tr.tgt_embedded, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_pad,
                            memory_key_padding_mask=src_pad)
        close(tr.decoder_output, whole, real_tgt)


def test_layer_outputs_equal_torch_layer_by_layer():
    ref, ours = build(32, 4, 2, 64)
    src = padded_batch([6, 4], 6, 50, seed=3)
    tr = ours.trace(src)
    x = tr.src_embedded
    with torch.no_grad():
        for i, layer in enumerate(ref.encoder.layers):
            x = layer(x, src_key_padding_mask=src == PAD)
            torch.testing.assert_close(tr.encoder[i].output[src != PAD], x[src != PAD], atol=ATOL, rtol=0)


def test_forward_equals_trace_logits_and_masks_are_the_papers():
    _, ours = build(32, 4, 2, 64)
    src = padded_batch([5, 2], 5, 50, seed=4)
    tgt = padded_batch([4, 3], 4, 60, seed=5)
    tr = ours.trace(src, tgt)
    torch.testing.assert_close(ours(src, tgt), tr.logits)
    # decoder self-attention mask = key padding ∧ causal, expanded to [B, h, q, k]
    assert tr.decoder[0].self_attn.mask.shape == (2, 4, 4, 4)
    expected = (tgt != PAD)[:, None, None, :] & torch.ones(4, 4, dtype=torch.bool).tril()
    assert torch.equal(tr.decoder[0].self_attn.mask, expected.expand(2, 4, 4, 4))
    assert torch.equal(tr.decoder[0].cross_attn.mask, (src != PAD)[:, None, None, :].expand(2, 4, 4, 5))
    # weights of masked entries are exactly zero, and no query looks ahead
    w = tr.decoder[1].self_attn.weights
    assert torch.all(w[~tr.decoder[1].self_attn.mask] == 0)


def test_greedy_decode_matches_stepwise_argmax_and_stops_at_eos():
    _, ours = build(32, 4, 2, 64, seed=7)
    src = padded_batch([5, 3], 5, 50, seed=6)
    res = ours.greedy_decode(src, max_new_tokens=6, bos_id=2, eos_id=3)
    assert res.tokens[:, 0].tolist() == [2, 2]
    assert len(res.steps) == len(res.probs) == res.tokens.size(1) - 1
    for t, step in enumerate(res.steps):
        # each step's trace is of the prefix that produced token t+1
        assert torch.equal(step.tgt_ids, res.tokens[:, : t + 1])
        expected = ours(src, res.tokens[:, : t + 1])[:, -1].argmax(-1)
        done_before = (res.tokens[:, 1 : t + 1] == 3).any(dim=1)
        assert torch.equal(res.tokens[~done_before, t + 1], expected[~done_before])


def test_trace_does_not_depend_on_training_mode_and_restores_it():
    cfg = ModelConfig(20, 20, d_model=16, num_heads=2, dropout=0.5)
    m = Transformer(cfg)
    src = torch.tensor([[5, 6, 7]])
    m.train()
    a = m.trace(src, src).logits
    assert m.training
    m.eval()
    torch.testing.assert_close(m.trace(src, src).logits, a)


def test_same_seed_same_weights_and_global_rng_untouched():
    cfg = ModelConfig(20, 20, d_model=16, num_heads=2, seed=3)
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a, b = Transformer(cfg), Transformer(cfg)
    after = torch.rand(1)
    assert torch.equal(before, after)
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    c = Transformer(ModelConfig(20, 20, d_model=16, num_heads=2, seed=4))
    assert not torch.equal(a.src_embed.lookup.weight, c.src_embed.lookup.weight)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope", "alibi"])
def test_sharing_weights_is_the_same_seed_with_the_other_norm(positions):
    cfg = ModelConfig(30, 40, d_model=16, num_heads=2, num_layers=2, d_ff=32, seed=5, positions=positions)
    post = Transformer(cfg).eval()
    pre = post.sharing_weights(norm="pre")
    fresh = Transformer(dataclasses.replace(cfg, norm="pre")).eval()
    assert pre.config.norm == "pre" and post.config.norm == "post" and not pre.training
    for a, b in zip(post.parameters(), pre.parameters(), strict=True):
        assert a.data_ptr() == b.data_ptr()  # the same tensors: no second copy in memory
    src, tgt = torch.randint(4, 30, (2, 6)), torch.randint(4, 40, (2, 5))
    with torch.no_grad():
        assert torch.equal(pre(src, tgt), fresh(src, tgt))
        assert not torch.allclose(pre(src, tgt), post(src, tgt))
    with pytest.raises(RuntimeError, match="size mismatch"):
        post.sharing_weights(d_ff=64)  # a change of shape is refused


def test_init_is_glorot_and_the_same_on_any_number_of_threads(monkeypatch):
    import core.model.weight_init as cm

    cfg = ModelConfig(300, 300, d_model=64, num_heads=4, num_layers=2, d_ff=256, seed=11)
    monkeypatch.setattr(cm, "INIT_THREADS", 1)
    one = Transformer(cfg)
    monkeypatch.setattr(cm, "INIT_THREADS", 4)
    four = Transformer(cfg)
    for (name, a), b in zip(one.named_parameters(), four.parameters(), strict=True):
        assert torch.equal(a, b), name
    w = one.encoder.layers[0].ffn.linear1.weight.detach()  # (d_ff, d_model): U(-a, a), a = √(6 / (64 + 256))
    bound = (6 / (64 + 256)) ** 0.5
    assert w.abs().max() <= bound and w.abs().max() > 0.99 * bound
    assert abs(float(w.var()) - bound**2 / 3) < 0.05 * bound**2 / 3
    bias = one.encoder.layers[0].ffn.linear1.bias.detach()  # torch's Linear bias: U(-1/√in, 1/√in)
    assert bias.abs().max() <= 64**-0.5 and float(bias.std()) > 0.5 * 64**-0.5 / 3**0.5
    assert torch.equal(one.encoder.layers[0].sublayer1.norm.weight, torch.ones(64))
    a, b = one.encoder.layers[0].self_attn.w_q.weight, one.encoder.layers[0].self_attn.w_k.weight
    assert not torch.equal(a, b)  # every tensor its own stream


def test_bad_ids_are_refused_with_a_clear_message():
    # learned positions have no row past max_len (sinusoids, RoPE and ALiBi extend: test_positional)
    m = Transformer(ModelConfig(10, 10, d_model=8, num_heads=2, max_len=4, positions="learned"))
    with pytest.raises(ValueError, match=r"src_ids has ids outside \[0, 10\)"):
        m.trace(torch.tensor([[11]]))
    with pytest.raises(ValueError, match="sequence length 5 exceeds max_len=4"):
        m.trace(torch.tensor([[5, 5, 5, 5, 5]]))


def test_building_a_model_does_not_import_torch_dynamo_or_sympy():
    """Modules are built on the "meta" device; torch's normal_ and arange there run Python
    decompositions that import torch._dynamo (~1.4 s on a server's first model, the first page
    anyone opens), and to_empty's empty_like one that imports sympy (~0.4 s). A fresh interpreter,
    so no other test has imported them already."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\n"
        "from core.model.config import ModelConfig\n"
        "from core.model.transformer import Transformer\n"
        "Transformer(ModelConfig(50, 50, d_model=16, num_heads=2, num_layers=1, d_ff=32))\n"
        "print('torch._dynamo' in sys.modules, 'sympy' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_an_embedding_built_on_its_own_is_initialised_as_torch_would():
    """Outside Transformer (not on the meta device) the table and the sinusoids are real numbers."""
    from core.model.positional import sinusoidal_encoding
    from core.model.transformer import Embedding

    torch.manual_seed(0)
    embed = Embedding(40, ModelConfig(40, 40, d_model=8, num_heads=2, num_layers=1, d_ff=16))
    assert torch.equal(embed.pe, sinusoidal_encoding(embed.max_len, 8))
    weights = embed.lookup.weight.detach()
    assert torch.isfinite(weights).all() and 0.5 < float(weights.std()) < 1.5  # N(0, 1), nn.Embedding's


def test_materialising_keeps_a_shared_tensor_shared_and_leaves_real_ones_alone():
    from torch import nn

    from core.model.weight_init import materialize_on_cpu

    with torch.device("meta"):
        a, b = nn.Linear(3, 4), nn.Linear(4, 3)
        b.weight = nn.Parameter(torch.empty(3, 4))
    tied = nn.ModuleDict({"a": a, "b": b, "c": nn.Linear(2, 2)})
    tied["c"].weight.requires_grad_(False)
    tied.b.register_buffer("scale", torch.ones(3))
    tied.a.weight = tied.b.weight = nn.Parameter(torch.empty(3, 4, device="meta"))
    kept = tied["c"].bias
    tied.a.bias.requires_grad_(False)  # a frozen meta parameter stays frozen
    materialize_on_cpu(tied)
    assert all(t.device.type == "cpu" for t in [*tied.parameters(), *tied.buffers()])
    assert tied.a.weight is tied.b.weight and isinstance(tied.a.weight, nn.Parameter)
    assert tied["c"].bias is kept and not tied["c"].weight.requires_grad  # a CPU tensor is not replaced
    assert torch.equal(tied.b.scale, torch.ones(3)) and tied.a.bias.shape == (4,)
    assert not tied.a.bias.requires_grad and tied.b.bias.requires_grad


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


@pytest.mark.parametrize("options", [{}, {"positions": "learned", "embed_norm": True, "type_vocab_size": 2},
                                     {"norm": "pre"}, {"positions": "rope"}, {"positions": "alibi"},
                                     {"decoder": False, "activation": "gelu", "final_norm": False}])
def test_a_model_drawn_into_a_gone_models_memory_has_the_fresh_numbers(options):
    """The slab pool: a drawn model's parameters share one block, handed to the next model of that
    size once the first is gone, and every number is drawn again (nothing of the old one shows)."""
    import gc

    from core.model.weight_init import SLABS

    SLABS.clear()
    config = ModelConfig(50, 60, d_model=16, num_heads=2, num_layers=2, d_ff=32, seed=4, **options)
    first = Transformer.undrawn(dataclasses.replace(config, seed=99)).draw()
    block = _storage(first.encoder.layers[0].ffn.linear1.weight)
    assert {_storage(p) for p in first.parameters()} == {block}  # one slab for the whole model
    with torch.no_grad():
        for p in first.parameters():
            p.fill_(7.0)  # what a recycled slab must not show
    del first, p
    gc.collect()
    second = Transformer.undrawn(config).draw()
    assert _storage(second.encoder.layers[0].ffn.linear1.weight) == block  # the same memory, handed on
    fresh = Transformer(config)  # torch.empty: new memory
    assert list(second.state_dict()) == list(fresh.state_dict())
    assert all(torch.equal(v, fresh.state_dict()[k]) for k, v in second.state_dict().items())
    SLABS.clear()


def test_a_slab_is_not_handed_on_while_anything_still_uses_its_numbers():
    import gc

    from core.model.weight_init import SLABS

    SLABS.clear()
    config = ModelConfig(50, 60, d_model=16, num_heads=2, num_layers=2, d_ff=32, seed=4)
    model = Transformer.undrawn(config).draw()
    kept = model.encoder.layers[1].self_attn.w_q.weight[:, :4]  # a view of one weight, as a figure keeps
    kept_numbers = kept.detach().clone()  # (a clone with autograd history would hold the weight)
    twin = model.sharing_weights(norm="pre")  # the very tensors, in another model
    block = _storage(kept)
    del model
    gc.collect()
    other = Transformer.undrawn(dataclasses.replace(config, seed=5)).draw()
    assert _storage(other.generator.weight) != block
    assert torch.equal(kept, kept_numbers) and _storage(twin.generator.weight) == block
    del kept, twin
    gc.collect()
    third = Transformer.undrawn(dataclasses.replace(config, seed=6)).draw()
    assert _storage(third.generator.weight) == block  # now nothing used it
    SLABS.clear()


def test_without_torchs_use_count_nothing_is_reused_and_models_still_draw(monkeypatch):
    from core.model.weight_init import SLABS, _SlabPool

    SLABS.clear()
    monkeypatch.setattr(_SlabPool, "_use_count", None)
    config = ModelConfig(50, 60, d_model=16, num_heads=2, num_layers=1, d_ff=32, seed=4)
    model = Transformer.undrawn(config).draw()
    assert not SLABS._slabs
    fresh = Transformer(config)
    assert all(torch.equal(v, fresh.state_dict()[k]) for k, v in model.state_dict().items())


def test_the_pool_keeps_a_bounded_spare_and_trained_models_stay_out_of_it():
    import gc

    from core.model.weight_init import SLABS, _SlabPool

    pool = _SlabPool(spare_bytes=1000 * 4)
    a, b = pool.take(600), pool.take(600)
    assert _storage(a) != _storage(b)
    del a, b
    gc.collect()
    c = pool.take(100)  # a quarter larger at most: neither free slab of 600 fits
    assert c.numel() == 100 and len(pool._slabs) == 2  # one 600 let go: 1200 spare > 1000
    d = pool.take(500)
    assert d.numel() == 500 and _storage(d) in {_storage(s) for s in pool._slabs}
    SLABS.clear()
    trained = Transformer(ModelConfig(50, 60, d_model=16, num_heads=2, num_layers=1, d_ff=32))
    assert len({_storage(p) for p in trained.parameters()}) > 1 and not SLABS._slabs  # torch.empty each


def test_uniform_fill_is_a_fine_grid_over_the_whole_range_with_uniform_moments():
    from core.model.weight_init import UNIFORM_CHUNK, _uniform

    n = UNIFORM_CHUNK + 12_345  # more than one chunk, and a part of one
    t = torch.empty(n)
    _uniform(t, 0.25, torch.Generator().manual_seed(3))
    again = torch.empty(n)
    _uniform(again, 0.25, torch.Generator().manual_seed(3))
    assert torch.equal(t, again)  # the seed decides every number
    step = 0.25 / 32768  # cell centres: (k + 1/2) · step, k = -32768 … 32767
    assert float(t.min()) >= -0.25 and float(t.max()) <= 0.25 and float(t.abs().max()) > 0.249
    k = t / step - 0.5
    assert torch.equal(k, k.round())  # on the grid
    assert abs(float(t.mean())) < 4 * 0.25 / (3 * n) ** 0.5  # mean 0 (4 standard errors)
    assert abs(float(t.var()) - 0.25**2 / 3) < 0.01 * 0.25**2 / 3
    counts = torch.histc(t, bins=16, min=-0.25, max=0.25)  # flat: every sixteenth ~ n / 16
    assert float((counts - n / 16).abs().max()) < 5 * (n / 16) ** 0.5
    tail = t[UNIFORM_CHUNK:]  # the next chunk draws anew, it does not repeat the first
    assert not torch.equal(tail, t[: tail.numel()])
    pairs = t[: n - 1 : 2] * t[1::2]  # neighbours independent: E[xy] = 0
    assert abs(float(pairs.mean())) < 4 * (0.25**2 / 3) / (n / 2) ** 0.5


def test_building_on_meta_runs_no_torch_initialisation(monkeypatch):
    """Transformer draws every weight itself (``_init_weights``): torch's ``reset_parameters`` on the
    meta modules was ~18 ms of work on no data per new model. Any init call while building fails here."""
    import torch.nn.init as init

    def called(*args, **kwargs):
        raise AssertionError("torch's default initialisation ran on a meta module")

    for name in ("kaiming_uniform_", "uniform_", "normal_", "ones_", "zeros_"):
        monkeypatch.setattr(init, name, called)
    cfg = ModelConfig(30, 40, d_model=16, num_heads=2, num_layers=2, d_ff=32, embed_norm=True)
    Transformer(cfg, _random_init=False, _materialize=False)  # shapes only, nothing initialised


def test_core_linear_and_layernorm_initialise_like_torch_on_cpu():
    """Off the meta device they are nn.Linear and nn.LayerNorm: same random numbers, same values."""
    from core.model.modules import LayerNorm, Linear

    torch.manual_seed(3)
    ours = Linear(5, 4)
    torch.manual_seed(3)
    theirs = nn.Linear(5, 4)
    assert torch.equal(ours.weight, theirs.weight) and torch.equal(ours.bias, theirs.bias)
    norm = LayerNorm(4)
    assert torch.equal(norm.weight, torch.ones(4)) and torch.equal(norm.bias, torch.zeros(4))
    assert list(ours.state_dict()) == list(theirs.state_dict())
