"""Learning: the one PPO update (``ppo``) every mode calls through the learn step (``step``), its
pure losses and advantages (``losses``: SMDP GAE — GAE with every interval 1 — and V-trace), action
distributions (``distributions``: Discrete / MultiDiscrete / Box, masks), networks and each group's
policy (``networks``, ``policy``), value normalization (``valuenorm``), group weights
(``weights``), and the data-parallel reducer (``distributed``: torchrun ranks).  Imports nothing
from ``rollout``, ``war`` or ``run``."""
