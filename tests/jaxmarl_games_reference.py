"""JaxMARL 0.2.0's small games recorded for the parity tests (tests/test_jaxmarl_games_reference.py):
``switch_riddle`` and ``coin_game``.

Runs in JaxMARL's own virtual environment (``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``:
jax 0.10.2, jaxmarl 0.2.0) and imports only the standard library, numpy, jax and jaxmarl — never
war_envs or torch.  Reads a JSON list of jobs (``python jaxmarl_games_reference.py JOBS OUT``),
runs them in one process (one jax start-up) and writes one JSON list of results:

``{"kind": "trace", "env": ..., "config": {...}, "episodes": n, "seed": s}``
    plays the game with a uniformly random policy (numpy, seeded ``s``), calling ``step_env``
    (no auto-reset: an episode stops at its first ``done["__all__"]`` and the next starts from a
    fresh ``reset``), and records per episode the start state and observations, then per step the
    actions, the random draws ``step_env`` made (recomputed from its key exactly as it splits
    it: Switch Riddle's next agent in the room, Coin Game's coin respawns ``[2, 2]`` and inner
    reset positions ``[4, 2]``), and the state, observations, rewards, dones and info after it.
``{"kind": "random_stats", "env": ..., "config": {...}, "worlds": W, "seed": s, "steps": T}``
    a uniformly random policy on JaxMARL's auto-reset ``step`` (jit + vmap over W worlds, T
    steps): the first episode of every world: its length and the first agent's return.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jaxmarl import make
from jaxmarl_jit import jit_reset  # noqa: E402

ENV_NAMES = {"switch_riddle": "switch_riddle", "coin_game": "coin_game"}


def as_list(x):
    return np.asarray(x).tolist()


def state_dict(state) -> dict:
    return {k: as_list(v) for k, v in vars(state).items()}


def draws(env_name: str, env, key) -> dict:
    """The random numbers ``step_env(key, ...)`` drew, recomputed from ``key`` as it splits it."""
    if env_name == "switch_riddle":
        return {"in_room": int(jax.random.randint(key, shape=(), minval=0, maxval=env.num_agents))}
    key, subkey = jax.random.split(key)
    coins = jax.random.randint(subkey, shape=(2, 2), minval=0, maxval=3)
    _, subkey = jax.random.split(key)
    start = jax.random.randint(subkey, shape=(4, 2), minval=0, maxval=3)
    return {"coins": as_list(coins), "start": as_list(start)}


def trace(job: dict) -> dict:
    env = make(job["env"], **job.get("config", {}))
    agents = env.agents
    n_actions = [int(env.action_space(a).n) for a in agents]
    rng = np.random.default_rng(job["seed"])
    key = jax.random.PRNGKey(job["seed"])
    reset = jit_reset(env.reset)  # step_env then compiles once
    step = jax.jit(env.step_env)
    episodes = []
    for _ in range(job["episodes"]):
        key, k_reset = jax.random.split(key)
        obs, state = reset(k_reset)
        episode = {"start": state_dict(state), "obs": [as_list(obs[a]) for a in agents], "steps": []}
        while True:
            key, k_step = jax.random.split(key)
            actions = {a: int(rng.integers(n)) for a, n in zip(agents, n_actions)}
            obs, state, rewards, dones, info = step(k_step, state, {a: jnp.int32(x) for a, x in actions.items()})
            episode["steps"].append({
                "actions": [actions[a] for a in agents], "draws": draws(job["env"], env, k_step),
                "state": state_dict(state), "obs": [as_list(obs[a]) for a in agents],
                "rewards": [float(rewards[a]) for a in agents], "done": bool(dones["__all__"]),
                "info": {k: as_list(v) for k, v in info.items()}})
            if dones["__all__"]:
                break
        episodes.append(episode)
    return {"episodes": episodes}


def random_stats(job: dict) -> dict:
    env = make(job["env"], **job.get("config", {}))
    agents = env.agents
    n_actions = jnp.array([int(env.action_space(a).n) for a in agents])
    W, T = job["worlds"], job["steps"]

    def one_step(carry, key):
        state, ret, length, done_once, first_ret, first_len = carry
        k_act, k_step = jax.random.split(key)
        acts = jax.random.randint(k_act, (len(agents),), 0, n_actions)
        _, state, rewards, dones, _ = env.step(k_step, state, {a: acts[i] for i, a in enumerate(agents)})
        ret = ret + rewards[agents[0]]
        length = length + 1
        done = dones["__all__"]
        first_ret = jnp.where(done & ~done_once, ret, first_ret)
        first_len = jnp.where(done & ~done_once, length, first_len)
        done_once = done_once | done
        ret = jnp.where(done, 0.0, ret)
        length = jnp.where(done, 0, length)
        return (state, ret, length, done_once, first_ret, first_len), None

    def world(key):
        k_reset, k_steps = jax.random.split(key)
        _, state = env.reset(k_reset)
        carry = (state, jnp.float32(0.0), jnp.int32(0), jnp.bool_(False), jnp.float32(0.0), jnp.int32(0))
        carry, _ = jax.lax.scan(one_step, carry, jax.random.split(k_steps, T))
        return carry[3], carry[4], carry[5]

    done, ret, length = jax.jit(jax.vmap(world))(jax.random.split(jax.random.PRNGKey(job["seed"]), W))
    done = np.asarray(done)
    return {"returns": as_list(np.asarray(ret)[done]), "lengths": as_list(np.asarray(length)[done])}


def main() -> None:
    jobs = json.loads(open(sys.argv[1]).read())
    results = [{"trace": trace, "random_stats": random_stats}[job["kind"]](job) for job in jobs]
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
