"""Per-episode statistics, generic over the scenario interface (``war_envs.core.scenario``).

Per finished episode (every world, every autoreset), in column order (``EpisodeStats.names``):

- ``episode_return``: mean over all agents of each agent's summed episode reward (mpe2's
  convention, with the env's own rewards); ``episode_return/<group>``: the same over a group;
- ``episode_length``;
- then each of the scenario's declared ``episode_metrics`` (task metrics and other reward
  conventions, each reduced over the episode as it declares: sum, mean, last or any).

The statistics live on the env's device: ``EpisodeStats.step`` only queues device tensor ops
(no host synchronization), and ``pop`` copies the finished episodes to the host once.
"""

from __future__ import annotations

import torch

from war_envs.core.validation import check_int

__all__ = ["EpisodeStats", "summarize", "metric_columns", "counters", "finished_episodes"]


def metric_columns(env, groups) -> list[str]:
    """``metrics.csv``'s columns of every mode: counters, the episode statistics the env
    declares, learning rates and per-group diagnostics."""
    from war_train.learn.ppo import DIAGNOSTICS

    cols = ["update", "env_steps", "agent_steps", "wall_s", "env_steps_per_s", "episodes"]
    cols += EpisodeStats.columns(env)
    cols += ["lr", "critic_lr"]
    cols += [f"{g}/{d}" for g in groups for d in DIAGNOSTICS]
    return cols

_F64 = torch.float64


