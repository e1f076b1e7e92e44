"""TagGridWorld-v0 (WarpDrive's tag_gridworld): the conformance checks, hand-computed steps (a
tag, a wall hit, a swap that does not tag, the episode end, both observations), starts,
thousands of agents per world, sharding, state snapshots, rendering and bad input.  WarpDrive's
own code replays whole episodes against it in tests/test_warpdrive_reference.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing as wt
from war_envs.scenarios.tag_gridworld.tag_gridworld import (MAX_GRID_LENGTH, TAG_GRIDWORLD_DEFAULTS,
                                                            TAG_GRIDWORLD_TRAINING_PRESET, TagGridWorld)

ID = "TagGridWorld-v0"
# WarpDrive's unit-test arena (tests/example_envs/.../test_tag_gridworld_step_python.py)
SMALL = dict(num_taggers=4, grid_length=4, episode_length=10, wall_hit_penalty=0.1, tag_reward_for_tagger=10.0,
             tag_penalty_for_runner=2.0, step_cost_for_tagger=0.01)


def fixed(x, y, **kwargs):
    """One world with a fixed start; no autoreset unless asked (the state after a done stays)."""
    return war_envs.make(ID, starting_location_x=x, starting_location_y=y,
                         **{**SMALL, "autoreset_mode": "disabled", **kwargs})


def step(env, actions):
    obs, rew, term, trunc, info = env.step(torch.tensor([actions]))
    joint = lambda d: torch.cat([d["tagger"], d["runner"]], dim=1)[0]  # noqa: E731
    return joint(obs), joint(rew), joint(term), joint(trunc), info


def test_check_all_random_start():
    wt.check_all(ID, episode_length=8)


def test_check_all_partial_observation_float64():
    wt.check_all(ID, episode_length=8, use_full_observation=False, precision="float64", num_taggers=3,
                 grid_length=5, pettingzoo=False)


def test_fixed_start_conformance():
    """A fixed start passes the checks that do not need a fresh start at every reset."""
    kwargs = dict(random_start=False, num_taggers=3, grid_length=4, episode_length=8)
    wt.check_batch_api(ID, **kwargs)
    wt.check_autoreset_modes(ID, **kwargs)
    wt.check_bad_inputs(ID, **kwargs)


def test_defaults_are_warpdrive_defaults():
    env = war_envs.make(ID)
    assert {k: env.config[k] for k in TAG_GRIDWORLD_DEFAULTS} == TAG_GRIDWORLD_DEFAULTS
    assert env.random_start and env.max_cycles == 100
    assert list(env.groups) == ["tagger", "runner"]
    assert env.agents == [f"tagger_{i}" for i in range(10)] + ["runner_0"]
    assert env.groups["tagger"].obs_dim == env.groups["runner"].obs_dim == 4 * 11 + 1
    assert env.joint_action_space.n == 5
    preset = war_envs.make(ID, preset="warpdrive_training", tag_penalty_for_runner=3.0)
    assert preset.num_taggers == 4 and preset.grid_length == 100 and preset.tag_penalty_for_runner == 3.0
    assert {k: preset.config[k] for k in TAG_GRIDWORLD_TRAINING_PRESET if k != "tag_penalty_for_runner"} == \
        {k: v for k, v in TAG_GRIDWORLD_TRAINING_PRESET.items() if k != "tag_penalty_for_runner"}


def test_fixed_start_is_warpdrives_default_start():
    env = war_envs.make(ID, random_start=False, num_taggers=3, grid_length=9)
    env.reset(seed=0)
    pos = env.get_state()["agent_pos"][0]
    assert pos.tolist() == [[4, 4], [4, 4], [4, 4], [0, 0]]   # taggers at int(0.5 L), runner at 0
    env.reset(seed=5)
    assert env.get_state()["agent_pos"][0].tolist() == pos.tolist()


def test_a_tag_ends_the_episode_with_the_tag_rewards():
    """WarpDrive's test case 1: runner (1,1) moves x-1 onto tagger 2 (who moved y+1 to (0,1));
    taggers 0 and 3 hit the wall."""
    env = fixed([0, 0, 0, 0, 1], [0, 0, 0, 0, 1], precision="float64")
    env.reset()
    obs, rew, term, trunc, info = step(env, [2, 0, 3, 4, 2])
    assert env.get_state()["agent_pos"][0].tolist() == [[0, 0], [0, 0], [0, 1], [0, 0], [0, 1]]
    assert rew.tolist() == [10.0 - 0.1, 10.0, 10.0, 10.0 - 0.1, -2.0]
    assert term.all() and not trunc.any()
    assert info["tagged"].tolist() == [1] and info["taggers_on_runner"].tolist() == [1]
    assert info["wall_hits"][0].tolist() == [1, 0, 0, 1, 0]
    x, y, kind, me, t = obs[0, :5], obs[0, 5:10], obs[0, 10:15], obs[0, 15:20], obs[0, 20]
    assert x.tolist() == [0.0] * 5 and y.tolist() == [0, 0, 0.25, 0, 0.25]
    assert kind.tolist() == [0, 0, 0, 0, 1] and me.tolist() == [1, 0, 0, 0, 0]
    assert t.item() == np.float32(0.1)
    assert obs[4, 15:20].tolist() == [0, 0, 0, 0, 1]


def test_no_tag_step_costs_and_a_swap_does_not_tag():
    """Tagger 0 at (1,0) and the runner at (0,0) swap cells: no tag.  Tagger 1 at (4,4) moves
    x+1 into the wall."""
    env = fixed([1, 4, 2, 2, 0], [0, 4, 2, 2, 0])
    env.reset()
    obs, rew, term, trunc, info = step(env, [2, 1, 0, 0, 1])
    assert env.get_state()["agent_pos"][0].tolist() == [[0, 0], [4, 4], [2, 2], [2, 2], [1, 0]]
    assert rew.tolist() == pytest.approx([-0.01, -0.11, -0.01, -0.01, 0.01], abs=1e-7)
    assert rew.dtype == torch.float32 and rew[1].item() == np.float32(-1.0 * 0.1 + -1.0 * 0.01)
    assert not term.any() and not trunc.any() and info["tagged"].tolist() == [0]


def test_several_taggers_on_the_runner_count_once_for_the_rewards():
    env = fixed([1, 0, 0, 3, 0], [0, 1, 2, 3, 2])   # runner at (0,2)
    env.reset()
    _, rew, term, _, info = step(env, [2, 3, 0, 0, 0])   # taggers 0 -> (0,0), 1 -> (0,2), 2 stays on (0,2)
    assert info["taggers_on_runner"].tolist() == [2] and term.all()
    assert rew.tolist() == [10.0, 10.0, 10.0, 10.0, -2.0]


def test_episode_end_truncates_at_episode_length():
    env = fixed([4, 4, 4, 4, 0], [4, 4, 4, 4, 0], episode_length=2, autoreset_mode="same_step")
    env.reset()
    _, _, term, trunc, info = step(env, [0] * 5)
    assert not term.any() and not trunc.any() and info["t"].tolist() == [1]
    obs, _, term, trunc, info = step(env, [0] * 5)
    assert not term.any() and trunc.all() and info["final_obs"]["runner"][0, 0, -1].item() == 1.0
    assert obs[0, -1].item() == 0.0 and env.get_state()["t"].tolist() == [0]   # SAME_STEP: a fresh start


def test_tag_at_the_last_step_terminates():
    env = fixed([1, 4, 4, 4, 0], [0, 4, 4, 4, 0], episode_length=1)
    env.reset()
    _, _, term, trunc, _ = step(env, [2, 0, 0, 0, 0])
    assert term.all() and not trunc.any()


def test_partial_observation_and_the_nearest_tagger():
    """Tagger 1 and 2 are both at squared distance 5 from the runner: the lower index wins."""
    env = fixed([4, 2, 1, 3, 0], [4, 1, 2, 3, 0], use_full_observation=False)
    obs = env.reset()
    assert env.groups["tagger"].obs_dim == 6
    assert obs["tagger"][0, 0].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert obs["runner"][0, 0].tolist() == [0.0, 0.0, 0.5, 0.25, 1.0, 0.0]
    step(env, [0, 0, 0, 4, 0])   # tagger 3 to (3,2): distance 13, still farther
    assert env.observations()["runner"][0, 0].tolist() == [0.0, 0.0, 0.5, 0.25, 1.0, np.float32(0.1)]


def test_random_starts_are_in_range_and_fresh():
    env = war_envs.make(ID, num_envs=64, num_taggers=6, grid_length=5, seed=2)
    env.reset()
    starts = []
    for _ in range(5):
        env.reset()
        starts.append(env.get_state()["agent_pos"].clone())
    pos = torch.stack(starts)
    taggers, runner = pos[:, :, :6], pos[:, :, 6]
    assert (runner == 0).all()
    assert taggers.min() == 1 and taggers.max() == 4
    assert not torch.equal(starts[0], starts[1])
    assert (taggers[..., 0] == taggers[..., 1]).float().mean() < 0.5   # x and y are drawn independently


def test_thousands_of_agents_in_one_world_and_many_small_worlds():
    """1 world x 2000 agents and 512 worlds x 3 agents: the rules hold for every agent, and a
    sharded step (two threads) is bitwise the one-thread step."""
    for E, T, full in ((1, 1999, True), (1, 1999, False), (512, 2, True)):
        envs = [war_envs.make(ID, num_envs=E, num_taggers=T, grid_length=30, seed=4, use_full_observation=full,
                              num_threads=n) for n in ((1, 1) if E == 1 else (1, 2))]
        for env in envs:
            env.reset()
        gen = torch.Generator().manual_seed(0)
        for _ in range(3):
            before = envs[0].get_state()["agent_pos"]
            actions = torch.randint(0, 5, (E, T + 1), generator=gen)
            outs = [env.step(actions) for env in envs]
            state = envs[0].get_state()
            moves = torch.tensor([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]])[actions]
            want = (before + moves).clamp(0, 30)
            done = outs[0][2]["runner"][:, 0] | outs[0][3]["runner"][:, 0]
            assert torch.equal(state["agent_pos"][~done], want[~done].to(torch.int32))
            hits = (want != before + moves).any(-1)
            assert torch.equal(outs[0][4]["wall_hits"].bool(), hits)
            for a, b in zip(outs[0], outs[1]):
                for g in a if isinstance(a, dict) else ():
                    if isinstance(a[g], torch.Tensor):
                        assert torch.equal(a[g], b[g]), g
        obs = envs[0].observations()["tagger"]
        assert obs.shape == (E, T, 4 * (T + 1) + 1 if full else 6)
        for env in envs:
            env.close()


def test_get_set_state_and_clone_worlds_replay_exactly():
    env = war_envs.make(ID, num_envs=4, num_taggers=3, grid_length=6, episode_length=12, seed=1)
    env.reset()
    gen = torch.Generator().manual_seed(3)
    for _ in range(5):
        env.step(torch.randint(0, 5, (4, 4), generator=gen))
    snap = env.get_state()
    actions = [torch.randint(0, 5, (4, 4), generator=gen) for _ in range(20)]

    def play():
        return [tuple(x.clone() if isinstance(x, torch.Tensor) else {g: t.clone() for g, t in x.items()}
                      for x in env.step(a)[:4]) for a in actions]

    first = play()
    env.set_state(snap)
    assert torch.equal(env.get_state()["agent_pos"], snap["agent_pos"])
    again = play()
    for a, b in zip(first, again):
        for x, y in zip(a, b):
            for g in x:
                assert torch.equal(x[g], y[g])
    env.clone_worlds([0], [3])
    for k, value in env.get_state().items():
        assert torch.equal(value[3], value[0]), k
    assert torch.equal(env.observations()["tagger"][3], env.observations()["tagger"][0])


def test_set_state_observes_the_given_cells():
    env = war_envs.make(ID, num_envs=2, num_taggers=1, grid_length=8, seed=0)
    env.reset()
    state = env.get_state()
    state["agent_pos"][1] = torch.tensor([[8, 2], [3, 0]], dtype=torch.int32)
    state["t"][1] = 50
    obs = env.set_state({"agent_pos": state["agent_pos"][1:], "t": state["t"][1:]}, worlds=[1])
    assert obs["runner"][1, 0].tolist() == [1.0, 0.375, 0.25, 0.0, 0.0, 1.0, 0.0, 1.0, 0.5]


def test_metrics_and_rendering():
    env = fixed([0, 0, 0, 0, 1], [0, 0, 0, 0, 1])
    env.reset()
    _, _, _, _, info = step(env, [2, 0, 3, 4, 2])
    values = {m.name: m.step(info).tolist() for m in env.episode_metrics}
    assert values == {"tags": [1.0], "runners_left": [0.0], "wall_hits": [pytest.approx(0.4)]}
    env.set_state({"agent_pos": torch.tensor([[[0, 0], [0, 0], [4, 4], [2, 3], [2, 3]]], dtype=torch.int32)})
    frame = env.render_frame(width=100, height=100)
    assert frame.shape == (100, 100, 3) and frame.dtype == np.uint8
    cell = 20   # 5 x 5 cells of 20 px, y up
    assert tuple(frame[4 * cell + 10, 10]) == (217, 89, 89)          # taggers at (0,0)
    assert tuple(frame[cell + 10, 2 * cell + 10]) == (64, 170, 64)   # runner at (2,3) ...
    assert tuple(frame[cell + 2, 2 * cell + 2]) == (217, 89, 89)     # ... on a tagger's cell
    assert tuple(frame[2 * cell + 10, 4 * cell + 10]) == (255, 255, 255)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"num_taggers": 0}, ValueError, "num_taggers: expected an int >= 1"),
    ({"grid_length": 0}, ValueError, "grid_length: expected an int >= 1"),
    ({"grid_length": 4.0}, TypeError, "grid_length: expected an int"),
    ({"grid_length": MAX_GRID_LENGTH + 1}, ValueError, "grid_length: expected an int <= 32767"),
    ({"grid_length": 1}, ValueError, "grid_length: random starts draw taggers on 1..grid_length-1"),
    ({"episode_length": 0}, ValueError, "episode_length: expected an int >= 1"),
    ({"wall_hit_penalty": float("nan")}, ValueError, "wall_hit_penalty: expected a finite float"),
    ({"tag_reward_for_tagger": "10"}, TypeError, "tag_reward_for_tagger: expected a float"),
    ({"use_full_observation": 1}, TypeError, "use_full_observation: expected a bool"),
    ({"random_start": "yes"}, TypeError, "random_start: expected a bool"),
    ({"preset": "nope"}, ValueError, "preset: expected one of"),
    ({"starting_location_x": [0] * 11}, ValueError, "expected both or neither"),
    ({"starting_location_x": [0] * 10, "starting_location_y": [0] * 10}, ValueError,
     "starting_location_x: expected 11 values"),
    ({"starting_location_x": [0.5] * 11, "starting_location_y": [0] * 11}, TypeError,
     "starting_location_x: expected ints, got dtype float64"),
    ({"starting_location_x": [0] * 11, "starting_location_y": [11] * 11}, ValueError,
     r"starting_location_y: expected cells in \[0, grid_length=10\]"),
    ({"starting_location_x": "0", "starting_location_y": [0] * 11}, TypeError, "starting_location_x: expected 11 ints"),
    ({"starting_location_x": [0] * 11, "starting_location_y": [0] * 11, "random_start": True}, ValueError,
     "random_start: starting locations give a fixed start"),
])
def test_make_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        war_envs.make(ID, **kwargs)


def test_fixed_start_on_a_one_cell_grid_is_allowed():
    env = war_envs.make(ID, grid_length=1, random_start=False, num_taggers=2)
    env.reset()
    assert env.get_state()["agent_pos"][0].tolist() == [[0, 0]] * 3


@pytest.mark.parametrize("state, match", [
    ({"agent_pos": torch.full((2, 3, 2), 7, dtype=torch.int32)}, r"agent_pos'\]: expected cells in \[0, grid_length=6\]"),
    ({"agent_pos": torch.zeros((2, 3, 2))}, r"agent_pos'\]: expected an integer dtype"),
    ({"pending_reset": torch.full((2,), 2, dtype=torch.int32)}, "expected 0 or 1"),
])
def test_bad_set_state_is_refused_and_nothing_changes(state, match):
    env = war_envs.make(ID, num_envs=2, num_taggers=2, grid_length=6, seed=0)
    env.reset()
    before = env.get_state()
    with pytest.raises((ValueError, TypeError), match=match):
        env.set_state(state)
    for k, value in env.get_state().items():
        assert torch.equal(value, before[k]), k


def test_out_of_range_action_is_refused():
    env = war_envs.make(ID, num_envs=1, num_taggers=1, seed=0)
    env.reset()
    with pytest.raises(ValueError, match=r"actions\['runner'\]"):
        env.step({"tagger": torch.tensor([[0]]), "runner": torch.tensor([[5]])})


def test_registered_class():
    assert war_envs.registry.scenario_class(ID) is TagGridWorld
