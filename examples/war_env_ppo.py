"""WAR from your own trainer: a CleanRL-style PPO, the whole algorithm in this file, on ``WarEnv``.

``war_envs.war.WarEnv`` applies WAR's decision schedule to a batched env: the slow group (the
commander) decides only every few steps and *holds* its action in between; every step the
wrapper says which worlds decided and, per group, the macro-step in force (``k`` steps, the
reward ``Σ γ^i r`` accumulated since the decision, its behaviour version, whether it ends).  A
transition is then a macro-step, and GAE runs over macro-steps (an SMDP):

    delta = R + γ^k (1 - terminated) V(s') - V(s),     A = delta + (γλ)^k (1 - done) A_next

That is all a trainer needs to learn from WAR's data; nothing here comes from ``war_train``.
Per group: one actor and one critic shared by the group's agents (local observations),
CleanRL's clipped objective, advantage normalization, entropy bonus, gradient clipping.

    python examples/war_env_ppo.py                        # Command-v0, the article's 50 ms : 5 ms schedule
    python examples/war_env_ppo.py --lockstep             # every group decides every step (plain MAPPO-style)
"""

from __future__ import annotations

import argparse
import json
import time

BANNER = ("war-envs example: war_env_ppo.py\n"
          "  shows: WAR's schedule and hold semantics through war_envs.war.WarEnv, learned from by a "
          "single-file PPO over macro-steps")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="Command-v0", help="registered war_envs id with Discrete actions")
    p.add_argument("--device", default="cpu", help="device of the env and of the networks (default: cpu)")
    p.add_argument("--num-envs", type=int, default=64, help="worlds (default: 64)")
    p.add_argument("--num-steps", type=int, default=25, help="env steps per rollout (default: 25)")
    p.add_argument("--total-steps", type=int, default=96_000,
                   help="env steps summed over worlds; rollouts = this / (num-envs x num-steps) (default: 96,000)")
    p.add_argument("--max-cycles", type=int, default=25, help="episode length (default: 25)")
    p.add_argument("--lockstep", action="store_true", help="every group decides at every step")
    p.add_argument("--slow-ms", type=float, default=50.0, help="declared cost of a commander decision (ms)")
    p.add_argument("--fast-ms", type=float, default=5.0, help="declared cost of any other decision (ms)")
    p.add_argument("--floor", type=int, default=3, help="WAR's floor K on the slow group's fragments")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--gamma", type=float, default=0.95)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--json", default=None, help="write the per-iteration returns to this file")
    return p.parse_args(argv)


