"""CollectTreasure-v0 against mpe2 ``collect_treasure_v1``: full episodes from identical states
with identical actions (mpe2's in-episode respawn draws replaced by ours, which come from a
different generator), pickups / deliveries / respawns, the reset and respawn distributions,
spaces, state fields and argument checks."""

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
from mpe2_reference import (copy_world_into_reference, make_reference, random_actions,  # noqa: E402
                            reference_world, to_reference_actions)
from mpe2_reset_sampling import (assert_agents_and_spaces_match, assert_same_continuous,  # noqa: E402
                                 assert_same_frequencies, our_resets, reference_resets)

ENV = "CollectTreasure-v0"
TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "lpos": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "lpos": 1e-4, "rew": 1e-4, "obs_rel": 1e-4}}


class ChosenDraws:
    """Stands in for mpe2's world.np_random during one post_step: returns, in mpe2's call order
    (per dead treasure: uniform() for the respawn probability, uniform(-b, b, 2), integers(0, n)),
    the values our step drew."""

    def __init__(self, values):
        self.values = list(values)

    def uniform(self, low=0.0, high=1.0, size=None):
        value = self.values.pop(0)
        if size is None:
            assert low == 0.0 and high == 1.0
            return value
        assert size == 2 and low == -0.95 and high == 0.95
        return np.asarray(value, dtype=np.float64).copy()

    def integers(self, low, high):
        value = self.values.pop(0)
        assert low <= value < high
        return value


def copy_treasures(ours, raw, world):
    """Our treasure types, alive flags and holdings into mpe2's objects (colours as mpe2 sets
    them), and a hook so mpe2's in-episode respawns take our draws: before each of mpe2's
    post_steps (run after ours has stepped), its generator is replaced by the values our step
    drew for the treasures that are dead at that point (the ones mpe2 is about to respawn)."""
    s = ours.get_state()
    world_ = raw.world
    for l, lm in enumerate(world_.landmarks):
        lm.type = int(s["treasure_type"][world, l])
        lm.alive = bool(s["treasure_alive"][world, l])
        lm.color = world_.treasure_colors[lm.type].copy()
    for c, agent in enumerate(a for a in world_.agents if a.collector):
        held = int(s["holding"][world, c])
        agent.holding = None if held == 0 else held - 1
        agent.color = np.array([0.85, 0.85, 0.85]) if held == 0 else 0.85 * world_.treasure_colors[held - 1]
    scenario = raw.scenario
    original = scenario.__dict__.get("_original_post_step", scenario.post_step)
    scenario._original_post_step = original

    def post_step(w):
        now = ours.get_state()
        draws = []
        for l, lm in enumerate(w.landmarks):
            if not lm.alive:
                draws += [0.0, now["landmark_pos"][world, l].double().numpy(), int(now["treasure_type"][world, l])]
        w._np_random = ChosenDraws(draws)
        scenario.respawns = getattr(scenario, "respawns", 0) + len(draws) // 3
        original(w)
        assert not w._np_random.values, "mpe2 respawned fewer treasures than we did"

    scenario.post_step = post_step


def reference_state(raw):
    world = raw.world
    collectors = [a for a in world.agents if a.collector]
    return {"treasure_type": [lm.type for lm in world.landmarks],
            "treasure_alive": [lm.alive for lm in world.landmarks],
            "holding": [0 if a.holding is None else a.holding + 1 for a in collectors],
            "landmark_pos": np.array([lm.state.p_pos for lm in world.landmarks])}


