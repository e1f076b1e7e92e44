"""Lock-step MAPPO, the default mode of ``war_train.train`` (``war_train.run.loop``), top to bottom.

Every agent decides at every step of every world: lock-step is the *every-step schedule* of the
one rollout collector (``war_train.rollout.collector.Collector``, the collector the WAR mode uses
with its own schedules), so every per-step feature (action masks, agents leaving, frame stacks,
GRUs, the critics' inputs, truncation bootstraps) is written once, there.  One policy per agent
group (parameters shared by the group's agents; ``war_train.learn.policy``) on any action space the
env has (Discrete, MultiDiscrete, Box; ``war_train.learn.distributions``).  Each update is:

1. **rollout** (``LockstepMode.collect``): one window of ``rollout_length`` steps of every world,
   on the env's device; on a GPU with no host synchronization (the collector's branch-free path,
   ``tests/test_host_sync.py``): actions are sampled (from the available actions where the env
   has masks), handed to the env through its trusted path, episode statistics accumulate on the
   device (``war_train.rollout.metrics``), V(final state) bootstraps truncated episodes
   (``info["final_obs"]``, SAME_STEP autoreset), and the window's end is bootstrapped with V of
   the state after its last step;
2. **advantages** (``LockstepMode.batches``): ``war_train.rollout.batches.group_batch``, the WAR mode's
   too: SMDP GAE with every interval 1 (GAE, bit for bit) on denormalized values, termination and
   truncation kept apart, per agent (Tag-v0's runners terminate one by one); one ``GroupBatch``
   per group (rows, or sequences for a GRU);
3. **learn** (``war_train.learn.step``, the run loop calls it): the one PPO update every mode uses.
   Agents out of the game (``env.agents_can_leave``: Tag-v0's tagged runners) are masked out
   of every loss and statistic;
4. **row** (``LockstepMode.row``): one host transfer of the update's episode statistics.

Data parallelism (torchrun) is the ``reducer`` (``war_train.learn.distributed``): it says which worlds
this rank steps, draws the sampling noise of every world and keeps its own rows (the behaviour
policy's ``sample``), owns part of each minibatch, reduces gradients and batch statistics, and
gathers checkpoints on rank 0; in one process it is the identity.  Its straggler modes shorten a
rank's rollout (``begin_rollout``/``stop_collecting``/``end_rollout``).

With ``config.profile`` each row also has ``time/env_s``, ``time/policy_s``, ``time/learn_s``
and ``time/other_s`` (seconds of this update in the env step, the rest of the rollout — the
policy's forward passes, sampling, bookkeeping —, the PPO update, and the rest up to the logged
row); on CUDA profiling synchronizes at each phase boundary (the env step's own time is then its
launches').

Several groups (PredatorPrey: ``adversary`` + ``agent``; Tag: ``tagger`` + ``runner``): every
group has its own actor *and its own critic*; they are trained together on the same rollouts,
each on its own group's rewards.
"""

from __future__ import annotations

import time

import torch

from war_train.rollout.batches import group_batch
from war_train.config import TrainConfig, config_to_dict
from war_train.learn.step import Batches
from war_train.rollout.metrics import EpisodeStats, counters, finished_episodes, metric_columns
from war_train.learn.policy import CriticState, env_signature
from war_train.learn.ppo import Learner
from war_train.seeding import run_world_seeds, stream_seed
from war_train.stopping import NonFiniteTraining, non_finite
from war_train.rollout.collector import BehaviourPolicy, Collector, WindowBatch
from war_train.plan.planner import build_planner

__all__ = ["LockstepMode", "PHASES"]

#: per-update phase times logged with ``config.profile``
PHASES = ("env", "policy", "learn", "other")


class PhaseTimer:
    """Seconds per phase of an update (``config.profile``); free when disabled."""

    def __init__(self, enabled: bool, device: torch.device) -> None:
        self.enabled = enabled
        self.sync = enabled and device.type == "cuda"
        self.device = device
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self._last = 0.0

    def start(self) -> None:
        if self.enabled:
            self.seconds = dict.fromkeys(PHASES, 0.0)
            self._last = self._now()

    def split(self, phase: str, env_s: float = 0.0) -> None:
        """Charge the time since the last split to ``phase`` (``env_s`` of it, measured inside, to
        the env step)."""
        if self.enabled:
            now = self._now()
            self.seconds[phase] += now - self._last - env_s
            self.seconds["env"] += env_s
            self._last = now

    def _now(self) -> float:
        if self.sync:
            torch.cuda.synchronize(self.device)
        return time.perf_counter()

    def row(self) -> dict:
        return {f"time/{k}_s": v for k, v in self.seconds.items()} if self.enabled else {}


