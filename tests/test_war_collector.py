"""The WAR collector: decision schedules in a shared world, held actions, macro-step rewards,
windows and fragments, the learning trigger, the resource models and the arms' rounds."""

import math

import numpy as np
import pytest
import torch

import war_envs
from war_envs.war import CostProfile, InferenceCost, VirtualClock, plan, with_episode_starts
from war_train.rollout.collector import Collector, Trigger, stitch
from war_train.war.rounds import collect_round
from war_train.learn import losses

torch.set_num_threads(1)
ARTICLE = {"commander": CostProfile(per_decision_ms=50.0), "sentry": CostProfile(per_decision_ms=5.0)}
AGENTS = {"commander": 1, "sentry": 9}


class FrozenPolicy:
    """Fixed networks: actions sampled from obs-dependent logits with a seeded generator, values
    a fixed linear map of the state — a frozen policy."""

    def __init__(self, env, seed=0):
        g = torch.Generator().manual_seed(1234)
        self.W = {k: torch.randn(s.obs_dim, 5, generator=g) * 0.3 for k, s in env.groups.items()}
        self.U = {k: torch.randn(env.state_dim, s.n_agents, generator=g) * 0.1 for k, s in env.groups.items()}
        self.gen = torch.Generator().manual_seed(seed)
        self.calls = []

    def act(self, group, obs, state, avail=None):
        self.calls.append((group, obs.shape[0]))
        logits = obs @ self.W[group]
        logp = torch.log_softmax(logits, -1)
        u = torch.rand(logp.shape[:-1] + (1,), generator=self.gen)
        a = (logp.exp().cumsum(-1) < u).sum(-1).clamp(max=4)
        return a, logp.gather(-1, a.unsqueeze(-1)).squeeze(-1), self.value(group, state)

    def draft(self, group, obs, state, avail=None):
        a, logp, v = self.act(group, obs, state)
        return a, logp, v

    def to_env(self, group, actions):
        return actions

    def value(self, group, state, obs=None):
        return state @ self.U[group]


class Recorder:
    """Stands in for EpisodeStats: records every step's rewards and done flags."""

    def __init__(self):
        self.rew, self.done = [], []

    def step(self, rew, info, done):
        self.rew.append({g: r.clone() for g, r in rew.items()})
        self.done.append(done.clone())


def article_schedule(E, episode_length=25):
    return with_episode_starts(plan(ARTICLE, AGENTS, num_envs=E, window_steps=25, fragment_length=25, floor=3),
                               episode_length)


def make_collector(E=10, schedule=None, resource="parallel", seed=0, max_cycles=25, costs=ARTICLE, **kw):
    env = war_envs.make("Command-v0", num_envs=E, seed=seed, max_cycles=max_cycles)
    cost = InferenceCost(costs, AGENTS, resource=resource)
    col = Collector(env, FrozenPolicy(env, seed), gamma=0.99, schedule=schedule, cost=cost, seed=seed,
                    env_time=False, **kw)
    return env, col


# ----------------------------------------------------------------------------- schedules and time
@pytest.mark.parametrize("resource, war_s, sync_s", [("parallel", 3.75, 12.5), ("shared", 15.0, 23.75)])
def test_article_case_quota_and_modelled_batch_times(resource, war_s, sync_s):
    # 1 commander at 50 ms + 9 sentries at 5 ms, B = 10 worlds x 25 steps x 10 agents: the
    # commander's quota is K = 3 fragments of 25 = 75 decisions of 250 (the article's case, docs/war.md)
    env, col = make_collector(schedule=article_schedule(10), resource=resource)
    for _ in range(3):
        w = col.collect(Trigger(max_steps=25))
        assert w.decisions == {"commander": 75, "sentry": 2250}
        assert w.groups["commander"].agent_transitions == 75 and w.groups["sentry"].agent_transitions == 2250
        assert w.clock_seconds == pytest.approx(war_s)
    env.close()
    env, col = make_collector(resource=resource)  # lock-step
    w = col.collect(Trigger(max_steps=25))
    assert w.decisions == {"commander": 250, "sentry": 2250}
    assert w.clock_seconds == pytest.approx(sync_s)
    env.close()


