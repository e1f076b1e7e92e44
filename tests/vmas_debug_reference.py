"""What the tests of VMAS's debug scenarios (Goal-v0, HetMass-v0, VelControl-v0,
LineTrajectory-v0, CircleTrajectory-v0) share on top of tests/vmas_reference.py: random-policy
returns on both sides and their comparison within standard errors, VMAS's per-world starts, and
the controller / delay-queue state read off VMAS's objects."""

from __future__ import annotations

import math

import numpy as np
import torch
import vmas_reference as R

import war_envs


def controller_state(agents) -> dict[str, torch.Tensor]:
    """VMAS's ``controller.accum_errs`` / ``prev_err`` of ``agents`` as ``[E, n, 2]``."""
    return {"accum_errs": torch.stack([a.controller.accum_errs for a in agents], dim=1),
            "prev_err": torch.stack([a.controller.prev_err for a in agents], dim=1)}


def queue_state(vm) -> dict[str, torch.Tensor]:
    """A one-agent scenario's ``input_queue`` (a list of ``dt_delay`` ``[E, 2]`` commands) as
    ``[E, 1, dt_delay, 2]``."""
    if vm.scenario.dt_delay == 0:
        return {}
    return {"input_queue": torch.stack(vm.scenario.input_queue, dim=1)[:, None]}


def vmas_starts(scenario: str, n: int, **kwargs) -> dict[str, torch.Tensor]:
    """VMAS's state after ``reset_world_at(i)`` of each of ``n`` worlds (per-world draws)."""
    vm = R.make_vmas(scenario, n, 0, True, **kwargs)
    for i in range(n):
        vm.scenario.reset_world_at(i)
    return R.vmas_state(vm)


def our_starts(env_id: str, n: int, seed: int = 5, **kwargs) -> dict[str, torch.Tensor]:
    env = war_envs.make(env_id, num_envs=n, **kwargs)
    env.reset(seed=seed)
    return env.get_state()


def vmas_returns(scenario: str, n: int, steps: int, seed: int = 0, per_world_reset: bool = True, start=None,
                 **kwargs) -> np.ndarray:
    """Per-world returns (summed over the agents) of ``steps`` steps of uniform random actions
    over each agent's action box, from VMAS's per-world starts (``reset_world_at(i)``; then
    ``start(vm)`` where given: the bite tests' changed starts)."""
    vm = R.make_vmas(scenario, n, seed, True, max_steps=steps, **kwargs)
    if per_world_reset:
        for i in range(n):
            vm.scenario.reset_world_at(i)
    if start is not None:
        start(vm)
    gen = torch.Generator().manual_seed(seed + 1)
    total = torch.zeros(n, dtype=torch.float64)
    for _ in range(steps):
        acts = []
        for i in range(len(vm.agents)):
            high = torch.as_tensor(vm.action_space[i].high)
            acts.append((torch.rand(n, len(high), generator=gen) * 2 - 1) * high)
        _, rew, _, _ = vm.step(acts)
        total += torch.stack([r.reshape(n) for r in rew], 1).double().sum(1)
    return total.numpy()


def our_returns(env_id: str, n: int, steps: int, seed: int = 0, **kwargs) -> np.ndarray:
    """Ours, as ``vmas_returns``: our own starts and random numbers."""
    env = war_envs.make(env_id, num_envs=n, max_steps=steps, autoreset_mode="disabled", **kwargs)
    env.reset(seed=seed)
    spec = env.groups["agents"]
    high = torch.as_tensor(spec.action_space.high)
    gen = torch.Generator().manual_seed(seed + 7)
    total = torch.zeros(n, dtype=torch.float64)
    for _ in range(steps):
        u = (torch.rand(n, len(spec.agents), len(high), generator=gen) * 2 - 1) * high
        _, rew, _, _, _ = env.step({"agents": u})
        total += rew["agents"].double().sum(1)
    return total.numpy()


def agree(a: np.ndarray, b: np.ndarray, k: float = 4.0) -> bool:
    """Means and standard deviations of two samples equal within ``k`` standard errors."""
    se_mean = math.sqrt(a.var() / len(a) + b.var() / len(b))
    se_std = math.sqrt(a.var() / (2 * len(a)) + b.var() / (2 * len(b)))
    return abs(a.mean() - b.mean()) <= k * se_mean and abs(a.std() - b.std()) <= k * se_std


