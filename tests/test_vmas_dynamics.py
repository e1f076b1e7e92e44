"""VMAS 1.5.2's dynamics models (``war_envs/scenarios/vmas/dynamics.py``) on the paths the
dynamics debug scenarios (DiffDrive-v0, KinematicBicycle-v0, Drone-v0) do not take, against
VMAS's own classes in the same process: a test scenario of eight agents, one per model and
setting — ``Holonomic`` (with ``max_f``), ``HolonomicWithRotation`` (with ``max_t``),
``Rotation`` (with ``t_range``), ``Forward``, ``Static`` (acting for nothing), ``DiffDrive`` by Euler,
``KinematicBicycle`` by Runge-Kutta with its steering clamp active, ``Drone`` by Euler with its
own inertia and the thrust as an action — written once for VMAS (``ZooScenario``) and once here
(``Zoo``), each agent in its own group.  One step from every recorded VMAS state and whole
episodes (continuous and discrete actions, float32 and float64 worlds), a bite per model, the
models' own argument checks, and the physics of the all-Holonomic scenarios kept apart."""

import pytest
import torch
import vmas_reference as R

from war_envs.scenarios.vmas import dynamics as DYN
from war_envs.scenarios.vmas import het_mass, pollock
from war_envs.scenarios.vmas.base import Body, Layout, VmasBase
from war_envs.scenarios.vmas.diff_drive import spawn_fields

vmas = pytest.importorskip("vmas")

from vmas.simulator import dynamics as vd  # noqa: E402
from vmas.simulator.core import Agent, World  # noqa: E402
from vmas.simulator.dynamics import (  # noqa: E402, F401  (the modules of vd)
    diff_drive,
    drone,
    forward,
    holonomic,
    holonomic_with_rot,
    kinematic_bicycle,
    roatation,
    static,
)
from vmas.simulator.scenario import BaseScenario  # noqa: E402
from vmas.simulator.utils import ScenarioUtils  # noqa: E402

SUBSTEPS = 3
DRONE_INERTIA = dict(I_xx=7e-3, I_yy=9e-3, I_zz=1.3e-2)
BICYCLE = dict(width=0.1, l_f=0.12, l_r=0.08, max_steering_angle=0.3)
#: (name, our dynamics, VMAS's dynamics given its world, the Agent arguments both take)
AGENTS = [
    ("holonomic_0", lambda: DYN.Holonomic(), lambda world: vd.holonomic.Holonomic(),
     dict(u_range=1.0, max_f=0.8)),
    ("holo_rot_1", lambda: DYN.HolonomicWithRotation(), lambda world: vd.holonomic_with_rot.HolonomicWithRotation(),
     dict(u_range=[1.0, 1.0, 1.0], u_multiplier=[1.0, 1.0, 0.001], max_t=0.0004)),
    ("rotation_2", lambda: DYN.Rotation(), lambda world: vd.roatation.Rotation(),
     dict(u_range=0.002, t_range=0.0015)),
    ("forward_3", lambda: DYN.Forward(), lambda world: vd.forward.Forward(), dict(u_range=1.0)),
    ("static_4", lambda: DYN.Static(), lambda world: vd.static.Static(), dict(u_range=1.0, action_size=2)),
    ("diff_drive_5", lambda: DYN.DiffDrive(integration="euler"),
     lambda world: vd.diff_drive.DiffDrive(world, integration="euler"), dict(u_range=[1.0, 2.0])),
    ("bicycle_6", lambda: DYN.KinematicBicycle(**BICYCLE, integration="rk4"),
     lambda world: vd.kinematic_bicycle.KinematicBicycle(world, **BICYCLE, integration="rk4"),
     dict(u_range=[1.0, 0.6])),  # steering up to 0.6, clamped to 0.3 by the model
    ("drone_7", lambda: DYN.Drone(**DRONE_INERTIA, integration="euler"),
     lambda world: vd.drone.Drone(world, **DRONE_INERTIA, integration="euler"),
     dict(u_range=[0.5, 1e-4, 1e-4, 1e-4])),
]


