"""WAR — Workload-Aware Rollouts (docs/war.md): what any trainer uses.

When agents' policies cost very different amounts of compute, lock-step rollouts make every
world step wait for the slowest decision.  WAR keeps learning synchronous but makes data
generation workload-aware:

- ``costs``: per-group cost models ``cost_g(n) = a_g + b_g·n`` (measured online by EMA, or
  declared with ``CostProfile`` and spent as busy CPU, sleep, or on a virtual clock), clocks,
  and ``InferenceCost``, the resource models of one step's inference time;
- ``scheduler``: per-group quotas and decision intervals (slow groups decide less often and
  hold their action in between), staggered or aligned phases;
- ``env``: ``WarEnv``, the schedule and hold semantics as a batched-env wrapper that any trainer
  can drive (which worlds decided, macro-step length ``k``, accumulated reward, version).

Nothing here imports a trainer.  ``war_train``'s WAR mode builds on it: its collector
(``war_train.rollout.collector``: per-group macro-step transitions, windows and fragments), the
collection rounds of the harness's arms and work stealing (``war_train.war.rounds``) and the
group-balancing weights (``war_train.learn.weights``).
"""

from war_envs.war.costs import RESOURCES, CostModel, CostProfile, InferenceCost, VirtualClock, WallClock
from war_envs.war.env import MacroStepInfo, WarEnv, every_step_schedule
from war_envs.war.scheduler import Schedule, decision_intervals, plan, quotas, with_episode_starts

__all__ = ["WarEnv", "MacroStepInfo", "every_step_schedule", "CostModel", "CostProfile", "InferenceCost",
           "RESOURCES", "VirtualClock", "WallClock", "Schedule", "decision_intervals", "plan", "quotas",
           "with_episode_starts"]
