"""A group that decides by search: ``Planner`` runs ``puct_search`` over copies of the deciding
real worlds, in planning worlds of its own.

**What it searches in** (``EnvSearchModel``): a node's state is a row of the planning env's
``get_state()`` (physics, clock, schedule, stream).  ``step(states, actions)`` writes the rows
back (``set_state(trusted=True)``: no checks, no host synchronization), lets the searched agent
take the search's action and every other agent the action of its group's policy (``act_others``:
greedy, so that the model is deterministic, as the search assumes), and steps every planning
world at once: one search simulation is one batched env step over all the deciding worlds'
trees.  ``prior_and_value`` is the searched group's actor (the prior: its action probabilities,
masked) and critic (the leaf value, in the reward's units) on the node's observations
(``evaluate``).  The reward the search maximises is the searched agent's own.

**No peeking.**  The copies' private future (``BatchedEnv.redraw_private_future``: Relay-v0's goal
schedule, the stream key of later draws) is re-drawn from the planner's own stream at every
``decide``, so a search sees what the agent could know (its world's past and present, the
simulator's rules), never what the world drew in advance.  ``peek=True`` keeps the originals'
future (an oracle: what tests and ablations compare the honest planner with).

**One agent.**  The search plans the decisions of a group of one agent with a ``Discrete`` action
space (Relay-v0's commander): the tree's branching is that agent's actions.  (A group of several
agents would branch over their joint actions; refused with a clear error.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import gymnasium
import torch

from war_envs.core.batched_env import BatchedEnv
from war_train.plan.search import SearchResult, puct_search
from war_train.plan.worlds import PlanningWorlds

__all__ = ["Decision", "EnvSearchModel", "Planner", "check_plannable"]

#: ``evaluate(env, n) -> (prior [n, A], value [n])`` for the first n planning worlds
Evaluate = Callable[[BatchedEnv, int], tuple[torch.Tensor, torch.Tensor]]
#: ``act_others(env) -> {group: actions [capacity, n_g]}`` for every group but the searched one
ActOthers = Callable[[BatchedEnv], dict]


def check_plannable(env: BatchedEnv, group: str) -> int:
    """``group``'s number of actions, or a ``ValueError`` saying why a search cannot plan it."""
    if group not in env.groups:
        raise ValueError(f"planner: expected a group of {env.env_id or type(env).__name__} "
                         f"({', '.join(env.groups)}), got {group!r}")
    spec = env.groups[group]
    if spec.n_agents != 1:
        raise ValueError(f"planner: group {group!r} has {spec.n_agents} agents; the search plans the decisions "
                         f"of a group of one agent (a tree over one agent's actions)")
    if not isinstance(spec.action_space, gymnasium.spaces.Discrete):
        raise ValueError(f"planner: group {group!r} acts in {spec.action_space}; the search branches over a "
                         f"Discrete action space")
    return int(spec.action_space.n)


class EnvSearchModel:
    """``SearchModel`` over the first rows of a ``PlanningWorlds`` env (see the module
    docstring).  ``group``: the searched group (one agent); ``evaluate`` and ``act_others`` as
    typed above."""

    def __init__(self, worlds: PlanningWorlds, group: str, evaluate: Evaluate, act_others: ActOthers) -> None:
        self.env, self.group = worlds.env, group
        self.evaluate, self.act_others = evaluate, act_others
        self.n_actions = check_plannable(self.env, group)
        self._held = None   # the states the planning env's first rows hold now (``step``'s answer)
        self._rows = torch.arange(self.env.num_envs, device=self.env.torch_device)

    def forget(self) -> None:
        """The planning env's rows were written by someone else (a new ``load``)."""
        self._held = None

    def _hold(self, states: dict) -> int:
        n = states["t"].shape[0]
        if states is not self._held:
            self.env.set_state(states, self._rows[:n], trusted=True)
            self._held = states
        return n

    def prior_and_value(self, states: dict) -> tuple[torch.Tensor, torch.Tensor]:
        return self.evaluate(self.env, self._hold(states))

    def step(self, states: dict, actions: torch.Tensor):
        n = self._hold(states)
        joint = self.act_others(self.env)
        own = torch.zeros(self.env.num_envs, 1, dtype=torch.long, device=self.env.torch_device)
        own[:n, 0] = actions
        joint[self.group] = own
        _, reward, _, _, _ = self.env.step(joint, trusted=True)
        terminated, truncated = self.env.world_flags()
        nxt = {k: v[:n] for k, v in self.env.get_state().items()}
        self._held = nxt
        return nxt, reward[self.group][:n, 0].clone(), (terminated | truncated)[:n].clone()

    def clone(self, states: dict, index: torch.Tensor) -> dict:
        return {k: v[index] for k, v in states.items()}


