"""Generate the measured figures of README.md and docs/*.md from benchmarks/results/*.json.

A generated block in a markdown file is delimited by two HTML comments (invisible on GitHub
and on the documentation site)::

    <!-- table: RENDERER FILE [FILE ...] -->
    ...generated text: a table or a sentence...
    <!-- /table -->

``RENDERER`` names a function of this script (``RENDERERS``), the files are results files under
``benchmarks/results/`` (written by the benchmarks' ``--json``, with their command, versions,
machine and date). ``python scripts/tables.py`` rewrites every block from its files;
``python scripts/tables.py --check`` rewrites nothing and exits 1 listing the blocks whose text
differs from what their files give (``tests/test_docs_tables.py`` runs it).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
BLOCK = re.compile(r"^<!-- table: (?P<spec>[^>]*?) -->\n(?P<body>.*?)^<!-- /table -->$", re.S | re.M)
MINUS = "\u2212"


# ---------------------------------------------------------------- number formats
def num(x: float, digits: int = 2) -> str:
    """A signed number with a typographic minus: ``-124.2 -> '−124.20'``."""
    return f"{x:.{digits}f}".replace("-", MINUS)


def rate(x: float | None) -> str:
    """Steps per second: ``569``, ``54 k``, ``14.19 M`` (``–`` for none)."""
    if x is None:
        return "–"
    if x < 1e3:
        return f"{x:.0f}"
    if x < 1e6:
        return f"{x / 1e3:.0f} k"
    return f"{x / 1e6:.2f} M"


def rate3(x: float | None) -> str:
    """Steps per second to three significant digits: ``778``, ``4.44 k``, ``95.2 k``, ``229 k``,
    ``1.01 M`` (``–`` for none)."""
    if x is None:
        return "–"
    if x < 1e3:
        return f"{x:.0f}"
    if x < 1e6:
        return f"{x / 1e3:.{2 if x < 1e4 else 1 if x < 1e5 else 0}f} k"
    return f"{x / 1e6:.2f} M"


def kilo(x: float) -> str:
    return f"{x / 1e3:.1f} k"


def grouped(n: int) -> str:
    """``4096 -> '4 096'`` (thin grouping as in the prose)."""
    return f"{n:,}".replace(",", " ")


def pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f} %"


def table(header: list[str], align: list[str], rows: list[list[str]]) -> str:
    sep = ["---:" if a == "r" else "---" for a in align]
    return "\n".join("| " + " | ".join(r) + " |" for r in [header, sep, *rows])


def median_row(records: list[dict], columns, first=("**median**",), bold=()) -> list[str]:
    """The median over seeds of each column (``columns``: (key or function, formatter))."""
    cells = list(first)
    for i, (get, fmt) in enumerate(columns):
        value = statistics.median(get(r) if callable(get) else r[get] for r in records)
        text = fmt(value)
        cells.append(f"**{text}**" if i in bold else text)
    return cells


# ---------------------------------------------------------------- renderers
def env_throughput(records: list[dict]) -> str:
    """Every scenario at 1 and 8192 worlds: agent-steps/s of each framework, ours over the best peer."""
    frameworks = ("war-envs", "mpe2", "vmas", "jaxmarl")
    by = {(r["scenario"], r["worlds"], r["framework"]): r for r in records}
    scenarios = list(dict.fromkeys(r["scenario"] for r in records))
    rows = []
    for scenario in scenarios:
        for worlds in (1, 8192):
            rates = {fw: by.get((scenario, worlds, fw), {}).get("agent_steps_per_s") for fw in frameworks}
            peers = {fw: v for fw, v in rates.items() if fw != "war-envs" and v}
            if peers and rates["war-envs"]:
                best = max(peers, key=peers.get)
                ratio = f"{rates['war-envs'] / peers[best]:.2f}× ({best})"
            else:
                ratio = "–"
            rows.append([scenario, str(worlds), *(rate(rates[fw]) for fw in frameworks), ratio])
    return table(["scenario", "worlds", "war-envs", "mpe2", "VMAS", "JaxMARL", "ours × best peer"],
                 ["l", "r", "r", "r", "r", "r", "r"], rows)


def env_throughput_small(records: list[dict]) -> str:
    """Small batches: the batch API (trusted and validated step) against JaxMARL's scan, our
    ParallelEnv against mpe2's."""
    by = {(r["scenario"], r["worlds"], r["framework"]): r["env_steps_per_s"] for r in records
          if r.get("env_steps_per_s")}
    ratio = lambda a, b: f"{a / b:.2f}×" if a and b else "–"  # noqa: E731
    rows = []
    for scenario in dict.fromkeys(r["scenario"] for r in records):
        for worlds in sorted({r["worlds"] for r in records if r["scenario"] == scenario}):
            get = lambda fw: by.get((scenario, worlds, fw))  # noqa: E731
            ours, checked, pz = get("war-envs"), get("war-envs-validated"), get("war-envs-pettingzoo")
            mpe2, jax = get("mpe2"), get("jaxmarl")
            rows.append([scenario, str(worlds), kilo(ours), kilo(checked) if checked else "–",
                         kilo(jax) if jax else "–", ratio(ours, jax), ratio(checked, jax),
                         kilo(pz) if pz else "–", kilo(mpe2) if mpe2 else "–",
                         f"{pz / mpe2:.1f}×" if pz and mpe2 else "–"])
    rounds = records[0].get("rounds", 1)
    return table(["scenario", "worlds", "batch API (trusted)", "batch API (validated)", "JaxMARL scan",
                  "trusted / JaxMARL", "validated / JaxMARL", "our ParallelEnv", "mpe2 ParallelEnv",
                  "PZ / mpe2"], ["l"] + ["r"] * 9, rows) + (
        "\n\nenv-steps/s on one pinned core"
        + (f", the median of {rounds} rounds (the frameworks in turn)" if rounds > 1 else "")
        + f", `{records[0]['command']}`, {records[0]['date'][:10]}.")


