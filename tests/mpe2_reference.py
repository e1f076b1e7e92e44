"""Replays our MPE worlds in mpe2 (the reference) from identical states with identical actions."""

from __future__ import annotations

import numpy as np
import torch

import war_envs

MPE2_MODULES = {"Spread-v0": "simple_spread_v3", "PredatorPrey-v0": "simple_tag_v3"}


def make_reference(env_id: str, **kwargs):
    """An mpe2 ParallelEnv with the same arguments, and its raw (unwrapped) env."""
    import importlib

    module = importlib.import_module(f"mpe2.{MPE2_MODULES[env_id]}")
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


def copy_world_into_reference(ours, raw, world: int = 0) -> None:
    """Overwrite mpe2's world with world ``world`` of our env (positions, velocities, and the
    per-agent accel / max speed that PredatorPrey's curriculum sets at reset)."""
    state = ours.get_state()
    pos = state["agent_pos"][world].double().numpy()
    vel = state["agent_vel"][world].double().numpy()
    lpos = state["landmark_pos"][world].double().numpy()
    for i, agent in enumerate(raw.world.agents):
        agent.state.p_pos = pos[i].copy()
        agent.state.p_vel = vel[i].copy()
        if agent.max_speed is not None:
            agent.max_speed = float(state["agent_max_speed"][world, i])
        if agent.accel is not None:
            agent.accel = float(state["agent_accel"][world, i])
    for l, landmark in enumerate(raw.world.landmarks):
        landmark.state.p_pos = lpos[l].copy()


def reference_world(raw):
    world = raw.world
    pos = np.array([a.state.p_pos for a in world.agents])
    vel = np.array([a.state.p_vel for a in world.agents])
    return pos, vel


def random_actions(rng: np.random.Generator, ours, steps: int):
    """A list of per-step action dicts {group: array[1, n_g(, 5)]} for world 0."""
    out = []
    for _ in range(steps):
        step = {}
        for g, spec in ours.groups.items():
            if ours.continuous_actions:
                step[g] = rng.random((1, spec.n_agents, 5), dtype=np.float32)
            else:
                step[g] = rng.integers(0, 5, (1, spec.n_agents)).astype(np.int64)
        out.append(step)
    return out


def to_reference_actions(ours, step) -> dict:
    actions = {}
    for g, spec in ours.groups.items():
        for k, name in enumerate(spec.agents):
            a = step[g][0, k]
            actions[name] = a.copy() if ours.continuous_actions else int(a)
    return actions


def compare_episode(env_id: str, *, precision: str, steps: int | None = None, seed: int = 0,
                    start_state: dict | None = None, stage: int | None = None,
                    action_seed: int = 1, **kwargs):
    """Run one episode in both implementations; returns per-step max abs errors and flags.

    ``start_state`` (optional) is written with ``set_state`` before copying into mpe2.
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
    copy_world_into_reference(ours, raw)
    steps = steps or ours.max_cycles
    rng = np.random.default_rng(action_seed)
    report = {"pos": 0.0, "vel": 0.0, "rew": 0.0, "obs": 0.0, "obs_rel": 0.0,
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
