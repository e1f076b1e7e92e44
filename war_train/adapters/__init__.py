"""Adapters from war-envs batched environments to third-party RL libraries.

Each adapter is its own module and imports its library only there, so import the one you
need explicitly:

- ``war_train.adapters.sb3``: ``SB3VecEnv`` — a native Stable-Baselines3 ``VecEnv`` (agents as
  environments, one batched step per ``step_wait``).
- ``war_train.adapters.torchrl``: ``TorchRLEnv`` — a TorchRL ``EnvBase`` in VMAS's layout
  (for the VMAS family exactly TorchRL's ``VmasEnv``'s), and ``VmasEnv`` — TorchRL's
  ``VmasEnv`` constructor over war-envs' VMAS scenarios (change only the import).
- ``war_train.adapters.benchmarl``: ``WarEnvsTask`` / ``WarEnvsClass`` — BenchMARL tasks over
  ``TorchRLEnv``, and ``war_vmas_task`` — BenchMARL's own VMAS tasks on war-envs' ``VmasEnv``
  (extra ``[benchmarl]``, which pins ``torchrl<0.12``).
- ``war_train.adapters.skrl``: ``SkrlMultiAgentEnv`` — the Isaac-Lab-shaped multi-agent torch
  env that skrl's MAPPO/IPPO consume (``wrap_env(env, wrapper="isaaclab-multi-agent")``).

The Gymnasium agents-as-envs ``VectorEnv`` lives in ``war_envs.frontends.agents_as_envs`` (it
needs only Gymnasium).  See ``docs/integrations.md``.
"""
