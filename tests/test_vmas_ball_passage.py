"""BallPassage-v0 against VMAS 1.5.2's ``ball_passage`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state, whole free-running episodes (continuous and discrete
actions, default and non-default arguments, contact-heavy starts: the ball and agents driven
through a gap, pressed into the wall, a crowd), the ball on its goal and at the arena's edge,
the box-sphere overlap test bit for bit, the reset distribution, random-policy return
statistics, bad arguments and the shared API checks."""

import math

import numpy as np
import pytest
import torch
import vmas_reference as R
import warp as wp

import war_envs
import war_envs.testing
from war_envs.core.fields import module_kernels
from war_envs.scenarios.vmas import ball_passage as BP

pytest.importorskip("vmas")

ENV, SCENARIO = "BallPassage-v0", "ball_passage"
GOAL, BALL, FIRST_BOX, N_BOXES = 0, 1, 2, 20
AGENTS = FIRST_BOX + N_BOXES  # body index of agent_0
INFO = ("pos_rew", "collision_rew")
OPTIONS = {"n_passages": 3, "fixed_passage": True, "random_start_angle": False}
R_AGENT = 0.03333


def extra_state(vm):
    ball = vm.scenario.ball
    return {"pos_shaping_pre": ball.pos_shaping_pre, "pos_shaping_post": ball.pos_shaping_post}


def _gap_x(vm) -> torch.Tensor:
    """Per world, the x of the first gap box (VMAS's ``passages`` that do not collide)."""
    gaps = [p for p in vm.scenario.passages if not p.collide]
    return gaps[0].state.pos[:, 0].clone()


def through_the_gap(vm):
    """A contact-heavy start: the ball just under a gap (off its centre by up to 0.05, so it
    strikes the gap's edges), moving up fast, the agents behind it on either side moving up
    (they strike the boxes beside the gap); the ball goes through the wall."""
    gen = torch.Generator().manual_seed(5)
    E = vm.num_envs
    x = _gap_x(vm) + (torch.rand(E, generator=gen) - 0.5) * 0.1
    y = -0.1 - 0.045 + 0.01 * torch.rand(E, generator=gen)
    ball = vm.scenario.ball
    ball.state.pos = torch.stack([x, y], 1)
    ball.state.vel = torch.stack([0.1 * (torch.rand(E, generator=gen) - 0.5), 0.4 + 0.2 * torch.rand(E, generator=gen)], 1)
    for side, agent in zip((-1, 1), vm.world.agents):
        agent.state.pos = torch.stack([x + side * 0.05, y - 0.07], 1)
        agent.state.vel = torch.stack([torch.zeros(E), 0.3 + 0.2 * torch.rand(E, generator=gen)], 1)


def at_the_wall(vm):
    """A contact-heavy start: the ball and the agents pushed into the wall's bottom edge
    (y = -0.1) at random places, overlapping boxes, moving up."""
    gen = torch.Generator().manual_seed(2)
    E = vm.num_envs
    for k, body in enumerate([vm.scenario.ball] + list(vm.world.agents)):
        x = (torch.rand(E, generator=gen) - 0.5) * 1.6
        y = -0.1 + 0.06 * (torch.rand(E, generator=gen) - 0.5)
        body.state.pos = torch.stack([x, y], 1)
        body.state.vel = torch.stack([0.2 * (torch.rand(E, generator=gen) - 0.5), torch.full((E,), 0.3)], 1)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=40,
                                info_keys=INFO, compare_state=True, **kwargs)


@pytest.mark.parametrize("start", [through_the_gap, at_the_wall, R.crowd], ids=["gap", "wall", "crowd"])
@pytest.mark.parametrize("kwargs", [{}, {"n_passages": 2}], ids=["default", "two"])
def test_one_step_contact_heavy(start, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, extra_state=extra_state, steps=30, start=start, info_keys=INFO,
                                compare_state=True, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS, {"n_passages": 20}], ids=["default", "options", "no_wall"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=100, info_keys=INFO,
                    compare_state=True, **kwargs)


@pytest.mark.parametrize("start", [through_the_gap, at_the_wall, R.crowd], ids=["gap", "wall", "crowd"])
@pytest.mark.parametrize("continuous", [True, False])
def test_whole_episode_contact_heavy(start, continuous):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=60, start=start,
                    info_keys=INFO, compare_state=True, num_envs=16)


