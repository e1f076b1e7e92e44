"""JaxMARL 0.2.0's SMAX recorded for the parity tests (tests/test_smax_reference.py).

Runs in JaxMARL's own virtual environment (``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``:
jax 0.10.2, jaxmarl 0.2.0) and imports only the standard library, numpy, jax and jaxmarl — never
war_envs or torch.  Subcommands, each writing one ``.npz`` file:

``trace``
    plays JaxMARL (``HeuristicEnemySMAX`` for ``"enemy": "heuristic"``, ``SMAX`` for
    ``"self_play"``) with a random policy (uniform over JaxMARL's available actions for discrete
    actions, uniform [0, 1)^4 for continuous; drawn with numpy from ``--policy-seed``), calling
    ``step_env`` (no auto-reset: an episode stops at its first ``done["__all__"]`` and the next
    one starts from a fresh ``reset``) and records every step: the whole state before and after
    (every ``State`` field, the heuristic's ``default_target`` / ``last_attacked_enemy`` as
    ``enemy_default_target`` / ``enemy_last_attacked``), the actions, observations, rewards,
    dones and available actions before and after, and the random numbers JaxMARL used inside the
    step in the format of ``SMAX.inject_draws`` (see :func:`draws_fn`).  ``--check`` verifies
    those numbers against what JaxMARL did (:func:`check_step`): the heuristic enemy's actions
    and policy state, the continuous decoding and every world step's cooldowns and health,
    recomputed in numpy from the recovered numbers, must equal JaxMARL's.
``resets``
    ``--n`` reset draws (start positions after JaxMARL's push-apart, unit types, health).
``random_stats``
    a uniformly random policy over available actions on JaxMARL's auto-reset ``step`` (jit + vmap
    over ``--worlds`` worlds): the first ``--episodes-per-world`` episodes of every world (so
    short episodes are not over-represented): length (env steps), ally return (the sum of
    ``ally_0``'s reward over the episode; the reward is the team's, shared by every ally) and
    won (every enemy dead and some ally alive in the episode's last state).
``batch``
    runs a JSON list of the above (each an argv list) in one process (one jax start-up).

The env configuration (``--config``) is a JSON object: ``map_name`` (a key of JaxMARL's
``MAP_NAME_TO_SCENARIO``, ``null`` for ``scenario=None``; default ``"3m"``), ``unit_types``
(with ``map_name: null``: a ``Scenario`` of these types), ``enemy`` (``"heuristic"`` default |
``"self_play"``), ``attack_mode`` / ``enemy_shoots`` (the heuristic's), and any other ``SMAX``
keyword argument (``unit_type_*`` tables as lists).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from functools import partial

import numpy as np

import jax
import jax.numpy as jnp
from jaxmarl.environments.smax import HeuristicEnemySMAX, SMAX, Scenario, map_name_to_scenario
from jaxmarl_jit import strongly_typed

STATE_FIELDS = ("unit_positions", "unit_alive", "unit_teams", "unit_health", "unit_types",
                "unit_weapon_cooldowns", "prev_movement_actions", "prev_attack_actions", "step",
                "done")
POLICY_FIELDS = {"enemy_default_target": "default_target", "enemy_last_attacked": "last_attacked_enemy"}
N_MOVE = 5  # JaxMARL's num_movement_actions: 4 moves + stop


# ----------------------------------------------------------------------------- environments
class Reference:
    """One JaxMARL SMAX configuration: the env, its inner ``SMAX`` and jitted helpers."""

    def __init__(self, config: dict) -> None:
        config = dict(config)
        self.config = dict(config)
        self.enemy = config.pop("enemy", "heuristic")
        map_name = config.pop("map_name", "3m")
        unit_types = config.pop("unit_types", None)
        heuristic_kwargs = {k: config.pop(k) for k in ("attack_mode", "enemy_shoots") if k in config}
        for k, v in list(config.items()):
            if k.startswith("unit_type_") and k not in ("unit_type_names", "unit_type_shorthands"):
                config[k] = jnp.array(v, dtype=jnp.float32)
        if map_name is not None:
            if unit_types is not None:
                raise ValueError("config: unit_types goes with map_name=null only")
            config["scenario"] = map_name_to_scenario(map_name)
        elif unit_types is not None:
            na, ne = config.get("num_allies", 5), config.get("num_enemies", 5)
            config["scenario"] = Scenario(jnp.array(unit_types, dtype=jnp.uint8), na, ne,
                                          config.pop("smacv2_position_generation", False),
                                          config.pop("smacv2_unit_type_generation", False))
        if self.enemy == "heuristic":
            self.env = HeuristicEnemySMAX(**heuristic_kwargs, **config)
            self.inner = self.env._env
        elif self.enemy == "self_play":
            if heuristic_kwargs:
                raise ValueError(f"config: {sorted(heuristic_kwargs)} need enemy='heuristic'")
            self.env = self.inner = SMAX(**config)
        else:
            raise ValueError(f"config: enemy must be 'heuristic' or 'self_play', got {self.enemy!r}")
        inner = self.inner
        self.na, self.ne, self.A = inner.num_allies, inner.num_enemies, inner.num_agents
        self.W = inner.world_steps_per_env_step
        self.continuous = inner.action_type == "continuous"
        self.groups = {"ally": [f"ally_{i}" for i in range(self.na)]}
        if self.enemy == "self_play":
            self.groups["enemy"] = [f"enemy_{i}" for i in range(self.ne)]
        env = self.env

        def start(key):  # reset, and what the first step's policy sees
            _, state = env.reset(key)
            # the heuristic's reset state has a weakly typed leaf (last_attacked_enemy): the step's
            # types, so `record` compiles once (jaxmarl_jit.py)
            state = strongly_typed(state)
            return state, env.get_obs(state), env.get_avail_actions(state)

        def record(key, state, actions):  # one step_env and everything a trace records
            obs, state_after, rewards, dones, _ = env.step_env(key, state, actions)
            draws = draws_from_keys(self, *step_keys(self, key))
            return state_after, obs, rewards, dones, env.get_avail_actions(state_after), draws

        def enemy_actions(key, state):  # the heuristic's observations and actions (checks)
            obs = self.inner.get_obs_unit_list(state.state)
            obs = jnp.stack([obs[f"enemy_{e}"] for e in range(self.ne)])
            return obs, env.get_enemy_actions(key, state.enemy_policy_state, obs)[0]

        # one compilation each: compiling dominates a trace's time
        self.start, self.record = jax.jit(start), jax.jit(record)
        self.keys = jax.jit(partial(step_keys, self))
        self.enemy_actions = jax.jit(enemy_actions)
        self.world_state = jax.jit(env.get_world_state)

    def smax_state(self, state):
        return state.state if self.enemy == "heuristic" else state

    def flat_state(self, state) -> dict:
        s = self.smax_state(state)
        out = {f: np.asarray(getattr(s, f)) for f in STATE_FIELDS}
        if self.enemy == "heuristic":
            for ours, theirs in POLICY_FIELDS.items():
                out[ours] = np.asarray(getattr(state.enemy_policy_state, theirs))
        return out

    def by_group(self, per_agent: dict) -> dict:
        return {g: np.stack([np.asarray(per_agent[a]) for a in agents]) for g, agents in self.groups.items()}


    @property
    def actors(self) -> list[str]:
        """The agents whose actions ``step_env`` takes (allies; with self-play every unit)."""
        return [a for agents in self.groups.values() for a in agents]


# ----------------------------------------------------------------------------- in-step draws
def step_keys(ref: Reference, key):
    """``(enemy_action_key, decode_key, world_key)`` as JaxMARL 0.2.0's ``step_env`` splits
    ``key``:

    * ``HeuristicEnemySMAX.step_env``: ``key, action_key = split(key)`` (``action_key`` for the
      heuristic); continuous actions: ``key, action_key = split(key)`` again (the decoding);
      ``key`` goes to ``step_env_no_decode``.
    * ``SMAX.step_env``: ``key, action_key = split(key)`` (the decoding), ``key`` to
      ``step_env_no_decode``.
    Keys that a configuration does not use are ``key`` itself (never read).
    """
    enemy_key = decode_key = key
    if ref.enemy == "heuristic":
        key, enemy_key = jax.random.split(key)
        if ref.continuous:
            key, decode_key = jax.random.split(key)
    else:
        key, decode_key = jax.random.split(key)
    return enemy_key, decode_key, key


def draws_from_keys(ref: Reference, enemy_key, decode_key, world_key):
    """``(cooldown [W, A], heuristic [n_enemies, 2], gumbel [A, 2, 2])``, ``SMAX.inject_draws``'s
    format: the random numbers JaxMARL draws from :func:`step_keys`' keys.

    * heuristic (``heuristic_enemy.py``): ``split(enemy_key, n_enemies)``, per enemy ``key,
      key_attack = split(k)``; its two ``jax.random.choice(..., p=...)`` each draw ``u =
      uniform(k, ())`` and pick ``searchsorted(cumsum(p), cumsum(p)[-1] * (1 - u))``:
      heuristic[:, 0] from ``key_attack`` (the random attack target), heuristic[:, 1] from
      ``key`` (the random enemy to walk to).  Zeros for self-play.
    * gumbel (``_decode_continuous_actions``): ``move_or_shoot_key, shoot_last_enemy_key =
      split(decode_key)``; ``jax.random.categorical(k, logits [2, A], axis=0)`` is
      ``argmax(gumbel(k, (2, A)) + logits, axis=0)`` (jax/_src/random/core.py, mode "low");
      gumbel[a, 0] is unit a's move_or_shoot noise, gumbel[a, 1] its shoot_last_enemy noise,
      last axis the class.  Zeros for discrete actions.
    * cooldown (``step_env_no_decode`` / ``_world_step``): per world step ``key,
      world_step_key = split(key)``, one key per unit ``split(world_step_key, A)`` and
      ``uniform(k, minval=-tps, maxval=2 tps) = max(-tps, floats * (2 tps - -tps) + -tps)``;
      cooldown[w, a] is that ``floats`` (``uniform(k, ())``).
    """
    A, ne = ref.A, ref.ne

    def uniform(k):
        return jax.random.uniform(k, (), dtype=jnp.float32)

    heuristic = jnp.zeros((ne, 2), jnp.float32)
    if ref.enemy == "heuristic":
        def per_enemy(k):
            k, key_attack = jax.random.split(k)
            return jnp.stack([uniform(key_attack), uniform(k)])

        heuristic = jax.vmap(per_enemy)(jax.random.split(enemy_key, num=ne))
    gumbel = jnp.zeros((A, 2, 2), jnp.float32)
    if ref.continuous:
        mos_key, sle_key = jax.random.split(decode_key)
        g = jnp.stack([jax.random.gumbel(mos_key, (2, A), jnp.float32),
                       jax.random.gumbel(sle_key, (2, A), jnp.float32)])  # [which, class, A]
        gumbel = jnp.transpose(g, (2, 0, 1))
    cooldown = []
    key = world_key
    for _ in range(ref.W):
        key, world_step_key = jax.random.split(key)
        cooldown.append(jax.vmap(uniform)(jax.random.split(world_step_key, num=A)))
    return jnp.stack(cooldown), heuristic, gumbel


# ----------------------------------------------------------------------------- numpy checks
class CheckFailed(AssertionError):
    pass


def _same(name: str, ours, theirs, atol: float = 0.0) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if ours.shape != theirs.shape:
        raise CheckFailed(f"{name}: shape {ours.shape} vs JaxMARL's {theirs.shape}")
    if atol == 0.0:
        bad = ~((ours == theirs) | (np.isnan(ours.astype(float)) & np.isnan(theirs.astype(float))))
    else:
        bad = ~np.isclose(ours.astype(np.float64), theirs.astype(np.float64), rtol=0.0, atol=atol)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise CheckFailed(f"{name}: {int(bad.sum())} values differ, first at {idx}: recomputed "
                          f"{ours[idx]!r}, JaxMARL {theirs[idx]!r}")


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def heuristic_np(ref: Reference, obs, default_target, last_attacked, u):
    """JaxMARL's heuristic enemy (``create_heuristic_policy(env, team=1)``) for one enemy, in
    float32 numpy, from its unit-list observation, policy state and the two uniforms of its
    ``jax.random.choice`` draws.  Returns ``(action, default_target, last_attacked)``."""
    inner = ref.inner
    F, bits = len(inner.unit_features), inner.unit_type_bits
    na, A = ref.na, ref.A
    obs = _f32(obs)
    nz = np.flatnonzero(obs[-bits:])
    unit_type = int(nz[0]) if nz.size else 0
    attack_range = _f32(inner.unit_type_attack_ranges)[unit_type]
    sight = _f32(inner.unit_type_sight_ranges)[unit_type]
    first, own = (ref.ne - 1) * F, (A - 1) * F
    own_pos = obs[own + 1:own + 3] * _f32([inner.map_width, inner.map_height])
    enemy_pos = np.stack([obs[first + 1:own:F], obs[first + 2:own:F]], axis=1) * _f32([sight, sight])
    visible = obs[first:own:F] > 0
    enemy_dist = np.sqrt((enemy_pos * enemy_pos).sum(-1, dtype=np.float32)).astype(np.float32)
    shootable = (enemy_dist < attack_range) & visible
    can_shoot = bool(shootable.any())

    def choice(mask, uu):
        p = (mask / np.float32(mask.sum())).astype(np.float32)
        cum = np.cumsum(p, dtype=np.float32)
        return int(np.searchsorted(cum, cum[-1] * (np.float32(1) - np.float32(uu)), side="left"))

    diag = np.float32(math.sqrt(float(inner.map_width) ** 2 + float(inner.map_height) ** 2))
    closest = int(np.argmin(np.where(shootable, enemy_dist, diag))) + N_MOVE
    if ref.env.attack_mode == "random":
        new_attack = choice(shootable, u[0]) + N_MOVE if can_shoot else N_MOVE
    else:
        new_attack = closest
    last = int(last_attacked)
    attack = last + N_MOVE if last != -1 and shootable[last] else new_attack
    attacked = attack - N_MOVE
    new_last = attacked if can_shoot and 0 <= attacked < na and shootable[attacked] else -1
    can_see = bool(visible.any())
    target_pos = enemy_pos[choice(visible, u[1])] + own_pos if can_see else None
    centre = _f32([inner.map_width / 2, inner.map_height / 2])
    default_target = _f32(default_target)
    if np.all(default_target == 0) and last == -1:
        default_target = (-(own_pos - centre) + centre).astype(np.float32)
    target = target_pos if can_see else default_target
    v = (target - own_pos).astype(np.float32)
    move = int(np.argmax([v[1], v[0], -v[1], -v[0]]))
    action = attack if can_shoot and ref.env.enemy_shoots else move
    return action, default_target, new_last


def decode_continuous_np(ref: Reference, positions, prev_attack, actions, gumbel):
    """JaxMARL's ``_decode_continuous_actions`` in float32 numpy: ``actions [A, 4]``, ``gumbel
    [A, 2, 2]`` -> ``(movement [A, 2], attack [A])``."""
    na, A = ref.na, ref.A
    a = _f32(actions)
    with np.errstate(divide="ignore"):
        logits = np.stack([np.log(a[:, 1]), np.log(np.float32(1) - a[:, 1])], axis=1)  # [A, class]
        sl_logits = np.stack([np.log(a[:, 0]), np.log(np.float32(1) - a[:, 0])], axis=1)
    g = _f32(gumbel)
    move_or_shoot = np.argmax(g[:, 0] + logits, axis=1)
    shoot_last = np.argmax(g[:, 1] + sl_logits, axis=1)
    theta = a[:, 3] * np.float32(2) * np.float32(math.pi)
    offset = np.stack([a[:, 2] * np.cos(theta), a[:, 2] * np.sin(theta)], axis=1).astype(np.float32)
    movement = np.where(move_or_shoot[:, None] == 0, offset, np.float32(0))
    pos = _f32(positions)
    target = pos + offset
    attack = np.zeros(A, np.int32)
    for i in range(A):
        own_team = (np.arange(A) < na) == (i < na)
        d = np.sqrt(((pos - target[i]) ** 2).sum(-1)).astype(np.float32) + own_team * np.float32(1e8)
        j = int(np.argmin(d))
        act = (j - na if i < na else na - 1 - j) + N_MOVE
        if shoot_last[i] == 1:
            act = int(prev_attack[i])
        attack[i] = act if move_or_shoot[i] == 1 and not own_team[j] else 0
    return movement.astype(np.float32), attack


def world_step_np(ref: Reference, s: dict, movement, attack, u):
    """One JaxMARL world step (``_world_step``, walls, deaths, push-apart) in float32 numpy from
    state dict ``s`` and that world step's cooldown uniforms ``u [A]``."""
    inner = ref.inner
    na, A = ref.na, ref.A
    tps = np.float32(inner.time_per_step)
    size = _f32([inner.map_width, inner.map_height])
    types = s["unit_types"].astype(np.int64)
    pos, alive = _f32(s["unit_positions"]), s["unit_alive"].astype(bool)
    health, cd = _f32(s["unit_health"]), _f32(s["unit_weapon_cooldowns"])
    vel = _f32(inner.unit_type_velocities)[types]
    new_pos = pos + _f32(movement) * vel[:, None] * tps
    new_pos = np.where(alive[:, None], np.maximum(np.minimum(new_pos, size), np.float32(0)), pos)
    idx = np.arange(A)
    att = np.asarray(attack, dtype=np.int64)
    attacked = np.where(idx < na, att + na - N_MOVE, na - 1 - (att - N_MOVE))
    attacked = np.where(att < N_MOVE, idx, attacked)
    dist = np.sqrt(((pos - pos[attacked]) ** 2).sum(-1, dtype=np.float32)).astype(np.float32)
    valid = ((dist < _f32(inner.unit_type_attack_ranges)[types]) & alive & alive[attacked]
             & (idx != attacked) & (cd <= 0))
    damage = np.where(valid, -_f32(inner.unit_type_attacks)[types], np.float32(0)).astype(np.float32)
    health = health.copy()
    np.add.at(health, attacked, damage)
    health = np.maximum(health, np.float32(0))
    lo, hi = np.float32(-inner.time_per_step), np.float32(2 * inner.time_per_step)
    # XLA's CPU backend contracts jax.random.uniform's ``floats * (maxval - minval) + minval``
    # into one fused multiply-add (one rounding); exact in float64 (24 + 24 bits), then rounded.
    deviation = np.maximum(lo, (_f32(u).astype(np.float64) * np.float64(hi - lo) + np.float64(lo)).astype(np.float32))
    cooldown = _f32(inner.unit_type_weapon_cooldowns)[types] + deviation
    cd = cd + np.where(valid, cooldown - cd, -tps)
    if inner.walls_cause_death:
        touching = (new_pos <= 0).any(-1) | (new_pos >= size).any(-1)
        health = np.where(touching, np.float32(0), health)
    alive = health > 0
    pair = alive[:, None] & alive[None, :]
    delta = new_pos[:, None] - new_pos[None, :]
    d = np.sqrt((delta * delta).sum(-1)) + np.eye(A, dtype=np.float32) + np.float32(1e-6)
    radius = _f32(inner.unit_type_radiuses)[types]
    overlap = np.where(pair, np.maximum(np.float32(0), (radius[:, None] + radius[None, :]) / d - 1), 0)
    pushed = new_pos + (delta * overlap[:, :, None].astype(np.float32)).sum(1) / np.float32(2)
    new_pos = np.where(alive[:, None], pushed, new_pos)
    return {"unit_positions": new_pos.astype(np.float32), "unit_health": health.astype(np.float32),
            "unit_alive": alive, "unit_weapon_cooldowns": cd.astype(np.float32)}


