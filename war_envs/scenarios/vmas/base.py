"""What every VMAS scenario shares (the Python side of ``world.py``): bodies and lidars as data,
VMAS's environment arguments, action spaces, buffers, the struct the kernels read, launches and
rendering.

**A scenario is one file**: a subclass of ``VmasBase`` with

- ``_layout()`` -> ``Layout``: the world's parameters (VMAS's ``World(...)`` arguments), the
  bodies in VMAS's entity order (landmarks, then agents, each in the order the VMAS scenario
  adds them), the groups and the lidars;
- ``_obs_dim(group)``: the observation size of the group's agents;
- ``_fields()`` -> ``{name: Field}`` (``war_envs.core.fields``): the scenario's own struct
  fields (parameters, per-world ``state`` kept by ``get_state``/``set_state``, per-step ``info``);
- Warp functions set as class attributes: ``reset_world(w, e)`` (world e's start: VMAS's
  ``reset_world_at``; the state is already zeroed), ``reward_world(w, e) -> bool`` (every
  agent's reward into ``w.reward[e, :]`` and the info fields, after the physics; returns VMAS's
  ``done()``), ``observe_agent(w, e, i, out)`` (agent i's observation into ``out[e, i, :]``),
  and optionally ``process_action(w, e, i)`` (VMAS's ``process_action``, on ``w.u``) and
  ``pre_step(w, e)``.

VMAS's environment arguments are taken by every scenario: ``continuous_actions`` (default True,
as VMAS), ``max_steps`` (VMAS's horizon; default 100, BenchMARL's, where VMAS's ``make_env``
defaults to no limit: ``None`` gives no limit here too) and ``clamp_actions``.  Discrete actions
are VMAS's default flat ``Discrete(3 ** action_size)`` (``multidiscrete_actions=False``).
"""

from __future__ import annotations

import dataclasses
import math

import gymnasium
import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import info_clearer, kernel_module_name
from war_envs.core.scenario import EpisodeMetric
from war_envs.core.fields import world_struct as _world_struct
from war_envs.core.runtime import capture_guard
from war_envs.core.struct_world import StructWorldEnv
from war_envs.scenarios.vmas import dynamics as DYN
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W

#: ``max_steps=None`` (VMAS: no horizon) as the kernels' step limit
NO_HORIZON = 2**31 - 1
_SHAPES = {"sphere": 0, "box": 1, "line": 2}
_PAIR_KINDS = {("sphere", "sphere"): 0, ("line", "sphere"): 1, ("line", "line"): 2, ("box", "sphere"): 3,
               ("box", "line"): 4, ("box", "box"): 5}
#: VMAS's Color enum values (vmas/simulator/utils.py)
COLORS = {"red": (0.75, 0.25, 0.25), "green": (0.25, 0.75, 0.25), "blue": (0.25, 0.25, 0.75),
          "light_green": (0.45, 0.95, 0.45), "white": (0.75, 0.75, 0.75), "gray": (0.25, 0.25, 0.25),
          "black": (0.15, 0.15, 0.15), "orange": (1.0, 0.5, 0.0), "pink": (0.97, 0.51, 0.75),
          "purple": (0.8, 0.0, 0.8), "yellow": (0.87, 0.87, 0.0)}


