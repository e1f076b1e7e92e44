"""The scenario interface: what every scenario declares so trainers and front ends need no
per-scenario code.

A scenario is a ``BatchedEnv`` subclass (``war_envs.core.batched_env``).  Besides its physics
(buffers and kernels) it declares the following; each has a default on ``BatchedEnv``, so a
scenario overrides only what it needs.  Front ends and ``war_train`` read these declarations and
nothing else (no probing for optional attributes, no tables keyed by scenario id).

``episode_metrics: tuple[EpisodeMetric, ...] = ()``
    The task metrics (and other reward conventions) a trainer logs for every finished episode,
    in column order.  Each ``EpisodeMetric`` turns one step's ``info`` into a per-world value
    and says how the values of an episode's steps reduce to one number (see ``EpisodeMetric``).
    A class attribute, or an instance attribute set in ``__init__`` when it depends on the
    scenario's arguments (e.g. how many agents are adversaries).
    ``war_train.metrics.EpisodeStats`` logs, per episode, ``episode_return`` (mean over agents of
    each agent's summed reward), ``episode_return/<group>``, ``episode_length`` and then these.

``progress_metric: str = "episode_return"``
    The column a progress bar shows: one of the names above.

``per_agent_metrics: tuple[str, ...] = ()``
    The ``info`` entries holding one value per agent (``[E, A]``, agent order; ``[E, A, k]``
    for a ``k``-vector, as Football-v0's ``ball_pos``, VMAS's own); every other
    tensor entry is per world (``[E]``) or per something else (landmarks: ``[E, L]``).  The
    PettingZoo front end hands agent i its own value of these, and the whole array of the others.

``episode_length_kwarg: str = "max_cycles"`` and ``episode_length_offset: int = 0``
    The constructor argument that sets the episode length: episodes last its value plus
    ``episode_length_offset`` steps (SMAX-v0's ``max_steps`` counts one step less, as JaxMARL's
    does).  ``gym.make_vec(..., max_episode_steps=k)`` sets it to ``k - episode_length_offset``.
    Every scenario also exposes the length in steps as ``max_cycles``.

``agents_can_leave: bool = False`` and ``alive_mask -> {group: bool Tensor[E, n_g]}``
    Whether agents can leave the game before the episode ends, and who is in it (for the
    observations just returned).  The default ``alive_mask`` is all True (tensors made once:
    read them, never write them).  A scenario whose agents leave sets ``agents_can_leave = True``,
    overrides ``alive_mask`` and puts the same ``{group: bool [E, n_g]}`` mask in every step's
    ``info["alive"]`` (and, with SAME_STEP autoreset, the finished episode's last mask in
    ``info["final_alive"]``, valid where ``info["_final_obs"]``).

``has_action_mask: bool = False`` and ``action_mask() -> {group: bool Tensor[E, n_g, n]}``
    Whether some actions are unavailable at times (StarCraft-style: attack only a unit in range,
    only "stop" once dead), and which are available for the observations just returned.  The
    mask has one entry per action of a ``Discrete(n)`` group; the default ``action_mask`` is
    all True (tensors made once: read them, never write them) and raises ``TypeError`` for a
    group whose action space is not ``Discrete``.  A scenario that sets ``has_action_mask =
    True`` (a class or instance attribute) overrides ``action_mask`` and puts the same
    ``{group: bool [E, n_g, n]}`` in every step's ``info["action_mask"]`` (with SAME_STEP
    autoreset: the mask for the observation handed out, i.e. the new episode's where a world
    was reset; the finished episode's last mask in ``info["final_action_mask"]``, valid where
    ``info["_final_obs"]``).  Its validated step refuses an unavailable action (an error naming the agent
    and the action); ``step(trusted=True)`` does not look at the mask (the scenario documents
    what an unavailable action then does).  ``war_envs.core.validation.check_action_mask``
    checks a mask that user code builds or passes on.

``world_state_dim: int = 0`` and ``world_state() -> Tensor[E, world_state_dim]``
    A global state beyond the agents' observations (SMAC's and JaxMARL's ``get_world_state``:
    every unit's absolute position, health, cooldown, the enemies' included), for the
    observations just returned: what a centralized critic may see that no agent does
    (``war_train``'s ``critic_input="world"``).  The default declares none (``world_state``
    raises ``TypeError``; ``env.state()``, every agent's observation, is then the global view).
    A scenario that declares one returns a view (read it, never write it) and, with SAME_STEP
    autoreset, puts the finished episode's last world state in ``info["final_world_state"]``,
    valid where ``info["_final_obs"]``.

``clips_actions: bool = False``
    Whether the kernels clip ``Box`` actions into the action space, as the scenario's reference
    does (Gymnasium's Pendulum clips its torque, MountainCarContinuous its force).  The validated
    step then accepts any finite float32 value (NaN, inf and values beyond the float32 range
    are still refused, naming the argument; ``validation.check_box(..., clipped=True)``) and
    the scenario documents what the clipped value changes (the dynamics see the clipped value;
    a reward may see the value given, as the reference's does).  A class or instance attribute
    (e.g. off when the scenario is built with ``strict_actions=True``); front ends that check
    actions themselves read it.

``private_future: tuple[str, ...] = ()`` and ``_redraw_private_future(worlds, generator)``
    The state entries that hold random draws already made but not yet seen by any agent: what
    the world will do, decided in advance (Relay-v0's goal schedule: the times of the switches
    to come and the goals they switch to).  ``get_state`` hands them out with the rest, so a
    copy of a world (``clone_worlds``, a planner's ``set_state``) would replay that future
    exactly: a planner searching in such copies would *peek*.  ``redraw_private_future(worlds,
    generator)`` re-draws them from a fresh stream, consistently with what the agents have seen
    (the goal in force stays; the time of the next switch is drawn after the present step): it
    always re-draws the world's stream key ``rng_key`` (from which every later draw comes: the
    next start, in-episode noise), and calls the scenario's ``_redraw_private_future(worlds,
    generator)`` for its declared entries.  A scenario whose reset draws a schedule into its
    state declares the entries and overrides that method (vectorised torch on the env's
    device, from ``generator`` only); the default declares none.

``random_start: bool = True``
    Whether a reset draws the start from the world's own stream.  A scenario whose reference
    starts every episode from the same state (VMAS's ``multi_give_way`` without observation
    noise, TagGridWorld-v0's fixed starts) sets it False (a class or instance attribute);
    ``war_envs.testing`` then does not ask another seed for another start.

``informative_observation: bool = True``
    Whether the observations show the state.  A scenario whose observation is a constant
    (VMAS's ``pollock`` without lidar: ``[0]`` for every agent) sets it False; ``war_envs.testing``
    then does not ask a new start (another seed, an auto-reset) to be seen in the observations.

``evaluation_variants(env_kwargs) -> {name: kwargs}`` (classmethod, default ``{}``)
    Other start distributions an evaluation should also play: each entry's kwargs override the
    run's ``env_kwargs`` (``war_envs.make(id, **{**env_kwargs, **kwargs})``).  Variants equal to
    the run's own env are left out.

``render_frame(world=0, *, width=700, height=700, original_cam_range=None) -> uint8 [H, W, 3]``
    A picture of one world (no display needed).  The base raises ``TypeError`` ("no renderer"):
    front ends call it and let that error through.  ``original_cam_range`` is mpe2's camera
    argument (a scenario with a fixed arena may ignore it).

Metric conventions: a metric's ``step`` is called once per env step on the ``info`` dict the
step returned, *before* the next step overwrites it, and must be pure tensor ops on the env's
device (no ``.item()``, ``.cpu()``, boolean-mask indexing or other host synchronization), so
statistics stay on the device.  With SAME_STEP autoreset the task metrics in ``info`` at a step
that ends an episode must be the finished episode's (the reset only touches state and
observations), since that step's value is the episode's last.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

__all__ = ["EpisodeMetric", "FINAL_STATE_KEYS", "REDUCTIONS"]

#: the per-world tensors of a step's ``info`` that describe the finished episodes' last
#: observations (SAME_STEP autoreset), not task metrics: front ends leave them out of metrics
FINAL_STATE_KEYS = ("final_obs", "_final_obs", "final_world_state")

#: how an episode's per-step values become one number
REDUCTIONS = {
    "sum": "summed over the episode's steps",
    "mean": "summed over the episode's steps, divided by the episode length",
    "last": "the value at the episode's last step",
    "any": "1.0 if the value was nonzero at any step of the episode, else 0.0",
}


@dataclasses.dataclass(frozen=True)
class EpisodeMetric:
    """One per-episode column: ``step(info)`` gives a per-world value for one step, ``reduce``
    says how an episode's values combine.

    - ``name``: the column name (``metrics.csv``, ``eval.json``); unique within a scenario and
      distinct from ``episode_return``, ``episode_return/<group>`` and ``episode_length``.
    - ``doc``: one line saying what it measures (for a reward convention: which convention).
    - ``step``: ``info`` (as ``env.step`` returns it) -> ``Tensor[E]`` on the env's device, any
      real dtype (accumulated in float64).  Pure tensor ops: no host synchronization.
    - ``reduce``: ``"sum"``, ``"mean"`` (sum / episode length), ``"last"`` or ``"any"``
      (see ``REDUCTIONS``).
    """

    name: str
    doc: str
    step: Callable[[dict], torch.Tensor]
    reduce: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"name: expected a non-empty str, got {self.name!r}")
        if not isinstance(self.doc, str):
            raise TypeError(f"doc: expected a str for metric {self.name!r}, got {type(self.doc).__name__}")
        if not callable(self.step):
            raise TypeError(f"step: expected a callable info -> Tensor[E] for metric {self.name!r}, "
                            f"got {type(self.step).__name__}")
        if self.reduce not in REDUCTIONS:
            raise ValueError(f"reduce: expected one of {list(REDUCTIONS)} for metric {self.name!r}, "
                             f"got {self.reduce!r}")