def check_step(ref: Reference, key, state, actions_arr, draws, state_after) -> None:
    """Show that the recovered ``draws`` are the numbers JaxMARL used in ``step_env(key, state,
    actions)``, and that :func:`step_keys` is JaxMARL's key replay: recomputed in numpy from
    the draws, the heuristic's actions and policy state, the continuous decoding and every world
    step's health and cooldowns must equal JaxMARL's (exactly; positions to 1e-5)."""
    inner, na, A = ref.inner, ref.na, ref.A
    cooldown, heuristic, gumbel = (np.asarray(d) for d in draws)
    enemy_key, decode_key, world_key = ref.keys(key)
    smax_before = ref.smax_state(state)
    before = ref.flat_state(state)
    after = ref.flat_state(state_after)
    if ref.enemy == "heuristic":
        enemy_obs, jax_actions = ref.enemy_actions(enemy_key, state)
        for e in range(ref.ne):
            action, target, last = heuristic_np(ref, np.asarray(enemy_obs[e]),
                                                before["enemy_default_target"][e],
                                                before["enemy_last_attacked"][e], heuristic[e])
            _same(f"heuristic action of enemy_{e}", action, jax_actions[f"enemy_{e}"])
            _same(f"enemy_default_target[{e}]", target, after["enemy_default_target"][e])
            _same(f"enemy_last_attacked[{e}]", last, after["enemy_last_attacked"][e])
    if ref.continuous:
        cont = np.zeros((A, 4), np.float32)
        cont[:len(actions_arr)] = actions_arr
        jax_move, jax_attack = inner._decode_continuous_actions(decode_key, smax_before, jnp.asarray(cont))
        move, attack = decode_continuous_np(ref, before["unit_positions"], before["prev_attack_actions"],
                                            cont, gumbel)
        _same("continuous decode: attack", attack, jax_attack)
        _same("continuous decode: movement", move, jax_move, atol=1e-6)
        acting = slice(0, len(actions_arr))
        _same("prev_attack_actions (acting units)", attack[acting], after["prev_attack_actions"][acting])
    decoded = (jnp.asarray(after["prev_movement_actions"]), jnp.asarray(after["prev_attack_actions"]))
    seq = inner.step_env_no_decode(world_key, smax_before, decoded, get_state_sequence=True)
    for f in ("unit_positions", "unit_health", "unit_alive", "unit_weapon_cooldowns"):
        _same(f"world_key replay: {f}", np.asarray(getattr(seq, f))[-1], after[f])
    s = before
    for w in range(ref.W):
        got = world_step_np(ref, s, after["prev_movement_actions"], after["prev_attack_actions"], cooldown[w])
        theirs = {f: np.asarray(getattr(seq, f))[w] for f in got}
        for f in ("unit_weapon_cooldowns", "unit_health", "unit_alive"):
            _same(f"world step {w}: {f}", got[f], theirs[f])
        _same(f"world step {w}: unit_positions", got["unit_positions"], theirs["unit_positions"], atol=1e-5)
        s = {**s, **theirs}


