"""SwitchRiddle-v0: JaxMARL's ``switch_riddle`` (one prisoner a day in the room with the bulb)."""

from __future__ import annotations

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import world_bytes
from war_envs.core.small_game import SmallGameEnv
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.switch_riddle import _kernels as K

__all__ = ["SwitchRiddle", "SWITCH_RIDDLE_DEFAULTS", "ACTION_NAMES"]

#: JaxMARL 0.2.0 ``SwitchRiddle.__init__`` defaults
SWITCH_RIDDLE_DEFAULTS: dict = {"num_agents": 3, "initial_bulb_state": False, "reward_all_die": -1.0,
                                "reward_all_live": 1.0}
#: what each action index does (JaxMARL's ``game_actions``)
ACTION_NAMES = ("NOTHING", "SWITCH_LIGHT", "TELL")
OBS_DIM = 2


def _as_float(name: str):
    return lambda info: info[name].to(torch.float64)


class SwitchRiddle(SmallGameEnv):
    """SwitchRiddle-v0 — the switch riddle: one prisoner a day visits a room with a light bulb; one
    of them must tell when every prisoner has been there (JaxMARL's ``switch_riddle``).

    ``war_envs.make("SwitchRiddle-v0", num_envs=E, ...)``.  Every rule and default is that of
    JaxMARL 0.2.0's ``SwitchRiddle`` (Foerster et al. 2016, "Learning to Communicate with Deep
    Multi-Agent Reinforcement Learning"); ``tests/test_jaxmarl_games_reference.py`` replays
    JaxMARL's own episodes step by step (``bash scripts/smax_check.sh``, a CI step).

    **Agents**: one group ``agent`` (``agent_0 … agent_{N-1}``, ``num_agents`` ≥ 3), JaxMARL's
    names and order.

    **Start**: the bulb as ``initial_bulb_state`` (off by default), nobody has been in the room,
    the agent in the room uniform among the N (from the world's own stream).

    **Actions**: ``Discrete(3)`` per agent (``ACTION_NAMES``): 0 NOTHING, 1 SWITCH_LIGHT, 2 TELL.
    Only the action of the agent in the room counts; the others' are ignored.

    **Step** (JaxMARL's ``step_env``): the agent in the room is marked as having been there; it
    switches the bulb (1) or tells (2); then the next agent in the room is drawn, uniform among
    the N (it may be the same one again).

    **Rewards** (the team's, every agent alike): ``reward_all_live`` (1) when the agent in the
    room tells and every agent has been in the room (itself included, this step), else
    ``reward_all_die`` (-1) when it tells, else 0.

    **Episode end**: ``terminated`` when an agent tells; ``truncated`` after ``max_steps`` steps
    (JaxMARL's ``4 N - 6``) otherwise.  JaxMARL has one ``done`` for both.

    **Observation** (float32, 2 values per agent; JaxMARL's ``MultiDiscrete([2, 2])`` ints as
    floats): 1 if the agent is in the room (now, for the next step), and 1 if it is in the room
    and the bulb is on.  The bulb is seen only from inside the room.

    **Info**: ``told [E]`` (1 if the agent in the room told this step), ``success [E]`` (1 if it
    told after every agent had been in the room), ``visited [E]`` (how many agents have been in
    the room after this step), ``t``.  Per-episode metrics (``episode_metrics``): ``success``
    (the progress metric), ``told`` and ``visited`` (at the episode's end).

    **State** (``get_state``/``set_state``): ``bulb`` int32 ``[E]`` (0 off, 1 on), ``in_room``
    int32 ``[E]`` (the agent in the room, ``0 … N − 1``), ``has_been`` int32 ``[E, N]`` (0/1),
    then ``t``, ``episode``, ``rng_key``, ``pending_reset``.  ``inject_draws(in_room=...)``
    makes the next step draw the given agent instead of its own (the reference tests pass
    JaxMARL's draws).

    **Arguments** (JaxMARL's names and defaults): ``num_agents=3`` (an int ≥ 3, as JaxMARL
    asserts), ``initial_bulb_state=False``, ``reward_all_die=-1.0``, ``reward_all_live=1.0``
    (finite floats); ``max_steps=None`` (the time limit: None is JaxMARL's ``4 N - 6``, which
    JaxMARL derives from N and does not take as an argument; an int sets another, as
    ``gym.make_vec(max_episode_steps=)`` does; ``max_cycles`` is the same); plus the batch
    arguments ``num_envs``, ``device``, ``seed``, ``precision`` (float64 worlds have float64
    rewards; the defaults' values are JaxMARL's float32 ones exactly), ``autoreset_mode``,
    ``num_threads``.

    **Deviation**: JaxMARL draws the next agent with ``jax.random.randint`` from the step's key;
    ours comes from the world's counter-based stream (same distribution, other numbers: the
    tests compare the distribution).

    **Version history**: v0 — initial release, JaxMARL 0.2.0 rules.
    """

    env_id = "SwitchRiddle-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}
    episode_length_kwarg = "max_steps"
    progress_metric = "success"
    episode_metrics = (
        EpisodeMetric("success", "1 if an agent told after every agent had been in the room", _as_float("success"),
                      "sum"),
        EpisodeMetric("told", "1 if an agent told (rightly or not) before the time limit", _as_float("told"), "sum"),
        EpisodeMetric("visited", "how many agents had been in the room by the episode's end", _as_float("visited"),
                      "last"),
    )

    def __init__(self, *, num_agents: int = 3, initial_bulb_state: bool = False, reward_all_die: float = -1.0,
                 reward_all_live: float = 1.0,
                 max_steps: int | None = None, **kwargs) -> None:
        n = v.check_int("num_agents", num_agents, minimum=3)
        self.initial_bulb_state = v.check_bool("initial_bulb_state", initial_bulb_state)
        self.reward_all_die = v.check_float("reward_all_die", reward_all_die)
        self.reward_all_live = v.check_float("reward_all_live", reward_all_live)
        max_steps = v.check_int("max_steps", max_steps, minimum=1, allow_none=True)
        self.max_steps = self.max_cycles = 4 * n - 6 if max_steps is None else max_steps
        super().__init__(**kwargs)
        self._build(n)

    @property
    def config(self) -> dict:
        """The resolved scenario arguments."""
        return {"num_agents": self.num_agents, "initial_bulb_state": self.initial_bulb_state,
                "reward_all_die": self.reward_all_die, "reward_all_live": self.reward_all_live,
                "max_steps": self.max_steps}

    # ------------------------------------------------------------------ building
    def _build(self, n: int) -> None:
        F = self.wp_float
        self._add_agents(n, OBS_DIM, K.NUM_ACTIONS)
        self._check_allocation(self._common_world_bytes(n) + world_bytes(
            *[((), wp.int32)] * 7, *[((n,), wp.int32)] * 2, *[((n, OBS_DIM), wp.float32)] * 2), n)
        self._allocate_common(n)
        self._Struct = K.world_struct(F)
        w = self._Struct()
        w.mode, w.max_steps, w.initial_bulb = self._mode_code, self.max_steps, int(self.initial_bulb_state)
        w.reward_all_live, w.reward_all_die = wp.float64(self.reward_all_live), wp.float64(self.reward_all_die)
        self._wire_common(w)
        for name in ("bulb", "in_room", "draw", "draw_injected", "told", "success", "visited"):
            setattr(w, name, self._world_array((), wp.int32))
        w.has_been = self._world_array((n,), wp.int32)
        self._finish_build(w, self._Struct, K.kernels(F), "riddle_step", "riddle_observe",
                           ("told", "success", "visited"))

    # ------------------------------------------------------------------ draws
    def inject_draws(self, *, in_room) -> None:
        """Make the next step (only) put agent ``in_room[e]`` (int ``[E]``, ``0 … N − 1``) in world
        e's room instead of drawing it.  JaxMARL's reference tests pass the agents its own keys
        drew (``tests/jaxmarl_games_reference.py``)."""
        self._check_open()
        tensor = v.as_tensor("in_room", in_room, self.torch_device)
        v.check_shape("in_room", tensor, (self.num_envs,))
        v.check_discrete("in_room", tensor, self.num_agents)
        self._inject(tensor)

    # ------------------------------------------------------------------ state
    def _state_arrays(self) -> dict[str, wp.array]:
        w = self._w
        return {"bulb": w.bulb, "in_room": w.in_room, "has_been": w.has_been, **self._clock_state()}

    @property
    def _state_maxima(self) -> dict[str, int]:
        return {"bulb": 1, "has_been": 1, "in_room": self.num_agents - 1}

    # ------------------------------------------------------------------ rendering
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world: the room (a square with the bulb,
        yellow when on) and the N prisoners in a row below it, the one in the room drawn inside
        it; a prisoner who has been in the room is dark blue, the others light blue.
        ``original_cam_range`` is accepted for the front ends and ignored."""
        world = self._checked_world(world)
        width = v.check_int("width", width, minimum=1)
        height = v.check_int("height", height, minimum=1)
        state = self.get_state([world])
        return draw_room(int(state["bulb"][0]), int(state["in_room"][0]), state["has_been"][0].tolist(),
                         width, height)


def draw_room(bulb: int, in_room: int, has_been: list[int], width: int, height: int) -> np.ndarray:
    """The picture ``SwitchRiddle.render_frame`` draws."""
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    n = len(has_been)

    def box(x0, y0, x1, y1, color):
        img[max(int(y0 * height), 0):max(int(y1 * height), int(y0 * height) + 1),
            max(int(x0 * width), 0):max(int(x1 * width), int(x0 * width) + 1)] = color

    box(0.3, 0.08, 0.7, 0.55, (90, 90, 90))      # the room's walls
    box(0.32, 0.10, 0.68, 0.53, (235, 235, 235))  # its floor
    box(0.46, 0.12, 0.54, 0.22, (255, 215, 0) if bulb else (60, 60, 60))  # the bulb
    cell = 0.9 / n
    for i in range(n):
        color = (40, 70, 160) if has_been[i] else (150, 180, 230)
        if i == in_room:
            box(0.45, 0.32, 0.55, 0.46, color)
        else:
            x = 0.05 + i * cell
            box(x + 0.2 * cell, 0.7, x + 0.8 * cell, 0.7 + 0.6 * cell * width / max(height, 1), color)
    return img