def check_observation_noise(vm, ours, noise: float, steps: int = 10) -> None:
    """``obs_noise`` of a one-agent scenario: VMAS run without noise beside ours with it, from
    the same state (copied already): ours minus VMAS's observation is U(-noise, noise) (KS
    against the uniform law), fresh every step and for every entry."""
    gen = torch.Generator().manual_seed(3)
    deltas = []
    for _ in range(steps):
        acts, ours_acts = R.random_actions(vm, ours, gen)
        obs = torch.stack(vm.step(acts)[0], dim=1)
        deltas.append(ours.step(ours_acts)[0]["agents"] - obs)
    d = torch.stack(deltas)
    assert float(d.abs().max()) <= noise * (1 + 1e-4)
    u = d.flatten().numpy()
    ref = np.random.default_rng(0).uniform(-noise, noise, len(u))
    assert R.ks_statistic(u, ref) < R.ks_critical(len(u), len(ref))
    assert float((d[1:] != d[:-1]).float().mean()) > 0.99
    assert float((d[..., 1:] != d[..., :-1]).float().mean()) > 0.99


def vmas_twin_horizon(scenario: str, env_id: str, steps: int, *, num_envs: int = 8, seed: int = 0,
                      continuous: bool = True, start=None, **kwargs) -> int:
    """How many steps VMAS's own episode (``whole_episode``'s: the same start, ``start(vm)``,
    and random actions) and a twin of it, every agent's start moved by one float32 ulp, stay
    within the episode tolerance of each other (every body's state): how far a chaotic
    scenario's free-running comparison can go."""
    vm = R.make_vmas(scenario, num_envs, seed, continuous, max_steps=steps, **kwargs)
    twin = R.make_vmas(scenario, num_envs, seed, continuous, max_steps=steps, **kwargs)
    if start is not None:
        start(vm)
    state = R.vmas_state(vm)
    n_landmarks = len(vm.world.landmarks)
    state["pos"][:, n_landmarks:] = torch.from_numpy(np.nextafter(state["pos"][:, n_landmarks:].numpy(),
                                                                  np.float32(10)))
    R.set_vmas_state(twin, state)
    ours = R.make_ours(env_id, num_envs, continuous, max_steps=steps, **kwargs)  # (random_actions' groups)
    gen = torch.Generator().manual_seed(seed + 1)
    for t in range(steps):
        acts, _ = R.random_actions(vm, ours, gen)
        vm.step(acts)
        twin.step(acts)
        a, b = R.vmas_state(vm), R.vmas_state(twin)
        if not all(torch.allclose(a[k], b[k], **R.EPISODE_TOL) for k in a):
            return t
    return steps


def float64_against_vmas(env_id: str, scenario: str, *, steps: int = 30, num_envs: int = 16, seed: int = 0,
                         free_running: bool = False, extra_state=None, info_keys=(), start=None, tol=None,
                         **kwargs) -> None:
    """Float64 worlds against VMAS (float32 only) from VMAS's start (``start(vm)`` first): one
    step from each of VMAS's states (``free_running=False``, ``STEP_TOL``) or a whole
    free-running episode (``EPISODE_TOL``), within float32 rounding."""
    vm = R.make_vmas(scenario, num_envs, seed, True, max_steps=steps, **kwargs)
    if start is not None:
        start(vm)
    ours = R.make_ours(env_id, num_envs, True, max_steps=steps, precision="float64", **kwargs)
    tol = tol or (R.EPISODE_TOL if free_running else R.STEP_TOL)
    gen = torch.Generator().manual_seed(seed + 1)
    R.copy_state(vm, ours, extra_state)
    for t in range(steps):
        if not free_running and t > 0:
            R.copy_state(vm, ours, extra_state)
        acts, ours_acts = R.random_actions(vm, ours, gen)
        R.compare_outputs(f"{env_id} float64 step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), tol,
                          info_keys)


