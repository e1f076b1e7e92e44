"""Environment throughput: war-envs against mpe2, VMAS and JaxMARL, every registered multi-agent scenario.

What is measured
----------------
For each scenario (every multi-agent id in ``war_envs.registered_ids()``: the single-agent
classic-control ids are ``benchmarks/classic_throughput.py``'s; ``--scenarios`` limits the run)
and each number of parallel worlds (default 1, 64, 1024, 8192) we step the environment with
uniformly random actions and report

* env-steps/s   -- world steps per second (one step of one world), and
* agent-steps/s -- env-steps/s x agents per world,

plus the ratio of our env-steps/s to each peer's at the same size.  The peers run their
equivalent scenarios at their default sizes, which are the same as ours ("-" where a peer has no
such scenario):

==================  ==========================  =======================  ==========================
ours                mpe2 (PettingZoo parallel)  vmas (torch, CPU) [1]    jaxmarl (jax, CPU) [1]
==================  ==========================  =======================  ==========================
Simple-v0           simple_v3                   simple                   simple_v3
Adversary-v0        simple_adversary_v3, N=2    simple_adversary         simple_adversary_v3
Crypto-v0           simple_crypto_v3            simple_crypto            simple_crypto_v3
Push-v0             simple_push_v3              simple_push              simple_push_v3
Reference-v0        simple_reference_v3         simple_reference         simple_reference_v3
SpeakerListener-v0  simple_speaker_listener_v4  simple_speaker_listener  simple_speaker_listener_v4
Spread-v0           simple_spread_v3, N=3       simple_spread, 3 ag.     simple_spread_v3
PredatorPrey-v0     simple_tag_v3 (3 adv., 1)   simple_tag               simple_tag_v3
WorldComm-v0        simple_world_comm_v3        simple_world_comm        simple_world_comm_v3 [2]
Formation-v0        simple_formation_v1, N=4    -                        -
Line-v0             simple_line_v1, N=4         -                        -
CollectTreasure-v0  collect_treasure_v1         -                        -
Command-v0          -                           -                        -
Tag-v0              -                           -                        -
Relay-v0            -                           -                        -
TagGridWorld-v0     -                           -                        -
SMAX-v0:<map> [3]   -                           -                        HeuristicEnemySMAX [3]
SwitchRiddle-v0     -                           -                        switch_riddle [4]
CoinGame-v0         -                           -                        coin_game [4]
Overcooked-v0       -                           -                        overcooked [4]
Hanabi-v0           -                           -                        hanabi [4]
FacmacPredatorPrey  -                           -                        MPE_simple_facmac_v1 [5]
==================  ==========================  =======================  ==========================

[1] the names passed to ``vmas.make_env`` and, prefixed with ``MPE_``, to ``jaxmarl.make``.
[2] with ``action_type="Discrete"``: JaxMARL's world_comm defaults to continuous actions.
[3] one row per map of ``MAPS`` (3m, 2s3z, 5m_vs_6m, smacv2_5_units, 27m_vs_30m): ours
    ``war_envs.make("SMAX-v0", map_name=map)``, JaxMARL's
    ``jaxmarl.make("HeuristicEnemySMAX", scenario=map_name_to_scenario(map))``, both at their
    defaults (heuristic enemy, discrete actions, ``max_steps=100``, episodes that end when a team
    is dead).  ``--scenarios SMAX-v0`` selects every map, ``--scenarios SMAX-v0:3m`` one; they are
    measured at 1, 64, 512 and 4096 worlds (1 and 512 with ``--quick``) unless ``--worlds`` says.
[4] ``jaxmarl.make("switch_riddle")`` / ``"coin_game"`` / ``"overcooked"`` / ``"hanabi"`` at their
    defaults (3 agents, episodes end on a tell or after 6 steps; 100-step meta-episodes of ten
    10-step games; cramped_room, 400 steps; 2 players, at most 96 moves, random moves among the
    legal ones as for SMAX), as ours; measured at 1, 64, 512 and 4096 worlds like SMAX.
[5] one row per FACMAC id: ``FacmacPredatorPrey-v0`` and its ``3a`` / ``6a`` / ``9a`` presets, each
    JaxMARL's ``MPE_simple_facmac[_3a|_6a|_9a]_v1`` (continuous actions on both sides).

A registered id missing from this table (a scenario added later) is measured for war-envs
alone; an id in the table that is not registered (yet) is skipped with a message.

Every framework uses its own discrete action spaces (per agent, drawn uniformly: e.g. our
SpeakerListener speaker Discrete(3) / listener Discrete(5), Reference Discrete(50), Tag-v0
MultiDiscrete([11, 11]); VMAS' discrete 2-D movement has 9 actions, not 5, and its
communicating agents get one Discrete over movement x message), 25-step episodes (the
peerless Tag-v0 and Relay-v0 their default 100 and 50, SMAX at most 101: ``EPISODE_LIMITS``) and
automatic reset, and draws its random actions inside the timed loop:

* war-envs: ``torch.randint`` (one reused ``torch.Generator``).  Where every agent has the
  same ``Discrete(n)`` (``env.joint_action_space``), one draw of all agents' actions into a
  buffer made once, stepped as one ``[worlds, agents]`` tensor; otherwise one draw for all the
  groups with the same ``Discrete(n)``, split into per-group views, one draw per MultiDiscrete
  component, stepped as ``{group: tensor}``.  Both through the batch API's trusted path
  ``env.step(actions, trusted=True)`` (the actions are drawn from the spaces: no value scan —
  files under ``benchmarks/results/`` dated before 2026-12-01 16:00 measured the validated
  ``env.step(actions)`` with one draw per group, those before 2026-12-01 18:00 the
  ``{group: tensor}`` form everywhere); auto-reset is built into ``env.step``.
* war-envs-validated: the loop a user writes first, through the default (validated) step:
  every step, each group's actions drawn with ``torch.randint`` (int64, a new tensor per
  group; a MultiDiscrete group one draw per component, stacked) and stepped as
  ``env.step({group: tensor})``, so keys, type, device, shape, dtype and every value are
  checked; ``val/trusted`` and ``val/<peer>`` compare it with the trusted path and the peers;
  ``--no-validated`` leaves it out.
* war-envs-pettingzoo: our PettingZoo ``ParallelEnv`` (``war_envs.parallel_env``) driven exactly
  like mpe2 below (one env object per world, ``np.random`` actions, ``env.reset()`` when the
  episode ends), so the "PZ/mpe2" column compares the two ``ParallelEnv`` s; ``--no-pettingzoo``
  leaves it out.
* mpe2: one env object per world stepped in a Python loop (so only at small sizes, larger sizes
  are reported as "n/r"), actions from ``np.random``, ``env.reset()`` when the episode ends.
* vmas: ``torch.randint`` over each agent's own action space, ``env.reset()`` when all worlds
  are done (they are in lock-step: 25-step episodes, no early termination) and
  ``env.reset_at(i)`` otherwise.
* jaxmarl: ``jax.jit`` + ``jax.vmap`` over worlds + ``jax.lax.scan`` over a chunk of steps,
  actions from ``jax.random``; ``env.step`` auto-resets.  The observations and rewards are
  folded into a checksum carried through the scan so XLA cannot dead-code-eliminate them (every
  other framework materialises them too).  Compile time is excluded.

Where some actions are unavailable at times (the scenarios of ``ACTION_MASKED``: SMAX, Hanabi), every
framework draws uniformly among the available ones, the same way: the argmax of uniform noise
plus the availability mask (available actions score in [1, 2), the others in [0, 1)).  Ours
reads the mask from each step's ``info["action_mask"]`` (``env.action_mask()`` before the first
step) and draws it with ``torch.rand`` into buffers made once (the validated loop: new tensors
every step); JaxMARL computes ``env.get_avail_actions(state)`` (Hanabi: ``get_legal_moves``) inside the scanned step and draws
with ``jax.random.uniform``; our PettingZoo ``ParallelEnv`` each live agent's action from its
``infos[agent]["action_mask"]`` (numpy).  SMAX's episodes last at most 101 steps
(``max_steps=100``), fewer when a team is dead, auto-reset in every framework.

Timing protocol: each measurement first runs two warm-up calls (JIT / kernel compilation,
caches, first resets), then one calibration call that sizes the measurement to about
``--target-s`` seconds (1.5 s; 0.25 s with ``--quick``), then three timed repeats with
``time.perf_counter``; the median is reported.  ``--rounds N`` repeats the whole measurement N
times, every (framework, scenario) once per round with the frameworks in turn (so a change in
background load falls on all of them alike), and reports the median round (the lower middle
one for an even N) with every round's env-steps/s in ``round_env_steps_per_s``.  One "call" is
25 steps for the Python-loop frameworks and one scanned chunk of 25..1000 steps for jaxmarl
(SMAX: fewer at large sizes, ``steps_per_call``).  ``--quick`` measures 1 and 1024 worlds only
(SMAX 1 and 512; mpe2 at 1 world) for 0.25 s per repeat.

Isolation and pinning
---------------------
Each (framework, scenario) is measured in its own subprocess (so torch / XLA / OpenMP thread
pools cannot interfere, and a crash or hang costs one scenario only), which measures every world
count in turn and prints exactly one JSON line with its results on stdout (anything the
libraries print goes to stderr).  By default (``--pin``) each subprocess restricts itself with
``os.sched_setaffinity`` to a single core (the last one this process may use) and sets every
thread pool to one thread (``OMP/MKL/OPENBLAS_NUM_THREADS=1``, ``torch.set_num_threads(1)``,
``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false``).  This is the protocol under which the
reference figures were measured (8192 worlds, agent-steps/s: VMAS about 2.7 M, JaxMARL about
1.16 M; mpe2 about 11 k).  ``--cores N`` instead gives every framework the first N cores and N
threads; ``--no-pin`` leaves affinity and thread counts alone.

Peers in their own virtual environments
---------------------------------------
vmas and jaxmarl are never installed into the project's environment.  If missing, they are
installed (``python -m venv`` + ``pip``) into ``<venv-dir>/<peer>``, where ``<venv-dir>`` is
``--venv-dir``, else ``$WAR_ENVS_BENCH_VENVS``, else ``~/.cache/war-envs/bench-venvs``; the pip
log is kept next to it as ``<peer>-install.log`` (about a minute each).  A peer is installed
only when one of the selected scenarios has an equivalent there.  The vmas venv gets
``torch==2.13.0`` (the CPU build, same as the project's) before ``vmas`` so pip does not pull a
multi-GB CUDA torch.  Versions are pinned to the ones this benchmark was validated with (see
``PEER_REQUIREMENTS``).  JaxMARL's compiled programs are kept in
``<venv-dir>/jaxmarl-xla-cache`` (JAX's persistent compilation cache), which only shortens the
warm-up of re-runs.  mpe2 is a test dependency of the project and runs under the current
interpreter.  With ``--no-install`` a missing peer is skipped; a failed install turns that
peer's cells into an error note and the rest still runs.

Output
------
One table, a row per (scenario, worlds): agents per world, each framework's agent-steps/s, our
(trusted) env-steps/s over each peer's, the validated step's over the trusted one's and each
peer's ("-": the peer has no such scenario; "n/r": not run, mpe2 above its size limit;
"err[n]": see note n below the table).  ``--json PATH`` writes one record per (scenario,
worlds, framework) -- rates, per-repeat and per-round figures, the worker's CPU seconds per
repeat and ``env_steps_per_cpu_s`` (env-steps per CPU second of the worker process, every thread:
a figure that other processes on the core stretch far less than the wall-clock one), the
ratios (``ours_over_peer``,
``validated_over_peer``, ``validated_over_trusted``, ``pettingzoo_over_mpe2``), the peer's env
name, errors / notes -- each with ``command``, ``date``, ``machine`` (CPU model, cores) and ``versions``
(python and the framework's packages), written by ``benchmarks/_results.py`` as every
benchmark's results file in ``benchmarks/results/`` is.

Usage
-----
    python benchmarks/env_throughput.py                      # full run, every scenario (~35-40 min)
    python benchmarks/env_throughput.py --quick              # 1 and 1024 worlds (~10 min)
    python benchmarks/env_throughput.py --scenarios SMAX-v0 --peers jaxmarl --rounds 3   # SMAX (~30 min)
    python benchmarks/env_throughput.py --scenarios Spread-v0,PredatorPrey-v0   # the original table
    python benchmarks/env_throughput.py --peers vmas --worlds 8192 --json out.json
    taskset -c 1 python benchmarks/env_throughput.py --scenarios Spread-v0,PredatorPrey-v0 \
        --worlds 1,64 --peers jaxmarl --rounds 5 --json out.json   # small batches, 5 rounds
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

EPISODE_LEN = 25
REPEATS = 3
WARMUP_CALLS = 2

OURS = "war-envs"
OURS_PZ = "war-envs-pettingzoo"  # our PettingZoo ParallelEnv, one env object per world
OURS_VALIDATED = "war-envs-validated"  # the batch API's validated step, {group: tensor}
OUR_FRAMEWORKS = (OURS, OURS_PZ, OURS_VALIDATED)
PEERS = ("mpe2", "vmas", "jaxmarl")
# Every scenario this benchmark knows (the table of the docstring), in table order.  The
# tests check that it covers ``war_envs.registered_ids()``.
SCENARIOS = (
    "Simple-v0",
    "Adversary-v0",
    "Crypto-v0",
    "Push-v0",
    "Reference-v0",
    "SpeakerListener-v0",
    "Spread-v0",
    "PredatorPrey-v0",
    "WorldComm-v0",
    "Formation-v0",
    "Line-v0",
    "CollectTreasure-v0",
    "Command-v0",  # no peer equivalent
    "Tag-v0",  # no peer equivalent (benchmarks/tag_scale.py compares it with simple_tag)
    "Relay-v0",  # no peer equivalent (the WAR task where the commander matters)
    "TagGridWorld-v0",  # no peer equivalent (WarpDrive's tag_gridworld: WarpDrive needs CUDA)
    "SwitchRiddle-v0",
    "CoinGame-v0",
    "Overcooked-v0",
    "Hanabi-v0",
    "FacmacPredatorPrey-v0",
    "FacmacPredatorPrey3a-v0",
    "FacmacPredatorPrey6a-v0",
    "FacmacPredatorPrey9a-v0",
)
# Registered ids measured on several maps: one row per map, labelled "<id>:<map>" and made as
# ``war_envs.make(id, map_name=map)``.  ``--scenarios <id>`` selects every map of the id.
MAPS = {"SMAX-v0": ("3m", "2s3z", "5m_vs_6m", "smacv2_5_units", "27m_vs_30m")}
SCENARIOS += tuple(f"{env_id}:{m}" for env_id, maps in MAPS.items() for m in maps)
DEFAULT_WORLDS = (1, 64, 1024, 8192)
QUICK_WORLDS = (1, 1024)
# Registered ids measured at other sizes than DEFAULT_WORLDS / QUICK_WORLDS: (default, --quick).
WORLDS = {env_id: ((1, 64, 512, 4096), (1, 512)) for env_id in ("SMAX-v0", "SwitchRiddle-v0", "CoinGame-v0",
                                                                   "Overcooked-v0", "Hanabi-v0", "FacmacPredatorPrey-v0",
                                                                   "FacmacPredatorPrey3a-v0", "FacmacPredatorPrey6a-v0",
                                                                   "FacmacPredatorPrey9a-v0")}
# Registered ids whose episodes are not EPISODE_LEN steps (measured at their defaults): their
# longest episode (SMAX: both sides' default max_steps=100 gives episodes of at most 101 steps,
# as JaxMARL counts them; one ends sooner when a team is dead).
EPISODE_LIMITS = {"Tag-v0": 100, "Relay-v0": 50, "SMAX-v0": 101, "TagGridWorld-v0": 100, "SwitchRiddle-v0": 6,
                  "CoinGame-v0": 100, "Overcooked-v0": 400,
                  "Hanabi-v0": 96,
                  # JaxMARL's MPE counts max_steps=25 as 26 steps (its done reads the step before counting)
                  **{f"FacmacPredatorPrey{v}-v0": 26 for v in ("", "3a", "6a", "9a")}}
# Registered ids whose actions are unavailable at times (``env.has_action_mask``): every
# framework draws its random actions among the available ones.
ACTION_MASKED = ("SMAX-v0", "Hanabi-v0")


def split_scenario(scenario: str) -> tuple[str, dict]:
    """A row's label -> (registered id, constructor arguments): ``"SMAX-v0:3m"`` ->
    ``("SMAX-v0", {"map_name": "3m"})``, ``"Spread-v0"`` -> ``("Spread-v0", {})``."""
    env_id, sep, map_name = scenario.partition(":")
    return env_id, ({"map_name": map_name} if sep else {})


def default_worlds(scenario: str, quick: bool) -> tuple[int, ...]:
    """The world counts a scenario is measured at when ``--worlds`` is not given."""
    default, short = WORLDS.get(split_scenario(scenario)[0], (DEFAULT_WORLDS, QUICK_WORLDS))
    return short if quick else default

# Scenario -> each peer's equivalent environment (a scenario missing here: "-" for that peer).
# Keyword arguments only where the peer's default differs or to make the size explicit.
MPE2_ENVS = {
    "Simple-v0": ("simple_v3", {}),
    "Adversary-v0": ("simple_adversary_v3", {"N": 2}),  # 2 good agents, 1 adversary
    "Crypto-v0": ("simple_crypto_v3", {}),
    "Push-v0": ("simple_push_v3", {}),
    "Reference-v0": ("simple_reference_v3", {}),
    "SpeakerListener-v0": ("simple_speaker_listener_v4", {}),
    "Spread-v0": ("simple_spread_v3", {"N": 3}),
    "PredatorPrey-v0": ("simple_tag_v3", {}),  # 1 good agent, 3 adversaries, 2 obstacles
    "WorldComm-v0": ("simple_world_comm_v3", {}),  # 2 good, 4 adversaries (1 leader)
    "Formation-v0": ("simple_formation_v1", {"N": 4}),
    "Line-v0": ("simple_line_v1", {"N": 4}),
    "CollectTreasure-v0": ("collect_treasure_v1", {}),  # 6 collectors, 2 deposits
}
VMAS_ENVS = {
    "Simple-v0": ("simple", {}),
    "Adversary-v0": ("simple_adversary", {}),  # 3 agents: 1 adversary, 2 good
    "Crypto-v0": ("simple_crypto", {}),
    "Push-v0": ("simple_push", {}),
    "Reference-v0": ("simple_reference", {}),
    "SpeakerListener-v0": ("simple_speaker_listener", {}),
    "Spread-v0": ("simple_spread", {"n_agents": 3}),
    "PredatorPrey-v0": ("simple_tag", {}),  # 1 good agent, 3 adversaries, 2 obstacles
    "WorldComm-v0": ("simple_world_comm", {}),
}
JAXMARL_ENVS = {
    "Simple-v0": ("MPE_simple_v3", {}),
    "Adversary-v0": ("MPE_simple_adversary_v3", {}),
    "Crypto-v0": ("MPE_simple_crypto_v3", {}),
    "Push-v0": ("MPE_simple_push_v3", {}),
    "Reference-v0": ("MPE_simple_reference_v3", {}),
    "SpeakerListener-v0": ("MPE_simple_speaker_listener_v4", {}),
    "Spread-v0": ("MPE_simple_spread_v3", {}),
    "PredatorPrey-v0": ("MPE_simple_tag_v3", {}),
    # JaxMARL's world_comm defaults to continuous actions; its discrete decoder exists.
    "WorldComm-v0": ("MPE_simple_world_comm_v3", {"action_type": "Discrete"}),
    # SMAX: the worker passes scenario=jaxmarl.environments.smax.map_name_to_scenario(map)
    **{f"SMAX-v0:{m}": ("HeuristicEnemySMAX", {"scenario": m}) for m in MAPS["SMAX-v0"]},
    "SwitchRiddle-v0": ("switch_riddle", {}),
    "CoinGame-v0": ("coin_game", {}),
    "Overcooked-v0": ("overcooked", {}),   # JaxMARL's default layout: cramped_room, as ours
    "Hanabi-v0": ("hanabi", {}),
    **{f"FacmacPredatorPrey{v}-v0": (f"MPE_simple_facmac{'_' + v if v else ''}_v1", {}) for v in ("", "3a", "6a", "9a")},
}
PEER_ENVS = {"mpe2": MPE2_ENVS, "vmas": VMAS_ENVS, "jaxmarl": JAXMARL_ENVS}


def peer_env_name(framework: str, scenario: str) -> str | None:
    """The peer's environment for ``scenario`` as text (None: the peer has none)."""
    if framework in OUR_FRAMEWORKS:
        return scenario
    entry = PEER_ENVS[framework].get(scenario)
    if entry is None:
        return None
    name, kwargs = entry
    return name + "".join(f", {k}={v!r}" for k, v in kwargs.items())


