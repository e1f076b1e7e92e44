"""Football-v0 against VMAS 1.5.2's ``football`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state and whole free-running episodes (VMAS's scripted red team
given our normal draws: ``R.football_draws``), continuous and discrete actions, default and
non-default arguments (two learning teams, formations, weaker scripted players, other sizes), the
start distributions, random-policy returns, a bite test, bad arguments and the shared API checks."""

import math

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "Football-v0", "football"
INFO = ("sparse_reward", "ball_goal_pos_rew", "all_agent_ball_pos_rew", "dist_ball_to_goal", "min_agent_dist_to_ball",
        "touching_ball")
#: non-default arguments: two learning teams (the red one mirrored), other sizes and rewards
TWO_TEAMS = dict(ai_red_agents=False, n_blue_agents=2, n_red_agents=3, pitch_length=2.0, pitch_width=1.2,
                 goal_size=0.4, ball_size=0.03, u_multiplier=0.2, max_speed=0.2, scoring_reward=10.0,
                 pos_shaping_factor_ball_goal=5.0, distance_to_ball_trigger=0.2)
#: a weaker, slower scripted team of 4 (every random draw of VMAS's AgentPolicy in play)
WEAK_AI = dict(n_red_agents=4, n_blue_agents=2, ai_strength=0.6, ai_decision_strength=(1.0, 0.7),
               ai_precision_strength=0.8, observe_teammates=False)
OPTIONS = {"default": {}, "two_teams": TWO_TEAMS, "weak_ai": WEAK_AI,
           "sizes": dict(agent_size=0.03, goal_depth=0.15, goal_size=0.5, ball_mass=0.5, ball_max_speed=0.4,
                         observe_adversaries=False, pos_shaping_factor_agent_ball=0.5, ai_strength=(0.5, 0.9)),
           "disabled_ai": dict(disable_ai_red=True, n_red_agents=2, spawn_in_formation=True,
                               formation_agents_per_column=3),
           "formation": dict(spawn_in_formation=True, only_blue_formation=False, randomise_formation_indices=True,
                             physically_different=True, n_blue_agents=5, dense_reward=False)}


def extra_state(vm):
    """Our state fields read off VMAS: the shaping values (ball's ``pos_shaping_blue`` ...), the
    nearest distances to the ball, every player's and the ball's action force (``state.force``)
    and the scripted players' ``objectives``."""
    sc, E = vm.scenario, vm.num_envs
    zeros = torch.zeros(E)

    def team(blue, red):
        return torch.stack([blue, zeros if red is None else red], dim=1)

    ball = sc.ball
    out = {"pos_shaping": team(ball.pos_shaping_blue, getattr(ball, "pos_shaping_red", None)),
           "pos_shaping_agent": team(ball.pos_shaping_agent_blue, getattr(ball, "pos_shaping_agent_red", None)),
           "min_dist_to_ball": team(sc.min_agent_dist_to_ball_blue, sc.min_agent_dist_to_ball_red)}
    out["agent_forces"] = torch.stack([a.state.force for a in vm.world.agents], dim=1)
    ctrl = sc.red_controller
    for key in ("target_pos_rel", "target_pos"):
        out[key] = torch.stack([ctrl.objectives[a][key] for a in ctrl.teammates], dim=1) if ctrl is not None else \
            torch.zeros(E, 0, 2)
    return out


def crowd_the_ball(vm, seed: int = 0):
    """A contact-heavy start: every player within 0.3 of a ball placed at random (near a line or
    a goal mouth in some worlds), everything moving."""
    gen = torch.Generator().manual_seed(seed)
    E = vm.num_envs
    sc = vm.scenario
    half = torch.tensor([sc.pitch_length / 2 + 0.05, sc.pitch_width / 2 - 0.03])
    ball = (torch.rand(E, 2, generator=gen) * 2 - 1) * half
    sc.ball.state.pos = ball
    sc.ball.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 0.4
    for a in sc.blue_agents + sc.red_agents:
        a.state.pos = ball + (torch.rand(E, 2, generator=gen) - 0.5) * 0.6
        a.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 0.3


def step_both(vm, ours, acts, ours_acts):
    """VMAS's step (its scripted team given our draws for the step), then ours."""
    with R.football_draws(vm, ours.ai_draws()):
        vm_out = vm.step(acts)
    return vm_out, ours.step(ours_acts)


