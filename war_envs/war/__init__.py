"""WAR — Workload-Aware Rollouts (DESIGN §5).

When agents' policies cost very different amounts of compute, lock-step rollouts make every
world step wait for the slowest decision.  WAR keeps learning synchronous but makes data
generation workload-aware:

- ``costs``: per-group cost models ``cost_g(n) = a_g + b_g·n`` (measured online by EMA, or
  declared with ``CostProfile`` and spent as busy CPU, sleep, or on a virtual clock);
- ``scheduler``: per-group quotas and decision intervals (slow groups decide less often and
  hold their action in between), staggered or aligned phases;
- ``weights``: group-balancing importance weights and the Kish effective sample size.
"""

from war_envs.war.costs import CostModel, CostProfile, VirtualClock, WallClock
from war_envs.war.scheduler import Schedule, decision_intervals, plan, quotas
from war_envs.war.weights import group_balancing_weights, kish_ess

__all__ = ["CostModel", "CostProfile", "VirtualClock", "WallClock", "Schedule", "decision_intervals",
           "plan", "quotas", "group_balancing_weights", "kish_ess"]