# Peer venvs: pip install steps, run in order.  torch first for vmas: an
# unpinned torch would resolve to a multi-GB CUDA build.
PEER_REQUIREMENTS = {
    "vmas": [["torch==2.13.0"], ["vmas==1.5.2"]],
    "jaxmarl": [["jax==0.10.2", "jaxlib==0.10.2", "jaxmarl==0.2.0"]],
}
PEER_IMPORT_CHECK = {"vmas": "import torch, vmas", "jaxmarl": "import jax, jaxmarl"}
INSTALL_MARKER = ".war-envs-bench-ok"

# mpe2 is one Python env object per world; beyond this it is reported as "n/r" (not run).
MPE2_MAX_WORLDS = 64
MPE2_MAX_WORLDS_QUICK = 1


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Worker side: runs inside the per-framework subprocess.  Only the standard
# library is imported at module level so the same file runs in the peer venvs.
# ---------------------------------------------------------------------------


def _limit_threads(threads: int) -> None:
    """Size the native thread pools; must run before torch / jax are imported."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    if threads == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_cpu_multi_thread_eigen" not in flags:
            os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()


def _measure(run, steps_per_call: int, worlds: int, target_s: float) -> dict:
    """Warm up, size the measurement to ~target_s, time REPEATS runs.

    ``run(calls)`` must advance every one of the ``worlds`` worlds by
    ``calls * steps_per_call`` steps and return only once the work is finished.
    """
    t0 = time.perf_counter()
    for _ in range(WARMUP_CALLS):
        run(1)
    warmup_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    run(1)
    calls = max(1, round(target_s / (time.perf_counter() - t0)))

    times, cpu_times = [], []
    for _ in range(REPEATS):
        t0, c0 = time.perf_counter(), time.process_time()
        run(calls)
        times.append(time.perf_counter() - t0)
        cpu_times.append(time.process_time() - c0)
    steps = calls * steps_per_call * worlds  # env-steps (world steps)
    return {
        "env_steps_per_repeat": steps,
        "seconds_per_repeat": [round(t, 4) for t in times],
        "repeat_env_steps_per_s": [steps / t for t in times],
        "env_steps_per_s": steps / statistics.median(times),
        # the worker process's CPU time (every thread): what the figures cost when other
        # processes share the core (wall-clock seconds stretch, CPU seconds much less)
        "cpu_seconds_per_repeat": [round(t, 4) for t in cpu_times],
        "env_steps_per_cpu_s": steps / statistics.median(cpu_times) if min(cpu_times) > 0 else None,
        "warmup_s": round(warmup_s, 3),
    }


def _make_ours(scenario: str, worlds: int):
    import war_envs

    env_id, kwargs = split_scenario(scenario)
    env = war_envs.make(env_id, num_envs=worlds, device="cpu", seed=0, **kwargs)
    env.reset()
    return env


def _bench_ours(scenario: str, worlds: int):
    import torch

    env = _make_ours(scenario, worlds)
    gen = torch.Generator().manual_seed(0)
    if env.has_action_mask:
        steps = steps_per_call(scenario, worlds, env.num_agents, scanned=False)
        return env.num_agents, _masked_runner(env, gen, steps, validated=False), steps
    joint = env.joint_action_space
    if joint is not None and hasattr(joint, "n"):
        # Every agent has the same Discrete(n): all agents' actions are one [worlds, agents]
        # draw into a buffer made once, stepped as one tensor (env.step's joint form).
        buffer = torch.empty((worlds, env.num_agents), dtype=torch.int32)
        n_joint = int(joint.n)

        def run_joint(calls):
            for _ in range(calls * EPISODE_LEN):
                torch.randint(0, n_joint, buffer.shape, dtype=torch.int32, generator=gen, out=buffer)
                env.step(buffer, trusted=True)

        return env.num_agents, run_joint, EPISODE_LEN
    # Each group's own action space: Discrete(n) -> int32 [worlds, agents], one draw for all the
    # groups of the same n (split into per-group views); MultiDiscrete(nvec) -> int32
    # [worlds, agents, len(nvec)], one draw per component.  The actions come from the spaces,
    # so the benchmark is a trusted caller: env.step(actions, trusted=True) (no value scan).
    # Box(low, high) -> float32 [worlds, agents, dim] uniform in the bounds (FACMAC's).
    discrete, multi, boxes = {}, [], []
    for g, spec in env.groups.items():
        space = spec.action_space
        if hasattr(space, "nvec"):
            multi.append((g, spec.n_agents, [int(n) for n in space.nvec]))
        elif hasattr(space, "n"):
            discrete.setdefault(int(space.n), []).append((g, spec.n_agents))
        elif hasattr(space, "low"):
            boxes.append((g, (worlds, spec.n_agents, *space.shape), *box_bounds(space)))
        else:
            raise TypeError(f"group {g!r}: unsupported action space {space}")
    splits = []
    for n_act, groups in discrete.items():
        bounds, start = [], 0
        for g, k in groups:
            bounds.append((g, slice(start, start + k)))
            start += k
        splits.append((n_act, bounds, start))

    def run(calls):
        for _ in range(calls * EPISODE_LEN):
            actions = {}
            for n_act, bounds, total in splits:
                draw = torch.randint(0, n_act, (worlds, total), dtype=torch.int32, generator=gen)
                for g, cols in bounds:
                    actions[g] = draw[:, cols]
            for g, n, nvec in multi:
                actions[g] = torch.cat(
                    [
                        torch.randint(0, k, (worlds, n, 1), dtype=torch.int32, generator=gen)
                        for k in nvec
                    ],
                    dim=2,
                )
            for g, shape, low, span in boxes:
                actions[g] = low + span * torch.rand(shape, generator=gen)
            env.step(actions, trusted=True)

    return env.num_agents, run, EPISODE_LEN


def box_bounds(space):
    """A Box action space's (low, high - low) as float32 tensors (uniform draws in its bounds)."""
    import torch

    low = torch.as_tensor(space.low, dtype=torch.float32)
    return low, torch.as_tensor(space.high, dtype=torch.float32) - low


