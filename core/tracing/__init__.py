"""From text to a trace: a pipeline (tokenizer + model + settings), one sentence's run, a padded
batch, and generation step by step — what the pages and a notebook call."""
