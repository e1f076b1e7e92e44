"""TagGridWorld-v0: WarpDrive's ``tag_gridworld`` (taggers chase one runner on an integer grid)."""

from __future__ import annotations

import gymnasium
import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import BatchedEnv, world_bytes
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.tag_gridworld import _kernels as K
from war_envs.scenarios.tag_shared import add_groups, check_positions, preset_args, wire_group_obs

__all__ = ["TagGridWorld", "TAG_GRIDWORLD_DEFAULTS", "TAG_GRIDWORLD_TRAINING_PRESET", "PRESETS",
           "MAX_GRID_LENGTH", "ACTION_NAMES"]

#: WarpDrive ``TagGridWorld.__init__`` defaults (rl-warp-drive 2.7.1)
TAG_GRIDWORLD_DEFAULTS: dict = {
    "num_taggers": 10,
    "grid_length": 10,
    "episode_length": 100,
    "starting_location_x": None,
    "starting_location_y": None,
    "wall_hit_penalty": 0.1,
    "tag_reward_for_tagger": 10.0,
    "tag_penalty_for_runner": 2.0,
    "step_cost_for_tagger": 0.01,
    "use_full_observation": True,
}

#: The environment part of WarpDrive's training configs ``tag_gridworld.yaml`` and
#: ``tag_gridworld_with_reset_pool.yaml`` (2.7.1; their ``seed: 20`` seeds WarpDrive's reset
#: pool, here ``seed=``).  ``make("TagGridWorld-v0", preset="warpdrive_training")``.
TAG_GRIDWORLD_TRAINING_PRESET: dict = {
    "num_taggers": 4,
    "grid_length": 100,
    "episode_length": 100,
    "wall_hit_penalty": 0.1,
    "tag_reward_for_tagger": 10.0,
    "tag_penalty_for_runner": 5.0,
    "step_cost_for_tagger": 0.01,
}

PRESETS: dict[str, dict] = {"warpdrive_training": TAG_GRIDWORLD_TRAINING_PRESET}

#: largest grid_length: squared cell distances (up to 2 L^2) stay in WarpDrive's int32 arithmetic
MAX_GRID_LENGTH = 32767
#: what each action index does (WarpDrive's ``step_actions``: (0, 0), (1, 0), (-1, 0), (0, 1), (0, -1))
ACTION_NAMES = ("stay", "x + 1", "x - 1", "y + 1", "y - 1")


def runner_tagged(info: dict) -> torch.Tensor:
    """Per world, 1.0 if the runner was tagged this step (float64 ``[E]``)."""
    return info["tagged"].to(torch.float64)


def runner_left(info: dict) -> torch.Tensor:
    """Per world, 1.0 if the runner was not tagged this step (float64 ``[E]``)."""
    return 1.0 - info["tagged"].to(torch.float64)


def wall_hits_per_agent(info: dict) -> torch.Tensor:
    """Per world, the agents' mean wall hits this step (float64 ``[E]``)."""
    return info["wall_hits"].to(torch.float64).mean(-1)


def _d(name: str) -> v.Default:
    return v.Default(TAG_GRIDWORLD_DEFAULTS[name])


