"""Tutorial: a new scenario from scratch, written directly on ``war_envs.core.batched_env.BatchedEnv``.

**Rendezvous-v0** — N agents start scattered over [-1, 1)² and must meet: each agent is
rewarded ``-|p_i - centroid|``; the episode terminates once every agent is within ``radius``
of the centroid and is truncated after ``max_cycles`` steps.  Actions are MPE's Discrete(5)
(0 no-op, 1 -x, 2 +x, 3 -y, 4 +y); an agent observes ``[vel(2), pos(2), others' relative
positions (2(N-1))]``.  docs/new_scenario.md walks through this file.

Run ``python examples/tutorial_scenario.py`` for a demo (it runs ``war_envs.testing.check_all``
and a random rollout); ``import tutorial_scenario`` (with examples/ on ``sys.path``) registers
``Rendezvous-v0`` so ``war_envs.make("Rendezvous-v0", num_envs=1024)`` works.
"""

if __name__ == "__main__":
    # Warp kernels must live in an importable module (a stable name for Warp's kernel cache, and
    # spawned workers must find them), never in __main__: run the demo from the imported module.
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import tutorial_scenario

    tutorial_scenario.demo()
    raise SystemExit(0)

import gymnasium
import numpy as np
import warp as wp

import war_envs
from war_envs.core import validation as v
from war_envs.core.batched_env import BatchedEnv, GroupSpec, stack_group_spaces

wp.set_module_options({"enable_backward": False})

# ------------------------------------------------------------------ kernels (the `_kernels.py` part)
NEXT_STEP, SAME_STEP = wp.constant(0), wp.constant(1)  # BatchedEnv's autoreset mode codes
DT, DAMPING, ACCEL = wp.constant(0.1), wp.constant(0.25), wp.constant(5.0)


@wp.kernel
def rendezvous_step(
    # Params
    mode: int, max_cycles: int, radius: float,
    # Actions
    action: wp.array2d(dtype=wp.int32),
    # State out
    pos: wp.array3d(dtype=wp.float32), vel: wp.array3d(dtype=wp.float32), t: wp.array(dtype=wp.int32),
    pending_reset: wp.array(dtype=wp.int32), reset_now: wp.array(dtype=wp.int32),
    # Outputs
    reward: wp.array2d(dtype=wp.float32), terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool), spread: wp.array(dtype=wp.float32),
):
    """One thread per world: move every agent, reward -|p_i - centroid|, set the flags."""
    e = wp.tid()
    n = pos.shape[1]
    if pending_reset[e] != 0:  # NEXT_STEP: the step after an episode end only restarts the world
        pending_reset[e] = 0
        for i in range(n):
            reward[e, i] = 0.0
        terminated[e] = False
        truncated[e] = False
        spread[e] = 0.0
        reset_now[e] = 1
        return
    cx = float(0.0)
    cy = float(0.0)
    for i in range(n):
        a = action[e, i]  # u = (+x - -x, +y - -y) from the one-hot move
        ux = float(a == 2) - float(a == 1)
        uy = float(a == 4) - float(a == 3)
        pos[e, i, 0] = pos[e, i, 0] + vel[e, i, 0] * DT  # semi-implicit Euler, as MPE
        pos[e, i, 1] = pos[e, i, 1] + vel[e, i, 1] * DT
        vel[e, i, 0] = vel[e, i, 0] * (1.0 - DAMPING) + ACCEL * ux * DT
        vel[e, i, 1] = vel[e, i, 1] * (1.0 - DAMPING) + ACCEL * uy * DT
        cx += pos[e, i, 0] / float(n)
        cy += pos[e, i, 1] / float(n)
    worst = float(0.0)
    for i in range(n):
        d = wp.length(wp.vec2(pos[e, i, 0] - cx, pos[e, i, 1] - cy))
        reward[e, i] = -d
        worst = wp.max(worst, d)
    spread[e] = worst
    t[e] = t[e] + 1
    trunc = t[e] >= max_cycles
    term = (not trunc) and worst < radius  # truncation wins on the last step
    terminated[e] = term
    truncated[e] = trunc
    reset_now[e] = 0
    if term or trunc:
        if mode == SAME_STEP:
            reset_now[e] = 1  # rendezvous_observe keeps final obs and restarts it in this step
        elif mode == NEXT_STEP:
            pending_reset[e] = 1


@wp.func
def observe(e: int, i: int, pos: wp.array3d(dtype=wp.float32), vel: wp.array3d(dtype=wp.float32),
            out: wp.array3d(dtype=wp.float32)):
    """[vel_i, pos_i, p_j - p_i for j != i in agent order]."""
    out[e, i, 0] = vel[e, i, 0]
    out[e, i, 1] = vel[e, i, 1]
    out[e, i, 2] = pos[e, i, 0]
    out[e, i, 3] = pos[e, i, 1]
    k = int(4)
    for j in range(pos.shape[1]):
        if j != i:
            out[e, i, k] = pos[e, j, 0] - pos[e, i, 0]
            out[e, i, k + 1] = pos[e, j, 1] - pos[e, i, 1]
            k += 2


