"""The batched core: seeds and world slicing, determinism, autoreset modes, state snapshots,
task metrics, sharding, quiet import."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import war_envs
from war_envs import AutoresetMode

SCENARIOS = ["Spread-v0", "PredatorPrey-v0"]


def random_actions(env, generator, worlds=None):
    """{group: int64 [E, n_g]} drawn from ``generator`` (all worlds, or a list of world rows)."""
    n = env.num_envs if worlds is None else worlds
    out = {}
    for g, spec in env.groups.items():
        if env.continuous_actions:
            out[g] = torch.rand((n, spec.n_agents, 5), generator=generator)
        else:
            out[g] = torch.randint(0, 5, (n, spec.n_agents), generator=generator)
    return out


def rollout(env, steps, seed=0, action_seed=0):
    """Clone of every output of ``steps`` steps (after a seeded reset)."""
    gen = torch.Generator().manual_seed(action_seed)
    trace = [{g: o.clone() for g, o in env.reset(seed=seed).items()}]
    for _ in range(steps):
        obs, rew, term, trunc, info = env.step(random_actions(env, gen))
        trace.append({"obs": {g: o.clone() for g, o in obs.items()},
                      "rew": {g: r.clone() for g, r in rew.items()},
                      "term": {g: x.clone() for g, x in term.items()},
                      "trunc": {g: x.clone() for g, x in trunc.items()},
                      "state": {k: v.clone() for k, v in env.get_state().items()}})
    return trace


def assert_traces_equal(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, rtol=0, atol=0)


@pytest.mark.parametrize("env_id", SCENARIOS)
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_same_seed_gives_bitwise_identical_trajectories(env_id, precision):
    traces = []
    for _ in range(2):
        env = war_envs.make(env_id, num_envs=8, precision=precision)
        traces.append(rollout(env, 60, seed=11, action_seed=3))
        env.close()
    assert_traces_equal(*traces)
    env = war_envs.make(env_id, num_envs=8, precision=precision)
    other = rollout(env, 60, seed=12, action_seed=3)
    assert not torch.equal(other[0][next(iter(env.groups))], traces[0][0][next(iter(env.groups))])


@pytest.mark.parametrize("env_id", SCENARIOS)
@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_world_w_equals_world_zero_of_env_seeded_s_plus_w(env_id, mode):
    """World w of a num_envs=4 env seeded s replays world 0 of a one-world env seeded s+w,
    across several auto-resets."""
    s, E, steps = 100, 4, 80
    big = war_envs.make(env_id, num_envs=E, autoreset_mode=mode)
    smalls = [war_envs.make(env_id, num_envs=1, autoreset_mode=mode) for _ in range(E)]
    big.reset(seed=s)
    for w, env in enumerate(smalls):
        env.reset(seed=s + w)
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        actions = random_actions(big, gen)
        obs, rew, term, trunc, _ = big.step(actions)
        for w, env in enumerate(smalls):
            o, r, te, tr, _ = env.step({g: a[w:w + 1] for g, a in actions.items()})
            for g in big.groups:
                assert torch.equal(obs[g][w], o[g][0])
                assert torch.equal(rew[g][w], r[g][0])
                assert torch.equal(term[g][w], te[g][0]) and torch.equal(trunc[g][w], tr[g][0])


@pytest.mark.parametrize("env_id", SCENARIOS)
def test_every_reset_draws_a_fresh_start(env_id):
    env = war_envs.make(env_id, num_envs=2, autoreset_mode="same_step")
    env.reset(seed=0)
    starts = [env.get_state()["agent_pos"].clone()]
    gen = torch.Generator().manual_seed(0)
    for _ in range(3):
        for _ in range(env.max_cycles):
            env.step(random_actions(env, gen))
        starts.append(env.get_state()["agent_pos"].clone())  # the auto-reset start
    env.reset()  # no seed: continues the stream
    starts.append(env.get_state()["agent_pos"].clone())
    for i in range(len(starts)):
        for j in range(i + 1, len(starts)):
            assert not torch.equal(starts[i], starts[j])
    env.reset(seed=0)
    assert torch.equal(env.get_state()["agent_pos"], starts[0])


@pytest.mark.parametrize("env_id", SCENARIOS)
def test_results_do_not_depend_on_cpu_sharding(env_id):
    traces = []
    for threads in (1, 2, 3):
        env = war_envs.make(env_id, num_envs=9, num_threads=threads)
        assert env.num_threads == threads
        traces.append(rollout(env, 30, seed=5))
        env.close()
    assert_traces_equal(traces[0], traces[1])
    assert_traces_equal(traces[0], traces[2])


@pytest.mark.parametrize("env_id", SCENARIOS)
def test_same_step_final_obs_is_the_terminal_observation(env_id):
    """SAME_STEP returns the reset observation and keeps the terminal one in final_obs, equal
    to what a DISABLED twin observes at that step; NEXT_STEP resets one step later."""
    same = war_envs.make(env_id, num_envs=3, autoreset_mode="same_step", max_cycles=5)
    nxt = war_envs.make(env_id, num_envs=3, autoreset_mode="next_step", max_cycles=5)
    off = war_envs.make(env_id, num_envs=3, autoreset_mode="disabled", max_cycles=5)
    for env in (same, nxt, off):
        env.reset(seed=1)
    gen = torch.Generator().manual_seed(0)
    for t in range(5):
        actions = random_actions(same, gen)
        o_s, r_s, te_s, tr_s, i_s = same.step(actions)
        o_n, r_n, te_n, tr_n, i_n = nxt.step(actions)
        o_d, r_d, te_d, tr_d, i_d = off.step(actions)
        for g in same.groups:
            assert torch.equal(r_s[g], r_d[g]) and torch.equal(r_n[g], r_d[g])
            assert torch.equal(o_n[g], o_d[g])
    assert torch.all(tr_s[g]) and torch.all(i_s["_final_obs"])
    for g in same.groups:
        assert torch.equal(i_s["final_obs"][g], o_d[g])
        assert not torch.equal(o_s[g], o_d[g])  # reset observation
    # NEXT_STEP: the following step only resets: reward 0, flags false, the same fresh start
    o_n, r_n, te_n, tr_n, _ = nxt.step(random_actions(same, gen))
    for g in same.groups:
        assert torch.equal(o_n[g], o_s[g])
        assert torch.all(r_n[g] == 0) and not te_n[g].any() and not tr_n[g].any()
    assert "final_obs" not in i_n
    # DISABLED: worlds stay done until reset(mask=...) resets the chosen ones
    mask = torch.tensor([True, False, True])
    before = off.get_state()["agent_pos"].clone()
    obs = off.reset(mask=mask)
    after = off.get_state()
    assert torch.equal(after["agent_pos"][1], before[1])
    assert not torch.equal(after["agent_pos"][0], before[0])
    assert after["t"].tolist() == [0, 5, 0]
    for g in same.groups:
        assert torch.equal(obs[g][0], o_s[g][0]) and torch.equal(obs[g][2], o_s[g][2])


def test_autoreset_mode_accepts_enum_and_string():
    assert war_envs.make("Spread-v0", autoreset_mode=AutoresetMode.NEXT_STEP).autoreset_mode is AutoresetMode.NEXT_STEP
    assert war_envs.make("Spread-v0", autoreset_mode="disabled").autoreset_mode is AutoresetMode.DISABLED
    assert war_envs.make("Spread-v0").autoreset_mode is AutoresetMode.SAME_STEP


@pytest.mark.parametrize("env_id", SCENARIOS)
def test_get_set_state_round_trip_and_clone_worlds(env_id):
    env = war_envs.make(env_id, num_envs=4, precision="float64")
    env.reset(seed=3)
    gen = torch.Generator().manual_seed(0)
    for _ in range(7):
        env.step(random_actions(env, gen))
    snapshot = env.get_state()
    assert {"agent_pos", "agent_vel", "landmark_pos", "t"} <= set(snapshot)
    assert snapshot["agent_pos"].shape == (4, env.num_agents, 2)
    actions = [random_actions(env, gen) for _ in range(30)]
    first = [{g: o.clone() for g, o in env.step(a)[0].items()} for a in actions]
    env.set_state(snapshot)
    again = [{g: o.clone() for g, o in env.step(a)[0].items()} for a in actions]
    assert_traces_equal(first, again)
    # clone world 0 onto 2 and 3: they then evolve exactly like world 0 under the same actions
    env.set_state(snapshot)
    env.clone_worlds([0, 0], [2, 3])
    state = env.get_state()
    for key in state:
        assert torch.equal(state[key][2], state[key][0]) and torch.equal(state[key][3], state[key][0])
    for _ in range(40):
        a = random_actions(env, gen)
        a = {g: x[[0, 1, 0, 0]] for g, x in a.items()}
        obs = env.step(a)[0]
        for g in env.groups:
            assert torch.equal(obs[g][2], obs[g][0]) and torch.equal(obs[g][3], obs[g][0])
    # set_state on a subset of worlds leaves the others untouched
    before = env.get_state()
    env.set_state({"agent_pos": torch.zeros(1, env.num_agents, 2, dtype=torch.float64) + 0.25}, worlds=[1])
    after = env.get_state()
    assert torch.all(after["agent_pos"][1] == 0.25)
    assert torch.equal(after["agent_pos"][[0, 2, 3]], before["agent_pos"][[0, 2, 3]])


def test_state_is_every_agents_observation_in_order():
    env = war_envs.make("PredatorPrey-v0", num_envs=3)
    obs = env.reset(seed=0)
    state = env.state()
    assert state.shape == (3, env.state_dim) == (3, 3 * 16 + 14)
    expected = torch.cat([obs["adversary"].reshape(3, -1), obs["agent"].reshape(3, -1)], dim=1)
    assert torch.equal(state, expected)


def test_spread_task_metrics_recompute_the_reward():
    env = war_envs.make("Spread-v0", num_envs=16, precision="float64", local_ratio=0.25)
    env.reset(seed=0)
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        _, rew, _, _, info = env.step(random_actions(env, gen))
        g = -info["landmark_min_dist"].sum(dim=1, keepdim=True)
        local = -info["collisions"].double()
        torch.testing.assert_close(rew["agent"], g * 0.75 + local * 0.25, rtol=0, atol=1e-12)
        pos = env.get_state()["agent_pos"]
        lm = env.get_state()["landmark_pos"]
        d = torch.cdist(lm, pos).min(dim=2).values
        torch.testing.assert_close(info["landmark_min_dist"], d, rtol=0, atol=1e-12)
        assert torch.equal(info["occupied_landmarks"], (d < 0.1).sum(dim=1).int())


def test_spread_landmark_range_scales_the_landmark_starts_only():
    # landmark_range=r draws landmarks from U[-r, r)^2 (0.8: the MAPPO paper's on-policy code);
    # agents keep U[-1, 1)^2, and the default (1.0) is mpe2's distribution (see the reference tests).
    wide = war_envs.make("Spread-v0", num_envs=4096, seed=3)
    narrow = war_envs.make("Spread-v0", num_envs=4096, seed=3, landmark_range=0.8)
    wide.reset(seed=3)
    narrow.reset(seed=3)
    w, n = wide.get_state(), narrow.get_state()
    assert torch.equal(w["agent_pos"], n["agent_pos"])
    assert float(n["landmark_pos"].abs().max()) < 0.8 < float(w["landmark_pos"].abs().max())
    assert float(n["landmark_pos"].abs().max()) > 0.79
    torch.testing.assert_close(n["landmark_pos"], w["landmark_pos"] * 0.8, rtol=0, atol=1e-6)


def test_predator_prey_metrics():
    env = war_envs.make("PredatorPrey-v0", num_envs=1, precision="float64")
    env.reset(seed=0)
    env.set_state({"agent_pos": torch.tensor([[[0.0, 0.0], [0.05, 0.0], [0.5, 0.5], [0.02, 0.02]]],
                                             dtype=torch.float64),
                   "agent_vel": torch.zeros(1, 4, 2, dtype=torch.float64)})
    _, rew, _, _, info = env.step({"adversary": torch.zeros(1, 3, dtype=torch.long),
                                   "agent": torch.zeros(1, 1, dtype=torch.long)})
    assert info["collisions"][0].tolist() == [1, 1, 0, 2]
    assert rew["adversary"][0].tolist() == [20.0, 20.0, 20.0]
    assert rew["agent"][0, 0].item() == -20.0


def test_import_is_quiet():
    result = subprocess.run([sys.executable, "-c", "import war_envs"], capture_output=True, text=True,
                            env={**os.environ, "WAR_ENVS_VERBOSE": ""})
    assert result.returncode == 0
    assert result.stdout == "" and result.stderr == ""


def test_spaces_contain_what_is_returned():
    for kwargs in ({}, {"continuous_actions": True}, {"num_agent_neighbors": 1}):
        env = war_envs.make("PredatorPrey-v0", num_envs=2, **kwargs)
        obs = env.reset(seed=0)
        for g, spec in env.groups.items():
            assert obs[g].dtype == torch.float32
            assert obs[g].shape == (2, spec.n_agents, spec.obs_dim)
            for row in obs[g].reshape(-1, spec.obs_dim).numpy():
                assert spec.observation_space.contains(row)
            sample = np.stack([spec.action_space.sample() for _ in range(2 * spec.n_agents)])
            sample = sample.reshape(2, spec.n_agents, *spec.action_space.shape)
            env.step({g2: torch.from_numpy(sample) if g2 == g else
                      torch.zeros((2, s.n_agents, *s.action_space.shape),
                                  dtype=torch.float32 if env.continuous_actions else torch.int64)
                      for g2, s in env.groups.items()})


def test_obs_dims_match_mpe2_defaults():
    assert war_envs.make("Spread-v0").groups["agent"].obs_dim == 18
    pp = war_envs.make("PredatorPrey-v0")
    assert pp.groups["adversary"].obs_dim == 16 and pp.groups["agent"].obs_dim == 14
    assert pp.agents == ["adversary_0", "adversary_1", "adversary_2", "agent_0"]