def env_throughput_smax(records: list[dict]) -> str:
    """SMAX-v0 against JaxMARL's HeuristicEnemySMAX per map and world count: env-steps/s and
    agent-steps/s of our batch API (trusted and validated step) and of JaxMARL's scan, the ratios."""
    return env_throughput_vs_jaxmarl(records, "map", lambda scenario: scenario.partition(":")[2])


def env_throughput_jaxmarl_games(records: list[dict]) -> str:
    """JaxMARL's small games (SwitchRiddle-v0, CoinGame-v0) against JaxMARL's own, per world
    count: the columns of ``env_throughput_smax``, one row per scenario and world count."""
    return env_throughput_vs_jaxmarl(records, "scenario", lambda scenario: scenario)


def env_throughput_vs_jaxmarl(records: list[dict], label_header: str, label) -> str:
    """Our batch API (trusted and validated step) against JaxMARL's scan per row ``label(scenario)``
    and world count: env-steps/s, agent-steps/s, the ratios, then the conditions and command."""
    by = {(r["scenario"], r["worlds"], r["framework"]): r for r in records}
    get = lambda s, w, fw, key="env_steps_per_s": by.get((s, w, fw), {}).get(key)  # noqa: E731
    ratio = lambda a, b: f"{a / b:.1f}×" if a and b else "–"  # noqa: E731
    rows = []
    for scenario in dict.fromkeys(r["scenario"] for r in records):
        for worlds in sorted({r["worlds"] for r in records if r["scenario"] == scenario}):
            ours, checked, jax = (get(scenario, worlds, fw) for fw in ("war-envs", "war-envs-validated", "jaxmarl"))
            rows.append([label(scenario), str(worlds), str(get(scenario, worlds, "war-envs", "agents")),
                         rate3(ours), rate3(get(scenario, worlds, "war-envs", "agent_steps_per_s")),
                         rate3(checked), rate3(jax), rate3(get(scenario, worlds, "jaxmarl", "agent_steps_per_s")),
                         ratio(ours, jax), ratio(checked, jax)])
    first, rounds = records[0], records[0].get("rounds", 1)
    return table([label_header, "worlds", "agents", "war-envs env-steps/s", "war-envs agent-steps/s",
                  "validated env-steps/s", "JaxMARL env-steps/s", "JaxMARL agent-steps/s", "ours / JaxMARL",
                  "validated / JaxMARL"], ["l"] + ["r"] * 9, rows) + (
        "\n\nOne pinned core, one thread per framework"
        + (f", the median of {rounds} rounds (the frameworks in turn)" if rounds > 1 else "")
        + f"; `{first['command']}`, {first['date'][:10]}.")


def env_throughput_smax_rounds(records: list[dict]) -> str:
    """Ours over JaxMARL per SMAX map from a many-round run: the ratio of the median rounds and the
    range of the per-round ratios (round k's figure of ours over round k's of JaxMARL)."""
    by = {(r["scenario"], r["worlds"], r["framework"]): r for r in records}
    parts = []
    for scenario, worlds in dict.fromkeys((r["scenario"], r["worlds"]) for r in records):
        ours, jax = by.get((scenario, worlds, "war-envs")), by.get((scenario, worlds, "jaxmarl"))
        if not (ours and jax and ours["env_steps_per_s"] and jax["env_steps_per_s"]):
            continue
        per_round = [a / b for a, b in zip(ours["round_env_steps_per_s"], jax["round_env_steps_per_s"]) if a and b]
        parts.append(f"{scenario.partition(':')[2]} {ours['env_steps_per_s'] / jax['env_steps_per_s']:.1f}× "
                     f"(rounds {min(per_round):.1f}–{max(per_round):.1f}×)")
    worlds = sorted({r["worlds"] for r in records})
    first = records[0]
    return (f"At {', '.join(map(str, worlds))} worlds, over {first['rounds']} rounds: " + ", ".join(parts)
            + f" (our env-steps/s over JaxMARL's; `{first['command']}`, {first['date'][:10]}).")


def classic_throughput(records: list[dict]) -> str:
    """``benchmarks/classic_throughput.py``: env-steps/s of our two columns and each peer per
    (env, worlds), each of ours over the best peer (``*``: fewer than 100 steps timed per repeat,
    as the script notes), then the implementations, versions, command and date."""
    columns = [("war-envs-vector", "war-envs vector env"), ("war-envs-batch", "war-envs batch API"),
               ("gymnasium", "Gymnasium"), ("envpool", "envpool"), ("gymnax", "gymnax")]
    by = {(r["env_id"], r["worlds"], r["framework"]): r for r in records}

    def cell(r):
        if r is None or r["env_steps_per_s"] is None:
            return "–"
        return rate3(r["env_steps_per_s"]) + (" *" if r["note"] else "")

    def ratio(r):
        return f"{r['over_best_peer']:.2f}× ({r['best_peer']})" if r and r["over_best_peer"] else "–"

    rows = []
    for env_id, worlds in dict.fromkeys((r["env_id"], r["worlds"]) for r in records):
        get = lambda fw: by.get((env_id, worlds, fw))  # noqa: E731
        rows.append([env_id, grouped(worlds), *(cell(get(fw)) for fw, _ in columns),
                     ratio(get("war-envs-vector")), ratio(get("war-envs-batch"))])
    text = table(["env", "worlds", *(name for _, name in columns), "vector env × best peer",
                  "batch API × best peer"], ["l"] + ["r"] * 8, rows)
    impls = dict.fromkeys(f"{r['framework']}: {r['impl']}" for r in records if r["impl"] and r["worlds"] == 1)
    versions = dict.fromkeys(r["version"] for r in records if r["version"])
    first = records[0]
    return text + (
        f"\n\nenv-steps/s (worlds × steps / s) on one pinned core, one thread per implementation, auto-reset on, "
        f"the median of {first['repeats']} repeats of ~{first['target_s']:g} s; * fewer than 100 steps timed per "
        f"repeat (a step takes longer than the repeat; the results file says how many). "
        f"Stepped: {'; '.join(impls)}. Versions: {'; '.join(versions)}. `{first['command']}`, {first['date'][:10]}.")


