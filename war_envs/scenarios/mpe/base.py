"""What every MPE scenario shares (the Python side of ``world.py``): the arguments mpe2 1.1
takes, the agents' action encodings, buffers, the struct the kernels read, launches, the
curriculum stage API and rendering.

**A scenario is one file**: a subclass of ``MPEBase`` with

- ``_layout()`` -> ``Layout``: groups and agent names (mpe2's order), sizes, masses,
  accelerations, speed caps, which agents move / speak / collide, landmarks, colours, the
  communication width ``dim_c``;
- ``_obs_dim(group)``: the observation size of the group's agents;
- ``_fields()`` -> ``{name: Field}``: the scenario's own struct fields — parameters (``param``,
  ``const``), per-world random choices of a reset (``state``: part of ``get_state`` /
  ``set_state``), per-step task metrics (``info``: in ``step``'s info) and ``scratch``;
- ``options``: the optional MPEBase behaviours it implements (of ``OPTIONS``: ``curriculum``,
  ``terminate_on_success``, ``num_agent_neighbors``, ``num_landmark_neighbors``); the base
  refuses any other one that is not left at its default, with one error naming the argument,
  the scenario and the default expected;
- three Warp functions, set as class attributes (``world.py`` builds the kernels around them):
  ``reset_world(w, e)`` (draw world e's start from its stream ``common.episode_stream(w, e)``;
  velocities and communication are already zero; ``common.uniform_start`` draws mpe2's usual
  agents-then-landmarks positions), ``reward_world(w, e) -> bool`` (write ``w.reward[e, :]``
  and the info fields after the physics step; return the task's terminal condition) and
  ``observe_agent(w, e, i, out)`` (agent i's observation into ``out[e, i, :obs_dim]``).
  ``clear_info(w, e)`` (what NEXT_STEP's reset-only step reports) is generated: it zeroes
  every ``info`` field; a scenario whose info needs more sets its own.  ``w`` is the struct:
  the shared fields of ``world.shared_fields`` plus the scenario's own, by name.

Helpers several scenarios use live in ``common.py`` (and the exact assignment in
``assignment.py``); nothing scenario-specific lives in shared modules, and a scenario has any
number of groups.
"""

from __future__ import annotations

import dataclasses

import gymnasium
import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import (  # noqa: F401
    ROLES,
    Field,
    const,
    info,
    info_clearer,
    kernel_module_name,
    param,
    scratch,
    state,
    warp_dtype,
)
from war_envs.core.fields import world_struct as _world_struct
from war_envs.core.runtime import capture_guard
from war_envs.core.struct_world import StructWorldEnv
from war_envs.scenarios.mpe import world as W

# mpe2 World defaults (mpe2/_mpe_utils/core.py)
DT = 0.1
DAMPING = 0.25
CONTACT_FORCE = 1e2
CONTACT_MARGIN = 1e-3
DEFAULT_SENSITIVITY = 5.0  # mpe2 SimpleEnv._set_action when agent.accel is None
NO_SPEED_CAP = -1.0


