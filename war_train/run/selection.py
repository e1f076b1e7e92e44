"""Policy selection: the networks a run keeps, picked on worlds no run trains or is evaluated on.

With ``TrainConfig.select_every = N > 0`` the run loop (``war_train.run.loop``) plays, after every
N-th update and after the last, ``select_episodes`` greedy episodes (``evaluate.run_episodes``)
on the run's selection worlds (``war_train.seeding``: stream ``"select"``, apart from the worlds
of training and of the final evaluation) and keeps a copy of the networks whose mean
``select_metric`` (``"auto"``: the scenario's ``progress_metric``) is the highest so far (a tie
keeps the earlier).  When the run ends, those networks are its result: ``TrainResult.policies``
(and ``TrainResult.selected``, which update they are), ``eval.json`` (which records it), the GIF
and ``policy.load_policies``.  ``checkpoint.pt`` holds them under ``"selection"`` beside the last update's networks, which a
resumed run continues from (``war-train eval --last`` evaluates those).

This is model selection on held-out worlds, the checkpoint choice of early stopping: the final
evaluation plays other worlds, so its figures carry no bias from the choice.  Selection plays
greedy episodes on the CPU and reads nothing from the training streams, so the training itself
(rollouts, updates, the last networks) is the same with or without it.  Under torchrun rank 0
selects (the ranks' networks are equal); the other ranks' results are the last networks.
"""

from __future__ import annotations

import functools
import json
import math

import torch

__all__ = ["Selection", "episode_statistics", "select_metric", "check_select_metric", "selected_networks"]


def episode_statistics(scenario: str, env_kwargs: dict) -> list[str]:
    """The names of the episode statistics ``evaluate`` reports for ``scenario`` (made with one
    world to read them, once per scenario and arguments): ``episode_return``,
    ``episode_return/<group>``, ``episode_length`` and the scenario's declared metrics."""
    return list(_episode_statistics(scenario, json.dumps(env_kwargs, sort_keys=True)))


@functools.lru_cache(maxsize=16)
def _episode_statistics(scenario: str, env_kwargs_json: str) -> tuple[str, ...]:
    import war_envs
    from war_train.rollout.metrics import EpisodeStats

    env = war_envs.make(scenario, num_envs=1, **json.loads(env_kwargs_json))
    try:
        return tuple(EpisodeStats.columns(env))
    finally:
        env.close()


def select_metric(cfg) -> str:
    """The statistic ``cfg`` selects on: ``cfg.select_metric``, or for ``"auto"`` the scenario's
    ``progress_metric``."""
    from war_envs.registry import scenario_class

    return scenario_class(cfg.scenario).progress_metric if cfg.select_metric == "auto" else cfg.select_metric


def check_select_metric(cfg) -> None:
    """``ValueError`` unless ``cfg.select_metric`` names one of the scenario's episode statistics
    (checked only when the run selects, ``select_every > 0``)."""
    if not cfg.select_every:
        return
    names = episode_statistics(cfg.scenario, cfg.env_kwargs)
    if select_metric(cfg) not in names:
        raise ValueError(f"select_metric: expected 'auto' or one of the episode statistics of {cfg.scenario} "
                         f"{names}, got {cfg.select_metric!r}")


def _copy(module: torch.nn.Module) -> dict:
    return {k: v.detach().to("cpu", copy=True) for k, v in module.state_dict().items()}


class Selection:
    """The best networks of a run so far (see the module docstring).  ``due(update, last)``:
    whether update ``update`` is evaluated; ``consider(update, env_steps, policies)``: evaluate
    and keep them if they score best, returning the score; ``apply(policies)``: load the kept
    networks; ``state_dict``/``load_state_dict``: the checkpoint's ``"selection"`` entry."""

    def __init__(self, cfg) -> None:
        check_select_metric(cfg)
        self.cfg = cfg
        self.metric = select_metric(cfg)
        self.update: int | None = None
        self.env_steps = 0
        self.score = -math.inf
        self.networks: dict | None = None

    @property
    def columns(self) -> list[str]:
        """``metrics.csv``'s columns of selection: the update's score (NaN when not evaluated)
        and the update whose networks are kept."""
        return [f"select/{self.metric}", "select/update"]

    def due(self, update: int, last: bool) -> bool:
        return last or update % self.cfg.select_every == 0

    def consider(self, update: int, env_steps: int, policies: dict) -> float:
        from war_train.run.evaluate import run_episodes
        from war_train.rollout.metrics import summarize

        cfg = self.cfg
        stats = run_episodes(cfg.scenario, cfg.env_kwargs, policies, cfg.select_episodes, cfg.seed,
                             dict.fromkeys(policies, "greedy"), stream="select")
        score = float(summarize(stats)[self.metric])
        if score > self.score:
            self.update, self.env_steps, self.score = update, env_steps, score
            self.networks = {"actors": {g: _copy(p.actor) for g, p in policies.items()},
                             "critics": {g: _copy(p.critic) for g, p in policies.items()}}
        return score

    def row(self, score: float) -> dict:
        """The update's ``columns`` entries (``score``: NaN when the update was not evaluated)."""
        return {self.columns[0]: score, self.columns[1]: float("nan") if self.update is None else self.update}

    def summary(self) -> dict | None:
        """``{"update", "env_steps", "metric", "score", "episodes"}`` of the kept networks (None
        before the first evaluation)."""
        if self.update is None:
            return None
        return {"update": self.update, "env_steps": self.env_steps, "metric": self.metric,
                "score": self.score, "episodes": self.cfg.select_episodes}

    def apply(self, policies: dict) -> None:
        from war_train.learn.policy import load_networks

        if self.networks is not None:
            load_networks(policies, self.networks)

    def state_dict(self) -> dict:
        summary = self.summary()
        return {} if summary is None else {**summary, **self.networks}

    def load_state_dict(self, state: dict | None) -> None:
        if not state:   # (the config check of resuming has made sure the metric is this run's)
            return
        self.update, self.env_steps, self.score = int(state["update"]), int(state["env_steps"]), float(state["score"])
        self.networks = {"actors": state["actors"], "critics": state["critics"]}


def selected_networks(ckpt: dict, last: bool = False) -> dict | None:
    """What ``eval.json`` records of the networks ``policy.load_policies(ckpt, last)`` loads:
    the summary of the selected ones (``Selection.summary``), or None for the last update's."""
    selection = ckpt.get("selection")
    if last or not selection:
        return None
    return {k: selection[k] for k in ("update", "env_steps", "metric", "score", "episodes")}
