"""An optics package draws an anti-aliased filled circle (a telescope pupil) with masked writes
into a zero array, jitted so the radius can be fitted.

Source: https://github.com/jax-ml/jax/issues/5186
Fails: `array.at[r < radius].set(fillvalue)` (formerly `index_update(array, r < radius, ...)`)
    under jit raises NonConcreteBooleanIndexError: the mask depends on the traced radius.
Fix: select with `jnp.where(r < radius, fillvalue, array)` (and likewise for the edge pixels).
"""

from functools import partial

import jax
import jax.numpy as np


@partial(jax.jit, static_argnames=("shape", "clip", "cliprange"))
def filled_circle_aa(shape, xcenter, ycenter, radius, xarray=None, yarray=None,
                     fillvalue=1, clip=True, cliprange=(0, 1)):
    """Draw a filled circle with subpixel antialiasing into an array."""
    array = np.zeros(shape)

    if xarray is None or yarray is None:
        yarray, xarray = np.indices(shape)

    r = np.sqrt((xarray - xcenter) ** 2 + (yarray - ycenter) ** 2)
    array = array.at[r < radius].set(fillvalue)

    pixscale = np.abs(xarray[0, 1] - xarray[0, 0])
    array = array.at[np.abs(r - radius) < pixscale / 2].set(0.5)

    if clip:
        return np.asarray(array).clip(*cliprange)
    else:
        return array


def main():
    pixel_grid = filled_circle_aa((9, 9), 4.0, 4.0, 2.5)
    y, x = np.mgrid[-1:1:11j, -1:1:11j]
    pupil = filled_circle_aa((11, 11), 0.0, 0.0, 0.6, xarray=x, yarray=y, fillvalue=2.0, clip=False)
    clipped = filled_circle_aa((11, 11), 0.1, -0.2, 0.45, xarray=x, yarray=y, fillvalue=2.0)
    return pixel_grid, pupil, clipped
