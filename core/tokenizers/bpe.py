"""Byte Pair Encoding, twice: the classic word-level algorithm and GPT-2's byte-level one.

At every training step the most frequent adjacent pair becomes a new token; the ordered *merges* are
the whole tokenizer. ``BPETokenizer`` runs both flavours: classic (Sennrich et al. 2016,
``byte_level=False``: words plus ``</w>``) and byte-level (GPT-2, ``byte_level=True``: UTF-8 bytes).

>>> tok = BPETokenizer.train("low low low low low lower lower newest newest", 3, byte_level=False)
>>> tok.merges, tok.tokenize("lowest")
([('l', 'o'), ('lo', 'w'), ('low', '</w>')], ['low', 'e', 's', 't', '</w>'])
>>> tok = BPETokenizer.train("the cat and the hat", 2)
>>> tok.merges, tok.tokenize("the hat 中"), tok.decode(tok.encode("the hat 中"))
([('a', 't'), ('h', 'e')], ['t', 'he', 'Ġ', 'h', 'at', 'Ġ', 'ä', '¸', 'Ń'], 'the hat 中')

Flavours, tie-break rule, special tokens, ids: docs/decisions.md, core/tokenizers/bpe.py.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import regex

from core.tokenizers.vocab import SPECIAL_TOKENS, UNK, UNK_ID

# GPT-2's pre-tokenization regex (``_GPT2_SPLIT`` below):
#     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
# contractions, runs of letters / digits / other symbols, each with at most one leading space, and
# whitespace. A pair is never merged across two pre-tokens, so "dog." can never become one token and
# "Ġthe" is learned once for every "the" after a space.
#
# One catch: `regex` knows a newer Unicode than the Oniguruma inside Hugging Face `tokenizers`
# (0.23.3). These code points are letters or digits to `regex` but still unassigned ("other") to HF,
# found by asking both about every code point. We take them out of \p{L} and \p{N} so that the two
# cut every text the same way; for the text anyone writes today nothing changes.
HF_UNASSIGNED_RANGES: tuple[tuple[int, int], ...] = (
    (0x558, 0x558), (0x58B, 0x58C), (0x88F, 0x88F), (0xC5C, 0xC5C), (0xCDC, 0xCDC), (0x208F, 0x208F),
    (0x209D, 0x209F), (0xA7CE, 0xA7CF), (0xA7D2, 0xA7D2), (0xA7D4, 0xA7D4), (0xA7DD, 0xA7DD),
    (0xA7E2, 0xA7E2), (0xA7F1, 0xA7F1), (0xAB6C, 0xAB6D), (0x107BB, 0x107BF), (0x10940, 0x10959),
    (0x10EC5, 0x10EC7), (0x10ED9, 0x10EEE), (0x11B0A, 0x11B0A), (0x11DB0, 0x11DDB), (0x11DE0, 0x11DE9),
    (0x11DF1, 0x11DF1), (0x1246F, 0x1246F), (0x12475, 0x1247F), (0x12550, 0x12686), (0x16EA0, 0x16EB8),
    (0x16EBB, 0x16ED3), (0x16FF2, 0x16FF6), (0x187F8, 0x187FF), (0x18CD6, 0x18CDA), (0x18D09, 0x18D20),
    (0x18D80, 0x18DF2), (0x18E00, 0x19191), (0x191A0, 0x191D2), (0x1B123, 0x1B128), (0x1B168, 0x1B168),
    (0x1D6A6, 0x1D6A6), (0x1DF1F, 0x1DF24), (0x1DF2B, 0x1DF81), (0x1DF90, 0x1DF96), (0x1DFCD, 0x1DFFF),
    (0x1E6C0, 0x1E6DE), (0x1E6E0, 0x1E6E2), (0x1E6E4, 0x1E6E5), (0x1E6E7, 0x1E6ED), (0x1E6F0, 0x1E6F4),
    (0x1E6FE, 0x1E6FF), (0x2B73A, 0x2B73F), (0x2B81E, 0x2B81E), (0x2CEA2, 0x2CEAD), (0x323B0, 0x33479),
    (0x3D000, 0x3FC3F),
)
_NEW = "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in HF_UNASSIGNED_RANGES)
_GPT2_SPLIT = regex.compile(
    rf"""(?V1)'s|'t|'re|'ve|'m|'ll|'d| ?[\p{{L}}--[{_NEW}]]+| ?[\p{{N}}--[{_NEW}]]+"""
    rf"""| ?[^\s[\p{{L}}\p{{N}}--[{_NEW}]]]+|\s+(?!\S)|\s+"""
)

