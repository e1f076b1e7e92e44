"""The planner (``war_train.plan.planner``) and the private future it must not peek at
(``BatchedEnv.redraw_private_future``, Relay-v0's goal schedule)."""

import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import war_envs
from war_train.config import TrainConfig
from war_train.learn.policy import CriticState, build_policies
from war_train.learn.valuenorm import ValueNorm
from war_train.plan.planner import Planner, check_plannable, policy_model

torch.set_num_threads(1)
N_LANDMARKS = 8


def relay(num_envs, seed=0, **kw):
    return war_envs.make("Relay-v0", num_envs=num_envs, seed=seed, **kw)


def scripted_sentries(env) -> torch.Tensor:
    """Every sentry heads for the landmark it hears (no-op while it hears nothing)."""
    obs = env.observations()["sentry"]                     # [E, S, 4 + 3L]
    rel = obs[..., 4:4 + 2 * N_LANDMARKS].reshape(*obs.shape[:2], N_LANDMARKS, 2)
    heard = obs[..., 4 + 2 * N_LANDMARKS:]
    target = rel.gather(2, heard.argmax(-1)[..., None, None].expand(-1, -1, 1, 2))[:, :, 0]
    dx, dy = target[..., 0], target[..., 1]
    act = torch.where(dx.abs() > dy.abs(), torch.where(dx > 0, 2, 1), torch.where(dy > 0, 4, 3))
    return torch.where(heard.sum(-1) > 0, act, torch.zeros_like(act)).long()


def goal_ahead(state: dict, steps: int) -> torch.Tensor:
    """Per world, the goal in force ``steps`` steps on, by the world's goal schedule."""
    t = state["t"].long() + steps
    begun = (state["switch_time"].long() <= t[:, None]).sum(1)
    return state["goal_sequence"].long().gather(1, begun[:, None])[:, 0]


def schedule_value(env, n):
    """A uniform prior, and a value that reads the world's goal schedule as a critic given the
    world state would: minus 5 x the sentries' mean distance from the goal in force 5 steps on
    to where they are heading (position + 1 s of velocity)."""
    state = {k: v[:n] for k, v in env.get_state().items()}
    landmark = state["landmark_pos"][torch.arange(n), goal_ahead(state, 5)]
    heading = state["agent_pos"][:, 1:] + state["agent_vel"][:, 1:]
    return (torch.full((n, N_LANDMARKS), 1.0 / N_LANDMARKS),
            -5.0 * (heading - landmark[:, None]).norm(dim=-1).mean(1))


def scripted_planner(capacity, *, peek, simulations=24, depth=3, seed=0, **kw):
    def make(num_envs, autoreset_mode):
        return relay(num_envs, autoreset_mode=autoreset_mode, **kw)
    return Planner(make, capacity, "commander", evaluate=schedule_value,
                   act_others=lambda env: {"sentry": scripted_sentries(env)},
                   simulations=simulations, depth=depth, gamma=1.0, seed=seed, peek=peek)


def play(planner, env, *, greedy=True) -> float:
    """One episode of every world: the commander decides by ``planner``, the sentries are
    scripted; the mean return per world."""
    env.reset()
    total = torch.zeros(env.num_envs, dtype=torch.float64)
    worlds = torch.arange(env.num_envs)
    for _ in range(env.max_cycles):
        say = planner.decide(env, worlds, greedy=greedy).actions
        _, reward, _, _, _ = env.step({"commander": say[:, None], "sentry": scripted_sentries(env)})
        total += reward["commander"][:, 0].double()
    return float(total.mean())


# ----------------------------------------------------------------------------- private future
def stepped(env, steps):
    env.reset()
    zeros = {g: torch.zeros(env.num_envs, s.n_agents, dtype=torch.long) for g, s in env.groups.items()}
    for _ in range(steps):
        env.step(zeros)
    return env


@pytest.mark.parametrize("steps", [0, 13, 31])
def test_relay_redraws_its_schedule_after_the_present_and_keeps_the_past(steps):
    env = stepped(relay(512), steps)
    before, goal = env.get_state(), env.current_goal()
    obs = {g: o.clone() for g, o in env.observations().items()}
    env.redraw_private_future(None, torch.Generator().manual_seed(5))
    after = env.get_state()
    assert np.array_equal(env.current_goal(), goal)                      # the goal in force stays
    for g in obs:                                                        # nothing seen changes
        assert torch.equal(env.observations()[g], obs[g])
    t = before["t"][:, None]
    past = before["switch_time"] <= t
    assert torch.equal(after["switch_time"][past], before["switch_time"][past])
    assert (after["switch_time"][~past] > t.expand_as(past)[~past]).all()   # the next switch is still to come
    begun = past.sum(1)
    for w in range(0, 512, 37):                                          # goals said so far stay
        assert torch.equal(after["goal_sequence"][w, :begun[w] + 1], before["goal_sequence"][w, :begun[w] + 1])
    changed = (after["switch_time"] != before["switch_time"]).any(1) | (
        after["goal_sequence"] != before["goal_sequence"]).any(1)
    assert changed.float().mean() > 0.9                                  # the future is another one
    assert (after["rng_key"] != before["rng_key"]).all()
    for key in before:
        if key not in ("switch_time", "goal_sequence", "rng_key"):
            assert torch.equal(after[key], before[key]), key