@dataclasses.dataclass(frozen=True)
class Decision:
    """A planner's decision for W worlds: ``actions [W]`` (int64: drawn from ``policy``, or its
    most probable action when greedy), ``logp [W]`` (their log-probability under ``policy``, the
    behaviour probability PPO learns with; 0 when greedy), the ``search`` (``SearchResult``) and
    ``policy [W, A]``, the search's improved policy (``SearchResult.improved_policy``)."""

    actions: torch.Tensor
    logp: torch.Tensor
    search: SearchResult
    policy: torch.Tensor


class Planner:
    """Decisions of ``group`` by a PUCT search over copies of the deciding real worlds.

    ``Planner(make_env, capacity, group, evaluate=, act_others=, simulations=, depth=,
    c_puct=1.25, gamma=0.99, seed=0, peek=False)``: ``make_env(num_envs=, autoreset_mode=)``
    builds the planning env (the real env's scenario, arguments, device and precision;
    ``PlanningWorlds``), ``capacity`` the most worlds one ``decide`` plans for (the real env's
    ``num_envs``).  ``decide(real_env, worlds, greedy=False) -> Decision``: one search per
    world of ``worlds`` (an int64 index of real worlds, at most ``capacity``), the action drawn
    from the search's improved policy (``greedy``: its most probable action).  The improved
    policy (Gumbel MuZero's: the prior re-weighted by the exponential of the normalised Q) and
    not the visit distribution, because the visits are flat when the simulations are about as
    many as the actions (Relay's commander: 8 actions), which is where a planner is affordable.  The planner's stream
    (``seed``) re-draws the copies' private future and draws the actions; ``state_dict`` /
    ``load_state_dict`` carry it (exact resume).
    """

    def __init__(self, make_env, capacity: int, group: str, *, evaluate: Evaluate, act_others: ActOthers,
                 simulations: int, depth: int, c_puct: float = 1.25, gamma: float = 0.99, seed: int = 0,
                 peek: bool = False, ratio: str = "search") -> None:
        self.worlds = PlanningWorlds(make_env, capacity)
        try:
            self.model = EnvSearchModel(self.worlds, group, evaluate, act_others)
        except Exception:
            self.worlds.close()
            raise
        self.group = group
        self.simulations, self.depth, self.c_puct, self.gamma = simulations, depth, c_puct, gamma
        self.peek = bool(peek)
        #: the behaviour log-probability a trainer stores with each decision: "search" (the
        #: improved policy's) or "policy" (the group's own policy's of the searched action)
        self.ratio = ratio
        self.generator = torch.Generator(device=self.worlds.device)
        self.generator.manual_seed(int(seed))

    @property
    def n_actions(self) -> int:
        return self.model.n_actions

    def guide(self, evaluate: Evaluate, act_others: ActOthers) -> None:
        """Search with other networks from now on (the overlap arm's collection thread plans with
        a snapshot of them while the learner updates the live ones)."""
        self.model.evaluate, self.model.act_others = evaluate, act_others

    def decide(self, real_env: BatchedEnv, worlds: torch.Tensor, *, greedy: bool = False) -> Decision:
        rows = self.worlds.load(real_env, worlds, 1, redraw=None if self.peek else self.generator).flatten()
        root = self.worlds.env.get_state(rows)
        self.model.forget()
        out = puct_search(self.model, root, simulations=self.simulations, depth=self.depth, c_puct=self.c_puct,
                          gamma=self.gamma, generator=self.generator)
        policy = out.improved_policy()
        if greedy:
            return Decision(policy.argmax(1), torch.zeros_like(out.value), out, policy)
        actions = torch.multinomial(policy.float(), 1, generator=self.generator)[:, 0]
        logp = policy.gather(1, actions.unsqueeze(1))[:, 0].log()
        return Decision(actions, logp.float(), out, policy)

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])

    def close(self) -> None:
        self.worlds.close()


