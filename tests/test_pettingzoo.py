"""The PettingZoo front end: PettingZoo's own test suite, full-episode determinism, pickling,
bad input, aliasing, and agreement with mpe2's parallel env for whole episodes."""

from __future__ import annotations

import pickle
import types
import warnings

import numpy as np
import pytest
import torch

pettingzoo = pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import data_equivalence  # noqa: E402
from pettingzoo.test import (api_test, max_cycles_test, parallel_api_test,  # noqa: E402
                             parallel_seed_test, render_test, seed_test)

import war_envs  # noqa: E402
from war_envs.frontends.pettingzoo import (CheckedActionWrapper, ParallelEnv, aec_env,  # noqa: E402
                                           register_pettingzoo)

# PettingZoo's checkers exempt mpe2's MPE envs (by name) from these hints; they hold for ours too
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*(minimum|maximum) (observation|state) space value is.*infinity"),
    pytest.mark.filterwarnings("ignore:Agents have different observation space sizes"),
    pytest.mark.filterwarnings("ignore:Observations are different shapes"),
]

IDS = ["Spread-v0", "PredatorPrey-v0"]
PO = {"Spread-v0": {"num_agent_neighbors": 1, "num_landmark_neighbors": 2},
      "PredatorPrey-v0": {"num_agent_neighbors": 2, "num_landmark_neighbors": 1}}
CONFIGS = [pytest.param(env_id, kw, id=f"{env_id}-{name}") for env_id in IDS
           for name, kw in (("discrete", {}), ("continuous", {"continuous_actions": True}),
                            ("po", PO[env_id]))]


def same(a, b) -> bool:
    """Bitwise equality of nested dicts / arrays / scalars (types included)."""
    return data_equivalence(a, b, exact=True)


def random_actions(env: ParallelEnv, rng: np.random.Generator) -> dict:
    out = {}
    for agent in env.agents:
        space = env.action_space(agent)
        if hasattr(space, "n"):
            out[agent] = int(rng.integers(0, space.n))
        else:
            out[agent] = rng.random(space.shape, dtype=np.float32)
    return out


def run_episodes(env: ParallelEnv, seed: int, episodes: int, action_seed: int = 7) -> list:
    """Everything the env hands out over ``episodes`` whole episodes (reset(seed) first, then
    unseeded resets)."""
    rng = np.random.default_rng(action_seed)
    record = []
    for e in range(episodes):
        obs, infos = env.reset(seed=seed if e == 0 else None)
        record.append((obs, infos, env.state()))
        while env.agents:
            out = env.step(random_actions(env, rng))
            record.append((*out, env.state(), list(env.agents)))
    return record


# ---------------------------------------------------------------------- PettingZoo's own tests
@pytest.mark.parametrize("env_id,kw", CONFIGS)
def test_parallel_api(env_id, kw):
    env = ParallelEnv(env_id, **kw)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*max_cycles is fixed at construction.*")
        parallel_api_test(env, num_cycles=1000)
    env.close()


@pytest.mark.parametrize("env_id,kw", CONFIGS)
def test_aec_api(env_id, kw):
    env = aec_env(env_id, **kw)
    api_test(env, num_cycles=1000)
    assert isinstance(env.unwrapped, ParallelEnv)
    env.close()


@pytest.mark.parametrize("env_id,kw", CONFIGS)
def test_seed_tests(env_id, kw):
    seed_test(lambda: aec_env(env_id, **kw), num_cycles=30)
    parallel_seed_test(lambda: ParallelEnv(env_id, **kw), num_cycles=30)


@pytest.mark.parametrize("env_id", IDS)
def test_max_cycles(env_id):
    module = types.SimpleNamespace(
        parallel_env=lambda **kw: ParallelEnv(env_id, **kw),
        env=lambda **kw: aec_env(env_id, **kw))
    max_cycles_test(module)


@pytest.mark.parametrize("env_id", IDS)
def test_render_test(env_id, monkeypatch):
    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    render_test(lambda render_mode=None: aec_env(env_id, render_mode=render_mode))


def test_state_test():
    from pettingzoo.test import state_test

    for env_id in IDS:
        state_test(aec_env(env_id), ParallelEnv(env_id), num_cycles=10)


