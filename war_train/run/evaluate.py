"""Evaluation and rendering of trained policies (from a ``train`` result or a checkpoint).

``evaluate`` plays ``episodes`` fresh episodes (one per world, all worlds in one batch) with
each group acting greedily (argmax; the default), by sampling, or uniformly at random, and
returns the mean of every episode statistic of ``war_train.rollout.metrics``.  In a scenario with
``has_action_mask`` every mode chooses among the available actions only (greedy: the most
likely available one; random: uniform over them), and the env's validated step checks it.  ``evaluation_suite``
adds the random-policy baseline and, with several groups, each group's policy against random
others.  ``episode_frames`` plays one episode and yields its pictures; ``render_gif`` writes
them as an animated GIF.
"""

from __future__ import annotations

import copy
import pathlib

import torch

import war_envs
from war_envs.registry import scenario_class
from war_train.learn.distributions import action_head
from war_train.rollout.metrics import EpisodeStats, summarize
from war_train.learn.policy import first_action_mask, step_action_mask
from war_train.seeding import run_world_seeds

__all__ = ["run_episodes", "evaluate", "evaluation_suite", "episode_frames", "render_gif"]
MODES = ("greedy", "sample", "random")


def _cpu_policies(policies: dict) -> dict:
    """Evaluation envs run on the CPU: policies trained on a GPU are evaluated through CPU copies
    (the originals stay where they are)."""
    return {g: (copy.deepcopy(p).cpu() if any(t.device.type != "cpu" for t in p.parameters()) else p)
            for g, p in policies.items()}


def run_episodes(scenario: str, env_kwargs: dict, policies: dict, episodes: int, seed: int,
                 modes: dict[str, str], precision: str = "float32", stream: str = "eval",
                 planner=None) -> dict[str, torch.Tensor]:
    """Per-episode statistics of the first episode of each of ``episodes`` worlds.

    ``modes``: ``{group: "greedy" | "sample" | "random"}``; ``policies`` needs an entry for
    every group not played at random.  The worlds play the ``stream`` streams of run seed
    ``seed`` (``war_train.seeding``; ``"eval"``, the evaluation streams: never the worlds any run
    trains on, nor those ``"select"`` picks a run's networks on); randomness (sampling,
    random actions) comes from a generator seeded with ``seed``: the same call gives the same
    numbers.  A group in mode ``"plan"`` decides by search: ``planner(env)`` builds its
    ``war_train.plan.planner.Planner`` over the evaluation env (its most probable action of the
    search's improved policy at every step; ``plan_evaluator`` makes such a factory).
    """
    if episodes < 1:
        raise ValueError(f"episodes: expected >= 1, got {episodes}")
    policies = _cpu_policies(policies)
    env = war_envs.make(scenario, num_envs=episodes, seed=seed, precision=precision, **env_kwargs)
    search = None
    try:
        for g in env.groups:
            mode = modes.get(g)
            if mode not in (*MODES, "plan"):
                raise ValueError(f"modes[{g!r}]: expected one of {(*MODES, 'plan')}, got {mode!r}")
            if mode == "plan" and planner is None:
                raise ValueError(f"modes[{g!r}]: 'plan' needs a planner (a function env -> Planner)")
            if mode != "random" and g not in policies:
                raise ValueError(f"policies: no policy for group {g!r} (mode {mode!r})")
        gen = torch.Generator().manual_seed(seed)
        obs = {g: o.clone() for g, o in env.reset(seed=run_world_seeds(seed, episodes, stream)).items()}
        masks = first_action_mask(env)
        starts = torch.ones(episodes, dtype=torch.bool)
        hidden = {g: p.initial_hidden(episodes, "cpu")[0] for g, p in policies.items()}
        stats = EpisodeStats(env)
        recorded = torch.zeros(episodes, dtype=torch.bool)
        limit = 10 * int(getattr(env, "max_cycles", 1000))
        heads = {g: action_head(spec.action_space, group=g) for g, spec in env.groups.items()}
        search = planner(env) if "plan" in modes.values() else None
        every = torch.arange(episodes)
        for _ in range(limit):
            actions = {}
            for g, spec in env.groups.items():
                avail = None if masks is None else masks[g]
                if modes[g] == "plan":
                    actions[g] = search.decide(env, every, greedy=True).actions.unsqueeze(1)
                elif modes[g] == "random":
                    actions[g] = heads[g].random((episodes, spec.n_agents), gen, mask=avail)
                else:
                    actions[g], hidden[g] = policies[g].act(obs[g], hidden.get(g), starts,
                                                            greedy=modes[g] == "greedy", generator=gen, mask=avail)
            next_obs, rew, term, trunc, info = env.step(actions)   # (validated: refuses unavailable actions)
            if masks is not None:
                masks = step_action_mask(env, info)
            term_w, trunc_w = env.world_flags()
            done = term_w | trunc_w
            stats.step(rew, info, done, record=~recorded)
            recorded |= done
            starts = done.clone()
            obs = {g: o.clone() for g, o in next_obs.items()}
            if bool(recorded.all()):
                break
        else:
            raise RuntimeError(f"evaluation: episodes did not end within {limit} steps")
        return stats.pop()
    finally:
        if search is not None:
            search.close()
        env.close()


