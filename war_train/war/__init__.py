"""What only the WAR harness adds: its training mode (``mode``: cost models, planned schedules,
drafts, staleness, group-balancing weights, the WAR row) and its rounds (``rounds``: a window
per worker, DD-PPO preemption, work stealing, overlapped collection).  The WAR section of the
config is ``war_train.config.WarConfig``.  Imports ``rollout`` and ``learn``, never ``run``."""
