"""VMAS 1.5.2 itself, side by side with our VMAS scenarios (the parity tests' shared harness).

VMAS is a test dependency (``[dev]``: torch and VMAS's light requirements), so both run in one
process.  A parity check is:

1. ``vmas.make_env(scenario, num_envs=E, seed=...)`` and ``reset`` it (VMAS's own start states);
2. our env with the same keyword arguments and ``autoreset_mode="disabled"`` (VMAS never resets
   by itself; a finished world keeps moving in both), its state set from VMAS's (``copy_state``:
   every body's position, velocity, rotation and angular velocity, plus the scenario's own
   per-world state read off VMAS's scenario object by ``extra_state``);
3. the same actions on both sides for whole episodes, comparing after every step the
   observations, rewards, dones, info and every body's state (``compare``).

**VMAS's batch-wide gate.**  VMAS's ``World.collides`` skips a pair unless *some world of the
batch* has it within the circumscribed radii (``.any()`` over worlds); our worlds are independent
and always work a pair out, as VMAS does whenever any world has it in reach (see
``war_envs/scenarios/vmas/world.py``).  ``ungated_vmas`` runs VMAS with that one batch-wide test
removed (every other condition of ``collides`` kept), so the comparison does not depend on what
the *other* worlds of the test batch happen to do; ``test_the_batch_gate_is_the_only_change``
style checks use plain VMAS.

Float32 on both sides, so the tolerances are float32 rounding (the physics repeats VMAS's
operation order; what differs is libm's and torch's last-ulp choices in sqrt/exp/log/sin/cos,
amplified a little by contacts over an episode).  ``one_step_from_every_state`` re-injects VMAS's
state before each step (no accumulation), ``whole_episode`` lets both run free.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch
import vmas

import war_envs

#: float32 tolerances: one step from VMAS's state, and free-running whole episodes
STEP_TOL = dict(rtol=1e-5, atol=2e-5)
EPISODE_TOL = dict(rtol=1e-4, atol=1e-4)


def _collides_without_batch_gate(self, a, b) -> bool:
    """VMAS 1.5.2's ``World.collides`` without its last test (the pair within reach in some world
    of the batch)."""
    if (not a.collides(b)) or (not b.collides(a)) or a is b:
        return False
    if not a.movable and not a.rotatable and not b.movable and not b.rotatable:
        return False
    return {a.shape.__class__, b.shape.__class__} in self._collidable_pairs


def ungated_vmas(env):
    """VMAS's world ``env.world`` with the batch-wide gate of ``collides`` removed (this world only)."""
    env.world.collides = _collides_without_batch_gate.__get__(env.world)
    return env


def make_vmas(scenario: str, num_envs: int, seed: int, continuous: bool, gated: bool = False, **kwargs):
    """VMAS's env, reset; ``gated=False``: with ``ungated_vmas``."""
    env = vmas.make_env(scenario, num_envs=num_envs, device="cpu", continuous_actions=continuous, seed=seed,
                        **kwargs)
    if not gated:
        ungated_vmas(env)
    env.reset()
    return env


def make_ours(env_id: str, num_envs: int, continuous: bool, **kwargs):
    return war_envs.make(env_id, num_envs=num_envs, continuous_actions=continuous, autoreset_mode="disabled",
                         **kwargs)


def vmas_state(env) -> dict[str, torch.Tensor]:
    """Every body's state, in VMAS's entity order (landmarks, then agents)."""
    ents = env.world.entities
    return {
        "pos": torch.stack([e.state.pos for e in ents], dim=1).clone(),
        "vel": torch.stack([e.state.vel for e in ents], dim=1).clone(),
        "rot": torch.stack([e.state.rot[:, 0] for e in ents], dim=1).clone(),
        "ang_vel": torch.stack([e.state.ang_vel[:, 0] for e in ents], dim=1).clone(),
    }


def copy_state(vm, ours, extra_state=None) -> None:
    """Our worlds := VMAS's (bodies, clock, and ``extra_state(vm) -> {field: tensor}``)."""
    state = vmas_state(vm)
    state["t"] = vm.steps.to(torch.int32).clone()
    if extra_state is not None:
        state.update(extra_state(vm))
    ours.reset(seed=0)
    ours.set_state({k: v.to(ours.torch_float) if v.is_floating_point() else v for k, v in state.items()})