def plan_evaluator(cfg, policies: dict, valuenorms: dict):
    """``run_episodes``' ``planner``: ``env -> Planner`` of ``cfg.planner`` with the trained
    ``policies`` (on the CPU) and value normalizers (a checkpoint's ``"valuenorms"``), its search
    as configured (``planner_simulations``, ``planner_depth``, ``planner_c_puct``, ``gamma``)."""
    from war_train.learn.valuenorm import ValueNorm
    from war_train.plan.planner import build_planner

    policies = _cpu_policies(policies)
    vnorm = {}
    for g, state in valuenorms.items():
        vnorm[g] = ValueNorm(cfg.value_norm_beta, enabled=cfg.value_norm)
        vnorm[g].load_state_dict(state)

    return lambda env: build_planner(cfg, env, policies, vnorm, cfg.seed)


def evaluate(policies: dict, scenario: str, env_kwargs: dict, episodes: int = 100, seed: int = 0,
             mode: str = "greedy") -> dict[str, float]:
    """Mean episode statistics with every group in ``mode``."""
    groups = list(policies)
    return summarize(run_episodes(scenario, env_kwargs, policies, episodes, seed, {g: mode for g in groups}))


def evaluation_suite(policies: dict, scenario: str, env_kwargs: dict, episodes: int, seed: int,
                     planner=None, planning_group: str = "") -> dict:
    """``{"greedy": ..., "sample": ..., "random": ...}`` on the run's own env, plus, with several
    groups, ``"<group>_greedy_vs_random"`` and ``"<group>_sample_vs_random"`` (that group greedy
    or sampled, the others random: e.g. trained taggers against random runners; "greedy" and
    "sample" are every group trained against trained opponents — in adversarial games the
    sampled policies are the ones trained against each other),
    plus the same three modes on each of the scenario's ``evaluation_variants`` as
    ``"<mode>@<variant>"`` (Spread: ``onpolicy_init``, landmarks in 0.8·[-1, 1]² as the on-policy
    code draws them, or ``mpe2_init`` -- whichever the run's own env is not).  With a ``planner``
    (``plan_evaluator``'s factory) for ``planning_group``: ``"plan"``, that group deciding by its
    search and the others greedy ("greedy" stays every raw policy).  Every entry plays the same
    seed."""
    groups = list(policies)
    policies = _cpu_policies(policies)   # once, not in each run_episodes below
    out = {}
    for mode in MODES:
        out[mode] = summarize(run_episodes(scenario, env_kwargs, policies, episodes, seed, {g: mode for g in groups}))
    if planner is not None:
        modes = {g: ("plan" if g == planning_group else "greedy") for g in groups}
        out["plan"] = summarize(run_episodes(scenario, env_kwargs, policies, episodes, seed, modes, planner=planner))
    for name, overrides in scenario_class(scenario).evaluation_variants(env_kwargs).items():
        kwargs = {**env_kwargs, **overrides}
        for mode in MODES:
            out[f"{mode}@{name}"] = summarize(run_episodes(scenario, kwargs, policies, episodes, seed,
                                                           {g: mode for g in groups}))
    if len(groups) > 1:
        for g in groups:
            for mode in ("greedy", "sample"):
                modes = {h: (mode if h == g else "random") for h in groups}
                out[f"{g}_{mode}_vs_random"] = summarize(run_episodes(scenario, env_kwargs, policies, episodes, seed,
                                                                      modes))
    return out


