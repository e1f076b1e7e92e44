"""Action masks through every front end and adapter (SMAX-v0, the scenario with
``has_action_mask``): the masks each one hands out equal the batched env's ``action_mask()`` at
reset and every step (autoreset modes, agents that die, dtype and shape in each front end's
layout); PettingZoo's api_test / parallel_api_test / seed tests and Gymnasium's check_env pass
(discrete and continuous, a few maps); an unavailable action is played as the batched env's
trusted step plays it, and ``strict_action_mask=True`` refuses it before anything is stepped;
scenarios without masks hand out none."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import war_envs
from test_gymnasium import _unexpected, assert_same
from war_envs.frontends.agents_as_envs import AgentsAsEnvs

pytestmark = [
    # api_test's notes on the unbounded state space and on all-zero observations (dead units)
    pytest.mark.filterwarnings("ignore:.*(minimum|maximum) (observation|state) space value is.*infinity"),
    pytest.mark.filterwarnings("ignore:Observation numpy array is all zeros"),
]

SMAX = "SMAX-v0"
GYM_ID = "war_envs/SMAX-v0"
ALL_MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]
STOP = 4  # SMAX's "stop": the only action of a dead unit
# short battles so that random play ends episodes (wins, losses, time limits) and kills units
SHORT = {"max_steps": 20}
MAPS = [pytest.param({}, id="3m"), pytest.param({"map_name": "2s3z", "enemy": "self_play"}, id="2s3z-self-play"),
        pytest.param({"map_name": "5m_vs_6m", "enemy": "self_play", "observation_type": "conic"},
                     id="5m_vs_6m-self-play-conic")]


def batched_rows(batched, world=0) -> dict[str, np.ndarray]:
    """``{agent: bool [n]}``: the batched env's current mask of each agent in ``world``."""
    mask = batched.action_mask()
    return {a: mask[g][world, k].cpu().numpy() for g, s in batched.groups.items() for k, a in enumerate(s.agents)}


def batched_alive(batched, world=0) -> dict[str, bool]:
    return {a: bool(batched.alive_mask[g][world, k]) for g, s in batched.groups.items() for k, a in enumerate(s.agents)}


def dead_row(n: int) -> np.ndarray:
    row = np.zeros(n, dtype=np.int8)
    row[STOP] = 1
    return row


def pettingzoo_front_end():
    """``(ParallelEnv, aec_env)``; the test is skipped where pettingzoo is not installed."""
    pytest.importorskip("pettingzoo")
    from war_envs.frontends.pettingzoo import ParallelEnv, aec_env

    return ParallelEnv, aec_env


# ---------------------------------------------------------------------- PettingZoo
@pytest.mark.parametrize("kw", [*MAPS, pytest.param({"action_type": "continuous"}, id="continuous")])
def test_pettingzoo_api_and_seed_tests(kw):
    ParallelEnv, aec_env = pettingzoo_front_end()
    from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

    env = ParallelEnv(SMAX, **kw)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*max_cycles is fixed at construction.*")
        parallel_api_test(env, num_cycles=300)   # samples actions without the mask
    env.close()
    aec = aec_env(SMAX, **kw)
    api_test(aec, num_cycles=300)                # samples with infos[agent]["action_mask"]
    aec.close()
    seed_test(lambda: aec_env(SMAX, **kw), num_cycles=40)
    parallel_seed_test(lambda: ParallelEnv(SMAX, **kw), num_cycles=40)


@pytest.mark.parametrize("kw", MAPS)
def test_pettingzoo_infos_carry_the_masks(kw):
    """Every live agent's ``infos[agent]["action_mask"]`` is its batched mask (int8 ``[n]``) at
    reset and every step; a unit that dies gets the dead mask (stop only) at the step it dies,
    is reported terminated and leaves; a strict env plays whole episodes of masked samples."""
    ParallelEnv, _ = pettingzoo_front_end()
    env = ParallelEnv(SMAX, seed=3, strict_action_mask=True, **SHORT, **kw)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(i)
    deaths = steps = 0
    for episode in range(4):
        obs, infos = env.reset(seed=episode)
        live = list(env.agents)
        while True:
            expected = batched_rows(env.batched)
            assert set(infos) == set(live)  # the agents that were live before the step
            for agent, info in infos.items():
                mask = info["action_mask"]
                assert mask.dtype == np.int8 and mask.shape == (env.action_space(agent).n,)
                np.testing.assert_array_equal(mask, expected[agent].astype(np.int8), err_msg=agent)
            if not env.agents:
                break
            actions = {a: env.action_space(a).sample(mask=infos[a]["action_mask"]) for a in env.agents}
            live = list(env.agents)
            obs, rewards, terms, truncs, infos = env.step(actions)
            steps += 1
            alive = batched_alive(env.batched)
            for agent in infos:
                if not alive[agent]:  # died at this step: the dead mask, terminated, gone
                    deaths += 1
                    np.testing.assert_array_equal(infos[agent]["action_mask"], dead_row(len(expected[agent])))
                    assert terms[agent] and agent not in env.agents
    assert deaths >= 1 and steps >= 20
    env.close()


