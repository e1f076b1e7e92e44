"""Rollouts: the one collector (``collector``) whose schedule says who decides when — every group
at every step (lock-step) or WAR's quotas, decision intervals, held actions, drafts, fragments and
windows — its preallocated storage (``storage``), the per-world decision sequences recurrent
policies learn from (``sequences``), the batch builder every mode uses (``batches``: advantages
and one ``GroupBatch`` per group), episode statistics (``metrics``) and the training envs
(``envs``).  Imports ``learn``, never ``war`` or ``run``."""