def set_vmas_state(vm, state: dict[str, torch.Tensor]) -> None:
    """VMAS's bodies := ``state`` (``vmas_state``'s layout)."""
    for b, e in enumerate(vm.world.entities):
        e.state.pos = state["pos"][:, b].clone().float()
        e.state.vel = state["vel"][:, b].clone().float()
        e.state.rot = state["rot"][:, b, None].clone().float()
        e.state.ang_vel = state["ang_vel"][:, b, None].clone().float()


@contextlib.contextmanager
def discovery_draws(vm, ours):
    """Discovery: VMAS's in-step draws (a covered target's new place, from torch's global
    generator) replaced by ours, for a VMAS step taken after ours: target k's call returns
    target k's place after our step (only the covered targets' draws are used by VMAS)."""
    from vmas.simulator.utils import ScenarioUtils

    n_targets = len(vm.scenario._targets)
    new = ours.get_state()["pos"][:, :n_targets].float()
    respawn, outside = iter(range(n_targets)), iter(range(n_targets))
    original = ScenarioUtils.__dict__["find_random_pos_for_entity"]
    ScenarioUtils.find_random_pos_for_entity = staticmethod(lambda *a, **k: new[:, next(respawn)].unsqueeze(1).clone())
    vm.scenario.get_outside_pos = lambda env_index: new[:, next(outside)].clone()
    try:
        yield
    finally:
        ScenarioUtils.find_random_pos_for_entity = original
        del vm.scenario.get_outside_pos


def random_actions(vm, ours, gen: torch.Generator):
    """The same random actions for both: VMAS's list of ``[E, k]`` (or ``[E]``) tensors and our
    ``{group: tensor}`` (uniform over each agent's box, or its Discrete(n))."""
    acts = []
    E = vm.num_envs
    for agent in vm.agents:
        space = vm.get_agent_action_space(agent)
        if vm.continuous_actions:
            low, high = torch.as_tensor(space.low), torch.as_tensor(space.high)
            acts.append(low + (high - low) * torch.rand(E, len(low), generator=gen))
        else:
            acts.append(torch.randint(0, int(space.n), (E,), generator=gen))
    ours_acts = {}
    for g, spec in ours.groups.items():
        ours_acts[g] = torch.stack(acts[spec.start:spec.stop], dim=1)
    return acts, ours_acts


def compare(label: str, ours, theirs, tol: dict) -> None:
    ours = torch.as_tensor(ours).double()
    theirs = torch.as_tensor(theirs).double()
    assert ours.shape == theirs.shape, f"{label}: shape {tuple(ours.shape)} != VMAS's {tuple(theirs.shape)}"
    if not torch.allclose(ours, theirs, **tol):
        diff = (ours - theirs).abs()
        where = torch.nonzero(diff > tol["atol"] + tol["rtol"] * theirs.abs())[:5].tolist()
        raise AssertionError(f"{label}: max |ours - VMAS| = {diff.max().item():.3g} at {where} "
                             f"(ours {ours.flatten()[diff.argmax()].item():.9g}, VMAS "
                             f"{theirs.flatten()[diff.argmax()].item():.9g})")


def compare_outputs(label: str, vm, ours, vm_out, our_out, tol: dict, info_keys=(), reward_tol=None) -> None:
    """After one step on both sides: observations, rewards, done, the info entries and state
    (``reward_tol``: the rewards' own tolerance, for scenarios whose rewards are differences of
    large shaping values, where one float32 ulp of those exceeds ``tol``)."""
    obs, rew, done, infos = vm_out
    rew = [r.reshape(vm.num_envs) for r in rew]  # VMAS's [E, 1] rewards (wheel's) as [E]
    o_obs, o_rew, o_term, o_trunc, o_info = our_out
    for g, spec in ours.groups.items():
        compare(f"{label} obs[{g}]", o_obs[g], torch.stack(obs[spec.start:spec.stop], dim=1), tol)
        compare(f"{label} reward[{g}]", o_rew[g], torch.stack(rew[spec.start:spec.stop], dim=1), reward_tol or tol)
    ours_done = ours.world_flags()
    ours_done = (ours_done[0] | ours_done[1])
    assert torch.equal(ours_done.cpu(), done.cpu()), f"{label}: done {ours_done.tolist()} != VMAS's {done.tolist()}"
    for key in info_keys:
        theirs = torch.stack([i[key].reshape(vm.num_envs) for i in infos], dim=1)
        compare(f"{label} info[{key!r}]", o_info[key], theirs, tol)
    theirs = vmas_state(vm)
    mine = ours.get_state()
    for key in ("pos", "vel", "rot", "ang_vel"):
        compare(f"{label} {key}", mine[key], theirs[key], tol)