def test_pettingzoo_unavailable_actions_play_as_trusted_or_are_refused_when_strict():
    ParallelEnv, aec_env = pettingzoo_front_end()
    lenient, twin = ParallelEnv(SMAX, seed=5), war_envs.make(SMAX, num_envs=1, seed=5, autoreset_mode="disabled")
    lenient.reset(seed=5)
    twin.reset(seed=5)
    attack = {a: 7 for a in lenient.agents}  # attack enemy_2: out of range at the start
    assert not any(lenient.batched.action_mask()["ally"][0, :, 7].tolist())
    obs, *_ = lenient.step(attack)
    twin_obs, *_ = twin.step({"ally": torch.full((1, 3), 7)}, trusted=True)
    for k, agent in enumerate(lenient.possible_agents):
        np.testing.assert_array_equal(obs[agent], twin_obs["ally"][0, k].numpy())
    with pytest.raises(ValueError, match="unavailable now"):
        twin.step({"ally": torch.full((1, 3), 7)})  # the batch API's validated step refuses it

    strict = ParallelEnv(SMAX, seed=5, strict_action_mask=True)
    strict.reset(seed=5)
    before = strict.batched.get_state()
    bad = {**{a: STOP for a in strict.agents}, "ally_1": 6}
    with pytest.raises(ValueError, match=r"actions\['ally_1'\]: action 6 is unavailable now \(the action mask "
                                         r"allows \[0, 1, 2, 3, 4\]\)"):
        strict.step(bad)
    for key, value in strict.batched.get_state().items():  # nothing was stepped
        assert torch.equal(value, before[key]), key
    strict.step({a: STOP for a in strict.agents})
    aec = aec_env(SMAX, seed=5, strict_action_mask=True)
    aec.reset(seed=5)
    with pytest.raises(ValueError, match=r"actions\['ally_0'\]: action 5 is unavailable now"):
        aec.step(5)      # refused at the call that passes it
    aec.step(STOP)       # the env stays usable
    with pytest.raises(TypeError, match="strict_action_mask: expected a bool"):
        ParallelEnv(SMAX, strict_action_mask="yes")
    for env in (lenient, strict, aec):
        env.close()
    twin.close()


def test_scenarios_without_masks_hand_out_none():
    ParallelEnv, _ = pettingzoo_front_end()
    par = ParallelEnv("Spread-v0")
    _, infos = par.reset(seed=0)
    _, _, _, _, step_infos = par.step({a: 0 for a in par.agents})
    assert all("action_mask" not in i for i in (*infos.values(), *step_infos.values()))
    smax_box = ParallelEnv(SMAX, action_type="continuous")
    _, infos = smax_box.reset(seed=0)
    assert infos == {a: {} for a in smax_box.agents}
    joint = gym.make("war_envs/Spread-v0")
    assert joint.reset(seed=0)[1] == {}
    assert "action_mask" not in joint.step(joint.action_space.sample())[4]
    vec = gym.make_vec("war_envs/Spread-v0", num_envs=2)
    assert vec.reset(seed=0)[1] == {}
    assert "action_mask" not in vec.step(vec.action_space.sample())[4]
    agents = AgentsAsEnvs("Spread-v0", num_envs=2)
    assert agents.reset(seed=0)[1] == {}
    assert agents.step(agents.action_space.sample())[4] == {}
    for env in (par, smax_box, joint, vec, agents):
        env.close()


