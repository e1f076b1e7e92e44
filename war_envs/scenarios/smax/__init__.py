"""SMAX-v0: StarCraft-style unit micromanagement, exact to JaxMARL 0.2.0's SMAX (``smax.py``;
maps in ``maps.py``, kernels in ``_kernels.py``)."""