def compare_episode(*, precision, seed=0, action_seed=1, start_state=None, steps=None, **kwargs):
    """One episode in both, our respawn draws fed to mpe2; returns max errors, event counts."""
    ours = war_envs.make(ENV, num_envs=1, seed=seed, precision=precision, autoreset_mode="disabled", **kwargs)
    par, raw = make_reference(ENV, **kwargs)
    ours.reset()
    if start_state is not None:
        ours.set_state(start_state)
    copy_world_into_reference(ours, raw, copy_extra=copy_treasures)
    steps = steps or ours.max_cycles
    report = {"pos": 0.0, "vel": 0.0, "lpos": 0.0, "rew": 0.0, "obs_rel": 0.0, "flags_equal": True,
              "state_equal": True, "colors_equal": True, "steps": 0, "pickups": 0, "deliveries": 0,
              "respawns": 0}
    rng = np.random.default_rng(action_seed)
    for t, step in enumerate(random_actions(rng, ours, steps)):
        obs, rew, term, trunc, info = ours.step({g: torch.from_numpy(a) for g, a in step.items()})
        after = ours.get_state()
        r_obs, r_rew, r_term, r_trunc, _ = par.step(to_reference_actions(ours, step))
        report["pickups"] += int(info["pickups"][0])
        report["deliveries"] += int(info["deliveries"][0])
        pos, vel = reference_world(raw)
        ref = reference_state(raw)
        report["pos"] = max(report["pos"], float(np.abs(after["agent_pos"][0].double().numpy() - pos).max()))
        report["vel"] = max(report["vel"], float(np.abs(after["agent_vel"][0].double().numpy() - vel).max()))
        report["lpos"] = max(report["lpos"], float(np.abs(after["landmark_pos"][0].double().numpy()
                                                          - ref["landmark_pos"]).max()))
        for key in ("treasure_type", "treasure_alive", "holding"):
            if after[key][0].tolist() != ref[key]:
                report["state_equal"] = False
        ref_colors = np.array([e.color for e in raw.world.entities], dtype=np.float64)
        if not np.allclose(ours._entity_colors(0), ref_colors, atol=1e-12):
            report["colors_equal"] = False
        for g, spec in ours.groups.items():
            for k, name in enumerate(spec.agents):
                ours_o = obs[g][0, k].double().numpy()
                ref_o = np.asarray(r_obs[name], dtype=np.float64)
                assert ours_o.shape == ref_o.shape
                err = np.abs(ours_o - ref_o)
                report["obs_rel"] = max(report["obs_rel"], float((err / np.maximum(1.0, np.abs(ref_o))).max()))
                report["rew"] = max(report["rew"], abs(float(rew[g][0, k]) - float(r_rew[name])))
                if bool(term[g][0, k]) != bool(r_term[name]) or bool(trunc[g][0, k]) != bool(r_trunc[name]):
                    report["flags_equal"] = False
        report["steps"] = t + 1
    report["respawns"] = getattr(raw.scenario, "respawns", 0)
    ours.close()
    par.close()
    return report


def assert_matches(report, precision):
    assert report["flags_equal"] and report["state_equal"] and report["colors_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


def busy_start(seed, precision, num_collectors=6, num_deposits=2, num_treasures=6, spread=0.35):
    """A crowded start (float32-representable): agents and treasures near the centre, some
    collectors already holding a treasure, some treasures dead: pickups, deliveries, respawns
    and collector overlaps from the first steps."""
    dtype = torch.float64 if precision == "float64" else torch.float32
    rng = np.random.default_rng(seed)
    a = num_collectors + num_deposits
    pos = rng.uniform(-spread, spread, (1, a, 2)).astype(np.float32)
    lpos = rng.uniform(-spread, spread, (1, num_treasures, 2)).astype(np.float32)
    alive = rng.random((1, num_treasures)) < 0.7
    lpos[~alive] = -999.0
    return {"agent_pos": torch.tensor(pos, dtype=dtype), "landmark_pos": torch.tensor(lpos, dtype=dtype),
            "treasure_type": torch.tensor(rng.integers(0, num_deposits, (1, num_treasures)), dtype=torch.int32),
            "treasure_alive": torch.tensor(alive),
            "holding": torch.tensor(rng.integers(0, num_deposits + 1, (1, num_collectors)), dtype=torch.int32)}


CASES = [{}, {"continuous_actions": True}, {"num_collectors": 1, "num_deposits": 1, "num_treasures": 1},
         {"num_collectors": 3, "num_deposits": 3, "num_treasures": 8, "continuous_actions": True},
         {"num_collectors": 9, "num_deposits": 6, "num_treasures": 2}, {"max_cycles": 60}]


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7):
        report = compare_episode(precision=precision, seed=seed, action_seed=seed + 1, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert_matches(report, precision)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", [{}, {"continuous_actions": True},
                                    {"num_collectors": 4, "num_deposits": 3, "num_treasures": 9}], ids=str)