class TagGridWorld(BatchedEnv):
    """TagGridWorld-v0 — taggers chase one runner on an integer grid (WarpDrive's ``tag_gridworld``).

    ``war_envs.make("TagGridWorld-v0", num_envs=E, ...)``.  Every rule and default is that of
    Salesforce WarpDrive's ``example_envs/tag_gridworld`` (rl-warp-drive 2.7.1): the NumPy env
    ``TagGridWorld`` and the CUDA steps ``CudaTagGridWorldStep`` / ``NumbaTagGridWorldStep``.
    Positions are integers, and trajectories are bitwise WarpDrive's:
    ``tests/test_warpdrive_reference.py`` replays episodes recorded with WarpDrive's own NumPy
    step and its Numba step (``bash scripts/warpdrive_check.sh``, a CI step) and compares the
    random starts with WarpDrive's reset pool.  Thousands of agents per
    world work (one thread per agent for moves and observations, one owner thread per world for
    the tag count and rewards).

    **Agents**: group ``tagger`` (``tagger_0 … tagger_{T-1}``, ``num_taggers``) then group
    ``runner`` (``runner_0``: WarpDrive has exactly one runner).  WarpDrive's agent id ``i <
    num_taggers`` is ``tagger_i``, id ``num_taggers`` (the last) is ``runner_0``, so the agent
    order is WarpDrive's.

    **Grid**: cells ``(x, y)`` with ``x, y ∈ {0, 1, …, L}`` (``L = grid_length``: ``(L + 1)²``
    cells, both edges included).

    **Start** — ``random_start=True`` (the default; WarpDrive's ``CUDATagGridWorldWithResetPool``
    generator): every tagger's x and y uniform on ``{1, …, L − 1}`` (independently), the runner
    at ``(0, 0)``; drawn afresh at every reset from the world's own stream (*deviation*:
    WarpDrive draws a pool of 5 such starts once and each reset picks one of them, the x and
    the y cells from independently picked entries; one start has the same distribution, and
    the tests compare ours with starts of WarpDrive's pool).
    ``random_start=False`` (WarpDrive's ``TagGridWorld``): ``starting_location_x`` /
    ``starting_location_y`` (one int in ``[0, L]`` per agent, in agent order) if given, else
    every tagger at ``(int(L/2), int(L/2))`` and the runner at ``(0, 0)``; every reset the same.
    Passing starting locations implies ``random_start=False``.

    **Actions**: ``Discrete(5)`` per agent (batch API: int ``[E, n_g]``; every group has the
    same space, so ``step`` also takes one ``[E, num_taggers + 1]`` tensor): 0 stay,
    1 ``x + 1``, 2 ``x − 1``, 3 ``y + 1``, 4 ``y − 1`` (WarpDrive's ``step_actions``;
    ``ACTION_NAMES``).  Every agent moves at once; a move past the edge is clipped back to
    ``[0, L]`` and counts as a wall hit.

    **Tagging**: after every agent has moved, the runner is tagged when at least one tagger is
    on its cell (agents crossing each other on the way do not tag).  The episode then ends
    (the game is over, nothing else happens to the runner).

    **Rewards** (WarpDrive's NumPy step, in float64): every tagger gets
    ``tag_reward_for_tagger`` if the runner was tagged this step (all taggers alike, not only
    the one on the cell), else ``−step_cost_for_tagger``; the runner gets
    ``−tag_penalty_for_runner`` if tagged, else ``+step_cost_for_tagger``; each agent that hit
    the wall also gets ``−wall_hit_penalty``.  float64 worlds (``precision="float64"``) return
    WarpDrive's float64 rewards bitwise; float32 worlds the same value rounded once to float32.

    **Episode end**: WarpDrive's ``done`` (``t ≥ episode_length`` or tagged) split in two:
    ``terminated`` when the runner is tagged (also at ``t == episode_length``), ``truncated``
    at ``t == episode_length`` otherwise; every agent shares the world's flags.  A world whose
    episode ended and is not reset (``autoreset_mode="disabled"``) keeps stepping and reports
    ``truncated`` again at every step (WarpDrive's NumPy env raises there, its CUDA step
    asserts).

    **Observation** (float32, WarpDrive's layout and normalisation; the clock ``t`` counts the
    steps of the episode, 0 at the start):

    - ``use_full_observation=True``: ``4 A + 1`` values (``A = num_taggers + 1``): every
      agent's ``x / L`` (agent order), every agent's ``y / L``, every agent's type (0 tagger,
      1 runner), a one-hot of the observer, ``t / episode_length``.  Every agent sees the same
      values but the one-hot.
    - ``use_full_observation=False``: 6 values: own ``x / L``, ``y / L``; a tagger then the
      runner's ``x / L``, ``y / L``, the runner the nearest tagger's (squared cell distance,
      the lowest index on ties, as ``np.argmin``); own type; ``t / episode_length``.

    **Info**: ``wall_hits [E, A]`` (1 where the agent hit the wall this step),
    ``tagged [E]`` (1 if the runner was tagged this step), ``taggers_on_runner [E]`` (how many
    taggers share the runner's cell after the step; WarpDrive CUDA's ``num_total_tagged``),
    ``t``.  At a step that ends an episode these are the finished episode's, also with SAME_STEP
    autoreset.  Per-episode metrics (``episode_metrics``, logged by war-train): ``tags`` (1 if
    the runner was tagged in the episode; the progress metric), ``runners_left`` (1 if the
    runner was not tagged by the episode's end) and ``wall_hits`` (wall hits per agent in the
    episode); how long the runner survived is the episode length.

    **State** (``get_state``/``set_state``): ``agent_pos`` int32 ``[E, A, 2]`` (cells in
    ``[0, L]``; WarpDrive's ``loc_x``, ``loc_y``), ``t``, ``episode``, ``rng_key``,
    ``pending_reset``.

    **Arguments** (WarpDrive's names and defaults): ``num_taggers=10``, ``grid_length=10``
    (an int in ``[1, MAX_GRID_LENGTH]``; at least 2 with ``random_start``),
    ``episode_length=100``, ``starting_location_x=None``, ``starting_location_y=None``
    (both or neither), ``wall_hit_penalty=0.1``, ``tag_reward_for_tagger=10.0``,
    ``tag_penalty_for_runner=2.0``, ``step_cost_for_tagger=0.01`` (any finite floats, as
    WarpDrive, which checks none), ``use_full_observation=True``.  WarpDrive's ``seed`` is the
    batch ``seed`` here, its ``env_backend`` has no counterpart.  Plus ``random_start``
    (``True``; see **Start**), ``preset`` (``None`` or ``"warpdrive_training"``: the env part of
    WarpDrive's ``tag_gridworld.yaml``, 4 taggers on a 100-cell grid, tag penalty 5; explicit
    arguments override it) and the batch arguments ``num_envs``, ``device``, ``seed``,
    ``precision``, ``autoreset_mode``, ``num_threads``.  ``max_cycles`` is an alias attribute of
    ``episode_length``.

    **WarpDrive's CPU and CUDA steps** differ in details; this env follows the NumPy step
    (``TagGridWorld.step``), and the tests check both against it:

    - the CUDA steps charge the wall penalty once per clipped axis, the NumPy step once per
      agent; one action moves one axis, so from cells in ``[0, L]`` at most one axis clips and
      the two agree (starts and states outside ``[0, L]`` are refused here);
    - rewards: the NumPy step sums Python floats in float64, the CUDA steps start from
      ``+0.0`` and add float32 constants (pycuda in float32, Numba in float64) into a float32
      buffer.  WarpDrive's Numba step, run in Numba's CUDA simulator, gives float32 worlds'
      rewards bit for bit in every tested configuration but for the sign of zero: where the
      NumPy step's reward is ``-0.0`` (``step_cost_for_tagger=0`` and no wall penalty: ``-1.0 *
      0.0 + -0.0``) the CUDA steps return ``+0.0``; ours is the NumPy step's;
    - observations: the NumPy step divides in float64, the CUDA steps in float32; a quotient
      of small integers rounded once to float32 is the same either way, so ours (float32) are
      both bit for bit;
    - WarpDrive's CUDA step reads actions unchecked; ``step`` refuses an action outside
      ``0..4`` (``step(trusted=True)`` does not check: such an agent stays where it is).

    **Version history**: v0 — initial release, WarpDrive 2.7.1 ``tag_gridworld`` rules (random
    starts by default, separate terminated/truncated).
    """

    env_id = "TagGridWorld-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}
    per_agent_metrics = ("wall_hits",)
    episode_length_kwarg = "episode_length"
    progress_metric = "tags"
    episode_metrics = (
        EpisodeMetric("tags", "1 if the runner was tagged in the episode", runner_tagged, "sum"),
        EpisodeMetric("runners_left", "1 if the runner was not tagged by the episode's end", runner_left, "last"),
        EpisodeMetric("wall_hits", "wall hits per agent in the episode", wall_hits_per_agent, "sum"),
    )

    def __init__(
        self,
        *,
        preset: str | None = None,
        num_taggers: int = _d("num_taggers"),
        grid_length: int = _d("grid_length"),
        episode_length: int = _d("episode_length"),
        starting_location_x=_d("starting_location_x"),
        starting_location_y=_d("starting_location_y"),
        wall_hit_penalty: float = _d("wall_hit_penalty"),
        tag_reward_for_tagger: float = _d("tag_reward_for_tagger"),
        tag_penalty_for_runner: float = _d("tag_penalty_for_runner"),
        step_cost_for_tagger: float = _d("step_cost_for_tagger"),
        use_full_observation: bool = _d("use_full_observation"),
        random_start: bool = v.Default(True),
        **kwargs,
    ) -> None:
        args = preset_args(TAG_GRIDWORLD_DEFAULTS, PRESETS, preset, locals())
        self.preset = preset
        self._check_args(args, random_start)
        for key, value in self._config.items():
            setattr(self, key, value)
        self.max_cycles = self.episode_length
        super().__init__(**kwargs)
        self._build()

    # ------------------------------------------------------------------ arguments
    def _check_args(self, a: dict, random_start) -> None:
        c = {}
        c["num_taggers"] = v.check_int("num_taggers", a["num_taggers"], minimum=1)
        c["grid_length"] = L = v.check_int("grid_length", a["grid_length"], minimum=1)
        if L > MAX_GRID_LENGTH:
            raise ValueError(f"grid_length: expected an int <= {MAX_GRID_LENGTH} (squared distances in int32), "
                             f"got {L}")
        c["episode_length"] = v.check_int("episode_length", a["episode_length"], minimum=1)
        for name in ("wall_hit_penalty", "tag_reward_for_tagger", "tag_penalty_for_runner", "step_cost_for_tagger"):
            c[name] = v.check_float(name, a[name])
        c["use_full_observation"] = v.check_bool("use_full_observation", a["use_full_observation"])
        num_agents = c["num_taggers"] + 1
        xs, ys = a["starting_location_x"], a["starting_location_y"]
        if (xs is None) != (ys is None):
            raise ValueError("starting_location_x, starting_location_y: expected both or neither (as WarpDrive), "
                             f"got {'starting_location_x' if xs is not None else 'starting_location_y'} only")
        fixed = xs is not None
        if isinstance(random_start, v.Default):
            random_start = not fixed
        c["random_start"] = v.check_bool("random_start", random_start)
        if fixed and c["random_start"]:
            raise ValueError("random_start: starting locations give a fixed start; expected random_start=False "
                             "(or leave it out) with starting_location_x / starting_location_y")
        if c["random_start"] and L < 2:
            raise ValueError(f"grid_length: random starts draw taggers on 1..grid_length-1; expected an int >= 2 "
                             f"with random_start=True, got {L}")
        if fixed:
            c["starting_location_x"] = _check_cells("starting_location_x", xs, num_agents, L)
            c["starting_location_y"] = _check_cells("starting_location_y", ys, num_agents, L)
        else:
            c["starting_location_x"] = c["starting_location_y"] = None
        self._config = c

    @property
    def config(self) -> dict:
        """The resolved scenario arguments (defaults, preset and explicit arguments)."""
        return {k: (list(val) if isinstance(val, tuple) else val) for k, val in self._config.items()}

    def start_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The fixed start (``random_start=False``) as int32 ``(x [A], y [A])``: the starting
        locations, or WarpDrive's default (taggers at ``int(0.5 L)``, the runner at 0)."""
        A = self.num_taggers + 1
        if self.starting_location_x is not None:
            return (np.asarray(self.starting_location_x, dtype=np.int32),
                    np.asarray(self.starting_location_y, dtype=np.int32))
        centre = np.full(A, int(0.5 * self.grid_length), dtype=np.int32)
        centre[-1] = 0
        return centre, centre.copy()

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        F, dev = self.wp_float, self.device
        T = self.num_taggers
        A = T + 1
        L = self.grid_length
        obs_dim = 4 * A + 1 if self.use_full_observation else 6
        add_groups(self, T, ("runner_0",), obs_dim, gymnasium.spaces.Discrete(K.NUM_ACTIONS))

        # every per-world buffer allocated below: refuse a batch that cannot fit before allocating
        self._check_allocation(self._common_world_bytes(A) + world_bytes(
            ((A, 2), wp.int32), *[((A,), wp.int32)] * 2,  # positions; action, wall hits
            *[((), wp.int32)] * 2, *[((A, obs_dim), wp.float32)] * 2), A)  # tag info; obs, final obs
        self._allocate_common(A)

        w = K.world_struct(F)()
        self._Struct = K.world_struct(F)
        span = max(L - 1, 1)
        params = {"mode": self._mode_code, "num_taggers": T, "grid_length": L,
                  "episode_length": self.episode_length, "full_observation": int(self.use_full_observation),
                  "random_start": int(self.random_start), "start_span": span, "start_reject_below": 2**32 % span}
        for name, value in params.items():
            setattr(w, name, int(value))
        # WarpDrive's float64 terms, formed as its NumPy step forms them
        rewards = {"wall_penalty": -1.0 * self.wall_hit_penalty, "tagger_tag_reward": self.tag_reward_for_tagger,
                   "tagger_step_reward": -1.0 * self.step_cost_for_tagger,
                   "runner_tag_reward": -1.0 * self.tag_penalty_for_runner,
                   "runner_step_reward": 1.0 * self.step_cost_for_tagger}
        for name, value in rewards.items():
            setattr(w, name, wp.float64(value))
        start_x, start_y = self.start_cells()
        w.start_x = wp.array(start_x, dtype=wp.int32, device=dev)
        w.start_y = wp.array(start_y, dtype=wp.int32, device=dev)

        self._wire_common(w)
        w.agent_pos = self.agent_pos = self._world_array((A, 2), wp.int32)
        w.action = self._world_array((A,), wp.int32)
        self._action_view = wp.to_torch(w.action)
        w.wall_hits = self._world_array((A,), wp.int32)
        w.tagged = self._world_array((), wp.int32)
        w.taggers_on_runner = self._world_array((), wp.int32)
        wire_group_obs(self, w, obs_dim)
        self._kernels = K.kernels(F)
        self._metrics = {name: wp.to_torch(getattr(w, name)) for name in ("wall_hits", "tagged", "taggers_on_runner")}
        self._make_views()

    # ------------------------------------------------------------------ launches
    def _observe(self, worlds, which, final: bool = False) -> None:
        self._launch_world(self._kernels["grid_observe"], worlds, which, int(final), per_agent=True)

    def _launch_step(self, worlds: slice | None = None) -> None:
        self._launch_world(self._kernels["grid_move"], worlds, per_agent=True)
        self._launch_world(self._kernels["grid_reward_done"], worlds)
        if self._mode_code == K.AUTORESET_SAME_STEP:
            self._observe(worlds, K.WORLDS_RESET, final=True)
        self._observe(worlds, K.WORLDS_RUNNING)
        self._launch_world(self._kernels["grid_reset"], worlds)
        self._observe(worlds, K.WORLDS_RESET)

    def _launch_observe(self, write_final: bool, worlds: slice | None = None) -> None:
        """reset() / set_state() / clone_worlds(): (``write_final``: keep the final observations
        of the worlds flagged in ``reset_now``), reset those worlds, observe every world
        (observations are a function of the state)."""
        if write_final:
            self._observe(worlds, K.WORLDS_RESET, final=True)
        self._launch_world(self._kernels["grid_reset"], worlds)
        self._observe(worlds, K.WORLDS_ALL)

    # ------------------------------------------------------------------ state
    def _state_arrays(self) -> dict[str, wp.array]:
        return {"agent_pos": self.agent_pos, **self._clock_state()}

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        if tensor.numel():
            check_positions(key, tensor, self.grid_length, "cells", int)

    # ------------------------------------------------------------------ rendering
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world: the ``(L + 1) x (L + 1)`` cells
        (``y`` up), taggers red, the runner green on top (drawn smaller on a tagger's cell:
        a tag).  ``original_cam_range`` is accepted for the front ends and ignored (the grid is
        fixed)."""
        world = self._checked_world(world)
        width = v.check_int("width", width, minimum=1)
        height = v.check_int("height", height, minimum=1)
        pos = self.agent_pos.numpy()[world]
        return draw_grid(pos, self.num_taggers, self.grid_length, width, height)


def draw_grid(pos: np.ndarray, num_taggers: int, grid_length: int, width: int, height: int) -> np.ndarray:
    """The picture ``TagGridWorld.render_frame`` draws, from one world's cells ``pos [A, 2]``."""
    n = grid_length + 1
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    xs = np.linspace(0, width, n + 1).round().astype(int)   # column c spans xs[c]:xs[c + 1]
    ys = np.linspace(0, height, n + 1).round().astype(int)  # row r (from the top) spans ys[r]:ys[r + 1]
    if min(width, height) / n >= 4:
        img[:, np.minimum(xs, width - 1)] = 220
        img[np.minimum(ys, height - 1), :] = 220

    def fill(x: int, y: int, color, inset: float) -> None:
        r = grid_length - y
        x0, x1, y0, y1 = xs[x], xs[x + 1], ys[r], ys[r + 1]
        dx, dy = int((x1 - x0) * inset), int((y1 - y0) * inset)
        img[y0 + dy:max(y1 - dy, y0 + dy + 1), x0 + dx:max(x1 - dx, x0 + dx + 1)] = color

    for x, y in pos[:num_taggers]:
        fill(int(x), int(y), (217, 89, 89), 0.08)
    rx, ry = (int(c) for c in pos[-1])
    caught = bool(((pos[:num_taggers, 0] == rx) & (pos[:num_taggers, 1] == ry)).any())
    fill(rx, ry, (64, 170, 64), 0.3 if caught else 0.08)
    return img


def _check_cells(name: str, value, num_agents: int, grid_length: int) -> tuple[int, ...]:
    """``num_agents`` ints in ``[0, grid_length]`` (a sequence, numpy array or CPU tensor)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
        raise TypeError(f"{name}: expected {num_agents} ints (one per agent), got {type(value).__name__}")
    cells = np.asarray(value)
    if cells.shape != (num_agents,):
        raise ValueError(f"{name}: expected {num_agents} values (num_taggers + 1, one per agent), "
                         f"got shape {cells.shape}")
    if cells.dtype == bool or not np.issubdtype(cells.dtype, np.integer):
        raise TypeError(f"{name}: expected ints, got dtype {cells.dtype}")
    if cells.min() < 0 or cells.max() > grid_length:
        raise ValueError(f"{name}: expected cells in [0, grid_length={grid_length}], got values in "
                         f"[{cells.min()}, {cells.max()}]")
    return tuple(int(c) for c in cells)
