"""MultiGiveWay-v0 against VMAS 1.5.2's ``multi_give_way`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state, whole free-running episodes
(continuous and discrete actions, default and non-default arguments, box agents, a jammed
junction), the reset, random-policy return statistics, the observation noise, bad arguments and
the shared API checks."""

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "MultiGiveWay-v0", "multi_give_way"
INFO = ("pos_rew", "final_rew", "agent_collision_rew")
#: the non-default arguments: own rewards, a bigger penalty and final reward, other limits
OPTIONS = dict(shared_rew=False, pos_shaping_factor=2.0, final_reward=0.5, agent_collision_penalty=-1.0,
               u_range=0.6, a_range=1.5, linear_friction=0.2, min_input_norm=0.1, comms_range=1.0)
#: ``pos_shaping_factor=0``: VMAS's ``-0.0001 * distance`` reward instead of the shaping
NO_SHAPING = dict(pos_shaping_factor=0, shared_rew=False, agent_collision_penalty=-0.3)


def extra_state(vm):
    """The scenario's own per-world state off VMAS's objects: shaping and the controllers' errors."""
    agents = vm.world.agents
    return {"shaping": torch.stack([a.shaping for a in agents], dim=1),
            "accum_errs": torch.stack([a.controller.accum_errs for a in agents], dim=1),
            "prev_err": torch.stack([a.controller.prev_err for a in agents], dim=1)}


def jam(vm):
    """A contact-heavy start: all four agents in the junction, pressed into each other and the
    walls' corners, driving at the centre."""
    E = vm.num_envs
    gen = torch.Generator().manual_seed(5)
    for i, agent in enumerate(vm.world.agents):
        arm = torch.tensor([[-1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, -1.0]])[i]
        across = torch.tensor([arm[1], -arm[0]])
        out = 0.12 + 0.1 * torch.rand(E, 1, generator=gen)
        side = 0.08 * (torch.rand(E, 1, generator=gen) - 0.5)
        agent.state.pos = out * arm + side * across
        agent.state.vel = -0.4 * arm.expand(E, 2).clone()


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS, NO_SHAPING], ids=["default", "options", "no_shaping"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, info_keys=INFO,
                                steps=40, compare_state=True, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("box_agents", [False, True], ids=["spheres", "boxes"])
def test_one_step_jammed_junction(continuous, box_agents):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, info_keys=INFO,
                                steps=30, start=jam, compare_state=True, box_agents=box_agents,
                                agent_collision_penalty=-1.0)


def seek_actions(vm, gen, continuous, noise=0.5):
    """Everyone drives at its goal (through the junction): ``-2 (pos - goal)`` plus uniform noise
    of half-width ``noise u_range``, in ``[-u_range, u_range]²``, from VMAS's state; discrete:
    per component decrement / increment beyond ``0.2 u_range``, else stay.  Returns VMAS's and
    our actions."""
    rel = torch.stack([a.state.pos - a.goal.state.pos for a in vm.world.agents], 1)
    ur = vm.scenario.u_range
    u = (-2 * rel + noise * ur * (2 * torch.rand(rel.shape, generator=gen) - 1)).clamp(-ur, ur)
    if continuous:
        return list(u.unbind(1)), {"agents": u}
    digit = torch.where(u > 0.2 * ur, 2, torch.where(u < -0.2 * ur, 1, 0))
    flat = digit[..., 0] * 3 + digit[..., 1]
    return list(flat.unbind(1)), {"agents": flat}


def seek_episode(steps, continuous=True, start=None, num_envs=8, one_step=False, **kwargs):
    """Both run free from VMAS's start (``start(vm)`` may change VMAS first) under
    ``seek_actions`` for ``steps`` steps, compared after every step at the episode tolerance
    (outputs, bodies, shaping and controller state); ``one_step``: our worlds get VMAS's state
    before every step and are compared at the one-step tolerance.  Returns per world the number
    of agent-steps that paid a collision penalty."""
    vm = R.make_vmas(SCENARIO, num_envs, 0, continuous, max_steps=steps, **kwargs)
    if start is not None:
        start(vm)
    ours = R.make_ours(ENV, num_envs, continuous, max_steps=steps, **kwargs)
    R.copy_state(vm, ours, extra_state)
    gen = torch.Generator().manual_seed(1)
    collided = torch.zeros(num_envs)
    tol = R.STEP_TOL if one_step else R.EPISODE_TOL
    for t in range(steps):
        if one_step:
            R.copy_state(vm, ours, extra_state)
        acts, ours_acts = seek_actions(vm, gen, continuous)
        vm_out = vm.step(acts)
        our_out = ours.step(ours_acts)
        R.compare_outputs(f"{ENV} seek step {t}", vm, ours, vm_out, our_out, tol, INFO)
        R.compare_extra_state(f"{ENV} seek step {t}", vm, ours, extra_state, tol)
        collided += (our_out[4]["agent_collision_rew"] < 0).sum(1)
    return collided