def train(args) -> list[dict]:
    """Run the loop; returns one row per iteration (mean episode return, decisions per group)."""
    import torch
    import torch.nn as nn

    import war_envs
    from war_envs.war import CostProfile, WarEnv

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    device = torch.device(args.device)
    env = war_envs.make(args.scenario, num_envs=args.num_envs, seed=args.seed, max_cycles=args.max_cycles,
                        device=args.device)
    if args.lockstep:
        war = WarEnv(env, gamma=args.gamma)
    else:
        slow = next(iter(env.groups))  # the scenario's first group: Command-v0's commander
        costs = {g: CostProfile(per_decision_ms=args.slow_ms if g == slow else args.fast_ms) for g in env.groups}
        war = WarEnv.from_costs(env, costs, window_steps=args.num_steps, fragment_length=args.num_steps,
                                floor=args.floor, gamma=args.gamma)
    E, T = args.num_envs, args.num_steps
    iterations = max(1, args.total_steps // (E * T))

    def layer(i, o, std=2 ** 0.5):
        lin = nn.Linear(i, o)
        nn.init.orthogonal_(lin.weight, std)
        nn.init.zeros_(lin.bias)
        return lin

    nets, optims = {}, {}
    for g, s in env.groups.items():
        d, n_act = s.obs_dim, int(s.action_space.n)
        actor = nn.Sequential(layer(d, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, n_act, 0.01))
        critic = nn.Sequential(layer(d, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0))
        actor, critic = actor.to(device), critic.to(device)
        nets[g] = (actor, critic)
        optims[g] = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=args.lr, eps=1e-5)

    def value(g, obs):
        return nets[g][1](obs).squeeze(-1)

    obs = war.reset(seed=args.seed)
    ep_return = torch.zeros(E, device=device)
    rows = []
    for it in range(iterations):
        war.set_version(it)
        # -------- rollout: one row per step; a row holds the macro-steps that end at that step
        buf = {g: {name: [] for name in ("obs", "act", "logp", "val", "rew", "k", "nextv", "term", "trunc", "valid")}
               for g in env.groups}
        at_decision = {g: {} for g in env.groups}  # what the policy saw and said at each world's decision
        finished, decisions = [], {g: 0 for g in env.groups}
        for t in range(T):
            actions = {}
            with torch.no_grad():
                for g, s in env.groups.items():
                    logits = nets[g][0](obs[g])
                    dist = torch.distributions.Categorical(logits=logits)
                    a = dist.sample()
                    dec = war.decides(g)
                    keep = at_decision[g]
                    if not keep:
                        keep.update(obs=obs[g].clone(), act=a.clone(), logp=dist.log_prob(a), val=value(g, obs[g]))
                    else:  # the held worlds keep what they decided
                        m = dec[:, None]
                        keep["obs"] = torch.where(m[..., None], obs[g], keep["obs"])
                        keep["act"] = torch.where(m, a, keep["act"])
                        keep["logp"] = torch.where(m, dist.log_prob(a), keep["logp"])
                        keep["val"] = torch.where(m, value(g, obs[g]), keep["val"])
                    decisions[g] += int(dec.sum()) * s.n_agents
                    actions[g] = a
            obs, rew, term, trunc, info = war.step(actions)
            first = next(iter(env.groups))
            term_w, trunc_w = term[first][:, 0], trunc[first][:, 0]
            ep_return += rew[first][:, 0]
            done = term_w | trunc_w
            if bool(done.any()):
                finished += ep_return[done].tolist()
                ep_return[done] = 0.0
            with torch.no_grad():
                for g in env.groups:
                    m = info["war"][g]
                    nxt = obs[g]
                    if bool(trunc_w.any()):  # bootstrap a time limit from the final observation
                        nxt = torch.where(trunc_w[:, None, None], info["final_obs"][g], nxt)
                    b, keep = buf[g], at_decision[g]
                    for name in ("obs", "act", "logp", "val"):
                        b[name].append(keep[name].clone())
                    b["rew"].append(m.reward)
                    b["k"].append(m.k)
                    b["nextv"].append(value(g, nxt))
                    b["term"].append(term_w.clone())
                    b["trunc"].append(trunc_w.clone())
                    b["valid"].append(m.ends | (t == T - 1))  # the rollout's end cuts every macro-step ...
        for g in env.groups:
            war.release(g, slice(None))  # ... and every group decides afresh at the next rollout's first step
        # -------- learn: SMDP GAE, then PPO over each group's transitions
        for g, s in env.groups.items():
            b = {name: torch.stack(x) for name, x in buf[g].items()}
            valid = b["valid"][:, :, None].expand_as(b["rew"])
            disc = args.gamma ** b["k"].double()[:, :, None]
            trace = (args.gamma * args.gae_lambda) ** b["k"].double()[:, :, None]
            term = b["term"][:, :, None].double()
            done = (b["term"] | b["trunc"])[:, :, None].double()
            adv = torch.zeros_like(b["rew"])
            last = torch.zeros_like(b["rew"][0])
            for t in reversed(range(T)):
                delta = b["rew"][t] + (disc[t] * (1 - term[t])).float() * b["nextv"][t] - b["val"][t]
                a = delta + (trace[t] * (1 - done[t])).float() * last
                last = torch.where(valid[t], a, last)
                adv[t] = a
            ret = adv + b["val"]
            sel = valid
            flat = {"obs": b["obs"][sel], "act": b["act"][sel], "logp": b["logp"][sel], "adv": adv[sel],
                    "ret": ret[sel]}
            N = flat["act"].shape[0]
            mb = max(1, N // args.num_minibatches)
            actor, critic = nets[g]
            for _ in range(args.epochs):
                perm = torch.randperm(N, device=device)
                for i in range(0, N, mb):
                    j = perm[i:i + mb]
                    dist = torch.distributions.Categorical(logits=actor(flat["obs"][j]))
                    ratio = (dist.log_prob(flat["act"][j]) - flat["logp"][j]).exp()
                    a = flat["adv"][j]
                    a = (a - a.mean()) / (a.std() + 1e-8)
                    pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                    v_loss = 0.5 * ((critic(flat["obs"][j]).squeeze(-1) - flat["ret"][j]) ** 2).mean()
                    loss = pg - args.ent_coef * dist.entropy().mean() + args.vf_coef * v_loss
                    optims[g].zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(list(actor.parameters()) + list(critic.parameters()), args.max_grad_norm)
                    optims[g].step()
        mean_ret = sum(finished) / len(finished) if finished else float("nan")
        rows.append({"iteration": it + 1, "episode_return": mean_ret, "episodes": len(finished),
                     "decisions": decisions})
        print(f"iter {it + 1:3d}  return {mean_ret:8.2f}  decisions "
              + "  ".join(f"{g} {n}" for g, n in decisions.items()), flush=True)
    war.close()
    return rows


def main(argv=None) -> None:
    args = parse_args(argv)
    print(BANNER, flush=True)
    t0 = time.perf_counter()
    rows = train(args)
    print(f"done in {time.perf_counter() - t0:.1f} s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
