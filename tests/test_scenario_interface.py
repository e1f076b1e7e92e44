"""The declared scenario interface (``war_envs.core.scenario``) and the generic, device-resident
``war_train.rollout.metrics.EpisodeStats`` built on it."""

from __future__ import annotations

import math

import pytest
import torch

import war_envs
from war_envs import registry
from war_envs.core.batched_env import BatchedEnv
from war_envs.core.scenario import EpisodeMetric
from war_envs.testing import random_actions
from war_train.rollout.metrics import EpisodeStats

IDS = registry.registered_ids()


def world_done(env, term, trunc) -> torch.Tensor:
    first = next(iter(env.groups))
    return term[first][:, 0] | trunc[first][:, 0]


# ----------------------------------------------------------------------------- the declarations
@pytest.mark.parametrize("env_id", IDS)
def test_every_scenario_declares_a_consistent_interface(env_id):
    cls = registry.scenario_class(env_id)
    accepted = registry.accepted_kwargs(cls)
    assert cls.episode_length_kwarg in accepted
    with war_envs.make(env_id, num_envs=3, seed=0, **{cls.episode_length_kwarg: 7}) as env:
        assert env.max_cycles == 7 + cls.episode_length_offset
        metrics = env.episode_metrics
        assert all(isinstance(m, EpisodeMetric) and m.doc for m in metrics)
        names = [m.name for m in metrics]
        assert len(set(names)) == len(names)
        stats = EpisodeStats(env)
        assert stats.names == ["episode_return", *(f"episode_return/{g}" for g in env.groups),
                               "episode_length", *names]
        assert env.progress_metric in stats.names

        alive = env.alive_mask
        assert list(alive) == list(env.groups)
        for g, spec in env.groups.items():
            assert alive[g].shape == (3, spec.n_agents) and alive[g].dtype == torch.bool
            assert alive[g].device == env.torch_device
            if not env.agents_can_leave:
                assert alive[g].all()

        env.reset()
        _, _, _, _, info = env.step(random_actions(env, torch.Generator().manual_seed(0)))
        for key in env.per_agent_metrics:
            assert info[key].shape[:2] == (3, len(env.agents)), key  # (a k-vector: [E, A, k])
        for m in metrics:
            value = m.step(info)
            assert value.shape == (3,) and value.device == env.torch_device, m.name
        if env.agents_can_leave:
            assert {g: a.shape for g, a in info["alive"].items()} == {g: a.shape for g, a in alive.items()}

    for name, kwargs in cls.evaluation_variants({}).items():
        assert isinstance(name, str) and name
        assert set(kwargs) <= set(accepted), (name, kwargs)
        war_envs.make(env_id, num_envs=1, **kwargs).close()


def test_spread_evaluation_variants_leave_out_the_runs_own_start():
    cls = registry.scenario_class("Spread-v0")
    assert cls.evaluation_variants({}) == {"onpolicy_init": {"landmark_range": 0.8}}
    assert cls.evaluation_variants({"landmark_range": 1.0}) == {"onpolicy_init": {"landmark_range": 0.8}}
    assert cls.evaluation_variants({"landmark_range": 0.8, "N": 4}) == {"mpe2_init": {"landmark_range": 1.0}}
    assert cls.evaluation_variants({"landmark_range": 0.5}) == {"onpolicy_init": {"landmark_range": 0.8},
                                                                "mpe2_init": {"landmark_range": 1.0}}
    assert registry.scenario_class("Tag-v0").evaluation_variants({}) == {}


def test_base_defaults():
    env = BatchedEnv(num_envs=2)
    assert env.episode_metrics == () and env.per_agent_metrics == ()
    assert env.progress_metric == "episode_return" and env.episode_length_kwarg == "max_cycles"
    assert env.agents_can_leave is False and env.alive_mask == {}
    assert BatchedEnv.evaluation_variants({"x": 1}) == {}
    with pytest.raises(TypeError, match="no renderer.*render_frame"):
        env.render_frame(0)


def test_episode_metric_checks_its_fields():
    with pytest.raises(ValueError, match="reduce: expected one of .*'sum'.*got 'median'"):
        EpisodeMetric("x", "doc", lambda info: info["x"], "median")
    with pytest.raises(TypeError, match="step: expected a callable"):
        EpisodeMetric("x", "doc", None, "sum")
    with pytest.raises(TypeError, match="name: expected a non-empty str"):
        EpisodeMetric("", "doc", lambda info: info["x"], "sum")


