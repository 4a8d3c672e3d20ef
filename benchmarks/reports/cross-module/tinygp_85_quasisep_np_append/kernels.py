"""Quasiseparable kernels (celerite-style) with O(N) matrix products."""

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

JAXArray = jnp.ndarray


class GeneralQSM(NamedTuple):
    """Cross covariance K(X1, X2) in quasiseparable form."""

    pl: JAXArray
    ql: JAXArray
    pu: JAXArray
    qu: JAXArray
    a: JAXArray
    idx: JAXArray

    def __matmul__(self, y):
        n = self.ql.shape[0]

        # forward pass: f[i] = sum_{j <= i} A(X2[j] -> X2[i]) q[j] y[j]
        def forward(f, data):
            a, q, yj = data
            f = a @ f + q * yj
            return f, f

        _, f = jax.lax.scan(forward, jnp.zeros_like(self.ql[0]), (self.a, self.ql, y))

        # backward pass: g[i] = sum_{j >= i} A(X2[i] -> X2[j]) p[j] y[j]
        a_next = jnp.concatenate([self.a[1:], jnp.zeros_like(self.a[:1])])

        def backward(g, data):
            a, p, yj = data
            g = a.T @ g + p * yj
            return g, g

        _, g = jax.lax.scan(backward, jnp.zeros_like(self.pu[0]), (a_next, self.pu, y), reverse=True)

        lower = jnp.where(self.idx >= 0, jnp.sum(self.pl * f[jnp.clip(self.idx, 0, n - 1)], axis=-1), 0.0)
        upper = jnp.where(self.idx + 1 < n, jnp.sum(self.qu * g[jnp.clip(self.idx + 1, 0, n - 1)], axis=-1), 0.0)
        return lower + upper


class Quasisep:
    """A kernel with a state-space (quasiseparable) representation."""

    def coord_to_sortable(self, X: JAXArray) -> JAXArray:
        return X

    def to_general_qsm(self, X1: JAXArray, X2: JAXArray) -> GeneralQSM:
        """The generalized quasiseparable representation of this kernel"""
        sortable = jax.vmap(self.coord_to_sortable)
        idx = jnp.searchsorted(sortable(X2), sortable(X1), side="right") - 1

        Xs = jax.tree_util.tree_map(lambda x: np.append(x[0], x[:-1]), X2)
        Pinf = self.Pinf()
        a = jax.vmap(self.A)(Xs, X2)
        h1 = jax.vmap(self.h)(X1)
        h2 = jax.vmap(self.h)(X2)

        ql = h2
        pl = h1 @ Pinf
        qu = h1
        pu = h2 @ Pinf

        i = jnp.clip(idx, 0, ql.shape[0] - 1)
        Xi = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[i], X2)
        pl = jax.vmap(jnp.dot)(pl, jax.vmap(self.A)(Xi, X1))

        i = jnp.clip(idx + 1, 0, pu.shape[0] - 1)
        Xi = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[i], X2)
        qu = jax.vmap(jnp.dot)(jax.vmap(self.A)(X1, Xi), qu)

        return GeneralQSM(pl=pl, ql=ql, pu=pu, qu=qu, a=a, idx=idx)

    def matmul(self, X1: JAXArray, X2: Optional[JAXArray] = None, y: Optional[JAXArray] = None) -> JAXArray:
        if y is None:
            assert X2 is not None
            y = X2
            X2 = None

        if X2 is None:
            return self.to_general_qsm(X1, X1) @ y

        else:
            return self.to_general_qsm(X1, X2) @ y


class Exp(Quasisep):
    """The exponential kernel sigma^2 exp(-|x1 - x2| / scale)."""

    def __init__(self, scale: float, sigma: float = 1.0):
        self.scale = scale
        self.sigma = sigma

    def Pinf(self) -> JAXArray:
        return jnp.array([[self.sigma ** 2]])

    def h(self, X: JAXArray) -> JAXArray:
        return jnp.array([1.0])

    def A(self, X1: JAXArray, X2: JAXArray) -> JAXArray:
        return jnp.array([[jnp.exp(-(X2 - X1) / self.scale)]])