# ----------------------------------------------------------------------------- checks
def _check_env(env, cfg: TrainConfig, dist) -> None:
    n = len(dist.worlds(cfg.num_envs))
    if env.num_envs != n and dist.active:
        raise ValueError(f"num_envs: rank {dist.rank} of {dist.world_size} steps {n} of the config's {cfg.num_envs} "
                         f"worlds but its env has {env.num_envs}; make it with war_train.rollout.envs.make_env(config, dist)")
    if env.num_envs != cfg.num_envs and not dist.active:
        raise ValueError(f"num_envs: the env has {env.num_envs} worlds but config.num_envs is {cfg.num_envs}; "
                         f"make the env with num_envs={cfg.num_envs} (or set config.num_envs={env.num_envs})")
    mode = getattr(env, "autoreset_mode", None)
    if mode is None or mode.name != "SAME_STEP":
        raise ValueError(f"autoreset_mode: war_train needs SAME_STEP autoreset (the batch API default), "
                         f"got {getattr(mode, 'name', mode)}")
    unknown = sorted(set(cfg.group_lr_scale) - set(env.groups))
    if unknown:
        raise ValueError(f"group_lr_scale: unknown groups {unknown}; the env's groups are {list(env.groups)}")
    env_dev = getattr(env, "torch_device", torch.device("cpu"))
    if dist.device(cfg.device) != env_dev:
        raise ValueError(f"device: the env runs on {env_dev} but config.device is {cfg.device!r}; use the same device")


#: row columns the run loop writes, not a mode's ``row``
LOOP_COLUMNS = ("wall_s", "env_steps_per_s")


