"""The planning room (``war_train.plan``): the batched PUCT search finds the best first action of
tiny known games (a bandit, and a two-step game whose greedy first move is a trap that only
looking ahead avoids; with depth 1 it falls into the trap), its visit counts sum to the
simulations and concentrate on the best action as they grow; the planning worlds start from
exactly the real worlds' states and leave the real env bitwise unchanged; bad arguments are
refused with clear errors."""

import math

import pytest
import torch

import war_envs
from war_train.plan.search import SearchModel, SearchResult, puct_search
from war_train.plan.worlds import PlanningWorlds

A = 3
#: the two-step game, canonical actions: the first move's rewards, then the second move's
#: (by first move); the best first move is 1 (0 then 3), greedy takes 0 (1 then nothing)
FIRST = torch.tensor([1.0, 0.0, 0.5])
SECOND = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
BEST, GREEDY = 1, 0


class TwoStepGame:
    """W copies of the two-step game, root w's actions relabelled (action a is canonical
    ``(a + w) % A``) so the roots differ.  States: ``t`` (0, 1, 2 = over), ``first`` (canonical
    first move), ``game``.  Uniform prior; value 0, or the exact optimal value (``perfect``), or
    a value that lies about the finished trap branch (``lying``: the search must count 0 after
    done).  Counts its calls, and refuses to step a finished game."""

    def __init__(self, value: str = "zero"):
        self.value_kind, self.steps, self.rows = value, 0, []

    @staticmethod
    def roots(w: int) -> dict:
        z = torch.zeros(w, dtype=torch.long)
        return {"t": z.clone(), "first": z.clone(), "game": torch.arange(w)}

    def prior_and_value(self, states):
        n = states["t"].shape[0]
        value = torch.zeros(n)
        if self.value_kind == "perfect":
            value = torch.where(states["t"] == 1, SECOND[states["first"]].amax(1), value)
        elif self.value_kind == "lying":
            value = torch.where((states["t"] == 2) & (states["first"] == GREEDY), 100.0, value)
        return torch.full((n, A), 1.0 / A), value

    def step(self, states, actions):
        assert (states["t"] < 2).all(), "stepped a finished game"
        self.steps += 1
        self.rows.append(actions.shape[0])
        canon = (actions + states["game"]) % A
        t, first = states["t"], states["first"]
        reward = torch.where(t == 0, FIRST[canon], SECOND[first, canon])
        states["first"] = torch.where(t == 0, canon, first)   # in place: the search hands a clone
        states["t"] = t + 1
        return states, reward, states["t"] == 2

    def clone(self, states, index):
        return {k: v[index].clone() for k, v in states.items()}


class Bandit(TwoStepGame):
    """One pull ends the game; root w's arms pay ``MEANS[w]``."""

    MEANS = torch.tensor([[0.1, 0.9, 0.5], [0.8, 0.2, 0.3], [0.0, 0.4, 0.6], [0.5, 0.45, 0.1]])

    def step(self, states, actions):
        assert (states["t"] < 1).all(), "stepped a finished game"
        self.steps += 1
        self.rows.append(actions.shape[0])
        reward = self.MEANS[states["game"], actions]
        return {**states, "t": states["t"] + 1}, reward, torch.ones_like(actions, dtype=torch.bool)


def best_actions(w: int, canonical: int) -> torch.Tensor:
    return (canonical - torch.arange(w)) % A


# ----------------------------------------------------------------------------- the search
def test_the_bandit_finds_its_best_arm():
    game = Bandit()
    w, sims = Bandit.MEANS.shape[0], 60
    roots = game.roots(w)
    out = puct_search(game, roots, simulations=sims, depth=3, c_puct=1.25, gamma=0.9)
    assert isinstance(out, SearchResult) and isinstance(game, SearchModel)
    assert torch.equal(out.action, Bandit.MEANS.argmax(1))
    assert (out.visits.sum(-1) == sims).all() and (out.visits > 0).all()
    assert torch.allclose(out.q, Bandit.MEANS)            # one deterministic pull: Q is the mean
    assert torch.allclose(out.policy.sum(-1), torch.ones(w)) and out.policy.dtype == torch.float32
    assert torch.allclose(out.value, (out.policy * Bandit.MEANS).sum(-1))
    assert game.steps == sims and set(game.rows) == {w}  # one step per simulation over all roots
    assert torch.equal(roots["t"], torch.zeros(w, dtype=torch.long))  # the roots are read only