@dataclasses.dataclass
class Body:
    """One VMAS entity: an agent (``agent=True``: VMAS's ``Agent`` defaults, movable and
    rotatable) or a landmark (VMAS's ``Landmark``: static).  Shapes: ``"sphere"`` (``radius``,
    VMAS default 0.05), ``"box"`` (``length`` along its x axis, ``width``; VMAS defaults 0.3 and
    0.1; ``hollow``) and ``"line"`` (``length``, default 0.5).  ``None`` limits are VMAS's None."""

    name: str
    agent: bool = False
    shape: str = "sphere"
    radius: float = 0.05
    length: float | None = None
    width: float = 0.1
    hollow: bool = False
    movable: bool | None = None  # None: True for agents, False for landmarks
    rotatable: bool | None = None
    collide: bool = True
    mass: float = 1.0
    max_speed: float | None = None
    v_range: float | None = None
    drag: float | None = None
    linear_friction: float | None = None
    angular_friction: float | None = None
    color: tuple[float, float, float] = COLORS["gray"]
    # agents only (VMAS's Agent arguments)
    u_range: float | tuple[float, ...] = 1.0
    u_multiplier: float | tuple[float, ...] = 1.0
    f_range: float | None = None
    max_f: float | None = None
    t_range: float | None = None
    max_t: float | None = None
    #: VMAS's ``Agent(dynamics=...)`` (``dynamics.py``; default ``Holonomic``) and
    #: ``action_size`` (None: the dynamics' ``needed_action_size``; a scenario acting with
    #: fewer components fills the rest of ``u`` in its ``process_action``, as Drone-v0)
    dynamics: DYN.Dynamics = DYN.Holonomic()
    action_size: int | None = None
    #: names of bodies this one never collides with (VMAS's ``collision_filter`` returning False)
    ignores: frozenset[str] = frozenset()
    #: drawn in pictures (VMAS's ``is_rendering``; e.g. passage's removed wall boxes are not)
    visible: bool = True
    #: a VMAS agent moved by its ``action_script`` (not a policy agent: no action, observation or
    #: reward; e.g. flocking's target): movable and rotatable by default, its force each step
    #: the scenario's ``pre_step`` writes into ``w.script_u[e, row]`` (``world.script_row``).
    #: Not an ``agent`` here: it comes before the policy agents (``n_landmarks`` counts it, as
    #: flocking's target, VMAS's first agent) or after them (football's scripted team and ball,
    #: VMAS's later agents), where VMAS lists it
    scripted: bool = False

    def __post_init__(self) -> None:
        if self.shape not in _SHAPES:
            raise ValueError(f"Body.shape: expected one of {list(_SHAPES)}, got {self.shape!r}")
        if self.length is None:
            self.length = 0.3 if self.shape == "box" else 0.5
        if self.scripted and self.agent:
            raise ValueError(f"Body {self.name!r}: a scripted body is not a policy agent (agent=False)")
        if self.movable is None:
            self.movable = self.agent or self.scripted
        if self.rotatable is None:
            self.rotatable = self.agent or self.scripted
        self.ignores = frozenset(self.ignores)
        if not isinstance(self.dynamics, DYN.Dynamics):
            raise TypeError(f"Body {self.name!r}: dynamics must be one of {[m.__name__ for m in DYN.MODELS]}, "
                            f"got {self.dynamics!r}")
        if self.action_size is None:
            self.action_size = self.dynamics.needed_action_size
        if self.agent and not (isinstance(self.action_size, int) and self.action_size >= 1):
            raise ValueError(f"Body {self.name!r}: action_size: an agent acts with at least one component here "
                             f"(VMAS's Static agents have none by default: give them an action_size), got "
                             f"{self.action_size!r}")
        for name in ("u_range", "u_multiplier"):  # VMAS's Action._check_action_init
            value = getattr(self, name)
            if isinstance(value, (tuple, list)) and len(value) != self.action_size:
                raise ValueError(f"Body {self.name!r}: {name} must be a float or one per action "
                                 f"({self.action_size}), got {value}")

    @property
    def u_size(self) -> int:
        """The components of its ``u`` after ``process_action``: its action's, or more where its
        dynamics need more (VMAS's ``check_and_process_action``)."""
        return max(self.action_size, self.dynamics.needed_action_size)

    def circumscribed_radius(self) -> float:
        if self.shape == "sphere":
            return self.radius
        if self.shape == "box":
            return math.sqrt((self.length / 2) ** 2 + (self.width / 2) ** 2)
        return self.length / 2

    def moment_of_inertia(self) -> float:
        if self.shape == "sphere":
            return (1 / 2) * self.mass * self.radius**2
        if self.shape == "box":
            return (1 / 12) * self.mass * (self.length**2 + self.width**2)
        return (1 / 12) * self.mass * (self.length**2)