# ---------------------------------------------------------------------- Gymnasium
@pytest.mark.parametrize("kw", [*MAPS, pytest.param({"action_type": "continuous"}, id="continuous")])
def test_check_env(kw):
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        for flat in (False, True):
            env = gym.make(GYM_ID, flat=flat, **kw)
            check_env(env.unwrapped)   # samples actions without the mask
            check_env(env)
            env.close()
    assert not _unexpected(records), _unexpected(records)


@pytest.mark.parametrize("kw", MAPS)
def test_joint_env_masks_dict_and_flat(kw):
    """``info["action_mask"]`` is ``{agent: int8 [n]}`` (the batched mask) at reset and every
    step, ``action_space.sample(mask=...)`` takes it, dead units get the dead mask, and the flat
    view's ``action_masks()`` is the concatenation (sb3-contrib's layout)."""
    env = gym.make(GYM_ID, strict_action_mask=True, **SHORT, **kw)
    flat = gym.make(GYM_ID, flat=True, strict_action_mask=True, **SHORT, **kw)
    env.action_space.seed(1)
    seen_dead = 0
    for episode in range(3):
        _, info = env.reset(seed=episode)
        flat.reset(seed=episode)
        done = False
        while not done:
            expected = batched_rows(env.unwrapped.batched)
            assert set(info["action_mask"]) == set(env.unwrapped.agents)
            for agent, mask in info["action_mask"].items():
                assert mask.dtype == np.int8 and mask.shape == (env.action_space[agent].n,)
                np.testing.assert_array_equal(mask, expected[agent].astype(np.int8), err_msg=agent)
            flat_mask = flat.unwrapped.action_masks()
            assert flat_mask.dtype == np.bool_ and flat_mask.shape == (int(flat.action_space.nvec.sum()),)
            np.testing.assert_array_equal(flat_mask, np.concatenate(list(info["action_mask"].values())).astype(bool))
            action = env.action_space.sample(mask=info["action_mask"])
            _, _, term, trunc, info = env.step(action)
            flat.step(np.array([action[a] for a in env.unwrapped.agents]))
            done = term or trunc
            if "alive" in info:
                for i, agent in enumerate(env.unwrapped.agents):
                    if not info["alive"][i]:
                        seen_dead += 1
                        np.testing.assert_array_equal(info["action_mask"][agent],
                                                      dead_row(env.action_space[agent].n))
    assert seen_dead >= 1
    with pytest.raises(TypeError, match="action_masks: only for flat=True"):
        env.unwrapped.action_masks()
    env.close()
    flat.close()


def test_joint_env_strict_refuses_and_lenient_plays():
    strict = gym.make(GYM_ID, strict_action_mask=True)
    strict.reset(seed=0)
    before = strict.unwrapped.batched.get_state()
    with pytest.raises(ValueError, match=r"action\['ally_2'\]: action 5 is unavailable now"):
        strict.step({"ally_0": STOP, "ally_1": STOP, "ally_2": 5})
    for key, value in strict.unwrapped.batched.get_state().items():
        assert torch.equal(value, before[key]), key
    flat = gym.make(GYM_ID, flat=True, strict_action_mask=True)
    flat.reset(seed=0)
    with pytest.raises(ValueError, match=r"action\['ally_0'\]: action 6 is unavailable now"):
        flat.step(np.array([6, STOP, STOP]))
    lenient = gym.make(GYM_ID)
    lenient.reset(seed=0)
    lenient.step({"ally_0": STOP, "ally_1": STOP, "ally_2": 5})  # JaxMARL: the attack does nothing
    for env in (strict, flat, lenient):
        env.close()


