"""SMAX-v0 against JaxMARL 0.2.0's SMAX itself.

JaxMARL runs in its own virtual environment (``$SMAX_REFERENCE_PYTHON``, default
``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``; ``bash scripts/smax_check.sh`` builds it
and runs this file) through ``tests/smax_reference.py``, which records JaxMARL's episodes step
by step with the random numbers it used inside each step.  Here:

* **one step** from every recorded state: every world of one env is loaded (``set_state``) with
  one recorded step's state, the step's random numbers injected (``inject_draws``) and its
  actions played; everything JaxMARL produced must agree: the state after the step (positions,
  health, cooldowns, alive, previous actions, the heuristic enemy's state, the clock),
  observations, available actions, rewards, terminated/truncated and the metrics — in float32
  worlds to float32 rounding, and in float64 worlds too;
* **whole episodes**: one world per recorded episode, loaded once at its start and played to its
  end with the recorded actions and draws (float32), compared at every step while its units
  are within ``SYNC`` (1e-5) of JaxMARL's: crowded battles amplify float32 rounding about 2x per
  step (JaxMARL's own episodes do the same from a 2e-6 nudge), so the two sides part after a
  while there (small maps are compared to the end);
* observations and masks that rounding alone can flip (another unit within rounding of the
  observer's sight radius, a conic section's edge or the attack range: ``ambiguous_observers``)
  are left out of the comparison;
* the recovered draws themselves (``smax_reference.py --check``: numpy recomputes JaxMARL's
  heuristic choices, continuous decoding and world-step cooldowns from them), and our own
  in-step draws' distributions (cooldown jitter, the heuristic's random targets, the Gumbel
  choices of continuous actions) seen through what they decide;
* every map, discrete and continuous actions, heuristic (closest and random attack modes) and
  self-play enemies, both observation types, ``walls_cause_death`` both ways,
  ``see_enemy_actions=False``, ``use_self_play_reward=True``, ``enemy_shoots=False``, a
  ``map_name=None`` scenario;
* **start states**: 10 000 resets of ours against 10 000 of JaxMARL's (two-sample
  Kolmogorov-Smirnov on every unit's coordinates and a few joint features, chi-square on
  SMACv2's unit types), since the two draw from different generators;
* **random-policy statistics**: episode length, ally return and win rate of a uniformly random
  policy over available actions, ours (torch draws from ``env.action_mask()``) against
  JaxMARL's, within 4 standard errors (``benchmarks/smax_random_policy.py`` is the same
  comparison as a benchmark).

Reference outputs are cached in a temporary folder per test session; JaxMARL's compilations in
its persistent XLA cache (``$JAX_COMPILATION_CACHE_DIR``, default ``jaxmarl-xla-cache`` beside
its venv).  Without JaxMARL's venv the module is skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
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
from war_envs.scenarios.smax.maps import MAPS

HERE = Path(__file__).resolve().parent
REFERENCE_PYTHON = reference_python("SMAX_REFERENCE_PYTHON", "jaxmarl", "JaxMARL", "scripts/smax_check.sh")
#: JaxMARL processes recording at once (CI's two cores)
PROCESSES = min(2, os.cpu_count() or 1)


# ----------------------------------------------------------------------------- the reference
@dataclasses.dataclass(frozen=True)
class Case:
    """A recorded JaxMARL run: ``tests/smax_reference.py <command> --config ...``."""

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


def trace_case(name: str, steps: int = 80, seed: int = 0, **config) -> Case:
    return Case(name, json.dumps(config, sort_keys=True), "trace", ("--steps", steps, "--seed", seed,
                                                                    "--policy-seed", seed))


class Reference:
    """Runs ``tests/smax_reference.py`` in JaxMARL's venv, many cases per process (one jax
    start-up), each output cached in this session's folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {**os.environ, "PYTHONWARNINGS": "ignore"}
        venv = REFERENCE_PYTHON.parent.parent
        self.env.setdefault("JAX_COMPILATION_CACHE_DIR", str(venv.parent / "jaxmarl-xla-cache"))
        self.env.setdefault("JAX_PLATFORMS", "cpu")
        self.env.pop("PYTHONPATH", None)

    def path(self, case: Case) -> Path:
        return self.folder / f"{case.name}-{case.key()}.npz"

    def ensure(self, cases) -> None:
        """Records the cases not recorded yet: round robin over ``PROCESSES`` JaxMARL processes
        at once (compiling JaxMARL's step for each configuration is most of the time)."""
        missing = list({self.path(c): c for c in cases if not self.path(c).exists()}.items())
        if not missing:
            return
        runs = []
        for part in range(min(PROCESSES, len(missing))):
            jobs = self.folder / f"jobs-{len(list(self.folder.glob('jobs-*')))}.json"
            jobs.write_text(json.dumps([c.argv(p) for p, c in missing[part::PROCESSES]]))
            err = jobs.with_suffix(".err")
            with open(err, "w") as f:
                runs.append((err, subprocess.Popen([str(REFERENCE_PYTHON), str(HERE / "smax_reference.py"), "batch",
                                                    str(jobs)], env=self.env, stdout=subprocess.DEVNULL, stderr=f)))
        for err, proc in runs:
            if proc.wait() != 0:
                for _, other in runs:
                    other.kill()
                raise RuntimeError(f"tests/smax_reference.py failed (exit {proc.returncode}):\n"
                                   f"{err.read_text()[-4000:]}")

    def load(self, case: Case) -> dict:
        self.ensure([case])
        with np.load(self.path(case)) as f:
            return {k: f[k] for k in f.files}


