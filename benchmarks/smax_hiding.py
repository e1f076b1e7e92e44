"""Why some SMAX-v0 3m runs learn to hide: what their critics believe and what play returns.

For each run folder (its ``checkpoint.pt``: the last update's networks and value normalizer, the
ones training used), every world of the run's evaluation stream plays one episode with the
sampled policy (the training behaviour, at the run's last temperature) and with the greedy one
(``--play``), and per episode:

- the outcome (won / lost / drawn: the time limit with both teams alive) and length;
- ``V(s_0)``, the critic's value of the start (denormalized, mean over the allies) beside the
  discounted return the episode really earned from there (``G_0``);
- for drawn episodes, the value the critic gives the last state, ``V(s_T)``: what a time-limit
  truncation adds to the return when ``bootstrap_truncation`` is on (``γ V(s_T)``), beside what
  a won episode earns;
- the critic's value along drawn episodes in time bins, beside the return they earned from
  there (an unengaged draw earns nothing);
- the value normalizer's running mean and standard deviation (the scale of the value targets);
- where drawn games end: the distance from the allies to the nearest enemy (median) and how
  often it is beyond the allies' sight range (nobody sees anybody: the heuristic enemy waits
  where it walked to, at the point opposite its start, i.e. the allies' start).

From ``metrics.csv``: the training curve (won, episode length, entropy, mean value) every
``--every`` updates, to see when a run starts to hide.

    python benchmarks/smax_hiding.py runs/hiding/smax__seed1 runs/hiding/smax__seed2 --episodes 500 \\
        --json benchmarks/results/smax_3m_hiding.json
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402

BINS = (0, 20, 40, 60, 80, 101)


def probe(run: Path, episodes: int, greedy: bool = False) -> dict:
    """One run's critic and returns over ``episodes`` sampled episodes (see the module docstring)."""
    import torch

    import war_envs
    from war_train.checkpoint import load_checkpoint
    from war_train.learn.policy import CriticState, first_action_mask, load_policies, step_action_mask
    from war_train.learn.valuenorm import ValueNorm
    from war_train.seeding import run_world_seeds

    ckpt = load_checkpoint(run / "checkpoint.pt")
    policies, cfg, _ = load_policies(ckpt, last=True)
    if cfg.scenario != "SMAX-v0":
        raise SystemExit(f"{run}: a {cfg.scenario} run; this script reads SMAX-v0 runs")
    if any(p.recurrent for p in policies.values()):
        raise SystemExit(f"{run}: a recurrent run; this probe reads feed-forward critics")
    (g, policy), = policies.items()                 # (the allies: the heuristic plays the enemies)
    vnorm = ValueNorm(cfg.value_norm_beta, enabled=cfg.value_norm)
    vnorm.load_state_dict(ckpt["valuenorms"][g])
    env = war_envs.make("SMAX-v0", num_envs=episodes, seed=cfg.seed, autoreset_mode="disabled", **cfg.env_kwargs)
    critic = CriticState.of(env, cfg)
    gen = torch.Generator().manual_seed(cfg.seed)
    obs = {k: o.clone() for k, o in env.reset(seed=run_world_seeds(cfg.seed, episodes, "eval")).items()}
    masks = first_action_mask(env)
    T = env.max_cycles
    values = torch.zeros(T + 1, episodes, dtype=torch.float64)
    rewards = torch.zeros(T, episodes, dtype=torch.float64)
    live = torch.ones(episodes, dtype=torch.bool)
    length = torch.full((episodes,), T, dtype=torch.int64)
    with torch.no_grad():
        for t in range(T + 1):
            v = vnorm.denormalize(policy.value(critic.current(obs), obs[g])[0]).double().mean(dim=1)
            values[t] = torch.where(live, v, values[t - 1] if t else v)   # (a finished episode keeps its last)
            if t == T or not bool(live.any()):
                values[t + 1:] = values[t]
                break
            actions, _ = policy.act(obs[g], greedy=greedy, generator=gen, mask=masks[g])
            next_obs, rew, _, _, info = env.step({g: actions}, trusted=True)
            rewards[t] = torch.where(live, rew[g].double().mean(dim=1), 0.0)
            term, trunc = env.world_flags()
            ended = live & (term | trunc)
            length[ended] = t + 1
            live &= ~ended
            masks = step_action_mask(env, info)
            obs = {k: o.clone() for k, o in next_obs.items()}
    state = env.get_state()
    alive, pos = state["unit_alive"], state["unit_positions"].double()
    won, allies_left = ~alive[:, env.num_allies:].any(dim=1), alive[:, :env.num_allies].any(dim=1)
    # at the end: the distance from every living ally to the nearest living enemy (sight: 9 for marines)
    na = env.num_allies
    gap = torch.cdist(pos[:, :na], pos[:, na:])
    gap = torch.where(alive[:, :na, None] & alive[:, na:][:, None, :], gap, torch.inf).amin(dim=(1, 2))
    sight = float(env.unit_type_sight_ranges[int(state["unit_types"][0, 0])])
    env.close()
    lost = ~won & ~allies_left
    drawn = ~won & ~lost
    discount = cfg.gamma ** torch.arange(T, dtype=torch.float64)
    g0 = (rewards * discount[:, None]).sum(dim=0)
    last_v = values[length, torch.arange(episodes)]

    def mean(x, where):
        return float(x[where].mean()) if bool(where.any()) else float("nan")

    out = {"run": str(run), "seed": cfg.seed, "play": "greedy" if greedy else "sampled", "config": {k: getattr(cfg, k) for k in (
               "critic_input", "critic_time", "bootstrap_truncation", "gamma", "total_env_steps", "restarts")},
           "episodes": episodes,
           "won": float(won.double().mean()), "lost": float(lost.double().mean()), "drawn": float(drawn.double().mean()),
           "length": {k: mean(length.double(), m) for k, m in (("won", won), ("lost", lost), ("drawn", drawn))},
           "v_start": float(values[0].mean()), "g_start": float(g0.mean()),
           "g_start_won": mean(g0, won), "g_start_lost": mean(g0, lost), "g_start_drawn": mean(g0, drawn),
           "value_norm": {"mean": float(vnorm.denormalize(torch.zeros(1))[0]),
                          "std": float(vnorm.denormalize(torch.ones(1))[0] - vnorm.denormalize(torch.zeros(1))[0])},
           "v_last_drawn": mean(last_v, drawn),
           "end_gap_drawn": {"median": float(gap[drawn].median()) if bool(drawn.any()) else float("nan"),
                             "beyond_sight": mean((gap > sight).double(), drawn), "sight": sight}, "bootstrap_drawn": cfg.gamma * mean(last_v, drawn),
           "v_drawn_by_time": {}}
    # the value along drawn episodes, and the return they earned from each time on
    future = torch.zeros(T + 1, episodes, dtype=torch.float64)
    for t in reversed(range(T)):
        future[t] = rewards[t] + cfg.gamma * future[t + 1]
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        steps = torch.arange(lo, min(hi, T))
        inside = drawn[None, :] & (steps[:, None] < length[None, :])
        if bool(inside.any()):
            out["v_drawn_by_time"][f"{lo}-{hi - 1}"] = {"value": float(values[steps][inside].mean()),
                                                       "earned": float(future[steps][inside].mean())}
    return out


