"""Camera pose and ray generation utility functions."""

import types
from typing import NamedTuple, Optional, Tuple, Union

import jax.numpy as jnp
import numpy as np

_Array = Union[np.ndarray, jnp.ndarray]


class Pixels(NamedTuple):
    pix_x_int: _Array
    pix_y_int: _Array
    near: _Array
    far: _Array


class Rays(NamedTuple):
    origins: _Array
    directions: _Array
    viewdirs: _Array
    radii: _Array
    near: _Array
    far: _Array


def convert_to_ndc(origins: _Array,
                   directions: _Array,
                   pixtocam: _Array,
                   near: float = 1.,
                   xnp: types.ModuleType = np) -> Tuple[_Array, _Array]:
    """Converts a set of rays to normalized device coordinates (NDC)."""
    # Shift ray origins to near plane, such that oz = -near.
    t = -(near + origins[..., 2]) / directions[..., 2]
    origins = origins + t[..., None] * directions

    dx, dy, dz = xnp.moveaxis(directions, -1, 0)
    ox, oy, oz = xnp.moveaxis(origins, -1, 0)

    xmult = 1. / pixtocam[0, 2]  # Equal to -2. * focal / cx
    ymult = 1. / pixtocam[1, 2]  # Equal to -2. * focal / cy

    # Perspective projection into NDC for the t = 0 near points
    origins_ndc = xnp.stack([xmult * ox / oz, ymult * oy / oz,
                             -xnp.ones_like(oz)], axis=-1)

    # Perspective projection into NDC for the t = infinity far points
    infinity_ndc = xnp.stack([xmult * dx / dz, ymult * dy / dz,
                              xnp.ones_like(oz)], axis=-1)

    # directions_ndc points from origins_ndc to infinity_ndc
    directions_ndc = infinity_ndc - origins_ndc

    return origins_ndc, directions_ndc


def intrinsic_matrix(fx, fy, cx, cy, xnp: types.ModuleType = np) -> _Array:
    """Intrinsic matrix for a pinhole camera in OpenCV coordinate system."""
    return xnp.array([
        [fx, 0, cx],
        [0, fy, cy],
        [0, 0, 1.],
    ])


def get_pixtocam(focal, width, height, xnp: types.ModuleType = np) -> _Array:
    """Inverse intrinsic matrix for a perfect pinhole camera."""
    camtopix = intrinsic_matrix(focal, focal, width * .5, height * .5, xnp)
    return xnp.linalg.inv(camtopix)


def pixel_coordinates(width, height, xnp: types.ModuleType = np) -> Tuple[_Array, _Array]:
    """Tuple of the x and y integer coordinates for a grid of pixels."""
    return xnp.meshgrid(xnp.arange(width), xnp.arange(height), indexing='xy')


def pixels_to_rays(
    pix_x_int: _Array,
    pix_y_int: _Array,
    pixtocams: _Array,
    camtoworlds: _Array,
    pixtocam_ndc: Optional[_Array] = None,
    xnp: types.ModuleType = np,
):
    """Calculates rays given pixel coordinates, intrinisics, and extrinsics."""
    # Must add half pixel offset to shoot rays through pixel centers.
    def pix_to_dir(x, y):
        return xnp.stack([x + .5, y + .5, xnp.ones_like(x)], axis=-1)
    # We need the dx and dy rays to calculate ray radii for mip-NeRF cones.
    pixel_dirs_stacked = xnp.stack([
        pix_to_dir(pix_x_int, pix_y_int),
        pix_to_dir(pix_x_int + 1, pix_y_int),
        pix_to_dir(pix_x_int, pix_y_int + 1)
    ], axis=0)

    mat_vec_mul = lambda A, b: xnp.matmul(A, b[..., None])[..., 0]

    # Apply inverse intrinsic matrices.
    camera_dirs_stacked = mat_vec_mul(pixtocams, pixel_dirs_stacked)

    # Flip from OpenCV to OpenGL coordinate system.
    camera_dirs_stacked = xnp.matmul(camera_dirs_stacked,
                                     xnp.diag(xnp.array([1., -1., -1.])))

    # Apply camera rotation matrices.
    directions_stacked = mat_vec_mul(camtoworlds[..., :3, :3],
                                     camera_dirs_stacked)
    # Extract the offset rays.
    directions, dx, dy = directions_stacked

    origins = xnp.broadcast_to(camtoworlds[..., :3, -1], directions.shape)
    viewdirs = directions / xnp.linalg.norm(directions, axis=-1, keepdims=True)

    if pixtocam_ndc is None:
        # Distance from each unit-norm direction vector to its neighbors.
        dx_norm = xnp.linalg.norm(dx - directions, axis=-1)
        dy_norm = xnp.linalg.norm(dy - directions, axis=-1)

    else:
        # Convert ray origins and directions into projective NDC space.
        origins_dx, _ = convert_to_ndc(origins, dx, pixtocam_ndc, xnp=xnp)
        origins_dy, _ = convert_to_ndc(origins, dy, pixtocam_ndc, xnp=xnp)
        origins, directions = convert_to_ndc(origins, directions, pixtocam_ndc, xnp=xnp)

        # In NDC space, we use the offset between origins instead of directions.
        dx_norm = xnp.linalg.norm(origins_dx - origins, axis=-1)
        dy_norm = xnp.linalg.norm(origins_dy - origins, axis=-1)

    # Cut the distance in half, multiply it to match the variance of a uniform
    # distribution the size of a pixel (1/12, see the original mipnerf paper).
    radii = (0.5 * (dx_norm + dy_norm))[..., None] * 2 / xnp.sqrt(12)

    return origins, directions, viewdirs, radii


def cast_ray_batch(cameras, pixels: Pixels, xnp: types.ModuleType = np) -> Rays:
    """Maps from input cameras and Pixel batch to output Ray batch."""
    pixtocams, camtoworlds, pixtocam_ndc = cameras

    # Compute rays from pixel coordinates.
    origins, directions, viewdirs, radii = pixels_to_rays(
        pixels.pix_x_int,
        pixels.pix_y_int,
        pixtocams,
        camtoworlds,
        pixtocam_ndc=pixtocam_ndc,
        xnp=xnp)

    return Rays(origins=origins, directions=directions, viewdirs=viewdirs, radii=radii,
                near=pixels.near, far=pixels.far)
