"""Gymnasium's classic control tasks (CartPole, Acrobot, MountainCar, MountainCarContinuous, Pendulum) as batched scenarios."""
