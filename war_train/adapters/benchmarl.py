"""BenchMARL: war-envs scenarios as BenchMARL tasks (over ``war_train.adapters.torchrl.TorchRLEnv``).

```python
from benchmarl.algorithms import MappoConfig
from benchmarl.experiment import Experiment, ExperimentConfig
from benchmarl.models.mlp import MlpConfig
from war_train.adapters.benchmarl import WarEnvsTask

task = WarEnvsTask.SPREAD.get_task(config={"max_cycles": 25})   # scenario arguments
Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(),
           model_config=MlpConfig.get_from_yaml(), critic_model_config=MlpConfig.get_from_yaml(),
           seed=0, config=ExperimentConfig.get_from_yaml()).run()
```

- Members: one per built-in scenario, named after its id (``PREDATOR_PREY`` is
  ``PredatorPrey-v0``: ``task_name``); ``WarEnvsClass(name=<scenario id>, config=...)``
  works for any registered id (e.g. your own).  ``config`` holds scenario arguments;
  BenchMARL's ``n_envs`` become ``num_envs`` worlds, its ``continuous_actions`` the scenario's
  (where it has that argument).  Tasks come with no yaml, so use ``get_task(config={...})``
  (``config={}`` for the defaults), not ``get_from_yaml()``.
- ``state_spec``: the env's ``"state"`` (every agent's observation: MAPPO's centralized critic
  with ``share_param_critic`` uses it); a real ``truncated`` key; masked partial resets.
- ``action_mask_spec``: each group's ``(group, "action_mask")`` for scenarios with
  ``has_action_mask`` (SMAX-v0; ``None`` otherwise), so BenchMARL's algorithms draw and train
  on available actions only (its masked distributions).
- ``war_vmas_task(VmasTask.NAVIGATION.get_from_yaml())``: **BenchMARL's own VMAS task** (its
  name, yaml config, specs, group map and rendering) on war-envs: the task's ``get_env_fun``
  builds ``war_train.adapters.torchrl.VmasEnv`` (``torchrl.envs.libs.vmas.VmasEnv``'s layout
  exactly) with the arguments BenchMARL's ``VmasClass`` gives torchrl's ``VmasEnv``.  The
  scenario must have a war-envs port (``war_train.adapters.torchrl.vmas_scenarios()``).
- A VMAS-family id in ``WarEnvsClass`` (``name="Navigation-v0"``) gets the ``"war"`` layout
  (``state``, a real ``truncated``), as every war-envs task; ``war_vmas_task`` is VMAS's.
- Needs BenchMARL, which pins ``torchrl<0.12``: install ``war-envs[benchmarl]`` in its own
  environment (the ``[torchrl]``/``[dev]`` extras resolve to a newer torchrl);
  ``bash scripts/benchmarl_check.sh`` builds one and runs the tests there (CI runs it).
  With torch 2.13, torchrl 0.11's C++ extension does not load, so BenchMARL's
  ``off_policy_use_prioritized_replay_buffer=True`` fails ("SumSegmentTreeFp32 is not
  available"); MAPPO and the default replay buffer do not use it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable

from war_envs._extras import needs_extra

with needs_extra("benchmarl", "the BenchMARL adapter (war_train.adapters.benchmarl)",
                 note="(in its own environment: BenchMARL pins torchrl<0.12; see scripts/benchmarl_check.sh)"):
    from benchmarl.environments.common import Task, TaskClass
    from benchmarl.environments.vmas.common import VmasClass
    from torchrl.data import Composite
    from torchrl.envs import EnvBase

from war_envs import registry
from war_train.adapters.torchrl import TorchRLEnv, VmasEnv

__all__ = ["WarEnvsClass", "WarEnvsTask", "WarVmasClass", "war_vmas_task"]



def task_name(scenario_id: str) -> str:
    """BenchMARL's name of a registered scenario: ``"PredatorPrey-v0"`` -> ``"PREDATOR_PREY"``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", scenario_id.split("-")[0]).upper()


def _scenario_id(name: str) -> str:
    """The registered id a task name stands for (a registered id is its own name)."""
    for scenario_id in registry.registered_ids():
        if task_name(scenario_id) == name:
            return scenario_id
    return name


