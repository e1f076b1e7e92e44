"""WarpDrive's tag_gridworld recorded for the parity tests (tests/test_warpdrive_reference.py).

Runs in WarpDrive's own virtual environment (``~/.cache/war-envs/bench-venvs/warpdrive``:
rl-warp-drive 2.7.1 installed without its dependencies, plus gym 0.26.2, numpy 1.26.4 and numba
0.60.0; ``bash scripts/warpdrive_check.sh`` builds it) and imports only the standard library,
numpy and WarpDrive's own modules — never war_envs or torch.  WarpDrive's ``TagGridWorld`` is
plain NumPy (``example_envs/tag_gridworld/tag_gridworld.py``; the package's ``__init__`` files are
empty, so nothing of pycuda is imported and no stub is needed).  Its Numba step
(``tag_gridworld_step_numba.NumbaTagGridWorldStep``, WarpDrive's CUDA kernel in Numba) runs in
Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, set below before numba is imported: one
Python thread per CUDA thread, shared memory, ``syncthreads`` and atomics as on a GPU).  That
module reads the agent count from ``warp_drive/numba_includes/env_config.py``, which WarpDrive
generates at build time from its template; here WarpDrive's own ``update_env_header`` writes it
(into the venv's copy of WarpDrive, as WarpDrive does) before each configuration's import.

Subcommands, each writing one ``.npz`` file:

``trace``
    ``--episodes N`` episodes of WarpDrive's NumPy ``TagGridWorld(**config)``: each starts from
    an injected state (``starting_location_x`` / ``starting_location_y``: every agent's cell
    uniform on ``[0, L]^2``, drawn with numpy from ``--seed``; ``--default-start``: the
    constructor's own start) and plays uniformly random actions (the same generator) until
    ``done["__all__"]`` (at most ``episode_length`` steps).  Recorded per episode ``e`` and
    step ``k`` (padded to ``episode_length`` steps; ``length[e]`` is the number played):
    ``start_x/start_y [N, A]``, ``reset_obs [N, A, D]`` (``reset()``'s observations),
    ``actions [N, T, A]``, ``loc_x/loc_y [N, T, A]`` (the state after the step), ``obs [N, T,
    A, D]``, ``rewards [N, T, A]`` (float64, the step's ``rew`` dict in agent order),
    ``reward_tag`` / ``reward_penalty [N, T, A]`` (the env's two reward components after the
    step), ``done [N, T]``.  With ``--numba`` the same starts and actions are also played by
    ``NumbaTagGridWorldStep`` (the episodes being played as the blocks of one launch per step,
    WarpDrive's float32 constants) and recorded as
    ``numba.loc_x`` / ``numba.loc_y`` / ``numba.obs`` / ``numba.rewards`` / ``numba.done``.
``starts``
    ``--n`` starts of WarpDrive's reset pool (``CUDATagGridWorldWithResetPool.
    get_reset_pool_dictionary``, 5 starts per call, seeded with ``--seed`` through the env's
    ``seed``): ``x`` / ``y [n, A]``.
``batch``
    runs a JSON list of the above (each an argv list) in one process.

The env configuration (``--config``) is a JSON object of ``TagGridWorld`` keyword arguments.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # before numba is imported (by --numba cases)

import numpy as np  # noqa: E402

from example_envs.tag_gridworld.tag_gridworld import CUDATagGridWorldWithResetPool, TagGridWorld  # noqa: E402


def full_obs_dim(env) -> int:
    return 4 * env.num_agents + 1 if env.use_full_observation else 6


def numba_step_module(num_envs: int, num_agents: int):
    """WarpDrive's Numba step compiled for ``num_agents`` agents (its env_config written by
    WarpDrive's ``update_env_header``, then the config and step modules (re)imported)."""
    from warp_drive.utils.numba_utils.misc import update_env_header

    update_env_header(template_header_file="template_env_config.txt", num_envs=num_envs, num_agents=num_agents)
    importlib.invalidate_caches()
    config = importlib.import_module("warp_drive.numba_includes.env_config")
    importlib.reload(config)
    assert config.wkNumberAgents == num_agents, config.wkNumberAgents
    step = importlib.import_module("example_envs.tag_gridworld.tag_gridworld_step_numba")
    return importlib.reload(step)