@pytest.fixture(scope="session")
def reference(request, tmp_path_factory) -> Reference:
    """The session's reference runner; the first use records every case this session's selected
    tests of this module take (their ``case`` parameter) in one JaxMARL process."""
    ref = Reference(tmp_path_factory.mktemp("smax_reference"))
    wanted = [item.callspec.params["case"] for item in request.session.items
              if getattr(item, "module", None) is not None and item.module.__name__ == __name__
              and hasattr(item, "callspec") and isinstance(item.callspec.params.get("case"), Case)]
    ref.ensure(wanted)
    return ref


# ----------------------------------------------------------------------------- our env
def make_ours(config: dict, num_envs: int, precision: str = "float32", **extra):
    return war_envs.make("SMAX-v0", num_envs=num_envs, seed=0, precision=precision, **config, **extra)


def groups_of(config: dict) -> list[str]:
    return ["ally", "enemy"] if config.get("enemy") == "self_play" else ["ally"]


def sizes(config: dict) -> tuple[int, int]:
    name = config.get("map_name", "3m")
    if name is None:
        return config.get("num_allies", 5), config.get("num_enemies", 5)
    return MAPS[name].num_allies, MAPS[name].num_enemies


STATE_KEYS = ("unit_positions", "unit_alive", "unit_health", "unit_types", "unit_weapon_cooldowns",
              "prev_movement_actions", "prev_attack_actions")
HEURISTIC_KEYS = ("enemy_default_target", "enemy_last_attacked")


def state_rows(tr: dict, prefix: str, rows, config: dict, float_dtype) -> dict:
    """Our ``set_state`` dict of the recorded states ``prefix`` ("before"/"after") at ``rows``."""
    keys = STATE_KEYS + (HEURISTIC_KEYS if config.get("enemy", "heuristic") == "heuristic" else ())
    out = {}
    for k in keys + ("step",):
        value = torch.from_numpy(np.ascontiguousarray(tr[f"{prefix}.{k}"][rows]))
        if value.is_floating_point():
            value = value.to(float_dtype)
        elif value.dtype != torch.bool:
            value = value.to(torch.int32)
        out["t" if k == "step" else k] = value
    return out


# Tolerances, (absolute, relative to JaxMARL's value), per comparison mode.  JaxMARL computes in
# float32 (XLA's CPU backend, with fused multiply-adds); so do our float32 worlds, in another
# order.  One step from the same state: float32 rounding of values up to the map size (32),
# through 8 world steps whose push-apart amplifies it where units nearly coincide.  Cooldowns
# keep falling while a weapon is idle (tens of seconds below zero): relative.  Measured maxima
# over the CI traces: positions 6e-6 (float32 worlds) / 8e-5 (float64; 3.5e-4 in a long 27m_vs_30m
# trace, where units nearly coincide), observations 1.2e-6 / 4.9e-6, cooldowns 9.5e-7 / 1.7e-6.
ONE_STEP_TOL = {
    "float32": {"unit_positions": (2e-5, 0), "obs": (2e-6, 0), "enemy_default_target": (2e-5, 0),
                "world_state": (2e-5, 0)},
    "float64": {"unit_positions": (1e-3, 0), "obs": (1e-4, 0), "enemy_default_target": (2e-5, 0),
                "world_state": (1e-3, 0)},
}
COMMON_TOL = {"unit_health": (1e-4, 0), "unit_weapon_cooldowns": (2e-6, 1e-6), "prev_movement_actions": (2e-6, 0),
              "reward": (2e-6, 0), "damage": (1e-4, 0)}
# Whole episodes: a world is compared while it is in step with JaxMARL's, i.e. until its units
# have drifted SYNC (10x float32 rounding at the map's scale) from JaxMARL's.  Crowded battles
# are chaotic: the rounding grows about 2x per step (JaxMARL against itself, its start
# positions moved by 2e-6, drifts 1e-4 by step 10 and 0.5 by step 22 on 25m), and once it is
# large enough a threshold (a range, a wall) decides differently on the two sides and they part
# for good.  While in step, every discrete outcome must be JaxMARL's and positions must stay
# within EPISODE_TOL's after the step (a bug moving a unit shows as a jump or a difference).
SYNC = 1e-5
EPISODE_TOL = {"unit_positions": (1e-3, 0), "obs": (2e-4, 0), "enemy_default_target": (1e-3, 0),
               "world_state": (1e-3, 0)}   # (world state: positions in map units, as unit_positions)


def tolerance(mode: str, field: str):
    """(atol, rtol) of ``field`` in ``mode`` ("float32"/"float64": one step; "episode"), None: exact."""
    table = {**COMMON_TOL, **(EPISODE_TOL if mode == "episode" else ONE_STEP_TOL[mode])}
    return table.get(field)


