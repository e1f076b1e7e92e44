"""The rollout (lock-step and WAR schedules of the one collector) never synchronizes with the host: the property WarpDrive's end-to-end
promise needs on a GPU, checked here on the CPU.

``NoHostSync`` fails on every torch op that would wait for the device on CUDA: reading a value
(``.item()``, ``bool()``/``int()``/``float()`` of a tensor, ``.tolist()``, ``.numpy()``,
``.cpu()``, ``torch.equal``) and data-dependent shapes (``nonzero``, boolean-mask indexing,
``masked_select``, ``unique``); and it counts Warp's host synchronizations and device-to-host
copies (``wp.synchronize*``, ``wp.array.numpy``/``list``, ``wp.copy`` to the CPU).  The rollout
is run on the path a CUDA device takes: the collector's CPU-only shortcuts (``host_reads_are_free``:
branch on ``bool(trunc.any())``, call a policy on its deciding worlds only) are switched off.  What it covers: sampling (masked and not), the env's
trusted step, the episode statistics, the final-state bootstrap, GRU and frame-stack carries,
agents leaving the game.  The once-per-update reads (the finiteness checks after the rollout,
the row's episode summary, the PPO update's diagnostics) are outside it.
"""

import pytest
import torch
import warp as wp
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import war_train
import war_train.run.lockstep as lockstep
import war_train.rollout.collector as war_collector
from war_train.learn import distributed
from war_train.rollout.envs import make_env

torch.set_num_threads(1)


class HostSync(AssertionError):
    """An op in the rollout that would synchronize with the host on CUDA."""


#: Python-level tensor methods that read device values into the host
READS = {"item", "tolist", "numpy", "cpu", "__bool__", "__int__", "__float__", "__index__"}
#: aten ops that synchronize (a value read, a data-dependent output size)
SYNC_OPS = {"aten._local_scalar_dense", "aten.nonzero", "aten.masked_select", "aten.equal", "aten.is_nonzero",
            "aten._unique2", "aten.unique_dim", "aten.unique_consecutive", "aten.allclose"}


class NoHostSync(TorchFunctionMode):
    """Context: raise ``HostSync`` on a host-synchronizing torch op (``count=True``: count them
    in ``reads`` instead); count Warp's syncs/copies in ``warp``."""

    def __init__(self, count: bool = False) -> None:
        super().__init__()
        self.count, self.reads = count, 0

    def __enter__(self):
        self.warp = {"synchronize": 0, "host_copies": 0}
        self._dispatch = _DispatchGuard(self)
        self._patches = pytest.MonkeyPatch()
        for name in ("synchronize", "synchronize_device", "synchronize_stream", "synchronize_event"):
            self._patches.setattr(wp, name, self._counting(getattr(wp, name), "synchronize"))
        self._patches.setattr(wp.array, "numpy", self._counting(wp.array.numpy, "host_copies"))
        self._patches.setattr(wp.array, "list", self._counting(wp.array.list, "host_copies"))
        copy = wp.copy

        def counted_copy(dest, src, *args, **kwargs):
            if getattr(dest, "device", None) is not None and dest.device.is_cpu and not src.device.is_cpu:
                self.warp["host_copies"] += 1
            return copy(dest, src, *args, **kwargs)

        self._patches.setattr(wp, "copy", counted_copy)
        self._dispatch.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        self._dispatch.__exit__(*exc)
        self._patches.undo()

    def _counting(self, fn, key):
        def counted(*args, **kwargs):
            self.warp[key] += 1
            return fn(*args, **kwargs)
        return counted

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in READS:
            self.found(f"Tensor.{name}() reads a device value on the host")
        return func(*args, **(kwargs or {}))

    def found(self, what: str) -> None:
        if not self.count:
            raise HostSync(what)
        self.reads += 1


class _DispatchGuard(TorchDispatchMode):
    def __init__(self, owner: NoHostSync) -> None:
        super().__init__()
        self.owner = owner

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func.overloadpacket)
        if name in SYNC_OPS:
            self.owner.found(f"{func} synchronizes with the host")
        elif name == "aten.index" and any(isinstance(i, torch.Tensor) and i.dtype == torch.bool
                                          for i in (args[1] if len(args) > 1 else ()) if i is not None):
            self.owner.found(f"{func} with a boolean mask has a data-dependent shape")
        return func(*args, **(kwargs or {}))


