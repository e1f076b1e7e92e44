"""Write docs/errors.md: every bad-input case of tests/test_validation.py (batch API), of
tests/test_adapter_validation.py (SB3, TorchRL and skrl adapters, Gymnasium AgentsAsEnvs) and the
bad checkpoints of tests/test_train_crash.py, with the exact error each gets, produced by running
the cases (so the table cannot drift from the code).

    python scripts/error_table.py            # rewrite docs/errors.md
    python scripts/error_table.py --check    # exit 1 if docs/errors.md is out of date
"""

from __future__ import annotations

import argparse
import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import test_adapter_validation as tav  # noqa: E402
import test_train_crash as ttc  # noqa: E402
import test_validation as tv  # noqa: E402

import war_envs  # noqa: E402
from war_envs.core.validation import check_action_mask  # noqa: E402


def _error_of(call) -> str:
    try:
        call()
    except Exception as err:  # the point: record whatever it raises
        return f"`{type(err).__name__}: {err}`".replace("|", "\\|")
    return "**no error** (bug)"


def _raised(call) -> tuple[str, str]:
    """(exception type, message) of ``call``."""
    try:
        call()
    except Exception as err:  # the point: record whatever it raises
        return f"`{type(err).__name__}`", f"`{err}`".replace("|", "\\|")
    return "**none** (bug)", ""


def _lambda_source(fn) -> str:
    src = inspect.getsource(fn).strip()
    start = src.index("lambda a:") + len("lambda a:")
    depth, end = 0, start
    for end in range(start, len(src)):
        ch = src[end]
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth < 0 or (depth == 0 and ch == ","):
            break
    return src[start:end].strip()


def rows() -> list[tuple[str, str, str]]:
    out = []
    for kwargs, _, _ in tv.test_make_rejects_bad_arguments.pytestmark[0].args[1]:
        kwargs = dict(kwargs)
        env_id = kwargs.pop("id", "Spread-v0")
        args = ", ".join([repr(env_id)] + [f"{k}={v!r}" for k, v in kwargs.items()])
        out.append(("make", f"`war_envs.make({args})`", _error_of(lambda: war_envs.make(env_id, **kwargs))))
    for mutate, _, _ in tv.DISCRETE_BAD:
        env, _ = tv.twins()
        out.append(("step (Discrete)", f"`{_lambda_source(mutate)}`",
                    _error_of(lambda: env.step(mutate(tv.good_actions(env))))))
    for mutate, _, _ in tv.CONTINUOUS_BAD:
        env, _ = tv.twins(continuous_actions=True)
        out.append(("step (Box)", f"`{_lambda_source(mutate)}`",
                    _error_of(lambda: env.step(mutate(tv.good_actions(env))))))
    for mutate, _, _ in tv.SMAX_BAD:
        env, _ = tv.twins("SMAX-v0")
        out.append(("step (available actions, SMAX-v0)", f"`{_lambda_source(mutate)}`",
                    _error_of(lambda: env.step(mutate(tv.smax_available(env))))))
    for mutate, _, _ in tv.MASK_BAD:
        env, _ = tv.twins("SMAX-v0")
        mask = env.action_mask()["ally"].clone()

        out.append(("check_action_mask", f"`{_lambda_source(mutate)}`",
                    _error_of(lambda: check_action_mask("mask", mutate(mask), tuple(mask.shape)))))
    for mask, _, _ in tv.test_reset_mask_validation.pytestmark[0].args[1]:
        env, _ = tv.twins()
        out.append(("reset", f"`reset(mask={mask!r})`", _error_of(lambda: env.reset(mask=mask))))
    for state, worlds, _, _ in tv.test_set_state_validation_leaves_worlds_untouched.pytestmark[0].args[1]:
        env, _ = tv.twins()
        desc = ({k: f"{type(x).__name__}{tuple(x.shape)} {x.dtype}" for k, x in state.items()}
                if isinstance(state, dict) else repr(state))
        out.append(("set_state", f"`set_state({desc}, worlds={worlds!r})`".replace("|", "\\|"),
                    _error_of(lambda: env.set_state(state, worlds=worlds))))
    env = war_envs.make("Spread-v0", num_envs=2)
    out.append(("lifecycle", "`step()` before `reset()`",
                _error_of(lambda: env.step({"agent": tv.torch.zeros(2, 3, dtype=tv.torch.long)}))))
    env.close()
    out.append(("lifecycle", "`reset()` after `close()`", _error_of(env.reset)))
    return out