def compare_extra_state(label: str, vm, ours, extra_state, tol: dict) -> None:
    """The scenario's own state after a step (``extra_state(vm)``, VMAS's) against ours
    (``compare_state=True`` of ``whole_episode`` / ``one_step_from_every_state``)."""
    mine = ours.get_state()
    for key, theirs in extra_state(vm).items():
        compare(f"{label} state[{key!r}]", mine[key], theirs, tol)


def whole_episode(env_id: str, scenario: str, *, num_envs: int = 8, steps: int = 100, seed: int = 0,
                  continuous: bool = True, extra_state=None, info_keys=(), start=None, tol=None, reward_tol=None,
                  compare_state=False, **kwargs):
    """Both run free from VMAS's start (or ``start(vm)``, which may move VMAS's bodies first) for
    ``steps`` steps of the same random actions; compared after every step."""
    vm = make_vmas(scenario, num_envs, seed, continuous, max_steps=steps, **kwargs)
    if start is not None:
        start(vm)
    ours = make_ours(env_id, num_envs, continuous, max_steps=steps, **kwargs)
    copy_state(vm, ours, extra_state)
    gen = torch.Generator().manual_seed(seed + 1)
    for t in range(steps):
        acts, ours_acts = random_actions(vm, ours, gen)
        vm_out = vm.step(acts)
        our_out = ours.step(ours_acts)
        compare_outputs(f"{env_id} step {t}", vm, ours, vm_out, our_out, tol or EPISODE_TOL, info_keys, reward_tol)
        if compare_state:
            compare_extra_state(f"{env_id} step {t}", vm, ours, extra_state, tol or EPISODE_TOL)
    return vm, ours


def one_step_from_every_state(env_id: str, scenario: str, *, num_envs: int = 8, steps: int = 60, seed: int = 0,
                              continuous: bool = True, extra_state=None, info_keys=(), start=None, reward_tol=None,
                              compare_state=False, **kwargs):
    """VMAS runs ``steps`` steps; before each, our worlds get VMAS's state, then both take the
    same step and are compared (float32 rounding, no accumulation)."""
    vm = make_vmas(scenario, num_envs, seed, continuous, max_steps=steps, **kwargs)
    if start is not None:
        start(vm)
    ours = make_ours(env_id, num_envs, continuous, max_steps=steps, **kwargs)
    gen = torch.Generator().manual_seed(seed + 1)
    for t in range(steps):
        copy_state(vm, ours, extra_state)
        acts, ours_acts = random_actions(vm, ours, gen)
        vm_out = vm.step(acts)
        our_out = ours.step(ours_acts)
        compare_outputs(f"{env_id} step {t}", vm, ours, vm_out, our_out, STEP_TOL, info_keys, reward_tol)
        if compare_state:
            compare_extra_state(f"{env_id} step {t}", vm, ours, extra_state, STEP_TOL)


def crowd(vm, scale: float = 0.3, seed: int = 0) -> None:
    """A contact-heavy start: every movable body of VMAS's worlds pulled towards the origin by
    ``scale`` (so bodies overlap), with random velocities."""
    gen = torch.Generator().manual_seed(seed)
    for e in vm.world.entities:
        if e.movable:
            e.state.pos = e.state.pos * scale
            e.state.vel = (torch.rand(e.state.vel.shape, generator=gen) - 0.5) * 0.5


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, grid, side="right") / len(a)
                               - np.searchsorted(b, grid, side="right") / len(b))))


def ks_critical(n: int, m: int, alpha: float = 1e-3) -> float:
    """The two-sample KS critical value at level ``alpha``."""
    c = np.sqrt(-0.5 * np.log(alpha / 2))
    return float(c * np.sqrt((n + m) / (n * m)))


