"""Data-parallel MAPPO on ``torch.distributed`` (launched by ``torchrun``), with straggler handling.

``war_train.train`` (the lock-step mode, ``war_train.run.lockstep``, and the learn step) calls a small set of hooks on a *context*; this module provides two:

- ``Local``: one process.  Every hook is the identity, so ``train`` computes exactly what it
  computed before distributed training existed.
- ``DataParallel``: one of K ranks (``torchrun --nproc_per_node=K ...``; gloo on CPU, NCCL on
  CUDA).  Rank r steps worlds ``[r·E/K, (r+1)·E/K)`` of the run's ``E = num_envs`` worlds on
  its own device, its worlds reset with the run's streams of worlds ``r·E/K …`` (each world's
  stream a hash of the run seed and its global index, war_train/seeding.py: the ranks' worlds together *are* the worlds of
  one process with E worlds seeded s).

Synchronous mode (``dist_straggler="off"``, the default) makes K ranks compute what one
process with E worlds computes (to float rounding; ``tests/test_distributed.py``):

- actions: every rank draws the uniforms of all E worlds from the same generator state and
  uses its own rows (``sample_categorical``'s inverse CDF), so a world's action does not
  depend on which rank steps it;
- minibatches: every rank draws the same permutation of the global batch and trains on its own
  part of each minibatch; gradients are all-reduced as ``Σ_r n_r·g_r / Σ_r n_r`` (``g_r``: the
  gradient of rank r's mean loss over its ``n_r`` samples), i.e. the gradient of the global
  minibatch mean; gradient-norm clipping sees the reduced gradients;
- advantage normalization, the value normalizer's moments, explained variance and value means
  use sums and counts all-reduced over ranks (full-batch statistics);
- episode statistics are gathered from every rank, loss diagnostics weighted by sample counts;
- rank 0 writes ``metrics.csv``, TensorBoard and ``checkpoint.pt``; a checkpoint holds every
  rank's worlds (gathered in world order) and is the checkpoint one process with E worlds
  writes, so any rank (or a single process, or another K dividing E) resumes from it;
- refusals are decided once (``agree``): a check that refuses the run on any rank (a resume
  whose checkpoint is not this run's, a run folder only rank 0 reads) raises the same error on
  every rank, and no rank is left waiting in a collective.

Straggler modes (ranks of different speed; not bit-reproducible, they depend on timing):

- ``"preempt"`` — DD-PPO (Wijmans et al. 2020): a rank stops collecting once
  ``ceil(dist_sync_frac·K)`` ranks have finished their rollout and it has collected at least
  ``dist_min_frac`` of its own; shortened rollouts are used as they are (GAE bootstraps from
  the last state).  The "done" counter lives in the rendezvous ``TCPStore`` (``add``: no
  collective, the fast ranks never wait for the slow ones to poll).
- ``"war"`` — WAR quotas at rank level (docs/war.md): each rank's cost per world-step is measured
  online (``war_envs.war.CostModel``, EMA), and the next rollout's batch ``E·T`` world-steps is
  split by ``war_envs.war.quotas`` in proportion to the ranks' speeds (rank r collects
  ``T_r ≈ share_r·E·T / E_r`` steps, within ``[dist_min_frac·T, 2·T]``), so that all ranks
  finish together; DD-PPO preemption stays on as a backstop.

Each sample weighs the same in the loss (``dist_rank_weights="samples"``), or each rank keeps
its lock-step share ``E_r/E`` of the weight (``"balanced"``: DD-PPO's per-worker average, with
``war_envs.war.group_balancing_weights`` at rank level).  Logged per update in straggler modes:
``preempted``, ``rollout_steps_min``/``_max``, ``wait_s`` (rank 0's wait for the other ranks
at the end of collection), ``share/rank<r>``, ``share/<group>``, ``ess``, ``ess_frac``,
``staleness_*`` and ``dropped_frac`` (the WAR harness's names).
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import pickle
import time

import numpy as np
import torch

from war_train.learn import losses

__all__ = ["Local", "DataParallel", "STRAGGLER_MODES", "RANK_WEIGHTS", "torchrun_env", "init_from_env",
           "launch", "current", "preemption_due", "rank_quotas", "rank_weights"]

STRAGGLER_MODES = ("off", "preempt", "war")
RANK_WEIGHTS = ("samples", "balanced")
#: a rank's WAR quota is at most this many times the configured rollout length (buffer capacity)
MAX_QUOTA_FACTOR = 2.0
_ENV_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
_ACTIVE: "DataParallel | None" = None


# ----------------------------------------------------------------------------- pure rules
def preemption_due(finished: int, world_size: int, sync_frac: float, collected: int, target: int,
                   min_frac: float) -> bool:
    """DD-PPO's rule: stop collecting when ``finished >= ceil(sync_frac·K)`` ranks have finished
    (at least one) and this rank has collected ``>= ceil(min_frac·target)`` steps (at least 1)."""
    need = max(1, math.ceil(sync_frac * world_size - 1e-9))
    return finished >= need and collected >= max(1, math.ceil(min_frac * target - 1e-9))


def rank_quotas(seconds_per_world_step: list[float], worlds: list[int], rollout_length: int, *,
                min_frac: float, max_factor: float = MAX_QUOTA_FACTOR) -> list[int]:
    """Rollout length of each rank so that all finish together: the batch of ``Σ_r E_r · T``
    world-steps is split by ``war_envs.war.quotas`` (share_r ∝ E_r / τ_r, τ_r = seconds per
    world-step of rank r), then ``T_r = round(N_r / E_r)`` clamped to ``[ceil(min_frac·T),
    floor(max_factor·T)]``.  Invariant to scaling every τ by a constant."""
    from war_envs.war.scheduler import quotas

    keys = [str(r) for r in range(len(worlds))]
    n = quotas(dict(zip(keys, seconds_per_world_step)), dict(zip(keys, worlds)),
               batch_size=sum(worlds) * rollout_length, fragment_length=1, floor=1)
    lo = max(1, math.ceil(min_frac * rollout_length - 1e-9))
    hi = max(lo, math.floor(max_factor * rollout_length))
    return [min(hi, max(lo, round(n[k] / e))) for k, e in zip(keys, worlds)]


def rank_weights(counts: list[int], worlds: list[int], mode: str) -> list[float]:
    """Per-sample weight of each rank's data: 1 (``"samples"``), or ``"balanced"``: rank r keeps
    its lock-step share ``E_r / Σ E`` of the total weight (``group_balancing_weights``)."""
    if mode == "samples":
        return [1.0] * len(counts)
    from war_train.learn.weights import group_balancing_weights

    keys = [str(r) for r in range(len(counts))]
    total = sum(worlds)
    w = group_balancing_weights(dict(zip(keys, counts)), {k: e / total for k, e in zip(keys, worlds)})
    return [w[k] for k in keys]


# ----------------------------------------------------------------------------- one process
class Local:
    """The single-process context: every hook leaves ``train`` exactly as it is."""

    rank = 0
    world_size = 1
    is_main = True
    active = False

    def setup(self, cfg, env) -> None:
        self._T = cfg.rollout_length

    def worlds(self, num_envs: int) -> range:
        """The run's worlds this process steps (all of them)."""
        return range(num_envs)

    def device(self, name: str) -> torch.device:
        return torch.device(name)

    def generator_seed(self, seed: int) -> int:
        return seed

    def own_stream_seed(self, seed: int) -> int:
        """The seed of a sampling stream of this rank's own (the WAR mode's: its workers call the
        policy on their own worlds' decisions); one process: ``seed``."""
        return seed

    def max_rollout_length(self, T: int) -> int:
        return T

    def begin_rollout(self, T: int) -> int:
        self._T = T
        return T

    def stop_collecting(self, t: int) -> bool:
        return False

    def end_rollout(self, num_envs: int) -> tuple[int, int]:
        """``(steps collected by this rank, env steps collected by all ranks)``."""
        return self._T, num_envs * self._T

    def sample(self, head, out: torch.Tensor, generator: torch.Generator, mask: torch.Tensor | None = None):
        """``(actions, log-probs)`` of ``head`` (``war_train.learn.distributions``) for outputs ``out[E, ...]``
        (only available actions where ``mask[E, ..., n]``, an action mask, is given)."""
        return head.draw(out, generator, mask)

    def minibatches(self, T: int, E: int, per_world: bool, n: int, generator: torch.Generator, device,
                    rows: bool = False):
        """Index tensors of the minibatches of one epoch: a permutation of the ``T·E`` rows (or the
        ``E`` worlds) in ``min(n, units)`` parts.  ``rows``: the batch is this rank's own rows
        (WAR's transitions, as many as it collected), not its part of a global ``[T, E]`` rollout."""
        units = E if per_world else T * E
        return torch.randperm(units, generator=generator, device=device).chunk(min(n, units))

    def update_valuenorm(self, vnorm, returns: torch.Tensor) -> None:
        vnorm.update(returns)

    def normalize_advantages(self, advantages: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return losses.normalize_advantages(advantages, mask)

    def explained_variance(self, values: torch.Tensor, returns: torch.Tensor) -> float:
        return losses.explained_variance(values, returns)

    def mean(self, x: torch.Tensor) -> float:
        return float(x.mean())

    def reduce_grads(self, params, count: int) -> None:
        pass

    def share(self, value) -> float:
        return float(value)

    def sum_stats(self, sums: dict[str, float], skip=()) -> dict[str, float]:
        return sums

    def gather_episodes(self, episodes: dict) -> dict:
        return episodes

    def gather(self, obj) -> list:
        """Every rank's ``obj`` (picklable), in rank order, on every rank."""
        return [obj]

    def all_sum(self, values) -> list[float]:
        """Element-wise sums over ranks of a list of numbers (float64)."""
        return [float(x) for x in values]

    def any(self, flag: bool) -> bool:
        return flag

    def columns(self, groups) -> list[str]:
        return []

    def metrics(self) -> dict:
        return {}

    def gather_checkpoint(self, payload: dict) -> dict | None:
        return payload

    def local_checkpoint(self, ckpt: dict) -> dict:
        return ckpt

    def broadcast(self, obj):
        return obj

    def agree(self, fn, *, main_only: bool = False):
        """``fn()``; under torchrun every rank ends alike: its value, or on every rank the same
        exception (``DataParallel.agree``).  One process: ``fn()`` as it is."""
        return fn()

    def barrier(self) -> None:
        pass


# ----------------------------------------------------------------------------- K ranks
class DataParallel(Local):
    """Rank ``rank`` of ``world_size`` in an initialised default process group.

    ``store``: a ``torch.distributed.Store`` shared by the ranks (the rendezvous store; needed
    by the straggler modes).  ``step_cost``: a declared ``war_envs.war.CostProfile`` spent
    before each of this rank's env steps (``"sleep"`` or ``"busy"``) — simulates a slow rank
    in experiments (``benchmarks/dist_straggler.py``).  ``poll_every``: env steps between two
    reads of the preemption counter.
    """

    active = True

    def __init__(self, rank: int, world_size: int, *, local_rank: int = 0, store=None, step_cost=None,
                 poll_every: int = 1) -> None:
        import torch.distributed as dist

        if not dist.is_initialized():
            raise RuntimeError("DataParallel: torch.distributed is not initialised; use "
                               "war_train.learn.distributed.init_from_env() (or launch with torchrun)")
        self.rank, self.world_size, self.local_rank = int(rank), int(world_size), int(local_rank)
        self.is_main = self.rank == 0
        self.store = store
        self.step_cost = step_cost
        if step_cost is not None and step_cost.mode == "virtual":
            raise ValueError("step_cost: a rank's declared cost must be spent for real ('sleep' or 'busy'); "
                             "ranks run in their own processes on wall-clock time")
        self.poll_every = max(1, int(poll_every))
        self.backend = dist.get_backend()
        # where collective buffers live before ``setup`` (NCCL communicates CUDA tensors only)
        self._dev = torch.device("cuda", self.local_rank) if self.backend == "nccl" else torch.device("cpu")
        self._round = 0
        self._metrics: dict = {}
        self.timings = {"collect_s": 0.0, "wait_s": 0.0, "rollouts": 0, "steps": 0, "preempted": 0}
        self.history: list[dict] = []   # per update: every rank's steps, preemption, cost

    # ------------------------------------------------------------------ set-up
    def worlds(self, num_envs: int) -> range:
        if num_envs % self.world_size:
            raise ValueError(f"num_envs: {num_envs} worlds cannot be split evenly over {self.world_size} ranks; "
                             f"use a multiple of {self.world_size} (each rank steps num_envs / ranks worlds)")
        n = num_envs // self.world_size
        return range(self.rank * n, (self.rank + 1) * n)

    def device(self, name: str) -> torch.device:
        """``cuda``/``cuda:N`` -> this rank's GPU ``cuda:LOCAL_RANK``; ``cpu`` stays ``cpu``."""
        dev = torch.device(name)
        return torch.device("cuda", self.local_rank) if dev.type == "cuda" else dev

    def setup(self, cfg, env) -> None:
        from war_envs.war.costs import CostModel

        self.cfg = cfg
        self.mode = cfg.dist_straggler
        self.E_all = cfg.num_envs
        w = self.worlds(cfg.num_envs)
        self.lo, self.hi, self.E = w.start, w.stop, len(w)
        self._dev = self.device(cfg.device)
        self.n_agents = {g: s.n_agents for g, s in env.groups.items()}
        self._T = cfg.rollout_length
        self._cost = CostModel(beta=0.9)
        self._taus: list[float] | None = None
        self._weight = 1.0
        self._share = 1.0
        self._stand_in = False
        if self.mode != "off" and self.store is None:
            raise ValueError(f"dist_straggler={self.mode!r} needs the rendezvous store; initialise with "
                             "war_train.learn.distributed.init_from_env()")
        # every rank starts together (and a checkpoint rank 0 wrote at the end of a previous
        # ``train`` call in this job is on disk before anyone resumes from it)
        self.barrier()

    def generator_seed(self, seed: int) -> int:
        if self.mode == "off":
            return seed  # every rank draws the same numbers (and uses its own rows)
        return self.own_stream_seed(seed)

    def own_stream_seed(self, seed: int) -> int:
        return int(np.random.SeedSequence([seed, self.rank]).generate_state(1)[0])

    # ------------------------------------------------------------------ collectives
    def _sum(self, values) -> list[float]:
        import torch.distributed as dist

        t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=self._dev)
        dist.all_reduce(t)
        return t.tolist()

    def _gather_object(self, obj) -> list:
        import torch.distributed as dist

        out = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def gather(self, obj) -> list:
        return self._gather_object(obj)

    def all_sum(self, values) -> list[float]:
        return self._sum(values)

    def broadcast(self, obj):
        import torch.distributed as dist

        box = [obj if self.is_main else None]
        dist.broadcast_object_list(box, src=0, device=self._dev)
        return box[0]

    def agree(self, fn, *, main_only: bool = False):
        """Decide once whether the run goes on: ``fn()`` runs on every rank (on rank 0 only with
        ``main_only``: a check of what only rank 0 reads or writes, e.g. the run folder), the
        outcomes are shared, and if any rank's ``fn`` raised, every rank raises the exception of
        the lowest such rank: that rank its own, the others a copy of it (the same type and
        one-line message), so no rank waits in a collective for one that has stopped.  Returns
        ``fn()``'s value on this rank (None on the other ranks with ``main_only``).  Every rank
        must call it at the same point (it is a collective), and ``fn`` must not be one."""
        error = value = None
        if self.is_main or not main_only:
            try:
                value = fn()
            except Exception as exc:   # (not KeyboardInterrupt/SystemExit: those stop the rank anyway)
                error = exc
        mine = None if error is None else _portable(error)
        outcomes = [self.broadcast(mine)] if main_only else self._gather_object(mine)
        first = next((r for r, e in enumerate(outcomes) if e is not None), None)
        if first is None:
            return value
        if first == self.rank:   # (with main_only the one outcome is rank 0's)
            raise error
        raise _unpickle(outcomes[first]) from None

    def barrier(self) -> None:
        import torch.distributed as dist

        dist.barrier()

    def any(self, flag: bool) -> bool:
        return self._sum([1.0 if flag else 0.0])[0] > 0

    # ------------------------------------------------------------------ rollout
    def max_rollout_length(self, T: int) -> int:
        return max(T, math.floor(MAX_QUOTA_FACTOR * T)) if self.mode == "war" else T

    def begin_rollout(self, T: int) -> int:
        """This rank's target steps: ``T``, or its WAR quota once every rank's cost is known."""
        self._round += 1
        self._steps, self._preempted = 0, False
        self._key = f"done/{self._round}"
        if self.is_main and self.store is not None and self.mode != "off" and self._round > 1:
            with contextlib.suppress(Exception):  # every rank is past the previous round
                self.store.delete_key(f"done/{self._round - 1}")
        self._T_cfg = T
        target = T
        if self.mode == "war" and self._taus is not None and all(t > 0 and math.isfinite(t) for t in self._taus):
            target = rank_quotas(self._taus, [self.E] * self.world_size, T, min_frac=self.cfg.dist_min_frac)[self.rank]
        self._T = target
        self._t0 = self._t_last = time.perf_counter()
        return target

    def stop_collecting(self, t: int) -> bool:
        """Called before step ``t`` (``t`` steps collected): True to stop here (preempted)."""
        now = time.perf_counter()
        if t > 0:
            self._cost.observe(self.E, now - self._t_last)
        self._t_last = now
        if (self.mode != "off" and t > 0 and t % self.poll_every == 0
                and preemption_due(int(self.store.add(self._key, 0)), self.world_size, self.cfg.dist_sync_frac,
                                   t, self._T, self.cfg.dist_min_frac)):
            self._preempted = True
            return True
        if self.step_cost is not None:
            self.step_cost.spend(self.E)
        self._steps = t + 1
        return False

    def end_rollout(self, num_envs: int) -> tuple[int, int]:
        import torch.distributed as dist

        now = time.perf_counter()
        if self._steps > 0 and not self._preempted:
            self._cost.observe(self.E, now - self._t_last)
        if self.mode != "off" and not self._preempted:
            self.store.add(self._key, 1)
        collect_s = now - self._t0
        tau = self._cost.per_decision(self.E) if self._cost.count else float("nan")
        mine = torch.tensor([self._steps, float(self._preempted), tau, collect_s], dtype=torch.float64,
                            device=self._dev)
        every = [torch.empty_like(mine) for _ in range(self.world_size)]
        dist.all_gather(every, mine)
        wait_s = time.perf_counter() - now
        rows = torch.stack(every).cpu()
        steps = [int(x) for x in rows[:, 0].tolist()]
        self._taus = rows[:, 2].tolist()
        self.timings["collect_s"] += collect_s
        self.timings["wait_s"] += wait_s
        self.timings["rollouts"] += 1
        self.timings["steps"] += self._steps
        self.timings["preempted"] += int(self._preempted)
        self.history.append({"steps": steps, "preempted": [bool(x) for x in rows[:, 1].tolist()],
                             "seconds_per_world_step": self._taus, "collect_s": rows[:, 3].tolist(),
                             "wait_s": wait_s})
        counts = [s * self.E for s in steps]
        weights = rank_weights(counts, [self.E] * self.world_size, self.cfg.dist_rank_weights)
        self._weight = weights[self.rank]
        if self.mode != "off":
            self._metrics = self._rank_metrics(steps, int(rows[:, 1].sum()), counts, weights, wait_s)
        self._T = self._steps
        return self._steps, sum(counts)

    def _rank_metrics(self, steps, preempted, counts, weights, wait_s) -> dict:
        from war_train.learn.weights import staleness_summary

        A = sum(self.n_agents.values())
        N = sum(counts) * A                                   # agent-transitions of the batch
        sw = sum(c * A * w for c, w in zip(counts, weights))
        sw2 = sum(c * A * w * w for c, w in zip(counts, weights))
        ess = sw * sw / sw2 if sw2 > 0 else 0.0
        st = staleness_summary([0], [N])                      # synchronous: every sample is from this version
        out = {"preempted": preempted, "rollout_steps_min": min(steps), "rollout_steps_max": max(steps),
               "wait_s": wait_s, "ess": ess, "ess_frac": ess / N if N else float("nan"),
               "staleness_mean": st["mean"], "staleness_p95": st["p95"], "staleness_max": st["max"],
               "dropped_frac": 0.0}
        out.update({f"share/rank{r}": c / sum(counts) for r, c in enumerate(counts)})
        out.update({f"share/{g}": n / A for g, n in self.n_agents.items()})
        return out

    def columns(self, groups) -> list[str]:
        if self.mode == "off":
            return []
        return (["preempted", "rollout_steps_min", "rollout_steps_max", "wait_s"]
                + [f"share/rank{r}" for r in range(self.world_size)] + [f"share/{g}" for g in groups]
                + ["ess", "ess_frac", "staleness_mean", "staleness_p95", "staleness_max", "dropped_frac"])

    def metrics(self) -> dict:
        return dict(self._metrics)

    def sample(self, head, out: torch.Tensor, generator: torch.Generator, mask: torch.Tensor | None = None):
        if self.mode != "off":
            return head.draw(out, generator, mask)
        # the noise of all E worlds (what one process draws), this rank's rows
        noise = head.noise((self.E_all, *out.shape[1:-1]), generator, out.dtype, out.device)[self.lo:self.hi]
        return head.sample(out, noise, mask)

    # ------------------------------------------------------------------ learning
    def minibatches(self, T: int, E: int, per_world: bool, n: int, generator: torch.Generator, device,
                    rows: bool = False):
        if self.mode != "off" or rows:
            # own rollout (its length may differ between ranks) or own rows (WAR's transitions): own
            # permutation, exactly n parts (every rank takes as many gradient steps)
            units = E if per_world else T * E
            return torch.randperm(units, generator=generator, device=device).tensor_split(n)
        units = self.E_all if per_world else T * self.E_all
        return self._own_parts(torch.randperm(units, generator=generator, device=device).chunk(n), E, per_world)

    def _own_parts(self, chunks, E: int, per_world: bool):
        for mb in chunks:
            if per_world:
                mine = mb[(mb >= self.lo) & (mb < self.hi)] - self.lo
            else:
                t, e = mb // self.E_all, mb % self.E_all
                keep = (e >= self.lo) & (e < self.hi)
                mine = t[keep] * E + (e[keep] - self.lo)
            # no sample of this minibatch here: compute on a stand-in unit (the all-reduce still
            # needs this rank) and contribute nothing (``reduce_grads`` sees count 0)
            self._stand_in = len(mine) == 0
            yield mine[:0].new_zeros(1) if self._stand_in else mine
        self._stand_in = False

    def reduce_grads(self, params, count: int) -> None:
        """Replace each gradient (of this rank's mean loss over ``count`` samples) by the
        gradient of the global minibatch's (weighted) mean: ``Σ_r w_r n_r g_r / Σ_r w_r n_r``."""
        import torch.distributed as dist

        params = list(params)
        if self._stand_in:
            count = 0
        scale = self._weight * count
        # summed in float64: the only rounding left is each rank's own (as in one process)
        parts = []
        for p in params:
            if p.grad is None or count == 0:
                parts.append(torch.zeros(p.numel(), dtype=torch.float64, device=p.device))
            else:
                parts.append(p.grad.reshape(-1).to(torch.float64) * scale)
        flat = torch.cat(parts + [torch.tensor([scale], dtype=torch.float64, device=parts[0].device)])
        dist.all_reduce(flat)
        total = flat[-1].item()
        if not total > 0:
            raise RuntimeError("reduce_grads: no rank had samples in this minibatch")
        flat = flat[:-1] / total
        i = 0
        for p in params:
            g = flat[i:i + p.numel()].view_as(p).to(p.dtype)
            if p.grad is None:
                p.grad = g
            else:
                p.grad.copy_(g)
            i += p.numel()
        self._share = scale / total

    def share(self, value) -> float:
        return self._share * float(value) if self._share > 0 else 0.0

    def sum_stats(self, sums: dict[str, float], skip=()) -> dict[str, float]:
        keys = [k for k in sums if k not in skip]
        out = dict(sums)
        out.update(zip(keys, self._sum([sums[k] for k in keys])))
        return out

    def update_valuenorm(self, vnorm, returns: torch.Tensor) -> None:
        if not vnorm.enabled:
            return
        x = returns.detach().to(torch.float64)   # moments of the union of the ranks' returns
        s, s2, n = self._sum([float(x.sum()), float((x * x).sum()), x.numel()])
        vnorm.update_moments(s / n, s2 / n)

    def normalize_advantages(self, advantages: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """``losses.normalize_advantages`` over the union of the ranks' batches."""
        if mask is not None:
            out = torch.zeros_like(advantages)
            out[mask] = self.normalize_advantages(advantages[mask])
            return out
        x = advantages.detach().to(torch.float64)
        s, s2, n = self._sum([float(x.sum()), float((x * x).sum()), x.numel()])
        mean = s / n
        if n < 2:
            return advantages - torch.tensor(mean, dtype=advantages.dtype, device=advantages.device)
        std = math.sqrt(max(s2 - n * mean * mean, 0.0) / (n - 1))
        mean_t = torch.tensor(mean, dtype=advantages.dtype, device=advantages.device)
        std_t = torch.tensor(std, dtype=advantages.dtype, device=advantages.device)
        return (advantages - mean_t) / (std_t + 1e-5)  # losses.normalize_advantages' eps

    def explained_variance(self, values: torch.Tensor, returns: torch.Tensor) -> float:
        y = returns.detach().flatten().to(torch.float64)
        d = y - values.detach().flatten().to(torch.float64)
        sy, syy, sd, sdd, n = self._sum([y.sum(), (y * y).sum(), d.sum(), (d * d).sum(), y.numel()])
        var = syy / n - (sy / n) ** 2
        if var <= 0:
            return float("nan")
        return float(1.0 - (sdd / n - (sd / n) ** 2) / var)

    def mean(self, x: torch.Tensor) -> float:
        s, n = self._sum([x.detach().to(torch.float64).sum(), x.numel()])
        return s / n

    # ------------------------------------------------------------------ logs and checkpoints
    def gather_episodes(self, episodes: dict) -> dict:
        parts = [p for p in self._gather_object({k: v.cpu() for k, v in episodes.items()}) if p]
        if not parts:
            return {}
        return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}

    #: checkpoint entries with the world axis first (the last two only where the env has them)
    _PER_WORLD = ("env_state", "obs", "starts", "actor_h", "critic_h", "episode_stats", "alive", "action_mask")

    def gather_checkpoint(self, payload: dict) -> dict | None:
        """Every rank's worlds concatenated in world order (rank 0 gets the payload, others None)."""
        mine = {k: _map_tensors(payload[k], lambda t: t.detach().cpu()) for k in self._PER_WORLD if k in payload}
        mine["generator"] = payload["generator"]
        if "planner" in payload:   # (each rank's planner has a stream of its own)
            mine["planner"] = payload["planner"]
        parts = self._gather_object(mine)
        if not self.is_main:
            return None
        out = dict(payload)
        for k in self._PER_WORLD:
            if k in payload:
                out[k] = _concat([p[k] for p in parts])
        out["distributed"] = {"world_size": self.world_size, "straggler": self.mode,
                              "generators": [p["generator"] for p in parts],
                              **({"planners": [p["planner"] for p in parts]} if "planner" in payload else {})}
        return out

    def local_checkpoint(self, ckpt: dict) -> dict:
        """This rank's worlds (and generator) of a checkpoint written by any number of ranks."""
        out = dict(ckpt)
        for k in self._PER_WORLD:
            if k in ckpt:
                out[k] = _map_tensors(ckpt[k], lambda t: t[self.lo:self.hi])
        # a planner's stream continues on as many ranks as wrote it; on another number of ranks
        # each rank's planner keeps the stream it starts with (its worlds are other ones)
        planners = ckpt.get("distributed", {}).get("planners")
        out.pop("planner", None)
        if planners is not None and len(planners) == self.world_size:
            out["planner"] = planners[self.rank]
        if self.mode != "off":
            saved = ckpt.get("distributed", {})
            if saved.get("world_size") != self.world_size:
                raise ValueError(f"resume: dist_straggler={self.mode!r} resumes exactly only with the world size "
                                 f"that wrote the checkpoint ({saved.get('world_size', 1)} ranks), not "
                                 f"{self.world_size}")
            out["generator"] = saved["generators"][self.rank]
        return out