def test_the_guard_catches_what_it_must():
    x = torch.arange(6.0)
    for bad in (lambda: x[0].item(), lambda: bool(x[1] > 0), lambda: x.tolist(), lambda: x.numpy(),
                lambda: x.cpu(), lambda: x[x > 2], lambda: x.nonzero(), lambda: int(x[2]),
                lambda: torch.equal(x, x), lambda: torch.unique(x), lambda: x.masked_select(x > 1)):
        with pytest.raises(HostSync), NoHostSync():
            bad()
    with NoHostSync() as guard:   # what a rollout does: device-side selects, index tensors, reductions
        torch.where(x > 2, x, 0.0)
        x.index_select(0, torch.tensor([1, 2]))
        (x > 2).any()
        wp.synchronize()
    assert guard.warp["synchronize"] == 1


CASES = {
    "spread": dict(scenario="Spread-v0"),
    "spread-gru": dict(scenario="Spread-v0", use_gru=True),
    "spread-frames-local": dict(scenario="Spread-v0", frame_stack=3, critic_input="local"),
    "spread-box": dict(scenario="Spread-v0", env_kwargs={"continuous_actions": True}),
    "tag": dict(scenario="Tag-v0", env_kwargs={"num_taggers": 2, "num_runners": 5, "episode_length": 12}),
    "predator-prey-shared": dict(scenario="PredatorPrey-v0", share_actor=True),
    "smax-masks": dict(scenario="SMAX-v0", env_kwargs={"map_name": "3m"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_lockstep_rollout_never_synchronizes(name, monkeypatch):
    """Lock-step's rollout is the collector's every-step schedule, on the path a CUDA device takes."""
    cfg = war_train.preset_config("smoke", **CASES[name], num_envs=4, rollout_length=30, total_env_steps=4 * 30 * 2,
                                  gif=False, eval_episodes=0)
    monkeypatch.setattr(war_collector, "host_reads_are_free", lambda device: False)   # the CUDA path
    with make_env(cfg) as env:
        mode = lockstep.LockstepMode(env, cfg, distributed.Local())
        c = mode.collector
        assert c.branch_free and not c.war.host_checks
        ends = []
        for update in range(2):   # (the second rollout starts from the carried state)
            c.begin_window(update)
            with NoHostSync() as guard:
                for _ in range(cfg.rollout_length):
                    c.step()
            assert guard.warp == {"synchronize": 0, "host_copies": 0}
            w = c.end_window("steps")   # (the window's once-per-window reads: its settled counts)
            assert w.steps == cfg.rollout_length
            assert all(bool(b.valid.all()) and bool((b.k == 1).all()) for b in w.groups.values())
            ends.append(any(bool(b.terminated.any() | b.truncated.any()) for b in w.groups.values()))
            mode.stats.pop()   # (the row's once-per-update read of the finished episodes)
        assert any(ends), "the rollouts should cross an episode end (the autoreset path)"
        mode.close()


@pytest.mark.parametrize("name", ["spread", "tag", "smax-masks"])
def test_a_whole_update_reads_the_host_a_fixed_number_of_times(name, monkeypatch):
    """The reads left in an update (the finiteness checks after the rollout, the row's episode
    summary, the PPO diagnostics per minibatch) do not grow with the rollout length: none is
    per step."""
    from war_train.run.loop import update

    monkeypatch.setattr(war_collector, "host_reads_are_free", lambda device: False)
    reads = {}
    for T in (30, 60):   # (each update finishes some episode: the row summarizes them)
        cfg = war_train.preset_config("smoke", **CASES[name], num_envs=4, rollout_length=T, total_env_steps=4 * T * 3,
                                      epochs=1, num_minibatches=1, gif=False, eval_episodes=0)
        with make_env(cfg) as env:
            mode = lockstep.LockstepMode(env, cfg, distributed.Local())
            update(mode)   # (the first update: lazy set-up, e.g. the optimizers' state)
            with NoHostSync(count=True) as guard:
                update(mode)
            reads[T] = (guard.reads, guard.warp)
            mode.close()
    assert reads[30] == reads[60] and reads[30][0] > 0


# ----------------------------------------------------------------------------- the WAR rollout
from war_train.rollout.collector import BehaviourPolicy  # noqa: E402
from war_train.config import WarConfig  # noqa: E402
from war_train.presets import ARTICLE_COSTS  # noqa: E402
from war_train.war.mode import WarMode  # noqa: E402

#: name -> (config overrides, WAR config): 13-step episodes across 30-step windows (fragments carried
#: over, episode ends inside windows), groups deciding at different rates, every action space
WAR_CASES = {
    "command-war": (dict(scenario="Command-v0", env_kwargs={"max_cycles": 13}),
                    dict(arm="war", costs=ARTICLE_COSTS, jitter=0.1)),
    "command-draft": (dict(scenario="Command-v0", env_kwargs={"max_cycles": 13}),
                      dict(arm="war", costs=ARTICLE_COSTS, fill="draft")),
    "command-gru": (dict(scenario="Command-v0", use_gru=True, env_kwargs={"max_cycles": 13}),
                    dict(arm="war", costs=ARTICLE_COSTS)),
    "spread-box-frames-local": (dict(scenario="Spread-v0", frame_stack=2, critic_input="local",
                                     env_kwargs={"continuous_actions": True, "max_cycles": 13}), dict(arm="sync")),
    "tag": (dict(scenario="Tag-v0", env_kwargs={"num_taggers": 2, "num_runners": 5, "episode_length": 12}),
            dict(arm="sync")),
    "smax-masks": (dict(scenario="SMAX-v0", env_kwargs={"map_name": "3m"}), dict(arm="sync")),
}


def war_mode(name, T=30, branch_free=True, monkeypatch=None, **war_kw):
    cfg_kw, war_cfg = WAR_CASES[name]
    cfg = war_train.preset_config("smoke", **cfg_kw, num_envs=4, rollout_length=T, total_env_steps=4 * T * 3,
                                  epochs=1, num_minibatches=1, gif=False, eval_episodes=0)
    monkeypatch.setattr(war_collector, "host_reads_are_free", lambda device: not branch_free)   # (True: the CUDA path)
    return WarMode(cfg, WarConfig(**{**war_cfg, **war_kw}))


@pytest.mark.parametrize("name", sorted(WAR_CASES))
def test_the_war_rollout_never_synchronizes(name, monkeypatch):
    mode = war_mode(name, monkeypatch=monkeypatch)
    c = mode.collectors[0]
    assert c.branch_free and not c.war.host_checks
    ends = []
    for _ in range(2):   # (the second window starts from the carried fragments)
        c.begin_window(mode.version)
        with NoHostSync() as guard:
            for _ in range(30):
                c.step()
        assert guard.warp == {"synchronize": 0, "host_copies": 0}
        w = c.end_window("steps")   # (the window's once-per-window reads: its settled counts, fragment ends)
        assert w.steps == 30 and w.agent_transitions > 0
        ends.append(any(bool(b.terminated.any() | b.truncated.any()) for b in w.groups.values()))
        mode.stats[0].pop()
    assert any(ends), "the windows should cross an episode end (the autoreset path)"
    if WAR_CASES[name][1]["arm"] == "war":   # the commander decides less often than the sentries
        assert w.decisions["commander"] * 9 < w.decisions["sentry"]
    mode.close()


@pytest.mark.parametrize("name", ["command-war", "smax-masks"])
def test_a_whole_war_update_reads_the_host_a_fixed_number_of_times(name, monkeypatch):
    """The reads left in a WAR update (settling the window's counts, fragment ends, batch
    statistics, the PPO diagnostics, the row) do not grow with the window length."""
    from war_train.run.loop import update

    reads = {}
    for T in (30, 60):
        mode = war_mode(name, T=T, monkeypatch=monkeypatch)
        update(mode)
        with NoHostSync(count=True) as guard:
            update(mode)
        reads[T] = (guard.reads, guard.warp)
        mode.close()
    assert reads[30] == reads[60] and reads[30][0] > 0


class GreedyPolicy(BehaviourPolicy):
    """The behaviour policy's mode: its actions depend on the observations only, not on which
    worlds a call covers (so that the two rollout paths can be compared action for action)."""

    @torch.no_grad()
    def act(self, group, obs, state, avail=None, hidden=None):
        p = self.policies[group]
        if hidden is not None:
            actor_h, critic_h, starts = hidden
            out, actor_h = p.forward_actor(obs, actor_h, starts)
            values, critic_h = p.value(state, obs, critic_h, starts)
        else:
            out, _ = p.actor(p.actor_input(obs))
            values, _ = p.value(state, obs)
        actions = p.dist.mode(out, avail)
        logp = p.dist.log_prob(out, actions, avail)
        return (actions, logp, values) if hidden is None else (actions, logp, values, (actor_h, critic_h))

    @torch.no_grad()
    def draft(self, group, obs, state, avail=None):
        p = self.policies[group]
        out, _ = self.drafts[group](p.actor_input(obs))
        actions = p.dist.mode(out, avail)
        return actions, p.dist.log_prob(out, actions, avail), p.value(state, obs)[0]


#: transition fields computed by the networks: the branch-free path evaluates them on every world
#: (a float32 matmul over 4 rows may round differently from one over 2); the others are exact
NETWORK_FIELDS = ("logp", "values", "next_values", "actor_h", "critic_h")


@pytest.mark.parametrize("name", sorted(WAR_CASES))
def test_both_war_rollout_paths_write_the_same_transitions(name, monkeypatch):
    windows = {}
    for branch_free in (False, True):
        mode = war_mode(name, branch_free=branch_free, monkeypatch=monkeypatch, env_time=False)
        c = mode.collectors[0]
        assert c.branch_free == branch_free
        c.policy = GreedyPolicy(mode.policies, mode.gen, mode.drafts)
        windows[branch_free] = [c.collect(mode.triggers[0], mode.version) for _ in range(2)]
        declared = all(p is not None for p in mode.profiles.values())   # (else: measured call times)
        windows[branch_free].append({lane: m.state_dict() for lane, m in mode.cost_models.items()} if declared else 0)
        mode.close()
    host, free = windows[False], windows[True]
    assert host[-1] == free[-1]   # the online cost estimates saw the same calls
    for a, b in zip(host[:-1], free[:-1]):
        assert (a.steps, a.decisions, a.calls, a.step_calls, a.reason) == \
               (b.steps, b.decisions, b.calls, b.step_calls, b.reason)
        assert not declared or a.clock_seconds == b.clock_seconds
        for g in a.groups:
            for field in war_collector._ROW_FIELDS:
                x, y = getattr(a.groups[g], field), getattr(b.groups[g], field)
                if field in NETWORK_FIELDS:
                    torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6, msg=f"{g}.{field}")
                else:
                    assert torch.equal(x, y), f"{g}.{field}"


def test_a_search_reads_the_host_only_once_whatever_its_simulations():
    # the planner's search (war_train.plan): its model steps are set_state(trusted=True), trusted
    # env steps and forward passes; only the checks at the roots read the device, once a search
    import war_envs
    from war_train.config import TrainConfig
    from war_train.learn.policy import CriticState, build_policies
    from war_train.learn.valuenorm import ValueNorm
    from war_train.plan.planner import EnvSearchModel, policy_model
    from war_train.plan.search import puct_search
    from war_train.plan.worlds import PlanningWorlds

    env = war_envs.make("Relay-v0", num_envs=6, seed=0, num_sentries=2)
    env.reset()
    cfg = TrainConfig(scenario="Relay-v0", num_envs=6)
    policies = build_policies(dict(env.groups), CriticState(env).dim, cfg, torch.device("cpu"))
    evaluate, act_others = policy_model(policies, {g: ValueNorm() for g in env.groups}, "commander",
                                        critic_input="state")
    reads = {}
    with PlanningWorlds("Relay-v0", capacity=6, num_sentries=2) as worlds:
        rows = worlds.load(env, torch.arange(6), 1, redraw=torch.Generator().manual_seed(0)).flatten()
        root = {k: v[rows] for k, v in worlds.env.get_state().items()}
        for simulations in (2, 9):
            model = EnvSearchModel(worlds, "commander", evaluate, act_others)
            with NoHostSync(count=True) as guard:
                out = puct_search(model, root, simulations=simulations, depth=3)
            reads[simulations] = (guard.reads, guard.warp["synchronize"], guard.warp["host_copies"])
            assert (out.visits.sum(1) == simulations).all()
    assert reads[2] == reads[9] and reads[2][0] <= 6, reads   # (the root checks: a few reads a search)
