"""What every MPE scenario shares: the world (agents, landmarks, physics constants), the
arguments mpe2 1.1 takes, the curriculum stage API, buffers and kernel launches.

A scenario subclass describes its layout (``_layout``), its observation sizes and its two
scenario kernels (reward/done and observe/autoreset); the physics kernels are shared.
"""

from __future__ import annotations

import dataclasses

import gymnasium
import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import BatchedEnv, GroupSpec, stack_group_spaces
from war_envs.core.runtime import capture_guard
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import _kernels as K

# mpe2 World defaults (mpe2/_mpe_utils/core.py)
DT = 0.1
DAMPING = 0.25
CONTACT_FORCE = 1e2
CONTACT_MARGIN = 1e-3
DEFAULT_SENSITIVITY = 5.0  # mpe2 SimpleEnv._set_action when agent.accel is None
NO_SPEED_CAP = -1.0


# ------------------------------------------------------------------ episode metrics (navigation)
def landmark_dist(info: dict) -> torch.Tensor:
    """Per world, ``Σ_landmarks`` distance to the nearest agent (float64 ``[E]``)."""
    return info["landmark_min_dist"].to(torch.float64).sum(-1)


def agent_pair_collisions(info: dict) -> torch.Tensor:
    """Per world, colliding agent pairs (float64 ``[E]``): ``Σ_i collisions_i / 2``."""
    return info["collisions"].to(torch.float64).sum(-1) / 2.0


def occupied_landmarks(info: dict) -> torch.Tensor:
    """Per world, landmarks with an agent within the capture radius (float64 ``[E]``)."""
    return info["occupied_landmarks"].to(torch.float64)


#: the navigation metrics of the scenarios that cover landmarks (Spread-v0, Command-v0)
NAVIGATION_METRICS = (
    EpisodeMetric("landmark_dist", "Σ over landmarks of the distance to the nearest agent, "
                  "averaged over the episode's steps", landmark_dist, "mean"),
    EpisodeMetric("collisions", "colliding agent pairs, summed over the episode's steps",
                  agent_pair_collisions, "sum"),
    EpisodeMetric("occupied_landmarks", "landmarks with an agent within 0.1 at the episode's last step",
                  occupied_landmarks, "last"),
)


@dataclasses.dataclass
class Layout:
    """Static description of one world of a scenario."""

    groups: list[tuple[str, list[str]]]  # (group name, agent names) in agent order
    agent_size: list[float]
    agent_accel: list[float]
    agent_max_speed: list[float]  # NO_SPEED_CAP: none
    agent_collide: list[bool]
    agent_color: list[tuple[float, float, float]]
    landmark_size: list[float]
    landmark_collide: list[bool]
    landmark_color: list[tuple[float, float, float]]
    agent_range: tuple[float, float]
    landmark_range: tuple[float, float]
    curriculum_scaled: list[bool]  # agents whose accel / max speed follow the curriculum factor
    curriculum_factors: list[float]  # factor per stage (1.0 where the stage changes rewards only)


