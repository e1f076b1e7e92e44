"""The sampling temperature (``TrainConfig.final_temperature``): the schedule by hand, the
categorical heads at a temperature (log-probs, entropy, draws and the unchanged greedy action),
the trainer setting it every update and a checkpoint's policies sampling at its last one, and
clear errors for bad values and Box actors."""

import math

import gymnasium
import pytest
import torch

import war_envs
from war_train.config import TrainConfig
from war_train.learn.distributions import Categorical, MultiCategorical
from war_train.run.loop import train
from war_train.learn.policy import build_policies, load_policies

torch.set_num_threads(1)


def test_schedule_by_hand():
    cfg = TrainConfig(num_envs=4, rollout_length=5, total_env_steps=200, final_temperature=0.2,
                      temperature_start=0.5).validate()
    assert cfg.num_updates == 10
    # updates 1..6 have done 0, 0.1, ..., 0.5 of the run: temperature 1; then linearly to 0.2
    temps = [cfg.schedule(u).temperature for u in range(1, 11)]
    assert temps[:6] == [1.0] * 6
    assert temps[6:] == pytest.approx([1 - 0.8 * 0.2, 1 - 0.8 * 0.4, 1 - 0.8 * 0.6, 1 - 0.8 * 0.8])
    # off by default: exactly 1 at every update
    plain = TrainConfig(num_envs=4, rollout_length=5, total_env_steps=200).validate()
    assert {plain.schedule(u).temperature for u in range(1, 11)} == {1.0}
    # from the start
    early = TrainConfig(num_envs=4, rollout_length=5, total_env_steps=200, final_temperature=0.5,
                        temperature_start=0.0).validate()
    assert early.schedule(1).temperature == 1.0
    assert early.schedule(10).temperature == pytest.approx(1 - 0.5 * 0.9)


@pytest.mark.parametrize("field,value", [("final_temperature", 0.0), ("final_temperature", 1.5),
                                         ("final_temperature", -0.1), ("final_temperature", True),
                                         ("final_temperature", "0.5"), ("temperature_start", 1.0),
                                         ("temperature_start", -0.2), ("temperature_start", None)])
def test_bad_values_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value}).validate()


def test_categorical_at_a_temperature_by_hand():
    head = Categorical(3)
    p = torch.tensor([0.2, 0.3, 0.5])
    out = torch.log(p).unsqueeze(0)
    head.temperature = 0.5
    q = p ** 2 / (p ** 2).sum()          # softmax(log p / 0.5)
    logp, ent = head.log_prob_entropy(out, torch.tensor([2]))
    assert logp.item() == pytest.approx(math.log(q[2].item()))
    assert ent.item() == pytest.approx(-(q * q.log()).sum().item())
    assert head.entropy(out).item() == pytest.approx(ent.item())
    assert head.mode(out).item() == 2
    # inverse CDF of q: u < q0 -> 0, < q0 + q1 -> 1, else 2
    u = torch.tensor([[q[0].item() * 0.9], [q[0].item() + q[1].item() * 0.5], [0.99]])
    actions, lp = head.sample(out.expand(3, 3), u)
    assert actions.tolist() == [0, 1, 2]
    assert lp.tolist() == pytest.approx(q.log().tolist())
    # masked: unavailable actions still get nothing, greedy is the best available one
    mask = torch.tensor([[True, True, False]])
    lp_masked, _ = head.log_prob_entropy(out, torch.tensor([1]), mask)
    q2 = q[:2] / q[:2].sum()
    assert lp_masked.item() == pytest.approx(math.log(q2[1].item()))
    assert head.mode(out, mask).item() == 1


def test_draws_follow_the_tempered_probabilities():
    head = MultiCategorical([3, 2])
    logits = torch.log(torch.tensor([0.2, 0.3, 0.5, 0.4, 0.6]))
    head.temperature = 0.25
    n = 100_000
    actions, _ = head.draw(logits.expand(n, 5), torch.Generator().manual_seed(0))
    for i, p in enumerate((torch.tensor([0.2, 0.3, 0.5]), torch.tensor([0.4, 0.6]))):
        q = p ** 4 / (p ** 4).sum()
        freq = torch.bincount(actions[:, i], minlength=len(p)).double() / n
        se = (q.double() * (1 - q.double()) / n).sqrt()
        assert ((freq - q.double()).abs() <= 5 * se + 1e-12).all(), (freq, q)


def test_box_actors_refuse_a_temperature():
    cfg = TrainConfig(final_temperature=0.5).validate()

    class Spec:
        n_agents, obs_dim = 2, 4
        action_space = gymnasium.spaces.Box(-1.0, 1.0, (2,))

    with pytest.raises(ValueError, match="final_temperature.*'agent'"):
        build_policies({"agent": Spec()}, 8, cfg, "cpu")


def test_training_sets_the_temperature_each_update_and_checkpoints_keep_the_last(tmp_path):
    cfg = TrainConfig(scenario="SMAX-v0", env_kwargs={"map_name": "3m"}, num_envs=8, rollout_length=8,
                      total_env_steps=8 * 8 * 4, epochs=1, final_temperature=0.25, temperature_start=0.0,
                      eval_episodes=0, gif=False, tensorboard=False, progress=False, checkpoint_every=0)
    seen = []
    real_sample = Categorical.sample

    def spy(self, out, noise, mask=None):
        seen.append(self.temperature)
        return real_sample(self, out, noise, mask)

    Categorical.sample = spy
    try:
        result = train(None, cfg, run_dir=tmp_path / "run")
    finally:
        Categorical.sample = real_sample
    want = [cfg.schedule(u).temperature for u in range(1, 5)]
    assert want == pytest.approx([1.0, 1 - 0.75 * 0.25, 1 - 0.75 * 0.5, 1 - 0.75 * 0.75])
    # every rollout step of update u sampled at the temperature of update u
    assert seen == pytest.approx([t for t in want for _ in range(8)])
    assert result.policies["ally"].dist.temperature == pytest.approx(want[-1])
    policies, loaded_cfg, _ = load_policies(result.checkpoint)
    assert policies["ally"].dist.temperature == pytest.approx(want[-1])
    # greedy actions do not depend on it
    env = war_envs.make("SMAX-v0", map_name="3m", num_envs=16, seed=3)
    obs = env.reset()["ally"]
    mask = env.action_mask()["ally"]
    greedy = policies["ally"].act(obs, greedy=True, mask=mask)[0]
    policies["ally"].dist.temperature = 1.0
    assert torch.equal(policies["ally"].act(obs, greedy=True, mask=mask)[0], greedy)
    env.close()
