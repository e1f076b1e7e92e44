"""FacmacPredatorPrey-v0 and its 3a / 6a / 9a presets against JaxMARL 0.2.0's ``simple_facmac``.

JaxMARL runs in its own virtual environment (``$SMAX_REFERENCE_PYTHON``, default
``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``; ``bash scripts/smax_check.sh`` builds it and
runs this file) through ``tests/facmac_reference.py``, which records JaxMARL's episodes step by
step with the prey's random draws inside each step.  Here:

* **episodes step by step**: one world per recorded episode, played with the recorded actions
  and JaxMARL's draws injected (``inject_draws``); at every step the positions, velocities,
  clock, observations, rewards and the end of the episode must agree with JaxMARL's — float64
  worlds, loaded once at the start (``set_state``), with JaxMARL run in float64
  (``jax_enable_x64``) to 1e-12 through whole episodes; float32 worlds with JaxMARL's float32 to
  a few ulps from every recorded state (loaded before each step), and through whole episodes to
  1e-3 (contacts amplify rounding) — for the four JaxMARL ids and custom configurations (every
  argument we take, ``"sum"`` and ``"min"``, the clamped indices of many prey, no landmarks, no
  view limit);
* **start states**: ours against JaxMARL's resets (two-sample Kolmogorov-Smirnov per
  coordinate), since the two draw from different generators;
* **random-policy statistics**: adversary and prey returns of uniformly random actions, ours
  against JaxMARL's own (jit + vmap, auto-reset ``step``), within 4 standard errors;
* **bite**: a replay with JaxMARL's draws rotated by one candidate departs from JaxMARL (the
  comparison can fail).

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

IDS = {"MPE_simple_facmac_v1": "FacmacPredatorPrey-v0", "MPE_simple_facmac_3a_v1": "FacmacPredatorPrey3a-v0",
       "MPE_simple_facmac_6a_v1": "FacmacPredatorPrey6a-v0", "MPE_simple_facmac_9a_v1": "FacmacPredatorPrey9a-v0"}
#: (name, JaxMARL env, its config: ours takes the same keyword arguments)
TRACES = [
    ("default", "MPE_simple_facmac_v1", {}),
    ("3a", "MPE_simple_facmac_3a_v1", {}),
    ("6a", "MPE_simple_facmac_6a_v1", {}),
    ("9a", "MPE_simple_facmac_9a_v1", {}),
    ("sum_custom", "MPE_simple_facmac_v1", {"num_good_agents": 2, "num_adversaries": 4, "num_landmarks": 3,
                                            "view_radius": -1, "max_steps": 12, "dt": 0.05, "damping": 0.5,
                                            "contact_force": 150.0, "contact_margin": 2e-3,
                                            "mass": [1.0, 2.0, 0.5, 1.5, 1.0, 3.0, 1.0, 1.0, 1.0]}),
    ("min_many_prey", "MPE_simple_facmac_v1", {"num_good_agents": 3, "num_adversaries": 2, "num_landmarks": 0,
                                               "view_radius": 2.5, "score_function": "min"}),
]
EPISODES = 6
STATS = [("stats_default", "MPE_simple_facmac_v1", {}), ("stats_3a", "MPE_simple_facmac_3a_v1", {}),
         ("stats_9a", "MPE_simple_facmac_9a_v1", {})]
STAT_WORLDS = 3000
START_WORLDS = 5000


def run_reference(folder: Path, jobs: list, x64: bool) -> list:
    (folder / "jobs.json").write_text(json.dumps(jobs))
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([str(REFERENCE_PYTHON), str(HERE / "facmac_reference.py"), str(folder / "jobs.json"),
                           str(folder / "out.json"), *(["--x64"] if x64 else [])],
                          capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads((folder / "out.json").read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    """JaxMARL's float32 traces, statistics and starts by name, and its float64 traces as
    ``x64/<name>``."""
    traces = [{"kind": "trace", "env": env, "config": cfg, "episodes": EPISODES, "seed": i}
              for i, (_, env, cfg) in enumerate(TRACES)]
    jobs = traces + [{"kind": "random_stats", "env": env, "config": cfg, "worlds": STAT_WORLDS, "seed": 100 + i}
                     for i, (_, env, cfg) in enumerate(STATS)]
    jobs.append({"kind": "starts", "env": "MPE_simple_facmac_6a_v1", "config": {}, "worlds": START_WORLDS,
                 "seed": 200})
    results = run_reference(tmp_path_factory.mktemp("facmac32"), jobs, x64=False)
    names = [name for name, _, _ in TRACES] + [name for name, _, _ in STATS] + ["starts"]
    out = dict(zip(names, results))
    for (name, _, _), result in zip(TRACES, run_reference(tmp_path_factory.mktemp("facmac64"), traces, x64=True)):
        out[f"x64/{name}"] = result
    return out


def our_state(s: dict, num_agents: int, dtype: torch.dtype) -> dict:
    """JaxMARL's state as our ``set_state`` entries."""
    pos = torch.tensor([s["p_pos"]], dtype=dtype)
    return {"agent_pos": pos[:, :num_agents], "landmark_pos": pos[:, num_agents:],
            "agent_vel": torch.tensor([s["p_vel"]], dtype=dtype)[:, :num_agents],
            "t": torch.tensor([s["step"]], dtype=torch.int32)}


