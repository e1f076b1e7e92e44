"""Golden trajectories: Spread-v0, PredatorPrey-v0, Command-v0 and Tag-v0 episodes recorded
before the one-file scenario refactor (commit cb9a33e's kernels), every other registered MPE
scenario (and more Command-v0 options) recorded before the scenario-bases refactor (commit
22e5726's kernels), SMAX-v0 episodes recorded before its kernel speed-up (commit 270abfd's
kernels), and the ten VMAS-family scenarios' episodes recorded before theirs (commit 765a138's
kernels), kept as per-step SHA-256 digests of every returned tensor (observations, rewards,
flags, info, full state) in ``tests/golden/trajectories.json``.  A refactor must reproduce them
bitwise.

``python tests/golden_trajectories.py`` prints the digests of the current code (to compare, or
to record after an intended change of semantics — which then needs a version bump);
``python tests/golden_trajectories.py --add`` records the cases the file does not hold yet
(appended; a digest already there is never rewritten).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import pathlib

import torch

GOLDEN = pathlib.Path(__file__).parent / "golden" / "trajectories.json"

MPE_SCENARIOS = [
    ("Spread-v0", {}),
    ("Spread-v0", {"num_agent_neighbors": 1, "num_landmark_neighbors": 2, "N": 4}),
    ("Spread-v0", {"terminate_on_success": True, "local_ratio": 0.3}),
    ("Spread-v0", {"curriculum": True}),
    ("PredatorPrey-v0", {}),
    ("PredatorPrey-v0", {"num_agent_neighbors": 2, "num_landmark_neighbors": 1, "num_good": 2}),
    ("PredatorPrey-v0", {"curriculum": True, "terminate_on_success": True}),
    ("Command-v0", {}),
    ("Command-v0", {"num_sentries": 3, "num_agent_neighbors": None}),
    # recorded before the scenario bases refactor (every other registered MPE scenario, issue #24)
    ("Command-v0", {"num_sentries": 2, "num_landmarks": 2, "terminate_on_success": True}),
    ("Simple-v0", {}),
    ("Adversary-v0", {}),
    ("Adversary-v0", {"N": 3, "num_agent_neighbors": 2, "num_landmark_neighbors": 1}),
    ("Push-v0", {}),
    ("Crypto-v0", {}),
    ("SpeakerListener-v0", {}),
    ("Reference-v0", {}),
    ("Reference-v0", {"local_ratio": 0.2}),
    ("WorldComm-v0", {}),
    ("WorldComm-v0", {"num_good": 1, "num_adversaries": 2, "num_obstacles": 0, "num_food": 1, "num_forests": 1}),
    ("CollectTreasure-v0", {}),
    ("CollectTreasure-v0", {"num_collectors": 2, "num_deposits": 3, "num_treasures": 4}),
    ("Formation-v0", {}),
    ("Formation-v0", {"N": 3, "terminate_on_success": True}),
    ("Line-v0", {}),
    ("Line-v0", {"N": 2, "terminate_on_success": True}),
    ("Relay-v0", {}),
    ("Relay-v0", {"num_sentries": 3, "num_landmarks": 5, "min_goal_steps": 2, "max_goal_steps": 3,
                  "mute_commander": True}),
    ("Relay-v0", {"num_sentries": 2, "num_landmarks": 6, "min_goal_steps": 1, "max_goal_steps": 2}),
]


def mpe_cases() -> list[tuple[str, dict]]:
    return [(env_id, dict(extra, continuous_actions=cont, precision=prec, autoreset_mode=ar))
            for env_id, extra in MPE_SCENARIOS
            for cont, prec, ar in itertools.product([False, True], ["float32", "float64"],
                                                    ["same_step", "next_step"])]


def tag_cases() -> list[dict]:
    return [dict(use_full_observation=full, autoreset_mode=ar, precision=prec)
            for full, ar, prec in itertools.product([True, False], ["same_step", "next_step"],
                                                    ["float32", "float64"])]


#: SMAX-v0 maps and options: unit-list and conic observations, discrete and continuous actions,
#: the heuristic enemy in both attack modes and self-play, SMACv2 starts
SMAX_CASES = [
    {"map_name": "3m"},
    {"map_name": "2s3z", "attack_mode": "random"},
    {"map_name": "smacv2_5_units", "observation_type": "conic"},
    {"map_name": "5m_vs_6m", "action_type": "continuous"},
    {"map_name": "3s5z", "enemy": "self_play"},
]


def smax_cases() -> list[dict]:
    return [dict(extra, precision=prec, autoreset_mode=ar)
            for extra in SMAX_CASES
            for prec, ar in itertools.product(["float32", "float64"], ["same_step", "next_step"])]


#: VMAS-family scenarios (default arguments; GiveWay-v0 and Passage-v0 crowd walls, Balance-v0 and
#: Wheel-v0 rotate lines, Transport-v0 pushes boxes); continuous actions in float32 and float64,
#: discrete actions in float32
VMAS_SCENARIOS = ["Navigation-v0", "Sampling-v0", "Balance-v0", "Transport-v0", "Wheel-v0", "Dispersion-v0",
                  "GiveWay-v0", "Flocking-v0", "Discovery-v0", "Passage-v0"]


def vmas_cases() -> list[tuple[str, dict]]:
    return [(env_id, dict(continuous_actions=cont, precision=prec))
            for env_id in VMAS_SCENARIOS
            for cont, prec in [(True, "float32"), (True, "float64"), (False, "float32")]]


def _clone(x):
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    return x.clone()


#: ``info`` entries added after the trajectories were recorded, left out of the digests (what
#: they hold is checked elsewhere): SMAX-v0's ``final_world_state`` (2026-12-06), compared with
#: JaxMARL's ``get_world_state`` in tests/test_smax_reference.py
ADDED_INFO = ("final_world_state",)


def _record(env, draw, steps: int, obs) -> list:
    """The reset's observations, then ``steps`` steps of ``draw()``'s actions: each step's
    observations, rewards, flags, info (but ``ADDED_INFO``) and full state (copies)."""
    rec = [_clone(obs)]
    for _ in range(steps):
        o, r, te, tr, info = env.step(draw())
        info = {k: v for k, v in info.items() if k not in ADDED_INFO}
        rec.append({"obs": _clone(o), "rew": _clone(r), "term": _clone(te), "trunc": _clone(tr),
                    "info": _clone(info), "state": _clone(env.get_state())})
    env.close()
    return rec


def record_mpe(n: int, env_id: str, kw: dict) -> list:
    import war_envs

    env = war_envs.make(env_id, num_envs=7, seed=11 + n, max_cycles=9, **kw)
    obs = env.reset()
    if kw.get("curriculum"):
        env.set_curriculum_stage(1)
    gen = torch.Generator().manual_seed(n)

    def draw():  # uniform actions of each group's space (Discrete(n) or Box(0, 1, (d,)))
        return {g: (torch.rand(7, s.n_agents, s.action_space.shape[0], generator=gen) if kw["continuous_actions"]
                    else torch.randint(0, int(s.action_space.n), (7, s.n_agents), generator=gen))
                for g, s in env.groups.items()}

    return _record(env, draw, 30, obs)


def record_tag(n: int, kw: dict) -> list:
    import war_envs

    env = war_envs.make("Tag-v0", num_envs=5, seed=3 + n, num_taggers=2, num_runners=6, grid_length=3.0,
                        tagging_distance=0.1, episode_length=12, num_other_agents_observed=3, **kw)
    obs = env.reset()
    gen = torch.Generator().manual_seed(n)
    rec = [obs]  # (as recorded: the views, so this entry holds the last step's observations)
    for _ in range(40):
        acts = {g: torch.stack([torch.randint(0, int(m), (5, s.n_agents), generator=gen)
                                for m in s.action_space.nvec], -1) for g, s in env.groups.items()}
        o, r, te, tr, _ = env.step(acts)
        rec.append([_clone(o), _clone(r), _clone(te), _clone(tr), _clone(env.get_state())])
    env.close()
    return rec


def record_smax(n: int, kw: dict) -> list:
    import war_envs

    env = war_envs.make("SMAX-v0", num_envs=6, seed=5 + n, max_steps=30, **kw)
    obs = env.reset()
    gen = torch.Generator().manual_seed(n)

    def draw():
        if env.has_action_mask:  # random available actions
            return {g: torch.argmax(torch.rand(m.shape, generator=gen) + m, -1) for g, m in env.action_mask().items()}
        return {g: torch.rand(6, s.n_agents, 4, generator=gen) for g, s in env.groups.items()}

    return _record(env, draw, 70, obs)  # a few episodes each (at most max_steps + 1 steps)


def record_vmas(n: int, env_id: str, kw: dict) -> list:
    import war_envs

    env = war_envs.make(env_id, num_envs=4, seed=7 + n, max_steps=20, **kw)
    obs = env.reset()
    gen = torch.Generator().manual_seed(n)

    def draw():  # uniform over each group's Box (every agent pushing) or Discrete(n)
        out = {}
        for g, spec in env.groups.items():
            space = spec.action_space
            if kw["continuous_actions"]:
                low, high = torch.as_tensor(space.low), torch.as_tensor(space.high)
                out[g] = low + (high - low) * torch.rand(4, spec.n_agents, *space.shape, generator=gen)
            else:
                out[g] = torch.randint(0, int(space.n), (4, spec.n_agents), generator=gen)
        return out

    return _record(env, draw, 45, obs)  # two episodes and a bit (auto-reset at step 20)


def key(family: str, n: int, env_id: str, kw: dict) -> str:
    """A case's entry in the digests file."""
    return f"{family}/{n}/{env_id}/{json.dumps(kw, sort_keys=True)}"