def vmas_throughput(records: list[dict]) -> str:
    """``benchmarks/vmas_throughput.py``: every VMAS-family scenario's agent-steps/s, ours and
    VMAS's, per world count, ours over VMAS's against issue #25's target at that size, then the
    protocol, the verdict, versions, command and date."""
    by = {(r["scenario"], r["worlds"], r["framework"]): r for r in records}

    def cell(r):
        return rate3(r["agent_steps_per_s"]) if r and r["agent_steps_per_s"] else "–"

    rows, missed, met = [], [], []
    for scenario, worlds in dict.fromkeys((r["scenario"], r["worlds"]) for r in records):
        ours, theirs = by.get((scenario, worlds, "war-envs")), by.get((scenario, worlds, "vmas"))
        target = ours["target"] if ours else None
        verdict = "–" if not ours or ours["meets_target"] is None else "yes" if ours["meets_target"] else "**no**"
        if ours and ours["meets_target"] is not None:
            (met if ours["meets_target"] else missed).append(f"{scenario} at {grouped(worlds)}")
        rows.append([scenario, grouped(worlds), str((ours or theirs)["agents"] or "–"), cell(ours), cell(theirs),
                     f"{ours['over_vmas']:.1f}×" if ours and ours["over_vmas"] else "–",
                     f"≥ {target:g}×" if target else "–", verdict])
    text = table(["scenario", "worlds", "agents", "war-envs", "VMAS", "war-envs × VMAS", "target", "met"],
                 ["l", "r", "r", "r", "r", "r", "r", "l"], rows)
    scenarios = len({r["scenario"] for r in records})
    if missed:
        outcome = f"Issue #25's target is missed by {', '.join(missed)}."
    elif met:
        outcome = f"Issue #25's target is met by all {scenarios} scenarios at every size it names."
    else:
        outcome = "No size with a target was measured."
    versions = dict.fromkeys(r["version"] for r in records if r["version"])
    first = records[0]
    return text + (
        f"\n\nagent-steps/s (worlds × agents × steps / s) on one pinned core, one thread (torch's too), default "
        f"arguments, continuous random actions drawn each step, the median of {first['repeats']} repeats of "
        f"~{first['target_s']:g} s" + (f" (median of {first['rounds']} rounds)" if first.get("rounds", 1) > 1 else "")
        + ("; ours through the batch API's trusted step, VMAS's `env.step`; no horizon and no restart on either side "
           "(`--resets none`: ours `max_steps=None, autoreset_mode=\"disabled\"`, VMAS `max_steps=None` and never reset). "
           if first.get("resets_mode") == "none" else
           "; ours through the batch API's trusted step, VMAS's `env.step` with `reset` when every world is done "
           "(`reset_at` for each done world otherwise). ")
        + f"{outcome} Versions: {'; '.join(versions)}. `{first['command']}`, {first['date'][:10]}.")


def learning_relay(records: list[dict]) -> str:
    """Relay-v0's ablation: the trained team, the same team with the commander muted, random."""
    rows = []
    for r in records:
        e = r["eval"]
        rnd = e["random"]["episode_return"]
        cells = [str(r["seed"])]
        for mode in ("greedy", "sample"):
            t, m = e[mode]["episode_return"], e[f"{mode}@muted"]["episode_return"]
            cells += [f"{t:.2f}", f"{m:.2f}", f"{(t - m) / (t - rnd):.0%}"]
        rows.append(cells + [f"{rnd:.2f}"])
    return table(["seed", "greedy", "greedy, muted", "fall towards random", "sampled", "sampled, muted",
                  "fall towards random", "random"], ["l"] + ["r"] * 7, rows)


def war_planner_value(report: dict) -> str:
    """``benchmarks/war_planner_value.py``: per seed the greedy team return of the policy
    commander's team and of the planning commander's (by its search, and by its raw policy)."""
    rows = [[str(r["seed"]), f"{r['policy_team']:.2f}", f"{r['planner_team']:.2f}",
             f"{r['planner_team_raw_policy']:.2f}", f"{r['planner_team'] - r['policy_team']:+.2f}",
             f"{r['policy_team_planning']:.2f}", f"{r['policy_wall_s']:.0f}", f"{r['planner_wall_s']:.0f}"]
            for r in report["rows"]]
    m = report["median"]
    rows.append(["**median**", f"{m['policy_team']:.2f}", f"{m['planner_team']:.2f}",
                 f"{m['planner_team_raw_policy']:.2f}",
                 f"{statistics.median(r['planner_team'] - r['policy_team'] for r in report['rows']):+.2f}",
                 f"{m['policy_team_planning']:.2f}", f"{m['policy_wall_s']:.0f}", f"{m['planner_wall_s']:.0f}"])
    p = report["planner"]
    behaviour = "search's improved policy" if p.get("ratio", "search") == "search" else "policy's own probability"
    distill = f", cross-entropy to the searched actions weighted {p['distill']:g}" if p.get("distill") else ""
    return (table(["seed", "policy commander", "planning commander", "planning team, raw policy",
                   "planning − policy", "policy team, commander planning at evaluation", "policy run s",
                   "planning run s"], ["l"] + ["r"] * 7, rows)
            + f"\n\nRelay-v0 (`relay` preset), {grouped(report['steps'])} env steps per run at {report['num_envs']} "
              f"worlds; planner {p['simulations']} simulations, depth {p['depth']}, PPO's ratio over the "
              f"{behaviour}{distill}; greedy team return over "
              f"{report['episodes']} evaluation episodes (worlds never trained on). `{report['command']}`, "
              f"{report['date'][:10]}.")


def _rate_of(records, scenario, worlds, framework="war-envs"):
    return next(r["agent_steps_per_s"] for r in records
                if (r["scenario"], r["worlds"], r["framework"]) == (scenario, worlds, framework))


