"""Overcooked-v0 against JaxMARL 0.2.0's ``overcooked``.

JaxMARL runs in its own virtual environment (``$SMAX_REFERENCE_PYTHON``, default
``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``; ``bash scripts/smax_check.sh`` builds it)
through ``tests/overcooked_reference.py``, which records JaxMARL's episodes step by step.  Here:

* **the kitchens**: our ``LAYOUTS`` are JaxMARL's ``overcooked_layouts``, key by key;
* **whole episodes**: one world per recorded episode (every episode lasts ``max_steps``, so a
  trace's episodes run side by side), loaded once at its start (``set_state``) and played to
  its end with the recorded actions; at every step the state, observations, rewards, shaped
  rewards and done must equal JaxMARL's exactly, on every layout, with ``random_reset`` and
  without, in float32 and float64 worlds (Overcooked's step draws nothing, so nothing is
  injected);
* **our own draws** (another generator): the start states of ``reset`` against JaxMARL's,
  chi-square homogeneity of agent cells, directions, inventories and pot statuses;
* **random-policy statistics**: the sparse and the shaped return of a uniformly random policy,
  ours against JaxMARL's own (jit + vmap, auto-reset ``step``), within 4 standard errors.

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
from reference_venvs import reference_python

import war_envs
from war_envs.scenarios.overcooked.layouts import LAYOUTS

HERE = Path(__file__).resolve().parent
REFERENCE_PYTHON = reference_python("SMAX_REFERENCE_PYTHON", "jaxmarl", "JaxMARL", "scripts/smax_check.sh")

#: the policy of the traces: moves and interact often enough that cooks cook
BUSY = [0.14, 0.14, 0.14, 0.14, 0.09, 0.35]
TRACES = [(f"{name}{'_random' if rr else ''}", {"layout": name, "random_reset": rr, "max_steps": 90}, 4)
          for name in LAYOUTS for rr in (False, True)]
TRACES += [("cramped_default", {}, 2), ("cramped_urgent", {"max_steps": 30, "random_reset": True}, 6)]
STATS = [("stats_cramped", {}), ("stats_ring_random", {"layout": "coord_ring", "random_reset": True, "max_steps": 200})]
RESETS = [("reset_cramped", {}), ("reset_asymm_random", {"layout": "asymm_advantages", "random_reset": True})]
STAT_WORLDS = 2000
RESET_WORLDS = 4000


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    jobs = [{"kind": "trace", "config": cfg, "episodes": n, "seed": i, "p": BUSY}
            for i, (_, cfg, n) in enumerate(TRACES)]
    jobs += [{"kind": "random_stats", "config": cfg, "worlds": STAT_WORLDS, "seed": 100 + i}
             for i, (_, cfg) in enumerate(STATS)]
    jobs += [{"kind": "reset_stats", "config": cfg, "worlds": RESET_WORLDS, "seed": 200 + i}
             for i, (_, cfg) in enumerate(RESETS)]
    folder = tmp_path_factory.mktemp("overcooked")
    (folder / "jobs.json").write_text(json.dumps(jobs))
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([str(REFERENCE_PYTHON), str(HERE / "overcooked_reference.py"), str(folder / "jobs.json"),
                           str(folder)], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    names = [t[0] for t in TRACES] + [s[0] for s in STATS] + [r[0] for r in RESETS]
    out = {name: dict(np.load(folder / f"job{i}.npz")) for i, name in enumerate(names)}
    out["layouts"] = json.loads((folder / "layouts.json").read_text())
    return out


def test_layouts_are_jaxmarls(reference):
    theirs = reference["layouts"]
    assert list(theirs) == list(LAYOUTS)
    for name, layout in LAYOUTS.items():
        assert theirs[name] == layout, name


def by_episode(rows: dict, n: int) -> dict:
    """The recorded rows as ``[episode, k, ...]`` (every episode lasts ``max_steps``)."""
    return {key: value.reshape(n, -1, *value.shape[1:]) for key, value in rows.items()}


STATE_KEYS = ("agent_pos", "agent_dir_idx", "agent_inv", "maze_map")


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("name,config,episodes", TRACES, ids=[t[0] for t in TRACES])
def test_episodes_replayed_step_by_step(reference, name, config, episodes, precision):
    r = by_episode(reference[name], episodes)
    assert r["pad_ok"].all()  # JaxMARL's padding is constant walls: the unpadded map is its state
    steps = r["k"].shape[1] - 1
    assert steps == config.get("max_steps", 400) and (r["k"] == np.arange(steps + 1)).all()
    dtype = torch.float32 if precision == "float32" else torch.float64
    with war_envs.make("Overcooked-v0", num_envs=episodes, seed=0, precision=precision, autoreset_mode="disabled",
                       **config) as env:
        H, W = env.height, env.width
        env.reset()
        start = {key: torch.from_numpy(r[key][:, 0].astype(np.int32)) for key in STATE_KEYS}
        start["t"] = torch.from_numpy(r["step"][:, 0].astype(np.int32))
        obs = env.set_state(start)
        np.testing.assert_array_equal(obs["agent"].numpy(), r["obs"][:, 0].reshape(episodes, 2, H * W * 26))
        for k in range(1, steps + 1):
            where = f"{name} step {k}"
            obs, rew, term, trunc, info = env.step({"agent": torch.from_numpy(r["actions"][:, k].astype(np.int64))})
            state = env.get_state()
            for key in STATE_KEYS:
                np.testing.assert_array_equal(state[key].numpy(), r[key][:, k], err_msg=f"{where} {key}")
            assert state["t"].tolist() == r["step"][:, k].tolist(), where
            np.testing.assert_array_equal(obs["agent"].numpy(), r["obs"][:, k].reshape(episodes, 2, H * W * 26),
                                          err_msg=where)
            reward = torch.from_numpy(r["reward"][:, k]).to(dtype)
            assert torch.equal(rew["agent"], reward[:, None].expand(episodes, 2)), where
            assert torch.equal(info["shaped_reward"], torch.from_numpy(r["shaped"][:, k]).to(dtype)), where
            assert torch.equal(info["deliveries"].double() * 20, reward.double()), where
            assert not term["agent"].any(), where
            assert trunc["agent"][:, 0].tolist() == r["done"][:, k].tolist(), where
    assert r["done"][:, -1].all()


def test_the_traces_cook_and_serve(reference):
    """The replays above saw onions put into pots and plates picked up (shaped 3), soups picked
    up (5), deliveries, and a soup cooked to the end in a kitchen that started empty (the
    seeds are fixed: these counts are those of the recorded traces, 30, 7, 5)."""
    shaped = np.concatenate([reference[name]["shaped"].ravel() for name, _, _ in TRACES])
    rewards = np.concatenate([reference[name]["reward"] for name, _, _ in TRACES])
    assert (shaped == 3).sum() >= 20 and (shaped == 5).sum() >= 3 and (rewards == 20).sum() >= 2
    assert any(((reference[name]["maze_map"][..., 0] == 8) & (reference[name]["maze_map"][..., 2] == 0)).any()
               for name, _, _ in TRACES if "random" not in name)


def homogeneity_p(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """The chi-square homogeneity test's p-value (Wilson-Hilferty) of two samples of ``0..k-1``."""
    table = np.stack([np.bincount(a, minlength=k), np.bincount(b, minlength=k)]).astype(float)
    table = table[:, table.sum(0) > 0]
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    stat = float(((table - expected) ** 2 / expected).sum())
    df = table.shape[1] - 1
    if df == 0:
        return 1.0
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


