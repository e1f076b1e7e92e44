"""SMAX-v0: StarCraft-style unit micromanagement, JaxMARL 0.2.0's SMAX in Warp."""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence

import gymnasium
import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import BatchedEnv, GroupSpec, stack_group_spaces, world_bytes
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.smax import _kernels as K
from war_envs.scenarios.smax.maps import MAPS, SMAX_DEFAULTS, UNIT_TYPE_DEFAULTS, UNIT_TYPES

__all__ = ["SMAX", "smax_metrics"]

ENEMIES = ("heuristic", "self_play")
ATTACK_MODES = ("closest", "random")
OBSERVATION_TYPES = ("unit_list", "conic")
ACTION_TYPES = ("discrete", "continuous")
MOVE_NAMES = ("move north (+y)", "move east (+x)", "move south (-y)", "move west (-x)", "stop")


def _d(name: str) -> v.Default:
    return v.Default(SMAX_DEFAULTS[name])


def _won(info: dict) -> torch.Tensor:
    return info["won"]


def _allies_left(info: dict) -> torch.Tensor:
    return info["allies_left"]


def _enemies_left(info: dict) -> torch.Tensor:
    return info["enemies_left"]


def _damage(info: dict) -> torch.Tensor:
    return info["damage"]


def smax_metrics() -> tuple[EpisodeMetric, ...]:
    """SMAX's per-episode metrics (``SMAX.episode_metrics``)."""
    return (
        EpisodeMetric("won", "1 if the episode ended with every enemy dead and some ally alive, else 0 "
                      "(its mean over episodes is the win rate)", _won, "last"),
        EpisodeMetric("allies_left", "allies alive at the episode's end", _allies_left, "last"),
        EpisodeMetric("enemies_left", "enemies alive at the episode's end", _enemies_left, "last"),
        EpisodeMetric("damage_dealt", "enemy health points lost in the episode (attacks and walls)", _damage,
                      "sum"),
    )