def compare(what: str, ours, theirs, tol=None, worlds=None, skip=None) -> None:
    """``ours`` (torch) equals ``theirs`` (numpy): exactly (ints, bools) or within ``tol`` =
    (atol, rtol): ``|ours - theirs| <= atol + rtol |theirs|``; ``skip`` (bool over the leading
    axes): entries not compared (:func:`ambiguous_observers`)."""
    ours = ours.detach().cpu().double().numpy() if ours.is_floating_point() else ours.detach().cpu().numpy()
    theirs = np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} vs JaxMARL's {theirs.shape}"
    if tol is None:
        bad = ours != theirs.astype(ours.dtype)
    else:
        atol, rtol = tol
        t = theirs.astype(np.float64)
        bad = ~(np.abs(ours - t) <= atol + rtol * np.abs(t))
    if skip is not None:
        bad &= ~skip.reshape(skip.shape + (1,) * (bad.ndim - skip.ndim))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"world {idx[0]}" if worlds is None else f"recorded step {worlds[idx[0]]}"
        err = "" if tol is None else (f", max |diff| {np.nanmax(np.abs(ours - theirs)):.3g} "
                                      f"(atol {tol[0]:g}, rtol {tol[1]:g})")
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} values differ; first at index {idx} "
                             f"({where}): ours {ours[idx]!r}, JaxMARL {theirs[idx]!r}{err}")


UNIT_TYPE_TABLES = {"sight": (9.0, 10.0, 10.0, 9.0, 8.0, 9.0), "range": (5.0, 6.0, 6.0, 2.0, 2.0, 5.0)}
ROUNDING = 1e-5  # map units: float32 rounding of relative positions, with margin


def ambiguous_observers(config: dict, theirs: dict, ours_positions=None) -> dict:
    """``{"obs": bool [W, A], "mask": bool [W, A]}``: units whose observation (available
    actions) may differ from JaxMARL's by rounding alone: another living unit lies, within the
    position difference between the two worlds plus float32 rounding, on a boundary of what the
    unit sees (its sight radius; with conic observations an edge of a section: the arctan and
    the positions' last bits decide the side) or of what it can shoot (its attack range).  A
    unit exactly on an edge in a loaded state (an equal coordinate: both sides compute the same
    angle) is not ambiguous; after a step it is (rounding may have made the coordinates equal on
    one side only)."""
    pos = np.asarray(theirs["unit_positions"], np.float64)  # [W, A, 2]
    alive = np.asarray(theirs["unit_alive"], bool)
    types = np.asarray(theirs["unit_types"], np.int64)
    err = np.full(pos.shape[0], ROUNDING)
    if ours_positions is not None:
        err += np.abs(np.asarray(ours_positions, np.float64) - pos).max(axis=(1, 2))
    margin = 2 * err[:, None, None]
    delta = pos[:, None, :, :] - pos[:, :, None, :]  # [W, i, k, 2]: unit k relative to observer i
    dist = np.linalg.norm(delta, axis=-1)
    pair = alive[:, :, None] & alive[:, None, :] & ~np.eye(pos.shape[1], dtype=bool)
    sight = np.asarray(config.get("unit_type_sight_ranges", UNIT_TYPE_TABLES["sight"]))[types][:, :, None]
    attack = np.asarray(config.get("unit_type_attack_ranges", UNIT_TYPE_TABLES["range"]))[types][:, :, None]
    obs = pair & (np.abs(dist - sight) < margin)
    if config.get("observation_type") == "conic":
        rel_x, rel_y = delta[..., 0] / sight, delta[..., 1] / sight  # JaxMARL's get_obs_conic angle
        with np.errstate(divide="ignore", invalid="ignore"):
            angle = np.arctan(rel_y / (rel_x + 1e-8)) + (rel_x < 0) * (2 * (rel_y > 0) - 1) * np.pi
        edges = 2 * np.pi * np.arange(33) / 32 - np.pi
        to_edge = np.abs(angle[..., None] - edges).min(-1) * dist  # arc length to the nearest edge
        on_edge_too = ours_positions is not None  # after a step an exact edge on one side is rounding too
        obs |= pair & ((to_edge > 0) | on_edge_too) & (to_edge < margin) & (dist < sight + margin)
    mask = pair & (np.abs(dist - attack) < margin)
    out = {"obs": obs.any(-1), "mask": mask.any(-1)}
    for name, rows in out.items():  # an exception, not a way out (measured: at most 2.2 % of the rows)
        assert rows.size < 100 or rows.mean() <= 0.05, f"{name}: {rows.mean():.1%} of the observers ambiguous"
    return out


def expected_flags(tr: dict, rows, na: int, config: dict) -> dict:
    """JaxMARL's step outputs as our per-group terminated/truncated and metrics."""
    alive = tr["after.unit_alive"][rows]
    before = tr["before.unit_health"][rows]
    after = tr["after.unit_health"][rows]
    ally_alive, enemy_alive = alive[:, :na], alive[:, na:]
    term = ~ally_alive.any(1) | ~enemy_alive.any(1)
    done = tr["done_all"][rows]
    trunc = done & ~term
    assert (done == term | (tr["before.step"][rows] >= config.get("max_steps", 100))).all()
    out = {"terminated": {}, "truncated": {}, "term_world": term, "trunc_world": trunc}
    for g, units in (("ally", ally_alive), ("enemy", enemy_alive)):
        out["terminated"][g] = term[:, None] | ~units
        out["truncated"][g] = trunc[:, None] & units
    out["won"] = (term & ~enemy_alive.any(1) & ally_alive.any(1)).astype(np.float64)
    out["allies_left"] = ally_alive.sum(1)
    out["enemies_left"] = enemy_alive.sum(1)
    out["damage"] = (before[:, na:] - after[:, na:]).sum(1)
    return out