# ---------------------------------------------------------------------- determinism
@pytest.mark.parametrize("env_id,kw", [CONFIGS[0], CONFIGS[4]])
def test_full_episode_determinism(env_id, kw):
    a = run_episodes(ParallelEnv(env_id, **kw), seed=11, episodes=3)
    b = run_episodes(ParallelEnv(env_id, **kw), seed=11, episodes=3)
    assert len(a) == len(b) == 3 * 26
    assert same(a, b)
    # every reset draws a fresh start; a different seed gives a different run
    starts = [r[0] for r in a if len(r) == 3]
    assert len(starts) == 3 and not same(starts[0], starts[1]) and not same(starts[1], starts[2])
    c = run_episodes(ParallelEnv(env_id, **kw), seed=12, episodes=1)
    assert not same(a[0][0], c[0][0])
    # reset(seed) on a used env replays from the start; a constructor seed equals reset(seed)
    env = ParallelEnv(env_id, **kw)
    run_episodes(env, seed=3, episodes=1)
    assert same(run_episodes(env, seed=11, episodes=3), a)
    seeded = ParallelEnv(env_id, seed=11, **kw)
    assert same(seeded.reset()[0], a[0][0])


# ---------------------------------------------------------------------- pickling
def test_pickle_round_trip():
    env = ParallelEnv("Spread-v0", N=4, max_cycles=7, local_ratio=0.25, precision="float64")
    run_episodes(env, seed=0, episodes=1)
    clone = pickle.loads(pickle.dumps(env))
    assert type(clone) is ParallelEnv and clone is not env
    assert clone.possible_agents == env.possible_agents == [f"agent_{i}" for i in range(4)]
    assert clone.max_cycles == 7 and clone.batched.precision == "float64"
    assert clone.batched.local_ratio == 0.25 and clone.metadata == env.metadata
    for agent in env.possible_agents:
        assert clone.observation_space(agent) == env.observation_space(agent)
        assert clone.action_space(agent) == env.action_space(agent)
    assert same(run_episodes(clone, seed=5, episodes=2), run_episodes(env, seed=5, episodes=2))
    # the AEC env pickles too (its ParallelEnv is rebuilt from its arguments)
    aec = aec_env("PredatorPrey-v0", continuous_actions=True)
    aec2 = pickle.loads(pickle.dumps(aec))
    aec2.reset(seed=1)
    aec.reset(seed=1)
    assert same(aec.observe("agent_0"), aec2.observe("agent_0"))


# ---------------------------------------------------------------------- bad input
def _twins(env_id, **kw):
    a, b = ParallelEnv(env_id, seed=0, **kw), ParallelEnv(env_id, seed=0, **kw)
    a.reset(seed=4)
    b.reset(seed=4)
    return a, b


def _assert_twins_agree(a, b, rng, steps=2):
    assert same(a.state(), b.state())
    for key, value in a.batched.get_state().items():
        assert (value == b.batched.get_state()[key]).all(), key
    for _ in range(steps):
        if not a.agents:
            break
        actions = random_actions(a, rng)
        assert same(a.step(actions), b.step(actions))


DISCRETE_BAD = [
    (lambda a: {k: v for k, v in a.items() if k != "agent_1"}, ValueError, r"missing \['agent_1'\]"),
    (lambda a: {**a, "agent_9": 0}, ValueError, r"unknown \['agent_9'\]"),
    (lambda a: {**a, "agent_2": 5}, ValueError, r"actions\['agent_2'\].*\[0, 4\].*5"),
    (lambda a: {**a, "agent_0": np.int8(-1)}, ValueError, r"actions\['agent_0'\].*-1"),
    (lambda a: {**a, "agent_0": 1.0}, TypeError, r"actions\['agent_0'\].*integer"),
    (lambda a: {**a, "agent_1": True}, TypeError, r"actions\['agent_1'\].*integer"),
    (lambda a: {**a, "agent_1": np.array([1, 2])}, ValueError, r"actions\['agent_1'\].*scalar"),
    (lambda a: {**a, "agent_2": None}, TypeError, r"actions\['agent_2'\].*None"),
    (lambda a: {**a, "agent_2": "1"}, TypeError, r"actions\['agent_2'\]"),
    (lambda a: {**a, "agent_2": np.array("1")}, TypeError, r"actions\['agent_2'\].*numeric"),
    (lambda a: {**a, "agent_0": torch.tensor(9)}, ValueError, r"actions\['agent_0'\].*9"),
    (lambda a: list(a.values()), TypeError, r"actions: expected a dict"),
]
BOX_BAD = [
    (lambda a: {**a, "adversary_1": np.array([0.1, np.nan, 0, 0, 0], np.float32)}, ValueError,
     r"actions\['adversary_1'\].*NaN"),
    (lambda a: {**a, "agent_0": np.array([0, 1.5, 0, 0, 0], np.float32)}, ValueError,
     r"actions\['agent_0'\].*\[0.0, 1.0\].*1.5"),
    (lambda a: {**a, "agent_0": np.array([0, 0, -0.25, 0, 0])}, ValueError, r"actions\['agent_0'\].*-0.25"),
    (lambda a: {**a, "adversary_0": np.array([0, 0, np.inf, 0, 0])}, ValueError, r"actions\['adversary_0'\]"),
    (lambda a: {**a, "adversary_2": np.zeros(4, np.float32)}, ValueError,
     r"actions\['adversary_2'\].*shape \(5,\).*\(4,\)"),
    (lambda a: {**a, "adversary_2": np.zeros(5, np.int64)}, TypeError, r"actions\['adversary_2'\].*floating"),
    (lambda a: {**a, "adversary_2": 0}, ValueError, r"actions\['adversary_2'\].*shape"),
]


