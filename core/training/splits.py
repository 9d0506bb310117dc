"""The one train / valid / test split of every data set here, by a hash of the item's text.

A hash, not a shuffle: an item's split depends on its text alone, never on the order of the files,
on what else was read or on the machine (sha256, since Python salts ``hash()`` per process).
"""

from __future__ import annotations

import hashlib

SPLITS = (("train", 90), ("valid", 5), ("test", 5))  # percent of the items
SPLIT_NAMES = tuple(name for name, _ in SPLITS)


def split_of(text: str, hash_bytes: int = 8) -> str:
    """"train", "valid" or "test": the first ``hash_bytes`` of the SHA-256 of ``text``'s UTF-8 bytes
    (big-endian), modulo 100, against the percentages of SPLITS. The pinyin phrases are split on 4
    bytes and the fortune entries on 8, as they always were, so that no item changes split.

    >>> split_of("中国", hash_bytes=4), split_of("The cat sat on the mat.")
    ('train', 'train')
    """
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    bucket = int.from_bytes(digest[:hash_bytes], "big") % 100
    for name, percent in SPLITS:
        if bucket < percent:
            return name
        bucket -= percent
    raise AssertionError("SPLITS must add up to 100")