def test_the_look_ahead_game_is_solved_and_the_visits_concentrate():
    w = 5
    shares = []
    for sims in (80, 320, 640):
        game = TwoStepGame()
        out = puct_search(game, game.roots(w), simulations=sims, depth=2, c_puct=2.0, gamma=1.0)
        best = best_actions(w, BEST)
        assert torch.equal(out.action, best)
        assert (out.visits.sum(-1) == sims).all()
        assert game.steps == sims and set(game.rows) == {w}
        shares.append(out.policy[torch.arange(w), best])
    assert (shares[0] < shares[1]).all() and (shares[1] < shares[2]).all() and (shares[2] > 0.85).all()
    # the best root action's Q tends to its optimal return 3 (its exploring visits aside)
    assert (out.q[torch.arange(w), best] > 2.5).all() and (out.value > 2.5).all()


def test_depth_one_falls_into_the_greedy_trap():
    """Without look-ahead (and no value to tell), the immediate reward wins: the test above is
    meaningful."""
    w = 5
    out = puct_search(TwoStepGame(), TwoStepGame.roots(w), simulations=200, depth=1, c_puct=2.0, gamma=1.0)
    assert torch.equal(out.action, best_actions(w, GREEDY))
    assert not (out.action == best_actions(w, BEST)).any()
    assert (out.visits.sum(-1) == 200).all()


def test_the_value_is_the_leaf_evaluation_and_zero_after_done():
    w = 4
    # depth 1 with the exact value: r + γ v(next) sees the 3 behind the first move
    out = puct_search(TwoStepGame("perfect"), TwoStepGame.roots(w), simulations=60, depth=1, gamma=1.0)
    assert torch.equal(out.action, best_actions(w, BEST))
    # a value of 100 after the trap branch ends is ignored (0 after done)
    out = puct_search(TwoStepGame("lying"), TwoStepGame.roots(w), simulations=200, depth=2, gamma=1.0)
    assert torch.equal(out.action, best_actions(w, BEST))
    # γ discounts the look-ahead: 0 + 0.2·3 < 1, the first move's reward is then the right choice
    out = puct_search(TwoStepGame(), TwoStepGame.roots(w), simulations=300, depth=2, gamma=0.2)
    assert torch.equal(out.action, best_actions(w, GREEDY))