def test_a_window_recosted_under_another_resource_model():
    env, col = make_collector(schedule=article_schedule(10), resource="parallel")
    w = col.collect(Trigger(max_steps=25))
    assert len(w.step_calls) == 25 and w.step_calls[0] == {"commander": 10, "sentry": 10}
    assert w.recost(ARTICLE, AGENTS, "parallel", env_time=False) == pytest.approx(w.clock_seconds) \
        == pytest.approx(3.75)
    assert w.recost(ARTICLE, AGENTS, "shared", env_time=False) == pytest.approx(15.0)
    assert w.recost(ARTICLE, AGENTS, "shared", scale=0.1, env_time=False) == pytest.approx(1.5)
    env.close()


def test_staggered_decisions_keep_the_per_step_load_flat():
    sched = article_schedule(40)
    env, col = make_collector(E=40, schedule=sched)
    col.begin_window()
    per_step = []
    for _ in range(25):
        before = len(col.policy.calls)
        col.step()
        per_step.append(sum(n for g, n in col.policy.calls[before:] if g == "commander"))
    assert per_step[0] == 40                       # every episode starts with a decision
    assert max(per_step[1:]) - min(per_step[1:]) <= 1  # then ~E/k worlds per step
    assert sum(per_step) == sched.quota["commander"] * 25 == 100  # B = 10000: 4 fragments of 25
    env.close()


def test_sleep_costs_take_real_time_in_parallel_and_add_up_when_shared():
    import time

    from war_envs.war import WallClock

    lanes = {"a": 1, "b": 3}
    profiles = {"a": CostProfile(per_decision_ms=20.0, mode="sleep"),
                "b": CostProfile(per_decision_ms=5.0, mode="sleep")}
    par = InferenceCost(profiles, lanes, resource="parallel", clock=WallClock())
    t0 = time.perf_counter()
    s, per_lane = par.spend({"a": 1, "b": 4})  # lanes: a 20 ms, b 4 x 5 = 20 ms per lane; together ~20 ms
    took = time.perf_counter() - t0
    assert s == pytest.approx(0.020) and per_lane == {"a": pytest.approx(0.020), "b": pytest.approx(0.060)}
    # overlapped: well under the 80 ms the same spend takes serially (a loose bound: a loaded
    # machine delays thread wake-ups, and this is a check of overlap, not of timing)
    assert 0.019 <= took < 0.060
    par.close()
    shared = InferenceCost(profiles, lanes, resource="shared", clock=WallClock())
    t0 = time.perf_counter()
    s, _ = shared.spend({"a": 1, "b": 4})  # 20 ms + 12 decisions x 5 ms
    assert s == pytest.approx(0.080) and time.perf_counter() - t0 >= 0.079
    with pytest.raises(ValueError, match="busy"):
        InferenceCost({"a": CostProfile(per_decision_ms=1, mode="busy")}, {"a": 1}, resource="parallel")
    with pytest.raises(TypeError, match="VirtualClock"):
        InferenceCost({"a": CostProfile(per_decision_ms=1)}, {"a": 1}, clock=WallClock())