def check_outputs(env, tr, rows, config, step_out, label: str, mode: str) -> None:
    """Everything one step of ours gave against JaxMARL's recorded step ``rows``."""
    obs, rew, term, trunc, info = step_out
    na, _ = sizes(config)
    groups = groups_of(config)
    state = env.get_state()
    theirs = state_rows(tr, "after", rows, config, torch.float64)
    for k, value in theirs.items():
        compare(f"{label}: state[{k!r}] after the step", state[k], value.numpy(), tolerance(mode, k), rows)
    vague = ambiguous_observers(config, {k: v.numpy() for k, v in theirs.items()}, state["unit_positions"].numpy())
    for g in groups:
        units = slice(0, na) if g == "ally" else slice(na, None)
        compare(f"{label}: obs[{g!r}]", obs[g], tr[f"obs_after.{g}"][rows], tolerance(mode, "obs"), rows,
                vague["obs"][:, units])
        compare(f"{label}: reward[{g!r}]", rew[g], tr[f"reward.{g}"][rows], tolerance(mode, "reward"), rows)
        if env.has_action_mask:
            compare(f"{label}: action_mask[{g!r}]", info["action_mask"][g], tr[f"avail_after.{g}"][rows], None, rows,
                    vague["mask"][:, units])
            compare(f"{label}: env.action_mask()[{g!r}]", env.action_mask()[g], tr[f"avail_after.{g}"][rows],
                    None, rows, vague["mask"][:, units])
    flags = expected_flags(tr, rows, na, config)
    for g in groups:
        compare(f"{label}: terminated[{g!r}]", term[g], flags["terminated"][g], None, rows)
        compare(f"{label}: truncated[{g!r}]", trunc[g], flags["truncated"][g], None, rows)
        units = slice(0, na) if g == "ally" else slice(na, None)
        compare(f"{label}: info['alive'][{g!r}]", info["alive"][g], tr["after.unit_alive"][rows][:, units], None, rows)
    compare(f"{label}: env.world_state()", env.world_state(), tr["world_state_after"][rows],
            tolerance(mode, "world_state"), rows)
    term_world, trunc_world = env.world_flags()
    compare(f"{label}: world_flags() terminated", term_world, flags["term_world"], None, rows)
    compare(f"{label}: world_flags() truncated", trunc_world, flags["trunc_world"], None, rows)
    compare(f"{label}: info['won']", info["won"], flags["won"], (0.0, 0.0), rows)
    compare(f"{label}: info['allies_left']", info["allies_left"], flags["allies_left"], None, rows)
    compare(f"{label}: info['enemies_left']", info["enemies_left"], flags["enemies_left"], None, rows)
    compare(f"{label}: info['damage']", info["damage"], flags["damage"], tolerance(mode, "damage"), rows)


def actions_at(tr, rows, config, num_envs: int, active=None) -> dict:
    """The recorded actions of ``rows`` per group (worlds outside ``active``: stop / zeros)."""
    out = {}
    for g in groups_of(config):
        a = torch.from_numpy(np.ascontiguousarray(tr[f"action.{g}"][rows]))
        a = a.long() if not a.is_floating_point() else a.float()
        if active is not None:
            full = torch.full((num_envs, *a.shape[1:]), 4, dtype=torch.long) if not a.is_floating_point() \
                else torch.full((num_envs, *a.shape[1:]), 0.5)
            full[active] = a
            a = full
        out[g] = a
    return out


def draws_at(tr, rows, num_envs: int, active=None) -> dict:
    out = {}
    for name in ("cooldown", "heuristic", "gumbel"):
        d = torch.from_numpy(np.ascontiguousarray(tr[f"draws.{name}"][rows])).double()
        if active is not None:
            full = torch.zeros((num_envs, *d.shape[1:]), dtype=torch.float64)
            full[active] = d
            d = full
        out[name] = d
    return out


def replay_one_step_each(tr: dict, config: dict, precision: str) -> None:
    """Every recorded step in its own world: load its state, inject its draws, play its actions."""
    T = tr["episode"].size
    rows = np.arange(T)
    with make_ours(config, T, precision, autoreset_mode="disabled") as env:
        env.reset()
        obs = env.set_state(state_rows(tr, "before", rows, config, env.torch_float))
        vague = ambiguous_observers(config, {k: tr[f"before.{k}"] for k in ("unit_positions", "unit_alive",
                                                                            "unit_types")})
        na, _ = sizes(config)
        for g in groups_of(config):
            units = slice(0, na) if g == "ally" else slice(na, None)
            compare(f"{precision}: obs[{g!r}] of the loaded state", obs[g], tr[f"obs_before.{g}"],
                    tolerance(precision, "obs"), rows, vague["obs"][:, units])
            if env.has_action_mask:
                compare(f"{precision}: action_mask[{g!r}] of the loaded state", env.action_mask()[g],
                        tr[f"avail_before.{g}"], None, rows, vague["mask"][:, units])
        compare(f"{precision}: env.world_state() of the loaded state", env.world_state(), tr["world_state_before"],
                tolerance(precision, "world_state"), rows)
        env.inject_draws(**draws_at(tr, rows, T))
        out = env.step(actions_at(tr, rows, config, T))
        check_outputs(env, tr, rows, config, out, f"{precision}, one step", precision)


