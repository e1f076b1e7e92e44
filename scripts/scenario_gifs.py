"""The animated picture at the top of every scenario page: one short episode per scenario.

    python scripts/scenario_gifs.py --out docs/images/scenarios                 # random actions
    python scripts/scenario_gifs.py --runs /path/to/runs --out docs/images/scenarios
    python scripts/scenario_gifs.py --runs /path/to/runs --only Spread-v0,Tag-v0

For every registered scenario (``war_envs.registered_ids()``; ``--only ID,ID`` redoes some)
it plays evaluation world 0 of run seed ``--seed`` (``war_train.run.evaluate.episode_frames``: the
start, then one frame per step, at most ``--max-steps`` steps), draws each frame with the
scenario's ``render_frame`` at mpe2's 700 x 700 px, shrinks it to ``--size`` px and writes
``<out>/<Id>.gif``.  Who acts:

- with ``--runs DIR``, a scenario that has a default preset (``war_train.presets.DEFAULT_PRESETS``)
  and a finished run ``DIR/<preset>__seed<seed>/checkpoint.pt`` plays that checkpoint's policies
  greedily, on the env the run trained on (the checkpoint's ``env_kwargs``);
- every other scenario (no preset, no such run, or no ``--runs``) plays uniformly random actions
  on its default env.

``<out>/manifest.json`` records, per picture, who acted (policy, preset, checkpoint and its env
steps), the env's arguments, the seed, the steps shown out of the episode's length, the frames,
the size and the command that made it; ``scripts/mkdocs_hooks.py`` writes each page's caption
from it, and ``tests/test_scenario_gifs.py`` checks that every registered scenario has its
picture and entry.  Entries of scenarios not redone are kept; entries of unregistered ids are
dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shlex
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "images" / "scenarios"
MANIFEST = "manifest.json"
#: mpe2's canvas: frames are drawn at this size (circle radii are in pixels) and then shrunk
NATIVE_SIZE = 700
#: colours of a picture's palette (shared by its frames)
PALETTE_COLORS = 32


def run_checkpoint(runs: pathlib.Path, preset: str, seed: int) -> pathlib.Path:
    """Where the run of ``preset`` with ``seed`` keeps its checkpoint under ``runs``."""
    return runs / f"{preset}__seed{seed}" / "checkpoint.pt"


def choose_policy(env_id: str, runs: pathlib.Path | None, seed: int) -> dict:
    """Who acts in ``env_id``'s picture, on which env: ``{"mode", "policies", "env_kwargs", "seed",
    "preset", "checkpoint", "checkpoint_env_steps", "missing_run"}`` (``missing_run``: the
    checkpoint looked for in vain).  Random actions play the default env (Tag-v0's default is
    WarpDrive's 1 tagger and 10 runners: small enough to see)."""
    from war_train.presets import DEFAULT_PRESETS

    preset = DEFAULT_PRESETS.get(env_id)
    path = None if runs is None or preset is None else run_checkpoint(runs, preset, seed)
    if path is None or not path.is_file():
        return {"mode": "random", "policies": {}, "env_kwargs": {},
                "seed": seed, "preset": None, "checkpoint": None, "checkpoint_env_steps": None,
                "missing_run": None if path is None else str(path)}
    from war_train.checkpoint import load_checkpoint
    from war_train.learn.policy import load_policies

    ckpt = load_checkpoint(path)
    policies, cfg, _ = load_policies(ckpt)
    if cfg.scenario != env_id:
        raise ValueError(f"--runs: {path} is a run of {cfg.scenario}, expected a run of {env_id} "
                         f"(preset {preset!r}, seed {seed})")
    return {"mode": "greedy", "policies": policies, "env_kwargs": dict(cfg.env_kwargs), "seed": int(cfg.seed),
            "preset": preset, "checkpoint": str(path), "checkpoint_env_steps": int(ckpt["env_steps"]),
            "missing_run": None}


def episode_length(env_id: str, env_kwargs: dict) -> int:
    import war_envs

    env = war_envs.make(env_id, num_envs=1, **env_kwargs)
    try:
        return int(env.max_cycles)
    finally:
        env.close()


def shared_palette(frames: list, colors: int) -> list:
    """``frames`` ([H, W, 3] uint8) reduced to one palette of at most ``colors`` colours, chosen
    (median cut) from every frame at once; each pixel takes the nearest palette colour (a GIF
    whose frames share few colours is much smaller).  The most common colour (the background)
    stays exact."""
    import numpy as np
    from PIL import Image

    stacked = np.concatenate(frames[:: max(1, len(frames) // 8)], axis=0)
    quantized = Image.fromarray(stacked).quantize(colors=colors)
    used = np.unique(np.asarray(quantized))
    palette = np.asarray(quantized.getpalette()[:3 * 256], dtype=np.int32).reshape(-1, 3)[used]
    values, counts = np.unique(stacked.reshape(-1, 3), axis=0, return_counts=True)
    background = values[counts.argmax()].astype(np.int32)
    palette[np.abs(palette - background).sum(axis=1).argmin()] = background
    out = []
    for frame in frames:
        seen, inverse = np.unique(frame.reshape(-1, 3), axis=0, return_inverse=True)
        nearest = ((seen[:, None, :].astype(np.int32) - palette[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
        out.append(palette[nearest][inverse.ravel()].astype(np.uint8).reshape(frame.shape))
    return out


def render(env_id: str, out: pathlib.Path, who: dict, *, size: int, max_steps: int, fps: int,
           colors: int = PALETTE_COLORS) -> dict:
    """Write ``out/<env_id>.gif``; return its manifest entry (without the command)."""
    import numpy as np
    from PIL import Image

    from war_envs.render import write_gif
    from war_train.run.evaluate import episode_frames

    frames = [np.asarray(Image.fromarray(frame).resize((size, size), Image.Resampling.LANCZOS))
              for frame in episode_frames(who["policies"], env_id, who["env_kwargs"], seed=who["seed"],
                                          mode=who["mode"], size=NATIVE_SIZE, max_steps=max_steps)]
    path = write_gif(shared_palette(frames, colors), out / f"{env_id}.gif", fps=fps)
    with Image.open(path) as gif:
        stored = gif.n_frames   # Pillow merges identical consecutive frames
    return {"file": path.name, "policy": who["mode"], "preset": who["preset"], "checkpoint": who["checkpoint"],
            "checkpoint_env_steps": who["checkpoint_env_steps"], "seed": who["seed"], "env_kwargs": who["env_kwargs"],
            "steps": len(frames) - 1, "episode_length": episode_length(env_id, who["env_kwargs"]),
            "max_steps": max_steps, "frames": stored, "size": size, "fps": fps, "bytes": path.stat().st_size}


def read_manifest(out: pathlib.Path) -> dict:
    path = out / MANIFEST
    if not path.is_file():
        return {}
    return json.loads(path.read_text())["pictures"]


def write_manifest(out: pathlib.Path, pictures: dict) -> pathlib.Path:
    path = out / MANIFEST
    doc = {"about": "what each scenario page's picture shows; written by scripts/scenario_gifs.py, "
                    "read by scripts/mkdocs_hooks.py for the captions",
           "pictures": dict(sorted(pictures.items()))}
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)
    return path


def _positive(name: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name}: expected an int >= 1, got {text!r}")
        return value
    return parse


def parse_args(argv: list[str]) -> argparse.Namespace:
    import war_envs

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=pathlib.Path,
                   help="folder of finished runs <preset>__seed<seed>/checkpoint.pt (default: none, random actions)")
    p.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                   help="folder of the pictures and manifest.json (default: docs/images/scenarios)")
    p.add_argument("--only", help="comma-separated scenario ids to redo (default: every registered scenario)")
    p.add_argument("--seed", type=int, default=1, help="run seed: the run folder's and the evaluation world's (1)")
    p.add_argument("--size", type=_positive("--size"), default=320, help="picture width and height in px (320)")
    p.add_argument("--max-steps", type=_positive("--max-steps"), default=50,
                   help="at most this many steps of the episode (50; frames = steps + 1)")
    p.add_argument("--fps", type=_positive("--fps"), default=10, help="frames per second (10)")
    args = p.parse_args(argv)
    ids = war_envs.registered_ids()
    if args.only is None:
        args.ids = list(ids)
    else:
        args.ids = [s.strip() for s in args.only.split(",") if s.strip()]
        unknown = [s for s in args.ids if s not in ids]
        if unknown or not args.ids:
            p.error(f"--only: unknown scenario ids {unknown}; expected comma-separated ids of {list(ids)}")
    if args.runs is not None and not args.runs.is_dir():
        p.error(f"--runs: {args.runs} is not a folder")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    import war_envs

    args.out.mkdir(parents=True, exist_ok=True)
    command = shlex.join(["python", "scripts/scenario_gifs.py", *argv])
    registered = set(war_envs.registered_ids())
    pictures = {k: v for k, v in read_manifest(args.out).items() if k in registered}
    for env_id in args.ids:
        who = choose_policy(env_id, args.runs, args.seed)
        if who["missing_run"]:
            print(f"{env_id}: no run at {who['missing_run']}: random actions", file=sys.stderr)
        entry = render(env_id, args.out, who, size=args.size, max_steps=args.max_steps, fps=args.fps)
        pictures[env_id] = {**entry, "command": command}
        what = "random actions" if entry["policy"] == "random" else f"greedy policy of {entry['checkpoint']}"
        print(f"{env_id}: {what}, {entry['steps']} of {entry['episode_length']} steps, "
              f"{entry['bytes'] / 1024:.0f} KiB -> {args.out / entry['file']}", flush=True)
    write_manifest(args.out, pictures)
    total = sum(e["bytes"] for e in pictures.values())
    print(f"{len(pictures)} pictures in {args.out}, {total / 1024:.0f} KiB in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