def test_masked_actions_ties_and_root_noise():
    class Masked(Bandit):
        def prior_and_value(self, states):
            prior, value = super().prior_and_value(states)
            prior = prior.clone()
            prior[:, 1] = 0.0          # the best arm of root 0 is not available
            return prior / prior.sum(1, keepdim=True), value

    out = puct_search(Masked(), Bandit.roots(4), simulations=30, depth=1)
    assert (out.visits[:, 1] == 0).all() and (out.visits.sum(-1) == 30).all() and out.action[0] == 2
    # one simulation: the single visited action is the one the prior's tie-break picks
    out = puct_search(Bandit(), Bandit.roots(4), simulations=1, depth=1)
    assert torch.equal(out.visits.sum(-1), torch.ones(4, dtype=torch.long))
    noisy = [puct_search(Bandit(), Bandit.roots(4), simulations=30, depth=1, dirichlet_alpha=0.3,
                         generator=torch.Generator().manual_seed(7)) for _ in range(2)]
    assert torch.equal(noisy[0].visits, noisy[1].visits) and (noisy[0].visits.sum(-1) == 30).all()
    plain = puct_search(Bandit(), Bandit.roots(4), simulations=30, depth=1)
    off = puct_search(Bandit(), Bandit.roots(4), simulations=30, depth=1, dirichlet_alpha=0.3,
                      dirichlet_fraction=0.0)
    assert torch.equal(plain.visits, off.visits)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"simulations": 0}, ValueError, r"simulations: expected an int >= 1"),
    ({"simulations": 2.5}, TypeError, r"simulations: expected an int"),
    ({"depth": 0}, ValueError, r"depth: expected an int >= 1"),
    ({"c_puct": 0.0}, ValueError, r"c_puct: expected a finite float in \(0.0"),
    ({"c_puct": float("nan")}, ValueError, r"c_puct: expected a finite float"),
    ({"gamma": 1.5}, ValueError, r"gamma: expected a finite float in \[0.0, 1.0\]"),
    ({"dirichlet_alpha": 0.0}, ValueError, r"dirichlet_alpha: expected a finite float in \(0.0"),
    ({"dirichlet_fraction": -0.1}, ValueError, r"dirichlet_fraction: expected a finite float in \[0.0, 1.0\]"),
    ({"generator": 3}, TypeError, r"generator: expected a torch.Generator or None"),
])
def test_search_arguments_are_checked(kwargs, error, match):
    args = {"simulations": 4, "depth": 2, **kwargs}
    with pytest.raises(error, match=match):
        puct_search(Bandit(), Bandit.roots(2), **args)


def test_bad_models_and_roots_are_refused():
    with pytest.raises(TypeError, match=r"model: expected a SearchModel .* lacks \['step', 'clone'\]"):
        puct_search(type("M", (), {"prior_and_value": lambda self, s: None})(), Bandit.roots(2), simulations=2, depth=1)
    with pytest.raises(ValueError, match=r"root: expected every tensor to have one batch size"):
        puct_search(Bandit(), {"t": torch.zeros(2), "game": torch.arange(3)}, simulations=2, depth=1)
    with pytest.raises(TypeError, match=r"root: expected a non-empty dict of tensors"):
        puct_search(Bandit(), {}, simulations=2, depth=1)

    class WrongPrior(Bandit):
        def prior_and_value(self, states):
            return torch.ones(states["t"].shape[0]), torch.zeros(states["t"].shape[0])

    with pytest.raises(ValueError, match=r"model.prior_and_value: expected a floating prior of shape \[2, A\]"):
        puct_search(WrongPrior(), Bandit.roots(2), simulations=2, depth=1)

    class NegativePrior(Bandit):
        def prior_and_value(self, states):
            prior, value = super().prior_and_value(states)
            return prior - 1.0, value

    with pytest.raises(ValueError, match=r"expected a finite, non-negative prior at the roots"):
        puct_search(NegativePrior(), Bandit.roots(2), simulations=2, depth=1)

    class FloatDone(Bandit):
        def step(self, states, actions):
            nxt, reward, done = super().step(states, actions)
            return nxt, reward, done.float()

    with pytest.raises(ValueError, match=r"model.step: expected a bool done of shape \[2\]"):
        puct_search(FloatDone(), Bandit.roots(2), simulations=2, depth=1)


# ----------------------------------------------------------------------------- planning worlds
def random_actions(env, generator) -> dict:
    return {g: torch.randint(int(s.action_space.n), (env.num_envs, s.n_agents), generator=generator)
            for g, s in env.groups.items()}


def snapshot(env) -> tuple[dict, dict, tuple]:
    return (env.get_state(), {g: o.clone() for g, o in env.observations().items()},
            tuple(f.clone() for f in env.world_flags()))


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key, tensor in a.items():
        assert tensor.dtype == b[key].dtype and torch.equal(tensor, b[key]), key


