"""benchmarks/vmas_throughput.py: it finds every registered VMAS-family scenario, draws actions
from the spaces, its breakdown steps exactly what a step steps, VMAS's side resets as VMAS
needs, and a tiny run (one scenario, two worlds) gives complete records, the verdict and the
docs renderer's table.  No wall-clock assertions: the figures are measured by hand on a quiet
machine (module docstring)."""

import importlib.util
import json
import pathlib

import pytest
import torch
import vmas

import war_envs
from war_envs.registry import scenario_class
from war_envs.scenarios.vmas.base import VmasBase

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load(name, folder="benchmarks"):
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def vmas_family() -> list[str]:
    return [i for i in war_envs.registered_ids() if issubclass(scenario_class(i), VmasBase)]


def test_every_registered_vmas_scenario_is_found():
    vt = load("vmas_throughput")
    cells, failures = vt.vmas_scenarios()
    assert not failures, failures
    assert list(cells) == vmas_family() and "Navigation-v0" in cells
    for env_id, cell in cells.items():
        assert cell["vmas_scenario"] == scenario_class(env_id).vmas_scenario, env_id
        assert cell["vmas_scenario"] in vmas.scenarios + vmas.debug_scenarios, env_id  # a VMAS scenario of make_env
        env = war_envs.make(env_id, num_envs=1)
        assert (cell["agents"], cell["max_steps"]) == (env.num_agents, env.max_steps), env_id
        env.close()
    args = vt.parse_args([])
    assert args.scenarios == vmas_family() and args.worlds == [64, 4096] and args.frameworks == ["war-envs", "vmas"]
    assert vt.TARGETS == {64: 20.0, 4096: 5.0}  # issue #25's criterion


def test_bad_arguments_are_refused(capsys):
    vt = load("vmas_throughput")
    for argv, expected in ((["--scenarios", "Spread-v0"], "--scenarios: 'Spread-v0' is not a registered VMAS"),
                           (["--frameworks", "jaxmarl"], "--frameworks: unknown 'jaxmarl'"),
                           (["--worlds", "0"], "--worlds"), (["--target-s", "0"], "--target-s"),
                           (["--rounds", "0"], "--rounds"), (["--cores", "0"], "--cores")):
        with pytest.raises(SystemExit):
            vt.parse_args(argv)
        assert expected in capsys.readouterr().err
    assert vt.parse_args(["--quick"]).worlds == [2, 8]
    assert vt.steps_per_call(64) == 64 and vt.steps_per_call(4096) == 1 and vt.steps_per_call(1) == 100


def test_action_draws_are_the_spaces():
    vt = load("vmas_throughput")
    env = war_envs.make("Navigation-v0", num_envs=500)
    gen = torch.Generator().manual_seed(0)
    draw, form = vt._our_drawer(env, 500, gen)
    space = env.joint_action_space
    a = draw()
    assert form.startswith("joint") and a.shape == (500, env.num_agents, *space.shape) and a.dtype == torch.float32
    low, high = torch.as_tensor(space.low), torch.as_tensor(space.high)
    assert bool((a >= low).all() and (a <= high).all())
    assert float(a.min()) < float(low.min()) + 0.01 and float(a.max()) > float(high.max()) - 0.01
    assert not torch.equal(a.clone(), draw())  # a new draw every call
    with pytest.raises(TypeError, match="expected a Box action space"):
        vt.box_bounds(war_envs.make("Navigation-v0", continuous_actions=False).groups["agents"].action_space)


def test_part_timer_counts_each_part_exclusive_of_the_parts_inside(monkeypatch):
    vt = load("vmas_throughput")
    clock = iter(range(100))
    monkeypatch.setattr(vt.time, "perf_counter", lambda: float(next(clock)))
    timer = vt.PartTimer()
    inner = timer.wrap("lidar", lambda: None)
    with timer.part("observe"):  # t=0
        inner()  # 1 .. 2
        inner()  # 3 .. 4
    # observe closes at t=5: 5 s in all, 2 of them lidar
    assert timer.seconds == {"lidar": 2.0, "observe": 3.0}
    assert timer.part("observe") is timer.part("observe")
    assert vt._per_step(timer, 10.0, 2, ("observe", "lidar", "reset")) == {
        "observe": 1.5e6, "lidar": 1e6, "reset": 0.0, "total": 5e6, "steps": 2}


