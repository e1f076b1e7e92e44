"""Planning: a batched PUCT search (``search``: AlphaZero-style tree search over W independent
roots at once, a group's policy as prior and its centralized critic as leaf value, one batched
model step per simulation over every root) and the planning worlds it searches in (``worlds``: a
second batched env of the real env's scenario, on its device, loaded with copies of the deciding
real worlds, which it only reads, their private future re-drawn) and the planner that joins
them (``planner``: a one-agent group's decisions by search, with the model that wraps its
policy, its critic and the other groups' policies).
Imports ``learn`` and ``rollout`` at most, never ``war`` or ``run``."""
