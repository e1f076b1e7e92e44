"""CoinGame-v0: JaxMARL's ``coin_game`` (two agents collect coins on a 3 x 3 torus)."""

from __future__ import annotations

import math

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import world_bytes
from war_envs.core.small_game import SmallGameEnv
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.coin_game import _kernels as K

__all__ = ["CoinGame", "COIN_GAME_DEFAULTS", "ACTION_NAMES"]

#: JaxMARL 0.2.0 ``CoinGame.__init__`` defaults
COIN_GAME_DEFAULTS: dict = {"num_inner_steps": 10, "num_outer_steps": 10, "cnn": False, "egocentric": False,
                            "shared_rewards": False, "payoff_matrix": [[1, 1, -2], [1, 1, -2]]}
#: what each action index does (JaxMARL's ``MOVES``, (row, column) steps on the torus)
ACTION_NAMES = ("right", "left", "up", "down", "stay")
OBS_DIM = 36


def _coins(name: str):
    return lambda info: info[name].to(torch.float64).sum(-1)


class CoinGame(SmallGameEnv):
    """CoinGame-v0 — the coin game: two agents on a 3 x 3 torus pick up coins of their own colour
    or of the other's, who then pays for it (JaxMARL's ``coin_game``, a sequential social
    dilemma after Lerer & Peysakhovich 2017).

    ``war_envs.make("CoinGame-v0", num_envs=E, ...)``.  Every rule and default is that of
    JaxMARL 0.2.0's ``CoinGame``; ``tests/test_jaxmarl_games_reference.py`` replays JaxMARL's own
    episodes step by step (``bash scripts/smax_check.sh``, a CI step).

    **Agents**: one group ``agent``: ``agent_0`` (red; JaxMARL's agent ``"0"``) and ``agent_1``
    (blue; ``"1"``).

    **Grid**: cells ``(row, column)``, each in ``{0, 1, 2}``, on a torus (moves wrap around).

    **Start**: red, blue, the red coin and the blue coin each on a uniform cell, independently
    (they may share one), from the world's own stream.

    **Actions**: ``Discrete(5)`` per agent (``ACTION_NAMES``, JaxMARL's ``MOVES``): 0 right
    (column + 1), 1 left (column − 1), 2 up (row + 1), 3 down (row − 1), 4 stay.  Both agents move
    at once.

    **Coins and rewards** (``payoff_matrix = [[rr, rb, r_penalty], [br, bb, b_penalty]]``, default
    ``[[1, 1, -2], [1, 1, -2]]``): an agent whose new cell holds a coin picks it up — red gets
    ``rr`` for the red coin and ``rb`` for the blue one, and red pays ``r_penalty`` when blue
    picks up the red coin (and the same for blue); both may pick up the same coin.  A coin picked
    up reappears on a uniform cell.  ``shared_rewards=True``: both agents get the sum of the two
    rewards.

    **Inner games and the episode**: JaxMARL's meta-episode is ``num_outer_steps`` inner games of
    ``num_inner_steps`` steps.  At the last step of an inner game every position is drawn afresh
    (a new start) and that step's rewards are **zero** (JaxMARL's rule: coins picked up then
    count in the info, not in the rewards); ``info["inner_episode_done"]`` is 1 there.  The
    episode is ``truncated`` after ``num_inner_steps · num_outer_steps`` steps (``max_steps``;
    JaxMARL's one ``done``); it never terminates.

    **Observation** (float32, 36 values per agent): JaxMARL's ``(3, 3, 4)`` grid of 0/1,
    flattened in C order (``obs.reshape(..., 3, 3, 4)`` gives it back), channels [own position,
    the other agent's, own coin, the other's coin]: each agent sees itself as red.
    ``egocentric=True``: the grid is shifted (torus) so that the agent is at the centre cell
    ``(1, 1)``.

    **Info**: ``own_coins [E, 2]`` and ``other_coins [E, 2]`` (per agent, 1 if it picked up a coin
    of its own colour, of the other's colour, this step; JaxMARL's ``red_coop``/``red_defect``/
    ``blue_coop``/``blue_defect`` counts), ``inner_episode_done [E]``, ``t``.  Per-episode metrics
    (``episode_metrics``): ``coins`` (coins picked up by both agents), ``own_coins`` and
    ``other_coins`` (of them, those of the picker's own colour and of the other's);
    ``own_coins / coins`` is the cooperation rate papers report.

    **State** (``get_state``/``set_state``): ``agent_pos`` int32 ``[E, 2, 2]`` (red's, blue's
    cell), ``coin_pos`` int32 ``[E, 2, 2]`` (the red coin's, the blue coin's), then ``t`` (steps
    of the episode: JaxMARL's inner ``step`` is ``t % num_inner_steps``, its ``outer_t`` is ``t //
    num_inner_steps``), ``episode``, ``rng_key``, ``pending_reset``.
    ``inject_draws(coins=..., start=...)`` makes the next step use the given cells instead of its
    own draws (the reference tests pass JaxMARL's).

    **Arguments** (JaxMARL's names and defaults): ``num_inner_steps=10``, ``num_outer_steps=10``
    (ints ≥ 1), ``cnn=False`` (``True`` is refused: observations are the flat 36 values; the CNN
    layout is their ``reshape(..., 3, 3, 4)``), ``egocentric=False``, ``shared_rewards=False``,
    ``payoff_matrix`` (2 rows of 3 finite numbers); ``max_steps=None`` (the time limit: None is
    JaxMARL's ``num_inner_steps · num_outer_steps``; an int sets another, as
    ``gym.make_vec(max_episode_steps=)`` does); plus the batch arguments ``num_envs``,
    ``device``, ``seed``, ``precision`` (float32 worlds add the payoffs in float32 in JaxMARL's
    order, float64 worlds in float64), ``autoreset_mode``, ``num_threads``.

    **Deviations**: JaxMARL draws cells with ``jax.random.randint`` from the step's key; ours come
    from the world's counter-based stream (same distribution, other numbers: the tests compare
    the distributions).  JaxMARL's state also keeps convention statistics (``counter``,
    ``coop1``, ``coop2``, ``last_state``) that neither its observations nor its rewards read;
    they are not kept here.

    **Version history**: v0 — initial release, JaxMARL 0.2.0 rules.
    """

    env_id = "CoinGame-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}
    episode_length_kwarg = "max_steps"
    per_agent_metrics = ("own_coins", "other_coins")
    episode_metrics = (
        EpisodeMetric("coins", "coins picked up by both agents in the episode",
                      lambda info: (info["own_coins"] + info["other_coins"]).to(torch.float64).sum(-1), "sum"),
        EpisodeMetric("own_coins", "coins of the picker's own colour picked up in the episode", _coins("own_coins"),
                      "sum"),
        EpisodeMetric("other_coins", "coins of the other agent's colour picked up in the episode",
                      _coins("other_coins"), "sum"),
    )

    def __init__(self, *, num_inner_steps: int = 10, num_outer_steps: int = 10, cnn: bool = False,
                 egocentric: bool = False, shared_rewards: bool = False,
                 payoff_matrix=((1, 1, -2), (1, 1, -2)), max_steps: int | None = None, **kwargs) -> None:
        self.num_inner_steps = v.check_int("num_inner_steps", num_inner_steps, minimum=1)
        self.num_outer_steps = v.check_int("num_outer_steps", num_outer_steps, minimum=1)
        if v.check_bool("cnn", cnn):
            raise ValueError("cnn: expected False; observations are the flat 36 values of JaxMARL's (3, 3, 4) "
                             "grid in C order: obs.reshape(*obs.shape[:-1], 3, 3, 4) is its CNN layout")
        self.cnn = False
        self.egocentric = v.check_bool("egocentric", egocentric)
        self.shared_rewards = v.check_bool("shared_rewards", shared_rewards)
        self.payoff_matrix = _check_payoff(payoff_matrix)
        max_steps = v.check_int("max_steps", max_steps, minimum=1, allow_none=True)
        self.max_steps = self.max_cycles = (self.num_inner_steps * self.num_outer_steps if max_steps is None
                                            else max_steps)
        super().__init__(**kwargs)
        self._build()

    @property
    def config(self) -> dict:
        """The resolved scenario arguments."""
        return {"num_inner_steps": self.num_inner_steps, "num_outer_steps": self.num_outer_steps, "cnn": False,
                "egocentric": self.egocentric, "shared_rewards": self.shared_rewards,
                "payoff_matrix": [list(row) for row in self.payoff_matrix], "max_steps": self.max_steps}

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        F, dev = self.wp_float, self.device
        self._add_agents(2, OBS_DIM, K.NUM_ACTIONS)
        self._check_allocation(self._common_world_bytes(2) + world_bytes(
            *[((2, 2), wp.int32)] * 2, ((K.NUM_DRAWS,), wp.int32), *[((), wp.int32)] * 2,
            *[((2,), wp.int32)] * 3, *[((2, OBS_DIM), wp.float32)] * 2), 2)
        self._allocate_common(2)
        self._Struct = K.world_struct(F)
        w = self._Struct()
        w.mode, w.num_inner_steps, w.max_steps = self._mode_code, self.num_inner_steps, self.max_steps
        w.egocentric, w.shared_rewards = int(self.egocentric), int(self.shared_rewards)
        w.payoff = wp.array(np.asarray(self.payoff_matrix, dtype=np.float64), dtype=wp.float64, device=dev)
        self._wire_common(w)
        w.agent_pos = self._world_array((2, 2), wp.int32)
        w.coin_pos = self._world_array((2, 2), wp.int32)
        w.draw = self._world_array((K.NUM_DRAWS,), wp.int32)
        w.draw_injected = self._world_array((), wp.int32)
        w.inner_episode_done = self._world_array((), wp.int32)
        for name in ("own_coins", "other_coins"):
            setattr(w, name, self._world_array((2,), wp.int32))
        self._finish_build(w, self._Struct, K.kernels(F), "coin_step", "coin_observe",
                           ("own_coins", "other_coins", "inner_episode_done"))

    # ------------------------------------------------------------------ draws
    def inject_draws(self, *, coins, start) -> None:
        """Make the next step (only) use these cells instead of its own draws, in every world:
        ``coins`` int ``[E, 2, 2]`` (where the red and the blue coin reappear if picked up) and
        ``start`` int ``[E, 4, 2]`` (red's, blue's, the red coin's and the blue coin's cells if the
        step ends an inner game), each in ``{0, 1, 2}``.  JaxMARL's reference tests pass the cells
        its own keys drew (``tests/jaxmarl_games_reference.py``)."""
        self._check_open()
        parts = []
        for name, value, shape in (("coins", coins, (self.num_envs, 2, 2)), ("start", start, (self.num_envs, 4, 2))):
            tensor = v.as_tensor(name, value, self.torch_device)
            v.check_shape(name, tensor, shape)
            v.check_discrete(name, tensor, 3)
            parts.append(tensor.reshape(self.num_envs, -1).to(torch.int32))
        self._inject(torch.cat(parts, dim=1))

    # ------------------------------------------------------------------ state
    def _state_arrays(self) -> dict[str, wp.array]:
        return {"agent_pos": self._w.agent_pos, "coin_pos": self._w.coin_pos, **self._clock_state()}

    _state_maxima = {"agent_pos": 2, "coin_pos": 2}

    # ------------------------------------------------------------------ rendering
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world: the 3 x 3 cells (row 0 at the bottom),
        red and blue agents as large squares, the red and blue coins as small ones on top.
        ``original_cam_range`` is accepted for the front ends and ignored."""
        world = self._checked_world(world)
        width = v.check_int("width", width, minimum=1)
        height = v.check_int("height", height, minimum=1)
        state = self.get_state([world])
        return draw_coins(state["agent_pos"][0].numpy(), state["coin_pos"][0].numpy(), width, height)


COLORS = ((217, 64, 64), (64, 96, 217))


def draw_coins(agents: np.ndarray, coins: np.ndarray, width: int, height: int) -> np.ndarray:
    """The picture ``CoinGame.render_frame`` draws from one world's cells."""
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    xs = np.linspace(0, width, 4).round().astype(int)
    ys = np.linspace(0, height, 4).round().astype(int)
    img[:, np.minimum(xs, width - 1)] = 200
    img[np.minimum(ys, height - 1), :] = 200

    def fill(row: int, col: int, color, inset: float, shift: float = 0.0) -> None:
        r = 2 - row
        x0, x1, y0, y1 = xs[col], xs[col + 1], ys[r], ys[r + 1]
        dx, dy = int((x1 - x0) * inset), int((y1 - y0) * inset)
        sx = int((x1 - x0) * shift)
        img[y0 + dy:max(y1 - dy, y0 + dy + 1), x0 + dx + sx:max(x1 - dx + sx, x0 + dx + sx + 1)] = color

    for i in range(2):
        fill(int(agents[i, 0]), int(agents[i, 1]), COLORS[i], 0.12)
    for i in range(2):
        fill(int(coins[i, 0]), int(coins[i, 1]), (250, 200, 40), 0.33, -0.12 if i == 0 else 0.12)
        fill(int(coins[i, 0]), int(coins[i, 1]), COLORS[i], 0.40, -0.12 if i == 0 else 0.12)
    return img


def _check_payoff(value) -> tuple[tuple[float, ...], ...]:
    """2 rows of 3 finite numbers (JaxMARL's ``payoff_matrix``)."""
    if isinstance(value, torch.Tensor):
        value = value.tolist()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if (isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or len(value) != 2
            or any(isinstance(r, (str, bytes)) or not isinstance(r, (list, tuple)) or len(r) != 3 for r in value)):
        raise ValueError(f"payoff_matrix: expected 2 rows of 3 numbers ([[rr, rb, r_penalty], [br, bb, b_penalty]]), "
                         f"got {value!r}")
    rows = []
    for row in value:
        out = []
        for x in row:
            if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) or not math.isfinite(x):
                raise ValueError(f"payoff_matrix: expected finite numbers, got {x!r} in {value!r}")
            out.append(x)
        rows.append(tuple(out))
    return tuple(rows)
