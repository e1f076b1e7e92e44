"""GiveWay-v0 against VMAS 1.5.2's ``give_way`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state, whole free-running episodes (continuous and discrete
actions, default and non-default arguments, box agents, a contact-heavy start), the reset
distribution, the observation noise, bad arguments and the shared API checks."""

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "GiveWay-v0", "give_way"
INFO = ("pos_rew", "final_rew", "energy_rew", "agent_collision_rew", "obstacle_collision_rew")
#: the non-default arguments: every penalty on, rel obs, the mirrored bay, delay and completion
OPTIONS = dict(energy_rew_coeff=0.3, agent_collision_penalty=-1.0, passage_collision_penalty=-0.5,
               obstacle_collision_penalty=-0.25, observe_rel_pos=True, mirror_passage=True, done_on_completion=True,
               dt_delay=2, pos_shaping_factor=2.0, final_reward=0.5, v_range=0.6, a_range=1.5, linear_friction=0.2,
               min_input_norm=0.1)


def extra_state(vm):
    """The scenario's own per-world state off VMAS's objects: shaping, the controllers' errors
    and the delay queues."""
    agents = vm.world.agents
    out = {"shaping": torch.stack([a.shaping for a in agents], dim=1)}
    if vm.scenario.use_velocity_controller:
        out["accum_errs"] = torch.stack([a.controller.accum_errs for a in agents], dim=1)
        out["prev_err"] = torch.stack([a.controller.prev_err for a in agents], dim=1)
    if vm.scenario.dt_delay > 0:
        out["input_queue"] = torch.stack([torch.stack(a.input_queue, dim=1) for a in agents], dim=1)
    return out


def squeeze(vm):
    """A contact-heavy start: the agents pressed into each other in the middle of the corridor,
    one half in the bay, driving at each other."""
    a, b = vm.world.agents
    E = vm.num_envs
    gen = torch.Generator().manual_seed(5)
    a.state.pos = torch.stack([-0.12 + 0.1 * torch.rand(E, generator=gen), 0.05 * torch.rand(E, generator=gen)], 1)
    b.state.pos = torch.stack([0.12 - 0.1 * torch.rand(E, generator=gen), 0.25 * torch.rand(E, generator=gen)], 1)
    a.state.vel = torch.tensor([[0.4, 0.1]]).expand(E, 2).clone()
    b.state.vel = torch.tensor([[-0.4, 0.0]]).expand(E, 2).clone()


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS, {"use_velocity_controller": False}],
                         ids=["default", "options", "force"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, info_keys=INFO,
                                steps=40, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("controller", [True, False], ids=["velocity", "force"])
def test_one_step_box_agents_contact(continuous, controller):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, info_keys=INFO,
                                steps=30, start=squeeze, box_agents=True, use_velocity_controller=controller,
                                agent_collision_penalty=-1.0, obstacle_collision_penalty=-0.5)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, info_keys=INFO, steps=100,
                    **kwargs)


def test_whole_episode_contact_heavy():
    R.whole_episode(ENV, SCENARIO, extra_state=extra_state, info_keys=INFO, steps=60, start=squeeze,
                    agent_collision_penalty=-1.0, passage_collision_penalty=-0.5)


@pytest.mark.parametrize("continuous", [True, False])
def test_whole_episode_box_agents(continuous):
    """Box agents (contact stiffness 10 000, 16 substeps) are chaotic: VMAS itself, run twice with
    the agents' start moved by one float32 ulp, drifts apart by more than 1e-4 in velocity after
    14 steps from ``squeeze`` and 62 steps from its own start (same actions; measured), and our
    last-ulp differences (exp / log in the contact force) grow the same way.  So the free-running
    comparison covers the horizon where a 1-ulp twin of VMAS still agrees, at the usual episode
    tolerance; the one-step test above checks every step of box contact at the tight one."""
    kwargs = dict(box_agents=True, use_velocity_controller=False, agent_collision_penalty=-1.0,
                  obstacle_collision_penalty=-0.5, continuous=continuous, extra_state=extra_state, info_keys=INFO)
    R.whole_episode(ENV, SCENARIO, steps=12, start=squeeze, **kwargs)
    R.whole_episode(ENV, SCENARIO, steps=50, **kwargs)


def test_comparison_bites():
    """A perturbed reward weight or agent mass on VMAS's side is caught."""
    def shaping(vm):
        vm.scenario.pos_shaping_factor = 1.001

    def mass(vm):
        vm.world.agents[1]._mass = 1.01

    for start, what in ((shaping, "reward"), (mass, "obs|vel|pos")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, extra_state=extra_state, info_keys=INFO, steps=20, start=start)