# ----------------------------------------------------------------------------- transitions
def test_held_actions_and_macro_step_rewards():
    env, col = make_collector(E=6, schedule=article_schedule(6), max_cycles=15)
    rec = Recorder()
    col.stats = rec
    applied = []
    real_step = env.step

    def spy(actions, trusted=False):
        applied.append({g: a.clone() for g, a in actions.items()})
        return real_step(actions, trusted=trusted)

    env.step = spy
    windows = [col.collect(Trigger(max_steps=10)) for _ in range(4)]
    env.step = real_step
    big = stitch([w.groups["commander"] for w in windows])
    rewards = torch.stack([r["commander"] for r in rec.rew])  # [40, E, 1]
    done = torch.stack(rec.done)                             # [40, E]
    g = 0.99
    n_checked = 0
    for t, e in big.valid.nonzero().tolist():
        t0, k = int(big.start[t, e]), int(big.k[t, e])
        assert t0 + k - 1 == t                    # rows are indexed by the step a transition ends after
        expected = sum(g ** i * float(rewards[t0 + i, e, 0]) for i in range(k))
        assert float(big.rewards[t, e, 0]) == pytest.approx(expected, rel=1e-5, abs=1e-5)
        for i in range(k):                        # the decided action was applied for all k steps
            assert int(applied[t0 + i]["commander"][e, 0]) == int(big.actions[t, e, 0])
        assert bool(done[t0:t0 + k - 1, e].any()) is False   # a macro-step never spans an episode end
        assert bool(big.truncated[t, e].all()) == bool(done[t, e])  # ... and stops at it (time limit: truncated)
        n_checked += 1
    assert n_checked > 50
    # transitions tile time: each world's next decision starts where the previous one ended
    for e in range(6):
        rows = big.valid[:, e].nonzero().flatten().tolist()
        starts = [int(big.start[t, e]) for t in rows]
        ends = [int(big.start[t, e] + big.k[t, e]) for t in rows]
        assert starts[0] == 0 and starts[1:] == ends[:-1]
    # the sentries decide every step
    sentry = stitch([w.groups["sentry"] for w in windows])
    assert bool(sentry.valid.all()) and bool((sentry.k == 1).all())
    env.close()


def test_stitched_fragments_give_the_gae_of_the_unbroken_trajectory():
    # frozen policy: four windows of 10 steps, stitched by trajectory, equal one window of 40
    # (macro-steps and episodes of 15 steps cross the window boundaries)
    sched = article_schedule(6, episode_length=15)
    env_a, one = make_collector(E=6, schedule=sched, max_cycles=15)
    whole = one.collect(Trigger(max_steps=40))
    env_b, four = make_collector(E=6, schedule=sched, max_cycles=15)
    parts = [four.collect(Trigger(max_steps=10)) for _ in range(4)]
    for g in ("commander", "sentry"):
        u, s = whole.groups[g], stitch([p.groups[g] for p in parts])
        for name in ("valid", "actions", "k", "terminated", "truncated", "start", "traj", "version"):
            assert torch.equal(getattr(u, name), getattr(s, name)), name
        for name in ("obs", "state", "logp", "values", "next_values", "rewards"):
            assert torch.allclose(getattr(u, name), getattr(s, name), atol=1e-6), name
        assert bool(s.fragment_end[:30].any()) is False
        args = lambda b: (b.rewards, b.values, b.next_values, b.k[..., None], b.terminated,  # noqa: E731
                          b.truncated, 0.99, 0.95)
        a_u, r_u = losses.smdp_gae(*args(u), valid=u.valid[..., None])
        a_s, r_s = losses.smdp_gae(*args(s), valid=s.valid[..., None])
        assert torch.allclose(a_u, a_s, atol=1e-6) and torch.allclose(r_u, r_s, atol=1e-6)
        # a fragment (one window) ends with a truncation-like cut: bootstrapped, never terminal
        first = parts[0].groups[g]
        ends = first.fragment_end
        assert bool(ends.any()) and not bool((first.terminated.any(-1) & ends).any())
        # trajectory ids: world x episode, continued across windows
        assert set(s.traj[s.valid].tolist()) == set(u.traj[u.valid].tolist())
    # the commander's macro-steps that cross a boundary are emitted in the window where they end
    crossing = [p.groups["commander"] for p in parts[1:]]
    assert any(bool((b.valid & (b.start < 10 * (i + 1))).any()) for i, b in enumerate(crossing))
    env_a.close()
    env_b.close()


def test_versions_are_stamped_at_the_decision():
    env, col = make_collector(E=6, schedule=article_schedule(6))
    w0 = col.collect(Trigger(max_steps=10), version=0)
    w1 = col.collect(Trigger(max_steps=10), version=1)
    c = w1.groups["commander"]
    carried = c.valid & (c.start < 10)
    assert bool(carried.any()) and bool((c.version[carried] == 0).all())
    assert bool((c.version[c.valid & ~carried] == 1).all())
    assert bool((w0.groups["sentry"].version[w0.groups["sentry"].valid] == 0).all())
    env.close()


