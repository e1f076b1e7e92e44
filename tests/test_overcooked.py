"""Overcooked-v0 without JaxMARL: hand-played kitchens (every rule of the docstring, values worked
out by hand on ``cramped_room``), argument and state checks, the start draws, the episode
protocol, rendering and ``check_all``.  JaxMARL itself: tests/test_overcooked_reference.py.

``cramped_room`` (x to the right, y down; ``W`` counter, ``O`` onion pile, ``P`` pot, ``B``
plate pile, ``X`` serving spot, ``0``/``1`` the agents' start cells)::

    y=0  W W P W W
    y=1  O 0 . 1 O
    y=2  W . . . W
    y=3  W B W X W
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import war_envs
from war_envs.scenarios.overcooked.layouts import LAYOUTS
from war_envs.testing import check_all

UP, DOWN, RIGHT, LEFT, STAY, INTERACT = range(6)
NORTH, SOUTH, EAST, WEST = range(4)
EMPTY, ONION, PLATE, DISH = 1, 3, 5, 9
POT = (2, 0)


def kitchen(**kwargs):
    env = war_envs.make("Overcooked-v0", num_envs=1, seed=0, autoreset_mode="disabled", **kwargs)
    env.reset()
    return env


def place(env, a0, d0, a1, d1, inv=(EMPTY, EMPTY)):
    """Agent 0 at cell a0 facing d0, agent 1 at a1 facing d1, holding ``inv``."""
    return env.set_state({"agent_pos": torch.tensor([[a0, a1]], dtype=torch.int32),
                          "agent_dir_idx": torch.tensor([[d0, d1]], dtype=torch.int32),
                          "agent_inv": torch.tensor([list(inv)], dtype=torch.int32)})


def act(env, a0, a1):
    return env.step({"agent": torch.tensor([[a0, a1]])})


def cell(obs, agent, x, y, env):
    return obs["agent"][0, agent].reshape(env.height, env.width, 26)[y, x]


def pot_status(env):
    return int(env.get_state()["maze_map"][0, POT[1], POT[0], 2])


def test_start_is_the_layouts_with_empty_hands_and_pots():
    env = kitchen()
    s = env.get_state()
    assert s["agent_pos"].tolist() == [[[1, 1], [3, 1]]] and s["agent_inv"].tolist() == [[EMPTY, EMPTY]]
    maze = s["maze_map"][0]
    assert maze[..., 0].tolist() == [[2, 2, 8, 2, 2], [4, 10, 1, 10, 4], [2, 1, 1, 1, 2], [2, 6, 2, 7, 2]]
    assert maze[0, 2].tolist() == [8, 7, 23] and maze[1, 1, :2].tolist() == [10, 0] and maze[1, 3, :2].tolist() == [10, 2]
    assert env.groups["agent"].obs_dim == 4 * 5 * 26 and env.groups["agent"].action_space.n == 6


def test_moves_walls_and_each_other():
    env = kitchen()
    place(env, (1, 1), NORTH, (3, 1), NORTH)
    act(env, LEFT, UP)  # into the onion pile / the counter: both stay, both turn
    s = env.get_state()
    assert s["agent_pos"].tolist() == [[[1, 1], [3, 1]]] and s["agent_dir_idx"].tolist() == [[WEST, NORTH]]
    act(env, RIGHT, LEFT)  # both onto (2, 1): a collision, nobody moves
    s = env.get_state()
    assert s["agent_pos"].tolist() == [[[1, 1], [3, 1]]] and s["agent_dir_idx"].tolist() == [[EAST, WEST]]
    place(env, (1, 1), NORTH, (2, 1), NORTH)
    act(env, RIGHT, LEFT)  # swapping cells: nobody moves
    assert env.get_state()["agent_pos"].tolist() == [[[1, 1], [2, 1]]]
    act(env, RIGHT, STAY)  # into a standing agent: nobody moves
    assert env.get_state()["agent_pos"].tolist() == [[[1, 1], [2, 1]]]
    act(env, RIGHT, RIGHT)  # one follows the other: both move
    s = env.get_state()
    assert s["agent_pos"].tolist() == [[[2, 1], [3, 1]]]
    assert s["maze_map"][0, 1, :, 0].tolist() == [4, 1, 10, 10, 4] and s["maze_map"][0, 1, 2].tolist() == [10, 0, EAST]
    obs, *_ = act(env, DOWN, INTERACT)  # interact never moves or turns
    s = env.get_state()
    assert s["agent_pos"].tolist() == [[[2, 2], [3, 1]]] and s["agent_dir_idx"].tolist() == [[SOUTH, EAST]]
    # each agent sees itself in channel 0 and its direction in 2..5, the other in 1 and 6..9
    assert cell(obs, 0, 2, 2, env)[[0, 1, 2 + SOUTH]].tolist() == [1, 0, 1]
    assert cell(obs, 1, 2, 2, env)[[0, 1, 6 + SOUTH]].tolist() == [0, 1, 1]
    assert cell(obs, 1, 3, 1, env)[[0, 2 + EAST, 6 + EAST]].tolist() == [1, 1, 0]
    assert obs["agent"][0, :, 0::26].sum(-1).tolist() == [1, 1]


def test_cooking_plating_and_serving_a_soup():
    env = kitchen()
    place(env, (1, 1), WEST, (3, 2), NORTH)
    _, rew, _, _, info = act(env, INTERACT, STAY)  # an onion from the pile
    assert env.get_state()["agent_inv"].tolist() == [[ONION, EMPTY]] and info["shaped_reward"].tolist() == [[0, 0]]
    act(env, RIGHT, STAY)
    act(env, UP, STAY)  # the pot stops agent 0 at (2, 1), facing it
    assert env.get_state()["agent_pos"][0, 0].tolist() == [2, 1]
    for onions in (1, 2):
        obs, _, _, _, info = act(env, INTERACT, STAY)
        assert pot_status(env) == 23 - onions and info["shaped_reward"].tolist() == [[3, 0]]
        assert cell(obs, 0, *POT, env)[[10, 16, 18, 20, 21]].tolist() == [1, onions, 0, 0, 0]
        assert env.get_state()["agent_inv"].tolist() == [[EMPTY, EMPTY]]
        place(env, (2, 1), NORTH, (3, 2), NORTH, inv=(ONION, EMPTY))
    obs, _, _, _, info = act(env, INTERACT, STAY)  # the third onion: 20, and it cooks at once
    assert pot_status(env) == 19 and info["shaped_reward"].tolist() == [[3, 0]]
    assert cell(obs, 0, *POT, env)[[16, 18, 20, 21]].tolist() == [0, 3, 19, 0]
    obs, _, _, _, info = act(env, INTERACT, STAY)  # a cooking pot takes nothing (agent 0 holds nothing)
    assert pot_status(env) == 18 and info["shaped_reward"].tolist() == [[0, 0]]
    for _ in range(18):
        obs, *_ = act(env, STAY, STAY)
    assert pot_status(env) == 0 and cell(obs, 0, *POT, env)[[16, 18, 20, 21]].tolist() == [0, 3, 0, 1]
    act(env, STAY, STAY)
    assert pot_status(env) == 0  # ready stays ready
    # a plate from the pile: no plate on a counter, no plate in hand, a pot not empty: shaped 3
    place(env, (2, 1), NORTH, (1, 2), SOUTH)
    _, _, _, _, info = act(env, STAY, INTERACT)
    assert env.get_state()["agent_inv"].tolist() == [[EMPTY, PLATE]] and info["shaped_reward"].tolist() == [[0, 3]]
    place(env, (1, 2), NORTH, (2, 1), NORTH, inv=(EMPTY, PLATE))
    obs, _, _, _, info = act(env, STAY, INTERACT)  # the soup onto the plate: a dish, the pot empty
    assert env.get_state()["agent_inv"].tolist() == [[EMPTY, DISH]] and pot_status(env) == 23
    assert info["shaped_reward"].tolist() == [[0, 5]]
    assert [float(m.step(info)[0]) for m in env.episode_metrics] == [0.0, 0.0, 5.0]
    assert cell(obs, 0, 2, 1, env)[[1, 18, 21, 22]].tolist() == [1, 3, 1, 0]  # the held dish shows
    act(env, DOWN, STAY)  # agent 0 out of the way
    act(env, STAY, RIGHT)
    _, rew, _, _, info = act(env, STAY, DOWN)  # (3, 2), facing the serving spot
    assert env.get_state()["agent_pos"][0, 1].tolist() == [3, 2] and rew["agent"].tolist() == [[0, 0]]
    _, rew, _, _, info = act(env, STAY, INTERACT)
    assert rew["agent"].tolist() == [[20.0, 20.0]] and int(info["deliveries"][0]) == 1
    metrics = {m.name: float(m.step(info)[0]) for m in env.episode_metrics}
    assert metrics == {"deliveries": 1.0, "sparse_return": 20.0, "shaped_return": 0.0}
    assert info["shaped_reward"].tolist() == [[0, 0]] and env.get_state()["agent_inv"].tolist() == [[EMPTY, EMPTY]]
    assert env.get_state()["maze_map"][0, 3, 3].tolist() == [7, 1, 0]


def test_counters_take_and_give_things_and_agent_0_acts_first():
    env = kitchen()
    place(env, (1, 2), WEST, (3, 2), SOUTH, inv=(ONION, PLATE))
    obs, *_ = act(env, INTERACT, INTERACT)  # an onion onto the counter; the serving spot refuses a plate
    s = env.get_state()
    assert s["maze_map"][0, 2, 0].tolist() == [ONION, 4, 0] and s["agent_inv"].tolist() == [[EMPTY, PLATE]]
    assert cell(obs, 0, 0, 2, env)[[11, 23]].tolist() == [0, 1] and cell(obs, 0, 3, 2, env)[22] == 1
    act(env, INTERACT, STAY)  # and back
    s = env.get_state()
    assert s["maze_map"][0, 2, 0].tolist() == [2, 5, 0] and s["agent_inv"].tolist() == [[ONION, PLATE]]
    act(env, INTERACT, STAY)
    place(env, (1, 1), WEST, (1, 2), WEST, inv=(EMPTY, EMPTY))
    act(env, INTERACT, INTERACT)  # the pile gives another onion; agent 1 picks up the counter's
    assert env.get_state()["agent_inv"].tolist() == [[ONION, ONION]]
    assert env.get_state()["maze_map"][0, 2, 0].tolist() == [2, 5, 0]
    act(env, STAY, INTERACT)  # a full hand takes nothing more: the onion goes down again
    _, _, _, _, info = act(env, INTERACT, STAY)  # a full hand facing a pile: nothing
    assert env.get_state()["agent_inv"].tolist() == [[ONION, EMPTY]] and info["shaped_reward"].tolist() == [[0, 0]]
    # plate shaping: pots all empty: none; then a cooking pot, and agent 0 puts a plate on a
    # counter before agent 1 takes one from the pile: none (agent 1 sees agent 0's plate)
    place(env, (2, 2), SOUTH, (1, 2), SOUTH)
    _, _, _, _, info = act(env, STAY, INTERACT)
    assert info["shaped_reward"].tolist() == [[0, 0]] and env.get_state()["agent_inv"].tolist() == [[EMPTY, PLATE]]
    maze = env.get_state()["maze_map"]
    maze[0, POT[1], POT[0], 2] = 10
    maze[0, 2, 0] = torch.tensor([2, 5, 0])
    env.set_state({"maze_map": maze})
    place(env, (1, 1), NORTH, (1, 2), SOUTH, inv=(PLATE, EMPTY))
    _, _, _, _, info = act(env, INTERACT, INTERACT)
    assert env.get_state()["maze_map"][0, 0, 1].tolist() == [PLATE, 6, 0]
    assert env.get_state()["agent_inv"].tolist() == [[EMPTY, PLATE]] and info["shaped_reward"].tolist() == [[0, 0]]
    place(env, (2, 2), NORTH, (1, 2), SOUTH)
    maze = env.get_state()["maze_map"]
    maze[0, 0, 1] = torch.tensor([2, 5, 0])
    env.set_state({"maze_map": maze})
    _, _, _, _, info = act(env, STAY, INTERACT)  # no plate around now: shaped 3
    assert info["shaped_reward"].tolist() == [[0, 3]]


def test_urgency_and_the_time_limit():
    env = kitchen(max_steps=45)
    assert env.max_cycles == 45
    for t in range(1, 46):
        obs, _, term, trunc, _ = act(env, STAY, STAY)
        urgent = 45 - t < 40
        assert obs["agent"][0, :, 25::26].eq(1.0 if urgent else 0.0).all(), t
        assert bool(trunc["agent"][0, 0]) == (t == 45) and not term["agent"].any()
    env = war_envs.make("Overcooked-v0", num_envs=2, seed=1, max_steps=3)
    obs = env.reset()
    assert obs["agent"][:, :, 25::26].eq(1.0).all()
    for t in range(3):
        _, _, _, trunc, info = env.step({"agent": torch.full((2, 2), STAY)})
    assert trunc["agent"].all() and info["_final_obs"].all() and env.elapsed_steps().tolist() == [0, 0]


def chi_square_uniform(counts: np.ndarray) -> float:
    """The chi-square statistic's p-value (Wilson-Hilferty) of ``counts`` against uniform."""
    n, k = counts.sum(), counts.size
    stat = float(((counts - n / k) ** 2 / (n / k)).sum())
    df = k - 1
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


