"""Meta-learned NeRF: the trainer jits `single_step`, which renders rays with the helpers in render.py.

Source: https://github.com/codestella/putting-nerf-on-a-diet/pull/11
Fails: `single_step = jit(single_step_wojit)` receives the `model` object and the sample count
    `N_samples` as ordinary (traced) arguments: the model is not a valid JAX type (TypeError), and
    `render.render_rays` in the other module needs `N_samples` as a shape
    (`np.linspace(near, far, N_samples)`): ConcretizationTypeError.
Fix: mark `model` and `N_samples` static: `jit(single_step_wojit, static_argnums=[6, 7])`.
"""

import jax
import jax.numpy as np

from .models import Model
from .trainer import psnr_fn, render_fn, update_model


def main():
    rng = jax.random.PRNGKey(0)
    model = Model()
    params = model.init(jax.random.PRNGKey(1))
    n_rays = 12
    t = np.linspace(0.0, 1.0, n_rays)
    rays_o = np.stack([t, 1.0 - t, np.zeros(n_rays)], -1)
    rays_d = np.stack([np.zeros(n_rays), 0.1 * t, -np.ones(n_rays)], -1)
    rays = np.stack([rays_o, rays_d], 0)
    images = np.stack([t, t ** 2, 1.0 - t], -1)
    bds = np.array([0.5, 3.0])
    results = []
    for inner_steps, N_samples in ((1, 8), (4, 8), (4, 16)):
        rng, new_params, loss = update_model(rng, params, images, rays, inner_steps, bds, model, N_samples)
        rgb, depth, acc = render_fn(rng, model, new_params, None, rays, bds[0], bds[1], N_samples, False)
        results.append((loss, psnr_fn(rgb, images), depth, acc))
    # Fourier-feature inputs (bvals) for the evaluation renderer.
    bvals = 0.1 * np.arange(12.0).reshape(4, 3)
    ff_params = model.init(jax.random.PRNGKey(2), in_dim=8)
    results.append(render_fn(rng, model, ff_params, bvals, rays, bds[0], bds[1], 8, False))
    return results