def compare_step(label, vm, ours, vm_out, our_out, tol):
    R.compare_outputs(label, vm, ours, vm_out, our_out, tol, INFO)
    R.compare(f"{label} info['ball_pos']", our_out[4]["ball_pos"], torch.stack([i["ball_pos"] for i in vm_out[3]], 1),
              tol)
    R.compare_extra_state(label, vm, ours, extra_state, tol)


def run_parity(kwargs, *, steps, num_envs=8, seed=0, continuous=True, start=None, every_state=True, tol=None):
    """VMAS and ours side by side for ``steps`` steps of the same random actions: with
    ``every_state`` our worlds get VMAS's state before each step (one step from every recorded
    state), else both run free from VMAS's start."""
    vm = R.per_world_football_ai(R.make_vmas(SCENARIO, num_envs, seed, continuous, max_steps=steps + 1, **kwargs))
    if start is not None:
        start(vm)
    ours = R.make_ours(ENV, num_envs, continuous, max_steps=steps + 1, **kwargs)
    R.copy_state(vm, ours, extra_state)
    gen = torch.Generator().manual_seed(seed + 1)
    for t in range(steps):
        if every_state:
            R.copy_state(vm, ours, extra_state)
        acts, ours_acts = R.random_actions(vm, ours, gen)
        vm_out, our_out = step_both(vm, ours, acts, ours_acts)
        compare_step(f"{ENV} step {t}", vm, ours, vm_out, our_out,
                     tol or (R.STEP_TOL if every_state else R.EPISODE_TOL))
    return vm, ours


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("name", list(OPTIONS))
def test_one_step_from_every_vmas_state(name, continuous):
    run_parity(OPTIONS[name], steps=40, continuous=continuous)
    run_parity(OPTIONS[name], steps=25, continuous=continuous, start=crowd_the_ball, seed=1)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("name", list(OPTIONS))
def test_whole_episodes(name, continuous):
    """Free-running 100-step episodes from VMAS's start and from a crowded one (float32
    rounding: the scripted team's choices and the contacts agree step after step)."""
    run_parity(OPTIONS[name], steps=100, continuous=continuous, every_state=False)
    if name != "two_teams":
        run_parity(OPTIONS[name], steps=100, continuous=continuous, every_state=False, start=crowd_the_ball, seed=2)


def sync_scenario_state(twin, vm):
    """The twin's shaping values := VMAS's (the twin's state is VMAS's moved by an ulp)."""
    for key in ("pos_shaping_blue", "pos_shaping_agent_blue", "pos_shaping_red", "pos_shaping_agent_red"):
        if hasattr(vm.scenario.ball, key):
            setattr(twin.scenario.ball, key, getattr(vm.scenario.ball, key).clone())
    for key in ("min_agent_dist_to_ball_blue", "min_agent_dist_to_ball_red"):
        value = getattr(vm.scenario, key)
        setattr(twin.scenario, key, None if value is None else value.clone())


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
def test_whole_crowded_two_team_episodes_within_vmas_spread(continuous):
    """Two learning teams from a crowded start (every player at the ball: contacts all episode):
    the contact forces' last-ulp library differences grow through the pile-up as they do between
    VMAS and its own twin moved by an ulp every step; ours stays within 4x that twin's distance
    (no scripted team here: both sides' steps are VMAS's physics and scripts alone)."""
    R.whole_episode_within_vmas_spread(ENV, SCENARIO, twin_start=R.twin_every_step(), sync=sync_scenario_state,
                                       num_envs=8, steps=100, seed=2, continuous=continuous,
                                       extra_state=extra_state, info_keys=INFO, start=crowd_the_ball, **TWO_TEAMS)


