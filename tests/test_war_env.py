"""``WarEnv``: WAR's schedule and hold semantics as a wrapper any trainer can drive.  Its
transitions, rebuilt from ``info["war"]`` by a plain user loop, equal the WAR collector's."""

import pytest
import torch

import war_envs
from war_envs.war import Schedule, WarEnv, plan, with_episode_starts
from war_train.rollout.collector import Collector, Trigger
from test_war_collector import AGENTS, ARTICLE, FrozenPolicy, article_schedule

torch.set_num_threads(1)


def user_loop(war, policy, steps, *, garbage=False, seed=0):
    """What a CleanRL-style user writes: ask who decides, act there, step, and close an SMDP
    transition wherever ``info["war"][g].ends``.  Returns ``{group: [(t, world, record)]}``."""
    obs = war.reset(seed=seed)
    state = torch.cat([o.reshape(war.num_envs, -1) for o in obs.values()], dim=1)
    at_decision = {g: {} for g in war.groups}
    out = {g: [] for g in war.groups}
    gen = torch.Generator().manual_seed(99)
    for t in range(steps):
        actions = {}
        for g, spec in war.groups.items():
            dec = war.decides(g)
            full = (torch.randint(0, 5, (war.num_envs, spec.n_agents), generator=gen) if garbage
                    else torch.zeros(war.num_envs, spec.n_agents, dtype=torch.long))
            if bool(dec.any()):
                idx = slice(None) if bool(dec.all()) else dec
                a, logp, _ = policy.act(g, obs[g][idx], state[idx])
                full[idx] = a
                for e in dec.nonzero().flatten().tolist():
                    at_decision[g][e] = obs[g][e].clone()
            actions[g] = full
        obs, rew, term, trunc, info = war.step(actions)
        state = torch.cat([o.reshape(war.num_envs, -1) for o in obs.values()], dim=1)
        for g, m in info["war"].items():
            first = next(iter(war.groups))
            for e in m.ends.nonzero().flatten().tolist():
                out[g].append((t, e, {"obs": at_decision[g][e], "actions": war.macro[g].held[e].clone(),
                                      "rewards": m.reward[e], "k": int(m.k[e]), "version": int(m.version[e]),
                                      "start": int(m.start[e]), "terminated": term[g][e].clone(),
                                      "truncated": trunc[g][e].clone()}))
    return out


@pytest.mark.parametrize("schedule", ["article", "lockstep"])
def test_wrapper_transitions_equal_the_collectors(schedule):
    E, T = 6, 40
    sched = article_schedule(E, 15) if schedule == "article" else None
    env_c = war_envs.make("Command-v0", num_envs=E, seed=5, max_cycles=15)
    col = Collector(env_c, FrozenPolicy(env_c, seed=1), gamma=0.9, schedule=sched, env_time=False, seed=0)
    win = col.collect(Trigger(max_steps=T))
    env_w = war_envs.make("Command-v0", num_envs=E, seed=5, max_cycles=15)
    war = WarEnv(env_w, sched, gamma=0.9)
    mine = user_loop(war, FrozenPolicy(env_w, seed=1), T)
    checked = 0
    for g, batch in win.groups.items():
        assert batch.valid.sum().item() == len(mine[g])
        for t, e, rec in mine[g]:
            assert bool(batch.valid[t, e])
            assert torch.equal(batch.obs[t, e], rec["obs"])
            assert torch.equal(batch.actions[t, e], rec["actions"])
            assert torch.equal(batch.rewards[t, e], rec["rewards"])  # bitwise: the same accumulation
            for name in ("k", "version", "start"):
                assert batch.__dict__[name][t, e].item() == rec[name], name
            for name in ("terminated", "truncated"):   # (per agent)
                assert torch.equal(batch.__dict__[name][t, e], rec[name]), name
            checked += 1
    assert checked > 100
    if schedule == "article":  # the slow group held its action: macro-steps longer than one step
        assert max(rec["k"] for _, _, rec in mine["commander"]) > 1
    env_c.close()
    env_w.close()


def test_non_deciding_rows_are_ignored_and_held_actions_applied():
    E = 6
    runs = []
    for garbage in (False, True):
        war = WarEnv(war_envs.make("Command-v0", num_envs=E, seed=2, max_cycles=15), article_schedule(E, 15))
        applied = []
        real = war.env.step
        war.env.step = lambda a, real=real, trusted=False: (applied.append({g: x.clone() for g, x in a.items()}),
                                                            real(a, trusted=trusted))[1]
        user_loop(war, FrozenPolicy(war.env, seed=3), 30, garbage=garbage)
        runs.append(applied)
        war.close()
    for a, b in zip(*runs):
        assert all(torch.equal(a[g], b[g]) for g in a)
    # between two decisions of a world the commander's action did not change
    held = torch.stack([step["commander"][:, 0] for step in runs[0]])  # [T, E]
    assert int((held[1:] != held[:-1]).sum()) < held[1:].numel() / 2


