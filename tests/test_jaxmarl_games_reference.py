"""SwitchRiddle-v0 and CoinGame-v0 against JaxMARL 0.2.0's ``switch_riddle`` and ``coin_game``.

JaxMARL runs in its own virtual environment (``$SMAX_REFERENCE_PYTHON``, default
``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``; ``bash scripts/smax_check.sh`` builds it and
runs this file with SMAX's) through ``tests/jaxmarl_games_reference.py``, which records
JaxMARL's episodes step by step with the random draws it made inside each step.  Here:

* **whole episodes**: one world per recorded episode, loaded once at its start (``set_state``)
  and played to its end with the recorded actions and JaxMARL's draws injected
  (``inject_draws``); at every step the state, observations, rewards, terminated / truncated
  (JaxMARL's one ``done``) and info must equal JaxMARL's exactly, in float32 and float64 worlds,
  for several configurations of each game;
* **our own draws** (they come from another generator): the agent put in the room, the start
  cells and the coins' respawn cells, chi-square against uniform;
* **random-policy statistics**: episode length and return of a uniformly random policy, ours
  against JaxMARL's own (jit + vmap, auto-reset ``step``), within 4 standard errors.

Without JaxMARL's venv the module is skipped.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import war_envs
from reference_venvs import reference_python

HERE = Path(__file__).resolve().parent
REFERENCE_PYTHON = reference_python("SMAX_REFERENCE_PYTHON", "jaxmarl", "JaxMARL", "scripts/smax_check.sh")

IDS = {"switch_riddle": "SwitchRiddle-v0", "coin_game": "CoinGame-v0"}
#: (name, JaxMARL env, its config: ours takes the same keyword arguments)
TRACES = [
    ("riddle_default", "switch_riddle", {}),
    ("riddle_5_lit", "switch_riddle", {"num_agents": 5, "initial_bulb_state": True, "reward_all_die": -2.5,
                                       "reward_all_live": 0.75}),
    ("coin_default", "coin_game", {}),
    ("coin_egocentric", "coin_game", {"egocentric": True, "num_inner_steps": 4, "num_outer_steps": 3}),
    ("coin_shared", "coin_game", {"shared_rewards": True, "num_inner_steps": 7, "num_outer_steps": 2,
                                  "payoff_matrix": [[1.5, 0.1, -2.25], [1.0, 2.0, -3.3]]}),
]
STATS = [("riddle_stats", "switch_riddle", {}), ("riddle_stats_4", "switch_riddle", {"num_agents": 4}),
         ("coin_stats", "coin_game", {})]
EPISODES = {"switch_riddle": 60, "coin_game": 12}
STAT_WORLDS = 4000


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    jobs = [{"kind": "trace", "env": env, "config": cfg, "episodes": EPISODES[env], "seed": i}
            for i, (_, env, cfg) in enumerate(TRACES)]
    jobs += [{"kind": "random_stats", "env": env, "config": cfg, "worlds": STAT_WORLDS, "seed": 100 + i,
              "steps": 120 if env == "coin_game" else 40} for i, (_, env, cfg) in enumerate(STATS)]
    folder = tmp_path_factory.mktemp("jaxmarl_games")
    (folder / "jobs.json").write_text(json.dumps(jobs))
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([str(REFERENCE_PYTHON), str(HERE / "jaxmarl_games_reference.py"), str(folder / "jobs.json"),
                           str(folder / "out.json")], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads((folder / "out.json").read_text())
    names = [name for name, _, _ in TRACES] + [name for name, _, _ in STATS]
    return dict(zip(names, results))


def our_state(env_name: str, s: dict, config: dict) -> dict:
    """JaxMARL's state as our ``set_state`` entries."""
    if env_name == "switch_riddle":
        return {"bulb": torch.tensor([int(s["bulb_state"])], dtype=torch.int32),
                "in_room": torch.tensor([s["agent_in_room"]], dtype=torch.int32),
                "has_been": torch.tensor([s["has_been"]], dtype=torch.int32),
                "t": torch.tensor([s["step"]], dtype=torch.int32)}
    inner = config.get("num_inner_steps", 10)
    return {"agent_pos": torch.tensor([[s["red_pos"], s["blue_pos"]]], dtype=torch.int32),
            "coin_pos": torch.tensor([[s["red_coin_pos"], s["blue_coin_pos"]]], dtype=torch.int32),
            "t": torch.tensor([s["outer_t"] * inner + s["step"]], dtype=torch.int32)}


