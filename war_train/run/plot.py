"""The run's plots, from metrics rows: the learning curve of every run (return against env steps
and wall-clock), a WAR run's curves and diagnostics, and WAR arms compared over seeds."""

from __future__ import annotations

import math
import pathlib

from war_envs._extras import needs_extra

__all__ = ["plot_learning_curve", "plot_war_run", "plot_war_comparison", "ONPOLICY_TARGET"]

#: the level the MAPPO paper's maintainers quote on Spread (on-policy convention)
ONPOLICY_TARGET = -120.0


def _series(rows, x, y):
    pts = [(r[x], r[y]) for r in rows if isinstance(r.get(y), (int, float)) and not math.isnan(r[y])
           and isinstance(r.get(x), (int, float)) and not math.isnan(r[x])]
    return [p[0] for p in pts], [p[1] for p in pts]


def _save(fig, path) -> pathlib.Path:
    import matplotlib.pyplot as plt

    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.tight_layout()
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    tmp.replace(path)
    return path


def _pyplot(what: str):
    """matplotlib's pyplot on the Agg backend (the ``train`` extra)."""
    with needs_extra("train", f"{what} (war_train.run.training.plot)"):
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_learning_curve(rows: list[dict], path, title: str = "") -> pathlib.Path:
    """Top row: mpe2-convention episode return per group; bottom row (when logged): the
    on-policy Spread reward (with the -120 level) or the PredatorPrey catch rate.  Left
    column against env steps, right column against wall-clock seconds."""
    plt = _pyplot("plotting the learning curve")

    if not rows:
        raise ValueError("plot_learning_curve: no metrics rows to plot")
    groups = [k.split("/", 1)[1] for k in rows[0] if k.startswith("episode_return/")]
    task = next((k for k in ("onpolicy_episode_reward", "catch_rate") if k in rows[0]), None)
    nrows = 2 if task else 1
    fig, axes = plt.subplots(nrows, 2, figsize=(11, 3.6 * nrows), squeeze=False)
    for col, (x, xlabel) in enumerate((("env_steps", "env steps"), ("wall_s", "wall-clock [s]"))):
        ax = axes[0][col]
        keys = [f"episode_return/{g}" for g in groups] if len(groups) > 1 else ["episode_return"]
        for key in keys:
            xs, ys = _series(rows, x, key)
            ax.plot(xs, ys, label=key.replace("episode_return/", "") if len(keys) > 1 else "mean over agents")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("episode return (env rewards)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        if task:
            ax = axes[1][col]
            xs, ys = _series(rows, x, task)
            ax.plot(xs, ys, color="tab:green")
            if task == "onpolicy_episode_reward":
                ax.axhline(ONPOLICY_TARGET, color="grey", ls="--", lw=1, label="-120 (on-policy level)")
                ax.set_ylabel("on-policy avg episode reward")
                ax.legend(fontsize=8)
            else:
                ax.set_ylabel("catch rate (episodes with contact)")
                ax.set_ylim(0, 1.02)
            ax.set_xlabel(xlabel)
            ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    return _save(fig, path)


def plot_war_run(rows: list[dict], path, title: str = "") -> pathlib.Path:
    """Return against env steps and against modelled wall-clock; throughput per window
    (agent-transitions/s, env-steps/s, decisions/s per group); per-group data share; Kish ESS
    (fraction of the batch); staleness mean/p95/max and the dropped fraction."""
    plt = _pyplot("plotting WAR runs")

    if not rows:
        raise ValueError("plot_war_run: no metrics rows to plot")
    fig, axes = plt.subplots(2, 3, figsize=(15, 7.5))
    for ax, (x, label) in zip(axes[0][:2], (("env_steps", "env steps"), ("model_s", "modelled wall-clock [s]"))):
        ax.plot(*_series(rows, x, "episode_return"), label="team return")
        ax.set_xlabel(label)
        ax.set_ylabel("episode return")
        ax.grid(alpha=0.3)
    ax = axes[0][2]
    for key in ("agent_transitions_per_s", "model_env_steps_per_s"):
        ax.plot(*_series(rows, "update", key), label=key)
    for key in sorted(k for k in rows[0] if k.startswith("decisions_per_s/")):
        ax.plot(*_series(rows, "update", key), ls="--", label=key)
    ax.set_yscale("log")
    ax.set_xlabel("update")
    ax.set_ylabel("per modelled second")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax = axes[1][0]
    for key in sorted(k for k in rows[0] if k.startswith("share/")):
        ax.plot(*_series(rows, "update", key), label=key)
    ax.set_xlabel("update")
    ax.set_ylabel("share of the batch (agent-transitions)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax = axes[1][1]
    ax.plot(*_series(rows, "update", "ess_frac"), label="Kish ESS / batch")
    ax.plot(*_series(rows, "update", "dropped_frac"), label="dropped fraction")
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("update")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax = axes[1][2]
    for key in ("staleness_mean", "staleness_p95", "staleness_max"):
        ax.plot(*_series(rows, "update", key), label=key)
    ax.set_xlabel("update")
    ax.set_ylabel("policy lag [versions]")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    return _save(fig, path)


def plot_war_comparison(runs: dict[str, list[list[dict]]], path, title: str = "", key: str = "episode_return",
                        x_time: str = "model_s") -> pathlib.Path:
    """``runs[label]`` = one metrics-row list per seed.  Mean ± min/max over seeds of ``key``
    against env steps (left) and against ``x_time`` (right: modelled wall-clock)."""
    plt = _pyplot("plotting WAR runs")
    import numpy as np

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for label, seeds in runs.items():
        for ax, x in zip(axes, ("env_steps", x_time)):
            curves = [_series(rows, x, key) for rows in seeds]
            n = min(len(c[0]) for c in curves)
            if n == 0:
                continue
            xs = np.mean([c[0][:n] for c in curves], axis=0)
            ys = np.array([c[1][:n] for c in curves])
            line, = ax.plot(xs, ys.mean(0), label=f"{label} ({len(seeds)} seeds)")
            ax.fill_between(xs, ys.min(0), ys.max(0), color=line.get_color(), alpha=0.2)
    axes[0].set_xlabel("env steps")
    axes[1].set_xlabel("modelled wall-clock [s]")
    for ax in axes:
        ax.set_ylabel(key)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return _save(fig, path)
