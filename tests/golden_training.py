"""Golden training runs: seeded ``war_train.train`` runs of every mode, kept as the SHA-256 digest
of each ``metrics.csv`` row's deterministic columns in ``tests/golden/training.json``.  A
refactor of the trainer must reproduce them bitwise (``tests/test_golden_training.py``).

The runs: lock-step MAPPO with an MLP, a GRU, frame stacking, a shared actor, Tag-v0's
MultiDiscrete heads, Box actions (continuous Spread) and SMAX-v0's action masks; the WAR arms
``war`` (jittered declared costs, fragments carried across windows), ``war`` with draft fill,
``sync``, ``overlap``, ``ddppo`` (a preempted straggler) and ``steal`` (work stealing), on
Command-v0 with virtual costs.  Columns that measure time (wall clock, or modelled time that
includes measured env and learning seconds) are left out.

Float results depend on the CPU (torch's kernels take other SIMD paths, and so other rounding,
on other instruction sets and vendors), so the recordings are kept per machine kind
(``machine_key()``: architecture, CPU vendor, torch's CPU capability, e.g.
``x86_64-AuthenticAMD-AVX512``); a machine kind without a recording of its own is compared with
the first recording (``FIRST``, made at 22e5726 on a machine whose kind was not noted).

``python tests/golden_training.py`` prints the digests of the current code; ``--record`` writes
them as this machine kind's recording (only after an intended change of the training
semantics, said so in the commit, or to add a machine kind, from a commit whose digests are
known good on another kind).
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
    from war_train.config import WarConfig

    torch.set_num_threads(1)
    overrides, updates, war = CASES[name]
    cfg = war_train.preset_config("smoke", **overrides)
    cfg = war_train.preset_config("smoke", **overrides,
                                  total_env_steps=cfg.num_envs * cfg.rollout_length * updates)
    war_train.train(None, cfg, run_dir=run_dir, war=None if war is None else WarConfig(**war))
    return run_dir / "metrics.csv"


#: deterministic diagnostic columns added after the recordings (counts of the same schedule the
#: recorded columns follow; compared by the tests of their own, left out of the digests)
LATER_DIAGNOSTICS = ("calls_per_step/",)


def row_digests(metrics_csv: pathlib.Path) -> list[str]:
    """One digest per row: the deterministic columns' names and values as written."""
    with open(metrics_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    return [hashlib.sha256(json.dumps({k: v for k, v in row.items()
                                       if not timing(k) and not k.startswith(LATER_DIAGNOSTICS)},
                                      sort_keys=True).encode()).hexdigest()[:16] for row in rows]


#: the recording of a machine kind that has none of its own
FIRST = "first-recording"


def machine_key() -> str:
    """``<architecture>-<CPU vendor>-<torch CPU capability>`` of this machine."""
    import platform

    import torch

    vendor = "unknown-vendor"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("vendor_id", "CPU implementer")):
                    vendor = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.machine()}-{vendor}-{torch.backends.cpu.get_cpu_capability()}"


def recorded_digests() -> tuple[str, dict[str, list[str]]]:
    """(the recording's machine kind, its digests) for this machine."""
    recordings = json.loads(GOLDEN.read_text())["recordings"]
    key = machine_key()
    return (key, recordings[key]) if key in recordings else (FIRST, recordings[FIRST])


def case_digests(name: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        return row_digests(run_case(name, pathlib.Path(tmp) / name))


if __name__ == "__main__":
    digests = {name: case_digests(name) for name in CASES}
    if "--record" in sys.argv[1:]:
        recordings = json.loads(GOLDEN.read_text())["recordings"] if GOLDEN.exists() else {}
        recordings[machine_key()] = digests
        GOLDEN.write_text(json.dumps({"recordings": recordings}, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(digests)} runs for {machine_key()} -> {GOLDEN}")
    else:
        print(json.dumps(digests, indent=1))
