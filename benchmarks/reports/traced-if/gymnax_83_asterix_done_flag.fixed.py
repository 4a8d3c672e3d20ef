"""The MinAtar Asterix environment moves gold and enemies and ends the episode on an enemy hit.

Source: https://github.com/RobertTLange/gymnax/issues/83
Fails: `step_entities` returns `bool(done > 0)`; under the jitted `env.step` the collision count
    is traced and `bool()` raises TracerBoolConversionError.
Fix: return the traced flag itself, `done > 0`, and let the caller combine it with array logic.
"""

import dataclasses
from typing import Tuple

import jax
import jax.numpy as jnp


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class EnvState:
    player_x: jnp.ndarray
    player_y: jnp.ndarray
    entities: jnp.ndarray
    move_timer: jnp.ndarray
    move_speed: jnp.ndarray
    time: jnp.ndarray

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


def step_entities(
    state: EnvState,
) -> Tuple[EnvState, jnp.ndarray, bool]:
    """Update positions of the entities and return reward, done."""
    done, reward = 0, jnp.array(0)
    # Loop over entities and check for collisions - either gold or enemy
    entities = state.entities
    for i in range(8):
        x = entities[i]
        slot_filled = x[4] != 0
        coords = jnp.logical_and(x[0] == state.player_x, x[1] == state.player_y)
        collision = jnp.logical_and(coords, slot_filled)
        # If collision with gold: empty gold and give positive reward
        collision_gold = jnp.logical_and(collision, x[3])
        reward += collision_gold
        entities = entities.at[i].set(x * (1 - collision_gold))
        # If collision with enemy: terminate the episode
        collision_enemy = jnp.logical_and(collision, 1 - x[3])
        done += collision_enemy

    # Loop over entities and move them in direction
    time_to_move = state.move_timer == 0
    move_timer = jnp.where(time_to_move, state.move_speed, state.move_timer - 1)

    old_entities = entities
    for i in range(8):
        x = entities[i]
        slot_filled = x[4] != 0
        lr = x[2]
        x = x.at[0].set(jnp.where(slot_filled, x[0] + 1 * lr - 1 * (1 - lr), x[0]))
        outside_of_frame = jnp.logical_or(x[0] < 0, x[0] > 9)
        entities = jnp.where(time_to_move, entities.at[i].set(x * slot_filled * (1 - outside_of_frame)), old_entities)
        coords = jnp.logical_and(x[0] == state.player_x, x[1] == state.player_y)
        collision = jnp.logical_and(coords, slot_filled)
        collision_gold = jnp.logical_and(collision, x[3])
        reward += jnp.where(time_to_move, collision_gold, False) * 1
        entities = jnp.where(time_to_move, entities.at[i].set(entities[i] * (1 - collision_gold)), old_entities)
        collision_enemy = jnp.logical_and(collision, 1 - x[3])
        done += jnp.where(time_to_move, collision_enemy, False)
    return (
        state.replace(entities=entities, move_timer=move_timer),
        reward,
        done > 0,
    )


@jax.jit
def step_env(state: EnvState, action: jnp.ndarray):
    player_x = jnp.clip(state.player_x + jnp.array([0, -1, 1, 0, 0])[action], 0, 9)
    player_y = jnp.clip(state.player_y + jnp.array([0, 0, 0, -1, 1])[action], 1, 8)
    state = state.replace(player_x=player_x, player_y=player_y, time=state.time + 1)
    state, reward, done = step_entities(state)
    done = jnp.logical_or(done, state.time >= 10)
    return state, reward, done


def make_state(entities, move_timer=0, time=0):
    return EnvState(jnp.array(5), jnp.array(4), jnp.array(entities, dtype=jnp.int32),
                    jnp.array(move_timer), jnp.array(2), jnp.array(time))


def main():
    empty = [[0, 0, 0, 0, 0]] * 8
    gold_next_to_player = [[4, 4, 1, 1, 1]] + empty[1:]
    enemy_on_player = [[5, 4, 1, 0, 1]] + empty[1:]
    enemy_far = [[0, 2, 1, 0, 1], [9, 6, 1, 1, 1]] + empty[2:]
    results = []
    for entities, action, timer, time in [
        (gold_next_to_player, 0, 0, 0),
        (enemy_on_player, 0, 1, 0),
        (enemy_far, 2, 0, 3),
        (empty, 3, 1, 9),
    ]:
        results.append(step_env(make_state(entities, timer, time), action))
    return results
