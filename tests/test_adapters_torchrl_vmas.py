"""TorchRL's ``VmasEnv`` layout: for every registered VMAS-family scenario, ``TorchRLEnv`` (and
``war_train.adapters.torchrl.VmasEnv``) has exactly ``torchrl.envs.libs.vmas.VmasEnv``'s spec
tree, keys, shapes and reset keys, and with our worlds' state copied from VMAS's one step of the
same actions gives the same tensordict values (float32 rounding).

Scenarios are found in the registry (``VmasBase`` subclasses), so scenarios added later are
covered too.  Their per-world scenario state (Navigation's ``pos_shaping``) is read off VMAS by
name (``vmas_extra_state``): our ``state`` fields carry VMAS's attribute names."""

from __future__ import annotations

import importlib
import warnings

import pytest
import torch

pytest.importorskip("torchrl")
pytest.importorskip("vmas")

import vmas_reference as R  # noqa: E402
from tensordict import TensorDict  # noqa: E402
from torchrl.data import Bounded, Categorical, Composite, OneHot  # noqa: E402
from torchrl.envs.libs.vmas import VmasEnv as TorchRLVmasEnv  # noqa: E402
from torchrl.envs.utils import MarlGroupMapType, check_env_specs  # noqa: E402

from war_envs import registry  # noqa: E402
from war_envs.scenarios.vmas.base import VmasBase  # noqa: E402
from war_train.adapters.torchrl import TorchRLEnv, VmasEnv, vmas_scenarios  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")

VMAS_IDS = [i for i in registry.registered_ids() if issubclass(registry.scenario_class(i), VmasBase)]
#: (continuous_actions, categorical_actions)
ACTIONS = {"continuous": (True, True), "categorical": (False, True), "onehot": (False, False)}
#: scenario kwargs besides the defaults, per VMAS name (others: the defaults only)
KWARGS = {"navigation": [dict(n_agents=3, observe_all_goals=True, shared_rew=False, n_lidar_rays=8)],
          "give_way": [dict(dt_delay=2, observe_rel_pos=True, box_agents=True, energy_rew_coeff=0.2)],
          "passage": [dict(n_passages=3)],
          "wheel": [dict(n_agents=3, line_length=1.5, desired_velocity=0.2)],
          "dispersion": [dict(n_agents=3, n_food=5, share_reward=True, penalise_by_time=True)],
          "balance": [dict(n_agents=4, package_mass=2, random_package_pos_on_line=False)],
          "transport": [dict(n_agents=3, n_packages=2, package_length=0.2, package_mass=10)],
          "sampling": [dict(n_agents=2, shared_rew=False, xdim=0.5, grid_spacing=0.1, cov=[0.1, 0.05, 0.2],
                            norm=False)],
          "flocking": [dict(n_agents=3, n_obstacles=2, n_lidar_rays=8, collision_reward=-0.5)],
          "discovery": [dict(use_agent_lidar=True, shared_reward=True, n_targets=4, agent_collision_penalty=-0.5,
                             time_penalty=-0.01)],
          "football": [dict(ai_red_agents=False, n_blue_agents=2, n_red_agents=3, ai_strength=0.7)]}
CASES = [(i, a, kw) for i in VMAS_IDS for a in ACTIONS
         for kw in [{}] + KWARGS.get(registry.scenario_class(i).vmas_scenario, [])]
CASE_IDS = [f"{i}-{a}-{'default' if not kw else 'kwargs'}" for i, a, kw in CASES]
E = 6
#: scenarios whose random play can end an episode within a few steps of its start (a goal drawn
#: under the package, an agent spawned next to the goal): the rollout test checks only the limit
EARLY_DONE = {"reverse_transport", "dropout", "ball_passage"}
#: our state that is not the scenario's own (bodies and the episode clock: copy_state's)
_COMMON_STATE = {"pos", "vel", "rot", "ang_vel", "t", "episode", "rng_key", "pending_reset"}


def _name(env_id: str) -> str:
    return registry.scenario_class(env_id).vmas_scenario


def _pair(env_id, action, kwargs, *, device=None, **extra):
    """(torchrl's VmasEnv, ours) for the same scenario and arguments."""
    continuous, categorical = ACTIONS[action]
    args = dict(num_envs=E, continuous_actions=continuous, categorical_actions=categorical, seed=0, **extra,
                **kwargs)
    if device is not None:
        args["device"] = device
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = TorchRLVmasEnv(_name(env_id), **args)
    R.ungated_vmas(theirs._env)  # VMAS's batch-wide collides gate off (see tests/vmas_reference.py)
    if _name(env_id) == "football":  # its scripted team's one batch coupling off (tests/vmas_reference.py)
        R.per_world_football_ai(theirs._env)
    return theirs, VmasEnv(_name(env_id), **args)