# ----------------------------------------------------------------------------- trigger
def test_trigger_fires_once_at_batch_size_or_max_wait():
    clock = VirtualClock()
    t = Trigger(batch_size=100, max_wait=2.0)
    t.start(clock.now())
    assert not t.check(99, 5, clock.now())
    assert t.check(100, 6, clock.now()) and t.reason == "batch"
    assert not t.check(500, 7, clock.now())     # never twice
    clock.advance(5.0)
    assert not t.check(500, 8, clock.now())
    t.start(clock.now())
    clock.advance(1.999)
    assert not t.check(10, 1, clock.now())
    clock.advance(0.001)
    assert t.check(10, 2, clock.now()) and t.reason == "wait"
    assert not t.check(10, 3, clock.now())
    with pytest.raises(ValueError):
        Trigger()


def test_collector_windows_end_at_b_or_t_max_wait_under_the_virtual_clock():
    # lock-step: 10 worlds x 10 agents = 100 agent-transitions ready per step
    env, col = make_collector()
    w = col.collect(Trigger(batch_size=730))
    assert w.steps == 8 and w.reason == "batch" and w.agent_transitions == 800
    # T_max_wait: lock-step steps cost 500 ms; 2.2 s are reached after 5 steps
    w = col.collect(Trigger(batch_size=10_000, max_wait=2.2))
    assert w.steps == 5 and w.reason == "wait" and w.clock_seconds == pytest.approx(2.5)
    env.close()
    # WAR: the window ends at the first step with B ready, ready counting complete transitions only
    env, col = make_collector(schedule=article_schedule(10))
    w = col.collect(Trigger(batch_size=1000))
    assert w.reason == "batch" and w.agent_transitions >= 1000
    assert w.agent_transitions - 1000 < 100          # fired at the first step that reached B
    env.close()


# ----------------------------------------------------------------------------- arms
def test_round_of_sync_workers_and_ddppo_preemption():
    def workers(slow, jitter=0.0):
        # 4 workers of 5 worlds; the last one's inference is `slow` times slower (an older machine)
        out = []
        for w in range(4):
            env = war_envs.make("Command-v0", num_envs=5, seed=5 * w)
            cost = InferenceCost(ARTICLE, AGENTS, resource="parallel", jitter=jitter, seed=w,
                                 scale=slow if w == 3 else 1.0)
            out.append(Collector(env, FrozenPolicy(env, w), gamma=0.99, cost=cost, env_time=False))
        return out

    def close(cols):
        for c in cols:
            c.env.close()

    sync = workers(2.0)
    r = collect_round(sync, [Trigger(max_steps=25) for _ in sync], version=0)
    assert r.preempted == 0 and all(w.steps == 25 for w in r.windows)
    assert r.seconds == pytest.approx(25 * 0.5)                   # the round waits for the slow worker
    dd = workers(2.0)
    r2 = collect_round(dd, [Trigger(max_steps=25) for _ in dd], version=0, ddppo=(0.6, 0.25))
    # 3 of 4 (>= 60 %) finish at 25 x 0.25 s; the straggler has done 12.5 steps (>= 25 %): it stops
    # after its 13th step, its shortened window is used as it is
    assert r2.preempted == 1 and [w.steps for w in r2.windows] == [25, 25, 25, 13]
    assert r2.windows[3].preempted and r2.windows[3].reason == "preempted"
    assert r2.seconds == pytest.approx(13 * 0.5)
    close(sync + dd)
    very = workers(5.0)
    r3 = collect_round(very, [Trigger(max_steps=25) for _ in very], version=0, ddppo=(0.6, 0.25))
    # at 6.25 s the straggler has 5 of 25 steps (< 25 %): it goes on to 7 (ceil(6.25)) first
    assert [w.steps for w in r3.windows] == [25, 25, 25, 7] and r3.seconds == pytest.approx(7 * 1.25)
    close(very)
    # per-call jitter of +-30 % averages out over a window: nobody is a step behind, nothing to preempt
    jit = workers(1.0, jitter=0.3)
    r4 = collect_round(jit, [Trigger(max_steps=25) for _ in jit], version=0, ddppo=(0.6, 0.25))
    assert all(w.steps == 25 for w in r4.windows)
    close(jit)


