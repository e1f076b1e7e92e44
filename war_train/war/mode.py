"""MAPPO on WAR batches, and the baselines of the same harness (docs/war.md, "Learning on WAR batches"):
the WAR mode of ``war_train.train`` (``train(env, config, war=WarConfig(...))``), a
``war_train.run.loop.Mode`` beside lock-step's.

``WarMode(config, war)`` owns the learner (``ppo.Learner``, built as lock-step builds it: one
actor and one centralized critic per group), the rollout workers
(``war_train.rollout.collector.Collector``, one per shard of the worlds) and a modelled clock.  In each
update of the run loop:

1. ``collect`` collects one round (``war_train.war.rounds.collect_round``): a window per
   worker, lock-step for ``sync``/``ddppo``/``overlap``/``steal`` (idle workers take over a
   straggler's worlds), workload-aware for ``war``;
2. ``batches``, per group: drops transitions more than ``max_lag`` versions old, computes SMDP
   GAE (``losses.smdp_gae``; V-trace when some transition is more than one version old), and
   hands the group's valid transitions to the learn step (``war_train.learn.step``: the PPO update
   lock-step uses, same losses, same minibatch order from the same generator), with the
   group-balancing weights for a shared actor;
3. ``overlap``: the round collected in step 1 is learned one update later (the behaviour
   policy is exactly one version behind, as in HTS-RL), and the update's duration is
   max(collection, learning);
4. ``row`` distills the drafts, re-plans the quotas from the online cost estimates (``war``)
   and writes the metrics row.

**Under torchrun** (``dist``: a ``war_train.learn.distributed.DataParallel``) each rank runs its own
workers over its worlds (``dist.worlds``), with its own clocks, cost estimates, schedule and
sampling stream; the counts that set the group weights, the batch statistics and the learn
step's reductions are over every rank's transitions (docs/distributed.md, "WAR modes under
torchrun"), and ``dist_straggler`` stops or sizes each rank's window.

With equal costs (every group deciding at every step) and one worker, the batches, losses and
gradients are lock-step MAPPO's (``tests/test_war_equivalence.py``), GRU policies included: a
recurrent group's GRUs step at its decisions only, and learn from each world's sequence of them
(``war_train.rollout.sequences``).

**Time.**  ``model_s`` is the run's modelled wall-clock: for each update, the round's duration on
the workers' clocks (declared inference under the resource model + measured env-step time;
``cost_mode="virtual"``), or its measured duration (``sleep``/``busy``: the costs are really
spent), plus the measured learning time (overlapped with collection for ``overlap``).
``wall_s`` stays the real elapsed time of this process.

**Checkpoints.**  ``WarMode.state_dict()`` is everything the rest of a run depends on between
two updates (learner, workers' worlds and carried fragments, clocks, cost estimates, schedule,
drafts, counters, overlap's round in flight); ``war_train.train(..., war=...)``, whose run loop
this trainer is the WAR mode of, writes it every ``checkpoint_every`` updates, at the end and
when stopped, and resumes from it — exactly with
``cost_mode="virtual"``, apart from the measured timings (docs/war.md, "Checkpoints and
resuming").

Group balancing: every group has its own actor, critic and optimizer and its loss is the mean
over its own transitions, so each group keeps its lock-step weight whatever its data share
(``weights.weighted_group_loss`` with ``group_balancing_weights`` is that objective); the
weights, times the importance ratios of stale or draft samples, give the reported Kish ESS.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
import time

import gymnasium
import torch

from war_envs.war import (CostModel, CostProfile, InferenceCost, Schedule, VirtualClock, WallClock,
                          every_step_schedule, plan, with_episode_starts)
from war_train.learn import distributed
from war_train.rollout.batches import group_batch
from war_train.config import TrainConfig, config_to_dict
from war_train.learn.distributions import Categorical
from war_train.rollout.envs import make_guest_env, make_worker_envs
from war_train.plan.planner import build_planner, trainer_model
from war_train.learn.step import Batches
from war_train.rollout.metrics import EpisodeStats, counters, finished_episodes, metric_columns
from war_train.learn.networks import Actor
from war_train.learn.policy import CriticState, env_signature
from war_train.learn.ppo import Learner
from war_train.presets import DECLARED_WAR_COSTS
from war_train.seeding import run_world_seeds, stream_seed
from war_train.stopping import non_finite
from war_train.rollout.collector import (DRAFT, BehaviourPolicy, Collector, GroupTransitions, Trigger, WindowBatch,
                                    concat_workers)
from war_train.config import WarConfig, war_config_to_dict
from war_train.war.rounds import Round, collect_round
from war_train.learn.weights import group_balancing_weights, kish_ess, staleness_summary

__all__ = ["WarMode", "war_columns"]


def war_columns(groups, lanes) -> list[str]:
    cols = ["model_s", "collect_s", "learn_s", "batch_s", "env_s", "window_steps", "transitions",
            "model_env_steps_per_s", "agent_transitions_per_s"]
    cols += [f"decisions_per_s/{lane}" for lane in lanes] + [f"calls_per_step/{lane}" for lane in lanes]
    cols += [f"share/{g}" for g in groups] + [f"interval/{g}" for g in groups] + [f"quota/{g}" for g in groups]
    cols += [f"tau_ms/{lane}" for lane in lanes]
    cols += ["ess", "ess_frac", "staleness_mean", "staleness_p95", "staleness_max", "dropped_frac", "preempted",
             "vtrace", "draft_frac"]
    return cols


# ----------------------------------------------------------------------------- trainer
class WarMode:
    """MAPPO with the WAR harness; ``update()`` runs one round and returns its metrics row.
    ``dist``: the reducer (default ``distributed.Local()``: one process)."""

    def __init__(self, config: TrainConfig, war: WarConfig, envs: list | None = None, dist=None) -> None:
        self.cfg = cfg = config.validate()
        self.war = war = war.validate()
        self.dist = dist = distributed.Local() if dist is None else dist
        dist.agree(lambda: _refuse_unsupported(cfg, war, dist))   # (every rank exits with the same error)
        torch.set_num_threads(cfg.torch_threads)
        self.device = dist.device(cfg.device)
        #: this rank's worlds among the run's (all of them in one process)
        self.worlds = dist.worlds(cfg.num_envs)
        self.envs = envs if envs is not None else make_worker_envs(cfg, war.workers, dist)
        self._own_envs = envs is None
        try:
            dist.agree(self._check_envs)
        except ValueError:
            self.close()
            raise
        env0 = self.envs[0]
        self.groups = dict(env0.groups)
        self.n_agents = {g: s.n_agents for g, s in self.groups.items()}
        self.E_worker = env0.num_envs
        self.real = war.cost_mode != "virtual"
        dist.setup(cfg, env0)

        # --- networks, optimizers, value normalizers, the sampling stream (as lock-step's; under
        # torchrun the networks start equal on every rank, each rank samples from a stream of its own)
        state_dim = CriticState.of(env0, cfg).dim
        self.learner = Learner.build(self.groups, state_dim, cfg, self.device, dist.own_stream_seed(cfg.seed))
        self.policies, self.gen = self.learner.policies, self.learner.generator
        self.gen_learn = self.gen  # a separate stream only when learning runs in its own thread
        self._build_costs()
        self._build_drafts()
        self.lanes = {g: n for g, n in self.n_agents.items()}
        self.lanes.update({g + DRAFT: self.n_agents[g] for g in self.drafts})
        self._build_workers()

        self.version = 0          # updates applied
        self.update_idx = 0
        self.env_steps = 0
        self.model_s = 0.0
        self._in_flight = None    # overlap: the round collected but not yet learned
        self._next = None         # overlap: the round collected in this update (its thread, cost_mode="real")
        self.checkpoint = None    # the last complete checkpoint (the run loop sets it; errors name it)

        # --- what the run loop (war_train.run.loop) logs
        self.columns = metric_columns(env0, self.groups)
        self.columns += [c for c in war_columns(self.groups, self.lanes) if c not in self.columns]
        if dist.active and cfg.dist_straggler != "off":
            self.columns += ["rollout_steps_min", "rollout_steps_max", "wait_s"]
            self.columns += [f"share/rank{r}" for r in range(dist.world_size)]
        self.label, self.progress_key = f"{cfg.scenario} [{war.arm}]", env0.progress_metric
        self.run_files = {"war_config.json": json.dumps(war_config_to_dict(war), indent=2) + "\n"}
        self.side_logs = {"staleness_hist": ("staleness.jsonl", "hist")}   # per update: lag -> transitions

    @property
    def env(self):
        """The first worker's env (what checkpoints record the signature of)."""
        return self.envs[0]

    @property
    def learn_generator(self) -> torch.Generator:
        """The minibatch stream of the learn step: the run's, or a learner thread's own."""
        return self.gen_learn

    # -------------------------------------------------------------- set-up
    def _check_envs(self) -> None:
        war, cfg = self.war, self.cfg
        if len(self.envs) != war.workers:
            raise ValueError(f"envs: expected {war.workers} worker envs, got {len(self.envs)}")
        if sum(e.num_envs for e in self.envs) != len(self.worlds):
            mine = f", {len(self.worlds)} of them on this rank" if self.dist.active else ""
            raise ValueError(f"num_envs: the worker envs hold {sum(e.num_envs for e in self.envs)} worlds, "
                             f"config.num_envs is {cfg.num_envs}{mine}")

    def _build_costs(self) -> None:
        """Declared profiles (or None: measured), the schedule and the online estimates per group."""
        war, cfg = self.war, self.cfg
        table = war.costs or DECLARED_WAR_COSTS.get(cfg.scenario, {})
        unknown = set(table) - set(self.groups)
        if unknown:
            raise ValueError(f"costs: unknown groups {sorted(unknown)}; groups: {list(self.groups)}")
        if war.cost_mode == "real":
            table = {}
        self.profiles = {g: (CostProfile(mode=war.cost_mode, **table[g]) if g in table else None) for g in self.groups}
        self.schedule = every_step_schedule(self.groups)
        self.cost_models = {g: CostModel(beta=war.cost_beta, prior=self.profiles[g]) for g in self.groups}
        self.episode_length = getattr(self.envs[0], "max_cycles", None)
        if war.arm == "war":
            self.schedule = self._plan()

    def _build_drafts(self) -> None:
        """``fill="draft"``: a small actor per slow group, its optimizer, cost profile and model."""
        war, cfg = self.war, self.cfg
        self.drafts, self.draft_opt = {}, {}
        if war.fill != "draft":
            return
        names = war.draft_groups or [g for g, k in self.schedule.interval.items() if k > 1]
        for g in names:
            if g not in self.groups:
                raise ValueError(f"draft_groups: unknown group {g!r}")
            spec = self.groups[g]
            if not isinstance(spec.action_space, gymnasium.spaces.Discrete) or self.envs[0].has_action_mask:
                raise ValueError(f"fill: a draft policy is a small categorical actor distilled from group {g!r}'s; "
                                 f"it needs Discrete actions without action masks, got {spec.action_space}"
                                 f"{' with masks' if self.envs[0].has_action_mask else ''}; use fill='hold'")
            small = dataclasses.replace(cfg, hidden_size=war.draft_hidden)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(cfg.seed + 7919)
                # (the group actor's input: with share_actor padded and with the group id)
                frames = torch.zeros(1, spec.n_agents, self.policies[g].frames * spec.obs_dim)
                in_dim = self.policies[g].actor_input(frames).shape[-1]
                self.drafts[g] = Actor(in_dim, Categorical(int(spec.action_space.n)), small).to(self.device)
            self.draft_opt[g] = torch.optim.Adam(self.drafts[g].parameters(), lr=cfg.lr, eps=cfg.adam_eps)
            declared = [p for p in self.profiles.values() if p is not None]
            dspec = war.draft_costs.get(g)
            if dspec is not None:
                self.profiles[g + DRAFT] = CostProfile(mode=war.cost_mode, **dspec)
            elif declared:
                self.profiles[g + DRAFT] = min(declared, key=lambda p: p.seconds(1))
            else:
                self.profiles[g + DRAFT] = None
            self.cost_models[g + DRAFT] = CostModel(beta=war.cost_beta, prior=self.profiles[g + DRAFT])

    def _build_workers(self) -> None:
        """The behaviour policy and one collector per worker env, each with its clock and costs."""
        war, cfg = self.war, self.cfg
        lane_threads = war.cost_mode == "real" and war.resource == "parallel"
        unknown = set(war.lane_cpus) - set(self.lanes)
        if unknown:
            raise ValueError(f"lane_cpus: unknown lanes {sorted(unknown)}; lanes: {sorted(self.lanes)}")
        # concurrent lanes sample from generators of their own (forked from the run's), so the
        # draws do not depend on which thread runs first
        lane_gens = {lane: _fork(self.gen) for lane in self.lanes} if lane_threads else None
        # a planning group decides by search in worlds of its own (one planner: the workers take turns)
        self.planner = build_planner(cfg, self.envs[0], self.policies, self.learner.vnorm,
                                     stream_seed(cfg.seed, self.worlds.start, "plan"))
        self.behaviour = BehaviourPolicy(self.policies, self.gen, self.drafts, lane_gens,
                                         planners={cfg.planner: self.planner} if self.planner is not None else None)
        # the host-sync-free rollout (the collector's default on a GPU) settles costs once per
        # window: one worker whose windows end after a number of steps, on a virtual clock
        stepwise = (war.workers == 1 and not war.batch_transitions and not war.max_wait and not self.real
                    and war.arm not in ("ddppo", "steal"))
        self.stats = [EpisodeStats(e) for e in self.envs]
        self.collectors = []
        last = self.dist.world_size * war.workers - 1   # the run's last worker (war.straggler slows it)
        for w, env in enumerate(self.envs):
            clock = WallClock() if self.real else VirtualClock()
            run_w = self.dist.rank * war.workers + w     # the worker's index in the run (all ranks)
            start = self.worlds.start + w * self.E_worker
            cost = InferenceCost({lane: self.profiles[lane] for lane in self.lanes}, self.lanes,
                                 resource=war.resource, clock=clock, jitter=war.jitter, seed=war.seed + run_w,
                                 scale=war.cost_scale * (war.straggler if run_w == last else 1.0))
            self.collectors.append(Collector(env, self.behaviour, gamma=cfg.gamma, schedule=self.schedule, cost=cost,
                                             cost_models=self.cost_models if w == 0 else None,
                                             draft_groups=tuple(self.drafts), world_offset=start,
                                             critic_input=cfg.critic_input, critic_time=cfg.critic_time,
                                             stats=self.stats[w], env_time=war.env_time,
                                             seed=run_world_seeds(cfg.seed, range(start, start + self.E_worker)),
                                             lane_threads={lane: war.lane_cpus.get(lane) for lane in self.lanes}
                                             if lane_threads else None,
                                             frames={g: p.frames for g, p in self.policies.items()},
                                             hidden_size={g: p.hidden_size for g, p in self.policies.items()
                                                          if p.recurrent},
                                             branch_free=None if stepwise else False,
                                             window_steps=cfg.rollout_length + 1,   # (+1: a continued window's lead row)
                                             bootstrap_truncation=cfg.bootstrap_truncation))
        self.triggers = [self._trigger() for _ in self.collectors]

    # -------------------------------------------------------------- planning
    def _trigger(self) -> Trigger:
        war, T = self.war, self.cfg.rollout_length
        per_worker_b = -(-war.batch_transitions // war.workers) if war.batch_transitions else 0
        # without B a window is rollout_length env steps; with B, 10x that is only a safety cap
        return Trigger(batch_size=per_worker_b, max_wait=war.max_wait, max_steps=10 * T if per_worker_b else T)

    def _plan(self):
        war, cfg = self.war, self.cfg
        if any(self.cost_models[g].per_decision(self.n_agents[g] * self.E_worker) <= 0 for g in self.groups):
            return every_step_schedule(self.groups)  # a measured cost not observed yet: lock-step until it is
        per_call = {}
        for g in self.groups:
            a, b = self.cost_models[g].coefficients
            per_call[g] = a >= b and a > 0
        L = war.fragment_length or cfg.rollout_length
        schedule = plan({g: self.cost_models[g] for g in self.groups}, self.n_agents, num_envs=self.E_worker,
                        window_steps=cfg.rollout_length, fragment_length=L, floor=war.floor, alpha=war.alpha,
                        per_call=per_call)
        return with_episode_starts(schedule, self.episode_length)

    # -------------------------------------------------------------- 1. collect
    def _collect_round(self) -> Round:
        cfg, war, dist = self.cfg, self.war, self.dist
        ddppo = (war.ddppo_sync_frac, war.ddppo_min_frac) if war.arm == "ddppo" else None
        steal = (lambda n: make_guest_env(cfg, n)) if war.arm == "steal" else None   # guest envs for moved worlds
        ranked = dist.active and cfg.dist_straggler != "off"
        if ranked:   # this rank's window: the configured length, or its WAR quota (one worker a rank)
            target = dist.begin_rollout(cfg.rollout_length)
            trig = self.triggers[0]
            trig.max_steps = 10 * target if trig.batch_size else target
        rnd = collect_round(self.collectors, self.triggers, self.version, ddppo=ddppo, steal=steal,
                            threads=self.real and len(self.collectors) > 1,
                            stop=dist.stop_collecting if ranked else None)
        if ranked:
            dist.end_rollout(self.E_worker)
        return rnd

    def collect(self) -> Round:
        """The round to learn from this update: the one collected now, or (``overlap``) the one
        collected in the previous update while the next is collected — after it here with virtual
        costs, in a thread with a snapshot of the policies while the learn step runs with real
        ones (``row`` waits for it)."""
        if self.war.arm != "overlap":
            return self._collect_round()
        if self._in_flight is None:  # the first round has nothing to overlap with
            self._in_flight = self._collect_round()
            self.model_s += self._in_flight.seconds
        learned = self._in_flight
        if not self.real:
            self._next = self._collect_round()
            return learned
        # learning in the main thread on the live networks; collection samples from a snapshot
        self.gen_learn = self.gen_learn if self.gen_learn is not self.gen else _fork(self.gen)
        frozen = copy.deepcopy(self.policies)
        planners = None
        if self.planner is not None:   # the search too: the snapshot's actor and critic guide it
            self.planner.guide(*trainer_model(self.cfg, frozen, copy.deepcopy(self.learner.vnorm)))
            planners = {self.cfg.planner: self.planner}
        snapshot = BehaviourPolicy(frozen, self.gen, copy.deepcopy(self.drafts), self.behaviour.lane_gens,
                                   planners=planners)
        for c in self.collectors:
            c.policy = snapshot
        box = {"t0": time.perf_counter()}
        thread = threading.Thread(target=lambda: box.update(round=self._collect_round()), name="war-collector")
        thread.start()
        self._next = (thread, box)
        return learned

    # -------------------------------------------------------------- 2. batches
    @torch.no_grad()
    def batches(self, rnd: Round) -> Batches:
        """Each group's valid transitions no more than ``max_lag`` versions old, with SMDP GAE or
        V-trace advantages; the group-balancing weights; data shares, ESS and staleness."""
        war = self.war
        merged = concat_workers(rnd.windows)
        out, counts, ratios, lags, lag_w, kept_masks = {}, {}, {}, [], [], {}
        dropped = total = draft_n = 0
        vtrace_used = False
        for g, p in self.policies.items():
            b, n = merged[g], p.n_agents
            lag = self.version - b.version
            keep = kept_masks[g] = b.valid & (lag <= war.max_lag)
            dropped += int((b.valid & ~keep).sum()) * n
            total += int(b.valid.sum()) * n
            counts[g] = int(keep.sum()) * n
            lags.append(lag[keep])
            lag_w.append(torch.full((int(keep.sum()),), n, dtype=torch.long))
            draft_n += int((b.draft & keep).sum()) * n
        # under torchrun: the counts of every rank (a group is learned where any rank kept some of
        # its transitions: every rank takes part in its all-reduced update, with what it has)
        local_counts = dict(counts)
        summed = self.dist.all_sum([*counts.values(), dropped, total, draft_n])
        counts = {g: int(c) for g, c in zip(counts, summed)}
        dropped, total, draft_n = (int(x) for x in summed[len(counts):])
        for g, p in self.policies.items():
            if counts[g] == 0:
                continue
            b = merged[g]
            out[g], ratio, used = self._group_batch(g, p, b, self.version - b.version, kept_masks[g])
            vtrace_used |= used
            if ratio is not None:
                ratios[g] = ratio
        # group-balancing weights: each group weighs its lock-step share of the agents
        N = sum(self.n_agents.values())
        share = {g: self.n_agents[g] / N for g in self.groups}
        gw = group_balancing_weights(counts, share) if sum(counts.values()) else {g: 0.0 for g in counts}
        if self.dist.active:   # (the statistics of the whole batch: every rank's part)
            ratios, lags, lag_w, vtrace_used = _gather_batch_parts(self.dist, local_counts, ratios, lags, lag_w,
                                                                   vtrace_used)
        stats = _batch_stats(self.groups, counts, gw, ratios, lags, lag_w)
        kept = sum(counts.values())
        stats.update({"dropped_frac": dropped / total if total else 0.0, "vtrace": float(vtrace_used),
                      "draft_frac": draft_n / kept if kept else 0.0})
        return Batches(out, weights=gw, stats=stats)

    def _group_batch(self, g: str, p, b: GroupTransitions, lag, keep):
        """``(GroupBatch, importance ratios or None, V-trace used)`` of group ``g``'s kept transitions."""
        env, cfg = self.envs[0], self.cfg
        return group_batch(p, self.learner.vnorm[g], b, keep, lag, gamma=cfg.gamma, lam=cfg.gae_lambda,
                           bootstrap_truncation=cfg.bootstrap_truncation, vtrace=self.war.vtrace,
                           masked=env.has_action_mask, can_leave=env.agents_can_leave)

    def fail(self, what: str, hint: str) -> Exception:
        return non_finite(self.update_idx, self.checkpoint, what, hint)

    # -------------------------------------------------------------- 4. the row
    def row(self, learned: Round, batches: Batches, diag: dict, learn_s: float) -> dict:
        """Distill the drafts, close the update on the modelled clock (``overlap``: wait for the
        round collected meanwhile), re-plan (``war``), and the metrics row."""
        t0 = time.perf_counter()
        for g in self.drafts:
            if g in batches.groups:
                b = batches.groups[g]
                self._distill(g, b.obs, b.actions if g == self.cfg.planner else None)
        learn_s += time.perf_counter() - t0
        war = self.war
        if war.arm == "overlap":
            if self.real:
                thread, box = self._next
                thread.join()
                nxt, period = box["round"], time.perf_counter() - box["t0"]
            else:
                nxt = self._next
                period = max(nxt.seconds, learn_s)
            collect_s, self._in_flight, self._next = nxt.seconds, nxt, None
        else:
            collect_s = learned.seconds
            period = collect_s + learn_s
        if self.dist.active:   # the update takes as long as its slowest rank (they meet in the all-reduce)
            collect_s, learn_s, period = (max(x) for x in zip(*self.dist.gather([collect_s, learn_s, period])))
        self.model_s += period
        self.version += 1
        if war.arm == "war" and war.replan:
            self.schedule = self._plan()
            for c in self.collectors:
                c.schedule = self.schedule
        row = {**diag, **batches.stats}
        row.update(self._counters(learned, collect_s, learn_s, period))
        return row

    def _distill(self, g: str, obs: torch.Tensor, searched: torch.Tensor | None = None, epochs: int = 5) -> None:
        """Fit the draft to the group's updated policy: minimize KL(π || draft) on the batch.  A
        planning group's draft guesses its search instead: ``searched``, the actions its searches
        took on the batch (samples of their improved policies), are the targets (cross-entropy)."""
        p, d = self.policies[g], self.drafts[g]
        with torch.no_grad():
            x = p.actor_input(obs)
            if searched is None:
                target = torch.softmax(p.dist.tempered(p.actor(x)[0]), -1)   # the policy as it samples now
            else:
                target = torch.nn.functional.one_hot(searched.long(), p.dist.n).to(x.dtype)
        for _ in range(epochs):
            logp = torch.log_softmax(d(x)[0], -1)
            loss = -(target * logp).sum(-1).mean()
            self.draft_opt[g].zero_grad(set_to_none=True)
            loss.backward()
            self.draft_opt[g].step()

    def _counters(self, rnd: Round, collect_s: float, learn_s: float, period: float) -> dict:
        mine = {"steps": sum(w.env_steps for w in rnd.windows), "agent_tr": sum(w.agent_transitions for w in rnd.windows),
                "decisions": {lane: sum(w.decisions.get(lane, 0) for w in rnd.windows) for lane in self.lanes},
                "calls": {lane: sum(w.calls.get(lane, 0) for w in rnd.windows) for lane in self.lanes},
                "worker_steps": sum(w.steps for w in rnd.windows),
                "window_s": rnd.seconds,   # rates per modelled second of this round's own collection
                "window_steps": max(w.steps for w in rnd.windows), "env_s": max(w.env_seconds for w in rnd.windows),
                "preempted": rnd.preempted}
        if self.dist.active:   # every rank's round: counts summed, durations of the slowest
            every = self.dist.gather(mine)
            mine = {k: (max if k in ("window_s", "window_steps", "env_s") else sum)(r[k] for r in every)
                    for k in mine if k not in ("decisions", "calls")}
            for k in ("decisions", "calls"):
                mine[k] = {lane: sum(r[k][lane] for r in every) for lane in self.lanes}
        steps, agent_tr, decisions, window_s = mine["steps"], mine["agent_tr"], mine["decisions"], mine["window_s"]
        self.env_steps += steps
        row = {**counters(self.update_idx, self.env_steps, sum(self.n_agents.values()), self.learner),
               "model_s": self.model_s, "collect_s": collect_s, "learn_s": learn_s, "batch_s": period,
               "window_steps": mine["window_steps"], "env_s": mine["env_s"],
               "model_env_steps_per_s": steps / window_s if window_s > 0 else float("nan"),
               "agent_transitions_per_s": agent_tr / window_s if window_s > 0 else float("nan"),
               "preempted": mine["preempted"]}
        for lane in self.lanes:
            row[f"decisions_per_s/{lane}"] = decisions[lane] / window_s if window_s > 0 else float("nan")
            # (the lane's policy calls per worker env step: 1 when it decides at every step; a
            # schedule that gathers a lane's decisions into fewer, fuller calls has fewer)
            row[f"calls_per_step/{lane}"] = mine["calls"][lane] / max(1, mine["worker_steps"])
            row[f"tau_ms/{lane}"] = 1e3 * self.cost_models[lane].per_decision(self.lanes[lane] * self.E_worker)
        for g in self.groups:
            row[f"interval/{g}"] = self.schedule.interval[g]
            row[f"quota/{g}"] = self.schedule.quota.get(g, 0)
        ep = finished_episodes(self.stats, self.dist)
        row.update(self._rank_row())
        row.update(ep)
        row["episodes"] = int(ep["episodes"])
        return row

    def _rank_row(self) -> dict:
        """Under torchrun with a straggler mode: the ranks' window lengths and data shares, and
        rank 0's wait for the others (``war_train.learn.distributed``'s names)."""
        own = ("rollout_steps_min", "rollout_steps_max", "wait_s")
        return {k: v for k, v in self.dist.metrics().items() if k in own or k.startswith("share/rank")}

    # -------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict:
        """Everything the rest of the run depends on, between two updates: the learner
        (``ppo.Learner.state_dict``: networks, optimizers, value normalizers, the sampling
        generator), every worker (``Collector.state_dict``: its worlds, observations, held actions
        and carried macro-steps, pending decisions, clock, cost-jitter stream), the episode
        statistics, the online cost estimates, the schedule in force, the drafts and their
        optimizers, the counters (``update``, ``version``, ``env_steps``, ``model_s``), the
        overlap arm's round collected but not yet learned (``in_flight``) and the generators of
        concurrent lanes and of a learner thread (``cost_mode="real"``).  CPU tensors and plain
        values: the WAR mode's checkpoint (``checkpoint_payload``) is this plus config, WAR
        config, env signature and ``wall_s``."""
        return {**self.learner.state_dict(),
                "update": self.update_idx, "version": self.version, "env_steps": self.env_steps,
                "model_s": float(self.model_s),
                "workers": [c.state_dict() for c in self.collectors],
                "episode_stats": [s.state_dict() for s in self.stats],
                "cost_models": {lane: m.state_dict() for lane, m in self.cost_models.items()},
                "schedule": dataclasses.asdict(self.schedule),
                "drafts": {g: d.state_dict() for g, d in self.drafts.items()},
                "draft_opts": {g: o.state_dict() for g, o in self.draft_opt.items()},
                "in_flight": None if self._in_flight is None else _round_state(self._in_flight),
                "learn_generator": None if self.gen_learn is self.gen else self.gen_learn.get_state(),
                "lane_generators": {lane: g.get_state() for lane, g in self.behaviour.lane_gens.items()},
                **({"planner": self.planner.state_dict()} if self.planner is not None else {})}

    def load_state_dict(self, state: dict) -> None:
        """Restore ``state_dict()`` into this trainer (built with the same configs): the next
        ``update()`` is the one the saved trainer would have run next."""
        if len(state["workers"]) != len(self.collectors) or len(state["episode_stats"]) != len(self.stats):
            raise ValueError(f"state: expected {len(self.collectors)} workers, got {len(state['workers'])}")
        if set(state["cost_models"]) != set(self.cost_models) or set(state["drafts"]) != set(self.drafts):
            raise ValueError(f"state: expected cost models of lanes {sorted(self.cost_models)} and drafts of "
                             f"{sorted(self.drafts)}, got {sorted(state['cost_models'])} and {sorted(state['drafts'])}")
        self.learner.load_state_dict(state)
        for c, w in zip(self.collectors, state["workers"]):
            c.load_state_dict(w)
        for s, saved in zip(self.stats, state["episode_stats"]):
            s.load_state_dict(saved)
        for lane, m in self.cost_models.items():
            m.load_state_dict(state["cost_models"][lane])
        self.schedule = Schedule(**state["schedule"])
        for c in self.collectors:
            c.schedule = self.schedule
        for g, d in self.drafts.items():
            d.load_state_dict(state["drafts"][g])
            self.draft_opt[g].load_state_dict(state["draft_opts"][g])
        self.update_idx, self.version = int(state["update"]), int(state["version"])
        self.env_steps, self.model_s = int(state["env_steps"]), float(state["model_s"])
        self._in_flight = None if state["in_flight"] is None else _round_from_state(state["in_flight"], self.device)
        if state["learn_generator"] is not None:
            self.gen_learn = torch.Generator(device=self.gen.device)
            self.gen_learn.set_state(state["learn_generator"])
        for lane, g in self.behaviour.lane_gens.items():
            g.set_state(state["lane_generators"][lane])
        if self.planner is not None:
            self.planner.load_state_dict(state["planner"])

    def checkpoint_payload(self, wall_s: float) -> dict | None:
        """The run's checkpoint: ``state_dict()`` plus config, WAR config, env signature, ``wall_s``.
        Under torchrun (every rank calls it; rank 0 gets it, the others None): rank 0's
        ``state_dict()`` (the networks, equal on every rank, where evaluation reads them) and
        ``distributed = {world_size, straggler, other_ranks: [state_dict() of rank 1, ...]}``."""
        state = self.state_dict()
        if self.dist.active:
            every = self.dist.gather(state)
            if not self.dist.is_main:
                return None
            state = {**every[0], "distributed": {"world_size": self.dist.world_size,
                                                 "straggler": self.cfg.dist_straggler, "other_ranks": every[1:]}}
        return {"config": config_to_dict(self.cfg), "war": war_config_to_dict(self.war),
                "env": env_signature(self.envs[0], self.cfg), "wall_s": wall_s, **state}

    def restore(self, ckpt: dict, path) -> None:
        """Continue from ``ckpt`` (``checkpoint_payload``'s, read from ``path``; the run loop has
        checked it is this run's: ``war_train.run.resume.check_resume``) after checking that, under
        torchrun, it was written by as many ranks (each rank's workers carry their own windows'
        fragments, clocks and cost estimates)."""
        saved = ckpt.get("distributed", {}).get("world_size", 1)
        if saved != self.dist.world_size:
            raise ValueError(f"resume: {path} was written by a WAR run on {saved} rank(s); a WAR run resumes exactly "
                             f"only on as many ranks (its workers' fragments, clocks and cost estimates are per "
                             f"rank), not on {self.dist.world_size}")
        self.load_state_dict(ckpt if self.dist.rank == 0 else ckpt["distributed"]["other_ranks"][self.dist.rank - 1])

    def close(self) -> None:
        for c in getattr(self, "collectors", ()):   # (none yet when set-up refused the envs)
            c.close()
        if getattr(self, "planner", None) is not None:
            self.planner.close()
        if self._own_envs:
            for e in self.envs:
                e.close()


def _refuse_unsupported(cfg: TrainConfig, war: WarConfig, dist) -> None:
    if cfg.planner and war.arm == "steal":
        raise ValueError("planner: a planning group is supported under the arms sync, ddppo, overlap and war "
                         "(stealing moves worlds between envs, and a search plans in copies of one env's "
                         "worlds), got arm='steal'")
    if cfg.use_gru and war.fill == "draft":
        raise ValueError("fill: draft policies are feed-forward and a GRU steps only at its group's own "
                         "decisions; use fill='hold' with use_gru=True")
    if not dist.active:
        return
    if war.fill == "draft":
        raise ValueError("fill: draft policies are distilled on each worker's own batch and are not data parallel; "
                         "under torchrun use fill='hold'")
    if cfg.dist_straggler != "off" and (war.workers != 1 or war.arm in ("ddppo", "steal")):
        raise ValueError(f"dist_straggler={cfg.dist_straggler!r}: the rank-level straggler rules stop or size each "
                         f"rank's window, which needs one worker per rank and an arm of lock-step or WAR windows "
                         f"(sync, war, overlap), got workers={war.workers}, arm={war.arm!r}; the ranks are the "
                         f"workers (DD-PPO across ranks: dist_straggler='preempt')")


def _gather_batch_parts(dist, counts: dict, ratios: dict, lags: list, lag_w: list, vtrace_used: bool):
    """Every rank's importance ratios (per group; 1 for a rank whose kept transitions of the
    group were all on-policy), lags and lag weights, and whether any rank used V-trace;
    ``counts``: this rank's kept agent-transitions per group."""
    mine = {"ratios": {g: r.detach().cpu().reshape(-1) for g, r in ratios.items()}, "counts": counts,
            "lags": [x.cpu() for x in lags], "lag_w": [x.cpu() for x in lag_w], "vtrace": vtrace_used}
    every = dist.gather(mine)
    merged = {}
    for g in counts:
        if any(g in r["ratios"] for r in every):
            merged[g] = torch.cat([r["ratios"].get(g, torch.ones(r["counts"][g])) for r in every])
    return (merged, [x for r in every for x in r["lags"]], [x for r in every for x in r["lag_w"]],
            any(r["vtrace"] for r in every))


def _batch_stats(groups, counts: dict, gw: dict, ratios: dict, lags: list, lag_w: list) -> dict:
    """Data shares, the Kish ESS of the weights x importance ratios, and staleness (with its
    histogram, ``_staleness_hist``... logged to ``staleness.jsonl``)."""
    weights = []
    for g in groups:
        if counts[g] == 0:
            continue
        w = torch.full((counts[g],), gw[g], dtype=torch.float64)
        if g in ratios:
            w = w * ratios[g].reshape(-1).to(torch.float64).clamp(0.1, 10.0)
        weights.append(w)
    w_all = torch.cat(weights) if weights else torch.zeros(0, dtype=torch.float64)
    ess = kish_ess(w_all.numpy())
    lag_all = torch.cat(lags) if lags else torch.zeros(0, dtype=torch.long)
    st = staleness_summary(lag_all.cpu().numpy(), torch.cat(lag_w).numpy() if lag_w else None)
    kept = sum(counts.values())
    stats = {"ess": ess, "ess_frac": ess / kept if kept else float("nan"), "staleness_mean": st["mean"],
             "staleness_p95": st["p95"], "staleness_max": st["max"], "transitions": kept,
             "staleness_hist": st["hist"]}
    stats.update({f"share/{g}": counts[g] / kept if kept else float("nan") for g in groups})
    return stats


def _round_state(rnd: Round) -> dict:
    """A collected round as plain values and tensors (a checkpoint entry)."""
    def fields(obj, skip=()):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.name not in skip}

    return {**fields(rnd, ("windows",)),
            "windows": [{**fields(w, ("groups",)), "groups": {g: fields(b) for g, b in w.groups.items()}}
                        for w in rnd.windows]}


def _round_from_state(state: dict, device) -> Round:
    windows = [WindowBatch(**{**w, "groups": {g: GroupTransitions(**{k: t.to(device) for k, t in b.items()})
                                              for g, b in w["groups"].items()}})
               for w in state["windows"]]
    return Round(**{**state, "windows": windows})


def _fork(gen: torch.Generator) -> torch.Generator:
    out = torch.Generator(device=gen.device)
    out.manual_seed(int(torch.randint(0, 2**62, (1,), generator=gen)))
    return out


# ----------------------------------------------------------------------------- runs