def adapter_rows() -> list[tuple[str, str, str, str]]:
    out = []
    for h, stage, cases in tav.CASES:
        for case in cases:
            env, twin = tav.prepared(h, stage)
            error, message = _raised(lambda: case.call(h, env, h.good(env, 0)))
            for e in (env, twin):
                h.close(e)
            out.append((h.name, case.desc.replace("|", "\\|"), error, message))
    return out


def checkpoint_rows() -> list[tuple[str, str, str, str]]:
    import tempfile

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        good = ttc.make_small_run(pathlib.Path(tmp) / "run")
        for i, (desc, make, call, _) in enumerate(ttc.CHECKPOINT_CASES):
            case_dir = pathlib.Path(tmp) / f"case{i}"
            case_dir.mkdir()
            path = make(good, case_dir)
            error, message = _raised(lambda: call(path))
            message = message.replace(str(case_dir), "<dir>").replace(str(good), "<run>")
            what = {ttc.load_checkpoint: "`load_checkpoint(path)`", ttc.load_policies: "`load_policies(path)`"}.get(
                call, "`train(env, config, resume=path)`")
            out.append((desc, what, error, message))
    return out


def render() -> str:
    lines = ["# Bad inputs and the errors they get", "",
             "Generated by `python scripts/error_table.py` from the cases of `tests/test_validation.py`",
             "and `tests/test_adapter_validation.py` (each case there also checks that the env is left",
             "untouched: it then steps exactly like an untouched twin).", "",
             "## Batch API", "",
             "PredatorPrey-v0 with 3 worlds for the `step` rows.", "",
             "| call | input | error |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows()]
    lines += ["", "## Adapters: SB3, TorchRL, skrl, Gymnasium AgentsAsEnvs", "",
              f"`war_train.adapters`: {tav.E} worlds of PredatorPrey-v0 (groups `adversary` x 3, `agent` x 1;",
              "`continuous_actions=True` for Box) or, for MultiDiscrete, Tag-v0 (`tagger` x 1, `runner` x 10).",
              "SB3's and `AgentsAsEnvs`' `actions` is the flat batch over sub-envs (worlds x agents;",
              "`AgentsAsEnvs` in Gymnasium's NEXT_STEP autoreset unless the row names another); TorchRL's",
              "`tensordict` holds `(group, 'action')`; skrl's `actions` is keyed by agent. A bad batch",
              "is refused before anything reaches the worlds; after `close()` an adapter refuses",
              "every call, also over a batched env it was handed (which it leaves open).", "",
              "| front end | case | exception | message |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in adapter_rows()]
    lines += ["", "## Checkpoints", "",
              "Made from a 2-update smoke run's `checkpoint.pt` (`<run>`; `<dir>` is the case's folder).",
              "`war-train eval` / `render` / `train --resume` print the same message as one line",
              "(`war-train <command>: error: ...`, exit status 2); nothing in the file is executed",
              "(`torch.load(weights_only=True)`), and a content SHA-256 catches damage the zip format",
              "does not.", "",
              "| checkpoint | used by | exception | message |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in checkpoint_rows()]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if docs/errors.md is out of date")
    args = parser.parse_args()
    text = render()
    path = ROOT / "docs" / "errors.md"
    if args.check:
        if not path.exists() or path.read_text() != text:
            print(f"{path} is out of date: run python scripts/error_table.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(text)
    print(f"wrote {path} ({sum(line.startswith('| ') for line in text.splitlines()) - 2} cases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
