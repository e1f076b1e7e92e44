"""Hanabi-v0: JaxMARL's ``hanabi`` (the cooperative card game, 2 to 5 players, turn-based with
legal-move masks), exact and batched (``hanabi.py``; kernels in ``_kernels.py``)."""