def masked_draw(mask, gen, noise=None, out=None):
    """Uniform random available actions (torch): the argmax over the last axis of ``torch.rand``
    noise plus ``mask`` (bool ``[..., n]``: available actions score in [1, 2), the others in
    [0, 1)).  ``noise`` (float32, ``mask``'s shape) and ``out`` (int64, without the last axis):
    buffers to reuse; without them, new tensors."""
    import torch

    noise = torch.rand(mask.shape, generator=gen, out=noise)
    return torch.argmax(noise.add_(mask), dim=-1, out=out)


def _masked_runner(env, gen, steps: int, validated: bool):
    """``run(calls)`` drawing each Discrete group's actions among the available ones
    (``masked_draw`` from the step's ``info["action_mask"]``).  Trusted: into buffers made once,
    stepped with ``trusted=True``; ``validated``: new tensors every step, the validated step."""
    import torch

    masks = [env.action_mask()]  # the mask of the observations just handed out
    noise = {g: torch.empty(m.shape) for g, m in masks[0].items()}
    actions = {g: torch.empty(m.shape[:2], dtype=torch.int64) for g, m in masks[0].items()}

    def run(calls):
        mask = masks[0]
        for _ in range(calls * steps):
            if validated:
                mask = env.step({g: masked_draw(m, gen) for g, m in mask.items()})[4]["action_mask"]
            else:
                for g, m in mask.items():
                    masked_draw(m, gen, noise[g], actions[g])
                mask = env.step(actions, trusted=True)[4]["action_mask"]
        masks[0] = mask

    return run


