"""Lock-step MAPPO, the default mode of ``war_train.train`` (``war_train.loop``), top to bottom.

Every agent decides at every step of every world.  One policy per agent group (parameters
shared by the group's agents; ``war_train.policy``) on any action space the env has (Discrete,
MultiDiscrete, Box; ``war_train.distributions``).  Read it like CleanRL's ``ppo.py``; each
update is:

1. **rollout** (``LockstepMode.collect`` -> ``collect``): ``rollout_length`` steps of every
   world, on the env's device with no host synchronization: actions are sampled, handed to the
   env through its trusted path (``env.step(actions, trusted=True)``: they come from the action
   space by construction), episode statistics accumulate on the device (``war_train.metrics``),
   and V(final state) is evaluated from ``info["final_obs"]`` for all worlds (SAME_STEP
   autoreset) and used where the step truncated an episode — on a GPU every step, with no
   host-side branch on ``trunc.any()``; on the CPU, where that question costs nothing, only on
   steps that truncate;
2. **bootstrap** and **advantages** (``LockstepMode.batches``): V of the state after the last
   step; GAE on denormalized values, termination and truncation kept apart, per agent (Tag-v0's
   runners terminate one by one); one ``GroupBatch`` per group (rows, or sequences for a GRU);
3. **learn** (``war_train.learn``, the run loop calls it): the one PPO update every mode uses.
   Agents out of the game (``env.agents_can_leave``: Tag-v0's tagged runners) are masked out
   of every loss and statistic;
4. **row** (``LockstepMode.row``): one host transfer of the update's episode statistics.

Action masks (``env.has_action_mask``: SMAX's unavailable moves and attacks): the rollout reads
``env.action_mask()`` after the reset and ``info["action_mask"]`` after each step (copied: they
are views), samples from the masked distribution (``war_train.distributions``: unavailable
actions are never drawn), stores each step's mask beside its observation, and the PPO update
computes the log-prob ratio and the entropy of the same masked distribution; the checkpoint
holds the current masks.  Without ``has_action_mask`` none of this exists (no buffer, no copy).

Data parallelism (torchrun) is the ``reducer`` (``war_train.distributed``): it says which worlds
this rank steps, draws the sampling noise of every world and keeps its own rows, owns part of
each minibatch, reduces gradients and batch statistics, and gathers checkpoints on rank 0; in
one process it is the identity.  Its straggler modes shorten a rank's rollout
(``begin_rollout``/``stop_collecting``/``end_rollout``).

With ``config.profile`` each row also has ``time/env_s``, ``time/policy_s``, ``time/learn_s``
and ``time/other_s`` (seconds of this update in the env step, the policy's forward passes and
sampling, the PPO update, and the rest up to the logged row: checks, logging); on CUDA profiling
synchronizes at each phase boundary.

Several groups (PredatorPrey: ``adversary`` + ``agent``; Tag: ``tagger`` + ``runner``): every
group has its own actor *and its own critic*; they are trained together on the same rollouts,
each on its own group's rewards.
"""

from __future__ import annotations

import dataclasses
import time

import torch

from war_train import losses
from war_train.config import TrainConfig, config_to_dict
from war_train.metrics import EpisodeStats, metric_columns, summarize
from war_train.policy import CriticState, env_signature, first_action_mask, host_reads_are_free, step_action_mask
from war_train.learn import Batches
from war_train.ppo import GroupBatch, Learner
from war_train.resume import check_lockstep_resume
from war_train.seeding import run_world_seeds
from war_train.stopping import NonFiniteTraining, non_finite
from war_train.storage import RolloutStorage

__all__ = ["LockstepMode", "Rollout", "Carry", "collect", "advantages", "group_batch", "PHASES"]

#: per-update phase times logged with ``config.profile``
PHASES = ("env", "policy", "learn", "other")