def curve(run: Path, every: int) -> list[dict]:
    """``metrics.csv`` every ``every`` updates: won, episode length, the allies' entropy and mean value."""
    from war_train.run.runlog import read_metrics

    rows = read_metrics(run / "metrics.csv")
    keep = ("update", "won", "episode_length", "ally/entropy", "ally/value_mean")
    return [{k: r.get(k) for k in keep} for r in rows if r["update"] % every == 0 or r is rows[-1]]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="run folders (checkpoint.pt, metrics.csv)")
    p.add_argument("--episodes", type=int, default=500)
    p.add_argument("--play", default="sampled,greedy",
                   help="comma list: sampled (the training behaviour) and/or greedy play (default: both)")
    p.add_argument("--every", type=int, default=20, help="training-curve rows every N updates (default: 20)")
    p.add_argument("--label", default="", help="names the runs' settings in the table and the results file")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    plays = [x.strip() for x in args.play.split(",") if x.strip()]
    if not plays or any(x not in ("sampled", "greedy") for x in plays):
        p.error(f"--play: expected sampled and/or greedy, got {args.play!r}")
    rows = []
    for run in args.runs:
        for play in plays:
            row = probe(run, args.episodes, play == "greedy")
            row["label"] = args.label
            row["curve"] = curve(run, args.every)
            rows.append(row)
    head = ("seed", "won", "drawn", "len drawn", "gap drawn", "V(s0)", "G0", "G0 won", "G0 lost", "V(sT) drawn", "V drawn 0-19",
            "earned drawn 0-19", "V drawn 80-100")
    print(f"{args.label or 'runs'}: {args.episodes} episodes each (critic values denormalized)")
    print(" | ".join(("play", *head)))
    for r in rows:
        early, late = r["v_drawn_by_time"].get("0-19", {}), r["v_drawn_by_time"].get("80-100", {})
        cells = (r["play"], r["seed"], f"{r['won']:.1%}", f"{r['drawn']:.1%}", f"{r['length']['drawn']:.0f}",
                 f"{r['end_gap_drawn']['median']:.1f}", f"{r['v_start']:.3f}",
                 f"{r['g_start']:.3f}", f"{r['g_start_won']:.3f}", f"{r['g_start_lost']:.3f}", f"{r['v_last_drawn']:.3f}",
                 f"{early.get('value', float('nan')):.3f}", f"{early.get('earned', float('nan')):.3f}",
                 f"{late.get('value', float('nan')):.3f}")
        print(" | ".join(str(c) for c in cells))
    if args.json:
        _results.write(args.json, rows, _results.metadata(__file__, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
