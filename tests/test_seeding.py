"""Training runs of different seeds share no world, and evaluation worlds are never training
worlds (war_train.seeding); the env keeps Gymnasium's seed + i convention for an int seed."""

import numpy as np
import pytest
import torch

import war_envs
import war_train
from war_envs.core.batched_env import world_seeds
from war_train.seeding import run_world_seeds


def _keys(seed, n, stream):
    """The stream keys (what the kernels' rand_init sees) of the run's first n worlds."""
    return set(world_seeds(run_world_seeds(seed, n, stream), n).tolist())


def test_seeds_share_no_stream_in_training_or_evaluation():
    # the largest preset trains 1024 worlds; evaluations play 1000 episodes (4096 here for margin)
    sets = {(s, stream): _keys(s, 4096, stream) for s in range(1, 6) for stream in ("train", "eval", "select")}
    for key, keys in sets.items():
        assert len(keys) == 4096, key
    names = list(sets)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not sets[a] & sets[b], (a, b, len(sets[a] & sets[b]))
    # the old convention (env seeded s: world w replays seed s + w) shared all but one world
    assert len(set(world_seeds(1, 64).tolist()) & set(world_seeds(2, 64).tolist())) == 63


def test_ranks_partition_the_run_worlds():
    whole = run_world_seeds(3, 64)
    parts = np.concatenate([run_world_seeds(3, range(r * 16, (r + 1) * 16)) for r in range(4)])
    assert np.array_equal(whole, parts)
    assert whole.dtype == np.int64 and (whole >= 0).all()


def test_bad_arguments():
    with pytest.raises(ValueError, match="stream"):
        run_world_seeds(1, 4, "test")
    with pytest.raises(ValueError, match="seed"):
        run_world_seeds(-1, 4)


def test_per_world_seed_list_replays_one_world_envs():
    seeds = run_world_seeds(7, 3)
    env = war_envs.make("Spread-v0", num_envs=3, seed=0)
    obs = env.reset(seed=seeds)["agent"].clone()
    assert env.seed is None
    for w, s in enumerate(seeds.tolist()):
        one = war_envs.make("Spread-v0", num_envs=1, seed=s)
        assert torch.equal(one.reset()["agent"][0], obs[w])
    # an int keeps Gymnasium's convention: world w is seed + w
    env.reset(seed=5)
    assert env.seed == 5
    with pytest.raises(ValueError, match=r"seed: expected 3 per-world seeds"):
        env.reset(seed=[1, 2])
    with pytest.raises(ValueError, match=r"seed\[1\]"):
        env.reset(seed=[1, -2, 3])
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed="1")


def test_training_and_evaluation_worlds_of_two_seeds_differ():
    """The start states a run trains on: seeds 1 and 2 share none, and its evaluation's are
    none of them."""
    starts = {}
    for seed in (1, 2):
        cfg = war_train.preset_config("smoke", seed=seed)
        env = war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=0, **cfg.env_kwargs)
        env.reset(seed=run_world_seeds(seed, cfg.num_envs, "train"))
        starts[seed, "train"] = env.get_state()["agent_pos"].clone()
        env.reset(seed=run_world_seeds(seed, cfg.num_envs, "eval"))
        starts[seed, "eval"] = env.get_state()["agent_pos"].clone()
    flat = {k: {tuple(x.flatten().tolist()) for x in v} for k, v in starts.items()}
    names = list(flat)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not flat[a] & flat[b], (a, b)


def test_the_trainer_resets_its_worlds_with_the_run_streams():
    cfg = war_train.preset_config("smoke", seed=2)
    cfg = war_train.TrainConfig(**{**war_train.config_to_dict(cfg), "total_env_steps": cfg.num_envs * cfg.rollout_length,
                                   "eval_episodes": 0, "gif": False})
    env = war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=2, **cfg.env_kwargs)
    war_train.train(env, cfg)
    expected = world_seeds(run_world_seeds(2, cfg.num_envs, "train"), cfg.num_envs)
    assert np.array_equal(env.get_state()["rng_key"].numpy(), expected)
