"""A missing optional dependency is a one-line error naming the extra that installs it.

Each entry point runs in a subprocess where the optional libraries are hidden
(``sys.modules[name] = None`` makes ``import name`` fail, as when the package is absent), so the
real import sites are exercised; the same script runs unchanged in a core-only environment
(``python tests/test_extras.py`` prints its results there).
"""

from __future__ import annotations

import json
import pathlib
import pickle
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: every optional library an entry point may import (hidden all at once: a core-only install)
OPTIONAL = ("pettingzoo", "mpe2", "PIL", "matplotlib", "tensorboard", "stable_baselines3", "sb3_contrib",
            "supersuit", "torchrl", "tensordict", "skrl", "ray", "benchmarl", "mkdocs")

#: (entry point, the extra its error must name, code that reaches the optional import)
ENTRY_POINTS = [
    ("war_envs.parallel_env", "pettingzoo", "import war_envs; war_envs.parallel_env('Spread-v0')"),
    ("war_envs.env", "pettingzoo", "import war_envs; war_envs.env('Spread-v0')"),
    ("war_envs.mpe2", "pettingzoo", "from war_envs.mpe2 import simple_spread_v3"),
    ("war_envs.frontends.pettingzoo", "pettingzoo", "import war_envs.frontends.pettingzoo"),
    ("war_envs.testing.check_pettingzoo", "pettingzoo",
     "import war_envs.testing as wt; wt.check_pettingzoo('Spread-v0')"),
    ("war_envs.render.GifWriter", "render", "from war_envs.render import GifWriter; GifWriter('never.gif')"),
    ("war_train.adapters.sb3", "sb3", "import war_train.adapters.sb3"),
    ("war_train.adapters.torchrl", "torchrl", "import war_train.adapters.torchrl"),
    ("war_train.adapters.benchmarl", "benchmarl", "import war_train.adapters.benchmarl"),
    ("war_train.adapters.rllib", "rllib", "import war_train.adapters.rllib"),
    ("war_train.run.plot", "train", "from war_train.run.plot import plot_learning_curve; "
                                "plot_learning_curve([{'env_steps': 1}], 'never.png')"),
    ("war_train.run.plot", "train", "from war_train.run.plot import plot_war_run; "
                                    "plot_war_run([{'env_steps': 1}], 'never.png')"),
    ("war_train.run.runlog.TensorBoard", "train",
     "from war_train.run.runlog import TensorBoard; TensorBoard('never-tb', enabled=True)"),
]

# Runs in the subprocess: hide argv[1:] (none: rely on what is really installed), run every entry
# point, print one JSON object per line.
_SCRIPT = r"""
import json, sys
for name in sys.argv[1:]:
    sys.modules[name] = None
for label, extra, code in json.loads(sys.stdin.read()):
    out = {"label": label, "extra": extra}
    try:
        exec(code, {})
        out["error"] = None
    except BaseException as exc:
        out.update(error=type(exc).__name__, message=str(exc), extra_attr=getattr(exc, "extra", None),
                   module_not_found=isinstance(exc, ModuleNotFoundError))
    print("RESULT " + json.dumps(out), flush=True)
# the core still works with every optional library absent
import gymnasium, torch, war_envs, war_train
env = war_envs.make("Spread-v0", num_envs=2, seed=0)
env.reset()
env.step({"agent": torch.zeros(2, 3, dtype=torch.int64)})
gymnasium.make("war_envs/Spread-v0").reset(seed=0)
print("CORE OK", flush=True)
"""


def run_entry_points(python: str = sys.executable, hide=OPTIONAL, cwd=None) -> tuple[dict, str]:
    proc = subprocess.run([python, "-c", _SCRIPT, *hide], input=json.dumps(ENTRY_POINTS), capture_output=True,
                          text=True, cwd=cwd, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {r["label"]: r for r in (json.loads(line[len("RESULT "):]) for line in proc.stdout.splitlines()
                                       if line.startswith("RESULT "))}
    return results, proc.stdout


def check_results(results: dict, stdout: str) -> None:
    assert "CORE OK" in stdout, stdout
    assert set(results) == {label for label, _, _ in ENTRY_POINTS}
    for label, extra, _ in ENTRY_POINTS:
        r = results[label]
        install = f"pip install 'war-envs[{extra}]'"
        assert r["error"] == "MissingExtraError" and r["module_not_found"], (label, r)
        assert r["extra_attr"] == extra and install in r["message"], (label, r)
        assert "\n" not in r["message"], (label, r)


def test_every_entry_point_names_its_extra(tmp_path):
    results, stdout = run_entry_points(cwd=tmp_path)
    check_results(results, stdout)
    assert "needs pettingzoo, which is not installed" in results["war_envs.parallel_env"]["message"]
    assert "needs Pillow, which is not installed" in results["war_envs.render.GifWriter"]["message"]
    assert "RLlib pins gymnasium" in results["war_train.adapters.rllib"]["message"]
    assert not list(tmp_path.iterdir())   # nothing was written before the error


def test_extras_match_pyproject():
    import tomllib

    from war_envs._extras import EXTRAS

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert sorted(EXTRAS) == sorted(declared)
    for _, extra, _ in ENTRY_POINTS:
        assert extra in declared


def test_needs_extra_converts_only_missing_third_party_modules():
    import pytest

    import war_envs
    from war_envs._extras import MissingExtraError, needs_extra

    with pytest.raises(MissingExtraError) as info:
        with needs_extra("torchrl", "the thing"):
            import war_envs_test_no_such_library  # noqa: F401
    assert str(info.value) == ("the thing needs war_envs_test_no_such_library, which is not installed: "
                               "pip install 'war-envs[torchrl]'")
    assert info.value.name == "war_envs_test_no_such_library" and info.value.extra == "torchrl"
    assert info.value.__cause__ is None and info.value.__suppress_context__
    copy = pickle.loads(pickle.dumps(info.value))   # crosses process boundaries (Ray, multiprocessing)
    assert (type(copy), str(copy), copy.extra, copy.name) == (MissingExtraError, str(info.value), "torchrl",
                                                              "war_envs_test_no_such_library")
    assert MissingExtraError is war_envs.MissingExtraError and issubclass(MissingExtraError, ModuleNotFoundError)

    # a submodule missing from an installed package: another version than the extra's
    with pytest.raises(MissingExtraError, match=r"needs json\.no_such_module, which the installed json lacks "
                                                r"\(an incompatible version\): pip install -U 'war-envs\[train\]'"):
        with needs_extra("train", "the thing"):
            import json.no_such_module  # noqa: F401

    # our own modules missing is a bug, not a missing extra; other import errors keep their message
    with pytest.raises(ModuleNotFoundError) as info:
        with needs_extra("train", "the thing"):
            import war_envs.no_such_module  # noqa: F401
    assert not isinstance(info.value, MissingExtraError)
    with pytest.raises(ImportError, match="cannot import name") as info:
        with needs_extra("train", "the thing"):
            from json import no_such_name  # noqa: F401
    assert not isinstance(info.value, MissingExtraError)

    with pytest.raises(ValueError, match="extra: expected one of"):
        with needs_extra("pettinzoo", "the thing"):
            pass


if __name__ == "__main__":
    # in a core-only environment: nothing hidden, the optional libraries are really absent
    results, stdout = run_entry_points(hide=())
    for r in results.values():
        print(f"{r['label']}: {r['error']}: {r['message']}")
    check_results(results, stdout)
    print("every entry point names its extra; the core works")