def test_a_redrawn_schedule_has_the_resets_distribution():
    # at t = 0 nothing is known but the first goal: the redraw must draw the schedule as a reset does
    resets = stepped(relay(8192, seed=1), 0).get_state()
    env = stepped(relay(8192, seed=2), 0)
    env.redraw_private_future(None, torch.Generator().manual_seed(7))
    redrawn = env.get_state()
    for key, values in [("first hold", lambda s: s["switch_time"][:, 0]),
                        ("second hold", lambda s: s["switch_time"][:, 1] - s["switch_time"][:, 0]),
                        ("jump", lambda s: (s["goal_sequence"][:, 1] - s["goal_sequence"][:, 0]) % N_LANDMARKS)]:
        a = torch.bincount(values(resets).long(), minlength=32)[:32].double() / 8192
        b = torch.bincount(values(redrawn).long(), minlength=32)[:32].double() / 8192
        assert (a > 0).equal(b > 0), key                                 # the same support
        assert (a - b).abs().max() < 0.02, key                           # ~0.005 is the sampling noise


def test_redraw_refuses_bad_arguments():
    env = relay(2)
    env.reset()
    with pytest.raises(TypeError, match=r"generator: expected a torch.Generator"):
        env.redraw_private_future(None, 3)
    with pytest.raises(ValueError, match=r"worlds: expected world indices in \[0, 1\]"):
        env.redraw_private_future([2], torch.Generator())


# ----------------------------------------------------------------------------- the planner
def test_the_planner_leaves_the_real_worlds_bitwise_unchanged():
    env = stepped(relay(6), 7)
    state = env.get_state()
    obs = {g: o.clone() for g, o in env.observations().items()}
    planner = scripted_planner(6, peek=False, simulations=10, depth=3)
    out = planner.decide(env, torch.tensor([0, 2, 5]))
    assert out.actions.shape == (3,) and (out.search.visits.sum(1) == 10).all()
    assert torch.allclose(out.logp.exp(), out.policy.gather(1, out.actions[:, None])[:, 0].float())
    for key, tensor in env.get_state().items():
        assert torch.equal(tensor, state[key]), key
    for g in obs:
        assert torch.equal(env.observations()[g], obs[g])
    planner.close()


def test_a_planner_that_peeks_scores_higher_than_the_honest_one():
    # the honest planner's copies hold another goal schedule than the real world's (so it says
    # the goal in force, as a commander told the goal does); the peeking one sees the next switch
    # coming and sends the sentries early (measured: honest -35.4, told -36.3, peeking -25.7)
    n = 48
    honest = play(scripted_planner(n, peek=False), relay(n, seed=11))
    peeking = play(scripted_planner(n, peek=True), relay(n, seed=11))
    told = relay(n, seed=11)                   # a commander that says the goal in force
    told.reset()
    total = torch.zeros(n, dtype=torch.float64)
    for _ in range(told.max_cycles):
        say = torch.as_tensor(told.current_goal()).long()
        _, reward, _, _, _ = told.step({"commander": say[:, None], "sentry": scripted_sentries(told)})
        total += reward["commander"][:, 0].double()
    assert peeking > honest + 4.0, (peeking, honest)
    assert abs(honest - float(total.mean())) < 2.5, (honest, float(total.mean()))


def test_the_same_seed_plans_the_same_and_the_state_dict_resumes_it():
    env = stepped(relay(4), 3)
    worlds = torch.arange(4)
    a, b = scripted_planner(4, peek=False, simulations=6, depth=2, seed=3), scripted_planner(4, peek=False,
                                                                                             simulations=6, depth=2,
                                                                                             seed=3)
    first = a.decide(env, worlds)
    saved = a.state_dict()
    second = a.decide(env, worlds)
    assert torch.equal(first.actions, b.decide(env, worlds).actions)
    b.load_state_dict(saved)
    assert torch.equal(second.search.visits, b.decide(env, worlds).search.visits)


