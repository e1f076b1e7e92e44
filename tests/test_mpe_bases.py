"""What the MPE base gives every scenario: the declared options (the others refused with one
error), the generated ``clear_info``, the landmark-index state checks — and the rule that a
scenario imports shared code from ``world``/``base``/``common``/``assignment``, never from a
sibling scenario.  (The uniform start's draws are pinned by the golden trajectories.)"""

from __future__ import annotations

import ast
import pathlib
import re
from typing import Any

import pytest
import torch
import warp as wp

import war_envs
from war_envs import registry
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import OPTIONS, Layout, MPEBase, info, info_clearer, param, state
from war_envs.scenarios.mpe.common import uniform_reset
from war_envs.testing import random_actions

MPE_IDS = [i for i in registry.registered_ids() if issubclass(registry.scenario_class(i), MPEBase)]
#: a value other than the default for every option
OTHER = {"curriculum": True, "terminate_on_success": True, "num_agent_neighbors": 1, "num_landmark_neighbors": 1}
SHARED = {"world", "base", "common", "assignment"}


def test_every_mpe_scenario_is_covered():
    assert len(MPE_IDS) == 18 and "Tag-v0" not in MPE_IDS and "SMAX-v0" not in MPE_IDS


@pytest.mark.parametrize("env_id", MPE_IDS)
def test_undeclared_options_are_refused_naming_argument_scenario_and_default(env_id):
    cls = registry.scenario_class(env_id)
    assert cls.options <= OPTIONS.keys()
    for name in OPTIONS.keys() - cls.options:
        default = OPTIONS[name][0]
        with pytest.raises(ValueError) as err:
            war_envs.make(env_id, num_envs=1, **{name: OTHER[name]})
        message = str(err.value)
        assert message.startswith(f"{name}: {env_id}"), message
        assert f"expected {default}, got {OTHER[name]!r}" in message, message
        takes = ", ".join(n for n in OPTIONS if n in cls.options) or "none"
        assert message.endswith(f"(the MPE options it takes: {takes})"), message
        war_envs.make(env_id, num_envs=1, **{name: default}).close()  # the default is accepted


@pytest.mark.parametrize("env_id", MPE_IDS)
def test_declared_options_are_taken(env_id):
    cls = registry.scenario_class(env_id)
    for name in cls.options:
        with war_envs.make(env_id, num_envs=2, seed=0, **{name: OTHER[name]}) as env:
            assert getattr(env, name) == OTHER[name]
            env.reset()
            env.step(random_actions(env, torch.Generator().manual_seed(0)))


def test_the_declarations_of_the_scenarios():
    declared = {i: registry.scenario_class(i).options for i in MPE_IDS}
    every = set(OPTIONS)
    assert declared["Spread-v0"] == declared["PredatorPrey-v0"] == every
    assert declared["Command-v0"] == every - {"curriculum"}
    assert declared["Adversary-v0"] == {"num_agent_neighbors", "num_landmark_neighbors"}
    assert declared["Formation-v0"] == declared["Line-v0"] == {"terminate_on_success"}
    for env_id in ("Simple-v0", "Push-v0", "Crypto-v0", "SpeakerListener-v0", "Reference-v0", "WorldComm-v0",
                   "CollectTreasure-v0", "Relay-v0"):
        assert declared[env_id] == set(), env_id


def test_option_type_errors_come_before_the_refusal():
    with pytest.raises(TypeError, match="curriculum: expected a bool"):
        war_envs.make("Simple-v0", curriculum=1)
    with pytest.raises(ValueError, match="num_landmark_neighbors: expected an int >= 1"):
        war_envs.make("Push-v0", num_landmark_neighbors=0)


def test_an_unknown_declared_option_is_a_class_definition_error():
    with pytest.raises(TypeError, match=r"Bad.options: unknown option\(s\) \['neighbours'\]"):
        type("Bad", (MPEBase,), {"options": {"terminate_on_success", "neighbours"}})


# ----------------------------------------------------------------------------- generated clear_info
def test_info_clearer_is_generated_once_per_info_spec():
    spec = {"a": info("float", 3), "b": info("int"), "c": param(1.0), "s": state("int", 2)}
    f = info_clearer(spec)
    assert info_clearer({"a": info("float", 5), "b": info("int"), "x": param(0, "int")}) is f  # sizes do not matter
    assert info_clearer({"a": info("int", 3), "b": info("int")}) is not f  # dtypes do
    assert info_clearer({"c": param(1.0)}) is W.no_info
    source = f.adj.source
    assert "w.a[e, k0] = type(w.dt)(0.0)" in source and "w.b[e] = 0" in source
    assert "w.c" not in source and "w.s" not in source