def env_throughput_readme(records: list[dict]) -> str:
    """README's sentence: Spread-v0 at 8192 worlds against the best peer."""
    ours = _rate_of(records, "Spread-v0", 8192)
    peers = {r["framework"]: r["agent_steps_per_s"] for r in records
             if r["scenario"] == "Spread-v0" and r["worlds"] == 8192 and r["framework"] != "war-envs"
             and r["agent_steps_per_s"]}
    best = max(peers, key=peers.get)
    names = {"vmas": "VMAS", "jaxmarl": "JaxMARL", "mpe2": "mpe2"}
    return (f"Spread-v0 at 8 192 worlds steps at {ours / 1e6:.1f} M agent-steps/s on one CPU core "
            f"({ours / peers[best]:.1f}× {names[best]}, the best peer there; every scenario side by side "
            f"with mpe2, VMAS and JaxMARL in one table, {records[0]['date'][:10]}).")


def env_throughput_views(before: list[dict], after: list[dict]) -> str:
    """The effect of observation views on PredatorPrey-v0 at 8192 worlds (two results files)."""
    a, b = _rate_of(before, "PredatorPrey-v0", 8192), _rate_of(after, "PredatorPrey-v0", 8192)
    return (f"PredatorPrey-v0 at 8192 worlds went from {a / 1e6:.2f} M to {b / 1e6:.2f} M agent-steps/s "
            f"(`{after[0]['command']}`, {after[0]['date'][:10]}).")


def train_speed(records: list[dict]) -> str:
    """MAPPO end to end: env-steps/s, agent-steps/s and where the time goes."""
    rows = [[r["scenario"], grouped(r["worlds"]), str(r["agents_per_world"]), kilo(r["env_steps_per_s"]),
             kilo(r["agent_steps_per_s"]), pct(r["env_share"]), pct(r["policy_share"]), pct(r["learn_share"]),
             pct(r["other_share"]), pct(r["outside_networks_share"])] for r in records]
    return table(["scenario", "worlds", "agents/world", "env-steps/s", "agent-steps/s", "env step",
                  "policy (forward, sampling)", "learning", "other", "outside the networks"],
                 ["l"] + ["r"] * 9, rows)


def train_before_after(records: list[dict]) -> str:
    """Before / after a change: medians and ranges of alternating runs, and their ratio (one
    configuration: a sentence; several: a table)."""
    def span(xs):
        return f"{min(xs) / 1e3:.1f}–{max(xs) / 1e3:.1f} k"

    if len(records) == 1:
        (r,) = records
        before, after = r["before_env_steps_per_s"], r["after_env_steps_per_s"]
        return (f"before {kilo(statistics.median(before))} env-steps/s (runs {span(before)}), after "
                f"{kilo(statistics.median(after))} ({span(after)}), ratio {r['after_over_before']:.3f} "
                f"({len(before)} runs each, {r['date'][:10]}).")
    rows = [[r["scenario"], str(r["worlds"]),
             f"{kilo(statistics.median(r['before_env_steps_per_s']))} ({span(r['before_env_steps_per_s'])})",
             f"{kilo(statistics.median(r['after_env_steps_per_s']))} ({span(r['after_env_steps_per_s'])})",
             f"**{r['after_over_before']:.3f}**", str(len(r["before_env_steps_per_s"]))] for r in records]
    return table(["scenario", "worlds", "before env-steps/s (runs)", "after env-steps/s (runs)", "after / before",
                  "runs each"], ["l", "r", "r", "r", "r", "r"], rows)


def _learning_table(records, header, columns, bold=()):
    rows = [[str(r["seed"]), *(fmt(get(r) if callable(get) else r[get]) for get, fmt in columns)]
            for r in records]
    rows.append(median_row(records, columns, bold=bold))
    return table(["seed", *header], ["l"] * (len(header) + 1), rows)


def wall(x: float) -> str:
    return f"{grouped(round(x))} s"


def learning_classic(*tasks: list[dict]) -> str:
    """Presets scored by one progress metric (classic control, Overcooked, Hanabi; one results file
    of ``benchmarks/learning.py`` per task): greedy, sampled and random scores over the evaluation
    episodes, per seed and the median; the task names its metric where it is not the return."""
    columns = [("train_last5", num), ("eval/greedy", num), ("eval/sample", num), ("eval/random", num),
               ("wall_s", wall)]
    rows = []
    for records in tasks:
        metric = records[0].get("metric", "episode_return")
        label = f"`{records[0]['scenario']}`" + ("" if metric == "episode_return" else f" ({metric})")
        for r in records:
            rows.append([label, str(r["seed"]), *(fmt(r[key]) for key, fmt in columns)])
        rows.append([label, *median_row(records, columns, bold=(1,))])
    return table(["task", "seed", "training (last 5 updates)", "greedy", "sampled", "random", "wall-clock"],
                 ["l"] * 7, rows)


def learning_spread(discrete: list[dict], continuous: list[dict]) -> str:
    """Spread, discrete and continuous presets, on both start distributions."""
    columns = [("train_last5", num), ("eval/greedy", num), ("eval/greedy@onpolicy_init", num),
               ("eval/sample@onpolicy_init", num), ("wall_s", wall)]
    rows = []
    for label, records in (("Discrete(5)", discrete), ("Box(0, 1, (5,))", continuous)):
        for r in records:
            rows.append([label, str(r["seed"]), *(fmt(r[key]) for key, fmt in columns)])
        rows.append([label, *median_row(records, columns, bold=(0, 1, 2, 3))])
    text = table(["actions", "seed", "training, mpe2 starts", "greedy, mpe2 starts", "greedy, on-policy starts",
                  "sampled, on-policy starts", "wall-clock"], ["l"] * 7, rows)
    random = [statistics.median(r["eval/random@onpolicy_init"] for r in recs) for recs in (discrete, continuous)]
    random_mpe2 = [statistics.median(r["eval/random"] for r in recs) for recs in (discrete, continuous)]
    return (text + f"\n\n(Random policies: {num(random[0], 0)} discrete / {num(random[1], 0)} continuous on the "
            f"on-policy starts, {num(random_mpe2[0], 0)} / {num(random_mpe2[1], 0)} on mpe2's.)")