@pytest.mark.parametrize("layout", ["cramped_room", "counter_circuit"])
def test_random_reset_draws_uniformly(layout):
    E = 4000
    env = war_envs.make("Overcooked-v0", num_envs=E, seed=2, layout=layout, random_reset=True)
    env.reset()
    s = env.get_state()
    W = env.width
    floor = np.flatnonzero(np.asarray(env._base_map[..., 0]).reshape(-1) == EMPTY)
    where = {c: k for k, c in enumerate(floor)}
    cells = (s["agent_pos"][..., 1] * W + s["agent_pos"][..., 0]).numpy()
    a, b = np.vectorize(where.get)(cells[:, 0]), np.vectorize(where.get)(cells[:, 1])
    n = len(floor)
    assert (a != b).all()
    pairs = np.bincount(a * n + b, minlength=n * n).reshape(n, n)[~np.eye(n, dtype=bool)]
    assert chi_square_uniform(pairs) > 1e-4
    for i in range(2):
        assert chi_square_uniform(np.bincount(s["agent_dir_idx"][:, i].numpy(), minlength=4)) > 1e-4
        inv = np.searchsorted([1, 3, 5, 9], s["agent_inv"][:, i].numpy())
        assert chi_square_uniform(np.bincount(inv, minlength=4)) > 1e-4
    pots = np.asarray(LAYOUTS[layout]["pot_idx"])
    status = s["maze_map"].numpy()[:, pots // W, pots % W, 2]
    for p in range(len(pots)):
        assert chi_square_uniform(np.bincount(status[:, p], minlength=24)) > 1e-4
    fixed = war_envs.make("Overcooked-v0", num_envs=E, seed=2, layout=layout)
    fixed.reset()
    s = fixed.get_state()
    assert (s["agent_inv"] == EMPTY).all() and (s["maze_map"].numpy()[:, pots // W, pots % W, 2] == 23).all()
    for i in range(2):  # without random_reset only the directions are drawn
        assert chi_square_uniform(np.bincount(s["agent_dir_idx"][:, i].numpy(), minlength=4)) > 1e-4
    assert s["agent_pos"].unique(dim=0).shape[0] == 1


@pytest.mark.parametrize("kwargs,match", [
    ({"layout": "kitchen"}, "layout"),
    ({"layout": {"height": 4, "width": 5}}, "layout"),
    ({"layout": {**LAYOUTS["cramped_room"], "pot_idx": [7]}}, "pot_idx"),
    ({"layout": {**LAYOUTS["cramped_room"], "wall_idx": [1, 2, 3, 5, 9, 16, 18]}}, "wall_idx"),
    ({"layout": {**LAYOUTS["cramped_room"], "agent_idx": [6, 6]}}, "agent_idx"),
    ({"layout": {**LAYOUTS["cramped_room"], "goal_idx": [99]}}, "goal_idx"),
    ({"max_steps": 0}, "max_steps"),
    ({"shaped_reward_coef": -0.5}, "shaped_reward_coef"),
    ({"shaped_reward_coef": float("nan")}, "shaped_reward_coef"),
])
def test_bad_arguments_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        war_envs.make("Overcooked-v0", **kwargs)
    with pytest.raises(TypeError, match="layout"):
        war_envs.make("Overcooked-v0", layout=3)
    with pytest.raises(TypeError, match="goal_idx"):
        war_envs.make("Overcooked-v0", layout={**LAYOUTS["cramped_room"], "goal_idx": "18"})
    with pytest.raises((TypeError, ValueError), match="random_reset"):
        war_envs.make("Overcooked-v0", random_reset=1)


def test_a_layout_dict_is_a_kitchen_too():
    lay = {**LAYOUTS["coord_ring"]}
    env = war_envs.make("Overcooked-v0", num_envs=3, seed=0, layout=lay)
    ring = war_envs.make("Overcooked-v0", num_envs=3, seed=0, layout="coord_ring")
    assert torch.equal(env.reset()["agent"], ring.reset()["agent"])
    lay.pop("agent_idx")  # no start cells: drawn as random_reset draws them
    env = war_envs.make("Overcooked-v0", num_envs=200, seed=0, layout=lay)
    env.reset()
    assert len(torch.unique(env.get_state()["agent_pos"][:, 0], dim=0)) > 3


@pytest.mark.parametrize("key,value,match", [
    ("agent_pos", [[[0, 0], [3, 1]]], "agent_pos"),    # on a counter
    ("agent_pos", [[[2, 1], [2, 1]]], "agent_pos"),    # one cell
    ("agent_pos", [[[7, 1], [3, 1]]], "agent_pos"),    # outside
    ("agent_inv", [[2, 1]], "agent_inv"),
    ("agent_dir_idx", [[4, 0]], "agent_dir_idx"),
])
def test_bad_states_are_refused_and_leave_the_world(key, value, match):
    env = kitchen()
    before = env.get_state()
    with pytest.raises(ValueError, match=match):
        env.set_state({key: torch.tensor(value)})
    after = env.get_state()
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_bad_maps_are_refused():
    env = kitchen()
    good = env.get_state()["maze_map"]
    for y, x, vec in ((0, 2, [8, 7, 24]), (0, 0, [8, 7, 0]), (3, 3, [2, 5, 0]), (2, 2, [3, 4, 0]),
                      (1, 1, [10, 2, 0]), (0, 1, [3, 5, 0]), (1, 2, [10, 0, 1])):
        bad = good.clone()
        bad[0, y, x] = torch.tensor(vec)
        with pytest.raises(ValueError, match="maze_map"):
            env.set_state({"maze_map": bad})
    assert torch.equal(env.get_state()["maze_map"], good)
    with pytest.raises(ValueError, match="maze_map"):
        env.set_state({"maze_map": good[:, :3]})


def test_float64_worlds_step_as_float32_ones_and_render():
    a = war_envs.make("Overcooked-v0", num_envs=64, seed=4, random_reset=True, max_steps=50)
    b = war_envs.make("Overcooked-v0", num_envs=64, seed=4, random_reset=True, max_steps=50, precision="float64")
    a.reset(), b.reset()
    gen = torch.Generator().manual_seed(0)
    shaped = 0.0
    for _ in range(120):
        act = {"agent": torch.randint(0, 6, (64, 2), generator=gen)}
        oa, ra, ta, _, ia = a.step(act)
        ob, rb, tb, _, ib = b.step(act)
        assert torch.equal(oa["agent"], ob["agent"]) and torch.equal(ra["agent"].double(), rb["agent"])
        assert torch.equal(ia["shaped_reward"].double(), ib["shaped_reward"]) and torch.equal(ta["agent"], tb["agent"])
        shaped += float(ia["shaped_reward"].sum())
    assert shaped > 0
    frame = a.render_frame(3, width=250, height=200)
    assert frame.shape == (200, 250, 3) and frame.dtype == np.uint8 and len(np.unique(frame.reshape(-1, 3), axis=0)) > 8
    assert a.render_frame(0).shape == (700, 700, 3)


def test_shaped_reward_coef_adds_each_agents_shaped_reward():
    """reward_i = 20 · deliveries + c · shaped_i (c = 0: the sparse reward, bitwise)."""
    sparse = war_envs.make("Overcooked-v0", num_envs=64, seed=5, random_reset=True, max_steps=50)
    shaped = war_envs.make("Overcooked-v0", num_envs=64, seed=5, random_reset=True, max_steps=50,
                           shaped_reward_coef=0.25)
    assert shaped.config["shaped_reward_coef"] == 0.25 and sparse.config["shaped_reward_coef"] == 0.0
    sparse.reset(), shaped.reset()
    gen = torch.Generator().manual_seed(1)
    seen = 0
    for _ in range(150):
        act = {"agent": torch.randint(0, 6, (64, 2), generator=gen)}
        _, rs, _, _, info_s = sparse.step(act)
        _, rc, _, _, info_c = shaped.step(act)
        assert torch.equal(rs["agent"], 20.0 * info_s["deliveries"].float()[:, None].expand(-1, 2))
        assert torch.equal(info_s["shaped_reward"], info_c["shaped_reward"])
        assert torch.equal(rc["agent"], rs["agent"] + 0.25 * info_c["shaped_reward"])
        seen += int((info_c["shaped_reward"] > 0).sum())
    assert seen > 0


@pytest.mark.parametrize("layout", ["cramped_room", "asymm_advantages"])
def test_check_all(layout):
    check_all("Overcooked-v0", layout=layout)  # (check_all's own max_steps shadows ours: the default 400)


@pytest.mark.parametrize("layout", ["cramped_room", "coord_ring"])
def test_cell_by_cell_observations_equal_whole_ones(layout):
    """The step rewrites only the cells that changed (and every cell when the urgency layer
    flips): after every step the observations equal those computed afresh from the state."""
    E = 48
    busy = torch.tensor([0.14, 0.14, 0.14, 0.14, 0.09, 0.35])
    env = war_envs.make("Overcooked-v0", num_envs=E, seed=7, layout=layout, random_reset=True, max_steps=70)
    fresh = war_envs.make("Overcooked-v0", num_envs=E, seed=7, layout=layout, random_reset=True, max_steps=70)
    env.reset(), fresh.reset()
    gen = torch.Generator().manual_seed(3)
    events = torch.zeros(3)
    for t in range(160):
        obs, _, _, _, info = env.step({"agent": torch.multinomial(busy, 2 * E, True, generator=gen).reshape(E, 2)})
        whole = fresh.set_state(env.get_state())
        assert torch.equal(obs["agent"], whole["agent"]), t
        events += torch.stack([(info["shaped_reward"] == 3).sum(), (info["shaped_reward"] == 5).sum(),
                               info["deliveries"].sum()]).float()
    assert (events[:2] > 0).all(), events
