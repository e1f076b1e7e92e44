"""MAPPO on the war_envs batch API, top to bottom.

``train(env, config)`` trains one policy per agent group (parameters shared by the group's
agents) and one centralized critic per group.  Read it like CleanRL's ``ppo.py``:

1. build the networks (per group: actor on the agent's observation, critic on ``env.state()``
   with one value output per agent of the group), the Adam optimizers and value normalizers;
2. each update, collect ``rollout_length`` steps from every world (SAME_STEP autoreset: a
   truncated episode's final observations come in ``info["final_obs"]`` and give the
   bootstrap value V(final state));
3. GAE with termination and truncation kept apart, on denormalized values;
4. PPO epochs: clipped surrogate + entropy bonus for the actor, clipped Huber loss on
   normalized targets for the critic, each with its own gradient clip;
5. log, checkpoint (exactly resumable), and at the end evaluate, plot and render.

Under ``torchrun`` the same loop runs on every rank (data-parallel): the ``dist`` hooks
(``war_train.distributed``) split the worlds, all-reduce gradients and batch statistics and let
rank 0 write the outputs; in one process they are the identity.

Choice for several groups (PredatorPrey: ``adversary`` + ``agent``): every group has its own
actor *and its own critic* (all critics see the same global state); they are trained together
on the same rollouts, each on its own group's rewards.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import pathlib
import time
from collections.abc import Callable

import gymnasium
import torch
from torch import nn

from war_train import distributed, losses
from war_train.checkpoint import RESUMABLE, load_checkpoint, malformed_entries, save_checkpoint
from war_train.config import TrainConfig, config_to_dict
from war_train.metrics import EpisodeStats, summarize
from war_train.networks import Actor, Critic, sample_categorical, with_agent_id
from war_train.stopping import NonFiniteTraining, StopRequests
from war_train.valuenorm import ValueNorm

__all__ = ["train", "TrainResult", "GroupPolicy", "build_policies", "joint_state", "DIAGNOSTICS"]

#: per-group diagnostics logged every update (as ``<group>/<name>``)
DIAGNOSTICS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance",
               "grad_norm_actor", "grad_norm_critic", "value_mean")


# ----------------------------------------------------------------------------- networks
class GroupPolicy(nn.Module):
    """Actor + critic of one group.  ``act`` is what evaluation and rendering use."""

    def __init__(self, n_agents: int, obs_dim: int, n_actions: int, state_dim: int, cfg: TrainConfig) -> None:
        super().__init__()
        self.n_agents, self.obs_dim, self.n_actions, self.state_dim = n_agents, obs_dim, n_actions, state_dim
        self.agent_id = cfg.agent_id
        self.recurrent = cfg.use_gru
        self.hidden_size = cfg.hidden_size
        self.actor = Actor(obs_dim + (n_agents if cfg.agent_id else 0), n_actions, cfg)
        self.critic = Critic(state_dim, n_agents, cfg)

    def actor_input(self, obs: torch.Tensor) -> torch.Tensor:
        return with_agent_id(obs) if self.agent_id else obs

    def logits(self, obs: torch.Tensor, h: torch.Tensor | None = None, starts: torch.Tensor | None = None):
        """``obs[E, n, d]`` (one step) -> ``(logits[E, n, A], h')``; ``h[E, n, H]``, ``starts[E]``."""
        E, n = obs.shape[:2]
        x = self.actor_input(obs)
        if not self.recurrent:
            return self.actor(x)
        logits, h = self.actor(x.reshape(1, E * n, -1), h.reshape(E * n, -1),
                               starts.repeat_interleave(n).reshape(1, E * n))
        return logits.reshape(E, n, -1), h.reshape(E, n, -1)

    def value(self, state: torch.Tensor, h: torch.Tensor | None = None, starts: torch.Tensor | None = None):
        """``state[E, S]`` (one step) -> ``(values[E, n], h')`` (normalized units)."""
        if not self.recurrent:
            return self.critic(state)
        v, h = self.critic(state.unsqueeze(0), h, starts.unsqueeze(0))
        return v[0], h

    @torch.no_grad()
    def act(self, obs: torch.Tensor, h=None, starts=None, greedy: bool = True, generator=None):
        """Actions ``[E, n]`` for one step (greedy argmax or sampled with ``generator``)."""
        logits, h = self.logits(obs, h, starts)
        if greedy:
            return logits.argmax(-1), h
        return sample_categorical(logits, generator)[0], h

    def initial_hidden(self, E: int, device) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        if not self.recurrent:
            return None, None
        return (torch.zeros(E, self.n_agents, self.hidden_size, device=device),
                torch.zeros(E, self.hidden_size, device=device))


def _discrete_n(group: str, space) -> int:
    if not isinstance(space, gymnasium.spaces.Discrete):
        raise ValueError(f"group {group!r}: war_train's MAPPO supports Discrete action spaces, got "
                         f"{space}; make the env with continuous_actions=False")
    return int(space.n)


def build_policies(groups: dict, state_dim: int, cfg: TrainConfig, device) -> dict[str, GroupPolicy]:
    """One ``GroupPolicy`` per group, initialised from ``cfg.seed`` (the global RNG is untouched)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        return {g: GroupPolicy(s.n_agents, s.obs_dim, _discrete_n(g, s.action_space), state_dim, cfg).to(device)
                for g, s in groups.items()}


def joint_state(obs: dict[str, torch.Tensor]) -> torch.Tensor:
    """``env.state()`` computed from a dict of group observations (used for final observations)."""
    first = next(iter(obs.values()))
    return torch.cat([o.reshape(first.shape[0], -1) for o in obs.values()], dim=1)


# ----------------------------------------------------------------------------- result
@dataclasses.dataclass
class TrainResult:
    policies: dict[str, GroupPolicy]
    history: list[dict]
    config: TrainConfig
    run_dir: pathlib.Path | None
    checkpoint: pathlib.Path | None
    stopped_early: bool
    #: the signal (SIGINT/SIGTERM number) that stopped the run after its checkpoint, else None
    interrupted_by: int | None = None


def metric_columns(env, groups) -> list[str]:
    cols = ["update", "env_steps", "agent_steps", "wall_s", "env_steps_per_s", "episodes", "episode_return"]
    cols += [f"episode_return/{g}" for g in groups]
    cols += ["episode_length"]
    cols += {"Spread-v0": ["onpolicy_episode_reward", "landmark_dist", "collisions", "occupied_landmarks"],
             "PredatorPrey-v0": ["catch_rate", "contact_steps", "contacts"]}.get(getattr(env, "env_id", ""), [])
    cols += ["lr", "critic_lr"]
    cols += [f"{g}/{d}" for g in groups for d in DIAGNOSTICS]
    return cols


def _check_env(env, cfg: TrainConfig, dist) -> None:
    n = len(dist.worlds(cfg.num_envs))
    if env.num_envs != n and dist.active:
        raise ValueError(f"num_envs: rank {dist.rank} of {dist.world_size} steps {n} of the config's {cfg.num_envs} "
                         f"worlds but its env has {env.num_envs}; make it with war_train.run.make_env(config, dist)")
    if env.num_envs != cfg.num_envs and not dist.active:
        raise ValueError(f"num_envs: the env has {env.num_envs} worlds but config.num_envs is {cfg.num_envs}; "
                         f"make the env with num_envs={cfg.num_envs} (or set config.num_envs={env.num_envs})")
    mode = getattr(env, "autoreset_mode", None)
    if mode is None or mode.name != "SAME_STEP":
        raise ValueError(f"autoreset_mode: war_train needs SAME_STEP autoreset (the batch API default), "
                         f"got {getattr(mode, 'name', mode)}")
    env_dev = getattr(env, "torch_device", torch.device("cpu"))
    if dist.device(cfg.device) != env_dev:
        raise ValueError(f"device: the env runs on {env_dev} but config.device is {cfg.device!r}; use the same device")


# ----------------------------------------------------------------------------- train
def train(env, config: TrainConfig, progress_fn: Callable[[dict], bool | None] | None = None, *,
          run_dir=None, resume=None, dist=None) -> TrainResult:
    """Train MAPPO on ``env`` (a war_envs batched env with ``config.num_envs`` worlds, SAME_STEP
    autoreset, on ``config.device``; it is reset with ``config.seed``).

    ``progress_fn(row)`` is called after every update with that update's metrics; returning
    ``False`` stops training after writing a checkpoint (as a preemption would).  With
    ``run_dir``, writes ``metrics.csv``, TensorBoard events under ``tb/`` and
    ``checkpoint.pt`` there (nothing is written without it).  ``resume``: a checkpoint (or a
    run folder) to continue from exactly; its config must equal ``config`` except for
    ``total_env_steps``, ``checkpoint_every``, ``progress``, ``tensorboard``, ``gif`` and
    ``eval_episodes``.

    ``dist``: a ``war_train.distributed`` context (default: ``distributed.current()``, i.e. the
    torchrun rank this process is, or one process).  Under torchrun every rank calls ``train``
    with the same arguments and its own env (``war_train.run.make_env(config, dist)``).
    """
    cfg = config.validate()
    dist = distributed.current() if dist is None else dist
    _check_env(env, cfg, dist)
    dist.setup(cfg, env)
    torch.set_num_threads(cfg.torch_threads)
    device = dist.device(cfg.device)
    E, T = env.num_envs, cfg.rollout_length   # this process's worlds (all of them in one process)
    groups = dict(env.groups)
    state_dim = env.state_dim
    run_dir = pathlib.Path(run_dir) if run_dir is not None else None

    # --- networks, optimizers, value normalizers, the sampling stream
    policies = build_policies(groups, state_dim, cfg, device)
    actor_opt = {g: torch.optim.Adam(p.actor.parameters(), lr=cfg.lr, eps=cfg.adam_eps) for g, p in policies.items()}
    critic_opt = {g: torch.optim.Adam(p.critic.parameters(), lr=cfg.critic_lr, eps=cfg.adam_eps)
                  for g, p in policies.items()}
    vnorm = {g: ValueNorm(cfg.value_norm_beta, enabled=cfg.value_norm) for g in groups}
    gen = torch.Generator(device=device)
    gen.manual_seed(dist.generator_seed(cfg.seed))
    stats = EpisodeStats(env)

    # --- the env's first observations (or the checkpointed ones); rank r's worlds are seeded s + r·E/K
    obs = {g: o.clone() for g, o in env.reset(seed=cfg.seed + dist.worlds(cfg.num_envs).start).items()}
    starts = torch.ones(E, dtype=torch.bool, device=device)  # a new episode begins at the current obs
    actor_h = {g: p.initial_hidden(E, device)[0] for g, p in policies.items()}
    critic_h = {g: p.initial_hidden(E, device)[1] for g, p in policies.items()}
    update, env_steps, wall_before = 0, 0, 0.0
    checkpoint_path = None   # the last complete checkpoint (the resumed one, then each one written)
    if resume is not None:
        ckpt = load_checkpoint(resume)
        _check_resume(ckpt, cfg, env)
        ckpt = dist.local_checkpoint(ckpt)   # this rank's worlds (and generator)
        load_networks(policies, ckpt)
        for g, p in policies.items():
            actor_opt[g].load_state_dict(ckpt["actor_opts"][g])
            critic_opt[g].load_state_dict(ckpt["critic_opts"][g])
            vnorm[g].load_state_dict(ckpt["valuenorms"][g])
            if p.recurrent:
                actor_h[g] = ckpt["actor_h"][g].to(device)
                critic_h[g] = ckpt["critic_h"][g].to(device)
        gen.set_state(ckpt["generator"])
        env.set_state({k: v.to(env.torch_device) for k, v in ckpt["env_state"].items()})
        obs = {g: ckpt["obs"][g].to(device).clone() for g in groups}
        starts = ckpt["starts"].to(device).clone()
        stats.load_state_dict(ckpt["episode_stats"])
        update, env_steps, wall_before = int(ckpt["update"]), int(ckpt["env_steps"]), float(ckpt["wall_s"])
        resume_path = pathlib.Path(resume)
        checkpoint_path = resume_path / "checkpoint.pt" if resume_path.is_dir() else resume_path

    # --- outputs
    columns = metric_columns(env, groups) + dist.columns(groups)
    csv_log = tb = None
    if run_dir is not None and dist.is_main:
        from war_train.runlog import MetricsCSV, TensorBoard

        run_dir.mkdir(parents=True, exist_ok=True)
        csv_log = MetricsCSV(run_dir / "metrics.csv", columns, keep_until=update if resume is not None else None)
        tb = TensorBoard(run_dir / "tb", cfg.tensorboard, purge_step=env_steps + 1 if resume is not None else None)
    from war_train.runlog import ProgressBar

    key = "onpolicy_episode_reward" if "onpolicy_episode_reward" in columns else "episode_return"
    bar = ProgressBar(cfg.num_updates * cfg.batch_env_steps, env.env_id or "train", enabled=cfg.progress and dist.is_main)

    # --- rollout buffers (time-major), reused every update
    def zeros(*shape, dtype=torch.float32):
        return torch.zeros(*shape, dtype=dtype, device=device)

    cap = dist.max_rollout_length(T)     # == T, except for WAR per-rank quotas
    buf_obs = {g: zeros(cap, E, s.n_agents, s.obs_dim) for g, s in groups.items()}
    buf_act = {g: zeros(cap, E, s.n_agents, dtype=torch.long) for g, s in groups.items()}
    buf_logp = {g: zeros(cap, E, s.n_agents) for g, s in groups.items()}
    buf_val = {g: zeros(cap, E, s.n_agents) for g, s in groups.items()}        # critic outputs (normalized)
    buf_rew = {g: zeros(cap, E, s.n_agents) for g, s in groups.items()}
    buf_boot = {g: zeros(cap, E, s.n_agents) for g, s in groups.items()}       # V(final state), denormalized
    buf_state = zeros(cap, E, state_dim)
    buf_term = zeros(cap, E, dtype=torch.bool)
    buf_trunc = zeros(cap, E, dtype=torch.bool)
    buf_starts = zeros(cap, E, dtype=torch.bool)
    full = (buf_obs, buf_act, buf_logp, buf_val, buf_rew, buf_boot, buf_state, buf_term, buf_trunc, buf_starts)

    history: list[dict] = []
    stopped_early = False
    session_steps = 0
    t_start = time.perf_counter()
    n_agents_total = sum(s.n_agents for s in groups.values())

    # SIGINT/SIGTERM: finish the update, checkpoint, return (only when there is a run folder to write to)
    stops = StopRequests(enabled=run_dir is not None)
    with stops, contextlib.ExitStack() as cleanup:   # (outputs closed on errors too)
        cleanup.callback(bar.close)
        if csv_log is not None:
            cleanup.callback(csv_log.close)
            cleanup.callback(tb.close)
        while update < cfg.num_updates:
            update += 1
            lr, critic_lr, entropy_coef = cfg.schedule(update)
            for g in groups:
                actor_opt[g].param_groups[0]["lr"] = lr
                critic_opt[g].param_groups[0]["lr"] = critic_lr
            actor_h0 = {g: (h.clone() if h is not None else None) for g, h in actor_h.items()}
            critic_h0 = {g: (h.clone() if h is not None else None) for g, h in critic_h.items()}

            # ---------------------------------------------------------------- 1. rollout
            # (a straggler mode may change this rank's rollout length: WAR quota, DD-PPO preemption)
            buf_obs, buf_act, buf_logp, buf_val, buf_rew, buf_boot, buf_state, buf_term, buf_trunc, buf_starts = full
            T = dist.begin_rollout(cfg.rollout_length)
            state = joint_state(obs)  # == env.state() (see tests)
            with torch.no_grad():
                for t in range(T):
                    if dist.stop_collecting(t):
                        break
                    buf_state[t] = state
                    buf_starts[t] = starts
                    actions = {}
                    for g, p in policies.items():
                        logits, actor_h[g] = p.logits(obs[g], actor_h[g], starts)
                        actions[g], buf_logp[g][t] = dist.sample(logits, gen)
                        buf_act[g][t] = actions[g]
                        buf_obs[g][t] = obs[g]
                        buf_val[g][t], critic_h[g] = p.value(state, critic_h[g], starts)
                    next_obs, rew, term, trunc, info = env.step(actions)
                    first = next(iter(groups))
                    term_w, trunc_w = term[first][:, 0].clone(), trunc[first][:, 0].clone()
                    for g in groups:
                        buf_rew[g][t] = rew[g]
                    buf_term[t], buf_trunc[t] = term_w, trunc_w
                    stats.step(rew, info, term_w | trunc_w)
                    if bool(trunc_w.any()):
                        # bootstrap a truncated episode with V(final state): with SAME_STEP
                        # autoreset the final observations are in info["final_obs"]
                        idx = trunc_w.nonzero().flatten()
                        final_state = joint_state({g: info["final_obs"][g][idx] for g in groups})
                        for g, p in policies.items():
                            h = critic_h[g][idx] if p.recurrent else None
                            v_final, _ = p.value(final_state, h, torch.zeros(len(idx), dtype=torch.bool, device=device))
                            buf_boot[g][t, idx] = vnorm[g].denormalize(v_final)
                    obs = {g: next_obs[g].clone() for g in groups}
                    state = joint_state(obs)
                    starts = term_w | trunc_w
                last_val = {g: p.value(state, critic_h[g], starts)[0] for g, p in policies.items()}
            T, batch_steps = dist.end_rollout(E)   # steps this rank collected, env steps of all ranks
            if T < cap:   # learn from the rows collected
                buf_obs, buf_act, buf_logp, buf_val, buf_rew, buf_boot, buf_state, buf_term, buf_trunc, buf_starts = (
                    {g: b[:T] for g, b in x.items()} if isinstance(x, dict) else x[:T] for x in full)
            env_steps += batch_steps
            session_steps += batch_steps
            for what, bufs in (("rewards", buf_rew), ("observations", buf_obs)):
                bad = [g for g in groups if not bool(torch.isfinite(bufs[g]).all())]
                if dist.any(bool(bad)):
                    raise _non_finite(update, checkpoint_path, f"the env returned non-finite {what}" +
                                      (f" for group {bad[0]!r}" if bad else " on another rank"),
                                      "check the scenario (e.g. agents placed at the same position) and its arguments")

            # ---------------------------------------------------------------- 2. advantages
            row_diag: dict[str, float] = {}
            for g, p in policies.items():
                with torch.no_grad():
                    values = vnorm[g].denormalize(buf_val[g])
                    next_values = torch.cat([values[1:], vnorm[g].denormalize(last_val[g]).unsqueeze(0)])
                    next_values = torch.where(buf_trunc[..., None], buf_boot[g], next_values)
                    advantages, returns = losses.gae(buf_rew[g], values, next_values, buf_term[..., None],
                                                     buf_trunc[..., None], cfg.gamma, cfg.gae_lambda)
                    dist.update_valuenorm(vnorm[g], returns)   # (statistics of every rank's returns)
                    targets = vnorm[g].normalize(returns)
                    if cfg.norm_advantages:
                        advantages = dist.normalize_advantages(advantages)
                    row_diag[f"{g}/explained_variance"] = dist.explained_variance(values, returns)
                    row_diag[f"{g}/value_mean"] = dist.mean(values)

                # ------------------------------------------------------------ 3. PPO epochs
                sums = {k: 0.0 for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac",
                                         "grad_norm_actor", "grad_norm_critic")}
                n_mb = 0
                for epoch in range(cfg.epochs):
                    # minibatches split worlds (GRU) or (t, world) pairs; under torchrun each rank's part of them
                    for m, mb in enumerate(dist.minibatches(T, E, p.recurrent, cfg.num_minibatches, gen, device)):
                        if p.recurrent:
                            B, n = len(mb), p.n_agents
                            x = p.actor_input(buf_obs[g][:, mb]).reshape(T, B * n, -1)
                            st = buf_starts[:, mb]
                            logits, _ = p.actor(x, actor_h0[g][mb].reshape(B * n, -1), st.repeat_interleave(n, dim=1))
                            logits = logits.reshape(T, B, n, -1)
                            new_values, _ = p.critic(buf_state[:, mb], critic_h0[g][mb], st)
                            sel = (slice(None), mb)
                        else:
                            t_idx, e_idx = mb // E, mb % E
                            logits, _ = p.actor(p.actor_input(buf_obs[g][t_idx, e_idx]))
                            new_values, _ = p.critic(buf_state[t_idx, e_idx])
                            sel = (t_idx, e_idx)
                        logp_all = torch.log_softmax(logits, dim=-1)
                        new_logp = logp_all.gather(-1, buf_act[g][sel].unsqueeze(-1)).squeeze(-1)
                        entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                        pg_loss, pg_stats = losses.policy_loss(new_logp, buf_logp[g][sel], advantages[sel], cfg.clip_coef)
                        actor_loss = pg_loss - entropy_coef * entropy
                        actor_opt[g].zero_grad(set_to_none=True)
                        actor_loss.backward()
                        dist.reduce_grads(p.actor.parameters(), new_logp.numel())   # all-reduce before clipping
                        # (norms of all-reduced gradients: every rank stops on the same minibatch)
                        where = f"group {g!r}, epoch {epoch + 1}, minibatch {m + 1}"
                        gn_a = _finite_clip_grad(p.actor.parameters(), cfg.max_grad_norm, actor_loss,
                                                 update, checkpoint_path, f"{where}: the actor's", "--lr")
                        actor_opt[g].step()

                        v_loss = losses.value_loss(new_values, buf_val[g][sel], targets[sel], cfg.clip_coef,
                                                   cfg.use_huber_loss, cfg.huber_delta, cfg.clip_value_loss)
                        critic_opt[g].zero_grad(set_to_none=True)
                        (cfg.value_coef * v_loss).backward()
                        dist.reduce_grads(p.critic.parameters(), new_logp.numel())
                        gn_c = _finite_clip_grad(p.critic.parameters(), cfg.max_grad_norm, v_loss,
                                                 update, checkpoint_path, f"{where}: the critic's", "--critic-lr")
                        critic_opt[g].step()

                        n_mb += 1
                        sums["policy_loss"] += dist.share(pg_loss.detach())   # (this rank's share of the minibatch)
                        sums["value_loss"] += dist.share(v_loss.detach())
                        sums["entropy"] += dist.share(entropy.detach())
                        sums["approx_kl"] += dist.share(pg_stats["approx_kl"])
                        sums["clipfrac"] += dist.share(pg_stats["clipfrac"])
                        sums["grad_norm_actor"] += gn_a
                        sums["grad_norm_critic"] += gn_c
                sums = dist.sum_stats(sums, skip=("grad_norm_actor", "grad_norm_critic"))
                row_diag.update({f"{g}/{k}": v / n_mb for k, v in sums.items()})

            bad = [name for g, p in policies.items() for name, t in p.named_parameters(prefix=g)
                   if not bool(torch.isfinite(t).all())]
            if bad:   # (parameters are equal on every rank)
                raise _non_finite(update, checkpoint_path, f"parameter {bad[0]} became non-finite after the optimizer step",
                                  "lower the learning rates")

            # ---------------------------------------------------------------- 4. log
            wall = wall_before + (time.perf_counter() - t_start)
            ep = summarize(dist.gather_episodes(stats.pop()))   # every rank's finished episodes
            row_diag.update(dist.metrics())
            row = {"update": update, "env_steps": env_steps, "agent_steps": env_steps * n_agents_total,
                   "wall_s": wall, "env_steps_per_s": session_steps / max(time.perf_counter() - t_start, 1e-9),
                   "lr": actor_opt[first].param_groups[0]["lr"], "critic_lr": critic_opt[first].param_groups[0]["lr"]}
            for c in columns:
                if c not in row:
                    row[c] = ep[c] if c in ep else row_diag.get(c, float("nan"))
            row["episodes"] = int(ep["episodes"])
            history.append(row)
            if csv_log is not None:
                csv_log.write(row)
                tb.write(row, env_steps)
            bar.update(env_steps, session_steps, row.get(key), "on-policy reward" if key != "episode_return" else "return")
            stop = dist.any((progress_fn(row) is False if progress_fn is not None else False) or stops.requested)

            # ---------------------------------------------------------------- 5. checkpoint
            last = update >= cfg.num_updates
            if run_dir is not None and (last or stop or (cfg.checkpoint_every and update % cfg.checkpoint_every == 0)):
                payload = {
                    "config": config_to_dict(cfg),
                    "env": env_signature(env, cfg),
                    "update": update, "env_steps": env_steps, "wall_s": wall_before + (time.perf_counter() - t_start),
                    "actors": {g: p.actor.state_dict() for g, p in policies.items()},
                    "critics": {g: p.critic.state_dict() for g, p in policies.items()},
                    "actor_opts": {g: o.state_dict() for g, o in actor_opt.items()},
                    "critic_opts": {g: o.state_dict() for g, o in critic_opt.items()},
                    "valuenorms": {g: v.state_dict() for g, v in vnorm.items()},
                    "generator": gen.get_state(),
                    "env_state": env.get_state(),
                    "obs": {g: o.clone() for g, o in obs.items()},
                    "starts": starts.clone(),
                    "actor_h": {g: h for g, h in actor_h.items() if h is not None},
                    "critic_h": {g: h for g, h in critic_h.items() if h is not None},
                    "episode_stats": stats.state_dict(),
                }
                payload = dist.gather_checkpoint(payload)   # every rank's worlds, to rank 0
                if payload is not None:
                    checkpoint_path = save_checkpoint(run_dir / "checkpoint.pt", payload)
            if stop:
                stopped_early = not last
                break

    return TrainResult(policies=policies, history=history, config=cfg, run_dir=run_dir,
                       checkpoint=checkpoint_path, stopped_early=stopped_early, interrupted_by=stops.signum)


def _non_finite(update: int, checkpoint, what: str, hint: str) -> NonFiniteTraining:
    kept = (f"the last good checkpoint is {checkpoint} (resume with `war-train train --resume "
            f"{pathlib.Path(checkpoint).parent}`)" if checkpoint is not None else "no checkpoint was written yet")
    return NonFiniteTraining(f"training stopped in update {update}: {what}; nothing from this update was "
                             f"saved, {kept}; {hint}")


def _finite_clip_grad(params, max_norm: float, loss: torch.Tensor, update: int, checkpoint, who: str,
                      lr_option: str) -> float:
    """``_clip_grad``, refusing a non-finite norm before the optimizer step would apply it."""
    norm = _clip_grad(params, max_norm)
    if not math.isfinite(norm):
        raise _non_finite(update, checkpoint, f"{who} gradient norm is {norm} (loss {float(loss.detach())})",
                          f"lower {lr_option}, or check the env's rewards")
    return norm


def _clip_grad(params, max_norm: float) -> float:
    params = [p for p in params if p.grad is not None]
    if max_norm > 0:
        return float(nn.utils.clip_grad_norm_(params, max_norm))
    return float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in params])))


def env_signature(env, cfg: TrainConfig) -> dict:
    """What a checkpoint needs to rebuild (and check) the env and the policies."""
    return {"id": env.env_id, "num_envs": cfg.num_envs, "state_dim": env.state_dim,
            "groups": {g: {"n_agents": s.n_agents, "obs_dim": s.obs_dim, "n_actions": _discrete_n(g, s.action_space)}
                       for g, s in env.groups.items()},
            "max_cycles": int(getattr(env, "max_cycles", cfg.rollout_length))}


#: config fields that may differ between a checkpoint and the run resuming it
RESUMABLE_CHANGES = ("total_env_steps", "checkpoint_every", "progress", "tensorboard", "gif", "eval_episodes")


def _check_resume(ckpt: dict, cfg: TrainConfig, env) -> None:
    missing = malformed_entries(ckpt, RESUMABLE)
    if missing:
        raise ValueError(f"resume: the checkpoint holds networks only (no {', '.join(missing)}), e.g. a WAR run's; "
                         f"it can be evaluated and rendered but not resumed")
    saved = ckpt["config"]
    now = config_to_dict(cfg)
    default = config_to_dict(TrainConfig())   # (a field newer than the checkpoint has its default there)
    diff = sorted(k for k in now if k not in RESUMABLE_CHANGES and saved.get(k, default[k]) != now[k])
    if diff:
        raise ValueError("resume: the checkpoint was trained with a different config: " +
                         ", ".join(f"{k}={saved.get(k)!r} (now {now[k]!r})" for k in diff))
    sig = env_signature(env, cfg)
    if ckpt["env"] != sig:
        raise ValueError(f"resume: the checkpoint's env {ckpt['env']} differs from this env {sig}")


def load_networks(policies: dict[str, GroupPolicy], ckpt: dict) -> None:
    """Actor and critic weights from a checkpoint; ``ValueError`` if they do not fit the networks."""
    for g, p in policies.items():
        for part, module in (("actors", p.actor), ("critics", p.critic)):
            if g not in ckpt[part]:
                raise ValueError(f"checkpoint: no {part[:-1]} weights for group {g!r} (it has {sorted(ckpt[part])})")
            try:
                module.load_state_dict(ckpt[part][g])
            except (RuntimeError, TypeError, KeyError, AttributeError) as exc:
                problems = [" ".join(line.split()) for line in str(exc).splitlines()[1:] if line.strip()]
                detail = (problems[0].rstrip(".") + (f"; and {len(problems) - 1} more" if len(problems) > 1 else "")
                          if problems else " ".join(str(exc).split()))
                raise ValueError(f"checkpoint: the {part[:-1]} weights of group {g!r} do not fit the network "
                                 f"its config describes ({detail})") from None


def load_policies(checkpoint) -> tuple[dict[str, GroupPolicy], TrainConfig, dict]:
    """``(policies, config, env signature)`` from a checkpoint path (or its run folder)."""
    from war_train.config import config_from_dict

    ckpt = checkpoint if isinstance(checkpoint, dict) else load_checkpoint(checkpoint)
    cfg = config_from_dict(ckpt["config"])
    sig = ckpt["env"]

    class _Spec:  # the parts of GroupSpec build_policies reads
        def __init__(self, d):
            self.n_agents, self.obs_dim = d["n_agents"], d["obs_dim"]
            self.action_space = gymnasium.spaces.Discrete(d["n_actions"])

    groups = {g: _Spec(d) for g, d in sig["groups"].items()}
    policies = build_policies(groups, sig["state_dim"], dataclasses.replace(cfg, device="cpu"), "cpu")
    load_networks(policies, ckpt)
    for p in policies.values():
        p.eval()
    return policies, cfg, sig