def replay_episodes(tr: dict, config: dict) -> dict:
    """One float32 world per recorded episode, loaded at its first step and then only stepped
    with the recorded actions and draws; each world is compared at every step while in step
    with JaxMARL's (its position drift <= ``SYNC`` before the step).  Returns ``{"compared":
    steps compared, "steps": steps recorded, "whole": episodes compared to their end,
    "episodes": n, "chained": every episode compared at least 2 steps (the second from our own
    state) or whole}``."""
    episode = tr["episode"]
    n = int(episode.max()) + 1
    starts = np.array([np.flatnonzero(episode == k)[0] for k in range(n)])
    lengths = np.array([(episode == k).sum() for k in range(n)])
    drift = np.zeros(n)
    compared = np.zeros(n, dtype=np.int64)
    with make_ours(config, n, "float32", autoreset_mode="disabled") as env:
        env.reset()
        env.set_state(state_rows(tr, "before", starts, config, env.torch_float))
        for k in range(int(lengths.max())):
            check = np.flatnonzero((lengths > k) & (drift <= SYNC))  # the others stop
            if not check.size:
                break
            rows = starts[check] + k
            env.inject_draws(**draws_at(tr, rows, n, check))
            obs, rew, term, trunc, info = env.step(actions_at(tr, rows, config, n, check))
            sub = lambda d: {g: x[check] for g, x in d.items()}  # noqa: E731
            part = (sub(obs), sub(rew), sub(term), sub(trunc),
                    {"action_mask": sub(info.get("action_mask", {})), "alive": sub(info["alive"]),
                     **{m: info[m][check] for m in ("won", "allies_left", "enemies_left", "damage")}})
            check_outputs(_Subset(env, check), tr, rows, config, part, f"episode step {k}", "episode")
            compared[check] += 1
            pos = env.get_state()["unit_positions"][check].double().numpy()
            drift[check] = np.abs(pos - tr["after.unit_positions"][rows]).max(axis=(1, 2))
    return {"compared": int(compared.sum()), "steps": int(lengths.sum()), "whole": int((compared == lengths).sum()),
            "chained": bool((compared >= np.minimum(lengths, 2)).all())}


class _Subset:
    """The worlds ``active`` of an env, for :func:`check_outputs`."""

    def __init__(self, env, active) -> None:
        self.env, self.active = env, torch.as_tensor(active)
        self.has_action_mask = env.has_action_mask

    def get_state(self):
        return {k: v[self.active] for k, v in self.env.get_state().items()}

    def action_mask(self):
        return {g: v[self.active] for g, v in self.env.action_mask().items()}

    def world_flags(self):
        return tuple(x[self.active] for x in self.env.world_flags())

    def world_state(self):
        return self.env.world_state()[self.active]


# ----------------------------------------------------------------------------- traces
#: every map, heuristic enemies, discrete actions, unit-list observations: the CI set
MAP_CASES = [trace_case(f"map-{m}", steps=120, seed=i, map_name=m) for i, m in enumerate(sorted(MAPS))]
VARIANT_CASES = [
    trace_case("3m-continuous", action_type="continuous", map_name="3m", seed=11),
    trace_case("3m-random-attack", attack_mode="random", map_name="3m", seed=12),
    trace_case("2s3z-conic", observation_type="conic", map_name="2s3z", seed=13),
    trace_case("3s_vs_5z-conic-continuous-random", observation_type="conic", action_type="continuous",
               attack_mode="random", map_name="3s_vs_5z", seed=14),
    trace_case("5m_vs_6m-self-play", enemy="self_play", map_name="5m_vs_6m", steps=200, seed=15),
    trace_case("2s3z-self-play-continuous", enemy="self_play", action_type="continuous", map_name="2s3z",
               steps=200, seed=16),
    trace_case("3s5z-self-play-conic-no-enemy-actions", enemy="self_play", observation_type="conic",
               see_enemy_actions=False, map_name="3s5z", steps=200, seed=17),
    trace_case("3m-self-play-reward", enemy="self_play", use_self_play_reward=True, map_name="3m", steps=200, seed=18),
    trace_case("8m-walls-harmless", walls_cause_death=False, map_name="8m", seed=19),
    trace_case("smacv2_5_units-walls-harmless-no-enemy-actions", walls_cause_death=False,
               see_enemy_actions=False, map_name="smacv2_5_units", seed=20),
    trace_case("smacv2_10_units-continuous-random", action_type="continuous", attack_mode="random",
               map_name="smacv2_10_units", seed=21),
    trace_case("3m-enemy-holds-fire", enemy_shoots=False, map_name="3m", steps=60, seed=22),
    trace_case("custom-scenario", map_name=None, num_allies=4, num_enemies=3, unit_types=[1, 4, 5, 2, 0, 3, 1],
               map_width=24, map_height=20, max_steps=30, won_battle_bonus=2.5, seed=23),
    trace_case("custom-short-episodes-self-play", map_name=None, enemy="self_play", num_allies=2, num_enemies=3,
               max_steps=10, world_steps_per_env_step=5, time_per_step=0.1, seed=24),
]
FAST_CASES = MAP_CASES + VARIANT_CASES


@pytest.mark.parametrize("case", FAST_CASES, ids=lambda c: c.name)
def test_one_step_from_every_recorded_state_float32(reference, case):
    replay_one_step_each(reference.load(case), case.kwargs, "float32")


@pytest.mark.parametrize("case", FAST_CASES, ids=lambda c: c.name)
def test_one_step_from_every_recorded_state_float64(reference, case):
    replay_one_step_each(reference.load(case), case.kwargs, "float64")