def test_busy_episodes_match_mpe2(kwargs, precision):
    """Crowded starts: every event kind happens (and is compared) within the episodes."""
    totals = {"pickups": 0, "deliveries": 0, "respawns": 0}
    sizes = {k: kwargs[k] for k in ("num_collectors", "num_deposits", "num_treasures") if k in kwargs}
    for seed in range(6):
        report = compare_episode(precision=precision, seed=seed, action_seed=seed + 11, max_cycles=40,
                                 start_state=busy_start(seed, precision, **sizes), **kwargs)
        assert_matches(report, precision)
        for key in totals:
            totals[key] += report[key]
    assert min(totals.values()) >= 3, totals


# ------------------------------------------------------------------ respawn stream
def test_respawns_follow_mpe2s_distribution():
    """Every dead treasure respawns at the next step, position ~ U[-0.95, 0.95)², type uniform:
    our respawns (3000 worlds) against mpe2's (1000 episodes x 6 treasures)."""
    n = 3000
    env = war_envs.make(ENV, num_envs=n, seed=5, precision="float64")
    env.reset(seed=5)
    env.set_state({"treasure_alive": torch.zeros(n, 6, dtype=torch.bool),
                   "landmark_pos": torch.full((n, 6, 2), -999.0, dtype=torch.float64)})
    _, _, _, _, info = env.step({"collector": torch.zeros(n, 6, dtype=torch.int64),
                                 "deposit": torch.zeros(n, 2, dtype=torch.int64)})
    s = env.get_state()
    assert bool(s["treasure_alive"].all()) and int(info["pickups"].sum()) == 0
    ours_pos, ours_type = s["landmark_pos"].numpy(), s["treasure_type"].numpy()
    env.close()
    par, raw = make_reference(ENV)
    ref_pos, ref_type = [], []
    for k in range(1000):
        par.reset(seed=k)
        for lm in raw.world.landmarks:
            lm.alive = False
            lm.state.p_pos = np.array([-999.0, -999.0])
        par.step({a: 0 for a in par.agents})
        ref_pos.append([lm.state.p_pos for lm in raw.world.landmarks])
        ref_type.append([lm.type for lm in raw.world.landmarks])
    par.close()
    ours_flat = ours_pos.reshape(-1, 1, 2)
    ref_flat = np.asarray(ref_pos).reshape(-1, 1, 2)
    assert_same_continuous(ours_flat, ref_flat, "respawn_pos")
    assert_same_frequencies(ours_type, np.asarray(ref_type), [0, 1], "respawn_type")


def test_respawn_stream_is_keyed_by_seed_episode_and_step():
    def respawn_run(seed, resets=1, steps=2):
        env = war_envs.make(ENV, num_envs=4, seed=seed, precision="float64", autoreset_mode="disabled")
        env.reset(seed=seed)
        for _ in range(resets - 1):
            env.reset()  # the next episode of every world
        out = []
        for _ in range(steps):
            env.set_state({"treasure_alive": torch.zeros(4, 6, dtype=torch.bool)})
            env.step({"collector": torch.zeros(4, 6, dtype=torch.int64),
                      "deposit": torch.zeros(4, 2, dtype=torch.int64)})
            out.append(env.get_state()["landmark_pos"].clone())
        env.close()
        return out

    a, b = respawn_run(3), respawn_run(3)
    assert all(torch.equal(x, y) for x, y in zip(a, b))  # replays under the same seed
    assert not torch.equal(a[0], a[1])  # differs between steps
    assert not torch.equal(a[0][0], a[0][1])  # and between worlds
    c = respawn_run(3, resets=2)
    assert not torch.equal(a[0], c[0])  # and between episodes
    assert not torch.equal(a[0], respawn_run(4)[0])  # and seeds


