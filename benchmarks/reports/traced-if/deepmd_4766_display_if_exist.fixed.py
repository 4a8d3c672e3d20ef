"""An energy/force loss reports per-term RMSEs, showing NaN for labels missing from the batch.

Source: https://github.com/deepmodeling/deepmd-kit/pull/4766
Fails: `display_if_exist` returns `loss if bool(find_property) else xp.nan`; the `find_*` flags
    come from the batch, so in the jitted loss `bool()` of a tracer raises TracerBoolConversionError.
Fix: select element-wise: `xp.where(find_property, loss, xp.nan)`.
"""

import jax
import jax.numpy as jnp


class EnergyLoss:
    def __init__(self, starter_learning_rate, start_pref_e, limit_pref_e, start_pref_f, limit_pref_f):
        self.starter_learning_rate = starter_learning_rate
        self.start_pref_e = start_pref_e
        self.limit_pref_e = limit_pref_e
        self.start_pref_f = start_pref_f
        self.limit_pref_f = limit_pref_f

    @staticmethod
    def display_if_exist(loss, find_property):
        """Display NaN if the labeled property is not found."""
        xp = jnp
        return xp.where(find_property, loss, xp.nan)

    def call(self, learning_rate, natoms, model_dict, label_dict):
        coef = learning_rate / self.starter_learning_rate
        pref_e = self.limit_pref_e + (self.start_pref_e - self.limit_pref_e) * coef
        pref_f = self.limit_pref_f + (self.start_pref_f - self.limit_pref_f) * coef
        find_energy = label_dict["find_energy"]
        find_force = label_dict["find_force"]

        l2_ener_loss = jnp.mean((model_dict["energy"] - label_dict["energy"]) ** 2)
        l2_force_loss = jnp.mean((model_dict["force"] - label_dict["force"]) ** 2)
        loss = pref_e * find_energy * l2_ener_loss / natoms + pref_f * find_force * l2_force_loss

        more_loss = {
            "rmse_e": self.display_if_exist(jnp.sqrt(l2_ener_loss) / natoms, find_energy),
            "rmse_f": self.display_if_exist(jnp.sqrt(l2_force_loss), find_force),
        }
        return loss, more_loss


def main():
    loss_fn = EnergyLoss(1e-3, start_pref_e=0.02, limit_pref_e=1.0, start_pref_f=1000.0, limit_pref_f=1.0)
    call = jax.jit(loss_fn.call, static_argnames=("natoms",))
    model = {"energy": jnp.array([1.0, 2.0]), "force": jnp.linspace(-1.0, 1.0, 12).reshape(2, 2, 3)}
    full = {"energy": jnp.array([1.5, 1.0]), "force": jnp.zeros((2, 2, 3)),
            "find_energy": jnp.float32(1.0), "find_force": jnp.float32(1.0)}
    no_force = dict(full, find_force=jnp.float32(0.0))
    no_energy = dict(full, find_energy=jnp.float32(0.0))
    return call(1e-3, 2, model, full), call(1e-4, 2, model, no_force), call(5e-4, 2, model, no_energy)
