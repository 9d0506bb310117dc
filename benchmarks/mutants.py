"""Mutation check: does the test suite notice a wrong model?

    .venv/bin/python benchmarks/mutants.py              # every mutation, one at a time (~4 min)
    .venv/bin/python benchmarks/mutants.py -k norm      # those whose name contains "norm"
    .venv/bin/python benchmarks/mutants.py --list       # names, files and tests; runs nothing

Each mutation is one small, realistic slip in ``core/`` (a residual on the wrong tensor, a mask off
by one, a loss that counts padding), written as (file, exact old text, new text). The repository is
copied once to a scratch directory (without .venv and .git; the working tree is never touched);
each mutation is applied to the copy alone, the tests that cover that code run there (``pytest -x
-q``, one process, this interpreter), and the file is restored. A failing test kills the mutation;
all of them passing means it survived: the suite would let that wrong model through.

First the unmutated copy runs every listed test (a test that fails anyway kills nothing). The old
text of each mutation must occur exactly once in its file: when the code has changed, the script
says which mutation no longer applies and stops, rather than counting a mutation that was never made.

Exit status: 0 every mutation killed; 1 some survived; 2 the check itself could not run (a mutation
that no longer matches, tests failing on the unmutated copy, pytest unable to collect).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORE = shutil.ignore_patterns(".venv", ".git", "__pycache__", ".pytest_cache", ".ruff_cache",
                                ".hypothesis", "*.pyc")
TIMEOUT_S = 900  # one mutation's tests; a mutation that makes a test hang counts as killed, and says so

# The tests that cover each part of core/ (whole files: the suite as a reviewer would run it).
TORCH = "tests/core/model/test_model_vs_torch.py"
ATTENTION = "tests/core/model/test_attention.py"
POSITIONAL = "tests/core/model/test_positional.py"
TRAIN = "tests/core/training/test_seq2seq.py"
PIPELINE = "tests/core/tracing/test_pipeline.py"
DATA = "tests/core/training/test_pairs.py"
BPE = "tests/core/tokenizers/test_bpe.py"
BPE_TEXTBOOK = "tests/core/tokenizers/test_bpe_textbook.py"
PRETRAINED = "tests/core/loading/test_minilm.py"
GREEDY = "tests/core/tracing/test_greedy.py"
CHECKPOINT = "tests/core/training/test_checkpoint.py"
DOCTESTS = "tests/core/test_doctests.py"  # the docstrings' examples in core/
EMBEDDINGS = "tests/figures/test_embeddings.py"


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str  # relative to the repository
    old: str  # must occur exactly once in the file
    new: str
    tests: tuple[str, ...]  # pytest node ids (files or file::test)
    why: str  # what a model with this slip gets wrong


MUTATIONS = [
    # -- the six that no test caught in issue 24 (eight mutations), then the kinds that were caught -----
    Mutation("pre_norm_residual_on_the_normalised_input", "core/model/layers.py",
             "            y, extra = sublayer(self.norm(x))\n"
             "            return x + self.dropout(y), y, extra",
             "            x = self.norm(x)\n            y, extra = sublayer(x)\n"
             "            return x + self.dropout(y), y, extra",
             (TORCH,), "pre-norm adds the sublayer to norm(x) instead of x: the residual stream is lost"),
    Mutation("encoder_final_norm_removed", "core/model/transformer.py",
             "            x, t = layer(x, src_mask)\n            traces.append(t)\n"
             "        return self.norm(x), traces",
             "            x, t = layer(x, src_mask)\n            traces.append(t)\n        return x, traces",
             (TORCH,), "the memory is the last layer's output without the encoder's final LayerNorm"),
    Mutation("decoder_final_norm_removed", "core/model/transformer.py",
             "            x, t = layer(x, memory, src_mask, tgt_mask)\n            traces.append(t)\n"
             "        return self.norm(x), traces",
             "            x, t = layer(x, memory, src_mask, tgt_mask)\n            traces.append(t)\n"
             "        return x, traces",
             (TORCH,), "the logits read the last decoder layer without the final LayerNorm"),
    Mutation("label_smoothing_off", "core/training/settings.py",
             "    label_smoothing: float = 0.1  #", "    label_smoothing: float = 0.0  #",
             (TRAIN,), "training without the paper's label smoothing 0.1"),
    Mutation("loss_counts_padding", "core/training/seq2seq.py",
             "ignore_index=PAD_ID, label_smoothing=epsilon)", "label_smoothing=epsilon)",
             (TRAIN,), "the loss also rewards predicting [PAD] after the end of every shorter sequence"),
    Mutation("decoder_reads_tgt_shifted_left", "core/training/seq2seq.py",
             "logits = model(src, tgt[:, :-1])", "logits = model(src, tgt[:, 1:])",
             (TRAIN,), "teacher forcing feeds the very tokens to predict: the decoder learns to copy"),
    Mutation("source_cut_at_max_len", "core/tracing/pipeline.py",
             "return min(max_tokens, pipe.config.max_len - 2)", "return min(max_tokens, pipe.config.max_len)",
             (PIPELINE,), "no room left for [BOS] and [EOS] within the model's positions"),
    Mutation("truncated_at_exactly_max_tokens", "core/tracing/pipeline.py",
             "        truncated=total > limit,\n        total_tokens=total,\n        target_given=given,",
             "        truncated=total >= limit,\n        total_tokens=total,\n        target_given=given,",
             (PIPELINE,), "a sentence of exactly max_tokens tokens is said to be cut"),
    Mutation("teacher_input_one_too_long", "core/tracing/pipeline.py",
             "return [BOS] + tgt_labels[: limit - 1], [BOS_ID] + tgt_ids[: limit - 1]",
             "return [BOS] + tgt_labels[:limit], [BOS_ID] + tgt_ids[:limit]",
             (PIPELINE,), "the decoder reads limit + 1 tokens, one more than the source may have"),
    # -- attention and masks ------------------------------------------------------------------------------
    Mutation("no_sqrt_d_k", "core/model/attention.py",
             "scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))", "scores = q @ k.transpose(-2, -1)",
             (ATTENTION, TORCH), "scores not scaled by 1/sqrt(d_k)"),
    Mutation("softmax_over_the_queries", "core/model/attention.py",
             ".softmax(dim=-1).masked_fill(~mask, 0.0)", ".softmax(dim=-2).masked_fill(~mask, 0.0)",
             (ATTENTION, TORCH), "masked softmax normalises columns instead of rows"),
    Mutation("heads_split_without_transpose", "core/model/attention.py",
             "return x.view(B, L, self.h, self.d_k).transpose(1, 2)", "return x.view(B, self.h, L, self.d_k)",
             (ATTENTION, TORCH), "each head gets a slice across positions instead of its d_k features"),
    Mutation("causal_mask_off_by_one", "core/model/masks.py",
             "dtype=torch.bool, device=device).tril()[None, None]",
             "dtype=torch.bool, device=device).tril(1)[None, None]",
             (ATTENTION, TORCH, DOCTESTS), "each decoder position may see the next token"),
    Mutation("padding_mask_inverted", "core/model/masks.py",
             "return (ids != pad_id)[:, None, None, :]", "return (ids == pad_id)[:, None, None, :]",
             (ATTENTION, TORCH), "queries attend to the padding and nothing else"),
    Mutation("decoder_mask_padding_or_causal", "core/model/masks.py",
             "return padding_mask(tgt_ids, pad_id) & causal_mask(",
             "return padding_mask(tgt_ids, pad_id) | causal_mask(",
             (ATTENTION, TORCH), "decoder mask = padding OR causal: every real token sees the future"),
    # -- layers -------------------------------------------------------------------------------------------
    Mutation("post_norm_without_residual", "core/model/layers.py",
             "return self.norm(x + self.dropout(y)), y, extra", "return self.norm(self.dropout(y)), y, extra",
             (TORCH,), "post-norm drops the residual connection"),
    Mutation("ffn_without_relu", "core/model/layers.py",
             "hidden = self.activation(self.linear1(x))", "hidden = self.linear1(x)",
             (TORCH,), "the feed-forward network is linear"),
    Mutation("cross_attention_sees_source_padding", "core/model/layers.py",
             "lambda y: self.cross_attn(y, memory, src_mask)", "lambda y: self.cross_attn(y, memory, None)",
             (TORCH,), "cross-attention attends to the source's [PAD] positions"),
    Mutation("ffn_reads_the_self_attention_output", "core/model/layers.py",
             "self.sublayer3(after_cross, self.ffn)", "self.sublayer3(after_self, self.ffn)",
             (TORCH,), "the decoder's feed-forward skips the cross-attention's result"),
    # -- embeddings and positions -------------------------------------------------------------------------
    Mutation("no_sqrt_d_model", "core/model/transformer.py",
             "x = lookup if self.scale is None else lookup * self.scale", "x = lookup",
             (TORCH, EMBEDDINGS), "token embeddings not scaled by sqrt(d_model) before PE is added"),
    Mutation("sinusoid_cos_in_even_dimensions", "core/model/positional.py",
             "pe[:, 0::2] = torch.sin(angle)", "pe[:, 0::2] = torch.cos(angle)",
             (POSITIONAL, DOCTESTS), "PE(pos, 2i) = cos instead of sin"),
    Mutation("rope_frequency_halved", "core/model/positional.py",
             "return torch.exp(-math.log(base) * two_i / d_k)",
             "return torch.exp(-math.log(base) * two_i / d_k / 2)",
             (POSITIONAL, DOCTESTS), "RoPE's θ_i = 10000^(-i/d_k) instead of 10000^(-2i/d_k)"),
    Mutation("rope_rotates_backwards", "core/model/positional.py",
             "out[..., 1 : 2 * pairs : 2] = even * sin + odd * cos",
             "out[..., 1 : 2 * pairs : 2] = -even * sin + odd * cos",
             (POSITIONAL, DOCTESTS), "the odd half of RoPE's rotation has the wrong sign (not a rotation)"),
    Mutation("alibi_sign", "core/model/positional.py",
             "return -alibi_slopes(num_heads)[:, None, None] * distance",
             "return alibi_slopes(num_heads)[:, None, None] * distance",
             (POSITIONAL, DOCTESTS), "ALiBi rewards distant keys instead of penalising them"),
    # -- decoding, training data, tokenizers -----------------------------------------------------------
    Mutation("greedy_ignores_eos", "core/model/transformer.py",
             "done |= next_id == eos_id", "done |= next_id == -1",
             (TORCH, GREEDY), "greedy decoding writes on after [EOS]"),
    Mutation("noam_max_instead_of_min", "core/training/schedule.py",
             "min(step**-0.5, step * warmup**-1.5)", "max(step**-0.5, step * warmup**-1.5)",
             (TRAIN,), "the learning rate never warms up and grows without bound"),
    Mutation("alignment_counted_one_position_late", "core/training/seq2seq.py",
             "    j = torch.arange(T)\n", "    j = torch.arange(1, T + 1)\n",
             (TRAIN, CHECKPOINT), "the alignment metric checks the next character"),
    Mutation("target_without_eos", "core/training/pairs.py",
             "tgt_ids = [[BOS_ID, *tgt_vocab.encode(y), EOS_ID] for _, y in pairs]",
             "tgt_ids = [[BOS_ID, *tgt_vocab.encode(y)] for _, y in pairs]",
             (DATA, TRAIN), "the model is never taught to stop"),
    Mutation("bpe_skips_the_left_neighbour", "core/tokenizers/bpe.py",
             "if prv[i] != -1 and (m := merge_map.get((sym[prv[i]], new))) is not None:",
             "if False and (m := merge_map.get((sym[prv[i]], new))) is not None:",
             (BPE, BPE_TEXTBOOK), "after a merge, the new token is never merged with the token on its left"),
    Mutation("wordpiece_without_continuation_prefix", "core/tokenizers/wordpiece.py",
             'piece = word[start:end] if start == 0 else "##" + word[start:end]',
             "piece = word[start:end]",
             (PRETRAINED,), "WordPiece looks word-inner pieces up without ##"),
]


def check_applies(mutations: list[Mutation]) -> list[str]:
    """The mutations whose old text is not in their file exactly once, with the count found."""
    problems = []
    for m in mutations:
        count = (ROOT / m.file).read_text(encoding="utf-8").count(m.old)
        if count != 1:
            problems.append(f"{m.name}: its old text occurs {count} times in {m.file}, not once")
        if not isinstance(m.tests, tuple):
            problems.append(f"{m.name}: tests must be a tuple of node ids, got {m.tests!r}")
            continue
        missing = [t for t in m.tests if not (ROOT / t.split("::")[0]).is_file()]
        if missing:
            problems.append(f"{m.name}: no test file {', '.join(missing)}")
    return problems


def run_tests(copy: Path, tests: tuple[str, ...] | list[str]) -> tuple[int | None, str, float]:
    """(pytest's exit code, or None on timeout; its output; seconds) for these tests in the copy."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not browser",
               *tests]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, time.perf_counter() - start
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - start