# ----------------------------------------------------------------------------- Tag by hand
def _tag_start(env) -> dict[str, torch.Tensor]:
    """Tagger 0 at (5, 5), standing.  World 0: runner 0 at distance 0.5 (tagged at step 1),
    runner 1 at distance 2.75 running at it at speed 0.5 (1.25 away after step 3, tagged at
    step 4), runner 2 far away and standing (never tagged).  World 1: three runners at
    distance 1.75 running at it at speed 0.5 (tagged together at step 2: no runner left)."""
    state = env.get_state()
    pos = torch.tensor([[[5.0, 5.0], [5.5, 5.0], [7.75, 5.0], [1.0, 1.0]],
                        [[5.0, 5.0], [3.25, 5.0], [5.0, 6.75], [6.75, 5.0]]], dtype=torch.float64)
    speed = torch.tensor([[0.0, 0.0, 0.5, 0.0], [0.0, 0.5, 0.5, 0.5]], dtype=torch.float64)
    direction = torch.tensor([[0.0, 0.0, math.pi, 0.0], [0.0, 0.0, 1.5 * math.pi, math.pi]],
                             dtype=torch.float64)
    state.update(agent_pos=pos, agent_speed=speed, agent_dir=direction,
                 agent_acc=torch.zeros(2, 4, dtype=torch.float64))
    return state


def test_tag_metrics_by_hand():
    env = war_envs.make("Tag-v0", num_envs=2, num_taggers=1, num_runners=3, episode_length=5,
                        grid_length=10.0, tagging_distance=0.1, precision="float64", seed=0)
    with env:
        env.reset()
        env.set_state(_tag_start(env))
        stats = EpisodeStats(env)
        noop = {g: torch.zeros(2, s.n_agents, 2, dtype=torch.int64) for g, s in env.groups.items()}
        recorded = torch.zeros(2, dtype=torch.bool)
        ended_at = {}
        for t in range(1, 6):
            _, rew, term, trunc, info = env.step(noop)
            done = world_done(env, term, trunc)
            stats.step(rew, info, done, record=~recorded)
            for w in done.nonzero().flatten().tolist():
                ended_at.setdefault(w, t)
            recorded |= done
        ep = stats.pop()
    assert ended_at == {1: 2, 0: 5}
    # episodes in (step, world) order: world 1's (ended at step 2), then world 0's (step 5)
    assert ep["episode_length"].tolist() == [2.0, 5.0]
    assert ep["tags"].tolist() == [3.0, 2.0]
    assert ep["runners_left"].tolist() == [0.0, 1.0]
    # steps in the game, the tagging step counting: world 1: 2 + 2 + 2; world 0: 1 + 4 + 5
    assert ep["survival"].tolist() == pytest.approx([6 / 3, 10 / 3], rel=1e-12)
    # tagger: +1 per tag; runners: -1 when tagged, +1 for the one still in at t == 5
    assert ep["episode_return/tagger"].tolist() == [3.0, 2.0]
    assert ep["episode_return/runner"].tolist() == pytest.approx([-1.0, -1 / 3])
    assert ep["episode_return"].tolist() == pytest.approx([0.0, 0.25])


# ----------------------------------------------------------------------------- EpisodeStats
def _play(env_id: str, steps: int, capacities, pops_at=(), seed: int = 0, **kwargs):
    """Step ``env_id`` with random actions through one EpisodeStats per capacity; every pop."""
    with war_envs.make(env_id, num_envs=16, seed=seed, **kwargs) as env:
        env.reset()
        gen = torch.Generator().manual_seed(seed)
        all_stats = [EpisodeStats(env, capacity=c) for c in capacities]
        pops = [[] for _ in capacities]
        for t in range(1, steps + 1):
            _, rew, term, trunc, info = env.step(random_actions(env, gen))
            for stats in all_stats:
                stats.step(rew, info, world_done(env, term, trunc))
            if t in pops_at:
                for out, stats in zip(pops, all_stats):
                    out.append(stats.pop())
        for out, stats in zip(pops, all_stats):
            out.append(stats.pop())
    return pops, all_stats