@dataclasses.dataclass
class Joint:
    """VMAS's ``Joint`` (``vmas/simulator/joints.py``) between bodies ``entity_a`` and
    ``entity_b`` (names), with VMAS's arguments and defaults: anchors in ``[-1, 1]²`` (scaled by
    the shape: a line's ``(x length / 2, 0)``, a box's ``(x length / 2, y width / 2)``, a
    sphere's ``(x r, y r)``), ``rotate_a`` / ``rotate_b`` (whether each body may turn freely at
    its anchor), ``fixed_rotation_a`` / ``fixed_rotation_b``, ``dist``, ``collidable``,
    ``width`` and ``mass`` (of the joint's own landmark).

    ``dist = 0``: one constraint holding the two anchors together.  ``dist > 0``: VMAS adds a
    landmark, a movable and rotatable line of length ``dist`` (a box of width ``width`` where
    ``width > 0``) named ``"joint <a> <b>"`` (``landmark()``: the scenario lists it among its
    bodies where VMAS's ``add_joint`` adds it), and two constraints: its ends to a's and b's
    anchors.  Bodies held by a constraint never collide with each other."""

    entity_a: str
    entity_b: str
    anchor_a: tuple[float, float] = (0.0, 0.0)
    anchor_b: tuple[float, float] = (0.0, 0.0)
    rotate_a: bool = True
    rotate_b: bool = True
    dist: float = 0.0
    collidable: bool = False
    width: float = 0.0
    mass: float = 1.0
    fixed_rotation_a: float | None = None
    fixed_rotation_b: float | None = None
    #: the landmark's collision filter (names it never collides with)
    ignores: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        # VMAS's assertions, as ValueErrors
        if self.entity_a == self.entity_b:
            raise ValueError(f"Joint: cannot join {self.entity_a!r} to itself")
        for anchor in (self.anchor_a, self.anchor_b):
            if not (max(anchor) <= 1 and min(anchor) >= -1):
                raise ValueError(f"Joint anchors: expected values in [-1, 1], got {anchor}")
        if not self.dist >= 0:
            raise ValueError(f"Joint.dist: expected >= 0, got {self.dist}")
        if self.dist == 0 and (self.collidable or self.width != 0
                               or self.fixed_rotation_a != self.fixed_rotation_b):
            raise ValueError("Joint with dist 0: cannot be collidable or have a width, and "
                             "fixed_rotation_a must equal fixed_rotation_b")
        for rotate, fixed in ((self.rotate_a, self.fixed_rotation_a), (self.rotate_b, self.fixed_rotation_b)):
            if fixed is not None and rotate:
                raise ValueError("Joint: a fixed rotation needs rotate=False on that side")
        if self.width > 0 and not self.collidable:
            raise ValueError("Joint.width: a joint with a width must be collidable")
        self.ignores = frozenset(self.ignores)

    @property
    def landmark_name(self) -> str:
        return f"joint {self.entity_a} {self.entity_b}"

    def landmark(self) -> Body | None:
        """VMAS's joint landmark (None for ``dist = 0``)."""
        if self.dist == 0:
            return None
        shape = {"shape": "box", "length": self.dist, "width": self.width} if self.width != 0 else \
            {"shape": "line", "length": self.dist}
        return Body(self.landmark_name, movable=True, rotatable=True, mass=self.mass, collide=self.collidable,
                    color=COLORS["black"], ignores=self.ignores, **shape)

    def constraints(self) -> list[tuple[str, str, tuple, tuple, bool, float | None]]:
        """VMAS's ``joint_constraints``: ``(a, b, anchor_a, anchor_b, rotate, fixed_rotation)``,
        ``fixed_rotation`` None where VMAS infers it at every reset (``Joint.notify``)."""
        if self.dist == 0:
            rotate = self.rotate_a and self.rotate_b
            return [(self.entity_a, self.entity_b, self.anchor_a, self.anchor_b, rotate,
                     0.0 if rotate else self.fixed_rotation_a)]
        name = self.landmark_name
        return [(name, self.entity_a, (-1, 0), self.anchor_a, self.rotate_a,
                 0.0 if self.rotate_a else self.fixed_rotation_a),
                (name, self.entity_b, (1, 0), self.anchor_b, self.rotate_b,
                 0.0 if self.rotate_b else self.fixed_rotation_b)]


def anchor_delta(body: Body, anchor) -> tuple[float, float]:
    """VMAS's ``Shape.get_delta_from_anchor`` (its sphere's, normalisation slip included), as the
    float32 values of VMAS's delta tensor."""
    if body.shape == "sphere":
        delta = torch.tensor([anchor[0] * body.radius, anchor[1] * body.radius]).to(torch.float32)
        norm = torch.linalg.vector_norm(delta)
        if norm > body.radius:
            delta /= norm * body.radius
        values = delta.tolist()
    elif body.shape == "box":
        values = [anchor[0] * body.length / 2, anchor[1] * body.width / 2]
    else:
        values = [anchor[0] * body.length / 2, 0.0]
    return tuple(torch.tensor(values, dtype=torch.float32).tolist())


@dataclasses.dataclass
class Lidar:
    """VMAS's ``Lidar`` sensor of one agent: ``n_rays`` rays from ``angle_start`` to
    ``angle_end`` (a full turn leaves out the repeated end), ``max_range``, seeing the bodies named
    in ``sees``."""

    agent: str
    n_rays: int = 8
    max_range: float = 1.0
    sees: tuple[str, ...] = ()
    angle_start: float = 0.0
    angle_end: float = 2 * math.pi

    def angles(self) -> np.ndarray:
        """The rays' angles as VMAS computes them (``torch.linspace`` in float32)."""
        if (self.angle_start - self.angle_end) % (math.pi * 2) < 1e-5:
            return torch.linspace(self.angle_start, self.angle_end, self.n_rays + 1)[: self.n_rays].numpy()
        return torch.linspace(self.angle_start, self.angle_end, self.n_rays).numpy()


