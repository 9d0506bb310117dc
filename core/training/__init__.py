"""Training the models the app explains, and what they learn from.

One loop for every task (``loop.train``): the 汉字→拼音 and toy digit tasks (``seq2seq``, their pairs
in ``pairs``) and the small GPT's next-token prediction (``language``, its text in ``text``). A task is
data to the loop: its batches, its loss, its validation and its final measures. ``settings`` holds
each task's recipe, ``schedule`` the learning rates, ``splits`` the one train/valid/test split by
hash, ``checkpoint`` the one file format (with a ``task`` field). ``python -m core.training`` trains
or evaluates from the command line.
"""
