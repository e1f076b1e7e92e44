"""Work stealing (``collect_round(..., steal=...)``): a worker that finishes early takes over
worlds of a straggling one; the moved worlds' trajectories, the round's batch and the episode
statistics are exactly lock-step's, and the round ends before lock-step's."""

import math

import pytest
import torch

import war_envs
from war_envs.war import CostProfile, InferenceCost
from war_train.rollout.collector import Collector, Trigger, concat_workers
from war_train.war.rounds import collect_round
from war_train.rollout.metrics import EpisodeStats

torch.set_num_threads(1)
ARTICLE = {"commander": CostProfile(per_decision_ms=50.0), "sentry": CostProfile(per_decision_ms=5.0)}
AGENTS = {"commander": 1, "sentry": 9}
CYCLES = 10  # episodes of 10 steps: windows of 25 steps end episodes (and reset worlds) after a move too


class Deterministic:
    """Actions, log-probabilities and values fixed functions of each world's own observation and
    state, with elementwise operations only: the same bits whatever the batch a world is in."""

    def act(self, group, obs, state, avail=None):
        a = ((obs[..., 0] > 0).long() + 2 * (obs[..., 1] > 0).long() + (obs[..., 2] > obs[..., 3]).long()).clamp(max=4)
        return a, -obs[..., 0].abs(), self.value(group, state)

    def to_env(self, group, actions):
        return actions

    def value(self, group, state, obs=None):
        return state[:, :AGENTS[group]] * 0.5


def workers(W=3, E=6, slow=1.5):
    cols = []
    for w in range(W):
        env = war_envs.make("Command-v0", num_envs=E, seed=100 + E * w, max_cycles=CYCLES)
        cost = InferenceCost(ARTICLE, AGENTS, resource="parallel", scale=slow if w == W - 1 else 1.0)
        cols.append(Collector(env, Deterministic(), gamma=0.99, cost=cost, env_time=False, world_offset=E * w,
                              stats=EpisodeStats(env)))
    return cols


def guest_env(n):
    return war_envs.make("Command-v0", num_envs=n, max_cycles=CYCLES)


def close(cols):
    for c in cols:
        c.env.close()


def assert_same_window(a, b, where):
    assert a.steps == b.steps and a.decisions == b.decisions, where
    for g in a.groups:
        for name in ("obs", "state", "actions", "logp", "values", "next_values", "rewards", "k", "terminated",
                     "truncated", "valid", "version", "traj", "start", "draft", "fragment_end"):
            x, y = getattr(a.groups[g], name), getattr(b.groups[g], name)
            assert torch.equal(x, y), f"{where}: {g}.{name} differs"


def test_stolen_worlds_follow_their_lock_step_trajectories_exactly():
    sync, steal = workers(), workers()
    for rnd_i in range(2):  # the second round starts from the states the moves brought home
        r_sync = collect_round(sync, [Trigger(max_steps=25) for _ in sync], version=rnd_i)
        r_steal = collect_round(steal, [Trigger(max_steps=25) for _ in steal], version=rnd_i, steal=guest_env)
        # the fast workers finish at 25 x 0.3 s; each takes over worlds of the straggler (0.45 s a step)
        assert {m["thief"] for m in r_steal.moves} == {0, 1} and r_steal.stolen > 0
        assert any(m["owner"] == 2 and m["victim"] == 2 for m in r_steal.moves)
        for j in range(3):
            assert_same_window(r_sync.windows[j], r_steal.windows[j], f"round {rnd_i}, worker {j}")
        for a, b in zip(sync, steal):  # final world states, observations, carried fragments
            sa, sb = a.env.get_state(), b.env.get_state()
            assert all(torch.equal(sa[k], sb[k]) for k in sa)
            assert all(torch.equal(a.obs[g], b.obs[g]) for g in a.groups)
            for g in a.groups:
                for name, t in vars(a.war.macro[g]).items():
                    assert torch.equal(t, getattr(b.war.macro[g], name)), (g, name)
            assert (a.war.ep_step == b.war.ep_step).all() and (a.war.ep_id == b.war.ep_id).all() and a.t == b.t
            ea, eb = a.stats.pop(), b.stats.pop()   # episode statistics, episodes in the same order
            assert set(ea) == set(eb) and all(torch.equal(ea[k], eb[k]) for k in ea)
        # every moved world's trajectory, looked up by its trajectory ids, is lock-step's
        merged_sync, merged_steal = concat_workers(r_sync.windows), concat_workers(r_steal.windows)
        for m in r_steal.moves:
            cols = torch.tensor(m["worlds"]) + 6 * m["owner"]
            for g in merged_sync:
                for name in ("obs", "actions", "rewards", "terminated", "truncated", "valid", "traj"):
                    assert torch.equal(getattr(merged_sync[g], name)[:, cols], getattr(merged_steal[g], name)[:, cols])
    close(sync + steal)