def test_vmas_batch_coupling_is_the_only_change():
    """Plain VMAS (no per-world patch) in a batch of one world takes the same steps as ours; in a
    batch of 8 its off-ball scripted players aim at spots of the first world of the batch
    (``R.per_world_football_ai``'s docstring), which the patched VMAS and ours do not."""
    for seed in range(3):
        vm = R.make_vmas(SCENARIO, 1, seed, True, max_steps=30)
        ours = R.make_ours(ENV, 1, True, max_steps=30)
        R.copy_state(vm, ours, extra_state)
        gen = torch.Generator().manual_seed(seed)
        for t in range(30):
            acts, ours_acts = R.random_actions(vm, ours, gen)
            compare_step(f"seed {seed} step {t}", vm, ours, *step_both(vm, ours, acts, ours_acts), R.EPISODE_TOL)
    plain, patched = (R.make_vmas(SCENARIO, 8, 0, True, max_steps=30) for _ in range(2))
    R.per_world_football_ai(patched)
    ours = R.make_ours(ENV, 8, True, max_steps=30)
    R.copy_state(plain, ours, extra_state)
    acts, _ = R.random_actions(plain, ours, torch.Generator().manual_seed(0))
    draws = ours.ai_draws()
    for vm in (plain, patched):
        with R.football_draws(vm, draws):
            vm.step([a.clone() for a in acts])
    assert not torch.allclose(extra_state(plain)["target_pos"], extra_state(patched)["target_pos"])