@pytest.mark.parametrize("case", FAST_CASES, ids=lambda c: c.name)
def test_whole_episodes(reference, case):
    tr = reference.load(case)
    assert tr["done_all"].any(), "the trace should hold at least one whole episode"
    result = replay_episodes(tr, case.kwargs)
    assert result["chained"], result


def test_the_replay_can_fail(reference):
    """The same replay rejects wrong numbers: other cooldown draws, another heuristic draw (random
    attack mode), another recorded action."""
    case = VARIANT_CASES[[c.name for c in VARIANT_CASES].index("3m-random-attack")]
    tr = reference.load(case)
    wrong = dict(tr, **{"draws.cooldown": np.roll(tr["draws.cooldown"], 1, axis=1)})
    with pytest.raises(AssertionError, match="unit_weapon_cooldowns"):
        replay_one_step_each(wrong, case.kwargs, "float32")
    wrong = dict(tr, **{"draws.heuristic": 1 - tr["draws.heuristic"]})
    with pytest.raises(AssertionError, match="unit_positions|prev_attack_actions|enemy_last_attacked|unit_health"):
        replay_one_step_each(wrong, case.kwargs, "float32")
    wrong = dict(tr, **{"action.ally": np.full_like(tr["action.ally"], 4)})  # every ally stops
    with pytest.raises(AssertionError, match="prev_movement_actions|prev_attack_actions|unit_positions"):
        replay_one_step_each(wrong, case.kwargs, "float32")


#: longer traces, every map in both observation types, continuous actions and self-play
SLOW_CASES = [trace_case(f"long-{m}-{obs}-{act}-{enemy}", steps=400, seed=100 + i, map_name=m,
                         observation_type=obs, action_type=act, enemy=enemy)
              for i, (m, obs, act, enemy) in enumerate(
                  (m, obs, act, enemy) for m in sorted(MAPS) for obs in ("unit_list", "conic")
                  for act, enemy in (("discrete", "heuristic"), ("continuous", "self_play")))]


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_CASES, ids=lambda c: c.name)
def test_long_traces(reference, case):
    tr = reference.load(case)
    replay_one_step_each(tr, case.kwargs, "float32")
    replay_one_step_each(tr, case.kwargs, "float64")
    assert replay_episodes(tr, case.kwargs)["chained"]


CHECK_CASES = [dataclasses.replace(c, args=c.args + ("--check",)) for c in (
    trace_case("check-heuristic-random-continuous", steps=40, seed=31, map_name="3s_vs_5z", attack_mode="random",
               action_type="continuous"),
    trace_case("check-self-play-continuous", steps=40, seed=32, map_name="2s3z", enemy="self_play",
               action_type="continuous"),
    trace_case("check-heuristic-closest", steps=40, seed=33, map_name="smacv2_5_units"))]


@pytest.mark.parametrize("case", CHECK_CASES, ids=lambda c: c.name)
def test_the_recovered_draws_are_jaxmarls(reference, case):
    """tests/smax_reference.py --check: from the recorded numbers, numpy recomputes the
    heuristic's actions and state, the continuous decoding and every world step's health and
    cooldowns, and finds JaxMARL's; the draws the replay tests inject are JaxMARL's own."""
    assert int(reference.load(case)["checked_steps"]) == 40


# ----------------------------------------------------------------------------- in-step random numbers
# Our worlds draw a step's random numbers from their own streams (the replays above inject
# JaxMARL's): their distributions, seen through what they decide, against JaxMARL's.
P_MIN = 1e-5  # every statistical test here: p-value >= P_MIN (several tests per case)


def _battle(config: dict, num_envs: int, positions, **state):
    """An env whose every world holds ``positions`` (full health, weapons ready, + ``state``)."""
    env = make_ours(config, num_envs)
    env.reset()
    s = env.get_state()
    s["unit_positions"] = torch.tensor(positions, dtype=env.torch_float).expand_as(s["unit_positions"]).clone()
    s["unit_weapon_cooldowns"].zero_()
    for k, v in state.items():
        s[k] = torch.as_tensor(v, dtype=s[k].dtype).expand_as(s[k]).clone()
    env.set_state(s)
    return env


CLOSE_3M = [[10, 15], [10, 16.5], [10, 18], [13, 15], [13, 16.5], [13, 18]]  # everyone in range


def test_cooldown_jitter_is_distributed_as_jaxmarls(reference):
    """Every unit of 3m attacks at the first world step; its cooldown after the env step is
    0.61 + U(-tps, 2 tps) - 7 tps: uniform (one-sample KS), as JaxMARL's recorded jitter
    (two-sample KS), independent between units (correlation)."""
    from scipy import stats

    E, tps = 4000, 1 / 16
    with _battle({"map_name": "3m"}, E, CLOSE_3M) as env:
        env.step({"ally": torch.full((E, 3), 5)})
        s = env.get_state()
        assert (s["prev_attack_actions"] >= 5).all() and s["unit_alive"].all()
        dev = (s["unit_weapon_cooldowns"].double() - 0.61 + 7 * tps).numpy()  # [E, 6]
    theirs = reference.load(MAP_CASES[[c.name for c in MAP_CASES].index("map-3m")])["draws.cooldown"]
    theirs = theirs.astype(np.float64).reshape(-1) * 3 * tps - tps
    assert stats.kstest(dev.reshape(-1), "uniform", args=(-tps, 3 * tps)).pvalue >= P_MIN
    assert stats.ks_2samp(dev.reshape(-1), theirs).pvalue >= P_MIN
    r = np.corrcoef(dev.T)[np.triu_indices(6, 1)]
    assert np.abs(r).max() < 5 / math.sqrt(E), f"jitter correlated between units: {r}"


