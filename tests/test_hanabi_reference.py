"""Hanabi-v0 against JaxMARL 0.2.0's ``hanabi``.

JaxMARL runs in its own virtual environment (``$SMAX_REFERENCE_PYTHON``, default
``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``; ``bash scripts/smax_check.sh`` builds it)
through ``tests/hanabi_reference.py``, which records JaxMARL's games step by step with the deck
its reset drew.  Here:

* **whole episodes**: one world per recorded game, dealt from JaxMARL's deck (``inject_draws``)
  and played to its end with the recorded actions; at the start and after every step the
  observations, legal-move masks, rewards, done and state must equal JaxMARL's exactly, for
  2, 3, 4 and 5 players, a small non-default game (fewer colours and ranks, other hand size,
  copies and tokens), a tiny one, and shuffled seats, in float32 and float64 worlds; games
  played by a uniformly random legal policy (they end by losing the lives) and by a "careful"
  one that never misplays (they end by the last round, or with every firework complete);
* **our own deal** (another generator): every card position and every seat uniform
  (chi-square), each deck a permutation of the configured cards;
* **random-policy statistics**: episode length and final score of the uniform legal policy,
  ours against JaxMARL's own (jit + vmap, auto-reset ``step``), within 4 standard errors.

Without JaxMARL's venv the module is skipped.
"""

from __future__ import annotations

import base64
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

SMALL = {"num_agents": 3, "num_colors": 3, "num_ranks": 4, "hand_size": 3, "num_cards_of_rank": [2, 2, 1, 1],
         "max_info_tokens": 4, "max_life_tokens": 2}
TINY = {"num_agents": 2, "num_colors": 2, "num_ranks": 2, "hand_size": 2, "num_cards_of_rank": [2, 1],
        "max_info_tokens": 3, "max_life_tokens": 3}
#: (name, config (ours takes the same keyword arguments), episodes, policy)
TRACES = [
    ("two", {}, 4, "mixed"),
    ("three", {"num_agents": 3}, 4, "mixed"),
    ("four_shuffled_seats", {"num_agents": 4, "shuffle_player_order": True}, 4, "mixed"),
    ("five", {"num_agents": 5}, 3, "uniform"),
    ("small_careful", SMALL, 4, "careful"),
    ("tiny_careful", TINY, 6, "careful"),
]
STATS = [("stats_two", {})]
STAT_WORLDS = 3000


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    jobs = [{"kind": "trace", "config": cfg, "episodes": n, "seed": i, "policy": policy}
            for i, (_, cfg, n, policy) in enumerate(TRACES)]
    jobs += [{"kind": "random_stats", "config": cfg, "worlds": STAT_WORLDS, "seed": 100 + i, "steps": 120}
             for i, (_, cfg) in enumerate(STATS)]
    folder = tmp_path_factory.mktemp("hanabi")
    (folder / "jobs.json").write_text(json.dumps(jobs))
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([str(REFERENCE_PYTHON), str(HERE / "hanabi_reference.py"), str(folder / "jobs.json"),
                           str(folder / "out.json")], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads((folder / "out.json").read_text())
    names = [t[0] for t in TRACES] + [s[0] for s in STATS]
    return dict(zip(names, results))


def decode(text: str, dtype, shape) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype).reshape(shape)


def check_state(env, theirs: dict, where: str) -> None:
    """Every state entry JaxMARL has, in our layout."""
    ours = {k: t[0] for k, t in env.get_state().items()}
    for key, value in theirs.items():
        if key in ("deck", "remaining_deck_size", "done"):
            continue
        assert ours[key].tolist() == value, (where, key, ours[key].tolist(), value)
    dealt = theirs["num_cards_dealt"]
    D = len(theirs["deck"])
    # JaxMARL zeroes the dealt cards; the rest of its deck is ours
    assert ours["deck"].tolist()[dealt:] == theirs["deck"][dealt:], where
    assert all(c == -1 for c in theirs["deck"][:min(dealt, D)]), where
    assert theirs["remaining_deck_size"] == [int(j < D - dealt) for j in range(D)], where
    assert theirs["done"] == bool(theirs["terminal"]), where


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("name,config,episodes,policy", TRACES, ids=[t[0] for t in TRACES])
def test_episodes_replayed_step_by_step(reference, name, config, episodes, policy, precision):
    rec = reference[name]
    assert len(rec["episodes"]) == episodes
    dtype = torch.float32 if precision == "float32" else torch.float64
    steps = 0
    endings = set()
    with war_envs.make("Hanabi-v0", num_envs=1, seed=0, precision=precision, autoreset_mode="disabled",
                       **config) as env:
        N, dim, M = env.num_agents, env.obs_size, env.num_moves
        assert (dim, M) == (rec["obs_size"], rec["num_moves"])
        for k, episode in enumerate(rec["episodes"]):
            seats = [episode["seat_order"]] if config.get("shuffle_player_order") else None
            env.inject_draws(deck=[episode["pairs"]], seat_order=seats)
            obs = env.reset()
            where = f"{name} episode {k} start"
            np.testing.assert_array_equal(obs["agent"][0].numpy(), decode(episode["obs"], np.float32, (N, dim)),
                                          err_msg=where)
            np.testing.assert_array_equal(env.action_mask()["agent"][0].numpy(),
                                          decode(episode["legal"], np.uint8, (N, M)).astype(bool), err_msg=where)
            check_state(env, episode["start"], where)
            for j, step in enumerate(episode["steps"]):
                where = f"{name} episode {k} step {j}"
                obs, rew, term, trunc, info = env.step({"agent": torch.tensor([step["actions"]])})
                np.testing.assert_array_equal(obs["agent"][0].numpy(), decode(step["obs"], np.float32, (N, dim)),
                                              err_msg=where)
                np.testing.assert_array_equal(info["action_mask"]["agent"][0].numpy(),
                                              decode(step["legal"], np.uint8, (N, M)).astype(bool), err_msg=where)
                assert rew["agent"].dtype == dtype
                assert rew["agent"][0].tolist() == step["rewards"], where
                assert bool(term["agent"][0, 0]) == step["done"] and not trunc["agent"].any(), where
                assert int(info["score"][0]) == step["state"]["score"], where
                check_state(env, step["state"], where)
                steps += 1
            assert step["done"]
            s = step["state"]
            endings.add("lives" if s["out_of_lives"] else
                        "perfect" if sum(s["fireworks"]) == env.num_colors * env.num_ranks else "last round")
    assert steps >= 20
    if policy != "careful":
        assert "lives" in endings, endings
    if policy != "uniform":
        assert "last round" in endings or "perfect" in endings, endings
    if name == "tiny_careful":   # the whole rule set: games end by the last round and with a perfect score
        assert {"last round", "perfect"} <= endings, endings