def learning_spread_readme(records: list[dict]) -> str:
    """README's sentence: the Spread preset's medians over seeds on both start distributions."""
    def med(key):
        return num(statistics.median(r[key] for r in records))

    return (f"{med('train_last5')} in training and {med('eval/greedy')} greedy on mpe2's start states, "
            f"{med('eval/greedy@onpolicy_init')} greedy on the on-policy code's (random policy: "
            f"{num(statistics.median(r['eval/random@onpolicy_init'] for r in records), 0)}; medians of "
            f"{len(records)} seeds, {records[0]['env_steps'] / 1e6:.0f} M env steps each).")


def learning_speaker_listener(records: list[dict]) -> str:
    return _learning_table(records, ["training (last 5 updates)", "greedy", "sampled", "random",
                                     "listener greedy, random speaker", "wall-clock"],
                           [("train_last5", num), ("eval/greedy", num), ("eval/sample", num), ("eval/random", num),
                            ("eval/listener_greedy_vs_random", num), ("wall_s", wall)], bold=(0, 1, 2, 3, 4))


def learning_reference(records: list[dict]) -> str:
    return _learning_table(records, ["training (last 5 updates)", "greedy", "sampled", "random", "wall-clock"],
                           [("train_last5", num), ("eval/greedy", num), ("eval/sample", num), ("eval/random", num),
                            ("wall_s", wall)], bold=(0, 1, 2, 3))


def learning_spread_onpolicy(records: list[dict]) -> str:
    """The ``spread_onpolicy_starts`` preset: trained and evaluated on the on-policy code's starts."""
    return _learning_table(records, ["training (last 5 updates)", "greedy", "sampled", "random",
                                     "greedy, mpe2 starts", "wall-clock"],
                           [("train_last5", num), ("eval/greedy", num), ("eval/sample", num), ("eval/random", num),
                            ("eval/greedy@mpe2_init", num), ("wall_s", wall)], bold=(0, 1, 2, 3, 4))


def learning_predator_prey(records: list[dict]) -> str:
    """PredatorPrey-v0's catch rate: both groups trained, each trained group against random others."""
    def catch(mode):
        return lambda r: r["eval"][mode]["catch_rate"]

    return _learning_table(records, ["both trained", "trained adversaries, random prey",
                                     "random adversaries, trained prey", "both random", "wall-clock"],
                           [(catch("greedy"), pct), (catch("adversary_greedy_vs_random"), pct),
                            (catch("agent_greedy_vs_random"), pct), (catch("random"), pct), ("wall_s", wall)],
                           bold=(0, 1, 2, 3))


def evaluated(r: dict) -> str:
    """Which networks a learning record evaluated: the last update's, the selected update's
    (``select_every``), and with restarts which restart's of how many trained."""
    selected = r.get("selected")
    if not selected:
        return "last"
    if "restart" not in selected:
        return f"update {selected['update']}"
    return f"update {selected['update']} of restart {selected['restart']} ({r['restarts_trained']} trained)"


def learning_smax(*maps: list[dict]) -> str:
    """SMAX-v0's win rates against the heuristic enemy, one results file per map (preset)."""
    columns = [("train_last5", pct), ("eval/greedy", pct), ("eval/sample", pct), ("eval/random", pct),
               ("env_steps", lambda x: f"{x / 1e6:.1f} M"), ("wall_s", wall)]
    rows = []
    for records in maps:
        label = f"`{records[0]['env_kwargs']['map_name']}`"
        for r in records:
            rows.append([label, str(r["seed"]), *(fmt(r[key]) for key, fmt in columns), evaluated(r)])
        if len(records) > 1:
            rows.append([label, *median_row(records, columns, bold=(0, 1, 2, 3)), ""])
    return table(["map", "seed", "training (last 5 updates)", "greedy", "sampled", "random", "env steps",
                  "wall-clock", "networks evaluated"], ["l"] * 9, rows)


def learning_smax_table(report: dict) -> str:
    """``benchmarks/smax_table.py``: per map the greedy win rate's median and range over seeds
    beside the published MAPPO / IPPO anchors, and whether the median reaches the better one."""
    def anchors(r):
        return "–" if r["anchor_mappo"] is None else f"{pct(r['anchor_mappo'], 0)} / {pct(r['anchor_ippo'], 0)}"

    rows = []
    for r in report["maps"]:
        reach = "–" if r["reaches_anchor"] is None else ("yes" if r["reaches_anchor"] else "**no**")
        rows.append([f"`{r['map_name']}`", f"`{r['preset']}`", str(len(r["seeds"])),
                     f"up to {r['restarts']}" if r["restarts"] else "none", f"**{pct(r['greedy_median'])}**",
                     f"{pct(r['greedy_min'])}–{pct(r['greedy_max'])}", pct(r["sampled_median"]),
                     f"{statistics.median(r['env_steps']) / 1e6:.1f} M", wall(statistics.median(r["wall_s"])),
                     anchors(r), reach])
    rows += [[f"`{m['map_name']}`", f"`{m['preset']}`", "0", "", "not run yet", "", "", "", "", anchors(m), ""]
             for m in report["missing"]]
    return table(["map", "preset", "seeds", "restarts", "greedy (median)", "greedy (range)", "sampled (median)",
                  "env steps (median)", "wall-clock per run (median)", "anchor MAPPO / IPPO", "reaches anchor"],
                 ["l", "l", "r", "l", "r", "r", "r", "r", "r", "r", "l"], rows)


def _tag_ratio(r):
    return r["eval/tagger_greedy_vs_random"] / r["eval/random"]


def learning_tag(records: list[dict]) -> str:
    """Tag-v0: trained taggers against random runners, survival of trained and random runners."""
    columns = [("eval/random", lambda x: f"{x:.2f}"), ("eval/tagger_greedy_vs_random", lambda x: f"{x:.2f}"),
               (_tag_ratio, lambda x: f"{x:.2f}×"), (lambda r: r["eval"]["greedy"]["survival"], lambda x: f"{x:.1f}"),
               (lambda r: r["eval"]["tagger_greedy_vs_random"]["survival"], lambda x: f"{x:.1f}")]
    return _learning_table(records, ["random vs random: tags", "trained taggers vs random runners: tags", "ratio",
                                     "trained runners vs trained taggers: survival",
                                     "random runners vs trained taggers: survival"], columns, bold=(1, 2, 3))


