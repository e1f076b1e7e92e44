"""Gymnasium's classic control tasks (CartPole, Acrobot, MountainCar, MountainCarContinuous,
Pendulum) as batched scenarios (``base.py``: what they share; one file per task)."""