# ----------------------------------------------------------------------------- rollout storage
@dataclasses.dataclass
class Rollout:
    """Time-major buffers of one update, reused every update (``cap`` rows; a straggler mode may
    fill fewer): typed views of one ``war_train.storage.RolloutStorage`` (the storage the WAR
    collector's windows use too), per group and, under ``SHARED``, the rows every group shares."""

    obs: dict
    actions: dict
    logp: dict
    values: dict       # critic outputs (normalized)
    rewards: dict
    boot: dict         # V(final state) of every step, denormalized (used where truncated)
    term: dict         # per agent
    trunc: dict
    mask: dict | None  # per agent: in the game at the observation (None: nobody ever leaves)
    state: torch.Tensor | None
    starts: torch.Tensor
    action_mask: dict | None = None   # bool [T, E, n, n_actions]: available at the observation

    #: the storage's entry of the rows every group shares (the state, the episode starts)
    SHARED = "(shared)"

    @classmethod
    def allocate(cls, cap: int, E: int, groups: dict, policies: dict, state_dim: int, masked: bool, device,
                 action_masks: bool = False):
        f, b = torch.float32, torch.bool
        layouts = {}
        for g, s in groups.items():
            p, n = policies[g], s.n_agents
            fields = {"obs": ((E, n, p.frames * s.obs_dim), f), "actions": ((E, n, *p.dist.action_shape), p.dist.action_dtype),
                      "logp": ((E, n), f), "values": ((E, n), f), "rewards": ((E, n), f), "boot": ((E, n), f),
                      "term": ((E, n), b), "trunc": ((E, n), b)}
            if masked:
                fields["mask"] = ((E, n), b)
            if action_masks:
                fields["action_mask"] = ((E, n, p.dist.n), b)
            layouts[g] = fields
        need_state = any(not p.local_critic for p in policies.values())
        layouts[cls.SHARED] = {"starts": ((E,), b), **({"state": ((E, state_dim), f)} if need_state else {})}
        store = RolloutStorage(layouts, device, capacity=cap)
        bufs = {g: store.buffers[g] for g in groups}

        def per_group(name):
            return {g: bufs[g][name] for g in groups}

        return cls(obs=per_group("obs"), actions=per_group("actions"), logp=per_group("logp"),
                   values=per_group("values"), rewards=per_group("rewards"), boot=per_group("boot"),
                   term=per_group("term"), trunc=per_group("trunc"), mask=per_group("mask") if masked else None,
                   state=store.buffers[cls.SHARED].get("state"), starts=store.buffers[cls.SHARED]["starts"],
                   action_mask=per_group("action_mask") if action_masks else None)

    def head(self, T: int) -> "Rollout":
        """The first ``T`` rows (views)."""
        cut = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return Rollout(**{k: (None if v is None else {g: b[:T] for g, b in v.items()} if isinstance(v, dict)
                              else v[:T]) for k, v in cut.items()})


@dataclasses.dataclass
class Carry:
    """What one rollout hands the next: the current observations and episode starts, the actors'
    and critics' carried states (GRU states, frame stacks), who is in the game, and which actions
    are available (``env.has_action_mask``)."""

    obs: dict
    starts: torch.Tensor
    actor_h: dict
    critic_h: dict
    alive: dict | None
    action_mask: dict | None = None


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

    def split(self, phase: str) -> None:
        """Charge the time since the last split to ``phase``."""
        if self.enabled:
            now = self._now()
            self.seconds[phase] += now - self._last
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
                         f"worlds but its env has {env.num_envs}; make it with war_train.envs.make_env(config, dist)")
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


