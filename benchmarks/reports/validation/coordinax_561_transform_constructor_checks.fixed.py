"""Linear coordinate transforms (Equinox modules) validate their factors in classmethod constructors.

Source: https://github.com/GalacticDynamics/coordinax/pull/561
Fails: `Scale.from_factors` and `Reflect.from_normal` guard with `if bool(jnp.any(...)): raise
    ValueError(...)`; building either inside `eqx.filter_jit` calls `bool()` on a tracer:
    TracerBoolConversionError.
Fix: replace the eager `bool` checks with `eqx.error_if`, threading the checked array into the
    constructed matrix so the guard survives tracing.
"""

import equinox as eqx
import jax
import jax.numpy as jnp


class Scale(eqx.Module):
    matrix: jax.Array

    @classmethod
    def from_factors(cls, factors):
        factors = jnp.asarray(factors)
        factors = eqx.error_if(factors, jnp.any(factors == 0),
                               "Scale factors must be non-zero (the transform would be singular).")
        return cls(jnp.diag(factors))

    def __call__(self, v):
        return self.matrix @ v


class Reflect(eqx.Module):
    matrix: jax.Array

    @classmethod
    def from_normal(cls, normal):
        normal = jnp.asarray(normal)
        norm = jnp.linalg.norm(normal)
        normal = eqx.error_if(normal, norm == 0, "The reflection normal must be non-zero.")
        n = normal / norm
        return cls(jnp.eye(n.shape[0]) - 2.0 * jnp.outer(n, n))

    def __call__(self, v):
        return self.matrix @ v


def main():
    make_scale = eqx.filter_jit(Scale.from_factors)
    make_reflect = eqx.filter_jit(Reflect.from_normal)
    v = jnp.array([1.0, -2.0, 0.5])
    results = [make_scale(jnp.asarray([2.0, 3.0, 4.0]))(v), make_reflect(jnp.asarray([0.0, 0.0, 2.0]))(v)]
    for build, arg in [(make_scale, jnp.asarray([2.0, 0.0, 4.0])), (make_reflect, jnp.zeros(3))]:
        try:
            results.append(build(arg)(v))
        except (ValueError, RuntimeError):
            results.append("rejected: singular transform")
    return results
