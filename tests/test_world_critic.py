"""World states (the scenario interface's ``world_state``) and the trainer's world-state critic
(``critic_input="world"``): SMAX-v0's world state against a hand computation from its state
(JaxMARL's own ``get_world_state`` is compared in ``tests/test_smax_reference.py``), the
finished episode's world state under SAME_STEP autoreset, scenarios without one, and what the
critics then see, store and restore."""

import numpy as np
import pytest
import torch

import war_envs
import war_train
from war_train.learn import distributed
from war_train.run import lockstep
from war_train.rollout.envs import make_env
from war_train.learn.policy import CriticState, load_policies

torch.set_num_threads(1)


def world_state_by_hand(env) -> np.ndarray:
    """JaxMARL's ``get_world_state`` from ``env.get_state()``: per unit [health / max, x, y,
    cooldown, type one-hot (6)] (zeros once dead), then teams, then types."""
    s = {k: v.double().numpy() for k, v in env.get_state().items()}
    E, A = s["unit_alive"].shape
    max_health = np.asarray(env.unit_type_health)
    out = np.zeros((E, 12 * A))
    for e in range(E):
        for u in range(A):
            t = int(s["unit_types"][e, u])
            if s["unit_alive"][e, u]:
                row = out[e, 10 * u: 10 * u + 10]
                row[0] = s["unit_health"][e, u] / max_health[t]
                row[1:3] = s["unit_positions"][e, u]
                row[3] = s["unit_weapon_cooldowns"][e, u]
                row[4 + t] = 1.0
            out[e, 10 * A + u] = float(u >= env.num_allies)
            out[e, 11 * A + u] = t
    return out


def random_available(env, gen) -> dict:
    return {g: torch.multinomial(m.reshape(-1, m.shape[-1]).float(), 1, generator=gen).reshape(m.shape[:-1])
            for g, m in env.action_mask().items()}


@pytest.mark.parametrize("map_name", ["3m", "2s3z"])
def test_smax_world_state_is_jaxmarls_layout_of_the_state(map_name):
    gen = torch.Generator().manual_seed(0)
    with war_envs.make("SMAX-v0", map_name=map_name, num_envs=8, seed=3) as env:
        env.reset()
        assert env.world_state_dim == 12 * env.num_units
        assert env.world_state().shape == (8, env.world_state_dim) and env.world_state().dtype == torch.float32
        deaths = 0
        for _ in range(60):
            np.testing.assert_allclose(env.world_state().double().numpy(), world_state_by_hand(env), atol=1e-5)
            env.step(random_available(env, gen))
            deaths += int((~env.get_state()["unit_alive"]).sum())
        assert deaths > 0   # dead units' rows (zeros) were compared too


def test_final_world_state_is_the_finished_episodes():
    """SAME_STEP: ``info["final_world_state"]`` of a finished world is the world state a twin
    without autoreset shows after the same step; ``env.world_state()`` is the new episode's."""
    E, gen = 16, torch.Generator().manual_seed(1)
    kw = dict(map_name="3m", num_envs=E, seed=5, max_steps=20)
    with war_envs.make("SMAX-v0", **kw) as env, war_envs.make("SMAX-v0", autoreset_mode="disabled", **kw) as twin:
        env.reset(), twin.reset()
        finished = torch.zeros(E, dtype=torch.bool)
        while not bool(finished.all()):
            actions = random_available(env, gen)
            for g, a in actions.items():   # (worlds the twin has finished: stop, its only available action)
                a[finished] = 4
            _, _, _, _, info = env.step(actions)
            twin.step(actions)
            now = info["_final_obs"] & ~finished
            assert torch.equal(env.world_state()[~finished & ~now], twin.world_state()[~finished & ~now])
            assert torch.equal(info["final_world_state"][now], twin.world_state()[now])
            fresh = world_state_by_hand(env)[now.numpy()]
            np.testing.assert_allclose(env.world_state()[now].double().numpy(), fresh, atol=1e-5)
            finished |= now
        assert finished.all()


def test_scenarios_without_a_world_state_say_so():
    with war_envs.make("Spread-v0", num_envs=2) as env:
        env.reset()
        assert env.world_state_dim == 0
        with pytest.raises(TypeError, match="Spread-v0 declares no world state"):
            env.world_state()
        for critic in ("world", "world_only"):
            with pytest.raises(ValueError, match=f"critic_input: '{critic}' needs a scenario that declares a world"):
                CriticState(env, critic)
    cfg = war_train.preset_config("smoke", critic_input="world", total_env_steps=16 * 25)
    with pytest.raises(ValueError, match="critic_input: 'world' needs"):
        war_train.train(None, cfg)
    with pytest.raises(ValueError, match="critic_input: expected 'state', 'world', 'world_only' or 'local', got 'global'"):
        war_train.preset_config("smoke", critic_input="global")


class Spy:
    """An env whose ``step`` records the world state and ``env.state()`` the policy acted on."""

    def __init__(self, env) -> None:
        self.env, self.seen = env, []

    def __getattr__(self, name):
        return getattr(self.env, name)

    def step(self, actions, **kw):
        self.seen.append((self.env.world_state().clone(), self.env.state()))
        return self.env.step(actions, **kw)


