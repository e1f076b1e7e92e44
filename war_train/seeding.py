"""The world streams of a training run: independent across seeds, evaluation apart from training.

A batched env seeded ``s`` gives world ``w`` the stream of seed ``s + w`` (Gymnasium's vector-env
convention, kept in ``war_envs``), so two envs seeded 1 and 2 share all but one world.  A
training run must not inherit that: ``war-train`` resets its env with per-world seeds

    seed_w = H(run seed, stream, w)

a counter-based hash (splitmix64 rounds) of the run's seed, the stream (``"train"`` for the
worlds trained on, ``"eval"`` for evaluation and rendering, ``"select"`` for the evaluations that
pick a run's networks, ``TrainConfig.select_every``) and the world's *global* index ``w``
(rank r of K steps worlds ``r·E/K … (r+1)·E/K - 1`` of the run, so the ranks' worlds together
are still the worlds of one process).  Different seeds, or the streams of one seed, share no
world: ``tests/test_seeding.py`` checks that seeds 1–5 share no stream key, in training,
evaluation or selection, at the world counts the presets use.  (A world's stream key is 31 bits wide, Warp's
``rand_init`` seed, so at hundreds of thousands of worlds two runs may meet in a world by chance,
as for any hash of that width.)
"""

from __future__ import annotations

import numpy as np

__all__ = ["STREAMS", "restart_seed", "run_world_seeds", "stream_seed"]

STREAMS = {"train": 0x7472_6169_6E00, "eval": 0x6576_616C_0000,
           "select": 0x7365_6C65_6374, "plan": 0x706C_616E_0000}   # "train", "eval", "select", "plan" as tags
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """One splitmix64 output step (Steele et al.): a bijection on 64-bit words."""
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & _M64
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _M64
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _M64
        return x ^ (x >> np.uint64(31))


def run_world_seeds(seed: int, worlds: range | int, stream: str = "train") -> np.ndarray:
    """Per-world seeds (int64 in [0, 2**63)) for ``env.reset(seed=...)`` of worlds ``worlds``
    (a range of global world indices, or a count from 0) of a run seeded ``seed``."""
    if stream not in STREAMS:
        raise ValueError(f"stream: expected one of {sorted(STREAMS)}, got {stream!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    if isinstance(worlds, (int, np.integer)):
        worlds = range(int(worlds))
    index = np.arange(worlds.start, worlds.stop, dtype=np.uint64)
    run = _splitmix64(_splitmix64(np.array([seed], dtype=np.uint64)) ^ np.uint64(STREAMS[stream]))
    with np.errstate(over="ignore"):
        keys = _splitmix64(run ^ _splitmix64(index))
    return (keys >> np.uint64(1)).astype(np.int64)


def stream_seed(seed: int, world: int, stream: str) -> int:
    """One seed of stream ``stream`` of a run seeded ``seed``, world ``world``'s
    (``run_world_seeds`` of that one world): e.g. the planner stream of a rank's first world."""
    return int(run_world_seeds(seed, range(world, world + 1), stream)[0])


#: restart seeds (``restart_seed``) lie in ``[RESTART_SEEDS, 2 * RESTART_SEEDS)``
RESTART_SEEDS = 1 << 62
_RESTART_TAG = np.uint64(0x7265_7374_6172)   # "restar"


def restart_seed(seed: int, restart: int) -> int:
    """The seed restart ``restart`` of a run seeded ``seed`` trains with (``TrainConfig.restarts``):
    ``seed`` itself for restart 0, else a hash of both in ``[2**62, 2**63)``: its worlds,
    network initialisation and sampling stream are then apart from every run seeded below
    ``2**62`` and from the run's other restarts."""
    if isinstance(restart, bool) or not isinstance(restart, (int, np.integer)) or restart < 0:
        raise ValueError(f"restart: expected an int >= 0, got {restart!r}")
    if restart == 0:
        return int(seed)
    with np.errstate(over="ignore"):
        run = _splitmix64(_splitmix64(np.array([seed], dtype=np.uint64)) ^ _RESTART_TAG)
        key = _splitmix64(run ^ np.uint64(restart))
    return int(RESTART_SEEDS | int(key[0] >> np.uint64(2)))