@pytest.mark.parametrize("env_id", MPE_IDS)
def test_the_reset_only_step_reports_zero_info(env_id):
    """NEXT_STEP: the step after an episode's end runs no physics and reports every info field
    zero (the generated clear_info), after a step whose info was not all zero (256 worlds: in
    FACMAC's, with few agents, a collision in two random steps is rare)."""
    with war_envs.make(env_id, num_envs=256, seed=3, autoreset_mode="next_step", max_cycles=2) as env:
        names = list(env._info)
        assert names, env_id
        env.reset()
        gen = torch.Generator().manual_seed(0)
        env.step(random_actions(env, gen))
        _, _, _, trunc, last = env.step(random_actions(env, gen))
        assert all(t.all() for t in trunc.values())
        last = {k: last[k].clone() for k in names}
        assert any(last[k].any() for k in names), env_id
        _, rew, _, _, reset_only = env.step(random_actions(env, gen))
        assert all((r == 0).all() for r in rew.values())
        for k in names:
            assert (reset_only[k] == 0).all(), (env_id, k)


@wp.func
def _marked_reward(w: Any, e: int):
    for i in range(w.reward.shape[1]):
        w.reward[e, i] = type(w.dt)(1.0)
    w.marker[e] = 5
    return False


@wp.func
def _marked_clear(w: Any, e: int):
    w.marker[e] = 7


@wp.func
def _marked_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    W.write_self(out, e, i, w)


class Marked(MPEBase):
    """Two agents and an info field that its own clear_info sets to 7 (not 0)."""

    env_id = "Marked-test"
    reset_world = uniform_reset
    reward_world = _marked_reward
    observe_agent = _marked_observe
    clear_info = _marked_clear

    def _layout(self) -> Layout:
        return Layout(groups=[("agent", ["agent_0", "agent_1"])], agent_size=[0.05] * 2, agent_accel=[5.0] * 2,
                      agent_max_speed=[-1.0] * 2, agent_collide=[False] * 2, agent_color=[(0.5, 0.5, 0.5)] * 2,
                      landmark_size=[], landmark_collide=[], landmark_color=[])

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self) -> dict:
        return {"marker": info("int")}


def test_a_scenario_may_set_its_own_clear_info():
    with Marked(num_envs=2, autoreset_mode="next_step", max_cycles=1) as env:
        env.reset()
        acts = {"agent": torch.zeros(2, 2, dtype=torch.int64)}
        assert (env.step(acts)[4]["marker"] == 5).all()
        assert (env.step(acts)[4]["marker"] == 7).all()  # its own, not the generated zeroing


# ----------------------------------------------------------------------------- landmark-index states
@pytest.mark.parametrize("env_id", [i for i in MPE_IDS if registry.scenario_class(i).landmark_index_states])
def test_landmark_index_states_are_range_checked(env_id):
    with war_envs.make(env_id, num_envs=2, seed=0) as env:
        env.reset()
        for key in env.landmark_index_states:
            for bad, expected in ((-1, f"state[{key!r}]: expected values in [0, "),
                                  (env.num_landmarks, f"state[{key!r}]: expected landmark indices "
                                                      f"0..{env.num_landmarks - 1}")):
                st = env.get_state()
                st[key] = torch.full_like(st[key], bad)
                with pytest.raises(ValueError, match=re.escape(expected)):
                    env.set_state(st)
            st = env.get_state()
            st[key] = torch.full_like(st[key], env.num_landmarks - 1)
            env.set_state(st)


def test_a_landmark_index_state_must_be_an_int_state_field():
    bad = type("BadIndex", (Marked,), {"landmark_index_states": ("marker",)})
    with pytest.raises(ValueError, match=r"BadIndex.landmark_index_states: 'marker' is not an int state field"):
        bad(num_envs=1)


# ----------------------------------------------------------------------------- no sibling imports
def test_no_scenario_imports_from_a_sibling_scenario():
    folder = pathlib.Path(war_envs.__file__).parent / "scenarios" / "mpe"
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("war_envs.scenarios.mpe."):
                assert node.module.rsplit(".", 1)[1] in SHARED, f"{path.name} imports from {node.module}"
            if isinstance(node, ast.ImportFrom) and node.module == "war_envs.scenarios.mpe":
                assert {a.name for a in node.names} <= SHARED, f"{path.name} imports {[a.name for a in node.names]}"