def first_failure(output: str) -> str:
    """The first ``FAILED node`` (or ``ERROR node``) of pytest's short summary."""
    found = re.search(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", output, re.MULTILINE)
    return found.group(1) if found else "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", dest="pattern", default="", help="only the mutations whose name contains this")
    ap.add_argument("--list", action="store_true", help="list the mutations and their tests, run nothing")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run on the unmutated copy")
    args = ap.parse_args()

    chosen = [m for m in MUTATIONS if args.pattern in m.name]
    if args.list:
        for m in chosen:
            print(f"{m.name:42} {m.file:20} {' '.join(m.tests)}\n    {m.why}")
        return 0
    problems = check_applies(chosen)
    if problems:
        print("the code has changed; update these mutations first:\n  " + "\n  ".join(problems))
        return 2
    if not chosen:
        print(f"no mutation's name contains {args.pattern!r}")
        return 2

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="glassbox-mutants-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(ROOT, copy, ignore=IGNORE)
        print(f"scratch copy: {copy}  python: {sys.executable}")
        if not args.no_baseline:
            tests = sorted({t for m in chosen for t in m.tests})
            code, out, seconds = run_tests(copy, tests)
            if code != 0:
                print(f"the unmutated copy fails its tests (exit {code}, {seconds:.0f} s): fix that first\n")
                print(out[-3000:])
                return 2
            print(f"unmutated copy: {len(tests)} test files pass ({seconds:.0f} s)\n")

        results = []
        for m in chosen:
            path = copy / m.file
            original = path.read_text(encoding="utf-8")
            path.write_text(original.replace(m.old, m.new, 1), encoding="utf-8")
            try:
                code, out, seconds = run_tests(copy, m.tests)
            finally:
                path.write_text(original, encoding="utf-8")
            if code == 1:
                verdict, by = "killed", first_failure(out)
            elif code is None:
                verdict, by = "killed", f"(a test ran over {TIMEOUT_S} s)"
            elif code == 0:
                verdict, by = "SURVIVED", "every test passed"
            else:
                print(f"{m.name}: pytest could not run the tests (exit {code}):\n{out[-3000:]}")
                return 2
            results.append((m, verdict))
            print(f"{verdict:8} {m.name:42} {seconds:5.0f} s  {by}", flush=True)

    killed = sum(verdict == "killed" for _, verdict in results)
    survivors = [m.name for m, verdict in results if verdict != "killed"]
    print(f"\n{killed} of {len(results)} mutations killed, {len(survivors)} survived "
          f"({time.perf_counter() - started:.0f} s)")
    for name in survivors:
        print(f"  survived: {name}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