# ----------------------------------------------------------------------------- subcommands
def _policy_actions(ref: Reference, rng, avail: dict) -> dict:
    if ref.continuous:
        return {a: rng.random(4, dtype=np.float32) for a in ref.actors}
    return {a: int(rng.choice(np.flatnonzero(np.asarray(avail[a])))) for a in ref.actors}


def trace(ref: Reference, seed: int, steps: int, policy_seed: int, check: bool) -> dict:
    """``steps`` env steps of episodes from ``PRNGKey(seed)``: ``key, reset_key = split(key)``
    per episode, ``key, step_key = split(key)`` per step."""
    rng = np.random.default_rng(policy_seed)
    key = jax.random.PRNGKey(seed)
    rows: dict[str, list] = {}

    def put(name, value):
        rows.setdefault(name, []).append(np.asarray(value))

    episode, checked = -1, 0
    state = None
    for t in range(steps):
        if state is None:
            key, reset_key = jax.random.split(key)
            state, obs, avail = ref.start(reset_key)
            episode += 1
            ep_t = 0
        actions = _policy_actions(ref, rng, avail)
        key, step_key = jax.random.split(key)
        state_after, obs_after, rewards, dones, avail_after, draws = ref.record(step_key, state, actions)
        actions_arr = np.stack([np.asarray(actions[a]) for a in ref.actors])
        if check:
            check_step(ref, step_key, state, actions_arr, draws, state_after)
            checked += 1
        put("episode", episode)
        put("episode_step", ep_t)
        put("step_key", jax.random.key_data(step_key) if jnp.issubdtype(step_key.dtype, jax.dtypes.prng_key)
            else step_key)
        for f, v in ref.flat_state(state).items():
            put(f"before.{f}", v)
        for f, v in ref.flat_state(state_after).items():
            put(f"after.{f}", v)
        for g, v in ref.by_group(obs).items():
            put(f"obs_before.{g}", v)
        for g, v in ref.by_group(obs_after).items():
            put(f"obs_after.{g}", v)
        put("world_state_before", ref.world_state(state))
        put("world_state_after", ref.world_state(state_after))
        for g, v in ref.by_group(avail).items():
            put(f"avail_before.{g}", v.astype(bool))
        for g, v in ref.by_group(avail_after).items():
            put(f"avail_after.{g}", v.astype(bool))
        for g, v in ref.by_group(actions).items():
            put(f"action.{g}", v)
        for g, v in ref.by_group(rewards).items():
            put(f"reward.{g}", v)
        for g, v in ref.by_group(dones).items():
            put(f"done.{g}", v)
        put("done_all", dones["__all__"])
        put("draws.cooldown", draws[0])
        put("draws.heuristic", draws[1])
        put("draws.gumbel", draws[2])
        ep_t += 1
        state, obs, avail = (None, None, None) if bool(dones["__all__"]) else (state_after, obs_after, avail_after)
    out = {k: np.stack(v) for k, v in rows.items()}
    out["config"] = np.array(json.dumps(ref.config, sort_keys=True))
    out["obs_dim"] = np.array(ref.inner.obs_size)
    out["checked_steps"] = np.array(checked)
    return out