def test_contact_heavy_starts_do_what_they_say():
    """The starts above reach what they are for: through_the_gap puts the ball above the wall
    (the goal shaping takes over) after striking the gap's edges, at_the_wall makes VMAS's
    overlap penalties, and both push the ball off its course (contact forces)."""
    vm, _ = R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=15, start=through_the_gap,
                            info_keys=INFO, num_envs=16)
    assert int((vm.scenario.ball.state.pos[:, 1] > 0).sum()) >= 8
    vm = R.make_vmas(SCENARIO, 16, 0, True)
    at_the_wall(vm)
    out = vm.step([torch.zeros(16, 2)] * 2)
    assert int((out[3][0]["collision_rew"] < 0).sum()) >= 8
    assert float(out[3][0]["collision_rew"].min()) <= 3 * -0.06 + 1e-6  # several overlaps in one world


def test_comparison_bites():
    """A perturbed collision reward, ball mass, ball friction or agent drag on VMAS's side is
    caught."""
    def penalty(vm):
        at_the_wall(vm)
        vm.scenario.collision_reward = -0.07

    def heavier_ball(vm):
        through_the_gap(vm)
        vm.scenario.ball.mass = 1.1

    def friction(vm):
        through_the_gap(vm)
        vm.scenario.ball.linear_friction = 0.03

    def drag(vm):
        vm.world.agents[0]._drag = 0.2

    for start, what in ((penalty, "reward|collision_rew"), (heavier_ball, "obs|vel|pos"), (friction, "obs|vel|pos"),
                        (drag, "obs|vel|pos")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=20, start=start, info_keys=INFO)


def _step_both(vm, ours):
    R.copy_state(vm, ours, extra_state)
    vm_out = vm.step([torch.zeros(vm.num_envs, 2)] * 2)
    our_out = ours.step({"agents": torch.zeros(vm.num_envs, 2, 2)})
    R.compare_outputs("step", vm, ours, vm_out, our_out, R.STEP_TOL, INFO)
    return vm_out, our_out


def test_ball_on_goal_ends_the_episode():
    """The ball put at rest within 0.01 of its goal in half the worlds: VMAS's done, our
    termination and ``reached_goal``; above the wall the reward is the goal shaping."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=5)
    ball, goal = vm.scenario.ball, vm.scenario.goal
    on = torch.arange(8) < 4
    pos = ball.state.pos.clone()
    pos[on] = goal.state.pos[on] + torch.tensor([0.006, -0.005])
    ball.state.pos = pos
    ball.state.vel = torch.zeros_like(ball.state.vel)
    vm_out, our_out = _step_both(vm, ours := R.make_ours(ENV, 8, True, max_steps=5))
    assert torch.equal(vm_out[2], on)
    info = our_out[4]
    assert torch.equal(info["reached_goal"].bool(), on) and torch.equal(ours.world_flags()[0].cpu(), on)
    assert bool(info["ball_passed"][on].all())


@pytest.mark.parametrize("axis,side", [(0, -1), (0, 1), (1, -1), (1, 1)])
def test_ball_at_the_edge_ends_the_episode(axis, side):
    """The ball at rest within its radius of one side of the arena (half the worlds; the others
    just inside the limit): VMAS's done and our termination, not ``reached_goal``."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=5)
    ball = vm.scenario.ball
    out = torch.arange(8) < 4
    pos = ball.state.pos.clone()
    pos[:, axis] = torch.where(out, torch.tensor(side * 0.98), torch.tensor(side * 0.96))
    ball.state.pos = pos
    ball.state.vel = torch.zeros_like(ball.state.vel)
    vm_out, our_out = _step_both(vm, ours := R.make_ours(ENV, 8, True, max_steps=5))
    assert torch.equal(vm_out[2], out) and torch.equal(ours.world_flags()[0].cpu(), out)
    assert not bool(our_out[4]["reached_goal"].any())