def test_the_planner_with_a_trainers_policies():
    env = stepped(relay(5), 4)
    cfg = TrainConfig(scenario="Relay-v0", num_envs=5)
    state_dim = CriticState(env).dim
    policies = build_policies(dict(env.groups), state_dim, cfg, torch.device("cpu"))
    vnorm = {g: ValueNorm() for g in env.groups}
    evaluate, act_others = policy_model(policies, vnorm, "commander", critic_input="state")
    prior, value = evaluate(env, 3)
    assert prior.shape == (3, N_LANDMARKS) and torch.allclose(prior.sum(1), torch.ones(3))
    assert value.shape == (3,)
    assert set(act_others(env)) == {"sentry"} and act_others(env)["sentry"].shape == (5, 9)
    planner = Planner(lambda num_envs, autoreset_mode: relay(num_envs, autoreset_mode=autoreset_mode), 5,
                      "commander", evaluate=evaluate, act_others=act_others, simulations=8, depth=3)
    out = planner.decide(env, torch.tensor([1, 4]), greedy=True)
    assert torch.equal(out.actions, out.policy.argmax(1))


def test_only_a_group_of_one_discrete_agent_is_planned():
    env = relay(2)
    assert check_plannable(env, "commander") == N_LANDMARKS
    with pytest.raises(ValueError, match=r"planner: group 'sentry' has 9 agents"):
        check_plannable(env, "sentry")
    with pytest.raises(ValueError, match=r"planner: expected a group of Relay-v0 \(commander, sentry\), got 'x'"):
        check_plannable(env, "x")
    box = relay(2, continuous_actions=True)
    with pytest.raises(ValueError, match=r"acts in Box"):
        check_plannable(box, "commander")
    assert AutoresetMode.DISABLED  # (the planning env's mode; imported for the factories above)


def test_a_run_with_a_planner_evaluates_it_beside_the_raw_policies(tmp_path):
    import json

    from war_train.run.cli import main

    run = tmp_path / "run"
    args = ["train", "Relay-v0", "--preset", "smoke", "--num-envs", "8", "--total-steps", "200", "--planner", "commander",
            "--planner-simulations", "4", "--planner-depth", "2", "--env-kwargs", '{"num_sentries": 2}',
            "--eval-episodes", "6", "--no-gif", "--no-progress", "--run-dir", str(run)]
    assert main(args) == 0
    results = json.loads((run / "eval.json").read_text())["results"]
    assert {"greedy", "plan"} <= set(results)   # the raw policies, and the commander by its search
    assert main(["eval", str(run), "--episodes", "4", "--no-planner", "--json", str(tmp_path / "raw.json")]) == 0
    raw = json.loads((tmp_path / "raw.json").read_text())["results"]
    assert "greedy" in raw and "plan" not in raw
    assert main(["eval", str(run), "--episodes", "4", "--json", str(tmp_path / "plan.json")]) == 0
    assert "plan" in json.loads((tmp_path / "plan.json").read_text())["results"]
    pytest.importorskip("PIL")
    assert main(["render", str(run), "--mode", "plan", "--gif", str(tmp_path / "plan.gif")]) == 0
    assert (tmp_path / "plan.gif").stat().st_size > 0


def test_a_planning_groups_draft_learns_to_guess_the_searchs_actions():
    import war_train
    from war_train.config import WarConfig
    from war_train.war.mode import WarMode

    cfg = war_train.preset_config("smoke", scenario="Relay-v0", num_envs=4, rollout_length=8, total_env_steps=64,
                                  env_kwargs={"num_sentries": 2}, planner="commander", planner_simulations=2,
                                  planner_depth=1, gif=False, eval_episodes=0)
    war = WarConfig(arm="war", fill="draft", costs={"commander": {"per_decision_ms": 50.0},
                                                   "sentry": {"per_decision_ms": 5.0}})
    mode = WarMode(cfg, war)
    try:
        obs = torch.randn(32, 1, 3 * N_LANDMARKS, generator=torch.Generator().manual_seed(0))
        searched = torch.full((32, 1), 5)                      # the search said landmark 5 every time
        for _ in range(20):
            mode._distill("commander", obs, searched)
        guess = mode.drafts["commander"](mode.policies["commander"].actor_input(obs))[0].argmax(-1)
        assert (guess == 5).all()
    finally:
        mode.close()


def test_overlap_plans_with_the_snapshot_it_collects_with_and_steal_refuses_a_planner(monkeypatch):
    """Real overlap: the collection thread's search is guided by the snapshot of the networks it
    samples with, not by the live ones the learner is updating meanwhile."""
    import war_train
    from war_train.config import WarConfig
    from war_train.plan import planner as planner_module
    from war_train.war.mode import WarMode

    cfg = war_train.preset_config("smoke", scenario="Relay-v0", num_envs=4, rollout_length=8, total_env_steps=64,
                                  env_kwargs={"num_sentries": 2}, planner="commander", planner_simulations=2,
                                  planner_depth=1, gif=False, eval_episodes=0)
    guided = []
    real_model = planner_module.trainer_model

    def spy(cfg, policies, vnorm):
        guided.append(policies)
        return real_model(cfg, policies, vnorm)

    monkeypatch.setattr("war_train.war.mode.trainer_model", spy)
    mode = WarMode(cfg, WarConfig(arm="overlap", cost_mode="real"))
    try:
        for _ in range(2):
            learned = mode.collect()
            mode.row(learned, mode.batches(learned), {}, 0.0)
        assert len(guided) == 2 and all(p is not mode.policies for p in guided)
        assert guided[0] is not guided[1]   # a new snapshot every update
    finally:
        mode.close()
    with pytest.raises(ValueError, match="planner: .*got arm='steal'"):
        WarMode(cfg, WarConfig(arm="steal", workers=2))


