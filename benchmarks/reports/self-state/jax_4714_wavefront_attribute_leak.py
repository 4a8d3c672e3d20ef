"""An optics simulator keeps the complex field on a `BasicWavefront` object and a jitted
function propagates it through the telescope's optical elements.

Source: https://github.com/jax-ml/jax/issues/4714
Fails: the jitted `propagate` mutates `wf.wavefront` (an attribute of a global object) during
    tracing: the second call replays the first trace from the initial field, and touching
    `wf.wavefront` afterwards raises UnexpectedTracerError (the tracer escaped through `self`).
Fix: pass the field in and return the new one; rebind `wf.wavefront` at the call site.
"""

import jax
import jax.numpy as jnp
import numpy as np


class BasicWavefront:
    def __init__(self, wavelength, npix, pixelscale):
        self.wavelength = wavelength
        self.npix = npix
        self.pixelscale = pixelscale
        self.wavefront = jnp.ones((npix, npix), dtype=jnp.complex64)

    def coordinates(self):
        c = (jnp.arange(self.npix) - (self.npix - 1) / 2) * self.pixelscale
        return jnp.meshgrid(c, c)

    def apply_aperture(self, radius):
        x, y = self.coordinates()
        self.wavefront = self.wavefront * (x ** 2 + y ** 2 <= radius ** 2)

    def apply_opd(self, opd):
        self.wavefront = self.wavefront * jnp.exp(1j * 2 * np.pi / self.wavelength * opd)

    def propagate_fraunhofer(self):
        self.wavefront = jnp.fft.fftshift(jnp.fft.fft2(self.wavefront)) / self.npix

    @property
    def intensity(self):
        return jnp.abs(self.wavefront) ** 2


wf = BasicWavefront(wavelength=1e-6, npix=16, pixelscale=0.1)


@jax.jit
def propagate(radius, opd):
    wf.apply_aperture(radius)
    wf.apply_opd(opd)
    wf.propagate_fraunhofer()
    return wf.intensity.sum(), wf.intensity.max()


def main():
    x, y = wf.coordinates()
    tilt = 1e-7 * x
    first = propagate(0.6, tilt)
    second = propagate(0.5, 2 * tilt)
    psf = wf.intensity
    return first, second, psf.sum(), jnp.argmax(psf)