@pytest.mark.parametrize("env_id,kw,cases", [("Spread-v0", {}, DISCRETE_BAD),
                                             ("PredatorPrey-v0", {"continuous_actions": True}, BOX_BAD)])
def test_bad_actions_leave_env_unchanged(env_id, kw, cases):
    a, b = _twins(env_id, **kw)
    rng = np.random.default_rng(0)
    for make_bad, exc, pattern in cases:
        good = random_actions(a, np.random.default_rng(99))
        with pytest.raises(exc, match=pattern):
            a.step(make_bad(good))
        _assert_twins_agree(a, b, rng)
    # numpy integer / float64 actions are accepted (cast as documented)
    if not kw:
        actions = {agent: np.int32(i % 5) for i, agent in enumerate(a.agents)}
        assert same(a.step(actions), b.step({k: int(x) for k, x in actions.items()}))
    else:
        actions = random_actions(a, rng)
        assert same(a.step({k: x.astype(np.float64) for k, x in actions.items()}), b.step(actions))


def test_aec_bad_action_is_rejected_before_it_is_stored():
    a, b = aec_env("Spread-v0"), aec_env("Spread-v0")
    a.reset(seed=2)
    b.reset(seed=2)
    assert isinstance(a.env, CheckedActionWrapper)
    for agent in ["agent_0", "agent_1", "agent_2"] * 3:
        assert a.agent_selection == b.agent_selection == agent
        with pytest.raises(ValueError, match=r"actions\['%s'\].*7" % agent):
            a.step(7)
        with pytest.raises(TypeError, match=r"actions\['%s'\]" % agent):
            a.step(0.5)
        a.step(3)
        b.step(3)
        assert same(a.last(), b.last())
    box = aec_env("Spread-v0", continuous_actions=True)
    box.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions\['agent_0'\].*NaN"):
        box.step(np.full(5, np.nan, np.float32))
    box.step(np.zeros(5, np.float32))
    assert box.agent_selection == "agent_1"


def test_lifecycle_errors():
    env = ParallelEnv("PredatorPrey-v0", max_cycles=3)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step({a: 0 for a in env.possible_agents})
    with pytest.raises(RuntimeError, match="before reset"):
        env.state()
    env.reset(seed=0)
    for _ in range(3):
        assert env.agents == env.possible_agents
        _, _, term, trunc, _ = env.step({a: 0 for a in env.agents})
    assert env.agents == [] and all(trunc.values()) and not any(term.values())
    with pytest.raises(RuntimeError, match="episode ended.*reset"):
        env.step({a: 0 for a in env.possible_agents})
    with pytest.raises(RuntimeError, match="episode ended"):
        env.step({})
    assert len(env.reset()[0]) == 4 and env.agents == env.possible_agents
    with pytest.raises(TypeError, match="options"):
        env.reset(options=3)
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed=1.5)
    with pytest.raises(KeyError, match="unknown agent 'agent_7'"):
        env.action_space("agent_7")
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_constructor_errors():
    with pytest.raises(TypeError, match="num_envs"):
        ParallelEnv("Spread-v0", num_envs=4)
    with pytest.raises(TypeError, match="autoreset_mode"):
        ParallelEnv("Spread-v0", autoreset_mode="same_step")
    with pytest.raises(ValueError, match="render_mode"):
        ParallelEnv("Spread-v0", render_mode="ansi")
    with pytest.raises(TypeError, match="unknown keyword.*num_good"):
        ParallelEnv("Spread-v0", num_good=2)
    with pytest.raises(ValueError, match="unknown scenario"):
        ParallelEnv("Sprede-v0")