def vmas_extra_state(ours):
    """``extra_state`` for ``R.copy_state``: the scenario's parity tests' own ``extra_state``
    (``tests/test_vmas_<scenario>.py``) where they define one, else each of our scenario's own
    state fields read off VMAS under the same name (stacked over VMAS's agents or their controllers, or the scenario
    object's tensor)."""
    own = getattr(importlib.import_module(f"test_vmas_{ours.vmas_scenario}"), "extra_state", None)
    if own is not None:  # the scenario's parity tests read its state off VMAS themselves
        return own
    keys = [k for k in ours.state_keys if k not in _COMMON_STATE]
    shapes = {k: tuple(t.shape) for k, t in ours.get_state().items()}

    def has(agent, k):
        return hasattr(agent, k) or hasattr(getattr(agent, "controller", None), k)

    def agent_value(vm, agent, k):
        """``agent.k``, else ``agent.controller.k`` (VMAS's controllers keep their own state); a
        list of per-world tensors (a queue) stacked along dim 1 (empty: our zero-length axis)."""
        value = getattr(agent, k) if hasattr(agent, k) else getattr(agent.controller, k)
        if isinstance(value, list):
            value = torch.stack(value, dim=1) if value else torch.zeros((vm.num_envs,) + shapes[k][2:])
        return value

    def extra(vm):
        out = {}
        for k in keys:
            if all(has(a, k) for a in vm.agents):  # the policy agents (flocking's target is scripted)
                value = torch.stack([agent_value(vm, a, k) for a in vm.agents], dim=1)
            elif hasattr(vm.scenario, k):
                value = getattr(vm.scenario, k)
                if isinstance(value, list):  # one tensor per item (sampling's locs): stacked along dim 1
                    value = torch.stack(value, dim=1)
            elif vm.world.landmarks and all(hasattr(lm, k) for lm in vm.world.landmarks):
                value = torch.stack([getattr(lm, k) for lm in vm.world.landmarks], dim=1)  # dispersion's eaten
            elif getattr(vm.scenario, "packages", None) and all(hasattr(p, k) for p in vm.scenario.packages):
                value = torch.stack([getattr(p, k) for p in vm.scenario.packages], dim=1)  # transport's
            else:
                raise AssertionError(f"state field {k!r} of {type(ours).__name__}: neither VMAS's agents nor its "
                                     "scenario object have an attribute of that name; give the field VMAS's name")
            assert tuple(value.shape) == shapes[k], f"{k}: VMAS's {tuple(value.shape)} != ours {shapes[k]}"
            out[k] = value.clone()
        return out

    return extra


def assert_same_specs(ours, theirs, label: str) -> None:
    """Every node of two spec trees: keys, classes, shapes, dtypes, devices and spaces."""
    assert set(ours.keys(True)) == set(theirs.keys(True)), f"{label}: keys {sorted(map(str, ours.keys(True)))} " \
                                                          f"!= VmasEnv's {sorted(map(str, theirs.keys(True)))}"
    for key in ours.keys(True):
        a, b = ours[key], theirs[key]
        where = f"{label}[{key!r}]"
        assert type(a) is type(b), f"{where}: {type(a).__name__} != VmasEnv's {type(b).__name__}"
        assert a.shape == b.shape, f"{where}: shape {a.shape} != VmasEnv's {b.shape}"
        assert a.device == b.device, f"{where}: device {a.device} != VmasEnv's {b.device}"
        if isinstance(a, Composite):
            continue
        assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != VmasEnv's {b.dtype}"
        if isinstance(a, Bounded):
            assert torch.equal(a.space.low, b.space.low) and torch.equal(a.space.high, b.space.high), where
        if isinstance(a, (Categorical, OneHot)):
            assert a.space.n == b.space.n, f"{where}: n {a.space.n} != VmasEnv's {b.space.n}"
    assert ours == theirs, label


SPECS = ("full_observation_spec", "full_action_spec", "full_reward_spec", "full_done_spec", "full_state_spec",
         "full_observation_spec_unbatched", "full_action_spec_unbatched", "full_reward_spec_unbatched",
         "full_done_spec_unbatched")


