"""Linear interpolation into tabulated distances (jax_cosmo's `interp`) inside a jitted model.

Source: https://github.com/DifferentiableUniverseInitiative/jax_cosmo/issues/121
Fails: the tables `xp`, `fp` are NumPy arrays (the report passes `numpy.array([0., 1., 2.])`);
    `interp` computes the bracket index `ind` from the traced `x` and then reads `xp[ind]`,
    a NumPy array indexed by a tracer: TracerArrayConversionError.
Fix: make the tables JAX arrays once (`jnp.asarray` where they are built); the same `interp`
    then gathers from them under jit.
"""

import jax
import jax.numpy as jnp
import numpy


def interp(x, xp, fp):
    """Simple equivalent of np.interp that computes a linear interpolation."""
    x = jnp.atleast_1d(x)
    ind = jnp.argmin((x[:, None] - xp[None, :]) ** 2, axis=1)
    ind = jnp.clip(ind, 1, len(xp) - 2)
    xi = xp[ind]
    # Figure out if we are on the right or the left of nearest
    s = jnp.sign(jnp.clip(x, xp[1], xp[-2]) - xi).astype(jnp.int32)
    step = jnp.copysign(1, s).astype(jnp.int32)
    a = (fp[ind + step] - fp[ind]) / (xp[ind + step] - xp[ind])
    b = fp[ind] - a * xp[ind]
    return a * x + b


XP = numpy.array([0.0, 1.0, 2.0])
FP = numpy.array([0.0, 1.0, 2.0])

Z_TABLE = numpy.linspace(0.0, 3.0, 31)
CHI_TABLE = 3000.0 * numpy.log1p(Z_TABLE) / (1.0 + 0.1 * Z_TABLE)


@jax.jit
def straight_line(x):
    return interp(x, XP, FP)


@jax.jit
def luminosity_distance(z, h):
    chi = interp(z, Z_TABLE, CHI_TABLE) / h
    return (1.0 + z) * chi


def main():
    return (
        straight_line(jnp.array([0.5, 1.5])),
        straight_line(jnp.array([0.0, 0.25, 2.0])),
        luminosity_distance(jnp.array([0.0, 0.05, 1.234, 2.96]), 0.7),
    )
