"""Interventions: change part of a run and see what the model does then.

    ablation.py   switch a head, an attention layer or a feed-forward layer off (zero or mean)
    patching.py   patch one sentence's run into another's (activation patching), batched
    lens.py       every layer's guess: the residual stream through the final norm and the unembedding
    runs.py       the same on a whole pipeline (tokenizer + weights), as the app uses them

The mechanism is core/model/edits.py: x' = where(keep, x, value) at a named site of the model.
"""