def trace(args, config: dict) -> dict:
    N = args.episodes
    rng = np.random.default_rng(args.seed)
    env = TagGridWorld(**config)
    A, T, D, L = env.num_agents, env.episode_length, full_obs_dim(env), env.grid_length
    out = {"start_x": np.zeros((N, A), np.int64), "start_y": np.zeros((N, A), np.int64),
           "reset_obs": np.zeros((N, A, D)), "actions": np.zeros((N, T, A), np.int64),
           "loc_x": np.zeros((N, T, A), np.int64), "loc_y": np.zeros((N, T, A), np.int64),
           "obs": np.zeros((N, T, A, D)), "rewards": np.zeros((N, T, A)), "reward_tag": np.zeros((N, T, A)),
           "reward_penalty": np.zeros((N, T, A)), "done": np.zeros((N, T), bool), "length": np.zeros(N, np.int64)}
    for e in range(N):
        if args.default_start:
            env = TagGridWorld(**config)
        else:
            sx, sy = rng.integers(0, L + 1, A), rng.integers(0, L + 1, A)
            env = TagGridWorld(**config, starting_location_x=sx, starting_location_y=sy)
        obs = env.reset()
        out["start_x"][e], out["start_y"][e] = env.global_state["loc_x"][0], env.global_state["loc_y"][0]
        out["reset_obs"][e] = np.stack([obs[i] for i in range(A)])
        for k in range(T):
            actions = rng.integers(0, len(env.step_actions), A)
            obs, rew, done, _ = env.step({i: int(actions[i]) for i in range(A)})
            out["actions"][e, k] = actions
            out["loc_x"][e, k], out["loc_y"][e, k] = env.global_state["loc_x"][k + 1], env.global_state["loc_y"][k + 1]
            out["obs"][e, k] = np.stack([obs[i] for i in range(A)])
            out["rewards"][e, k] = [rew[i] for i in range(A)]
            out["reward_tag"][e, k], out["reward_penalty"][e, k] = env.reward_tag, env.reward_penalty
            out["done"][e, k] = done["__all__"]
            if done["__all__"]:
                break
        out["length"][e] = k + 1
    if args.numba:
        out.update(numba_trace(out, env, config))
    return out


def numba_trace(rec: dict, env, config: dict) -> dict:
    """The recorded starts and actions through ``NumbaTagGridWorldStep``: at every step one
    launch whose blocks are the episodes still being played (their state arrays gathered, then
    written back), with WarpDrive's float32 constants."""
    N, T, A = rec["actions"].shape
    step = numba_step_module(N, A)
    x = rec["start_x"].astype(np.int32)
    y = rec["start_y"].astype(np.int32)
    done = np.zeros(N, np.int32)
    rewards = np.zeros((N, A), np.float32)
    obs = np.zeros((N, A, full_obs_dim(env)), np.float32)
    timestep = np.zeros(N, np.int32)
    out = {"numba.loc_x": np.zeros((N, T, A), np.int64), "numba.loc_y": np.zeros((N, T, A), np.int64),
           "numba.obs": np.zeros((N, T) + obs.shape[1:], np.float32), "numba.rewards": np.zeros((N, T, A), np.float32),
           "numba.done": np.zeros((N, T), bool)}
    f32 = np.float32
    for k in range(int(rec["length"].max())):
        rows = np.flatnonzero(rec["length"] > k)
        block = [np.ascontiguousarray(a[rows]) for a in (x, y, done, rewards, obs, timestep)]
        actions = np.ascontiguousarray(rec["actions"][rows, k, :, None], dtype=np.int32)
        bx, by, bdone, brew, bobs, bt = block
        step.NumbaTagGridWorldStep[len(rows), A](
            bx, by, actions, bdone, brew, bobs, f32(env.wall_hit_penalty), f32(env.tag_reward_for_tagger),
            f32(env.tag_penalty_for_runner), f32(env.step_cost_for_tagger), bool(env.use_full_observation),
            np.int32(env.grid_length), bt, np.int32(env.episode_length))
        for a, b in zip((x, y, done, rewards, obs, timestep), block):
            a[rows] = b
        out["numba.loc_x"][rows, k], out["numba.loc_y"][rows, k] = bx, by
        out["numba.obs"][rows, k], out["numba.rewards"][rows, k] = bobs, brew
        out["numba.done"][rows, k] = bdone != 0
    return out


def starts(args, config: dict) -> dict:
    env = CUDATagGridWorldWithResetPool(**config, seed=args.seed)
    xs, ys = [], []
    while sum(len(x) for x in xs) < args.n:
        pool = env.get_reset_pool_dictionary()
        xs.append(pool["loc_x_reset_pool"]["data"])
        ys.append(pool["loc_y_reset_pool"]["data"])
    return {"x": np.concatenate(xs)[:args.n].astype(np.int64), "y": np.concatenate(ys)[:args.n].astype(np.int64)}


def run(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["trace", "starts"])
    p.add_argument("--config", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--episodes", type=int, default=16)
    p.add_argument("--default-start", action="store_true")
    p.add_argument("--numba", action="store_true")
    p.add_argument("--n", type=int, default=10_000)
    args = p.parse_args(argv)
    config = json.loads(args.config)
    result = trace(args, config) if args.command == "trace" else starts(args, config)
    np.savez(args.out, **result)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "batch":
        with open(sys.argv[2]) as f:
            for argv in json.load(f):
                run(argv)
    else:
        run(sys.argv[1:])


if __name__ == "__main__":
    main()