@pytest.mark.parametrize("env_id", ["Spread-v0", "Relay-v0"])
def test_planning_worlds_copy_the_real_worlds_and_never_touch_them(env_id):
    gen = torch.Generator().manual_seed(0)
    real = war_envs.make(env_id, num_envs=4, seed=0)
    real.reset()
    for _ in range(3):
        real.step(random_actions(real, gen))
    state, obs, flags = snapshot(real)
    with PlanningWorlds(env_id, capacity=12, seed=123) as plan:
        rows = plan.load(real, [1, 3], copies=5, redraw=None)
        assert rows.shape == (2, 5) and torch.equal(rows.flatten(), torch.arange(10))
        start = plan.env.get_state()
        for i, world in enumerate([1, 3]):
            for key in state:          # every copy starts from exactly the real world's state
                assert torch.equal(start[key][rows[i]], state[key][world].expand_as(start[key][rows[i]])), key
            for g in obs:
                assert torch.equal(plan.env.observations()[g][rows[i]], obs[g][world].expand(5, *obs[g].shape[1:]))
        assert torch.equal(plan.done, torch.tensor([False] * 10 + [True] * 2))
        for _ in range(10):
            acts = random_actions(plan.env, gen)
            acts = {g: a[torch.tensor([0] * 5 + [5] * 5 + [10, 11])] for g, a in acts.items()}  # per world
            plan.step(acts)
        after = plan.env.get_state()
        moved = ~torch.isclose(after["agent_pos"][:10], start["agent_pos"][:10])
        assert moved.any()                                     # the planning worlds did step
        for key in after:                                      # same actions: the copies stay equal
            assert torch.equal(after[key][rows[0]], after[key][rows[0, :1]].expand_as(after[key][rows[0]])), key
    assert_same(real.get_state(), state)                       # the real worlds: bitwise unchanged
    assert_same(real.observations(), obs)
    assert all(torch.equal(a, b) for a, b in zip(real.world_flags(), flags))
    real.close()


def test_a_finished_planning_world_stays_done_with_zero_reward():
    real = war_envs.make("Spread-v0", num_envs=2, seed=0, max_cycles=3)
    real.reset()
    gen = torch.Generator().manual_seed(1)
    with PlanningWorlds("Spread-v0", capacity=3, seed=0, max_cycles=3) as plan:
        plan.load(real, [0], copies=2, redraw=None)
        dones, rewards = [], []
        for _ in range(6):
            _, reward, done = plan.step(random_actions(plan.env, gen))
            dones.append(done[:2].clone())
            rewards.append(reward["agent"][:2].clone())
        assert [bool(d.all()) for d in dones] == [False, False, True, True, True, True]
        assert all((r != 0).all() for r in rewards[:3]) and all((r == 0).all() for r in rewards[3:])
        assert bool(plan.done[2])                              # an unused row is done from the start
    real.close()


class SpreadAgentZero:
    """A search model over planning worlds: Spread's agent_0 is searched, the other agents hold
    still (action 0: where the trainer puts the other policies); reward: the group's mean; a
    uniform prior and value 0.  States: the planning env's ``get_state`` rows (the first N
    planning worlds hold the batch while it steps)."""

    def __init__(self, plan: PlanningWorlds):
        self.env = plan.env

    def prior_and_value(self, states):
        n = states["t"].shape[0]
        return torch.full((n, 5), 0.2), torch.zeros(n)

    def step(self, states, actions):
        n, env = actions.shape[0], self.env
        env.set_state(states, worlds=torch.arange(n))
        joint = torch.zeros(env.num_envs, 3, dtype=torch.long)
        joint[:n, 0] = actions
        _, reward, _, _, _ = env.step({"agent": joint})
        done = (env.world_flags()[0] | env.world_flags()[1])[:n].clone()
        return {k: v[:n] for k, v in env.get_state().items()}, reward["agent"][:n].mean(1), done

    def clone(self, states, index):
        return {k: v[index].clone() for k, v in states.items()}