def test_goals_reached_end_the_episode():
    """Agents put on their goals: the final reward, ``reached_goals`` and (with
    ``done_on_completion``) termination, as VMAS."""
    def on_goals(vm):
        for agent in vm.world.agents:
            agent.state.pos = agent.goal.state.pos.clone() + 0.01

    for done_on_completion in (False, True):
        vm, ours = R.whole_episode(ENV, SCENARIO, extra_state=extra_state, info_keys=INFO, steps=1, start=on_goals,
                                   done_on_completion=done_on_completion)
        E = vm.num_envs
        vm_out = vm.step([torch.zeros(E, 2), torch.zeros(E, 2)])
        our_out = ours.step({"agents": torch.zeros(E, 2, 2)})
        R.compare_outputs("on goals", vm, ours, vm_out, our_out, R.EPISODE_TOL, INFO)
        assert bool(our_out[4]["reached_goals"].all())
        assert bool((our_out[4]["final_rew"] == 0.01).all())
        assert bool(ours.world_flags()[0].all()) == done_on_completion


def test_reset_empties_the_delay_queue():
    """Our one deliberate change to VMAS's dynamics: a reset empties the ``dt_delay`` queue (VMAS
    keeps the last episode's actions in it), so a fresh episode's first ``dt_delay`` forces come
    from zero actions and the episode depends only on its seed and its own actions."""
    env = war_envs.make(ENV, num_envs=3, dt_delay=2, max_steps=10)
    env.reset(seed=1)
    for _ in range(3):
        env.step({"agents": torch.full((3, 2, 2), 0.4)})
    assert bool((env.get_state()["input_queue"] != 0).any())
    env.reset(seed=1)
    assert bool((env.get_state()["input_queue"] == 0).all())
    start = env.get_state()
    env.step({"agents": torch.full((3, 2, 2), 0.4)})
    # the first force is the controller's answer to a zero command at rest: nothing moves
    torch.testing.assert_close(env.get_state()["pos"], start["pos"], rtol=0, atol=0)


def test_reset_distribution_matches_vmas():
    """10 000 of our worlds' starts against 10 000 of VMAS's per-world resets (``reset_world_at(i)``):
    KS on each agent's x and y; the walls and goals exactly where VMAS puts them."""
    n = 10_000
    vm = R.make_vmas(SCENARIO, n, 0, True)
    for i in range(n):
        vm.scenario.reset_world_at(i)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=n)
    ours.reset(seed=11)
    mine = ours.get_state()
    L = len(vm.world.landmarks)
    for key in ("pos", "rot"):
        torch.testing.assert_close(mine[key][:, :L], theirs[key][:, :L], rtol=0, atol=0)
    for b in (L, L + 1):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    assert float(mine["pos"][:, L:, :].std()) > 0  # the worlds differ
    torch.testing.assert_close(mine["shaping"], torch.linalg.vector_norm(
        mine["pos"][:, L:] - mine["pos"][:, :2], dim=-1))


def test_observation_noise():
    """``obs_noise``: the observation is VMAS's noiseless one plus U(-obs_noise, obs_noise) noise
    (KS against the uniform law), fresh every step and agent, the same for the same state."""
    noise = 0.05
    vm = R.make_vmas(SCENARIO, 256, 0, True, observe_rel_pos=True)
    ours = R.make_ours(ENV, 256, True, observe_rel_pos=True, obs_noise=noise)
    R.copy_state(vm, ours, extra_state)
    R.check_observation_noise(vm, ours, noise)


@pytest.mark.parametrize("kwargs,match", [
    ({"v_range": 0}, "v_range"), ({"a_range": -1}, "a_range"), ({"obs_noise": -0.1}, "obs_noise"),
    ({"linear_friction": -0.1}, "linear_friction"), ({"box_agents": 1}, "box_agents"),
    ({"mirror_passage": "yes"}, "mirror_passage"), ({"dt_delay": -1}, "dt_delay"), ({"dt_delay": 1.5}, "dt_delay"),
    ({"min_input_norm": -1}, "min_input_norm"), ({"pos_shaping_factor": float("nan")}, "pos_shaping_factor"),
    ({"use_velocity_controller": None}, "use_velocity_controller"), ({"max_steps": 0}, "max_steps"),
    ({"energy_rew_coeff": "x"}, "energy_rew_coeff"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, {"use_velocity_controller": False, "observe_rel_pos": True}):
        vm = R.make_vmas(SCENARIO, 1, 0, True, **kwargs)
        ours = war_envs.make(ENV, **kwargs)
        assert ours.groups["agents"].agents == tuple(a.name for a in vm.agents)
        space = ours.groups["agents"].action_space
        theirs = vm.action_space[0]
        np.testing.assert_array_equal(space.high, theirs.high)
        assert ours.groups["agents"].obs_dim == vm.observation_space[0].shape[0]
    assert war_envs.make(ENV, continuous_actions=False).groups["agents"].action_space.n == 9


def test_float64_worlds_follow_float32():
    """A float64 world runs the same episode as the float32 one, to float32 rounding."""
    R.float64_follows_float32(ENV, 30, dt_delay=1, observe_rel_pos=True)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, box_agents=True, obs_noise=0.1, dt_delay=1, continuous_actions=False,
                               pettingzoo=False, gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0, mirror_passage=True)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 4  # walls, two agents, goals on white