# ------------------------------------------------------------------ reset, spaces, state
def test_agents_and_spaces_match_mpe2():
    assert_agents_and_spaces_match(ENV)
    assert_agents_and_spaces_match(ENV, continuous_actions=True)
    assert_agents_and_spaces_match(ENV, num_collectors=2, num_deposits=4, num_treasures=3)
    env = war_envs.make(ENV)
    assert env.groups["collector"].obs_dim == 86 and env.groups["deposit"].obs_dim == 84
    env.close()


def test_reset_distribution_matches_mpe2():
    n = 3000
    ours = our_resets(ENV, n, num_deposits=3)
    ref = reference_resets(ENV, n, lambda raw: {
        "agent_pos": np.array([a.state.p_pos for a in raw.world.agents]),
        "landmark_pos": np.array([lm.state.p_pos for lm in raw.world.landmarks]),
        "treasure_type": np.array([lm.type for lm in raw.world.landmarks])}, num_deposits=3)
    for key in ("agent_pos", "landmark_pos"):
        assert ours[key].shape == ref[key].shape
        assert_same_continuous(ours[key], ref[key], key)
    assert_same_frequencies(ours["treasure_type"], ref["treasure_type"], [0, 1, 2], "treasure_type")
    assert ours["treasure_alive"].all() and (ours["holding"] == 0).all()
    assert np.all(ours["agent_vel"] == 0)


def test_state_fields_change_observations_as_mpe2():
    """set_state of holding / treasure type / alive changes what agents see exactly as mpe2."""
    env = war_envs.make(ENV, num_envs=1, seed=0, precision="float64")
    env.reset(seed=0)
    par, raw = make_reference(ENV)
    state = {"holding": torch.tensor([[2, 0, 1, 0, 0, 0]], dtype=torch.int32),
             "treasure_type": torch.tensor([[1, 1, 0, 1, 0, 0]], dtype=torch.int32),
             "treasure_alive": torch.tensor([[True, False, True, True, False, True]])}
    obs = env.set_state(state)
    copy_world_into_reference(env, raw, copy_extra=copy_treasures)
    for g, spec in env.groups.items():
        for k, name in enumerate(spec.agents):
            ref = raw.scenario.observation(raw.world.agents[spec.start + k], raw.world).astype(np.float32)
            assert np.array_equal(obs[g][0, k].numpy(), ref), name
    # collector 0 holds type 1: its holding one-hot follows its own position and velocity
    assert obs["collector"][0, 0, 4:6].tolist() == [0.0, 1.0]
    env.close()
    par.close()


def test_bad_state_values_are_refused():
    env = war_envs.make(ENV, num_envs=1)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="holding"):
        env.set_state({"holding": torch.full((1, 6), 3, dtype=torch.int32)})
    with pytest.raises(ValueError, match="treasure_type"):
        env.set_state({"treasure_type": torch.full((1, 6), 2, dtype=torch.int32)})
    with pytest.raises(TypeError, match="treasure_alive"):
        env.set_state({"treasure_alive": torch.ones(1, 6, dtype=torch.int32)})
    env.close()


def test_render_leaves_dead_treasures_out():
    env = war_envs.make(ENV, num_envs=1)
    env.reset(seed=0)
    env.set_state({"treasure_alive": torch.tensor([[False] * 6]),
                   "landmark_pos": torch.full((1, 6, 2), -999.0)})
    frame = env.render_frame(0)
    assert frame.shape == (700, 700, 3) and frame.dtype == np.uint8
    env.close()


@pytest.mark.parametrize("kwargs,name", [
    ({"num_collectors": 0}, "num_collectors"), ({"num_deposits": 0}, "num_deposits"),
    ({"num_deposits": 7}, "num_deposits"), ({"num_treasures": 0}, "num_treasures"),
    ({"num_treasures": 1.5}, "num_treasures"), ({"max_cycles": 0}, "max_cycles"),
    ({"curriculum": True}, "curriculum"), ({"terminate_on_success": True}, "terminate_on_success"),
    ({"num_agent_neighbors": 2}, "num_agent_neighbors"), ({"num_landmark_neighbors": 2}, "num_landmark_neighbors"),
])
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        war_envs.make(ENV, **kwargs)
