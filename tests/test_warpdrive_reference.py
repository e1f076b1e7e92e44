"""TagGridWorld-v0 against WarpDrive 2.7.1's own tag_gridworld.

WarpDrive runs in its own virtual environment (``$WARPDRIVE_REFERENCE_PYTHON``, default
``~/.cache/war-envs/bench-venvs/warpdrive/bin/python``; ``bash scripts/warpdrive_check.sh``
builds it and runs this file) through ``tests/warpdrive_reference.py``, which records episodes
of WarpDrive's NumPy ``TagGridWorld`` from injected starts with random actions (and, for the
small configurations, the same episodes through WarpDrive's Numba step in Numba's CUDA
simulator) and draws starts from WarpDrive's reset pool.  Here:

* **whole episodes, bitwise**: one world per recorded episode, loaded with its start
  (``set_state``) and played with WarpDrive's actions; the observations after loading are
  ``reset()``'s, and after every step of the episode the cells, observations (float32: the
  NumPy step's float64 values rounded once, compared bit for bit), rewards (float64 worlds: the
  NumPy step's float64 rewards bit for bit, signed zeros included; float32 worlds: those
  rounded once), ``terminated | truncated == done`` (``terminated`` exactly when WarpDrive's
  reward components show a tag), the wall hits and tag info are WarpDrive's;
* **WarpDrive's Numba (CUDA) step** on the same episodes: cells, observations, done flags and
  rewards bit for bit, but for the sign of zero rewards (it returns +0.0 where the NumPy step's
  float64 sum is -0.0; ours are the NumPy step's);
* configurations: WarpDrive's unit-test arena (4 taggers, L = 4), its defaults, its training
  config, both observations, signed-zero and negative reward constants, a one-cell grid,
  WarpDrive's own default start, and thousands of agents (1 world x 2000 agents, partial
  observations; 200 agents with full observations);
* **starts**: 10 000 random starts of ours against 10 000 of WarpDrive's reset pool
  (chi-square homogeneity of every tagger coordinate, of tagger 0's cell and of "two taggers on
  one cell"; the runner always at (0, 0)), with a check that the same statistics reject a
  wrong start range.

Reference outputs are cached in a temporary folder per test session.  Without WarpDrive's venv
the module is skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import war_envs
from reference_venvs import reference_python

HERE = Path(__file__).resolve().parent
REFERENCE_PYTHON = reference_python("WARPDRIVE_REFERENCE_PYTHON", "warpdrive", "WarpDrive", "scripts/warpdrive_check.sh")

ID = "TagGridWorld-v0"


# ----------------------------------------------------------------------------- the reference
@dataclasses.dataclass(frozen=True)
class Case:
    """A recorded WarpDrive run: ``tests/warpdrive_reference.py <command> --config ...``."""

    name: str
    config: str  # JSON
    command: str = "trace"
    args: tuple = ()

    @property
    def kwargs(self) -> dict:
        return json.loads(self.config)

    def argv(self, out: Path) -> list[str]:
        return [self.command, "--config", self.config, *map(str, self.args), "--out", str(out)]

    def key(self) -> str:
        return hashlib.sha1(json.dumps(self.argv(Path("-"))).encode()).hexdigest()[:16]

    def __str__(self) -> str:
        return self.name


def trace_case(name: str, episodes: int, seed: int, *flags: str, **config) -> Case:
    return Case(name, json.dumps(config, sort_keys=True), "trace", ("--episodes", episodes, "--seed", seed, *flags))


class Reference:
    """Runs ``tests/warpdrive_reference.py`` in WarpDrive's venv (every missing case in one
    process), each output cached in this session's folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {**os.environ, "PYTHONWARNINGS": "ignore"}
        self.env.pop("PYTHONPATH", None)

    def path(self, case: Case) -> Path:
        return self.folder / f"{case.name}-{case.key()}.npz"

    def ensure(self, cases) -> None:
        missing = list({self.path(c): c for c in cases if not self.path(c).exists()}.items())
        if not missing:
            return
        jobs = self.folder / f"jobs-{len(list(self.folder.glob('jobs-*')))}.json"
        jobs.write_text(json.dumps([c.argv(p) for p, c in missing]))
        proc = subprocess.run([str(REFERENCE_PYTHON), str(HERE / "warpdrive_reference.py"), "batch", str(jobs)],
                              env=self.env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"tests/warpdrive_reference.py failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")

    def load(self, case: Case) -> dict:
        self.ensure([case])
        with np.load(self.path(case)) as f:
            return {k: f[k] for k in f.files}