def float64_follows_float32(env_id, steps, atol=1e-3, state_keys=("pos",), **kwargs):
    """A float64 world runs the same episode as the float32 one (4 worlds, seed 2, the same
    uniform random actions over the action space), to float32 rounding: observations, rewards
    and the ``state_keys`` of ``get_state()``."""
    out = {}
    for precision in ("float32", "float64"):
        env = war_envs.make(env_id, num_envs=4, precision=precision, max_steps=steps, **kwargs)
        env.reset(seed=2)
        spec = env.groups["agents"]
        low, high = (torch.as_tensor(x) for x in (spec.action_space.low, spec.action_space.high))
        gen = torch.Generator().manual_seed(0)
        rews = []
        for _ in range(steps):
            u = low + torch.rand(4, len(spec.agents), *spec.action_space.shape, generator=gen) * (high - low)
            obs, rew, *_ = env.step({"agents": u})
            rews.append(rew["agents"].double().clone())
        state = env.get_state()
        out[precision] = (obs["agents"].double(), torch.stack(rews), *(state[k].double() for k in state_keys))
    for a, b in zip(out["float32"], out["float64"]):
        torch.testing.assert_close(a, b, rtol=1e-3, atol=atol)


def check_observation_noise(vm, ours, noise: float, steps: int = 10) -> None:
    """``obs_noise``: VMAS run without noise beside ours with it, from the same state (copied
    already): ours minus VMAS's observation is U(-noise, noise) (KS against the uniform law),
    fresh every step and for every agent."""
    gen = torch.Generator().manual_seed(3)
    deltas = []
    for _ in range(steps):
        acts, ours_acts = random_actions(vm, ours, gen)
        obs = torch.stack(vm.step(acts)[0], dim=1)
        deltas.append(ours.step(ours_acts)[0]["agents"] - obs)
    d = torch.stack(deltas)
    assert float(d.abs().max()) <= noise * (1 + 1e-4)
    u = d.flatten().numpy()
    ref = np.random.default_rng(0).uniform(-noise, noise, len(u))
    assert ks_statistic(u, ref) < ks_critical(len(u), len(ref))
    assert float((d[1:] != d[:-1]).float().mean()) > 0.99
    assert float((d[:, :, 0] != d[:, :, 1]).float().mean()) > 0.99


# ---------------------------------------------------------------------------------------------
# Ill-conditioned worlds (joints): ours against VMAS's own one-ulp spread
# ---------------------------------------------------------------------------------------------


def _outputs(vm, vm_out, info_keys) -> dict[str, torch.Tensor]:
    """VMAS's step outputs and bodies as ``{label: [E, ...] float64}`` (``_our_outputs``' keys)."""
    obs, rew, _, infos = vm_out
    out = {"obs": torch.stack(list(obs), dim=1), "reward": torch.stack([r.reshape(vm.num_envs) for r in rew], dim=1)}
    for key in info_keys:
        out[f"info[{key}]"] = torch.stack([i[key].reshape(vm.num_envs) for i in infos], dim=1)
    out.update(vmas_state(vm))
    return {k: v.double().reshape(vm.num_envs, -1) for k, v in out.items()}


def _our_outputs(ours, our_out, info_keys) -> dict[str, torch.Tensor]:
    o_obs, o_rew, _, _, o_info = our_out
    E = ours.num_envs
    out = {"obs": torch.cat([o_obs[g] for g in ours.groups], dim=1),
           "reward": torch.cat([o_rew[g] for g in ours.groups], dim=1)}
    for key in info_keys:
        out[f"info[{key}]"] = o_info[key]
    state = ours.get_state()
    out.update({k: state[k] for k in ("pos", "vel", "rot", "ang_vel")})
    return {k: torch.as_tensor(v).double().reshape(E, -1) for k, v in out.items()}


