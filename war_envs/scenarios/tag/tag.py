"""Tag-v0: WarpDrive's ``TagContinuous`` (taggers chase runners on a square) at WarpDrive scale."""

from __future__ import annotations

import functools
import math

import gymnasium
import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import BatchedEnv, world_bytes
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.tag import _kernels as K
from war_envs.scenarios.tag_shared import add_groups, check_positions, preset_args, wire_group_obs

__all__ = ["Tag", "TAG_DEFAULTS", "TAG_TRAINING_PRESET", "TAG_TRAINING_RUN", "PRESETS", "tag_metrics"]

#: WarpDrive ``TagContinuous.__init__`` defaults (v2.7.1).
TAG_DEFAULTS: dict = {
    "num_taggers": 1,
    "num_runners": 10,
    "grid_length": 10.0,
    "episode_length": 100,
    "max_speed": 1.0,
    "skill_level_runner": 1.0,
    "skill_level_tagger": 1.0,
    "max_acceleration": 1.0,
    "min_acceleration": -1.0,
    "max_turn": math.pi / 2,
    "min_turn": -math.pi / 2,
    "num_acceleration_levels": 10,
    "num_turn_levels": 10,
    "edge_hit_penalty": -0.0,
    "use_full_observation": True,
    "num_other_agents_observed": 2,
    "tagging_distance": 0.01,
    "tag_reward_for_tagger": 1.0,
    "step_penalty_for_tagger": -0.0,
    "tag_penalty_for_runner": -1.0,
    "step_reward_for_runner": 0.0,
    "end_of_game_reward_for_runner": 1.0,
    "runner_exits_game_after_tagged": True,
}

#: The environment part of WarpDrive's training config ``tag_continuous.yaml`` (v2.7.1); every
#: argument not listed keeps its default.  ``make("Tag-v0", preset="warpdrive_training")`` or
#: ``make("Tag-v0", **TAG_TRAINING_PRESET)``.
TAG_TRAINING_PRESET: dict = {
    "num_taggers": 10,
    "num_runners": 100,
    "grid_length": 20.0,
    "episode_length": 500,
    "max_acceleration": 0.1,
    "min_acceleration": -0.1,
    "max_turn": 2.356,
    "min_turn": -2.356,
    "num_acceleration_levels": 20,
    "num_turn_levels": 20,
    "use_full_observation": False,
    "num_other_agents_observed": 10,
    "tag_reward_for_tagger": 10.0,
    "tag_penalty_for_runner": -10.0,
    "end_of_game_reward_for_runner": 1.0,
    "tagging_distance": 0.02,
    "runner_exits_game_after_tagged": True,
}

#: The rest of that config, for trainers (not environment arguments).
TAG_TRAINING_RUN: dict = {
    "num_envs": 100, "seed": 274880, "train_batch_size": 25_000, "algorithm": "A2C",
    "fc_dims": (256, 256), "lr": {"runner": 0.005, "tagger": 0.001}, "gamma": 0.98,
    "entropy_coeff": 0.05,
}

PRESETS: dict[str, dict] = {"warpdrive_training": TAG_TRAINING_PRESET}

# WarpDrive's constant that keeps the speed normaliser away from zero
EPSILON = 1e-10
# agents per cell of the neighbour grid (at the starting density) when cell_size is automatic
TARGET_AGENTS_PER_CELL = 1.0
MAX_CELLS_PER_SIDE = 1024


def runner_tags(info: dict, num_taggers: int) -> torch.Tensor:
    """Per world, runners tagged this step (float64 ``[E]``): the runners' ``info["tags"]``."""
    return info["tags"][:, num_taggers:].to(torch.float64).sum(-1)


def runners_left(info: dict) -> torch.Tensor:
    """Per world, runners in the game after this step's tags (float64 ``[E]``)."""
    return info["runners_left"].to(torch.float64)