@pytest.fixture(scope="session")
def reference(request, tmp_path_factory) -> Reference:
    """The session's reference runner; the first use records every case this session's selected
    tests of this module take (their ``case`` parameter) in one WarpDrive process."""
    ref = Reference(tmp_path_factory.mktemp("warpdrive_reference"))
    wanted = [item.callspec.params["case"] for item in request.session.items
              if getattr(item, "module", None) is not None and item.module.__name__ == __name__
              and hasattr(item, "callspec") and isinstance(item.callspec.params.get("case"), Case)]
    ref.ensure(wanted)
    return ref


ARENA = dict(num_taggers=4, grid_length=4, episode_length=12)  # WarpDrive's unit-test arena, longer
# The Numba simulator costs about 5-10 ms per agent and step (a Python thread each): the cases it
# plays are kept small; the NumPy step plays more episodes of the same configurations.
TRACES = [
    trace_case("arena-full", 16, 1, "--numba", **ARENA),
    trace_case("arena-partial", 16, 2, "--numba", **ARENA, use_full_observation=False),
    trace_case("arena-many", 256, 12, **ARENA),
    trace_case("arena-many-partial", 256, 13, **ARENA, use_full_observation=False),
    trace_case("defaults", 6, 3, "--numba"),
    trace_case("defaults-partial", 6, 4, "--numba", use_full_observation=False),
    trace_case("defaults-many", 64, 14),
    trace_case("signed-zero-rewards", 16, 5, "--numba", num_taggers=2, grid_length=3, episode_length=20,
               wall_hit_penalty=0.0, step_cost_for_tagger=0.0, tag_reward_for_tagger=1.5, tag_penalty_for_runner=0.3),
    trace_case("negative-constants", 48, 6, num_taggers=3, grid_length=5, episode_length=15, wall_hit_penalty=-0.25,
               step_cost_for_tagger=0.7, tag_reward_for_tagger=-3.0, tag_penalty_for_runner=-1.1),
    trace_case("one-cell", 8, 7, num_taggers=3, grid_length=1, episode_length=5),
    trace_case("training-config", 16, 8, num_taggers=4, grid_length=100, episode_length=100, tag_penalty_for_runner=5.0),
    trace_case("default-start", 8, 9, "--default-start"),
    trace_case("2000-agents-partial", 2, 10, num_taggers=1999, grid_length=400, episode_length=15,
               use_full_observation=False),
    trace_case("200-agents-full", 2, 11, num_taggers=199, grid_length=60, episode_length=10),
]
STARTS = [Case("starts-small", json.dumps({"num_taggers": 3, "grid_length": 6}), "starts", ("--n", 10_000, "--seed", 3)),
          Case("starts-defaults", json.dumps({}), "starts", ("--n", 10_000, "--seed", 4))]