@wp.kernel
def rendezvous_observe(
    # Params
    write_final: int, world_seed: wp.array(dtype=wp.int32),
    # State in
    reset_now: wp.array(dtype=wp.int32),
    # State out
    episode: wp.array(dtype=wp.int32), pos: wp.array3d(dtype=wp.float32),
    vel: wp.array3d(dtype=wp.float32), t: wp.array(dtype=wp.int32),
    # Outputs
    obs: wp.array3d(dtype=wp.float32), final_obs: wp.array3d(dtype=wp.float32),
):
    """Worlds flagged in reset_now keep their final observation (write_final) and draw a fresh
    start from their own stream (seed_e, episode_e); then every agent observes."""
    e = wp.tid()
    n = pos.shape[1]
    if reset_now[e] != 0:
        if write_final != 0:
            for i in range(n):
                observe(e, i, pos, vel, final_obs)
        rng = wp.rand_init(world_seed[e], episode[e])
        for i in range(n):
            pos[e, i, 0] = wp.randf(rng, -1.0, 1.0)
            pos[e, i, 1] = wp.randf(rng, -1.0, 1.0)
            vel[e, i, 0] = 0.0
            vel[e, i, 1] = 0.0
        episode[e] = episode[e] + 1
        t[e] = 0
    for i in range(n):
        observe(e, i, pos, vel, obs)


# ------------------------------------------------------------------ the scenario class
class Rendezvous(BatchedEnv):
    """Rendezvous-v0 (see the module docstring).  Arguments: ``N=3``, ``radius=0.1``,
    ``max_cycles=25`` plus the batch arguments (``num_envs``, ``device``, ``seed``,
    ``autoreset_mode``, ``num_threads``); float32 worlds only."""

    env_id = "Rendezvous-v0"

    def __init__(self, *, N: int = 3, radius: float = 0.1, max_cycles: int = 25, **kwargs) -> None:
        super().__init__(**kwargs)
        if self.precision != "float32":
            raise ValueError(f"precision: {self.env_id} runs float32 worlds only, got {self.precision!r}")
        self.N = v.check_int("N", N, minimum=2)
        self.radius = v.check_float("radius", radius, low=0.0)
        self.max_cycles = v.check_int("max_cycles", max_cycles, minimum=1)
        obs_dim = 4 + 2 * (self.N - 1)
        self.groups["agent"] = GroupSpec(name="agent", agents=tuple(f"agent_{i}" for i in range(self.N)),
                                         start=0, obs_dim=obs_dim, action_space=gymnasium.spaces.Discrete(5),
                                         observation_space=stack_group_spaces(obs_dim))
        self._allocate_common(self.N)  # clock, stream keys, flags, rewards
        self.agent_pos = self._world_array((self.N, 2), wp.float32)  # per-world buffers: [E, ...]
        self.agent_vel = self._world_array((self.N, 2), wp.float32)
        self.landmark_pos = self._world_array((0, 2), wp.float32)  # none (front ends frame the camera on it)
        self._action = self._world_array((self.N,), wp.int32)
        self._action_view = wp.to_torch(self._action)  # BatchedEnv validates actions, then copies them here
        self._obs_arrays["agent"] = self._world_array((self.N, obs_dim), wp.float32)
        self._final_obs_arrays["agent"] = self._world_array((self.N, obs_dim), wp.float32)
        self._spread = self._world_array((), wp.float32)
        self._metrics = {"spread": wp.to_torch(self._spread)}  # task metrics, in every step's info
        self._make_views()

    def _launch_step(self, worlds=None) -> None:  # captured once into a graph, replayed every step
        self._launch(rendezvous_step, worlds=worlds, inputs=[
            self._mode_code, self.max_cycles, self.radius, self._action, self.agent_pos, self.agent_vel,
            self._t, self._pending_reset, self._reset_now, self._reward, self._terminated,
            self._truncated, self._spread])
        self._launch_observe(write_final=self.autoreset_mode == war_envs.AutoresetMode.SAME_STEP, worlds=worlds)

    def _launch_observe(self, write_final: bool, worlds=None) -> None:  # also run by reset/set_state
        self._launch(rendezvous_observe, worlds=worlds, inputs=[
            int(write_final), self._world_seed, self._reset_now, self._episode, self.agent_pos,
            self.agent_vel, self._t, self._obs_arrays["agent"], self._final_obs_arrays["agent"]])

    def _state_arrays(self) -> dict:  # get_state / set_state / clone_worlds
        return {"agent_pos": self.agent_pos, "agent_vel": self.agent_vel, "landmark_pos": self.landmark_pos,
                "t": self._t, "episode": self._episode, "rng_key": self._world_seed,
                "pending_reset": self._pending_reset}


war_envs.register("Rendezvous-v0", f"{__name__}:Rendezvous", overwrite=True)


def demo() -> None:
    import torch

    import war_envs.testing

    war_envs.testing.check_all("Rendezvous-v0", max_cycles=10)
    env = war_envs.make("Rendezvous-v0", num_envs=1024, seed=0)
    env.reset()
    returns = torch.zeros(1024, 3)
    for _ in range(25):
        obs, rew, term, trunc, info = env.step({"agent": torch.randint(0, 5, (1024, 3))})
        returns += rew["agent"]
    print(f"Rendezvous-v0 passes war_envs.testing.check_all; random policy: mean return "
          f"{returns.mean():.2f}, mean final spread {info['spread'].mean():.3f}")
