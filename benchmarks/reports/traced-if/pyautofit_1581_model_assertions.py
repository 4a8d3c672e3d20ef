"""A model-fitting likelihood rejects parameter vectors that break the model's ordering assertions.

Source: https://github.com/PyAutoLabs/PyAutoFit/issues/1581
Fails: `check_assertions` applies Python `not` to each assertion and `CompoundAssertion` combines
    them with Python `and`; in the jitted `Fitness.call` the parameters are traced, so the tests
    raise TracerBoolConversionError instead of falling back to the resample figure of merit.
Fix: evaluate the assertions as a traced boolean (`jnp.logical_and`) and fold it in with
    `jnp.where(satisfied, log_likelihood, self.resample_figure_of_merit)`.
"""

import jax
import jax.numpy as jnp


class FitException(Exception):
    pass


class GreaterThanLessThanAssertion:
    def __init__(self, lower, greater):
        self.lower = lower
        self.greater = greater

    def __call__(self, arg_dict):
        return arg_dict[self.lower] < arg_dict[self.greater]


class CompoundAssertion:
    def __init__(self, assertion_1, assertion_2):
        self.assertion_1 = assertion_1
        self.assertion_2 = assertion_2

    def __call__(self, arg_dict):
        return self.assertion_1(arg_dict) and self.assertion_2(arg_dict)


class Model:
    def __init__(self, names, assertions):
        self.names = names
        self.assertions = assertions

    def arg_dict_from_vector(self, vector):
        return {name: vector[i] for i, name in enumerate(self.names)}

    def check_assertions(self, arg_dict):
        for assertion in self.assertions:
            if not assertion(arg_dict):
                raise FitException("An assertion of the model failed")


class Analysis:
    def __init__(self, data, noise):
        self.data = data
        self.noise = noise

    def log_likelihood_function(self, arg_dict):
        x = jnp.linspace(-1.0, 1.0, self.data.shape[0])
        model_data = (arg_dict["sigma_0"] * jnp.exp(-0.5 * x ** 2 / arg_dict["width_0"] ** 2)
                      + arg_dict["sigma_1"] * jnp.exp(-0.5 * x ** 2 / arg_dict["width_1"] ** 2))
        return -0.5 * jnp.sum(((self.data - model_data) / self.noise) ** 2)


class Fitness:
    def __init__(self, model, analysis, resample_figure_of_merit=-1.0e30):
        self.model = model
        self.analysis = analysis
        self.resample_figure_of_merit = resample_figure_of_merit

    def call(self, parameters):
        arg_dict = self.model.arg_dict_from_vector(parameters)
        try:
            self.model.check_assertions(arg_dict)
            return self.analysis.log_likelihood_function(arg_dict)
        except FitException:
            return self.resample_figure_of_merit


def main():
    names = ["sigma_0", "sigma_1", "width_0", "width_1"]
    ordering = CompoundAssertion(
        GreaterThanLessThanAssertion("sigma_0", "sigma_1"),
        GreaterThanLessThanAssertion("width_0", "width_1"),
    )
    model = Model(names, [ordering, GreaterThanLessThanAssertion("width_1", "sigma_1")])
    data = jnp.exp(-0.5 * jnp.linspace(-1.0, 1.0, 9) ** 2 / 0.3 ** 2)
    fitness = Fitness(model, Analysis(data, 0.1))
    call = jax.jit(fitness.call)
    vectors = jnp.array([
        [0.4, 0.6, 0.2, 0.5],  # every assertion holds
        [0.7, 0.6, 0.2, 0.5],  # sigma ordering broken
        [0.4, 0.6, 0.6, 0.5],  # width ordering broken
        [0.1, 0.3, 0.2, 0.5],  # width_1 > sigma_1
    ])
    return [call(vector) for vector in vectors]
