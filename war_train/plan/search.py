"""A batched PUCT search (AlphaZero / MuZero style) over W independent roots, in pure torch.

``puct_search(model, root, simulations=S, depth=D, c_puct=c, gamma=γ)`` grows one tree per root
(``W`` roots, ``A`` discrete actions) and returns, per root, the visit counts of its actions, their
mean returns, the visit distribution, the chosen action and the search's value.  No Python loop
runs over the roots: every step below is one tensor operation over all W trees, and the model is
called once per simulation for all W roots together (one ``model.step``, one
``model.prior_and_value`` over W states).

**The tree.**  Node 0 of every tree is its root; each simulation adds at most one node, so the
trees live in preallocated tensors ``[W, 1 + S, ...]``: ``children [W, M, A]`` (a child's node
index, -1 where the edge was never expanded), per node the prior ``P [W, M, A]``, the value
estimate ``v [W, M]`` (the model's value, 0 for a node reached by a ``done`` step), the reward of
the edge into it ``r [W, M]`` and its ``done`` flag, and per edge the visit count
``N [W, M, A]`` and the return sum ``Wsum [W, M, A]`` (``Q = Wsum / N``).

**Node states.**  Each node's state is kept in a node-state buffer of ``W * M`` rows (row
``w * M + n``: node n of root w), made once by ``model.clone`` of the roots and written row-wise
at each expansion.  An expansion then costs one step from the parent's stored state, not a replay
from the root along the path (which would take up to D steps a simulation and a row-wise merge of
the paths that end early).  Memory: ``W * (1 + S)`` states.

**One simulation** (all W roots at once):

1. *Selection*: from the root, at most D levels down, take at node n the action

       a* = argmax_a  Q̄(n, a) + c · P(n, a) · sqrt(max(N(n), 1)) / (1 + N(n, a))

   where ``N(n) = Σ_a N(n, a)`` (``max(·, 1)``: a fresh node's first visit follows its prior)
   and actions of prior 0 are never taken (a masked action).  **Q is normalised** per tree
   (MuZero's min-max): ``Q̄ = (Q - q_min) / (q_max - q_min)`` over every return backed up and
   every value estimated in that root's tree so far (``Q̄ = 0`` while they are all equal), so
   ``c`` needs no tuning to the reward scale; an unvisited edge's Q is its node's value estimate
   ``v(n)`` (first-play value).  The descent stops at an edge never expanded (an *expansion*),
   at a ``done`` node, or after D edges (the depth cap).
2. *Expansion*: the state of the new node is ``model.step(parent state, a*)`` (reward r, done d);
   ``model.prior_and_value`` gives its prior and value, the value counted as 0 after ``done``.
3. *Backup*: with ``G_L`` the leaf's value (the new node's, or that of the node where the descent
   stopped: 0 at a done node, the stored estimate at the depth cap), each edge k of the path,
   from the leaf up, gets ``G_k = r_{k+1} + γ · G_{k+1}``, ``N += 1`` and ``Wsum += G_k``.

Every simulation visits exactly one root action, so ``visits.sum(-1) == S``.  The result's
``policy`` is ``visits / S``, ``action`` the most visited root action (ties: the higher root prior,
then the lower index), ``q`` the root's Q (an unvisited action: the root's value estimate, the
first-play value the search used) and ``value`` the visit-weighted mean root return
``Σ_a Wsum(0, a) / S``.  With ``dirichlet_alpha`` set, the root prior becomes
``(1 - ε) P + ε · Dir(α)`` over the actions of nonzero prior (``ε = dirichlet_fraction``), drawn
from ``generator``; the search is otherwise deterministic.

**Cost.**  A search makes ``S`` calls of ``model.step`` and ``S + 1`` of ``model.prior_and_value``,
each over W rows (a tree that expands nothing in a simulation, its descent ended at a ``done``
node or the depth cap, still fills a row: a dummy step from its root whose results are
discarded), and ``S * D`` selection levels of a few tensor operations each.  Besides the model's
own work, the only host synchronization is the check of the roots' prior (once per search).

Values are returns of the searching side: every reward and value the model gives is one to
maximise (the other groups, if any, act inside ``model.step``).  A root must not be ``done``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import typing
from collections.abc import Mapping

import torch

__all__ = ["SearchModel", "SearchResult", "puct_search"]

#: a batch of states (see ``SearchModel``)
States = dict[str, torch.Tensor]


@typing.runtime_checkable
class SearchModel(typing.Protocol):
    """What ``puct_search`` searches in: a batched, deterministic model of the game.

    ``states`` is an opaque batch: a dict of tensors, each with the batch axis first (``N`` rows,
    ``N`` the same for every tensor), on the search's device; the search only moves rows around
    (``clone``, and row-wise writes into its node-state buffer) and never reads the values.

    - ``prior_and_value(states) -> (prior [N, A], value [N])``: the prior over the ``A`` actions
      (probabilities: non-negative, summing to 1; 0 marks an action that cannot be taken) and
      the value (the expected discounted return from each state).
    - ``step(states, actions [N] int64) -> (next_states, reward [N], done [N] bool)``: one move
      of the searching side in every row (other players, if any, move inside).  It may use up
      ``states`` (modify it in place, e.g. an env that holds them): the search passes it a fresh
      ``clone`` every time and never reads ``states`` again.  A row whose ``done`` is True ends
      its game; the search never steps from it.
    - ``clone(states, index [K] int64) -> states``: a new batch of ``states``' rows ``index`` (in
      that order, repeats allowed), sharing no memory with ``states``.
    """

    def prior_and_value(self, states: States) -> tuple[torch.Tensor, torch.Tensor]: ...

    def step(self, states: States, actions: torch.Tensor) -> tuple[States, torch.Tensor, torch.Tensor]: ...

    def clone(self, states: States, index: torch.Tensor) -> States: ...


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """``puct_search``'s answer for W roots and A actions: ``visits [W, A]`` (int64, each row
    summing to the simulations), ``q [W, A]`` (mean backed-up return of each root action; the
    root's value estimate where unvisited), ``policy [W, A]`` (the visit distribution),
    ``action [W]`` (int64, the most visited, ties by prior) and ``value [W]`` (the visit-weighted
    mean root return)."""

    visits: torch.Tensor
    q: torch.Tensor
    policy: torch.Tensor
    action: torch.Tensor
    value: torch.Tensor
    prior: torch.Tensor = None   # [W, A] the root prior the search used (after any noise)

    def improved_policy(self, c_visit: float = 50.0, c_scale: float = 0.1) -> torch.Tensor:
        """Gumbel MuZero's improved policy (Danihelka et al., 2022): ``softmax(log prior + σ(q̄))``
        with ``σ = (c_visit + max_a N(a)) · c_scale · q̄`` and ``q̄`` the root's Q (the completed
        Q: an unvisited action has the root's value estimate) min-max normalised over its
        actions.  Unlike the visit distribution it is sharp with as few simulations as actions
        (each visited once), and it never gives an action of prior 0 any probability."""
        q = self.q.double()
        legal = self.prior > 0
        low = q.masked_fill(~legal, math.inf).amin(1, keepdim=True)
        high = q.masked_fill(~legal, -math.inf).amax(1, keepdim=True)
        span = high - low
        q_bar = torch.where(span > 0, (q - low) / span.clamp_min(torch.finfo(span.dtype).tiny), torch.zeros_like(q))
        sigma = (c_visit + self.visits.amax(1, keepdim=True).double()) * c_scale * q_bar
        logits = torch.log(self.prior.double().clamp_min(1e-300)) + sigma
        return torch.softmax(logits.masked_fill(~legal, -math.inf), 1).to(self.q.dtype)


@dataclasses.dataclass
class _Tree:
    """W trees of M nodes (see the module docstring); ``count [W]``: nodes in use."""

    prior: torch.Tensor      # [W, M, A]
    children: torch.Tensor   # [W, M, A] int64, -1: not expanded
    edge_n: torch.Tensor     # [W, M, A] visit counts (float)
    edge_w: torch.Tensor     # [W, M, A] sums of backed-up returns
    value: torch.Tensor      # [W, M] value estimates (0 after done)
    reward: torch.Tensor     # [W, M] reward of the edge into the node
    done: torch.Tensor       # [W, M] bool
    states: States           # node-state buffer, W * M rows (row w * M + n)
    count: torch.Tensor      # [W] int64
    q_min: torch.Tensor      # [W] bounds of the tree's values (normalisation)
    q_max: torch.Tensor      # [W]
    rows: torch.Tensor       # [W] int64: 0..W-1

    @property
    def max_nodes(self) -> int:
        return self.value.shape[1]


@dataclasses.dataclass
class _Path:
    """One simulation's descent: per level the node and action, the path's length in edges, the
    node where it stopped, and the edge it expands (``expanding``; else a dummy edge)."""

    nodes: torch.Tensor      # [W, D]
    actions: torch.Tensor    # [W, D]
    length: torch.Tensor     # [W]
    last: torch.Tensor       # [W]
    parent: torch.Tensor     # [W]
    action: torch.Tensor     # [W]
    expanding: torch.Tensor  # [W] bool


# ----------------------------------------------------------------------------- checks
def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {value}")
    return int(value)


def _check_float(name: str, value, low: float, high: float = math.inf, *, open_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a float, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < low or value > high or (open_low and value == low):
        where = f"{'(' if open_low else '['}{low}, {high}{']' if math.isfinite(high) else ')'}"
        raise ValueError(f"{name}: expected a finite float in {where}, got {value}")
    return value


def _check_states(name: str, states, rows: int | None = None) -> int:
    """A non-empty dict of tensors with one batch size (``rows`` if given); returns it."""
    if not isinstance(states, Mapping) or not states:
        raise TypeError(f"{name}: expected a non-empty dict of tensors (batch axis first), "
                        f"got {type(states).__name__}")
    sizes = {}
    for key, tensor in states.items():
        if not isinstance(tensor, torch.Tensor) or tensor.dim() == 0:
            raise TypeError(f"{name}[{key!r}]: expected a tensor with a batch axis, got {type(tensor).__name__}")
        sizes[key] = tensor.shape[0]
    if len(set(sizes.values())) != 1 or (rows is not None and next(iter(sizes.values())) != rows):
        expected = f"{rows} rows" if rows is not None else "one batch size"
        raise ValueError(f"{name}: expected every tensor to have {expected} on the first axis, got {sizes}")
    return next(iter(sizes.values()))


def _check_model(model) -> None:
    missing = [m for m in ("prior_and_value", "step", "clone") if not callable(getattr(model, m, None))]
    if missing:
        raise TypeError(f"model: expected a SearchModel (methods prior_and_value, step, clone); "
                        f"{type(model).__name__} lacks {missing}")


def _check_evaluation(prior, value, n: int, actions: int | None) -> None:
    """Shapes of ``prior_and_value``'s answer (metadata only: no host synchronization)."""
    if not isinstance(prior, torch.Tensor) or prior.dim() != 2 or prior.shape[0] != n or (
            actions is not None and prior.shape[1] != actions) or not prior.is_floating_point():
        shape = f"[{n}, {actions if actions is not None else 'A'}]"
        got = tuple(prior.shape) if isinstance(prior, torch.Tensor) else type(prior).__name__
        raise ValueError(f"model.prior_and_value: expected a floating prior of shape {shape}, got {got}")
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != (n,) or not value.is_floating_point():
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise ValueError(f"model.prior_and_value: expected a floating value of shape [{n}], got {got}")


def _check_step(out, n: int) -> tuple[States, torch.Tensor, torch.Tensor]:
    """Shapes and dtypes of ``model.step``'s answer (metadata only)."""
    if not isinstance(out, tuple) or len(out) != 3:
        raise ValueError("model.step: expected a tuple (next_states, reward [N], done [N] bool)")
    states, reward, done = out
    _check_states("model.step's next_states", states, n)
    if not isinstance(reward, torch.Tensor) or tuple(reward.shape) != (n,):
        raise ValueError(f"model.step: expected a reward of shape [{n}], got "
                         f"{tuple(reward.shape) if isinstance(reward, torch.Tensor) else type(reward).__name__}")
    if not isinstance(done, torch.Tensor) or tuple(done.shape) != (n,) or done.dtype != torch.bool:
        raise ValueError(f"model.step: expected a bool done of shape [{n}], got "
                         f"{(done.dtype, tuple(done.shape)) if isinstance(done, torch.Tensor) else type(done).__name__}")
    return states, reward, done


def _check_root_prior(prior: torch.Tensor) -> None:
    """The roots' prior, by value (one host synchronization per search)."""
    if not bool(torch.isfinite(prior).all()) or bool((prior < 0).any()):
        raise ValueError("model.prior_and_value: expected a finite, non-negative prior at the roots")
    if bool((prior.sum(-1) <= 0).any()):
        raise ValueError("model.prior_and_value: expected every root to have an action of positive prior")


# ----------------------------------------------------------------------------- the search
def puct_search(model: SearchModel, root: Mapping[str, torch.Tensor], *, simulations: int, depth: int,
                c_puct: float = 1.25, gamma: float = 1.0, generator: torch.Generator | None = None,
                dirichlet_alpha: float | None = None, dirichlet_fraction: float = 0.25) -> SearchResult:
    """Search ``simulations`` paths of at most ``depth`` edges from each of the W ``root`` states
    (a dict of tensors ``[W, ...]``, see ``SearchModel``) and return the ``SearchResult``.

    ``c_puct`` > 0 weighs the prior against the normalised Q; ``gamma`` in [0, 1] discounts;
    ``dirichlet_alpha`` (None: no noise) and ``dirichlet_fraction`` in [0, 1] mix Dirichlet noise
    into the root prior, drawn from ``generator`` (a ``torch.Generator`` on the roots' device, or
    None for torch's default one).  ``model`` is never asked to step a ``done`` state; ``root``
    is read, never written.  Wrong arguments raise ``TypeError`` (type) or ``ValueError``
    (value), naming the argument and what was expected.
    """
    _check_model(model)
    simulations = _check_int("simulations", simulations, 1)
    depth = _check_int("depth", depth, 1)
    c_puct = _check_float("c_puct", c_puct, 0.0, open_low=True)
    gamma = _check_float("gamma", gamma, 0.0, 1.0)
    if dirichlet_alpha is not None:
        dirichlet_alpha = _check_float("dirichlet_alpha", dirichlet_alpha, 0.0, open_low=True)
    dirichlet_fraction = _check_float("dirichlet_fraction", dirichlet_fraction, 0.0, 1.0)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator or None, got {type(generator).__name__}")
    tree = _new_tree(model, root, simulations)
    if dirichlet_alpha is not None and dirichlet_fraction > 0:
        _add_root_noise(tree, dirichlet_alpha, dirichlet_fraction, generator)
    for _ in range(simulations):
        path = _descend(tree, depth, c_puct)
        leaf = _expand(tree, model, path)
        _backup(tree, path, leaf, gamma)
    return _result(tree, simulations)


def _new_tree(model: SearchModel, root: Mapping[str, torch.Tensor], simulations: int) -> _Tree:
    """W trees holding their roots (node 0): the roots' prior and value, the node-state buffer
    (every row a clone of its root until a node is written there)."""
    w = _check_states("root", root)
    first = next(iter(root.values()))
    device = first.device
    prior, value = model.prior_and_value(dict(root))
    _check_evaluation(prior, value, w, None)
    _check_root_prior(prior)
    m, a = 1 + simulations, prior.shape[1]
    rows = torch.arange(w, device=device)
    states = model.clone(root, rows.repeat_interleave(m))
    _check_states("model.clone's answer", states, w * m)
    dtype = value.dtype
    tree = _Tree(prior=prior.new_zeros(w, m, a), children=torch.full((w, m, a), -1, dtype=torch.long, device=device),
                 edge_n=torch.zeros(w, m, a, dtype=dtype, device=device),
                 edge_w=torch.zeros(w, m, a, dtype=dtype, device=device),
                 value=torch.zeros(w, m, dtype=dtype, device=device), reward=torch.zeros(w, m, dtype=dtype, device=device),
                 done=torch.zeros(w, m, dtype=torch.bool, device=device), states=dict(states),
                 count=torch.ones(w, dtype=torch.long, device=device), q_min=value.detach().clone(),
                 q_max=value.detach().clone(), rows=rows)
    tree.prior[:, 0] = prior.detach()
    tree.value[:, 0] = value.detach()
    return tree


def _add_root_noise(tree: _Tree, alpha: float, fraction: float, generator) -> None:
    """``P(0, ·) <- (1 - ε) P + ε · Dir(α)`` over each root's actions of nonzero prior."""
    prior = tree.prior[:, 0]
    legal = prior > 0
    concentration = torch.full(prior.shape, alpha, dtype=torch.float64, device=prior.device)
    gamma_draws = torch._standard_gamma(concentration, generator=generator) * legal
    noise = gamma_draws / gamma_draws.sum(-1, keepdim=True).clamp_min(torch.finfo(torch.float64).tiny)
    tree.prior[:, 0] = ((1 - fraction) * prior.double() + fraction * noise).to(prior.dtype)


def _select(tree: _Tree, node: torch.Tensor, c_puct: float) -> torch.Tensor:
    """The PUCT action ``[W]`` at ``node [W]`` of each tree (see the module docstring)."""
    rows = tree.rows
    n = tree.edge_n[rows, node]
    q = torch.where(n > 0, tree.edge_w[rows, node] / n.clamp_min(1), tree.value[rows, node].unsqueeze(1))
    span = (tree.q_max - tree.q_min).unsqueeze(1)
    q_bar = torch.where(span > 0, (q - tree.q_min.unsqueeze(1)) / span.clamp_min(torch.finfo(span.dtype).tiny),
                        torch.zeros_like(q)).clamp(0, 1)
    prior = tree.prior[rows, node]
    u = c_puct * prior * n.sum(1, keepdim=True).clamp_min(1).sqrt() / (1 + n)
    return (q_bar + u).masked_fill(prior <= 0, -math.inf).argmax(1)


def _descend(tree: _Tree, depth: int, c_puct: float) -> _Path:
    """Selection for every tree at once, ``depth`` levels (a tree whose descent stopped keeps
    its path; the levels after it are masked by ``length``)."""
    w, device, rows = tree.rows.shape[0], tree.rows.device, tree.rows
    node = torch.zeros(w, dtype=torch.long, device=device)
    active = torch.ones(w, dtype=torch.bool, device=device)
    nodes = torch.zeros(w, depth, dtype=torch.long, device=device)
    actions = torch.zeros_like(nodes)
    length = torch.zeros(w, dtype=torch.long, device=device)
    parent, action = torch.zeros_like(length), torch.zeros_like(length)
    expanding = torch.zeros_like(active)
    for d in range(depth):
        a = _select(tree, node, c_puct)
        child = tree.children[rows, node, a]
        new = active & (child < 0)
        nodes[:, d], actions[:, d] = node, a
        length += active
        parent, action = torch.where(new, node, parent), torch.where(new, a, action)
        expanding |= new
        move = active & (child >= 0)
        node = torch.where(move, child, node)
        active = move & ~tree.done[rows, node]
    return _Path(nodes, actions, length, node, parent, action, expanding)


def _expand(tree: _Tree, model: SearchModel, path: _Path) -> torch.Tensor:
    """One ``model.step`` and one ``model.prior_and_value`` over the W trees: the new node of
    each expanding tree, written at its next free slot (a tree that expands nothing steps a dummy
    edge, root and action 0, whose results land in its free slot, unused).  Returns the leaf
    values ``[W]`` the backup starts from."""
    rows, m, w = tree.rows, tree.max_nodes, tree.rows.shape[0]
    parent = torch.where(path.expanding, path.parent, torch.zeros_like(path.parent))
    states = model.clone(tree.states, rows * m + parent)
    next_states, reward, done = _check_step(model.step(states, path.action), w)
    prior, value = model.prior_and_value(next_states)
    _check_evaluation(prior, value, w, tree.prior.shape[2])
    value = torch.where(done, torch.zeros_like(value), value.detach()).to(tree.value.dtype)
    slot = tree.count
    tree.prior[rows, slot] = prior.detach().to(tree.prior.dtype)
    tree.value[rows, slot] = value
    tree.reward[rows, slot] = reward.detach().to(tree.reward.dtype)
    tree.done[rows, slot] = done
    for key, buffer in tree.states.items():
        buffer[rows * m + slot] = next_states[key].to(buffer.dtype)
    old = tree.children[rows, path.parent, path.action]
    tree.children[rows, path.parent, path.action] = torch.where(path.expanding, slot, old)
    tree.count = slot + path.expanding.long()
    _widen_bounds(tree, value, path.expanding)
    return torch.where(path.expanding, value, tree.value[rows, path.last])


def _widen_bounds(tree: _Tree, value: torch.Tensor, where: torch.Tensor) -> None:
    tree.q_min = torch.where(where, torch.minimum(tree.q_min, value), tree.q_min)
    tree.q_max = torch.where(where, torch.maximum(tree.q_max, value), tree.q_max)


def _backup(tree: _Tree, path: _Path, leaf: torch.Tensor, gamma: float) -> None:
    """``G_k = r_{k+1} + γ G_{k+1}`` from the leaf up each path; ``N += 1``, ``Wsum += G_k``."""
    rows, g = tree.rows, leaf
    for d in reversed(range(path.nodes.shape[1])):
        on = d < path.length
        node, action = path.nodes[:, d], path.actions[:, d]
        child = tree.children[rows, node, action].clamp_min(0)
        g = torch.where(on, tree.reward[rows, child] + gamma * g, g)
        tree.edge_n[rows, node, action] += on.to(tree.edge_n.dtype)
        tree.edge_w[rows, node, action] += torch.where(on, g, torch.zeros_like(g))
        _widen_bounds(tree, g, on)


def _result(tree: _Tree, simulations: int) -> SearchResult:
    n, total = tree.edge_n[:, 0], tree.edge_w[:, 0]
    visits = n.round().long()
    q = torch.where(n > 0, total / n.clamp_min(1), tree.value[:, :1].expand_as(n))
    prior = tree.prior[:, 0].double()
    action = (visits.double() + 0.5 * prior / prior.amax(1, keepdim=True).clamp_min(1e-300)).argmax(1)
    return SearchResult(visits=visits, q=q, policy=visits.to(q.dtype) / simulations, action=action,
                        value=total.sum(1) / simulations, prior=tree.prior[:, 0].clone())