def _portable(exc: Exception) -> bytes:
    """``exc`` pickled for the other ranks (without its traceback); one that does not survive
    pickling travels as its nearest built-in base class (a ``ValueError`` subclass as a
    ``ValueError``) with the same message."""
    for kind in (None, *type(exc).__mro__):
        try:
            data = pickle.dumps(exc if kind is None else kind(str(exc)))
            copy = pickle.loads(data)
        except Exception:
            continue
        if (kind is None or kind.__module__ == "builtins") and str(copy) == str(exc):
            return data
    return pickle.dumps(RuntimeError(str(exc)))


def _unpickle(data: bytes) -> Exception:
    try:
        return pickle.loads(data)
    except Exception as exc:   # (a type this rank cannot import)
        return RuntimeError(f"another rank stopped the run with an error this rank cannot read ({exc})")


def _map_tensors(obj, fn):
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: _map_tensors(v, fn) for k, v in obj.items()}
    return obj


def _concat(parts: list):
    first = parts[0]
    if isinstance(first, torch.Tensor):
        return torch.cat(parts)
    if isinstance(first, dict):
        return {k: _concat([p[k] for p in parts]) for k in first}
    return first


# ----------------------------------------------------------------------------- launching
def torchrun_env() -> dict | None:
    """``{rank, world_size, local_rank, master_addr, master_port}`` from the variables torchrun
    sets (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``), or None
    when ``WORLD_SIZE`` is not set.  A partial set raises ``ValueError`` naming what is missing."""
    if "WORLD_SIZE" not in os.environ:
        return None
    missing = [k for k in _ENV_VARS if not os.environ.get(k)]
    if missing:
        raise ValueError(f"torch.distributed environment: WORLD_SIZE is set but {missing} are not; launch with "
                         "torchrun (which sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)")
    try:
        env = {"rank": int(os.environ["RANK"]), "world_size": int(os.environ["WORLD_SIZE"]),
               "local_rank": int(os.environ["LOCAL_RANK"]), "master_addr": os.environ["MASTER_ADDR"],
               "master_port": int(os.environ["MASTER_PORT"])}
    except ValueError as exc:
        raise ValueError(f"torch.distributed environment: expected integer RANK, WORLD_SIZE, LOCAL_RANK and "
                         f"MASTER_PORT ({exc})") from None
    if not 0 <= env["rank"] < env["world_size"]:
        raise ValueError(f"torch.distributed environment: RANK={env['rank']} is not in [0, WORLD_SIZE={env['world_size']})")
    return env