def test_the_comparisons_bite():
    """A different shaping factor, a faster scripted team, or VMAS's team drawing its own normals
    is caught."""
    for ours_kwargs, match in ((dict(pos_shaping_factor_ball_goal=9.0), "reward"),
                               (dict(ai_strength=0.9), "pos|vel|obs")):
        with pytest.raises(AssertionError, match=match):
            vm = R.per_world_football_ai(R.make_vmas(SCENARIO, 8, 0, True, max_steps=30))
            crowd_the_ball(vm)
            ours = R.make_ours(ENV, 8, True, max_steps=30, **ours_kwargs)
            R.copy_state(vm, ours, extra_state)
            gen = torch.Generator().manual_seed(1)
            for t in range(30):
                acts, ours_acts = R.random_actions(vm, ours, gen)
                compare_step(f"step {t}", vm, ours, *step_both(vm, ours, acts, ours_acts), R.EPISODE_TOL)
    with pytest.raises(AssertionError, match="pos|vel|obs|target_pos"):
        vm = R.per_world_football_ai(R.make_vmas(SCENARIO, 8, 0, True, max_steps=30))
        ours = R.make_ours(ENV, 8, True, max_steps=30)
        R.copy_state(vm, ours, extra_state)
        gen = torch.Generator().manual_seed(1)
        for t in range(30):
            acts, ours_acts = R.random_actions(vm, ours, gen)
            compare_step(f"step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.EPISODE_TOL)


def test_float64_worlds_follow_float32_vmas():
    for kwargs in ({}, TWO_TEAMS):
        vm = R.per_world_football_ai(R.make_vmas(SCENARIO, 8, 0, True, max_steps=40, **kwargs))
        crowd_the_ball(vm)
        ours = war_envs.make(ENV, num_envs=8, autoreset_mode="disabled", precision="float64", max_steps=40, **kwargs)
        gen = torch.Generator().manual_seed(1)
        for t in range(20):
            R.copy_state(vm, ours, extra_state)
            acts, ours_acts = R.random_actions(vm, ours, gen)
            compare_step(f"float64 step {t}", vm, ours, *step_both(vm, ours, acts, ours_acts), R.STEP_TOL)


def _starts(n, ours: bool, **kwargs):
    if ours:
        env = war_envs.make(ENV, num_envs=n, seed=5, **kwargs)
        env.reset()
        state = env.get_state()
        return {k: state[k].double().numpy() for k in ("pos", "rot", "pos_shaping", "pos_shaping_agent",
                                                         "min_dist_to_ball")}
    vm = R.make_vmas(SCENARIO, n, 5, True, **kwargs)
    state = {**R.vmas_state(vm), **extra_state(vm)}
    return {k: state[k].double().numpy() for k in ("pos", "rot", "pos_shaping", "pos_shaping_agent",
                                                    "min_dist_to_ball")}


@pytest.mark.parametrize("name", ["default", "two_teams", "formation"])
def test_reset_distribution_matches_vmas(name):
    """5 000 starts each: every body's x and y, rotation and the shaping values have the same
    distributions (two-sample KS at level 1e-3; equal where VMAS's are constant).  (VMAS shuffles
    a formation with one permutation for its whole batch: the shuffle is tested on its own.)"""
    n = 5_000
    kwargs = {**OPTIONS[name], "randomise_formation_indices": False} if name == "formation" else OPTIONS[name]
    ours, theirs = _starts(n, True, **kwargs), _starts(n, False, **kwargs)
    crit = R.ks_critical(n, n)
    for key in ours:
        a, b = ours[key].reshape(n, -1), theirs[key].reshape(n, -1)
        assert a.shape == b.shape, key
        for k in range(a.shape[1]):
            if np.all(b[:, k] == b[0, k]):
                np.testing.assert_array_equal(a[:, k], b[:, k], err_msg=f"{key}[{k}]")
                continue
            stat = R.ks_statistic(a[:, k], b[:, k])
            assert stat < crit, f"{key}[{k}]: KS {stat:.4f} >= {crit:.4f}"


@pytest.mark.parametrize("name", ["default", "two_teams"])
@pytest.mark.optimized_kernels
def test_random_policy_returns_match_vmas(name):
    """Uniform random actions over 100-step episodes (the return counted until a goal): our mean
    return of blue player 0 is within 4 standard errors of VMAS's (its scripted team drawing from
    torch's own generator, per world as ``R.per_world_football_ai``)."""
    kwargs, n, steps = OPTIONS[name], 300, 100
    vm = R.per_world_football_ai(R.make_vmas(SCENARIO, n, 11, True, max_steps=steps, **kwargs))
    ours = war_envs.make(ENV, num_envs=n, seed=11, autoreset_mode="disabled", max_steps=steps, **kwargs)
    ours.reset()
    gen = torch.Generator().manual_seed(7)
    returns = {"vmas": torch.zeros(n, dtype=torch.float64), "ours": torch.zeros(n, dtype=torch.float64)}
    live = {k: torch.ones(n, dtype=torch.bool) for k in returns}
    for _ in range(steps):
        acts = [torch.rand(n, 2, generator=gen) * 2 - 1 for _ in vm.agents]
        _, rew, done, _ = vm.step(acts)
        returns["vmas"] += torch.where(live["vmas"], rew[0].double(), 0.0)
        live["vmas"] &= ~done
        acts = [torch.rand(n, 2, generator=gen) * 2 - 1 for _ in vm.agents]
        o_rew = ours.step({g: torch.stack(acts[s.start:s.stop], 1) for g, s in ours.groups.items()})[1]
        returns["ours"] += torch.where(live["ours"], o_rew["blue"][:, 0].double(), 0.0)
        term, trunc = ours.world_flags()
        live["ours"] &= ~(term | trunc)
    a, b = returns["ours"], returns["vmas"]
    se = float(torch.sqrt(a.var() / n + b.var() / n))
    assert abs(float(a.mean() - b.mean())) < 4 * se, (float(a.mean()), float(b.mean()), se)


def test_shuffled_formations_are_uniform_permutations():
    """``randomise_formation_indices``: each world's blue players take the formation's slots in
    a uniformly random order (chi-square over the 120 orders of 5 players, 6 000 worlds), red's
    too; VMAS's ``torch.randperm`` is that law, drawn once per reset for its whole batch (ours:
    per world)."""
    from war_envs.scenarios.vmas.football import formation_slots
    n = 6_000
    env = war_envs.make(ENV, num_envs=n, seed=3, **OPTIONS["formation"])
    env.reset()
    pos = env.get_state()["pos"].double().numpy()
    for first, size, end in ((12, 5, -1.6), (17, 3, 1.6)):
        slots = np.array(formation_slots(size, 2, end, 1.5))
        nearest = np.linalg.norm(pos[:, first:first + size, None] - slots[None, None], axis=-1).argmin(-1)
        assert np.all(np.sort(nearest, axis=1) == np.arange(size))  # every slot taken once
        codes = (nearest * size ** np.arange(size)).sum(1)
        counts = np.unique(codes, return_counts=True)[1]
        k = math.factorial(size)
        assert len(counts) == k
        chi2 = float(((counts - n / k) ** 2 / (n / k)).sum())
        assert chi2 < k - 1 + 5 * math.sqrt(2 * (k - 1)), chi2


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, TWO_TEAMS, WEAK_AI, OPTIONS["formation"]):
        vm = R.make_vmas(SCENARIO, 1, 0, True, **kwargs)
        ours = war_envs.make(ENV, **kwargs)
        assert [a for g in ours.groups.values() for a in g.agents] == [a.name for a in vm.agents]
        assert [b.name for b in ours.layout.bodies] == [e.name for e in vm.world.entities]
        for spec in ours.groups.values():
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[spec.start].high)
            assert spec.obs_dim == vm.observation_space[spec.start].shape[0]
    assert war_envs.make(ENV, continuous_actions=False).groups["blue"].action_space.n == 9