def resets(ref: Reference, seed: int, n: int, chunk: int = 2048) -> dict:
    """``n`` resets of JaxMARL's ``SMAX.reset`` from ``split(PRNGKey(seed), n)``."""
    fn = jax.jit(jax.vmap(lambda k: ref.inner.reset(k)[1]))
    keys = jax.random.split(jax.random.PRNGKey(seed), n)
    parts = [fn(keys[i:i + chunk]) for i in range(0, n, chunk)]
    return {f: np.concatenate([np.asarray(getattr(p, f)) for p in parts])
            for f in ("unit_positions", "unit_types", "unit_health", "unit_alive")}


def random_stats(ref: Reference, seed: int, worlds: int, episodes_per_world: int, chunk: int = 128) -> dict:
    """A uniformly random policy over available actions (``jax.random.categorical`` of
    ``log(avail)`` per acting agent) on JaxMARL's auto-reset ``MultiAgentEnv.step``, jit + vmap
    over ``worlds``; the first ``episodes_per_world`` episodes of every world.

    ``step`` is written out here (``key, key_reset = split(key)``, ``step_env``, ``reset``,
    select on ``done["__all__"]``, as ``MultiAgentEnv.step`` does) to keep each episode's last
    state for ``won``; the first chunk is replayed with ``env.step`` itself and must give the
    same states."""
    env, na = ref.env, ref.na
    actors = ref.actors

    def policy(key, state):
        avail = env.get_avail_actions(state)
        keys = jax.random.split(key, len(actors))
        return {a: jax.random.categorical(keys[i], jnp.log(avail[a].astype(jnp.float32)))
                for i, a in enumerate(actors)}

    def select(done, x, y):
        return jax.tree.map(lambda a, b: jax.lax.select(done, a, b), x, y)

    def body(carry, _):
        key, state, length, ret = carry
        key, policy_key, step_key = jax.random.split(key, 3)
        actions = policy(policy_key, state)
        step_key, key_reset = jax.random.split(step_key)
        _, state_st, rewards, dones, _ = env.step_env(step_key, state, actions)
        _, state_re = env.reset(key_reset)
        done = dones["__all__"]
        length, ret = length + 1, ret + rewards["ally_0"]
        alive = ref.smax_state(state_st).unit_alive
        won = jnp.all(~alive[na:]) & jnp.any(alive[:na])
        out = (done, length, ret, won, alive[:na].sum(), alive[na:].sum())
        return (key, select(done, state_re, state_st), jnp.where(done, 0, length),
                jnp.where(done, 0.0, ret)), out

    def body_step(carry, _):  # the same with JaxMARL's own auto-reset step
        key, state = carry
        key, policy_key, step_key = jax.random.split(key, 3)
        _, state, _, _, _ = env.step(step_key, state, policy(policy_key, state))
        return (key, state), None

    def run(carry):
        return jax.lax.scan(body, carry, None, length=chunk)

    run = jax.jit(jax.vmap(run))
    run_step = jax.jit(jax.vmap(lambda c: jax.lax.scan(body_step, c, None, length=chunk)[0]))
    keys = jax.random.split(jax.random.PRNGKey(seed), worlds)
    keys, reset_keys = jax.vmap(jax.random.split, out_axes=1)(keys)
    _, state = jax.vmap(env.reset)(reset_keys)
    carry = (keys, state, jnp.zeros(worlds, jnp.int32), jnp.zeros(worlds, jnp.float32))
    replay = run_step((keys, state))
    outs, first = [], True
    while True:
        carry, out = run(carry)
        if first:
            for a, b in zip(jax.tree.leaves(replay[1]), jax.tree.leaves(carry[1])):
                if not np.array_equal(np.asarray(a), np.asarray(b)):
                    raise CheckFailed("random_stats: the written-out step differs from env.step")
            first = False
        outs.append([np.asarray(o) for o in out])  # each [worlds, chunk]
        done = np.concatenate([o[0] for o in outs], axis=1)
        if done.sum(axis=1).min() >= episodes_per_world:
            break
    cols = [np.concatenate([o[i] for o in outs], axis=1) for i in range(6)]
    result = {name: [] for name in ("length", "ally_return", "won", "allies_left", "enemies_left")}
    for w in range(worlds):
        idx = np.flatnonzero(cols[0][w])[:episodes_per_world]
        for name, col in zip(result, cols[1:]):
            result[name].append(col[w, idx])
    return {name: np.concatenate(v) for name, v in result.items()}