def _feed(h, x) -> None:
    if isinstance(x, dict):
        for k in sorted(x):
            h.update(str(k).encode())
            _feed(h, x[k])
    elif isinstance(x, (list, tuple)):
        for item in x:
            _feed(h, item)
    else:
        t = x.detach().cpu().contiguous()
        h.update(f"{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")


def step_digests(rec: list) -> list[str]:
    """One digest per recorded step (the first: the reset's observations)."""
    out = []
    for step in rec:
        h = hashlib.sha256()
        _feed(h, step)
        out.append(h.hexdigest()[:20])
    return out


def cases() -> list[tuple[str, object]]:
    """Every case as (its key, a function recording its trajectory)."""
    out = [(key("mpe", n, env_id, kw), lambda n=n, env_id=env_id, kw=kw: record_mpe(n, env_id, kw))
           for n, (env_id, kw) in enumerate(mpe_cases())]
    out += [(key("tag", n, "Tag-v0", kw), lambda n=n, kw=kw: record_tag(n, kw)) for n, kw in enumerate(tag_cases())]
    out += [(key("smax", n, "SMAX-v0", kw), lambda n=n, kw=kw: record_smax(n, kw))
            for n, kw in enumerate(smax_cases())]
    out += [(key("vmas", n, env_id, kw), lambda n=n, env_id=env_id, kw=kw: record_vmas(n, env_id, kw))
            for n, (env_id, kw) in enumerate(vmas_cases())]
    return out


def current_digests(skip=()) -> dict[str, list[str]]:
    """The digests of the current code, every case but those in ``skip``."""
    return {k: step_digests(record()) for k, record in cases() if k not in skip}


def add_missing() -> list[str]:
    """Record the cases ``GOLDEN`` does not hold yet, appended after the recorded ones (whose
    digests stay byte for byte); returns the keys added."""
    data = json.loads(GOLDEN.read_text())
    new = current_digests(skip=set(data["digests"]))
    data["digests"].update(new)
    GOLDEN.write_text(json.dumps(data, indent=0))
    return list(new)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--add"]:
        print("\n".join(add_missing()))
    else:
        print(json.dumps(current_digests(), indent=1))