@dataclasses.dataclass
class Layout:
    """One world of a scenario: VMAS's ``World(...)`` parameters, bodies, groups and lidars."""

    bodies: list[Body]  # VMAS's entity order: landmarks, then agents
    groups: list[tuple[str, list[str]]]  # (group, agent names) in agent order
    dt: float = 0.1
    substeps: int = 1
    drag: float = G.DRAG
    linear_friction: float = 0.0
    angular_friction: float = 0.0
    x_semidim: float | None = None
    y_semidim: float | None = None
    collision_force: float = G.COLLISION_FORCE
    contact_margin: float = 1e-3
    gravity: tuple[float, float] = (0.0, 0.0)
    lidars: list[Lidar] = dataclasses.field(default_factory=list)
    joints: list[Joint] = dataclasses.field(default_factory=list)
    joint_force: float = G.JOINT_FORCE
    torque_constraint_force: float = G.TORQUE_CONSTRAINT_FORCE

    def __post_init__(self) -> None:
        names = [b.name for b in self.bodies]
        if len(set(names)) != len(names):
            raise ValueError("Layout.bodies: body names must be unique")
        seen_agent = after_agents = False
        for b in self.bodies:
            if b.agent and after_agents:
                raise ValueError(f"Layout.bodies: the policy agents come in one run; {b.name!r} follows a "
                                 "scripted body that follows them")
            if b.agent:
                seen_agent = True
            elif seen_agent and not b.scripted:
                raise ValueError(f"Layout.bodies: landmarks come before agents (VMAS's entity order); "
                                 f"{b.name!r} follows an agent")
            else:
                after_agents = seen_agent
        agents = [b.name for b in self.bodies if b.agent]
        grouped = [a for _, members in self.groups for a in members]
        if grouped != agents:
            raise ValueError(f"Layout.groups: expected the agents {agents} in order, got {grouped}")
        if self.joints and self.substeps <= 1:
            raise ValueError("Layout.substeps: joints need more than one substep (VMAS's add_joint)")
        for joint in self.joints:
            for name in (joint.entity_a, joint.entity_b) + ((joint.landmark_name,) if joint.dist else ()):
                if name not in names:
                    raise ValueError(f"Layout.joints: no body named {name!r}")

    @property
    def agents(self) -> list[Body]:
        return [b for b in self.bodies if b.agent]

    @property
    def action_size(self) -> int:
        """The width of the action buffer: the largest agent action (``Body.action_size``)."""
        return max((b.action_size for b in self.agents), default=0)

    @property
    def u_size(self) -> int:
        """The width of ``u``: the largest ``Body.u_size``."""
        return max((b.u_size for b in self.agents), default=0)

    @property
    def dynamics(self) -> list:
        """Every agent's dynamics model, in agent order."""
        return [b.dynamics for b in self.agents]

    @property
    def n_landmarks(self) -> int:
        """The bodies before the first policy agent (landmarks, and scripted bodies listed there)."""
        return next((k for k, b in enumerate(self.bodies) if b.agent), len(self.bodies))

    def index(self, name: str) -> int:
        return [b.name for b in self.bodies].index(name)

    def joint_constraints(self) -> list[tuple[int, int, tuple, tuple, bool, float | None]]:
        """Every joint constraint as ``(a, b, delta_a, delta_b, rotate, fixed_rotation)`` (body
        indices, anchor offsets), in the order VMAS's step applies them: VMAS keeps one constraint
        per pair of bodies (its dict by name pair, the later one kept) and applies them in
        entity-pair order."""
        by_pair = {}
        for joint in self.joints:
            for a, b, anchor_a, anchor_b, rotate, fixed in joint.constraints():
                ia, ib = self.index(a), self.index(b)
                by_pair[frozenset((ia, ib))] = (ia, ib, anchor_delta(self.bodies[ia], anchor_a),
                                                anchor_delta(self.bodies[ib], anchor_b), rotate, fixed)
        return [by_pair[k] for k in sorted(by_pair, key=lambda k: sorted(k))]

    def contact_pairs(self) -> list[tuple[int, int, int]]:
        """``(a, b, kind)`` for every pair VMAS's world works on, in VMAS's order: by kind
        (``world.SPHERE_SPHERE`` ...), then entity-pair order; for mixed kinds ``a`` is the
        line / box."""
        pairs = []
        joined = {frozenset((c[0], c[1])) for c in self.joint_constraints()}
        for i, a in enumerate(self.bodies):
            for j in range(i + 1, len(self.bodies)):
                b = self.bodies[j]
                if not (a.collide and b.collide) or b.name in a.ignores or a.name in b.ignores:
                    continue
                if not (a.movable or a.rotatable or b.movable or b.rotatable):
                    continue
                if frozenset((i, j)) in joined:  # VMAS skips a pair held by a joint
                    continue
                first, second = (i, j)
                key = (a.shape, b.shape)
                if key not in _PAIR_KINDS:
                    first, second, key = j, i, (b.shape, a.shape)
                pairs.append((_PAIR_KINDS[key], i, j, first, second))
        pairs.sort(key=lambda p: (p[0], p[1], p[2]))
        return [(first, second, kind) for kind, _, _, first, second in pairs]