def _bench_ours_validated(scenario: str, worlds: int):
    """The loop a user writes first: each group's actions drawn every step with
    ``torch.randint`` (int64, the default; one draw per group, one per MultiDiscrete component)
    and stepped as ``env.step({group: tensor})``, validated (``trusted=False``, the default).
    With an action mask, the available actions' draw of ``_masked_runner``, new tensors."""
    import torch

    env = _make_ours(scenario, worlds)
    gen = torch.Generator().manual_seed(0)
    if env.has_action_mask:
        steps = steps_per_call(scenario, worlds, env.num_agents, scanned=False)
        return env.num_agents, _masked_runner(env, gen, steps, validated=True), steps
    draws = []
    for g, spec in env.groups.items():
        space = spec.action_space
        if hasattr(space, "nvec"):
            draws.append((g, None, [int(n) for n in space.nvec], (worlds, spec.n_agents)))
        elif hasattr(space, "n"):
            draws.append((g, int(space.n), None, (worlds, spec.n_agents)))
        elif hasattr(space, "low"):
            draws.append((g, None, box_bounds(space), (worlds, spec.n_agents, *space.shape)))
        else:
            raise TypeError(f"group {g!r}: unsupported action space {space}")

    def run(calls):
        for _ in range(calls * EPISODE_LEN):
            actions = {}
            for g, n, nvec, shape in draws:
                if n is not None:
                    actions[g] = torch.randint(0, n, shape, generator=gen)
                elif isinstance(nvec, tuple):  # a Box: (low, span)
                    actions[g] = nvec[0] + nvec[1] * torch.rand(shape, generator=gen)
                else:
                    actions[g] = torch.stack([torch.randint(0, k, shape, generator=gen) for k in nvec], dim=-1)
            env.step(actions)

    return env.num_agents, run, EPISODE_LEN


def _bench_mpe2(scenario: str, worlds: int):
    import importlib

    import numpy as np

    module_name, kwargs = MPE2_ENVS[scenario]
    module = importlib.import_module(f"mpe2.{module_name}")
    envs = []
    for i in range(worlds):
        env = module.parallel_env(max_cycles=EPISODE_LEN, continuous_actions=False, **kwargs)
        env.reset(seed=i)
        envs.append(env)
    agents = list(envs[0].possible_agents)
    n_actions = np.array([envs[0].action_space(a).n for a in agents])
    rng = np.random.default_rng(0)

    def run(calls):
        for _ in range(calls * EPISODE_LEN):
            for env in envs:
                actions = dict(zip(env.agents, rng.integers(0, n_actions).tolist()))
                env.step(actions)
                if not env.agents:  # episode over (truncated at max_cycles)
                    env.reset()

    return len(agents), run, EPISODE_LEN


