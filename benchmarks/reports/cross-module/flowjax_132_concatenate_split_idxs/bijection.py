"""The bijection base class."""

import equinox as eqx


class Bijection(eqx.Module):
    shape: tuple
    cond_shape: tuple | None

    def _argcheck(self, x, condition=None):
        if x.shape != self.shape:
            raise ValueError(f"Expected input shape {self.shape}; got {x.shape}")
