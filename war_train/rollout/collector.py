"""The WAR rollout collector for one worker (one batched env): what ``war_train``'s WAR mode
collects with.

Every env step, each group decides in the worlds where it must (its schedule says so, or it has
no action in force: a new episode, a fragment closed at a window boundary) and *holds* its last
action in the others (``fill="hold"``), or lets a cheap draft policy act there
(``fill="draft"``).  The schedule, the held actions and the macro-step accounting are
``war_envs.war.env.WarEnv``'s (the same wrapper any other trainer can use); the collector adds
the policy calls, the transition buffers (``RolloutStorage``: preallocated ``[T, E]`` per group and
field, reused every window), windows and their clocks.  A group's transition runs
from one of its decisions to the next:

    reward  R = Σ_{i<k} γ^i r_{t0+i}        (accumulated over the k held steps)
    next    V(s_{t0+k}) · γ^k                (SMDP bootstrap; see ``war_train.learn.losses.smdp_gae``)

A transition also ends where the episode ends (termination: nothing to bootstrap; truncation:
V(final state)).  Rollouts run in **windows**; a window ends when its ``Trigger`` fires (B
agent-transitions ready, a number of env steps, or ``T_max_wait`` seconds on the worker's
clock).  A macro-step still running at the window end is carried into the next window (it is
emitted there, with the behaviour version of its decision); a transition that ends exactly at
the boundary is emitted with the bootstrap V(s_end) of the current critic.  The transitions of
one trajectory (world × episode, ``traj`` id) inside one window form a **fragment**; the last
transition of a fragment that did not end its episode is a truncation for GAE (trace cut,
bootstrap kept) and is marked ``fragment_end``.

Batches are time-major, indexed by the step at which a transition *ends* (row r holds the
transitions whose next decision is at window step r+1), so that with every group deciding at
every step a window is exactly lock-step MAPPO's rollout buffer.

Time: each worker has a clock.  Policy calls cost what ``InferenceCost`` says under a resource
model: ``"parallel"`` (each group on its own worker, whose lanes evaluate the group's agents in
parallel — a call over w worlds costs ``cost_g(w)``; the step waits for the slowest group) or
``"shared"`` (one device evaluates every decision in turn: ``Σ_g cost_g(w·n_g)``).  With a
``VirtualClock`` the declared cost and the *measured* env-step time advance the clock (nothing
else does: real policy forwards and bookkeeping are not counted); with a ``WallClock`` the
declared cost is spent for real (``sleep``: concurrent sleeps per group under ``"parallel"``,
in turn under ``"shared"``; ``busy``: in turn, ``"shared"`` only — Python threads burning CPU
would hold the GIL, so a busy parallel model cannot run here).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import time

import torch

from war_envs.core import validation as v
from war_envs.war.costs import RESOURCES, CostModel, InferenceCost
from war_envs.war.env import Selection, WarEnv, action_layout
from war_envs.war.scheduler import Schedule
from war_train.learn.policy import CriticState, first_action_mask, host_reads_are_free, push_frame, step_action_mask
from war_train.rollout.storage import RolloutStorage

__all__ = ["Trigger", "GroupTransitions", "WindowBatch", "Collector", "BehaviourPolicy", "stitch", "concat_workers",
           "DRAFT"]

#: suffix of a group's draft-policy lane (``"commander" + DRAFT``)
DRAFT = "/draft"


class Trigger:
    """When a window ends and learning starts: ``batch_size`` agent-transitions ready, or
    ``max_steps`` env steps, or ``max_wait`` seconds on the clock since ``start`` — whichever
    comes first (0 disables a condition).  Fires at most once per ``start``."""

    def __init__(self, batch_size: int = 0, max_wait: float = 0.0, max_steps: int = 0) -> None:
        self.batch_size = v.check_int("batch_size", batch_size, minimum=0)
        self.max_wait = v.check_float("max_wait", max_wait, low=0.0)
        self.max_steps = v.check_int("max_steps", max_steps, minimum=0)
        if not (self.batch_size or self.max_wait or self.max_steps):
            raise ValueError("Trigger: expected batch_size, max_wait or max_steps > 0")
        self.fired = False
        self.reason: str | None = None
        self._t0 = 0.0

    def start(self, now: float) -> None:
        self._t0 = float(now)
        self.fired = False
        self.reason = None

    def check(self, ready, steps: int, now: float) -> bool:
        """True exactly once: the first call at which a condition holds.  ``ready``: the
        agent-transitions ready, or a function returning them (asked only with a ``batch_size``:
        counting them reads the device)."""
        if self.fired:
            return False
        if self.batch_size and (ready() if callable(ready) else ready) >= self.batch_size:
            self.reason = "batch"
        elif self.max_steps and steps >= self.max_steps:
            self.reason = "steps"
        elif self.max_wait and now - self._t0 >= self.max_wait:
            self.reason = "wait"
        else:
            return False
        self.fired = True
        return True


# ----------------------------------------------------------------------------- batches
_ROW_FIELDS = ("obs", "state", "actions", "logp", "values", "next_values", "rewards", "k", "terminated",
               "truncated", "valid", "version", "traj", "start", "draft", "fragment_end", "action_mask",
               "alive", "episode_start", "actor_h", "critic_h")


@dataclasses.dataclass
class GroupTransitions:
    """One group's transitions of a window, time-major ``[T, E, ...]`` by the step they end at.

    ``values``/``next_values`` are raw critic outputs (normalized units when the trainer
    normalizes values); ``next_values`` is V at the next decision, V(final state) after a
    truncation, the window-end bootstrap at a fragment end, 0 after a termination.
    ``rewards`` are Σ γ^i r over the ``k`` held steps."""

    obs: torch.Tensor          # [T, E, n, d]  observation at the decision
    state: torch.Tensor        # [T, E, S]     critic input at the decision
    actions: torch.Tensor      # [T, E, n, *a] the policy's sample as stored for learning (Discrete: int64)
    logp: torch.Tensor         # [T, E, n]     behaviour log-probability
    values: torch.Tensor       # [T, E, n]
    next_values: torch.Tensor  # [T, E, n]
    rewards: torch.Tensor      # [T, E, n]
    k: torch.Tensor            # [T, E]        steps in the macro-step (int64)
    terminated: torch.Tensor   # [T, E, n] bool  per agent, the env's flags at the transition's last step
    truncated: torch.Tensor    # [T, E, n] bool  (agents that left the game stay terminated; all at an episode end)
    valid: torch.Tensor        # [T, E] bool   a transition ends here
    version: torch.Tensor      # [T, E]        behaviour policy version (int64)
    traj: torch.Tensor         # [T, E]        trajectory id: (global world index) * 2**32 + episode number
    start: torch.Tensor        # [T, E]        global step of the decision (int64)
    draft: torch.Tensor        # [T, E] bool   the action came from the draft policy
    fragment_end: torch.Tensor  # [T, E] bool  last transition of an unfinished trajectory in this window
    action_mask: torch.Tensor   # [T, E, n, A] bool: available actions at the decision (A = 0: no masks)
    alive: torch.Tensor         # [T, E, n] bool: the agent was in the game at the decision (env.alive_mask)
    episode_start: torch.Tensor  # [T, E] bool: the decision is at its episode's first step (a GRU starts from 0)
    actor_h: torch.Tensor       # [T, E, n, H] the actor's GRU state before the decision (H = 0: feed-forward)
    critic_h: torch.Tensor      # [T, E, H]    the critic's GRU state before the decision

    @property
    def n_agents(self) -> int:
        return self.actions.shape[2]

    @property
    def agent_transitions(self) -> int:
        return int(self.valid.sum()) * self.n_agents

    def flat(self, name: str, mask: torch.Tensor | None = None) -> torch.Tensor:
        """``field[valid]`` (or ``[mask]``): world-transitions in (row, world) order."""
        return getattr(self, name)[self.valid if mask is None else mask]


@dataclasses.dataclass
class WindowBatch:
    """One worker's window: per-group transitions and what the window cost."""

    groups: dict[str, GroupTransitions]
    steps: int                      # env steps of every world in this window
    num_envs: int
    clock_seconds: float            # elapsed on the worker's clock (modelled or real)
    env_seconds: float              # measured env.step time
    inference_seconds: float        # modelled (declared) or measured policy-call time
    decisions: dict[str, int]       # agent-decisions per lane
    calls: dict[str, int]           # policy calls per lane
    reason: str | None              # what ended the window: batch / steps / wait / preempted
    preempted: bool = False
    step_calls: list = dataclasses.field(default_factory=list)  # per step: {lane: deciding worlds}
    step_env_seconds: list = dataclasses.field(default_factory=list)  # per step: measured env.step

    @property
    def env_steps(self) -> int:
        return self.steps * self.num_envs

    def recost(self, profiles: dict, lanes: dict[str, int], resource: str, *, scale: float = 1.0,
               env_time: bool = True) -> float:
        """This window's duration had its declared costs been paid under ``resource`` (no
        jitter): the same decisions, re-priced — e.g. a window collected under ``"parallel"``
        on a ``"shared"`` device."""
        v.check_choice("resource", resource, RESOURCES)
        total = 0.0
        for calls, env_s in zip(self.step_calls, self.step_env_seconds):
            costs = [(profiles[lane].seconds(n) * scale, profiles[lane].seconds(n * lanes[lane]) * scale)
                     for lane, n in calls.items() if n > 0]
            if costs:
                total += max(c[0] for c in costs) if resource == "parallel" else sum(c[1] for c in costs)
            if env_time:
                total += env_s
        return total

    @property
    def agent_transitions(self) -> int:
        return sum(b.agent_transitions for b in self.groups.values())