def _bench_ours_pettingzoo(scenario: str, worlds: int):
    import numpy as np
    import war_envs

    env_id, kwargs = split_scenario(scenario)
    envs, infos = [], []
    for i in range(worlds):
        env = war_envs.parallel_env(env_id, seed=i, **kwargs)
        infos.append(env.reset()[1])
        envs.append(env)
    agents = list(envs[0].possible_agents)
    rng = np.random.default_rng(0)
    if env_id in ACTION_MASKED:
        # each live agent's action among the available ones (its infos[agent]["action_mask"]), the
        # draw of _masked_runner: the argmax of uniform noise plus the mask
        def run_masked(calls):
            for _ in range(calls * EPISODE_LEN):
                for i, env in enumerate(envs):
                    info = infos[i]
                    actions = {}
                    for a in env.agents:
                        mask = info[a]["action_mask"]
                        actions[a] = int(np.argmax(rng.random(mask.shape[0]) + mask))
                    infos[i] = env.step(actions)[4]
                    if not env.agents:  # episode over
                        infos[i] = env.reset()[1]

        return len(agents), run_masked, EPISODE_LEN
    # Discrete(n) -> an int; MultiDiscrete(nvec) -> an int64 array, one draw per component
    spaces = [envs[0].action_space(a) for a in agents]
    bounds = [np.asarray(sp.nvec) if hasattr(sp, "nvec") else int(sp.n) for sp in spaces]
    discrete = all(isinstance(b, int) for b in bounds)
    n_actions = np.array(bounds) if discrete else None

    def run(calls):
        for _ in range(calls * EPISODE_LEN):
            for env in envs:
                if discrete:
                    actions = dict(zip(env.agents, rng.integers(0, n_actions).tolist()))
                else:
                    actions = {a: rng.integers(0, b) for a, b in zip(agents, bounds) if a in env.agents}
                env.step(actions)
                if not env.agents:  # episode over
                    env.reset()

    return len(agents), run, EPISODE_LEN


def _bench_vmas(scenario: str, worlds: int):
    import torch
    import vmas

    name, kwargs = VMAS_ENVS[scenario]
    env = vmas.make_env(
        name,
        num_envs=worlds,
        device="cpu",
        continuous_actions=False,
        max_steps=EPISODE_LEN,
        seed=0,
        **kwargs,
    )
    env.reset()
    # Each agent's own space: Discrete(n) -> [worlds]; MultiDiscrete(nvec) -> [worlds, len(nvec)].
    spaces = []
    for space in env.action_space:
        if hasattr(space, "nvec"):
            spaces.append([int(n) for n in space.nvec])
        elif hasattr(space, "n"):
            spaces.append(int(space.n))
        else:
            raise TypeError(f"unsupported VMAS action space {space}")
    gen = torch.Generator().manual_seed(0)

    def draw(space):
        if isinstance(space, int):
            return torch.randint(0, space, (worlds,), generator=gen)
        return torch.stack([torch.randint(0, n, (worlds,), generator=gen) for n in space], dim=1)

    def run(calls):
        for _ in range(calls * EPISODE_LEN):
            actions = [draw(space) for space in spaces]
            _, _, dones, _ = env.step(actions)
            if dones.any():  # VMAS has no built-in auto-reset
                if dones.all():
                    env.reset()
                else:
                    for i in dones.nonzero().flatten().tolist():
                        env.reset_at(i)

    return env.n_agents, run, EPISODE_LEN


def _bench_jaxmarl(scenario: str, worlds: int):
    import jaxmarl

    name, kwargs = JAXMARL_ENVS[scenario]
    masked = split_scenario(scenario)[0] in ACTION_MASKED
    if split_scenario(scenario)[0] == "SMAX-v0":  # the map's Scenario, every other argument at its default (as ours)
        from jaxmarl.environments.smax import map_name_to_scenario

        env = jaxmarl.make(name, **dict(kwargs, scenario=map_name_to_scenario(kwargs["scenario"])))
    elif split_scenario(scenario)[0] in EPISODE_LIMITS:  # at its defaults, as ours
        env = jaxmarl.make(name, **kwargs)
    else:
        env = jaxmarl.make(name, max_steps=EPISODE_LEN, **kwargs)
    chunk_steps = steps_per_call(scenario, worlds, env.num_agents, scanned=True)
    return env.num_agents, jaxmarl_runner(env, worlds, chunk_steps, masked=masked), chunk_steps