def test_terminate_on_success_empties_agents():
    # every landmark covered from the start: the first step terminates (not truncates)
    env = ParallelEnv("Spread-v0", terminate_on_success=True)
    env.reset(seed=0)
    s = env.batched.get_state()
    env.batched.set_state({"agent_pos": s["landmark_pos"].clone(), "agent_vel": s["agent_vel"] * 0})
    _, _, term, trunc, _ = env.step({a: 0 for a in env.agents})
    assert all(term.values()) and not any(trunc.values()) and env.agents == []


# ---------------------------------------------------------------------- state, copies, infos
@pytest.mark.parametrize("env_id,kw", CONFIGS)
def test_state_is_concatenated_observations(env_id, kw):
    env = ParallelEnv(env_id, **kw)
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=0)
    for _ in range(4):
        state = env.state()
        assert state.dtype == np.float32 and env.state_space.contains(state)
        assert same(state, np.concatenate([obs[a] for a in env.possible_agents]))
        obs, *_ = env.step(random_actions(env, rng))


def test_observations_are_copies():
    a, b = _twins("PredatorPrey-v0")
    rng = np.random.default_rng(3)
    actions = random_actions(a, rng)
    obs_a, *_ = a.step(actions)
    b.step(actions)
    buffers = [t.numpy() for t in a.batched.observations().values()]
    state = a.state()
    for x in [*obs_a.values(), state]:
        assert x.flags.owndata and x.flags.writeable and x.dtype == np.float32
        assert not any(np.shares_memory(x, buf) for buf in buffers)
        x[...] = 1e6  # scribble over everything the env handed out
    actions = random_actions(a, rng)
    assert same(a.step(actions), b.step(actions))
    assert same(a.state(), b.state())


def test_infos_carry_per_agent_metrics():
    env = ParallelEnv("Spread-v0", N=3, local_ratio=0.5)
    env.reset(seed=0)
    s = env.batched.get_state()
    pos = s["agent_pos"].clone()
    pos[0, 1] = pos[0, 0] + 0.05  # agent_0 and agent_1 collide
    env.batched.set_state({"agent_pos": pos, "agent_vel": s["agent_vel"] * 0})
    _, rew, _, _, infos = env.step({a: 0 for a in env.agents})
    assert infos["agent_0"]["collisions"] >= 1 and infos["agent_1"]["collisions"] >= 1
    for agent in env.possible_agents:
        info = infos[agent]
        assert set(info) == {"t", "landmark_min_dist", "collisions", "occupied_landmarks"}
        assert type(info["t"]) is int and info["t"] == 1
        assert type(info["collisions"]) is int and type(info["occupied_landmarks"]) is int
        assert isinstance(info["landmark_min_dist"], np.ndarray) and info["landmark_min_dist"].shape == (3,)
        expected = -info["landmark_min_dist"].sum() * 0.5 - info["collisions"] * 0.5
        assert rew[agent] == pytest.approx(expected, abs=1e-5)
        assert type(rew[agent]) is float
    assert infos["agent_0"]["landmark_min_dist"] is not infos["agent_1"]["landmark_min_dist"]

    env = ParallelEnv("PredatorPrey-v0")
    env.reset(seed=0)
    s = env.batched.get_state()
    pos = s["agent_pos"].clone()
    pos[0, 0] = pos[0, 3] + 0.05  # adversary_0 touches agent_0
    env.batched.set_state({"agent_pos": pos, "agent_vel": s["agent_vel"] * 0})
    _, rew, _, _, infos = env.step({a: 0 for a in env.agents})
    prey = infos["agent_0"]
    assert prey["collisions"] >= 1 and infos["adversary_0"]["collisions"] >= 1
    assert rew["agent_0"] == pytest.approx(-10 * prey["collisions"] - prey["boundary_penalty"], abs=1e-5)
    contacts = sum(infos[f"adversary_{i}"]["collisions"] for i in range(3))
    for i in range(3):
        assert rew[f"adversary_{i}"] == pytest.approx(10 * contacts)


def test_spaces_are_per_agent_objects():
    env = ParallelEnv("PredatorPrey-v0")
    spaces = [env.action_space(a) for a in env.possible_agents]
    assert len({id(s) for s in spaces}) == len(spaces)
    assert all(env.action_space(a) is env.action_space(a) for a in env.possible_agents)
    assert env.observation_space("adversary_0").shape == (16,) and env.observation_space("agent_0").shape == (14,)
    assert env.state_space.shape == (3 * 16 + 14,)
    assert env.metadata["is_parallelizable"] and env.metadata["render_fps"] == 10


