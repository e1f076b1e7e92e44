"""``war-train``: train MAPPO on a war_envs scenario, evaluate a checkpoint, render it to a GIF.

    war-train train Spread-v0                       # the Spread preset, outputs in runs/
    war-train train PredatorPrey-v0 --num-envs 256 --total-steps 1000000 --seed 3
    war-train train --resume runs/Spread-v0__1__20250101-120000   # continue exactly
    war-train eval runs/Spread-v0__1__.../checkpoint.pt --episodes 200   # writes eval.json there
    war-train render runs/Spread-v0__1__.../checkpoint.pt --gif spread.gif

Every ``TrainConfig`` field is an option of ``train`` (``--help`` lists them with their
meaning and on-policy default); the value used is: the field's default, overridden by the
preset (``--preset``, default: the scenario's own; ``--list-presets``), overridden by the
options given.  Options are matched exactly (no abbreviations); a mistyped one is an error that
suggests the closest, and every error is one ``war-train <command>: error: ...`` line, given
before anything is created.  Building the parser imports neither torch nor Warp.

Ctrl-C (SIGINT) or SIGTERM during ``train`` finishes the update in flight, writes a checkpoint
and exits; ``--resume`` continues exactly.  A second signal stops at once (the last checkpoint
is complete: checkpoints are replaced atomically).  Exit status: 0 done, 2 bad arguments or
checkpoint, 3 NaN/inf met in training (the last good checkpoint is kept), 128 + N stopped by
signal N (130 Ctrl-C, 143 SIGTERM).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import pathlib
import re
import sys

from war_train.config import (WAR_OPTION_PREFIX, TrainConfig, WarConfig, config_from_dict, config_to_dict,
                              war_config_from_dict)

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """Options matched exactly (``allow_abbrev=False``: ``--total-step`` is not ``--total-steps``);
    an error is one line (the full usage of ``train`` runs to dozens of lines), with a suggestion
    for an invalid choice.  ``add_subparsers`` gives the sub-commands this class too."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        bad = re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)$", message)
        if bad:
            choices = re.findall(r"'(.*?)'", bad.group(2))
            message += _did_you_mean(bad.group(1), choices)
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _did_you_mean(word: str, candidates) -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _unrecognized(parser: argparse.ArgumentParser, args, extras: list[str]):
    """The error for arguments no option took: on the sub-command's parser, suggesting the option
    closest to the first unknown one (``--total-step`` -> ``--total-steps``)."""
    target = parser
    for action in parser._actions:   # the sub-command's own parser knows its options
        if isinstance(action, argparse._SubParsersAction) and getattr(args, "command", None) in action.choices:
            target = action.choices[args.command]
    options = [s for action in target._actions for s in action.option_strings]
    hints = (_did_you_mean(x.split("=", 1)[0], options) for x in extras if x.startswith("-"))
    hint = next((h for h in hints if h), "")
    target.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


def _presets_table() -> str:
    """One line per preset: its name, the scenarios it is the default of, its description."""
    from war_train.presets import DEFAULT_PRESETS, VARIANT_PRESETS, preset_descriptions

    descriptions = preset_descriptions()
    width = max(map(len, descriptions)) + 2
    lines = []
    for name, text in descriptions.items():
        default = [s for s, p in DEFAULT_PRESETS.items() if p == name]
        default += [f"{s} {key}={value}" for s, (key, table) in VARIANT_PRESETS.items()
                    for value, p in table.items() if p == name]
        lines.append(f"  {name:<{width}}{text}" + (f" [default for {', '.join(default)}]" if default else ""))
    return "\n".join(lines)


