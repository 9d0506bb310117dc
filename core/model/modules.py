"""``nn.Linear`` and ``nn.LayerNorm`` that skip torch's default initialisation on the "meta" device.

``Transformer`` builds every module on "meta" (shapes only) and draws the weights once itself
(``core.model.weight_init.draw_glorot``). torch's own ``reset_parameters`` still ran there, on tensors with no
data: ``kaiming_uniform_`` and ``uniform_`` through Python decompositions, most of the time it took
to build a model's modules, on every new model (every seed or size change; docs/performance.md).
On a real device these are ``nn.Linear`` and ``nn.LayerNorm`` exactly: same initialisation, same
random numbers drawn, same state-dict keys.
"""

from __future__ import annotations

from torch import nn


class Linear(nn.Linear):
    def reset_parameters(self) -> None:
        if not self.weight.is_meta:
            super().reset_parameters()


class LayerNorm(nn.LayerNorm):
    def reset_parameters(self) -> None:
        if self.weight is None or not self.weight.is_meta:
            super().reset_parameters()