def test_every_vmas_scenario_is_covered():
    assert "Navigation-v0" in VMAS_IDS
    assert {_name(i): i for i in VMAS_IDS} == vmas_scenarios()


@pytest.mark.parametrize("env_id,action,kwargs", CASES, ids=CASE_IDS)
def test_specs_and_attributes_equal_vmas_env(env_id, action, kwargs):
    for device in (None, "cpu"):   # VmasEnv without a device leaves TorchRL's device None
        theirs, ours = _pair(env_id, action, kwargs, device=device, max_steps=5)
        check_env_specs(ours, seed=0)
        for name in SPECS:
            assert_same_specs(getattr(ours, name), getattr(theirs, name), f"{env_id} {action} {name}")
        for attr in ("batch_size", "device", "group_map", "agent_names", "agent_names_to_indices_map", "n_agents",
                     "num_envs", "continuous_actions", "categorical_actions", "het_specs", "het_specs_map",
                     "done_keys", "reset_keys", "action_keys", "reward_keys", "observation_keys",
                     "_allow_done_after_reset", "batch_locked"):
            assert getattr(ours, attr) == getattr(theirs, attr), f"{attr}: {getattr(ours, attr)!r} != VmasEnv's " \
                                                                 f"{getattr(theirs, attr)!r}"
        assert repr(ours) == repr(theirs)
        ours.close()


@pytest.mark.parametrize("env_id,action,kwargs", CASES, ids=CASE_IDS)
def test_rollout_has_vmas_env_keys_and_shapes(env_id, action, kwargs):
    """A rollout across a time limit (max_steps=4, 7 steps: TorchRL resets through "_reset")."""
    theirs, ours = _pair(env_id, action, kwargs, max_steps=4)
    td_t = theirs.rollout(7, break_when_any_done=False)
    td_o = ours.rollout(7, break_when_any_done=False)
    keys = set(td_t.keys(True, True))
    assert set(td_o.keys(True, True)) == keys
    for key in keys:
        assert td_o[key].shape == td_t[key].shape and td_o[key].dtype == td_t[key].dtype, key
    assert td_o.batch_size == td_t.batch_size == (E, 7)
    for td in (td_o, td_t):  # VMAS's time limit is done and terminated, every 4 steps
        done = td["next", "done"].squeeze(-1)
        assert done[:, 3].all()
        if _name(env_id) not in EARLY_DONE:
            assert not done[:, :3].any() and not done[:, 4:6].any()
        assert torch.equal(td["next", "terminated"], td["next", "done"])
    ours.close()


def _step_theirs(env_id, theirs, ours, td, draws=None):
    """VmasEnv's step after ours; Discovery's respawn draws are ours (``R.discovery_draws``:
    VMAS draws them from torch's global generator inside its step), as are Football's scripted
    team's (``draws``: ``ai_draws()`` taken before our step, ``R.football_draws``)."""
    if env_id == "Football-v0":
        with R.football_draws(theirs._env, draws):
            return theirs.step(td.clone())["next"]
    if env_id != "Discovery-v0":
        return theirs.step(td.clone())["next"]
    with R.discovery_draws(theirs._env, ours.batched):
        return theirs.step(td.clone())["next"]


#: scenarios with VMAS's joints: one float32 ulp moves VMAS's own next step by up to ~1e-4 in the
#: observations (their physics is checked against VMAS's one-ulp twin in their own test files),
#: so this layout test holds their values to a tolerance above that and far below a misplaced entry
JOINT_STEP_TOL = dict(rtol=1e-4, atol=5e-4)
JOINT_IDS = ("JointPassage-v0", "BallTrajectory-v0", "BuzzWire-v0", "JointPassageSize-v0", "AsymJoint-v0",
             "Waterfall-v0")
#: scenarios whose default observation noise (torch's global generator in VMAS, ours per world)
#: is switched off for the value comparison (their noise is tested in their own test files)
NOISELESS = {"asym_joint": {"obs_noise": 0.0}}