class _ListPresets(argparse.Action):
    """``--list-presets``: print every preset with its description and exit (as ``--help`` does)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"presets (war-train train SCENARIO --preset NAME):\n{_presets_table()}")
        parser.exit()


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _json_value(kind: type):
    """An argparse ``type``: a JSON object (``kind=dict``) or array (``list``)."""
    what = "a JSON object" if kind is dict else "a JSON array"

    def parse(text: str):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r} ({exc.msg})") from None
        if not isinstance(value, kind):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value
    return parse


def _add_field_options(group, cls, option, *, dest=lambda name: name, skip=(), aliases=None) -> None:
    """One option per field of the config dataclass ``cls`` (named ``option(field)``, stored in
    ``dest(field)``), its help text the field's, all defaulting to SUPPRESS so that only the
    options given override."""
    defaults = cls()
    for field in dataclasses.fields(cls):
        if field.name in skip:
            continue
        default = getattr(defaults, field.name)
        shown = json.dumps(default) if isinstance(default, (dict, list)) else default
        common = dict(dest=dest(field.name), default=argparse.SUPPRESS,
                      help=f"{field.metadata.get('help', '')} (default: {shown})")
        names = [option(field.name), *(aliases or {}).get(field.name, ())]
        kind = field.type if isinstance(field.type, str) else field.type.__name__
        if kind == "bool":
            group.add_argument(*names, action=argparse.BooleanOptionalAction, **common)
        elif kind in ("dict", "list"):
            group.add_argument(*names, type=_json_value(dict if kind == "dict" else list), metavar="JSON", **common)
        else:
            typ = {"int": int, "float": float, "str": str}[kind]
            group.add_argument(*names, type=typ, metavar=typ.__name__.upper(), **common)


def _add_config_options(parser: argparse.ArgumentParser) -> None:
    """One option per ``TrainConfig`` field (``--<field>``; ``--total-steps`` too)."""
    group = parser.add_argument_group(
        "training configuration (TrainConfig fields)",
        "Defaults shown are TrainConfig's (the on-policy MPE settings); the preset overrides some of "
        "them (see --print-config for the values a run will use).")
    _add_field_options(group, TrainConfig, _option, skip=("scenario",), aliases={"total_env_steps": ["--total-steps"]})


def build_parser() -> argparse.ArgumentParser:
    from war_train.presets import DEFAULT_PRESETS, VARIANT_PRESETS, preset_names

    parser = _Parser(prog="war-train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{train,eval,render}")

    p = sub.add_parser("train", help="train MAPPO on a scenario (writes runs/<scenario>__<seed>__<time>/)",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Train MAPPO. Outputs: config.json, metrics.csv, tb/ (TensorBoard), checkpoint.pt,\n"
                                   "learning_curve.png, eval.json, episode.gif.  The plot needs matplotlib, the GIF\n"
                                   "pillow, TensorBoard tensorboard (pip install 'war-envs[train]'): without them a\n"
                                   "run skips that output with a warning, or stops before training when --gif or\n"
                                   "--tensorboard was given.",
                       epilog=f"presets (--preset NAME):\n{_presets_table()}")
    p.add_argument("scenario", nargs="?", help="war_envs id, e.g. Spread-v0 or PredatorPrey-v0 "
                                               "(not needed with --resume)")
    p.add_argument("--preset", choices=preset_names(), metavar="NAME",
                   help=f"hyperparameter preset, one of {preset_names()} (described below and by --list-presets; "
                        f"default: the scenario's own: {DEFAULT_PRESETS}, or its variant's where --env-kwargs names "
                        f"one that has a preset: {VARIANT_PRESETS}; 'onpolicy' = the MAPPO paper's MPE "
                        "settings = the TrainConfig defaults)")
    p.add_argument("--list-presets", action=_ListPresets, help="list the presets with a line on each, and exit")
    p.add_argument("--out", default="runs", metavar="DIR", help="parent folder of the run folder (default: runs)")
    p.add_argument("--run-dir", metavar="DIR", help="exact run folder (default: <out>/<scenario>__<seed>__<time>)")
    p.add_argument("--resume", metavar="CHECKPOINT", help="continue a run exactly from its checkpoint.pt (or run "
                                                         "folder), in that folder (a WAR run with its own WAR "
                                                         "config); options given here may change "
                                                         "only total_env_steps, checkpoint_every, progress, "
                                                         "tensorboard, gif, eval_episodes")
    p.add_argument("--print-config", action="store_true", help="print the resolved config as JSON and exit")
    _add_config_options(p)

    add_war_options(p)

    e = sub.add_parser("eval", help="evaluate a checkpoint (greedy, sampled and random policies)",
                       description="Evaluate a checkpoint over fresh episodes, print the summary and write it "
                                   "as eval.json beside the checkpoint (replacing the one training wrote; "
                                   "--json PATH writes it elsewhere).")
    e.add_argument("checkpoint", help="checkpoint.pt or its run folder")
    e.add_argument("--episodes", type=int, default=100, help="episodes (worlds) per policy mode (default: 100)")
    e.add_argument("--seed", type=int, help="play the evaluation worlds of this run seed (default: the run's seed; evaluation worlds are never training worlds)")
    e.add_argument("--json", metavar="PATH", help="write the summary as JSON to PATH (default: eval.json in the "
                                                  "checkpoint's folder)")
    e.add_argument("--torch-threads", type=int, default=1, help="torch intra-op threads (default: 1)")
    e.add_argument("--last", action="store_true", help="the last update's networks, not those the run selected "
                                                       "(runs with --select-every; the default evaluates those)")
    e.add_argument("--no-planner", action="store_true", help="a run with a planner: evaluate the raw policies only "
                                                             "(by default the 'plan' entry has the planning group "
                                                             "decide by its search; 'greedy' is its raw policy)")

    r = sub.add_parser("render", help="render one episode of a checkpoint's policy to an animated GIF",
                       description="Render one episode (world 0) of a checkpoint's policy to a GIF.")
    r.add_argument("checkpoint", help="checkpoint.pt or its run folder")
    r.add_argument("--gif", required=True, metavar="PATH", help="output GIF path")
    r.add_argument("--seed", type=int, help="render evaluation world 0 of this run seed (default: the run's seed)")
    r.add_argument("--mode", choices=("greedy", "sample", "random", "plan"), default="greedy",
                   help="how every group acts (default: greedy; plan: a run with --planner, its planning group by its search, the others greedy)")
    r.add_argument("--fps", type=int, default=10, help="frames per second (default: 10)")
    r.add_argument("--size", type=int, default=700, help="width and height in pixels (default: 700, as mpe2)")
    r.add_argument("--last", action="store_true", help="the last update's networks, not those the run selected "
                                                       "(runs with --select-every; the default renders those)")
    return parser


def resolve_config(args) -> TrainConfig:
    """Defaults <- preset <- explicit options (train), or checkpoint <- explicit options (resume)."""
    from war_train.presets import default_preset, with_preset

    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)
             if f.name != "scenario" and hasattr(args, f.name)}
    if args.resume:
        from war_train.checkpoint import load_checkpoint
        from war_train.run.restarts import restarts_run

        run = restarts_run(args.resume)   # (a run with restarts: its own config, not its restarts')
        values = json.loads((run / "config.json").read_text()) if run else load_checkpoint(args.resume)["config"]
        if args.scenario and args.scenario != values["scenario"]:
            raise ValueError(f"scenario: the checkpoint trained {values['scenario']!r}, not {args.scenario!r}")
        if args.preset:
            raise ValueError("--preset: a resumed run keeps its checkpoint's config; drop --preset")
    else:
        if not args.scenario:
            import war_envs

            raise ValueError(f"scenario: give a war_envs id (one of {war_envs.registry.registered_ids()}) or "
                             f"--resume CHECKPOINT")
        name = args.preset or default_preset(args.scenario, given.get("env_kwargs"))
        return config_from_dict(with_preset(config_to_dict(TrainConfig()), name, {**given, "scenario": args.scenario}))
    values.update(given)
    return config_from_dict(values)


def _cmd_train(args) -> int:
    import war_envs
    from war_train.run.training import run_training

    config = resolve_config(args)
    if config.scenario not in war_envs.registered_ids():
        raise ValueError(f"scenario: unknown id {config.scenario!r}; registered: {sorted(war_envs.registered_ids())}")
    from war_train.config import war_config_to_dict

    war = _resumed_war_config(args) if args.resume else resolve_war_config(args)
    if args.print_config:
        print(json.dumps(config_to_dict(config) if war is None else
                         {**config_to_dict(config), "war": war_config_to_dict(war)}, indent=2))
        return 0
    # the outputs asked for by name must be possible; the others are skipped (one warning each)
    require = [name for name in ("tensorboard", "gif") if getattr(args, name, None) is True]
    run_training(config, args.out, run_dir=args.run_dir, resume=args.resume, war=war, require=require)
    return 0


def _resumed_war_config(args):
    """A WAR run's checkpoint resumes with its own WAR config (WAR options given here override it,
    and the resume check then refuses the change); a lock-step one takes no WAR options."""
    from war_train.checkpoint import load_checkpoint

    from war_train.run.restarts import restarts_run

    run = restarts_run(args.resume)
    saved = load_checkpoint(run / "restart_0" / "checkpoint.pt" if run else args.resume).get("war")
    options = {k[len("war__"):]: v for k, v in vars(args).items() if k.startswith("war__")}
    if not isinstance(saved, dict):
        if options or getattr(args, "war", False):
            raise ValueError(f"--resume: {args.resume} is a lock-step MAPPO run's checkpoint; resume it without "
                             f"--war/--arm/--war-* options")
        return None
    return war_config_from_dict({**saved, **options})


def _cmd_eval(args) -> int:
    import torch

    from war_train.checkpoint import load_checkpoint
    from war_train.run.evaluate import evaluation_suite, plan_evaluator
    from war_train.learn.policy import load_policies
    from war_train.run.training import format_eval
    from war_train.run.selection import selected_networks

    if args.episodes < 1:
        raise ValueError(f"--episodes: expected an integer >= 1, got {args.episodes}")
    torch.set_num_threads(args.torch_threads)
    ckpt = load_checkpoint(args.checkpoint)
    policies, cfg, _ = load_policies(ckpt, last=args.last)
    path = pathlib.Path(args.checkpoint)
    out = pathlib.Path(args.json) if args.json else (path if path.is_dir() else path.parent) / "eval.json"
    seed = cfg.seed if args.seed is None else args.seed
    planner = None
    if cfg.planner and not args.no_planner:   # (the planning group by its search: the "plan" entry)
        planner = plan_evaluator(cfg, policies, ckpt["valuenorms"])
    summary = evaluation_suite(policies, cfg.scenario, cfg.env_kwargs, args.episodes, seed, planner=planner,
                               planning_group=cfg.planner)
    # the keys of the eval.json a training run writes, plus the checkpoint evaluated
    report = {"checkpoint": str(args.checkpoint), "scenario": cfg.scenario, "episodes": args.episodes,
              "seed": seed, "train_env_steps": ckpt["env_steps"], "train_wall_s": ckpt["wall_s"],
              "selected": selected_networks(ckpt, args.last), "results": summary}
    print(format_eval(report))
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def _cmd_render(args) -> int:
    import torch

    from war_train.checkpoint import load_checkpoint
    from war_train.run.evaluate import plan_evaluator, render_gif
    from war_train.learn.policy import load_policies
    from war_train.run.training import missing_package

    why = missing_package("gif")
    if why is not None:
        raise ValueError(f"--gif: {why}")
    torch.set_num_threads(1)
    ckpt = load_checkpoint(args.checkpoint)
    policies, cfg, _ = load_policies(ckpt, last=args.last)
    seed = cfg.seed if args.seed is None else args.seed
    if args.mode == "plan" and not cfg.planner:
        raise ValueError(f"--mode: 'plan' renders a run trained with --planner; {args.checkpoint} has none")
    planner = plan_evaluator(cfg, policies, ckpt["valuenorms"]) if args.mode == "plan" else None
    path = render_gif(policies, cfg.scenario, cfg.env_kwargs, args.gif, seed=seed, mode=args.mode, fps=args.fps,
                      size=args.size, planner=planner, planning_group=cfg.planner)
    print(f"wrote {path}")
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        _unrecognized(parser, args, extras)   # exits 2
    from war_train.stopping import NonFiniteTraining, TrainingInterrupted

    try:
        return {"train": _cmd_train, "eval": _cmd_eval, "render": _cmd_render}[args.command](args)
    except TrainingInterrupted as exc:   # SIGINT/SIGTERM: checkpoint written, exit like the signal would
        print(f"war-train {args.command}: {exc}", file=sys.stderr)
        return exc.exit_status
    except NonFiniteTraining as exc:
        print(f"war-train {args.command}: error: {exc}", file=sys.stderr)
        return 3
    except (ValueError, FileNotFoundError, TypeError) as exc:
        print(f"war-train {args.command}: error: {exc}", file=sys.stderr)
        return 2




# ----------------------------------------------------------------------------- WAR options
def _war_option(name: str) -> str:
    return "--arm" if name == "arm" else WAR_OPTION_PREFIX + name.replace("_", "-")


def add_war_options(parser) -> None:
    """``--war`` and one option per ``WarConfig`` field (``--arm``, ``--war-<field>``) on the
    ``train`` parser; all default to SUPPRESS so that only given options override."""
    group = parser.add_argument_group(
        "WAR harness (Workload-Aware Rollouts; WarConfig fields)",
        "--war (or any of these options) trains in the WAR mode (war_train.war.mode) instead of lock-step; see docs/war.md.")
    group.add_argument("--war", action="store_true", default=argparse.SUPPRESS,
                       help="train on WAR batches (arm war unless --arm says otherwise)")
    _add_field_options(group, WarConfig, _war_option, dest=lambda name: f"war__{name}")


def resolve_war_config(args) -> WarConfig | None:
    """The ``WarConfig`` the options ask for, or None when no WAR option was given."""
    given = {k[len("war__"):]: v for k, v in vars(args).items() if k.startswith("war__")}
    if not given and not getattr(args, "war", False):
        return None
    return war_config_from_dict(given)


if __name__ == "__main__":
    sys.exit(main())