def test_heuristic_random_choices_are_uniform():
    """attack_mode="random": each enemy attacks one of the 3 allies in range uniformly
    (chi-square), the enemies independently; with none in range it walks towards one of the
    visible ones uniformly (JaxMARL's jax.random.choice over the masks)."""
    from scipy import stats

    E = 4000
    with _battle({"map_name": "3m", "attack_mode": "random"}, E, CLOSE_3M) as env:
        env.step({"ally": torch.full((E, 3), 4)})
        target = (env.get_state()["prev_attack_actions"][:, 3:] - 5).numpy()  # [E, 3 enemies]
    assert ((target >= 0) & (target < 3)).all()
    for e in range(3):
        assert stats.chisquare(np.bincount(target[:, e], minlength=3)).pvalue >= P_MIN
    table = np.histogram2d(target[:, 0], target[:, 1], bins=[np.arange(4) - 0.5] * 2)[0]
    assert stats.chi2_contingency(table).pvalue >= P_MIN
    # one enemy, allies 7 away north, east and south: visible (sight 9), out of range (5)
    config = {"map_name": None, "num_allies": 3, "num_enemies": 1, "attack_mode": "random"}
    with _battle(config, E, [[16, 23], [23, 16], [16, 9], [16, 16]]) as env:
        env.step({"ally": torch.full((E, 3), 4)})
        move = env.get_state()["prev_movement_actions"][:, 3].numpy()
    direction = np.argmax(np.stack([move[:, 1], move[:, 0], -move[:, 1]], 1), 1)  # north, east, south
    assert np.abs(np.abs(move).max(1) - 1).max() < 1e-5
    assert stats.chisquare(np.bincount(direction, minlength=3)).pvalue >= P_MIN


def test_continuous_decoding_draws_as_jaxmarl():
    """Continuous actions (shoot_last_enemy 0.25, do_shoot 0.3): JaxMARL's two Gumbel-max
    categoricals over ``[log p, log(1 - p)]`` pick class 0 with probability p, and class 0 means
    *move* for do_shoot and *not the last target* for shoot_last_enemy: a unit moves with
    probability 0.3, else shoots its last target (enemy 2) with probability 0.75 or the enemy
    nearest its aim (enemy 0) with 0.25; per unit independently."""
    from scipy import stats

    E = 4000
    aim_at_enemy_0 = [[10, 15], [10, 16.5], [10, 18], [13, 16.5], [13, 13], [13, 20]]  # aims: 1 east of each ally
    with _battle({"map_name": "3m", "action_type": "continuous"}, E, aim_at_enemy_0,
                 prev_attack_actions=[7, 7, 7, 0, 0, 0]) as env:
        env.step({"ally": torch.tensor([0.25, 0.3, 1.0, 0.0]).expand(E, 3, 4)})
        s = env.get_state()
    attack = s["prev_attack_actions"][:, :3].numpy()
    moved = s["prev_movement_actions"][:, :3].abs().sum(-1).numpy() > 0
    assert ((attack == 0) == moved).all()
    outcome = np.where(attack == 0, 0, np.where(attack == 7, 1, 2)).reshape(-1)
    assert set(np.unique(attack)) <= {0, 5, 7}
    expected = np.array([0.3, 0.7 * 0.75, 0.7 * 0.25]) * outcome.size
    assert stats.chisquare(np.bincount(outcome, minlength=3), expected).pvalue >= P_MIN
    table = np.histogram2d(outcome.reshape(E, 3)[:, 0], outcome.reshape(E, 3)[:, 1],
                           bins=[np.arange(4) - 0.5] * 2)[0]
    assert stats.chi2_contingency(table).pvalue >= P_MIN


# ----------------------------------------------------------------------------- start states
def reset_case(name: str, n: int = 10_000, seed: int = 0, **config) -> Case:
    return Case(f"resets-{name}", json.dumps(config, sort_keys=True), "resets", ("--n", n, "--seed", seed))