def one_step_within_vmas_spread(env_id: str, scenario: str, *, twins, sync, num_envs: int = 8, steps: int = 40,
                                seed: int = 0, continuous: bool = True, extra_state=None, info_keys=(), start=None,
                                factor: float = 4.0, tol=None, precision: str = "float32", check: bool = True,
                                **kwargs) -> dict[str, float]:
    """One step from every VMAS state, for worlds where one float32 ulp of the state changes a
    step's result by far more than float32 rounding (VMAS's stiff joints): beside VMAS's step,
    ``twins`` (functions ``state -> state`` moving the state by an ulp) give VMAS's own steps
    from next-door states (a second VMAS env, its scenario state made VMAS's by ``sync(twin,
    vm)``), and in every world every output (observations, rewards, ``info_keys``, bodies) of ours
    must be within ``factor`` times the largest twin's distance from VMAS's (per world, per
    output), plus ``tol`` (``STEP_TOL``).  Dones must agree exactly.  Returns, per output, the
    largest of ours' distance over the twins' (how tight the runs were)."""
    tol = tol or STEP_TOL
    vm = make_vmas(scenario, num_envs, seed, continuous, max_steps=steps + 1, **kwargs)
    twin = make_vmas(scenario, num_envs, seed, continuous, max_steps=steps + 1, **kwargs)
    if start is not None:  # (on both: a start may change VMAS's constants too)
        start(vm)
        start(twin)
    ours = make_ours(env_id, num_envs, continuous, max_steps=steps + 1, precision=precision, **kwargs)
    gen = torch.Generator().manual_seed(seed + 1)
    ratio: dict[str, float] = {}
    for t in range(steps):
        copy_state(vm, ours, extra_state)
        state = vmas_state(vm)
        acts, ours_acts = random_actions(vm, ours, gen)
        twin_outs = []
        for perturb in twins:
            set_vmas_state(twin, perturb({k: v.clone() for k, v in state.items()}))
            sync(twin, vm)
            twin.steps = vm.steps.clone()
            twin_outs.append(_outputs(twin, twin.step([a.clone() for a in acts]), info_keys))
        vm_out = vm.step(acts)
        theirs = _outputs(vm, vm_out, info_keys)
        our_out = ours.step(ours_acts)
        mine = _our_outputs(ours, our_out, info_keys)
        ours_done = ours.world_flags()
        assert torch.equal((ours_done[0] | ours_done[1]).cpu(), vm_out[2].cpu()), f"{env_id} step {t}: done"
        for key, value in theirs.items():
            assert mine[key].shape == value.shape, (key, mine[key].shape, value.shape)
            gap = (mine[key] - value).abs().amax(dim=1)
            twin_gap = torch.stack([(o[key] - value).abs().amax(dim=1) for o in twin_outs]).amax(0)
            limit = factor * twin_gap + tol["atol"] + tol["rtol"] * value.abs().amax(dim=1)
            if check and not bool((gap <= limit).all()):
                w = int((gap - limit).argmax())
                raise AssertionError(f"{env_id} step {t} {key}: world {w}: |ours - VMAS| = {gap[w]:.3g}, VMAS's "
                                     f"one-ulp twin {twin_gap[w]:.3g} (limit {limit[w]:.3g})")
            r = float((gap / (twin_gap + tol["atol"])).max())
            ratio[key] = max(ratio.get(key, 0.0), r)
    return ratio


