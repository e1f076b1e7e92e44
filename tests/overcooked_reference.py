"""JaxMARL 0.2.0's ``overcooked`` recorded for the parity tests (tests/test_overcooked_reference.py).

Runs in JaxMARL's own virtual environment (``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``:
jax 0.10.2, jaxmarl 0.2.0) and imports only the standard library, numpy, jax and jaxmarl — never
war_envs or torch.  Reads a JSON list of jobs (``python overcooked_reference.py JOBS OUTDIR``),
runs them in one process (one jax start-up) and writes ``OUTDIR/job<i>.npz`` per job (the
episodes' observations are too many for JSON) and ``OUTDIR/layouts.json`` (JaxMARL's
``overcooked_layouts`` as lists):

``{"kind": "trace", "config": {...}, "episodes": n, "seed": s, "p": [6 probabilities]}``
    plays with a random policy (numpy, seeded ``s``, actions drawn with probabilities ``p``)
    calling ``step_env`` (no auto-reset: an episode stops at its first ``done["__all__"]``, the
    next starts from a fresh ``reset``).  Rows: per episode its start (row ``k = 0``), then one
    row per step (``k = 1, 2, ...``): ``episode``, ``k``, ``actions [2]`` (zeros on start rows),
    the state (``agent_pos``, ``agent_dir_idx``, ``agent_inv``, ``maze_map`` without its
    padding, ``step``, ``pad_ok``: the padding is all walls), ``obs [2, H, W, 26]``,
    ``reward``, ``shaped [2]``, ``done``.  The step draws nothing (its key is unused).
``{"kind": "random_stats", "config": {...}, "worlds": W, "seed": s}``
    a uniformly random policy on JaxMARL's auto-reset ``step`` (jit + vmap over W worlds,
    ``max_steps`` steps: each world's first episode): its sparse return (agent_0's), shaped
    return (both agents') and length.
``{"kind": "reset_stats", "config": {...}, "worlds": W, "seed": s}``
    ``reset`` of W keys (jit + vmap): agent cells (``y * width + x``), directions, inventories
    and pot statuses.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jaxmarl.environments.overcooked import Overcooked, overcooked_layouts
from jaxmarl_jit import jit_reset  # noqa: E402

AGENTS = ("agent_0", "agent_1")


def make(config: dict) -> Overcooked:
    config = dict(config)
    layout = overcooked_layouts[config.pop("layout", "cramped_room")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return Overcooked(layout=layout, **config)


def unpadded(env: Overcooked, maze) -> tuple[np.ndarray, bool]:
    maze = np.asarray(maze)
    pad = (maze.shape[0] - env.height) // 2
    inner = maze[pad:-pad, pad:-pad]
    ring = maze.copy()
    ring[pad:-pad, pad:-pad] = (2, 5, 0)
    return inner, bool((ring == np.array([2, 5, 0])).all())


def state_row(env: Overcooked, state) -> dict:
    maze, pad_ok = unpadded(env, state.maze_map)
    return {"agent_pos": np.asarray(state.agent_pos), "agent_dir_idx": np.asarray(state.agent_dir_idx),
            "agent_inv": np.asarray(state.agent_inv), "maze_map": maze, "step": int(state.step), "pad_ok": pad_ok}


def trace(job: dict) -> dict:
    env = make(job["config"])
    rng = np.random.default_rng(job["seed"])
    p = np.asarray(job.get("p", [1 / 6] * 6), dtype=float)
    key = jax.random.PRNGKey(job["seed"])
    reset = jit_reset(env.reset)  # step_env then compiles once
    step = jax.jit(env.step_env)
    rows: dict[str, list] = {}

    def add(episode, k, actions, state, obs, reward, shaped, done):
        row = {"episode": episode, "k": k, "actions": np.asarray(actions), **state_row(env, state),
               "obs": np.stack([np.asarray(obs[a]) for a in AGENTS]), "reward": reward,
               "shaped": np.asarray(shaped, dtype=np.float64), "done": done}
        for name, value in row.items():
            rows.setdefault(name, []).append(value)

    for episode in range(job["episodes"]):
        key, k_reset = jax.random.split(key)
        obs, state = reset(k_reset)
        add(episode, 0, [0, 0], state, obs, 0.0, [0.0, 0.0], False)
        k = 0
        while True:
            key, k_step = jax.random.split(key)
            actions = rng.choice(6, size=2, p=p)
            obs, state, rewards, dones, info = step(k_step, state, {a: jnp.int32(x) for a, x in zip(AGENTS, actions)})
            k += 1
            assert float(rewards["agent_0"]) == float(rewards["agent_1"])
            add(episode, k, actions, state, obs, float(rewards["agent_0"]),
                [float(info["shaped_reward"][a]) for a in AGENTS], bool(dones["__all__"]))
            if dones["__all__"]:
                break
    return {name: np.stack([np.asarray(x) for x in values]) for name, values in rows.items()}


def random_stats(job: dict) -> dict:
    env = make(job["config"])
    W, T = job["worlds"], env.max_steps

    def one_step(carry, key):
        state, ret, shaped, length, done_once, first = carry
        k_act, k_step = jax.random.split(key)
        acts = jax.random.randint(k_act, (2,), 0, 6)
        _, state, rewards, dones, info = env.step(k_step, state, {a: acts[i] for i, a in enumerate(AGENTS)})
        ret = ret + rewards["agent_0"]
        shaped = shaped + info["shaped_reward"]["agent_0"] + info["shaped_reward"]["agent_1"]
        length = length + 1
        done = dones["__all__"]
        first = jnp.where(done & ~done_once, jnp.stack([ret, shaped, length.astype(jnp.float32)]), first)
        done_once = done_once | done
        ret, shaped = jnp.where(done, 0.0, ret), jnp.where(done, 0.0, shaped)
        length = jnp.where(done, 0, length)
        return (state, ret, shaped, length, done_once, first), None

    def world(key):
        k_reset, k_steps = jax.random.split(key)
        _, state = env.reset(k_reset)
        carry = (state, jnp.float32(0.0), jnp.float32(0.0), jnp.int32(0), jnp.bool_(False), jnp.zeros(3))
        carry, _ = jax.lax.scan(one_step, carry, jax.random.split(k_steps, T))
        return carry[4], carry[5]

    done, first = jax.jit(jax.vmap(world))(jax.random.split(jax.random.PRNGKey(job["seed"]), W))
    first = np.asarray(first)[np.asarray(done)]
    return {"returns": first[:, 0], "shaped": first[:, 1], "lengths": first[:, 2]}


def reset_stats(job: dict) -> dict:
    env = make(job["config"])
    _, state = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(job["seed"]), job["worlds"]))
    pos = np.asarray(state.agent_pos).astype(np.int64)
    maze = np.asarray(state.maze_map)
    pad = (maze.shape[1] - env.height) // 2
    pot = np.asarray(env.layout["pot_idx"])
    pots = maze[:, pad + pot // env.width, pad + pot % env.width, 2]
    return {"cells": pos[..., 1] * env.width + pos[..., 0], "dirs": np.asarray(state.agent_dir_idx),
            "inv": np.asarray(state.agent_inv), "pots": pots}


def main() -> None:
    jobs = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    for i, job in enumerate(jobs):
        result = {"trace": trace, "random_stats": random_stats, "reset_stats": reset_stats}[job["kind"]](job)
        np.savez_compressed(out / f"job{i}.npz", **result)
    layouts = {name: {k: np.asarray(x).tolist() for k, x in lay.items()} for name, lay in overcooked_layouts.items()}
    (out / "layouts.json").write_text(json.dumps(layouts))


if __name__ == "__main__":
    main()
