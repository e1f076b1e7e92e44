"""RLlib: the env creator (PettingZoo's ParallelPettingZooEnv over war_envs.parallel_env) and
two PPO iterations per scenario.  RLlib pins gymnasium==1.2.2, so this runs only in the
environment ``bash scripts/rllib_check.sh`` builds (``-m rllib``); elsewhere it is skipped."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from ray.rllib.env.env_context import EnvContext  # noqa: E402
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv  # noqa: E402
from ray.tune.registry import ENV_CREATOR, _global_registry  # noqa: E402

from war_train.adapters.rllib import (  # noqa: E402
    WORKER_SEED_STRIDE,
    group_policy_mapping,
    make_rllib_env,
    rllib_env_creator,
)

pytestmark = [pytest.mark.rllib, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))


def test_creator_registers_and_builds():
    creator = rllib_env_creator("Spread-v0", max_cycles=5, seed=3)
    assert creator.name == "war_envs/Spread-v0"
    assert _global_registry.contains(ENV_CREATOR, creator.name)
    env = creator(EnvContext({}, worker_index=0))
    assert isinstance(env, ParallelPettingZooEnv)
    assert set(env.observation_space.keys()) == {"agent_0", "agent_1", "agent_2"}
    obs, infos = env.reset(seed=0)
    assert set(obs) == {"agent_0", "agent_1", "agent_2"} and obs["agent_0"].shape == (18,)
    for t in range(5):
        obs, rew, term, trunc, infos = env.step({a: 0 for a in env.par_env.agents})
        assert trunc["__all__"] == (t == 4) and not term["__all__"]
    env.close()


def test_env_config_overrides_and_worker_seeds():
    # env_config keys override the creator's arguments; worker/vector indices offset the seed
    base = make_rllib_env("Spread-v0", {"max_cycles": 7}, max_cycles=5, seed=10)
    assert base.par_env.max_cycles == 7
    other = make_rllib_env("Spread-v0", EnvContext({"max_cycles": 7}, worker_index=2, vector_index=1),
                           max_cycles=5, seed=10 - WORKER_SEED_STRIDE * 2 - 1)
    a, _ = base.reset()
    b, _ = other.reset()
    np.testing.assert_array_equal(a["agent_0"], b["agent_0"])   # same seed after the offset
    base.close()
    other.close()


def test_action_masks_come_through_the_infos():
    """SMAX-v0's masks reach RLlib in the PettingZoo infos (int8 ``[n]`` per agent, the batched
    env's); unmasked actions are played (JaxMARL's semantics), strict_action_mask refuses them."""
    env = make_rllib_env("SMAX-v0", seed=0, max_steps=10)
    obs, infos = env.reset(seed=0)
    batched = env.par_env.batched
    for t in range(12):
        mask = batched.action_mask()["ally"][0].numpy()
        assert set(infos) == set(env.par_env.agents)
        for agent in infos:
            k = int(agent.split("_")[1])
            assert infos[agent]["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(infos[agent]["action_mask"], mask[k].astype(np.int8))
        if not env.par_env.agents:
            break
        obs, rew, term, trunc, infos = env.step({a: 7 for a in env.par_env.agents})  # attacks out of range
        infos = {a: i for a, i in infos.items() if a in env.par_env.agents}
    env.close()
    strict = make_rllib_env("SMAX-v0", seed=0, strict_action_mask=True)
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="unavailable now"):
        strict.step({a: 7 for a in strict.par_env.agents})
    strict.close()


def test_bad_arguments_fail_early():
    with pytest.raises(ValueError, match="unknown scenario"):
        rllib_env_creator("Sprad-v0")
    with pytest.raises(TypeError, match="unknown keyword"):
        rllib_env_creator("Spread-v0", max_cyclez=5)
    with pytest.raises(TypeError, match="env_config"):
        make_rllib_env("Spread-v0", [1, 2])


def test_group_policy_mapping():
    policies, fn = group_policy_mapping("PredatorPrey-v0")
    assert policies == {"adversary", "agent"}
    assert fn("adversary_2", None) == "adversary" and fn("agent_0") == "agent"
    with pytest.raises(KeyError, match="unknown agent"):
        fn("nobody_0")


@pytest.fixture(scope="module")
def ray_session():
    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.mark.parametrize("scenario,env_kwargs,groups", [
    ("Spread-v0", {"max_cycles": 25}, {"agent"}),
    ("PredatorPrey-v0", {"max_cycles": 25}, {"adversary", "agent"}),
    ("Command-v0", {"max_cycles": 25, "num_sentries": 3}, {"commander", "sentry"}),
    ("Tag-v0", {"episode_length": 20, "num_runners": 3}, {"tagger", "runner"}),
])
def test_ppo_two_iterations(ray_session, scenario, env_kwargs, groups):
    from rllib_ppo import run_ppo

    results = run_ppo(scenario, iterations=2, batch=200, seed=0, env_kwargs=env_kwargs)
    assert [r["iteration"] for r in results] == [1, 2]
    assert results[0]["env_steps"] > 0 and results[1]["env_steps"] > results[0]["env_steps"]
    assert set(results[-1]["policy_loss"]) == groups
    assert all(np.isfinite(v) for v in results[-1]["policy_loss"].values())


def test_an_episode_whose_agents_end_differently_ends_for_rllib():
    """Tag-v0: a runner tagged at the time limit terminates while the others are truncated. RLlib's
    own ``ParallelPettingZooEnv`` then sets neither ``__all__`` flag (it needs every agent to end
    the same way) and steps the finished episode again; ``WarPettingZooEnv`` truncates it."""
    mixed = None
    for seed in range(400):   # (deterministic: the first seed whose episode ends mixed)
        env = make_rllib_env("Tag-v0", episode_length=20, num_runners=3, seed=seed)
        env.reset(seed=seed)
        spaces = {a: env.par_env.action_space(a) for a in env.par_env.possible_agents}
        for space in spaces.values():
            space.seed(seed)
        while True:
            _, _, term, trunc, _ = env.step({a: spaces[a].sample() for a in env.par_env.agents})
            if term["__all__"] or trunc["__all__"]:
                break
        assert not env.par_env.agents   # the episode ends exactly when ours does
        agents = [a for a in term if a != "__all__"]
        env.close()
        if any(term[a] for a in agents) and not all(term[a] for a in agents):
            mixed = (term, trunc, agents)
            break
    assert mixed is not None, "no Tag-v0 episode of 400 ended with a runner tagged at the limit"
    term, trunc, agents = mixed
    assert not all(term[a] for a in agents) and not all(trunc[a] for a in agents)   # RLlib's rule: never ends
    assert all(term[a] or trunc[a] for a in agents)
    assert trunc["__all__"] and not term["__all__"]