def _overlap_probe(Struct):
    def overlap_probe(w: Struct, box: int, body: int, out: wp.array(dtype=wp.int32)):
        e = wp.tid()
        out[e] = 0
        if BP.box_overlaps(w, e, box, body):
            out[e] = 1

    return module_kernels(f"test_ball_passage_probe_{Struct.__name__}", lambda: (overlap_probe,))["overlap_probe"]


def test_box_overlap_is_vmas_bit_for_bit():
    """The overlap penalty's test against VMAS's ``World.is_overlapping`` for the ball at every
    float32 x in a window around the threshold beside a box's side: VMAS compares with
    ``radius + LINE_MIN_DIST`` summed as Python floats (0.039996665 in float32), one ulp below the
    float32 sum of the two (0.03999667); the window holds distances between the two, where only
    VMAS's threshold gives VMAS's answer."""
    E = 512
    ours = R.make_ours(ENV, E, True, fixed_passage=True)
    ours.reset(seed=0)
    state = ours.get_state()
    box = FIRST_BOX
    box_x = -0.0715
    side = np.float32(box_x) + np.float32(0.103 / 2)
    start = np.float32(side + np.float32(0.039996665))
    xs = [start]
    for _ in range(E // 2):
        xs.insert(0, np.nextafter(xs[0], np.float32(-1)))
        xs.append(np.nextafter(xs[-1], np.float32(1)))
    xs = torch.tensor(np.array(xs[:E], dtype=np.float32))
    state["pos"][:, box] = torch.tensor([box_x, 0.0])
    state["pos"][:, BALL, 0] = xs
    state["pos"][:, BALL, 1] = 0.03
    ours.set_state(state)
    out = wp.zeros(E, dtype=wp.int32)
    wp.launch(_overlap_probe(ours._Struct), dim=E, inputs=[ours._w, box, BALL, out], device=ours.device)
    mine = wp.to_torch(out).bool()
    vm = R.make_vmas(SCENARIO, E, 0, True, fixed_passage=True)
    R.set_vmas_state(vm, ours.get_state())
    theirs = vm.world.is_overlapping(vm.world.entities[box], vm.scenario.ball)
    assert torch.equal(mine.cpu(), theirs)
    # the window does hold distances between the two thresholds (the test can tell them apart)
    from vmas.simulator.physics import _get_closest_point_box

    p = vm.scenario.ball.state.pos
    closest = _get_closest_point_box(vm.world.entities[box].state.pos, vm.world.entities[box].state.rot,
                                     0.2, 0.103, p)
    d = torch.linalg.vector_norm(p - closest, dim=-1)
    between = (d >= np.float32(R_AGENT + 4 / 6e2)) & (d < np.float32(R_AGENT) + np.float32(4 / 6e2))
    assert bool(between.any()) and bool(theirs.any()) and not bool(theirs.all())


def _angle_and_parts(state):
    p = state["pos"]
    half = (p[:, AGENTS + 1] - p[:, AGENTS - 0]) / 2
    out = {"ball_x": p[:, BALL, 0], "ball_y": p[:, BALL, 1], "goal_x": p[:, GOAL, 0], "goal_y": p[:, GOAL, 1],
           "angle": torch.atan2(half[:, 1].double(), half[:, 0].double()).float()}
    return out


@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_reset_distribution_matches_vmas(kwargs):
    """10 000 of our worlds' starts against 10 000 of VMAS's (KS on the ball's and goal's
    coordinates and the pair's angle; VMAS's batch draws them independently per world) and the
    gaps' wall slots against 2 000 of VMAS's per-world resets (chi-square: a batched VMAS reset
    draws one permutation of the boxes for the whole batch); every bound, the agents at the
    ball -+ 0.25 (cos a, sin a), the boxes exactly on VMAS's float32 slots, the shaping
    distances."""
    from scipy.stats import chi2_contingency

    n = 10_000
    vm = R.make_vmas(SCENARIO, n, 0, True, **kwargs)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=n, **kwargs)
    ours.reset(seed=4)
    mine = ours.get_state()
    mp, tp = _angle_and_parts(mine), _angle_and_parts(theirs)
    random_angle = kwargs.get("random_start_angle", True)
    for key in ("ball_x", "ball_y", "goal_x", "goal_y") + (("angle",) if random_angle else ()):
        assert R.ks_statistic(mp[key].numpy(), tp[key].numpy()) < R.ks_critical(n, n), key
    for state, parts in ((mine, mp), (theirs, tp)):
        p = state["pos"]
        assert float(parts["angle"].abs().max()) <= math.pi / 2 + 1e-5
        torch.testing.assert_close((p[:, AGENTS + 1] - p[:, AGENTS]).norm(dim=-1), torch.full((n,), 0.5),
                                   rtol=0, atol=2e-6)
        torch.testing.assert_close(p[:, AGENTS] + p[:, AGENTS + 1], 2 * p[:, BALL], rtol=0, atol=1e-6)
        assert float(p[:, AGENTS:, :].abs().max()) <= 1 - R_AGENT + 1e-6  # both agents in the arena
        assert float(p[:, AGENTS:, 1].max()) <= -2 * R_AGENT - 0.1 + 1e-6  # under the wall with room
        assert float(p[:, GOAL, 0].abs().max()) <= 1 - R_AGENT and float(p[:, GOAL, 1].max()) <= 1 - R_AGENT
        assert float(p[:, GOAL, 1].min()) >= 2 * R_AGENT + 0.1 - 1e-7
        assert bool((p[:, FIRST_BOX:AGENTS, 1] == 0).all())
    if not random_angle:
        # VMAS's float32 offsets, bit for bit: 0.25 cos(-pi/2), 0.25 sin(-pi/2)
        a = torch.tensor([-torch.pi / 2], dtype=torch.float32)
        d = torch.cat([0.25 * torch.cos(a), 0.25 * torch.sin(a)])
        for state in (mine, theirs):
            p = state["pos"]
            torch.testing.assert_close(p[:, AGENTS], p[:, BALL] - d, rtol=0, atol=0)
            torch.testing.assert_close(p[:, AGENTS + 1], p[:, BALL] + d, rtol=0, atol=0)
    # the boxes on VMAS's float32 slots (in order with fixed_passage)
    slots = torch.sort(theirs["pos"][0, FIRST_BOX:AGENTS, 0]).values
    torch.testing.assert_close(torch.sort(mine["pos"][:, FIRST_BOX:AGENTS, 0], 1).values, slots.expand(n, N_BOXES),
                               rtol=0, atol=0)
    if kwargs.get("fixed_passage", False):
        torch.testing.assert_close(mine["pos"][:, FIRST_BOX:AGENTS, 0], theirs["pos"][:, FIRST_BOX:AGENTS, 0],
                                   rtol=0, atol=0)
    else:
        def slot_of(x):
            return torch.round((x + 1 + R_AGENT - 0.103 / 2) / 0.103).long()

        m = 2000
        vm_small = R.make_vmas(SCENARIO, m, 0, True, **kwargs)
        for i in range(m):
            vm_small.scenario.reset_world_at(i)
        gaps = [FIRST_BOX + k for k in BP.gap_boxes(kwargs.get("n_passages", 1))]
        theirs_small = R.vmas_state(vm_small)
        for b in (gaps[0], FIRST_BOX):
            table = np.stack([np.bincount(slot_of(mine["pos"][:, b, 0]).numpy(), minlength=N_BOXES),
                              np.bincount(slot_of(theirs_small["pos"][:, b, 0]).numpy(), minlength=N_BOXES)])
            assert chi2_contingency(table).pvalue > 1e-3, (b, table)
    # the shaping distances of the start
    gaps = [FIRST_BOX + k for k in BP.gap_boxes(kwargs.get("n_passages", 1))]
    ball = mine["pos"][:, BALL]
    pre = torch.stack([torch.linalg.vector_norm(ball - mine["pos"][:, g], dim=-1) for g in gaps], 1).min(1).values
    torch.testing.assert_close(mine["pos_shaping_pre"], pre, rtol=0, atol=0)
    torch.testing.assert_close(mine["pos_shaping_post"], torch.linalg.vector_norm(ball - mine["pos"][:, GOAL], dim=-1),
                               rtol=0, atol=0)


