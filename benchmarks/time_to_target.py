"""Training speed: wall-clock to reach a target return on Spread (3 agents).

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


TRAINERS = {"war-train": _train_war, "jaxmarl": _train_jaxmarl, "sb3": _train_sb3}


def worker_main(cfg: dict) -> None:
    et._limit_threads(cfg["threads"])
    tracker = Tracker(cfg["target"], cfg["budget_s"])
    env_steps = TRAINERS[cfg["framework"]](cfg, tracker)
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
        cfg = {"framework": framework, "target": args.target, "budget_s": args.budget_s, "seed": args.seed,
               "threads": args.threads, "result_path": str(Path(tmp) / "result.json")}
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


def print_table(rows: list[dict], args) -> None:
    print(f"\nSpread (3 agents), target mpe2 return {args.target} (= on-policy {onpolicy_from_mpe2(args.target):.0f}); "
          f"budget {args.budget_s:.0f} s each, {args.threads} thread(s), seed {args.seed}")
    head = (f"{'framework':<10} {'algorithm':<36} {'reward convention':<38} {'env-steps/s':>11} "
            f"{'time to target':>15} {'steps to target':>16} {'final return':>13} {'final on-policy':>16}")
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['framework']:<10} {ALGORITHMS[r['framework']]:<36} error: {r['error']}")
            continue
        reached = r["reached"]
        t = f"{reached['wall_s']:.0f} s" if reached else f"> {r['wall_s']:.0f} s"
        s = f"{reached['env_steps']:,}" if reached else f"> {r['env_steps']:,}"
        onp = r.get("onpolicy_episode_reward")
        onp_s = fmt(onp, ".1f") if onp is not None else f"({onpolicy_from_mpe2(r['final_return']):.1f})"
        print(f"{r['framework']:<10} {ALGORITHMS[r['framework']]:<36} {CONVENTIONS[r['framework']]:<38} "
              f"{fmt(r['env_steps_per_s'], ',.0f'):>11} {t:>15} {s:>16} {fmt(r['final_return'], '.2f'):>13} {onp_s:>16}")
    print("final return: mean over the last >= 200 episodes (mpe2 convention); final on-policy: logged by war-train "
          "from info metrics, in parentheses converted from the mpe2 return (6 x return - 75).")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frameworks", default=",".join(FRAMEWORKS), help=f"comma list from {FRAMEWORKS}")
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
    if args.target is None:
        args.target = QUICK_TARGET if args.quick else DEFAULT_TARGET
    if args.budget_s is None:
        args.budget_s = QUICK_BUDGET_S if args.quick else DEFAULT_BUDGET_S
    args.frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    unknown = [f for f in args.frameworks if f not in FRAMEWORKS]
    if unknown:
        p.error(f"--frameworks: unknown {unknown}; choose from {FRAMEWORKS}")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    if args._worker:
        worker_main(json.loads(args._worker))
        return
    rows = []
    for framework in args.frameworks:
        row = {"framework": framework, "algorithm": ALGORITHMS[framework], "convention": CONVENTIONS[framework],
               "target": args.target, **run_framework(framework, args)}
        rows.append(row)
    print_table(rows, args)
    if args.json:
        meta = _results.metadata("time_to_target.py", argv,
                                 _results.CORE_DISTS + ("stable-baselines3", "supersuit", "mpe2"))
        _results.write(args.json, rows, meta)


if __name__ == "__main__":
    main()