class LockstepMode:
    """Lock-step MAPPO, a ``war_train.run.loop.Mode``: every agent decides at every step of every
    world of ``env`` (this rank's worlds under torchrun).  The run loop calls ``collect``,
    ``batches``, the learn step and ``row`` (phases 1-4 of the module docstring) every update,
    checkpoints it (``checkpoint_payload``) and resumes it (``restore``)."""

    def __init__(self, env, cfg: TrainConfig, dist, *, owns_env: bool = False) -> None:
        dist.agree(lambda: _check_env(env, cfg, dist))   # (under torchrun: every rank exits with the same error)
        dist.setup(cfg, env)
        torch.set_num_threads(cfg.torch_threads)
        self.env, self.cfg, self.dist, self.owns_env = env, cfg, dist, owns_env
        self.war = None   # (no WAR section: the every-step schedule)
        self.device = device = dist.device(cfg.device)
        self.groups = groups = dict(env.groups)

        # --- networks, optimizers, value normalizers, the sampling stream
        state_dim = CriticState.of(env, cfg).dim
        self.learner = Learner.build(groups, state_dim, cfg, device, dist.generator_seed(cfg.seed))
        self.policies = policies = self.learner.policies
        self.cap = dist.max_rollout_length(cfg.rollout_length)     # == T, except for WAR per-rank quotas
        self.stats = EpisodeStats(env, capacity=self.cap)

        # --- the one collector under the every-step schedule; it resets the env: rank r's worlds
        # are the run's worlds r·E/K … (their streams derived from the run's seed: different seeds
        # share no world, war_train.seeding)
        worlds = dist.worlds(cfg.num_envs)
        # a planning group decides by search in worlds of its own (its stream: the run's "plan"
        # stream of this rank's first world)
        self.planner = build_planner(cfg, env, policies, self.learner.vnorm, stream_seed(cfg.seed, worlds.start, "plan"))
        planners = {cfg.planner: self.planner} if self.planner is not None else None
        behaviour = BehaviourPolicy(policies, self.learner.generator, sample=dist.sample, planners=planners)
        self.collector = Collector(env, behaviour, gamma=cfg.gamma, world_offset=worlds.start, stats=self.stats,
                                   seed=run_world_seeds(cfg.seed, worlds, "train"), env_time=False,
                                   frames={g: p.frames for g, p in policies.items()},
                                   hidden_size={g: p.hidden_size for g, p in policies.items() if p.recurrent},
                                   window_steps=self.cap, critic_input=cfg.critic_input,
                                   critic_time=cfg.critic_time,
                                   bootstrap_truncation=cfg.bootstrap_truncation, direct_rows=True)
        self.update_idx, self.env_steps = 0, 0
        self.checkpoint = None   # the last complete checkpoint (the resumed one, then each one written)
        self.timer = PhaseTimer(cfg.profile, device)
        self.n_agents_total = sum(s.n_agents for s in groups.values())

        # --- what the run loop logs
        self.columns = metric_columns(env, groups) + dist.columns(groups) + (
            [f"time/{p}_s" for p in PHASES] if cfg.profile else [])
        self.label, self.progress_key = env.env_id or "train", env.progress_metric
        self.run_files: dict[str, str] = {}    # extra files of the run folder
        self.side_logs: dict[str, tuple[str, str]] = {}   # row entries logged to JSON-lines files
        self.learn_generator = None   # (the learner's)

    def fail(self, what: str, hint: str) -> NonFiniteTraining:
        return non_finite(self.update_idx, self.checkpoint, what, hint)

    # ------------------------------------------------------------------ 1. rollout
    def collect(self) -> WindowBatch:
        """This update's window: ``rollout_length`` steps of every world (fewer where a straggler
        mode stops this rank early), its end bootstrapped."""
        cfg, dist, c, timer = self.cfg, self.dist, self.collector, self.timer
        timer.start()
        # (a straggler mode may change this rank's rollout length: WAR quota, DD-PPO preemption)
        T = dist.begin_rollout(cfg.rollout_length)
        c.begin_window(self.update_idx)
        for t in range(T):
            if dist.stop_collecting(t):
                break
            c.step()
        window = c.end_window("steps", copy=False)   # (learned from before the next window)
        timer.split("policy", window.env_seconds)
        _, batch_steps = dist.end_rollout(self.env.num_envs)   # env steps of all ranks
        self.env_steps += batch_steps
        for what, field in (("rewards", "rewards"), ("observations", "obs")):
            bad = [g for g, b in window.groups.items() if not bool(torch.isfinite(getattr(b, field)).all())]
            if dist.any(bool(bad)):
                raise self.fail(f"the env returned non-finite {what}" + (f" for group {bad[0]!r}" if bad else
                                                                         " on another rank"),
                                "check the scenario (e.g. agents placed at the same position) and its arguments")
        return window

    # ------------------------------------------------------------------ 2. advantages
    @torch.no_grad()
    def batches(self, window: WindowBatch) -> Batches:
        """Each group's advantages and ``GroupBatch`` (``war_train.rollout.batches``, as the WAR mode's)."""
        cfg, env, out = self.cfg, self.env, {}
        for g, p in self.policies.items():
            b = window.groups[g]
            out[g], _, _ = group_batch(p, self.learner.vnorm[g], b, b.valid, torch.zeros_like(b.version),
                                       gamma=cfg.gamma, lam=cfg.gae_lambda,
                                       bootstrap_truncation=cfg.bootstrap_truncation, vtrace="never",
                                       masked=env.has_action_mask, can_leave=env.agents_can_leave, rollout=True)
        self.timer.split("policy")
        return Batches(out)

    # ------------------------------------------------------------------ 4. the row
    def row(self, data, batches: Batches, diag: dict, learn_s: float) -> dict:
        """The update's metrics row: counters, finished episodes (every rank's), learning rates,
        the learn step's diagnostics, the reducer's entries and, with ``profile``, phase times."""
        timer = self.timer
        timer.split("learn")
        ep = finished_episodes([self.stats], self.dist)   # every rank's finished episodes
        row_diag = {**diag, **self.dist.metrics()}
        row = counters(self.update_idx, self.env_steps, self.n_agents_total, self.learner)
        for c in self.columns:
            if c not in row and c not in LOOP_COLUMNS and not c.startswith("time/"):
                row[c] = ep[c] if c in ep else row_diag.get(c, float("nan"))
        row["episodes"] = int(ep["episodes"])
        timer.split("other")
        row.update(timer.row())
        return row

    def checkpoint_payload(self, wall_s: float) -> dict | None:
        """The checkpoint of the run so far (rank 0: every rank's worlds; other ranks: None): the
        learner and the collector's boundary state (per world: env state, observations, episode
        starts, carried actor/critic states, alive and action masks)."""
        payload = {
            "config": config_to_dict(self.cfg),
            "env": env_signature(self.env, self.cfg),
            "update": self.update_idx, "env_steps": self.env_steps, "wall_s": wall_s,
            **self.learner.state_dict(),
            **self.collector.boundary_state(),
            "episode_stats": self.stats.state_dict(),
            **({"planner": self.planner.state_dict()} if self.planner is not None else {}),
        }
        return self.dist.gather_checkpoint(payload)   # every rank's worlds, to rank 0

    def restore(self, ckpt: dict, path) -> None:
        """Continue from ``ckpt`` (``checkpoint_payload``'s, read from ``path``; the run loop has
        checked it is this run's: ``war_train.run.resume.check_resume``) exactly."""
        ckpt = self.dist.local_checkpoint(ckpt)   # this rank's worlds (and generator)
        self.learner.load_state_dict(ckpt)
        self.collector.load_boundary_state(ckpt)
        self.stats.load_state_dict(ckpt["episode_stats"])
        if self.planner is not None and "planner" in ckpt:   # (see DataParallel.local_checkpoint)
            self.planner.load_state_dict(ckpt["planner"])
        self.update_idx, self.env_steps = int(ckpt["update"]), int(ckpt["env_steps"])

    def close(self) -> None:
        self.collector.close()
        if self.planner is not None:
            self.planner.close()
        if self.owns_env:
            self.env.close()


