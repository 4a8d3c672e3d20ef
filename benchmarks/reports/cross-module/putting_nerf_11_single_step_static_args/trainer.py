"""Inner-loop SGD steps and the Reptile-style outer update."""

import jax
import jax.numpy as np
from jax import jit, random

from .render import render_rays

batch_size = 6
inner_step_size = 0.5
outer_lr = 0.5


def render_fn(rnd_input, model, params, bvals, rays, near, far, N_samples, rand):
    chunk = 5
    for i in range(0, rays.shape[1], chunk):
        out = render_fn_inner(rnd_input, model, params, bvals, rays[:, i:i + chunk], near, far, rand, True, N_samples)
        if i == 0:
            rets = out
        else:
            rets = [np.concatenate([a, b], 0) for a, b in zip(rets, out)]
    return rets


def render_fn_inner(rnd_input, model, params, bvals, rays, near, far, rand, allret, N_samples):
    return render_rays(rnd_input, model, params, bvals, rays, near, far,
                       N_samples=N_samples, rand=rand, allret=allret)


def single_step_wojit(rng, image, rays, params, bds, inner_step_size, model, N_samples):
    def sgd(param, update):
        return param - inner_step_size * update

    rng, rng_inputs = jax.random.split(rng)

    def loss_model(params):
        g = render_rays(rng_inputs, model, params, None, rays, bds[0], bds[1], N_samples, rand=True)
        return mse_fn(g, image)

    model_loss, grad = jax.value_and_grad(loss_model)(params)
    new_params = jax.tree_util.tree_map(sgd, params, grad)
    return rng, new_params, model_loss


single_step = jit(single_step_wojit)


def update_network_weights(rng, images, rays, params, inner_steps, bds, model, N_samples):
    for _ in range(inner_steps):
        rng, rng_input = random.split(rng)
        idx = random.randint(rng_input, shape=(batch_size,), minval=0, maxval=images.shape[0])
        image_sub = images[idx, :]
        rays_sub = rays[:, idx, :]
        rng, params, loss = single_step(rng, image_sub, rays_sub, params, bds, inner_step_size, model, N_samples)
    return rng, params, loss


def update_model(rng, params, images, rays, inner_steps, bds, model, N_samples):
    rng, new_params, model_loss = update_network_weights(rng, images, rays, params, inner_steps, bds, model,
                                                         N_samples)
    params = jax.tree_util.tree_map(lambda p, new_p: p - outer_lr * (p - new_p), params, new_params)
    return rng, params, model_loss


# optimize render_fn_inner by JIT (func in, func out)
render_fn_inner = jit(render_fn_inner, static_argnums=(1, 7, 8, 9))
mse_fn = jit(lambda x, y: np.mean((x - y)**2))
psnr_fn = jit(lambda x, y: -10 * np.log10(mse_fn(x, y)))