def test_draft_fill_acts_between_the_slow_groups_decisions():
    profiles = dict(ARTICLE, **{"commander/draft": CostProfile(per_decision_ms=5.0)})
    env = war_envs.make("Command-v0", num_envs=10, seed=0)
    cost = InferenceCost(profiles, dict(AGENTS, **{"commander/draft": 1}))
    col = Collector(env, FrozenPolicy(env), gamma=0.99, schedule=article_schedule(10), cost=cost,
                    draft_groups=("commander",), env_time=False)
    w = col.collect(Trigger(max_steps=25))
    c = w.groups["commander"]
    assert bool(c.valid.all()) and bool((c.k == 1).all())       # someone decides every step
    assert int((~c.draft).sum()) == 75 and int(c.draft.sum()) == 175
    assert w.decisions == {"commander": 75, "sentry": 2250, "commander/draft": 175}
    # per step: slow calls (2-3 worlds x 50 ms) beside the draft and the sentries (10 x 5 ms)
    assert w.clock_seconds == pytest.approx(3.75)
    env.close()


def test_measured_costs_feed_the_online_cost_model():
    from war_envs.war import CostModel

    models = {"commander": CostModel(), "sentry": CostModel()}
    env = war_envs.make("Command-v0", num_envs=4, seed=0)
    col = Collector(env, FrozenPolicy(env), gamma=0.99, cost_models=models, env_time=False)
    col.collect(Trigger(max_steps=5))
    assert models["commander"].count == 5 and models["sentry"].count == 5
    assert models["sentry"].per_decision(36) > 0
    assert math.isfinite(col.clock.now()) and col.clock.now() > 0  # measured call times on the virtual clock
    env.close()


def test_collector_validation():
    env = war_envs.make("Command-v0", num_envs=2, seed=0, autoreset_mode="NEXT_STEP")
    with pytest.raises(ValueError, match="SAME_STEP"):
        Collector(env, None, gamma=0.99)
    env.close()
    env = war_envs.make("Command-v0", num_envs=2, seed=0)
    with pytest.raises(ValueError, match="draft_groups"):
        Collector(env, FrozenPolicy(env), gamma=0.99, draft_groups=("scout",))
    col = Collector(env, FrozenPolicy(env), gamma=0.99)
    with pytest.raises(RuntimeError, match="begin_window"):
        col.step()
    env.close()


def test_schedule_decides_at_per_world_steps():
    s = article_schedule(4)
    steps = np.array([0, 0, 0, 0])
    assert s.decides_at("commander", steps).all()
    counts = np.zeros(4, dtype=int)
    for t in range(25):
        counts += s.decides_at("commander", np.full(4, t))
    # 4 worlds: the floor of 3 fragments x 25 = 75 decisions, 18.75 per world-episode of 25
    assert counts.sum() == s.quota["commander"] * 25 == 75 and counts.min() >= 18
    from war_envs.war import Schedule

    base = Schedule(interval={"a": 250 / 75, "b": 40.0, "c": 1.0}, staggered={"a": True, "b": False, "c": True},
                    quota={"a": 3, "b": 1, "c": 9})
    adj = with_episode_starts(base, 25)
    assert adj.interval["a"] == pytest.approx(24 / 6.5) and adj.interval["c"] == 1.0
    assert math.isinf(adj.interval["b"])  # fewer than one decision per episode: only the forced one
    assert adj.decides_at("b", np.array([0, 1, 5, 24])).tolist() == [True, False, False, False]
    assert with_episode_starts(base, None) is base