def our_resets(config: dict, n: int, chunk: int = 1250) -> dict:
    """``n`` start states of ours: one env of ``chunk`` worlds reset ``n / chunk`` times."""
    parts = []
    with make_ours(config, chunk) as env:
        for _ in range(-(-n // chunk)):
            env.reset()
            parts.append({k: v.clone() for k, v in env.get_state().items()})
    assert not torch.equal(parts[0]["unit_positions"], parts[-1]["unit_positions"])
    return {k: torch.cat([p[k] for p in parts])[:n].numpy() for k in ("unit_positions", "unit_types", "unit_health")}


def reset_features(state: dict, na: int) -> dict:
    """Per-unit coordinates and joint features of a batch of start states."""
    pos = state["unit_positions"].astype(np.float64)
    feats = {f"unit {i} {'xy'[c]}": pos[:, i, c] for i in range(pos.shape[1]) for c in (0, 1)}
    feats["ally 0 - ally 1 distance" if na > 1 else "ally 0 - enemy 0 distance"] = np.linalg.norm(
        pos[:, 0] - pos[:, 1], axis=-1)
    feats["ally centroid x"] = pos[:, :na, 0].mean(1)
    feats["enemy centroid y"] = pos[:, na:, 1].mean(1)
    feats["ally 0 - enemy 0 distance"] = np.linalg.norm(pos[:, 0] - pos[:, na], axis=-1)
    return feats


def check_reset_distributions(theirs: dict, ours: dict, config: dict, p_min: float = 1e-5) -> None:
    from scipy import stats

    na, ne = sizes(config)
    smacv2 = config.get("smacv2_unit_type_generation", False) or \
        (config.get("map_name") is not None and MAPS[config["map_name"]].smacv2_unit_type_generation)
    for side, s in (("JaxMARL", theirs), ("ours", ours)):
        types = s["unit_types"].astype(np.int64)
        if smacv2:
            # JaxMARL's UniformUnitTypeDistribution: enemies mirror the allies (extra enemies: type 0)
            k = min(na, ne)
            assert (types[:, na:na + k] == types[:, :k]).all(), side
            assert (types[:, na + k:] == 0).all(), side
        else:
            spec = MAPS[config["map_name"]].unit_types if config.get("map_name") else \
                tuple(config.get("unit_types", (0,) * (na + ne)))
            assert (types == np.asarray(spec)).all(), side
        assert (s["unit_health"] > 0).all(), side
    assert np.array_equal(np.unique(theirs["unit_health"]), np.unique(ours["unit_health"]))
    bad = []
    if smacv2:
        for i in range(na):
            table = np.stack([np.bincount(s["unit_types"][:, i].astype(np.int64), minlength=6)
                              for s in (ours, theirs)])
            table = table[:, table.sum(0) > 0]
            p = stats.chi2_contingency(table).pvalue
            if p < p_min:
                bad.append(f"unit {i} type counts: chi-square p = {p:.2g} (ours {table[0]}, JaxMARL {table[1]})")
    f_ours, f_theirs = reset_features(ours, na), reset_features(theirs, na)
    for name in f_ours:
        res = stats.ks_2samp(f_ours[name], f_theirs[name])
        if res.pvalue < p_min:
            bad.append(f"{name}: KS D = {res.statistic:.4f}, p = {res.pvalue:.2g} (means {f_ours[name].mean():.4f} "
                       f"vs {f_theirs[name].mean():.4f})")
    assert not bad, "start states differ from JaxMARL's:\n" + "\n".join(bad)


RESET_CASES = [reset_case(m, map_name=m) for m in ("3m", "2s3z", "27m_vs_30m", "6h_vs_8z", "smacv2_5_units",
                                                   "smacv2_10_units", "smacv2_20_units")] + [
    reset_case("custom-smacv2-more-enemies", map_name=None, num_allies=3, num_enemies=5, map_width=40,
               map_height=24, smacv2_position_generation=True, smacv2_unit_type_generation=True),
]
SLOW_RESET_CASES = [reset_case(f"slow-{m}", seed=1, map_name=m) for m in sorted(MAPS)]


@pytest.mark.parametrize("case", RESET_CASES, ids=lambda c: c.name)
def test_start_states_are_distributed_as_jaxmarls(reference, case):
    check_reset_distributions(reference.load(case), our_resets(case.kwargs, 10_000), case.kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_RESET_CASES, ids=lambda c: c.name)
def test_start_states_of_every_map(reference, case):
    check_reset_distributions(reference.load(case), our_resets(case.kwargs, 10_000), case.kwargs)


def test_the_reset_comparison_can_fail(reference):
    """The same comparison rejects start states drawn with half JaxMARL's noise."""
    case = RESET_CASES[0]
    theirs = reference.load(case)
    ours = our_resets(case.kwargs, 10_000)
    centre = np.array([[8.0, 16.0]] * 3 + [[24.0, 16.0]] * 3)
    ours["unit_positions"] = (centre + (ours["unit_positions"] - centre) * 0.9).astype(np.float32)
    with pytest.raises(AssertionError, match="KS D"):
        check_reset_distributions(theirs, ours, case.kwargs)


# ----------------------------------------------------------------------------- random policy
def _benchmark():
    spec = importlib.util.spec_from_file_location("smax_random_policy",
                                                  HERE.parent / "benchmarks" / "smax_random_policy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_case(map_name: str, worlds: int, per_world: int, seed: int = 0) -> Case:
    return Case(f"random-{map_name}", json.dumps({"map_name": map_name}), "random_stats",
                ("--worlds", worlds, "--episodes-per-world", per_world, "--seed", seed))


def check_random_policy(reference, case: Case) -> None:
    bench = _benchmark()
    worlds, per_world = int(case.args[1]), int(case.args[3])
    theirs = reference.load(case)
    ours = bench.ours(case.kwargs["map_name"], worlds, per_world, seed=7)
    record = bench.compare(case.kwargs["map_name"], ours, theirs)
    assert ours["length"].size == theirs["length"].size == worlds * per_world
    far = {m: record[m] for m in bench.METRICS if not abs(record[m]["z"]) <= bench.Z_LIMIT}
    assert not far, f"{case.kwargs['map_name']}: random-policy statistics differ from JaxMARL's: {far}"


@pytest.mark.parametrize("case", [random_case("3m", 128, 8), random_case("2s3z", 64, 8)], ids=lambda c: c.name)
def test_random_policy_statistics_match_jaxmarl(reference, case):
    check_random_policy(reference, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", [random_case(m, 256, 8, seed=1) for m in sorted(MAPS)], ids=lambda c: c.name)
def test_random_policy_statistics_every_map(reference, case):
    check_random_policy(reference, case)
