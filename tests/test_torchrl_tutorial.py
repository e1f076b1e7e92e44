"""TorchRL's multi-agent PPO tutorial flow (``examples/torchrl_mappo_tutorial.py``) trains on
continuous Spread-v0 through ``TorchRLEnv``, and the adapter offers what that flow takes from
VMAS's ``VmasEnv`` (an ``"agents"`` group via ``group_map``, ``n_agents``, unbatched specs)."""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys

import pytest
import torch

pytest.importorskip("torchrl")

from torchrl.envs.utils import MarlGroupMapType, check_env_specs  # noqa: E402

import war_envs  # noqa: E402
from war_train.adapters.torchrl import TorchRLEnv  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tutorial():
    path = ROOT / "examples" / "torchrl_mappo_tutorial.py"
    spec = importlib.util.spec_from_file_location("torchrl_mappo_tutorial", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


tutorial = _tutorial()


def _tiny(**kw):
    """4 worlds x 5-step episodes = 20 frames per batch (one whole episode per world)."""
    return tutorial.TutorialConfig(**({"num_envs": 4, "max_steps": 5, "n_iters": 2, "num_epochs": 2,
                                       "minibatch_size": 10} | kw))


@pytest.fixture(scope="module")
def run():
    return tutorial.train(_tiny(), log=lambda line: None)


def test_the_flow_trains_with_finite_losses_and_rewards(run):
    assert len(run["episode_reward_mean"]) == 2 and run["frames"] == 40
    assert all(math.isfinite(r) for r in run["episode_reward_mean"])
    for losses in run["losses"]:
        assert set(losses) == {"loss_objective", "loss_critic", "loss_entropy"}
        assert all(math.isfinite(v) for v in losses.values())
        assert losses["loss_critic"] > 0


def test_collected_batch_has_the_tutorials_keys_and_shapes(run):
    data = run["last_batch"]
    assert data.batch_size == (4, 5)
    assert data["agents", "observation"].shape == (4, 5, 3, 18)
    action = data["agents", "action"]
    assert action.shape == (4, 5, 3, 5) and action.dtype == torch.float32
    assert bool(((action >= 0) & (action <= 1)).all())  # TanhNormal within Spread's Box(0, 1)
    assert data["agents", "action_log_prob"].shape == (4, 5, 3)
    for key in (("next", "agents", "reward"), ("agents", "state_value"), "advantage", "value_target",
                ("next", "agents", "done"), ("next", "agents", "terminated")):
        assert data[key].shape == (4, 5, 3, 1), key
    # the 5-step episodes end at the batch's last step by truncation (Spread-v0's max_cycles)
    done = data["next", "agents", "done"]
    assert bool(done[:, -1].all()) and not bool(done[:, :-1].any())
    assert not bool(data["next", "agents", "terminated"].any()) and bool(data["next", "truncated"][:, -1].all())
    # RewardSum: the episode reward at the last step is the sum of the episode's rewards
    torch.testing.assert_close(data["next", "agents", "episode_reward"][:, -1],
                               data["next", "agents", "reward"].sum(1), rtol=1e-5, atol=1e-5)
    assert run["episode_reward_mean"][-1] == pytest.approx(
        data["next", "agents", "episode_reward"][:, -1].mean().item(), rel=1e-6)


def test_training_changes_the_parameters(run):
    from tensordict.nn import set_composite_lp_aggregate

    with set_composite_lp_aggregate(False):
        fresh = tutorial.build(_tiny())  # same seed: the parameters training started from
        fresh.collector.shutdown()
    for name, module in (("policy", fresh.policy), ("critic", fresh.critic)):
        before = dict(module.named_parameters())
        after = dict(run[name].named_parameters())
        assert before.keys() == after.keys()
        assert any(not torch.equal(before[k], after[k]) for k in before), name


def test_same_seed_same_run_other_seed_other_run(run):
    again = tutorial.train(_tiny(), log=lambda line: None)
    assert again["episode_reward_mean"] == run["episode_reward_mean"]
    assert again["losses"] == run["losses"]
    for k, p in run["policy"].named_parameters():
        assert torch.equal(p, dict(again["policy"].named_parameters())[k]), k
    other = tutorial.train(_tiny(seed=1), log=lambda line: None)
    assert other["episode_reward_mean"] != run["episode_reward_mean"]


@pytest.mark.parametrize("kw,match", [({"minibatch_size": 21}, "minibatch_size"), ({"n_iters": 0}, "n_iters"),
                                      ({"num_envs": 2.5}, "num_envs")])
def test_bad_config_is_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        tutorial.build(_tiny(**kw))


# ---------------------------------------------------------------- what the flow takes from VmasEnv
def test_all_in_one_group_gives_vmas_keys():
    env = TorchRLEnv("Spread-v0", num_envs=3, seed=0, continuous_actions=True,
                     group_map=MarlGroupMapType.ALL_IN_ONE_GROUP)
    check_env_specs(env, seed=0)
    # VmasEnv("navigation"/"simple_spread", n_agents=3): group "agents", n_agents 3
    assert env.group_map == {"agents": ["agent_0", "agent_1", "agent_2"]} and env.n_agents == 3
    assert env.action_key == ("agents", "action") and env.reward_key == ("agents", "reward")
    assert env.full_action_spec_unbatched[env.action_key].shape == (3, 5)
    assert torch.equal(env.full_action_spec_unbatched[env.action_key].space.low, torch.zeros(3, 5))
    assert {"done", "terminated", ("agents", "done"), ("agents", "terminated")} <= set(env.done_keys)
    # same worlds, same numbers as the scenario-named adapter
    plain = TorchRLEnv("Spread-v0", num_envs=3, seed=0, continuous_actions=True)
    env.set_seed(5), plain.set_seed(5)  # check_env_specs has used env's first episodes
    a, b = env.reset(), plain.reset()
    torch.testing.assert_close(a["agents", "observation"], b["agent", "observation"], rtol=0, atol=0)
    for _ in range(3):
        act = torch.rand(3, 3, 5)
        a["agents", "action"], b["agent", "action"] = act, act
        a, b = env.step(a)["next"], plain.step(b)["next"]
        torch.testing.assert_close(a["agents", "reward"], b["agent", "reward"], rtol=0, atol=0)
        torch.testing.assert_close(a["state"], b["state"], rtol=0, atol=0)
    env.close()
    plain.close()


def test_a_dict_group_map_renames_each_group():
    names = {"predators": ["adversary_0", "adversary_1", "adversary_2"], "prey": ["agent_0"]}
    env = TorchRLEnv("PredatorPrey-v0", num_envs=2, seed=0, group_map=names)
    check_env_specs(env, seed=0)
    assert env.group_map == names and env.n_agents == 4
    assert set(env.action_keys) == {("predators", "action"), ("prey", "action")}
    ref = war_envs.make("PredatorPrey-v0", num_envs=2, seed=0, autoreset_mode="disabled")
    obs = ref.reset(seed=5)
    env.set_seed(5)  # check_env_specs has used env's first episodes
    td = env.reset()
    torch.testing.assert_close(td["predators", "observation"], obs["adversary"], rtol=0, atol=0)
    torch.testing.assert_close(td["prey", "observation"], obs["agent"], rtol=0, atol=0)
    td["predators", "action"] = torch.tensor([[1, 2, 3], [4, 0, 1]])
    td["prey", "action"] = torch.tensor([[2], [3]])
    out = env.step(td)["next"]
    r_obs, r_rew, *_ = ref.step({"adversary": td["predators", "action"], "agent": td["prey", "action"]})
    torch.testing.assert_close(out["prey", "reward"], r_rew["agent"].unsqueeze(-1), rtol=0, atol=0)
    torch.testing.assert_close(out["predators", "observation"], r_obs["adversary"], rtol=0, atol=0)


def test_group_map_over_a_same_step_env_object_matches_the_plain_adapter():
    """Renamed groups through the SAME_STEP path (final observations, resets not repeated)."""
    renamed = TorchRLEnv(war_envs.make("Spread-v0", num_envs=3, seed=4, max_cycles=3),
                         group_map=MarlGroupMapType.ALL_IN_ONE_GROUP)
    plain = TorchRLEnv("Spread-v0", num_envs=3, seed=4, max_cycles=3)
    torch.manual_seed(0)
    a = renamed.rollout(8, break_when_any_done=False)
    torch.manual_seed(0)
    b = plain.rollout(8, break_when_any_done=False)
    assert torch.equal(a["agents", "action"], b["agent", "action"])
    for key in ("observation", "reward", "done"):
        torch.testing.assert_close(a["next", "agents", key], b["next", "agent", key], rtol=0, atol=0)
    torch.testing.assert_close(a["next", "state"], b["next", "state"], rtol=0, atol=0)


@pytest.mark.parametrize("group_map,error", [
    (MarlGroupMapType.ONE_GROUP_PER_AGENT, ValueError),           # splits the scenario's group
    ({"a": ["agent_0", "agent_1"]}, ValueError),                 # part of a group
    ({"a": ["agent_1", "agent_0", "agent_2"]}, ValueError),      # agents out of order
    ({"a": ["agent_0", "agent_1", "agent_2"], "b": ["agent_0", "agent_1", "agent_2"]}, ValueError),
    (["agents"], TypeError),
])
def test_bad_group_map_is_refused(group_map, error):
    with pytest.raises(error, match="group_map: expected"):
        TorchRLEnv("Spread-v0", num_envs=2, group_map=group_map)
