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


def test_tiny_run_records(tmp_path, capsys):
    et = load()
    out = tmp_path / "throughput.json"
    scenarios = ["SpeakerListener-v0", "Tag-v0"]
    records = et.main(["--scenarios", ",".join(scenarios), "--worlds", "1", "--target-s", "0.01",
                       "--peers", "mpe2", "--no-install", "--quick", "--json", str(out)])
    assert [(r["scenario"], r["framework"]) for r in records] == [
        (s, fw) for s in scenarios for fw in (et.OURS, et.OURS_PZ, "mpe2")]
    by = {(r["scenario"], r["framework"]): r for r in records}
    for s in scenarios:
        for fw in (et.OURS, et.OURS_PZ):  # the batch API and the PettingZoo ParallelEnv
            ours = by[(s, fw)]
            assert ours["error"] is None and ours["env_steps_per_s"] > 0, (s, fw, ours["error"])
            assert ours["agent_steps_per_s"] == ours["env_steps_per_s"] * ours["agents"]
        assert by[(s, et.OURS_PZ)]["ours_over_peer"] is None
    assert by[("SpeakerListener-v0", "mpe2")]["ours_over_peer"] > 0
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
    assert "ours/mpe2" in out_text and "PZ/mpe2" in out_text