@pytest.mark.parametrize("env_id,action,kwargs", CASES, ids=CASE_IDS)
def test_one_step_from_vmas_state_gives_vmas_env_values(env_id, action, kwargs):
    """Our worlds := VMAS's before each step; the same action tensordict on both; every entry
    of the step's "next" tensordict agrees (the last step reaches max_steps: done on both)."""
    steps = 6
    theirs, ours = _pair(env_id, action, {**NOISELESS.get(_name(env_id), {}), **kwargs}, max_steps=steps)
    extra = vmas_extra_state(ours.batched)
    theirs.reset()
    ours.reset()
    gen = torch.Generator().manual_seed(3)
    for t in range(steps):
        R.copy_state(theirs._env, ours.batched, extra)
        torch.manual_seed(100 + t)  # rand() draws from torch's global generator: the same draws in any test order
        td = theirs.full_action_spec.rand()
        for key in td.keys(True, True):
            if td[key].is_floating_point():
                low, high = theirs.full_action_spec[key].space.low, theirs.full_action_spec[key].space.high
                td[key] = low + (high - low) * torch.rand(td[key].shape, generator=gen)
        draws = ours.batched.ai_draws() if env_id == "Football-v0" else None
        out_o = ours.step(td.clone())["next"]
        out_t = _step_theirs(env_id, theirs, ours, td, draws)
        assert set(out_o.keys(True, True)) == set(out_t.keys(True, True))
        for key in out_t.keys(True, True):
            a, b = out_o[key], out_t[key]
            assert a.dtype == b.dtype, f"step {t} {key}: dtype {a.dtype} != {b.dtype}"
            if a.dtype == torch.bool:
                assert torch.equal(a, b), f"step {t} {key}: {a.flatten().tolist()} != VmasEnv's {b.flatten().tolist()}"
            else:
                R.compare(f"step {t} {key}", a, b, JOINT_STEP_TOL if env_id in JOINT_IDS else R.STEP_TOL)
        assert out_t["done"].all() == (t == steps - 1)
    ours.close()


def test_the_value_comparison_bites():
    """A changed scenario argument on our side (Navigation's final reward) is caught."""
    theirs = TorchRLVmasEnv("navigation", num_envs=E, max_steps=10, seed=0, final_reward=0.01)
    ours = VmasEnv("navigation", num_envs=E, max_steps=10, seed=0, final_reward=0.5)
    R.ungated_vmas(theirs._env)
    theirs.reset()
    ours.reset()
    # every agent on its goal: the final reward is paid
    for a, goal in zip(theirs._env.world.agents, theirs._env.world.landmarks):
        a.state.pos = goal.state.pos.clone()
    R.copy_state(theirs._env, ours.batched, vmas_extra_state(ours.batched))
    td = TensorDict({"agents": TensorDict({"action": torch.zeros(E, 4, 2)}, batch_size=[E, 4])}, batch_size=[E])
    out_t, out_o = theirs.step(td.clone())["next"], ours.step(td.clone())["next"]
    R.compare("observation", out_o["agents", "observation"], out_t["agents", "observation"], R.STEP_TOL)
    with pytest.raises(AssertionError, match="reward"):
        R.compare("reward", out_o["agents", "reward"], out_t["agents", "reward"], R.STEP_TOL)
    ours.close()


def test_regrouped_agents_follow_vmas_env():
    """``group_map=ONE_GROUP_PER_AGENT`` (agents regrouped across the scenario's group): the
    same specs and one step's values as VmasEnv's."""
    kw = dict(num_envs=E, max_steps=10, seed=0, n_agents=3, group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT)
    theirs, ours = TorchRLVmasEnv("navigation", **kw), VmasEnv("navigation", **kw)
    R.ungated_vmas(theirs._env)
    assert ours.group_map == theirs.group_map == {f"agent_{i}": [f"agent_{i}"] for i in range(3)}
    for name in SPECS:
        assert_same_specs(getattr(ours, name), getattr(theirs, name), name)
    check_env_specs(ours, seed=0)
    theirs.reset()
    ours.reset()
    R.copy_state(theirs._env, ours.batched, vmas_extra_state(ours.batched))
    torch.manual_seed(100)
    td = theirs.full_action_spec.rand()
    out_t, out_o = theirs.step(td.clone())["next"], ours.step(td.clone())["next"]
    for key in out_t.keys(True, True):
        R.compare(str(key), out_o[key].float(), out_t[key].float(), R.STEP_TOL)
    # the actions reached the right agents: agent_1's own action moves agent_1 only
    assert not torch.equal(out_o["agent_1", "observation"], out_o["agent_2", "observation"])
    ours.close()


