"""Every env a training run makes, made in one place from its ``TrainConfig``.

``make_env(config, dist)``: the lock-step mode's env (this rank's worlds under torchrun);
``make_worker_envs(config, workers)``: the WAR mode's worker envs, each a shard of the worlds;
``make_guest_env(config, n)``: ``n`` worlds a WAR worker takes over from a straggler (``steal``);
``make_probe_env(config, dist)``: one world, to check the scenario's arguments before a run
folder exists.  The trainer resets every env with the run's world streams
(``war_train.seeding``), whatever seed it is made with.  A scenario argument that
``war_envs.make`` refuses is an error naming ``env_kwargs``.
"""

from __future__ import annotations

import json

import war_envs
from war_train.learn import distributed
from war_train.config import TrainConfig

__all__ = ["make_env", "make_worker_envs", "make_guest_env", "make_probe_env"]


def make_env(config: TrainConfig, dist=None):
    """The batched env ``config`` trains on lock-step (``num_envs`` worlds; on rank r of K
    (``dist``), its ``num_envs / K`` worlds on the rank's device)."""
    dist = distributed.Local() if dist is None else dist
    worlds = dist.worlds(config.num_envs)
    return _make(config, num_envs=len(worlds), seed=config.seed + worlds.start, device=str(dist.device(config.device)))


def make_worker_envs(config: TrainConfig, workers: int, dist=None) -> list:
    """``workers`` envs over the run's worlds (on rank r of K (``dist``): its ``num_envs / K``
    worlds, on the rank's device); worker w's worlds are the run's worlds ``start + w·E_r/W …``."""
    dist = distributed.Local() if dist is None else dist
    worlds = dist.worlds(config.num_envs)
    if len(worlds) % workers:
        where = f" on each of {dist.world_size} ranks" if dist.active else ""
        raise ValueError(f"workers: the {len(worlds)} worlds{where} (num_envs={config.num_envs}) must be a multiple "
                         f"of workers={workers}")
    per = len(worlds) // workers
    device = str(dist.device(config.device))
    return [_make(config, num_envs=per, seed=config.seed + worlds.start + w * per, device=device)
            for w in range(workers)]


def make_guest_env(config: TrainConfig, n: int):
    """An env of ``n`` worlds of the run's scenario (a stealing worker's guest worlds; their
    state is copied in from the straggler's)."""
    return _make(config, num_envs=n, device=config.device)


def planning_env_factory(config: TrainConfig, device: str):
    """``make(num_envs=, autoreset_mode=)``: the run's scenario on ``device`` as a planner's
    worlds (``war_train.plan.worlds.PlanningWorlds``; their state is copied in from real worlds)."""
    return lambda num_envs, autoreset_mode: _make(config, num_envs=num_envs, device=device,
                                                  autoreset_mode=autoreset_mode)


def make_probe_env(config: TrainConfig, dist=None):
    """One world of the run's scenario on this rank's device (checks its arguments)."""
    dist = distributed.Local() if dist is None else dist
    return _make(config, num_envs=1, seed=config.seed, device=str(dist.device(config.device)))


def _make(config: TrainConfig, **settings):
    """``war_envs.make`` with the config's scenario arguments; a bad one is an error naming them."""
    taken = sorted(set(config.env_kwargs) & {*settings, "precision"})
    if taken:
        raise ValueError(f"env_kwargs: {taken} are set by the config's own fields (num_envs, seed, device, "
                         f"precision), not scenario arguments; drop them from env_kwargs")
    try:
        return war_envs.make(config.scenario, precision=config.precision, **settings, **config.env_kwargs)
    except (TypeError, ValueError) as exc:
        kind = TypeError if isinstance(exc, TypeError) else ValueError
        raise kind(f"env_kwargs: cannot make {config.scenario} with {json.dumps(config.env_kwargs)}: {exc}") from exc