def coin_counts(before: dict, after: dict) -> tuple[list[int], list[int]]:
    """Per agent, own and other coins picked up in the step, from JaxMARL's statistics arrays."""
    def total(s, key):
        return sum(s[key])
    own = [total(after, "red_coop") - total(before, "red_coop"), total(after, "blue_coop") - total(before, "blue_coop")]
    other = [total(after, "red_defect") - total(before, "red_defect"),
             total(after, "blue_defect") - total(before, "blue_defect")]
    return own, other


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("name,env_name,config", TRACES, ids=[t[0] for t in TRACES])
def test_episodes_replayed_step_by_step(reference, name, env_name, config, precision):
    episodes = reference[name]["episodes"]
    assert len(episodes) == EPISODES[env_name]
    dtype = torch.float32 if precision == "float32" else torch.float64
    steps_checked = 0
    with war_envs.make(IDS[env_name], num_envs=1, seed=0, precision=precision, autoreset_mode="disabled",
                       **config) as env:
        for k, episode in enumerate(episodes):
            env.reset()
            obs = env.set_state(our_state(env_name, episode["start"], config))
            np.testing.assert_array_equal(obs["agent"][0].numpy(), np.asarray(episode["obs"], dtype=np.float32))
            before = episode["start"]
            for j, step in enumerate(episode["steps"]):
                where = f"{name} episode {k} step {j}"
                if env_name == "switch_riddle":
                    env.inject_draws(in_room=[step["draws"]["in_room"]])
                else:
                    env.inject_draws(coins=[step["draws"]["coins"]], start=[step["draws"]["start"]])
                obs, rew, term, trunc, info = env.step({"agent": torch.tensor([step["actions"]])})
                expected = our_state(env_name, step["state"], config)
                state = env.get_state()
                for key, value in expected.items():
                    assert torch.equal(state[key], value), (where, key, state[key], value)
                np.testing.assert_array_equal(obs["agent"][0].numpy(), np.asarray(step["obs"], dtype=np.float32),
                                              err_msg=where)
                # JaxMARL adds in float32; float64 worlds add the same payoffs in float64
                torch.testing.assert_close(rew["agent"][0], torch.tensor(step["rewards"], dtype=torch.float32).to(dtype),
                                           rtol=0, atol=0 if precision == "float32" else 1e-6, msg=where)
                done = bool(term["agent"][0, 0] | trunc["agent"][0, 0])
                assert done == step["done"], where
                if env_name == "switch_riddle":
                    told = step["actions"][before["agent_in_room"]] == 2
                    assert bool(term["agent"][0, 0]) == told and int(info["told"][0]) == int(told), where
                    assert int(info["visited"][0]) == sum(step["state"]["has_been"]), where
                    assert int(info["success"][0]) == int(told and all(step["state"]["has_been"])), where
                else:
                    assert not bool(term["agent"][0, 0]), where
                    assert int(info["inner_episode_done"][0]) == int(step["info"]["inner_episode_done"]), where
                    own, other = coin_counts(before, step["state"])
                    assert info["own_coins"][0].tolist() == own and info["other_coins"][0].tolist() == other, where
                before = step["state"]
                steps_checked += 1
            assert step["done"]
    assert steps_checked >= 100


def chi_square_uniform(counts: np.ndarray) -> float:
    """The chi-square statistic's p-value (Wilson-Hilferty) of ``counts`` against uniform."""
    n, k = counts.sum(), counts.size
    expected = n / k
    stat = float(((counts - expected) ** 2 / expected).sum())
    df = k - 1
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


