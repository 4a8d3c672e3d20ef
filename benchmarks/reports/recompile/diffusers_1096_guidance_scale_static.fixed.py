"""A Flax-style Stable Diffusion pipeline compiles `_generate` with the guidance scale as a static argument.

Source: https://github.com/huggingface/diffusers/pull/1096
Fails: `guidance_scale` is listed among the static arguments, so every new value the user
    tries recompiles the whole denoising loop (correct images, a compile per value), as
    the pull request thread explains.
Fix: `guidance_scale` only enters arithmetic, so pass it as a traced array (drop it from
    the static arguments); only the step count and the image size stay static.
"""

from functools import partial

import jax
import jax.numpy as jnp

MAX_COMPILES = {"_p_generate": 1}


class FlaxStableDiffusionPipeline:
    def __init__(self, latent_channels=4, vae_scale_factor=8):
        self.latent_channels = latent_channels
        self.vae_scale_factor = vae_scale_factor

    def unet_apply(self, params, latents, t, context):
        return jnp.tanh(latents * params["w"] + t * params["t_scale"] + context.mean(axis=(1, 2))[:, None, None, None])

    def _generate(self, prompt_ids, params, prng_seed, num_inference_steps, height, width, guidance_scale):
        batch_size = prompt_ids.shape[0]
        context = params["embed"][prompt_ids]
        uncond = jnp.zeros_like(context)
        context = jnp.concatenate([uncond, context])
        latents_shape = (batch_size, self.latent_channels, height // self.vae_scale_factor,
                         width // self.vae_scale_factor)
        latents = jax.random.normal(prng_seed, shape=latents_shape, dtype=jnp.float32)

        def loop_body(step, latents):
            t = 1.0 - step / num_inference_steps
            latents_input = jnp.concatenate([latents] * 2)
            noise_pred = self.unet_apply(params, latents_input, t, context)
            noise_pred_uncond, noise_prediction_text = jnp.split(noise_pred, 2, axis=0)
            noise_pred = noise_pred_uncond + guidance_scale * (noise_prediction_text - noise_pred_uncond)
            return latents - noise_pred / num_inference_steps

        return jax.lax.fori_loop(0, num_inference_steps, loop_body, latents)

    def __call__(self, prompt_ids, params, prng_seed, num_inference_steps=10, height=32, width=32,
                 guidance_scale=7.5):
        return _p_generate(self, prompt_ids, params, prng_seed, num_inference_steps, height, width, guidance_scale)


@partial(jax.jit, static_argnums=(0, 4, 5, 6))
def _p_generate(pipe, prompt_ids, params, prng_seed, num_inference_steps, height, width, guidance_scale):
    return pipe._generate(prompt_ids, params, prng_seed, num_inference_steps, height, width, guidance_scale)


def main():
    pipe = FlaxStableDiffusionPipeline()
    params = {"w": jnp.array(0.7), "t_scale": jnp.array(0.3), "embed": jnp.linspace(-1.0, 1.0, 40).reshape(10, 4)}
    prompt_ids = jnp.array([[1, 2, 3], [4, 5, 6]])
    images = []
    for guidance_scale in (1.0, 7.5, 3.0, 12.0):
        images.append(pipe(prompt_ids, params, jax.random.PRNGKey(0), guidance_scale=guidance_scale))
    return images