class LanePolicy(FrozenPolicy):
    """FrozenPolicy drawing each group's samples from a generator of its own (what concurrent
    lanes need), recording which thread ran each call."""

    def __init__(self, env, seed=0):
        super().__init__(env, seed)
        self.gens = {g: torch.Generator().manual_seed(seed + i) for i, g in enumerate(env.groups)}
        self.threads = set()

    def act(self, group, obs, state, avail=None):
        import threading

        self.threads.add((group, threading.current_thread().name))
        self.gen = self.gens[group]
        logits = obs @ self.W[group]
        logp = torch.log_softmax(logits, -1)
        u = torch.rand(logp.shape[:-1] + (1,), generator=self.gens[group])
        a = (logp.exp().cumsum(-1) < u).sum(-1).clamp(max=4)
        return a, logp.gather(-1, a.unsqueeze(-1)).squeeze(-1), self.value(group, state)


def test_lane_threads_give_the_sequential_windows():
    """Lanes called at the same time on their own (pinned) threads collect exactly what the
    same calls made one after the other collect."""
    import os

    cpus = sorted(os.sched_getaffinity(0))[:1] if hasattr(os, "sched_getaffinity") else None
    out = []
    for threads in (None, {"commander": cpus, "sentry": None}):
        env = war_envs.make("Command-v0", num_envs=6, seed=4, max_cycles=15)
        pol = LanePolicy(env, seed=2)
        col = Collector(env, pol, gamma=0.9, schedule=article_schedule(6, 15), env_time=False, seed=1,
                        lane_threads=threads)
        wins = [col.collect(Trigger(max_steps=9)) for _ in range(3)]
        out.append((wins, pol.threads))
        col.close()
        env.close()
    (seq, seq_threads), (par, par_threads) = out
    for a, b in zip(seq, par):
        for g in a.groups:
            for name in ("obs", "actions", "logp", "values", "next_values", "rewards", "k", "valid"):
                assert torch.equal(getattr(a.groups[g], name), getattr(b.groups[g], name)), (g, name)
    assert {t for _, t in seq_threads} == {"MainThread"}
    assert {g for g, t in par_threads if t.startswith(f"war-lane-{g}")} == {"commander", "sentry"}
    with pytest.raises(ValueError, match="lane_threads: unknown lanes"):
        env = war_envs.make("Command-v0", num_envs=2, seed=0)
        Collector(env, FrozenPolicy(env), gamma=0.9, lane_threads={"nobody": None})


# ----------------------------------------------------------------------------- window storage
def test_window_storage_grows_keeps_its_rows_and_clears_what_it_used():
    from war_train.rollout.storage import RolloutStorage

    store = RolloutStorage({"g": {"x": ((2, 3), torch.float32), "k": ((2,), torch.long)}}, "cpu", capacity=2)
    for i in range(5):   # past the capacity twice: 2 -> 4 -> 8
        store.append()
        store.row("g", i)["x"].fill_(i + 1)
        store.row("g", i)["k"][1] = 10 * (i + 1)
    assert store.cap == 8 and store.n == 5
    out = store.take("g")
    assert out["x"].shape == (5, 2, 3) and out["x"][:, 0, 0].tolist() == [1, 2, 3, 4, 5]
    assert out["k"][:, 1].tolist() == [10, 20, 30, 40, 50] and not out["k"][:, 0].any()
    store.clear()   # the next window starts from zeros, the copy handed out is untouched
    assert store.n == 0 and not store.buffers["g"]["x"].any() and out["x"][4, 1, 2] == 5
    store.append()
    assert store.take("g")["x"].abs().sum() == 0


def test_a_window_is_the_same_whatever_the_storage_first_held():
    windows = []
    for rows in (1, 64):   # growing from one row a window, or never growing
        env, col = make_collector(schedule=article_schedule(10), window_steps=rows)
        windows.append([col.collect(Trigger(max_steps=30)) for _ in range(2)])
        env.close()
    for a, b in zip(*windows):
        for g in a.groups:
            for name, x in vars(a.groups[g]).items():
                assert torch.equal(x, getattr(b.groups[g], name)), (g, name)
