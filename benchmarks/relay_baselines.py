"""Scripted teams on Relay-v0: how much of the return the commander's messages carry, and how
much of it a held (stale) message loses.

Every row plays the same worlds (one episode each, the same seed, so the same landmarks and
goal schedules) with the same scripted sentries: go to the landmark heard (the arg-max of the
``heard`` block of their observation) or, hearing nothing, to the centroid of the landmarks
(the best a sentry without information can do: the point nearest on average to a goal drawn
uniformly among the ring's landmarks), steered by a PD rule on the discrete actions.  The
scripted commander says the goal it observes; a message "held k" is updated only at steps
t = 0, k, 2k, … and repeated in between (what WAR's hold does to a slow agent deciding every
k steps; ``whole episode``: k = max_cycles).

==========================  ===================================================================
random                      every agent uniformly random (the baseline of the issue's test)
muted: hedge (centroid)     ``mute_commander=True``: the sentries hear zeros and hedge
muted: sit at landmark 0    ``mute_commander=True``, sentries go to landmark 0 (a worse hedge)
held k                      the commander's message updated every k steps (k = 1: perfect)
==========================  ===================================================================

``recovered`` is (return − random) / (perfect − random).  A trained team, muted, should fall at
least halfway from its trained level towards random: muted, no team averages less than distance
1 (the ring's radius) per sentry-step (see the Relay-v0 docstring), so its return is at most
−max_cycles, and the script prints the trained return above which the halfway fall is certain.

    python benchmarks/relay_baselines.py [--worlds 2048] [--seed 0] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

ENV_KWARGS = {"num_sentries": 9, "num_landmarks": 8, "min_goal_steps": 10, "max_goal_steps": 20, "max_goal_jump": 2,
              "max_cycles": 50}
KP, KD = 1.0, 0.5  # the sentries' PD gains (force ∝ KP·(target − p) − KD·v)
HOLDS = (1, 2, 4, 8)


def sentry_actions(obs: torch.Tensor, num_landmarks: int, fixed_landmark: int | None = None) -> torch.Tensor:
    """Discrete actions ``[E, S]`` from sentry observations ``[E, S, 4 + 3L]``: towards the landmark
    heard (none heard: the landmarks' centroid; ``fixed_landmark``: always that one)."""
    vel, rel = obs[..., 0:2], obs[..., 4:4 + 2 * num_landmarks].reshape(*obs.shape[:2], num_landmarks, 2)
    heard = obs[..., 4 + 2 * num_landmarks:4 + 3 * num_landmarks]
    if fixed_landmark is not None:
        target = rel[..., fixed_landmark, :]
    else:
        picked = torch.gather(rel, 2, heard.argmax(-1)[..., None, None].expand(-1, -1, 1, 2))[..., 0, :]
        target = torch.where(heard.sum(-1, keepdim=True) > 0, picked, rel.mean(-2))
    force = KP * target - KD * vel
    axis = force.abs().argmax(-1)                       # 0: x, 1: y (one axis per discrete action)
    component = torch.gather(force, -1, axis[..., None])[..., 0]
    action = 1 + 2 * axis + (component > 0).long()      # 1 −x, 2 +x, 3 −y, 4 +y
    return torch.where(force.norm(dim=-1) < 1e-3, torch.zeros_like(action), action)


def play(worlds: int, seed: int, *, mute: bool = False, hold: int | None = 1, fixed_landmark: int | None = None,
         random_team: bool = False) -> torch.Tensor:
    """Per-world team return of one episode; the commander's message is updated every ``hold`` steps."""
    import war_envs

    env = war_envs.make("Relay-v0", num_envs=worlds, seed=seed, mute_commander=mute, **ENV_KWARGS)
    gen = torch.Generator().manual_seed(seed + 1)
    num_landmarks, sentries = env.num_landmarks, env.num_sentries
    obs = env.reset()
    said = torch.zeros(worlds, 1, dtype=torch.long)
    total = torch.zeros(worlds, dtype=torch.float64)
    for t in range(env.max_cycles):
        if random_team:
            act = {"commander": torch.randint(0, num_landmarks, (worlds, 1), generator=gen),
                   "sentry": torch.randint(0, 5, (worlds, sentries), generator=gen)}
        else:
            if t % hold == 0:
                said = obs["commander"][..., :num_landmarks].argmax(-1)
            act = {"commander": said, "sentry": sentry_actions(obs["sentry"], num_landmarks, fixed_landmark)}
        obs, rew, _, _, _ = env.step(act)
        total += rew["commander"][:, 0].double()
    env.close()
    return total


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worlds", type=int, default=2048)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    steps = ENV_KWARGS["max_cycles"]
    cases = [("random", {"random_team": True}),
             ("muted: hedge (centroid)", {"mute": True}),
             ("muted: sit at landmark 0", {"mute": True, "fixed_landmark": 0})]
    cases += [(f"held {k}" + (" (perfect)" if k == 1 else ""), {"hold": k}) for k in HOLDS]
    cases += [(f"held {steps} (whole episode)", {"hold": steps})]
    returns = {name: play(args.worlds, args.seed, **kw) for name, kw in cases}
    rnd, perfect = returns["random"].mean().item(), returns["held 1 (perfect)"].mean().item()
    rows = []
    for name, kw in cases:
        r = returns[name]
        rows.append({"policy": name, "return_mean": r.mean().item(),
                     "return_sem": (r.std() / r.numel() ** 0.5).item(), "per_step": r.mean().item() / steps,
                     "recovered": (r.mean().item() - rnd) / (perfect - rnd)})
    print(f"Relay-v0 {ENV_KWARGS}, scripted teams, one episode in each of {args.worlds} worlds (seed {args.seed})")
    print(f"{'policy':30s} {'return':>9s} {'± sem':>6s} {'per step':>9s} {'recovered':>10s}")
    for r in rows:
        print(f"{r['policy']:30s} {r['return_mean']:9.2f} {r['return_sem']:6.2f} {r['per_step']:9.3f} "
              f"{r['recovered']:10.3f}")
    # muted, no policy averages less than distance 1 (the ring's radius) per sentry-step
    muted_bound = -1.0 * steps
    needed = 2 * muted_bound - rnd
    print(f"muted, any team scores at most {muted_bound:.2f}: it falls at least halfway from its trained level "
          f"towards random whenever the trained team scores above {needed:.2f} "
          f"(recovered > {(needed - rnd) / (perfect - rnd):.3f})")
    if args.json:
        report = {"env_kwargs": ENV_KWARGS, "worlds": args.worlds, "seed": args.seed,
                  "sentry_gains": {"kp": KP, "kd": KD}, "rows": rows, "muted_return_bound": muted_bound,
                  "trained_return_needed": needed, "trained_recovered_needed": (needed - rnd) / (perfect - rnd)}
        _results.write(args.json, report, _results.metadata("relay_baselines.py", argv))
    return rows


if __name__ == "__main__":
    main()
