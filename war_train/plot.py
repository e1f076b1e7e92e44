"""Learning-curve PNG: return against env steps and against wall-clock, from metrics rows."""

from __future__ import annotations

import math
import pathlib

from war_envs._extras import needs_extra

__all__ = ["plot_learning_curve", "ONPOLICY_TARGET"]

#: the level the MAPPO paper's maintainers quote on Spread (on-policy convention)
ONPOLICY_TARGET = -120.0


def _series(rows, x, y):
    pts = [(r[x], r[y]) for r in rows if y in r and isinstance(r[y], (int, float)) and not math.isnan(r[y])]
    return [p[0] for p in pts], [p[1] for p in pts]


def plot_learning_curve(rows: list[dict], path, title: str = "") -> pathlib.Path:
    """Top row: mpe2-convention episode return per group; bottom row (when logged): the
    on-policy Spread reward (with the -120 level) or the PredatorPrey catch rate.  Left
    column against env steps, right column against wall-clock seconds."""
    with needs_extra("train", "plotting the learning curve (war_train.plot)"):
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    fig.tight_layout()
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    tmp.replace(path)
    return path