class SMAX(BatchedEnv):
    """SMAX-v0 — StarCraft-style unit micromanagement (JaxMARL 0.2.0's SMAX).

    ``war_envs.make("SMAX-v0", map_name="3m", num_envs=E, ...)``.  Two teams of units fight on
    a ``map_width x map_height`` plane: the agents control the allies; the enemies are played by
    JaxMARL's heuristic (``enemy="heuristic"``, the default: JaxMARL's ``HeuristicEnemySMAX``) or
    by agents too (``enemy="self_play"``: JaxMARL's ``SMAX``).  Every rule, default, observation
    and action numbering is JaxMARL's; tests replay JaxMARL's own episodes (its states injected,
    its random numbers replayed) to float32 rounding.

    **Maps** (``map_name``): every map of JaxMARL's ``MAP_NAME_TO_SCENARIO`` — ``3m``, ``2s3z``,
    ``25m``, ``3s5z``, ``8m``, ``5m_vs_6m``, ``10m_vs_11m``, ``27m_vs_30m``, ``3s5z_vs_3s6z``,
    ``3s_vs_5z``, ``6h_vs_8z``, ``smacv2_5_units``, ``smacv2_10_units``, ``smacv2_20_units``
    (default ``3m``).  ``map_name=None`` is JaxMARL's ``scenario=None``: ``num_allies`` vs
    ``num_enemies`` units of ``unit_types`` (default: all marines).  A map sets the team sizes,
    the unit types and SMACv2 start generation; passing those with a map is an error.

    **Unit types** (index, JaxMARL's tables): 0 marine, 1 marauder, 2 stalker, 3 zealot,
    4 zergling, 5 hydralisk — velocity, attack, attack range, sight range, radius, health and
    weapon cooldown per type (``unit_type_*`` arguments, six values each).

    **Agents**: group ``ally`` (``ally_0 …``); with ``enemy="self_play"`` also group ``enemy``
    (``enemy_0 …``), JaxMARL's names and order.

    **Actions** (``action_type="discrete"``): ``Discrete(num_enemies + 5)`` per ally
    (``Discrete(num_allies + 5)`` per enemy): 0 north (+y), 1 east (+x), 2 south (-y), 3 west
    (-x), 4 stop, ``5 + k`` attack the k-th unit of the other team (allies number the enemies in
    order; enemies number the allies in reverse order, as they observe them).
    ``action_type="continuous"``: ``Box(0, 1, (4,))`` (shoot_last_enemy, do_shoot, r, theta),
    decoded as JaxMARL does: with probability ``do_shoot`` the unit moves by ``r (cos 2πθ,
    sin 2πθ)`` time its speed, else it attacks the enemy nearest that point (or, with
    probability ``1 - shoot_last_enemy``, its last target).  *Deviation*: values outside [0, 1]
    are clipped as JaxMARL's ``SMAX`` does (its ``HeuristicEnemySMAX`` takes their logarithm);
    the validated step refuses them.

    **Available actions** (discrete): ``env.action_mask()`` and every step's
    ``info["action_mask"]`` — ``{group: bool [E, n_g, n]}`` (JaxMARL's ``get_avail_actions``
    for the observations just returned): moves while alive, stop always, an attack on a living
    unit of the other team within attack range.  The validated step refuses an unavailable
    action (the error names the agent and the action); ``step(trusted=True)`` plays it with
    JaxMARL's semantics: a dead unit does not move, an attack out of range or on a dead unit
    does nothing.

    **Step** (JaxMARL's ``step_env``): the heuristic enemy acts on its observation of the state
    (attack the last target while it is in range, else the closest — ``attack_mode="random"``:
    a random — unit in range; otherwise walk towards a random visible unit, or towards the
    point opposite its start through the centre), then ``world_steps_per_env_step`` world steps
    of ``time_per_step``: attacks and cooldowns from the world step's starting state (an attack
    lands if the target is alive and in range and the weapon is cooled down; the cooldown then
    becomes the type's plus U(-tps, 2 tps) jitter, else falls by tps), movement at the type's
    velocity clipped to the map, death on touching a wall (``walls_cause_death``), death at
    zero health, overlapping living units pushed apart.

    **Rewards** (per team, shared by its agents, dead ones included): the other team's health
    lost this step (each unit's loss over its maximum, summed, over the team's size) plus
    ``won_battle_bonus`` when every enemy is dead and some ally alive;
    ``use_self_play_reward``: only ±``won_battle_bonus`` (zero-sum).

    **Episode end**: ``terminated`` when every ally or every enemy is dead; ``truncated`` at
    JaxMARL's time limit, which compares the step count *before* its increment with
    ``max_steps``: episodes end after ``max_steps + 1`` steps (``max_cycles`` is that length;
    ``gym.make_vec(max_episode_steps=k)`` sets ``max_steps=k - 1``: episodes of k steps).  Per agent, a unit is
    ``terminated`` from the step it dies (JaxMARL's per-agent done is "dead").

    **Observations** (float32; JaxMARL's ``get_obs``; every value lies in [-1, 1] except the own
    position, which is off the map — beyond [0, 1] — where SMACv2's surround starts put a unit
    outside it (JaxMARL declares ``Box(-1, 1)``; here the space is unbounded, as for every
    scenario)):
    ``observation_type="unit_list"``: 13 features of every other unit (health fraction, relative
    position over the observer's sight range, its last move, its last attack over the largest
    attack index, its cooldown fraction, its type one-hot; zeros unless both are alive and it
    is within sight), own team first, then 10 own features (health fraction, position over the
    map size, cooldown fraction, type one-hot; zeros once dead): ``13 (A - 1) + 10`` values.
    ``"conic"``: 32 angular sections around the unit, up to 2 units each (the first by index;
    as in JaxMARL unit 0 is never listed and dead units within sight are), then the own
    features: ``13 · 64 + 10`` values.  ``see_enemy_actions=False`` hides the other team's last
    actions.  ``observe_time=True`` (not JaxMARL's; off by default) appends one value to every
    observation: the episode's elapsed fraction ``t / (max_steps + 1)`` (0 at the start), which
    JaxMARL's observations do not hold and a recurrent policy can count for itself: a
    feed-forward policy's clock (Gymnasium's ``TimeAwareObservation``), see docs/smax.md.

    **Alive mask** (``agents_can_leave``): ``info["alive"]`` / ``env.alive_mask`` —
    ``{group: bool [E, n_g]}`` (SAME_STEP: the finished episode's last masks are
    ``info["final_alive"]`` and ``info["final_action_mask"]``, valid where ``info["_final_obs"]``).  **Info**: ``won`` [E] (1 at the step that ends a won episode),
    ``allies_left``, ``enemies_left`` [E] (alive after the step), ``damage`` [E] (enemy health
    points lost this step), ``alive``, ``action_mask``.  **Episode metrics**: ``won`` (the
    progress metric; its mean is the win rate), ``allies_left``, ``enemies_left``,
    ``damage_dealt``.

    **World state** (the scenario interface's ``world_state``): ``env.world_state()`` —
    ``float32 [E, 12 A]``, JaxMARL's ``get_world_state`` (its ``obs["world_state"]``): every
    unit's health fraction, position (map units), weapon cooldown (seconds) and type one-hot
    (zeros once dead), then every unit's team and type; SAME_STEP: the finished episode's last
    one is ``info["final_world_state"]``.  ``war_train``'s ``critic_input="world"`` gives it to
    the critics.

    **State** (``get_state``/``set_state``, JaxMARL's ``State`` field names, units in JaxMARL's
    order): ``unit_positions [E, A, 2]``, ``unit_alive``, ``unit_health``, ``unit_types``
    (int32), ``unit_weapon_cooldowns``, ``prev_movement_actions [E, A, 2]``,
    ``prev_attack_actions`` (int32), with the heuristic enemy its policy state
    ``enemy_default_target [E, n_enemies, 2]`` and ``enemy_last_attacked`` (int32, -1 none),
    then ``t`` (JaxMARL's ``step``), ``episode``, ``rng_key``, ``pending_reset``.

    **Random numbers**: starts are drawn from each world's stream (JaxMARL's distributions;
    compared statistically with JaxMARL's), in-step draws (cooldown jitter, the heuristic's
    random choices, continuous actions' Gumbel noise) from streams keyed by (world seed,
    episode, step).  ``inject_draws`` makes the next step use given numbers instead (how the
    reference tests replay JaxMARL's own draws).

    **Arguments**: ``map_name="3m"``, ``enemy="heuristic"``, ``attack_mode="closest"``,
    ``enemy_shoots=True`` (JaxMARL's ``HeuristicEnemySMAX`` arguments), ``unit_types`` (with
    ``map_name=None``), and JaxMARL's ``SMAX`` arguments with its defaults: ``num_allies=5``,
    ``num_enemies=5``, ``map_width=32``, ``map_height=32``, ``world_steps_per_env_step=8``,
    ``time_per_step=1/16``, the ``unit_type_*`` tables, ``unit_type_names``,
    ``unit_type_shorthands``, ``use_self_play_reward=False``, ``see_enemy_actions=True``,
    ``won_battle_bonus=1.0``, ``walls_cause_death=True``, ``max_steps=100``,
    ``smacv2_position_generation=False``, ``smacv2_unit_type_generation=False``,
    ``observation_type="unit_list"``, ``action_type="discrete"``; plus the batch arguments
    ``num_envs``, ``device``, ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.

    **Version history**: v0 — initial release, JaxMARL 0.2.0's SMAX rules.
    """

    env_id = "SMAX-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 8}
    episode_length_kwarg = "max_steps"
    episode_length_offset = 1
    agents_can_leave = True
    progress_metric = "won"
    _state_int_minimum = {"enemy_last_attacked": -1}

    def __init__(
        self,
        *,
        map_name: str | None = v.Default("3m"),
        enemy: str = "heuristic",
        attack_mode: str = "closest",
        enemy_shoots: bool = True,
        unit_types: Sequence[int] | None = None,
        num_allies: int = _d("num_allies"),
        num_enemies: int = _d("num_enemies"),
        map_width: float = _d("map_width"),
        map_height: float = _d("map_height"),
        world_steps_per_env_step: int = _d("world_steps_per_env_step"),
        time_per_step: float = _d("time_per_step"),
        unit_type_names: Sequence[str] = tuple(n for n, _ in UNIT_TYPES),
        unit_type_shorthands: Sequence[str] = tuple(s for _, s in UNIT_TYPES),
        unit_type_velocities: Sequence[float] = _d("unit_type_velocities"),
        unit_type_attacks: Sequence[float] = _d("unit_type_attacks"),
        unit_type_attack_ranges: Sequence[float] = _d("unit_type_attack_ranges"),
        unit_type_sight_ranges: Sequence[float] = _d("unit_type_sight_ranges"),
        unit_type_radiuses: Sequence[float] = _d("unit_type_radiuses"),
        unit_type_health: Sequence[float] = _d("unit_type_health"),
        unit_type_weapon_cooldowns: Sequence[float] = _d("unit_type_weapon_cooldowns"),
        use_self_play_reward: bool = _d("use_self_play_reward"),
        see_enemy_actions: bool = _d("see_enemy_actions"),
        won_battle_bonus: float = _d("won_battle_bonus"),
        walls_cause_death: bool = _d("walls_cause_death"),
        max_steps: int = _d("max_steps"),
        smacv2_position_generation: bool = _d("smacv2_position_generation"),
        smacv2_unit_type_generation: bool = _d("smacv2_unit_type_generation"),
        observation_type: str = _d("observation_type"),
        action_type: str = _d("action_type"),
        observe_time: bool = False,
        **kwargs,
    ) -> None:
        args = {k: val for k, val in locals().items() if k in SMAX_DEFAULTS}
        given = {k for k, val in args.items() if not isinstance(val, v.Default)}
        args = {k: (val.value if isinstance(val, v.Default) else val) for k, val in args.items()}
        map_name = map_name.value if isinstance(map_name, v.Default) else map_name
        self._check_args(map_name, enemy, attack_mode, enemy_shoots, unit_types, unit_type_names,
                         unit_type_shorthands, args, given)
        self.observe_time = v.check_bool("observe_time", observe_time)
        super().__init__(**kwargs)
        self._build()

    # ------------------------------------------------------------------ arguments
    def _check_args(self, map_name, enemy, attack_mode, enemy_shoots, unit_types, names, shorthands,
                    a: dict, given: set) -> None:
        types = _map_args(map_name, unit_types, a, given)
        self.map_name = map_name
        self.enemy = enemy
        v.check_choice("enemy", enemy, ENEMIES)
        v.check_choice("attack_mode", attack_mode, ATTACK_MODES)
        self.attack_mode = attack_mode
        self.enemy_shoots = v.check_bool("enemy_shoots", enemy_shoots)
        c = {}
        c["num_allies"] = v.check_int("num_allies", a["num_allies"], minimum=1)
        c["num_enemies"] = v.check_int("num_enemies", a["num_enemies"], minimum=1)
        A = c["num_allies"] + c["num_enemies"]
        if types is None:
            types = (0,) * A if unit_types is None else _check_unit_types(unit_types, A)
        self.unit_types = tuple(int(t) for t in types)
        for key, value in (("map_width", a["map_width"]), ("map_height", a["map_height"]),
                           ("time_per_step", a["time_per_step"])):
            c[key] = v.check_float(key, value)
            if c[key] <= 0:
                raise ValueError(f"{key}: expected a float > 0, got {c[key]}")
            if key != "time_per_step" and isinstance(value, (int, np.integer)):
                c[key] = int(value)
        c["world_steps_per_env_step"] = v.check_int("world_steps_per_env_step", a["world_steps_per_env_step"],
                                                    minimum=1)
        c["max_steps"] = v.check_int("max_steps", a["max_steps"], minimum=0)
        c["won_battle_bonus"] = v.check_float("won_battle_bonus", a["won_battle_bonus"])
        for key in ("use_self_play_reward", "see_enemy_actions", "walls_cause_death",
                    "smacv2_position_generation", "smacv2_unit_type_generation"):
            c[key] = v.check_bool(key, a[key])
        v.check_choice("observation_type", a["observation_type"], OBSERVATION_TYPES)
        v.check_choice("action_type", a["action_type"], ACTION_TYPES)
        c["observation_type"], c["action_type"] = a["observation_type"], a["action_type"]
        c.update(_check_unit_type_tables(a, names, shorthands))
        self.unit_type_names = tuple(names)
        self.unit_type_shorthands = tuple(shorthands)
        self._config = c
        for key, value in c.items():
            setattr(self, key, value)
        self.num_units = A
        self.max_cycles = self.max_steps + 1
        self.has_action_mask = self.action_type == "discrete"
        self.episode_metrics = smax_metrics()

    @property
    def config(self) -> dict:
        """The resolved arguments (defaults, the map's and the explicit ones)."""
        return {"map_name": self.map_name, "enemy": self.enemy, "attack_mode": self.attack_mode,
                "enemy_shoots": self.enemy_shoots, "unit_types": self.unit_types, **self._config,
                "observe_time": self.observe_time}

    # ------------------------------------------------------------------ building
    @property
    def obs_dim(self) -> int:
        """JaxMARL's ``_get_obs_size`` (one more with ``observe_time``)."""
        extra = int(self.observe_time)
        if self.observation_type == "unit_list":
            return K.UNIT_FEATURES * (self.num_units - 1) + K.OWN_FEATURES + extra
        return K.UNIT_FEATURES * K.NUM_SECTIONS * K.UNITS_PER_SECTION + K.OWN_FEATURES + extra

    def _action_space(self, n_other: int) -> gymnasium.Space:
        if self.action_type == "discrete":
            return gymnasium.spaces.Discrete(n_other + K.NUM_MOVE)
        return gymnasium.spaces.Box(0.0, 1.0, (4,), dtype=np.float32)

    def _build(self) -> None:
        F = self.wp_float
        na, ne, A = self.num_allies, self.num_enemies, self.num_units
        heuristic = self.enemy == "heuristic"
        n_ctrl = na if heuristic else A
        d = self.obs_dim
        obs_space = stack_group_spaces(d)  # JaxMARL declares [-1, 1]; SMACv2 starts can lie off the map
        self.groups["ally"] = GroupSpec("ally", tuple(f"ally_{i}" for i in range(na)), 0, d,
                                        self._action_space(ne), obs_space)
        if not heuristic:
            self.groups["enemy"] = GroupSpec("enemy", tuple(f"enemy_{i}" for i in range(ne)), na, d,
                                             self._action_space(na), obs_space)
        width = max(na, ne) + K.NUM_MOVE
        ws = self.world_steps_per_env_step
        draws = 2 * ne + 4 * A + ws * A
        self._draw_slots = draws
        self._check_allocation(self._common_world_bytes(n_ctrl) + world_bytes(
            ((A, 2), F), ((A,), wp.bool), ((A,), F), ((A,), wp.int32), ((A,), F), ((A, 2), F), ((A,), wp.int32),
            ((ne, 2), F), ((ne,), wp.int32), ((A,), wp.int32), ((A, 4), F), ((draws,), F), ((), wp.int32),
            *[((n_ctrl,), wp.bool)] * 3, *[((n_ctrl, d), wp.float32)] * 2, *[((n_ctrl, width), wp.bool)] * 2,
            *[((self.world_state_dim,), wp.float32)] * 2,
            ((), F), ((), wp.int32), ((), wp.int32), ((), F), ((A, 2), F), ((A,), F),
            ((K.NUM_SECTIONS,), wp.int32)), n_ctrl)
        self._allocate_common(n_ctrl)

        w = K.world_struct(F)()
        self._Struct = K.world_struct(F)
        self._set_params(w, n_ctrl)
        self.unit_positions = w.pos = self._world_array((A, 2), F)
        self.unit_alive = w.alive = self._world_array((A,), wp.bool)
        self.unit_health = w.health = self._world_array((A,), F)
        self.unit_types_state = w.types = self._world_array((A,), wp.int32)
        self.unit_weapon_cooldowns = w.cooldown = self._world_array((A,), F)
        self.prev_movement_actions = w.prev_move = self._world_array((A, 2), F)
        self.prev_attack_actions = w.prev_attack = self._world_array((A,), wp.int32)
        self.enemy_default_target = w.ht_target = self._world_array((ne, 2), F)
        self.enemy_last_attacked = w.ht_last = self._world_array((ne,), wp.int32)
        self._wire_common(w)
        w.action_int = self._world_array((A,), wp.int32)
        w.action_cont = self._world_array((A, 4), F)
        w.draws = self._world_array((draws,), F)
        w.draws_injected = self._world_array((), wp.int32)
        w.agent_term = self._world_array((n_ctrl,), wp.bool)
        w.agent_trunc = self._world_array((n_ctrl,), wp.bool)
        w.obs = self._world_array((n_ctrl, d), wp.float32)
        w.final_obs = self._world_array((n_ctrl, d), wp.float32)
        w.mask = self._world_array((n_ctrl, width), wp.bool)
        w.final_mask = self._world_array((n_ctrl, width), wp.bool)
        w.final_alive = self._world_array((n_ctrl,), wp.bool)
        w.world_state = self._world_array((self.world_state_dim,), wp.float32)
        w.final_world_state = self._world_array((self.world_state_dim,), wp.float32)
        w.won = self._world_array((), F)
        w.allies_left = self._world_array((), wp.int32)
        w.enemies_left = self._world_array((), wp.int32)
        w.damage = self._world_array((), F)
        w.scratch = self._world_array((A, 2), F)
        w.health_before = self._world_array((A,), F)
        w.section_count = self._world_array((K.NUM_SECTIONS,), wp.int32)
        self._w = w
        self._shard_structs = {}
        for name, spec in self.groups.items():
            rows = (slice(None), slice(spec.start, spec.stop))
            self._obs_arrays[name], self._final_obs_arrays[name] = w.obs[rows], w.final_obs[rows]
        action = w.action_cont if self.action_type == "continuous" else w.action_int
        self._action_view = wp.to_torch(action)[:, :n_ctrl]
        self._step_kernel, self._observe_kernel, self._world_state_kernel = K.kernels(F)
        self._make_views()

    def _set_params(self, w, n_ctrl: int) -> None:
        """The scenario's parameters and unit-type tables into struct ``w``."""
        F, dev = self.wp_float, self.device
        na, ne, A = self.num_allies, self.num_enemies, self.num_units
        ws, d, heuristic = self.world_steps_per_env_step, self.obs_dim, self.enemy == "heuristic"
        np_float = wp.dtype_to_numpy(F)
        params = {
            "mode": self._mode_code, "num_allies": na, "num_enemies": ne, "num_units": A, "num_agents": n_ctrl,
            "world_steps": ws, "max_steps": self.max_steps,
            "obs_type": K.OBS_UNIT_LIST if self.observation_type == "unit_list" else K.OBS_CONIC,
            "obs_dim": d, "continuous": int(self.action_type == "continuous"), "heuristic": int(heuristic),
            "attack_random": int(self.attack_mode == "random"), "enemy_shoots": int(self.enemy_shoots),
            "walls_death": int(self.walls_cause_death), "see_enemy": int(self.see_enemy_actions),
            "self_play_reward": int(self.use_self_play_reward), "smacv2_pos": int(self.smacv2_position_generation),
            "smacv2_types": int(self.smacv2_unit_type_generation), "num_actions_ally": ne + K.NUM_MOVE,
            "num_actions_enemy": na + K.NUM_MOVE, "cooldown_slot": 2 * ne + 4 * A,
            "observe_time": int(self.observe_time),
        }
        for name, value in params.items():
            setattr(w, name, int(value))
        tps = self.time_per_step
        floats = {"map_w": self.map_width, "map_h": self.map_height, "tps": tps,
                  "won_bonus": self.won_battle_bonus, "cd_lo": -tps, "cd_hi": 2 * tps}
        for name, value in floats.items():
            setattr(w, name, F(value))
        tables = {"velocity": "unit_type_velocities", "attack": "unit_type_attacks",
                  "attack_range": "unit_type_attack_ranges", "sight": "unit_type_sight_ranges",
                  "radius": "unit_type_radiuses", "max_health": "unit_type_health",
                  "weapon_cooldown": "unit_type_weapon_cooldowns"}
        for field, key in tables.items():
            setattr(w, field, wp.array(np.asarray(self._config[key], dtype=np_float), dtype=F, device=dev))
        w.move = wp.array(K.move_table(np_float), dtype=F, device=dev)
        w.map_types = wp.array(np.asarray(self.unit_types, dtype=np.int32), dtype=wp.int32, device=dev)

    def _make_views(self) -> None:
        super()._make_views()
        w = self._w
        mask = wp.to_torch(w.mask)
        self._term = self._group_views(wp.to_torch(w.agent_term))
        self._trunc = self._group_views(wp.to_torch(w.agent_trunc))
        self._alive = self._group_views(wp.to_torch(w.alive))
        self._final_alive_views = self._group_views(wp.to_torch(w.final_alive))
        final_mask = wp.to_torch(w.final_mask)
        self._masks, self._final_masks = {}, {}
        if self.has_action_mask:
            for g, s in self.groups.items():
                n = int(s.action_space.n)
                self._masks[g] = mask[:, s.start:s.stop, :n]
                self._final_masks[g] = final_mask[:, s.start:s.stop, :n]
        self._metrics = {"won": wp.to_torch(w.won), "allies_left": wp.to_torch(w.allies_left),
                         "enemies_left": wp.to_torch(w.enemies_left), "damage": wp.to_torch(w.damage),
                         "alive": self._alive}
        if self.has_action_mask:
            self._metrics["action_mask"] = self._masks
        self._world_state_view = wp.to_torch(w.world_state)
        self._final_world_state_view = wp.to_torch(w.final_world_state)
        self._draws_view = wp.to_torch(w.draws)
        self._draws_injected_view = wp.to_torch(w.draws_injected)

    def _step_info(self) -> dict:
        info = super()._step_info()
        if self._mode_code == K.AUTORESET_SAME_STEP:
            info["final_alive"] = self._final_alive_views
            info["final_world_state"] = self._final_world_state_view
            if self.has_action_mask:
                info["final_action_mask"] = self._final_masks
        return info

    # ------------------------------------------------------------------ scenario interface
    @property
    def alive_mask(self) -> dict[str, torch.Tensor]:
        """``{group: bool [E, n_g]}`` views: the units alive (for the current observations)."""
        self._check_open()
        return self._alive

    @property
    def world_state_dim(self) -> int:
        """``12 · (num_allies + num_enemies)``: JaxMARL's ``get_world_state`` size."""
        return (K.OWN_FEATURES + 2) * self.num_units

    def world_state(self) -> torch.Tensor:
        """``float32 [E, world_state_dim]`` view, computed at the call (the next call overwrites
        it): JaxMARL's ``get_world_state`` (its ``obs["world_state"]``) for the current
        observations: every unit's health fraction, position (map units), weapon cooldown
        (seconds) and unit-type bits (zeros once dead), then every unit's team (0 ally, 1 enemy)
        and type.  What a centralized critic may see
        that no agent does (``war_train``'s ``critic_input="world"``)."""
        self._check_open()
        with self._warp_work():   # (computed when asked: a step that nobody asks it of does not pay)
            self._launch_world(self._world_state_kernel, None)
        return self._world_state_view

    def action_mask(self) -> dict[str, torch.Tensor]:
        """``{group: bool [E, n_g, n]}`` views: JaxMARL's available actions for the current
        observations (discrete actions; ``TypeError`` for continuous ones)."""
        self._check_open()
        if not self.has_action_mask:
            raise TypeError("action_mask: SMAX-v0 has available-action masks for action_type='discrete' only; "
                            "this env has action_type='continuous'")
        return self._masks

    # ------------------------------------------------------------------ launches
    def _launch_observe(self, write_final: bool, worlds: slice | None = None) -> None:
        self._launch_world(self._observe_kernel, worlds, int(write_final))

    def _launch_step(self, worlds: slice | None = None) -> None:
        self._launch_world(self._step_kernel, worlds)
        self._launch_observe(write_final=self._mode_code == K.AUTORESET_SAME_STEP, worlds=worlds)

    # ------------------------------------------------------------------ actions
    def _action_name(self, group: str, action: int) -> str:
        if action < K.NUM_MOVE:
            return MOVE_NAMES[action]
        k = action - K.NUM_MOVE
        target = f"enemy_{k}" if group == "ally" else f"ally_{self.num_allies - 1 - k}"
        return f"attack {target}"

    def _write_actions(self, actions) -> None:
        """The base's checks and copy, then (discrete) every action must be available: an
        unavailable one raises before any world steps."""
        super()._write_actions(actions)
        if not self.has_action_mask:
            return
        for g, spec in self.groups.items():
            chosen = self._action_parts[g].long()
            ok = self._masks[g].gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
            if not bool(ok.all()):
                e, i = (~ok).nonzero()[0].tolist()
                a = int(chosen[e, i])
                available = self._masks[g][e, i].nonzero().flatten().tolist()
                raise ValueError(
                    f"actions[{g!r}]: {spec.agents[i]} (world {e}) chose action {a} ({self._action_name(g, a)}), "
                    f"which is unavailable now; available: {available} (env.action_mask() / "
                    f"info['action_mask'] say which)")

    # ------------------------------------------------------------------ draws
    def inject_draws(self, *, cooldown=None, heuristic=None, gumbel=None) -> None:
        """Make the next step (only) use these random numbers instead of its own, in every world;
        a part not given is zeros.  Shapes: ``cooldown [E,
        world_steps_per_env_step, A]`` (the U[0, 1) numbers behind each world step's cooldown
        jitter ``u · 3 tps - tps``), ``heuristic [E, num_enemies, 2]`` (U[0, 1): the uniform of
        the heuristic enemy's random attack target, then of its random move target),
        ``gumbel [E, A, 2, 2]`` (continuous actions: the Gumbel noise of the move-or-shoot and
        shoot-last-enemy choices, per class).  JaxMARL's reference tests pass the numbers its
        own keys give (``tests/smax_reference.py``)."""
        self._check_open()
        E, A, ne = self.num_envs, self.num_units, self.num_enemies
        ws = self.world_steps_per_env_step
        draws = torch.zeros(E, self._draw_slots, dtype=self.torch_float, device=self.torch_device)
        parts = (("heuristic", heuristic, (E, ne, 2), 0), ("gumbel", gumbel, (E, A, 2, 2), 2 * ne),
                 ("cooldown", cooldown, (E, ws, A), 2 * ne + 4 * A))
        for name, value, shape, start in parts:
            if value is None:
                continue
            tensor = v.as_tensor(name, value, self.torch_device)
            v.check_shape(name, tensor, shape)
            if not tensor.is_floating_point() or not bool(torch.isfinite(tensor).all()):
                raise ValueError(f"{name}: expected finite floats")
            if name != "gumbel" and tensor.numel() and (float(tensor.min()) < 0 or float(tensor.max()) >= 1):
                raise ValueError(f"{name}: expected uniforms in [0, 1)")
            size = int(np.prod(shape[1:]))
            draws[:, start:start + size] = tensor.reshape(E, size).to(self.torch_float)
        self._draws_view.copy_(draws)
        self._draws_injected_view.fill_(1)

    # ------------------------------------------------------------------ state
    def _state_arrays(self) -> dict[str, wp.array]:
        arrays = {
            "unit_positions": self.unit_positions,
            "unit_alive": self.unit_alive,
            "unit_health": self.unit_health,
            "unit_types": self.unit_types_state,
            "unit_weapon_cooldowns": self.unit_weapon_cooldowns,
            "prev_movement_actions": self.prev_movement_actions,
            "prev_attack_actions": self.prev_attack_actions,
        }
        if self.enemy == "heuristic":
            arrays["enemy_default_target"] = self.enemy_default_target
            arrays["enemy_last_attacked"] = self.enemy_last_attacked
        arrays.update(self._clock_state())
        return arrays

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        if not tensor.numel():
            return
        if key == "pending_reset" and int(tensor.max()) > 1:
            raise ValueError("state['pending_reset']: expected 0 or 1")
        if key == "unit_types" and int(tensor.max()) >= len(UNIT_TYPES):
            raise ValueError(f"state['unit_types']: expected unit types in 0..{len(UNIT_TYPES) - 1}, "
                             f"got {int(tensor.max())}")
        if key == "unit_health" and float(tensor.min()) < 0:
            raise ValueError("state['unit_health']: expected health >= 0")
        if key == "enemy_last_attacked" and int(tensor.max()) >= self.num_allies:
            raise ValueError(f"state['enemy_last_attacked']: expected -1 (none) or an ally slot in "
                             f"0..{self.num_allies - 1}, got {int(tensor.max())}")
        if key == "prev_attack_actions":
            top = max(self.num_allies, self.num_enemies) + K.NUM_MOVE
            if int(tensor.max()) >= top:
                raise ValueError(f"state['prev_attack_actions']: expected 0 or an attack action below {top}, "
                                 f"got {int(tensor.max())}")

    # ------------------------------------------------------------------ rendering
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world: the map, allies blue and enemies red
        (a shade per unit type, the type's radius), each living unit's health bar, and a line
        from each living unit to the living unit it attacked in the last step.
        ``original_cam_range`` is accepted for the front ends and ignored (the map is fixed)."""
        from war_envs.scenarios.smax.render import draw_battle

        world = self._checked_world(world)
        state = {k: wp.to_torch(a)[world].cpu().numpy() for k, a in self._state_arrays().items()}
        return draw_battle(state, num_allies=self.num_allies, map_size=(self.map_width, self.map_height),
                           radius=np.asarray(self.unit_type_radiuses), max_health=np.asarray(self.unit_type_health),
                           attack_range=np.asarray(self.unit_type_attack_ranges), width=width, height=height)


def _map_args(map_name, unit_types, a: dict, given: set):
    """``map_name``'s team sizes and starts into the arguments ``a`` (refusing those it sets
    that were ``given``), and its unit types (``None`` without a map)."""
    if map_name is None:
        return None
    if not isinstance(map_name, str):
        raise TypeError(f"map_name: expected a str (one of {list(MAPS)}) or None, got "
                        f"{type(map_name).__name__}")
    if map_name not in MAPS:
        lower = {m.lower(): m for m in MAPS}
        close = [lower[m] for m in difflib.get_close_matches(map_name.lower(), lower, n=3)]
        hint = f"; did you mean {close}?" if close else ""
        raise ValueError(f"map_name: unknown map {map_name!r}; expected one of {list(MAPS)} or None{hint}")
    spec = MAPS[map_name]
    for name in ("num_allies", "num_enemies", "smacv2_position_generation", "smacv2_unit_type_generation"):
        if name in given:
            raise ValueError(f"{name}: set by map_name={map_name!r} ({getattr(spec, name)!r}); pass "
                             f"map_name=None to choose it")
    if unit_types is not None:
        raise ValueError(f"unit_types: set by map_name={map_name!r}; pass map_name=None to choose them")
    a.update(num_allies=spec.num_allies, num_enemies=spec.num_enemies,
             smacv2_position_generation=spec.smacv2_position_generation,
             smacv2_unit_type_generation=spec.smacv2_unit_type_generation)
    return spec.unit_types


def _check_unit_types(unit_types, A: int) -> tuple[int, ...]:
    """``unit_types`` given without a map: ``A`` known unit type indices."""
    if isinstance(unit_types, (str, bytes)) or not isinstance(unit_types, (Sequence, np.ndarray)):
        raise TypeError(f"unit_types: expected {A} ints (allies then enemies), got "
                        f"{type(unit_types).__name__}")
    types = tuple(v.check_int(f"unit_types[{i}]", t, minimum=0) for i, t in enumerate(unit_types))
    if len(types) != A:
        raise ValueError(f"unit_types: expected {A} types (num_allies + num_enemies), got {len(types)}")
    bad = [t for t in types if t >= len(UNIT_TYPES)]
    if bad:
        raise ValueError(f"unit_types: expected types in 0..{len(UNIT_TYPES) - 1}, got {bad[0]}")
    return types


#: the smallest value of each unit-type table
_TABLE_MINIMUM = {"unit_type_velocities": 0.0, "unit_type_attacks": 0.0, "unit_type_attack_ranges": 0.0,
                  "unit_type_sight_ranges": 1e-12, "unit_type_radiuses": 0.0, "unit_type_health": 1e-12,
                  "unit_type_weapon_cooldowns": 1e-12}


def _check_unit_type_tables(a: dict, names, shorthands) -> dict:
    """The unit-type tables of ``a`` checked (one float per unit type each), and the names and
    shorthands (one str per unit type)."""
    c = {}
    for key in UNIT_TYPE_DEFAULTS:
        value = a[key]
        if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray, torch.Tensor)):
            raise TypeError(f"{key}: expected {len(UNIT_TYPES)} floats (one per unit type), got "
                            f"{type(value).__name__}")
        values = [float(x) if isinstance(x, (np.floating, np.integer)) else x for x in list(value)]
        if len(values) != len(UNIT_TYPES):
            raise ValueError(f"{key}: expected {len(UNIT_TYPES)} values (one per unit type: "
                             f"{[n for n, _ in UNIT_TYPES]}), got {len(values)}")
        c[key] = tuple(v.check_float(f"{key}[{i}]", x, low=_TABLE_MINIMUM[key]) for i, x in enumerate(values))
    for key, value in (("unit_type_names", names), ("unit_type_shorthands", shorthands)):
        if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(s, str) for s in value):
            raise TypeError(f"{key}: expected {len(UNIT_TYPES)} strs, got {value!r}")
        if len(value) != len(UNIT_TYPES):
            raise ValueError(f"{key}: expected {len(UNIT_TYPES)} names (one per unit type), got {len(value)}")
    return c