def policy_model(policies: dict, vnorm: dict, group: str, *, critic_input: str = "state",
                 critic_time: bool = False) -> tuple[Evaluate, ActOthers]:
    """``(evaluate, act_others)`` from a trainer's policies (``war_train.learn.policy.GroupPolicy``
    per group, feed-forward) and value normalizers: the searched group's tempered, masked action
    probabilities and its critic's value (denormalized) on its agent; every other group's greedy
    action (its head's mode, masked)."""
    from war_train.learn.distributions import masked_logits
    from war_train.learn.policy import CriticState

    critic_states: dict[int, CriticState] = {}   # (one per planning env, made at its first evaluation)

    def masks(env) -> dict:
        return env.action_mask() if env.has_action_mask else {}

    @torch.no_grad()
    def evaluate(env, n):
        cs = critic_states.get(id(env))
        if cs is None:
            cs = critic_states[id(env)] = CriticState(env, critic_input, time=critic_time)
        obs, p = env.observations(), policies[group]
        out, _ = p.actor(p.actor_input(obs[group][:n]))
        mask = masks(env).get(group)
        prior = torch.softmax(masked_logits(p.dist.tempered(out), None if mask is None else mask[:n]), -1)[:, 0]
        value = vnorm[group].denormalize(p.value(cs.current(obs)[:n], obs[group][:n])[0])[:, 0]
        return prior, value

    @torch.no_grad()
    def act_others(env):
        obs, m = env.observations(), masks(env)
        return {g: p.act(obs[g], mask=m.get(g))[0] for g, p in policies.items() if g != group}

    return evaluate, act_others


def trainer_model(cfg, policies: dict, vnorm: dict) -> tuple[Evaluate, ActOthers]:
    """``policy_model`` of ``cfg``'s planning group, its critic's input as ``cfg`` says."""
    return policy_model(policies, vnorm, cfg.planner, critic_input=cfg.critic_input, critic_time=cfg.critic_time)


def build_planner(cfg, env: BatchedEnv, policies: dict, vnorm: dict, seed: int) -> Planner | None:
    """The planner ``cfg`` asks for (``TrainConfig.planner``; None when it names no group) over
    ``env``'s worlds: the group's policy and critic (``policies``, ``vnorm``) guide the search,
    the other groups' policies act inside it; its planning worlds are the run's scenario on
    ``env``'s device and precision (``war_train.rollout.envs.planning_env_factory``); ``seed`` its
    stream."""
    from war_train.rollout.envs import planning_env_factory

    if not cfg.planner:
        return None
    check_plannable(env, cfg.planner)
    if cfg.use_gru or cfg.frame_stack > 1:
        raise ValueError("planner: the search evaluates feed-forward policies on single observations; "
                         "use_gru and frame_stack > 1 are not supported with a planner")
    evaluate, act_others = trainer_model(cfg, policies, vnorm)
    make_env = planning_env_factory(dataclasses.replace(cfg, precision=env.precision), str(env.torch_device))
    return Planner(make_env, env.num_envs, cfg.planner, evaluate=evaluate, act_others=act_others,
                   simulations=cfg.planner_simulations, depth=cfg.planner_depth, c_puct=cfg.planner_c_puct,
                   gamma=cfg.gamma, seed=seed, ratio=cfg.planner_ratio)
