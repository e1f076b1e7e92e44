"""Action heads (``war_train.learn.distributions``): hand-checked log-probs and entropies, sampling,
the Box bound handling, the data-parallel noise split, and clear errors for unsupported spaces."""

import math

import gymnasium
import numpy as np
import pytest
import torch

from war_train.learn.distributions import (Categorical, DiagGaussian, MultiCategorical, action_head, sample_categorical,
                                     space_from_signature, space_signature)

torch.set_num_threads(1)


def test_categorical_by_hand():
    head = Categorical(3)
    out = torch.log(torch.tensor([[0.2, 0.3, 0.5]]))
    logp, ent = head.log_prob_entropy(out, torch.tensor([2]))
    assert logp.item() == pytest.approx(math.log(0.5))
    assert ent.item() == pytest.approx(-(0.2 * math.log(0.2) + 0.3 * math.log(0.3) + 0.5 * math.log(0.5)))
    assert head.entropy(torch.zeros(2, 3)).tolist() == pytest.approx([math.log(3)] * 2)
    assert head.mode(out).item() == 2
    # inverse CDF: u in [0, 0.2) -> 0, [0.2, 0.5) -> 1, [0.5, 1) -> 2
    u = torch.tensor([[0.1], [0.3], [0.7]])
    actions, lp = head.sample(out.expand(3, 3), u)
    assert actions.tolist() == [0, 1, 2]
    assert lp.tolist() == pytest.approx([math.log(0.2), math.log(0.3), math.log(0.5)])


def test_categorical_draws_what_the_trainer_drew_before_the_heads():
    logits = torch.randn(64, 3, 5, generator=torch.Generator().manual_seed(0))
    a = sample_categorical(logits, torch.Generator().manual_seed(7))
    b = Categorical(5).draw(logits, torch.Generator().manual_seed(7))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_multi_categorical_by_hand():
    head = MultiCategorical([2, 3])
    assert head.n_outputs == 5 and head.action_shape == (2,)
    p1, p2 = torch.tensor([0.25, 0.75]), torch.tensor([0.5, 0.3, 0.2])
    out = torch.cat([p1.log(), p2.log()]).unsqueeze(0)
    logp, ent = head.log_prob_entropy(out, torch.tensor([[1, 2]]))
    assert logp.item() == pytest.approx(math.log(0.75) + math.log(0.2))
    h = lambda p: -float((p * p.log()).sum())  # noqa: E731
    assert ent.item() == pytest.approx(h(p1) + h(p2))
    assert head.entropy(out).item() == pytest.approx(h(p1) + h(p2))
    assert head.mode(out).tolist() == [[1, 0]]
    actions, lp = head.sample(out.expand(2, 5), torch.tensor([[0.1, 0.9], [0.9, 0.1]]))
    assert actions.tolist() == [[0, 2], [1, 0]]
    assert lp.tolist() == pytest.approx([math.log(0.25 * 0.2), math.log(0.75 * 0.5)])
    assert torch.allclose(head.log_prob(out.expand(2, 5), actions), lp)


def test_multi_categorical_frequencies():
    head = MultiCategorical([3, 2])
    probs = [torch.tensor([0.6, 0.3, 0.1]), torch.tensor([0.2, 0.8])]
    out = torch.cat([p.log() for p in probs]).expand(200_000, 5)
    actions, _ = head.draw(out, torch.Generator().manual_seed(3))
    for d, p in enumerate(probs):
        freq = torch.bincount(actions[:, d], minlength=len(p)).double() / len(actions)
        assert torch.allclose(freq, p.double(), atol=0.005)
    rnd = head.random((1000, 4), torch.Generator().manual_seed(0))
    assert rnd.shape == (1000, 4, 2) and int(rnd[..., 0].max()) == 2 and int(rnd[..., 1].max()) == 1


def test_gaussian_matches_torch_normal_and_maps_onto_the_box():
    head = DiagGaussian(low=[0.0, -2.0], high=[1.0, 2.0], init_log_std=-0.5)
    assert head.n_outputs == 2 and head.action_shape == (2,)
    out = torch.tensor([[0.1, -0.3], [0.5, 2.0]])
    actions = torch.tensor([[0.0, 0.2], [3.0, -1.0]])
    ref = torch.distributions.Normal(out, torch.full_like(out, math.exp(-0.5)))
    assert torch.allclose(head.log_prob(out, actions), ref.log_prob(actions).sum(-1))
    assert torch.allclose(head.entropy(out), ref.entropy().sum(-1))
    assert torch.equal(head.mode(out), out)
    # normalized [-1, 1] -> [low, high]; beyond the bounds: clipped (the log-prob stays the Gaussian's)
    env = head.to_env(torch.tensor([[-1.0, 1.0], [0.0, 0.0], [-5.0, 5.0]]))
    assert env.tolist() == [[0.0, 2.0], [0.5, 0.0], [0.0, 2.0]]
    a, lp = head.draw(out, torch.Generator().manual_seed(0))
    assert torch.allclose(lp, head.log_prob(out, a))
    rnd = head.random((500,), torch.Generator().manual_seed(1))
    assert bool((rnd >= head.low).all() and (rnd <= head.high).all())
    # log_std is a learned parameter of the head (checkpointed with the actor)
    assert [n for n, _ in head.named_parameters()] == ["log_std"]


@pytest.mark.parametrize("head", [Categorical(4), MultiCategorical([3, 5]), DiagGaussian([0.0] * 3, [1.0] * 3)],
                         ids=["discrete", "multidiscrete", "box"])
def test_noise_rows_of_every_world_give_the_same_actions(head):
    # what a data-parallel rank does: draw the noise of all E worlds, keep its rows
    E, n, lo, hi = 8, 3, 4, 8
    out = torch.randn(E, n, head.n_outputs, generator=torch.Generator().manual_seed(0))
    full = head.draw(out, torch.Generator().manual_seed(5))
    noise = head.noise((E, n), torch.Generator().manual_seed(5), out.dtype, out.device)[lo:hi]
    part = head.sample(out[lo:hi], noise)
    assert torch.equal(full[0][lo:hi], part[0]) and torch.equal(full[1][lo:hi], part[1])


def test_heads_for_spaces_and_clear_errors():
    assert isinstance(action_head(gymnasium.spaces.Discrete(5)), Categorical)
    assert isinstance(action_head(gymnasium.spaces.MultiDiscrete([11, 11])), MultiCategorical)
    assert isinstance(action_head(gymnasium.spaces.Box(0.0, 1.0, (5,))), DiagGaussian)
    with pytest.raises(ValueError, match="group 'runner'.*finite Box bounds"):
        action_head(gymnasium.spaces.Box(-np.inf, np.inf, (2,)), group="runner")
    with pytest.raises(ValueError, match="group 'agent'.*start at 0"):
        action_head(gymnasium.spaces.Discrete(3, start=1), group="agent")
    with pytest.raises(ValueError, match="group 'x'.*Discrete, MultiDiscrete and Box"):
        action_head(gymnasium.spaces.Dict({"a": gymnasium.spaces.Discrete(2)}), group="x")


@pytest.mark.parametrize("space", [gymnasium.spaces.Discrete(5), gymnasium.spaces.MultiDiscrete([21, 21]),
                                   gymnasium.spaces.Box(0.0, 1.0, (5,), dtype=np.float32)])
def test_space_signatures_round_trip(space):
    sig = space_signature(space)
    assert space_from_signature(sig) == space
    if isinstance(space, gymnasium.spaces.Discrete):
        assert sig == {"n_actions": 5}   # what checkpoints held before other spaces existed