def test_steal_keeps_what_ddppo_drops_and_ends_between_the_fast_workers_and_sync():
    sync, dd, steal = workers(), workers(), workers()
    triggers = lambda: [Trigger(max_steps=25) for _ in range(3)]  # noqa: E731
    r_sync = collect_round(sync, triggers(), version=0)
    r_dd = collect_round(dd, triggers(), version=0, ddppo=(0.6, 0.25))
    r_steal = collect_round(steal, triggers(), version=0, steal=guest_env)
    count = lambda r: sum(w.agent_transitions for w in r.windows)  # noqa: E731
    assert r_dd.preempted == 1 and count(r_dd) < count(r_sync)
    assert count(r_steal) == count(r_sync) and r_steal.preempted == 0
    assert all(w.steps == 25 for w in r_steal.windows)
    fast = r_sync.windows[0].clock_seconds
    assert fast == pytest.approx(25 * 0.3) and r_sync.seconds == pytest.approx(25 * 0.45)
    assert fast < r_steal.seconds < r_sync.seconds
    # the straggler's window ends when its last moved world is home; nobody's clock runs past the round
    assert r_steal.windows[2].clock_seconds <= r_steal.seconds + 1e-9
    close(sync + dd + steal)


def test_steal_validation():
    cols = workers(W=2)
    trig = [Trigger(max_steps=5) for _ in cols]
    with pytest.raises(ValueError, match="ddppo"):
        collect_round(cols, trig, 0, ddppo=(0.6, 0.25), steal=guest_env)
    with pytest.raises(ValueError, match="at least 2"):
        collect_round(cols[:1], trig[:1], 0, steal=guest_env)
    with pytest.raises(ValueError, match="max_steps"):
        collect_round(cols, [Trigger(batch_size=100) for _ in cols], 0, steal=guest_env)
    with pytest.raises(ValueError, match="threads"):
        collect_round(cols, trig, 0, steal=guest_env, threads=True)
    with pytest.raises(TypeError, match="factory"):
        collect_round(cols, trig, 0, steal=3)
    close(cols)


def test_steal_arm_of_the_trainer_learns_on_all_of_the_stragglers_data():
    import war_train
    from war_train.config import WarConfig
    from war_train.presets import ARTICLE_COSTS
    from war_train.run.loop import update
    from war_train.war.mode import WarMode

    cfg = war_train.preset_config("smoke", scenario="Command-v0", num_envs=10, total_env_steps=10 * 25 * 2, epochs=2)
    rows = {}
    for arm in ("sync", "ddppo", "steal"):
        # (DD-PPO with 2 workers: preempt once one of them is done)
        trainer = WarMode(cfg, WarConfig(arm=arm, costs=ARTICLE_COSTS, workers=2, straggler=1.5,
                                            ddppo_sync_frac=0.5))
        for c in trainer.collectors:
            c.env_time = False  # modelled time from the declared costs only
        rows[arm] = [update(trainer) for _ in range(2)]
        trainer.close()
    for s, d, st in zip(rows["sync"], rows["ddppo"], rows["steal"]):
        # 2 workers x 5 worlds: 25 steps at 0.25 s, the straggler at 0.375 s a step
        assert s["collect_s"] == pytest.approx(25 * 0.375)
        assert d["transitions"] < s["transitions"] == st["transitions"]
        assert 25 * 0.25 < st["collect_s"] < s["collect_s"]
        assert st["preempted"] == 0 and st["window_steps"] == 25 and math.isfinite(st["commander/policy_loss"])


def test_steal_arm_validation():
    from war_train.config import WarConfig

    with pytest.raises(ValueError, match="workers"):
        WarConfig(arm="steal").validate()
    with pytest.raises(ValueError, match="cost_mode"):
        WarConfig(arm="steal", workers=2, cost_mode="sleep").validate()
    with pytest.raises(ValueError, match="batch_transitions"):
        WarConfig(arm="steal", workers=2, batch_transitions=500).validate()
    assert WarConfig(arm="steal", workers=2).validate().arm == "steal"