#: How far a free run can be compared at the episode tolerance (1e-4).  The corridors leave the
#: agents 0.04 m (boxes: 0.04 / 0.08 m) of play, so they keep touching the walls, and the stiff
#: contacts with the velocity controller amplify rounding: VMAS itself, run twice with one-ulp
#: noise on a tenth of the agents' velocity entries per step (same actions), drifts past the
#: tolerance after 51-75 steps (random actions, default and OPTIONS, 8 worlds, seeds 7-9),
#: 72-88 (spheres seeking their goals), 15-34 (boxes, random actions), 14 (boxes seeking) and
#: 7-9 (boxes from ``jam``); ours (last-ulp differences of libm's exp / log in contacts and of
#: the shared friction's speed, ``sqrt(x² + y²)`` where torch fuses ``fma(y, y, x²)``) drifts
#: past it after 64-100+, 100+, 23-30, 22 and 15-18 steps (measured).  So the free runs cover the
#: horizons where the 1-ulp twin of VMAS still agrees; the one-step tests check every step of
#: every kind of contact at the tight tolerance, and the return statistics whole episodes.
HORIZON = {"random": 50, "seek": 70, "box_random": 14, "box_seek": 12, "box_jam": 6}


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, info_keys=INFO,
                    steps=HORIZON["random"], compare_state=True, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("box_agents", [False, True], ids=["spheres", "boxes"])
def test_one_step_through_the_jam(continuous, box_agents):
    """One step from every state of a whole episode in which all four drive at their goals and
    jam the junction (sustained agent-agent and wall contact, checked)."""
    collided = seek_episode(100, continuous, one_step=True, box_agents=box_agents, agent_collision_penalty=-1.0)
    assert bool((collided >= 20).all()), collided


@pytest.mark.parametrize("continuous", [True, False])
def test_whole_episode_contact_heavy(continuous):
    """All four drive at their goals from VMAS's start and jam the junction (from about step 45):
    free-running, every world pays collision penalties on at least 10 agent-steps (checked), and
    everything stays VMAS's."""
    collided = seek_episode(HORIZON["seek"], continuous, agent_collision_penalty=-1.0)
    assert bool((collided >= 10).all()), collided


@pytest.mark.parametrize("continuous", [True, False])
def test_whole_episode_box_agents(continuous):
    """Box agents (contact stiffness 10 000, 16 substeps): random actions and goal seeking from
    VMAS's start (wall contact) and the jammed junction (box-box contact), over ``HORIZON``."""
    kwargs = dict(box_agents=True, agent_collision_penalty=-1.0)
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, info_keys=INFO,
                    steps=HORIZON["box_random"], compare_state=True, **kwargs)
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, info_keys=INFO,
                    steps=HORIZON["box_jam"], start=jam, compare_state=True, **kwargs)
    seek_episode(HORIZON["box_seek"], continuous, **kwargs)


def test_comparison_bites():
    """A perturbed reward weight, collision penalty, agent mass (felt only in contact: the
    controller's force scales with it) or controller gain on VMAS's side is caught."""
    def shaping(vm):
        vm.scenario.pos_shaping_factor = 1.001

    def penalty(vm):
        vm.scenario.agent_collision_penalty = -0.11

    def mass(vm):
        vm.world.agents[2]._mass = 1.01

    def gain(vm):
        vm.world.agents[3].controller.ctrl_gain = 2.01

    for start, what in ((shaping, "reward"), (gain, "obs|vel|pos")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, extra_state=extra_state, info_keys=INFO, steps=20, start=start)
    for start, what in ((penalty, "reward"), (mass, "obs|vel|pos")):
        with pytest.raises(AssertionError, match=what):
            seek_episode(HORIZON["seek"], start=start)