class ZooScenario(BaseScenario):
    """The test scenario in VMAS: ``AGENTS`` as spheres in [-1, 1]², 0.1 apart, 3 substeps;
    observation ``[pos, vel]``, no reward."""

    def make_world(self, batch_dim, device, **kwargs):
        world = World(batch_dim, device, substeps=SUBSTEPS)
        for name, _, theirs, args in AGENTS:
            world.add_agent(Agent(name=name, dynamics=theirs(world), **args))
        return world

    def reset_world_at(self, env_index=None):
        ScenarioUtils.spawn_entities_randomly(self.world.agents, self.world, env_index, 0.1, (-1, 1), (-1, 1))

    def reward(self, agent):
        return torch.zeros(self.world.batch_dim)

    def observation(self, agent):
        return torch.cat([agent.state.pos, agent.state.vel], dim=-1)


class Zoo(VmasBase):
    """The test scenario here (``ZooScenario``), each agent in its own group."""

    reset_world = pollock.reset_world
    reward_world = pollock.reward_world
    observe_agent = het_mass.observe_agent

    def _layout(self) -> Layout:
        bodies = []
        for name, ours, _, args in AGENTS:
            args = {k: tuple(v) if isinstance(v, list) else v for k, v in args.items()}
            bodies.append(Body(name, agent=True, dynamics=ours(), **args))
        return Layout(bodies=bodies, groups=[(b.name, [b.name]) for b in bodies], substeps=SUBSTEPS)

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self):
        return spawn_fields()


def extra_state(vm):
    """VMAS's drone's ``drone_state`` (``[E, 12]``) as our ``drone_state`` row (zeros for the
    other agents, which have none)."""
    state = torch.zeros(vm.num_envs, len(AGENTS), DYN.DRONE_STATE)
    state[:, 7] = vm.world.agents[7].dynamics.drone_state
    return {"drone_state": state}


def moving(vm):
    """Random rotations, velocities and angular velocities, and a drone in flight."""
    gen = torch.Generator().manual_seed(4)
    E = vm.num_envs
    for a in vm.world.agents:
        a.state.rot = (torch.rand(E, 1, generator=gen) - 0.5) * 6
        a.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 2
        a.state.ang_vel = (torch.rand(E, 1, generator=gen) - 0.5) * 2
    s = (torch.rand(E, 12, generator=gen) - 0.5) * 0.6
    vm.world.agents[7].dynamics.drone_state = s


def pair(num_envs, continuous, precision="float32", seed=0):
    vm = R.ungated_vmas(vmas.make_env(ZooScenario(), num_envs=num_envs, device="cpu", continuous_actions=continuous,
                                      seed=seed))
    vm.reset()
    moving(vm)
    ours = Zoo(num_envs=num_envs, continuous_actions=continuous, autoreset_mode="disabled", precision=precision,
               max_steps=None)
    R.copy_state(vm, ours, extra_state)
    return vm, ours