@pytest.mark.parametrize("ratio", ["search", "policy"])
def test_the_behaviour_probability_a_planning_group_stores(ratio):
    from war_train.learn.policy import build_policies
    from war_train.plan.planner import build_planner
    from war_train.rollout.collector import BehaviourPolicy

    env = stepped(relay(4, num_sentries=2), 2)
    cfg = TrainConfig(scenario="Relay-v0", num_envs=4, env_kwargs={"num_sentries": 2}, planner="commander",
                      planner_simulations=4, planner_depth=2, planner_ratio=ratio)
    policies = build_policies(dict(env.groups), CriticState(env).dim, cfg, torch.device("cpu"))
    planner = build_planner(cfg, env, policies, {g: ValueNorm() for g in env.groups}, 0)
    behaviour = BehaviourPolicy(policies, torch.Generator().manual_seed(0), planners={"commander": planner})
    obs, state = env.observations()["commander"], env.state()
    actions, logp, values = behaviour.act("commander", obs, state, worlds=slice(None), env=env)
    assert actions.shape == logp.shape == values.shape == (4, 1)
    p = policies["commander"]
    own = p.dist.log_prob(p.actor(p.actor_input(obs))[0], actions)
    if ratio == "policy":
        assert torch.allclose(logp, own)
    else:   # the search's improved policy: sharper than the untrained policy's near-uniform prior
        assert not torch.allclose(logp, own) and (logp <= 0).all()
    planner.close()


def test_get_state_of_some_worlds_is_their_rows_of_the_whole_state():
    env = stepped(relay(5), 3)
    whole, some = env.get_state(), env.get_state(torch.tensor([4, 1, 1]))
    assert all(torch.equal(some[k], whole[k][[4, 1, 1]]) for k in whole)
    mask = torch.tensor([True, False, True, False, False])
    assert all(torch.equal(env.get_state(mask)[k], whole[k][[0, 2]]) for k in whole)
    with pytest.raises(ValueError, match=r"worlds: expected world indices in \[0, 4\]"):
        env.get_state([5])


@pytest.mark.parametrize("distill", [0.0, 1.0])
def test_planner_distill_teaches_the_policy_the_searched_actions(distill):
    """``planner_distill``: the planning group's policy learns the search's actions (samples of its
    improved policy) beside PPO; with zero advantages PPO alone leaves it where it was."""
    from war_train.learn import distributed
    from war_train.learn.policy import build_policies
    from war_train.learn.ppo import GroupBatch, ppo_update

    env = relay(2, num_sentries=2)
    cfg = TrainConfig(scenario="Relay-v0", env_kwargs={"num_sentries": 2}, planner="commander",
                      planner_distill=distill, epochs=4, num_minibatches=1)
    p = build_policies(dict(env.groups), CriticState(env).dim, cfg, torch.device("cpu"))["commander"]
    gen = torch.Generator().manual_seed(0)
    N = 64
    obs = torch.randn(N, 1, 3 * N_LANDMARKS, generator=gen)
    zeros = torch.zeros(N, 1)
    batch = GroupBatch(obs=obs, state=torch.randn(N, CriticState(env).dim, generator=gen),
                       actions=torch.full((N, 1), 5), logp=torch.full((N, 1), -np.log(N_LANDMARKS)),
                       values=zeros, returns=zeros, advantages=zeros, values_denorm=zeros)

    def prob5():
        return torch.softmax(p.actor(p.actor_input(obs))[0], -1)[..., 5].mean().item()

    before = prob5()
    ppo_update(p, torch.optim.Adam(p.actor.parameters(), lr=1e-2), torch.optim.Adam(p.critic.parameters(), lr=1e-3),
               ValueNorm(), batch, cfg=cfg, entropy_coef=0.0, generator=torch.Generator().manual_seed(1),
               reducer=distributed.Local(), group="commander")
    after = prob5()
    if distill:
        assert after > before + 0.3
    else:
        assert after == pytest.approx(before, abs=1e-3)
    with pytest.raises(ValueError, match="planner_distill: expected a finite float >= 0"):
        TrainConfig(planner_distill=-1.0).validate()
