"""FacmacPredatorPrey-v0 and its presets without JaxMARL: the rules worked out by hand from
JaxMARL 0.2.0's ``simple.py`` / ``simple_facmac.py`` (physics, the prey's scripted moves with
their index bugs, the view mask, rewards, episode length), the arguments and their refusals,
``check_all``.  ``tests/test_facmac_reference.py`` compares with JaxMARL itself."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing as wt

BASE = "FacmacPredatorPrey-v0"
PRESETS = {"FacmacPredatorPrey3a-v0": (3, 1, 2), "FacmacPredatorPrey6a-v0": (6, 2, 4),
           "FacmacPredatorPrey9a-v0": (9, 3, 6)}
FAR = 0.95  # a move length (u = FAR²) whose end touches nothing in the layouts below


def make(env_id: str = BASE, **kwargs):
    return war_envs.make(env_id, num_envs=1, seed=0, precision="float64", autoreset_mode="disabled", **kwargs)


def load(env, agents, landmarks, vel=None) -> dict:
    """One world at these positions (and velocities; zero by default); its observations."""
    env.reset()
    n = len(agents)
    vel = np.zeros((n, 2)) if vel is None else vel
    return env.set_state({"agent_pos": torch.tensor([agents], dtype=torch.float64),
                          "landmark_pos": torch.tensor([landmarks], dtype=torch.float64).reshape(1, -1, 2),
                          "agent_vel": torch.tensor(np.asarray([vel]), dtype=torch.float64)})


def moves(*special, length_u: float = FAR ** 2, angle_u: float = 0.5) -> torch.Tensor:
    """The prey's draws: candidates ``special`` as (u, u') first, the rest (u, u') = (length_u, angle_u)."""
    draws = torch.tensor([[length_u] * 100, [angle_u] * 100], dtype=torch.float64)
    for c, (u, a) in enumerate(special):
        draws[0, c], draws[1, c] = u, a
    return draws[None]


def step(env, draws=None, adversary=None):
    """One step with the given prey draws (default: no move counts) and adversary actions
    (default: 0.5 everywhere, no force)."""
    env.inject_draws(prey=moves() if draws is None else draws)
    groups = env.groups
    adv = torch.full((1, groups["adversary"].n_agents, 5), 0.5) if adversary is None else torch.tensor([adversary])
    return env.step({"adversary": adv, "agent": torch.rand(1, groups["agent"].n_agents, 5)})


def velocity(env) -> np.ndarray:
    return env.get_state()["agent_vel"][0].numpy()


# three adversaries, one prey far from them, two landmarks far away
ADVERSARIES = [(-0.5, 0.5), (0.5, 0.5), (0.0, -0.6)]
PREY = (0.8, -0.2)
LANDMARKS = [(2.5, 2.5), (-2.5, 2.5)]


# ----------------------------------------------------------------------------- ids and arguments
def test_ids_presets_spaces_and_episode_length():
    for env_id, (na, ng, nl) in {BASE: (3, 1, 2), **PRESETS}.items():
        with war_envs.make(env_id, num_envs=2, seed=0) as env:
            assert env.groups["adversary"].agents == tuple(f"adversary_{i}" for i in range(na))
            assert env.groups["agent"].agents == tuple(f"agent_{i}" for i in range(ng))
            obs_dim = 4 + 2 * nl + 2 * (na + ng - 1) + 2
            assert {g: s.obs_dim for g, s in env.groups.items()} == {"adversary": obs_dim, "agent": obs_dim}
            for spec in env.groups.values():
                assert spec.action_space.shape == (5,) and spec.action_space.low.min() == 0
                assert spec.action_space.high.max() == 1
            assert env.max_cycles == 26 and env.max_steps == 25
            assert env.config["score_function"] == ("sum" if env_id == BASE else "min")
    assert [4 + 2 * nl + 2 * (na + ng - 1) + 2 for na, ng, nl in PRESETS.values()] == [16, 28, 40]


def test_episodes_last_max_steps_plus_one_steps():
    with make(max_steps=3) as env:
        assert env.max_cycles == 4
        load(env, ADVERSARIES + [PREY], LANDMARKS)
        for k in range(4):
            _, _, term, trunc, _ = step(env)
            assert not term["adversary"].any() and bool(trunc["agent"][0, 0]) == (k == 3)
    with make(max_cycles=8) as env:  # the family's name for the same length
        assert env.max_steps == 7


@pytest.mark.parametrize("kwargs,match", [
    ({"u_noise": [0.1] * 6}, "u_noise: .* does not support JaxMARL's action noise"),
    ({"c_noise": 0.0}, "c_noise"), ({"silent": [1] * 4}, "silent"), ({"moveable": [True] * 6}, "moveable"),
    ({"dim_p": 3}, "dim_p"), ({"action_spaces": {}}, "action_spaces"),
    ({"observation_spaces": {}}, "observation_spaces"),
    ({"score_function": "max"}, r"score_function: expected one of \['sum', 'min'\]"),
    ({"num_adversaries": 0}, "num_adversaries: expected an int >= 1"),
    ({"num_good_agents": 0}, "num_good_agents: expected an int >= 1"),
    ({"num_landmarks": -1}, "num_landmarks"), ({"mass": [1.0] * 5}, "mass: expected 6 values"),
    ({"mass": [1.0] * 5 + [0.0]}, r"mass\[5\]: expected a positive float"), ({"dt": 0.0}, "dt: expected a positive"),
    ({"contact_margin": -1e-3}, "contact_margin"), ({"damping": -0.1}, "damping"),
    ({"view_radius": float("nan")}, "view_radius"), ({"max_steps": 5, "max_cycles": 5}, "max_cycles: the episode"),
    ({"continuous_actions": False}, "continuous_actions: .* expected True"),
    ({"curriculum": True}, "curriculum"),
])
def test_bad_arguments_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        war_envs.make(BASE, num_envs=1, **kwargs)


def test_presets_fix_their_composition():
    with pytest.raises(ValueError,
                       match="num_adversaries: FacmacPredatorPrey3a-v0 is JaxMARL's MPE_simple_facmac_3a_v1"):
        war_envs.make("FacmacPredatorPrey3a-v0", num_envs=1, num_adversaries=4)
    with pytest.raises(ValueError, match="score_function"):
        war_envs.make("FacmacPredatorPrey9a-v0", num_envs=1, score_function="sum")
    with war_envs.make("FacmacPredatorPrey6a-v0", num_envs=1, num_adversaries=6, max_steps=9, damping=0.5) as env:
        assert env.config["num_adversaries"] == 6 and env.max_cycles == 10 and env.config["damping"] == 0.5


def test_inject_draws_checks_its_input():
    with make() as env:
        env.reset()
        with pytest.raises(ValueError, match="prey"):
            env.inject_draws(prey=torch.zeros(1, 2, 99))
        with pytest.raises(ValueError, match=r"prey: expected floats in \[0, 1\)"):
            env.inject_draws(prey=torch.ones(1, 2, 100))


# ----------------------------------------------------------------------------- physics
def test_step_integrates_with_the_old_velocity_then_damps_and_caps():
    with make("FacmacPredatorPrey3a-v0") as env:
        vel = [(0.2, -0.1), (0.9, 0.9), (0.0, 0.0), (0.1, 0.0)]
        load(env, ADVERSARIES + [PREY], LANDMARKS, vel)
        actions = [[0.0, 0.25, 0.75, 0.5, 0.125], [0.0, 0.0, 1.0, 0.0, 1.0], [0.3, 0.5, 0.5, 0.9, 0.4]]
        step(env, adversary=actions)
        state = env.get_state()
        pos = state["agent_pos"][0].numpy()
        expected_pos = np.asarray(ADVERSARIES + [PREY]) + np.asarray(vel) * 0.1
        np.testing.assert_allclose(pos, expected_pos, rtol=0, atol=1e-15)
        a = np.asarray(actions, dtype=np.float32)
        u = np.stack([a[:, 2] - a[:, 1], a[:, 4] - a[:, 3]], axis=1).astype(np.float64) * 3.0
        v = np.asarray(vel[:3]) * 0.75 + u * 0.1
        speed = np.linalg.norm(v[1])
        assert speed > 1.0
        v[1] = v[1] / speed * 1.0  # adversaries' max speed
        np.testing.assert_allclose(velocity(env)[:3], v, rtol=0, atol=1e-15)
        # the prey: no move counts (its own action ignored), so only damping
        np.testing.assert_allclose(velocity(env)[3], [0.075, 0.0], rtol=0, atol=1e-15)


def test_contact_force_is_jaxmarls_soft_penetration():
    with make("FacmacPredatorPrey3a-v0") as env:
        # adversaries 0 and 1 overlap by 0.05 (radii 0.075): c · d / |d| · k log(1 + e^((r - |d|) / k))
        agents = [(0.0, 0.5), (0.1, 0.5), (0.0, -0.6), PREY]
        load(env, agents, LANDMARKS)
        step(env)
        k, dist = 1e-3, 0.1
        push = 100.0 * k * ((0.15 - dist) / k + math.log1p(math.exp(-(0.15 - dist) / k)))
        np.testing.assert_allclose(velocity(env)[0], [-push * 0.1, 0.0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(velocity(env)[1], [push * 0.1, 0.0], rtol=1e-12, atol=1e-15)


# ----------------------------------------------------------------------------- the prey's moves
def test_min_prey_moves_from_the_last_adversary_scored_by_adversary_0():
    """"min": a move counts if its end touches an adversary; JaxMARL plans from entity
    num_adversaries - 1 (the last adversary, not the prey) and scores by the distance to
    adversary 0 (its "nearest" is an argmin over one sum)."""
    with make("FacmacPredatorPrey3a-v0") as env:
        planner = (0.0, -0.6)
        agents = [(0.3, -0.6), (-0.3, -0.6), planner, PREY]
        load(env, agents, LANDMARKS)
        # candidate 0 ends on adversary 0 (score 0), candidate 1 on adversary 1 (score 0.6): 1 wins
        step(env, moves((0.09, 0.0), (0.09, 0.5)))
        x = np.float32(math.sqrt(0.09) * math.cos(math.pi))
        y = np.float32(math.sqrt(0.09) * math.sin(math.pi))
        np.testing.assert_allclose(velocity(env)[3], [float(x) * 0.1, float(y) * 0.1], rtol=0, atol=1e-17)
        # only candidate 0 counts: it is taken although it scores 0
        load(env, agents, LANDMARKS)
        step(env, moves((0.09, 0.0)))
        np.testing.assert_allclose(velocity(env)[3], [float(np.float32(math.sqrt(0.09))) * 0.1, 0.0], rtol=0,
                                   atol=1e-17)


def test_sum_prey_moves_need_every_waypoint_to_touch_something():
    """"sum": each of 5 waypoints must touch some entity (the planning adversary itself
    included); score: the last waypoint's summed distances to the adversaries."""
    with make() as env:
        agents = [(0.8, -0.6), (0.8, -0.4), (0.0, -0.6), PREY]
        load(env, agents, LANDMARKS)
        # two short moves (every waypoint within 0.15 of the planner): toward the others (angle
        # 0) and away (angle pi, larger summed distance: chosen); a long one counts not
        step(env, moves((0.01, 0.0), (0.01, 0.5), (0.64, 0.5)))
        x = np.float32(0.1 * math.cos(math.pi))
        np.testing.assert_allclose(velocity(env)[3, 0], float(x) * 0.1, rtol=0, atol=1e-17)
        # a long move along which every waypoint touches the chain of landmarks counts
        chain = [(0.0, -0.6 + 0.18 * k) for k in range(1, 6)]
        env2 = make(num_landmarks=5)
        load(env2, agents, chain)
        step(env2, moves((0.81, 0.125)))  # length 0.9, angle pi/2: straight up the chain
        np.testing.assert_allclose(velocity(env2)[3], [float(np.float32(0.9 * math.cos(math.pi / 2))) * 0.1,
                                                       float(np.float32(0.9)) * 0.1], rtol=0, atol=1e-12)
        env2.close()


def test_later_prey_plan_from_every_other_entity_clamped_to_the_last():
    """Prey g plans from JaxMARL entity min(num_adversaries - 1 + 2 g, last entity)."""
    with make(num_good_agents=3, num_adversaries=2, num_landmarks=0, score_function="min") as env:
        # entities: adversaries 0, 1, prey 0, 1, 2 -> planners 1 (adversary 1), 3 (prey 1), 4 (clamped: prey 2)
        agents = [(0.0, 0.0), (-0.8, 0.8), (-0.8, -0.8), (0.8, 0.8), (0.3, 0.0)]
        load(env, agents, np.zeros((0, 2)))
        # candidate 0: length 0.3 at angle pi (u' = 0.5): from prey 2 it ends on adversary 0 (the only
        # touching end), from prey 1 and adversary 1 it ends far from the adversaries
        step(env, moves((0.09, 0.5)))
        v = velocity(env)
        np.testing.assert_allclose(v[2:4], 0.0, atol=1e-17)
        force = [float(np.float32(-0.3)), float(np.float32(0.3 * math.sin(math.pi)))]
        np.testing.assert_allclose(v[4], [force[0] * 0.1, force[1] * 0.1],
                                   rtol=1e-7, atol=1e-17)


# ----------------------------------------------------------------------------- observations
def test_observation_layout_and_view_mask():
    with make() as env:
        agents = [(0.0, 0.0), (0.3, 0.0), (0.0, 0.4), (0.2, 0.2)]
        vel = [(0.1, 0.2), (0.3, 0.4), (0.5, 0.6), (0.7, 0.8)]
        obs = load(env, agents, [(0.5, 0.0), (0.0, 0.5)], vel)
        adv0 = obs["adversary"][0, 0].double().numpy()
        np.testing.assert_allclose(adv0, [0.1, 0.2, 0, 0, 0.5, 0, 0, 0.5, 0.3, 0, 0, 0.4, 0.2, 0.2, 0.7, 0.8],
                                   atol=1e-7)
        prey = obs["agent"][0, 0].double().numpy()
        np.testing.assert_allclose(prey, [0.7, 0.8, 0.2, 0.2, 0.3, -0.2, -0.2, 0.3, -0.2, -0.2, 0.1, -0.2, -0.2, 0.2,
                                          0, 0], atol=1e-7)
        # the landmark block goes as a whole once its norm exceeds 1.5 (landmark 0 is still near)
        obs = load(env, agents, [(0.5, 0.0), (0.0, 1.5)], vel)
        adv0 = obs["adversary"][0, 0].double().numpy()
        np.testing.assert_array_equal(adv0[4:8], 0.0)
        np.testing.assert_allclose(adv0[8:], [0.3, 0, 0, 0.4, 0.2, 0.2, 0.7, 0.8], atol=1e-7)
        # the other agents' block and the prey's velocity likewise
        far = [(0.0, 0.0), (1.2, 0.0), (0.0, 1.0), (0.2, 0.2)]
        obs = load(env, far, [(0.5, 0.0), (0.0, 0.5)], vel)
        np.testing.assert_array_equal(obs["adversary"][0, 0, 8:].numpy(), 0.0)
    with make(view_radius=-1) as env:  # JaxMARL's "no limit"
        obs = load(env, [(0.0, 0.0), (5.0, 0.0), (0.0, 4.0), (3.0, 3.0)], [(9.0, 0.0), (0.0, 9.0)])
        assert obs["adversary"][0, 0, 4:14].tolist() == [9, 0, 0, 9, 5, 0, 0, 4, 3, 3]


# ----------------------------------------------------------------------------- rewards
def test_rewards_count_contacts_with_jaxmarls_clamped_prey_row():
    """Adversaries: 10 per contact.  Prey g: -10 per adversary touching prey
    min(g + num_adversaries, num_good - 1) (JaxMARL's clamped index: the last prey's), minus its
    own boundary penalty."""
    with make(num_good_agents=2, num_adversaries=2, num_landmarks=0) as env:
        # prey 0 touched by adversary 0, prey 1 by nobody and beyond the boundary
        agents = [(0.0, 0.0), (-0.7, -0.7), (0.1, 0.0), (0.95, 1.2)]
        load(env, agents, np.zeros((0, 2)))
        _, rew, _, _, info = step(env)
        assert rew["adversary"][0].tolist() == [10.0, 10.0]
        bound = 10 * (0.95 - 0.9) + math.exp(2 * 1.2 - 2)
        np.testing.assert_allclose(rew["agent"][0].numpy(), [0.0, -bound], rtol=1e-12)  # prey 0 reads prey 1's row
        assert info["collisions"][0].tolist() == [1, 0, 1, 0]
        # prey 1 touched by both adversaries: both prey get -20
        agents = [(0.0, 0.0), (0.05, 0.1), (0.9, -0.9), (0.03, 0.05)]
        load(env, agents, np.zeros((0, 2)))
        _, rew, _, _, info = step(env)
        assert rew["adversary"][0].tolist() == [20.0, 20.0]
        np.testing.assert_allclose(rew["agent"][0].numpy(), [-20.0 - 0.0, -20.0], rtol=1e-12)
        assert info["collisions"][0].tolist() == [1, 1, 0, 2]


def test_boundary_penalty_caps_at_10():
    with make() as env:
        load(env, ADVERSARIES + [(3.0, 0.5)], LANDMARKS)
        _, rew, _, _, _ = step(env)
        assert float(rew["agent"][0, 0]) == -10.0


# ----------------------------------------------------------------------------- the batch API
@pytest.mark.parametrize("env_id", [BASE, "FacmacPredatorPrey3a-v0"])
def test_check_all(env_id):
    wt.check_all(env_id, max_cycles=8)  # (check_autoreset_modes takes max_steps itself)