def test_a_search_in_planning_worlds_leaves_the_real_worlds_unchanged():
    real = war_envs.make("Spread-v0", num_envs=4, seed=0, max_cycles=4)
    real.reset()
    real.step(random_actions(real, torch.Generator().manual_seed(2)))
    state, obs, flags = snapshot(real)
    with PlanningWorlds("Spread-v0", capacity=2, seed=0, max_cycles=4) as plan:
        rows = plan.load(real, [0, 2], copies=1, redraw=None).flatten()
        root = {k: v[rows] for k, v in plan.env.get_state().items()}
        out = puct_search(SpreadAgentZero(plan), root, simulations=12, depth=5, gamma=0.99)
    assert (out.visits.sum(-1) == 12).all() and ((out.action >= 0) & (out.action < 5)).all()
    assert torch.isfinite(out.q).all() and (out.value < 0).all()   # Spread's rewards are distances
    assert_same(real.get_state(), state)
    assert_same(real.observations(), obs)
    assert all(torch.equal(a, b) for a, b in zip(real.world_flags(), flags))
    real.close()


def test_planning_worlds_refuse_bad_arguments():
    real = war_envs.make("Spread-v0", num_envs=4, seed=0)
    real.reset()
    other = war_envs.make("Relay-v0", num_envs=4, seed=0)
    other.reset()
    with PlanningWorlds("Spread-v0", capacity=6) as plan:
        with pytest.raises(RuntimeError, match=r"nothing loaded; call load"):
            plan.step(random_actions(plan.env, torch.Generator()))
        with pytest.raises(ValueError, match=r"copies: 2 worlds x 5 copies = 10 planning worlds, more than capacity=6"):
            plan.load(real, [1, 3], copies=5, redraw=None)
        with pytest.raises(ValueError, match=r"worlds: expected distinct real worlds"):
            plan.load(real, [1, 1], copies=2, redraw=None)
        with pytest.raises(ValueError, match=r"worlds: expected indices in \[0, 3\]"):
            plan.load(real, [4], copies=1, redraw=None)
        with pytest.raises(ValueError, match=r"copies: expected an int >= 1"):
            plan.load(real, [0], copies=0, redraw=None)
        with pytest.raises(ValueError, match=r"real_env: expected an env like the planning env"):
            plan.load(other, [0], copies=1, redraw=None)
    with pytest.raises(ValueError, match=r"env_kwargs: num_envs and autoreset_mode are PlanningWorlds' own"):
        PlanningWorlds("Spread-v0", capacity=2, num_envs=3)
    with pytest.raises(ValueError, match=r"capacity: expected an int >= 1"):
        PlanningWorlds("Spread-v0", capacity=0)
    with pytest.raises(ValueError, match=r"env: expected an env of num_envs=2 with autoreset DISABLED"):
        PlanningWorlds(lambda num_envs, autoreset_mode: war_envs.make("Spread-v0", num_envs=num_envs), capacity=2)
    real.close()
    other.close()


def test_the_improved_policy_is_gumbel_muzeros_hand_computed():
    # q̄ = (q - min) / (max - min) over the legal actions; σ = (50 + max N) · 0.1 · q̄; softmax(log prior + σ)
    out = SearchResult(visits=torch.tensor([[1, 2, 1, 0]]), q=torch.tensor([[0.0, 1.0, 0.5, 9.0]], dtype=torch.float64),
                       policy=torch.tensor([[0.25, 0.5, 0.25, 0.0]], dtype=torch.float64), action=torch.tensor([1]),
                       value=torch.tensor([0.6], dtype=torch.float64),
                       prior=torch.tensor([[0.2, 0.3, 0.5, 0.0]], dtype=torch.float64))
    sigma = [0.0, 5.2, 2.6]
    weights = [p * math.exp(s) for p, s in zip([0.2, 0.3, 0.5], sigma)]
    expected = torch.tensor([[w / sum(weights) for w in weights] + [0.0]], dtype=torch.float64)
    assert torch.allclose(out.improved_policy(), expected, rtol=1e-12, atol=0)
    flat = SearchResult(visits=out.visits, q=torch.zeros(1, 4, dtype=torch.float64), policy=out.policy,
                        action=out.action, value=out.value, prior=out.prior)
    assert torch.allclose(flat.improved_policy(), out.prior)   # equal Q: the prior itself