@pytest.mark.parametrize("name,config", RESETS, ids=[r[0] for r in RESETS])
def test_start_states_are_drawn_as_jaxmarl_draws_them(reference, name, config):
    theirs = reference[name]
    with war_envs.make("Overcooked-v0", num_envs=RESET_WORLDS, seed=9, **config) as env:
        env.reset()
        s = env.get_state()
        W = env.width
        pos = s["agent_pos"].numpy().astype(np.int64)
        ours = {"cells": pos[..., 1] * W + pos[..., 0], "dirs": s["agent_dir_idx"].numpy(),
                "inv": s["agent_inv"].numpy()}
        pots = np.asarray(LAYOUTS[config.get("layout", "cramped_room")]["pot_idx"])
        ours["pots"] = s["maze_map"].numpy()[:, pots // W, pots % W, 2]
        cells = env.height * W
    for key, k in (("cells", cells), ("dirs", 4), ("inv", 10), ("pots", 24)):
        a, b = ours[key].astype(np.int64), theirs[key].astype(np.int64)
        for j in range(a.shape[1]):
            assert homogeneity_p(a[:, j], b[:, j], k) > 1e-4, (name, key, j)
        if key == "cells":  # the two agents' cells jointly (distinct, ordered)
            assert homogeneity_p(a[:, 0] * k + a[:, 1], b[:, 0] * k + b[:, 1], k * k) > 1e-4, name


@pytest.mark.parametrize("name,config", STATS, ids=[s[0] for s in STATS])
def test_random_policy_statistics_match_jaxmarls(reference, name, config):
    theirs = reference[name]
    E = STAT_WORLDS
    with war_envs.make("Overcooked-v0", num_envs=E, seed=11, autoreset_mode="disabled", **config) as env:
        env.reset()
        gen = torch.Generator().manual_seed(1)
        ret = torch.zeros(E, dtype=torch.float64)
        shaped = torch.zeros(E, dtype=torch.float64)
        length = torch.zeros(E, dtype=torch.int64)
        running = torch.ones(E, dtype=torch.bool)
        while running.any():
            _, rew, term, trunc, info = env.step({"agent": torch.randint(0, 6, (E, 2), generator=gen)})
            ret += torch.where(running, rew["agent"][:, 0].double(), 0.0)
            shaped += torch.where(running, info["shaped_reward"].double().sum(-1), 0.0)
            length += running.long()
            running &= ~(term["agent"][:, 0] | trunc["agent"][:, 0])
    assert (length == env.max_steps).all() and (theirs["lengths"] == env.max_steps).all()
    for ours, key in ((ret.numpy(), "returns"), (shaped.numpy(), "shaped")):
        other = np.asarray(theirs[key], dtype=float)
        assert other.size == E and other.std() > 0, key
        se = math.sqrt(ours.var() / ours.size + other.var() / other.size)
        assert abs(ours.mean() - other.mean()) <= 4 * se, (name, key, ours.mean(), other.mean(), se)