def agent_action_space(body: Body, action_size: int, continuous: bool) -> gymnasium.spaces.Space:
    """VMAS's action space of one agent: ``Box(-u_range, u_range)`` per component, or
    ``Discrete(3 ** action_size)`` (stay, decrement, increment per component, flattened)."""
    if continuous:
        high = np.broadcast_to(np.asarray(body.u_range, dtype=np.float32), (action_size,)).copy()
        return gymnasium.spaces.Box(low=-high, high=high, shape=(action_size,), dtype=np.float32)
    return gymnasium.spaces.Discrete(3**action_size)


def check_positive(name: str, value) -> float:
    """A finite float > 0 (``ValueError`` naming the argument otherwise)."""
    value = v.check_float(name, value)
    if not value > 0:
        raise ValueError(f"{name}: expected a float > 0, got {value}")
    return value


def check_room(name: str, min_dist: float, n_bodies: int, half_x: float, half_y: float) -> None:
    """``ValueError`` naming ``name`` when ``n_bodies`` points at least ``min_dist`` apart cannot
    fit in ``[-half_x, half_x] x [-half_y, half_y]`` (discs of radius ``min_dist / 2`` in the box
    grown by that radius, at most the densest packing's share of its area), where VMAS's
    rejection sampling (``find_random_pos_for_entity``) would never end."""
    if min_dist <= 0 or n_bodies <= 1:
        return
    area = (2 * half_x + min_dist) * (2 * half_y + min_dist)
    most = area * (math.pi / math.sqrt(12)) / (math.pi * (min_dist / 2) ** 2)
    if n_bodies > most:
        raise ValueError(f"{name}: {min_dist} leaves no room for {n_bodies} bodies that far apart in "
                         f"[-{half_x}, {half_x}] x [-{half_y}, {half_y}] (VMAS would never finish spawning)")


def pair_reach_squared(a: Body, b: Body, F) -> float:
    """The square of ``world.within_contact_reach``'s reach for bodies a and b, rounded in the
    world's float type ``F`` operation for operation as the kernel would work it out
    (``reach_a + reach_b + LINE_MIN_DIST``, plus ``1e-3 (1 + reach)``), so the contact loop's
    test against it is bitwise the same as working it out per pair and substep."""
    f = wp.dtype_to_numpy(F)
    reach = (f(a.circumscribed_radius()) + f(b.circumscribed_radius())) + f(G.LINE_MIN_DIST)
    r = reach + f(1e-3) * (f(1.0) + reach)
    return float(r * r)


def _none(value) -> float:
    return -1.0 if value is None else float(value)


def _per_action(value, size: int, width: int) -> np.ndarray:
    """An agent's per-component action value (a float, or one per component) as ``width``
    float32s, zeros past its ``size`` components."""
    out = np.zeros(width, dtype=np.float32)
    out[:size] = np.broadcast_to(np.asarray(value, dtype=np.float32), (size,))
    return out


def _reached_goals(info: dict) -> torch.Tensor:
    return info["reached_goals"]


def reached_goals_metric(doc: str = "1 if every agent reached its goal (VMAS's done) during the episode"):
    """The ``success`` metric of a scenario with info ``reached_goals`` (``W.record_reached``)."""
    return EpisodeMetric("success", doc, _reached_goals, "any")