def test_our_breakdown_steps_what_a_step_steps():
    """The breakdown's step taken apart (action copy, three graphs, info) leaves the worlds where
    ``env.step`` does, with the same actions, across an auto-reset."""
    vt = load("vmas_throughput")
    envs = [war_envs.make("Navigation-v0", num_envs=3, num_threads=1, seed=0, max_steps=4) for _ in range(2)]
    draws = []
    for env in envs:
        env.reset(seed=0)
        draws.append(vt._our_drawer(env, 3, torch.Generator().manual_seed(1))[0])
    parts = vt._breakdown_ours({"env": envs[0], "draw": draws[0]}, 6)
    for _ in range(6):
        envs[1].step(draws[1](), trusted=True)
    assert set(parts) == {*vt.OUR_PARTS, "total", "steps"} and parts["steps"] == 6
    assert all(parts[p] > 0 for p in vt.OUR_PARTS)
    a, b = envs[0].get_state(), envs[1].get_state()
    assert set(a) == set(b) and all(torch.equal(a[k], b[k]) for k in a), [k for k in a if not torch.equal(a[k], b[k])]
    assert int(a["episode"].min()) >= 1  # an auto-reset happened on the way
    for g in envs[0].groups:
        assert torch.equal(envs[0].observations()[g], envs[1].observations()[g])


def test_vmas_side_resets_and_its_breakdown_leaves_vmas_as_it_was():
    vt = load("vmas_throughput")
    cell = {"id": "Navigation-v0", "vmas_scenario": "navigation", "agents": 4, "max_steps": 3}
    run, steps, impl, state = vt._bench_vmas(cell, 2, {"threads": 1})
    assert steps == 100 and impl.startswith("vmas.make_env('navigation'")
    run(1)  # 100 steps of 3-step episodes: a reset of every world after each third step
    assert state["resets"] == {"reset": 33, "reset_at": 0}
    env = state["env"]
    before = {id(o): set(vars(o)) for o in (env, env.scenario, env.world, *(s for a in env.agents for s in a.sensors))}
    parts = vt._breakdown_vmas(state, 7)
    assert set(parts) == {*vt.VMAS_PARTS, "total", "steps"}
    for p in ("draw", "actions", "physics", "reward", "observe", "lidar", "done", "reset", "other"):
        assert parts[p] > 0, p
    after = {id(o): set(vars(o)) for o in (env, env.scenario, env.world, *(s for a in env.agents for s in a.sensors))}
    assert after == before  # every timer wrapper removed
    assert state["resets"]["reset"] == 33 + 2 and state["resets"]["reset_at"] == 0
    # some worlds done, not all: reset_at for each of them
    dones = torch.tensor([True, False])
    state["after"](dones)
    assert state["resets"]["reset_at"] == 1


