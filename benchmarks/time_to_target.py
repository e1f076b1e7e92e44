"""Training speed: wall-clock to reach a target return on Spread (3 agents), or (``--task smax``)
a greedy win rate on a SMAX map.

Three trainers, one after another on the same CPU cores, each in its own process:

==========  ===============================================  ==========================================
framework   what trains                                      episode return it logs
==========  ===============================================  ==========================================
war-train   war_train MAPPO (Spread preset) on ``Spread-v0``  both: mpe2's (mean over agents of each
                                                             agent's summed reward) and the MAPPO
                                                             paper's on-policy "average episode reward"
jaxmarl     feed-forward MAPPO written here after JaxMARL's   mpe2's (JaxMARL's MPE rewards match mpe2)
            ``baselines/MAPPO/mappo_rnn_mpe.py`` on
            ``MPE_simple_spread_v3`` (its published config;
            the GRU replaced by a Dense(128)+ReLU layer)
sb3         Stable-Baselines3 PPO through SuperSuit on        mpe2's (every agent is a sub-env; the
            ``mpe2.simple_spread_v3`` (agents as envs,       VecMonitor episode return is one agent's)
            parameter sharing), the usual PettingZoo path
==========  ===============================================  ==========================================

The target is in mpe2's convention, which all three log: ``--target`` (default -12.5, i.e. an
on-policy average episode reward of 6 x (-12.5) - 75 = -150, since for Spread with
local_ratio 0.5 the on-policy reward = 6 x mpe2 return - 75; a random policy gets about -22.5
/ -210).  "Reached" means the mean return of the last >= 200 finished episodes is at or above
the target.  Each trainer runs until it reaches the target or its ``--budget-s`` wall-clock
budget (which includes start-up: kernel loading, JIT compilation) is spent.

Configs
-------
* war-train: ``war_train.preset_config("Spread-v0")`` (see war_train/presets/spread.py).
* jaxmarl (JaxMARL 0.2.0, flax, optax; its MAPPO MPE config): lr 2e-3 linearly annealed,
  16 envs x 128 steps, 4 epochs x 4 minibatches, clip 0.2, entropy 0.01, value coef 0.5, grad
  norm 0.5, gamma 0.99, lambda 0.95, ReLU, FC 128 (+ Dense 128 in place of GRU 128), no value
  normalization, critic on the concatenated observations; ``done`` treated as terminal as in
  JaxMARL's code.  Budget sized total_timesteps 1e7 (its config) for the annealing.
* sb3 (stable-baselines3 2.9.2, supersuit 3.11.0, mpe2 1.1.1): ``PPO("MlpPolicy")`` on
  ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(simple_spread_v3.parallel_env()), 8)``
  (24 sub-envs), n_steps 128, batch 256, 10 epochs, lr 1e-3, entropy 0.01, gamma 0.99,
  lambda 0.95 (the PettingZoo SB3 tutorial's settings, n_steps sized for 25-step episodes).

The jaxmarl and sb3 trainers run in their own virtual environments under
``~/.cache/war-envs/bench-venvs`` (``--venv-dir``), installed on first use with the helpers of
``benchmarks/env_throughput.py`` (jaxmarl: the same venv as that benchmark).  Threads: every
trainer gets ``--threads`` (default: all cores available) torch/XLA threads.

SMAX (``--task smax``)
----------------------
Two trainers on ``--map-name`` (default 3m) against JaxMARL's heuristic enemy, the target a
greedy win rate (default 90 %) over ``--eval-episodes`` (500) episodes on worlds no training
run plays, evaluated every ``--eval-every`` env steps (131,072) by both; the time is the
training wall-clock from the worker's start (imports, kernel loading, JIT compilation
included) with the evaluations' seconds left out, budget ``--budget-s`` (3600 s):

* war-train: the map's preset (``war_train.preset_config("SMAX-v0", env_kwargs={"map_name":
  ...})``), one run with no restarts; its selection evaluations are the points.
* jaxmarl: recurrent MAPPO written here after JaxMARL's ``baselines/MAPPO/mappo_rnn_smax.py``
  with its published config (``mappo_homogenous_rnn_smax.yaml``) on JaxMARL's
  ``HeuristicEnemySMAX`` (see_enemy_actions, walls_cause_death, attack_mode closest: SMAX-v0's
  defaults): FC 128 + ReLU, GRU 128, FC 128 + ReLU actor and critic, the critic on JaxMARL's
  world state with the agent's one-hot, lr 4e-3 annealed over 1e7 steps, 128 envs x 128 steps,
  4 epochs x 4 minibatches of whole actor sequences, clip 0.05 (policy and value), entropy
  0.01, value coefficient 0.5, gradient norm 0.25, gamma 0.99, lambda 0.95, advantages
  normalised per minibatch, no value normalisation, ``done`` terminal (as its code).

    python benchmarks/time_to_target.py --task smax --seed 1 --json benchmarks/results/time_to_target_smax_3m.json

Usage
-----
    python benchmarks/time_to_target.py                    # 600 s budget per trainer
    python benchmarks/time_to_target.py --quick            # 90 s per trainer, target -16 (on-policy -171)
    python benchmarks/time_to_target.py --frameworks war-train,jaxmarl --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)
import env_throughput as et  # noqa: E402  (stdlib-only at import: the peer-venv helpers)

FRAMEWORKS = ("war-train", "jaxmarl", "sb3")
DEFAULT_TARGET = -12.5
QUICK_TARGET = -16.0
DEFAULT_BUDGET_S = 600.0
QUICK_BUDGET_S = 90.0
WINDOW_EPISODES = 200
SMAX_TARGET = 0.9
SMAX_BUDGET_S = 3600.0

et.PEER_REQUIREMENTS.setdefault("sb3", [["torch==2.13.0"], ["stable-baselines3==2.9.2", "supersuit==3.11.0",
                                                             "mpe2==1.1.1", "pettingzoo==1.27.0"]])
et.PEER_IMPORT_CHECK.setdefault("sb3", "import torch, stable_baselines3, supersuit, mpe2")

CONVENTIONS = {
    "war-train": "mpe2 (+ on-policy, from info metrics)",
    "jaxmarl": "mpe2 (JaxMARL MPE rewards)",
    "sb3": "mpe2 (per-agent sub-env return)",
}
ALGORITHMS = {
    "war-train": "MAPPO (war_train, Spread preset)",
    "jaxmarl": "MAPPO feed-forward (JaxMARL config)",
    "sb3": "PPO + SuperSuit (param. sharing)",
}


def onpolicy_from_mpe2(ret: float) -> float:
    """On-policy average episode reward equivalent to an mpe2 return (Spread, N=3, local_ratio 0.5,
    25 steps): team sum of env rewards = 0.5 x on-policy reward + 1.5 per step."""
    return 6.0 * ret - 75.0


# ---------------------------------------------------------------------------
# Worker side (stdlib only at module level: runs in the peer venvs too)
# ---------------------------------------------------------------------------


class Tracker:
    """Progress of one trainer: a curve of (env_steps, wall_s, rolling return) points and
    the first point at which the rolling mean over >= WINDOW_EPISODES episodes reaches target."""

    def __init__(self, target: float, budget_s: float) -> None:
        self.target, self.budget_s = target, budget_s
        self.t0 = time.perf_counter()
        self.points: list[tuple[int, float]] = []  # (episodes, sum of returns) per report
        self.curve: list[list[float]] = []
        self.reached: dict | None = None
        self.extra: dict = {}

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def report(self, env_steps: int, episodes: int, return_sum: float, **extra) -> bool:
        """Add the episodes finished since the last report; True when training should stop."""
        wall = self.elapsed()
        if episodes:
            self.points.append((episodes, return_sum))
        n, s = 0, 0.0
        for e, r in reversed(self.points):
            n, s = n + e, s + r
            if n >= WINDOW_EPISODES:
                break
        rolling = s / n if n else float("nan")
        self.curve.append([env_steps, round(wall, 3), rolling])
        self.extra = extra
        if self.reached is None and n >= WINDOW_EPISODES and rolling >= self.target:
            self.reached = {"env_steps": env_steps, "wall_s": wall, "return": rolling, **extra}
        if len(self.curve) % 20 == 0 or self.reached:
            print(f"  {env_steps:>10,} env steps {wall:7.1f} s  return {rolling:8.2f}", file=sys.stderr, flush=True)
        return self.reached is not None or wall >= self.budget_s

    def result(self, env_steps: int) -> dict:
        wall = self.elapsed()
        final = self.curve[-1][2] if self.curve else float("nan")
        return {"reached": self.reached, "env_steps": env_steps, "wall_s": wall,
                "env_steps_per_s": env_steps / wall if wall else float("nan"),
                "final_return": final, "curve": self.curve[::max(1, len(self.curve) // 200)], **self.extra}


def _train_war(cfg: dict, tracker: Tracker) -> int:
    import torch

    import war_envs
    import war_train

    torch.set_num_threads(cfg["threads"])
    config = war_train.preset_config("Spread-v0", seed=cfg["seed"], torch_threads=cfg["threads"],
                                     progress=False, tensorboard=False)  # the preset's budget and schedule
    env = war_envs.make(config.scenario, num_envs=config.num_envs, seed=config.seed, **config.env_kwargs)
    steps = [0]

    def progress(row):
        steps[0] = row["env_steps"]
        stop = tracker.report(row["env_steps"], row["episodes"], row["episode_return"] * row["episodes"],
                              onpolicy_episode_reward=row["onpolicy_episode_reward"])
        return not stop

    war_train.train(env, config, progress)
    return steps[0]


def _train_jaxmarl(cfg: dict, tracker: Tracker) -> int:
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    import flax.linen as nn
    from flax.linen.initializers import constant, orthogonal
    from flax.training.train_state import TrainState
    import jaxmarl

    C = dict(LR=2e-3, NUM_ENVS=16, NUM_STEPS=128, TOTAL_TIMESTEPS=1e7, UPDATE_EPOCHS=4, NUM_MINIBATCHES=4,
             GAMMA=0.99, GAE_LAMBDA=0.95, CLIP_EPS=0.2, ENT_COEF=0.01, VF_COEF=0.5, MAX_GRAD_NORM=0.5,
             FC_DIM_SIZE=128, HIDDEN_DIM=128, ANNEAL_LR=True)
    env = jaxmarl.make("MPE_simple_spread_v3")
    agents = list(env.agents)
    n_agents = len(agents)
    n_actions = int(env.action_space(agents[0]).n)
    E, T = C["NUM_ENVS"], C["NUM_STEPS"]
    NA = n_agents * E
    num_updates = int(C["TOTAL_TIMESTEPS"] // T // E)
    minibatch = NA * T // C["NUM_MINIBATCHES"]

    class Actor(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(C["FC_DIM_SIZE"], kernel_init=orthogonal(np.sqrt(2)), bias_init=constant(0.0))(x))
            x = nn.relu(nn.Dense(C["HIDDEN_DIM"], kernel_init=orthogonal(2), bias_init=constant(0.0))(x))
            return nn.Dense(n_actions, kernel_init=orthogonal(0.01), bias_init=constant(0.0))(x)

    class Critic(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(C["FC_DIM_SIZE"], kernel_init=orthogonal(np.sqrt(2)), bias_init=constant(0.0))(x))
            x = nn.relu(nn.Dense(C["HIDDEN_DIM"], kernel_init=orthogonal(2), bias_init=constant(0.0))(x))
            return jnp.squeeze(nn.Dense(1, kernel_init=orthogonal(1.0), bias_init=constant(0.0))(x), -1)

    def batchify(x):  # {agent: [E, ...]} -> [n_agents * E, ...]
        return jnp.stack([x[a] for a in agents]).reshape((NA, -1))

    def world_state(obs):  # every agent's observation concatenated, one copy per agent
        ws = jnp.concatenate([obs[a] for a in agents], axis=-1)
        return jnp.tile(ws[None], (n_agents, 1, 1)).reshape((NA, -1))

    def schedule(count):
        return C["LR"] * (1.0 - (count // (C["NUM_MINIBATCHES"] * C["UPDATE_EPOCHS"])) / num_updates)

    def make_tx():
        lr = schedule if C["ANNEAL_LR"] else C["LR"]
        return optax.chain(optax.clip_by_global_norm(C["MAX_GRAD_NORM"]), optax.adam(lr, eps=1e-5))

    actor, critic = Actor(), Critic()
    key = jax.random.PRNGKey(cfg["seed"])
    key, k_a, k_c, k_r = jax.random.split(key, 4)
    obs_dim = env.observation_space(agents[0]).shape[0]
    actor_state = TrainState.create(apply_fn=actor.apply, params=actor.init(k_a, jnp.zeros((1, obs_dim))), tx=make_tx())
    critic_state = TrainState.create(apply_fn=critic.apply,
                                     params=critic.init(k_c, jnp.zeros((1, obs_dim * n_agents))), tx=make_tx())
    obs, env_state = jax.vmap(env.reset)(jax.random.split(k_r, E))
    ep_acc = jnp.zeros((E, n_agents))

    def env_step(carry, _):
        actor_state, critic_state, env_state, last_obs, ep_acc, fin_sum, fin_cnt, key = carry
        obs_b, ws = batchify(last_obs), world_state(last_obs)
        logits = actor.apply(actor_state.params, obs_b)
        key, k_act, k_env = jax.random.split(key, 3)
        action = jax.random.categorical(k_act, logits)
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], -1)[:, 0]
        value = critic.apply(critic_state.params, ws)
        env_act = {a: action.reshape(n_agents, E)[i] for i, a in enumerate(agents)}
        obsv, env_state, reward, done, _ = jax.vmap(env.step)(jax.random.split(k_env, E), env_state, env_act)
        rew = jnp.stack([reward[a] for a in agents], -1)  # [E, n]
        ep_acc = ep_acc + rew
        done_all = done["__all__"]
        fin_sum = fin_sum + jnp.sum(jnp.where(done_all, ep_acc.mean(-1), 0.0))
        fin_cnt = fin_cnt + jnp.sum(done_all)
        ep_acc = jnp.where(done_all[:, None], 0.0, ep_acc)
        transition = (batchify(done).squeeze(-1).astype(jnp.float32), action, value,
                      batchify(reward).squeeze(-1), logp, obs_b, ws)
        return (actor_state, critic_state, env_state, obsv, ep_acc, fin_sum, fin_cnt, key), transition

    def gae(traj, last_val):
        def step(carry, tr):
            adv, next_value = carry
            done, value, reward = tr
            delta = reward + C["GAMMA"] * next_value * (1 - done) - value
            adv = delta + C["GAMMA"] * C["GAE_LAMBDA"] * (1 - done) * adv
            return (adv, value), adv
        done, _, value, reward, _, _, _ = traj
        _, advantages = jax.lax.scan(step, (jnp.zeros_like(last_val), last_val), (done, value, reward),
                                     reverse=True, unroll=16)
        return advantages, advantages + value

    def actor_loss(params, obs_b, action, old_logp, adv):
        logits = actor.apply(params, obs_b)
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, action[:, None], -1)[:, 0]
        ratio = jnp.exp(logp - old_logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        loss = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - C["CLIP_EPS"], 1 + C["CLIP_EPS"]) * adv).mean()
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1).mean()
        return loss - C["ENT_COEF"] * entropy

    def critic_loss(params, ws, old_value, targets):
        value = critic.apply(params, ws)
        clipped = old_value + jnp.clip(value - old_value, -C["CLIP_EPS"], C["CLIP_EPS"])
        loss = 0.5 * jnp.maximum((value - targets) ** 2, (clipped - targets) ** 2).mean()
        return C["VF_COEF"] * loss

    @jax.jit
    def update(runner):
        actor_state, critic_state, env_state, last_obs, ep_acc, key = runner
        carry = (actor_state, critic_state, env_state, last_obs, ep_acc, 0.0, 0, key)
        carry, traj = jax.lax.scan(env_step, carry, None, T)
        actor_state, critic_state, env_state, last_obs, ep_acc, fin_sum, fin_cnt, key = carry
        last_val = critic.apply(critic_state.params, world_state(last_obs))
        advantages, targets = gae(traj, last_val)
        _, action, value, _, logp, obs_b, ws = traj
        flat = lambda x: x.reshape((T * NA,) + x.shape[2:])  # noqa: E731
        data = tuple(flat(x) for x in (obs_b, ws, action, logp, value, advantages, targets))

        def epoch(state, _):
            actor_state, critic_state, key = state
            key, k = jax.random.split(key)
            perm = jax.random.permutation(k, T * NA)
            batches = tuple(x[perm].reshape((C["NUM_MINIBATCHES"], minibatch) + x.shape[1:]) for x in data)

            def mb_step(states, b):
                actor_state, critic_state = states
                o, w, a, lp, v, adv, tgt = b
                ga = jax.grad(actor_loss)(actor_state.params, o, a, lp, adv)
                gc = jax.grad(critic_loss)(critic_state.params, w, v, tgt)
                return (actor_state.apply_gradients(grads=ga), critic_state.apply_gradients(grads=gc)), None

            (actor_state, critic_state), _ = jax.lax.scan(mb_step, (actor_state, critic_state), batches)
            return (actor_state, critic_state, key), None

        (actor_state, critic_state, key), _ = jax.lax.scan(epoch, (actor_state, critic_state, key), None,
                                                           C["UPDATE_EPOCHS"])
        return (actor_state, critic_state, env_state, last_obs, ep_acc, key), (fin_sum, fin_cnt)

    runner = (actor_state, critic_state, env_state, obs, ep_acc, key)
    env_steps = 0
    for _ in range(num_updates):
        runner, (fin_sum, fin_cnt) = update(runner)
        fin_sum, fin_cnt = float(fin_sum), int(fin_cnt)
        env_steps += E * T
        if tracker.report(env_steps, fin_cnt, fin_sum):
            break
    return env_steps


def _train_sb3(cfg: dict, tracker: Tracker) -> int:
    import torch

    torch.set_num_threads(cfg["threads"])
    import supersuit as ss
    from mpe2 import simple_spread_v3
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor

    n_agents, n_vec = 3, 8
    env = simple_spread_v3.parallel_env(N=n_agents, max_cycles=25, continuous_actions=False)
    env = ss.pettingzoo_env_to_vec_env_v1(env)
    env = ss.concat_vec_envs_v1(env, n_vec, num_cpus=1, base_class="stable_baselines3")
    env = VecMonitor(env)

    class Track(BaseCallback):
        def __init__(self):
            super().__init__()
            self.n, self.s, self.stop = 0, 0.0, False

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.n += 1
                    self.s += float(info["episode"]["r"])
            return not self.stop

        def _on_rollout_end(self) -> None:
            self.stop = tracker.report(self.num_timesteps // n_agents, self.n, self.s)
            self.n, self.s = 0, 0.0

    # (SuperSuit's ConcatVecEnv has no seed(); PPO(seed=...) would call it: seed torch/numpy instead)
    from stable_baselines3.common.utils import set_random_seed

    set_random_seed(cfg["seed"])
    model = PPO("MlpPolicy", env, learning_rate=1e-3, n_steps=128, batch_size=256, n_epochs=10, gamma=0.99,
                gae_lambda=0.95, ent_coef=0.01, device="cpu", verbose=0)
    callback = Track()
    model.learn(total_timesteps=10 ** 9, callback=callback)
    return model.num_timesteps // n_agents


# ---------------------------------------------------------------------------
# SMAX (--task smax): time to a greedy win rate, evaluated on held-out worlds
# ---------------------------------------------------------------------------


class WinRateTracker:
    """Progress of one SMAX trainer: its greedy evaluations (env steps, training seconds, win
    rate) and the first that reaches the target.  Training seconds are the wall-clock since the
    worker started (imports, kernel loading and JIT compilation included) less the seconds spent
    in evaluations, which both trainers run at the same env-step interval on as many episodes."""

    def __init__(self, target: float, budget_s: float) -> None:
        self.target, self.budget_s = target, budget_s
        self.t0 = time.perf_counter()
        self.eval_s = 0.0
        self.curve: list[list[float]] = []   # [env steps, training s, greedy win rate, training win rate]
        self.reached: dict | None = None

    def train_s(self) -> float:
        return time.perf_counter() - self.t0 - self.eval_s

    def report(self, env_steps: int, win_rate: float, train_win_rate: float) -> bool:
        """One evaluation; True when training should stop (target reached or budget spent)."""
        wall = self.train_s()
        self.curve.append([env_steps, round(wall, 3), win_rate, train_win_rate])
        if self.reached is None and win_rate >= self.target:
            self.reached = {"env_steps": env_steps, "wall_s": wall, "win_rate": win_rate}
        print(f"  {env_steps:>10,} env steps {wall:7.1f} s  greedy win rate {win_rate:6.1%}  (training "
              f"{train_win_rate:6.1%})", file=sys.stderr, flush=True)
        return self.reached is not None or wall >= self.budget_s

    def result(self, env_steps: int) -> dict:
        wall = self.train_s()
        return {"reached": self.reached, "env_steps": env_steps, "wall_s": wall, "eval_s": self.eval_s,
                "env_steps_per_s": env_steps / wall if wall else float("nan"),
                "final_win_rate": self.curve[-1][2] if self.curve else float("nan"), "curve": self.curve}


def _train_war_smax(cfg: dict, tracker: WinRateTracker) -> int:
    """war-train with the map's preset, one run (no restarts): its selection evaluations (greedy,
    on the selection worlds no run trains on) every ``eval_every`` env steps are the points."""
    import torch

    import war_train
    from war_train.run import selection

    torch.set_num_threads(cfg["threads"])
    base = war_train.preset_config("SMAX-v0", env_kwargs={"map_name": cfg["map_name"]})
    every = max(1, cfg["eval_every"] // base.batch_env_steps)
    config = war_train.preset_config("SMAX-v0", env_kwargs={"map_name": cfg["map_name"]}, seed=cfg["seed"],
                                     torch_threads=cfg["threads"], restarts=0, select_every=every,
                                     select_episodes=cfg["eval_episodes"], eval_episodes=0, gif=False,
                                     tensorboard=False, progress=False)
    consider = selection.Selection.consider

    def timed(self, *args, **kwargs):   # the evaluations' seconds, left out of the training time
        start = time.perf_counter()
        try:
            return consider(self, *args, **kwargs)
        finally:
            tracker.eval_s += time.perf_counter() - start

    selection.Selection.consider = timed
    steps = [0]

    def progress(row):
        steps[0] = row["env_steps"]
        score = row.get("select/won", float("nan"))
        if score == score:
            return not tracker.report(row["env_steps"], score, row["won"])
        return tracker.train_s() < tracker.budget_s

    war_train.train(None, config, progress)
    return steps[0]


def _train_jaxmarl_smax(cfg: dict, tracker: WinRateTracker) -> int:
    """Recurrent MAPPO written here after JaxMARL's ``baselines/MAPPO/mappo_rnn_smax.py`` with
    its published config (``mappo_homogenous_rnn_smax.yaml``), on JaxMARL's
    ``HeuristicEnemySMAX``: a greedy evaluation of ``eval_episodes`` fresh worlds (keys no
    training world uses) every ``eval_every`` env steps."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    import flax.linen as nn
    from flax.linen.initializers import constant, orthogonal
    from flax.training.train_state import TrainState
    from jaxmarl.environments.smax import HeuristicEnemySMAX, map_name_to_scenario

    C = dict(LR=4e-3, NUM_ENVS=128, NUM_STEPS=128, TOTAL_TIMESTEPS=1e7, UPDATE_EPOCHS=4, NUM_MINIBATCHES=4,
             GAMMA=0.99, GAE_LAMBDA=0.95, CLIP_EPS=0.05, ENT_COEF=0.01, VF_COEF=0.5, MAX_GRAD_NORM=0.25,
             FC_DIM_SIZE=128, GRU_HIDDEN_DIM=128, ANNEAL_LR=True)
    env = HeuristicEnemySMAX(scenario=map_name_to_scenario(cfg["map_name"]), see_enemy_actions=True,
                             walls_cause_death=True, attack_mode="closest")
    agents = list(env.agents)
    n_agents = len(agents)
    n_actions = int(env.action_space(agents[0]).n)
    E, T, H = C["NUM_ENVS"], C["NUM_STEPS"], C["GRU_HIDDEN_DIM"]
    NA = n_agents * E
    num_updates = int(C["TOTAL_TIMESTEPS"] // T // E)
    mb_actors = NA // C["NUM_MINIBATCHES"]
    updates_per_eval = max(1, cfg["eval_every"] // (E * T))
    max_len = int(env.max_steps) + 2   # (an episode lasts max_steps + 1 steps)

    class GRU(nn.Module):
        """A GRU over time-major inputs ``[T, B, F]``, its state zeroed where ``resets[T, B]``."""

        @nn.compact
        def __call__(self, h, xs, resets):
            def step(cell, carry, inputs):
                x, reset = inputs
                carry = jnp.where(reset[:, None], 0.0, carry)
                return cell(carry, x)

            scan = nn.scan(step, variable_broadcast="params", split_rngs={"params": False}, in_axes=0, out_axes=0)
            return scan(nn.GRUCell(features=H), h, (xs, resets))

    class Actor(nn.Module):
        @nn.compact
        def __call__(self, h, obs, resets, avail):
            x = nn.relu(nn.Dense(C["FC_DIM_SIZE"], kernel_init=orthogonal(np.sqrt(2)), bias_init=constant(0.0))(obs))
            h, x = GRU()(h, x, resets)
            x = nn.relu(nn.Dense(H, kernel_init=orthogonal(2), bias_init=constant(0.0))(x))
            logits = nn.Dense(n_actions, kernel_init=orthogonal(0.01), bias_init=constant(0.0))(x)
            return h, logits - (1.0 - avail) * 1e10     # unavailable actions: JaxMARL's mask

    class Critic(nn.Module):
        @nn.compact
        def __call__(self, h, ws, resets):
            x = nn.relu(nn.Dense(C["FC_DIM_SIZE"], kernel_init=orthogonal(np.sqrt(2)), bias_init=constant(0.0))(ws))
            h, x = GRU()(h, x, resets)
            x = nn.relu(nn.Dense(H, kernel_init=orthogonal(2), bias_init=constant(0.0))(x))
            return h, jnp.squeeze(nn.Dense(1, kernel_init=orthogonal(1.0), bias_init=constant(0.0))(x), -1)

    def batchify(x):  # {agent: [W, ...]} -> [n_agents * W, ...] (agent-major)
        stacked = jnp.stack([x[a] for a in agents])
        return stacked.reshape((stacked.shape[0] * stacked.shape[1], -1))

    def world_state(obs):  # JaxMARL's world state and the agent's one-hot, one row per agent
        ws = jnp.tile(obs["world_state"][None], (n_agents, 1, 1))
        ids = jnp.repeat(jnp.eye(n_agents)[:, None, :], ws.shape[1], axis=1)
        return jnp.concatenate([ws, ids], -1).reshape((-1, ws.shape[-1] + n_agents))

    def avail_actions(env_state):
        return batchify(jax.vmap(env.get_avail_actions)(env_state)).astype(jnp.float32)

    def won_now(reward, done):  # episodes ending now, and won (the win bonus in the last reward: JaxMARL's
        ended = done["__all__"]  # SMAXLogWrapper's rule; every ally gets the team's reward)
        return ended, ended & (reward[agents[0]] >= 1.0)

    def schedule(count):
        return C["LR"] * (1.0 - (count // (C["NUM_MINIBATCHES"] * C["UPDATE_EPOCHS"])) / num_updates)

    def make_tx():
        return optax.chain(optax.clip_by_global_norm(C["MAX_GRAD_NORM"]),
                           optax.adam(schedule if C["ANNEAL_LR"] else C["LR"], eps=1e-5))

    actor, critic = Actor(), Critic()
    key = jax.random.PRNGKey(cfg["seed"])
    key, k_a, k_c, k_r = jax.random.split(key, 4)
    obs, env_state = jax.vmap(env.reset)(jax.random.split(k_r, E))
    obs_dim, ws_dim = obs[agents[0]].shape[-1], world_state(obs).shape[-1]
    h0 = jnp.zeros((NA, H))
    no_reset = jnp.zeros((1, NA), dtype=bool)
    actor_state = TrainState.create(apply_fn=actor.apply, tx=make_tx(), params=actor.init(
        k_a, h0, jnp.zeros((1, NA, obs_dim)), no_reset, jnp.ones((1, NA, n_actions))))
    critic_state = TrainState.create(apply_fn=critic.apply, tx=make_tx(),
                                     params=critic.init(k_c, h0, jnp.zeros((1, NA, ws_dim)), no_reset))

    def env_step(carry, _):
        actor_state, critic_state, env_state, last_obs, last_done, (ha, hc), won_sum, ep_cnt, key = carry
        obs_b, ws, avail = batchify(last_obs), world_state(last_obs), avail_actions(env_state)
        ha, logits = actor.apply(actor_state.params, ha, obs_b[None], last_done[None], avail[None])
        hc, value = critic.apply(critic_state.params, hc, ws[None], last_done[None])
        logits, value = logits[0], value[0]
        key, k_act, k_env = jax.random.split(key, 3)
        action = jax.random.categorical(k_act, logits)
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], -1)[:, 0]
        env_act = {a: action.reshape(n_agents, E)[i] for i, a in enumerate(agents)}
        obsv, env_state, reward, done, info = jax.vmap(env.step)(jax.random.split(k_env, E), env_state, env_act)
        ended, won = won_now(reward, done)
        won_sum, ep_cnt = won_sum + jnp.sum(won), ep_cnt + jnp.sum(ended)
        transition = (jnp.tile(done["__all__"], n_agents).astype(jnp.float32), last_done, action, value,
                      batchify(reward)[:, 0], logp, obs_b, ws, avail)
        done_b = batchify(done)[:, 0]
        return (actor_state, critic_state, env_state, obsv, done_b, (ha, hc), won_sum, ep_cnt, key), transition

    def gae(global_done, value, reward, last_val):
        def step(carry, tr):
            adv, next_value = carry
            done, v, r = tr
            delta = r + C["GAMMA"] * next_value * (1 - done) - v
            adv = delta + C["GAMMA"] * C["GAE_LAMBDA"] * (1 - done) * adv
            return (adv, v), adv
        _, advantages = jax.lax.scan(step, (jnp.zeros_like(last_val), last_val), (global_done, value, reward),
                                     reverse=True, unroll=16)
        return advantages, advantages + value

    def actor_loss(params, h, obs_b, resets, avail, action, old_logp, adv):
        _, logits = actor.apply(params, h, obs_b, resets, avail)
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, action[..., None], -1)[..., 0]
        ratio = jnp.exp(logp - old_logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        loss = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - C["CLIP_EPS"], 1 + C["CLIP_EPS"]) * adv).mean()
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1).mean()
        return loss - C["ENT_COEF"] * entropy

    def critic_loss(params, h, ws, resets, old_value, targets):
        _, value = critic.apply(params, h, ws, resets)
        clipped = old_value + jnp.clip(value - old_value, -C["CLIP_EPS"], C["CLIP_EPS"])
        return C["VF_COEF"] * 0.5 * jnp.maximum((value - targets) ** 2, (clipped - targets) ** 2).mean()

    @jax.jit
    def update(runner):
        actor_state, critic_state, env_state, last_obs, last_done, hidden, key = runner
        carry = (actor_state, critic_state, env_state, last_obs, last_done, hidden, 0.0, 0, key)
        carry, traj = jax.lax.scan(env_step, carry, None, T)
        actor_state, critic_state, env_state, last_obs, last_done, hidden_end, won_sum, ep_cnt, key = carry
        global_done, resets, action, value, reward, logp, obs_b, ws, avail = traj
        _, last_val = critic.apply(critic_state.params, hidden_end[1], world_state(last_obs)[None], last_done[None])
        advantages, targets = gae(global_done, value, reward, last_val[0])
        seqs = (obs_b, ws, resets, avail, action, logp, value, advantages, targets)   # [T, NA, ...]

        def epoch(state, _):
            actor_state, critic_state, key = state
            key, k = jax.random.split(key)
            # minibatches of whole actor sequences (from their rollout-start GRU states), as the
            # recurrent baseline shuffles
            perm = jax.random.permutation(k, NA).reshape((C["NUM_MINIBATCHES"], mb_actors))

            def mb_step(states, idx):
                actor_state, critic_state = states
                o, w, r, av, a, lp, v, adv, tgt = (x[:, idx] for x in seqs)
                ga = jax.grad(actor_loss)(actor_state.params, hidden[0][idx], o, r, av, a, lp, adv)
                gc = jax.grad(critic_loss)(critic_state.params, hidden[1][idx], w, r, v, tgt)
                return (actor_state.apply_gradients(grads=ga), critic_state.apply_gradients(grads=gc)), None

            (actor_state, critic_state), _ = jax.lax.scan(mb_step, (actor_state, critic_state), perm)
            return (actor_state, critic_state, key), None

        (actor_state, critic_state, key), _ = jax.lax.scan(epoch, (actor_state, critic_state, key), None,
                                                           C["UPDATE_EPOCHS"])
        return (actor_state, critic_state, env_state, last_obs, last_done, hidden_end, key), (won_sum, ep_cnt)

    M = cfg["eval_episodes"]
    eval_keys = jax.random.split(jax.random.PRNGKey(10_000 + cfg["seed"]), M)   # (no training world's key)

    @jax.jit
    def evaluate(params):
        """Greedy play of one episode in each of M fresh worlds: the fraction won."""
        obs, state = jax.vmap(env.reset)(eval_keys)
        MA = n_agents * M

        def step(carry, k):
            obs, state, done_b, h, finished, won = carry
            o, av = batchify(obs), avail_actions(state)
            h, logits = actor.apply(params, h, o[None], done_b[None], av[None])
            action = jnp.argmax(logits[0], -1)
            act = {a: action.reshape(n_agents, M)[i] for i, a in enumerate(agents)}
            obs, state, reward, done, _ = jax.vmap(env.step)(jax.random.split(k, M), state, act)
            ended, won_step = won_now(reward, done)
            won = jnp.where(ended & ~finished, won_step, won)
            finished = finished | ended
            done_b = batchify(done)[:, 0]
            return (obs, state, done_b, h, finished, won), None

        init = (obs, state, jnp.zeros(MA, dtype=bool), jnp.zeros((MA, H)), jnp.zeros(M, dtype=bool), jnp.zeros(M))
        (_, _, _, _, finished, won), _ = jax.lax.scan(step, init, jax.random.split(jax.random.PRNGKey(1), max_len))
        return won.mean(), finished.mean()

    runner = (actor_state, critic_state, env_state, obs, jnp.zeros(NA, dtype=bool), (h0, h0), key)
    env_steps, won_total, ep_total = 0, 0.0, 0
    for u in range(1, num_updates + 1):
        runner, (won_sum, ep_cnt) = update(runner)
        won_total, ep_total = won_total + float(won_sum), ep_total + int(ep_cnt)
        env_steps += E * T
        if u % updates_per_eval == 0 or u == num_updates:
            start = time.perf_counter()
            win_rate, finished = (float(x) for x in evaluate(runner[0].params))
            tracker.eval_s += time.perf_counter() - start
            if finished < 1.0:
                raise RuntimeError(f"evaluation: {1 - finished:.1%} of the episodes did not end in {max_len} steps")
            train_win = won_total / ep_total if ep_total else float("nan")
            won_total, ep_total = 0.0, 0
            if tracker.report(env_steps, win_rate, train_win):
                break
    return env_steps