def test_goals_reached():
    """All four agents put on their goals: the final reward and ``reached_goals`` as VMAS's, and
    no termination (VMAS's done is never true); three of four is not enough."""
    def on_goals(vm):
        for agent in vm.world.agents:
            agent.state.pos = agent.goal.state.pos.clone() + 0.01
        vm.world.agents[3].state.pos[::2] += 0.1  # even worlds: agent 3 off its goal

    vm, ours = R.whole_episode(ENV, SCENARIO, extra_state=extra_state, info_keys=INFO, steps=1, start=on_goals,
                               final_reward=0.25)
    E = vm.num_envs
    for _ in range(2):
        vm_out = vm.step([torch.zeros(E, 2)] * 4)
        our_out = ours.step({"agents": torch.zeros(E, 4, 2)})
        R.compare_outputs("on goals", vm, ours, vm_out, our_out, R.EPISODE_TOL, INFO)
        reached = torch.arange(E) % 2 == 1
        assert torch.equal(our_out[4]["reached_goals"] == 1, reached)
        assert bool((our_out[4]["final_rew"][reached] == 0.25).all())
        assert bool((our_out[4]["final_rew"][~reached] == 0).all())
        assert not bool(ours.world_flags()[0].any())


def test_reset_matches_vmas():
    """The start is VMAS's, exactly (no randomness in this scenario's reset): every body's
    position and rotation, the shaping, the observation; the same in every world and every
    episode."""
    vm = R.make_vmas(SCENARIO, 4, 0, True)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=4)
    obs = ours.reset(seed=11)
    mine = ours.get_state()
    for key in ("pos", "vel", "rot", "ang_vel"):
        torch.testing.assert_close(mine[key], theirs[key], rtol=0, atol=0)
    torch.testing.assert_close(mine["shaping"], extra_state(vm)["shaping"], rtol=0, atol=0)
    vm_obs = torch.stack(vm.reset(), dim=1)
    torch.testing.assert_close(obs["agents"], vm_obs, rtol=0, atol=0)
    # a later episode starts the same
    for _ in range(5):
        ours.step({"agents": torch.full((4, 4, 2), 0.4)})
    obs2 = ours.reset()
    torch.testing.assert_close(obs2["agents"], obs["agents"], rtol=0, atol=0)
    torch.testing.assert_close(ours.get_state()["accum_errs"], torch.zeros(4, 4, 2), rtol=0, atol=0)


def _seek(obs, gen, noise):
    """A noisy goal-seeking policy: velocity towards the goal (``-(pos - goal)``, obs 4:6) plus
    uniform noise of half-width ``noise``, in [-0.5, 0.5]²."""
    return (-obs[..., 4:6] + noise * (2 * torch.rand(obs[..., :2].shape, generator=gen) - 1)).clamp(-0.5, 0.5)


