"""A hierarchical-inference likelihood adds per-event Bayes factors and variances to each sample.

Source: https://github.com/ColmTalbot/gwpopulation/pull/83
Fails: `generate_extra_statistics` stores `float(sum(variances))`, `float(ln_ls[ii])`,
    `float(variances[ii])` and `float(total_variance)`; with the JAX backend the method is
    jitted, the values are tracers, and `float()` raises ConcretizationTypeError.
Fix: keep them as arrays: drop the cast on the sum and use `.astype(float)` for the others
    (what the PR's `to_number(x, float)` does on the JAX backend).
"""

import jax
import jax.numpy as jnp


class PowerLawMass:
    """The hyper-prior: p(m | alpha, mmin) = (alpha - 1) / mmin * (m / mmin) ** -alpha, m > mmin."""

    def __init__(self):
        self.parameters = {}

    def prob(self, data):
        alpha, mmin = self.parameters["alpha"], self.parameters["mmin"]
        mass = data["mass"]
        return jnp.where(mass > mmin, self.parameters["beta"] / mmin * (mass / mmin) ** -alpha, 0.0)


def convert_to_beta(parameters):
    parameters = dict(parameters)
    parameters["beta"] = parameters["alpha"] - 1.0
    return parameters, ["beta"]


def selection_function(parameters):
    selection = 0.5 + 0.1 * jnp.tanh(parameters["alpha"] - 2.0)
    return selection, 1e-4 * selection


class HyperparameterLikelihood:
    def __init__(self, posteriors, hyper_prior, sampling_prior, conversion_function, selection_function):
        self.data = posteriors
        self.samples_per_posterior = posteriors["mass"].shape[-1]
        self.n_posteriors = posteriors["mass"].shape[0]
        self.hyper_prior = hyper_prior
        self.sampling_prior = sampling_prior
        self.conversion_function = conversion_function
        self.selection_function = selection_function
        self.parameters = {}

    def _compute_per_event_ln_bayes_factors(self, return_uncertainty=True):
        weights = self.hyper_prior.prob(self.data) / self.sampling_prior
        expectation = jnp.mean(weights, axis=-1)
        if return_uncertainty:
            square_expectation = jnp.mean(weights**2, axis=-1)
            variance = (square_expectation - expectation**2) / (self.samples_per_posterior * expectation**2)
            return jnp.log(expectation), variance
        else:
            return jnp.log(expectation)

    def _selection_function_with_uncertainty(self):
        result = self.selection_function(self.parameters)
        if isinstance(result, tuple):
            selection, variance = result
        else:
            selection = result
            variance = 0.0
        return selection, variance

    def generate_extra_statistics(self, sample):
        """Adds the ln BF and its variance for each event, and the selection, to `sample`."""
        self.parameters.update(sample.copy())
        self.parameters, added_keys = self.conversion_function(self.parameters)
        self.hyper_prior.parameters.update(self.parameters)
        ln_ls, variances = self._compute_per_event_ln_bayes_factors(return_uncertainty=True)
        total_variance = sum(variances)
        for ii in range(self.n_posteriors):
            sample[f"ln_bf_{ii}"] = ln_ls[ii].astype(float)
            sample[f"var_{ii}"] = variances[ii].astype(float)
        selection, variance = self._selection_function_with_uncertainty()
        variance /= selection**2
        selection_variance = variance * self.n_posteriors**2
        sample["selection"] = selection
        sample["selection_variance"] = variance
        total_variance += selection_variance
        sample["variance"] = total_variance.astype(float)
        if added_keys is not None:
            for key in added_keys:
                self.parameters.pop(key)
        return sample


def main():
    u = jnp.linspace(0.05, 0.95, 40)
    mass = jnp.stack([5.0 + 30.0 * u, 8.0 + 60.0 * u**2, 6.0 + 20.0 * jnp.sqrt(u)])
    likelihood = HyperparameterLikelihood(
        posteriors={"mass": mass},
        hyper_prior=PowerLawMass(),
        sampling_prior=1.0 / 50.0,
        conversion_function=convert_to_beta,
        selection_function=selection_function,
    )
    extra_statistics = jax.jit(likelihood.generate_extra_statistics)
    first = extra_statistics({"alpha": jnp.array(2.3), "mmin": jnp.array(4.0)})
    second = extra_statistics({"alpha": jnp.array(3.1), "mmin": jnp.array(5.5)})
    return first, second