TRAINERS = {"spread": {"war-train": _train_war, "jaxmarl": _train_jaxmarl, "sb3": _train_sb3},
            "smax": {"war-train": _train_war_smax, "jaxmarl": _train_jaxmarl_smax}}
TRACKERS = {"spread": Tracker, "smax": WinRateTracker}


def worker_main(cfg: dict) -> None:
    et._limit_threads(cfg["threads"])
    tracker = TRACKERS[cfg["task"]](cfg["target"], cfg["budget_s"])
    env_steps = TRAINERS[cfg["task"]][cfg["framework"]](cfg, tracker)
    result = tracker.result(env_steps)
    Path(cfg["result_path"]).write_text(json.dumps(result))


# ---------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------


def run_framework(framework: str, args) -> dict:
    if framework == "war-train":
        python, reason = sys.executable, None
    else:
        peer = "jaxmarl" if framework == "jaxmarl" else "sb3"
        python, reason = et.ensure_peer_venv(peer, et.venv_root(args), install=not args.no_install)
    if python is None:
        return {"error": reason}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = {"task": args.task, "framework": framework, "target": args.target, "budget_s": args.budget_s,
               "seed": args.seed, "threads": args.threads, "result_path": str(Path(tmp) / "result.json"),
               "map_name": args.map_name, "eval_every": args.eval_every, "eval_episodes": args.eval_episodes}
        env = dict(os.environ)
        if framework == "jaxmarl":
            env["JAX_PLATFORMS"] = "cpu"
            env["JAX_COMPILATION_CACHE_DIR"] = str(et.venv_root(args) / "jaxmarl-xla-cache")
        et.log(f"training {framework} (target {args.target}, budget {args.budget_s:.0f} s) ...")
        cmd = [python, os.path.abspath(__file__), "--_worker", json.dumps(cfg)]
        try:
            proc = subprocess.run(cmd, env=env, timeout=args.budget_s + 600, cwd=Path(__file__).resolve().parents[1])
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {args.budget_s + 600:.0f} s"}
        path = Path(cfg["result_path"])
        if proc.returncode != 0 or not path.exists():
            return {"error": f"worker exited with code {proc.returncode}"}
        return json.loads(path.read_text())