def learning_tag_summary(records: list[dict], baselines: list[dict]) -> str:
    """The prose under the Tag-v0 table: sampled policies, trained vs trained, the scripted pursuer
    (each comparison worded from the figures, so the sentence stays true for any results file)."""
    def span(xs, spec=".2f", unit=""):
        lo, hi = f"{min(xs):{spec}}{unit}", f"{max(xs):{spec}}{unit}"
        return lo if lo == hi else f"{lo}–{hi}"

    sampled = [r["eval/tagger_sample_vs_random"] for r in records]
    mutual = [r[k] for r in records for k in ("eval/greedy", "eval/sample")]
    random_rate = [r["eval/random"] for r in records]
    pursuit = next(b["pursuit_over_random"] for b in baselines if b["action_set"].startswith("tag preset"))
    ratios = [_tag_ratio(r) for r in records]
    minutes = [r["wall_s"] / 60 for r in records]
    if max(mutual) < min(random_rate):
        mutual_text = "fewer tags than random play"
    elif min(mutual) > max(random_rate):
        mutual_text = "more tags than random play"
    else:
        mutual_text = "about as many tags as random play"
    gap = ("still short of" if max(ratios) < pursuit else "beyond") + f" the {pursuit:.1f}× the scripted pursuer reaches"
    return (f"(Greedy policies; sampled taggers make {span(sampled)} tags against random runners. Each run took "
            f"{span(minutes, '.0f')} min, side by side on the 2 cores.) Trained runners survive much longer than "
            f"random runners against the same taggers, and against trained runners the taggers make "
            f"{mutual_text} ({span(mutual)} against {span(random_rate)}): the runners learn as the taggers do, "
            f"which keeps the taggers' reward sparse. The taggers' gain against random runners, "
            f"{span(ratios, '.1f', '×')} the random rate, is {gap} "
            f"(`benchmarks/results/tag_baselines.json`).")


def learning_tag_gridworld(records: list[dict]) -> str:
    """TagGridWorld-v0: how often the runner is tagged and how long it lasts, each group trained
    against a random other group and both random."""
    def get(mode, key):
        return lambda r: r["eval"][mode][key]

    steps = lambda x: f"{x:.1f}"  # noqa: E731
    columns = [(get("random", "tags"), pct), (get("tagger_greedy_vs_random", "tags"), pct),
               (get("random", "episode_length"), steps), (get("tagger_greedy_vs_random", "episode_length"), steps),
               (get("runner_greedy_vs_random", "tags"), pct), (get("runner_greedy_vs_random", "episode_length"), steps),
               (get("greedy", "tags"), pct), ("wall_s", wall)]
    return _learning_table(records, ["both random: tagged", "trained taggers, random runner: tagged",
                                     "both random: steps", "trained taggers, random runner: steps",
                                     "random taggers, trained runner: tagged",
                                     "random taggers, trained runner: steps (survival)", "both trained: tagged",
                                     "wall-clock"], columns, bold=(1, 3, 4, 5))


def tag_baselines(records: list[dict]) -> str:
    """Scripted taggers against random runners, per action set."""
    labels = {"warpdrive": "WarpDrive's", "tag preset": "`tag` preset's"}
    rows = []
    for r in records:
        prefix = next(v for k, v in labels.items() if r["action_set"].startswith(k))
        levels = re.search(r"\((\d+) x (\d+)\)", r["action_set"]).groups()
        rows.append([f"{prefix} {levels[0]} × {levels[1]}", f"{r['random']:.2f} tags",
                     f"{r['best_blind']:.2f} ({r['best_blind_over_random']:.2f}×)",
                     f"{r['pursuit_with_heading']:.2f} ({r['pursuit_over_random']:.2f}×)"])
    return table(["action levels", "random taggers", "best heading-blind (full speed, constant turn)",
                  "pursuit with the true heading"], ["l"] * 4, rows)


def war_straggler(records: list[dict]) -> str:
    """``benchmarks/war_speed.py``'s straggling-worker case: lock-step, DD-PPO and work stealing
    per cost ratio and resource model — modelled batch time and speedup, agent-transitions per
    batch (what DD-PPO drops), worlds moved and their measured copy time."""
    rows = []
    for r in records:
        if r.get("part") != "A" or r["arm"] not in ("sync", "ddppo", "steal"):
            continue
        sync = next(s for s in records if s.get("part") == "A" and s["arm"] == "sync" and s["ratio"] == r["ratio"]
                    and s["resource"] == r["resource"])
        rows.append([f"1:{r['ratio']:g}", r["resource"], f"`{r['arm']}`", f"{r['batch_s']:.2f} s (modelled)",
                     f"{r['speedup']:.2f}× (modelled)", grouped(round(r["transitions"])),
                     pct(1 - r["transitions"] / sync["transitions"]),
                     f"{r['stolen']:g}" if r["arm"] == "steal" else "–",
                     f"{r['move_ms']:.1f} ms (measured)" if r["arm"] == "steal" else "–"])
    return table(["commander : sentry", "resource", "arm", "batch time", "speedup vs sync", "agent-transitions",
                  "dropped vs sync", "world moves per batch", "copy time per batch"],
                 ["l", "l", "l"] + ["r"] * 6, rows)


def _num(x: float, fmt: str) -> str:
    return "–" if x != x else ("never" if x == float("inf") else format(x, fmt))


def _sooner(median: float, values: list[float] | None = None) -> str:
    """How much sooner than sync an arm reaches 90 % of sync's final return: ``median / mean``
    over seeds (or one seed's), measured; 0 is a seed that never got there."""
    import statistics

    def one(x):
        return "never" if x == 0 else _num(x, ".2f") + "×"

    if values is None:
        return one(median) + " (measured)"
    never = sum(v == 0 for v in values)
    tail = f"; {never} of {len(values)} never" if never else ""
    return f"{one(median)} / {one(statistics.mean(values))} (measured{tail})"