# ----------------------------------------------------------------------------- comparisons
def bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of a float array (so 0.0 and -0.0 differ)."""
    return a.view({4: np.int32, 8: np.int64}[a.dtype.itemsize])


def assert_bitwise(what: str, ours: np.ndarray, theirs: np.ndarray, rows=None) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, \
        f"{what}: {ours.dtype}{ours.shape} vs WarpDrive's {theirs.dtype}{theirs.shape}"
    same = bits(ours) == bits(theirs) if ours.dtype.kind == "f" else ours == theirs
    if not same.all():
        idx = tuple(int(i) for i in np.argwhere(~same)[0])
        where = f" (episode {rows[idx[0]]})" if rows is not None else ""
        raise AssertionError(f"{what}: {int((~same).sum())} of {same.size} values differ; first at {idx}{where}: "
                             f"ours {ours[idx]!r}, WarpDrive {theirs[idx]!r}")


def joint(d: dict) -> np.ndarray:
    return torch.cat([d["tagger"], d["runner"]], dim=1).numpy()


def replay(tr: dict, config: dict, precision: str) -> dict:
    """Our worlds (one per recorded episode) loaded with WarpDrive's starts and played with its
    actions; every step compared with WarpDrive's NumPy step.  Returns our float32 outputs per
    step (for the Numba comparison) and counts of what the episodes covered."""
    N, T, A = tr["actions"].shape
    env = war_envs.make(ID, num_envs=N, precision=precision, autoreset_mode="disabled", seed=0,
                        random_start=False, **config)
    env.reset()
    pos = torch.from_numpy(np.stack([tr["start_x"], tr["start_y"]], -1).astype(np.int32))
    obs = env.set_state({"agent_pos": pos, "t": torch.zeros(N, dtype=torch.int32)})
    assert_bitwise("observations after loading the start (reset's)", joint(obs), tr["reset_obs"].astype(np.float32))
    length = tr["length"]
    f = np.float64 if precision == "float64" else np.float32
    out = {"obs": np.zeros(tr["obs"].shape, np.float32), "rewards": np.zeros((N, T, A), np.float32),
           "pos": np.zeros((N, T, A, 2), np.int64), "done": np.zeros((N, T), bool)}
    seen = {"tags": 0, "truncations": 0, "wall_hits": 0, "steps": 0}
    tag_reward = config.get("tag_reward_for_tagger", 10.0)
    wall = config.get("wall_hit_penalty", 0.1)
    for k in range(int(length.max())):
        rows = np.flatnonzero(length > k)
        obs, rew, term, trunc, info = env.step(torch.from_numpy(tr["actions"][:, k].astype(np.int64)))
        cells = env.get_state()["agent_pos"].numpy()[rows].astype(np.int64)
        where = f"step {k + 1}"
        assert_bitwise(f"{where}: cells", cells, np.stack([tr["loc_x"][rows, k], tr["loc_y"][rows, k]], -1), rows)
        assert_bitwise(f"{where}: observations", joint(obs)[rows], tr["obs"][rows, k].astype(np.float32), rows)
        assert_bitwise(f"{where}: rewards ({precision})", joint(rew)[rows], tr["rewards"][rows, k].astype(f), rows)
        te, tu = joint(term)[rows], joint(trunc)[rows]
        tagged = tr["reward_tag"][rows, k, 0] == tag_reward
        assert_bitwise(f"{where}: terminated | truncated vs done", (te | tu)[:, 0], tr["done"][rows, k], rows)
        assert_bitwise(f"{where}: terminated vs tagged", te[:, 0], tagged, rows)
        assert (te.all(1) == te[:, 0]).all() and (tu.all(1) == tu[:, 0]).all(), f"{where}: agents' flags differ"
        assert_bitwise(f"{where}: info['tagged']", info["tagged"].numpy()[rows] == 1, tagged, rows)
        on_cell = (cells[:, :-1] == cells[:, -1:]).all(-1).sum(-1)
        assert_bitwise(f"{where}: info['taggers_on_runner']", info["taggers_on_runner"].numpy()[rows].astype(np.int64), on_cell, rows)
        hits = info["wall_hits"].numpy()[rows] == 1
        if wall != 0:
            assert_bitwise(f"{where}: info['wall_hits']", hits, tr["reward_penalty"][rows, k] != 0, rows)
        out["obs"][:, k], out["rewards"][:, k] = joint(obs), joint(rew).astype(np.float32)
        out["pos"][:, k], out["done"][:, k] = env.get_state()["agent_pos"].numpy(), joint(term)[:, 0] | joint(trunc)[:, 0]
        seen["tags"] += int(tagged.sum())
        seen["truncations"] += int(tu[:, 0].sum())
        seen["wall_hits"] += int(hits.sum())
        seen["steps"] += len(rows)
    env.close()
    return {"out": out, "seen": seen}


@pytest.mark.parametrize("case", TRACES, ids=str)
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_whole_episodes_are_warpdrives_bitwise(reference, case, precision):
    tr = reference.load(case)
    config = case.kwargs
    result = replay(tr, config, precision)
    seen = result["seen"]
    assert seen["steps"] == int(tr["length"].sum())
    if case.name not in ("2000-agents-partial", "200-agents-full", "training-config", "default-start"):
        assert seen["tags"] > 0 and seen["wall_hits"] > 0 or config.get("wall_hit_penalty") == 0.0, seen
    if case.name == "training-config":
        assert seen["truncations"] > 0, seen


@pytest.mark.parametrize("case", [c for c in TRACES if "--numba" in c.args], ids=str)
def test_warpdrives_numba_step_agrees(reference, case):
    """The Numba step gives our float32 worlds' results bit for bit but for the sign of zero
    rewards: it starts every reward from +0.0 and adds, so where the NumPy step's float64 sum is
    -0.0 (a zero step cost and no wall penalty: -1.0 * 0.0 + -0.0) it returns +0.0."""
    tr = reference.load(case)
    ours = replay(tr, case.kwargs, "float32")["out"]
    length = tr["length"]
    played = np.arange(tr["actions"].shape[1])[None, :] < length[:, None]
    n_pos = np.stack([tr["numba.loc_x"], tr["numba.loc_y"]], -1)
    assert_bitwise("Numba cells", ours["pos"][played], n_pos[played])
    assert_bitwise("Numba observations", ours["obs"][played], tr["numba.obs"][played])
    assert_bitwise("Numba done", ours["done"][played], tr["numba.done"][played])
    a, b = ours["rewards"][played], tr["numba.rewards"][played]
    zero = (a == 0) & (b == 0)
    assert_bitwise("Numba rewards (zeros aside)", a[~zero], b[~zero])
    flipped = zero & (np.signbit(a) != np.signbit(b))
    assert flipped.any() == (case.name == "signed-zero-rewards"), f"{int(flipped.sum())} zero rewards of other signs"
    assert np.signbit(a[flipped]).all() and not np.signbit(b[flipped]).any()   # ours -0.0 (NumPy's), Numba's +0.0


def test_default_start_is_warpdrives(reference):
    tr = reference.load(next(c for c in TRACES if c.name == "default-start"))
    env = war_envs.make(ID, num_envs=1, random_start=False)
    obs = env.reset(seed=0)
    pos = env.get_state()["agent_pos"].numpy()[0]
    assert_bitwise("default start cells", pos.astype(np.int64), np.stack([tr["start_x"][0], tr["start_y"][0]], -1))
    assert_bitwise("default start observations", joint(obs)[0], tr["reset_obs"][0].astype(np.float32))


# ----------------------------------------------------------------------------- starts
ALPHA = 1e-4  # per test; fixed seeds, so the outcome is deterministic


def homogeneity(a: np.ndarray, b: np.ndarray) -> float:
    """p-value of the chi-square test that samples ``a`` and ``b`` of a categorical variable
    come from the same distribution."""
    from scipy import stats

    values = np.union1d(a, b)
    table = np.array([[np.sum(s == v) for v in values] for s in (a, b)])
    return float(stats.chi2_contingency(table).pvalue)


def start_features(x: np.ndarray, y: np.ndarray, L: int) -> dict:
    T = x.shape[1] - 1
    feats = {f"tagger {i} {axis}": c[:, i] for i in range(T) for axis, c in (("x", x), ("y", y))}
    feats["tagger 0 cell"] = x[:, 0] * (L + 1) + y[:, 0]
    feats["taggers 0 and 1 share a cell"] = ((x[:, 0] == x[:, 1]) & (y[:, 0] == y[:, 1])).astype(int)
    return feats


@pytest.mark.parametrize("case", STARTS, ids=str)
def test_random_starts_are_distributed_as_warpdrives_reset_pool(reference, case):
    theirs = reference.load(case)
    config = case.kwargs
    n = theirs["x"].shape[0]
    env = war_envs.make(ID, num_envs=n, seed=11, **config)
    env.reset()
    pos = env.get_state()["agent_pos"].numpy().astype(np.int64)
    x, y = pos[..., 0], pos[..., 1]
    L = env.grid_length
    assert (x[:, -1] == 0).all() and (y[:, -1] == 0).all() and (theirs["x"][:, -1] == 0).all()
    assert (theirs["y"][:, -1] == 0).all()
    ours_f, theirs_f = start_features(x, y, L), start_features(theirs["x"], theirs["y"], L)
    for name in ours_f:
        p = homogeneity(ours_f[name], theirs_f[name])
        assert p > ALPHA, f"{name}: chi-square p = {p:.2e} (ours vs WarpDrive's reset pool)"
    # the same statistic tells a wrong start range apart: taggers on {0, ..., L - 2} instead
    wrong = start_features(x - 1, y, L)
    assert homogeneity(wrong["tagger 0 x"], theirs_f["tagger 0 x"]) < 1e-12
