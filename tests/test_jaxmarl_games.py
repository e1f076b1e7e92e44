"""SwitchRiddle-v0 and CoinGame-v0 without JaxMARL: hand-played episodes with injected draws
(every rule of the docstrings, values worked out by hand), argument and state checks, the
episode protocol.  JaxMARL itself: tests/test_jaxmarl_games_reference.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import war_envs


def riddle(**kwargs):
    env = war_envs.make("SwitchRiddle-v0", num_envs=1, seed=0, autoreset_mode="disabled", **kwargs)
    env.reset()
    return env


def test_switch_riddle_a_right_tell_after_everyone_visited():
    env = riddle(reward_all_live=2.5)
    env.set_state({"in_room": torch.tensor([0]), "bulb": torch.tensor([0]), "has_been": torch.zeros(1, 3, dtype=torch.int32)})
    # agent 0 switches the light on; then agent 1 (whose action is the only one that counts) does nothing
    plays = [(0, [1, 2, 2], 1), (1, [2, 0, 2], 2), (2, [2, 2, 2], 0)]
    for k, (room, actions, next_room) in enumerate(plays):
        assert int(env.get_state()["in_room"][0]) == room
        env.inject_draws(in_room=[next_room])
        obs, rew, term, trunc, info = env.step({"agent": torch.tensor([actions])})
        if k < 2:
            assert rew["agent"].tolist() == [[0.0, 0.0, 0.0]] and not term["agent"].any() and not trunc["agent"].any()
            assert int(info["told"][0]) == 0
        assert int(info["visited"][0]) == k + 1
    # the third agent told after all three had been in: reward_all_live for everyone, terminated
    assert rew["agent"].tolist() == [[2.5, 2.5, 2.5]]
    assert term["agent"].all() and not trunc["agent"].any()
    assert int(info["told"][0]) == 1 and int(info["success"][0]) == 1
    state = env.get_state()
    assert state["bulb"].tolist() == [1] and state["has_been"].tolist() == [[1, 1, 1]]
    # the next agent (0) sees the light it switched on; the others see nothing
    assert obs["agent"][0].tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]


def test_switch_riddle_an_early_tell_and_the_time_limit():
    env = riddle()
    env.set_state({"in_room": torch.tensor([1]), "has_been": torch.zeros(1, 3, dtype=torch.int32)})
    env.inject_draws(in_room=[1])
    _, rew, term, _, info = env.step({"agent": torch.tensor([[0, 2, 0]])})
    assert rew["agent"].tolist() == [[-1.0, -1.0, -1.0]] and term["agent"].all() and int(info["success"][0]) == 0
    env = riddle(num_agents=4)       # 4 N - 6 = 10 steps
    assert env.max_cycles == 10
    for t in range(10):
        _, rew, term, trunc, _ = env.step({"agent": torch.zeros(1, 4, dtype=torch.int64)})
        assert bool(trunc["agent"][0, 0]) == (t == 9) and not term["agent"].any()
    assert riddle(max_steps=3).max_cycles == 3


def test_switch_riddle_switching_toggles_and_only_the_agent_in_the_room_acts():
    env = riddle(initial_bulb_state=True)
    assert env.get_state()["bulb"].tolist() == [1]
    env.set_state({"in_room": torch.tensor([2])})
    env.inject_draws(in_room=[2])
    env.step({"agent": torch.tensor([[2, 2, 1]])})  # agents 0 and 1 would tell: ignored
    assert env.get_state()["bulb"].tolist() == [0]
    env.inject_draws(in_room=[2])
    obs, _, term, _, _ = env.step({"agent": torch.tensor([[2, 2, 1]])})
    assert env.get_state()["bulb"].tolist() == [1] and not term["agent"].any()
    assert obs["agent"][0].tolist() == [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]


def coin(**kwargs):
    env = war_envs.make("CoinGame-v0", num_envs=1, seed=0, autoreset_mode="disabled", **kwargs)
    env.reset()
    return env


def cells(*pairs):
    return torch.tensor([list(pairs)], dtype=torch.int32)


def test_coin_game_picking_up_coins_pays_by_the_matrix():
    env = coin(payoff_matrix=[[1, 3, -2], [5, 7, -11]])
    # red at (0, 0), blue at (2, 2); the red coin right of red, the blue coin at red's wrap-around left
    env.set_state({"agent_pos": cells((0, 0), (2, 2)), "coin_pos": cells((0, 1), (0, 2)), "t": torch.tensor([0])})
    env.inject_draws(coins=[[[1, 1], [2, 0]]], start=torch.zeros(1, 4, 2, dtype=torch.int64))
    obs, rew, _, _, info = env.step({"agent": torch.tensor([[0, 0]])})  # both move right: red onto its coin
    assert rew["agent"].tolist() == [[1.0, 0.0]]
    assert info["own_coins"].tolist() == [[1, 0]] and info["other_coins"].tolist() == [[0, 0]]
    state = env.get_state()
    assert state["agent_pos"].tolist() == [[[0, 1], [2, 0]]]       # blue wrapped around
    assert state["coin_pos"].tolist() == [[[1, 1], [0, 2]]]        # only the red coin respawned
    # red steps left onto the blue coin at (0, 0); blue steps up, wrapping around onto the same cell
    env.set_state({"coin_pos": cells((1, 0), (0, 0))})
    env.inject_draws(coins=[[[2, 2], [1, 2]]], start=torch.zeros(1, 4, 2, dtype=torch.int64))
    obs, rew, _, _, info = env.step({"agent": torch.tensor([[1, 2]])})
    # both picked up the blue coin: red +3 (the other's coin), blue +7 (its own) and -11 (red took one of its)
    assert env.get_state()["agent_pos"].tolist() == [[[0, 0], [0, 0]]]
    assert rew["agent"].tolist() == [[3.0, 7.0 - 11.0]]
    assert info["own_coins"].tolist() == [[0, 1]] and info["other_coins"].tolist() == [[1, 0]]
    assert env.get_state()["coin_pos"].tolist() == [[[1, 0], [1, 2]]]
    # blue's observation: itself (channel 0) and red (channel 1) at (0, 0), its own (blue) coin at (1, 2)
    grid = obs["agent"][0, 1].reshape(3, 3, 4)
    assert grid[0, 0].tolist() == [1, 1, 0, 0] and grid[1, 2, 2] == 1 and grid[1, 0, 3] == 1 and grid.sum() == 4


def test_coin_game_inner_games_restart_without_pay_and_the_meta_episode_truncates():
    env = coin(num_inner_steps=2, num_outer_steps=2, shared_rewards=True)
    assert env.max_cycles == 4
    for t in range(4):
        env.set_state({"agent_pos": cells((0, 0), (2, 2)), "coin_pos": cells((0, 1), (1, 1))})
        start = torch.tensor([[[2, 1], [1, 2], [0, 0], [2, 2]]])
        env.inject_draws(coins=torch.zeros(1, 2, 2, dtype=torch.int64), start=start)
        _, rew, term, trunc, info = env.step({"agent": torch.tensor([[0, 4]])})  # red onto its coin
        inner = t % 2 == 1
        assert int(info["inner_episode_done"][0]) == int(inner) and int(info["own_coins"][0, 0]) == 1
        assert rew["agent"].tolist() == ([[0.0, 0.0]] if inner else [[1.0, 1.0]])  # shared: red + blue
        assert not term["agent"].any() and bool(trunc["agent"][0, 0]) == (t == 3)
        if inner:
            state = env.get_state()
            assert state["agent_pos"].tolist() == [[[2, 1], [1, 2]]] and state["coin_pos"].tolist() == [[[0, 0], [2, 2]]]


def test_coin_game_egocentric_puts_the_agent_in_the_centre():
    env = coin(egocentric=True)
    obs = env.set_state({"agent_pos": cells((0, 0), (2, 1)), "coin_pos": cells((0, 2), (1, 1))})
    red, blue = obs["agent"][0].reshape(2, 3, 3, 4)
    assert red[1, 1, 0] == 1 and red[0, 2, 1] == 1 and red[1, 0, 2] == 1 and red[2, 2, 3] == 1
    assert blue[1, 1, 0] == 1 and blue[2, 0, 1] == 1 and blue[0, 1, 2] == 1 and blue[2, 2, 3] == 1


@pytest.mark.parametrize("env_id,kwargs,error,match", [
    ("SwitchRiddle-v0", {"num_agents": 2}, ValueError, "num_agents"),
    ("SwitchRiddle-v0", {"initial_bulb_state": 1}, TypeError, "initial_bulb_state"),
    ("SwitchRiddle-v0", {"reward_all_live": float("nan")}, ValueError, "reward_all_live"),
    ("SwitchRiddle-v0", {"max_steps": 0}, ValueError, "max_steps"),
    ("CoinGame-v0", {"cnn": True}, ValueError, "cnn"),
    ("CoinGame-v0", {"num_inner_steps": 0}, ValueError, "num_inner_steps"),
    ("CoinGame-v0", {"payoff_matrix": [[1, 1], [1, 1]]}, ValueError, "payoff_matrix"),
    ("CoinGame-v0", {"payoff_matrix": [[1, 1, float("inf")], [1, 1, -2]]}, ValueError, "payoff_matrix"),
    ("CoinGame-v0", {"payoff_matrix": "1,1,-2"}, ValueError, "payoff_matrix"),
])
def test_bad_arguments_are_refused_by_name(env_id, kwargs, error, match):
    with pytest.raises(error, match=match):
        war_envs.make(env_id, **kwargs)


def test_bad_states_and_draws_are_refused_and_leave_the_world():
    env = riddle()
    before = env.get_state()
    with pytest.raises(ValueError, match="in_room"):
        env.set_state({"in_room": torch.tensor([3])})
    with pytest.raises(ValueError, match="has_been"):
        env.set_state({"has_been": torch.tensor([[0, 2, 0]])})
    with pytest.raises(ValueError, match="in_room"):
        env.inject_draws(in_room=[5])
    after = env.get_state()
    assert all(torch.equal(before[k], after[k]) for k in before)
    env = coin()
    with pytest.raises(ValueError, match="agent_pos"):
        env.set_state({"agent_pos": cells((0, 3), (0, 0))})
    with pytest.raises(ValueError, match="coins"):
        env.inject_draws(coins=[[[0, 3], [0, 0]]], start=torch.zeros(1, 4, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="start"):
        env.inject_draws(coins=torch.zeros(1, 2, 2, dtype=torch.int64), start=torch.zeros(1, 3, 2, dtype=torch.int64))


@pytest.mark.parametrize("env_id", ["SwitchRiddle-v0", "CoinGame-v0"])
def test_float64_worlds_step_as_float32_ones_and_render(env_id):
    a = war_envs.make(env_id, num_envs=64, seed=4)
    b = war_envs.make(env_id, num_envs=64, seed=4, precision="float64")
    a.reset(), b.reset()
    gen = torch.Generator().manual_seed(0)
    n = int(a.groups["agent"].action_space.n)
    for _ in range(30):
        act = {"agent": torch.randint(0, n, (64, a.num_agents), generator=gen)}
        oa, ra, ta, _, _ = a.step(act)
        ob, rb, tb, _, _ = b.step(act)
        assert torch.equal(oa["agent"], ob["agent"]) and torch.equal(ra["agent"].double(), rb["agent"])
        assert torch.equal(ta["agent"], tb["agent"])
    frame = a.render_frame(3, width=120, height=90)
    assert frame.shape == (90, 120, 3) and frame.dtype == np.uint8 and len(np.unique(frame.reshape(-1, 3), axis=0)) > 2
