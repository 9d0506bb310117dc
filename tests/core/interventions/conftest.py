"""One torch thread for these tests: their models are tiny (d_model 32), and on a busy two-core machine
two threads waiting for each other made every run of them ten times slower (0.16 s against 0.013 s
for one GPT-2 forward pass). Restored after each module."""

import pytest
import torch


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