@pytest.mark.parametrize("mode", ALL_MODES)
def test_make_vec_masks_match_sync_vector_env_and_batched(mode):
    """``gym.make_vec``'s infos (masks included) equal SyncVectorEnv's over ``gym.make`` step for
    step, and its ``info["action_mask"][agent]`` (int8 ``[W, n]``) is the batched mask."""
    W = 3
    native = gym.make_vec(GYM_ID, num_envs=W, vectorization_mode="vector_entry_point", autoreset_mode=mode,
                          **SHORT)
    sync = SyncVectorEnv([lambda: gym.make(GYM_ID, **SHORT)] * W, autoreset_mode=mode)
    batched = native.unwrapped.batched
    out_native, out_sync = native.reset(seed=4), sync.reset(seed=4)
    assert_same(out_native, out_sync, "reset")
    native.action_space.seed(4)
    done_seen = final_masks_seen = 0
    for t in range(80):
        mask = out_native[-1]["action_mask"]
        for agent, rows in mask.items():
            if agent.startswith("_"):
                continue
            assert rows.dtype == np.int8 and rows.shape == (W, native.single_action_space[agent].n)
            where = mask[f"_{agent}"]  # after a partial reset: the reset worlds (zeros elsewhere)
            expected = np.stack([batched_rows(batched, w)[agent] for w in range(W)])
            np.testing.assert_array_equal(rows, np.where(where[:, None], expected, 0))
        action = native.action_space.sample()
        out_native, out_sync = native.step(action), sync.step(action)
        info_native, info_sync = out_native[-1], out_sync[-1]
        # SAME_STEP: final_info's masks are the finished episodes' last ones (gym.make's last step)
        final_masks_seen += int("action_mask" in info_sync.get("final_info", {}))
        assert_same(out_native[:-1], out_sync[:-1], f"step {t}")
        assert_same(info_native, info_sync, f"step {t} info")
        done = out_native[2] | out_native[3]
        done_seen += int(done.sum())
        if mode == AutoresetMode.DISABLED and done.any():
            out_native = native.reset(options={"reset_mask": done.copy()})
            out_sync = sync.reset(options={"reset_mask": done.copy()})
            assert_same(out_native, out_sync, f"reset_mask {t}")
            # the reset worlds' masks, the others' absent (SyncVectorEnv's layout)
            np.testing.assert_array_equal(out_native[1]["_action_mask"], done)
    assert done_seen >= 4
    assert (final_masks_seen >= 1) == (mode == AutoresetMode.SAME_STEP)
    native.close()
    sync.close()


def test_make_vec_strict_checks_only_the_worlds_that_play():
    envs = gym.make_vec(GYM_ID, num_envs=2, strict_action_mask=True, autoreset_mode=AutoresetMode.NEXT_STEP,
                        max_steps=0)  # every episode lasts one step
    envs.reset(seed=0)
    stop = {a: np.full(2, STOP) for a in envs.unwrapped.agents}
    with pytest.raises(ValueError, match=r"actions\['ally_1'\] at world 1: action 7 is unavailable now"):
        envs.step({**stop, "ally_1": np.array([STOP, 7])})
    _, _, term, trunc, _ = envs.step(stop)
    assert (term | trunc).all()
    # NEXT_STEP: this step restarts both worlds and plays no action, so none is refused
    envs.step({a: np.full(2, 7) for a in envs.unwrapped.agents})
    envs.close()


# ---------------------------------------------------------------------- agents as envs
@pytest.mark.parametrize("mode", ALL_MODES)
def test_agents_as_envs_masks(mode):
    E = 3
    envs = AgentsAsEnvs(SMAX, num_envs=E, seed=0, autoreset_mode=mode, **SHORT)
    A, n = envs.num_agents, envs.single_action_space.n
    obs, info = envs.reset(seed=2)
    envs.action_space.seed(2)
    deaths = finals = 0
    for t in range(60):
        flat = envs.layout.masks(envs.batched.action_mask()).numpy().astype(np.int8)
        if info is not None:
            assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (E * A, n)
            np.testing.assert_array_equal(info["action_mask"], flat)
            assert info["_action_mask"].all()
        obs, rew, term, trunc, info = envs.step(envs.action_space.sample())
        deaths += int((info["action_mask"] == dead_row(n)).all(axis=1).sum())
        if "final_info" in info:
            finals += 1
            np.testing.assert_array_equal(info["final_info"]["_action_mask"], info["_final_obs"])
        done = term | trunc
        if mode == AutoresetMode.DISABLED and done.any():
            reset = np.repeat(done.reshape(E, A).any(1), A)
            obs, info = envs.reset(options={"reset_mask": reset})
            # the reset sub-envs' masks, zeros elsewhere (Gymnasium's vector-info layout)
            np.testing.assert_array_equal(info["_action_mask"], reset)
            flat = envs.layout.masks(envs.batched.action_mask()).numpy().astype(np.int8)
            np.testing.assert_array_equal(info["action_mask"], np.where(reset[:, None], flat, 0))
            info = None
    assert deaths >= 1
    assert (finals >= 1) == (mode == AutoresetMode.SAME_STEP)
    envs.close()


