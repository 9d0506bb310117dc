"""How fast is our pure-Python BPE next to Hugging Face's Rust one, and do they agree?

    .venv/bin/python benchmarks/bpe.py              # 1 MB and 10 MB, 500 merges
    .venv/bin/python benchmarks/bpe.py --sizes 1 --merges 2000

The text is built deterministically, without any download: words drawn with a seeded Zipf-like law
(the r-th most common word is ~1/r^1.1 as frequent, as in real text) from three pools:

* English words of the shipped corpus ``assets/corpus/en_zh.txt``, most frequent first;
* Chinese phrases, the keys of ``pypinyin.phrases_dict.phrases_dict`` (47k, MIT);
* their pinyin without tones ("yinhang"): a long tail of Latin-letter words the corpus lacks;

glued into sentences with punctuation, numbers, the odd emoji and newlines. Both tokenizers train
on the same string; we print the times, their ratio, and whether the merges are equal.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
import unicodedata
from collections import Counter
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.tokenizers.bpe import BPETokenizer  # noqa: E402


def word_pools() -> tuple[list[str], list[str], list[str]]:
    from pypinyin.phrases_dict import phrases_dict

    corpus = (ROOT / "assets" / "corpus" / "en_zh.txt").read_text(encoding="utf-8")
    english = [w for w, _ in Counter(re.findall(r"[A-Za-z]+(?:'[a-z]+)?", corpus)).most_common()]
    phrases = sorted(phrases_dict)
    random.Random(1).shuffle(phrases)  # so that "frequent" phrases are not all 一...
    # pinyin without tone marks: "yín háng" -> "yinhang"
    pinyin = []
    for p in phrases[:20000]:
        plain = unicodedata.normalize("NFKD", "".join(s[0] for s in phrases_dict[p]))
        pinyin.append("".join(c for c in plain if c.isascii() and c.isalpha()))
    return english, phrases, pinyin


def zipf_weights(n: int, s: float = 1.1) -> list[float]:
    return [1.0 / (r + 1) ** s for r in range(n)]


def make_text(n_bytes: int, seed: int = 0) -> str:
    """About ``n_bytes`` bytes of UTF-8 mixed English/Chinese text, the same for the same seed."""
    english, phrases, pinyin = word_pools()
    rng = random.Random(seed)
    pools = [(english, zipf_weights(len(english))), (phrases, zipf_weights(len(phrases))),
             (pinyin, zipf_weights(len(pinyin)))]
    extras = ["2024", "3.14", "42", "100%", "😀", "(", ")", "\"", "—", "1,000", "v2.0"]
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        lang = rng.choices((0, 1, 2), weights=(0.55, 0.35, 0.10))[0]
        words, weights = pools[lang]
        k = rng.randint(4, 18)
        sent = rng.choices(words, weights=weights, k=k)
        if rng.random() < 0.2:
            sent.insert(rng.randrange(k), rng.choice(extras))
        if lang == 1:
            line = "".join(sent) + rng.choice("。。。，！？")
        else:
            line = " ".join(sent)
            line = line[0].upper() + line[1:] + rng.choice("...,!?;:")
        line += rng.choice([" ", " ", " ", "\n", "\n\n", "  "])
        parts.append(line)
        size += len(line.encode("utf-8"))
    return "".join(parts)


def hf_train(text: str, num_merges: int):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=256 + num_merges, special_tokens=[], min_frequency=0,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator([text], trainer)
    return tok


def hf_merges(tok) -> list[tuple[str, str]]:
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges]


def best_of(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1, 10], help="text sizes in MB")
    ap.add_argument("--merges", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = ap.parse_args()

    for mb in args.sizes:
        text = make_text(int(mb * 1_000_000))
        repeat = args.repeat if mb <= 2 else 1
        n = args.merges
        t_ours, ours = best_of(partial(BPETokenizer.train, text, n), repeat)
        t_hf, hf = best_of(partial(hf_train, text, n), repeat)
        same = ours.merges == hf_merges(hf)
        print(f"train  {mb:g} MB ({len(text):,} chars), {n} merges: ours {t_ours:.2f} s, "
              f"HF {t_hf:.2f} s, ratio {t_ours / t_hf:.2f}x, merges equal: {same}")

        sample = text[:1_000_000]
        fresh = BPETokenizer(ours.merges)  # an empty word cache
        t_enc, ids = best_of(partial(fresh.encode, sample, allow_special=False), 1)
        t_enc_hf, enc = best_of(partial(hf.encode, sample), 1)
        same_tok = fresh.tokenize(sample, allow_special=False) == enc.tokens
        print(f"encode {len(sample.encode()) / 1e6:.1f} MB: ours {t_enc:.2f} s (cold cache), "
              f"HF {t_enc_hf:.2f} s, ratio {t_enc / t_enc_hf:.2f}x, {len(ids):,} tokens, "
              f"tokens equal: {same_tok}")

if __name__ == "__main__":
    main()