def run(continuous, steps, free_running, precision="float32", tol=None, change=None):
    vm, ours = pair(16, continuous, precision)
    if change is not None:
        change(vm)
    tol = tol or (R.EPISODE_TOL if free_running else R.STEP_TOL)
    gen = torch.Generator().manual_seed(1)
    for t in range(steps):
        if t > 0 and not free_running:
            R.copy_state(vm, ours, extra_state)
        acts, ours_acts = R.random_actions(vm, ours, gen)
        R.compare_outputs(f"step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), tol)
        R.compare_extra_state(f"step {t}", vm, ours, extra_state, tol)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
def test_one_step_from_every_vmas_state(continuous):
    run(continuous, 40, free_running=False)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
def test_whole_episode(continuous):
    run(continuous, 100, free_running=True)


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    run(True, 40, free_running=free_running, precision="float64")


def _set(agent, **values):
    def change(vm):
        for key, value in values.items():
            obj = vm.world.agents[agent]
            if key.startswith("_") or hasattr(obj, "_" + key):
                setattr(obj, "_" + key.lstrip("_"), value)
            else:
                setattr(obj.dynamics, key, value)
    return change


@pytest.mark.parametrize("change", [
    _set(0, max_f=0.9), _set(1, max_t=0.0005), _set(2, t_range=0.001), _set(5, integration="rk4"),
    _set(6, max_steering_angle=0.35), _set(6, integration="euler"), _set(7, I_yy=8e-3), _set(7, g=9.8),
], ids=["max_f", "max_t", "t_range", "diff_drive_rk4", "steering_limit", "bicycle_euler", "drone_inertia",
        "drone_g"])
def test_the_comparisons_bite(change):
    """Each model's constant changed on VMAS's side is caught (a comparison fails)."""
    with pytest.raises(AssertionError, match="ours - VMAS"):
        run(True, 20, free_running=True, change=change)


def test_forward_and_static_bite():
    """``Forward`` turned the other way, or ``Static`` pushed, is caught."""
    def backward(vm):
        vm.world.agents[3].dynamics.process_action = lambda: setattr(
            vm.world.agents[3].state, "force", TorchUtils.rotate_vector(
                torch.stack([-vm.world.agents[3].action.u[:, 0], torch.zeros(vm.num_envs)], dim=1),
                vm.world.agents[3].state.rot))

    def pushed(vm):
        vm.world.agents[4].state.force = torch.full((vm.num_envs, 2), 0.5)

    from vmas.simulator.utils import TorchUtils

    for change in (backward, pushed):
        with pytest.raises(AssertionError, match="ours - VMAS"):
            run(True, 5, free_running=True, change=change)


def test_action_sizes_follow_the_dynamics():
    """VMAS's ``needed_action_size`` per model (the agent's default ``action_size``), and a
    ``u`` as wide as the widest agent's action or need."""
    vm, ours = pair(2, True)
    for i, (name, *_rest) in enumerate(AGENTS):
        assert ours.groups[name].action_space.shape == vm.action_space[i].shape
        assert ours.layout.agents[i].action_size == vm.world.agents[i].action_size
    assert ours.layout.u_size == 4 and ours.layout.action_size == 4
    sized = Body("drone", agent=True, dynamics=DYN.Drone(), action_size=3, u_range=(1e-5,) * 3)
    assert sized.action_size == 3 and sized.u_size == 4


@pytest.mark.parametrize("make,match", [
    (lambda: DYN.DiffDrive(integration="midpoint"), "integration"),
    (lambda: DYN.KinematicBicycle(width=0.1, l_f=0.1, l_r=0.1, max_steering_angle=0.5, integration="rk45"),
     "integration"),
    (lambda: DYN.KinematicBicycle(width=0.1, l_f=0.0, l_r=0.0, max_steering_angle=0.5), "l_f"),
    (lambda: DYN.KinematicBicycle(width=0.1, l_f=0.1, l_r=0.1, max_steering_angle=-0.5), "max_steering_angle"),
    (lambda: DYN.KinematicBicycle(width="0.1", l_f=0.1, l_r=0.1, max_steering_angle=0.5), "width"),
    (lambda: DYN.Drone(I_xx=0.0), "I_xx"),
    (lambda: DYN.Drone(integration="dopri5"), "integration"),
    (lambda: Body("a", agent=True, dynamics="diff_drive"), "dynamics"),
    (lambda: Body("a", agent=True, dynamics=DYN.Static()), "action_size"),
    (lambda: Body("a", agent=True, dynamics=DYN.HolonomicWithRotation(), u_range=(1.0, 1.0)), "u_range"),
])
def test_bad_models_are_refused(make, match):
    with pytest.raises((TypeError, ValueError), match=match):
        make()


def test_holonomic_physics_has_no_dynamics_step():
    """All-Holonomic scenarios compile the physics without the dynamics (no per-agent step, no
    ``agent_force`` rows, their kernels' module named as before)."""
    models = [DYN.Holonomic(), DYN.Holonomic()]
    assert DYN.agent_dynamics(models) is None and DYN.module_suffix(models) == ""
    assert DYN.dynamics_fields(models, [1.0, 1.0], 0.1) == {}
    import war_envs

    env = war_envs.make("Navigation-v0", num_envs=2)
    assert env._w.agent_force.shape == (2, 0, 2) and env._w.agent_torque.shape == (2, 0)
    mixed = [DYN.DiffDrive(), DYN.HolonomicWithRotation()]
    assert DYN.module_suffix(mixed) == "_dyn_HolonomicWithRotation_DiffDrive"