def _random_policy_episodes(step, rewards_of, done_of, E, T, gen):
    """Return, length and summed collision penalty of E episodes of at most T steps under a
    uniformly random continuous policy (the return counted up to and including the first done)."""
    ret, pen = torch.zeros(E, dtype=torch.float64), torch.zeros(E, dtype=torch.float64)
    length, alive = torch.zeros(E), torch.ones(E, dtype=torch.bool)
    for _ in range(T):
        u = torch.rand(E, 2, 2, generator=gen) * 2 - 1
        out = step(u)
        rew, coll = rewards_of(out)
        ret += torch.where(alive, rew.double(), 0.0)
        pen += torch.where(alive, coll.double(), 0.0)
        length += alive.float()
        alive &= ~done_of(out)
    return {"return": ret.numpy(), "length": length.numpy(), "penalty": pen.numpy()}


@pytest.mark.parametrize("kwargs", [{}, {"n_passages": 4, "random_start_angle": False}], ids=["default", "options"])
@pytest.mark.optimized_kernels
def test_random_policy_statistics_match_vmas(kwargs):
    """A uniformly random policy's episode return, its collision penalty and shaping parts, and
    the episode length (1 000 episodes of at most 100 steps, counted up to VMAS's done) in plain
    VMAS (batch gate included, starts from per-world resets) and here, within 4 standard
    errors."""
    E, T = 1000, 100
    vm = R.make_vmas(SCENARIO, E, 7, True, gated=True, max_steps=T, **kwargs)
    for i in range(E):
        vm.scenario.reset_world_at(i)
    theirs = _random_policy_episodes(
        lambda u: vm.step([u[:, 0], u[:, 1]]), lambda out: (out[1][0], out[3][0]["collision_rew"]),
        lambda out: out[2], E, T, torch.Generator().manual_seed(11))
    ours = war_envs.make(ENV, num_envs=E, autoreset_mode="disabled", max_steps=T, **kwargs)
    ours.reset(seed=12)
    mine = _random_policy_episodes(
        lambda u: ours.step({"agents": u}), lambda out: (out[1]["agents"][:, 0], out[4]["collision_rew"][:, 0]),
        lambda out: ours.world_flags()[0].cpu(), E, T, torch.Generator().manual_seed(13))
    for stats in (mine, theirs):
        stats["shaping"] = stats["return"] - stats["penalty"]
    for key in ("return", "penalty", "shaping", "length"):
        a, b = mine[key], theirs[key]
        se = math.sqrt(a.var() / a.size + b.var() / b.size)
        assert se > 0 or key == "length", key  # (a random policy rarely ends an episode)
        assert abs(a.mean() - b.mean()) <= 4 * se + 1e-12, (key, a.mean(), b.mean(), se)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_passages": 0}, "n_passages"), ({"n_passages": 21}, "n_passages"), ({"n_passages": 2.0}, "n_passages"),
    ({"fixed_passage": 1}, "fixed_passage"), ({"random_start_angle": "yes"}, "random_start_angle"),
    ({"max_steps": -3}, "max_steps"), ({"continuous_actions": "no"}, "continuous_actions"),
    ({"shared_reward": True}, "shared_reward"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, {"n_passages": 5}):
        for continuous in (True, False):
            vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
            ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
            spec = ours.groups["agents"]
            assert spec.agents == tuple(a.name for a in vm.agents)
            assert spec.obs_dim == vm.observation_space[0].shape[0] == 8 + 2 * kwargs.get("n_passages", 1)
            if continuous:
                np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
            else:
                assert spec.action_space.n == vm.action_space[0].n == 9
            assert [ours.body_index(e.name) for e in vm.world.entities] == list(range(len(vm.world.entities)))
            assert [b.collide for b in ours.layout.bodies] == [e.collide for e in vm.world.entities]


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 20, n_passages=2, autoreset_mode="disabled")


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, pettingzoo=False, gymnasium=False, **OPTIONS)


def test_picture_leaves_the_gaps_out():
    """The gap boxes are not drawn (VMAS's ``is_rendering``): more gaps, less red wall."""
    red = []
    for n in (1, 10):
        env = war_envs.make(ENV, num_envs=1, seed=0, n_passages=n)
        env.reset()
        frame = env.render_frame(0, width=240, height=240)
        assert frame.shape == (240, 240, 3) and frame.dtype == np.uint8
        red.append(int(((frame[..., 0] > 150) & (frame[..., 1] < 100)).sum()))
    assert 0 < red[1] < 0.6 * red[0]
