"""MPE scenarios (mpe2 semantics): physics written once in ``_kernels.py``, shared by all."""
