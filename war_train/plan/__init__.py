"""Planning: a batched PUCT search (``search``: AlphaZero-style tree search over W independent
roots at once, a group's policy as prior and its centralized critic as leaf value, one batched
model step per simulation over every root) and the planning worlds it searches in (``worlds``: a
second batched env of the real env's scenario, on its device, loaded with copies of the deciding
real worlds, which it only reads).  The trainer's integration (who decides with a search, and
the model that wraps a group's policy, critic and the other groups' policies) builds on these.
Imports ``learn`` and ``rollout`` at most, never ``war`` or ``run``."""