class WarEnvsClass(TaskClass):
    """A war-envs scenario as a BenchMARL ``TaskClass``; ``name`` is a task name of
    ``WarEnvsTask`` or a registered scenario id, ``config`` its scenario arguments."""

    @property
    def scenario_id(self) -> str:
        return _scenario_id(self.name)

    def _accepted(self) -> list[str]:
        return registry.accepted_kwargs(registry.scenario_class(self.scenario_id))

    def get_env_fun(self, num_envs: int, continuous_actions: bool, seed: int | None, device) -> Callable[[], EnvBase]:
        config = copy.deepcopy(dict(self.config))
        if "continuous_actions" in self._accepted():
            config["continuous_actions"] = continuous_actions
        config.setdefault("layout", "war")  # a VMAS-family id too: state and truncated, as every task here
        return lambda: TorchRLEnv(self.scenario_id, num_envs=num_envs, seed=seed, device=str(device), **config)

    def supports_continuous_actions(self) -> bool:
        return "continuous_actions" in self._accepted()

    def supports_discrete_actions(self) -> bool:
        return True

    def has_render(self, env: EnvBase) -> bool:
        return False

    def max_steps(self, env: EnvBase) -> int:
        return int(getattr(env.batched, env.batched.episode_length_kwarg))

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        return dict(env.group_map)

    def observation_spec(self, env: EnvBase) -> Composite:
        spec = env.full_observation_spec_unbatched.clone()
        del spec["state"]
        for group in env.group_map:  # masks are action_mask_spec's
            if "action_mask" in spec[group].keys():
                del spec[(group, "action_mask")]
        return spec

    def info_spec(self, env: EnvBase) -> Composite | None:
        return None

    def state_spec(self, env: EnvBase) -> Composite | None:
        return Composite({"state": env.full_observation_spec_unbatched["state"].clone()})

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec_unbatched

    def action_mask_spec(self, env: EnvBase) -> Composite | None:
        """``{group: {"action_mask": ...}}`` for scenarios with ``has_action_mask`` (SMAX-v0):
        BenchMARL's algorithms then sample and train through masked distributions."""
        if not env.batched.has_action_mask:
            return None
        spec = env.full_observation_spec_unbatched
        return Composite({group: Composite({"action_mask": spec[(group, "action_mask")].clone()},
                                           shape=spec[group].shape)
                          for group in env.group_map})

    @staticmethod
    def env_name() -> str:
        return "war_envs"


class WarEnvsTask(Task):
    """The built-in war-envs scenarios as BenchMARL tasks."""

    SPREAD = None
    PREDATOR_PREY = None
    COMMAND = None
    TAG = None

    @staticmethod
    def associated_class():
        return WarEnvsClass


class WarVmasClass(VmasClass):
    """BenchMARL's ``VmasClass`` (a ``VmasTask``'s task: specs, group map, rendering, yaml
    config) whose env factory builds war-envs' ``VmasEnv`` instead of torchrl's."""

    def get_env_fun(self, num_envs: int, continuous_actions: bool, seed: int | None, device) -> Callable[[], EnvBase]:
        """BenchMARL 1.5's ``VmasClass.get_env_fun`` with war-envs' ``VmasEnv``: the same
        arguments (the task's name lower-cased as the VMAS scenario, categorical actions,
        ``clamp_actions=True``, the task config)."""
        config = copy.deepcopy(dict(self.config))
        return lambda: VmasEnv(scenario=self.name.lower(), num_envs=num_envs, continuous_actions=continuous_actions,
                               seed=seed, device=device, categorical_actions=True, clamp_actions=True, **config)


def war_vmas_task(task) -> WarVmasClass:
    """BenchMARL's VMAS task ``task`` (a ``VmasClass``, e.g. ``VmasTask.NAVIGATION.get_from_yaml()``,
    or a ``VmasTask`` member, whose yaml config is then loaded) running on war-envs."""
    from benchmarl.environments import VmasTask

    if isinstance(task, VmasTask):
        task = task.get_from_yaml()
    if not isinstance(task, VmasClass):
        raise TypeError(f"task: expected a BenchMARL VMAS task (VmasTask.<NAME> or its get_from_yaml() / "
                        f"get_task()), got {type(task).__name__}")
    return WarVmasClass(name=task.name, config=copy.deepcopy(dict(task.config)))