def episode_frames(policies: dict, scenario: str, env_kwargs: dict, seed: int = 0, mode: str = "greedy",
                   size: int = 700, max_steps: int | None = None, planner=None, planning_group: str = ""):
    """The frames (``[size, size, 3]`` uint8) of one episode of evaluation world 0 of run seed
    ``seed`` (the first world ``evaluate`` plays), every group in ``mode``: the start, then one
    per step until the episode ends or after ``max_steps`` steps (``None``: the whole episode).
    Mode ``"plan"``: ``planning_group`` decides by its search (``planner``, ``plan_evaluator``'s
    factory), the others greedy.  Arguments are checked now; the episode is played as the frames
    are taken (the env is closed when the generator is exhausted or closed)."""
    if mode not in (*MODES, "plan"):
        raise ValueError(f"mode: expected one of {(*MODES, 'plan')}, got {mode!r}")
    if mode == "plan" and planner is None:
        raise ValueError("mode: 'plan' needs a run trained with a planner (TrainConfig.planner)")
    if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1):
        raise ValueError(f"max_steps: expected None or an int >= 1, got {max_steps!r}")
    return _episode_frames(_cpu_policies(policies), scenario, env_kwargs, seed, mode, size, max_steps, planner,
                           planning_group)


def _episode_frames(policies, scenario, env_kwargs, seed, mode, size, max_steps, planner, planning_group):
    from war_envs.render import camera_range

    env = war_envs.make(scenario, num_envs=1, seed=seed, autoreset_mode="disabled", **env_kwargs)
    search = planner(env) if mode == "plan" else None
    try:
        missing = [] if mode == "random" else [g for g in env.groups if g not in policies]
        if missing:
            raise ValueError(f"policies: no policy for groups {missing} (mode {mode!r})")
        obs = {g: o.clone() for g, o in env.reset(seed=run_world_seeds(seed, 1, "eval")).items()}
        state = env.get_state()
        # mpe2's camera range over the MPE entities (none in SMAX-v0's fixed map: range 1, ignored)
        cam = camera_range(torch.cat([state[k][0].reshape(-1, 2) for k in ("agent_pos", "landmark_pos")
                                      if k in state] or [torch.zeros(0, 2)]).double().numpy())
        gen = torch.Generator().manual_seed(seed)
        hidden = {g: p.initial_hidden(1, "cpu")[0] for g, p in policies.items()}
        starts = torch.ones(1, dtype=torch.bool)
        masks = first_action_mask(env)
        yield env.render_frame(0, width=size, height=size, original_cam_range=cam)
        heads = {g: action_head(spec.action_space, group=g) for g, spec in env.groups.items()}
        steps = int(env.max_cycles) if max_steps is None else min(int(env.max_cycles), max_steps)
        for _ in range(steps):
            actions = {}
            for g, spec in env.groups.items():
                avail = None if masks is None else masks[g]
                if mode == "random":
                    actions[g] = heads[g].random((1, spec.n_agents), gen, mask=avail)
                elif mode == "plan" and g == planning_group:
                    actions[g] = search.decide(env, torch.zeros(1, dtype=torch.long), greedy=True).actions[:, None]
                else:
                    actions[g], hidden[g] = policies[g].act(obs[g], hidden[g], starts, greedy=mode != "sample",
                                                            generator=gen, mask=avail)
            next_obs, _, term, trunc, info = env.step(actions)
            if masks is not None:
                masks = step_action_mask(env, info)
            starts = torch.zeros(1, dtype=torch.bool)
            obs = {g: o.clone() for g, o in next_obs.items()}
            yield env.render_frame(0, width=size, height=size, original_cam_range=cam)
            term_w, trunc_w = env.world_flags()
            if bool(term_w[0] | trunc_w[0]):
                break
    finally:
        if search is not None:
            search.close()
        env.close()


def render_gif(policies: dict, scenario: str, env_kwargs: dict, path, seed: int = 0, mode: str = "greedy",
               fps: int = 10, size: int = 700, planner=None, planning_group: str = "") -> pathlib.Path:
    """``episode_frames`` (the whole episode) written to ``path`` as an animated GIF
    (``size`` x ``size`` pixels; mpe2 draws 700)."""
    from war_envs.render import write_gif

    return write_gif(episode_frames(policies, scenario, env_kwargs, seed, mode, size, planner=planner,
                                    planning_group=planning_group), path, fps=fps)