def steps_per_call(scenario: str, worlds: int, agents: int, scanned: bool) -> int:
    """The steps of one measured call (``_measure``): JaxMARL's steps per jitted chunk
    (``scanned``) or a Python loop's.  A chunk is long enough that dispatch overhead is negligible
    at small sizes, short enough that calibration stays fine-grained: MPE 1000 steps at 1 world
    down to 25 from 1024 worlds on, a loop one 25-step episode.  SMAX, whose steps cost far more
    (eight world steps each, pairwise unit interactions), about 76 800 agent-steps per call
    (3m: 1000 steps at 1 world, 400 at 64, 50 at 512, 6 at 4096; 27m_vs_30m 44 at 64, 5 at 512,
    1 at 4096), and a loop at most 25 of them."""
    if split_scenario(scenario)[0] in ACTION_MASKED:
        chunk = max(1, min(1000, 76_800 // (worlds * agents)))
        return chunk if scanned else min(EPISODE_LEN, chunk)
    return EPISODE_LEN * max(1, min(40, 1024 // worlds)) if scanned else EPISODE_LEN


def jaxmarl_masked_draw(key, avail):
    """Uniform random available actions: the argmax of uniform noise plus the availability mask
    (``avail``: [..., n_actions], 1 = available; available actions score in [1, 2), the others
    in [0, 1)), as the war-envs side draws them."""
    import jax
    import jax.numpy as jnp

    return jnp.argmax(jax.random.uniform(key, avail.shape) + avail, axis=-1)


def jaxmarl_runner(env, worlds: int, chunk_steps: int, masked: bool = False):
    """``run(calls)`` for a JaxMARL env: ``calls`` jitted chunks of ``chunk_steps`` vmapped steps
    (``lax.scan``), random actions from ``jax.random`` (``masked``: among the available ones,
    ``env.get_avail_actions(state)``, Hanabi's ``get_legal_moves``, in the scanned step), the outputs consumed into a checksum
    so XLA cannot drop them (also used by tag_scale.py)."""
    import jax
    import jax.numpy as jnp

    agents = list(env.agents)
    spaces = [env.action_space(a) for a in agents]
    step = jax.vmap(env.step)
    # (Hanabi's masks are its get_legal_moves; SMAX's its get_avail_actions)
    avail_actions = jax.vmap(getattr(env, "get_legal_moves", env.get_avail_actions)) if masked else None

    def draw(k, space):
        if hasattr(space, "n"):  # Discrete
            return jax.random.randint(k, (worlds,), 0, int(space.n))
        return jax.vmap(space.sample)(jax.random.split(k, worlds))  # any other space

    def one_step(carry, _):
        key, state, checksum = carry
        key, k_act, k_step = jax.random.split(key, 3)
        act_keys = jax.random.split(k_act, len(agents))
        if masked:
            avail = avail_actions(state)  # {agent: [worlds, n_actions]}
            actions = {a: jaxmarl_masked_draw(k, avail[a]) for a, k in zip(agents, act_keys)}
        else:
            actions = {a: draw(k, space) for a, k, space in zip(agents, act_keys, spaces)}
        obs, state, rew, _, _ = step(jax.random.split(k_step, worlds), state, actions)
        for a in agents:
            checksum = checksum + jnp.sum(obs[a]) + jnp.sum(rew[a])
        return (key, state, checksum), None

    @jax.jit
    def run_chunk(carry):
        carry, _ = jax.lax.scan(one_step, carry, None, length=chunk_steps)
        return carry

    key, k_reset = jax.random.split(jax.random.PRNGKey(0))
    _, state = jax.vmap(env.reset)(jax.random.split(k_reset, worlds))
    carry = [(key, state, jnp.zeros((), jnp.float32))]

    def run(calls):
        c = carry[0]
        for _ in range(calls):
            c = run_chunk(c)
        jax.block_until_ready(c)
        carry[0] = c

    return run


BENCHES = {OURS: _bench_ours, OURS_PZ: _bench_ours_pettingzoo, OURS_VALIDATED: _bench_ours_validated,
           "mpe2": _bench_mpe2, "vmas": _bench_vmas, "jaxmarl": _bench_jaxmarl}


# Each framework's packages: the one-line ``version`` string names these ...
FRAMEWORK_DISTS = {
    OURS: ["war-envs", "warp-lang", "torch"],
    OURS_PZ: ["war-envs", "warp-lang", "torch", "pettingzoo"],
    OURS_VALIDATED: ["war-envs", "warp-lang", "torch"],
    "mpe2": ["mpe2", "pettingzoo"],
    "vmas": ["vmas", "torch"],
    "jaxmarl": ["jaxmarl", "jax"],
}
# ... and the ``versions`` dict of the JSON records these as well.
EXTRA_DISTS = {OURS: [], OURS_PZ: [], OURS_VALIDATED: [], "mpe2": ["numpy"], "vmas": [], "jaxmarl": ["jaxlib"]}


def _framework_versions(framework: str) -> dict:
    """``{"python": ..., dist: version}`` for the framework's packages (``?``: not found)."""
    return _results.versions(FRAMEWORK_DISTS[framework] + EXTRA_DISTS[framework])


def _framework_version(framework: str) -> str:
    """The framework's package versions as one line, e.g. ``vmas 1.5.2, torch 2.13.0``."""
    versions = _framework_versions(framework)
    return ", ".join(f"{dist} {versions[dist]}" for dist in FRAMEWORK_DISTS[framework])


def worker_start(cfg: dict, torch_frameworks) -> int:
    """A worker's set-up: stdout kept for the result line alone (whatever the libraries print,
    jaxmarl on import, goes to stderr), the process pinned to ``cfg["cpus"]`` and its thread
    pools sized to ``cfg["threads"]`` (torch's too where ``cfg["framework"]`` is one of
    ``torch_frameworks``).  Returns the file descriptor :func:`worker_finish` writes to."""
    result_fd = os.dup(1)
    os.dup2(2, 1)
    if cfg["cpus"] is not None:
        os.sched_setaffinity(0, cfg["cpus"])
    if cfg["threads"] is not None:
        _limit_threads(cfg["threads"])
        if cfg["framework"] in torch_frameworks:
            import torch

            torch.set_num_threads(cfg["threads"])
    return result_fd


def worker_finish(result_fd: int, result: dict) -> None:
    """Write a worker's result as its one JSON line on the stdout kept by :func:`worker_start`."""
    os.write(result_fd, (json.dumps(result) + "\n").encode())
    os.close(result_fd)


def worker_main(cfg: dict) -> None:
    """Measure one framework on every (scenario, worlds); print one JSON line."""
    framework = cfg["framework"]
    result_fd = worker_start(cfg, (*OUR_FRAMEWORKS, "vmas"))
    rows = []
    for scenario in cfg["scenarios"]:
        for worlds in cfg["worlds"]:
            row = {"scenario": scenario, "worlds": worlds}
            if framework in ("mpe2", OURS_PZ) and worlds > cfg["mpe2_max_worlds"]:
                limit = cfg["mpe2_max_worlds"]
                row["note"] = f"not run: Python loop over env objects, > {limit} worlds"
                rows.append(row)
                continue
            try:
                t0 = time.perf_counter()
                agents, run, steps_per_call = BENCHES[framework](scenario, worlds)
                row["agents"] = agents
                row["setup_s"] = round(time.perf_counter() - t0, 3)
                row.update(_measure(run, steps_per_call, worlds, cfg["target_s"]))
                log(
                    f"[{framework}] {scenario} worlds={worlds}: "
                    f"{fmt_rate(row['env_steps_per_s'])} env-steps/s"
                )
            except Exception as exc:  # keep measuring the other sizes
                row["error"] = f"{type(exc).__name__}: {exc}"
                log(f"[{framework}] {scenario} worlds={worlds}: FAILED {row['error']}")
            finally:
                run = None  # free the env before building the next one
            rows.append(row)

    result = {
        "framework": framework,
        "version": _framework_version(framework),
        "versions": _framework_versions(framework),
        "cpus": sorted(os.sched_getaffinity(0)),
        "threads": cfg["threads"],
        "rows": rows,
    }
    worker_finish(result_fd, result)


# ---------------------------------------------------------------------------
# Parent side: peer venvs, launching workers, the table.
# ---------------------------------------------------------------------------


def venv_root(args) -> Path:
    if args.venv_dir:
        return Path(args.venv_dir).expanduser()
    if os.environ.get("WAR_ENVS_BENCH_VENVS"):
        return Path(os.environ["WAR_ENVS_BENCH_VENVS"]).expanduser()
    return Path("~/.cache/war-envs/bench-venvs").expanduser()


def ensure_peer_venv(peer: str, root: Path, install: bool) -> tuple[str | None, str | None]:
    """Return (python executable, None) or (None, reason it is unavailable)."""
    venv = root / peer
    python = venv / "bin" / "python"
    marker = venv / INSTALL_MARKER
    spec = json.dumps(PEER_REQUIREMENTS[peer])
    if python.exists() and marker.exists() and marker.read_text() == spec:
        return str(python), None
    if not install:
        return None, f"not installed in {venv} (--no-install)"

    root.mkdir(parents=True, exist_ok=True)
    log_path = root / f"{peer}-install.log"
    log(f"installing {peer} into {venv} (log: {log_path}) ...")
    if venv.exists():
        shutil.rmtree(venv)  # partial or outdated install
    steps = [[sys.executable, "-m", "venv", str(venv)]]
    steps += [[str(python), "-m", "pip", "install", *pkgs] for pkgs in PEER_REQUIREMENTS[peer]]
    steps.append([str(python), "-c", PEER_IMPORT_CHECK[peer]])
    t0 = time.perf_counter()
    with open(log_path, "w") as logf:
        for cmd in steps:
            logf.write(f"$ {' '.join(cmd)}\n")
            logf.flush()
            proc = subprocess.run(cmd, stdout=logf, stderr=subprocess.STDOUT)
            if proc.returncode != 0:
                lines = log_path.read_text().strip().splitlines()
                errors = [ln for ln in lines if ln.startswith("ERROR:")] or lines[-1:] or ["?"]
                step = " ".join(cmd[-2:])
                reason = f"install failed at `{step}`: {errors[0][:160]} (see {log_path})"
                log(f"  {reason}")
                return None, reason
    marker.write_text(spec)
    log(f"  installed {peer} in {time.perf_counter() - t0:.0f} s")
    return str(python), None


def pick_cpus(args) -> tuple[list[int] | None, int | None]:
    """CPUs each worker is pinned to and its thread count (None: leave alone)."""
    allowed = sorted(os.sched_getaffinity(0))
    if args.cores:
        if args.cores > len(allowed):
            sys.exit(f"--cores {args.cores}: only {len(allowed)} cores available")
        return allowed[: args.cores], args.cores
    if args.pin:
        return allowed[-1:], 1
    return None, None


def registered_ids(single_agent: bool = False) -> list[str] | None:
    """The multi-agent ids of ``war_envs.registered_ids()`` this benchmark measures, all but the
    VMAS family's (``benchmarks/vmas_throughput.py`` measures those against VMAS itself);
    ``single_agent=True``: the single-agent ones, Gymnasium's classic control, which
    ``benchmarks/classic_throughput.py`` measures against single-agent peers.  None, with a
    message, if war_envs does not import."""
    try:
        import war_envs
    except Exception as exc:  # e.g. a scenario module half-written by someone else
        log(f"cannot import war_envs ({type(exc).__name__}: {exc}); not checking registrations")
        return None
    registry = war_envs.registry
    return [i for i in war_envs.registered_ids() if registry.is_single_agent(i) == single_agent
            and registry.scenario_family(i) != "vmas"]


def known_ids() -> list[str]:
    """The registered ids of this benchmark's table (a scenario measured on several maps once)."""
    return list(dict.fromkeys(split_scenario(s)[0] for s in SCENARIOS))


def resolve_scenarios(requested: list[str] | None) -> tuple[list[str], list[str]]:
    """(scenarios to measure, skip messages).  Default: every scenario of ``SCENARIOS`` plus
    any registered id the table does not know yet; an id of ``MAPS`` stands for all its maps;
    ids that are not registered are skipped."""
    registered = registered_ids()
    if requested is None:
        requested = list(SCENARIOS)
        if registered is not None:
            requested += [s for s in registered if s not in known_ids()]
    requested = list(dict.fromkeys(
        label for s in requested for label in ([f"{s}:{m}" for m in MAPS[s]] if s in MAPS else [s])))
    skipped = []
    for s in requested:
        if s not in SCENARIOS:
            log(f"{s}: not in this benchmark's table, measuring war-envs only")
    if registered is not None:
        for s in requested:
            if split_scenario(s)[0] not in registered:
                skipped.append(f"{s}: not registered in war_envs (yet), skipped")
                log(skipped[-1])
        requested = [s for s in requested if split_scenario(s)[0] in registered]
    return requested, skipped


def run_worker(framework: str, python: str, cfg: dict, timeout_s: float, env: dict,
               script: str = __file__) -> dict:
    """Run ``script --_worker CFG`` (this file by default; classic_throughput.py passes its own)
    under ``python`` and return the JSON line it prints last (``{"error": ...}`` if it fails or
    runs past ``timeout_s``)."""
    cfg = dict(cfg, framework=framework)
    cmd = [python, os.path.abspath(script), "--_worker", json.dumps(cfg)]
    what = ",".join(cfg["scenarios"])
    log(f"measuring {framework} {what} ...")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, stdout=subprocess.PIPE, text=True, timeout=timeout_s, env={**os.environ, **env}
        )
    except subprocess.TimeoutExpired:
        return {"error": f"worker timed out after {timeout_s:.0f} s"}
    log(f"  {framework} {what} done in {time.perf_counter() - t0:.0f} s")
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"worker exited with code {proc.returncode}"}
    return json.loads(lines[-1])


def collect(args) -> list[dict]:
    """Measure every (framework, scenario) in its own worker; one record per (scenario, worlds,
    framework), sorted in table order, with ``ours_over_peer`` filled in."""
    cpus, threads = pick_cpus(args)
    base_cfg = {
        "target_s": args.target_s,
        "cpus": cpus,
        "threads": threads,
        "mpe2_max_worlds": MPE2_MAX_WORLDS_QUICK if args.quick else MPE2_MAX_WORLDS,
    }
    timeout_s = 900 if args.quick else 3600  # per (framework, scenario) worker
    root = venv_root(args)
    meta = {key: args.meta[key] for key in ("command", "date", "machine")}

    frameworks = our_frameworks(args) + args.peers
    pythons, envs, mine = {}, {}, {}
    for framework in frameworks:
        mine[framework] = [s for s in args.scenarios
                           if framework in OUR_FRAMEWORKS or s in PEER_ENVS[framework]]
        pythons[framework] = (sys.executable, None)
        if mine[framework] and framework in PEER_REQUIREMENTS:  # install only a peer that will run
            pythons[framework] = ensure_peer_venv(framework, root, install=not args.no_install)
        envs[framework] = {}
        if framework == "jaxmarl":  # persistent XLA cache: only shortens re-runs' warm-up
            envs[framework] = {"JAX_COMPILATION_CACHE_DIR": str(root / "jaxmarl-xla-cache"),
                               "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0"}

    # every (framework, scenario) once per round, the frameworks in turn within a round, so
    # that with --rounds > 1 a change in background load falls on all of them alike
    results: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.rounds):
        for framework in frameworks:
            python, reason = pythons[framework]
            for scenario in args.scenarios:
                if scenario not in mine[framework]:
                    result = {"note": "no equivalent scenario"}
                elif python is None:
                    result = {"error": reason}
                else:
                    cfg = dict(base_cfg, scenarios=[scenario], worlds=args.worlds_of[scenario])
                    result = run_worker(framework, python, cfg, timeout_s, envs[framework])
                results.setdefault((framework, scenario), []).append(result)

    records = []
    for (framework, scenario), rounds in results.items():
        result = next((r for r in rounds if r.get("versions")), rounds[0])
        for worlds in args.worlds_of[scenario]:
            rows = [next((r for r in res.get("rows", []) if r["worlds"] == worlds), {}) for res in rounds]
            measured = [r for r in rows if r.get("env_steps_per_s") is not None]
            # the median round (the lower middle one for an even count) gives every figure
            row = (sorted(measured, key=lambda r: r["env_steps_per_s"])[(len(measured) - 1) // 2]
                   if measured else rows[0])
            eps = row.get("env_steps_per_s")
            agents = row.get("agents")
            records.append(
                {
                    "scenario": scenario,
                    "worlds": worlds,
                    "framework": framework,
                    "peer_env": peer_env_name(framework, scenario),
                    "agents": agents,
                    "env_steps_per_s": eps,
                    "agent_steps_per_s": eps * agents if eps is not None else None,
                    "ours_over_peer": None,  # filled in below
                    "validated_over_peer": None,  # peer records: filled in below
                    "validated_over_trusted": None,  # OURS_VALIDATED records: filled in below
                    "pettingzoo_over_mpe2": None,  # OURS_PZ records: filled in below
                    "rounds": args.rounds,
                    "round_env_steps_per_s": [r.get("env_steps_per_s") for r in rows],
                    "repeat_env_steps_per_s": row.get("repeat_env_steps_per_s"),
                    "env_steps_per_repeat": row.get("env_steps_per_repeat"),
                    "seconds_per_repeat": row.get("seconds_per_repeat"),
                    "cpu_seconds_per_repeat": row.get("cpu_seconds_per_repeat"),
                    "env_steps_per_cpu_s": row.get("env_steps_per_cpu_s"),
                    "setup_s": row.get("setup_s"),
                    "warmup_s": row.get("warmup_s"),
                    "target_s": args.target_s,
                    "episode_len": EPISODE_LIMITS.get(split_scenario(scenario)[0], EPISODE_LEN),
                    "repeats": REPEATS,
                    "version": result.get("version"),
                    "cpus": result.get("cpus", cpus),
                    "threads": threads,
                    "error": None if measured else row.get("error") or result.get("error"),
                    "note": row.get("note") or result.get("note"),
                    **meta,
                    "versions": result.get("versions"),
                }
            )

    records.sort(
        key=lambda r: (
            args.scenarios.index(r["scenario"]),
            r["worlds"],
            frameworks.index(r["framework"]),
        )
    )
    known = {r["framework"]: r for r in records if r["versions"]}
    for r in records:  # a peer's "no equivalent" records: its versions from its other workers
        if not r["versions"] and r["framework"] in known:
            r["version"] = known[r["framework"]]["version"]
            r["versions"] = known[r["framework"]]["versions"]
    ours = {
        (r["scenario"], r["worlds"]): r["env_steps_per_s"] for r in records if r["framework"] == OURS
    }
    validated = {
        (r["scenario"], r["worlds"]): r["env_steps_per_s"] for r in records if r["framework"] == OURS_VALIDATED
    }
    for r in records:
        key = (r["scenario"], r["worlds"])
        mine, checked = ours.get(key), validated.get(key)
        if r["framework"] in PEERS and r["env_steps_per_s"]:
            if mine:
                r["ours_over_peer"] = mine / r["env_steps_per_s"]
            if checked:
                r["validated_over_peer"] = checked / r["env_steps_per_s"]
        if r["framework"] == OURS_VALIDATED and mine and r["env_steps_per_s"]:
            r["validated_over_trusted"] = r["env_steps_per_s"] / mine
    mpe2 = {(r["scenario"], r["worlds"]): r["env_steps_per_s"] for r in records if r["framework"] == "mpe2"}
    for r in records:
        theirs = mpe2.get((r["scenario"], r["worlds"]))
        if r["framework"] == OURS_PZ and theirs and r["env_steps_per_s"]:
            r["pettingzoo_over_mpe2"] = r["env_steps_per_s"] / theirs
    return records


def our_frameworks(args) -> list[str]:
    """The batch API's trusted step, its validated one unless ``--no-validated``, and the
    PettingZoo ``ParallelEnv`` unless ``--no-pettingzoo``."""
    return [OURS, *([OURS_VALIDATED] if getattr(args, "validated", True) else []),
            *([OURS_PZ] if getattr(args, "pettingzoo", True) else [])]


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "–"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.2f} {suffix}"
    return f"{x:.1f}"


def fmt_ratio(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×" if x < 100 else f"{x:.0f}×"


def table_rows(records: list[dict], frameworks: list[str]) -> tuple[list, list, list]:
    """(headers, one row per (scenario, worlds), notes).  Cells: agent-steps/s per framework,
    then ours / peer (env-steps/s), with the validated step val/trusted and val / peer, and,
    with both ``ParallelEnv`` s, PZ/mpe2; "-" where the framework has no such scenario, "n/r"
    where it was not run at that size (mpe2 above its limit), "err[n]" where it failed (note n)."""
    peers = [f for f in frameworks if f in PEERS]
    val_columns = OURS_VALIDATED in frameworks
    pz_column = OURS_PZ in frameworks and "mpe2" in frameworks
    headers = ["scenario", "worlds", "agents", *frameworks, *(f"ours/{p}" for p in peers),
               *(["val/trusted", *(f"val/{p}" for p in peers)] if val_columns else []),
               *(["PZ/mpe2"] if pz_column else [])]
    by_key: dict[tuple, dict] = {}
    for r in records:
        by_key.setdefault((r["scenario"], r["worlds"]), {})[r["framework"]] = r
    notes: list[str] = []
    note_index: dict[str, int] = {}
    rows = []
    for (scenario, worlds), cells in by_key.items():
        ours = cells.get(OURS, {})
        agents = ours.get("agents") or next(
            (c["agents"] for c in cells.values() if c["agents"]), None
        )
        row = [scenario, str(worlds), str(agents) if agents else "-"]
        for fw in frameworks:
            r = cells.get(fw)
            if r is None or (r["agent_steps_per_s"] is None and not r["error"]):
                row.append("n/r" if (r and (r["note"] or "").startswith("not run")) else "-")
            elif r["error"]:
                text = f"{fw}: {r['error']}"
                if text not in note_index:
                    notes.append(text if len(text) <= 160 else text[:157] + "...")
                    note_index[text] = len(notes)
                row.append(f"err[{note_index[text]}]")
            else:
                cell = fmt_rate(r["agent_steps_per_s"])
                if agents and r["agents"] != agents:  # a peer with another agent count
                    cell += f" ({r['agents']} ag.)"
                row.append(cell)
        for fw in peers:
            r = cells.get(fw)
            row.append(fmt_ratio(r["ours_over_peer"]) if r and r["ours_over_peer"] else "-")
        if val_columns:
            r = cells.get(OURS_VALIDATED)
            row.append(fmt_ratio(r["validated_over_trusted"]) if r and r.get("validated_over_trusted") else "-")
            for fw in peers:
                r = cells.get(fw)
                row.append(fmt_ratio(r["validated_over_peer"]) if r and r.get("validated_over_peer") else "-")
        if pz_column:
            r = cells.get(OURS_PZ)
            row.append(fmt_ratio(r["pettingzoo_over_mpe2"]) if r and r.get("pettingzoo_over_mpe2") else "-")
        rows.append(row)
    return headers, rows, notes


def print_table(records: list[dict], args) -> None:
    cpus, threads = pick_cpus(args)
    if cpus is None:
        how = "unpinned"
    else:
        how = f"{threads} thread(s) on cpu {','.join(map(str, cpus))}"
    print(
        f"\nEnv throughput: {how}, {EPISODE_LEN}-step episodes (else EPISODE_LIMITS) with auto-reset, "
        f"random (available) actions, "
        f"median of {REPEATS} x ~{args.target_s:g} s.\nCells: agent-steps/s; ours/peer: our "
        f"env-steps/s over the peer's; \"-\": the peer has no such scenario; \"n/r\": not run "
        f"(mpe2 and {OURS_PZ} above {MPE2_MAX_WORLDS_QUICK if args.quick else MPE2_MAX_WORLDS} "
        f"worlds); val: {OURS_VALIDATED}'s env-steps/s over {OURS}' (trusted) or the peer's; "
        f"PZ/mpe2: {OURS_PZ}'s env-steps/s over mpe2's"
        + (f"; median of {args.rounds} rounds" if args.rounds > 1 else "") + ".\n"
    )
    frameworks = our_frameworks(args) + args.peers
    headers, table, notes = table_rows(records, frameworks)
    widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    print(line(headers))
    print(line(["-" * w for w in widths]))
    previous = None
    for row in table:
        if previous is not None and row[0] != previous:
            print()
        previous = row[0]
        print(line(row))
    for i, note in enumerate(notes, 1):
        print(f"[{i}] {note}")
    for message in getattr(args, "skipped", []):
        print(f"skipped: {message}")
    versions = {r["framework"]: r["version"] for r in records if r["version"]}
    if versions:
        print("\n" + "\n".join(f"{fw}: {v}" for fw, v in versions.items()))


def comma_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="1 and 1024 worlds (SMAX 1 and 512; mpe2 at 1), 0.25 s repeats")
    p.add_argument("--json", metavar="PATH",
                   help="also write one record per (scenario, worlds, framework) as a JSON list")
    p.add_argument("--worlds", type=lambda s: [int(w) for w in comma_list(s)],
                   help="comma-separated world counts (default 1,64,1024,8192; SMAX 1,64,512,4096)")
    p.add_argument("--scenarios", type=comma_list,
                   help="comma-separated scenario ids, SMAX-v0 for every SMAX map or SMAX-v0:<map> "
                        "for one (default: every registered one)")
    p.add_argument("--peers", type=comma_list, default=list(PEERS),
                   help=f"comma-separated peers, may be empty (default {','.join(PEERS)})")
    p.add_argument("--pettingzoo", action=argparse.BooleanOptionalAction, default=True,
                   help=f"also measure our PettingZoo ParallelEnv ({OURS_PZ}) as mpe2 is measured "
                        "(default on)")
    p.add_argument("--validated", action=argparse.BooleanOptionalAction, default=True,
                   help=f"also measure the batch API's validated step ({OURS_VALIDATED}: "
                        "env.step({group: tensor}), actions drawn per group) (default on)")
    p.add_argument("--rounds", type=int, default=1,
                   help="measure every (framework, scenario) this many times, the frameworks in "
                        "turn, and report the median round (default 1)")
    p.add_argument("--no-install", action="store_true",
                   help="skip missing peers instead of installing them")
    p.add_argument("--venv-dir", help="where peer venvs live (default $WAR_ENVS_BENCH_VENVS "
                                      "or ~/.cache/war-envs/bench-venvs)")
    p.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                   help="pin each framework's subprocess to one core with one thread (default on)")
    p.add_argument("--cores", type=int,
                   help="give every framework N cores and N threads instead of --pin")
    p.add_argument("--target-s", type=float,
                   help="seconds per timed repeat (default 1.5, 0.25 with --quick)")
    p.add_argument("--_worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args._worker:
        return args
    for w in args.worlds or []:
        if w < 1:
            p.error(f"--worlds: every world count must be >= 1, got {w}")
    if args.target_s is None:
        args.target_s = 0.25 if args.quick else 1.5
    for peer in args.peers:
        if peer not in PEERS:
            p.error(f"unknown peer {peer!r} (choose from {', '.join(PEERS)})")
    if args.cores is not None and args.cores < 1:
        p.error("--cores must be >= 1")
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    if args.scenarios is not None:
        registered = registered_ids() or []
        for s in args.scenarios:
            if s not in SCENARIOS and s not in MAPS and s not in registered:
                p.error(f"unknown scenario {s!r} (choose from {', '.join([*SCENARIOS, *MAPS])})")
    args.scenarios, args.skipped = resolve_scenarios(args.scenarios)
    if not args.scenarios:
        p.error("no scenario to measure")
    # each scenario's world counts: --worlds, else its default (WORLDS)
    args.worlds_of = {s: list(args.worlds or default_worlds(s, args.quick)) for s in args.scenarios}
    args.meta = _results.metadata("env_throughput.py", argv, FRAMEWORK_DISTS[OURS] + EXTRA_DISTS[OURS])
    return args


def main(argv=None) -> list[dict]:
    args = parse_args(argv)
    if args._worker:
        worker_main(json.loads(args._worker))
        return []
    records = collect(args)
    print_table(records, args)
    if args.json:
        _results.write(args.json, records, args.meta)
        log(f"wrote {args.json}")
    return records


if __name__ == "__main__":
    main()
