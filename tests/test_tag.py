"""Tag-v0: full episodes against the numpy reference (runners leaving, end-of-game reward,
autoreset), bitwise determinism (repeats, CPU sharding, neighbour-grid cell size), world
slicing, state snapshots, presets and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import war_envs
from war_envs.scenarios.tag.tag import TAG_DEFAULTS, TAG_TRAINING_PRESET, Tag
from tag_reference import DEFAULTS as REFERENCE_DEFAULTS
from tag_reference import TagReference

# a small, busy game: many tags, edge hits, step terms, early terminations and truncations
BUSY = dict(num_taggers=4, num_runners=8, grid_length=10.0, episode_length=40, tagging_distance=0.15,
            edge_hit_penalty=-0.5, step_penalty_for_tagger=-0.01, step_reward_for_runner=0.02,
            tag_reward_for_tagger=2.0, tag_penalty_for_runner=-3.0, end_of_game_reward_for_runner=5.0)


def random_actions(env, gen):
    out = {}
    for g, spec in env.groups.items():
        n0, n1 = (int(n) for n in spec.action_space.nvec)
        acc = torch.randint(0, n0, (env.num_envs, spec.n_agents, 1), generator=gen)
        turn = torch.randint(0, n1, (env.num_envs, spec.n_agents, 1), generator=gen)
        out[g] = torch.cat([acc, turn], dim=2)
    return out


def joint(env, per_group):
    """{group: [E, n_g, ...]} -> [E, A, ...] in agent order."""
    return torch.cat([per_group[g] for g in env.groups], dim=1)


def reference_from(env, w, config, dtype):
    state = env.get_state()
    ref = TagReference(config, dtype=dtype)
    ref.set_state(state["agent_pos"][w].numpy(), state["agent_speed"][w].numpy(),
                  state["agent_dir"][w].numpy(), state["agent_acc"][w].numpy(),
                  state["alive"][w].numpy(), int(state["t"][w]))
    return ref


def test_reference_defaults_are_warpdrive_defaults():
    assert REFERENCE_DEFAULTS == TAG_DEFAULTS


@pytest.mark.parametrize("config", [
    pytest.param(dict(BUSY, use_full_observation=False, num_other_agents_observed=4), id="k-nearest"),
    pytest.param(dict(BUSY, use_full_observation=True), id="full"),
    pytest.param(dict(BUSY, runner_exits_game_after_tagged=False, use_full_observation=False,
                      num_other_agents_observed=11), id="runners-stay-k-all"),
])
def test_kernels_match_reference_for_full_episodes_float64(config):
    """float64 worlds: every output of every step agrees with the numpy reference to 1e-9
    across several SAME_STEP episodes per world (the final observation of each episode too)."""
    E = 4
    env = war_envs.make("Tag-v0", num_envs=E, precision="float64", seed=3, **config)
    env.reset()
    refs = [reference_from(env, w, config, np.float64) for w in range(E)]
    gen = torch.Generator().manual_seed(1)
    seen = {"tags": 0, "terminated": 0, "truncated": 0, "end_reward": 0, "edge": 0, "episodes": 0}
    for _ in range(3 * config["episode_length"]):
        actions = random_actions(env, gen)
        obs, rew, term, trunc, info = env.step(actions)
        a = joint(env, actions).numpy()
        obs_j, rew_j = joint(env, obs).numpy(), joint(env, rew).numpy()
        term_j, trunc_j = joint(env, term).numpy(), joint(env, trunc).numpy()
        final_j = joint(env, info["final_obs"]).numpy()
        alive_j = joint(env, info["alive"]).numpy()
        state = env.get_state()
        for w in range(E):
            out = refs[w].step(a[w])
            done = out["terminated"] or out["truncated"]
            got_obs = final_j[w] if done else obs_j[w]
            np.testing.assert_allclose(got_obs, out["obs"], rtol=0, atol=1e-6)
            np.testing.assert_allclose(rew_j[w], out["reward"], rtol=0, atol=1e-9)
            assert (term_j[w] == out["agent_terminated"]).all() and (trunc_j[w] == out["agent_truncated"]).all()
            assert bool(info["_final_obs"][w]) == done
            assert (info["tags"][w].numpy() == out["tags"]).all()
            assert (info["edge_hits"][w].numpy() == out["edge_hits"]).all()
            assert int(info["runners_left"][w]) == out["runners_left"]
            seen["tags"] += int(out["tags"][env.num_taggers:].sum())
            seen["terminated"] += int(out["terminated"])
            seen["truncated"] += int(out["truncated"])
            seen["end_reward"] += int(out["truncated"])
            seen["edge"] += int(out["edge_hits"].sum())
            if done:
                seen["episodes"] += 1
                assert alive_j[w].all() and int(state["t"][w]) == 0  # the next episode's start
                refs[w] = reference_from(env, w, config, np.float64)
            else:
                assert (alive_j[w] == out["alive"]).all()
                np.testing.assert_allclose(state["agent_pos"][w].numpy(), refs[w].pos, rtol=0, atol=1e-9)
                np.testing.assert_allclose(state["agent_speed"][w].numpy(), refs[w].speed, rtol=0, atol=1e-9)
                np.testing.assert_allclose(state["agent_acc"][w].numpy(), refs[w].acc, rtol=0, atol=1e-9)
    assert seen["tags"] > 20 and seen["edge"] > 20 and seen["episodes"] >= 6
    assert seen["truncated"] >= 1 and seen["end_reward"] >= 1
    if config.get("runner_exits_game_after_tagged", True):
        assert seen["terminated"] >= 1  # some worlds lose every runner before the time limit


def test_kernels_match_reference_float32_step_by_step():
    """float32 worlds (WarpDrive's precision): from the env's state at every step, one reference
    step agrees to float32 tolerance and every discrete outcome is identical."""
    config = dict(BUSY, use_full_observation=False, num_other_agents_observed=5)
    E = 3
    env = war_envs.make("Tag-v0", num_envs=E, precision="float32", seed=8, autoreset_mode="disabled",
                        **config)
    env.reset()
    gen = torch.Generator().manual_seed(2)
    tags = 0
    for _ in range(config["episode_length"]):
        refs = [reference_from(env, w, config, np.float32) for w in range(E)]
        actions = random_actions(env, gen)
        obs, rew, term, trunc, info = env.step(actions)
        a = joint(env, actions).numpy()
        state = env.get_state()
        for w in range(E):
            out = refs[w].step(a[w])
            np.testing.assert_allclose(joint(env, obs).numpy()[w], out["obs"], rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(joint(env, rew).numpy()[w], out["reward"], rtol=0, atol=1e-5)
            np.testing.assert_allclose(state["agent_pos"][w].numpy(), refs[w].pos, rtol=0, atol=1e-5)
            assert (info["tags"][w].numpy() == out["tags"]).all()
            assert (state["alive"][w].numpy() == out["alive"]).all()
            assert (joint(env, term).numpy()[w] == out["agent_terminated"]).all()
            tags += int(out["tags"][env.num_taggers:].sum())
        if info["runners_left"].eq(0).all():
            break
    assert tags > 10


def test_training_preset_matches_reference_for_an_episode_prefix():
    """The WarpDrive training preset (110 agents, k = 10, a 10 x 10 neighbour grid)."""
    env = war_envs.make("Tag-v0", preset="warpdrive_training", num_envs=2, precision="float64", seed=0)
    env.reset()
    refs = [reference_from(env, w, TAG_TRAINING_PRESET, np.float64) for w in range(2)]
    gen = torch.Generator().manual_seed(0)
    for _ in range(60):
        actions = random_actions(env, gen)
        obs, rew, *_ = env.step(actions)
        a = joint(env, actions).numpy()
        for w in range(2):
            out = refs[w].step(a[w])
            np.testing.assert_allclose(joint(env, obs).numpy()[w], out["obs"], rtol=0, atol=1e-6)
            np.testing.assert_allclose(joint(env, rew).numpy()[w], out["reward"], rtol=0, atol=1e-9)


# ----------------------------------------------------------------------------- determinism
def rollout(steps=60, seed=5, **kwargs):
    env = war_envs.make("Tag-v0", **{"num_envs": 5, "seed": seed, **BUSY,
                                     "use_full_observation": False, "num_other_agents_observed": 4,
                                     **kwargs})
    gen = torch.Generator().manual_seed(0)
    trace = [{g: o.clone() for g, o in env.reset().items()}]
    for _ in range(steps):
        obs, rew, term, trunc, info = env.step(random_actions(env, gen))
        trace.append([{g: x.clone() for g, x in part.items()} for part in (obs, rew, term, trunc)]
                     + [{k: x.clone() for k, x in env.get_state().items()}, info["tags"].clone()])
    env.close()
    return trace


def assert_same(a, b):
    torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_same_seed_is_bitwise_identical_including_sharded_and_any_cell_size(precision):
    base = rollout(precision=precision)
    assert_same(base, rollout(precision=precision))
    assert_same(base, rollout(precision=precision, num_threads=2))
    assert_same(base, rollout(precision=precision, cell_size=10.0))  # one cell: brute force
    assert_same(base, rollout(precision=precision, cell_size=0.37))  # many small cells
    other = rollout(precision=precision, seed=6, steps=1)
    assert not torch.equal(other[0]["runner"], base[0]["runner"])


def test_world_w_equals_world_zero_of_env_seeded_s_plus_w():
    s, E = 40, 3
    big = war_envs.make("Tag-v0", num_envs=E, **BUSY)
    smalls = [war_envs.make("Tag-v0", num_envs=1, **BUSY) for _ in range(E)]
    big.reset(seed=s)
    for w, env in enumerate(smalls):
        env.reset(seed=s + w)
    gen = torch.Generator().manual_seed(0)
    for _ in range(2 * BUSY["episode_length"]):
        actions = random_actions(big, gen)
        out = big.step(actions)
        for w, env in enumerate(smalls):
            small = env.step({g: x[w:w + 1] for g, x in actions.items()})
            for part, part_small in zip(out[:4], small[:4]):
                for g in big.groups:
                    assert torch.equal(part[g][w], part_small[g][0])


def test_every_reset_draws_a_fresh_start_in_range():
    env = war_envs.make("Tag-v0", num_envs=2, seed=0, episode_length=3)
    env.reset()
    starts = [env.get_state()]
    zeros = {g: torch.zeros(2, s.n_agents, 2, dtype=torch.int64) for g, s in env.groups.items()}
    for _ in range(3):
        for _ in range(3):
            env.step(zeros)
        starts.append(env.get_state())
    for s in starts:
        assert (s["agent_pos"] >= 0).all() and (s["agent_pos"] < env.grid_length).all()
        quarter = s["agent_dir"] / (math.pi / 2)
        assert torch.equal(quarter, quarter.round()) and set(quarter.unique().tolist()) <= {0, 1, 2, 3}
        assert (s["agent_speed"] == 0).all() and (s["agent_acc"] == 0).all() and s["alive"].all()
    positions = [s["agent_pos"] for s in starts]
    assert all(not torch.equal(positions[i], positions[j]) for i in range(4) for j in range(i + 1, 4))


# ----------------------------------------------------------------------------- autoreset, state
def test_next_step_and_disabled_autoreset():
    kw = dict(BUSY, episode_length=5, num_envs=2, seed=1)
    nxt = war_envs.make("Tag-v0", autoreset_mode="next_step", **kw)
    off = war_envs.make("Tag-v0", autoreset_mode="disabled", **kw)
    same = war_envs.make("Tag-v0", autoreset_mode="same_step", **kw)
    for env in (nxt, off, same):
        env.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):
        a = random_actions(nxt, gen)
        o_n, r_n, te_n, tr_n, _ = nxt.step(a)
        o_d, r_d, te_d, tr_d, _ = off.step(a)
        o_s, *_ = same.step(a)
        for g in nxt.groups:
            assert torch.equal(o_n[g], o_d[g]) and torch.equal(r_n[g], r_d[g])
    assert tr_n["tagger"].all()
    o_n, r_n, te_n, tr_n, info = nxt.step(random_actions(nxt, gen))  # only resets
    for g in nxt.groups:
        assert torch.equal(o_n[g], o_s[g]) and (r_n[g] == 0).all() and not te_n[g].any() and not tr_n[g].any()
    assert info["alive"]["runner"].all() and (info["t"] == 0).all()
    before = off.get_state()
    off.reset(mask=torch.tensor([False, True]))
    after = off.get_state()
    assert torch.equal(after["agent_pos"][0], before["agent_pos"][0]) and after["t"].tolist() == [5, 0]
    assert not off._term["runner"][1].any() and not off._trunc["tagger"][1].any()


def test_get_set_state_round_trip_and_clone_worlds():
    env = war_envs.make("Tag-v0", num_envs=4, precision="float64", seed=2, **BUSY)
    env.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(10):
        env.step(random_actions(env, gen))
    snap = env.get_state()
    assert {"agent_pos", "agent_vel", "landmark_pos", "t", "alive"} <= set(snap)
    assert snap["agent_pos"].shape == (4, 12, 2) and snap["alive"].dtype == torch.bool
    assert snap["landmark_pos"].shape == (4, 0, 2)
    actions = [random_actions(env, gen) for _ in range(30)]
    first = [[{g: x.clone() for g, x in part.items()} for part in env.step(a)[:4]] for a in actions]
    env.set_state(snap)
    again = [[{g: x.clone() for g, x in part.items()} for part in env.step(a)[:4]] for a in actions]
    assert_same(first, again)
    env.set_state(snap)
    env.clone_worlds([0, 0], [2, 3])
    for _ in range(30):
        a = {g: x[[0, 1, 0, 0]] for g, x in random_actions(env, gen).items()}
        obs = env.step(a)[0]
        for g in env.groups:
            assert torch.equal(obs[g][2], obs[g][0]) and torch.equal(obs[g][3], obs[g][0])


def test_set_state_observes_the_given_state_and_leaves_other_worlds_alone():
    """A runner put out of the game by set_state sees zeros and vanishes from the others'
    k-nearest lists at once; worlds not named keep their observations."""
    env = war_envs.make("Tag-v0", num_envs=2, seed=0, use_full_observation=False, num_other_agents_observed=3)
    obs = env.reset()
    keep = {g: o[0].clone() for g, o in obs.items()}
    s = env.get_state()
    pos = torch.zeros(1, 11, 2)
    pos[0, :, 0] = torch.arange(11, dtype=torch.float32) * 0.5
    alive = torch.ones(1, 11, dtype=torch.bool)
    alive[0, 2] = False  # runner_1
    obs = env.set_state({"agent_pos": pos, "alive": alive}, worlds=[1])
    for g in env.groups:
        assert torch.equal(obs[g][0], keep[g])
    assert (obs["runner"][1, 1] == 0).all()
    # agent 0 (tagger, x = 0): nearest in the game are agents 1, 3, 4 -> dx = 0.5, 1.5, 2.0 over sqrt2 L
    np.testing.assert_allclose(obs["tagger"][1, 0, :3].numpy(), np.array([0.5, 1.5, 2.0]) / (math.sqrt(2) * 10),
                               rtol=1e-6)
    assert obs["tagger"][1, 0, 5 * 3:6 * 3].tolist() == [0, 0, 0]  # runners
    assert obs["tagger"][1, 0, 6 * 3:7 * 3].tolist() == [1, 1, 1]  # in the game
    assert s["agent_pos"].shape == (2, 11, 2)


def test_alive_views_and_metrics():
    env = war_envs.make("Tag-v0", num_envs=1, seed=0, tagging_distance=0.05)
    env.reset()
    # runner_0 (agent 1) right next to the tagger: tagged on the first step
    pos = env.get_state()["agent_pos"].clone()
    pos[0, 1] = pos[0, 0] + 0.01
    env.set_state({"agent_pos": pos})
    zeros = {g: torch.zeros(1, s.n_agents, 2, dtype=torch.long) for g, s in env.groups.items()}
    obs, rew, term, trunc, info = env.step(zeros)
    assert info["tags"][0, :2].tolist() == [1, 1] and info["runners_left"].item() == 9
    assert rew["tagger"][0, 0].item() == 1.0 and rew["runner"][0, 0].item() == -1.0
    assert term["runner"][0].tolist() == [True] + [False] * 9 and not term["tagger"].any()
    assert info["alive"]["runner"][0, 0].item() is False and env.alive_mask["tagger"].all()
    assert obs["runner"][0, 0, -1].item() > 0  # observed before the tag (WarpDrive's order)
    obs, rew, term, *_ = env.step(zeros)
    assert rew["runner"][0, 0].item() == 0.0 and term["runner"][0, 0]
    assert (obs["runner"][0, 0, :5 * 10] == 0).all() and obs["runner"][0, 0, -1] == 0  # out: zeros
    assert obs["runner"][0, 0, 5 * 10] == 1  # ... but still sees types (full observation)
    assert obs["tagger"][0, 0, 6 * 10] == 0  # the others see runner_0 out of the game


# ----------------------------------------------------------------------------- presets, spaces
def test_defaults_preset_and_spaces():
    env = war_envs.make("Tag-v0")
    assert env.agents == ["tagger_0"] + [f"runner_{i}" for i in range(10)]
    assert env.config == TAG_DEFAULTS and env.max_cycles == 100
    spec = env.groups["runner"]
    assert spec.action_space.nvec.tolist() == [11, 11] and spec.obs_dim == 7 * 10 + 1
    acc, turn = Tag.action_tables(env.config, np.float32)
    assert acc[0] == 0 and acc[1] == -1 and acc[-1] == 1 and len(acc) == 11
    assert turn[1] == np.float32(-math.pi / 2)
    pre = war_envs.make("Tag-v0", preset="warpdrive_training")
    assert pre.config == {**TAG_DEFAULTS, **TAG_TRAINING_PRESET}
    assert pre.groups["tagger"].n_agents == 10 and pre.groups["runner"].obs_dim == 71
    assert pre.groups["runner"].action_space.nvec.tolist() == [21, 21]
    override = war_envs.make("Tag-v0", preset="warpdrive_training", num_runners=50, num_taggers=1)
    assert override.num_runners == 50 and override.episode_length == 500 and override.num_taggers == 1
    obs = pre.reset(seed=0)
    for g, s in pre.groups.items():
        assert obs[g].dtype == torch.float32
        for row in obs[g].reshape(-1, s.obs_dim).numpy()[:5]:
            assert s.observation_space.contains(row)
    assert pre.state().shape == (1, 110 * 71)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,error,match", [
    ({"preset": "warpdrive"}, ValueError, "preset: expected one of"),
    ({"num_taggers": 0}, ValueError, "num_taggers: expected an int >= 1"),
    ({"num_runners": 1.5}, TypeError, "num_runners"),
    ({"grid_length": 0.0}, ValueError, "grid_length"),
    ({"episode_length": 0}, ValueError, "episode_length"),
    ({"tagging_distance": 1.5}, ValueError, "tagging_distance"),
    ({"edge_hit_penalty": 1.0}, ValueError, "edge_hit_penalty"),
    ({"tag_penalty_for_runner": 1.0}, ValueError, "tag_penalty_for_runner"),
    ({"num_other_agents_observed": 0}, ValueError, "num_other_agents_observed"),
    ({"num_other_agents_observed": 12}, ValueError, r"at most the number of agents \(11\)"),
    ({"use_full_observation": 1}, TypeError, "use_full_observation: expected a bool"),
    ({"max_speed": float("nan")}, ValueError, "max_speed"),
    ({"cell_size": -1.0}, ValueError, "cell_size"),
    ({"max_cycles": 10}, TypeError, "unknown keyword argument"),
])
def test_make_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        war_envs.make("Tag-v0", **kwargs)


def _twins():
    a = war_envs.make("Tag-v0", num_envs=3, seed=4, **BUSY)
    b = war_envs.make("Tag-v0", num_envs=3, seed=4, **BUSY)
    a.reset()
    b.reset()
    return a, b


def _assert_twins_agree(a, b, steps=10):
    gen = torch.Generator().manual_seed(7)
    for _ in range(steps):
        actions = random_actions(a, gen)
        for x, y in zip(a.step(actions)[:4], b.step(actions)[:4]):
            for g in x:
                assert torch.equal(x[g], y[g])


BAD_ACTIONS = [
    (lambda a: {"tagger": a["tagger"]}, ValueError, r"missing \['runner'\]"),
    (lambda a: {**a, "runner": a["runner"][..., 0]}, ValueError, r"actions\['runner'\]: expected shape \(3, 8, 2\), got \(3, 8\)"),
    (lambda a: {**a, "runner": a["runner"][:, :5]}, ValueError, r"expected shape \(3, 8, 2\)"),
    (lambda a: {**a, "runner": a["runner"].float()}, TypeError, r"actions\['runner'\]\[..., 0\] \(acceleration\): expected an integer dtype"),
    (lambda a: {**a, "tagger": a["tagger"] + torch.tensor([11, 0])}, ValueError,
     r"actions\['tagger'\]\[..., 0\] \(acceleration\): expected Discrete\(11\) actions in \[0, 10\], got \d+"),
    (lambda a: {**a, "tagger": a["tagger"] - torch.tensor([0, 20])}, ValueError, r"\[..., 1\] \(turn\).*got -\d+"),
    (lambda a: {**a, "runner": a["runner"].bool()}, TypeError, "integer dtype"),
    (lambda a: {**a, "runner": "fast"}, TypeError, r"actions\['runner'\]: expected a torch.Tensor"),
]


@pytest.mark.parametrize("mutate,error,match", BAD_ACTIONS)
def test_bad_actions_are_refused_and_nothing_changes(mutate, error, match):
    env, twin = _twins()
    good = random_actions(env, torch.Generator().manual_seed(0))
    with pytest.raises(error, match=match):
        env.step(mutate(good))
    _assert_twins_agree(env, twin)


@pytest.mark.parametrize("state,match", [
    ({"agent_pos": torch.full((3, 12, 2), 10.5)}, r"state\['agent_pos'\]: expected positions in \[0, grid_length=10.0\]"),
    ({"agent_pos": torch.full((3, 12, 2), -0.1)}, "agent_pos"),
    ({"alive": torch.zeros(3, 12, dtype=torch.bool)}, r"state\['alive'\]: taggers never leave"),
    ({"alive": torch.ones(3, 12)}, r"state\['alive'\]: expected dtype torch.bool"),
    ({"agent_speed": torch.full((3, 12), math.nan)}, "expected finite values"),
    ({"pending_reset": torch.full((3,), 2, dtype=torch.int32)}, "pending_reset"),
    ({"agent_dir": torch.zeros(3, 11)}, r"expected shape \(3, 12\)"),
])
def test_bad_set_state_is_refused_and_nothing_changes(state, match):
    env, twin = _twins()
    with pytest.raises((ValueError, TypeError), match=match):
        env.set_state({"agent_acc": torch.zeros(3, 12), **state})
    _assert_twins_agree(env, twin)


def test_numpy_and_any_integer_dtype_are_accepted():
    env, twin = _twins()
    a = random_actions(env, torch.Generator().manual_seed(3))
    env.step({g: x.numpy().astype(np.uint8) for g, x in a.items()})
    twin.step({g: x.int() for g, x in a.items()})
    _assert_twins_agree(env, twin)


def test_render_frame():
    env = war_envs.make("Tag-v0", num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1)
    assert frame.shape == (700, 700, 3) and frame.dtype == np.uint8 and (frame != 255).any()
    with pytest.raises(ValueError, match="world"):
        env.render_frame(2)


@pytest.mark.parametrize("full", [True, False], ids=["full", "partial"])
def test_observe_self_appends_the_observers_own_state_and_changes_nothing_else(full):
    kw = dict(num_envs=4, seed=3, num_taggers=2, num_runners=5, grid_length=3.0, tagging_distance=0.1,
              use_full_observation=full, num_other_agents_observed=3, precision="float64")
    plain, own = war_envs.make("Tag-v0", **kw), war_envs.make("Tag-v0", observe_self=True, **kw)
    assert own.groups["runner"].obs_dim == plain.groups["runner"].obs_dim + 5
    plain.reset(), own.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(40):
        acts = {g: torch.stack([torch.randint(0, int(n), (4, s.n_agents), generator=gen)
                                for n in s.action_space.nvec], -1) for g, s in plain.groups.items()}
        a, b = plain.step(acts), own.step(acts)
        for g in plain.groups:
            assert torch.equal(a[0][g], b[0][g][..., :-5])          # WarpDrive's part is untouched
            assert torch.equal(a[1][g], b[1][g])
    st = own.get_state()
    obs = torch.cat([b[0]["tagger"], b[0]["runner"]], 1)[..., -5:].double()
    alive = st["alive"][..., None]
    expected = torch.stack([st["agent_dir"].cos(), st["agent_dir"].sin(), st["agent_speed"] / (1.0 + 1e-10),
                            st["agent_pos"][..., 0] / 3.0, st["agent_pos"][..., 1] / 3.0], -1)
    done = own.world_flags()[0] | own.world_flags()[1]
    keep = (~done)[:, None, None] & alive      # (a world reset this step shows its new start)
    assert torch.allclose(torch.where(keep, obs, 0.0), torch.where(keep, expected, 0.0), atol=1e-6)
    with pytest.raises(TypeError, match="observe_self"):
        war_envs.make("Tag-v0", observe_self="yes")


@pytest.mark.parametrize("full", [True, False], ids=["full", "partial"])
def test_observe_egocentric_appends_each_listed_offset_in_the_observers_frame(full):
    kw = dict(num_envs=4, seed=5, num_taggers=2, num_runners=5, grid_length=3.0, tagging_distance=0.1,
              use_full_observation=full, num_other_agents_observed=3, precision="float64", observe_self=True)
    plain, ego = war_envs.make("Tag-v0", **kw), war_envs.make("Tag-v0", observe_egocentric=True, **kw)
    n = 6 if full else 3                                  # columns listed
    assert ego.groups["tagger"].obs_dim == plain.groups["tagger"].obs_dim + 2 * n
    plain.reset(), ego.reset()
    gen = torch.Generator().manual_seed(1)
    for _ in range(40):
        acts = {g: torch.stack([torch.randint(0, int(m), (4, s.n_agents), generator=gen)
                                for m in s.action_space.nvec], -1) for g, s in plain.groups.items()}
        a, b = plain.step(acts), ego.step(acts)
        for g in plain.groups:
            assert torch.equal(a[0][g], b[0][g][..., :-2 * n])     # everything before is untouched
            obs = b[0][g].double()
            dx, dy = obs[..., :n], obs[..., n:2 * n]               # WarpDrive's dx, dy rows
            c, s_ = obs[..., 7 * n + 1:7 * n + 2], obs[..., 7 * n + 2:7 * n + 3]   # own heading
            ahead, left = obs[..., -2 * n:-n], obs[..., -n:]
            assert torch.allclose(ahead, dx * c + dy * s_, atol=1e-6)
            assert torch.allclose(left, dy * c - dx * s_, atol=1e-6)
            assert (ahead.abs() + left.abs()).sum() > 0
    with pytest.raises(TypeError, match="observe_egocentric"):
        war_envs.make("Tag-v0", observe_egocentric=1)