@pytest.mark.parametrize("critic", ["world", "world_only"])
def test_the_world_critic_sees_the_world_state_then_every_observation(critic):
    """``"world"``: the world state, then every observation; ``"world_only"``: the world state."""
    cfg = war_train.preset_config("smoke", scenario="SMAX-v0", critic_input=critic, rollout_length=30,
                                  total_env_steps=16 * 30)
    with make_env(cfg) as env:
        spy = Spy(env)
        mode = lockstep.LockstepMode(spy, cfg, distributed.Local())
        window = mode.collect()
        states = window.groups["ally"].state
        dim = env.world_state_dim + (env.state_dim if critic == "world" else 0)
        assert window.steps == len(spy.seen) == 30 and states.shape[-1] == dim
        for t, (world, joint) in enumerate(spy.seen):
            assert torch.equal(states[t], torch.cat([world, joint], dim=1) if critic == "world" else world)
        first = next(m for m in mode.policies["ally"].critic.modules() if isinstance(m, torch.nn.Linear))
        assert first.in_features == dim
        mode.close()


def test_a_world_critic_run_loads_evaluates_and_differs_from_a_state_critic_run(tmp_path):
    runs = {}
    for critic in ("state", "world", "world_only"):
        cfg = war_train.preset_config("smoke", scenario="SMAX-v0", critic_input=critic, total_env_steps=16 * 25 * 2,
                                      eval_episodes=8)
        runs[critic] = war_train.train(None, cfg, run_dir=tmp_path / critic)
        policies, loaded_cfg, sig = load_policies(tmp_path / critic)
        assert loaded_cfg.critic_input == critic
        assert ("world_state_dim" in sig) == (critic != "state")
        for g, p in policies.items():
            torch.testing.assert_close(p.critic.state_dict(), runs[critic].policies[g].critic.state_dict())
    # the same actors play the same first rollout; the critics see different inputs
    first = [runs[c].history[0] for c in ("state", "world", "world_only")]
    assert first[0]["episode_return"] == first[1]["episode_return"] == first[2]["episode_return"]
    assert len({f["ally/value_loss"] for f in first}) == 3


# ---------------------------------------------------------------------- critic_time
def test_the_time_aware_critic_sees_the_elapsed_fraction_last():
    """``critic_time``: the critics' input ends with t / max_cycles of the observation handed
    out (0 after a reset), after the world state and every observation."""
    cfg = war_train.preset_config("smoke", scenario="SMAX-v0", env_kwargs={"max_steps": 9}, critic_input="world",
                                  critic_time=True, bootstrap_truncation=False, rollout_length=30,
                                  total_env_steps=16 * 30)
    with make_env(cfg) as env:
        spy = Spy(env)
        clocks = []
        step = spy.step
        spy.step = lambda actions, **kw: (clocks.append(env.elapsed_steps().clone()), step(actions, **kw))[1]
        mode = lockstep.LockstepMode(spy, cfg, distributed.Local())
        window = mode.collect()
        states = window.groups["ally"].state
        assert env.max_cycles == 10 and states.shape[-1] == env.world_state_dim + env.state_dim + 1
        for t, ((world, joint), clock) in enumerate(zip(spy.seen, clocks)):
            assert torch.equal(states[t], torch.cat([world, joint, (clock.float() / 10)[:, None]], dim=1))
        fractions = torch.stack(clocks).float() / 10
        assert fractions.min() == 0 and fractions.max() < 1 and len(fractions.unique()) == 10
        first = next(m for m in mode.policies["ally"].critic.modules() if isinstance(m, torch.nn.Linear))
        assert first.in_features == states.shape[-1]
        mode.close()


def test_critic_time_needs_the_limit_as_a_termination_and_a_fixed_length(tmp_path):
    with pytest.raises(ValueError, match="critic_time: a critic that sees the time left .* bootstrap_truncation=True"):
        war_train.preset_config("smoke", critic_time=True)
    with pytest.raises(ValueError, match="critic_time: .* critic_input='local'"):
        war_train.preset_config("smoke", critic_time=True, bootstrap_truncation=False, critic_input="local")
    with war_envs.make("SMAX-v0", num_envs=2) as env:
        env.reset()

        class NoLength:
            def __getattr__(self, name):
                if name == "max_cycles":
                    raise AttributeError(name)
                return getattr(env, name)

        with pytest.raises(ValueError, match="critic_time: needs a scenario whose episodes have a fixed length"):
            CriticState(NoLength(), time=True)
        assert CriticState(env, time=True).dim == env.state_dim + 1
    # a run with it trains, checkpoints and loads its critics back
    cfg = war_train.preset_config("smoke", scenario="SMAX-v0", critic_time=True, bootstrap_truncation=False,
                                  total_env_steps=16 * 25 * 2, eval_episodes=4)
    run = war_train.train(None, cfg, run_dir=tmp_path / "time")
    policies, loaded, _ = load_policies(tmp_path / "time")
    assert loaded.critic_time
    for g, p in policies.items():
        torch.testing.assert_close(p.critic.state_dict(), run.policies[g].critic.state_dict())