def test_agents_as_envs_final_masks_are_the_finished_episodes():
    """SAME_STEP's ``final_info["action_mask"]`` is what a DISABLED twin (same seeds and actions,
    finished worlds reset by hand) shows at the step an episode ends, and the masks after the
    restart are the twin's after its reset."""
    E = 3
    same = AgentsAsEnvs(SMAX, num_envs=E, seed=0, autoreset_mode="same_step", **SHORT)
    twin = AgentsAsEnvs(SMAX, num_envs=E, seed=0, autoreset_mode="disabled", **SHORT)
    A = same.num_agents
    same.reset(seed=6)
    twin.reset(seed=6)
    rng = np.random.default_rng(0)
    ended = 0
    for t in range(70):
        actions = rng.integers(0, same.single_action_space.n, E * A)
        _, _, term, trunc, info = same.step(actions)
        _, _, term_t, trunc_t, info_t = twin.step(actions)
        done = term | trunc
        np.testing.assert_array_equal(done, term_t | trunc_t)
        if done.any():
            ended += 1
            final = info["final_info"]
            np.testing.assert_array_equal(final["_action_mask"], done)
            np.testing.assert_array_equal(final["action_mask"][done], info_t["action_mask"][done])
            np.testing.assert_array_equal(final["action_mask"][~done], 0)
            _, info_t = twin.reset(options={"reset_mask": done.copy()})
            np.testing.assert_array_equal(info["action_mask"][done], info_t["action_mask"][done])
        else:
            np.testing.assert_array_equal(info["action_mask"], info_t["action_mask"])
    assert ended >= 2
    same.close()
    twin.close()


def test_agents_as_envs_strict():
    envs = AgentsAsEnvs(SMAX, num_envs=2, seed=0, strict_action_mask=True)
    envs.reset(seed=0)
    actions = np.full(6, STOP)
    actions[4] = 6
    with pytest.raises(ValueError, match=r"actions\[4\] \(agent 'ally_1' of world 1\): action 6 is unavailable"):
        envs.step(actions)
    envs.step(np.full(6, STOP))
    envs.close()


# ---------------------------------------------------------------------- SB3
def test_sb3_action_masks_and_maskable_ppo():
    pytest.importorskip("stable_baselines3")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from war_train.adapters.sb3 import SB3VecEnv

    venv = SB3VecEnv(SMAX, num_envs=4, seed=0, strict_action_mask=True, **SHORT)
    venv.reset()
    masks = venv.action_masks()
    assert masks.dtype == np.bool_ and masks.shape == (12, 8)
    np.testing.assert_array_equal(masks, venv.layout.masks(venv.env.action_mask()).numpy())
    assert np.array_equal(np.stack(venv.env_method("action_masks")), masks)
    # MaskablePPO draws from these masks: the strict env would refuse any unavailable action
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=96, n_epochs=1, seed=0, device="cpu")
    model.learn(16 * 12 * 3)
    with pytest.raises(ValueError, match="unavailable now"):
        venv.step(np.full(12, 7))
    venv.close()
    # without strict, plain PPO's unmasked samples are played (JaxMARL's semantics)
    from stable_baselines3 import PPO

    lenient = SB3VecEnv(SMAX, num_envs=2, seed=0, **SHORT)
    PPO("MlpPolicy", lenient, n_steps=16, batch_size=48, n_epochs=1, seed=0, device="cpu").learn(16 * 6)
    lenient.close()


# ---------------------------------------------------------------------- skrl
def test_skrl_info_masks():
    from war_train.adapters.skrl import SkrlMultiAgentEnv

    env = SkrlMultiAgentEnv(SMAX, num_envs=3, seed=0, **SHORT)
    _, info = env.reset()
    for t in range(30):
        mask = env.batched.action_mask()["ally"]
        for k, agent in enumerate(env.possible_agents):
            got = info["action_mask"][agent]
            assert got.dtype == torch.bool and got.shape == (3, 8)
            assert torch.equal(got, mask[:, k])
        actions = {a: torch.randint(0, 8, (3,)) for a in env.possible_agents}
        _, _, _, _, info = env.step(actions)
    strict = SkrlMultiAgentEnv(SMAX, num_envs=2, seed=0, strict_action_mask=True)
    strict.reset()
    with pytest.raises(ValueError, match=r"actions\['ally_2'\] at world 0: action 5 is unavailable now"):
        strict.step({"ally_0": torch.full((2,), STOP), "ally_1": torch.full((2,), STOP),
                     "ally_2": torch.tensor([5, STOP])})
    assert SkrlMultiAgentEnv("Spread-v0", num_envs=2).reset()[1] == {}
    env.close()
    strict.close()