@dataclasses.dataclass
class Layout:
    """Static description of one world of a scenario (per agent / landmark lists in order)."""

    groups: list[tuple[str, list[str]]]  # (group name, agent names) in agent order
    agent_size: list[float]
    agent_collide: list[bool]
    agent_color: list[tuple[float, float, float]]
    landmark_size: list[float]
    landmark_color: list[tuple[float, float, float]]
    agent_accel: list[float] | None = None  # None: mpe2's default sensitivity for every agent
    agent_max_speed: list[float] | None = None  # None: no speed cap (NO_SPEED_CAP) for any agent
    landmark_collide: list[bool] | None = None  # None: no landmark collides
    curriculum_scaled: list[bool] | None = None  # agents whose accel / max speed follow the curriculum factor
    curriculum_factors: list[float] = dataclasses.field(default_factory=lambda: [1.0])  # per stage
    agent_movable: list[bool] | None = None  # None: every agent moves
    agent_silent: list[bool] | None = None  # None: every agent is silent
    agent_mass: list[float] | None = None  # None: 1 (mpe2's initial_mass)
    dim_c: int = 0  # communication channel width (mpe2's world.dim_c)

    def __post_init__(self) -> None:
        n = len(self.agent_size)
        self.agent_accel = self.agent_accel or [DEFAULT_SENSITIVITY] * n
        self.agent_max_speed = self.agent_max_speed or [NO_SPEED_CAP] * n
        if self.landmark_collide is None:
            self.landmark_collide = [False] * len(self.landmark_size)
        self.curriculum_scaled = self.curriculum_scaled or [False] * n
        self.agent_movable = self.agent_movable or [True] * n
        self.agent_silent = self.agent_silent or [True] * n
        self.agent_mass = self.agent_mass or [1.0] * n
        for name in ("agent_accel", "agent_max_speed", "agent_collide", "agent_color", "curriculum_scaled",
                     "agent_movable", "agent_silent", "agent_mass"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"Layout.{name}: expected {n} values (one per agent), got {len(getattr(self, name))}")
        for name in ("landmark_collide", "landmark_color"):
            if len(getattr(self, name)) != len(self.landmark_size):
                raise ValueError(f"Layout.{name}: expected {len(self.landmark_size)} values (one per landmark), "
                                 f"got {len(getattr(self, name))}")
        if sum(len(a) for _, a in self.groups) != n:
            raise ValueError(f"Layout.groups: expected {n} agents in all, got {sum(len(a) for _, a in self.groups)}")
        if not all(self.agent_silent) and self.dim_c < 1:
            raise ValueError("Layout.dim_c: agents that speak need a communication channel (dim_c >= 1)")


def agent_action_space(movable: bool, silent: bool, dim_c: int, continuous: bool) -> gymnasium.spaces.Space:
    """mpe2's action space of one agent: moving adds 5 (no-op, -x, +x, -y, +y), speaking
    multiplies a discrete space by ``dim_c`` (index ``move + 5 · say``) or appends ``dim_c``
    continuous values (``[move(5), say(dim_c)]`` in [0, 1])."""
    if continuous:
        dim = (W.NUM_MOVE_ACTIONS if movable else 0) + (0 if silent else dim_c)
        return gymnasium.spaces.Box(low=0.0, high=1.0, shape=(dim,), dtype=np.float32)
    n = W.NUM_MOVE_ACTIONS if movable else 1
    return gymnasium.spaces.Discrete(n * (1 if silent else dim_c))


#: MPEBase's optional behaviours: name -> (its default, what a scenario without it lacks).  A
#: scenario declares those it implements in ``MPEBase.options``.
OPTIONS = {
    "curriculum": (False, "no curriculum stages"),
    "terminate_on_success": (False, "no success condition"),
    "num_agent_neighbors": (None, "no neighbour view"),
    "num_landmark_neighbors": (None, "no neighbour view"),
}