def war_real(records: list[dict]) -> str:
    """``benchmarks/war_real.py``: per cost ratio, resource model and arm, over its seeds — real
    seconds per batch and the real speedup beside the cost model's prediction, real time to 90 %
    of sync's final return and how much sooner than sync, the final return normalized between
    random (0) and sync (1), the commander's share, ESS, staleness, dropped fraction.  Medians
    over seeds, with the mean where the criterion is a mean."""
    import statistics

    rows = []
    for r in records:
        per = r["per_seed"]
        norm = [p["final_return_norm"] for p in per]
        sooner = [p["time_to_90_speedup"] for p in per]
        rows.append([f"1:{r['ratio']:g}", r["resource"], f"`{r['arm']}`", str(len(per)),
                     f"{r['batch_s']:.2f} s", f"{r['speedup']:.2f}× (measured)", f"{r['predicted']:.2f}× (modelled)",
                     "never" if r["time_to_90_s"] == float("inf") else _num(r["time_to_90_s"], ".0f") + " s",
                     _sooner(r["time_to_90_speedup"], sooner),
                     _num(r["final_return_norm"], ".3f") + " / " + _num(statistics.mean(norm), ".3f"),
                     f"{r['share_commander']:.3f}", f"{r['ess_frac']:.2f}", f"{r['staleness_mean']:.2f}",
                     pct(r["dropped_frac"])])
    return table(["commander : sentry", "resource", "arm", "seeds", "batch (real)", "speedup (real)",
                  "predicted", "to 90 % of sync (real)", "sooner than sync (median / mean)",
                  "final return, norm. (median / mean)",
                  "commander share", "ESS / N", "staleness", "dropped"],
                 ["l", "l", "l"] + ["r"] * 11, rows)


def war_real_seeds(records: list[dict]) -> str:
    """``benchmarks/war_real.py``'s per-seed values of every arm but sync (the reference)."""
    rows = []
    for r in records:
        if r["arm"] == "sync":
            continue
        for p in r["per_seed"]:
            rows.append([f"1:{r['ratio']:g}", r["resource"], f"`{r['arm']}`", str(p["seed"]),
                         f"{p['speedup']:.2f}× (measured)", f"{p['predicted']:.2f}× (modelled)",
                         _sooner(p["time_to_90_speedup"]), _num(p["final_return_norm"], ".3f"),
                         f"{p['sync_final_return']:.2f}"])
    return table(["commander : sentry", "resource", "arm", "seed", "batch speedup (real)", "predicted",
                  "to 90 % sooner (real)", "final return, norm.", "sync's final return"],
                 ["l", "l", "l"] + ["r"] * 6, rows)


def time_to_target(records: list[dict]) -> str:
    """``benchmarks/time_to_target.py``: wall-clock (start-up included) and env steps to the target
    return, or the budget spent and the return reached."""
    rows = []
    for r in records:
        hit = r["reached"]
        rows.append([r["framework"], r["algorithm"], f"{r['target']:g}",
                     f"**{wall(hit['wall_s'])}**" if hit else f"not within {wall(r['wall_s'])}",
                     f"{hit['env_steps'] / 1e6:.2f} M" if hit else f"> {r['env_steps'] / 1e6:.2f} M",
                     f"{(hit or r)['return' if hit else 'final_return']:.2f}", rate(r["env_steps_per_s"])])
    return table(["trainer", "what trains", "target (mpe2 return)", "time to target", "env steps",
                  "return (last 200 episodes)", "env steps/s"], ["l", "l", "r", "r", "r", "r", "r"], rows)


def time_to_target_smax(records: list[dict]) -> str:
    """``benchmarks/time_to_target.py --task smax``: per trainer the training wall-clock (start-up
    included, evaluations left out) and env steps to the target greedy win rate, and how many
    times sooner war-train got there than each peer."""
    ours = next((r for r in records if r["framework"] == "war-train" and r.get("reached")), None)
    rows = []
    for r in records:
        hit = r.get("reached")
        sooner = ("–" if r["framework"] == "war-train" or ours is None else
                  f"**{hit['wall_s'] / ours['reached']['wall_s']:.1f}×**" if hit else
                  f"> {r['wall_s'] / ours['reached']['wall_s']:.0f}×")
        rows.append([r["framework"], r["algorithm"], pct(r["target"], 0),
                     f"**{wall(hit['wall_s'])}**" if hit else f"not within {wall(r['wall_s'])}",
                     f"{hit['env_steps'] / 1e6:.2f} M" if hit else f"> {r['env_steps'] / 1e6:.2f} M",
                     pct(hit["win_rate"] if hit else r["final_win_rate"]), rate(r["env_steps_per_s"]), sooner])
    return table(["trainer", "what trains", "target (greedy win rate)", "time to target", "env steps",
                  "greedy win rate there", "env steps/s", "war-train sooner by"],
                 ["l", "l", "r", "r", "r", "r", "r", "r"], rows)


