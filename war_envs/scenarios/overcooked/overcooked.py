"""Overcooked-v0: JaxMARL 0.2.0's ``overcooked`` (two cooks make and serve onion soup)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import world_bytes
from war_envs.core.scenario import EpisodeMetric
from war_envs.core.small_game import SmallGameEnv
from war_envs.scenarios.overcooked import _kernels as K
from war_envs.scenarios.overcooked.layouts import LAYOUT_KEYS, LAYOUTS

__all__ = ["ACTION_NAMES", "CHANNELS", "OVERCOOKED_DEFAULTS", "Overcooked", "check_layout"]

#: JaxMARL 0.2.0 ``Overcooked.__init__`` defaults
OVERCOOKED_DEFAULTS: dict = {"layout": "cramped_room", "random_reset": False, "max_steps": 400}
#: ours only (not a JaxMARL argument): 0 is JaxMARL's sparse reward
SHAPED_REWARD_COEF_DEFAULT = 0.0
#: what each action index does (JaxMARL's ``OvercookedActions``)
ACTION_NAMES = ("up", "down", "right", "left", "stay", "interact")
#: the 26 observation channels (JaxMARL's ``get_obs``), "own" / "other" from the observer's side
CHANNELS = ("own position", "other position", "own facing north", "own facing south", "own facing east",
            "own facing west", "other facing north", "other facing south", "other facing east", "other facing west",
            "pots", "empty counters", "onion piles", "tomato piles (0)", "plate piles", "serving spots",
            "onions in pot (not cooking)", "tomatoes in pot (0)", "onions in soup (3)", "tomatoes in soup (0)",
            "cooking time left", "soup ready", "plates", "onions", "tomatoes (0)", "urgency")
_STATE_KEYS = ("agent_pos", "agent_dir_idx", "agent_inv", "maze_map")


def _deliveries(info):
    return info["deliveries"].to(torch.float64)


def _sparse(info):
    return info["deliveries"].to(torch.float64) * K.DELIVERY_REWARD


def _shaped(info):
    return info["shaped_reward"].to(torch.float64).sum(-1)


class Overcooked(SmallGameEnv):
    """Overcooked-v0 — two cooks share a kitchen: they carry onions to a pot (three make a soup,
    which then cooks 20 steps), plate the soup and serve it (JaxMARL 0.2.0's ``overcooked``,
    after Carroll et al. 2019's Overcooked-AI).

    ``war_envs.make("Overcooked-v0", num_envs=E, layout="cramped_room", ...)``.  Every rule and
    default is that of JaxMARL 0.2.0's ``Overcooked``; ``tests/test_overcooked_reference.py``
    replays JaxMARL's own episodes step by step on every layout.  One env holds one layout (every
    world the same kitchen).

    **Agents**: one group ``agent``: ``agent_0`` and ``agent_1`` (JaxMARL's names).

    **Kitchen** (``layout``, one of ``LAYOUTS``: ``cramped_room`` 4 x 5, ``asymm_advantages``
    5 x 9, ``coord_ring`` 5 x 5, ``forced_coord`` 5 x 5, ``counter_circuit`` 5 x 8; or a dict of
    JaxMARL's layout keys): cells ``(x, y)`` = (column, row), row 0 at the top.  Floor cells
    can be walked; every other cell is a counter, an onion pile, a plate pile, a pot or a
    serving spot, none of which can be walked.

    **Start** (``reset``): the layout's start cells, empty hands, empty pots; each agent's
    direction uniform on the four.  ``random_reset=True``: the two agents on two distinct
    uniform floor cells, each pot's status uniform on 0..23 (JaxMARL's: any number of onions,
    any cooking time, or ready) and each hand uniform on {empty, onion, plate, dish}.

    **Actions**: ``Discrete(6)`` per agent (``ACTION_NAMES``, JaxMARL's indices): 0 up (y − 1),
    1 down, 2 right (x + 1), 3 left, 4 stay, 5 interact.  A move turns the agent that way and
    moves it there if that cell is floor; if both agents would end on one cell, or would swap
    cells, neither moves (they still turn).

    **Interact** (agent 0 first, then agent 1 on what agent 0 left), with the cell the agent
    faces: an onion pile gives an onion and a plate pile a plate to an empty hand; an empty
    counter takes what the agent holds; a counter's onion, plate or dish goes to an empty hand;
    a pot with fewer than 3 onions takes an onion (3 onions: it starts cooking); a ready pot
    puts its soup on a held plate (the agent then holds a dish, the pot is empty); a serving
    spot takes a dish (a delivery).  Pot status (JaxMARL's): 23 empty, 22/21/20 one/two/three
    onions, then it cooks — every step ends with every pot in 1..20 counting down — to 0,
    ready: a third onion put in at step t makes the soup ready after step t + 19.

    **Rewards**: both agents get 20 per soup delivered in the step (JaxMARL's sparse reward,
    shared).  ``info["shaped_reward"] [E, 2]`` (JaxMARL's ``shaped_reward``, per agent, not
    in the reward): 3 for an onion into a pot, 5 for picking up a soup, 3 for picking up a plate
    when no plate lies on a counter and fewer plates are in hands than pots are not empty.
    ``shaped_reward_coef=c`` (ours; default 0, JaxMARL's reward): agent ``i``'s reward is the
    sparse reward plus ``c`` times its shaped reward, as JaxMARL's IPPO script adds it (there
    with a coefficient annealed from 1 to 0); ``c = 0`` adds nothing (bitwise JaxMARL's reward).

    **Episode**: ``truncated`` after ``max_steps`` steps (JaxMARL's one ``done``); it never
    terminates.

    **Observation** (float32, ``H · W · 26`` values per agent): JaxMARL's ``(H, W, 26)`` grid
    (uint8 there), flattened in C order: ``obs.reshape(..., H, W, 26)`` gives it back (``H`` =
    ``env.height``, ``W`` = ``env.width``); channel ``c`` of cell ``(x, y)`` is at ``(y · W + x)
    · 26 + c``.  Channels (``CHANNELS``): 0 own position, 1 the other's, 2–5 own direction
    (north, south, east, west) at its cell, 6–9 the other's, 10 pots, 11 empty counters, 12
    onion piles, 13 tomato piles (0), 14 plate piles, 15 serving spots, 16 onions in a pot not
    yet cooking, 17 (0), 18 onions in soup (3 at cooking/ready pots and dishes), 19 (0), 20
    cooking time left (19..1, 0 when ready), 21 soup ready (ready pots, dishes), 22 plates,
    23 onions, 24 (0), 25 urgency (all 1 once fewer than 40 steps are left).  What an agent
    holds shows at its cell (a held plate in channel 22, a held dish in 18 and 21).  The step
    rewrites only the cells that changed (the agents' cells, the cells an interaction changed,
    cooking pots; every cell when the urgency layer flips, at a reset, ``set_state``,
    ``clone_worlds``): the observation tensors ``reset``/``step`` return are the env's own
    buffers, to be read or copied, never written into.

    **Info**: ``shaped_reward [E, 2]``, ``deliveries [E]`` (soups served this step), ``t``.
    Per-episode metrics (``episode_metrics``): ``deliveries``, ``sparse_return`` (20 per
    delivery: the episode return, kept as a metric for runs that train on the shaped reward)
    and ``shaped_return`` (both agents' shaped rewards).

    **State** (``get_state``/``set_state``, JaxMARL's field names): ``agent_pos`` int32 ``[E,
    2, 2]`` ((x, y) per agent), ``agent_dir_idx`` ``[E, 2]`` (0 north, 1 south, 2 east, 3
    west), ``agent_inv`` ``[E, 2]`` (JaxMARL's object index: 1 empty, 3 onion, 5 plate, 9
    dish), ``maze_map`` ``[E, H, W, 3]`` (JaxMARL's ``maze_map`` without its constant padding
    of walls: per cell [object, colour, pot status / agent direction], JaxMARL's indices: the
    pots' statuses and what lies on counters), then ``t`` (JaxMARL's ``step``), ``episode``,
    ``rng_key``, ``pending_reset``.  ``set_state`` checks a state is a kitchen of the layout
    (``ValueError`` naming the key otherwise); setting ``agent_pos`` / ``agent_dir_idx``
    without ``maze_map`` rewrites the map's agent cells to match.  JaxMARL's ``agent_dir``,
    ``goal_pos``, ``pot_pos``, ``wall_map`` follow from these and the layout; its ``done`` is
    the flags.

    **Arguments** (JaxMARL's names and defaults): ``layout="cramped_room"`` (a name of
    ``LAYOUTS`` or a dict with JaxMARL's keys ``height``, ``width``, ``wall_idx``,
    ``goal_idx``, ``plate_pile_idx``, ``onion_pile_idx``, ``pot_idx`` and optionally
    ``agent_idx``: see ``check_layout``), ``random_reset=False``, ``max_steps=400`` (int ≥ 1);
    ``shaped_reward_coef=0.0`` (ours: a finite number ≥ 0, the weight of the shaped reward in
    the reward; not a JaxMARL argument);
    plus the batch arguments ``num_envs``, ``device``, ``seed``, ``precision`` (rewards are
    whole numbers: float32 and float64 worlds give the same), ``autoreset_mode``,
    ``num_threads``.

    **Deviations**: JaxMARL draws the start with ``jax.random`` from the reset's key; ours
    comes from the world's counter-based stream (same distribution, other numbers: the tests
    compare the distributions).  Observations are float32 and flat (JaxMARL: uint8, ``(H, W,
    26)``); ``obs_shape`` holds JaxMARL's ``(H, W, 26)`` (its ``obs_shape`` attribute says
    ``(W, H, 26)``, but its arrays are ``(H, W, 26)``).  A custom layout must have walls all around, at least two floor cells and at least
    one of each pile, pot and serving spot, all of them in ``wall_idx`` (JaxMARL does not check;
    other kitchens would read outside its map).

    **Version history**: v0 — initial release, JaxMARL 0.2.0 rules.
    """

    env_id = "Overcooked-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 8}
    episode_length_kwarg = "max_steps"
    per_agent_metrics = ("shaped_reward",)
    progress_metric = "deliveries"
    episode_metrics = (
        EpisodeMetric("deliveries", "soups served in the episode", _deliveries,
                      "sum"),
        EpisodeMetric("sparse_return", "JaxMARL's sparse return: 20 per soup served (each agent's reward)",
                      _sparse, "sum"),
        EpisodeMetric("shaped_return", "both agents' shaped rewards (JaxMARL's shaped_reward) in the episode",
                      _shaped, "sum"),
    )

    def __init__(self, *, layout="cramped_room", random_reset: bool = False, max_steps: int = 400,
                 shaped_reward_coef: float = SHAPED_REWARD_COEF_DEFAULT, **kwargs) -> None:
        self.layout_name, self.layout = check_layout(layout)
        self.height, self.width = self.layout["height"], self.layout["width"]
        #: JaxMARL's observation array shape; ``obs.reshape(..., *obs_shape)`` gives it back
        self.obs_shape = (self.height, self.width, K.NUM_CHANNELS)
        self.random_reset = v.check_bool("random_reset", random_reset)
        self.max_steps = self.max_cycles = v.check_int("max_steps", max_steps, minimum=1)
        self.shaped_reward_coef = v.check_float("shaped_reward_coef", shaped_reward_coef, low=0.0)
        super().__init__(**kwargs)
        self._build()

    @property
    def config(self) -> dict:
        """The resolved scenario arguments."""
        layout = self.layout_name if self.layout_name is not None else {k: list(x) if isinstance(x, list) else x
                                                                          for k, x in self.layout.items()}
        return {"layout": layout, "random_reset": self.random_reset, "max_steps": self.max_steps,
                "shaped_reward_coef": self.shaped_reward_coef}

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        F, dev = self.wp_float, self.device
        H, W = self.height, self.width
        obs_dim = H * W * K.NUM_CHANNELS
        self._add_agents(2, obs_dim, K.NUM_ACTIONS)
        self._check_allocation(self._common_world_bytes(2) + world_bytes(
            ((2, 2), wp.int32), *[((2,), wp.int32)] * 3, ((H, W, 3), wp.int32), ((2,), F), ((), wp.int32),
            *[((2, obs_dim), wp.float32)] * 2), 2)
        self._allocate_common(2)
        self._base_map = base_map(self.layout)
        lay = self.layout
        self._floor = np.flatnonzero(self._base_map[..., 0].reshape(-1) == K.EMPTY).astype(np.int32)
        self._Struct = K.world_struct(F)
        w = self._Struct()
        w.mode, w.max_steps, w.height, w.width = self._mode_code, self.max_steps, H, W
        w.random_reset = int(self.random_reset)
        w.shaped_reward_coef = self.shaped_reward_coef
        w.random_agents = int(self.random_reset or "agent_idx" not in lay)
        w.base_map = wp.array(self._base_map, dtype=wp.int32, device=dev)
        w.pot_cells = wp.array(np.asarray(lay["pot_idx"], dtype=np.int32), dtype=wp.int32, device=dev)
        w.floor_cells = wp.array(self._floor, dtype=wp.int32, device=dev)
        w.start_cells = wp.array(np.asarray(lay.get("agent_idx", [0, 0]), dtype=np.int32), dtype=wp.int32,
                                 device=dev)
        self._wire_common(w)
        w.agent_pos = self._world_array((2, 2), wp.int32)
        w.agent_dir_idx = self._world_array((2,), wp.int32)
        w.agent_inv = self._world_array((2,), wp.int32)
        w.maze_map = self._world_array((H, W, 3), wp.int32)
        w.shaped_reward = self._world_array((2,), F)
        w.deliveries = self._world_array((), wp.int32)
        self._finish_build(w, self._Struct, K.kernels(F), "overcooked_step", "overcooked_observe",
                           ("shaped_reward", "deliveries"))

    # ------------------------------------------------------------------ state
    def _state_arrays(self) -> dict[str, wp.array]:
        return {"agent_pos": self._w.agent_pos, "agent_dir_idx": self._w.agent_dir_idx,
                "agent_inv": self._w.agent_inv, "maze_map": self._w.maze_map, **self._clock_state()}

    @property
    def _state_maxima(self) -> dict[str, int]:
        return {"agent_pos": max(self.height, self.width) - 1, "agent_dir_idx": 3, "agent_inv": K.DISH,
                "maze_map": K.POT_EMPTY_STATUS}

    def set_state(self, state, worlds=None, *, trusted: bool = False):
        """``BatchedEnv.set_state``, and the kitchen checked: agents on distinct floor cells,
        hands in {1, 3, 5, 9}, ``maze_map`` the layout's with pot statuses 0..23, counters
        holding nothing or an onion, plate or dish, and the agents (``[10, 2 i, direction]``) at
        their cells.  ``agent_pos`` / ``agent_dir_idx`` set without ``maze_map``: the map's
        agent cells are rewritten to match."""
        if trusted or not isinstance(state, Mapping) or not any(k in state for k in _STATE_KEYS):
            return super().set_state(state, worlds, trusted=trusted)
        prepared = self._prepare_state(state, worlds)
        return super().set_state(state if prepared is None else prepared, worlds)

    def _prepare_state(self, state: Mapping, worlds) -> dict | None:
        """The state to write (with the agent cells of ``maze_map`` derived where needed), after
        the kitchen checks; None where a generic check of ``set_state`` will refuse it."""
        self._check_open()
        index = self._check_world_index("worlds", worlds)
        merged = {k: x.to(torch.int64) for k, x in self.get_state(index).items() if k in _STATE_KEYS}
        for key in _STATE_KEYS:
            if key in state:
                try:
                    tensor = v.as_tensor(f"state[{key!r}]", state[key], self.torch_device)
                except (TypeError, ValueError):
                    return None
                if (tuple(tensor.shape) != tuple(merged[key].shape) or tensor.is_floating_point()
                        or tensor.dtype == torch.bool):
                    return None
                merged[key] = tensor.to(torch.int64)
        out = dict(state)
        if "maze_map" not in state:
            merged["maze_map"] = self._with_agents(merged)
            out["maze_map"] = merged["maze_map"].to(torch.int32)
        check_kitchen(merged, self._base_map)
        return out

    def _with_agents(self, s: dict) -> torch.Tensor:
        """``s["maze_map"]`` with its floor cells empty but for the agents of ``s``."""
        maze = s["maze_map"].clone()
        floor = torch.from_numpy(self._base_map[..., 0] == K.EMPTY).to(maze.device)
        maze[:, floor] = torch.tensor([K.EMPTY, 0, 0], dtype=maze.dtype, device=maze.device)
        pos = s["agent_pos"]
        if pos.numel() and (int(pos.min()) < 0 or int(pos[..., 0].max()) >= self.width
                            or int(pos[..., 1].max()) >= self.height):
            raise ValueError(f"state['agent_pos']: expected x in [0, {self.width - 1}] and y in "
                             f"[0, {self.height - 1}], got {pos.tolist()}")
        rows = torch.arange(maze.shape[0], device=maze.device)
        for i in range(2):
            agent = torch.stack([torch.full_like(s["agent_dir_idx"][:, i], K.AGENT),
                                 torch.full_like(s["agent_dir_idx"][:, i], 2 * i), s["agent_dir_idx"][:, i]], -1)
            maze[rows, pos[:, i, 1], pos[:, i, 0]] = agent
        return maze

    # ------------------------------------------------------------------ rendering
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[height, width, 3]`` uint8 picture of one world's kitchen: floor (beige),
        counters (brown) with what lies on them, onion piles (yellow onions), plate piles (white
        plates), pots (dark, with one yellow dot per onion, an orange bar for the cooking time
        left, a green rim when ready), serving spots (green), and the two cooks (``agent_0`` red,
        ``agent_1`` blue; a black nose on the side they face; what they hold drawn on them).
        ``original_cam_range`` is accepted for the front ends and ignored."""
        world = self._checked_world(world)
        width = v.check_int("width", width, minimum=1)
        height = v.check_int("height", height, minimum=1)
        s = self.get_state([world])
        return draw_kitchen(s["maze_map"][0].numpy(), s["agent_pos"][0].numpy(), s["agent_inv"][0].numpy(),
                            self._base_map, width, height)


# ---------------------------------------------------------------------------------------------
# Layouts and the kitchen checks
# ---------------------------------------------------------------------------------------------


def _indices(name: str, key: str, value, cells: int) -> list[int]:
    if isinstance(value, (torch.Tensor, np.ndarray)):
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}[{key!r}]: expected a list of cell indices, got {value!r}")
    out = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= int(x) < cells:
            raise ValueError(f"{name}[{key!r}]: expected cell indices in [0, {cells - 1}], got {value!r}")
        out.append(int(x))
    return out


def check_layout(layout) -> tuple[str | None, dict]:
    """``(name or None, layout dict)`` of the ``layout`` argument: a name of ``LAYOUTS`` or a
    dict of JaxMARL's keys (``height``, ``width`` ≥ 3; cell index lists ``wall_idx``,
    ``goal_idx``, ``plate_pile_idx``, ``onion_pile_idx``, ``pot_idx``, each of the last four
    non-empty, disjoint and inside ``wall_idx``; optional ``agent_idx``: two distinct floor
    cells; walls all around the border; at least two floor cells)."""
    if isinstance(layout, str):
        if layout not in LAYOUTS:
            raise ValueError(f"layout: expected one of {list(LAYOUTS)} or a layout dict, got {layout!r}")
        return layout, LAYOUTS[layout]
    if not isinstance(layout, Mapping):
        raise TypeError(f"layout: expected one of {list(LAYOUTS)} or a layout dict, got {type(layout).__name__}")
    missing = [k for k in ("height", "width", *LAYOUT_KEYS) if k not in layout and k != "agent_idx"]
    unknown = [k for k in layout if k not in ("height", "width", *LAYOUT_KEYS)]
    if missing or unknown:
        raise ValueError(f"layout: missing keys {missing}, unknown keys {unknown}; expected height, width and "
                         f"{list(LAYOUT_KEYS)} (agent_idx optional)")
    H = v.check_int("layout['height']", layout["height"], minimum=3)
    W = v.check_int("layout['width']", layout["width"], minimum=3)
    out = {"height": H, "width": W}
    for key in LAYOUT_KEYS:
        if key in layout:
            out[key] = _indices("layout", key, layout[key], H * W)
    walls = set(out["wall_idx"])
    seen: set[int] = set()
    for key in ("goal_idx", "plate_pile_idx", "onion_pile_idx", "pot_idx"):
        cells = set(out[key])
        if not cells or not cells <= walls or cells & seen or len(cells) != len(out[key]):
            raise ValueError(f"layout[{key!r}]: expected distinct cells, at least one, all in wall_idx and none "
                             f"shared with another kind, got {out[key]}")
        seen |= cells
    border = {y * W + x for y in range(H) for x in range(W) if y in (0, H - 1) or x in (0, W - 1)}
    if not border <= walls:
        raise ValueError(f"layout['wall_idx']: expected every border cell to be a wall, missing {sorted(border - walls)}")
    if H * W - len(walls) < 2:
        raise ValueError("layout['wall_idx']: expected at least two floor cells")
    if "agent_idx" in out and (len(out["agent_idx"]) != 2 or len(set(out["agent_idx"])) != 2
                               or set(out["agent_idx"]) & walls):
        raise ValueError(f"layout['agent_idx']: expected two distinct floor cells, got {out['agent_idx']}")
    return None, out


def base_map(layout: dict) -> np.ndarray:
    """int32 ``[H, W, 3]``: JaxMARL's start ``maze_map`` of ``layout`` (unpadded) with empty pots and
    without the agents."""
    H, W = layout["height"], layout["width"]
    cells = np.zeros((H * W, 3), dtype=np.int32)
    cells[:] = (K.EMPTY, 0, 0)
    for key, obj, status in (("wall_idx", K.WALL, 0), ("goal_idx", K.GOAL, 0), ("onion_pile_idx", K.ONION_PILE, 0),
                             ("plate_pile_idx", K.PLATE_PILE, 0), ("pot_idx", K.POT, K.POT_EMPTY_STATUS)):
        idx = np.asarray(layout[key], dtype=np.int64)
        cells[idx] = (obj, K.OBJECT_COLOR[obj], status)
    return cells.reshape(H, W, 3)


def check_kitchen(s: dict, base: np.ndarray) -> None:
    """``ValueError`` (naming the key) unless state ``s`` (int64 tensors ``agent_pos``,
    ``agent_dir_idx``, ``agent_inv``, ``maze_map``) is a kitchen of the layout ``base``."""
    H, W = base.shape[:2]
    pos, dirs, inv = s["agent_pos"].cpu().numpy(), s["agent_dir_idx"].cpu().numpy(), s["agent_inv"].cpu().numpy()
    maze = s["maze_map"].cpu().numpy()
    if pos.size and (pos.min() < 0 or pos[..., 0].max() >= W or pos[..., 1].max() >= H):
        raise ValueError(f"state['agent_pos']: expected x in [0, {W - 1}] and y in [0, {H - 1}]")
    cell = pos[..., 1] * W + pos[..., 0]
    floor = base[..., 0].reshape(-1) == K.EMPTY
    if not floor[cell].all() or (cell[:, 0] == cell[:, 1]).any():
        raise ValueError("state['agent_pos']: expected the two agents on two distinct floor cells")
    if dirs.size and (dirs.min() < 0 or dirs.max() > 3):
        raise ValueError("state['agent_dir_idx']: expected values in [0, 3]")
    if not np.isin(inv, K.INVENTORY).all():
        raise ValueError(f"state['agent_inv']: expected values in {list(K.INVENTORY)} (empty, onion, plate, dish)")
    want = np.broadcast_to(base, maze.shape).copy()
    kind = base[..., 0]
    obj = maze[..., 0]
    counter = (kind == K.WALL) & np.isin(obj, (K.WALL, K.ONION, K.PLATE, K.DISH))
    colors = np.asarray(K.OBJECT_COLOR)[np.clip(obj, 0, len(K.OBJECT_COLOR) - 1)]
    want[counter] = np.stack([obj, colors, np.zeros_like(obj)], -1)[counter]
    pot = (kind == K.POT) & (maze[..., 2] >= 0) & (maze[..., 2] <= K.POT_EMPTY_STATUS)
    want[..., 2] = np.where(pot, maze[..., 2], want[..., 2])
    rows = np.arange(maze.shape[0])
    for i in range(2):
        want[rows, pos[:, i, 1], pos[:, i, 0]] = np.stack([np.full_like(dirs[:, i], K.AGENT),
                                                           np.full_like(dirs[:, i], 2 * i), dirs[:, i]], -1)
    bad = np.argwhere((maze != want).any(-1))
    if bad.size:
        e, y, x = bad[0]
        raise ValueError(f"state['maze_map']: world {e} cell (x={x}, y={y}) holds {maze[e, y, x].tolist()}, not a "
                         f"kitchen cell of the layout (expected e.g. {want[e, y, x].tolist()}: counters [2, 5, 0] or "
                         f"an onion/plate/dish [3|5|9, 4|6|6, 0], pots [8, 7, 0..23], agents [10, 2 i, dir] at "
                         f"agent_pos, the layout's piles and serving spots)")


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------

CELL = 32
FLOOR, COUNTER, SERVE = (236, 226, 204), (150, 108, 66), (96, 178, 104)
ONION_C, PLATE_C, SOUP_C, POT_C = (236, 200, 40), (250, 250, 250), (226, 120, 30), (60, 60, 66)
AGENT_C = ((214, 58, 58), (58, 92, 214))


def _disc(img, cy, cx, r, color) -> None:
    yy, xx = np.ogrid[:img.shape[0], :img.shape[1]]
    img[(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = color


def _item(img, obj: int, cy: float, cx: float, r: float) -> None:
    """An onion, plate or dish (a plate with soup) centred at (cy, cx)."""
    if obj == K.ONION:
        _disc(img, cy, cx, r, ONION_C)
    elif obj in (K.PLATE, K.DISH):
        _disc(img, cy, cx, r, (120, 120, 120))
        _disc(img, cy, cx, r - 1.5, PLATE_C)
        if obj == K.DISH:
            _disc(img, cy, cx, r * 0.6, SOUP_C)


def _draw_cell(img, obj: int, status: int) -> None:
    """One 32 x 32 cell (``img`` its view) of what ``maze_map`` holds there (agents aside)."""
    c = CELL // 2
    img[:] = FLOOR if obj in (K.EMPTY, K.AGENT) else COUNTER
    if obj == K.GOAL:
        img[3:-3, 3:-3] = SERVE
    elif obj == K.ONION_PILE:
        for cy, cx in ((11, 11), (11, 21), (21, 11), (21, 21), (16, 16)):
            _disc(img, cy, cx, 5, ONION_C)
    elif obj == K.PLATE_PILE:
        for k in range(3):
            _item(img, K.PLATE, c + 4 - 4 * k, c, 10)
    elif obj == K.POT:
        img[4:-4, 4:-4] = (80, 200, 90) if status == 0 else POT_C
        img[6:-6, 6:-6] = POT_C
        onions = min(K.POT_EMPTY_STATUS - status, 3) if status >= K.POT_FULL_STATUS else 3
        for k in range(onions if status != K.POT_EMPTY_STATUS else 0):
            _disc(img, 12, 10 + 6 * k, 2.5, ONION_C)
        if 0 < status < K.POT_FULL_STATUS:
            img[20:24, 8:8 + round(16 * status / K.POT_FULL_STATUS)] = SOUP_C
    elif obj in (K.ONION, K.PLATE, K.DISH):
        _item(img, obj, c, c, 9)


def draw_kitchen(maze: np.ndarray, pos: np.ndarray, inv: np.ndarray, base: np.ndarray, width: int,
                 height: int) -> np.ndarray:
    """The picture ``Overcooked.render_frame`` draws from one world's state."""
    H, W = base.shape[:2]
    img = np.zeros((H * CELL, W * CELL, 3), dtype=np.uint8)
    for y in range(H):
        for x in range(W):
            _draw_cell(img[y * CELL:(y + 1) * CELL, x * CELL:(x + 1) * CELL], int(maze[y, x, 0]), int(maze[y, x, 2]))
    for i in range(2):
        x, y = int(pos[i, 0]), int(pos[i, 1])
        view = img[y * CELL:(y + 1) * CELL, x * CELL:(x + 1) * CELL]
        _disc(view, 16, 16, 11, AGENT_C[i])
        d = int(maze[y, x, 2])
        ny, nx = 16 + 10 * (K.DIRS[d][1]), 16 + 10 * (K.DIRS[d][0])
        _disc(view, ny, nx, 3.5, (20, 20, 20))
        if int(inv[i]) != K.EMPTY:
            _item(view, int(inv[i]), 16, 16, 6)
    rows = np.arange(height) * (H * CELL) // height
    cols = np.arange(width) * (W * CELL) // width
    return np.ascontiguousarray(img[rows][:, cols])