def assert_same_episodes(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype == torch.float64 and a[k].device.type == "cpu"
        assert torch.equal(a[k], b[k]), k


@pytest.mark.parametrize("env_id", ["Spread-v0", "PredatorPrey-v0"])
def test_small_capacity_flushes_to_the_same_episodes(env_id):
    (small, large), (stats, _) = _play(env_id, 23, capacities=(3, 1000), pops_at=(11,), max_cycles=5,
                                       terminate_on_success=True)
    assert len(small) == 2
    for a, b in zip(small, large):
        assert_same_episodes(a, b)
        assert list(a) == stats.names
    assert sum(len(p["episode_length"]) for p in small) >= 4 * 16   # more episodes than capacity
    assert stats.pop() == {}


def test_state_dict_round_trip_resumes_exactly():
    with war_envs.make("PredatorPrey-v0", num_envs=8, seed=2, max_cycles=6) as env:
        env.reset()
        gen = torch.Generator().manual_seed(2)
        whole, first = EpisodeStats(env), EpisodeStats(env)
        resumed = None
        for t in range(15):
            _, rew, term, trunc, info = env.step(random_actions(env, gen))
            done = world_done(env, term, trunc)
            for stats in (whole, first) if resumed is None else (whole, resumed):
                stats.step(rew, info, done)
            if t == 8:   # mid-episode (episodes end at steps 6 and 12)
                state = first.state_dict()
                assert set(state) == {"returns", "length", "sums", "seen"}
                assert set(state["sums"]) == {"contact_steps", "contacts"} and set(state["seen"]) == {"catch_rate"}
                assert all(t.device.type == "cpu" for t in [state["returns"], state["length"]])
                assert state["returns"].shape == (8, 4) and state["length"].shape == (8,)
                first.pop()
                whole.pop()
                resumed = EpisodeStats(env)
                resumed.load_state_dict(state)
        assert_same_episodes(whole.pop(), resumed.pop())


def test_loads_the_previous_state_format():
    """Checkpoints written before scenarios declared their metrics: ``returns``, ``length``,
    ``sums`` (the same names) and no ``seen`` -- the missing accumulators start at zero."""
    with war_envs.make("PredatorPrey-v0", num_envs=4, seed=0) as env:
        stats = EpisodeStats(env)
        old = {"returns": torch.full((4, 4), 2.0, dtype=torch.float64),
               "length": torch.full((4,), 3, dtype=torch.int64),
               "sums": {"contact_steps": torch.ones(4, dtype=torch.float64),
                        "contacts": torch.full((4,), 2.0, dtype=torch.float64)}}
        stats.load_state_dict(old)
        assert torch.equal(stats.returns, old["returns"]) and torch.equal(stats.length, old["length"])
        assert torch.equal(stats.sums["contacts"], old["sums"]["contacts"])
        assert not stats.seen["catch_rate"].any()
        with pytest.raises(ValueError, match=r"expected returns of shape \(4, 4\), got \(5, 4\)"):
            stats.load_state_dict({**old, "returns": torch.zeros(5, 4, dtype=torch.float64)})
        with pytest.raises(ValueError, match=r"sums\['contacts'\] of shape \(4,\)"):
            stats.load_state_dict({**old, "sums": {**old["sums"], "contacts": torch.zeros(3)}})
    with war_envs.make("Spread-v0", num_envs=2, seed=0) as env:
        stats = EpisodeStats(env)
        sums = {k: torch.full((2,), i + 1.0, dtype=torch.float64)
                for i, k in enumerate(("onpolicy_episode_reward", "landmark_dist", "collisions"))}
        stats.load_state_dict({"returns": torch.zeros(2, 3, dtype=torch.float64),
                               "length": torch.zeros(2, dtype=torch.int64), "sums": sums})
        assert all(torch.equal(stats.sums[k], v) for k, v in sums.items())


def test_capacity_is_checked():
    with war_envs.make("Spread-v0", num_envs=2) as env:
        with pytest.raises(ValueError, match="capacity: expected an int >= 1, got 0"):
            EpisodeStats(env, capacity=0)
        with pytest.raises(TypeError, match="capacity"):
            EpisodeStats(env, capacity=2.5)


class _NoHostSync(torch.overrides.TorchFunctionMode):
    """Fails on the tensor operations that make the host wait for the device."""

    FORBIDDEN = {torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.cpu, torch.Tensor.numpy,
                 torch.Tensor.__bool__, torch.Tensor.__int__, torch.Tensor.__float__,
                 torch.Tensor.nonzero, torch.nonzero, torch.masked_select, torch.Tensor.masked_select,
                 torch.Tensor.unique, torch.unique}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in self.FORBIDDEN:
            raise AssertionError(f"host synchronization: {func.__name__}")
        if func in (torch.Tensor.__getitem__, torch.Tensor.__setitem__):
            index = args[1] if isinstance(args[1], tuple) else (args[1],)
            if any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in index):
                raise AssertionError("host synchronization: boolean-mask indexing")
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("env_id", IDS)
def test_step_does_no_host_synchronization(env_id):
    cls = registry.scenario_class(env_id)
    with war_envs.make(env_id, num_envs=4, seed=0, **{cls.episode_length_kwarg: 3 - cls.episode_length_offset}) as env:
        env.reset()
        stats = EpisodeStats(env, capacity=8)
        gen = torch.Generator().manual_seed(0)
        ended = 0
        for _ in range(7):
            _, rew, term, trunc, info = env.step(random_actions(env, gen))
            done = world_done(env, term, trunc)
            with _NoHostSync():
                stats.step(rew, info, done, record=torch.ones_like(done))
            ended += int(done.sum())
        assert ended >= 2 * 4  # the time limit ends every episode by the 3rd step (some end sooner)
        assert len(stats.pop()["episode_length"]) == ended


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_step_does_not_synchronize_cuda():
    with war_envs.make("Spread-v0", num_envs=64, seed=0, device="cuda:0", terminate_on_success=True) as env:
        env.reset()
        stats = EpisodeStats(env, capacity=32)
        for _ in range(30):
            actions = {"agent": torch.randint(0, 5, (64, 3), device="cuda:0")}
            _, rew, term, trunc, info = env.step(actions)
            done = world_done(env, term, trunc)
            torch.cuda.set_sync_debug_mode("error")
            try:
                stats.step(rew, info, done)
            finally:
                torch.cuda.set_sync_debug_mode("default")
        episodes = stats.pop()
    assert episodes["episode_length"].device.type == "cpu" and len(episodes["episode_length"]) >= 64
