"""Replays our MPE worlds in mpe2 (the reference) from identical states with identical actions.

Generic over the MPE scenarios: a scenario class names its mpe2 module (``mpe2_module``); the
world's shared state (positions, velocities, communication, accelerations, speed caps) is copied
here, and a test passes ``copy_extra(ours, raw, world)`` for the scenario's own state (goals,
colours, keys) and, where mpe2 draws it, ``from_reference(ours, raw)`` to start our world from
mpe2's reset instead.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import torch

import war_envs
from war_envs.registry import scenario_class


def make_reference(env_id: str, **kwargs):
    """An mpe2 ParallelEnv with the same arguments, and its raw (unwrapped) env."""
    import importlib

    module = importlib.import_module(f"mpe2.{scenario_class(env_id).mpe2_module}")
    par = module.parallel_env(**kwargs)
    par.reset(seed=0)
    return par, par.aec_env.unwrapped


def fix_reference_curriculum(raw) -> None:
    """mpe2 1.1.1's curriculum stage API is a no-op: ``BaseScenario.curriculum_stage`` is a
    property whose setter does nothing, and it shadows the scenarios' ``self.curriculum_stage
    = ...``, so every episode runs stage 0.  Give this one reference instance a working stage
    attribute so later stages can be compared with the documented semantics."""
    base = type(raw.scenario)
    stage = property(lambda s: s.__dict__.get("_stage", 0),
                     lambda s, value: s.__dict__.__setitem__("_stage", value))
    raw.scenario.__class__ = type(base.__name__, (base,), {"curriculum_stage": stage})


def copy_world_into_reference(ours, raw, world: int = 0, copy_extra=None) -> None:
    """Overwrite mpe2's world with world ``world`` of our env (positions, velocities,
    communication state, and the per-agent accel / max speed that PredatorPrey's curriculum sets
    at reset); then ``copy_extra(ours, raw, world)`` for the scenario's own state."""
    state = ours.get_state()
    pos = state["agent_pos"][world].double().numpy()
    vel = state["agent_vel"][world].double().numpy()
    lpos = state["landmark_pos"][world].double().numpy()
    comm = state["agent_comm"][world].double().numpy() if "agent_comm" in state else None
    for i, agent in enumerate(raw.world.agents):
        agent.state.p_pos = pos[i].copy()
        agent.state.p_vel = vel[i].copy()
        if comm is not None:
            agent.state.c = comm[i, :raw.world.dim_c].copy()
        if agent.max_speed is not None:
            agent.max_speed = float(state["agent_max_speed"][world, i])
        if agent.accel is not None:
            agent.accel = float(state["agent_accel"][world, i])
    for l, landmark in enumerate(raw.world.landmarks):
        landmark.state.p_pos = lpos[l].copy()
    if copy_extra is not None:
        copy_extra(ours, raw, world)


def reference_world(raw):
    world = raw.world
    pos = np.array([a.state.p_pos for a in world.agents])
    vel = np.array([a.state.p_vel for a in world.agents])
    return pos, vel


def random_actions(rng: np.random.Generator, ours, steps: int):
    """A list of per-step action dicts {group: array[1, n_g(, d)]} for world 0, drawn from each
    group's action space (Discrete(n): uniform integers; Box: uniform in [0, 1))."""
    out = []
    for _ in range(steps):
        step = {}
        for g, spec in ours.groups.items():
            space = spec.action_space
            if isinstance(space, gymnasium.spaces.Discrete):
                step[g] = rng.integers(0, int(space.n), (1, spec.n_agents)).astype(np.int64)
            else:
                step[g] = rng.random((1, spec.n_agents, *space.shape), dtype=np.float32)
        out.append(step)
    return out


def to_reference_actions(ours, step) -> dict:
    actions = {}
    for g, spec in ours.groups.items():
        discrete = isinstance(spec.action_space, gymnasium.spaces.Discrete)
        for k, name in enumerate(spec.agents):
            a = step[g][0, k]
            actions[name] = int(a) if discrete else a.copy()
    return actions


def compare_episode(env_id: str, *, precision: str, steps: int | None = None, seed: int = 0,
                    start_state: dict | None = None, stage: int | None = None,
                    action_seed: int = 1, copy_extra=None, **kwargs):
    """Run one episode in both implementations; returns per-step max abs errors and flags.

    ``start_state`` (optional) is written with ``set_state`` before copying into mpe2;
    ``copy_extra`` copies the scenario's own state (see ``copy_world_into_reference``).
    """
    ours = war_envs.make(env_id, num_envs=1, seed=seed, precision=precision,
                         autoreset_mode="disabled", **kwargs)
    par, raw = make_reference(env_id, **kwargs)
    if stage is not None:
        fix_reference_curriculum(raw)
        ours.set_curriculum_stage(stage)
        raw.set_curriculum_stage(stage)
        assert raw.curriculum_stage == stage
    ours.reset()
    if stage is not None:
        # mpe2 applies PredatorPrey's stage at reset_world: replay that on the reference
        par.reset(seed=0)
    if start_state is not None:
        ours.set_state(start_state)
    copy_world_into_reference(ours, raw, copy_extra=copy_extra)
    steps = steps or ours.max_cycles
    rng = np.random.default_rng(action_seed)
    report = {"pos": 0.0, "vel": 0.0, "comm": 0.0, "rew": 0.0, "obs": 0.0, "obs_rel": 0.0,
              "flags_equal": True, "steps": 0, "terminated_at": None}
    for t, step in enumerate(random_actions(rng, ours, steps)):
        if not par.agents:
            break
        obs, rew, term, trunc, info = ours.step({g: torch.from_numpy(a) for g, a in step.items()})
        r_obs, r_rew, r_term, r_trunc, _ = par.step(to_reference_actions(ours, step))
        pos, vel = reference_world(raw)
        s = ours.get_state()
        report["pos"] = max(report["pos"], float(np.abs(s["agent_pos"][0].double().numpy() - pos).max()))
        report["vel"] = max(report["vel"], float(np.abs(s["agent_vel"][0].double().numpy() - vel).max()))
        if "agent_comm" in s:
            ref_c = np.array([a.state.c for a in raw.world.agents], dtype=np.float64)
            ours_c = s["agent_comm"][0, :, :raw.world.dim_c].double().numpy()
            report["comm"] = max(report["comm"], float(np.abs(ours_c - ref_c).max(initial=0.0)))
        for g, spec in ours.groups.items():
            for k, name in enumerate(spec.agents):
                ours_o = obs[g][0, k].double().numpy()
                ref_o = np.asarray(r_obs[name], dtype=np.float64)
                err = np.abs(ours_o - ref_o)
                report["obs"] = max(report["obs"], float(err.max(initial=0.0)))
                report["obs_rel"] = max(report["obs_rel"], float(
                    (err / np.maximum(1.0, np.abs(ref_o))).max(initial=0.0)))
                report["rew"] = max(report["rew"], abs(float(rew[g][0, k]) - float(r_rew[name])))
                if bool(term[g][0, k]) != bool(r_term[name]) or bool(trunc[g][0, k]) != bool(r_trunc[name]):
                    report["flags_equal"] = False
        report["steps"] = t + 1
        if any(r_term.values()) and report["terminated_at"] is None:
            report["terminated_at"] = t + 1
    ours.close()
    par.close()
    return report
