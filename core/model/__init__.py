"""The Transformer of "Attention Is All You Need": its configuration, layers and attention, masks,
positions, weight initialisation, and the trace every view reads."""