def stitch(batches: list[GroupTransitions]) -> GroupTransitions:
    """Consecutive windows of one worker and group joined along time: fragments of the same
    trajectory become one sequence again (only the last window's fragment ends remain)."""
    if not batches:
        raise ValueError("batches: expected at least one window")
    fields = {name: torch.cat([getattr(b, name) for b in batches]) for name in _ROW_FIELDS}
    T = batches[-1].valid.shape[0]
    frag = torch.zeros_like(fields["fragment_end"])
    frag[-T:] = batches[-1].fragment_end
    fields["fragment_end"] = frag
    return GroupTransitions(**fields)


# ----------------------------------------------------------------------------- behaviour policy
def _draw(head, out: torch.Tensor, generator: torch.Generator, mask: torch.Tensor | None = None):
    return head.draw(out, generator, mask)


class BehaviourPolicy:
    """What the collector calls: sample from a group's actor (from the available actions, where
    the env has masks), value from its critic (centralized on the state, or local on the
    observations), and the env action of a sample (``to_env``: Box samples are squashed into the
    box).  A recurrent group's calls take ``hidden``: its GRU states and episode starts (the
    collector's ``hidden_size``).  ``sample(head, out, generator, mask)`` draws the actions: the
    head's own draw by default; lock-step under torchrun passes its reducer's (``dist.sample``:
    every rank's noise drawn, this rank's rows kept, so that ranks sample what one process would).
    ``lane_gens``: a generator per lane called concurrently (the draws then do not depend on the
    threads' order).  ``planners``: ``{group: Planner}``: that group's actions are a search's
    over copies of the collector's deciding worlds (``env`` and ``worlds``: the collector's env
    and its index of them), their log-probability the search's improved policy's (or, with the
    planner's ``ratio="policy"``, the group's own policy's; ``war_train.plan.planner``)."""

    def __init__(self, policies, gen: torch.Generator, drafts: dict | None = None, lane_gens: dict | None = None,
                 sample=None, planners: dict | None = None) -> None:
        self.policies, self.gen, self.drafts = policies, gen, drafts or {}
        self.lane_gens = lane_gens or {}
        self.sample = _draw if sample is None else sample
        self.planners = planners or {}

    @torch.no_grad()
    def act(self, group, obs, state, avail=None, hidden=None, worlds=None, env=None):
        p = self.policies[group]
        if group in self.planners:   # (feed-forward: the planner refuses recurrent policies)
            index = (torch.arange(env.num_envs, device=obs.device) if isinstance(worlds, slice)
                     else worlds.nonzero().flatten())
            planner = self.planners[group]
            decision = planner.decide(env, index)
            actions, logp = decision.actions.unsqueeze(1), decision.logp.unsqueeze(1)
            if planner.ratio == "policy":   # (the policy's own probability of the searched action)
                out, _ = p.actor(p.actor_input(obs))
                logp = p.dist.log_prob(out, actions, avail)
            return actions, logp, p.value(state, obs)[0]
        gen = self.lane_gens.get(group, self.gen)
        if hidden is not None:   # ((actor_h, critic_h, starts): one GRU step of actor and critic)
            actor_h, critic_h, starts = hidden
            out, actor_h = p.forward_actor(obs, actor_h, starts)
            actions, logp = self.sample(p.dist, out, gen, avail)
            values, critic_h = p.value(state, obs, critic_h, starts)
            return actions, logp, values, (actor_h, critic_h)
        out, _ = p.actor(p.actor_input(obs))   # (obs: the collector's frame stack with frame_stack)
        actions, logp = self.sample(p.dist, out, gen, avail)
        values, _ = p.value(state, obs)
        return actions, logp, values

    @torch.no_grad()
    def draft(self, group, obs, state, avail=None):
        p = self.policies[group]
        out, _ = self.drafts[group](p.actor_input(obs))
        actions, logp = p.dist.draw(out, self.lane_gens.get(group + DRAFT, self.gen), avail)
        values, _ = p.value(state, obs)
        return actions, logp, values

    def to_env(self, group, actions):
        return self.policies[group].dist.to_env(actions)

    @torch.no_grad()
    def value(self, group, state, obs, hidden=None):
        """V (normalized units); ``hidden``: a recurrent group's ``(critic_h, starts)``, not advanced."""
        if hidden is None:
            return self.policies[group].value(state, obs)[0]
        return self.policies[group].value(state, obs, *hidden)[0]


# ----------------------------------------------------------------------------- collector
#: what a decision stores of itself (``_Pending``'s fields; ``avail`` and ``alive`` aside)
_DECISION_FIELDS = ("obs", "state", "actions", "logp", "values", "traj", "draft", "episode_start", "actor_h",
                    "critic_h")


class _RowDecision:
    """A storage row seen as ``_Pending``: where a decision is written with direct rows."""

    def __init__(self, row: dict) -> None:
        for name in _DECISION_FIELDS:
            setattr(self, name, row[name])
        self.avail, self.alive = row["action_mask"], row["alive"]


class _Pending:
    """What the policy said at each world's last decision of a group: its inputs, its sample
    (``actions``, as stored for learning; the env action it maps to is the ``WarEnv``'s held
    action), log-prob and value, the available actions (``avail``, ``[E, n, A]``; A = 0 without
    masks), whether it was its episode's first step and, for a recurrent group, the GRU states
    before it (``actor_h [E, n, H]``, ``critic_h [E, H]``; H = 0 otherwise); the accumulated
    reward, ``k``, version and start are the ``WarEnv``'s macro-step."""

    def __init__(self, E: int, n: int, d: int, S: int, device, action: tuple, n_avail: int, H: int) -> None:
        z = lambda *s, dtype=torch.float32: torch.zeros(*s, dtype=dtype, device=device)  # noqa: E731
        shape, dtype = action
        self.obs, self.state = z(E, n, d), z(E, S)
        self.actions = z(E, n, *shape, dtype=dtype)
        self.logp, self.values = z(E, n), z(E, n)
        self.traj = z(E, dtype=torch.long)
        self.draft = torch.zeros(E, dtype=torch.bool, device=device)
        self.avail = torch.zeros(E, n, n_avail, dtype=torch.bool, device=device)
        self.alive = torch.ones(E, n, dtype=torch.bool, device=device)
        self.episode_start = torch.zeros(E, dtype=torch.bool, device=device)
        self.actor_h, self.critic_h = z(E, n, H), z(E, H)


