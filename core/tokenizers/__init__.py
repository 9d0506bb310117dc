"""Tokenizers: text -> ids, one module per algorithm behind one protocol (protocol.py).

    vocab.py      the special tokens ([PAD]=0 ... [MASK]=4) and a plain token <-> id Vocab
    bpe.py        Byte Pair Encoding, classic and byte-level (trained here, equal to HF tokenizers)
    gpt2.py       GPT-2's byte-level BPE with its vocab.json ids; the merges.txt format
    wordpiece.py  BERT's WordPiece; the vocab.txt format
    protocol.py   Tokenizer: encode -> ids, tokenize -> pieces, special_tokens

Nothing here knows of the model: the model and the loaders import tokenizers, never the reverse.
"""