def test_clamped_actions_follow_vmas_env():
    """``clamp_actions=True`` (what BenchMARL's VMAS tasks pass): actions beyond ``u_range`` are
    clamped on both sides (and accepted by the adapter), to the same values."""
    kw = dict(num_envs=E, max_steps=10, seed=0, clamp_actions=True)
    theirs, ours = TorchRLVmasEnv("navigation", **kw), VmasEnv("navigation", **kw)
    R.ungated_vmas(theirs._env)
    theirs.reset()
    ours.reset()
    R.copy_state(theirs._env, ours.batched, vmas_extra_state(ours.batched))
    action = (torch.rand(E, 4, 2, generator=torch.Generator().manual_seed(0)) - 0.5) * 6.0  # within ±3
    td = TensorDict({"agents": TensorDict({"action": action}, batch_size=[E, 4])}, batch_size=[E])
    out_t, out_o = theirs.step(td.clone())["next"], ours.step(td.clone())["next"]
    for key in out_t.keys(True, True):
        R.compare(str(key), out_o[key].float(), out_t[key].float(), R.STEP_TOL)
    unclamped = VmasEnv("navigation", num_envs=E, max_steps=10, seed=0)
    unclamped.reset()
    with pytest.raises(ValueError, match=r"tensordict\[\('agents', 'action'\)\]: expected Box actions in"):
        unclamped.step(td.clone())
    ours.close()
    unclamped.close()


def test_partial_reset_resets_the_masked_worlds_only():
    theirs, ours = _pair("Navigation-v0", "continuous", {}, max_steps=10)
    for env in (theirs, ours):
        td = env.reset()
        td = env.rand_step(td)
    before = ours.batched.get_state()
    mask = torch.tensor([True, False, True, False, False, True])
    td = ours.reset(TensorDict({"_reset": mask.unsqueeze(-1)}, batch_size=[E]))
    after = ours.batched.get_state()
    assert torch.equal(after["pos"][~mask], before["pos"][~mask])
    assert not torch.equal(after["pos"][mask], before["pos"][mask])
    assert torch.equal(after["t"], torch.where(mask, 0, before["t"]))
    assert not td["done"].any() and set(td.keys(True, True)) == set(
        theirs.reset(TensorDict({"_reset": mask.unsqueeze(-1)}, batch_size=[E])).keys(True, True))
    # after a reset, a reset world's info holds the scenario's last written values, as VMAS's
    # info() does (the other worlds' entries are TorchRL's to fill from the reset's input)
    assert torch.equal(td["agents", "info", "pos_rew"][mask, :, 0],
                       ours.batched._metrics["pos_rew"][mask].to(torch.float32))
    ours.close()


def test_vmas_env_constructor_arguments():
    # a registered id, scenario_kwargs (kwargs win, as in torchrl 0.14) and VMAS's defaults
    env = VmasEnv("Navigation-v0", num_envs=2, scenario_kwargs={"n_agents": 2, "n_lidar_rays": 4}, n_agents=3,
                  dict_spaces=False, terminated_truncated=False)
    assert env.n_agents == 3 and env.full_observation_spec["agents", "observation"].shape == (2, 3, 10)
    assert env.batched.max_steps is None and env.scenario_name == "Navigation-v0"
    env.close()
    with pytest.raises(ValueError, match=r"scenario: VMAS's 'road_traffic' has no war-envs port.*supported: "
                                         r"\[.*'navigation'"):
        VmasEnv("road_traffic", num_envs=2)
    with pytest.raises(ValueError, match=r"scenario: unknown VMAS scenario 'navigaton'.*did you mean.*navigation"):
        VmasEnv("navigaton", num_envs=2)
    with pytest.raises(TypeError, match="scenario: expected a VMAS scenario name"):
        VmasEnv(object(), num_envs=2)
    with pytest.raises(ValueError, match="dict_spaces: only VMAS's default False"):
        VmasEnv("navigation", num_envs=2, dict_spaces=True)
    with pytest.raises(ValueError, match="from_pixels: only VMAS's default False"):
        VmasEnv("navigation", num_envs=2, from_pixels=True)
    with pytest.raises(TypeError, match="n_agent"):
        VmasEnv("navigation", num_envs=2, n_agent=3)   # the scenario's own unknown-argument error
    with pytest.raises(ValueError, match="group_map: expected every agent"):
        VmasEnv("navigation", num_envs=2, group_map={"a": ["agent_0"]})


