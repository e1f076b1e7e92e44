"""Overcooked-v0: JaxMARL's ``overcooked`` (two cooks make and serve onion soup in one of five
kitchens), exact and batched (``overcooked.py``; kernels in ``_kernels.py``; kitchens as data in
``layouts.py``)."""
