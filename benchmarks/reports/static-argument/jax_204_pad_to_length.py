"""Pad a 1-D row into the first row of a zero matrix of `pad_to_length` rows.

Source: https://github.com/jax-ml/jax/issues/204
Fails: under jit `pad_to_length` is a tracer, so `lax.full((pad_to_length, width), ...)`
    raises TypeError (shapes must be concrete integers).
Fix: the row count sets an output shape, so mark it static: `jit(..., static_argnums=1)`.
"""

import jax.numpy as np
from jax import jit, lax


def dynamic_update_slice_test(first_row, pad_to_length):
    width = first_row.shape[0]
    empty_array = lax.full((pad_to_length, width), 0, first_row.dtype)
    first_row_reshaped = np.reshape(first_row, (1, width))
    return lax.dynamic_update_slice(empty_array, first_row_reshaped, (0, 0))


dynamic_update_slice_test_jit = jit(dynamic_update_slice_test)


def main():
    row = np.array([1, 2])
    return (dynamic_update_slice_test_jit(row, 4),
            dynamic_update_slice_test_jit(row, 1),
            dynamic_update_slice_test_jit(np.array([0.5, 1.5, 2.5]), 3))
