"""FacmacPredatorPrey-v0 and its 3a / 6a / 9a presets: JaxMARL 0.2.0's ``simple_facmac`` MPE
(``MPE_simple_facmac_v1``, ``…_3a_v1``, ``…_6a_v1``, ``…_9a_v1``) in Warp kernels, on the family's
JaxMARL physics mode (``world.py``)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, info, param, scratch
from war_envs.scenarios.mpe.common import boundary_penalty, catch_metrics, episode_stream, uniform_reset

# JaxMARL 0.2.0 simple_facmac / simple constants
ADVERSARY_SIZE, ADVERSARY_ACCEL, ADVERSARY_MAX_SPEED = 0.075, 3.0, 1.0
PREY_SIZE, PREY_ACCEL, PREY_MAX_SPEED = 0.05, 4.0, 1.3
LANDMARK_SIZE = 0.2
NO_VIEW_LIMIT = 999999.0  # what JaxMARL puts for view_radius=-1
NUM_CANDIDATES = wp.constant(100)  # the prey's sampled moves (_prey_policy's n)
NUM_WAYPOINTS = wp.constant(5)  # points checked along a move ("sum": n_iter)
NUM_DRAWS = 2 * 100  # per step: 100 uniforms for the lengths, then 100 for the angles
STEP_SALT = wp.constant(0x2F6B3A1D)  # separates the in-step stream from the reset's
PI = wp.constant(math.pi)
SCORE_FUNCTIONS = ("sum", "min")
#: ``SimpleMPE`` arguments JaxMARL takes through ``**kwargs`` that are refused (only None accepted)
REFUSED = {
    "u_noise": "action noise",
    "c_noise": "communication noise (its agents are silent: it would change nothing observable)",
    "silent": "speaking agents (nothing observes the channel)",
    "moveable": "immovable agents or movable landmarks",
    "dim_p": "other than 2-D worlds",
    "action_spaces": "other action spaces",
    "observation_spaces": "other observation spaces (JaxMARL's are declared (16,), not the true sizes)",
}


# ------------------------------------------------------------------ Warp functions
@wp.func
def entity_coord(w: Any, e: int, k: int, c: int):
    """Coordinate c of JaxMARL entity k (agents, then landmarks)."""
    n = w.agent_pos.shape[1]
    if k < n:
        return w.agent_pos[e, k, c]
    return w.landmark_pos[e, k - n, c]


@wp.func
def entity_size(w: Any, k: int):
    """Radius of JaxMARL entity k (agents, then landmarks)."""
    n = w.agent_pos.shape[1]
    if k < n:
        return w.agent_size[k]
    return w.landmark_size[k - n]


@wp.func
def prey_key(w: Any, e: int):
    """World e's key of this step's prey draws (``prey_draw``)."""
    return int(wp.rand_init(int(episode_stream(w, e)) ^ STEP_SALT, w.t[e]))


@wp.func
def prey_draw(w: Any, e: int, key: int, slot: int):
    """World e's U[0, 1) number ``slot`` of this step (0-99 the lengths', 100-199 the angles';
    ``key``: ``prey_key``), the same for every prey (JaxMARL gives every prey the step's key);
    the injected one where ``draws_injected[e]``."""
    if w.draws_injected[e] != 0:
        return w.prey_draws[e, slot]
    return type(w.dt)(wp.randf(wp.rand_init(key, slot)))


@wp.func
def touches(w: Any, e: int, j: int, qx: Any, qy: Any, rk: Any):
    return W.distance(entity_coord(w, e, j, 0), entity_coord(w, e, j, 1), qx, qy) < entity_size(w, j) + rk


@wp.func
def touches_any(w: Any, e: int, count: int, qx: Any, qy: Any, k: int, rk: Any):
    """Whether point (qx, qy) is within touching distance (``d < size_j + rk``) of some entity:
    entity k first (a move's first points lie near it), the others after, stopping at the first
    touched (the answer of JaxMARL's full comparison)."""
    if touches(w, e, k, qx, qy, rk):
        return True
    for j in range(count):
        if j != k and touches(w, e, j, qx, qy, rk):
            return True
    return False


@wp.func
def prey_force(w: Any, e: int, g: int):
    """JaxMARL's ``_prey_policy`` for prey g: 100 moves (length sqrt(u), angle pi sqrt(2 u')) from
    JaxMARL entity ``k = min(num_adversaries - 1 + 2 g, last)`` (its loop's index, clamped as
    JaxMARL's indexing clamps), each scored; the best-scoring move (first on ties) is the force
    (float32, not scaled by the acceleration), none (zero) if no move scores >= 0.  "sum": a move
    counts only if each of its 5 waypoints is within touching distance of some entity (k
    itself included); score: the summed distances from its end to the adversaries.  "min": a move
    counts only if its end touches an adversary; score: the end's distance to adversary 0."""
    zero = type(w.dt)(0.0)
    na = w.num_adversaries
    count = w.agent_pos.shape[1] + w.landmark_pos.shape[1]
    k = wp.min(na - 1 + 2 * g, count - 1)
    kx = entity_coord(w, e, k, 0)
    ky = entity_coord(w, e, k, 1)
    rk = entity_size(w, k)
    best = int(-1)
    best_score = zero
    best_x = zero
    best_y = zero
    key = prey_key(w, e)
    for c in range(NUM_CANDIDATES):
        length = wp.sqrt(prey_draw(w, e, key, c))
        angle = type(zero)(PI) * wp.sqrt(type(zero)(2.0) * prey_draw(w, e, key, NUM_CANDIDATES + c))
        cos_a = wp.cos(angle)
        sin_a = wp.sin(angle)
        valid = bool(True)
        score = zero
        if w.score_sum != 0:
            # JaxMARL scores every waypoint and keeps the last one's score: the first ones need only
            # whether they touch something (touches_any), the last one its distances too
            for s in range(NUM_WAYPOINTS - 1):
                if valid:
                    reach = length / type(zero)(5.0) * type(zero)(float(s + 1))
                    valid = touches_any(w, e, count, reach * cos_a + kx, reach * sin_a + ky, k, rk)
            if valid:
                reach = length / type(zero)(5.0) * type(zero)(float(NUM_WAYPOINTS))
                qx = reach * cos_a + kx
                qy = reach * sin_a + ky
                hit = bool(False)
                for j in range(count):
                    d = W.distance(entity_coord(w, e, j, 0), entity_coord(w, e, j, 1), qx, qy)
                    if d < entity_size(w, j) + rk:
                        hit = True
                    if j < na:
                        score = score + d
                valid = hit
        else:
            qx = length * cos_a + kx
            qy = length * sin_a + ky
            hit = bool(False)
            for a in range(na):
                d = W.distance(w.agent_pos[e, a, 0], w.agent_pos[e, a, 1], qx, qy)
                if d < w.agent_size[a] + rk:
                    hit = True
                if a == 0:
                    score = d
            valid = hit
        if valid and (best < 0 or score > best_score):
            best = c
            best_score = score
            best_x = length * cos_a
            best_y = length * sin_a
    return wp.vector(type(zero)(wp.float32(best_x)), type(zero)(wp.float32(best_y)))


@wp.func
def facmac_control(w: Any, e: int, i: int):
    """An adversary's force from its action; a prey's from its scripted policy (its action is
    ignored, as JaxMARL drops it)."""
    if i < w.num_adversaries:
        return W.action_force(w, e, i)
    return prey_force(w, e, i - w.num_adversaries)


@wp.func
def facmac_reward(w: Any, e: int):
    """Adversaries: +10 per (prey, adversary) contact (team reward).  Prey g: -10 per adversary
    touching prey ``min(g + num_adversaries, num_good - 1)`` (JaxMARL reads row
    ``g + num_adversaries`` of its ``[prey, adversary]`` contact table, which its indexing clamps)
    minus ``bound(|x|) + bound(|y|)`` of its own position.  Clears the injected draws (the step
    has used them).  Never terminal."""
    num_agents = w.agent_pos.shape[1]
    na = w.num_adversaries
    contacts = int(0)
    for i in range(num_agents):
        w.collisions[e, i] = 0
    for g in range(na, num_agents):
        for a in range(na):
            if W.agents_collide(w, e, g, a):
                contacts += 1
                w.collisions[e, a] = w.collisions[e, a] + 1
                w.collisions[e, g] = w.collisions[e, g] + 1
    zero = type(w.dt)(0.0)
    for i in range(num_agents):
        if i < na:
            w.reward[e, i] = type(zero)(10.0) * type(zero)(float(contacts))
        else:
            touched = w.collisions[e, na + wp.min(i, num_agents - 1 - na)]
            bound = boundary_penalty(wp.abs(w.agent_pos[e, i, 0])) + boundary_penalty(wp.abs(w.agent_pos[e, i, 1]))
            w.reward[e, i] = type(zero)(float(-10 * touched)) - bound
    w.draws_injected[e] = 0
    return False


@wp.func
def relative_norm(pos: wp.array3d(dtype=Any), e: int, skip: int, px: Any, py: Any):
    """sqrt of the sum of every squared coordinate of ``pos[e, j] - (px, py)``, j != skip (the
    norm of JaxMARL's whole relative-position block)."""
    total = type(px)(0.0)
    for j in range(pos.shape[1]):
        if j != skip:
            dx = pos[e, j, 0] - px
            dy = pos[e, j, 1] - py
            total = total + dx * dx
            total = total + dy * dy
    return wp.sqrt(total)


@wp.func
def write_block(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, skip: int, px: Any, py: Any,
                pos: wp.array3d(dtype=Any), hidden: bool):
    """The positions of ``pos`` (all but ``skip``) relative to (px, py), or zeros where
    ``hidden`` (JaxMARL's view mask); returns the next offset."""
    if hidden:
        count = pos.shape[1]
        if skip >= 0:
            count = count - 1
        return W.write_zeros(out, e, i, o, 2 * count)
    return W.write_relative_positions(out, e, i, o, skip, px, py, pos, -1)


@wp.func
def facmac_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel, self_pos, landmark_rel (2 L), other_agent_rel (2 (N - 1)), last prey's velocity
    (adversaries; zeros for the prey)], each relative block zeroed as a whole where its norm
    exceeds the view radius (the last prey's velocity with the other agents)."""
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    o = W.write_self(out, e, i, w)
    hidden = relative_norm(w.landmark_pos, e, -1, px, py) > w.view_radius
    o = write_block(out, e, i, o, -1, px, py, w.landmark_pos, hidden)
    hidden = relative_norm(w.agent_pos, e, i, px, py) > w.view_radius
    o = write_block(out, e, i, o, i, px, py, w.agent_pos, hidden)
    last = w.agent_pos.shape[1] - 1
    if i < w.num_adversaries and not hidden:
        out[e, i, o] = wp.float32(w.agent_vel[e, last, 0])
        out[e, i, o + 1] = wp.float32(w.agent_vel[e, last, 1])
    else:
        W.write_zeros(out, e, i, o, 2)


class FacmacPredatorPrey(MPEBase):
    """FacmacPredatorPrey-v0 — adversaries chase scripted prey among obstacles: JaxMARL 0.2.0's
    ``MPE_simple_facmac_v1`` (``SimpleFacmacMPE``, the FACMAC paper's continuous predator-prey).

    ``war_envs.make("FacmacPredatorPrey-v0", num_envs=E, ...)``; ``FacmacPredatorPrey3a-v0`` /
    ``6a`` / ``9a`` are JaxMARL's ``MPE_simple_facmac_3a_v1`` / ``6a`` / ``9a`` presets.  Every
    rule, constant and encoding is JaxMARL's, its bugs included (listed below);
    ``tests/test_facmac_reference.py`` replays JaxMARL's own episodes step by step with its
    in-step draws (``bash scripts/smax_check.sh``, a CI step): float32 worlds against JaxMARL to
    float32 rounding, float64 worlds against JaxMARL run with ``jax_enable_x64``.

    **Agents** (JaxMARL's order): group ``adversary`` (``adversary_0 …``, size 0.075, accel 3,
    max speed 1.0), then group ``agent`` (``agent_0 …``: the prey, size 0.05, max speed 1.3).
    **Landmarks**: ``num_landmarks`` immovable obstacles of size 0.2.  Everything collides.

    **Physics**: JaxMARL's ``SimpleMPE`` (the family's JaxMARL mode, ``world.py``): mpe2's
    integration (positions move with the old velocity, then damping, force · dt / mass and the
    speed cap) with contact forces summed in JaxMARL's order; ``dt``, ``damping``,
    ``contact_force``, ``contact_margin`` and ``mass`` as JaxMARL takes them.

    **Actions**: ``Box(0, 1, (5,))`` per agent (JaxMARL's ``CONTINUOUS_ACT``): an adversary's
    force is ``[a2 − a1, a4 − a3] · 3``; a prey's action is ignored (JaxMARL drops it).

    **The prey** (JaxMARL's ``_prey_policy``): every step 100 moves are sampled, length
    ``sqrt(u)``, angle ``π · sqrt(2 u')`` (u, u' ~ U[0, 1), the same 200 numbers for every prey),
    from JaxMARL entity ``min(num_adversaries − 1 + 2 g, last)`` for prey g — an index bug: the
    first prey plans from the last adversary's position, the next ones from every other entity
    after it (the 9a preset's third prey from landmark 0).  ``score_function="min"``: a move
    counts only if its end touches (``<`` the summed radii of) an adversary, scored by the end's
    distance to adversary 0 (JaxMARL's "nearest" adversary is a sum over all, so argmin picks 0);
    ``"sum"``: a move counts only if each of its 5 evenly spaced waypoints touches some entity
    (the planning entity and landmarks included), scored by the last waypoint's summed distances
    to the adversaries.  (JaxMARL's ``jnp.where`` keeps the moves that touch: the opposite of
    what its comments say.)  The best move (the first on ties) is the prey's force as it is,
    float32, not scaled by the acceleration; zero if no move counts.

    **Observation** (float32, ``4 + 2 L + 2 (N − 1) + 2`` values for every agent: 16 for 3a, 28
    for 6a, 40 for 9a — JaxMARL declares 16 for all): ``[self_vel, self_pos, landmark_rel (2 L),
    other_agent_rel (2 (N − 1), agent order), v]``, ``v`` the last prey's velocity for an
    adversary and zeros for a prey.  View limit (JaxMARL's): the landmark block is zeroed when
    the norm of the whole block (all landmarks at once) exceeds ``view_radius``, and the
    other-agent block and ``v`` likewise; ``view_radius=-1`` is JaxMARL's no limit (999999).

    **Reward** (after the move): every adversary gets +10 per (prey, adversary) contact; prey g
    gets −10 per adversary touching prey ``min(g + num_adversaries, num_good_agents − 1)`` — a
    JaxMARL index bug that its indexing clamps: every prey's count is the last prey's (right
    for one prey) — and ``−(bound(|x|) + bound(|y|))`` of its own position, ``bound(x) = 0``
    below 0.9, ``10 (x − 0.9)`` below 1, else ``min(e^(2x−2), 10)``.

    **Episode end**: truncated after ``max_steps + 1`` steps (JaxMARL's ``done`` is
    ``step >= max_steps`` read before the step's count: 26 steps by default; ``max_cycles`` is
    that length, ``gym.make_vec(max_episode_steps=k)`` sets ``max_steps = k − 1``); never
    terminated.  Every reset: agents, then landmarks ~ U[−1, 1)² (JaxMARL's ``SimpleMPE.reset``).

    **Info**: ``collisions [E, A]`` (adversary: prey it touches; prey: adversaries touching it,
    its own count).  Per-episode metrics: ``catch_rate``, ``contact_steps``, ``contacts``.
    **State**: positions, velocities (``agent_accel``/``agent_max_speed`` as set), the clock.

    **Random numbers**: starts and the prey's 200 numbers a step come from the world's own
    stream (JaxMARL's distributions, other numbers: the tests compare distributions);
    ``inject_draws(prey=...)`` makes the next step use given numbers (how the tests replay
    JaxMARL's own draws).

    **Arguments** (JaxMARL's names and defaults): ``num_good_agents=1``, ``num_adversaries=3``
    (each ≥ 1), ``num_landmarks=2`` (≥ 0), ``view_radius=1.5``, ``score_function="sum"``
    (``"min"`` in the presets); ``SimpleMPE``'s ``max_steps=25`` (None: 25), ``dt=0.1``,
    ``damping=0.25``, ``contact_force=100``, ``contact_margin=1e-3``, ``mass=None`` (one positive
    value per entity, agents then landmarks; landmarks' unused); plus ``num_envs``, ``device``,
    ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.  Refused (only None accepted):
    ``u_noise``, ``c_noise``, ``silent``, ``moveable``, ``dim_p``, ``action_spaces``,
    ``observation_spaces``; ``continuous_actions=False``.  ``max_cycles`` (the family's name) is
the episode length, ``max_steps + 1``: give either.  The
    presets fix ``num_good_agents``, ``num_adversaries``, ``num_landmarks``, ``view_radius`` and
    ``score_function`` (JaxMARL's preset constructors take no arguments; ours take the others).

    **Deviations from JaxMARL**: the random numbers (above); actions outside [0, 1] are refused
    (JaxMARL uses any value); contact forces are exactly zero beyond 41 contact margins of
    touching (JaxMARL's are ~1e-18 there); float32 transcendental functions (cos, sin, exp, log)
    are Warp's, so float32 worlds agree with JaxMARL to rounding, not bitwise; rewards are the
    world's float type (JaxMARL's adversary rewards are int32); JaxMARL's always-zero
    communication state ``c`` is not kept (every agent is silent, nothing observes it); JaxMARL's
    ``done`` is reported as ``truncated``; JaxMARL's ``get_world_state`` is not provided (the
    front ends build their own global state).

    **Version history**: v0 — initial release, JaxMARL 0.2.0 semantics.
    """

    env_id = "FacmacPredatorPrey-v0"
    jaxmarl_id = "MPE_simple_facmac_v1"
    #: the presets' fixed composition (None: every argument free, JaxMARL's defaults)
    preset: dict | None = None
    jaxmarl_physics = True
    control_force = facmac_control
    reset_world = uniform_reset
    reward_world = facmac_reward
    observe_agent = facmac_observe
    per_agent_metrics = ("collisions",)
    episode_length_kwarg = "max_steps"
    episode_length_offset = 1

    def __init__(self, *, num_good_agents: int | None = None, num_adversaries: int | None = None,
                 num_landmarks: int | None = None, view_radius: float | None = None,
                 score_function: str | None = None, max_steps: int | None = None, dt: float = 0.1,
                 damping: float = 0.25,
                 contact_force: float = 100.0, contact_margin: float = 1e-3, mass=None, u_noise=None,
                 c_noise=None, silent=None, moveable=None, dim_p=None, action_spaces=None,
                 observation_spaces=None, **kwargs) -> None:
        given = {"num_good_agents": num_good_agents, "num_adversaries": num_adversaries,
                 "num_landmarks": num_landmarks, "view_radius": view_radius, "score_function": score_function}
        config = dict(self.preset or {"num_good_agents": 1, "num_adversaries": 3, "num_landmarks": 2,
                                      "view_radius": 1.5, "score_function": "sum"})
        for name, value in given.items():
            if value is not None and self.preset is not None and value != self.preset[name]:
                raise ValueError(f"{name}: {self.env_id} is JaxMARL's {self.jaxmarl_id}, whose {name} is "
                                 f"{self.preset[name]!r}; got {value!r} (FacmacPredatorPrey-v0 takes any)")
            if value is not None:
                config[name] = value
        self.num_good_agents = v.check_int("num_good_agents", config["num_good_agents"], minimum=1)
        self.num_adversaries = v.check_int("num_adversaries", config["num_adversaries"], minimum=1)
        self.num_landmarks = v.check_int("num_landmarks", config["num_landmarks"], minimum=0)
        self.view_radius = v.check_float("view_radius", config["view_radius"])
        self.score_function = v.check_choice("score_function", config["score_function"], SCORE_FUNCTIONS)
        max_cycles = v.check_int("max_cycles", kwargs.pop("max_cycles", None), minimum=1, allow_none=True)
        max_steps = v.check_int("max_steps", max_steps, minimum=0, allow_none=True)
        if max_steps is not None and max_cycles is not None and max_cycles != max_steps + 1:
            raise ValueError(f"max_cycles: the episode length, max_steps + 1 = {max_steps + 1}; got {max_cycles} "
                             f"(give one of them)")
        self.max_steps = max_steps if max_steps is not None else 25 if max_cycles is None else max_cycles - 1
        self.dt = _positive("dt", dt)
        self.damping = v.check_float("damping", damping, low=0.0)
        self.contact_force = v.check_float("contact_force", contact_force)
        self.contact_margin = _positive("contact_margin", contact_margin)
        entities = self.num_good_agents + self.num_adversaries + self.num_landmarks
        self.mass = [1.0] * entities if mass is None else _positive_floats("mass", mass, entities)
        refused = {"u_noise": u_noise, "c_noise": c_noise, "silent": silent, "moveable": moveable,
                   "dim_p": dim_p, "action_spaces": action_spaces, "observation_spaces": observation_spaces}
        for name, value in refused.items():
            if value is not None:
                raise ValueError(f"{name}: {self.env_id} does not support JaxMARL's {REFUSED[name]}; expected None "
                                 f"(JaxMARL's default), got {value!r}")
        if not kwargs.pop("continuous_actions", True):
            raise ValueError(f"continuous_actions: {self.env_id}'s actions are continuous (JaxMARL's "
                             f"CONTINUOUS_ACT); expected True, got False")
        self.episode_metrics = catch_metrics(self.num_adversaries)
        super().__init__(max_cycles=self.max_steps + 1, continuous_actions=True, **kwargs)

    @property
    def config(self) -> dict:
        """The resolved JaxMARL arguments."""
        return {"num_good_agents": self.num_good_agents, "num_adversaries": self.num_adversaries,
                "num_landmarks": self.num_landmarks, "view_radius": self.view_radius,
                "score_function": self.score_function, "max_steps": self.max_steps, "dt": self.dt,
                "damping": self.damping, "contact_force": self.contact_force,
                "contact_margin": self.contact_margin, "mass": list(self.mass)}

    def _layout(self) -> Layout:
        na, ng, nl = self.num_adversaries, self.num_good_agents, self.num_landmarks
        return Layout(
            groups=[("adversary", [f"adversary_{i}" for i in range(na)]),
                    ("agent", [f"agent_{i}" for i in range(ng)])],
            agent_size=[ADVERSARY_SIZE] * na + [PREY_SIZE] * ng,
            agent_accel=[ADVERSARY_ACCEL] * na + [PREY_ACCEL] * ng,
            agent_max_speed=[ADVERSARY_MAX_SPEED] * na + [PREY_MAX_SPEED] * ng,
            agent_collide=[True] * (na + ng),
            agent_color=[(243 / 255, 115 / 255, 115 / 255)] * na + [(115 / 255, 243 / 255, 115 / 255)] * ng,
            agent_mass=self.mass[:na + ng],
            landmark_size=[LANDMARK_SIZE] * nl,
            landmark_collide=[True] * nl,
            landmark_color=[(64 / 255, 64 / 255, 64 / 255)] * nl,
        )

    def _obs_dim(self, group: str) -> int:
        return 4 + 2 * self.num_landmarks + 2 * (self.num_adversaries + self.num_good_agents - 1) + 2

    def _fields(self) -> dict[str, Field]:
        radius = NO_VIEW_LIMIT if self.view_radius == -1 else self.view_radius
        return {
            "num_adversaries": param(self.num_adversaries, "int"),
            "score_sum": param(int(self.score_function == "sum"), "int"),
            "view_radius": param(radius),
            "collisions": info("int", self.num_adversaries + self.num_good_agents),
            "prey_draws": scratch("float", NUM_DRAWS), "draws_injected": scratch("int"),
        }

    def _set_world_params(self, w) -> None:
        super()._set_world_params(w)
        w.dt, w.damping, w.contact_force, w.contact_margin = self.dt, self.damping, self.contact_force, \
            self.contact_margin

    def inject_draws(self, *, prey) -> None:
        """Make the next step that moves the worlds (only) use these numbers for the prey instead
        of its own: ``prey`` float ``[E, 2, 100]`` in [0, 1), the uniforms behind the 100 moves'
        lengths (``sqrt(u)``) and angles (``π · sqrt(2 u)``).  JaxMARL's reference tests pass the
        numbers its own keys give (``tests/facmac_reference.py``)."""
        self._check_open()
        tensor = v.as_tensor("prey", prey, self.torch_device)
        v.check_shape("prey", tensor, (self.num_envs, 2, NUM_DRAWS // 2))
        if not tensor.is_floating_point() or (tensor.numel() and (float(tensor.min()) < 0
                                                                  or float(tensor.max()) >= 1)):
            raise ValueError("prey: expected floats in [0, 1)")
        wp.to_torch(self._w.prey_draws).copy_(tensor.reshape(self.num_envs, NUM_DRAWS).to(self.torch_float))
        wp.to_torch(self._w.draws_injected).fill_(1)


def _positive(name: str, value) -> float:
    """``value`` as a positive finite float."""
    value = v.check_float(name, value)
    if value <= 0:
        raise ValueError(f"{name}: expected a positive float, got {value}")
    return value


def _positive_floats(name: str, value, n: int) -> list[float]:
    """``value`` (a sequence, array or tensor of n numbers: JaxMARL's per-entity array) as n
    positive finite floats."""
    values = value.tolist() if hasattr(value, "tolist") else value
    if not isinstance(values, (list, tuple)) or len(values) != n:
        raise ValueError(f"{name}: expected {n} values (one per entity: agents, then landmarks), got {value!r}")
    return [_positive(f"{name}[{k}]", x) for k, x in enumerate(values)]


class FacmacPredatorPrey3a(FacmacPredatorPrey):
    """FacmacPredatorPrey3a-v0 — JaxMARL's ``MPE_simple_facmac_3a_v1``: FacmacPredatorPrey-v0 with
    3 adversaries, 1 prey, 2 landmarks, ``view_radius=1.5``, ``score_function="min"`` (fixed).
    See ``FacmacPredatorPrey`` for the rules; the other arguments are the same.

    **Version history**: v0 — initial release, JaxMARL 0.2.0 semantics.
    """

    env_id = "FacmacPredatorPrey3a-v0"
    jaxmarl_id = "MPE_simple_facmac_3a_v1"
    preset = {"num_good_agents": 1, "num_adversaries": 3, "num_landmarks": 2, "view_radius": 1.5,
              "score_function": "min"}


class FacmacPredatorPrey6a(FacmacPredatorPrey):
    """FacmacPredatorPrey6a-v0 — JaxMARL's ``MPE_simple_facmac_6a_v1``: FacmacPredatorPrey-v0 with
    6 adversaries, 2 prey, 4 landmarks, ``view_radius=1.5``, ``score_function="min"`` (fixed).
    See ``FacmacPredatorPrey`` for the rules; the other arguments are the same.

    **Version history**: v0 — initial release, JaxMARL 0.2.0 semantics.
    """

    env_id = "FacmacPredatorPrey6a-v0"
    jaxmarl_id = "MPE_simple_facmac_6a_v1"
    preset = {"num_good_agents": 2, "num_adversaries": 6, "num_landmarks": 4, "view_radius": 1.5,
              "score_function": "min"}


class FacmacPredatorPrey9a(FacmacPredatorPrey):
    """FacmacPredatorPrey9a-v0 — JaxMARL's ``MPE_simple_facmac_9a_v1``: FacmacPredatorPrey-v0 with
    9 adversaries, 3 prey, 6 landmarks, ``view_radius=1.5``, ``score_function="min"`` (fixed).
    See ``FacmacPredatorPrey`` for the rules; the other arguments are the same.

    **Version history**: v0 — initial release, JaxMARL 0.2.0 semantics.
    """

    env_id = "FacmacPredatorPrey9a-v0"
    jaxmarl_id = "MPE_simple_facmac_9a_v1"
    preset = {"num_good_agents": 3, "num_adversaries": 9, "num_landmarks": 6, "view_radius": 1.5,
              "score_function": "min"}