# ----------------------------------------------------------------------------- the phases
@torch.no_grad()
def collect(env, policies, vnorm, buf: Rollout, carry: Carry, stats: EpisodeStats, dist, gen, T: int,
            timer: PhaseTimer, critic: CriticState, bootstrap_truncation: bool = True) -> int:
    """Fill ``buf`` with up to ``T`` steps of every world from ``carry`` (updated in place);
    returns the steps collected (fewer when a straggler mode stops this rank early).  Without
    ``bootstrap_truncation`` no V(final state) is computed (GAE would not use it)."""
    groups = env.groups
    host_checks_free = host_reads_are_free(buf.starts.device)
    # the critics' input: env.state() (see tests), after the world state with critic_input="world"
    state = critic.current(carry.obs) if buf.state is not None else None
    for t in range(T):
        if dist.stop_collecting(t):
            return t
        if state is not None:
            buf.state[t] = state
        buf.starts[t] = carry.starts
        actions = {}
        for g, p in policies.items():
            out, carry.actor_h[g] = p.forward_actor(carry.obs[g], carry.actor_h[g], carry.starts)
            avail = None if carry.action_mask is None else carry.action_mask[g]
            raw, buf.logp[g][t] = dist.sample(p.dist, out, gen, avail)
            buf.actions[g][t] = raw
            if avail is not None:
                buf.action_mask[g][t] = avail
            seen = carry.actor_h[g] if p.frames > 1 else carry.obs[g]   # what the actor saw (stacked frames)
            buf.obs[g][t] = seen
            buf.values[g][t], carry.critic_h[g] = p.value(state, seen, carry.critic_h[g], carry.starts)
            if buf.mask is not None:
                buf.mask[g][t] = carry.alive[g]
            actions[g] = p.dist.to_env(raw)
        timer.split("policy")
        next_obs, rew, term, trunc, info = env.step(actions, trusted=True)
        timer.split("env")
        for g in groups:
            buf.rewards[g][t] = rew[g]
            buf.term[g][t] = term[g]
            buf.trunc[g][t] = trunc[g]
        term_w, trunc_w = env.world_flags()
        done = term_w | trunc_w
        stats.step(rew, info, done)
        # V(final state) of every world (SAME_STEP autoreset: the final observations are in
        # info["final_obs"]); GAE uses it where the step truncated the episode.  On a GPU it is
        # computed every step (asking whether any world truncated would be a host sync); on the
        # CPU that question is free, and most steps truncate nothing.
        if bootstrap_truncation and (not host_checks_free or bool(trunc_w.any())):
            final_obs = info["final_obs"]
            final_state = critic.final(info) if state is not None else None
            no_start = torch.zeros_like(done)
            for g, p in policies.items():
                seen = p.observed(carry.actor_h[g], final_obs[g], no_start)
                v_final, _ = p.value(final_state, seen, carry.critic_h[g], no_start)
                buf.boot[g][t] = vnorm[g].denormalize(v_final)
        carry.obs = {g: next_obs[g].clone() for g in groups}
        if carry.alive is not None:
            carry.alive = {g: a.clone() for g, a in env.alive_mask.items()}
        if carry.action_mask is not None:
            carry.action_mask = step_action_mask(env, info)
        state = critic.current(carry.obs) if state is not None else None
        carry.starts = done
        timer.split("policy")
    return T


def advantages(vnorm, buf: Rollout, g: str, last_value: torch.Tensor, gamma: float, lam: float,
               bootstrap_truncation: bool = True):
    """``(values, returns, advantages)``, denormalized, of group ``g``'s rollout (a truncation
    bootstraps with V(final state), or, without ``bootstrap_truncation``, ends the return)."""
    values = vnorm.denormalize(buf.values[g])
    next_values = torch.cat([values[1:], vnorm.denormalize(last_value).unsqueeze(0)])
    next_values = torch.where(buf.trunc[g], buf.boot[g], next_values)
    term = buf.term[g] if bootstrap_truncation else buf.term[g] | buf.trunc[g]
    adv, returns = losses.gae(buf.rewards[g], values, next_values, term, buf.trunc[g], gamma, lam)
    return values, returns, adv


def group_batch(policy, buf: Rollout, g: str, values, returns, adv, h0) -> GroupBatch:
    """Group ``g``'s ``GroupBatch``: rollout rows flattened (feed-forward) or sequences (GRU)."""
    avail = None if buf.action_mask is None else buf.action_mask[g]
    shape = tuple(buf.starts.shape)   # (T, E)
    if policy.recurrent:
        return GroupBatch(buf.obs[g], buf.state, buf.actions[g], buf.logp[g], buf.values[g], returns, adv, values,
                          None if buf.mask is None else buf.mask[g], buf.starts, h0[0], h0[1], action_mask=avail,
                          shape=shape)

    def flat(x):
        return None if x is None else x.reshape(-1, *x.shape[2:])

    return GroupBatch(flat(buf.obs[g]), flat(buf.state), flat(buf.actions[g]), flat(buf.logp[g]),
                      flat(buf.values[g]), flat(returns), flat(adv), flat(values),
                      None if buf.mask is None else flat(buf.mask[g]), action_mask=flat(avail), shape=shape)



#: row columns the run loop writes, not a mode's ``row``
LOOP_COLUMNS = ("wall_s", "env_steps_per_s")


