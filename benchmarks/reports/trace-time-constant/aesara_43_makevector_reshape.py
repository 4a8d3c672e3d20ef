"""A tensor-graph library's JAX backend converts each graph node to a JAX function: the
`MakeVector` node that builds a reshape target from constant dimensions becomes `jnp.array`,
and the whole graph is jit-compiled.

Source: https://github.com/aesara-devs/aesara/issues/43
Fails: the shape vector built with `jnp.array` inside the jitted graph is a tracer, so
    `jnp.reshape(x, shp)` raises TypeError "Shapes must be 1D sequences of concrete values of
    integer type" (ConcretizationTypeError in older releases).
Fix: the dimensions are static, so build the shape vector with NumPy: `np.array(x, dtype)`.
"""

import jax
import jax.numpy as jnp
import numpy as np


def jax_funcify_MakeVector(dtype):
    def makevector(*x):
        return jnp.array(x, dtype=dtype)

    return makevector


def jax_funcify_Reshape(ndim):
    def reshape(x, shp):
        return jnp.reshape(x, shp)

    return reshape


def jax_funcify_Elemwise(scalar_fn):
    def elemwise(*inputs):
        return scalar_fn(*inputs)

    return elemwise


def compile_graph(dims):
    """y = exp(reshape(x, make_vector(*dims))) * 2"""
    make_vector = jax_funcify_MakeVector("int64")
    reshape = jax_funcify_Reshape(len(dims))
    scale = jax_funcify_Elemwise(lambda a: jnp.exp(a) * 2)

    def fgraph(x):
        shp = make_vector(*dims)
        return scale(reshape(x, shp))

    return jax.jit(fgraph)


def main():
    x = np.linspace(0.0, 1.0, 6)
    return compile_graph((2, 3))(x), compile_graph((3, 2))(x), compile_graph((6,))(x)