def summary(stats: dict) -> dict:
    out = {}
    for name in ("length", "ally_return", "won"):
        x = np.asarray(stats[name], dtype=np.float64)
        out[name] = {"mean": float(x.mean()), "std": float(x.std(ddof=1)), "count": int(x.size)}
    return out


# ----------------------------------------------------------------------------- command line
def versions() -> dict:
    from importlib import metadata

    return {"python": sys.version.split()[0], **{d: metadata.version(d) for d in ("jax", "jaxlib", "jaxmarl", "numpy")}}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace", help="record JaxMARL episodes step by step")
    r = sub.add_parser("resets", help="reset draws")
    s = sub.add_parser("random_stats", help="random-policy episode statistics")
    for q in (t, r, s):
        q.add_argument("--config", type=json.loads, default={}, help="env configuration (JSON object)")
        q.add_argument("--seed", type=int, default=0, help="jax.random.PRNGKey seed")
        q.add_argument("--out", required=True, help="the .npz file to write")
    t.add_argument("--steps", type=int, required=True, help="env steps (episodes chained)")
    t.add_argument("--policy-seed", type=int, default=0, help="numpy seed of the random actions")
    t.add_argument("--check", action="store_true", help="verify the recovered draws at every step")
    r.add_argument("--n", type=int, default=10_000, help="number of resets")
    s.add_argument("--worlds", type=int, default=256)
    s.add_argument("--episodes-per-world", type=int, default=8)
    b = sub.add_parser("batch", help="run a JSON list of argv lists (one jax start-up)")
    b.add_argument("jobs", help="JSON file: [[\"trace\", \"--config\", ...], ...]")
    return p


