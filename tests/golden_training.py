"""Golden training runs: seeded ``war_train.train`` runs of every mode, kept as the SHA-256 digest
of each ``metrics.csv`` row's deterministic columns in ``tests/golden/training.json``.  A
refactor of the trainer must reproduce them bitwise (``tests/test_golden_training.py``).

The runs: lock-step MAPPO with an MLP, a GRU, frame stacking, a shared actor, Tag-v0's
MultiDiscrete heads, Box actions (continuous Spread) and SMAX-v0's action masks; the WAR arms
``war`` (jittered declared costs, fragments carried across windows), ``war`` with draft fill,
``sync``, ``overlap``, ``ddppo`` (a preempted straggler) and ``steal`` (work stealing), on
Command-v0 with virtual costs.  Columns that measure time (wall clock, or modelled time that
includes measured env and learning seconds) are left out.

``python tests/golden_training.py`` prints the digests of the current code; ``--record`` writes
them (only after an intended change of the training semantics, said so in the commit).
"""

from __future__ import annotations

import csv
import hashlib
import json
import pathlib
import sys
import tempfile

GOLDEN = pathlib.Path(__file__).parent / "golden" / "training.json"

#: metrics columns that measure time (wall clock, or modelled time including measured seconds)
TIMING = ("wall_s", "env_steps_per_s", "model_s", "collect_s", "learn_s", "batch_s", "env_s",
          "model_env_steps_per_s", "agent_transitions_per_s")
TIMING_PREFIXES = ("decisions_per_s/", "time/")

_LOCKSTEP = dict(num_envs=8, rollout_length=10, epochs=2, num_minibatches=2, checkpoint_every=0, gif=False,
                 eval_episodes=0)
_WAR = dict(scenario="Command-v0", num_envs=4, rollout_length=8, epochs=1, checkpoint_every=0, gif=False,
            eval_episodes=0, env_kwargs={"max_cycles": 13})
_ARTICLE = {"commander": {"per_decision_ms": 50.0}, "sentry": {"per_decision_ms": 5.0}}

#: case -> (TrainConfig overrides of the smoke preset, number of updates, WarConfig fields or None)
CASES = {
    "lockstep-mlp": (dict(_LOCKSTEP, scenario="Spread-v0"), 4, None),
    "lockstep-gru": (dict(_LOCKSTEP, scenario="Spread-v0", use_gru=True), 4, None),
    "lockstep-frames": (dict(_LOCKSTEP, scenario="Spread-v0", frame_stack=3, critic_input="local"), 4, None),
    "lockstep-shared": (dict(_LOCKSTEP, scenario="PredatorPrey-v0", share_actor=True), 3, None),
    "lockstep-tag": (dict(_LOCKSTEP, scenario="Tag-v0", env_kwargs={"num_taggers": 2, "num_runners": 5,
                                                                     "episode_length": 30}), 4, None),
    "lockstep-box": (dict(_LOCKSTEP, scenario="Spread-v0", env_kwargs={"continuous_actions": True}), 4, None),
    "lockstep-smax": (dict(_LOCKSTEP, scenario="SMAX-v0", env_kwargs={"map_name": "3m"}, anneal_entropy=True),
                      4, None),
    "war": (dict(_WAR), 4, dict(arm="war", costs=_ARTICLE, jitter=0.1)),
    "war-draft": (dict(_WAR), 4, dict(arm="war", costs=_ARTICLE, fill="draft")),
    "sync": (dict(_WAR), 4, dict(arm="sync", costs=_ARTICLE)),
    "overlap": (dict(_WAR), 4, dict(arm="overlap", costs=_ARTICLE)),
    "ddppo": (dict(_WAR), 4, dict(arm="ddppo", costs=_ARTICLE, workers=2, straggler=1.3, cost_scale=10.0,
                                  ddppo_sync_frac=0.5)),
    "steal": (dict(_WAR), 4, dict(arm="steal", costs=_ARTICLE, workers=2, straggler=1.5, cost_scale=10.0,
                                  env_time=False)),
}


def timing(column: str) -> bool:
    return column in TIMING or column.startswith(TIMING_PREFIXES)


def run_case(name: str, run_dir: pathlib.Path) -> pathlib.Path:
    """Train case ``name`` into ``run_dir``; returns its ``metrics.csv``."""
    import torch

    import war_train
    from war_train.war_config import WarConfig

    torch.set_num_threads(1)
    overrides, updates, war = CASES[name]
    cfg = war_train.preset_config("smoke", **overrides)
    cfg = war_train.preset_config("smoke", **overrides,
                                  total_env_steps=cfg.num_envs * cfg.rollout_length * updates)
    war_train.train(None, cfg, run_dir=run_dir, war=None if war is None else WarConfig(**war))
    return run_dir / "metrics.csv"


def row_digests(metrics_csv: pathlib.Path) -> list[str]:
    """One digest per row: the deterministic columns' names and values as written."""
    with open(metrics_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    return [hashlib.sha256(json.dumps({k: v for k, v in row.items() if not timing(k)},
                                      sort_keys=True).encode()).hexdigest()[:16] for row in rows]


def case_digests(name: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        return row_digests(run_case(name, pathlib.Path(tmp) / name))


if __name__ == "__main__":
    digests = {name: case_digests(name) for name in CASES}
    if "--record" in sys.argv[1:]:
        GOLDEN.write_text(json.dumps({"digests": digests}, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(digests)} runs -> {GOLDEN}")
    else:
        print(json.dumps(digests, indent=1))