def test_tiny_run_records_verdict_and_docs_table(tmp_path, capsys):
    vt = load("vmas_throughput")
    out = tmp_path / "vmas.json"
    records = vt.main(["--scenarios", "Navigation-v0", "--worlds", "2", "--target-s", "0.02", "--breakdown",
                       "--json", str(out)])
    assert [(r["scenario"], r["worlds"], r["framework"]) for r in records] == [
        ("Navigation-v0", 2, "war-envs"), ("Navigation-v0", 2, "vmas")]
    ours, theirs = records
    for r in records:
        assert r["error"] is None and r["env_steps_per_s"] > 0, r
        assert r["agents"] == 4 and r["agent_steps_per_s"] == r["env_steps_per_s"] * 4
        assert r["env_steps_per_repeat"] == r["steps_per_repeat"] * 2 and r["steps_per_repeat"] % r["steps_per_call"] == 0
        assert len(r["repeat_env_steps_per_s"]) == len(r["cpu_seconds_per_repeat"]) == r["repeats"] == 3
        assert r["cpus"] and r["threads"] == 1 and r["torch_threads"] == 1 and r["target_s"] == 0.02
        assert r["max_steps"] == 100 and r["vmas_scenario"] == "navigation"
        assert {"command", "date", "machine", "versions"} <= set(r) and {"cpu", "cores"} <= set(r["machine"])
        parts = vt.OUR_PARTS if r["framework"] == "war-envs" else vt.VMAS_PARTS
        assert set(r["breakdown_us_per_step"]) == {*parts, "total", "steps"}
    assert ours["impl"].startswith("war_envs.make(num_threads=1).step(joint") and theirs["resets"]["reset"] >= 1
    assert ours["over_vmas"] == ours["agent_steps_per_s"] / theirs["agent_steps_per_s"]
    assert ours["target"] is None and ours["meets_target"] is None  # no target at 2 worlds
    assert theirs["versions"]["vmas"] == vmas.__version__ == "1.5.2"
    assert json.loads(out.read_text()) == json.loads(json.dumps(records, default=str))
    text = capsys.readouterr().out
    assert "Navigation-v0" in text and "criterion: not evaluated" in text and "vmas: vmas 1.5.2" in text
    assert "microseconds per step" in text

    tables = load("tables", "scripts")
    rendered = tables.vmas_throughput(json.loads(out.read_text()))
    lines = rendered.splitlines()
    assert lines[0] == "| scenario | worlds | agents | war-envs | VMAS | war-envs × VMAS | target | met |"
    cells = lines[2].strip("| ").split(" | ")
    assert cells[:3] == ["Navigation-v0", "2", "4"] and cells[5].endswith("×") and cells[6:] == ["–", "–"]
    assert "No size with a target was measured." in rendered and "`vmas_throughput.py --scenarios" in rendered


def test_ratios_targets_verdict_and_tables():
    vt = load("vmas_throughput")

    def rec(scenario, worlds, framework, rate, error=None):
        return {"scenario": scenario, "worlds": worlds, "framework": framework, "agents": 4,
                "agent_steps_per_s": rate, "env_steps_per_s": rate / 4 if rate else None, "error": error,
                "note": None, "over_vmas": None, "target": None, "meets_target": None, "version": None}

    records = [rec("A-v0", 64, "war-envs", 2500.0), rec("A-v0", 64, "vmas", 100.0),
               rec("A-v0", 4096, "war-envs", 400.0), rec("A-v0", 4096, "vmas", 100.0),
               rec("B-v0", 64, "war-envs", None, error="boom"), rec("B-v0", 64, "vmas", 10.0),
               rec("B-v0", 8, "war-envs", 50.0), rec("B-v0", 8, "vmas", 10.0)]
    vt.fill_ratios(records)
    assert [(r["over_vmas"], r["target"], r["meets_target"]) for r in records if r["framework"] == "war-envs"] == [
        (25.0, 20.0, True), (4.0, 5.0, False), (None, 20.0, None), (5.0, None, None)]
    assert vt.verdict(records) == ("criterion: NOT met: missed by A-v0 at 4096 (4.00× < 5×); "
                                   "not measured for B-v0 at 64")
    assert vt.verdict(records[:2]) == "criterion: met for all 1 scenario(s) (≥ 20× at 64 worlds, 5× at 4096 worlds)"
    headers, rows, notes = vt.table_rows(records)
    assert headers[3:6] == ["war-envs agent-steps/s", "vmas agent-steps/s", "ours/vmas"]
    assert rows[0] == ["A-v0", "64", "4", "2.50 k", "100.0", "25.0×", "20×", "yes"]
    assert rows[1][-3:] == ["4.00×", "5×", "NO"] and rows[2][3] == "err[1]" and notes == ["war-envs: boom"]
    assert rows[3][-2:] == ["–", "–"]

    tables = load("tables", "scripts")
    meta = {"repeats": 3, "target_s": 0.8, "rounds": 1, "command": "vmas_throughput.py", "date": "2026-12-02T00:00"}
    rendered = tables.vmas_throughput([dict(r, **meta) for r in records])
    assert "| A-v0 | 4 096 | 4 | 400 | 100 | 4.0× | ≥ 5× | **no** |" in rendered
    assert "target is missed by A-v0 at 4 096." in rendered