def whole_episode_within_vmas_spread(env_id: str, scenario: str, *, twin_start, sync, num_envs: int = 8,
                                     steps: int = 100, seed: int = 0, continuous: bool = True, extra_state=None,
                                     info_keys=(), start=None, factor: float = 4.0, tol=None,
                                     precision: str = "float32", check: bool = True, twin_forces=None,
                                     **kwargs) -> dict[str, float]:
    """A whole free-running episode in ill-conditioned worlds (VMAS's stiff joints): VMAS, its twin
    (VMAS from the same start, its state moved by ``twin_start``, an ulp, before every step; its
    scenario state made VMAS's by ``sync`` at the start; ``twin_forces(twin)``, e.g.
    ``ulp_noisy_forces``, may make its forces' rounding differ too) and ours from VMAS's start, the
    same actions; after every step, in every world, every output of ours within ``factor`` times the
    largest distance the twin has had from VMAS so far (per world and output), plus ``tol``
    (``STEP_TOL``): ours stays as close to VMAS as VMAS's own rounding does. Dones must agree
    wherever the twin's agree with VMAS's. Returns, per output, the largest of ours' distance over
    the twin's band plus ``tol``'s atol (``check=False``: only that, nothing asserted but the
    dones)."""
    tol = tol or STEP_TOL
    vm = make_vmas(scenario, num_envs, seed, continuous, max_steps=steps + 1, **kwargs)
    twin = make_vmas(scenario, num_envs, seed, continuous, max_steps=steps + 1, **kwargs)
    if start is not None:
        start(vm)
        start(twin)
    if twin_forces is not None:
        twin_forces(twin)
    ours = make_ours(env_id, num_envs, continuous, max_steps=steps + 1, precision=precision, **kwargs)
    copy_state(vm, ours, extra_state)
    set_vmas_state(twin, twin_start(vmas_state(vm)))
    sync(twin, vm)
    gen = torch.Generator().manual_seed(seed + 1)
    band: dict[str, torch.Tensor] = {}
    ratio: dict[str, float] = {}
    for t in range(steps):
        acts, ours_acts = random_actions(vm, ours, gen)
        if t > 0:  # an ulp of rounding every step, as ours has
            set_vmas_state(twin, twin_start(vmas_state(twin)))
        twin_out = twin.step([a.clone() for a in acts])
        twin_o = _outputs(twin, twin_out, info_keys)
        vm_out = vm.step(acts)
        theirs = _outputs(vm, vm_out, info_keys)
        mine = _our_outputs(ours, ours.step(ours_acts), info_keys)
        ours_done = ours.world_flags()
        same = twin_out[2].cpu() == vm_out[2].cpu()
        assert torch.equal((ours_done[0] | ours_done[1]).cpu()[same], vm_out[2].cpu()[same]), f"{env_id} step {t}"
        for key, value in theirs.items():
            gap = (mine[key] - value).abs().amax(dim=1)
            twin_gap = (twin_o[key] - value).abs().amax(dim=1)
            band[key] = twin_gap if key not in band else torch.maximum(band[key], twin_gap)
            limit = factor * band[key] + tol["atol"] + tol["rtol"] * value.abs().amax(dim=1)
            if check and not bool((gap <= limit).all()):
                w = int((gap - limit).argmax())
                raise AssertionError(f"{env_id} step {t} {key}: world {w}: |ours - VMAS| = {gap[w]:.3g}, VMAS's "
                                     f"one-ulp twin so far {band[key][w]:.3g} (limit {limit[w]:.3g})")
            ratio[key] = max(ratio.get(key, 0.0), float((gap / (band[key] + tol["atol"])).max()))
    return ratio


def ulp_noisy_forces(env, seed: int = 0):
    """VMAS's world ``env.world`` with every constraint force (joints and contacts) moved by one
    float32 ulp up or down at random (seeded), each component every substep: VMAS as a different
    libm's last-bit choices in exp / log1p / sqrt would compute it (a twin for
    ``whole_episode_within_vmas_spread``'s ``start``)."""
    world = env.world
    original = type(world)._get_constraint_forces
    gen = torch.Generator().manual_seed(seed)

    def noisy(self, *args, **kwargs):
        f_a, _ = original(self, *args, **kwargs)
        up = torch.rand(f_a.shape, generator=gen) < 0.5
        target = torch.where(up, torch.full_like(f_a, float("inf")), torch.full_like(f_a, float("-inf")))
        f_a = torch.where(f_a != 0, torch.nextafter(f_a, target), f_a)
        return f_a, -f_a

    world._get_constraint_forces = noisy.__get__(world)
    return env


def ulp_up(state, key, bodies=None):
    """``state[key]`` (of ``bodies``, default all) one float32 ulp up."""
    value = state[key] if bodies is None else state[key][:, list(bodies)]
    up = torch.nextafter(value, torch.full_like(value, 10.0))
    if bodies is None:
        state[key] = up
    else:
        state[key][:, list(bodies)] = up
    return state


def ulp_either_way(state, key, gen):
    """``state[key]`` each entry one float32 ulp up or down at random."""
    value = state[key]
    up = torch.rand(value.shape, generator=gen) < 0.5
    state[key] = torch.nextafter(value, torch.where(up, torch.full_like(value, 10.0), torch.full_like(value, -10.0)))
    return state


def twin_every_step():
    """The free-running twin's rounding (a fresh seeded stream per episode): every position,
    velocity and rotation an ulp up or down at random (with the rods at rest at reset, an ulp the
    same way for every body barely moves the gaps at the rods' ends, whose crossing of VMAS's
    1e-6 switch decides the first steps)."""
    gen = torch.Generator().manual_seed(0)
    return lambda s: ulp_either_way(ulp_either_way(ulp_either_way(s, "pos", gen), "vel", gen), "rot", gen)


