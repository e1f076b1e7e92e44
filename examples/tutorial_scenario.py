"""Tutorial: a new scenario in one file, on the shared MPE world (``war_envs.scenarios.mpe``).

**Rendezvous-v0** — N agents start scattered over [-1, 1)² and must meet: each agent is
rewarded ``-|p_i - centroid|``; the episode terminates once every agent is within ``radius``
of the centroid and is truncated after ``max_cycles`` steps.  Actions are MPE's: Discrete(5)
(0 no-op, 1 -x, 2 +x, 3 -y, 4 +y) or, with ``continuous_actions=True``, Box(0, 1, (5,)).  An
agent observes ``[vel(2), pos(2), others' relative positions (2(N-1))]``.  Physics (soft
contacts, damping), float32/float64 worlds and every autoreset mode come from the MPE world.
docs/new_scenario.md walks through this file.

Run ``python examples/tutorial_scenario.py`` for a demo (it runs ``war_envs.testing.check_all``
and a random rollout); ``import tutorial_scenario`` (with examples/ on ``sys.path``) registers
``Rendezvous-v0`` so ``war_envs.make("Rendezvous-v0", num_envs=1024)`` works.
"""

if __name__ == "__main__":
    # Run as a script, this file is ``__main__``, a name no other process can import: the
    # registry's entry point and spawned workers need the module's real name.  Import it under
    # that name and run the demo from there (the kernels are then built from one module only).
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import tutorial_scenario

    tutorial_scenario.demo()
    raise SystemExit(0)

from typing import Any

import warp as wp

import war_envs
from war_envs.core import validation as v
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Layout, MPEBase, info, param
from war_envs.scenarios.mpe.common import uniform_reset


# ------------------------------------------------------------------ Warp functions (w: the world struct)
@wp.func
def rendezvous_reward(w: Any, e: int):
    """r_i = -|p_i - centroid|; info ``spread`` = max_i |p_i - centroid|; terminal once it is
    below ``radius``."""
    n = w.agent_pos.shape[1]
    cx = type(w.radius)(0.0)
    cy = type(w.radius)(0.0)
    for i in range(n):
        cx = cx + w.agent_pos[e, i, 0]
        cy = cy + w.agent_pos[e, i, 1]
    cx = cx / type(w.radius)(float(n))
    cy = cy / type(w.radius)(float(n))
    worst = type(w.radius)(0.0)
    for i in range(n):
        d = W.distance(w.agent_pos[e, i, 0], w.agent_pos[e, i, 1], cx, cy)
        w.reward[e, i] = -d
        worst = wp.max(worst, d)
    w.spread[e] = worst
    return w.terminate_on_success != 0 and worst < w.radius


@wp.func
def rendezvous_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[vel_i, pos_i, p_j - p_i for every j != i in agent order (or the k nearest, zero-padded)]."""
    o = W.write_self(out, e, i, w)
    W.write_relative_positions(out, e, i, o, i, w.agent_pos[e, i, 0], w.agent_pos[e, i, 1], w.agent_pos, w.agent_k)


def spread_metric(step_info: dict):
    """The episode metric's per-step value: ``info["spread"]`` ([E])."""
    return step_info["spread"]


# ------------------------------------------------------------------ the scenario class
class Rendezvous(MPEBase):
    """Rendezvous-v0 (see the module docstring).  Arguments: ``N=3``, ``radius=0.1``,
    ``terminate_on_success=True`` (False: episodes only truncate), ``max_cycles=25``,
    ``continuous_actions=False``, ``num_agent_neighbors=None`` (k: observe the k nearest others)
    plus the batch arguments (``num_envs``, ``device``, ``seed``, ``precision``,
    ``autoreset_mode``, ``num_threads``).  Info: ``spread [E]``."""

    env_id = "Rendezvous-v0"
    reset_world = uniform_reset  # agents (then landmarks: none here) ~ U[-1, 1)², from world e's stream
    reward_world = rendezvous_reward
    observe_agent = rendezvous_observe
    options = {"terminate_on_success", "num_agent_neighbors"}  # the MPEBase options it implements
    episode_metrics = (EpisodeMetric("spread", "largest distance of an agent to the centroid at the "
                                     "episode's last step", spread_metric, "last"),)

    def __init__(self, *, N: int = 3, radius: float = 0.1, terminate_on_success: bool = True, **kwargs) -> None:
        self.N = v.check_int("N", N, minimum=2)
        self.radius = v.check_float("radius", radius, low=0.0)
        super().__init__(terminate_on_success=terminate_on_success, **kwargs)

    def _layout(self) -> Layout:
        n = self.N
        return Layout(groups=[("agent", [f"agent_{i}" for i in range(n)])],
                      agent_size=[0.05] * n, agent_collide=[True] * n, agent_color=[(0.35, 0.85, 0.35)] * n,
                      landmark_size=[], landmark_color=[])

    def _obs_dim(self, group: str) -> int:
        return 4 + 2 * (self.num_agent_neighbors or self.N - 1)

    def _fields(self) -> dict:
        return {"radius": param(self.radius), "terminate_on_success": param(int(self.terminate_on_success), "int"),
                "agent_k": param(self.agent_k, "int"), "spread": info("float")}


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