def run(argv) -> None:
    args = parser().parse_args(argv)
    if args.command == "batch":
        with open(args.jobs) as f:
            jobs = json.load(f)
        for job in jobs:
            if job and job[0] == "batch":
                raise ValueError("batch: jobs cannot be batches")
            run(job)
        return
    if not isinstance(args.config, dict):
        raise ValueError(f"--config: expected a JSON object, got {args.config!r}")
    ref = Reference(args.config)
    if args.command == "trace":
        out = trace(ref, args.seed, args.steps, args.policy_seed, args.check)
        info = {"steps": int(out["episode"].size), "episodes": int(out["episode"][-1]) + 1,
                "checked_steps": int(out["checked_steps"])}
    elif args.command == "resets":
        out = resets(ref, args.seed, args.n)
        info = {"resets": args.n}
    else:
        out = random_stats(ref, args.seed, args.worlds, args.episodes_per_world)
        info = summary(out)
        out["summary"] = np.array(json.dumps(info))
    out["config"] = np.array(json.dumps(args.config, sort_keys=True))
    out["versions"] = np.array(json.dumps(versions()))
    np.savez(args.out, **out)
    print(json.dumps({"command": args.command, "out": args.out, "config": args.config, **info}), flush=True)


if __name__ == "__main__":
    run(sys.argv[1:])