class Collector:
    """Collects WAR windows from one batched env (SAME_STEP autoreset).

    ``policy`` provides ``act(group, obs[w, n, d], state[w, S], avail) -> (actions[w, n, ...],
    logp[w, n], values[w, n])`` (``avail``: bool ``[w, n, A]`` available actions, or None when
    the env has no action masks; ``actions`` as stored for learning), ``to_env(group, actions)``
    (what the env receives for them), ``value(group, state[w, S], obs[w, n, d]) -> values[w, n]``
    and, for ``fill="draft"``, ``draft(group, obs, state, avail)`` like ``act``.  With
    ``env.has_action_mask`` the collector reads the masks after the reset and after every step
    (``info["action_mask"]``) and stores each decision's with its transition.  ``schedule``: when each group decides (default:
    lock-step).  ``cost``: an ``InferenceCost`` (default: measured policy-call times on a
    virtual clock).  ``cost_models[group]``: ``CostModel``s fed with every call's cost
    (declared, or measured when the lane has no profile) so that the trainer can re-plan.
    ``draft_groups``: groups acting through their draft policy between decisions.
    ``world_offset``: index of this worker's first world in the whole batch (trajectory ids).
    ``stats``: an object with ``step(rew, info, done)`` (episode statistics), optional.
    ``env_time``: advance a virtual clock by the measured env-step time too (False: only the
    declared costs move it — fully deterministic, for tests).
    ``frames``: ``{group: F}`` -- the policy sees the group's last ``F`` observations, newest
    first, zeros before the episode's first (``frame_stack``; default 1: the observation); the
    stacks advance every env step, decisions or not, and are what transitions store as ``obs``.
    ``hidden_size``: ``{group: H}`` -- the group's policy is recurrent (GRU states ``[E, n, H]``
    for the actor, ``[E, H]`` for its centralized critic; groups left out: feed-forward).  Its GRUs
    step only at the group's decisions: the inputs are the decision-point observations and states,
    the states are held in between and start from zero at an episode's first step (where every
    group decides).  The collector carries the states and calls ``act(group, obs, state, avail,
    hidden=(actor_h, critic_h, starts))``, which returns ``(actions, logp, values, (actor_h',
    critic_h'))``, and ``value(group, state, obs, hidden=(critic_h, starts))`` for bootstraps; each
    transition stores the states before its decision and ``episode_start`` (what the learner
    re-runs the GRUs from: ``war_train.rollout.sequences``).  Draft policies are feed-forward: a
    recurrent group cannot have one.
    ``lane_threads``: ``{lane: cpu ids or None}`` — call each lane's policy on a thread of its own
    (pinned to those CPUs), all lanes of a step at the same time: the parallel resource model for
    real (torch's kernels release the GIL).  The policy must then draw each lane's samples from a
    generator of its own so that the draws do not depend on the threads' order.
    ``window_steps``: the rows a window's storage holds before it first grows (``RolloutStorage``).
    ``direct_rows``: in windows under the every-step schedule (lock-step), a decision is written
    straight into the storage row its transition closes in (k = 1: the decision's own row) instead
    of through the pending decisions and a copy at its close — the same transitions, fewer copies
    (lock-step's mode sets it); a collector with it cannot move worlds (work stealing).
    ``branch_free`` (default: on a non-CPU device): the rollout never reads a device value on
    the host (the property a CUDA rollout needs, ``tests/test_host_sync.py``): every lane's policy
    is called on every world each step and its outputs are kept where the lane decides
    (``torch.where``), truncated worlds are bootstrapped every step, and the step's deciding-world
    counts are settled on the clock, the cost models and the counters once, at ``end_window`` (one
    read per window).  So the clock is not current during the window: a round of one worker
    whose windows end after a number of steps (no ``batch_size`` / ``max_wait`` trigger).
    Without it (the CPU) a lane's policy is called on its deciding worlds only and every step is
    settled at once; the two paths write the same transitions from the same policy outputs.
    """

    def __init__(self, env, policy, *, gamma: float, schedule: Schedule | None = None,
                 cost: InferenceCost | None = None, cost_models: dict[str, CostModel] | None = None,
                 draft_groups=(), world_offset: int = 0, stats=None, seed: int | None = None,
                 env_time: bool = True, lane_threads: dict | None = None, frames: dict | None = None,
                 hidden_size: dict | None = None, branch_free: bool | None = None, window_steps: int = 16,
                 critic_input: str = "state", critic_time: bool = False, bootstrap_truncation: bool = True,
                 direct_rows: bool = False) -> None:
        self.war = WarEnv(env, schedule, gamma=gamma, trusted=True)   # (the policy samples from the spaces and masks)
        self.env = env
        #: the critics' input (``TrainConfig.critic_input`` and ``critic_time``)
        self.critic = CriticState(env, critic_input, critic_time)
        self.policy = policy
        self.gamma = self.war.gamma
        self.groups = self.war.groups
        self.E = env.num_envs
        self.device = self.war.device
        self.draft_groups, self.hidden_size = self._check_groups(draft_groups, hidden_size)
        lanes = {g: s.n_agents for g, s in self.groups.items()}
        lanes.update({g + DRAFT: self.groups[g].n_agents for g in self.draft_groups})
        self.lanes = lanes
        self.cost = cost if cost is not None else InferenceCost({lane: None for lane in lanes}, lanes)
        if set(self.cost.lanes) != set(lanes):
            raise ValueError(f"cost: expected lanes {sorted(lanes)}, got {sorted(self.cost.lanes)}")
        self.clock = self.cost.clock
        #: the rollout's CUDA path (see the class docstring); default: on a non-CPU device
        self.branch_free = not host_reads_are_free(self.device) if branch_free is None else bool(branch_free)
        if self.branch_free and not self.cost.virtual:
            raise ValueError("branch_free: the host-sync-free rollout settles its declared costs once per window, "
                             "on a virtual clock; real costs are paid step by step (cost_mode='virtual')")
        self.war.host_checks = not self.branch_free
        #: under an every-step schedule, decisions are written straight into the row their
        #: transition closes in (the decision's own: k = 1), not through ``pending``
        self.direct_rows = v.check_bool("direct_rows", direct_rows)
        if self.direct_rows and self.draft_groups:
            raise ValueError("direct_rows: needs every group deciding at every step; drafts act between decisions")
        self._direct, self._finished, self._env_actions = False, None, {}
        self._every = Selection.every_world(self.E, self.device)   # (every world: plain copies)
        self.cost_models = cost_models if cost_models is not None else {}
        self._lane_pools = _lane_pools(lane_threads, lanes)
        self.world_offset = int(world_offset)
        #: (global world index) * 2**32: trajectory ids add each world's episode number
        self._world_ids = (torch.arange(self.E, device=self.device) + self.world_offset) * 2 ** 32
        self.stats = stats
        self.env_time = bool(env_time)
        #: V(final state) of truncated episodes computed (False: a truncation ends the return, as
        #: ``TrainConfig.bootstrap_truncation=False`` learns it; next values 0 there)
        self.bootstrap_truncation = bool(bootstrap_truncation)
        self.frames = {g: v.check_int(f"frames[{g!r}]", (frames or {}).get(g, 1), minimum=1) for g in self.groups}
        self._reset_worlds(env, seed)
        self._store = RolloutStorage({g: self._row_layout(g) for g in self.groups}, self.device,
                                    capacity=v.check_int("window_steps", window_steps, minimum=1))
        self._window_open = False

    def _check_groups(self, draft_groups, hidden_size) -> tuple[tuple, dict]:
        """``(draft groups, {group: GRU size}}``, checked against the env's groups."""
        draft_groups = tuple(draft_groups)
        for g in draft_groups:
            if g not in self.groups:
                raise ValueError(f"draft_groups: unknown group {g!r}; groups: {list(self.groups)}")
        sizes = {g: v.check_int(f"hidden_size[{g!r}]", (hidden_size or {}).get(g, 0), minimum=0) for g in self.groups}
        unknown = sorted(set(hidden_size or {}) - set(self.groups))
        recurrent_drafts = [g for g in draft_groups if sizes[g]]
        if unknown or recurrent_drafts:
            raise ValueError(f"hidden_size: unknown groups {unknown}" if unknown else
                             f"draft_groups: group {recurrent_drafts[0]!r} is recurrent; draft policies are "
                             f"feed-forward (use fill='hold')")
        return draft_groups, sizes

    def _reset_worlds(self, env, seed) -> None:
        """Reset every world (``seed``) and set up what the collector carries from step to step:
        observations, critic inputs, frame stacks, available actions, who is in the game, the last
        step's flags, the pending decisions and the GRU states."""
        obs = self.war.reset(seed=seed)
        self.obs = {g: o.clone() for g, o in obs.items()}
        self.state = self.critic.current(self.obs)
        #: what the policy sees of each group: the observations, or the frame stacks ``[E, n, F·d]``
        self.seen = {g: self._push(g, None, self.obs[g], torch.ones(self.E, dtype=torch.bool, device=self.device))
                     for g in self.groups}
        self.masked = bool(env.has_action_mask)
        #: bool [E, n, A] available actions at the current observations ([E, n, 0] without masks)
        self.avail = (first_action_mask(env) if self.masked else
                      {g: torch.zeros(self.E, s.n_agents, 0, dtype=torch.bool, device=self.device)
                       for g, s in self.groups.items()})
        self.action_layouts = {g: action_layout(s.action_space) for g, s in self.groups.items()}
        self.can_leave = bool(env.agents_can_leave)
        #: bool [E, n]: agents in the game at the current observations (all, where nobody leaves)
        self.alive = {g: (env.alive_mask[g].clone() if self.can_leave else
                          torch.ones(self.E, s.n_agents, dtype=torch.bool, device=self.device))
                      for g, s in self.groups.items()}
        #: per group, the agents' (terminated, truncated) ``[E, n]`` of the last env step
        self._agent_flags = {g: (torch.zeros(self.E, s.n_agents, dtype=torch.bool, device=self.device),) * 2
                             for g, s in self.groups.items()}
        S = self.state.shape[1]
        self.pending = {g: _Pending(self.E, s.n_agents, self.seen[g].shape[-1], S, self.device, self.action_layouts[g],
                                    self.avail[g].shape[-1], self.hidden_size[g]) for g, s in self.groups.items()}
        #: recurrent groups' GRU states ``[actor [E, n, H], critic [E, H]]`` after their last decision
        self.hidden = {g: [self.pending[g].actor_h.clone(), self.pending[g].critic_h.clone()]
                       for g in self.groups if self.hidden_size[g]}

    @property
    def schedule(self) -> Schedule:
        return self.war.schedule

    @schedule.setter
    def schedule(self, schedule: Schedule) -> None:  # a re-plan between windows
        self.war.schedule = schedule

    @property
    def t(self) -> int:
        """Global step of this worker."""
        return self.war.t

    @property
    def version(self) -> int:
        return self.war.version

    # -------------------------------------------------------------- helpers
    def _push(self, group: str, stack, obs: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        """``obs`` pushed onto ``stack`` (None: an empty one) with ``frame_stack``; else ``obs``."""
        F = self.frames[group]
        if F == 1:
            return obs
        if stack is None:
            stack = obs.new_zeros(*obs.shape[:-1], F * obs.shape[-1])
        return push_frame(stack, obs, starts)

    def episode_starts(self) -> torch.Tensor:
        """Bool ``[E]``: worlds at their episode's first step (a recurrent state starts from 0)."""
        return self.war.ep_step == 0

    def _value(self, group: str, rows, state: torch.Tensor, seen: torch.Tensor, starts) -> torch.Tensor:
        """V in worlds ``rows`` (``slice(None)``, indices or a bool mask) of every world's ``state`` /
        ``seen`` / ``starts`` (a bootstrap: recurrent states are not advanced).  A feed-forward
        critic runs on those rows; a recurrent one on every world, as lock-step's does, and its rows
        are taken after (a GRU on a batch of fewer rows may round differently on some CPUs)."""
        every = isinstance(rows, slice) and rows == slice(None)
        if group not in self.hidden:
            return self.policy.value(group, state if every else state[rows], seen if every else seen[rows])
        v = self.policy.value(group, state, seen, hidden=(self.hidden[group][1], starts))
        return v if every else v[rows]

    def decides_now(self, group: str) -> torch.Tensor:
        """Bool ``[E]``: worlds where ``group`` takes a (full-policy) decision at the next step."""
        return self.war.decides(group)

    def _row_layout(self, g: str) -> dict[str, tuple]:
        """Group ``g``'s ``GroupTransitions`` fields: per-row shape and dtype."""
        E, n, d, S, H = (self.E, self.groups[g].n_agents, self.seen[g].shape[-1], self.state.shape[1],
                         self.hidden_size[g])
        shape, dtype = self.action_layouts[g]
        f, i64, b = torch.float32, torch.long, torch.bool
        return {"obs": ((E, n, d), f), "state": ((E, S), f), "actions": ((E, n, *shape), dtype), "logp": ((E, n), f),
                "values": ((E, n), f), "next_values": ((E, n), f), "rewards": ((E, n), f), "k": ((E,), i64),
                "terminated": ((E, n), b), "truncated": ((E, n), b), "valid": ((E,), b), "version": ((E,), i64),
                "traj": ((E,), i64), "start": ((E,), i64), "draft": ((E,), b), "fragment_end": ((E,), b),
                "action_mask": ((E, n, self.avail[g].shape[-1]), b), "alive": ((E, n), b),
                "episode_start": ((E,), b), "actor_h": ((E, n, H), f), "critic_h": ((E, H), f)}

    def _selection(self, mask: torch.Tensor) -> Selection:
        """Worlds ``mask`` with their values as one row each (the CPU path; every world: a copy)
        or, ``branch_free``, as ``E`` rows written with ``torch.where``."""
        if self.branch_free:
            return Selection(mask, "all")
        return self._every if bool(mask.all()) else Selection(mask, "selected")

    def _close(self, group: str, sel: Selection, row: int, next_values: torch.Tensor,
               terminated=None, truncated=None) -> None:
        """End the macro-steps of ``group`` in worlds ``sel`` into ``row`` (``next_values``: rows as
        ``sel.rows`` says), with the agents' flags of their last step (``terminated`` /
        ``truncated`` ``[E, n]``; default: the last env step's)."""
        r = self._store.row(group, row)
        if self._direct:   # (the decision and its env step wrote the rest of this row, and held nothing;
            r["next_values"].copy_(next_values)   # the window's constants come at its end)
            self._closed = self._closed + self.E * self.groups[group].n_agents
            return
        if terminated is None:
            terminated, truncated = self._agent_flags[group]
        p, m = self.pending[group], self.war.macro[group]
        for name in _DECISION_FIELDS:
            sel.put_from(r[name], getattr(p, name))
        sel.put_from(r["action_mask"], p.avail)
        sel.put_from(r["alive"], p.alive)
        for name, source in (("rewards", m.reward), ("k", m.k), ("version", m.version), ("start", m.start)):
            sel.put_from(r[name], source)
        sel.put(r["next_values"], next_values)
        sel.put(r["valid"], True)
        sel.put_from(r["terminated"], terminated)
        sel.put_from(r["truncated"], truncated)
        self.war.release(group, sel)
        n = self.groups[group].n_agents
        closed = self.E * n if sel.every else sel.mask.sum() * n
        self._closed = self._closed + (closed if self.branch_free else int(closed))

    def _open(self, group: str, sel: Selection, obs, state, actions, logp, values, draft: bool,
              hidden=None) -> None:
        """A decision of ``group`` in worlds ``sel`` (the policy's outputs: rows as ``sel.rows``
        says); ``hidden``: a recurrent group's ``((actor_h, critic_h, starts) before, (actor_h,
        critic_h) after)``: written into ``pending``, or with direct rows into this step's row."""
        p = _RowDecision(self._store.row(group, self._row)) if self._direct else self.pending[group]
        if hidden is not None:
            before, after = hidden
            for dst, src in zip((p.actor_h, p.critic_h, p.episode_start), before):
                sel.put(dst, src)
            if sel.every:
                self.hidden[group] = list(after)
            else:
                for dst, src in zip(self.hidden[group], after):
                    sel.put(dst, src)
        else:
            sel.put_from(p.episode_start, self._starts)
        for dst, src in ((p.obs, obs), (p.state, state), (p.actions, actions), (p.logp, logp), (p.values, values)):
            sel.put(dst, src)
        if self.masked:
            sel.put_from(p.avail, self.avail[group])
        if self.can_leave:
            sel.put_from(p.alive, self.alive[group])
        sel.put_from(p.traj, self._world_ids + self.war.ep_id)
        if self._direct:   # (every world decides: the env gets the actions as they are, nothing is held)
            self._env_actions[group] = self.policy.to_env(group, actions)
            return
        sel.put(p.draft, draft)
        self.war.decide(group, sel, self.policy.to_env(group, actions))

    # -------------------------------------------------------------- windows
    def begin_window(self, version: int = 0) -> None:
        """Start a window whose decisions use behaviour policy ``version``."""
        self.war.set_version(int(version))
        self._direct = self.direct_rows and all(k <= 1.0 for k in self.schedule.interval.values())
        # (direct rows: every field of every row is written each window, but the fragment ends)
        self._store.clear(only=("fragment_end",) if self._direct else None)
        self._finished = None   # (direct rows: the last step's finished worlds, closed with the next decision)
        # (every world decides at every step of the every-step schedule: nothing for the wrapper to check)
        self.war.host_checks = not (self.branch_free or self._direct)
        self._window_open = True
        self._window_start = self.t
        self._closed = 0
        self._t0 = self.clock.now()
        self._env_s = 0.0
        self._inf_s = 0.0
        self._decisions = {lane: 0 for lane in self.lanes}
        self._calls = {lane: 0 for lane in self.lanes}
        self._step_calls, self._step_env = [], []
        self._deferred = []   # branch_free: each step's (calls, measured seconds, env seconds), settled at the end

    @property
    def window_steps(self) -> int:
        return self.t - self._window_start

    @property
    def elapsed(self) -> float:
        """Seconds on this worker's clock since ``begin_window``."""
        return self.clock.now() - self._t0

    def ready(self) -> int:
        """Agent-transitions of this window that are complete: closed, or ending at the next
        step's decision (their rewards are all in)."""
        n = int(self._closed)
        for g, s in self.groups.items():
            ending = self.war.macro[g].active & (self.war.schedule_says(g) | (g in self.draft_groups))
            n += int(ending.sum()) * s.n_agents
        return n

    def _call(self, group: str, idx, is_draft: bool):
        """One policy call of a lane over worlds ``idx``: its inputs, outputs, recurrent states
        (``_open``'s ``hidden``) and seconds."""
        obs_g, state = self.seen[group][idx], self.state[idx]
        avail = self.avail[group][idx] if self.masked else None
        t0 = time.perf_counter()
        hidden = None
        if is_draft:
            actions, logp, values = self.policy.draft(group, obs_g, state, avail)
        elif group in self.hidden:
            before = (self.hidden[group][0][idx], self.hidden[group][1][idx], self._starts[idx])
            actions, logp, values, after = self.policy.act(group, obs_g, state, avail, hidden=before)
            hidden = (before, after)
        elif group in getattr(self.policy, "planners", ()):   # (a policy without planners: none)
            actions, logp, values = self.policy.act(group, obs_g, state, avail, worlds=idx, env=self.env)
        else:
            actions, logp, values = self.policy.act(group, obs_g, state, avail)
        return obs_g, state, actions, logp, values, hidden, time.perf_counter() - t0

    @torch.no_grad()
    def step(self) -> None:
        """One env step: decisions (or holds, or drafts) of every group, then the world moves."""
        if not self._window_open:
            raise RuntimeError("step: call begin_window() first")
        r = self._row = self.t - self._window_start
        self._store.append()
        self._starts = self.episode_starts()
        # who decides: at a window's first step only worlds without an action in force (the
        # others' boundary decisions were closed by end_window; a re-planned schedule waits a step)
        plan = []
        for g in self.groups:
            dec = (self._every.mask if self._direct else   # (every world decides at every step)
                   ~self.war.macro[g].active if r == 0 else self.decides_now(g))
            plan.append((g, g, dec, False))
            if g in self.draft_groups:
                plan.append((g + DRAFT, g, ~dec, True))
        if self.branch_free:   # every lane on every world; the counts are settled at the window's end
            calls = {lane: mask.sum() for lane, _, mask, _ in plan}
            todo = [(lane, g, mask, is_draft, slice(None)) for lane, g, mask, is_draft in plan]
        else:
            calls = {lane: self.E if self._direct else int(mask.sum()) for lane, _, mask, _ in plan}
            token = self.cost.begin(calls)
            todo = [(lane, g, mask, is_draft, slice(None) if calls[lane] == self.E else mask)
                    for lane, g, mask, is_draft in plan if calls[lane] > 0]
        if self._lane_pools:  # every lane at once, each on its own thread
            futures = [self._lane_pools[lane].submit(self._call, g, idx, is_draft) for lane, g, _, is_draft, idx in todo]
            results = [f.result() for f in futures]
        else:
            results = [self._call(g, idx, is_draft) for _, g, _, is_draft, idx in todo]
        measured = {}
        for (lane, g, mask, is_draft, idx), (obs_g, state, actions, logp, values, hidden, seconds) in zip(todo, results):
            measured[lane] = seconds
            if self._direct:   # (every world decides: the whole previous row closes at once)
                if r > 0:
                    self._close(g, self._every, r - 1, self._with_finished(g, values))
                self._open(g, self._every, obs_g, state, actions, logp, values, is_draft, hidden)
                continue
            closing = mask & self.war.macro[g].active
            if self.branch_free:
                self._close(g, Selection(closing, "all"), r - 1, values)
                sel = Selection(mask, "all")
            else:
                if bool(closing.any()):
                    nv = values if bool(closing.all()) else values[closing[mask]]
                    self._close(g, self._selection(closing), r - 1, nv)
                sel = self._every if isinstance(idx, slice) else Selection(mask)
            self._open(g, sel, obs_g, state, actions, logp, values, is_draft, hidden)
        self._finished = None
        if not self.branch_free:
            self._settle_calls(calls, token, measured)

        if self._direct:   # (the step's rewards and flags go straight into this row)
            next_obs, rew, term, trunc, info, done = self.war.advance_every(self._env_actions)
            for g in self.groups:
                row = self._store.row(g, r)
                for name, source in (("rewards", rew[g]), ("terminated", term[g]), ("truncated", trunc[g])):
                    row[name].copy_(source)
        else:
            next_obs, rew, term, trunc, info, done = self.war.advance()
            self._agent_flags = {g: (term[g].clone(), trunc[g].clone()) for g in self.groups}
        env_s = self.war.last_env_seconds
        if self.branch_free:
            self._deferred.append((calls, measured, env_s))
        else:
            self._settle_env(env_s)
        if self.stats is not None:
            self.stats.step(rew, info, done)
        self._close_finished(r, done, info)
        self.obs = {g: next_obs[g].clone() for g in self.groups}
        self.state = self.critic.current(self.obs)
        self.seen = {g: self._push(g, self.seen[g], self.obs[g], done) for g in self.groups}
        if self.masked:
            self.avail = step_action_mask(self.env, info)
        if self.can_leave:
            self.alive = {g: a.clone() for g, a in self.env.alive_mask.items()}

    def _close_finished(self, r: int, done: torch.Tensor, info: dict) -> None:
        """Every world had an action in force: the finished ones all close at row ``r``,
        bootstrapped with V(final state) where the episode was truncated, 0 where it terminated.
        With direct rows their close is folded into the whole row's at the next decision (or the
        window's end): ``_finished`` keeps what it needs."""
        nv = self._final_values(done, info)
        if nv is None:
            return
        if self._direct:
            self._finished = (done, nv)
            return
        for g in self.groups:
            sel = Selection(done, "all") if self.branch_free else self._selection(done)
            self._close(g, sel, r, nv[g] if sel.rows == "all" else nv[g][done])

    def _with_finished(self, group: str, next_values: torch.Tensor) -> torch.Tensor:
        """``next_values`` of every world, the last step's finished worlds' own where they finished."""
        if self._finished is None:
            return next_values
        done, nv = self._finished
        return torch.where(done[:, None], nv[group], next_values)

    def _final_values(self, done: torch.Tensor, info: dict) -> dict | None:
        """Per group ``[E, n]``: V(final state) where the last step truncated the episode, 0 elsewhere
        (0 everywhere without ``bootstrap_truncation``); None when no world finished (the CPU's
        shortcut).  On every world where the rollout must not branch (or with direct rows, as
        lock-step always computed it), on the truncated worlds otherwise."""
        if not self.branch_free and not bool(done.any()):
            return None
        nv = {g: torch.zeros_like(self.pending[g].values) for g in self.groups}
        trunc_w = self.war.last_truncated
        if not self.bootstrap_truncation or (not self.branch_free and not bool(trunc_w.any())):
            return nv
        final_obs, final_state = info["final_obs"], self.critic.final(info)
        no_start = torch.zeros(self.E, dtype=torch.bool, device=self.device)
        every = self.branch_free or self._direct
        rows = slice(None) if every else trunc_w.nonzero().flatten()
        for g in self.groups:
            seen = self._push(g, self.seen[g], final_obs[g], no_start)
            v_final = self._value(g, rows, final_state, seen, no_start)
            if every:
                nv[g] = torch.where(trunc_w[:, None], v_final, 0.0)
            else:
                nv[g][rows] = v_final
        return nv

    def _settle_calls(self, calls: dict, token, measured: dict) -> None:
        """One step's policy calls on the clock, the cost models and the counters (``calls[lane]``:
        deciding worlds; ``token``: ``cost.begin``'s, None: begin now)."""
        if token is None:
            token = self.cost.begin(calls)
        seconds, per_lane = self.cost.end(token, measured)
        self._inf_s += seconds
        for lane, cost in per_lane.items():  # online cost estimates: what each call cost
            model = self.cost_models.get(lane)
            if model is not None:
                model.observe(calls[lane] * self.lanes[lane], cost)
        for lane, n in calls.items():
            if n > 0:
                self._decisions[lane] += n * self.lanes[lane]
                self._calls[lane] += 1
        self._step_calls.append({lane: n for lane, n in calls.items() if n > 0})

    def _settle_env(self, env_s: float) -> None:
        """One env step's measured seconds on the counters (and a virtual clock, with ``env_time``)."""
        self._env_s += env_s
        self._step_env.append(env_s)
        if self.cost.virtual and self.env_time:
            self.clock.advance(env_s)

    def _settle(self) -> None:
        """``branch_free``: the window's deferred steps settled in order (one host read of their counts)."""
        if not self._deferred:
            return
        lanes = list(self._deferred[0][0])
        counts = torch.stack([torch.stack([calls[lane] for lane in lanes]) for calls, _, _ in self._deferred]).tolist()
        for (_, measured, env_s), row in zip(self._deferred, counts):
            calls = dict(zip(lanes, (int(n) for n in row)))
            self._settle_calls(calls, None, {lane: s for lane, s in measured.items() if calls[lane] > 0})
            self._settle_env(env_s)
        self._deferred = []
        self._closed = int(self._closed)

    @torch.no_grad()
    def end_window(self, reason: str | None = None, preempted: bool = False, copy: bool = True) -> WindowBatch:
        """Close the transitions that end at the boundary (bootstrap with the current critic) and
        return the window; macro-steps still running carry over to the next window.  ``copy=False``:
        the window's tensors are views of the storage, valid until the next ``begin_window`` (an
        owner that learns from a window before collecting the next)."""
        if not self._window_open:
            raise RuntimeError("end_window: call begin_window() first")
        T = self.window_steps
        self._settle()
        batches = {}
        for g, s in self.groups.items():
            if T > 0:
                ending = self.war.macro[g].active & (self.war.schedule_says(g) | (g in self.draft_groups))
                starts = self.episode_starts()   # (the next decision's: a GRU bootstraps from there)
                if self._direct:   # (the whole last row: V after it, or the finished worlds' own)
                    nv = self._value(g, slice(None), self.state, self.seen[g], starts)
                    self._close(g, self._every, T - 1, self._with_finished(g, nv))
                elif self.branch_free:
                    nv = self._value(g, slice(None), self.state, self.seen[g], starts)
                    self._close(g, Selection(ending, "all"), T - 1, nv)
                elif bool(ending.any()):
                    rows = slice(None) if bool(ending.all()) else ending
                    self._close(g, self._selection(ending), T - 1,
                                self._value(g, rows, self.state, self.seen[g], starts))
            if self._direct and T > 0:
                self._window_constants(g, T)
            batch = GroupTransitions(**self._store.take(g, copy=copy))
            _mark_fragment_ends(batch)
            batches[g] = batch
        out = WindowBatch(groups=batches, steps=T, num_envs=self.E, clock_seconds=self.elapsed,
                          env_seconds=self._env_s, inference_seconds=self._inf_s, decisions=dict(self._decisions),
                          calls=dict(self._calls), reason=reason, preempted=preempted,
                          step_calls=self._step_calls, step_env_seconds=self._step_env)
        self._window_open = False
        self._finished = None
        return out

    def _window_constants(self, group: str, T: int) -> None:
        """Direct rows: the fields every transition of the window shares or counts off, written
        once — one-step macro-steps of this window's version, each decided at its own row's step,
        none a draft's, every agent in the game where nobody leaves."""
        bufs = self._store.buffers[group]
        bufs["k"][:T] = 1
        bufs["valid"][:T] = True
        bufs["version"][:T] = self.war.version
        bufs["start"][:T] = torch.arange(self._window_start, self._window_start + T, device=self.device)[:, None]
        bufs["draft"][:T] = False
        if not self.can_leave:
            bufs["alive"][:T] = True

    def collect(self, trigger: Trigger, version: int = 0) -> WindowBatch:
        """One whole window: step until ``trigger`` fires."""
        self.begin_window(version)
        trigger.start(self.clock.now())
        while not trigger.check(self.ready, self.window_steps, self.clock.now()):
            self.step()
        return self.end_window(trigger.reason)

    # -------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict:
        """Everything this worker carries from one window into the next (call it between
        windows): its env's worlds (``env.get_state()``: physics, random streams, episode
        clocks), the current observations, the ``WarEnv`` bookkeeping (held actions and the
        macro-steps still running: the fragments carried into the next window), what the policy
        said at each world's last decision (``pending``), the clock (a ``VirtualClock``'s time;
        a wall clock has none) and the cost jitter's random stream.  CPU tensors and plain values
        (a ``torch.load(weights_only=True)`` checkpoint entry).  The schedule, the cost models and
        the episode statistics are the owner's (shared or set by it)."""
        if self._window_open:
            raise RuntimeError("state_dict: a window is open; call end_window() first")
        return {"env_state": {k: t.cpu() for k, t in self.env.get_state().items()},
                "obs": {g: o.cpu().clone() for g, o in self.obs.items()},
                "avail": {g: m.cpu().clone() for g, m in self.avail.items()},
                "seen": {g: s.cpu().clone() for g, s in self.seen.items() if self.frames[g] > 1},
                "alive": {g: a.cpu().clone() for g, a in self.alive.items()},
                "agent_flags": {g: [f.cpu().clone() for f in flags] for g, flags in self._agent_flags.items()},
                "hidden": {g: [h.cpu().clone() for h in hs] for g, hs in self.hidden.items()},
                "war": self.war.state_dict(),
                "pending": {g: {name: t.cpu().clone() for name, t in vars(p).items()} for g, p in self.pending.items()},
                "clock": self.clock.state_dict() if self.cost.virtual else None,
                "cost_rng": self.cost._rng.bit_generator.state}

    def boundary_state(self) -> dict:
        """What a window boundary of the every-step (lock-step) schedule carries: per-world entries
        only (world axis first, so that ranks can gather and split them), in the lock-step
        checkpoint's layout — the env's worlds (``env_state``), the current observations, the
        episode starts, the actors' carried states (``actor_h``: frame stacks or GRU states) and the
        critics' (``critic_h``), who is in the game (``alive``, where agents leave) and the
        available actions (``action_mask``, where the env has masks).  Every macro-step closed at
        the boundary, so nothing else is in flight; the trajectory ids and the global step are
        bookkeeping lock-step does not learn from."""
        if self._window_open:
            raise RuntimeError("boundary_state: a window is open; call end_window() first")
        if any(bool(m.active.any()) for m in self.war.macro.values()):
            raise RuntimeError("boundary_state: macro-steps are carried into the next window (a WAR schedule); "
                               "use state_dict()")
        out = {"env_state": self.env.get_state(), "obs": {g: o.clone() for g, o in self.obs.items()},
               "starts": self.episode_starts(),
               "actor_h": {g: (self.hidden[g][0] if g in self.hidden else self.seen[g]).clone()
                           for g in self.groups if g in self.hidden or self.frames[g] > 1},
               "critic_h": {g: h[1].clone() for g, h in self.hidden.items()}}
        if self.can_leave:
            out["alive"] = {g: a.clone() for g, a in self.alive.items()}
        if self.masked:
            out["action_mask"] = {g: m.clone() for g, m in self.avail.items()}
        return out

    def load_boundary_state(self, state: dict) -> None:
        """Continue from ``boundary_state()``'s entries (on the env's device; between windows)."""
        if self._window_open:
            raise RuntimeError("load_boundary_state: a window is open; call end_window() first")
        self.env.set_state({k: t.to(self.env.torch_device) for k, t in state["env_state"].items()})

        def like(name, x, ref):
            return v.check_like(name, x, ref).clone()

        self.obs = {g: like(f"obs[{g!r}]", state["obs"][g], self.obs[g]) for g in self.groups}
        starts = like("starts", state["starts"], self.episode_starts())
        for g in self.groups:
            if g in self.hidden:
                self.hidden[g] = [like(f"actor_h[{g!r}]", state["actor_h"][g], self.hidden[g][0]),
                                  like(f"critic_h[{g!r}]", state["critic_h"][g], self.hidden[g][1])]
            self.seen[g] = (like(f"actor_h[{g!r}]", state["actor_h"][g], self.seen[g]) if self.frames[g] > 1
                            else self.obs[g])
            if self.can_leave:
                self.alive[g] = like(f"alive[{g!r}]", state["alive"][g], self.alive[g])
            if self.masked:
                self.avail[g] = like(f"action_mask[{g!r}]", state["action_mask"][g], self.avail[g])
        self.war.ep_step = (~starts).long()   # (0 where an episode begins: what the every-step schedule reads)
        self.state = self.critic.current(self.obs)

    def load_state_dict(self, state: dict) -> None:
        """Restore ``state_dict()`` (between windows); the worker then continues exactly where
        the saved one would have.  Shapes are checked (``ValueError`` naming the entry)."""
        if self._window_open:
            raise RuntimeError("load_state_dict: a window is open; call end_window() first")
        if set(state["obs"]) != set(self.groups) or set(state["pending"]) != set(self.groups):
            raise ValueError(f"state: expected observations and pending decisions of groups {sorted(self.groups)}")
        for g, o in state["obs"].items():
            if tuple(o.shape) != tuple(self.obs[g].shape):
                raise ValueError(f"state['obs'][{g!r}]: expected shape {tuple(self.obs[g].shape)}, "
                                 f"got {tuple(o.shape)}")
        for g, p in self.pending.items():
            saved_avail = state.get("avail", {}).get(g)
            if set(state["pending"][g]) != set(vars(p)) or saved_avail is None or \
                    tuple(saved_avail.shape) != tuple(self.avail[g].shape):
                raise ValueError(f"state['pending'][{g!r}]: expected the entries {sorted(vars(p))} and available "
                                 f"actions of shape {tuple(self.avail[g].shape)} (a checkpoint of an older war-envs?)")
            for name, t in vars(p).items():
                saved = state["pending"][g][name]
                if tuple(saved.shape) != tuple(t.shape) or saved.dtype != t.dtype:
                    raise ValueError(f"state['pending'][{g!r}][{name!r}]: expected a {t.dtype} tensor of shape "
                                     f"{tuple(t.shape)}, got {saved.dtype} {tuple(saved.shape)}")
        if (state["clock"] is None) == self.cost.virtual:
            raise ValueError("state['clock']: saved from a worker with a different kind of clock (virtual vs wall)")
        self.war.load_state_dict(state["war"])
        self.env.set_state({k: t.to(self.env.torch_device) for k, t in state["env_state"].items()})
        self.obs = {g: state["obs"][g].to(self.device).clone() for g in self.groups}
        self.avail = {g: state["avail"][g].to(self.device).clone() for g in self.groups}
        self.alive = {g: v.check_like(f"state['alive'][{g!r}]", state["alive"][g], self.alive[g]).clone()
                      for g in self.groups}
        self.seen = {g: (v.check_like(f"state['seen'][{g!r}]", state.get("seen", {}).get(g), self.seen[g]).clone()
                         if self.frames[g] > 1 else self.obs[g]) for g in self.groups}
        self._agent_flags = {g: tuple(v.check_like(f"state['agent_flags'][{g!r}]", f, like).clone()
                                      for f, like in zip(state["agent_flags"][g], self._agent_flags[g]))
                             for g in self.groups}
        saved_hidden = state.get("hidden", {})
        if set(saved_hidden) != set(self.hidden):
            raise ValueError(f"state['hidden']: expected the GRU states of groups {sorted(self.hidden)}, "
                             f"got {sorted(saved_hidden)}")
        self.hidden = {g: [v.check_like(f"state['hidden'][{g!r}][{i}]", h, like).clone()
                           for i, (h, like) in enumerate(zip(saved_hidden[g], hs))] for g, hs in self.hidden.items()}
        self.state = self.critic.current(self.obs)
        for g, p in self.pending.items():
            for name, t in vars(p).items():
                t.copy_(state["pending"][g][name])
        if state["clock"] is not None:
            self.clock.load_state_dict(state["clock"])
        self.cost._rng.bit_generator.state = state["cost_rng"]

    def close(self) -> None:
        self.cost.close()
        for pool in self._lane_pools.values():
            pool.shutdown(wait=True)
        self._lane_pools = {}

    # -------------------------------------------------------------- moving worlds (work stealing)
    def export_worlds(self, worlds) -> dict:
        """What worlds ``worlds`` (an int index of this collector's worlds) carry from one step to
        the next, copied out in the middle of a window: their env state (``env.get_state()``:
        physics, random stream, episode clock), current observations, every group's macro-step
        in force (held action, reward so far, k, version, start: the fragment being carried),
        what the policy said at that decision (``pending``; the trajectory id as its episode
        number — the world part is the holder's), episode step counters and ids, and the global
        step ``t``.  ``import_worlds`` on another collector of the same scenario continues them
        exactly (``war_train.war.rounds``' work stealing)."""
        if self.direct_rows:
            raise RuntimeError("export_worlds: a collector with direct_rows keeps its decisions in its rows; "
                               "moving worlds needs direct_rows=False")
        idx = torch.as_tensor(worlds, dtype=torch.long, device=self.device)
        env_state = self.env.get_state()
        return {"t": self.t,
                "env": {k: s[idx.to(s.device)].clone() for k, s in env_state.items()},
                "obs": {g: o[idx].clone() for g, o in self.obs.items()},
                "avail": {g: m[idx].clone() for g, m in self.avail.items()},
                "seen": {g: s[idx].clone() for g, s in self.seen.items() if self.frames[g] > 1},
                "alive": {g: a[idx].clone() for g, a in self.alive.items()},
                "agent_flags": {g: [f[idx].clone() for f in flags] for g, flags in self._agent_flags.items()},
                "hidden": {g: [h[idx].clone() for h in hs] for g, hs in self.hidden.items()},
                "macro": {g: {name: t[idx].clone() for name, t in vars(m).items()}
                          for g, m in self.war.macro.items()},
                "pending": {g: {name: (t[idx] % 2 ** 32 if name == "traj" else t[idx].clone())
                                for name, t in vars(p).items()} for g, p in self.pending.items()},
                "ep_step": self.war.ep_step[idx].clone(), "ep_id": self.war.ep_id[idx].clone()}

    def import_worlds(self, carry: dict, worlds=None) -> None:
        """Continue ``export_worlds``' worlds here, in ``worlds`` (an int index; None: all of this
        collector's worlds, which must be as many).  The global step becomes the carry's."""
        idx = None if worlds is None else torch.as_tensor(worlds, dtype=torch.long, device=self.device)
        n = self.E if idx is None else len(idx)
        if len(carry["ep_id"]) != n:
            raise ValueError(f"worlds: expected as many worlds as the carry holds ({len(carry['ep_id'])}), got {n}")
        sel = slice(None) if idx is None else idx
        self.env.set_state(carry["env"], worlds=idx)
        for g in self.groups:
            self.obs[g][sel] = carry["obs"][g]
            self.avail[g][sel] = carry["avail"][g]
            if self.frames[g] > 1:
                self.seen[g][sel] = carry["seen"][g]
            self.alive[g][sel] = carry["alive"][g]
            self._agent_flags[g] = tuple(f.clone() for f in self._agent_flags[g])   # (a fresh copy, then its rows)
            for f, saved in zip(self._agent_flags[g], carry["agent_flags"][g]):
                f[sel] = saved
            for h, saved in zip(self.hidden.get(g, ()), carry["hidden"].get(g, ())):
                h[sel] = saved
            for name, t in vars(self.war.macro[g]).items():
                t[sel] = carry["macro"][g][name]
            for name, t in vars(self.pending[g]).items():
                t[sel] = carry["pending"][g][name]
            local = torch.arange(self.E, device=self.device)[sel] + self.world_offset
            self.pending[g].traj[sel] = local * 2 ** 32 + carry["pending"][g]["traj"]
        self.state = self.critic.current(self.obs)
        self.war.ep_step[sel] = carry["ep_step"]
        self.war.ep_id[sel] = carry["ep_id"]
        self.war.t = int(carry["t"])

    def continue_window(self, version: int, lead: int) -> None:
        """Begin a window that continues another collector's window (after ``import_worlds``),
        from the step it had reached.  ``lead=1`` (the move happened after that window's first
        step): the carried macro-steps are not a window start — at the first step every world
        decides where it would have there, and the transitions that closes land in row 0, the
        other window's last row; rows ``i`` here are then its rows ``steps - 1 + i``.  ``lead=0``:
        the move happened before its first step."""
        if lead not in (0, 1):
            raise ValueError(f"lead: expected 0 or 1, got {lead!r}")
        if self.direct_rows:
            raise RuntimeError("continue_window: moving worlds needs direct_rows=False")
        self.begin_window(version)
        self._window_start = self.t - lead
        for _ in range(lead):
            self._store.append()

    def take_rows(self, guest: "Collector", worlds, row0: int) -> None:
        """Write ``guest``'s open window (a ``continue_window`` over worlds ``worlds`` of this
        window, its row 0 being this window's row ``row0``) into this window: its transitions
        in those worlds' columns (trajectory ids re-based onto this collector's world index),
        its closed-transition count, decisions, policy calls and seconds."""
        if not (self._window_open and guest._window_open):
            raise RuntimeError("take_rows: both windows must be open")
        idx = torch.as_tensor(worlds, dtype=torch.long, device=self.device)
        while self._store.n < row0 + guest._store.n:
            self._store.append()
        world_ids = (idx + self.world_offset) * 2 ** 32
        for g in self.groups:
            for i in range(guest._store.n):
                row = guest._store.row(g, i)
                valid = row["valid"]
                if not bool(valid.any()):
                    continue
                dst, sel = self._store.row(g, row0 + i), idx[valid]
                for name in _ROW_FIELDS:
                    dst[name][sel] = row[name][valid]
                dst["traj"][sel] = world_ids[valid] + row["traj"][valid] % 2 ** 32
        self._closed += guest._closed
        for lane in self.lanes:
            self._decisions[lane] += guest._decisions[lane]
            self._calls[lane] += guest._calls[lane]
        self._inf_s += guest._inf_s
        self._env_s += guest._env_s


def _lane_pools(lane_threads: dict | None, lanes: dict) -> dict:
    """A one-thread pool per lane, pinned to ``lane_threads[lane]`` (none without ``lane_threads``)."""
    if not lane_threads:
        return {}
    unknown = set(lane_threads) - set(lanes)
    if unknown:
        raise ValueError(f"lane_threads: unknown lanes {sorted(unknown)}; lanes: {sorted(lanes)}")
    return {lane: concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"war-lane-{lane}",
                                                        initializer=_pin_thread, initargs=(lane_threads.get(lane),))
            for lane in lanes}


