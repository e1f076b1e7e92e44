"""Episode statistics and reward conventions, computed from rewards and ``info`` task metrics.

Per finished episode (every world, every autoreset):

- ``episode_return``: mean over all agents of each agent's summed episode reward (mpe2's
  convention, with the env's own rewards); ``episode_return/<group>``: the same over a group;
  ``episode_length``.
- Spread: ``onpolicy_episode_reward`` — what the MAPPO paper's on-policy code logs as "average
  episode rewards" (mean per-step reward x episode length).  There every agent's reward is the
  *shared sum* over agents of ``-sum_landmarks min_dist - (collisions_i + 1)`` (each agent also
  collides with itself), i.e. per step ``-N * sum_l d_l - sum_i collisions_i - N`` (a constant
  -75 per 25-step episode for N=3); summed over the episode.  Computed from
  ``info["landmark_min_dist"]`` and ``info["collisions"]``, never from the env's rewards.
  Also ``landmark_dist`` (mean over steps of sum_l d_l), ``collisions`` (agent-pair collisions
  summed over steps) and ``occupied_landmarks`` (at the last step).
- PredatorPrey: ``catch_rate`` (1 if any step had an adversary-prey contact, averaged over
  episodes: the catch rate), ``contact_steps`` (steps with at least one contact) and
  ``contacts`` (adversary-prey contacts summed over steps), from ``info["collisions"]``.
"""

from __future__ import annotations

import torch

__all__ = ["EpisodeStats", "onpolicy_step_reward", "summarize"]


def onpolicy_step_reward(landmark_min_dist: torch.Tensor, collisions: torch.Tensor) -> torch.Tensor:
    """Per world, the on-policy code's per-step (shared) Spread reward ``[E]``:
    ``sum_i (-sum_l d_l - (collisions_i + 1))`` with ``landmark_min_dist[E, L]`` and
    ``collisions[E, N]`` (other agents touching agent i)."""
    d = landmark_min_dist.to(torch.float64).sum(-1)
    c = collisions.to(torch.float64)
    n = c.shape[-1]
    return -n * d - (c + 1.0).sum(-1)


class EpisodeStats:
    """Accumulates every world's running episode and collects finished episodes.

    ``step(rew, info, done)`` after each env step; ``pop()`` returns ``{name: Tensor[k]}`` for
    the k episodes finished since the last pop.  ``state_dict()`` makes it resumable.
    """

    def __init__(self, env) -> None:
        self.groups = {g: (s.start, s.stop) for g, s in env.groups.items()}
        self.num_agents = sum(s.n_agents for s in env.groups.values())
        self.kind = {"Spread-v0": "spread", "PredatorPrey-v0": "predator_prey"}.get(getattr(env, "env_id", ""), "")
        self.num_adversaries = env.groups["adversary"].n_agents if self.kind == "predator_prey" else 0
        E = env.num_envs
        self.returns = torch.zeros(E, self.num_agents, dtype=torch.float64)
        self.length = torch.zeros(E, dtype=torch.int64)
        self.sums = {name: torch.zeros(E, dtype=torch.float64) for name in self._sum_names()}
        self._finished: list[dict[str, torch.Tensor]] = []

    def _sum_names(self) -> tuple[str, ...]:
        if self.kind == "spread":
            return ("onpolicy_episode_reward", "landmark_dist", "collisions")
        if self.kind == "predator_prey":
            return ("contact_steps", "contacts")
        return ()

    def _step_terms(self, info) -> dict[str, torch.Tensor]:
        if self.kind == "spread":
            d, c = info["landmark_min_dist"].cpu(), info["collisions"].cpu()
            return {"onpolicy_episode_reward": onpolicy_step_reward(d, c),
                    "landmark_dist": d.to(torch.float64).sum(-1),
                    "collisions": c.to(torch.float64).sum(-1) / 2.0}
        if self.kind == "predator_prey":
            contacts = info["collisions"].cpu()[:, :self.num_adversaries].to(torch.float64).sum(-1)
            return {"contact_steps": (contacts > 0).to(torch.float64), "contacts": contacts}
        return {}

    def step(self, rew: dict[str, torch.Tensor], info: dict, done: torch.Tensor,
             record: torch.Tensor | None = None) -> None:
        """Add one step (``rew`` and ``info`` as ``env.step`` returns them, ``done[E]``: the
        episode ended at this step).  Finished episodes are kept for ``pop`` where ``record``
        (bool ``[E]``, default all) is True."""
        for g, (a, b) in self.groups.items():
            self.returns[:, a:b] += rew[g].detach().cpu().to(torch.float64)
        self.length += 1
        for name, value in self._step_terms(info).items():
            self.sums[name] += value
        done = done.cpu()
        if not bool(done.any()):
            return
        ended = done.nonzero().flatten()
        idx = ended if record is None else (done & record.cpu()).nonzero().flatten()
        if len(idx):
            self._finished.append(self._episodes(idx, info))
        self.returns[ended] = 0.0
        self.length[ended] = 0
        for total in self.sums.values():
            total[ended] = 0.0

    def _episodes(self, idx: torch.Tensor, info) -> dict[str, torch.Tensor]:
        ep = {"episode_return": self.returns[idx].mean(-1),
              "episode_length": self.length[idx].to(torch.float64)}
        for g, (a, b) in self.groups.items():
            ep[f"episode_return/{g}"] = self.returns[idx, a:b].mean(-1)
        for name, total in self.sums.items():
            ep[name] = total[idx].clone()
        if self.kind == "spread":
            ep["landmark_dist"] = ep["landmark_dist"] / ep["episode_length"]
            ep["occupied_landmarks"] = info["occupied_landmarks"].cpu()[idx].to(torch.float64)
        if self.kind == "predator_prey":
            ep["catch_rate"] = (ep["contact_steps"] > 0).to(torch.float64)
        return ep

    def pop(self) -> dict[str, torch.Tensor]:
        if not self._finished:
            return {}
        out = {k: torch.cat([ep[k] for ep in self._finished]) for k in self._finished[0]}
        self._finished = []
        return out

    def state_dict(self) -> dict:
        return {"returns": self.returns.clone(), "length": self.length.clone(),
                "sums": {k: v.clone() for k, v in self.sums.items()}}

    def load_state_dict(self, state: dict) -> None:
        if state["returns"].shape != self.returns.shape:
            raise ValueError(f"episode stats: expected returns of shape {tuple(self.returns.shape)}, "
                             f"got {tuple(state['returns'].shape)}")
        self.returns = state["returns"].clone()
        self.length = state["length"].clone()
        self.sums = {k: state["sums"][k].clone() for k in self.sums}
        self._finished = []


def summarize(episodes: dict[str, torch.Tensor]) -> dict[str, float]:
    """Mean of every per-episode statistic, plus ``episodes`` (the count)."""
    if not episodes:
        return {"episodes": 0}
    out = {"episodes": int(next(iter(episodes.values())).numel())}
    out.update({k: float(v.mean()) for k, v in episodes.items()})
    return out