def _returns(num_envs, steps, seed, policy, vmas_side, **kwargs):
    """Per world: the return summed over the four agents, the collision penalty summed, and
    whether all four were on their goals at once; under ``policy`` (``"uniform"``: uniform
    random actions; ``"seek"``: ``_seek``), run by VMAS or by us with the generator seeded
    ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    ret, coll, reached = torch.zeros(num_envs), torch.zeros(num_envs), torch.zeros(num_envs, dtype=torch.bool)
    if vmas_side:
        vm = R.make_vmas(SCENARIO, num_envs, seed, True, gated=True, max_steps=steps, **kwargs)
        obs = torch.stack(vm.reset(), dim=1)
        for _ in range(steps):
            u = (_seek(obs, gen, 0.5) if policy == "seek" else torch.rand(num_envs, 4, 2, generator=gen) - 0.5)
            obs, rew, _, info = vm.step(list(u.unbind(1)))
            obs = torch.stack(obs, dim=1)
            ret += torch.stack(rew, dim=1).sum(1)
            coll += torch.stack([i["agent_collision_rew"] for i in info], dim=1).sum(1)
        reached |= vm.scenario.reached_goal
    else:
        env = war_envs.make(ENV, num_envs=num_envs, autoreset_mode="disabled", max_steps=steps, **kwargs)
        obs = env.reset(seed=seed)["agents"]
        for _ in range(steps):
            u = (_seek(obs, gen, 0.5) if policy == "seek" else torch.rand(num_envs, 4, 2, generator=gen) - 0.5)
            out = env.step({"agents": u})
            obs = out[0]["agents"]
            ret += out[1]["agents"].double().sum(1).float()
            coll += out[4]["agent_collision_rew"].sum(1)
            reached |= out[4]["reached_goals"] == 1
    return ret.double(), coll.double(), reached.double()


def _z(a, b):
    """The difference of the means of samples a and b in standard errors."""
    se = (a.var() / len(a) + b.var() / len(b)).sqrt()
    if float(se) == 0:
        return 0.0 if float(a.mean()) == float(b.mean()) else float("inf")
    return float((a.mean() - b.mean()).abs() / se)


@pytest.mark.parametrize("policy", ["uniform", "seek"])
@pytest.mark.optimized_kernels
def test_random_policy_returns_match_vmas(policy):
    """Independent random actions on each side (our own generator seed, VMAS's another, plain
    batch-gated VMAS): the mean return, collision penalty and success rate of 512 worlds agree
    within 4.5 standard errors.  The goal-seeking policy jams the junction (collisions in most
    worlds, checked); a VMAS with a different collision penalty is told apart (the test bites)."""
    n, steps = 512, 100
    ours = _returns(n, steps, 1, policy, False)
    theirs = _returns(n, steps, 2, policy, True)
    for name, a, b in zip(("return", "collision", "success"), ours, theirs):
        assert _z(a, b) < 4.5, (policy, name, float(a.mean()), float(b.mean()), _z(a, b))
    if policy == "seek":
        assert float((ours[1] < 0).double().mean()) > 0.5
        other = _returns(n, steps, 3, policy, True, agent_collision_penalty=-0.2)
        assert max(_z(a, b) for a, b in zip(ours[:2], other[:2])) > 4.5


def test_observation_noise():
    """``obs_noise``: the observation is VMAS's noiseless one plus U(-obs_noise, obs_noise) noise
    (KS against the uniform law), fresh every step and agent."""
    noise = 0.05
    vm = R.make_vmas(SCENARIO, 256, 0, True)
    ours = R.make_ours(ENV, 256, True, obs_noise=noise)
    R.copy_state(vm, ours, extra_state)
    R.check_observation_noise(vm, ours, noise)


@pytest.mark.parametrize("kwargs,match", [
    ({"u_range": 0}, "u_range"), ({"a_range": -1}, "a_range"), ({"obs_noise": -0.1}, "obs_noise"),
    ({"linear_friction": -0.1}, "linear_friction"), ({"box_agents": 1}, "box_agents"),
    ({"min_input_norm": -1}, "min_input_norm"), ({"comms_range": -1}, "comms_range"),
    ({"shared_rew": "yes"}, "shared_rew"), ({"n_agents": 3}, "n_agents"), ({"n_agents": 4.5}, "n_agents"),
    ({"pos_shaping_factor": float("nan")}, "pos_shaping_factor"), ({"final_reward": "x"}, "final_reward"),
    ({"agent_collision_penalty": None}, "agent_collision_penalty"), ({"max_steps": 0}, "max_steps"),
    ({"mirror_passage": True}, "mirror_passage"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, {"u_range": 0.7, "box_agents": True}):
        vm = R.make_vmas(SCENARIO, 1, 0, True, **kwargs)
        ours = war_envs.make(ENV, **kwargs)
        assert ours.groups["agents"].agents == tuple(a.name for a in vm.agents)
        space = ours.groups["agents"].action_space
        theirs = vm.action_space[0]
        np.testing.assert_array_equal(space.high, theirs.high)
        np.testing.assert_array_equal(space.low, theirs.low)
        assert ours.groups["agents"].obs_dim == vm.observation_space[0].shape[0] == 7
        assert [b.name for b in ours.layout.bodies] == [e.name for e in vm.world.entities]
    assert war_envs.make(ENV, continuous_actions=False).groups["agents"].action_space.n == 9


def test_float64_worlds_follow_float32():
    """A float64 world runs the same episode as the float32 one, to float32 rounding."""
    R.float64_follows_float32(ENV, 30, shared_rew=False)


def test_check_all():
    """``check_all`` with the default arguments (VMAS's start has no randomness: the scenario
    declares ``random_start = False``, so another seed is not asked for another start) and with
    observation noise (a seeded start, ``random_start`` True)."""
    env = war_envs.make(ENV)
    assert not env.random_start and war_envs.make(ENV, obs_noise=0.01).random_start
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, obs_noise=0.01)
    war_envs.testing.check_all(ENV, box_agents=True, obs_noise=0.1, continuous_actions=False, shared_rew=False,
                               pettingzoo=False, gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 6  # walls, four agents, goals on white
