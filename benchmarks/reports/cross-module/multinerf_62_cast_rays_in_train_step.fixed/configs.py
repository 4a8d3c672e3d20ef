"""The training configuration."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Config:
    cast_rays_in_train_step: bool = False  # If True, compute rays in train step.
    lr: float = 0.01
    near: float = 0.5
