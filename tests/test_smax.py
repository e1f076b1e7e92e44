"""SMAX-v0's API: maps, spaces, errors, available actions, metrics, state round trips, rendering.
(Exactness against JaxMARL itself: tests/test_smax_reference.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import war_envs
from war_envs.scenarios.smax.maps import MAPS
from war_envs.testing import check_all, random_actions


def make(**kwargs):
    return war_envs.make("SMAX-v0", **{"num_envs": 4, "seed": 0, **kwargs})


@pytest.mark.parametrize("map_name", sorted(MAPS))
def test_every_map_has_jaxmarls_sizes_and_spaces(map_name):
    spec = MAPS[map_name]
    A = spec.num_allies + spec.num_enemies
    with make(map_name=map_name) as env:
        obs = env.reset()
        assert list(env.groups) == ["ally"]
        assert env.agents == [f"ally_{i}" for i in range(spec.num_allies)]
        assert obs["ally"].shape == (4, spec.num_allies, 13 * (A - 1) + 10)
        assert env.groups["ally"].action_space.n == spec.num_enemies + 5
        assert env.action_mask()["ally"].shape == (4, spec.num_allies, spec.num_enemies + 5)
        state = env.get_state()
        if not spec.smacv2_unit_type_generation:
            assert (state["unit_types"] == torch.tensor(spec.unit_types, dtype=torch.int32)).all()
        assert (state["unit_health"] > 0).all() and state["unit_alive"].all()
        obs = env.observations()["ally"]
        own_pos = obs[..., -9:-7]  # off the map where SMACv2's surround starts put a unit outside it
        assert obs[..., :-9].abs().max() <= 1.0 and own_pos.abs().max() <= 1.0 + 4.0 / 32


def test_self_play_conic_and_continuous_spaces():
    with make(map_name="5m_vs_6m", enemy="self_play", observation_type="conic") as env:
        obs = env.reset()
        assert list(env.groups) == ["ally", "enemy"]
        assert env.agents[-1] == "enemy_5"
        assert obs["ally"].shape == (4, 5, 13 * 64 + 10) and obs["enemy"].shape == (4, 6, 13 * 64 + 10)
        assert env.groups["ally"].action_space.n == 11 and env.groups["enemy"].action_space.n == 10
        _, rew, _, _, info = env.step(random_actions(env, torch.Generator().manual_seed(0)))
        assert set(info["action_mask"]) == {"ally", "enemy"}
    with make(action_type="continuous") as env:
        env.reset()
        assert env.groups["ally"].action_space.shape == (4,)
        assert not env.has_action_mask
        with pytest.raises(TypeError, match="continuous"):
            env.action_mask()
        _, _, _, _, info = env.step({"ally": torch.rand(4, 3, 4)})
        assert "action_mask" not in info


def test_bad_arguments_get_one_clear_error_each():
    with pytest.raises(ValueError, match=r"map_name: unknown map '3M'.*did you mean"):
        make(map_name="3M")
    with pytest.raises(ValueError, match="num_allies: set by map_name='3m'"):
        make(num_allies=4)
    with pytest.raises(TypeError, match="max_steps: expected an int"):
        make(max_steps="100")
    with pytest.raises(ValueError, match="observation_type"):
        make(observation_type="image")
    with pytest.raises(ValueError, match="unit_type_attacks: expected 6 values"):
        make(unit_type_attacks=[1.0, 2.0])
    with pytest.raises(TypeError, match="unknown keyword argument"):
        make(map="3m")
    with pytest.raises(ValueError, match="enemy"):
        make(enemy="scripted")
    with pytest.raises(ValueError, match="unit_types: expected 4 types"):
        make(map_name=None, num_allies=2, num_enemies=2, unit_types=[0, 1, 2])
    with make(map_name=None, num_allies=2, num_enemies=1, unit_types=[2, 3, 5]) as env:
        env.reset()
        assert env.get_state()["unit_types"][0].tolist() == [2, 3, 5]


def test_an_unavailable_action_is_refused_and_no_world_changes():
    with make() as env:
        env.reset()
        before = env.get_state()
        attack = torch.full((4, 3), 4)  # everyone stops ...
        attack[2, 1] = 7  # ... but ally_1 of world 2 attacks enemy_2, out of range at the start
        with pytest.raises(ValueError, match=r"ally_1 \(world 2\) chose action 7 \(attack enemy_2\), which is "
                                             r"unavailable.*available: \[0, 1, 2, 3, 4\]"):
            env.step({"ally": attack})
        after = env.get_state()
        assert all(torch.equal(before[k], after[k]) for k in before)
        # the trusted path plays it as JaxMARL does: an attack out of range does nothing
        env.step({"ally": attack}, trusted=True)
        assert torch.equal(env.get_state()["unit_health"], before["unit_health"])


def test_the_mask_is_jaxmarls_rule_on_the_current_state():
    with make(map_name="2s3z", num_envs=16) as env:
        env.reset()
        gen = torch.Generator().manual_seed(1)
        ranges = torch.tensor(env.unit_type_attack_ranges)
        for _ in range(30):
            state = env.get_state()
            mask = env.action_mask()["ally"]
            pos, alive, types = state["unit_positions"], state["unit_alive"], state["unit_types"].long()
            na = env.num_allies
            for i in range(na):
                assert torch.equal(mask[:, i, :4], alive[:, i, None].expand(-1, 4))
                assert mask[:, i, 4].all()
                d = (pos[:, na:] - pos[:, i:i + 1]).norm(dim=-1)
                expect = (d < ranges[types[:, i]][:, None]) & alive[:, na:] & alive[:, i:i + 1]
                assert torch.equal(mask[:, i, 5:], expect)
            env.step(random_actions(env, gen))


def test_a_won_battle_sets_the_metrics_and_ends_the_episode():
    with make(num_envs=1, autoreset_mode="disabled") as env:
        env.reset()
        state = env.get_state()
        # every enemy one shot from death, right next to ally 0 which has cooled down
        state["unit_positions"][0] = torch.tensor([[10.0, 16.0], [10.0, 15.0], [10.0, 17.0],
                                                   [12.0, 16.0], [12.0, 17.0], [12.0, 15.0]])
        state["unit_health"][0, 3:] = 1.0
        state["unit_types"][0] = 0
        env.set_state(state)
        # allies attack enemies 0, 1, 2; the enemies, in range, shoot back but cannot kill
        _, rew, term, trunc, info = env.step({"ally": torch.tensor([[5, 6, 7]])})
        assert env.world_flags()[0].item() and not env.world_flags()[1].item()
        assert info["won"].item() == 1.0 and info["enemies_left"].item() == 0 and info["allies_left"].item() == 3
        assert info["damage"].item() == pytest.approx(3.0)
        # reward: 3 x (1/45) lost health fraction / 3 enemies + the won battle bonus
        assert rew["ally"][0].tolist() == pytest.approx([1 / 45 + 1.0] * 3, rel=1e-6)
        assert term["ally"].all()


def test_dead_units_may_only_stop_and_are_terminated():
    with make(num_envs=1) as env:
        env.reset()
        state = env.get_state()
        state["unit_health"][0, 1] = 0.0
        state["unit_alive"][0, 1] = False
        env.set_state(state)
        assert env.action_mask()["ally"][0, 1].tolist() == [False] * 4 + [True] + [False] * 3
        assert env.alive_mask["ally"][0].tolist() == [True, False, True]
        _, _, term, _, _ = env.step({"ally": torch.tensor([[4, 4, 4]])})
        assert term["ally"][0].tolist() == [False, True, False]
        assert env.observations()["ally"][0, 1].abs().sum() == 0  # a dead unit observes zeros


def test_episodes_last_max_steps_plus_one_steps_as_in_jaxmarl():
    with make(max_steps=5) as env:
        assert env.max_cycles == 6
        env.reset()
        for t in range(6):
            _, _, term, trunc, _ = env.step({"ally": torch.full((4, 3), 4)})
            assert bool(trunc["ally"].all()) == (t == 5)


def test_same_seed_same_run_in_float32_and_float64_and_clones_replay():
    def run(precision):
        with make(precision=precision, map_name="2s3z", attack_mode="random") as env:
            env.reset()
            gen = torch.Generator().manual_seed(3)
            trace = []
            for _ in range(40):
                obs, rew, *_ = env.step(random_actions(env, gen))
                trace.append((obs["ally"].clone(), rew["ally"].clone()))
            return trace, env.get_state()

    a, sa = run("float32")
    b, sb = run("float32")
    assert all(torch.equal(x[0], y[0]) and torch.equal(x[1], y[1]) for x, y in zip(a, b))
    c, sc = run("float64")
    assert sc["unit_health"].dtype == torch.float64
    with make(map_name="2s3z") as env:
        env.reset()
        gen = torch.Generator().manual_seed(0)
        for _ in range(5):
            env.step(random_actions(env, gen))
        env.clone_worlds([0], [3])
        env.set_state(env.get_state())
        for _ in range(20):
            actions = random_actions(env, gen)
            actions["ally"][3] = actions["ally"][0]
            obs, rew, *_ = env.step(actions)
            assert torch.equal(obs["ally"][0], obs["ally"][3]) and torch.equal(rew["ally"][0], rew["ally"][3])


def test_set_state_refuses_out_of_range_entries_and_keeps_the_world():
    with make() as env:
        env.reset()
        before = env.get_state()
        for key, value, match in (("unit_types", 6, "unit types in 0..5"), ("enemy_last_attacked", 3, "ally slot"),
                                  ("enemy_last_attacked", -2, r"values in \[-1")):
            bad = env.get_state()
            bad[key][0, 0] = value
            with pytest.raises(ValueError, match=match):
                env.set_state(bad)
        after = env.get_state()
        assert all(torch.equal(before[k], after[k]) for k in before)


def test_conic_observations_never_list_unit_0_as_jaxmarl():
    with make(map_name="3m", observation_type="conic", num_envs=1) as env:
        env.reset()
        state = env.get_state()
        # ally 1 right next to ally 0 (within sight, inside one section): JaxMARL lists it for
        # ally 0 but never lists ally 0 for ally 1 (nonzero(mask * index) skips index 0)
        state["unit_positions"][0, :3] = torch.tensor([[10.0, 16.0], [11.0, 16.3], [9.7, 18.0]])
        obs = env.set_state(state)["ally"][0]
        health = obs[1, :13 * 64].reshape(64, 13)[:, 0]
        assert (health > 0).sum() == 1  # ally 1 sees ally 2 only
        assert (obs[0, :13 * 64].reshape(64, 13)[:, 0] > 0).sum() == 2


def test_render_frame_draws_the_battle():
    with make(num_envs=2) as env:
        env.reset()
        frame = env.render_frame(1, width=200, height=160)
        assert frame.shape == (160, 200, 3) and frame.dtype == np.uint8
        assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 5


def test_inject_draws_checks_its_arguments():
    with make() as env:
        env.reset()
        with pytest.raises(ValueError, match="cooldown: expected shape"):
            env.inject_draws(cooldown=torch.zeros(4, 3, 6))
        with pytest.raises(ValueError, match=r"uniforms in \[0, 1\)"):
            env.inject_draws(cooldown=torch.ones(4, 8, 6))
        # the same injected numbers give the same step from the same state
        state = env.get_state()
        u = torch.rand(4, 8, 6)
        h = torch.rand(4, 3, 2)
        results = []
        for _ in range(2):
            env.set_state(state)
            env.inject_draws(cooldown=u, heuristic=h)
            env.step({"ally": torch.full((4, 3), 0)})
            results.append(env.get_state())
        assert all(torch.equal(results[0][k], results[1][k]) for k in results[0])


@pytest.mark.parametrize("kwargs", [
    {"map_name": "2s3z", "observation_type": "conic"},
    {"map_name": "5m_vs_6m", "enemy": "self_play"},
    {"map_name": "smacv2_5_units", "action_type": "continuous"},
    {"map_name": "3m", "attack_mode": "random", "walls_cause_death": False, "see_enemy_actions": False},
    {"map_name": "3m", "observe_time": True},
])
def test_conformance(kwargs):
    check_all("SMAX-v0", **kwargs)


@pytest.mark.parametrize("map_name", sorted(MAPS))
@pytest.mark.parametrize("action_type", ["discrete", "continuous"])
def test_every_map_passes_the_conformance_checks(map_name, action_type):
    """PettingZoo's api_test / parallel_api_test / seed_test, Gymnasium's check_env and the
    batch-API checks (war_envs.testing.check_all) on every map, both action types."""
    check_all("SMAX-v0", map_name=map_name, action_type=action_type)


@pytest.mark.parametrize("kwargs", [{"map_name": "3m"}, {"map_name": "2s3z", "observation_type": "conic"},
                                    {"map_name": "5m_vs_6m", "enemy": "self_play"}])
def test_observe_time_appends_the_elapsed_fraction_and_changes_nothing_else(kwargs):
    """``observe_time=True``: every observation (final ones included) is JaxMARL's followed by
    t / (max_steps + 1); the worlds play the same game (same seed, same actions)."""
    timed, plain = make(observe_time=True, max_steps=7, autoreset_mode="same_step", **kwargs), \
        make(max_steps=7, autoreset_mode="same_step", **kwargs)
    assert timed.obs_dim == plain.obs_dim + 1
    obs, ref = timed.reset(seed=3), plain.reset(seed=3)
    gen = torch.Generator().manual_seed(0)
    clock = np.zeros(4)
    finals = 0
    for _ in range(20):
        for g in obs:
            assert torch.equal(obs[g][..., :-1], ref[g])
            np.testing.assert_allclose(obs[g][..., -1].numpy(), np.repeat(clock[:, None] / 8, obs[g].shape[1], 1),
                                       rtol=1e-6)
        actions = random_actions(plain, gen)
        (obs, _, _, _, info), (ref, _, _, _, info_ref) = timed.step(actions), plain.step(actions)
        clock += 1
        ended = info["_final_obs"].numpy().astype(bool)
        for g in obs:
            assert torch.equal(info["final_obs"][g][ended][..., :-1], info_ref["final_obs"][g][ended])
            np.testing.assert_allclose(info["final_obs"][g][ended][..., -1].numpy(),
                                       np.repeat(clock[ended, None] / 8, obs[g].shape[1], 1), rtol=1e-6)
        finals += int(ended.sum())
        clock[ended] = 0
    assert finals >= 4
    with pytest.raises(TypeError, match="observe_time"):
        make(observe_time=1)
    timed.close()
    plain.close()