class EpisodeStats:
    """Accumulates every world's running episode and collects finished episodes, on the env's
    device.

    ``step(rew, info, done, record)`` after each env step; ``pop()`` returns ``{name:
    Tensor[k]}`` (CPU float64, columns ``names``) for the k episodes finished (and recorded)
    since the last pop, in (step, world) order; ``{}`` if none.  ``state_dict()`` /
    ``load_state_dict()`` make the running episodes resumable.

    Each step writes one row of per-world episode values (garbage where no episode ended) and
    one row of the done & record mask into ``[capacity, E]`` device buffers; ``pop`` masks and
    copies them in one transfer.  When the buffer is full, ``step`` first moves its finished
    episodes into a host-side list (the only synchronization in ``step``, once every
    ``capacity`` steps), so loops longer than ``capacity`` steps between pops are fine.
    """

    @staticmethod
    def columns(env) -> list[str]:
        """The per-episode columns of ``env`` in order (``names``); ``ValueError`` if a declared
        metric repeats a name."""
        names = ["episode_return", *(f"episode_return/{g}" for g in env.groups), "episode_length",
                 *(m.name for m in env.episode_metrics)]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"env.episode_metrics: column names {repeated} appear more than once "
                             f"(columns: {names})")
        return names

    def __init__(self, env, capacity: int = 64) -> None:
        self.capacity = check_int("capacity", capacity, minimum=1)
        self.device = env.torch_device
        self.num_envs = env.num_envs
        self.groups = {g: (s.start, s.stop) for g, s in env.groups.items()}
        self.num_agents = sum(s.n_agents for s in env.groups.values())
        self.metrics = tuple(env.episode_metrics)
        self.names: list[str] = self.columns(env)
        E, dev = self.num_envs, self.device
        self.returns = torch.zeros(E, self.num_agents, dtype=_F64, device=dev)
        self.length = torch.zeros(E, dtype=torch.int64, device=dev)
        #: running sums of the "sum" and "mean" metrics
        self.sums = {m.name: torch.zeros(E, dtype=_F64, device=dev) for m in self.metrics
                     if m.reduce in ("sum", "mean")}
        #: whether an "any" metric was nonzero at some step of the running episode
        self.seen = {m.name: torch.zeros(E, dtype=torch.bool, device=dev) for m in self.metrics
                     if m.reduce == "any"}
        self._values = torch.zeros(capacity, E, len(self.names), dtype=_F64, device=dev)
        self._mask = torch.zeros(capacity, E, dtype=torch.bool, device=dev)
        self._rows = 0
        self._host: list[torch.Tensor] = []  # [k, columns] blocks moved off the device buffer

    # ------------------------------------------------------------------ stepping
    def step(self, rew: dict[str, torch.Tensor], info: dict, done: torch.Tensor,
             record: torch.Tensor | None = None) -> None:
        """Add one step: ``rew`` and ``info`` as ``env.step`` returns them, ``done`` (bool
        ``[E]``): the episode ended at this step.  Finished episodes are kept for ``pop`` where
        ``record`` (bool ``[E]``, default all) is True.  Only device tensor ops (pass ``done`` /
        ``record`` on the env's device: a host tensor is copied over)."""
        if self._rows == self.capacity:
            self._flush()
        done = done.to(self.device, torch.bool)
        for g, (a, b) in self.groups.items():
            self.returns[:, a:b] += rew[g].detach().to(_F64)
        self.length += 1
        last = {}
        for m in self.metrics:
            value = self._metric_value(m, info)
            if m.reduce == "last":
                last[m.name] = value
            elif m.reduce == "any":
                self.seen[m.name] |= value != 0
            else:
                self.sums[m.name] += value
        self._values[self._rows] = torch.stack(self._episode_values(last), dim=-1)
        self._mask[self._rows] = done if record is None else done & record.to(self.device, torch.bool)
        self._rows += 1
        self._restart(done)

    def _metric_value(self, metric, info) -> torch.Tensor:
        value = metric.step(info)
        if not isinstance(value, torch.Tensor) or value.shape != (self.num_envs,):
            got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise ValueError(f"episode metric {metric.name!r}: step(info) must return a Tensor of shape "
                             f"({self.num_envs},), got {got}")
        return value.to(_F64)

    def _episode_values(self, last: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        """Every world's statistics if its episode ended now, one ``[E]`` tensor per column."""
        length = self.length.to(_F64)
        cols = [self.returns.mean(-1)]
        cols += [self.returns[:, a:b].mean(-1) for a, b in self.groups.values()]
        cols.append(length)
        for m in self.metrics:
            if m.reduce == "sum":
                cols.append(self.sums[m.name])
            elif m.reduce == "mean":
                cols.append(self.sums[m.name] / length)
            elif m.reduce == "last":
                cols.append(last[m.name])
            else:
                cols.append(self.seen[m.name].to(_F64))
        return cols

    def _restart(self, done: torch.Tensor) -> None:
        """Zero the running episode of the worlds where ``done`` (masked fills: no sync)."""
        self.returns.masked_fill_(done[:, None], 0.0)
        self.length.masked_fill_(done, 0)
        for total in self.sums.values():
            total.masked_fill_(done, 0.0)
        for flag in self.seen.values():
            flag.masked_fill_(done, False)

    # ------------------------------------------------------------------ collecting
    def _take(self) -> torch.Tensor:
        """The buffer's finished episodes as a CPU ``[k, columns]`` block; empties the buffer."""
        rows, self._rows = self._rows, 0
        return self._values[:rows][self._mask[:rows]].cpu()

    def _flush(self) -> None:
        self._host.append(self._take())

    def pop(self) -> dict[str, torch.Tensor]:
        """Every episode finished (and recorded) since the last pop: ``{name: CPU float64
        Tensor[k]}`` in ``names`` order, episodes in (step, world) order; ``{}`` if none."""
        blocks = self._host + ([self._take()] if self._rows else [])
        self._host = []
        if not blocks:
            return {}
        episodes = torch.cat(blocks)
        if not len(episodes):
            return {}
        return {name: episodes[:, j].contiguous() for j, name in enumerate(self.names)}

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        """The running episodes, CPU tensors per world along dim 0: ``returns [E, A]``,
        ``length [E]``, ``sums {name: [E]}`` ("sum"/"mean" metrics) and ``seen {name: [E]}``
        ("any" metrics).  Finished episodes not yet popped are not part of it."""
        return {"returns": self.returns.cpu().clone(), "length": self.length.cpu().clone(),
                "sums": {k: v.cpu().clone() for k, v in self.sums.items()},
                "seen": {k: v.cpu().clone() for k, v in self.seen.items()}}

    def load_state_dict(self, state: dict) -> None:
        """Restore ``state_dict()``'s running episodes (also one written before ``seen``
        existed).  An accumulator missing from ``state`` (a metric declared after it was
        written) starts at zero; shape mismatches raise ``ValueError``."""
        returns = self._checked("returns", state["returns"], tuple(self.returns.shape))
        length = self._checked("length", state["length"], tuple(self.length.shape))
        sums = {k: self._checked(f"sums[{k!r}]", state["sums"][k], (self.num_envs,))
                for k in self.sums if k in state.get("sums", {})}
        seen = {k: self._checked(f"seen[{k!r}]", state["seen"][k], (self.num_envs,))
                for k in self.seen if k in state.get("seen", {})}
        self.returns = returns.to(self.device, _F64).clone()
        self.length = length.to(self.device, torch.int64).clone()
        for k in self.sums:
            self.sums[k] = sums[k].to(self.device, _F64).clone() if k in sums else torch.zeros_like(self.sums[k])
        for k in self.seen:
            self.seen[k] = seen[k].to(self.device, torch.bool).clone() if k in seen else torch.zeros_like(self.seen[k])
        self._rows = 0
        self._host = []

    @staticmethod
    def _checked(name: str, tensor: torch.Tensor, shape: tuple) -> torch.Tensor:
        if tuple(tensor.shape) != shape:
            raise ValueError(f"episode stats: expected {name} of shape {shape}, got {tuple(tensor.shape)}")
        return tensor


def summarize(episodes: dict[str, torch.Tensor]) -> dict[str, float]:
    """Mean of every per-episode statistic, plus ``episodes`` (the count)."""
    if not episodes:
        return {"episodes": 0}
    out = {"episodes": int(next(iter(episodes.values())).numel())}
    out.update({k: float(v.mean()) for k, v in episodes.items()})
    return out


def counters(update: int, env_steps: int, n_agents: int, learner) -> dict:
    """The counters every mode's row starts with: updates, env and agent steps (all ranks), and
    the learning rates in force (the first group's actor and critic)."""
    first = next(iter(learner.actor_opt))
    return {"update": update, "env_steps": env_steps, "agent_steps": env_steps * n_agents,
            "lr": learner.actor_opt[first].param_groups[0]["lr"],
            "critic_lr": learner.critic_opt[first].param_groups[0]["lr"]}


def finished_episodes(stats: list, reducer) -> dict[str, float]:
    """``summarize`` of the episodes every ``EpisodeStats`` of ``stats`` finished since its last
    pop, on every rank (``reducer.gather_episodes``): one host transfer per update."""
    episodes = [e for e in (s.pop() for s in stats) if e]
    merged = {k: torch.cat([e[k] for e in episodes]) for k in episodes[0]} if episodes else {}
    return summarize(reducer.gather_episodes(merged))