def test_scripted_team_and_ball():
    """The red team is scripted (no policy agents; VMAS's ``AgentPolicy`` pushes it at most
    ``u_multiplier`` per axis, towards the ball), ``disable_ai_red`` stops it, and the ball
    starts at rest at the centre."""
    env = war_envs.make(ENV, num_envs=4, seed=0, max_steps=50)
    env.reset()
    assert list(env.groups) == ["blue"] and env.body_index("Ball") == 18
    state = env.get_state()
    assert torch.equal(state["pos"][:, 18], torch.zeros(4, 2))
    assert torch.all(state["rot"][:, 15:18] == np.float32(np.pi))
    red = slice(15, 18)
    start = env.get_state()["pos"][:, red].clone()
    for _ in range(20):
        env.step({"blue": torch.zeros(4, 3, 2)})
    assert float((env.get_state()["pos"][:, red] - start).abs().max()) > 0.1
    forces = [16 + 8 * k + c for k in range(3) for c in (6, 7)]  # the red players' forces in blue's view
    assert float(env.step({"blue": torch.zeros(4, 3, 2)})[0]["blue"][..., forces].abs().max()) > 0.05
    still = war_envs.make(ENV, num_envs=4, seed=0, max_steps=50, disable_ai_red=True)
    still.reset()
    for _ in range(5):
        obs = still.step({"blue": torch.zeros(4, 3, 2)})[0]["blue"]
        assert torch.all(obs[..., forces] == 0)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_blue_agents": 0}, "n_blue_agents"), ({"n_red_agents": 1.5}, "n_red_agents"),
    ({"ai_blue_agents": True}, "ai_blue_agents"), ({"enable_shooting": True}, "enable_shooting"),
    ({"dict_obs": True}, "dict_obs"), ({"n_traj_points": 4}, "n_traj_points"),
    ({"dense_reward_ratio": 0.5}, "dense_reward_ratio"), ({"physically_different": True}, "physically_different"),
    ({"n_blue_agents": 1}, "n_blue_agents"), ({"ai_red_agents": False, "n_red_agents": 1}, "n_red_agents"),
    ({"ai_strength": 1.5}, "ai_strength"), ({"ai_decision_strength": (1.0, 0.5, 0.2)}, "ai_decision_strength"),
    ({"ai_precision_strength": "x"}, "ai_precision_strength"), ({"agent_size": 0.0}, "agent_size"),
    ({"goal_size": 1.6}, "goal_size"), ({"pitch_width": -1.0}, "pitch_width"),
    ({"formation_agents_per_column": 0}, "formation_agents_per_column"), ({"formation_noise": -0.1}, "formation_noise"),
    ({"viewer_size": (10,)}, "viewer_size"), ({"scoring_reward": float("nan")}, "scoring_reward"),
    ({"dense_reward": 1}, "dense_reward"), ({"shooting_angle": "wide"}, "shooting_angle"),
    ({"max_steps": 0}, "max_steps"), ({"unknown_kwarg": 1}, "unknown_kwarg"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, pettingzoo=False, gymnasium=False, **TWO_TEAMS)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 4  # lines, nets, both teams, the ball on white


def test_scripted_draws_are_fresh_standard_normals():
    """The scripted team's draws (``ai_draws``): standard normals (KS against numpy's), apart per
    world, player, purpose and step, the same when the step is drawn again."""
    env = war_envs.make(ENV, num_envs=2_000, seed=4, **WEAK_AI)
    env.reset()
    first = env.ai_draws()
    assert torch.equal(first["samples"], env.ai_draws()["samples"])
    env.step({"blue": torch.zeros(2_000, 2, 2)})
    second = env.ai_draws()
    ref = np.random.default_rng(0).standard_normal(20_000)
    for key, value in first.items():
        u = value.flatten().numpy()
        assert R.ks_statistic(u, ref) < R.ks_critical(len(u), len(ref)), key
        assert float((value != second[key]).float().mean()) > 0.99, key
    flat = torch.cat([v.flatten(1) for v in first.values()], dim=1)
    assert float((flat[1:] != flat[:-1]).float().mean()) > 0.99
    assert len(torch.unique(flat)) > 0.99 * flat.numel()