# ---------------------------------------------------------------------------------------------
# Football: VMAS's scripted team drawing our normals
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def football_draws(vm, draws: dict[str, torch.Tensor]):
    """Football: VMAS's scripted red team (``AgentPolicy``) takes ``draws`` (our env's
    ``ai_draws()`` for the step, taken before either side steps) instead of torch's global
    generator: every ``torch.randn`` call of its step returns ours for the worlds of the call's
    mask, by purpose (possession noise of the player running ``check_possession``, the
    candidate spots of ``check_better_positions``, their value noise in ``get_pos_value``, the
    position then velocity noise of ``go_to``)."""
    ctrl = vm.scenario.red_controller
    if ctrl is None:
        yield
        return
    stack = []
    originals = {}

    def wrap(name, purpose, agent_of):
        original = originals[name] = getattr(ctrl, name)

        def wrapped(*args, **kwargs):
            agent = agent_of(args, kwargs)
            mask = kwargs.get("env_index", Ellipsis)
            stack.append([purpose, agent, mask, 0])
            try:
                return original(*args, **kwargs)
            finally:
                stack.pop()

        setattr(ctrl, name, wrapped)

    def fake_randn(*size, **kwargs):
        purpose, agent, mask, calls = stack[-1]
        stack[-1][3] += 1
        j = ctrl.teammates.index(agent)
        if purpose == "possession":
            out = draws["possession"][:, j]
        elif purpose == "samples":
            out = draws["samples"][mask, j].reshape(-1, 2, 2)
        elif purpose == "values":
            out = draws["values"][mask, j]
        else:
            out = draws["precision"][mask, j][:, 2 * calls:2 * calls + 2]
        shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)
        assert tuple(out.shape) == shape, (purpose, tuple(out.shape), shape)
        return out.clone()

    first_arg = lambda args, kwargs: args[0]  # noqa: E731
    scripts = {}
    for agent in ctrl.teammates:  # (each agent holds VMAS's bound ``run``: the player running)
        scripts[agent] = script = agent._action_script

        def run(agent, world, script=script):
            stack.append(["run", agent, Ellipsis, 0])
            try:
                return script(agent, world)
            finally:
                stack.pop()

        agent._action_script = run
    wrap("check_possession", "possession", lambda args, kwargs: stack[-1][1])
    wrap("check_better_positions", "samples", first_arg)
    wrap("get_pos_value", "values", lambda args, kwargs: kwargs["agent"])
    wrap("go_to", "precision", first_arg)
    randn = torch.randn
    torch.randn = fake_randn
    try:
        yield
    finally:
        torch.randn = randn
        for name, original in originals.items():
            setattr(ctrl, name, original)
        for agent, script in scripts.items():
            agent._action_script = script


def _check_better_positions_per_world(self, agent, env_index=Ellipsis):
    """VMAS 1.5.2's ``AgentPolicy.check_better_positions`` with its last ``torch.gather`` made per
    world: VMAS's ``gather(test_pos, 1, index[None])`` takes every world's best spot from the
    *first* world of the mask's candidates (its own index into them), coupling the worlds of a
    batch; here each world takes its own candidate (what VMAS does in a batch of one)."""
    ball_pos = self.ball.state.pos[env_index]
    curr_target = self.objectives[agent]["target_pos_rel"][env_index] + ball_pos
    samples = (torch.randn(ball_pos.shape[0], self.nsamples, self.world.dim_p, device=self.world.device)
               * self.sigma * (1 + 3 * (1 - self.decision_strength)))
    samples[:, ::2] += ball_pos[:, None]
    samples[:, 1::2] += agent.state.pos[env_index, None]
    test_pos = torch.cat([curr_target[:, None, :], samples], dim=1)
    test_pos_shape = test_pos.shape
    test_pos = self.clamp_pos(test_pos.view(test_pos_shape[0] * test_pos_shape[1], test_pos_shape[2])).view(
        *test_pos_shape)
    values = self.get_pos_value(test_pos, agent=agent, env_index=env_index)
    values[:, 0] += self.replan_margin + 3 * (1 - self.decision_strength)
    highest_value = values.argmax(dim=1)
    return test_pos[torch.arange(test_pos.shape[0]), highest_value]


def per_world_football_ai(env):
    """VMAS's football ``env`` with its scripted team's best-spot choice made per world
    (``_check_better_positions_per_world``: VMAS's one batch coupling in ``AgentPolicy``)."""
    ctrl = env.scenario.red_controller
    if ctrl is not None:
        ctrl.check_better_positions = _check_better_positions_per_world.__get__(ctrl)
    return env
