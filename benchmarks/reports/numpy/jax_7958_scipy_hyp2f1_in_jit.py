"""A batched Student-t CDF written with the Gauss hypergeometric function, jitted.

Source: https://github.com/jax-ml/jax/issues/7958
Fails: the function calls `scipy.special.hyp2f1` (and `gammaln`) on traced arrays; SciPy converts
    its inputs with NumPy and raises TracerArrayConversionError under jit.
Fix: take the special functions from `jax.scipy.special`, which has `hyp2f1` and `gammaln`.
"""

import jax
import jax.numpy as jnp
from scipy import special


def student_t_cdf(t, nu):
    """F(t) = 1/2 + t Gamma((nu+1)/2) 2F1(1/2, (nu+1)/2; 3/2; -t^2/nu) / (sqrt(pi nu) Gamma(nu/2))."""
    log_norm = special.gammaln((nu + 1.0) / 2.0) - special.gammaln(nu / 2.0) - 0.5 * jnp.log(jnp.pi * nu)
    hyp = special.hyp2f1(0.5, (nu + 1.0) / 2.0, 1.5, -(t**2) / nu)
    return 0.5 + t * jnp.exp(log_norm) * hyp


@jax.jit
def tail_probabilities(t, nu):
    cdf = student_t_cdf(t, nu)
    return cdf, 2.0 * jnp.minimum(cdf, 1.0 - cdf)


def main():
    t = jnp.array([-1.5, -0.4, 0.0, 0.3, 1.2])
    return tail_probabilities(t, 3.0), tail_probabilities(t, jnp.array([3.0, 5.0, 8.0, 12.0, 30.0]))
