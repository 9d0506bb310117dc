"""Process-wide set-up, once, before any page builds a figure: heavy imports and torch's threads.

Streamlit runs each session's script in its own thread. When forty students open the app at once
on a fresh server, one thread may still be importing pandas while another builds a plotly figure:
plotly looks pandas up in ``sys.modules`` without importing it (``get_module(should_load=False)``),
finds the half-initialised module and raises ``AttributeError: partially initialized module
'pandas' has no attribute 'Series'`` - a traceback on a student's screen. Importing them here,
inside the import of the ``ui`` package that every page does first, closes the window: Python makes
every other thread wait until ``ui`` has finished importing.

torch gets one intra-op thread. A lecture server is busy (many sessions, perhaps a training run):
with 2 threads on 2 busy cores OpenMP's threads spin against each other, many times slower than one
(docs/performance.md). Concurrency comes from sessions, not from one matmul.
"""

import numpy  # noqa: F401
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401
import plotly.io  # noqa: F401
import pyarrow  # noqa: F401  (st.dataframe)
import torch  # (core.tracing.pipeline; every page shows the model's weights badge)

torch.set_num_threads(1)