class MPEBase(BatchedEnv):
    """Shared machinery of the MPE scenarios.  See the scenario classes for documentation."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, *, num_envs: int = 1, device="cpu", seed: int | None = None,
                 precision: str = "float32", autoreset_mode=None, num_threads: int | None = None,
                 max_cycles: int = 25,
                 continuous_actions: bool = False, curriculum: bool = False,
                 terminate_on_success: bool = False, num_agent_neighbors: int | None = None,
                 num_landmark_neighbors: int | None = None) -> None:
        super().__init__(num_envs=num_envs, device=device, seed=seed, precision=precision,
                         autoreset_mode=autoreset_mode, num_threads=num_threads)
        self.max_cycles = v.check_int("max_cycles", max_cycles, minimum=1)
        self.continuous_actions = v.check_bool("continuous_actions", continuous_actions)
        self.curriculum = v.check_bool("curriculum", curriculum)
        self.terminate_on_success = v.check_bool("terminate_on_success", terminate_on_success)
        self.num_agent_neighbors = v.check_int("num_agent_neighbors", num_agent_neighbors,
                                               minimum=1, allow_none=True)
        self.num_landmark_neighbors = v.check_int("num_landmark_neighbors", num_landmark_neighbors,
                                                  minimum=1, allow_none=True)
        self._stage = 0
        self.layout = self._layout()
        with capture_guard.shared():  # allocations must not land in another thread's capture
            self._build()

    # ------------------------------------------------------------------ scenario interface
    def _layout(self) -> Layout:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _layout")

    def _obs_dim(self, group: str) -> int:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _obs_dim")

    def _allocate_metrics(self) -> dict[str, wp.array]:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _allocate_metrics")

    def _launch_reward_done(self, worlds: slice | None) -> None:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _launch_reward_done")

    #: which observation function mpe_observe applies (K.SCENARIO_*)
    _scenario_code: int = -1

    def _first_group_size(self) -> int:
        return next(iter(self.groups.values())).n_agents

    def _launch_observe(self, write_final: bool, worlds: slice | None = None) -> None:
        agent_k = -1 if self.num_agent_neighbors is None else self.num_agent_neighbors
        landmark_k = -1 if self.num_landmark_neighbors is None else self.num_landmark_neighbors
        groups = list(self.groups)
        second = groups[1] if len(groups) > 1 else groups[0]  # Spread: one group, never written twice
        lay = self.layout
        lo, hi = self._floats(*lay.agent_range)
        llo, lhi = self._floats(*lay.landmark_range)
        self._launch(K.mpe_observe, worlds=worlds, inputs=[
            self._scenario_code, int(write_final), self._first_group_size(), agent_k, landmark_k,
            self._world_seed, lo, hi, llo, lhi, self._base_accel, self._base_max_speed,
            self._curriculum_scaled, self._curriculum_factor, self._reset_now, self._episode,
            self.agent_pos, self.agent_vel, self.landmark_pos, self.agent_accel,
            self.agent_max_speed, self._t,
            self._obs_arrays[groups[0]], self._obs_arrays[second],
            self._final_obs_arrays[groups[0]], self._final_obs_arrays[second]])

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        lay, F, dev, E = self.layout, self.wp_float, self.device, self.num_envs
        num_agents, num_landmarks = len(lay.agent_size), len(lay.landmark_size)
        self.num_landmarks = num_landmarks
        if self.continuous_actions:
            action_space = gymnasium.spaces.Box(low=0.0, high=1.0, shape=(5,), dtype=np.float32)
        else:
            action_space = gymnasium.spaces.Discrete(5)
        start = 0
        for name, agents in lay.groups:
            dim = self._obs_dim(name)
            self.groups[name] = GroupSpec(name=name, agents=tuple(agents), start=start, obs_dim=dim,
                                          action_space=action_space,
                                          observation_space=stack_group_spaces(dim))
            start += len(agents)
        self._allocate_common(num_agents)

        def const(values, dtype=F):
            return wp.array(np.asarray(values, dtype=wp.dtype_to_numpy(dtype)), dtype=dtype, device=dev)

        self._agent_size = const(lay.agent_size)
        self._agent_collide = const([int(c) for c in lay.agent_collide], wp.int32)
        self._landmark_size = const(lay.landmark_size or [0.0])
        self._landmark_collide = const([int(c) for c in lay.landmark_collide] or [0], wp.int32)
        self._base_accel = const(lay.agent_accel)
        self._base_max_speed = const(lay.agent_max_speed)
        self._curriculum_scaled = const([int(self.curriculum and c) for c in lay.curriculum_scaled], wp.int32)
        self._curriculum_factor = const([lay.curriculum_factors[0]])
        self._curriculum_stage = const([0], wp.int32)

        self.agent_pos = self._world_array((num_agents, 2), F)
        self.agent_vel = self._world_array((num_agents, 2), F)
        self.landmark_pos = self._world_array((num_landmarks, 2), F)
        self.agent_accel = self._world_array((num_agents,), F)
        self.agent_max_speed = self._world_array((num_agents,), F)
        self._force = self._world_array((num_agents, 2), F)
        self._action_discrete = self._world_array((num_agents,), wp.int32)
        self._action_continuous = self._world_array((num_agents, 5), wp.float32)
        self._action_view = wp.to_torch(self._action_continuous if self.continuous_actions
                                        else self._action_discrete)
        for name, spec in self.groups.items():
            self._obs_arrays[name] = self._world_array((spec.n_agents, spec.obs_dim), wp.float32)
            self._final_obs_arrays[name] = self._world_array((spec.n_agents, spec.obs_dim), wp.float32)
        self._metric_arrays = self._allocate_metrics()
        self._metrics = {k: wp.to_torch(a) for k, a in self._metric_arrays.items()}
        self._make_views()

    def _state_arrays(self) -> dict[str, wp.array]:
        return {
            "agent_pos": self.agent_pos,
            "agent_vel": self.agent_vel,
            "landmark_pos": self.landmark_pos,
            "agent_accel": self.agent_accel,
            "agent_max_speed": self.agent_max_speed,
            "t": self._t,
            "episode": self._episode,
            "rng_key": self._world_seed,
            "pending_reset": self._pending_reset,
        }

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        if key == "pending_reset" and tensor.numel() and int(tensor.max()) > 1:
            raise ValueError("state['pending_reset']: expected 0 or 1")
        if key == "agent_accel" and tensor.numel() and float(tensor.min()) < 0:
            raise ValueError("state['agent_accel']: expected values >= 0")

    # ------------------------------------------------------------------ launches
    def _floats(self, *values):
        return [self.wp_float(x) for x in values]

    def _launch_step(self, worlds: slice | None = None) -> None:
        contact_force, contact_margin, dt, damping = self._floats(CONTACT_FORCE, CONTACT_MARGIN, DT, DAMPING)
        self._launch(K.mpe_physics, worlds=worlds, inputs=[
            int(self.continuous_actions), contact_force, contact_margin, dt, damping,
            self._agent_size, self._agent_collide, self._landmark_size, self._landmark_collide,
            self.landmark_pos, self.agent_accel, self.agent_max_speed, self._pending_reset,
            self._action_discrete, self._action_continuous, self._force, self.agent_pos,
            self.agent_vel])
        self._launch_reward_done(worlds)
        self._launch_observe(write_final=self._mode_code == K.AUTORESET_SAME_STEP, worlds=worlds)

    # ------------------------------------------------------------------ curriculum (mpe2 API)
    @property
    def curriculum_stage(self) -> int:
        """Current curriculum stage (0-indexed)."""
        return self._stage

    @property
    def num_curriculum_stages(self) -> int:
        return len(self.layout.curriculum_factors)

    def set_curriculum_stage(self, stage: int) -> None:
        """Jump to a stage.  Unlike mpe2 (which clamps), an out-of-range stage is an error."""
        self._check_open()
        if not self.curriculum:
            raise RuntimeError(f"{self.env_id}: set_curriculum_stage needs curriculum=True")
        stage = v.check_int("stage", stage, minimum=0)
        if stage >= self.num_curriculum_stages:
            raise ValueError(f"stage: expected 0..{self.num_curriculum_stages - 1}, got {stage}")
        self._stage = stage
        wp.to_torch(self._curriculum_stage).fill_(stage)
        wp.to_torch(self._curriculum_factor).fill_(self.layout.curriculum_factors[stage])

    def advance_curriculum(self) -> None:
        """Move to the next stage; a no-op at the last stage (as mpe2)."""
        self._check_open()
        if not self.curriculum:
            raise RuntimeError(f"{self.env_id}: advance_curriculum needs curriculum=True")
        if self._stage < self.num_curriculum_stages - 1:
            self.set_curriculum_stage(self._stage + 1)

    # ------------------------------------------------------------------ rendering
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world, drawn like mpe2 (no display needed)."""
        from war_envs.render import render_circles

        self._check_open()
        world = v.check_int("world", world, minimum=0)
        if world >= self.num_envs:
            raise ValueError(f"world: expected 0..{self.num_envs - 1}, got {world}")
        lay = self.layout
        agents = self.agent_pos.numpy()[world]
        landmarks = self.landmark_pos.numpy()[world]
        positions = np.concatenate([agents, landmarks]).astype(np.float64)
        radii = np.asarray(lay.agent_size + lay.landmark_size, dtype=np.float64)
        colors = np.asarray(lay.agent_color + lay.landmark_color, dtype=np.float64)
        return render_circles(positions, radii, colors, width=width, height=height,
                              original_cam_range=original_cam_range)