def check_reset_empties_delay_queue(env_id: str) -> None:
    """Our deliberate change to VMAS's dynamics (Goal-v0, CircleTrajectory-v0): a reset empties
    the ``dt_delay`` queue, so the first step after it moves nothing (the queued command is 0)."""
    env = war_envs.make(env_id, num_envs=3, dt_delay=2, max_steps=10)
    env.reset(seed=1)
    for _ in range(3):
        env.step({"agents": torch.full((3, 1, 2), 0.4)})
    assert bool((env.get_state()["input_queue"] != 0).any())
    env.reset(seed=1)
    assert bool((env.get_state()["input_queue"] == 0).all())
    start = env.get_state()
    env.step({"agents": torch.full((3, 1, 2), 0.4)})
    torch.testing.assert_close(env.get_state()["pos"], start["pos"], rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# The dynamics debug scenarios (DiffDrive-v0, KinematicBicycle-v0, Drone-v0): several groups of
# different action sizes, no reward
# ---------------------------------------------------------------------------------------------


def vmas_random_rollout(scenario: str, n: int, steps: int, seed: int = 0, **kwargs) -> dict[str, torch.Tensor]:
    """VMAS's bodies (``vmas_state``) after ``steps`` steps of uniform random actions over each
    agent's action box, from VMAS's per-world starts (``reset_world_at(i)``)."""
    vm = R.make_vmas(scenario, n, seed, True, max_steps=steps, **kwargs)
    for i in range(n):
        vm.scenario.reset_world_at(i)
    highs = [torch.as_tensor(space.high) for space in vm.action_space]
    gen = torch.Generator().manual_seed(seed + 1)
    for _ in range(steps):
        vm.step([(torch.rand(n, len(high), generator=gen) * 2 - 1) * high for high in highs])
    return R.vmas_state(vm)


def our_random_rollout(env_id: str, n: int, steps: int, seed: int = 0, **kwargs) -> dict[str, torch.Tensor]:
    """Ours, as ``vmas_random_rollout``: our own starts and random numbers, every group."""
    env = war_envs.make(env_id, num_envs=n, max_steps=steps, autoreset_mode="disabled", **kwargs)
    env.reset(seed=seed)
    gen = torch.Generator().manual_seed(seed + 7)
    for _ in range(steps):
        actions = {}
        for g, spec in env.groups.items():
            high = torch.as_tensor(spec.action_space.high)
            actions[g] = (torch.rand(n, spec.n_agents, len(high), generator=gen) * 2 - 1) * high
        env.step(actions)
    return env.get_state()


def rollouts_differ(mine: dict, theirs: dict, keys=("pos", "vel", "rot", "ang_vel")) -> list[str]:
    """The per-body state components whose laws differ (two-sample KS at level 1e-3) between
    two samples of worlds (``our_random_rollout`` / ``vmas_random_rollout``)."""
    out = []
    for key in keys:
        a, b = mine[key].double(), theirs[key].double()
        for body in range(a.shape[1]):
            for k in range(a.shape[2] if a.dim() == 3 else 1):
                x = (a[:, body, k] if a.dim() == 3 else a[:, body]).numpy()
                y = (b[:, body, k] if b.dim() == 3 else b[:, body]).numpy()
                if R.ks_statistic(x, y) >= R.ks_critical(len(x), len(y)):
                    out.append(f"{key}[{body}, {k}]")
    return out


def float64_follows_float32_groups(env_id: str, steps: int, state_keys=("pos", "vel", "rot", "ang_vel"),
                                   atol: float = 1e-3, **kwargs) -> None:
    """``vmas_reference.float64_follows_float32`` for scenarios with several groups: the same
    episode (4 worlds, seed 2, the same uniform random actions of every group) in float32 and
    float64 worlds, to float32 rounding (observations and ``state_keys``)."""
    out = {}
    for precision in ("float32", "float64"):
        env = war_envs.make(env_id, num_envs=4, precision=precision, max_steps=steps, **kwargs)
        env.reset(seed=2)
        gen = torch.Generator().manual_seed(0)
        for _ in range(steps):
            actions = {}
            for g, spec in env.groups.items():
                low, high = (torch.as_tensor(x) for x in (spec.action_space.low, spec.action_space.high))
                actions[g] = low + torch.rand(4, spec.n_agents, *spec.action_space.shape, generator=gen) * (high - low)
            obs, *_ = env.step(actions)
        state = env.get_state()
        out[precision] = [obs[g].double() for g in env.groups] + [state[k].double() for k in state_keys]
    for a, b in zip(out["float32"], out["float64"]):
        torch.testing.assert_close(a, b, rtol=1e-3, atol=atol)
