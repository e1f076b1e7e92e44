"""Every script in examples/ runs headless as a subprocess with a tiny budget, exits 0 and
prints its banner (what it shows).  The examples run two at a time (CI has 2 cores) from a
module fixture; each test waits for its own."""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

#: example -> (tiny-budget arguments, text its output must contain); "{tmp}" is a scratch folder
RUNS = {
    "random_rollout.py": (["--num-envs", "16", "--total-steps", "320"], "agent-steps/s"),
    "train_war_train.py": (["--num-envs", "8", "--total-steps", "400", "--eval-episodes", "2"],
                           "evaluation over 2 episodes"),
    "train_sb3_native.py": (["--num-envs", "4", "--total-steps", "200", "--n-steps", "16"], "PPO:"),
    "train_sb3_supersuit.py": (["--num-envs", "2", "--total-steps", "100", "--n-steps", "16"], "PPO:"),
    "sb3_classic_control.py": (["--num-envs", "2", "--total-steps", "128", "--n-steps", "32", "--eval-episodes", "1"],
                               "PPO:"),
    "sb3_flat_joint.py": (["--num-envs", "2", "--total-steps", "128", "--n-steps", "32"], "PPO:"),
    "torchrl_collector.py": (["--num-envs", "4", "--total-steps", "100", "--epochs", "1", "--minibatches", "2"],
                             "check_env_specs passed"),
    "torchrl_mappo_tutorial.py": (["--num-envs", "4", "--max-steps", "5", "--iterations", "1", "--epochs", "1",
                                   "--minibatch-size", "10"], "done: episode_reward_mean"),
    "torchrl_vmas_dropin.py": (["--num-envs", "4", "--max-steps", "5", "--iterations", "1", "--epochs", "1",
                                "--minibatch-size", "10"], "done: episode_reward_mean"),
    "skrl_mappo.py": (["--num-envs", "4", "--total-steps", "100"], "MAPPO:"),
    "cleanrl_ppo.py": (["--num-envs", "4", "--total-steps", "100", "--num-steps", "25"], "done:"),
    "war_command.py": (["--num-envs", "4", "--total-steps", "200"], "x sync"),
    "war_env_ppo.py": (["--num-envs", "4", "--num-steps", "10", "--total-steps", "80", "--max-cycles", "8"], "done in"),
    # owned by the main job / the tutorial: no banner of ours, checked by their own last lines
    "main_job.py": (["--total-steps", "100", "--torch-threads", "1", "--out", "{tmp}/runs"], "done:"),
    "tutorial_scenario.py": ([], "passes war_envs.testing.check_all"),
}
#: the examples written to this template: banner + the three common flags
TEMPLATED = sorted(set(RUNS) - {"main_job.py", "tutorial_scenario.py"})
TIMEOUT_S = 600


def _env() -> dict:
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "SDL_VIDEODRIVER": "dummy",
                "PYTHONUNBUFFERED": "1"})
    env.setdefault("WARP_CACHE_PATH", str(pathlib.Path.home() / ".cache" / "war-envs" / "warp"))
    return env


def _run(name: str, tmp: pathlib.Path) -> subprocess.CompletedProcess:
    args = [a.replace("{tmp}", str(tmp)) for a in RUNS[name][0]]
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
                          cwd=tmp, env=_env(), timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Start every example now, two at a time; ``runs[name].result()`` is its CompletedProcess."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = {}
    for name in RUNS:
        tmp = tmp_path_factory.mktemp(name.removesuffix(".py"))
        futures[name] = pool.submit(_run, name, tmp)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def test_every_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(RUNS), \
        "add the new example to RUNS in tests/test_examples.py"


@pytest.mark.parametrize("name", sorted(RUNS))
def test_example_runs(runs, name):
    proc = runs[name].result()
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{out[-4000:]}"
    if name in TEMPLATED:
        assert proc.stdout.startswith(f"war-envs example: {name}\n  shows: "), proc.stdout[:500]
    assert RUNS[name][1] in out, out[-4000:]


@pytest.mark.parametrize("name", TEMPLATED)
def test_example_help_lists_common_flags(name):
    """``--help`` answers before anything heavy is imported and lists the common flags."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), "--help"], capture_output=True, text=True,
                          env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    for flag in ("--device", "--num-envs", "--total-steps"):
        assert flag in proc.stdout, f"{name} --help lacks {flag}"
    assert "war-envs example" not in proc.stdout  # the banner is printed only when it runs