# ---------------------------------------------------------------------- TorchRL
def torchrl_adapter():
    """``TorchRLEnv``; the test is skipped where torchrl is not installed."""
    pytest.importorskip("torchrl")
    from war_train.adapters.torchrl import TorchRLEnv

    return TorchRLEnv


@pytest.mark.parametrize("categorical", [True, False], ids=["categorical", "one-hot"])
def test_torchrl_action_mask_key_and_masked_spec(categorical):
    TorchRLEnv = torchrl_adapter()
    from torchrl.envs.utils import check_env_specs

    env = TorchRLEnv(SMAX, num_envs=4, seed=0, categorical_actions=categorical, strict_action_mask=True, **SHORT)
    assert ("ally", "action_mask") in env.observation_spec.keys(True)
    check_env_specs(env)   # rand_action() from the masked spec: the strict env refuses nothing
    td = env.reset()
    assert td["ally", "action_mask"].dtype == torch.bool and td["ally", "action_mask"].shape == (4, 3, 8)
    assert torch.equal(td["ally", "action_mask"], env.batched.action_mask()["ally"])
    for t in range(40):
        td = env.rand_action(td)
        action = td["ally", "action"]
        index = action if categorical else action.argmax(-1)
        assert td["ally", "action_mask"].gather(-1, index.unsqueeze(-1)).all()
        td = env.step(td)
        assert torch.equal(td["next", "ally", "action_mask"], env.batched.action_mask()["ally"])
        td = env.step_mdp(td)
        if td["done"].any():
            td = env.reset(td.set("_reset", td["done"].clone()))
    td = env.reset()
    td["ally", "action"] = torch.full((4, 3), 7) if categorical else torch.nn.functional.one_hot(
        torch.full((4, 3), 7), 8)
    with pytest.raises(ValueError, match=r"tensordict\[\('ally', 'action'\)\] \(agent 'ally_0', world 0\): "
                                         r"action 7 is unavailable now"):
        env.step(td)
    env.close()
    assert ("agent", "action_mask") not in TorchRLEnv("Spread-v0", num_envs=2).observation_spec.keys(True)


def test_torchrl_same_step_env_matches_disabled():
    """Over a SAME_STEP batched env the adapter returns what an id-built (DISABLED) one returns
    for the same seed and actions, masks included (a finished world's final mask)."""
    TorchRLEnv = torchrl_adapter()
    disabled = TorchRLEnv(SMAX, num_envs=3, seed=1, **SHORT)
    same = TorchRLEnv(war_envs.make(SMAX, num_envs=3, seed=1, **SHORT))
    ta, tb = disabled.reset(), same.reset()
    gen = torch.Generator().manual_seed(0)
    ends = 0
    for t in range(60):
        action = torch.randint(0, 8, (3, 3), generator=gen)
        ta.set(("ally", "action"), action)
        tb.set(("ally", "action"), action.clone())
        ta, tb = disabled.step(ta), same.step(tb)
        done = ta["next", "done"].squeeze(-1)
        ends += int(done.sum())
        for key in [("next", "ally", "observation"), ("next", "ally", "reward"), ("next", "done")]:
            assert torch.equal(ta[key], tb[key]), (t, key)
        # a finished world's step output: its final mask (the same as the DISABLED env's)
        assert torch.equal(ta["next", "ally", "action_mask"], tb["next", "ally", "action_mask"]), t
        ta, tb = disabled.step_mdp(ta), same.step_mdp(tb)
        if done.any():
            ta = disabled.reset(ta.set("_reset", ta["done"].clone()))
            tb = same.reset(tb.set("_reset", tb["done"].clone()))
            assert torch.equal(ta["ally", "action_mask"], tb["ally", "action_mask"])
    assert ends >= 2
    disabled.close()
    same.close()