def test_switch_riddle_draws_the_agent_in_the_room_uniformly():
    n = 5
    with war_envs.make("SwitchRiddle-v0", num_envs=2000, seed=3, num_agents=n) as env:
        env.reset()
        counts = np.zeros(n, dtype=np.int64)
        counts += np.bincount(env.get_state()["in_room"].numpy(), minlength=n)
        nothing = {"agent": torch.zeros(2000, n, dtype=torch.int64)}
        pairs = np.zeros((n, n), dtype=np.int64)  # successive draws independent
        for _ in range(10):
            before = env.get_state()["in_room"].numpy()
            env.step(nothing)
            after = env.get_state()["in_room"].numpy()
            counts += np.bincount(after, minlength=n)
            np.add.at(pairs, (before, after), 1)
    assert chi_square_uniform(counts) > 1e-4, counts
    assert chi_square_uniform(pairs.ravel()) > 1e-4, pairs


def test_coin_game_draws_cells_uniformly():
    E = 3000
    with war_envs.make("CoinGame-v0", num_envs=E, seed=5) as env:
        env.reset()
        s = env.get_state()
        starts = torch.cat([s["agent_pos"], s["coin_pos"]], dim=1).reshape(E, 4, 2)
        cells = (starts[..., 0] * 3 + starts[..., 1]).numpy()
        for k in range(4):  # each of the four uniform, the four independent (pairs)
            assert chi_square_uniform(np.bincount(cells[:, k], minlength=9)) > 1e-4, k
        assert chi_square_uniform(np.bincount(cells[:, 0] * 9 + cells[:, 2], minlength=81)) > 1e-4
        respawned = []
        gen = torch.Generator().manual_seed(0)
        for _ in range(8):
            before = env.get_state()["coin_pos"]
            _, _, _, _, info = env.step({"agent": torch.randint(0, 5, (E, 2), generator=gen)})
            after = env.get_state()["coin_pos"]
            picked = (info["own_coins"] + info["other_coins"]).sum(-1) > 0
            inner = info["inner_episode_done"].bool()
            moved = picked & ~inner
            respawned.append((after[moved] * torch.tensor([3, 1])).sum(-1).reshape(-1))
            assert torch.equal(after[~picked & ~inner], before[~picked & ~inner])
        cells = torch.cat(respawned).numpy()
        assert cells.size > 2000
        assert chi_square_uniform(np.bincount(cells, minlength=9)) > 1e-4


@pytest.mark.parametrize("name,env_name,config", STATS, ids=[s[0] for s in STATS])
def test_random_policy_statistics_match_jaxmarls(reference, name, env_name, config):
    theirs = reference[name]
    E = STAT_WORLDS
    with war_envs.make(IDS[env_name], num_envs=E, seed=11, autoreset_mode="disabled", **config) as env:
        n_actions = int(env.groups["agent"].action_space.n)
        env.reset()
        gen = torch.Generator().manual_seed(1)
        ret = torch.zeros(E, dtype=torch.float64)
        length = torch.zeros(E, dtype=torch.int64)
        running = torch.ones(E, dtype=torch.bool)
        while running.any():
            _, rew, term, trunc, _ = env.step({"agent": torch.randint(0, n_actions, (E, env.num_agents), generator=gen)})
            ret += torch.where(running, rew["agent"][:, 0].double(), 0.0)
            length += running.long()
            running &= ~(term["agent"][:, 0] | trunc["agent"][:, 0])
    for ours, key in ((ret.numpy(), "returns"), (length.numpy().astype(float), "lengths")):
        other = np.asarray(theirs[key], dtype=float)
        assert other.size > 0.9 * E, (key, other.size)
        se = math.sqrt(ours.var() / ours.size + other.var() / other.size)
        assert abs(ours.mean() - other.mean()) <= 4 * se + 1e-12, (name, key, ours.mean(), other.mean(), se)