END_OF_WORD = "</w>"
# Special tokens found in a text, longest first so that no special token hides a longer one.
_SPECIAL_SPLIT = regex.compile(
    "(" + "|".join(regex.escape(s) for s in sorted(SPECIAL_TOKENS, key=len, reverse=True)) + ")"
)
_SPECIAL_IDS = {s: i for i, s in enumerate(SPECIAL_TOKENS)}


# ----------------------------------------------------------------------------------------------------
# Bytes as printable characters


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table: every byte 0..255 gets a printable, non-whitespace character.

    Bytes that are already printable (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) keep their own
    character; the other 68 (controls, space, ...) are moved to ``Ā`` (U+0100) onwards, in order.
    That way a token is always a visible string and a space inside a token is visible as ``Ġ``.

    >>> t = bytes_to_unicode()
    >>> t[ord("a")], t[ord(" ")], t[ord("\\n")], t[0]
    ('a', 'Ġ', 'Ċ', 'Ā')
    """
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    table = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return dict(sorted(table.items()))


BYTE_TO_CHAR: dict[int, str] = bytes_to_unicode()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}
# str.translate table: latin-1-decoded bytes -> GPT-2 characters, one C-speed call per pre-token.
_LATIN1_TO_GPT2 = {b: c for b, c in BYTE_TO_CHAR.items()}


def _utf8(text: str) -> bytes:
    # "surrogatepass" so that even a lone surrogate (legal in a Python str, not in UTF-8) survives
    # the round trip decode(encode(s)) == s.
    return text.encode("utf-8", "surrogatepass")


def _from_utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:  # a cut in the middle of a character: show it as U+FFFD
        return data.decode("utf-8", "replace")


def byte_spelling(text: str) -> str:
    """The UTF-8 bytes of ``text`` spelled with GPT-2's printable characters.

    >>> byte_spelling(" hi 中")
    'ĠhiĠä¸Ń'
    """
    return _utf8(text).decode("latin-1").translate(_LATIN1_TO_GPT2)


def char_bytes(ch: str) -> list[int]:
    """The UTF-8 bytes behind a character (or a string).

    >>> char_bytes("中"), [hex(b) for b in char_bytes("é")]
    ([228, 184, 173], ['0xc3', '0xa9'])
    """
    return list(_utf8(ch))


def char_byte_table(text: str) -> list[tuple[str, list[int], str]]:
    """For each character: (character, its bytes, their GPT-2 spelling) -- what the app shows.

    >>> char_byte_table("a中")
    [('a', [97], 'a'), ('中', [228, 184, 173], 'ä¸Ń')]
    """
    return [(ch, char_bytes(ch), byte_spelling(ch)) for ch in text]


def token_bytes(token: str) -> bytes:
    """The bytes a byte-level token stands for (``'Ġhi'`` -> ``b' hi'``); specials give their text."""
    if token in _SPECIAL_IDS:
        return token.encode("utf-8")
    try:
        return bytes(CHAR_TO_BYTE[c] for c in token)
    except KeyError as e:
        raise ValueError(f"{token!r} is not a byte-level token (no byte for {e.args[0]!r})") from None


def readable(token: str) -> str:
    """A byte-level token as a human reads it: its bytes decoded, U+FFFD for a partial character.

    >>> readable("Ġhi"), readable("ä¸Ń"), readable("ä¸")
    (' hi', '中', '�')
    """
    return _from_utf8(token_bytes(token))


# ----------------------------------------------------------------------------------------------------
# Training: incremental pair counts + a max-heap with lazy invalidation


def _merge_word(word: list, a: Hashable, b: Hashable, new: Hashable,
                pair_counts: dict, count: int, gained: dict, i: int) -> list:
    """Replace every ``a b`` in ``word`` (left to right, non-overlapping) by ``new``.

    Word number ``i`` occurs ``count`` times in the text, so each neighbouring pair it loses or
    gains moves ``pair_counts`` by ``count`` -- the bookkeeping of Hugging Face's ``Word::merge``.
    Each pair gained is also noted in ``gained`` (pair -> word numbers), for the heap. The merged
    pair itself is not counted down (HF does not either; that pair is finished).

    >>> counts, gained = defaultdict(int), defaultdict(set)
    >>> _merge_word(list("xaabc"), "a", "b", "ab", counts, 10, gained, 7)
    ['x', 'a', 'ab', 'c']
    >>> dict(counts)
    {('a', 'a'): -10, ('a', 'ab'): 10, ('b', 'c'): -10, ('ab', 'c'): 10}
    >>> dict(gained)
    {('a', 'ab'): {7}, ('ab', 'c'): {7}}
    >>> _merge_word(list("aaaa"), "a", "a", "aa", counts, 1, gained, 8)
    ['aa', 'aa']
    """
    out: list = []
    n = len(word)
    start = 0  # word[start:] is not copied to `out` yet
    search = 0  # where to look for the next `a`
    while True:
        try:  # list.index runs in C: most symbols of a long word are skipped at C speed
            j = word.index(a, search, n - 1)
        except ValueError:
            break
        if word[j + 1] != b:
            search = j + 1
            continue
        out += word[start:j]
        if out:  # the pair on our left (its left half may be a merge we just made)
            left = out[-1]
            pair_counts[left, a] -= count
            pair = (left, new)
            pair_counts[pair] += count
            gained[pair].add(i)
        if j + 2 < n:  # the pair on our right
            right = word[j + 2]
            pair_counts[b, right] -= count
            pair = (new, right)
            pair_counts[pair] += count
            gained[pair].add(i)
        out.append(new)
        start = search = j + 2
    out += word[start:]
    return out


def learn_merges(
    word_counts: dict[tuple, int], num_new_tokens: int, join: Callable[[Hashable, Hashable], tuple]
) -> list[tuple]:
    """The BPE training loop on symbol sequences; returns the merges (pairs of symbols) in order.

    ``word_counts`` maps each distinct word (a tuple of symbols) to how often it occurs, so the text
    is looked at once. Symbols only need to be hashable and ordered: the tie-break is "smallest
    pair". ``join(a, b)`` returns ``(new_symbol, is_new)``; training stops after ``num_new_tokens``
    new symbols, or when no pair occurs any more.

    Why it is fast: a pair's count is kept up to date by the merges (only the words that contain the
    merged pair are touched), and the best pair comes from a heap. A heap entry is
    ``(-count, pair, tiebreak, words)``; when popped with a stale count it is pushed back with the
    fresh count ("lazy invalidation") instead of searching the heap for it at every change.

    >>> join = lambda a, b: (a + b, True)
    >>> learn_merges({tuple("abab"): 1, tuple("ab"): 1}, 10, join)
    [('a', 'b'), ('ab', 'ab')]
    """
    words = [list(w) for w in word_counts]
    counts = list(word_counts.values())
    pair_counts: dict = defaultdict(int)
    where: dict = defaultdict(set)  # pair -> indices of the words it (may) occur in
    for i, word in enumerate(words):
        c = counts[i]
        for pair in itertools.pairwise(word):
            pair_counts[pair] += c
            where[pair].add(i)

    order = itertools.count()  # heapq must never compare two sets: equal (count, pair) -> FIFO
    heap = [(-pair_counts[p], p, next(order), ws) for p, ws in where.items() if pair_counts[p] > 0]
    heapq.heapify(heap)

    merges: list[tuple] = []
    new_tokens = 0
    while new_tokens < num_new_tokens and heap:
        neg_count, pair, _, positions = heapq.heappop(heap)
        count = pair_counts[pair]
        if -neg_count != count:  # stale: put it back with today's count
            heapq.heappush(heap, (-count, pair, next(order), positions))
            continue
        if count < 1:
            break
        a, b = pair
        new, is_new = join(a, b)
        new_tokens += is_new
        merges.append(pair)

        fresh: dict = defaultdict(set)  # pairs that gained occurrences, and where
        for i in positions:  # a word may have lost the pair meanwhile: then nothing happens
            words[i] = _merge_word(words[i], a, b, new, pair_counts, counts[i], fresh, i)
        for p, ws in fresh.items():
            if pair_counts[p] > 0:
                heapq.heappush(heap, (-pair_counts[p], p, next(order), ws))
    return merges


# ----------------------------------------------------------------------------------------------------
# The words training sees, and how much work they make

# What training costs (calibrated with benchmarks/bpe_upload.py; figures in docs/performance.md):
# every merge rewrites each word holding its pair, and every rewrite that merges something shortens
# the word, so a word of n symbols is rewritten at most min(merges, n) times, each a Python call plus a
# scan of its n symbols. Words of ordinary text are short, and each distinct word is trained once
# however often it occurs. One long run without spaces is not: a page of Chinese without a space or a
# punctuation mark is a single pre-token, rewritten once per merge. Cutting long words into pieces
# bounds the scans; only less text bounds the calls (one per merged symbol, at worst). A scan of a long
# word costs more per symbol: each occurrence of the pair's left symbol not followed by its right one
# is a step in Python, and a long word holds many.
TOUCH = 512  # a rewrite's Python call, counted in scanned symbols (calibrated with the benchmark)
LONG = 256  # symbols: a word longer than this ...
LONG_SCAN = 6  # ... costs this many units per symbol scanned


def symbol_count(word: str, byte_level: bool) -> int:
    """The symbols a word starts training as: its UTF-8 bytes, or its characters and ``</w>``.

    >>> symbol_count("中文", True), symbol_count("中文", False)
    (6, 3)
    """
    return len(_utf8(word)) if byte_level else len(word) + 1


def _cut(word: str, max_symbols: int, byte_level: bool) -> list[str]:
    """``word`` in pieces of at most ``max_symbols`` symbols, cut between characters (so a byte-level
    piece never splits a character: a piece may have up to 3 symbols fewer).

    >>> _cut("abcdefg", 3, False), _cut("中文字", 6, True)
    (['ab', 'cd', 'ef', 'g'], ['中文', '字'])
    """
    if symbol_count(word, byte_level) <= max_symbols:
        return [word]
    if not byte_level:  # a classic piece ends with its own </w>: max_symbols - 1 characters
        step = max(1, max_symbols - 1)
        return [word[i : i + step] for i in range(0, len(word), step)]
    pieces, start, size = [], 0, 0
    for i, ch in enumerate(word):
        n = len(_utf8(ch))
        if size + n > max_symbols and size:
            pieces.append(word[start:i])
            start, size = i, 0
        size += n
    pieces.append(word[start:])
    return pieces


def _pre_tokens(text: str, byte_level: bool):
    """(word, end offset in ``text``) of every word training counts, in order: GPT-2's pre-tokens
    (byte-level) or whitespace-separated words (classic), special tokens cut out first."""
    offset = 0
    for chunk in _SPECIAL_SPLIT.split(text):
        if chunk and chunk not in _SPECIAL_IDS:
            for m in (_GPT2_SPLIT if byte_level else _WORD).finditer(chunk):
                yield m.group(), offset + m.end()
        offset += len(chunk)


_WORD = regex.compile(r"\S+")  # str.split()'s words


def training_words(text: str, byte_level: bool = True, max_word: int | None = None) -> Counter[str]:
    """The words BPE training counts pairs in, with how often each occurs: GPT-2's pre-tokens
    (byte-level) or whitespace-separated words (classic), special tokens cut out first. With
    ``max_word`` every word of more symbols (:func:`symbol_count`) is cut into pieces of at most
    ``max_word`` symbols, as if the text had a break there: no merge crosses a cut.

    >>> training_words("ab ab [BOS]abc", byte_level=False)
    Counter({'ab': 2, 'abc': 1})
    >>> training_words("abcdef", byte_level=False, max_word=3)
    Counter({'ab': 1, 'cd': 1, 'ef': 1})
    """
    counts: Counter[str] = Counter()
    for chunk in _SPECIAL_SPLIT.split(text):
        if chunk and chunk not in _SPECIAL_IDS:
            counts.update(_GPT2_SPLIT.findall(chunk) if byte_level else chunk.split())
    if max_word is None or all(symbol_count(w, byte_level) <= max_word for w in counts):
        return counts
    cut: Counter[str] = Counter()
    for word, count in counts.items():
        for piece in _cut(word, max_word, byte_level):
            cut[piece] += count
    return cut


def word_work(n: int, num_merges: int) -> int:
    """The work of one distinct word of ``n`` symbols: at most min(merges, n) rewrites, each a call
    (``TOUCH``) and a scan of the word (``LONG_SCAN`` units a symbol past ``LONG`` symbols), and its
    n symbols counted once.

    >>> word_work(4, 1000), word_work(999_000, 1000)
    (2068, 5995511000)
    """
    return n + min(num_merges, n) * (n * (LONG_SCAN if n > LONG else 1) + TOUCH)


@dataclass(frozen=True)
class TrainingWork:
    """What ``BPETokenizer.train(text[:chars], merges, byte_level, max_word)`` costs, known before it
    starts: ``units`` (the sum of :func:`word_work` over its distinct words), ``words`` distinct
    words, the ``longest`` of them (symbols) before any cut; ``chars`` of the text are used (all
    of it unless the plan cut it short), ``max_word`` the cut (None: words as they are)."""

    units: int
    words: int
    longest: int
    chars: int
    max_word: int | None = None

    def limited(self, text: str) -> bool:
        return self.max_word is not None or self.chars < len(text)


def training_work(text: str, num_merges: int, byte_level: bool = True,
                  max_word: int | None = None) -> TrainingWork:
    """The work of ``BPETokenizer.train(text, num_merges, byte_level, max_word)``, counted from its
    words (no pair counted, no merge made).

    >>> training_work("low low lower", 10, byte_level=False)
    TrainingWork(units=5182, words=2, longest=6, chars=13, max_word=None)
    """
    whole = training_words(text, byte_level)
    longest = max((symbol_count(w, byte_level) for w in whole), default=0)
    words = whole if max_word is None else training_words(text, byte_level, max_word)
    units = sum(word_work(symbol_count(w, byte_level), num_merges) for w in words)
    return TrainingWork(units, len(words), longest, len(text), max_word)


def plan_training(text: str, num_merges: int, byte_level: bool, budget: int,
                  smallest: int = 256) -> TrainingWork:
    """How to train on ``text`` within ``budget`` units of work (:func:`training_work`), limiting as
    little as possible: the whole text as it is when that fits; else its words cut at the largest
    length (at least ``smallest`` symbols) that fits; else the longest beginning of the text that fits
    (ending after a whole word or piece), its words longer than ``smallest`` cut. Words of at most
    ``smallest`` symbols are never cut: 256 bytes hold any ordinary word, or a Chinese sentence of 85
    characters between two punctuation marks.

    >>> plan_training("low lower " * 100, 10, False, 10**6)  # fits
    TrainingWork(units=5182, words=2, longest=6, chars=1000, max_word=None)
    >>> plan_training("甲乙丙丁" * 1000, 100, True, 10**6, smallest=64)  # one word of 12,000 bytes: cut
    TrainingWork(units=161442, words=5, longest=12000, chars=4000, max_word=64)
    >>> cjk = "".join(map(chr, range(0x4E00, 0x6E00)))  # 8,192 characters, none twice: cut and shortened
    >>> plan_training(cjk, 100, True, 10**6, smallest=64)
    TrainingWork(units=979776, words=27, longest=24576, chars=567, max_word=64)
    >>> plan_training(" ".join(cjk), 100, True, 10**6)  # 8,192 short words: only the beginning
    TrainingWork(units=998324, words=483, longest=4, chars=965, max_word=None)
    """
    lengths = sorted(symbol_count(w, byte_level) for w in training_words(text, byte_level))
    longest = lengths[-1] if lengths else 0
    units = sum(word_work(n, num_merges) for n in lengths)
    if units <= budget:
        return TrainingWork(units, len(lengths), longest, len(text))
    cut = smallest if longest > smallest else None
    if cut is not None:
        at = _longest_cut_within(lengths, num_merges, budget, smallest)
        if at is not None:
            return training_work(text, num_merges, byte_level, max_word=at)
    chars = _beginning_within(text, num_merges, byte_level, budget, cut)
    work = training_work(text[:chars], num_merges, byte_level, max_word=cut)
    return TrainingWork(work.units, work.words, longest, chars, cut)


def _longest_cut_within(lengths: list[int], num_merges: int, budget: int, smallest: int) -> int | None:
    """The largest N >= ``smallest`` such that cutting the words (sorted ``lengths``, in symbols) at
    N symbols keeps the work within ``budget``; None if even ``smallest`` does not.

    Cut at N: words of up to N symbols cost as they are; a longer word of n symbols becomes pieces of
    at most N, which cost at most n + min(merges, N) * (n * scan + TOUCH * (n / N + 1)). This bound
    picks N; the caller counts the work exactly (equal pieces count once).
    """
    costs = list(itertools.accumulate((word_work(n, num_merges) for n in lengths), initial=0))
    symbols = list(itertools.accumulate(lengths, initial=0))

    def bound(at: int) -> float:
        k = bisect.bisect_right(lengths, at)
        rest = symbols[-1] - symbols[k]
        scan = LONG_SCAN if at > LONG else 1
        pieces = rest / at + len(lengths) - k
        return costs[k] + rest + min(num_merges, at) * (rest * scan + TOUCH * pieces)

    if bound(smallest) > budget:
        return None
    lo, hi = smallest, lengths[-1]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if bound(mid) <= budget else (lo, mid - 1)
    return lo


def _beginning_within(text: str, num_merges: int, byte_level: bool, budget: int, cut: int | None) -> int:
    """How many characters of ``text`` to train on when cutting is not enough (too much distinct
    text): its longest beginning within ``budget``, ending after a whole word or piece (a cut word's
    pieces are the same in the beginning as in the whole text)."""
    seen: set[str] = set()
    total, chars = 0, 0
    for word, end in _pre_tokens(text, byte_level):
        at = end - len(word)
        for piece in [word] if cut is None else _cut(word, cut, byte_level):
            at += len(piece)
            if piece not in seen:
                seen.add(piece)
                total += word_work(symbol_count(piece, byte_level), num_merges)
                if total > budget:
                    return chars
            chars = at
    return chars


# ----------------------------------------------------------------------------------------------------
# Applying merges to new text


def _apply_merges(
    symbols: Sequence[str], merge_map: dict[tuple[str, str], tuple[int, str]], trace: bool = False
) -> list[str] | list[tuple[int, list[str]]]:
    """Merge ``symbols`` with the learned merges: the lowest-rank pair first, leftmost first.

    ``merge_map``: pair -> (rank, merged token). This is Hugging Face's ``Word::merge_all``: a heap
    of (rank, position) over a linked list of symbols; an entry whose pair has changed meanwhile is
    skipped. With ``trace=True`` returns ``[(rank, symbols after that merge), ...]`` instead, the
    film the Tokenization page plays.

    >>> m = {("a", "b"): (0, "ab"), ("ab", "c"): (1, "abc")}
    >>> _apply_merges(list("abcab"), m)
    ['abc', 'ab']
    >>> _apply_merges(list("abcab"), m, trace=True)
    [(0, ['ab', 'c', 'a', 'b']), (0, ['ab', 'c', 'ab']), (1, ['abc', 'ab'])]
    """
    sym = list(symbols)
    n = len(sym)
    nxt = list(range(1, n + 1))
    nxt[-1:] = [-1]
    prv = list(range(-1, n - 1))
    heap = []
    for i in range(n - 1):
        m = merge_map.get((sym[i], sym[i + 1]))
        if m is not None:
            heap.append((m[0], i, m[1]))
    heapq.heapify(heap)
    alive = [True] * n
    film: list[tuple[int, list[str]]] = []
    while heap:
        rank, i, new = heapq.heappop(heap)
        j = nxt[i]
        if not alive[i] or j == -1:
            continue
        m = merge_map.get((sym[i], sym[j]))
        if m is None or m[1] != new:  # expired: the symbols at i changed since this was queued
            continue
        sym[i] = new
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] != -1:
            prv[nxt[j]] = i
        if prv[i] != -1 and (m := merge_map.get((sym[prv[i]], new))) is not None:
            heapq.heappush(heap, (m[0], prv[i], m[1]))
        if nxt[i] != -1 and (m := merge_map.get((new, sym[nxt[i]]))) is not None:
            heapq.heappush(heap, (m[0], i, m[1]))
        if trace:
            film.append((rank, [s for s, ok in zip(sym, alive, strict=True) if ok]))
    if trace:
        return film
    return [s for s, ok in zip(sym, alive, strict=True) if ok]


# ----------------------------------------------------------------------------------------------------
# The tokenizer


def _check_text(text: object, name: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    return text


class BPETokenizer:
    """A trained BPE tokenizer (classic or byte-level). Build one with :meth:`train`.

    Attributes: ``merges`` (list of pairs, in the order learned), ``byte_level``,
    ``vocab`` (id -> token), ``token_to_id`` (token -> id), ``alphabet`` (classic only).
    ``BPETokenizer(tok.merges, tok.byte_level, tok.alphabet)`` rebuilds ``tok`` (e.g. from a
    checkpoint), with the same ids. ``special_tokens``: [PAD] [UNK] [BOS] [EOS] [MASK], ids 0..4.
    """

    special_tokens: tuple[str, ...] = SPECIAL_TOKENS

    def __init__(self, merges: Sequence[tuple[str, str]], byte_level: bool = True,
                 alphabet: Sequence[str] = ()) -> None:
        self.byte_level = bool(byte_level)
        self.merges: list[tuple[str, str]] = [(a, b) for a, b in merges]
        # classic: the characters seen in training (what is not in it becomes [UNK])
        self.alphabet: list[str] = [] if self.byte_level else sorted(set(alphabet))
        if self.byte_level:
            base = [BYTE_TO_CHAR[b] for b in range(256)]
        else:
            base = sorted(set(self.alphabet) | {END_OF_WORD})
        tokens = list(SPECIAL_TOKENS) + base + [a + b for a, b in self.merges]
        self.token_to_id: dict[str, int] = {}
        for t in tokens:
            self.token_to_id.setdefault(t, len(self.token_to_id))
        self.vocab: dict[int, str] = {i: t for t, i in self.token_to_id.items()}
        # pair -> (rank, merged token). A pair listed twice keeps its last rank, as in HF.
        self._merge_map = {(a, b): (r, a + b) for r, (a, b) in enumerate(self.merges)}
        self._cache: dict[str, list[str]] = {}
        self._film_cache: dict[str, list[tuple[int, list[str]]]] = {}

    # -- training -----------------------------------------------------------------------------------

    @classmethod
    def train(cls, text: str, num_merges: int, byte_level: bool = True,
              max_word: int | None = None) -> BPETokenizer:
        """Learn ``num_merges`` merges from ``text`` (fewer if the text runs out of pairs).

        ``num_merges`` counts new tokens, as HF's ``vocab_size = 256 + num_merges`` does.
        ``max_word``: cut every word longer than that many symbols into pieces (see
        :func:`training_words`), which bounds the work (:func:`training_work`); None (the default)
        trains on the words as they are, exactly as Hugging Face does.

        After ``a a`` the word is ``aa a b``: ``(aa, a)`` and ``(a, b)`` both occur once, and the
        tie goes to the pair whose left symbol is a single byte (the tie-break rule: docs/decisions.md,
        core/tokenizers/bpe.py).

        >>> BPETokenizer.train("aaab", 5).merges
        [('a', 'a'), ('a', 'b'), ('aa', 'ab')]
        """
        _check_text(text)
        if isinstance(num_merges, bool) or not isinstance(num_merges, int):
            raise TypeError(f"num_merges must be an int, got {type(num_merges).__name__}")
        if num_merges < 0:
            raise ValueError(f"num_merges must be >= 0, got {num_merges}")
        if max_word is not None and (isinstance(max_word, bool) or not isinstance(max_word, int)
                                     or max_word < 1):
            raise ValueError(f"max_word must be None or an int >= 1, got {max_word!r}")
        counts = training_words(text, byte_level, max_word)
        if byte_level:
            return cls._train_byte_level(counts, num_merges)
        return cls._train_classic(counts, num_merges)

    @classmethod
    def _train_classic(cls, counts: Counter[str], num_merges: int) -> BPETokenizer:
        word_counts = {tuple(w) + (END_OF_WORD,): c for w, c in counts.items()}
        alphabet = {ch for w in counts for ch in w}
        known = set(alphabet) | {END_OF_WORD}

        def join(a: str, b: str) -> tuple[str, bool]:
            new = a + b
            is_new = new not in known
            known.add(new)
            return new, is_new

        merges = learn_merges(word_counts, num_merges, join)
        return cls(_dedupe_keep_last(merges), byte_level=False, alphabet=sorted(alphabet))

    @classmethod
    def _train_byte_level(cls, counts: Counter[str], num_merges: int) -> BPETokenizer:
        # Hugging Face's internal ids, which decide ties: the 256 byte characters sorted by code
        # point, then each merged token as it is created.
        id_to_str = sorted(BYTE_TO_CHAR.values())
        str_to_id = {s: i for i, s in enumerate(id_to_str)}
        # The byte ids are 0..255, so bytes.translate maps a whole word's bytes to ids at C speed.
        byte_to_id = bytes(str_to_id[BYTE_TO_CHAR[b]] for b in range(256))
        word_counts = {tuple(_utf8(w).translate(byte_to_id)): c for w, c in counts.items()}

        def join(a: int, b: int) -> tuple[int, bool]:
            new = id_to_str[a] + id_to_str[b]
            if new in str_to_id:
                return str_to_id[new], False
            str_to_id[new] = len(id_to_str)
            id_to_str.append(new)
            return str_to_id[new], True

        merges = learn_merges(word_counts, num_merges, join)
        return cls(_dedupe_keep_last([(id_to_str[a], id_to_str[b]) for a, b in merges]))

    # -- tokenizing ---------------------------------------------------------------------------------

    def _pieces(self, text: str, allow_special: bool) -> list[tuple[str, bool]]:
        """Cut text into (piece, is_special): special tokens, then pre-tokens / words."""
        chunks = _SPECIAL_SPLIT.split(text) if allow_special else [text]
        pieces: list[tuple[str, bool]] = []
        for chunk in chunks:
            if chunk in _SPECIAL_IDS and allow_special:
                pieces.append((chunk, True))
            elif self.byte_level:
                pieces.extend((w, False) for w in _GPT2_SPLIT.findall(chunk))
            else:
                pieces.extend((w, False) for w in chunk.split())
        return pieces

    def _symbols(self, piece: str) -> list[str]:
        """A piece before any merge: its byte characters, or its characters and ``</w>``."""
        if self.byte_level:
            return list(byte_spelling(piece))
        return [ch if ch in self.token_to_id else UNK for ch in piece] + [END_OF_WORD]

    def _tokenize_piece(self, piece: str) -> list[str]:
        tokens = self._cache.get(piece)
        if tokens is None:
            tokens = _apply_merges(self._symbols(piece), self._merge_map)
            if len(self._cache) < 100_000:
                self._cache[piece] = tokens
        return tokens

    def tokenize(self, text: str, allow_special: bool = True) -> list[str]:
        """Text -> tokens (byte-level tokens are spelled like GPT-2 / Hugging Face: ``Ġ`` = space).

        With ``allow_special`` a special token written in the text (``[BOS]``) is one token.
        """
        _check_text(text)
        out: list[str] = []
        for piece, special in self._pieces(text, allow_special):
            if special:
                out.append(piece)
            else:
                out.extend(self._tokenize_piece(piece))
        return out

    def encode(self, text: str, allow_special: bool = True) -> list[int]:
        """Text -> ids. Byte-level: ``decode(encode(s)) == s`` for every str ``s``."""
        ids = self.token_to_id
        return [ids.get(t, UNK_ID) for t in self.tokenize(text, allow_special)]

    def decode(self, ids: Sequence[int]) -> str:
        """Ids -> text. Special tokens come back as their text (``[BOS]``).

        Byte-level: the bytes of all tokens are joined and decoded (U+FFFD where ids cut a
        character). Classic: tokens are joined, each ``</w>`` becomes a space, the last one is
        dropped -- so whitespace comes back normalised to single spaces.
        """
        tokens = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int):
                raise TypeError(f"ids must be ints, got {type(i).__name__}")
            if i not in self.vocab:
                raise ValueError(f"unknown token id {i} (vocabulary has {len(self.vocab)} ids)")
            tokens.append(self.vocab[i])
        if self.byte_level:
            return _from_utf8(b"".join(token_bytes(t) for t in tokens))
        text = "".join(tokens).replace(END_OF_WORD, " ")
        return text[:-1] if text.endswith(" ") else text

    def segmentations(self, text: str, allow_special: bool = True) -> list[list[str]]:
        """The segmentation of ``text`` after 0, 1, ..., ``len(merges)`` merges.

        Entry 0 is the bare bytes / characters, entry ``i`` uses the first ``i`` merges only, the
        last entry equals ``tokenize(text)``. Each distinct word is merged once, recording every
        change, so this costs one tokenization plus one list per merge that changes something;
        consecutive entries with nothing new are the *same* list object (do not mutate them).

        >>> tok = BPETokenizer.train("low low lower", 2, byte_level=False)
        >>> tok.merges
        [('l', 'o'), ('lo', 'w')]
        >>> tok.segmentations("low")
        [['l', 'o', 'w', '</w>'], ['lo', 'w', '</w>'], ['low', '</w>']]
        """
        _check_text(text)
        pieces = self._pieces(text, allow_special)
        current = [[p] if special else self._symbols(p) for p, special in pieces]
        changes_at: dict[int, list[tuple[int, list[str]]]] = defaultdict(list)
        for k, (piece, special) in enumerate(pieces):
            if special:
                continue
            film = self._film_cache.get(piece)
            if film is None:
                film = _apply_merges(current[k], self._merge_map, trace=True)
                if len(self._film_cache) < 10_000:
                    self._film_cache[piece] = film
            latest = -1
            for rank, seg in film:  # a rank below an earlier one (never in practice) joins it
                latest = max(latest, rank)
                changes_at[latest].append((k, seg))
        result = [[s for seg in current for s in seg]]
        for rank in range(len(self.merges)):
            if rank in changes_at:
                for k, seg in changes_at[rank]:
                    current[k] = seg
                result.append([s for seg in current for s in seg])
            else:
                result.append(result[-1])
        return result

    # -- small helpers for the app ------------------------------------------------------------------

    def readable(self, token: str) -> str:
        """How a person reads a token: decoded bytes (byte-level), ``</w>`` as ``␣`` (classic)."""
        if token in _SPECIAL_IDS:
            return token
        return readable(token) if self.byte_level else token.replace(END_OF_WORD, "␣")

    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        kind = "byte-level" if self.byte_level else "classic"
        return f"BPETokenizer({kind}, {len(self.merges)} merges, {len(self.vocab)} tokens)"


def _dedupe_keep_last(merges: list[tuple]) -> list[tuple]:
    """A pair merged twice (possible only when two merges spell the same token) keeps its last
    place, which is where Hugging Face's merge table ends up putting it."""
    last = {p: r for r, p in enumerate(merges)}
    return [p for r, p in enumerate(merges) if last[p] == r]

