"""Glassbox core: a small, fully traced Transformer ("Attention Is All You Need"), its tokenizers,
masks and training. Imports torch, `regex` and the standard library only, so it works in a notebook."""