class VmasBase(StructWorldEnv):
    """Shared machinery of the VMAS scenarios.  See the scenario classes for documentation."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}
    episode_length_kwarg = "max_steps"
    #: the VMAS scenario (``vmas.make_env(scenario=...)``) this one is
    vmas_scenario: str = ""
    #: VMAS names this scenario's agents ``"agent 0"`` (some debug scenarios) where ours are
    #: ``agent_0``: the TorchRL ``VmasEnv`` adapter hands out VMAS's names
    vmas_agent_names_spaced: bool = False

    reset_world = None
    reward_world = None
    observe_agent = None
    clear_info = None
    process_action = None
    pre_step = None
    required_functions = ("reset_world", "reward_world", "observe_agent")

    def __init__(self, *, num_envs: int = 1, device="cpu", seed: int | None = None,
                 precision: str = "float32", autoreset_mode=None, num_threads: int | None = None,
                 max_steps: int | None = 100, continuous_actions: bool = True,
                 clamp_actions: bool = False) -> None:
        super().__init__(num_envs=num_envs, device=device, seed=seed, precision=precision,
                         autoreset_mode=autoreset_mode, num_threads=num_threads)
        max_steps = v.check_int("max_steps", max_steps, minimum=1, allow_none=True)
        self.max_steps = max_steps
        self.max_cycles = NO_HORIZON if max_steps is None else max_steps
        self.continuous_actions = v.check_bool("continuous_actions", continuous_actions)
        self.clamp_actions = v.check_bool("clamp_actions", clamp_actions)
        self.clips_actions = self.clamp_actions and self.continuous_actions
        self.layout = self._layout()
        with capture_guard.shared():  # allocations must not land in another thread's capture
            self._build()

    # ------------------------------------------------------------------ scenario interface
    def _layout(self) -> Layout:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _layout")

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        lay, F = self.layout, self.wp_float
        cls = type(self)
        self._require_functions()
        agents = lay.agents
        num_agents, num_bodies, K, U = len(agents), len(lay.bodies), lay.action_size, lay.u_size
        self._add_groups(lay.groups, [agent_action_space(b, b.action_size, self.continuous_actions) for b in agents])
        fields = self._checked_fields()
        dynamics = DYN.agent_dynamics(lay.dynamics)
        for name, field in DYN.dynamics_fields(lay.dynamics, [b.mass for b in agents], lay.dt).items():
            if name in fields:
                raise ValueError(f"{cls.__name__}._fields: {name!r} is a field of the agents' dynamics")
            fields[name] = field
        moved = num_agents if dynamics is not None else 0  # agents whose dynamics set force and torque
        obs_dim = max(s.obs_dim for s in self.groups.values())
        # pos, vel, force; rot_dir; rot, ang_vel, torque; placed
        buffers = [((num_bodies, 2), F)] * 3 + [((num_bodies, 3), F)] + [((num_bodies,), F)] * 3
        buffers += [((num_bodies,), wp.int32), ((max(len(lay.joint_constraints()), 1),), F)]  # placed; joint_rot
        buffers += [((num_agents,), wp.int32), ((num_agents, K), wp.float32), ((num_agents, U), wp.float32)]
        buffers += [((moved, 2), F), ((moved,), F)]  # agent_force, agent_torque
        buffers += [((num_agents, obs_dim), wp.float32)] * 2
        self._allocate_worlds(num_agents, buffers, fields)
        Struct = _world_struct(cls, F, W.shared_fields(F), fields, "VMAS world")
        w = Struct()
        self._set_world_params(w)
        self._set_bodies(w)
        self._set_lidars(w)
        w.pos = self.pos = self._world_array((num_bodies, 2), F)
        w.vel = self.vel = self._world_array((num_bodies, 2), F)
        w.rot = self.rot = self._world_array((num_bodies,), F)
        w.ang_vel = self.ang_vel = self._world_array((num_bodies,), F)
        w.force = self._world_array((num_bodies, 2), F)
        w.torque = self._world_array((num_bodies,), F)
        w.rot_dir = self._world_array((num_bodies, 3), F)
        w.rot_dir.fill_(float("nan"))  # no direction worked out yet (world.current_direction)
        w.placed = self._world_array((num_bodies,), wp.int32)
        w.u = self._world_array((num_agents, U), wp.float32)
        w.agent_force = self._world_array((moved, 2), F)
        w.agent_torque = self._world_array((moved,), F)
        self._finish_struct(w, Struct, fields, num_agents, K, obs_dim)
        clear_info = cls.clear_info if cls.clear_info is not None else info_clearer(fields)
        process_action = cls.process_action if cls.process_action is not None else W.no_action_processing
        pre_step = cls.pre_step if cls.pre_step is not None else W.no_pre_step
        self._physics, self._reward_done, self._observe = W.world_kernels(
            Struct, kernel_module_name("vmas", cls, F) + DYN.module_suffix(lay.dynamics), cls.reset_world,
            cls.reward_world, cls.observe_agent, clear_info, process_action, pre_step, dynamics)
        self._make_views()

    def _set_world_params(self, w) -> None:
        """The world's parameters (VMAS's ``World(...)`` arguments) into struct ``w``."""
        lay = self.layout
        w.mode, w.max_cycles = self._mode_code, self.max_cycles
        w.continuous, w.clamp_actions = int(self.continuous_actions), int(self.clamp_actions)
        w.substeps, w.n_landmarks = lay.substeps, lay.n_landmarks
        w.has_gravity = int(any(g != 0.0 for g in lay.gravity))
        w.dt, w.sub_dt = lay.dt, lay.dt / lay.substeps
        w.collision_force, w.contact_margin = lay.collision_force, lay.contact_margin
        # VMAS's gravity is a float32 tensor whatever the world's precision
        w.gravity_x, w.gravity_y = (float(np.float32(g)) for g in lay.gravity)
        w.x_semidim, w.y_semidim = _none(lay.x_semidim), _none(lay.y_semidim)
        w.line_min_dist = G.LINE_MIN_DIST

    def _set_bodies(self, w) -> None:
        """Every body's constants, the contact pairs and the agents' action limits into ``w``."""
        lay, F, array, ints = self.layout, self.wp_float, self._array, self._ints
        bodies, agents, K = lay.bodies, lay.agents, lay.action_size
        w.shape = ints([_SHAPES[b.shape] for b in bodies])
        w.radius = array([b.radius for b in bodies], F)
        w.length = array([b.length for b in bodies], F)
        w.width = array([b.width for b in bodies], F)
        w.hollow = ints([b.hollow for b in bodies])
        w.movable, w.rotatable = ints([b.movable for b in bodies]), ints([b.rotatable for b in bodies])
        w.mass = array([b.mass for b in bodies], F)
        w.inertia = array([b.moment_of_inertia() for b in bodies], F)
        w.reach = array([b.circumscribed_radius() for b in bodies], F)
        w.overlap_dist_min = array([G.box_sphere_overlap_dist_min(float(b.radius)) for b in bodies], F)
        w.max_speed = array([_none(b.max_speed) for b in bodies], F)
        w.v_range = array([_none(b.v_range) for b in bodies], F)
        w.keep = array([1 - (lay.drag if b.drag is None else b.drag) for b in bodies], F)
        # friction: the body's own coefficient, else the world's where positive (-1: none)
        w.lin_friction = array([_none(b.linear_friction if b.linear_friction is not None else
                                      (lay.linear_friction if lay.linear_friction > 0 else None)) for b in bodies], F)
        w.ang_friction = array([_none(b.angular_friction if b.angular_friction is not None else
                                      (lay.angular_friction if lay.angular_friction > 0 else None)) for b in bodies], F)
        pairs = lay.contact_pairs()
        self.contact_pairs = pairs
        # (zero-length arrays where there are no pairs, moving or shaped bodies: empty loops)
        w.pair_a, w.pair_b, w.pair_kind = (ints([p[k] for p in pairs]) for k in range(3))
        w.pair_reach_sq = array([pair_reach_squared(bodies[a], bodies[b], F) for a, b, _ in pairs], F)
        w.dynamic_bodies = ints([i for i, b in enumerate(bodies) if b.movable or b.rotatable])
        w.shaped_bodies = ints([i for i, b in enumerate(bodies) if b.shape != "sphere"])
        w.agent_actions = ints([b.action_size for b in agents])
        w.u_range = array([_per_action(b.u_range, b.action_size, K) for b in agents], wp.float32)
        w.u_multiplier = array([_per_action(b.u_multiplier, b.action_size, K) for b in agents], wp.float32)
        w.max_f = array([_none(b.max_f) for b in agents], F)
        w.max_t = array([_none(b.max_t) for b in agents], F)
        w.t_range = array([_none(b.t_range) for b in agents], F)
        scripted = [b.name for b in bodies if b.scripted]
        w.script_row = ints([scripted.index(b.name) if b.scripted else -1 for b in bodies])
        w.script_u = self._world_array((max(len(scripted), 1), 2), wp.float32)
        w.f_range = array([_none(b.f_range) for b in agents], F)
        self._set_joints(w)

    def _set_joints(self, w) -> None:
        """The joint constraints (``Layout.joint_constraints``) and joint landmarks into ``w``."""
        lay, F, array, ints = self.layout, self.wp_float, self._array, self._ints
        cons = lay.joint_constraints()
        self.joint_constraints = cons
        w.joint_force, w.torque_constraint_force = lay.joint_force, lay.torque_constraint_force
        w.joint_a, w.joint_b = ints([c[0] for c in cons]), ints([c[1] for c in cons])
        w.joint_delta = array([list(c[2]) + list(c[3]) for c in cons] or np.zeros((0, 4)), F)
        w.joint_rotate = ints([int(c[4]) for c in cons])
        # VMAS's fixed rotations are float32 tensors; inferred ones are set at every reset
        fixed = [float(np.float32(0.0 if c[5] is None else c[5])) for c in cons]
        self.joint_rot = self._world_array((max(len(cons), 1),), F)
        self.joint_rot.assign(np.broadcast_to(np.asarray(fixed or [0.0], dtype=np.float64),
                                              self.joint_rot.shape).astype(wp.dtype_to_numpy(F)))
        w.joint_rot = self.joint_rot
        self.infers_joint_rotation = any(c[5] is None for c in cons)
        pair_index = {frozenset((c[0], c[1])): k for k, c in enumerate(cons)}
        with_dist = [j for j in lay.joints if j.dist != 0]
        rows = []
        for j in with_dist:
            body = lay.index(j.landmark_name)
            ca = pair_index[frozenset((body, lay.index(j.entity_a)))]
            cb = pair_index[frozenset((body, lay.index(j.entity_b)))]
            infer = int(not j.rotate_a and j.fixed_rotation_a is None) + 2 * int(not j.rotate_b and
                                                                                  j.fixed_rotation_b is None)
            rows.append((body, ca, cb, infer))
        w.jl_body, w.jl_con_a, w.jl_con_b, w.jl_infer = (ints([r[k] for r in rows]) for k in range(4))

    def _set_lidars(self, w) -> None:
        """The lidars' agents, ranges, rays and what they see into struct ``w``."""
        lay, F, array, ints = self.layout, self.wp_float, self._array, self._ints
        agent_names = [b.name for b in lay.agents]
        lidars = lay.lidars
        angles = [lid.angles() for lid in lidars]
        starts = np.cumsum([0] + [len(a) for a in angles])[:-1]
        w.lidar_agent = ints([agent_names.index(lid.agent) for lid in lidars] or [0])
        w.lidar_range = array([lid.max_range for lid in lidars] or [0.0], F)
        w.lidar_start = ints(list(starts) or [0])
        w.lidar_rays = ints([lid.n_rays for lid in lidars] or [0])
        w.lidar_angles = array(np.concatenate(angles) if angles else [0.0], wp.float32)
        w.lidar_sees = array([[int(b.name in lid.sees) for b in lay.bodies] for lid in lidars]
                             or [[0] * len(lay.bodies)], wp.int32)
        w.lidar_last = self._world_array((max(int(sum(len(a) for a in angles)), 1),), F)

    def _action_targets(self) -> dict[str, torch.Tensor]:
        """Each group's view of the action buffer: its agents' columns, and of a continuous
        buffer as wide as the widest agent action, its own action's first components."""
        parts = {}
        for g, spec in self.groups.items():
            part = self._action_view[:, spec.start:spec.stop]
            parts[g] = part[..., :spec.action_space.shape[0]] if self.continuous_actions else part
        return parts

    def _family_state(self) -> dict[str, wp.array]:
        state = {"pos": self.pos, "vel": self.vel, "rot": self.rot, "ang_vel": self.ang_vel}
        if getattr(self, "infers_joint_rotation", False):
            state["joint_rot"] = self.joint_rot  # VMAS's inferred JointConstraint.fixed_rotation
        return state

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        super()._check_state_value(key, tensor)
        if key in ("pos", "vel", "rot", "ang_vel") and tensor.numel() and not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"state[{key!r}]: expected finite values")

    # ------------------------------------------------------------------ launches
    def _launch_observe(self, write_final: bool, worlds: slice | None = None) -> None:
        self._launch_chunked(self._observe, worlds, int(write_final))

    def _launch_step(self, worlds: slice | None = None) -> None:
        self._launch_chunked(self._physics, worlds)
        self._launch_chunked(self._reward_done, worlds)
        self._launch_observe(write_final=self._mode_code == W.AUTORESET_SAME_STEP, worlds=worlds)

    # ------------------------------------------------------------------ names
    def body_index(self, name: str) -> int:
        """The body index (VMAS's entity order: landmarks, then agents) of the body ``name``."""
        names = [b.name for b in self.layout.bodies]
        if name not in names:
            raise KeyError(f"name: expected one of {names}, got {name!r}")
        return names.index(name)

    def lidar_readings(self, world: int) -> list[np.ndarray]:
        """The last readings of every lidar of ``world`` (one array of ``n_rays`` distances per
        lidar of ``layout.lidars``; the observation just returned was made from them)."""
        last = self._w.lidar_last.numpy()[world]
        out, start = [], 0
        for lid in self.layout.lidars:
            out.append(last[start:start + lid.n_rays].copy())
            start += lid.n_rays
        return out

    # ------------------------------------------------------------------ rendering
    def bodies_drawn(self, world: int) -> list[bool]:
        """Which bodies the picture of ``world`` draws, in body order (VMAS's ``is_rendering``):
        ``Body.visible``; scenarios whose bodies come and go per world (dispersion's eaten food)
        override it."""
        return [b.visible for b in self.layout.bodies]

    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world: every body's shape at its position and
        rotation, in its colour, and every lidar's rays (no display needed)."""
        from war_envs.scenarios.vmas.render import render_world

        world = self._checked_world(world)
        return render_world(self, world, width=width, height=height)
