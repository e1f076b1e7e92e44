"""benchmarks/env_throughput.py: its scenario table covers every registered id, and a tiny run
(war-envs and mpe2 only, so no peer venv is installed) gives complete records.  No wall-clock
assertions: the figures are measured by hand on a quiet machine."""

import importlib.util
import json
import pathlib

import war_envs
from war_envs.registry import scenario_class

BENCH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


def load():
    spec = importlib.util.spec_from_file_location("env_throughput", BENCH / "env_throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scenario_table_covers_every_registered_id():
    et = load()
    registered = war_envs.registered_ids()
    assert set(registered) <= set(et.SCENARIOS), set(registered) - set(et.SCENARIOS)
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
    # The default selection is every registered id, in table order.
    args = et.parse_args(["--peers", ""])
    assert set(args.scenarios) == set(registered) and not args.skipped


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