def init_from_env(device: str = "cpu", *, backend: str | None = None, step_cost=None,
                  timeout_s: float = 1800.0) -> Local:
    """The context of this process: ``Local()`` outside torchrun (or with one rank), else a
    ``DataParallel`` after joining the process group (backend ``gloo`` for CPU, ``nccl`` for
    CUDA devices unless ``backend`` says otherwise; a CUDA rank uses ``cuda:LOCAL_RANK``)."""
    global _ACTIVE
    env = torchrun_env()
    if env is None or env["world_size"] == 1:
        return Local()
    if _ACTIVE is not None:
        return _ACTIVE
    import torch.distributed as dist

    cuda = torch.device(device).type == "cuda"
    backend = backend or ("nccl" if cuda else "gloo")
    if cuda:
        if not torch.cuda.is_available() or env["local_rank"] >= torch.cuda.device_count():
            raise ValueError(f"device: rank {env['rank']} needs cuda:{env['local_rank']} but "
                             f"{torch.cuda.device_count()} CUDA devices are visible")
        torch.cuda.set_device(env["local_rank"])
    # torch._dynamo (which torch.optim imports) takes references to the default process group
    # that exists when it is first imported, so destroy_process_group() would leave the group and
    # its gloo threads alive into interpreter exit, where a thread still releasing the tensors of
    # the last collective aborts the process ("terminate called without an active exception")
    # after the run has ended; imported before the group exists, it keeps none.
    import torch._dynamo as _  # noqa: F401  (``import torch._dynamo`` would make ``torch`` local here)

    timeout = datetime.timedelta(seconds=timeout_s)
    store, rank, world_size = next(dist.rendezvous("env://", timeout=timeout))
    dist.init_process_group(backend, store=store, rank=rank, world_size=world_size, timeout=timeout)
    _ACTIVE = DataParallel(rank, world_size, local_rank=env["local_rank"],
                           store=dist.PrefixStore("war_train/", store), step_cost=step_cost)
    return _ACTIVE


@contextlib.contextmanager
def launch(device: str = "cpu", **kwargs):
    """``with launch(cfg.device) as ctx:`` — ``init_from_env``, and leave the process group at
    the end if this call joined it."""
    global _ACTIVE
    import torch.distributed as dist

    joined = _ACTIVE is None and not (dist.is_available() and dist.is_initialized())
    ctx = init_from_env(device, **kwargs)
    try:
        yield ctx
    finally:
        if joined and ctx.active:
            _ACTIVE = None
            dist.destroy_process_group()


def current() -> Local:
    """The active context: the one ``init_from_env`` made, a ``DataParallel`` over a default
    process group someone else initialised (with more than one rank), else ``Local()``."""
    if _ACTIVE is not None:
        return _ACTIVE
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        from torch.distributed.distributed_c10d import _get_default_store

        local_rank = int(os.environ.get("LOCAL_RANK", "0") or 0)
        return DataParallel(dist.get_rank(), dist.get_world_size(), local_rank=local_rank,
                            store=dist.PrefixStore("war_train/", _get_default_store()))
    return Local()