def runners_in_game_fraction(info: dict, num_taggers: int, num_runners: int, runners_exit: bool) -> torch.Tensor:
    """Per world, the fraction of runners in the game at the start of this step (float64 ``[E]``):
    ``(runners_left + runners tagged this step (they left at it, if runners exit)) / num_runners``."""
    in_game = runners_left(info)
    if runners_exit:
        in_game = in_game + runner_tags(info, num_taggers)
    return in_game / num_runners


def tag_metrics(num_taggers: int, num_runners: int, runners_exit: bool) -> tuple[EpisodeMetric, ...]:
    """Tag's per-episode metrics (``Tag.episode_metrics``) for a game with these sizes and
    ``runner_exits_game_after_tagged = runners_exit``."""
    return (
        EpisodeMetric("tags", "runners tagged in the episode (tag events, if tagged runners stay in the game)",
                      functools.partial(runner_tags, num_taggers=num_taggers), "sum"),
        EpisodeMetric("runners_left", "runners still in the game at the episode's end", runners_left, "last"),
        EpisodeMetric("survival", "mean over runners of the steps spent in the game (the step a runner is "
                      "tagged on counting)",
                      functools.partial(runners_in_game_fraction, num_taggers=num_taggers,
                                        num_runners=num_runners, runners_exit=runners_exit), "sum"),
    )


def _d(name: str) -> v.Default:
    return v.Default(TAG_DEFAULTS[name])