# ---------------------------------------------------------------------- render
@pytest.mark.parametrize("env_id", IDS)
def test_render_modes(env_id, monkeypatch):
    env = ParallelEnv(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (700, 700, 3) and frame.dtype == np.uint8 and (frame != 255).any()
    state = env.batched.get_state()
    cam = float(np.abs(np.concatenate([state["agent_pos"][0], state["landmark_pos"][0]])).max())
    assert same(frame, env.batched.render_frame(0, original_cam_range=cam))
    env.step({a: 0 for a in env.agents})
    assert same(env.render(), env.batched.render_frame(0, original_cam_range=cam))

    quiet = ParallelEnv(env_id)
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert quiet.render() is None

    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    human = ParallelEnv(env_id, render_mode="human")
    human.reset(seed=0)
    human.step({a: 0 for a in human.agents})
    assert human.render() is None and human._viewer is not None and human._viewer.is_open
    viewer = human._viewer
    human.close()
    assert not viewer.is_open


# ---------------------------------------------------------------------- curriculum, registry
def test_curriculum_passthrough():
    env = ParallelEnv("PredatorPrey-v0", curriculum=True)
    assert env.curriculum_stage == 0 and env.num_curriculum_stages == 3
    env.advance_curriculum()
    assert env.curriculum_stage == 1 == env.batched.curriculum_stage
    env.set_curriculum_stage(2)
    env.advance_curriculum()
    assert env.curriculum_stage == 2
    aec = aec_env("Spread-v0", curriculum=True)
    aec.unwrapped.advance_curriculum()
    assert aec.unwrapped.curriculum_stage == 1


def test_registry_and_package_entry_points():
    ids = register_pettingzoo()
    assert ids == [f"war_envs/{i}" for i in war_envs.registered_ids()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_pettingzoo()  # idempotent, no "Overriding" warning
    par = pettingzoo.make("parallel", "war_envs/Spread-v0", N=2, max_cycles=5)
    assert isinstance(par, ParallelEnv) and par.possible_agents == ["agent_0", "agent_1"]
    assert par.max_cycles == 5
    aec = pettingzoo.make("aec", "war_envs/PredatorPrey", continuous_actions=True)
    assert isinstance(aec.unwrapped, ParallelEnv) and aec.unwrapped.env_id == "PredatorPrey-v0"
    assert isinstance(war_envs.parallel_env("Spread-v0"), ParallelEnv)
    assert isinstance(war_envs.env("Spread-v0").unwrapped, ParallelEnv)


# ---------------------------------------------------------------------- agreement with mpe2
@pytest.mark.parametrize("env_id,kw", CONFIGS)
def test_matches_mpe2_parallel_env_for_a_full_episode(env_id, kw):
    pytest.importorskip("mpe2")
    from mpe2_reference import copy_world_into_reference, make_reference

    continuous = kw.get("continuous_actions", False)
    ours = ParallelEnv(env_id, precision="float64", **kw)
    ours.reset(seed=5)
    ref, raw = make_reference(env_id, **kw)
    copy_world_into_reference(ours.batched, raw)
    np.testing.assert_allclose(ours.state(), ref.state(), rtol=1e-6, atol=1e-6)
    rng = np.random.default_rng(2)
    steps = 0
    while ours.agents:
        assert ours.agents == ref.agents
        actions = random_actions(ours, rng)
        obs, rew, term, trunc, _ = ours.step(actions)
        r_obs, r_rew, r_term, r_trunc, _ = ref.step({k: (x.copy() if continuous else x)
                                                     for k, x in actions.items()})
        assert obs.keys() == r_obs.keys() and rew.keys() == r_rew.keys()
        for agent in obs:
            assert obs[agent].dtype == r_obs[agent].dtype == np.float32
            np.testing.assert_allclose(obs[agent], r_obs[agent], rtol=1e-6, atol=1e-6, err_msg=agent)
            assert rew[agent] == pytest.approx(r_rew[agent], abs=1e-8, rel=0), agent
        assert term == r_term and trunc == r_trunc
        np.testing.assert_allclose(ours.state(), ref.state(), rtol=1e-6, atol=1e-6)
        steps += 1
    assert steps == 25 and ref.agents == [] and ours.agents == []
