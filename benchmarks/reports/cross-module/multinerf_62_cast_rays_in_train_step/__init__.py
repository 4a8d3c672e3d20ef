"""A jitted train step casts its ray batch through camera_utils, which projects rays into NDC space.

Source: https://github.com/google-research/multinerf/pull/62
Fails: with `Config.cast_rays_in_train_step = True`, `train_utils.train_step` (jitted) calls
    `camera_utils.cast_ray_batch(..., xnp=jnp)`, but `pixels_to_rays` calls `convert_to_ndc`
    without passing `xnp`, so the NDC projection in the other module runs `np.ones_like` /
    `np.stack` on tracers: TracerArrayConversionError.
Fix: pass `xnp=xnp` to the three `convert_to_ndc` calls, so the projection uses jax.numpy
    inside the jitted step.
"""

import numpy as np

from . import camera_utils, configs, train_utils


def _camera(focal, width, height, z):
    pixtocam = camera_utils.get_pixtocam(focal, width, height)
    camtoworld = np.array([[1.0, 0.0, 0.0, 0.1], [0.0, 1.0, 0.0, -0.2], [0.0, 0.0, 1.0, z]])
    return pixtocam, camtoworld


def main():
    width, height = 4, 3
    pixtocam, camtoworld = _camera(2.0, width, height, 2.0)
    pix_x, pix_y = camera_utils.pixel_coordinates(width, height)
    pixels = camera_utils.Pixels(pix_x_int=pix_x.reshape(-1), pix_y_int=pix_y.reshape(-1),
                                 near=np.full((width * height, 1), 0.5), far=np.full((width * height, 1), 4.0))
    rgb = np.linspace(0.0, 1.0, width * height * 3).reshape(width * height, 3)
    params = train_utils.init_params()
    results = []
    for ndc in (False, True):
        pixtocam_ndc = pixtocam if ndc else None
        cameras = (pixtocam, camtoworld, pixtocam_ndc)
        for cast_in_step in (False, True):
            config = configs.Config(cast_rays_in_train_step=cast_in_step, lr=0.05)
            step = train_utils.create_train_step(config)
            batch = train_utils.Batch(pixels=pixels, rgb=rgb, rays=None)
            if not cast_in_step:
                batch = batch._replace(rays=camera_utils.cast_ray_batch(cameras, pixels))
            state = params
            losses = []
            for _ in range(3):
                state, loss = step(state, batch, cameras)
                losses.append(loss)
            results.append((state, losses))
    return results