def fmt(x, spec: str, missing: str = "-") -> str:
    return missing if x is None or x != x else format(x, spec)


def _to_target(r: dict) -> tuple[str, str]:
    """A row's "time to target" and "steps to target" cells ("> ..." where it did not reach it)."""
    reached = r["reached"]
    if reached:
        return f"{reached['wall_s']:.0f} s", f"{reached['env_steps']:,}"
    return f"> {r['wall_s']:.0f} s", f"> {r['env_steps']:,}"


def _print_head(head: str) -> None:
    print(head)
    print("-" * len(head))


def print_table(rows: list[dict], args) -> None:
    if args.task == "smax":
        print_smax_table(rows, args)
        return
    print(f"\nSpread (3 agents), target mpe2 return {args.target} (= on-policy {onpolicy_from_mpe2(args.target):.0f}); "
          f"budget {args.budget_s:.0f} s each, {args.threads} thread(s), seed {args.seed}")
    head = (f"{'framework':<10} {'algorithm':<36} {'reward convention':<38} {'env-steps/s':>11} "
            f"{'time to target':>15} {'steps to target':>16} {'final return':>13} {'final on-policy':>16}")
    _print_head(head)
    for r in rows:
        if "error" in r:
            print(f"{r['framework']:<10} {ALGORITHMS[r['framework']]:<36} error: {r['error']}")
            continue
        t, s = _to_target(r)
        onp = r.get("onpolicy_episode_reward")
        onp_s = fmt(onp, ".1f") if onp is not None else f"({onpolicy_from_mpe2(r['final_return']):.1f})"
        print(f"{r['framework']:<10} {ALGORITHMS[r['framework']]:<36} {CONVENTIONS[r['framework']]:<38} "
              f"{fmt(r['env_steps_per_s'], ',.0f'):>11} {t:>15} {s:>16} {fmt(r['final_return'], '.2f'):>13} {onp_s:>16}")
    print("final return: mean over the last >= 200 episodes (mpe2 convention); final on-policy: logged by war-train "
          "from info metrics, in parentheses converted from the mpe2 return (6 x return - 75).")