class LockstepMode:
    """Lock-step MAPPO, a ``war_train.loop.Mode``: every agent decides at every step of every
    world of ``env`` (this rank's worlds under torchrun).  The run loop calls ``collect``,
    ``batches``, the learn step and ``row`` (phases 1-4 of the module docstring) every update,
    checkpoints it (``checkpoint_payload``) and resumes it (``restore``)."""

    def __init__(self, env, cfg: TrainConfig, dist, *, owns_env: bool = False) -> None:
        _check_env(env, cfg, dist)
        dist.setup(cfg, env)
        torch.set_num_threads(cfg.torch_threads)
        self.env, self.cfg, self.dist, self.owns_env = env, cfg, dist, owns_env
        self.device = device = dist.device(cfg.device)
        E = env.num_envs   # this process's worlds (all of them in one process)
        self.groups = groups = dict(env.groups)

        # --- networks, optimizers, value normalizers, the sampling stream
        self.critic = CriticState(env, world=cfg.critic_input == "world")
        self.learner = Learner.build(groups, self.critic.dim, cfg, device, dist.generator_seed(cfg.seed))
        self.policies = self.learner.policies
        self.cap = dist.max_rollout_length(cfg.rollout_length)     # == T, except for WAR per-rank quotas
        self.stats = EpisodeStats(env, capacity=self.cap)

        # --- the env's first observations; rank r's worlds are the run's worlds r·E/K … (their
        # streams derived from the run's seed: different seeds share no world, war_train.seeding)
        world_seeds = run_world_seeds(cfg.seed, dist.worlds(cfg.num_envs), "train")
        obs = {g: o.clone() for g, o in env.reset(seed=world_seeds).items()}
        policies = self.policies
        self.carry = Carry(obs, torch.ones(E, dtype=torch.bool, device=device),   # a new episode begins here
                           {g: p.initial_hidden(E, device)[0] for g, p in policies.items()},
                           {g: p.initial_hidden(E, device)[1] for g, p in policies.items()},
                           {g: a.clone() for g, a in env.alive_mask.items()} if env.agents_can_leave else None,
                           first_action_mask(env))
        self.buffers = Rollout.allocate(self.cap, E, groups, policies, self.critic.dim, self.carry.alive is not None,
                                        device, action_masks=self.carry.action_mask is not None)
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
    def collect(self) -> tuple[Rollout, dict]:
        """``(rollout, h0)``: this update's rows of the buffers and the carried GRU states / frame
        stacks at its start."""
        cfg, dist, env, carry, timer = self.cfg, self.dist, self.env, self.carry, self.timer
        timer.start()
        h0 = {g: (None if carry.actor_h[g] is None else carry.actor_h[g].clone(),
                  None if carry.critic_h[g] is None else carry.critic_h[g].clone()) for g in self.groups}
        # (a straggler mode may change this rank's rollout length: WAR quota, DD-PPO preemption)
        T = collect(env, self.policies, self.learner.vnorm, self.buffers, carry, self.stats, dist,
                    self.learner.generator, dist.begin_rollout(cfg.rollout_length), timer, self.critic,
                    cfg.bootstrap_truncation)
        T, batch_steps = dist.end_rollout(env.num_envs)   # steps this rank collected, env steps of all ranks
        buf = self.buffers if T == self.cap else self.buffers.head(T)
        self.env_steps += batch_steps
        for what, bufs in (("rewards", buf.rewards), ("observations", buf.obs)):
            bad = [g for g in self.groups if not bool(torch.isfinite(bufs[g]).all())]
            if dist.any(bool(bad)):
                raise self.fail(f"the env returned non-finite {what}" + (f" for group {bad[0]!r}" if bad else
                                                                         " on another rank"),
                                "check the scenario (e.g. agents placed at the same position) and its arguments")
        return buf, h0

    # ------------------------------------------------------------------ 2. bootstrap, advantages
    @torch.no_grad()
    def batches(self, data) -> Batches:
        """V of the state after the rollout, then each group's GAE and ``GroupBatch``."""
        buf, h0 = data
        carry, cfg = self.carry, self.cfg
        state = self.critic.current(carry.obs) if buf.state is not None else None
        out = {}
        for g, p in self.policies.items():
            last = p.value(state, p.observed(carry.actor_h[g], carry.obs[g], carry.starts), carry.critic_h[g],
                           carry.starts)[0]
            values, returns, adv = advantages(self.learner.vnorm[g], buf, g, last, cfg.gamma, cfg.gae_lambda,
                                              cfg.bootstrap_truncation)
            out[g] = group_batch(p, buf, g, values, returns, adv, h0[g])
        self.timer.split("policy")
        return Batches(out)

    # ------------------------------------------------------------------ 4. the row
    def row(self, data, batches: Batches, diag: dict, learn_s: float) -> dict:
        """The update's metrics row: counters, finished episodes (every rank's), learning rates,
        the learn step's diagnostics, the reducer's entries and, with ``profile``, phase times."""
        timer, learner = self.timer, self.learner
        timer.split("learn")
        ep = summarize(self.dist.gather_episodes(self.stats.pop()))   # every rank's finished episodes
        row_diag = {**diag, **self.dist.metrics()}
        first = next(iter(self.groups))
        row = {"update": self.update_idx, "env_steps": self.env_steps,
               "agent_steps": self.env_steps * self.n_agents_total,
               "lr": learner.actor_opt[first].param_groups[0]["lr"],
               "critic_lr": learner.critic_opt[first].param_groups[0]["lr"]}
        for c in self.columns:
            if c not in row and c not in LOOP_COLUMNS and not c.startswith("time/"):
                row[c] = ep[c] if c in ep else row_diag.get(c, float("nan"))
        row["episodes"] = int(ep["episodes"])
        timer.split("other")
        row.update(timer.row())
        return row

    def checkpoint_payload(self, wall_s: float) -> dict | None:
        """The checkpoint of the run so far (rank 0: every rank's worlds; other ranks: None)."""
        carry = self.carry
        payload = {
            "config": config_to_dict(self.cfg),
            "env": env_signature(self.env, self.cfg),
            "update": self.update_idx, "env_steps": self.env_steps, "wall_s": wall_s,
            **self.learner.state_dict(),
            "env_state": self.env.get_state(),
            "obs": {g: o.clone() for g, o in carry.obs.items()},
            "starts": carry.starts.clone(),
            "actor_h": {g: h for g, h in carry.actor_h.items() if h is not None},
            "critic_h": {g: h for g, h in carry.critic_h.items() if h is not None},
            "episode_stats": self.stats.state_dict(),
        }
        if carry.alive is not None:
            payload["alive"] = {g: a.clone() for g, a in carry.alive.items()}
        if carry.action_mask is not None:
            payload["action_mask"] = {g: m.clone() for g, m in carry.action_mask.items()}
        return self.dist.gather_checkpoint(payload)   # every rank's worlds, to rank 0

    def restore(self, ckpt: dict, path) -> None:
        """Continue from ``ckpt`` (``checkpoint_payload``'s, read from ``path``) exactly."""
        check_lockstep_resume(ckpt, path, self.cfg, self.env)
        ckpt = self.dist.local_checkpoint(ckpt)   # this rank's worlds (and generator)
        self.learner.load_state_dict(ckpt)
        carry, device = self.carry, self.device
        for g in self.policies:
            if carry.actor_h[g] is not None:    # (GRU states, frame stacks)
                carry.actor_h[g] = ckpt["actor_h"][g].to(device)
            if carry.critic_h[g] is not None:
                carry.critic_h[g] = ckpt["critic_h"][g].to(device)
        self.env.set_state({k: v.to(self.env.torch_device) for k, v in ckpt["env_state"].items()})
        carry.obs = {g: ckpt["obs"][g].to(device).clone() for g in self.groups}
        carry.starts = ckpt["starts"].to(device).clone()
        if carry.alive is not None:
            carry.alive = {g: ckpt["alive"][g].to(device).clone() for g in self.groups}
        if carry.action_mask is not None:
            carry.action_mask = {g: ckpt["action_mask"][g].to(device).clone() for g in self.groups}
        self.stats.load_state_dict(ckpt["episode_stats"])
        self.update_idx, self.env_steps = int(ckpt["update"]), int(ckpt["env_steps"])

    def close(self) -> None:
        if self.owns_env:
            self.env.close()