def test_layouts():
    # the VMAS family defaults to "vmas"; "war" gives it war-envs' own layout
    env = TorchRLEnv("Navigation-v0", num_envs=2, max_steps=5)
    assert env.layout == "vmas" and "state" not in env.observation_spec.keys() and "truncated" not in env.done_keys
    env.close()
    env = TorchRLEnv("Navigation-v0", num_envs=2, max_steps=5, layout="war")
    assert env.layout == "war" and "state" in env.observation_spec.keys()
    assert {"done", "terminated", "truncated", ("agents", "truncated")} <= set(env.done_keys)
    check_env_specs(env, seed=0)
    td = env.rollout(5, break_when_any_done=False)
    assert td["next", "truncated"][:, -1].all() and not td["next", "terminated"].any()
    env.close()
    # other scenarios: "war" only
    assert TorchRLEnv("Spread-v0", num_envs=2).layout == "war"
    with pytest.raises(ValueError, match="layout: 'vmas'.*needs a scenario of the VMAS family"):
        TorchRLEnv("Spread-v0", num_envs=2, layout="vmas")
    with pytest.raises(ValueError, match="layout"):
        TorchRLEnv("Navigation-v0", num_envs=2, layout="torchrl")


def test_render_is_vmas_rgb_array_call():
    env = VmasEnv("navigation", num_envs=2, max_steps=5)
    env.reset()
    frame = env.render(mode="rgb_array", env_index=1)
    assert frame.shape == (700, 700, 3) and frame.dtype.name == "uint8" and frame.min() < 255
    with pytest.raises(ValueError, match="mode: expected 'rgb_array'"):
        env.render()
    with pytest.raises(ValueError, match="env_index: expected 0..1"):
        env.render(mode="rgb_array", env_index=2)
    env.close()


def test_dropin_example_builds_the_tutorials_vmas_env():
    """examples/torchrl_vmas_dropin.py's env line (the tutorial's, import changed) gives
    torchrl's VmasEnv's specs for the tutorial's arguments."""
    import importlib.util
    import pathlib
    import sys

    examples = pathlib.Path(__file__).resolve().parents[1] / "examples"
    sys.path.insert(0, str(examples))
    try:
        spec = importlib.util.spec_from_file_location("torchrl_vmas_dropin", examples / "torchrl_vmas_dropin.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        from torchrl_mappo_tutorial import TutorialConfig
    finally:
        sys.path.remove(str(examples))
    cfg = TutorialConfig(num_envs=4, max_steps=5)
    ours = module.make_env(cfg)
    theirs = TorchRLVmasEnv(scenario="navigation", num_envs=4, continuous_actions=True, max_steps=5, device="cpu",
                            n_agents=cfg.n_agents)
    assert isinstance(ours, VmasEnv)
    for name in SPECS:
        assert_same_specs(getattr(ours, name), getattr(theirs, name), name)
    ours.close()


def test_unseeded_vmas_env_follows_torch_manual_seed():
    """``seed=None`` (VmasEnv's default): the worlds' seed comes from torch's global generator,
    so ``torch.manual_seed`` repeats the starts (as it repeats VMAS's), and a new seed moves them."""
    starts = []
    for s in (5, 5, 6):
        torch.manual_seed(s)
        env = VmasEnv("navigation", num_envs=3, max_steps=5)
        starts.append(env.reset()["agents", "observation"])
        env.close()
    assert torch.equal(starts[0], starts[1]) and not torch.equal(starts[0], starts[2])


def test_float64_worlds_keep_vmas_env_dtypes():
    env = VmasEnv("navigation", num_envs=3, max_steps=4, seed=1, precision="float64")
    check_env_specs(env, seed=0)
    td = env.rollout(3)
    assert td["next", "agents", "reward"].dtype == td["next", "agents", "info", "pos_rew"].dtype == torch.float32
    env.close()


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_env_objects_of_any_autoreset_mode_give_the_id_built_rollout(mode):
    import war_envs

    built = TorchRLEnv("Navigation-v0", num_envs=3, seed=2, max_steps=4)
    given = TorchRLEnv(war_envs.make("Navigation-v0", num_envs=3, seed=2, max_steps=4, autoreset_mode=mode))
    assert given.layout == "vmas"
    torch.manual_seed(0)
    a = built.rollout(10, break_when_any_done=False)
    torch.manual_seed(0)
    b = given.rollout(10, break_when_any_done=False)
    assert set(a.keys(True, True)) == set(b.keys(True, True))
    for key in a.keys(True, True):
        assert torch.equal(a[key], b[key]), key
    built.close()
    given.close()
    given.batched.close()
