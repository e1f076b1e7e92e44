"""The main job (README): random-policy rollouts of every scenario with a throughput table
and rendered episodes.  (Until the MAPPO trainer lands, this is what `main` runs.)

Writes ``runs/main__<time>/``: ``throughput.json``, ``<scenario>.gif``.

    python examples/main_job.py [--worlds 1,64,1024,8192] [--seconds 1.0] [--out runs]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import time

import torch

import war_envs
from war_envs.render import GifWriter, camera_range

SCENARIOS = ("Spread-v0", "PredatorPrey-v0")


def throughput(env_id: str, num_envs: int, seconds: float, seed: int = 0) -> dict:
    """env-steps/s of random discrete actions drawn with torch (median of 3 timed runs)."""
    env = war_envs.make(env_id, num_envs=num_envs, seed=seed)
    env.reset()
    gen = torch.Generator().manual_seed(seed)
    buffers = {g: torch.empty((num_envs, s.n_agents), dtype=torch.int32) for g, s in env.groups.items()}

    def run(steps):
        for _ in range(steps):
            for b in buffers.values():
                b.random_(0, 5, generator=gen)
            env.step(buffers)

    run(20)
    t0 = time.perf_counter()
    run(50)
    per_step = (time.perf_counter() - t0) / 50
    steps = max(20, int(seconds / max(per_step, 1e-9)))
    rates = []
    for _ in range(3):
        t0 = time.perf_counter()
        run(steps)
        rates.append(steps * num_envs / (time.perf_counter() - t0))
    env.close()
    rate = statistics.median(rates)
    return {"scenario": env_id, "worlds": num_envs, "agents": env.num_agents,
            "env_steps_per_s": rate, "agent_steps_per_s": rate * env.num_agents,
            "threads": env.num_threads}


def render_episode(env_id: str, path: pathlib.Path, seed: int = 0) -> pathlib.Path:
    env = war_envs.make(env_id, num_envs=1, seed=seed, autoreset_mode="disabled")
    env.reset()
    state = env.get_state()
    cam = camera_range(torch.cat([state["agent_pos"][0], state["landmark_pos"][0]]).numpy())
    gen = torch.Generator().manual_seed(seed)
    with GifWriter(path, fps=10) as gif:
        gif.append(env.render_frame(0, original_cam_range=cam))
        for _ in range(env.max_cycles):
            actions = {g: torch.randint(0, 5, (1, s.n_agents), generator=gen) for g, s in env.groups.items()}
            env.step(actions)
            gif.append(env.render_frame(0, original_cam_range=cam))
    env.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", default="1,64,1024,8192", help="comma-separated world counts")
    parser.add_argument("--seconds", type=float, default=1.0, help="target duration of one timed run")
    parser.add_argument("--out", default="runs", help="parent folder of the run folder")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = pathlib.Path(args.out) / time.strftime("main__%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    print(f"war-envs {war_envs.__version__}: random-policy rollouts -> {out}")
    rows = []
    print(f"{'scenario':<17}{'worlds':>8}{'threads':>8}{'env-steps/s':>14}{'agent-steps/s':>15}")
    for env_id in SCENARIOS:
        for n in [int(w) for w in args.worlds.split(",")]:
            row = throughput(env_id, n, args.seconds)
            rows.append(row)
            print(f"{env_id:<17}{n:>8}{row['threads']:>8}{row['env_steps_per_s']:>14,.0f}"
                  f"{row['agent_steps_per_s']:>15,.0f}", flush=True)
    (out / "throughput.json").write_text(json.dumps(rows, indent=2))
    for env_id in SCENARIOS:
        gif = render_episode(env_id, out / f"{env_id}.gif")
        print(f"rendered {gif}")
    print("done")


if __name__ == "__main__":
    main()