def test_macro_step_info_reports_k_reward_and_ends():
    E = 4
    war = WarEnv(war_envs.make("Command-v0", num_envs=E, seed=1, max_cycles=12), article_schedule(E, 12), gamma=0.5)
    war.reset(seed=0)
    war.set_version(7)
    rewards, infos = [], []
    for _ in range(12):
        acts = {g: torch.ones(E, s.n_agents, dtype=torch.long) for g, s in war.groups.items()}
        _, rew, _, trunc, info = war.step(acts)
        rewards.append(rew["commander"][:, 0].clone())  # the env returns views of its buffers
        infos.append(info["war"]["commander"])
    m_last = infos[-1]
    assert bool(trunc["commander"][:, 0].all()) and bool(m_last.ends.all())   # the episode ended
    for e in range(E):
        t0 = int(m_last.start[e])
        k = int(m_last.k[e])
        assert t0 + k == 12 and int(m_last.version[e]) == 7
        expected = sum(0.5 ** i * float(rewards[t0 + i][e]) for i in range(k))
        assert float(m_last.reward[e, 0]) == pytest.approx(expected, rel=1e-6, abs=1e-6)
        decided = [int(i.decided[e]) for i in infos]
        assert decided[0] == 1 and sum(decided) < 12          # held in between
        assert int(infos[t0].decided[e]) == 1 and int(infos[t0].k[e]) == 1
    assert not war.decides("commander").logical_not().any()   # after the episode: everyone decides
    war.close()


@pytest.mark.parametrize("env_id, kwargs, shape, dtype", [
    ("Tag-v0", {"num_taggers": 2, "num_runners": 3}, (2,), torch.long),
    ("Spread-v0", {"continuous_actions": True}, (5,), torch.float32),
])
def test_held_actions_of_every_action_space(env_id, kwargs, shape, dtype):
    env = war_envs.make(env_id, num_envs=3, seed=0, **kwargs)
    groups = list(env.groups)
    sched = Schedule(interval={g: 3.0 for g in groups}, staggered={g: False for g in groups},
                                  quota={g: 1 for g in groups})
    war = WarEnv(env, sched)
    war.reset(seed=1)
    gen = torch.Generator().manual_seed(0)
    for t in range(7):
        acts = {}
        for g, s in env.groups.items():
            space = s.action_space
            if dtype == torch.long:
                acts[g] = torch.stack([torch.randint(0, int(n), (3, s.n_agents), generator=gen) for n in space.nvec], -1)
            else:
                acts[g] = torch.rand(3, s.n_agents, *shape, generator=gen)
        _, _, _, _, info = war.step(acts)
        for g in groups:
            held = war.macro[g].held
            assert held.shape == (3, env.groups[g].n_agents, *shape) and held.dtype == dtype
            assert bool(info["war"][g].decided.all()) == (t % 3 == 0)
    war.close()


def test_from_costs_plans_the_articles_schedule():
    env = war_envs.make("Command-v0", num_envs=10, seed=0, max_cycles=25)
    war = WarEnv.from_costs(env, ARTICLE, window_steps=25, fragment_length=25, floor=3)
    expected = with_episode_starts(plan(ARTICLE, AGENTS, num_envs=10, window_steps=25, fragment_length=25,
                                        floor=3), 25)
    assert war.schedule == expected
    assert war.schedule.quota == {"commander": 3, "sentry": expected.quota["sentry"]}
    war.close()


def test_wrapper_validation():
    with pytest.raises(ValueError, match="SAME_STEP"):
        WarEnv(war_envs.make("Command-v0", num_envs=2, autoreset_mode="NEXT_STEP"))
    war = WarEnv(war_envs.make("Command-v0", num_envs=2))
    war.reset(seed=0)
    with pytest.raises(KeyError, match="actions: expected groups"):
        war.step({"commander": torch.zeros(2, 1, dtype=torch.long)})
    with pytest.raises(ValueError, match=r"actions\['sentry'\]: expected shape \(2, 9"):
        war.step({"commander": torch.zeros(2, 1, dtype=torch.long), "sentry": torch.zeros(2, 3, dtype=torch.long)})
    with pytest.raises(RuntimeError, match="no action in force"):
        war.advance()
    with pytest.raises(TypeError, match="schedule: expected"):
        war.schedule = {"commander": 1}
    with pytest.raises(ValueError, match="schedule: expected intervals"):
        war.schedule = Schedule(interval={"x": 1.0}, staggered={"x": True}, quota={"x": 1})
    with pytest.raises(KeyError, match="group: unknown"):
        war.decides("nobody")
    with pytest.raises(ValueError, match="version"):
        war.set_version(-1)
    war.close()