def benchmarl_dropin(report: dict) -> str:
    """``benchmarks/benchmarl_dropin.py``: BenchMARL's MAPPO on a VMAS task and on ours, same
    config, frames and seeds: each seed's final evaluation return, the means over the seeds, their
    relative difference against the run's tolerance (issue #25's 10 % on navigation, issue #49's
    5 % on a new scenario), then the protocol, versions, command and date."""
    runs, summary = report["runs"], report["summary"]
    by = {(r["env"], r["seed"]): r for r in runs}
    envs = ("vmas", "war")

    def cell(env, seed, key="final_eval_return"):
        r = by.get((env, seed))
        return num(r[key], 3) if r else "–"

    rows = []
    for seed in report["seeds"]:
        rows.append([str(seed), *(num(by[(e, seed)]["train_curve"][0], 3) if (e, seed) in by else "–" for e in envs),
                     *(cell(e, seed) for e in envs),
                     " / ".join(wall(by[(e, seed)]["wall_s"]) if (e, seed) in by else "–" for e in envs)])
    if all(e in summary for e in envs):
        rows.append(["**mean**", *(num(statistics.mean(r["train_curve"][0] for r in runs if r["env"] == e), 3)
                                   for e in envs),
                     *(f"**{num(summary[e]['mean_final_eval_return'], 3)}** ± {summary[e]['std_final_eval_return']:.3f}"
                       for e in envs),
                     " / ".join(wall(summary[e]["mean_wall_s"]) for e in envs)])
    text = f"{report['task']}:\n\n" + table(["seed", "VMAS: initial policy", "war-envs: initial policy", "VMAS: final eval", "war-envs: final eval",
                  "wall-clock VMAS / war-envs"], ["l", "r", "r", "r", "r", "r"], rows)
    cfg = runs[0]["config"]
    verdict = ""
    if "relative_difference" in summary:
        tolerance = summary.get("tolerance", report["tolerance"])
        within = summary["relative_difference"] <= tolerance
        verdict = (f"The means differ by {pct(summary['relative_difference'])} "
                   f"({'within' if within else '**not within**'} {pct(tolerance)}). ")
    late = []
    if all(e in summary for e in envs):   # less noisy views of the end of training, from the curves
        def late_mean(e, f):
            return statistics.mean(f(r) for r in runs if r["env"] == e)
        for what, f in (("the last three evaluations", lambda r: statistics.mean(p["return"] for p in r["eval_curve"][-3:])),
                        ("the last five training batches (sampled actions)", lambda r: statistics.mean(r["train_curve"][-5:]))):
            a, b = late_mean("vmas", f), late_mean("war", f)
            late.append(f"{what}: VMAS {num(a, 3)}, war-envs {num(b, 3)} ({pct(abs(a - b) / max(abs(a), abs(b)))})")
    versions = report["versions"]
    return text + (
        f"\n\n`{report['return_key']}` (each evaluation episode's reward averaged over the agents, summed over the "
        f"episode; the mean of {cfg['evaluation_episodes']} deterministic episodes) after the last iteration; the "
        f"initial policy's is `{report['train_curve_key']}` of the first batch (sampled actions); {grouped(cfg['max_n_frames'])} frames, {cfg['on_policy_collected_frames_per_batch']} per "
        f"iteration from {cfg['on_policy_n_envs_per_worker']} worlds, {cfg['on_policy_n_minibatch_iters']} passes of "
        f"minibatches of {cfg['on_policy_minibatch_size']}, lr {cfg['lr']:g}, everything else BenchMARL's yaml "
        f"defaults, one torch thread. " + verdict
        + (f"Means over the seeds of {'; of '.join(late)}. " if late else "")
        + f"BenchMARL {versions.get('benchmarl')}, torchrl {versions.get('torchrl')}, VMAS {versions.get('vmas')}. "
        f"`{report['command']}`, {report['date'][:10]}.")


RENDERERS = {
    "time-to-target": time_to_target,
    "time-to-target-smax": time_to_target_smax,
    "classic-throughput": classic_throughput,
    "vmas-throughput": vmas_throughput,
    "env-throughput": env_throughput,
    "env-throughput-readme": env_throughput_readme,
    "env-throughput-views": env_throughput_views,
    "train-speed": train_speed,
    "train-before-after": train_before_after,
    "learning-classic": learning_classic,
    "learning-spread": learning_spread,
    "learning-spread-readme": learning_spread_readme,
    "learning-speaker-listener": learning_speaker_listener,
    "learning-reference": learning_reference,
    "learning-spread-onpolicy": learning_spread_onpolicy,
    "learning-predator-prey": learning_predator_prey,
    "learning-smax": learning_smax,
    "learning-smax-table": learning_smax_table,
    "learning-tag": learning_tag,
    "learning-tag-summary": learning_tag_summary,
    "env-throughput-small": env_throughput_small,
    "env-throughput-smax": env_throughput_smax,
    "env-throughput-jaxmarl-games": env_throughput_jaxmarl_games,
    "env-throughput-smax-rounds": env_throughput_smax_rounds,
    "war-real": war_real,
    "war-real-seeds": war_real_seeds,
    "learning-relay": learning_relay,
    "war-planner-value": war_planner_value,
    "tag-baselines": tag_baselines,
    "learning-tag-gridworld": learning_tag_gridworld,
    "war-straggler": war_straggler,
    "benchmarl-dropin": benchmarl_dropin,
}


# ---------------------------------------------------------------- the blocks
def markdown_files() -> list[Path]:
    """README.md and every docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def render(spec: str, where: str) -> str:
    name, *files = spec.split()
    if name not in RENDERERS:
        raise ValueError(f"{where}: unknown renderer {name!r} (known: {', '.join(RENDERERS)})")
    if not files:
        raise ValueError(f"{where}: renderer {name!r} names no results file")
    data = []
    for f in files:
        path = RESULTS / f
        if not path.is_file():
            raise ValueError(f"{where}: results file benchmarks/results/{f} does not exist")
        data.append(json.loads(path.read_text()))
    return RENDERERS[name](*data)


def process(path: Path, write: bool) -> list[str]:
    """Regenerate the blocks of one file; returns a line per block that differed."""
    text = path.read_text()
    stale = []

    def replace(m: re.Match) -> str:
        line = text.count("\n", 0, m.start()) + 1
        where = f"{path.relative_to(ROOT)}:{line}"
        body = "\n" + render(m["spec"], where) + "\n\n"
        if m["body"] != body:
            stale.append(f"{where}: block `{m['spec']}` differs from its results file")
        return f"<!-- table: {m['spec']} -->\n{body}<!-- /table -->"

    new = BLOCK.sub(replace, text)
    opened = len(re.findall(r"^<!-- table: ", text, re.M))
    if opened != len(BLOCK.findall(text)) or len(re.findall(r"^<!-- /table -->$", text, re.M)) != opened:
        raise ValueError(f"{path.relative_to(ROOT)}: a `<!-- table: ... -->` marker without its `<!-- /table -->`")
    if write and new != text:
        path.write_text(new)
    return stale


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 if a block is out of date")
    args = p.parse_args(argv)
    stale = []
    for path in markdown_files():
        stale += process(path, write=not args.check)
    if args.check and stale:
        print("\n".join(stale) + "\nrun `python scripts/tables.py` to regenerate them", file=sys.stderr)
        return 1
    if not args.check:
        for line in stale:
            print("rewrote " + line.split(": block")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
