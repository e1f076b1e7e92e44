"""Scripted taggers on Tag-v0: how many tags a policy *could* make, with and without its heading.

Tag-v0's observation (WarpDrive's) is purely relative — other agents' positions, speeds,
accelerations and headings minus the observer's — so nothing in it says which way the observer
faces.  This benchmark measures, against random runners, the tags per episode of:

==================  ==========================================================================
random              uniformly random taggers (the baseline of the training criterion)
best blind          the best heading-blind strategy tried: full acceleration and one constant
                    turn level (every level is tried; the best is reported)
pursuit (heading)   turn toward the nearest runner in the game, full acceleration — uses the
                    true heading from the world state (what ``observe_self=True`` exposes)
==================  ==========================================================================

for WarpDrive's training-level action set (21 x 21) and the ``tag`` preset's coarse one (3 x 5),
both in the ``tag`` preset's arena (2 taggers, 10 runners, 10 x 10, 100 steps).

    python benchmarks/tag_baselines.py [--worlds 256] [--json PATH]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

ARENA = {"preset": "warpdrive_training", "num_taggers": 2, "num_runners": 10, "grid_length": 10.0,
         "episode_length": 100, "num_other_agents_observed": 5}
ACTION_SETS = {"warpdrive levels (21 x 21)": {},
               "tag preset levels (3 x 5)": {"num_acceleration_levels": 2, "num_turn_levels": 4}}


def play(env, tagger_policy, gen: torch.Generator, seed: int) -> float:
    """Mean tags per episode (the first episode of every world) with random runners."""
    import war_envs  # noqa: F401

    E, T, R = env.num_envs, env.num_taggers, env.num_runners
    nvec = env.groups["runner"].action_space.nvec
    env.reset(seed=seed)
    tags = torch.zeros(E)
    finished = torch.zeros(E, dtype=torch.bool)
    for _ in range(env.episode_length):
        runners = torch.stack([torch.randint(0, int(n), (E, R), generator=gen) for n in nvec], -1)
        _, _, _, _, info = env.step({"tagger": tagger_policy(env, gen), "runner": runners})
        tags += info["tags"][:, T:].sum(-1).float() * (~finished)
        term, trunc = env.world_flags()
        finished |= term | trunc
    return float(tags.mean())


def random_taggers(env, gen):
    nvec = env.groups["tagger"].action_space.nvec
    return torch.stack([torch.randint(0, int(n), (env.num_envs, env.num_taggers), generator=gen) for n in nvec], -1)


def constant(turn_index: int):
    def policy(env, gen):
        acc = env.groups["tagger"].action_space.nvec[0] - 1   # the largest acceleration change
        shape = (env.num_envs, env.num_taggers)
        return torch.stack([torch.full(shape, int(acc)), torch.full(shape, turn_index)], -1)
    return policy


def pursuit(env, gen):
    _, turns = env.action_tables(env.config, "float32")
    turns = torch.as_tensor(turns)
    st = env.get_state()
    T = env.num_taggers
    pos, heading, alive = st["agent_pos"], st["agent_dir"], st["alive"]
    tp, rp = pos[:, :T], pos[:, T:]
    dist = (tp[:, :, None] - rp[:, None]).norm(dim=-1) + (~alive[:, None, T:]) * 1e9
    target = torch.gather(rp, 1, dist.argmin(-1)[..., None].expand(-1, -1, 2))
    want = torch.atan2(target[..., 1] - tp[..., 1], target[..., 0] - tp[..., 0])
    diff = (want - heading[:, :T] + math.pi) % (2 * math.pi) - math.pi
    turn = (diff[..., None] - turns[1:]).abs().argmin(-1) + 1
    acc = torch.full_like(turn, int(env.groups["tagger"].action_space.nvec[0]) - 1)
    return torch.stack([acc, turn], -1)


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worlds", type=int, default=256)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    import war_envs

    rows = []
    for name, levels in ACTION_SETS.items():
        env = war_envs.make("Tag-v0", num_envs=args.worlds, seed=args.seed, **ARENA, **levels)
        gen = torch.Generator().manual_seed(0)
        rnd = play(env, random_taggers, gen, args.seed)
        turns = int(env.groups["tagger"].action_space.nvec[1])
        blind = max((play(env, constant(i), gen, args.seed), i) for i in range(1, turns))
        chase = play(env, pursuit, gen, args.seed)
        rows.append({"action_set": name, "env_kwargs": {**ARENA, **levels}, "worlds": args.worlds,
                     "random": rnd, "best_blind": blind[0], "best_blind_turn_index": blind[1],
                     "pursuit_with_heading": chase, "best_blind_over_random": blind[0] / rnd,
                     "pursuit_over_random": chase / rnd})
        env.close()
    print(f"tags per episode against random runners ({args.worlds} episodes each)")
    print(f"{'action set':28s} {'random':>8s} {'best blind':>11s} {'pursuit (heading)':>18s} {'blind x':>8s} "
          f"{'pursuit x':>10s}")
    for r in rows:
        print(f"{r['action_set']:28s} {r['random']:8.2f} {r['best_blind']:11.2f} {r['pursuit_with_heading']:18.2f} "
              f"{r['best_blind_over_random']:8.2f} {r['pursuit_over_random']:10.2f}")
    if args.json:
        _results.write(args.json, rows, _results.metadata("tag_baselines.py", argv))
    return rows


if __name__ == "__main__":
    main()