class Tag(BatchedEnv):
    """Tag-v0 — taggers chase runners on a square (WarpDrive's ``TagContinuous``).

    ``war_envs.make("Tag-v0", num_envs=E, ...)``; ``preset="warpdrive_training"`` applies
    WarpDrive's training config (``TAG_TRAINING_PRESET``; explicit arguments override it).
    Every rule and default is WarpDrive v2.7.1's ``TagContinuous``; tests replay full episodes
    against a numpy implementation of these rules (float64 worlds to 1e-9).

    **Agents**: group ``tagger`` (``tagger_0 …``, ``num_taggers``) then group ``runner``
    (``runner_0 …``, ``num_runners``).  *Deviation*: WarpDrive picks which agent ids are
    taggers at random; here taggers always come first so every group has a fixed size and
    fixed names.  Starts are i.i.d. per agent, so the game is the same up to relabelling.

    **Start** (drawn afresh at every reset — WarpDrive replays one stored start): x, y ~
    U[0, L), heading uniform in {0, π/2, π, 3π/2}, speed 0, acceleration 0, everyone in the
    game.

    **Actions**: ``MultiDiscrete([num_acceleration_levels + 1, num_turn_levels + 1])`` per
    agent (batch API: int ``[E, n_g, 2]``); index 0 is a no-op, index m ≥ 1 is
    ``linspace(min, max, levels)[m - 1]`` (acceleration change, turn in radians).

    **Dynamics** per agent: ``dir = (dir + Δturn) mod 2π``; ``acc += Δacc`` (acceleration is
    state); ``speed = clip(speed + acc, 0, max_speed · skill)``, acceleration reset to 0 when
    speed hits either bound; ``x += speed · cos(dir)``, ``y += speed · sin(dir)``, positions
    clipped to ``[0, L]`` (``L = grid_length``).  Agents out of the game get direction and
    speed 0 and stay where they are.

    **Rewards** (WarpDrive's order): every agent in the game gets ``edge_hit_penalty`` if it
    was clipped this step plus its step term (``step_penalty_for_tagger`` /
    ``step_reward_for_runner``).  Then, in runner order, each runner in the game whose nearest
    tagger (ties: lower index) is closer than ``tagging_distance · L`` is tagged: the runner
    gets ``tag_penalty_for_runner``, that tagger ``tag_reward_for_tagger`` (once per runner it
    tags), and with ``runner_exits_game_after_tagged`` the runner leaves the game.  At
    ``t == episode_length`` every runner still in the game gets
    ``end_of_game_reward_for_runner``.  Sums are made by one thread per world in this order
    (WarpDrive's CUDA kernel races on them), so runs are bitwise reproducible.

    **Episode end**: ``terminated`` when no runner is left, else ``truncated`` at
    ``t == episode_length`` (WarpDrive has one ``done``).  Per agent: a runner is
    ``terminated`` from the step it is tagged on (and stays so while out of the game);
    agents in the game share the world's flags.

    **Observation** (float32, WarpDrive's feature-major layout): 7 rows of one value per
    other agent — Δx/(√2 L), Δy/(√2 L), Δspeed/(max_speed + 1e-10), Δacc/(max_speed + 1e-10),
    Δdir/2π (other minus self), the other's type (1 tagger, 0 runner), the other's in-game flag
    — then ``t / episode_length``.  ``use_full_observation=True``: every other agent in index
    order, ``7 (A − 1) + 1`` values; an agent out of the game sees zeros except the type and
    in-game rows (as WarpDrive).  ``use_full_observation=False``: the
    ``num_other_agents_observed = k`` nearest agents still in the game, nearest first,
    zero-padded, ``7 k + 1`` values; an agent out of the game sees all zeros.  As in WarpDrive
    the observation is taken after moving and *before* the step's tags, so a runner tagged at
    step t still appears in the observations of step t and is gone from step t + 1.
    ``observe_self=True`` (an extension, off by default; not WarpDrive's) appends five values
    about the agent itself: cos(dir), sin(dir), speed / (max_speed + 1e-10), x / L, y / L
    (zeros for an agent out of the game).  WarpDrive's observation holds nothing absolute about
    the observer — no heading — so a feed-forward policy cannot aim at a runner (it has to
    infer its heading from memory); with its own state a tagger can.
    ``observe_egocentric=True`` (an extension, off by default) closes the observation with two
    more rows: each listed agent's offset in the observer's own frame, ahead =
    (Δx cos dir + Δy sin dir)/(√2 L) and left = (Δy cos dir − Δx sin dir)/(√2 L) (zeros where
    WarpDrive's rows are zeros): "turn towards the nearest runner" becomes a sign test instead
    of a product the network has to learn.  Layout: WarpDrive's ``7 n + 1`` values, then
    ``observe_self``'s 5, then ``2 n`` (``n`` = listed agents: ``A − 1`` or ``k``).

    **Alive mask** (``agents_can_leave`` is True): ``info["alive"]`` / ``env.alive_mask`` —
    ``{group: bool [E, n_g]}`` (views: who is in the game for the observations just returned;
    after a SAME_STEP autoreset, the new episode's — the finished episode's last mask is in
    ``info["final_alive"]``, valid where ``info["_final_obs"]``); ``get_state()["alive"]``
    ``[E, A]``.

    **Info** (task metrics): ``tags [E, A]`` (tagger: runners it tagged this step; runner: 1 if
    tagged this step), ``edge_hits [E, A]`` (1 if clipped at the edge this step),
    ``runners_left [E]``, ``alive``.  At a step that ends an episode these are the finished
    episode's, also with SAME_STEP autoreset (the reset touches state and observations only).
    Per-episode metrics (``episode_metrics``, logged by war-train): ``tags`` (runners tagged in
    the episode: the runners' ``tags`` summed over steps; the progress metric),
    ``runners_left`` (at the episode's last step) and ``survival`` (the mean number of steps a
    runner spends in the game, the step it is tagged on counting: ``Σ_steps (runners in the game
    at the start of the step) / num_runners``, that count being ``runners_left`` plus the
    runners tagged at the step; with ``runner_exits_game_after_tagged=False`` nobody leaves and
    it is the episode length).

    **State** (``get_state``/``set_state``): ``agent_pos [E, A, 2]`` (in ``[0, L]``),
    ``agent_speed``, ``agent_dir``, ``agent_acc [E, A]``, ``agent_vel [E, A, 2]`` (the last
    displacement, ``speed · (cos dir, sin dir)``; informational: dynamics read speed and
    direction), ``alive [E, A]`` (taggers are always in the game), ``landmark_pos [E, 0, 2]``,
    ``t``, ``episode``, ``rng_key``, ``pending_reset``.

    **Arguments** (WarpDrive's names and defaults): ``num_taggers=1``, ``num_runners=10``,
    ``grid_length=10.0``, ``episode_length=100``, ``max_speed=1.0``,
    ``skill_level_runner=1.0``, ``skill_level_tagger=1.0``, ``max_acceleration=1.0``,
    ``min_acceleration=-1.0``, ``max_turn=π/2``, ``min_turn=-π/2``,
    ``num_acceleration_levels=10``, ``num_turn_levels=10``, ``edge_hit_penalty=-0.0``,
    ``use_full_observation=True``, ``num_other_agents_observed=2``, ``tagging_distance=0.01``,
    ``tag_reward_for_tagger=1.0``, ``step_penalty_for_tagger=-0.0``,
    ``tag_penalty_for_runner=-1.0``, ``step_reward_for_runner=0.0``,
    ``end_of_game_reward_for_runner=1.0``, ``runner_exits_game_after_tagged=True``; sign
    constraints as WarpDrive's asserts.  Plus ``preset`` (``None`` or ``"warpdrive_training"``),
    ``observe_self`` and ``observe_egocentric`` (``False``; see **Observation**), ``cell_size`` (side of the neighbour-search cells; ``None``: about
    ``TARGET_AGENTS_PER_CELL`` agents per cell; changes speed, never results) and the batch
    arguments ``num_envs``, ``device``, ``seed``, ``precision``, ``autoreset_mode``,
    ``num_threads``.  ``max_cycles`` is an alias attribute of ``episode_length``.

    **Version history**: v0 — initial release, WarpDrive v2.7.1 ``TagContinuous`` rules (fixed
    tagger layout, random resets, race-free sums, separate terminated/truncated).
    """

    env_id = "Tag-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}
    #: info entries holding one value per agent ([E, A]); the rest are per world (or a dict)
    per_agent_metrics = ("tags", "edge_hits")
    #: the argument ``gym.make_vec(max_episode_steps=...)`` sets
    episode_length_kwarg = "episode_length"
    agents_can_leave = True
    progress_metric = "tags"

    def __init__(
        self,
        *,
        preset: str | None = None,
        num_taggers: int = _d("num_taggers"),
        num_runners: int = _d("num_runners"),
        grid_length: float = _d("grid_length"),
        episode_length: int = _d("episode_length"),
        max_speed: float = _d("max_speed"),
        skill_level_runner: float = _d("skill_level_runner"),
        skill_level_tagger: float = _d("skill_level_tagger"),
        max_acceleration: float = _d("max_acceleration"),
        min_acceleration: float = _d("min_acceleration"),
        max_turn: float = _d("max_turn"),
        min_turn: float = _d("min_turn"),
        num_acceleration_levels: int = _d("num_acceleration_levels"),
        num_turn_levels: int = _d("num_turn_levels"),
        edge_hit_penalty: float = _d("edge_hit_penalty"),
        use_full_observation: bool = _d("use_full_observation"),
        num_other_agents_observed: int = _d("num_other_agents_observed"),
        tagging_distance: float = _d("tagging_distance"),
        tag_reward_for_tagger: float = _d("tag_reward_for_tagger"),
        step_penalty_for_tagger: float = _d("step_penalty_for_tagger"),
        tag_penalty_for_runner: float = _d("tag_penalty_for_runner"),
        step_reward_for_runner: float = _d("step_reward_for_runner"),
        end_of_game_reward_for_runner: float = _d("end_of_game_reward_for_runner"),
        runner_exits_game_after_tagged: bool = _d("runner_exits_game_after_tagged"),
        cell_size: float | None = None,
        observe_self: bool = False,
        observe_egocentric: bool = False,
        **kwargs,
    ) -> None:
        args = preset_args(TAG_DEFAULTS, PRESETS, preset, locals())
        self.preset = preset
        self._check_args(args)
        for key, value in self._config.items():
            setattr(self, key, value)
        self.max_cycles = self.episode_length
        self.episode_metrics = tag_metrics(self.num_taggers, self.num_runners,
                                           self.runner_exits_game_after_tagged)
        self.cell_size_arg = v.check_float("cell_size", cell_size, low=1e-9) if cell_size is not None else None
        self.observe_self = v.check_bool("observe_self", observe_self)
        self.observe_egocentric = v.check_bool("observe_egocentric", observe_egocentric)
        super().__init__(**kwargs)
        self._observe_request = None
        self._build()

    # ------------------------------------------------------------------ arguments
    def _check_args(self, a: dict) -> None:
        c = {}
        c["num_taggers"] = v.check_int("num_taggers", a["num_taggers"], minimum=1)
        c["num_runners"] = v.check_int("num_runners", a["num_runners"], minimum=1)
        c["episode_length"] = v.check_int("episode_length", a["episode_length"], minimum=1)
        c["grid_length"] = v.check_float("grid_length", a["grid_length"], low=0.0)
        if c["grid_length"] <= 0:
            raise ValueError(f"grid_length: expected a float > 0, got {c['grid_length']}")
        c["max_speed"] = v.check_float("max_speed", a["max_speed"], low=0.0)
        for name in ("skill_level_runner", "skill_level_tagger"):
            c[name] = v.check_float(name, a[name], low=0.0)
        for name in ("max_acceleration", "min_acceleration", "max_turn", "min_turn"):
            c[name] = v.check_float(name, a[name])
        for name in ("num_acceleration_levels", "num_turn_levels"):
            c[name] = v.check_int(name, a[name], minimum=0)
        c["edge_hit_penalty"] = v.check_float("edge_hit_penalty", a["edge_hit_penalty"], high=0.0)
        c["use_full_observation"] = v.check_bool("use_full_observation", a["use_full_observation"])
        num_agents = c["num_taggers"] + c["num_runners"]
        c["num_other_agents_observed"] = v.check_int("num_other_agents_observed",
                                                     a["num_other_agents_observed"], minimum=1)
        if c["num_other_agents_observed"] > num_agents:
            raise ValueError(f"num_other_agents_observed: expected at most the number of agents "
                             f"({num_agents}), got {c['num_other_agents_observed']}")
        c["tagging_distance"] = v.check_float("tagging_distance", a["tagging_distance"], low=0.0, high=1.0)
        c["tag_reward_for_tagger"] = v.check_float("tag_reward_for_tagger", a["tag_reward_for_tagger"], low=0.0)
        c["step_penalty_for_tagger"] = v.check_float("step_penalty_for_tagger", a["step_penalty_for_tagger"],
                                                     high=0.0)
        c["tag_penalty_for_runner"] = v.check_float("tag_penalty_for_runner", a["tag_penalty_for_runner"],
                                                    high=0.0)
        c["step_reward_for_runner"] = v.check_float("step_reward_for_runner", a["step_reward_for_runner"],
                                                    low=0.0)
        c["end_of_game_reward_for_runner"] = v.check_float(
            "end_of_game_reward_for_runner", a["end_of_game_reward_for_runner"], low=0.0)
        c["runner_exits_game_after_tagged"] = v.check_bool("runner_exits_game_after_tagged",
                                                           a["runner_exits_game_after_tagged"])
        self._config = c

    @property
    def config(self) -> dict:
        """The resolved scenario arguments (defaults, preset and explicit arguments)."""
        return dict(self._config)

    # ------------------------------------------------------------------ tables (shared with tests)
    @staticmethod
    def action_tables(config: dict, dtype) -> tuple[np.ndarray, np.ndarray]:
        """(acceleration changes, turns) per action index, as WarpDrive builds them: index 0 is
        0, then ``linspace(min, max, levels)``; in float32 worlds from float32 end points."""
        dtype = np.dtype(dtype)

        def table(lo, hi, n):
            lo, hi = dtype.type(lo), dtype.type(hi)
            return np.insert(np.linspace(lo, hi, n), 0, 0).astype(dtype)

        return (table(config["min_acceleration"], config["max_acceleration"], config["num_acceleration_levels"]),
                table(config["min_turn"], config["max_turn"], config["num_turn_levels"]))

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        F = self.wp_float
        T, R = self.num_taggers, self.num_runners
        A = T + R
        k = self.num_other_agents_observed
        listed = A - 1 if self.use_full_observation else k
        obs_dim = 7 * listed + 1 + (5 if self.observe_self else 0) + (2 * listed if self.observe_egocentric else 0)
        action_space = gymnasium.spaces.MultiDiscrete(
            [self.num_acceleration_levels + 1, self.num_turn_levels + 1], dtype=np.int64)
        add_groups(self, T, tuple(f"runner_{i}" for i in range(R)), obs_dim, action_space)

        # neighbour grid: C x C cells over [0, L]^2
        L = self.grid_length
        if self.cell_size_arg is not None:
            cells = int(math.ceil(L / self.cell_size_arg))
        else:
            cells = int(math.floor(math.sqrt(A / TARGET_AGENTS_PER_CELL)))
        self.grid_cells = max(1, min(cells, MAX_CELLS_PER_SIDE))
        self.cell_size = L / self.grid_cells
        num_cells = self.grid_cells * self.grid_cells
        kk = 1 if self.use_full_observation else k

        # every per-world buffer allocated below: refuse a batch that cannot fit before allocating
        self._check_allocation(self._common_world_bytes(A) + world_bytes(
            *[((A, 2), F)] * 2, *[((A,), F)] * 3,  # pos, vel; speed, dir, acc
            *[((A,), wp.bool)] * 4, ((A, 2), wp.int32),  # alive, term, trunc, final alive; action
            *[((A,), wp.int32)] * 5,  # edge hits, tagged by, cell, cell agents, tags
            ((num_cells + 1,), wp.int32), ((num_cells,), wp.int32), ((A, kk), F), ((A, kk), wp.int32),
            *[((), wp.int32)] * 2, *[((A, obs_dim), wp.float32)] * 2), A)  # masks; obs, final obs
        self._allocate_common(A)

        w = K.world_struct(F)()
        self._Struct = K.world_struct(F)
        self._set_params(w)
        self._wire_common(w)
        w.observe_mask = self._observe_mask = self._world_array((), wp.int32)
        w.alive = self.alive = self._world_array((A,), wp.bool)
        w.agent_pos = self.agent_pos = self._world_array((A, 2), F)
        w.agent_speed = self.agent_speed = self._world_array((A,), F)
        w.agent_dir = self.agent_dir = self._world_array((A,), F)
        w.agent_acc = self.agent_acc = self._world_array((A,), F)
        w.agent_vel = self.agent_vel = self._world_array((A, 2), F)
        self.landmark_pos = self._world_array((0, 2), F)
        w.action = self._world_array((A, 2), wp.int32)
        self._action_view = wp.to_torch(w.action)
        w.tagged_by = self._world_array((A,), wp.int32)
        w.agent_cell = self._world_array((A,), wp.int32)
        w.cell_start = self._world_array((num_cells + 1,), wp.int32)
        w.cell_cursor = self._world_array((num_cells,), wp.int32)
        w.cell_agents = self._world_array((A,), wp.int32)
        w.nn_dist = self._world_array((A, kk), F)
        w.nn_idx = self._world_array((A, kk), wp.int32)
        w.agent_terminated = self._world_array((A,), wp.bool)
        w.agent_truncated = self._world_array((A,), wp.bool)
        w.edge_hit = self._world_array((A,), wp.int32)
        w.tags = self._world_array((A,), wp.int32)
        w.runners_left = self._world_array((), wp.int32)
        w.final_alive = self._world_array((A,), wp.bool)
        wire_group_obs(self, w, obs_dim)
        self._metric_arrays = {"tags": w.tags, "edge_hits": w.edge_hit, "runners_left": w.runners_left}
        self._kernels = K.kernels(F)
        self._make_views()
        self._observe_mask_view = wp.to_torch(self._observe_mask)

    def _set_params(self, w) -> None:
        """The game's parameters, constants (in the world's precision) and action tables into ``w``."""
        F, dev = self.wp_float, self.device
        np_float = wp.dtype_to_numpy(F)
        L, k = self.grid_length, self.num_other_agents_observed
        acc_table, turn_table = self.action_tables(self._config, np_float)
        f = np.dtype(np_float).type
        params = {
            "mode": self._mode_code, "num_taggers": self.num_taggers, "episode_length": self.episode_length,
            "runner_exits": int(self.runner_exits_game_after_tagged),
            "full_observation": int(self.use_full_observation), "k": k, "observe_self": int(self.observe_self),
            "egocentric": int(self.observe_egocentric), "cells": self.grid_cells,
        }
        for name, value in params.items():
            setattr(w, name, int(value))
        # constants in the world's precision
        floats = {
            "grid_length": L, "max_speed": self.max_speed, "skill_tagger": self.skill_level_tagger,
            "skill_runner": self.skill_level_runner, "two_pi": 2 * math.pi, "half_pi": math.pi / 2,
            "diagonal": math.sqrt(2.0) * L, "speed_norm": f(self.max_speed) + f(EPSILON),
            "cell_size": self.cell_size, "inv_cell": self.grid_cells / L,
            "tag_radius": self.tagging_distance * L, "edge_hit_penalty": self.edge_hit_penalty,
            "step_reward_tagger": self.step_penalty_for_tagger, "step_reward_runner": self.step_reward_for_runner,
            "tag_reward_for_tagger": self.tag_reward_for_tagger,
            "tag_penalty_for_runner": self.tag_penalty_for_runner,
            "end_of_game_reward": self.end_of_game_reward_for_runner,
        }
        for name, value in floats.items():
            setattr(w, name, F(value))
        w.acceleration_table = wp.array(acc_table, dtype=F, device=dev)
        w.turn_table = wp.array(turn_table, dtype=F, device=dev)

    def _make_views(self) -> None:
        super()._make_views()
        self._term = self._group_views(wp.to_torch(self._w.agent_terminated))
        self._trunc = self._group_views(wp.to_torch(self._w.agent_truncated))
        self._alive = self._group_views(wp.to_torch(self.alive))
        self._metrics = {k: wp.to_torch(a) for k, a in self._metric_arrays.items()}
        self._metrics["alive"] = self._alive
        self._final_alive_views = self._group_views(wp.to_torch(self._w.final_alive))

    def _step_info(self) -> dict:
        info = super()._step_info()
        if self._mode_code == K.AUTORESET_SAME_STEP:
            info["final_alive"] = self._final_alive_views
        return info

    # ------------------------------------------------------------------ public extras
    @property
    def num_agents_per_group(self) -> dict[str, int]:
        return {g: s.n_agents for g, s in self.groups.items()}

    @property
    def alive_mask(self) -> dict[str, torch.Tensor]:
        """``{group: bool [E, n_g]}`` views: who is in the game (for the current observations)."""
        self._check_open()
        return self._alive

    # ------------------------------------------------------------------ launches
    def _launch_grid_and_observe(self, select: int, advance_clock: bool, worlds) -> None:
        kernels = self._kernels
        self._launch_world(kernels["tag_build_grid"], worlds, select, int(advance_clock))
        self._launch_world(kernels["tag_observe"], worlds, select, per_agent=True)

    def _launch_step(self, worlds: slice | None = None) -> None:
        kernels = self._kernels
        self._launch_world(kernels["tag_move"], worlds, per_agent=True)
        self._launch_grid_and_observe(K.SELECT_STEPPING, True, worlds)
        self._launch_world(kernels["tag_find_tagger"], worlds, per_agent=True)
        self._launch_world(kernels["tag_reward_done"], worlds)
        if self._mode_code == K.AUTORESET_SAME_STEP:
            self._launch_world(kernels["tag_copy_final"], worlds, per_agent=True)
        self._launch_world(kernels["tag_reset"], worlds)
        self._launch_grid_and_observe(K.SELECT_RESET, False, worlds)

    def _launch_observe(self, write_final: bool, worlds: slice | None = None) -> None:
        """reset() / set_state() / clone_worlds(): reset the worlds flagged in ``_reset_now``,
        then observe the worlds the call touched (observations of the others are left alone:
        they were taken before their last step's tags)."""
        request = self._observe_request
        if request == "reset":
            flags = self._reset_now_view.bool()
            self._observe_mask_view.copy_(self._reset_now_view)
            for view in (wp.to_torch(self._w.agent_terminated), wp.to_torch(self._w.agent_truncated),
                         self._metrics["tags"], self._metrics["edge_hits"]):
                view[flags] = 0
            self._metrics["runners_left"][flags] = self.num_runners
        elif request is None:
            self._observe_mask_view.fill_(1)
        else:
            index = self._check_world_index("worlds", request)
            self._observe_mask_view.zero_()
            self._observe_mask_view[index] = 1
        if write_final:  # pragma: no cover - the base never asks for it here
            self._launch_world(self._kernels["tag_copy_final"], worlds, per_agent=True)
        self._launch_world(self._kernels["tag_reset"], worlds)
        self._launch_grid_and_observe(K.SELECT_REQUESTED, False, worlds)

    # ------------------------------------------------------------------ API overrides
    def reset(self, seed: int | None = None, mask=None) -> dict[str, torch.Tensor]:
        self._observe_request = "reset"
        try:
            return super().reset(seed=seed, mask=mask)
        finally:
            self._observe_request = None

    def set_state(self, state, worlds=None) -> dict[str, torch.Tensor]:
        self._observe_request = worlds
        try:
            return super().set_state(state, worlds=worlds)
        finally:
            self._observe_request = None

    def clone_worlds(self, src, dst) -> None:
        self._observe_request = dst
        try:
            super().clone_worlds(src, dst)
        finally:
            self._observe_request = None

    def _write_actions(self, actions) -> None:
        """Validate every group's ``[E, n_g, 2]`` integer actions, then copy them into the
        kernels' action buffer (nothing is written unless every group passes)."""
        v.check_keys("actions", actions, list(self.groups))
        checked = []
        for g, spec in self.groups.items():
            name = f"actions[{g!r}]"
            tensor = v.as_tensor(name, actions[g], self.torch_device)
            nvec = spec.action_space.nvec
            v.check_shape(name, tensor, (self.num_envs, spec.n_agents, len(nvec)))
            for d, n in enumerate(nvec):
                part = "acceleration" if d == 0 else "turn"
                v.check_discrete(f"{name}[..., {d}] ({part})", tensor[..., d], int(n))
            checked.append((spec, tensor))
        for spec, tensor in checked:
            self._action_view[:, spec.start:spec.stop].copy_(tensor)

    def _state_arrays(self) -> dict[str, wp.array]:
        return {
            "agent_pos": self.agent_pos,
            "agent_vel": self.agent_vel,
            "agent_speed": self.agent_speed,
            "agent_dir": self.agent_dir,
            "agent_acc": self.agent_acc,
            "alive": self.alive,
            "landmark_pos": self.landmark_pos,
            **self._clock_state(),
        }

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        if not tensor.numel():
            return
        check_positions(key, tensor, self.grid_length, "positions")
        if key == "alive" and not bool(tensor[:, :self.num_taggers].all()):
            raise ValueError("state['alive']: taggers never leave the game (expected True for "
                             f"agents 0..{self.num_taggers - 1})")

    # ------------------------------------------------------------------ rendering
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world: the square ``[0, L]^2``, taggers
        red, runners in the game green (runners out of the game are not drawn).
        ``original_cam_range`` is accepted for the front ends and ignored (the arena is fixed)."""
        from war_envs.render import render_circles

        world = self._checked_world(world)
        half = self.grid_length / 2
        pos = (self.agent_pos.numpy()[world].astype(np.float64) - half) / half
        alive = self.alive.numpy()[world]
        T = self.num_taggers
        keep = np.flatnonzero(alive)
        runners = keep[keep >= T]
        order = np.concatenate([runners, np.arange(T)])  # taggers drawn on top
        radii = np.where(order < T, 0.05, 0.03)
        colors = np.where((order < T)[:, None], [[0.85, 0.35, 0.35]], [[0.35, 0.85, 0.35]])
        return render_circles(pos[order], radii, colors, width=width, height=height, cam_range=1.05)