def agent_obs(obs: dict) -> np.ndarray:
    """Every agent's observation of world 0, in agent order."""
    return np.concatenate([obs["adversary"][0].numpy(), obs["agent"][0].numpy()])


def agent_rewards(rew: dict) -> np.ndarray:
    return np.concatenate([rew["adversary"][0].double().numpy(), rew["agent"][0].double().numpy()])


#: (state, observation, reward) tolerances |ours - theirs| <= atol + rtol |theirs| as (atol, rtol):
#: float64 worlds against JaxMARL in float64 (its observations rounded to our float32 ones);
#: float32 worlds against JaxMARL's float32, which rounds differently (Warp's and XLA's cos, sin,
#: exp and log, XLA's reduction order): a few ulps after one step, and whole episodes, where the
#: stiff contacts amplify rounding, to 1e-3 (seen: 4e-5)
TOLERANCE = {"float64": ((1e-12, 0.0), (1e-12, 2.5e-7), (1e-12, 0.0)),
             "float32": ((1e-6, 1e-6), (1e-6, 1e-6), (1e-6, 1e-6)),
             "float32 episode": ((1e-3, 0.0), (1e-3, 0.0), (1e-3, 1e-6))}


def close(ours, theirs, tol, where: str) -> None:
    atol, rtol = tol
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64), rtol=rtol,
                               atol=atol, err_msg=where)


def replay(env, episodes: list, precision: str, *, resync: bool, draws=lambda d: d) -> int:
    """Play every recorded episode in world 0 of ``env`` and compare each step with JaxMARL's
    (``resync``: every step from JaxMARL's state before it, else from the start only); returns the
    number of steps compared (``draws``: what to inject instead of the recorded draws)."""
    dtype = torch.float32 if precision == "float32" else torch.float64
    n = env.num_agents
    tol_state, tol_obs, tol_rew = TOLERANCE[precision if resync or precision == "float64" else "float32 episode"]
    rounded = np.float32 if precision == "float64" else np.float64  # theirs as our float32 observations
    steps = 0
    for k, episode in enumerate(episodes):
        env.reset()
        obs = env.set_state(our_state(episode["start"], n, dtype))
        close(agent_obs(obs), np.asarray(episode["obs"]).astype(rounded), tol_obs, f"episode {k} start")
        before = episode["start"]
        for j, step in enumerate(episode["steps"]):
            where = f"episode {k} step {j}"
            if resync:
                env.set_state(our_state(before, n, dtype))
            env.inject_draws(prey=torch.tensor([draws(step["draws"])], dtype=dtype))
            obs, rew, term, trunc, _ = env.step({g: torch.tensor([step["actions"][s.start:s.stop]])
                                                 for g, s in env.groups.items()})
            expected = our_state(step["state"], n, dtype)
            state = env.get_state()
            for key in ("agent_pos", "landmark_pos", "agent_vel"):
                close(state[key], expected[key], tol_state, f"{where} {key}")
            done = bool(trunc["adversary"][0, 0])
            assert done == step["done"] and not bool(term["adversary"][0, 0]), where
            if not done:
                assert torch.equal(state["t"], expected["t"]), where
            close(agent_obs(obs), np.asarray(step["obs"]).astype(rounded), tol_obs, f"{where} obs")
            close(agent_rewards(rew), step["rewards"], tol_rew, f"{where} rewards")
            before = step["state"]
            steps += 1
        assert step["done"]
    return steps