SMAX_ALGORITHMS = {"war-train": "MAPPO (war_train, the map's preset)",
                   "jaxmarl": "recurrent MAPPO (JaxMARL's SMAX config)"}


def print_smax_table(rows: list[dict], args) -> None:
    print(f"\nSMAX {args.map_name} (heuristic enemy), target greedy win rate {args.target:.0%} on {args.eval_episodes} "
          f"held-out episodes every {args.eval_every:,} env steps; budget {args.budget_s:.0f} s of training each, "
          f"{args.threads} thread(s), seed {args.seed}")
    head = (f"{'framework':<10} {'algorithm':<42} {'env-steps/s':>11} {'time to target':>15} {'steps to target':>16} "
            f"{'final greedy':>13} {'evaluation s':>13}")
    _print_head(head)
    for r in rows:
        if "error" in r:
            print(f"{r['framework']:<10} {SMAX_ALGORITHMS[r['framework']]:<42} error: {r['error']}")
            continue
        t, s = _to_target(r)
        print(f"{r['framework']:<10} {SMAX_ALGORITHMS[r['framework']]:<42} {fmt(r['env_steps_per_s'], ',.0f'):>11} "
              f"{t:>15} {s:>16} {fmt(r['final_win_rate'], '.1%'):>13} {r['eval_s']:>13.0f}")
    print("time: training wall-clock from the worker's start (imports, kernel loading and JIT compilation "
          "included), evaluations left out; env-steps/s over that time.")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", choices=("spread", "smax"), default="spread",
                   help="spread: Spread's return (the default); smax: a greedy win rate on SMAX-v0 (--map-name) beside "
                        "a recurrent MAPPO after JaxMARL's SMAX baseline")
    p.add_argument("--frameworks", help=f"comma list from {FRAMEWORKS} (smax: war-train and jaxmarl; default: all)")
    p.add_argument("--map-name", default="3m", help="--task smax: the map (default 3m)")
    p.add_argument("--eval-every", type=int, default=131_072,
                   help="--task smax: env steps between greedy evaluations (default 131,072: 16 war-train updates of "
                        "the 3m preset, 8 of JaxMARL's)")
    p.add_argument("--eval-episodes", type=int, default=500, help="--task smax: episodes per evaluation")
    p.add_argument("--target", type=float, help=f"mpe2-convention return to reach (default {DEFAULT_TARGET}, "
                                                 f"--quick {QUICK_TARGET})")
    p.add_argument("--budget-s", type=float, help=f"wall-clock budget per trainer (default {DEFAULT_BUDGET_S:.0f}, "
                                                   f"--quick {QUICK_BUDGET_S:.0f})")
    p.add_argument("--quick", action="store_true", help="short budget and an easier target (a few minutes in all)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1,
                   help="torch/XLA threads per trainer (default: 1; on a shared 2-core machine more "
                        "threads thrash: a run with 2 under load was 10x slower)")
    p.add_argument("--venv-dir", help="where peer venvs live (default ~/.cache/war-envs/bench-venvs)")
    p.add_argument("--no-install", action="store_true", help="skip peers that are not installed yet")
    p.add_argument("--json", metavar="PATH", help="write the rows (with learning curves) as JSON")
    p.add_argument("--_worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    smax = args.task == "smax"
    if args.target is None:
        args.target = SMAX_TARGET if smax else QUICK_TARGET if args.quick else DEFAULT_TARGET
    if args.budget_s is None:
        args.budget_s = (QUICK_BUDGET_S if args.quick else SMAX_BUDGET_S if smax else DEFAULT_BUDGET_S)
    frameworks = tuple(TRAINERS[args.task])
    args.frameworks = [f.strip() for f in (args.frameworks or ",".join(frameworks)).split(",") if f.strip()]
    unknown = [f for f in args.frameworks if f not in frameworks]
    if unknown:
        p.error(f"--frameworks: unknown {unknown} for --task {args.task}; choose from {frameworks}")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    if args._worker:
        worker_main(json.loads(args._worker))
        return
    rows = []
    for framework in args.frameworks:
        if args.task == "smax":
            row = {"task": "smax", "map_name": args.map_name, "framework": framework,
                   "algorithm": SMAX_ALGORITHMS[framework], "target": args.target, "seed": args.seed,
                   "eval_every": args.eval_every, "eval_episodes": args.eval_episodes}
        else:
            row = {"framework": framework, "algorithm": ALGORITHMS[framework], "convention": CONVENTIONS[framework],
                   "target": args.target}
        row.update(run_framework(framework, args))
        rows.append(row)
    print_table(rows, args)
    if args.json:
        meta = _results.metadata("time_to_target.py", argv,
                                 _results.CORE_DISTS + ("stable-baselines3", "supersuit", "mpe2"))
        _results.write(args.json, rows, meta)


if __name__ == "__main__":
    main()