def chi_square_uniform(counts: np.ndarray) -> float:
    """The chi-square statistic's p-value (Wilson-Hilferty) of ``counts`` against uniform."""
    n, k = counts.sum(), counts.size
    expected = n / k
    stat = float(((counts - expected) ** 2 / expected).sum())
    df = k - 1
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


def test_our_deal_is_a_uniform_permutation():
    E = 4000
    config = {"num_agents": 4, "num_colors": 3, "num_ranks": 3, "num_cards_of_rank": [3, 2, 1],
              "hand_size": 3, "shuffle_player_order": True}
    with war_envs.make("Hanabi-v0", num_envs=E, seed=9, **config) as env:
        decks, seats = [], []
        for _ in range(3):
            env.reset()
            s = env.get_state()
            decks.append(s["deck"].numpy())
            seats.append(s["seat_order"].numpy())
            assert torch.equal(s["player_hands"].reshape(E, -1), s["deck"][:, :12])
    decks, seats = np.concatenate(decks), np.concatenate(seats)
    D, kinds = 18, 9
    want = np.tile([3, 2, 1], 3)
    assert all((np.bincount(row, minlength=kinds) == want).all() for row in decks[:200])
    # a uniform permutation of the multiset: card kind k at any position with probability want[k] / D
    for pos in range(D):
        counts = np.bincount(decks[:, pos], minlength=kinds).astype(float)
        expected = want / D * decks.shape[0]
        stat = float(((counts - expected) ** 2 / expected).sum())
        df = kinds - 1
        z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
        assert 0.5 * math.erfc(z / math.sqrt(2)) > 1e-4, (pos, counts)
    # pairs of positions independent: the kinds at positions 0 and D-1
    joint = np.bincount(decks[:, 0] * kinds + decks[:, -1], minlength=kinds * kinds).astype(float)
    pair_want = np.outer(want, want) - np.diag(want)
    expected = pair_want.ravel() / (D * (D - 1)) * decks.shape[0]
    possible = expected > 0
    assert (joint[~possible] == 0).all()       # a single-copy card cannot be at both positions
    joint, expected = joint[possible], expected[possible]
    stat = float(((joint - expected) ** 2 / expected).sum())
    df = joint.size - 1
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    assert 0.5 * math.erfc(z / math.sqrt(2)) > 1e-4
    # seat orders: the 24 permutations of 4 agents uniform
    perm_ids = (seats * np.array([64, 16, 4, 1])).sum(1)
    assert chi_square_uniform(np.unique(perm_ids, return_counts=True)[1]) > 1e-4
    assert len(np.unique(perm_ids)) == 24


@pytest.mark.parametrize("name,config", STATS, ids=[s[0] for s in STATS])
def test_random_policy_statistics_match_jaxmarls(reference, name, config):
    theirs = reference[name]
    E = STAT_WORLDS
    with war_envs.make("Hanabi-v0", num_envs=E, seed=11, autoreset_mode="disabled", **config) as env:
        env.reset()
        gen = torch.Generator().manual_seed(1)
        ret = torch.zeros(E, dtype=torch.float64)
        length = torch.zeros(E, dtype=torch.int64)
        running = torch.ones(E, dtype=torch.bool)
        while running.any():
            mask = env.action_mask()["agent"]
            u = torch.rand(mask.shape, generator=gen)
            act = torch.where(mask, u, -1.0).argmax(-1)     # uniform among the legal moves
            _, rew, term, trunc, info = env.step({"agent": act}, trusted=True)
            ret += torch.where(running, rew["agent"][:, 0].double(), 0.0)
            length += running.long()
            running &= ~(term["agent"][:, 0] | trunc["agent"][:, 0])
    for ours, key in ((ret.numpy(), "returns"), (length.numpy().astype(float), "lengths")):
        other = np.asarray(theirs[key], dtype=float)
        assert other.size > 0.99 * E, (key, other.size)
        se = math.sqrt(ours.var() / ours.size + other.var() / other.size)
        assert abs(ours.mean() - other.mean()) <= 4 * se + 1e-12, (name, key, ours.mean(), other.mean(), se)
