"""WAR — Workload-Aware Rollouts (docs/war.md).

When agents' policies cost very different amounts of compute, lock-step rollouts make every
world step wait for the slowest decision.  WAR keeps learning synchronous but makes data
generation workload-aware:

- ``costs``: per-group cost models ``cost_g(n) = a_g + b_g·n`` (measured online by EMA, or
  declared with ``CostProfile`` and spent as busy CPU, sleep, or on a virtual clock);
- ``scheduler``: per-group quotas and decision intervals (slow groups decide less often and
  hold their action in between), staggered or aligned phases;
- ``weights``: group-balancing importance weights and the Kish effective sample size;
- ``env``: ``WarEnv``, the schedule and hold semantics as a batched-env wrapper that any trainer
  can drive (which worlds decided, macro-step length ``k``, accumulated reward, version);
- ``collector``: the rollout collector of one worker (per-group macro-step transitions, windows
  and fragments, versions, the learning trigger) and the resource models of inference time;
- ``baselines``: one collection round over several workers for each arm of the harness
  (sync, DD-PPO preemption, HTS-RL overlap, WAR).

The trainer that learns from these batches is ``war_train.war_loop``; see ``docs/war.md``.
"""

from war_envs.war.baselines import ARMS, Round, collect_round
from war_envs.war.collector import (RESOURCES, Collector, GroupBatch, InferenceCost, Trigger, WindowBatch,
                                    concat_workers, lockstep_schedule, stitch)
from war_envs.war.costs import CostModel, CostProfile, VirtualClock, WallClock
from war_envs.war.env import MacroStepInfo, WarEnv
from war_envs.war.scheduler import Schedule, decision_intervals, plan, quotas, with_episode_starts
from war_envs.war.weights import (group_balancing_weights, kish_ess, staleness_summary, weighted_group_loss,
                                 weighted_group_mean)

__all__ = ["WarEnv", "MacroStepInfo", "CostModel", "CostProfile", "VirtualClock", "WallClock", "Schedule", "decision_intervals",
           "plan", "quotas", "with_episode_starts", "group_balancing_weights", "kish_ess", "staleness_summary",
           "weighted_group_loss", "weighted_group_mean", "RESOURCES", "Collector", "GroupBatch", "InferenceCost", "Trigger", "WindowBatch",
           "concat_workers", "lockstep_schedule", "stitch", "ARMS", "Round", "collect_round"]