def _pin_thread(cpus) -> None:
    """Pin the calling thread to ``cpus`` (Linux: affinity is per thread); None: leave it."""
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cpus))


def _mark_fragment_ends(batch: GroupTransitions) -> None:
    """``fragment_end`` on each world's last transition of the window when it did not end its
    episode (the trajectory continues in the next window)."""
    T = batch.valid.shape[0]
    if T == 0:
        return
    rows = torch.arange(T, device=batch.valid.device).unsqueeze(1).expand_as(batch.valid)
    last = torch.where(batch.valid, rows, torch.full_like(rows, -1)).max(dim=0).values  # [E]
    has = last >= 0
    if not bool(has.any()):
        return
    e = has.nonzero().flatten()
    t = last[e]
    open_end = ~(batch.terminated[t, e] | batch.truncated[t, e]).all(-1)   # (every agent's flag: the episode ended)
    batch.fragment_end[t[open_end], e[open_end]] = True


def concat_workers(windows: list[WindowBatch]) -> dict[str, GroupTransitions]:
    """One batch per group over every worker's window: worlds side by side (worker order),
    shorter windows (preempted workers) padded with invalid rows."""
    if not windows:
        raise ValueError("windows: expected at least one window")
    T = max(w.steps for w in windows)
    out = {}
    for g in windows[0].groups:
        parts = []
        for w in windows:
            b = w.groups[g]
            pad = T - b.valid.shape[0]
            fields = {}
            for name in _ROW_FIELDS:
                x = getattr(b, name)
                if pad:
                    x = torch.cat([x, torch.zeros((pad, *x.shape[1:]), dtype=x.dtype, device=x.device)])
                fields[name] = x
            parts.append(fields)
        if len(parts) == 1:
            out[g] = GroupTransitions(**parts[0])
        else:
            out[g] = GroupTransitions(**{name: torch.cat([p[name] for p in parts], dim=1) for name in _ROW_FIELDS})
    return out
