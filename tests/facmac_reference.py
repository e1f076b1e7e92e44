"""JaxMARL 0.2.0's FACMAC MPE (``MPE_simple_facmac_v1`` and its 3a / 6a / 9a presets) recorded for
the parity tests (tests/test_facmac_reference.py).

Runs in JaxMARL's own virtual environment (``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``:
jax 0.10.2, jaxmarl 0.2.0) and imports only the standard library, numpy, jax and jaxmarl — never
war_envs or torch.  ``python facmac_reference.py JOBS OUT [--x64]`` reads a JSON list of jobs,
runs them in one process (one jax start-up; ``--x64``: with ``jax_enable_x64``, JaxMARL in
float64, its weakly typed accelerations made float64 so that the float32 actions' forces are
float64 too; the prey's move stays float32, as JaxMARL casts it) and writes one JSON list of
results:

``{"kind": "trace", "env": ..., "config": {...}, "episodes": n, "seed": s}``
    plays uniformly random actions (numpy, float32 in [0, 1)^5, seeded ``s``) through
    ``step_env`` (no auto-reset: an episode ends at its ``done["__all__"]``, the next starts from
    a fresh ``reset``) and records per episode the start state and observations, then per step
    the actions, the prey's draws ``step_env`` made (recomputed from its key exactly as
    ``_prey_policy`` splits it: the 100 uniforms behind the lengths, then the 100 behind the
    angles, as U[0, 1)), and the state, observations, rewards and done after it.
``{"kind": "random_stats", "env": ..., "config": {...}, "worlds": W, "seed": s}``
    uniformly random actions on JaxMARL's auto-reset ``step`` (jit + vmap over W worlds) for one
    episode (``max_steps + 1`` steps): per world, adversary_0's and agent_0's returns.
``{"kind": "starts", "env": ..., "config": {...}, "worlds": W, "seed": s}``
    ``reset`` of W keys: the start positions.

A config's ``mass`` (a list) is passed as an array, as JaxMARL needs it.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import jax
import jax.numpy as jnp

if "--x64" in sys.argv[3:]:
    jax.config.update("jax_enable_x64", True)

from jaxmarl import make  # noqa: E402  (after the precision is chosen)
from jaxmarl_jit import jit_reset  # noqa: E402

NUM_CANDIDATES = 100


def as_list(x):
    return np.asarray(x).tolist()


def make_env(job: dict):
    config = dict(job.get("config", {}))
    if "mass" in config:
        config["mass"] = jnp.asarray(config["mass"])
    env = make(job["env"], **config)
    if jax.config.jax_enable_x64:
        # JaxMARL's per-agent accelerations are weakly typed: times the float32 actions they would
        # keep the control forces float32 even in float64; strong float64 makes the step float64
        env.accel = jnp.asarray(env.accel, dtype=jnp.float64)
    return env


def state_dict(state) -> dict:
    return {"p_pos": as_list(state.p_pos), "p_vel": as_list(state.p_vel), "step": int(state.step),
            "done": bool(state.done)}


def prey_draws(key) -> list:
    """The uniforms ``_prey_policy(key, ...)`` drew (every prey gets the step's key), as U[0, 1)."""
    key, sub = jax.random.split(key)
    lengths = jax.random.uniform(sub, (NUM_CANDIDATES,), minval=0.0, maxval=1.0)
    _, sub = jax.random.split(key)
    angles = jax.random.uniform(sub, (NUM_CANDIDATES,), minval=0.0, maxval=2.0) / 2  # exact: a power of 2
    return [as_list(lengths), as_list(angles)]


def trace(job: dict) -> dict:
    env = make_env(job)
    agents = env.agents
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
            actions = rng.random((len(agents), 5), dtype=np.float32)
            joint = {a: jnp.asarray(actions[i]) for i, a in enumerate(agents)}
            obs, state, rewards, dones, _ = step(k_step, state, joint)
            episode["steps"].append({
                "actions": as_list(actions), "draws": prey_draws(k_step), "state": state_dict(state),
                "obs": [as_list(obs[a]) for a in agents], "rewards": [float(rewards[a]) for a in agents],
                "done": bool(dones["__all__"])})
            if dones["__all__"]:
                break
        episodes.append(episode)
    return {"episodes": episodes}


def random_stats(job: dict) -> dict:
    env = make_env(job)
    agents = env.agents
    prey = env.num_adversaries

    def world(key):
        k_reset, k_steps = jax.random.split(key)
        _, state = env.reset(k_reset)

        def one_step(carry, key):
            state, ret = carry
            k_act, k_step = jax.random.split(key)
            acts = jax.random.uniform(k_act, (len(agents), 5), dtype=jnp.float32)
            _, state, rewards, _, _ = env.step(k_step, state, {a: acts[i] for i, a in enumerate(agents)})
            return (state, ret + jnp.stack([rewards[agents[0]], rewards[agents[prey]]]).astype(ret.dtype)), None

        (_, ret), _ = jax.lax.scan(one_step, (state, jnp.zeros(2)), jax.random.split(k_steps, env.max_steps + 1))
        return ret

    ret = np.asarray(jax.jit(jax.vmap(world))(jax.random.split(jax.random.PRNGKey(job["seed"]), job["worlds"])))
    return {"adversary_returns": as_list(ret[:, 0]), "prey_returns": as_list(ret[:, 1])}


def starts(job: dict) -> dict:
    env = make_env(job)
    _, state = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(job["seed"]), job["worlds"]))
    return {"p_pos": as_list(state.p_pos)}


def main() -> None:
    jobs = json.loads(open(sys.argv[1]).read())
    kinds = {"trace": trace, "random_stats": random_stats, "starts": starts}
    results = [kinds[job["kind"]](job) for job in jobs]
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
