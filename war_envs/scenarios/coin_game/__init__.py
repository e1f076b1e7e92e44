"""CoinGame-v0: JaxMARL's ``coin_game`` (two agents, two coins, a 3 x 3 torus: a sequential social
dilemma), exact and batched (``coin_game.py``; kernels in ``_kernels.py``)."""