@pytest.mark.parametrize("mode", ["float32", "float32 episode", "float64"])
@pytest.mark.parametrize("name,env_name,config", TRACES, ids=[t[0] for t in TRACES])
def test_episodes_replayed_step_by_step(reference, name, env_name, config, mode):
    precision = mode.split()[0]
    episodes = reference[name if precision == "float32" else f"x64/{name}"]["episodes"]
    assert len(episodes) == EPISODES
    with war_envs.make(IDS[env_name], num_envs=1, seed=0, precision=precision, autoreset_mode="disabled",
                       **config) as env:
        steps = replay(env, episodes, precision, resync=mode == "float32")
    assert steps == EPISODES * (config.get("max_steps", 25) + 1)


@pytest.mark.parametrize("name", ["default", "3a"])
def test_replay_bites(reference, name):
    """The comparison can fail: the same replay with the prey's draws rotated by one candidate."""
    env_name, config = next((e, c) for n, e, c in TRACES if n == name)
    with war_envs.make(IDS[env_name], num_envs=1, seed=0, autoreset_mode="disabled", **config) as env:
        with pytest.raises(AssertionError):
            replay(env, reference[name]["episodes"], "float32", resync=True,
                   draws=lambda d: [d[0][1:] + d[0][:1], d[1]])


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, grid, side="right") / a.size
                               - np.searchsorted(b, grid, side="right") / b.size)))


def test_start_states_match_jaxmarls(reference):
    theirs = np.asarray(reference["starts"]["p_pos"])  # [W, entities, 2]
    with war_envs.make("FacmacPredatorPrey6a-v0", num_envs=START_WORLDS, seed=7, precision="float64") as env:
        env.reset()
        state = env.get_state()
        ours = torch.cat([state["agent_pos"], state["landmark_pos"]], dim=1).numpy()
        assert not state["agent_vel"].any()
    n = START_WORLDS
    critical = 1.95 * math.sqrt(2 / n)  # KS at p ~ 0.001
    for k in range(theirs.shape[1]):
        for c in range(2):
            assert ks_statistic(ours[:, k, c], theirs[:, k, c]) < critical, (k, c)
    # a joint feature: the distance between the first adversary and the first prey
    d_ours = np.linalg.norm(ours[:, 0] - ours[:, 6], axis=-1)
    d_theirs = np.linalg.norm(theirs[:, 0] - theirs[:, 6], axis=-1)
    assert ks_statistic(d_ours, d_theirs) < critical


@pytest.mark.parametrize("name,env_name,config", STATS, ids=[s[0] for s in STATS])
def test_random_policy_statistics_match_jaxmarls(reference, name, env_name, config):
    theirs = reference[name]
    E = STAT_WORLDS
    with war_envs.make(IDS[env_name], num_envs=E, seed=11, autoreset_mode="disabled", **config) as env:
        env.reset()
        gen = torch.Generator().manual_seed(1)
        ret = torch.zeros(E, 2, dtype=torch.float64)
        for _ in range(env.max_cycles):
            _, rew, _, trunc, _ = env.step({g: torch.rand(E, s.n_agents, 5, generator=gen)
                                            for g, s in env.groups.items()})
            ret += torch.stack([rew["adversary"][:, 0], rew["agent"][:, 0]], dim=1).double()
        assert trunc["adversary"].all()
    for column, key in enumerate(("adversary_returns", "prey_returns")):
        ours, other = ret[:, column].numpy(), np.asarray(theirs[key], dtype=float)
        assert other.size == E
        se = math.sqrt(ours.var() / ours.size + other.var() / other.size)
        assert abs(ours.mean() - other.mean()) <= 4 * se, (name, key, ours.mean(), other.mean(), se)
