"""benchmarks/env_throughput.py: its scenario table covers every registered id, and a tiny run
(war-envs and mpe2 only, so no peer venv is installed) gives complete records.  No wall-clock
assertions: the figures are measured by hand on a quiet machine."""

import importlib.util
import json
import os
import pathlib
import subprocess

import pytest

import war_envs
from war_envs.registry import scenario_class

BENCH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


def load():
    spec = importlib.util.spec_from_file_location("env_throughput", BENCH / "env_throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def multi_agent_ids() -> list[str]:
    """What env_throughput.py measures: the single-agent ids are classic_throughput.py's, the VMAS
    family's vmas_throughput.py's."""
    return [i for i in war_envs.registered_ids() if not war_envs.registry.is_single_agent(i)
            and war_envs.registry.scenario_family(i) != "vmas"]


def test_scenario_table_covers_every_registered_id():
    et = load()
    registered = multi_agent_ids()
    assert set(registered) <= set(et.known_ids()), set(registered) - set(et.known_ids())
    assert len(set(et.SCENARIOS)) == len(et.SCENARIOS)
    for peer, envs in et.PEER_ENVS.items():
        assert set(envs) <= set(et.SCENARIOS), peer
    # mpe2: exactly the scenarios that name an mpe2 module, and the same module.
    for env_id in registered:
        module = getattr(scenario_class(env_id), "mpe2_module", None)
        if module:
            assert et.MPE2_ENVS[env_id][0] == module, env_id
        else:
            assert env_id not in et.MPE2_ENVS, env_id
    # The default selection is every registered id (every map of a MAPS one), in table order.
    args = et.parse_args(["--peers", ""])
    assert args.scenarios == [s for s in et.SCENARIOS if et.split_scenario(s)[0] in registered]
    assert {et.split_scenario(s)[0] for s in args.scenarios} == set(registered) and not args.skipped


def test_smax_rows_are_jaxmarls_maps_with_action_masks():
    from war_envs.scenarios.smax.maps import MAPS as SMAX_MAPS

    et = load()
    # every map a map of SMAX-v0 (JaxMARL's map names), its row labelled and made as SMAX-v0's
    assert set(et.MAPS) == {"SMAX-v0"} and set(et.MAPS["SMAX-v0"]) <= set(SMAX_MAPS)
    for m in et.MAPS["SMAX-v0"]:
        assert et.split_scenario(f"SMAX-v0:{m}") == ("SMAX-v0", {"map_name": m})
        assert et.JAXMARL_ENVS[f"SMAX-v0:{m}"] == ("HeuristicEnemySMAX", {"scenario": m})
    assert et.split_scenario("Spread-v0") == ("Spread-v0", {})
    # the masked draws exactly where our env has an action mask (default arguments); the
    # recorded episode limit is the default env's longest episode
    for env_id in multi_agent_ids():
        env = war_envs.make(env_id, num_envs=1)
        assert env.has_action_mask == (env_id in et.ACTION_MASKED), env_id
        assert env.max_cycles == et.EPISODE_LIMITS.get(env_id, et.EPISODE_LEN), env_id
        env.close()
    # the id selects every map; its own sizes unless --worlds says; --quick keeps working
    args = et.parse_args(["--scenarios", "SMAX-v0", "--peers", ""])
    assert args.scenarios == [f"SMAX-v0:{m}" for m in et.MAPS["SMAX-v0"]]
    assert all(w == [1, 64, 512, 4096] for w in args.worlds_of.values())
    args = et.parse_args(["--scenarios", "Spread-v0,SMAX-v0:3m", "--peers", "", "--quick"])
    assert args.worlds_of == {"Spread-v0": [1, 1024], "SMAX-v0:3m": [1, 512]}
    args = et.parse_args(["--scenarios", "SMAX-v0:2s3z,Spread-v0", "--worlds", "2,8", "--peers", ""])
    assert args.worlds_of == {"SMAX-v0:2s3z": [2, 8], "Spread-v0": [2, 8]}
    # calls of one to 1000 steps; the MPE ones as before
    assert et.steps_per_call("Spread-v0", 1, 3, scanned=True) == 1000
    assert et.steps_per_call("Spread-v0", 8192, 3, scanned=False) == et.EPISODE_LEN
    assert et.steps_per_call("SMAX-v0:3m", 512, 3, scanned=True) == 50
    assert et.steps_per_call("SMAX-v0:27m_vs_30m", 4096, 27, scanned=True) == 1
    assert et.steps_per_call("SMAX-v0:3m", 1, 3, scanned=False) == et.EPISODE_LEN


def test_bad_scenario_and_worlds_are_refused(capsys):
    et = load()
    for argv, expected in ((["--scenarios", "SMAX-v0:nomap"], "unknown scenario 'SMAX-v0:nomap'"),
                           (["--scenarios", "Spread-v0", "--worlds", "0"], "--worlds")):
        with pytest.raises(SystemExit):
            et.parse_args(argv)
        assert expected in capsys.readouterr().err


def test_masked_draw_is_uniform_over_available_actions():
    """The torch draw of every masked framework: only available actions, each as often as the others."""
    import torch

    et = load()
    gen = torch.Generator().manual_seed(0)
    mask = torch.tensor([[True, False, True, True, False, False],
                         [False, False, False, False, True, False]]).expand(20_000, 2, 6)
    out = torch.empty(20_000, 2, dtype=torch.int64)
    drawn = et.masked_draw(mask, gen, torch.empty(mask.shape), out)
    assert drawn.data_ptr() == out.data_ptr()
    assert (drawn[:, 1] == 4).all()
    counts = torch.bincount(drawn[:, 0], minlength=6)
    assert counts[[1, 4, 5]].sum() == 0
    assert ((counts[[0, 2, 3]] - 20_000 / 3).abs() < 5 * (20_000 * 2 / 9) ** 0.5).all(), counts  # 5 sigma
    fresh = et.masked_draw(mask[:3], gen)  # new tensors
    assert fresh.shape == (3, 2) and fresh.dtype == torch.int64


def test_table_marks_missing_and_failed_cells():
    et = load()

    def rec(framework, eps, agents=2, error=None, note=None):
        return {"scenario": "S-v0", "worlds": 1, "framework": framework, "agents": agents,
                "env_steps_per_s": eps, "agent_steps_per_s": eps * agents if eps else None,
                "ours_over_peer": None, "error": error, "note": note}

    records = [rec(et.OURS, 100.0), rec("mpe2", 50.0), rec("vmas", None, None, note="no equivalent scenario"),
               rec("jaxmarl", None, None, error="boom")]
    records[1]["ours_over_peer"] = 2.0
    headers, rows, notes = et.table_rows(records, [et.OURS, "mpe2", "vmas", "jaxmarl"])
    assert headers[-3:] == ["ours/mpe2", "ours/vmas", "ours/jaxmarl"]
    assert rows == [["S-v0", "1", "2", "200.0", "100.0", "-", "err[1]", "2.00×", "-", "-"]]
    assert notes == ["jaxmarl: boom"]

    # the validated step: its agent-steps/s, then val/trusted and val / each peer
    records.append(rec(et.OURS_VALIDATED, 50.0))
    records[-1]["validated_over_trusted"] = 0.5
    records[1]["validated_over_peer"] = 1.0
    headers, rows, _ = et.table_rows(records, [et.OURS, et.OURS_VALIDATED, "mpe2", "vmas", "jaxmarl"])
    assert headers[3:5] == [et.OURS, et.OURS_VALIDATED]
    assert headers[-4:] == ["val/trusted", "val/mpe2", "val/vmas", "val/jaxmarl"]
    assert rows[0][4] == "100.0" and rows[0][-4:] == ["0.50×", "1.00×", "-", "-"]


def test_tiny_run_records(tmp_path, capsys):
    et = load()
    out = tmp_path / "throughput.json"
    scenarios = ["SpeakerListener-v0", "Tag-v0"]
    records = et.main(["--scenarios", ",".join(scenarios), "--worlds", "1", "--target-s", "0.01",
                       "--peers", "mpe2", "--no-install", "--quick", "--json", str(out)])
    assert [(r["scenario"], r["framework"]) for r in records] == [
        (s, fw) for s in scenarios for fw in (et.OURS, et.OURS_VALIDATED, et.OURS_PZ, "mpe2")]
    by = {(r["scenario"], r["framework"]): r for r in records}
    for s in scenarios:
        # the batch API (trusted and validated) and the PettingZoo ParallelEnv
        for fw in (et.OURS, et.OURS_VALIDATED, et.OURS_PZ):
            ours = by[(s, fw)]
            assert ours["error"] is None and ours["env_steps_per_s"] > 0, (s, fw, ours["error"])
            assert ours["agent_steps_per_s"] == ours["env_steps_per_s"] * ours["agents"]
            assert ours["rounds"] == 1 and ours["round_env_steps_per_s"] == [ours["env_steps_per_s"]]
        assert by[(s, et.OURS_PZ)]["ours_over_peer"] is None
        validated = by[(s, et.OURS_VALIDATED)]
        assert validated["validated_over_trusted"] == validated["env_steps_per_s"] / by[(s, et.OURS)]["env_steps_per_s"]
    mpe2 = by[("SpeakerListener-v0", "mpe2")]
    assert mpe2["ours_over_peer"] > 0
    assert mpe2["validated_over_peer"] == (by[("SpeakerListener-v0", et.OURS_VALIDATED)]["env_steps_per_s"]
                                           / mpe2["env_steps_per_s"])
    pz = by[("SpeakerListener-v0", et.OURS_PZ)]
    assert pz["pettingzoo_over_mpe2"] == pz["env_steps_per_s"] / by[("SpeakerListener-v0", "mpe2")]["env_steps_per_s"]
    assert by[("Tag-v0", et.OURS_PZ)]["pettingzoo_over_mpe2"] is None  # mpe2 has no Tag-v0
    assert by[("SpeakerListener-v0", "mpe2")]["peer_env"] == "simple_speaker_listener_v4"
    assert by[("Tag-v0", "mpe2")]["env_steps_per_s"] is None
    assert by[("Tag-v0", "mpe2")]["note"] == "no equivalent scenario"
    for r in records:
        assert {"command", "date", "machine", "versions"} <= set(r)
        assert {"cpu", "cores"} <= set(r["machine"])
    assert by[("Tag-v0", et.OURS)]["versions"]["war-envs"] != "?"
    assert json.loads(out.read_text())[0]["command"].startswith("env_throughput.py --scenarios")
    out_text = capsys.readouterr().out
    assert "ours/mpe2" in out_text and "PZ/mpe2" in out_text and "val/mpe2" in out_text


def test_rounds_report_the_median_round():
    et = load()
    records = et.main(["--scenarios", "Spread-v0", "--worlds", "1,2", "--target-s", "0.01", "--peers", "",
                       "--no-pettingzoo", "--rounds", "3", "--quick"])
    assert [(r["worlds"], r["framework"]) for r in records] == [
        (w, fw) for w in (1, 2) for fw in (et.OURS, et.OURS_VALIDATED)]
    for r in records:
        rounds = r["round_env_steps_per_s"]
        assert r["rounds"] == 3 and len(rounds) == 3 and all(x > 0 for x in rounds), r
        assert r["env_steps_per_s"] == sorted(rounds)[1]  # the median round's figures
        assert r["env_steps_per_s"] == sorted(r["repeat_env_steps_per_s"])[1]  # ... its repeats


def test_smax_rows_tiny_run():
    """SMAX-v0's rows: the batch API (trusted and validated: the validated step refuses an
    unavailable action, so every masked draw of the run was available) and the ParallelEnv."""
    et = load()
    records = et.main(["--scenarios", "SMAX-v0:3m,SMAX-v0:smacv2_5_units", "--worlds", "1,2", "--target-s", "0.01",
                       "--peers", ""])
    frameworks = (et.OURS, et.OURS_VALIDATED, et.OURS_PZ)
    assert [(r["scenario"], r["worlds"], r["framework"]) for r in records] == [
        (s, w, fw) for s in ("SMAX-v0:3m", "SMAX-v0:smacv2_5_units") for w in (1, 2) for fw in frameworks]
    for r in records:
        assert r["error"] is None and r["env_steps_per_s"] > 0, r
        assert r["agents"] == (3 if r["scenario"] == "SMAX-v0:3m" else 5)
        assert r["agent_steps_per_s"] == r["env_steps_per_s"] * r["agents"]
        assert r["env_steps_per_cpu_s"] > 0 and len(r["cpu_seconds_per_repeat"]) == et.REPEATS
        assert r["episode_len"] == 101 and r["peer_env"] == r["scenario"]
        if r["framework"] == et.OURS_VALIDATED:
            assert r["validated_over_trusted"] > 0


JAXMARL_VENV = pathlib.Path("~/.cache/war-envs/bench-venvs/jaxmarl").expanduser()
needs_jaxmarl = pytest.mark.skipif(
    not (JAXMARL_VENV / "bin" / "python").exists(),
    reason=f"JaxMARL's venv is absent ({JAXMARL_VENV}; python benchmarks/env_throughput.py installs it)")


@needs_jaxmarl
def test_jaxmarl_masked_draw_takes_available_actions():
    """In JaxMARL's venv: jaxmarl_masked_draw on HeuristicEnemySMAX's own masks over played steps
    (units die, targets leave range) picks available actions only, every one of them at times."""
    script = """
import sys, jax, jax.numpy as jnp, numpy as np
sys.path.insert(0, "benchmarks")
import env_throughput as et, jaxmarl
from jaxmarl.environments.smax import map_name_to_scenario
env = jaxmarl.make("HeuristicEnemySMAX", scenario=map_name_to_scenario("3m"))
keys = jax.random.split(jax.random.PRNGKey(0), 256)
_, state = jax.vmap(env.reset)(keys)
step, avail_of = jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(env.get_avail_actions))
seen = np.zeros(env.action_space("ally_0").n, bool)
key = jax.random.PRNGKey(1)
for t in range(60):
    avail = avail_of(state)
    key, *ks = jax.random.split(key, 1 + len(env.agents) + 1)
    actions = {a: et.jaxmarl_masked_draw(k, avail[a]) for a, k in zip(env.agents, ks)}
    for a in env.agents:
        m, act = np.asarray(avail[a]), np.asarray(actions[a])
        assert m[np.arange(len(act)), act].all(), (t, a)
        seen[act] = True
        assert not m.all()  # some action unavailable somewhere: the mask matters
    _, state, _, _, _ = step(jax.random.split(ks[-1], 256), state, actions)
assert seen.all(), seen
print("ok")
"""
    proc = subprocess.run([str(JAXMARL_VENV / "bin" / "python"), "-c", script], capture_output=True, text=True,
                          cwd=BENCH.parent, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


@needs_jaxmarl
def test_jaxmarl_smax_runner_records():
    """JaxMARL's side alone: HeuristicEnemySMAX through the benchmark's scanned runner, its record."""
    et = load()
    records = et.main(["--scenarios", "SMAX-v0:3m", "--worlds", "2", "--target-s", "0.01", "--peers", "jaxmarl",
                       "--no-install", "--no-validated", "--no-pettingzoo", "--quick"])
    by = {r["framework"]: r for r in records}
    assert set(by) == {et.OURS, "jaxmarl"}
    jax = by["jaxmarl"]
    assert jax["error"] is None and jax["env_steps_per_s"] > 0, jax
    assert jax["agents"] == 3 and jax["peer_env"] == "HeuristicEnemySMAX, scenario='3m'"
    assert jax["env_steps_per_repeat"] % (2 * et.steps_per_call("SMAX-v0:3m", 2, 3, scanned=True)) == 0
    assert jax["ours_over_peer"] == by[et.OURS]["env_steps_per_s"] / jax["env_steps_per_s"]
    assert jax["versions"]["jaxmarl"] == "0.2.0"