class MPEBase(StructWorldEnv):
    """Shared machinery of the MPE scenarios.  See the scenario classes for documentation."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}
    #: the mpe2 module whose semantics the scenario has (``None``: not an mpe2 environment)
    mpe2_module: str | None = None

    #: the options of ``OPTIONS`` the scenario implements (the others must keep their default)
    options: frozenset[str] = frozenset()
    #: ``state`` fields holding landmark indices (``set_state`` refuses values outside 0 … L−1)
    landmark_index_states: tuple[str, ...] = ()

    #: the scenario's Warp functions (see the module docstring; ``clear_info`` None: generated)
    reset_world = None
    reward_world = None
    observe_agent = None
    clear_info = None
    required_functions = ("reset_world", "reward_world", "observe_agent")
    #: JaxMARL's MPE physics instead of mpe2's (``world.py``); ``control_force(w, e, i)``: agent
    #: i's control force there (None: ``world.action_force``, the agent's action)
    jaxmarl_physics = False
    control_force = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.options = frozenset(cls.options)
        unknown = sorted(cls.options - OPTIONS.keys())
        if unknown:
            raise TypeError(f"{cls.__name__}.options: unknown option(s) {unknown}; expected some of {list(OPTIONS)}")

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
        self._refuse_undeclared()
        self._stage = 0
        self.layout = self._layout()
        with capture_guard.shared():  # allocations must not land in another thread's capture
            self._build()

    def _refuse_undeclared(self) -> None:
        """A ``ValueError`` naming the first option the scenario does not declare in ``options``
        that is not at its default."""
        cls = type(self)
        for name, (default, lack) in OPTIONS.items():
            value = getattr(self, name)
            if name not in cls.options and value != default:
                where = cls.env_id + (f" (mpe2 {cls.mpe2_module})" if cls.mpe2_module else "")
                takes = ", ".join(n for n in OPTIONS if n in cls.options) or "none"
                raise ValueError(f"{name}: {where} has {lack}; expected {default}, got {value!r} (the MPE "
                                 f"options it takes: {takes})")

    # ------------------------------------------------------------------ scenario interface
    def _layout(self) -> Layout:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _layout")

    # ------------------------------------------------------------------ neighbour views
    @property
    def agent_k(self) -> int:
        """``num_agent_neighbors`` as the kernels take it (-1: every agent)."""
        return -1 if self.num_agent_neighbors is None else self.num_agent_neighbors

    @property
    def landmark_k(self) -> int:
        """``num_landmark_neighbors`` as the kernels take it (-1: every landmark)."""
        return -1 if self.num_landmark_neighbors is None else self.num_landmark_neighbors

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        lay, F = self.layout, self.wp_float
        cls = type(self)
        self._require_functions()
        if cls.jaxmarl_physics and not all(lay.agent_movable):
            raise ValueError(f"{cls.__name__}: JaxMARL's physics (jaxmarl_physics) needs every agent movable")
        num_agents, num_landmarks = len(lay.agent_size), len(lay.landmark_size)
        self.num_landmarks = num_landmarks
        self._add_groups(lay.groups, [agent_action_space(lay.agent_movable[i], lay.agent_silent[i], lay.dim_c,
                                                         self.continuous_actions) for i in range(num_agents)])
        fields = self._checked_fields()
        for name in cls.landmark_index_states:
            if name not in fields or fields[name].role != "state" or fields[name].dtype != "int":
                raise ValueError(f"{cls.__name__}.landmark_index_states: {name!r} is not an int state field")
        act_dim = max(int(np.prod(s.action_space.shape or (1,))) for s in self.groups.values())
        obs_dim = max(s.obs_dim for s in self.groups.values())
        # every per-world buffer allocated below: refuse a batch that cannot fit before allocating
        buffers = [((num_agents, 2), F)] * 3 + [((num_agents, max(lay.dim_c, 1)), F), ((num_landmarks, 2), F)]
        buffers += [((num_agents,), F)] * 2 + [((num_agents,), wp.int32), ((num_agents, act_dim), wp.float32)]
        buffers += [((num_agents, obs_dim), wp.float32)] * 2
        self._allocate_worlds(num_agents, buffers, fields)
        Struct = _world_struct(cls, F, W.shared_fields(F), fields, "MPE world")
        w = Struct()
        self._set_world_params(w)
        w.agent_pos = self.agent_pos = self._world_array((num_agents, 2), F)
        w.agent_vel = self.agent_vel = self._world_array((num_agents, 2), F)
        w.agent_comm = self.agent_comm = self._world_array((num_agents, max(lay.dim_c, 1)), F)
        w.landmark_pos = self.landmark_pos = self._world_array((num_landmarks, 2), F)
        w.agent_accel = self.agent_accel = self._world_array((num_agents,), F)
        w.agent_max_speed = self.agent_max_speed = self._world_array((num_agents,), F)
        w.force = self._world_array((num_agents, 2), F)
        self._finish_struct(w, Struct, fields, num_agents, act_dim, obs_dim)
        clear_info = cls.clear_info if cls.clear_info is not None else info_clearer(fields)
        self._physics, self._reward_done, self._observe = W.world_kernels(
            Struct, kernel_module_name("mpe", cls, F), cls.reset_world, cls.reward_world, cls.observe_agent, clear_info,
            cls.jaxmarl_physics, cls.control_force)
        self._make_views()

    def _set_world_params(self, w) -> None:
        """The layout's parameters and per-agent / per-landmark constants into struct ``w``."""
        lay, F, array, ints = self.layout, self.wp_float, self._array, self._ints
        w.mode, w.max_cycles, w.continuous, w.dim_c = (self._mode_code, self.max_cycles,
                                                        int(self.continuous_actions), lay.dim_c)
        w.all_movable, w.unit_masses = int(all(lay.agent_movable)), int(all(m == 1.0 for m in lay.agent_mass))
        w.all_silent = int(lay.dim_c == 0 or all(lay.agent_silent))
        w.dt, w.damping, w.contact_force, w.contact_margin = DT, DAMPING, CONTACT_FORCE, CONTACT_MARGIN
        w.agent_size, w.agent_mass = array(lay.agent_size, F), array(lay.agent_mass, F)
        w.agent_movable, w.agent_silent = ints(lay.agent_movable), ints(lay.agent_silent)
        w.agent_collide = ints(lay.agent_collide)
        w.landmark_size = array(lay.landmark_size or [0.0], F)
        w.landmark_collide = ints(lay.landmark_collide or [0])
        w.base_accel, w.base_max_speed = array(lay.agent_accel, F), array(lay.agent_max_speed, F)
        w.curriculum_scaled = ints([self.curriculum and c for c in lay.curriculum_scaled])
        w.curriculum_factor = array([lay.curriculum_factors[0]], F)
        w.curriculum_stage = array([0], wp.int32)

    def _action_targets(self) -> dict[str, torch.Tensor]:
        parts = {}
        for g, s in self.groups.items():
            part = self._action_view[:, s.start:s.stop]
            parts[g] = part[..., :s.action_space.shape[0]] if self.continuous_actions else part
        return parts

    def _family_state(self) -> dict[str, wp.array]:
        arrays = {
            "agent_pos": self.agent_pos,
            "agent_vel": self.agent_vel,
            "landmark_pos": self.landmark_pos,
            "agent_accel": self.agent_accel,
            "agent_max_speed": self.agent_max_speed,
        }
        if not all(self.layout.agent_silent):
            arrays["agent_comm"] = self.agent_comm
        return arrays

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        super()._check_state_value(key, tensor)
        if key == "agent_accel" and tensor.numel() and float(tensor.min()) < 0:
            raise ValueError("state['agent_accel']: expected values >= 0")
        if key in self.landmark_index_states and tensor.numel() and int(tensor.max()) >= self.num_landmarks:
            raise ValueError(f"state[{key!r}]: expected landmark indices 0..{self.num_landmarks - 1}")
        if key == "agent_comm" and tensor.numel():
            silent = [i for i, s in enumerate(self.layout.agent_silent) if s and bool(tensor[:, i].any())]
            if silent:
                raise ValueError(f"state['agent_comm']: agent {silent[0]} is silent, its communication state is "
                                 f"always zeros (mpe2 sets it to zeros every step); expected zeros there")

    # ------------------------------------------------------------------ launches
    def _launch_observe(self, write_final: bool, worlds: slice | None = None) -> None:
        self._launch_world(self._observe, worlds, int(write_final))

    def _launch_step(self, worlds: slice | None = None) -> None:
        self._launch_world(self._physics, worlds)
        self._launch_world(self._reward_done, worlds)
        self._launch_observe(write_final=self._mode_code == W.AUTORESET_SAME_STEP, worlds=worlds)

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
        wp.to_torch(self._w.curriculum_stage).fill_(stage)
        wp.to_torch(self._w.curriculum_factor).fill_(self.layout.curriculum_factors[stage])

    def advance_curriculum(self) -> None:
        """Move to the next stage; a no-op at the last stage (as mpe2)."""
        self._check_open()
        if not self.curriculum:
            raise RuntimeError(f"{self.env_id}: advance_curriculum needs curriculum=True")
        if self._stage < self.num_curriculum_stages - 1:
            self.set_curriculum_stage(self._stage + 1)

    # ------------------------------------------------------------------ rendering
    def _entity_colors(self, world: int) -> np.ndarray:
        """RGB in [0, 1] of every agent then every landmark of ``world`` (the layout's; scenarios
        whose colours are drawn at reset override this)."""
        lay = self.layout
        return np.asarray(lay.agent_color + lay.landmark_color, dtype=np.float64)

    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world, drawn like mpe2 (no display needed)."""
        from war_envs.render import render_circles

        world = self._checked_world(world)
        lay = self.layout
        agents = self.agent_pos.numpy()[world]
        landmarks = self.landmark_pos.numpy()[world]
        positions = np.concatenate([agents, landmarks]).astype(np.float64)
        radii = np.asarray(lay.agent_size + lay.landmark_size, dtype=np.float64)
        return render_circles(positions, radii, self._entity_colors(world), width=width, height=height,
                              original_cam_range=original_cam_range)
