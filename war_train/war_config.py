"""Settings of the WAR harness (``war-train train ... --war``): the arm, cost profiles, resource
model, scheduler and off-policy options.  A dataclass whose field help texts become options of
``war-train train`` (prefixed ``--war-``, except ``--arm``), like ``TrainConfig``'s.

Imports nothing heavy: the CLI builds its parser from it.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

__all__ = ["WarConfig", "ARTICLE_COSTS", "war_config_from_dict", "war_config_to_dict",
           "WAR_OPTION_PREFIX"]

#: option prefix of every field but ``arm``
WAR_OPTION_PREFIX = "--war-"

#: the source article's case: 1 agent at 50 ms + 9 at 5 ms per decision
ARTICLE_COSTS = {"commander": {"per_decision_ms": 50.0}, "sentry": {"per_decision_ms": 5.0}}


def _f(default, help: str):
    if isinstance(default, (dict, list)):
        return dataclasses.field(default_factory=lambda d=default: json.loads(json.dumps(d)), metadata={"help": help})
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass
class WarConfig:
    """How rollouts are generated and which arm of the harness trains."""

    arm: str = _f("war", "harness arm: war (workload-aware rollouts), sync (lock-step MAPPO), ddppo (lock-step "
                         "with DD-PPO preemption of straggling workers), overlap (HTS-RL one-step overlap of "
                         "learning and collection), steal (lock-step with work stealing: a worker done early "
                         "takes over worlds of a straggling one; nothing dropped; virtual costs, windows of "
                         "rollout_length steps)")
    costs: dict = _f({}, "declared cost per group as JSON, e.g. '{\"commander\": {\"per_decision_ms\": 50}, "
                         "\"sentry\": {\"per_decision_ms\": 5}}' (keys per_call_ms, per_decision_ms); groups "
                         "left out are measured online from their real policy-call times. Empty: the "
                         "scenario's default (war_train.presets.DECLARED_WAR_COSTS: the article's 50 ms + "
                         "9x5 ms for the commander scenario), else measured")
    cost_mode: str = _f("virtual", "how declared costs are paid: virtual (advance a modelled clock: "
                                   "deterministic, instant), sleep (wait for real: remote inference), busy "
                                   "(burn CPU for real; shared resource model only); or real: nothing "
                                   "declared (costs must be empty), the worker's clock is the wall clock and "
                                   "a policy call costs what it takes; under the parallel resource model "
                                   "each lane (group) calls its policy on its own thread, pinned to "
                                   "lane_cpus, so the groups' forward passes really run at the same time")
    lane_cpus: dict = _f({}, "cost_mode=real, parallel: CPU ids per lane as JSON, e.g. '{\"commander\": [0], "
                             "\"sentry\": [1]}' (lanes left out: not pinned)")
    cost_scale: float = _f(1.0, "multiply every declared cost (quotas are scale-invariant; shrinks real sleeps)")
    jitter: float = _f(0.0, "multiply each declared call's cost by U(1-j, 1+j)")
    straggler: float = _f(1.0, "multiply the last worker's declared costs by this (a slower machine: the "
                               "straggler DD-PPO preempts)")
    resource: str = _f("parallel", "inference resources of a worker: parallel (each group on its own worker, "
                                   "its agents evaluated in parallel: a step waits for the slowest group) or "
                                   "shared (one device evaluates every decision in turn: costs add up)")
    workers: int = _f(1, "rollout workers, each with its own shard of the worlds, resources and clock "
                         "(num_envs must divide evenly)")
    fragment_length: int = _f(0, "L of the quota formula, in transitions per fragment (0: rollout_length)")
    floor: int = _f(3, "K: the least fragments a group gets per window")
    alpha: float = _f(1.0, "alpha of the quota formula N_g = max(K, round(alpha*share_g*B/L))")
    batch_transitions: int = _f(0, "B: end a window once this many agent-transitions are ready "
                                   "(0: a window is rollout_length env steps)")
    max_wait: float = _f(0.0, "T_max_wait: end a window after this many seconds on the worker's clock (0: off)")
    max_lag: int = _f(2, "drop transitions whose behaviour policy is more than this many versions old")
    fill: str = _f("hold", "between its decisions a group holds its last action (hold) or its draft policy "
                           "acts (draft: the draft is distilled from the group's policy every update and its "
                           "samples are importance-corrected through the PPO ratio)")
    draft_groups: list = _f([], "groups with a draft policy under fill=draft (empty: every group whose decision "
                                "interval exceeds 1)")
    draft_costs: dict = _f({}, "declared cost of each draft policy, like costs (default: the cheapest "
                               "group's declared cost)")
    draft_hidden: int = _f(16, "hidden width of a draft policy")
    vtrace: str = _f("auto", "V-trace targets and advantages (rho_bar = c_bar = 1): auto (when some "
                             "transition is more than one version old), always, off (GAE on stored values)")
    replan: bool = _f(True, "re-plan quotas every window from the online cost estimates (EMA)")
    cost_beta: float = _f(0.9, "EMA weight on the past of the online cost models")
    ddppo_sync_frac: float = _f(0.6, "DD-PPO: preempt once this fraction of the workers has finished")
    ddppo_min_frac: float = _f(0.25, "DD-PPO: a worker is preempted only after this fraction of its window")
    seed: int = _f(0, "seed of the cost jitter")
    env_time: bool = _f(True, "virtual clocks also count the measured env-step and world-copy seconds (False: "
                              "only the declared costs, so DD-PPO preemptions, steals and time triggers are a "
                              "function of the seeds alone, whatever the machine's load)")

    def validate(self) -> "WarConfig":
        choices = {"arm": ("war", "sync", "ddppo", "overlap", "steal"),
                   "cost_mode": ("virtual", "sleep", "busy", "real"),
                   "resource": ("parallel", "shared"), "fill": ("hold", "draft"),
                   "vtrace": ("auto", "always", "off")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}: expected one of {list(allowed)}, got {getattr(self, name)!r}")
        for name in ("workers", "floor", "draft_hidden"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {value!r}")
        for name in ("fragment_length", "batch_transitions", "max_lag", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name}: expected an integer >= 0, got {value!r}")
        for name, low, high in (("cost_scale", 0.0, None), ("jitter", 0.0, 0.99), ("straggler", 0.0, None),
                                ("alpha", 0.0, None),
                                ("max_wait", 0.0, None), ("cost_beta", 0.0, 0.999),
                                ("ddppo_sync_frac", 0.0, 1.0), ("ddppo_min_frac", 0.0, 1.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < low \
                    or (high is not None and value > high):
                raise ValueError(f"{name}: expected a number in [{low}, {high if high is not None else 'inf'}], "
                                 f"got {value!r}")
        for name in ("costs", "draft_costs"):
            table = getattr(self, name)
            if not isinstance(table, dict):
                raise ValueError(f"{name}: expected a JSON object {{group: {{per_call_ms, per_decision_ms}}}}")
            for g, spec in table.items():
                if not isinstance(spec, dict) or set(spec) - {"per_call_ms", "per_decision_ms"}:
                    raise ValueError(f"{name}[{g!r}]: expected {{'per_call_ms': ms, 'per_decision_ms': ms}}, "
                                     f"got {spec!r}")
        if self.cost_mode == "real" and (self.costs or self.draft_costs):
            raise ValueError("costs: cost_mode=real measures every policy call; declare no costs (got "
                             f"{sorted(self.costs) + sorted(self.draft_costs)})")
        if not isinstance(self.lane_cpus, dict) or not all(
                isinstance(k, str) and isinstance(c, list) and c and all(isinstance(i, int) and i >= 0 for i in c)
                for k, c in self.lane_cpus.items()):
            raise ValueError(f"lane_cpus: expected a dict of lane -> non-empty list of CPU ids, got {self.lane_cpus!r}")
        if not isinstance(self.draft_groups, list):
            raise ValueError("draft_groups: expected a list of group names")
        if self.arm == "ddppo" and self.workers < 2:
            raise ValueError("workers: DD-PPO preempts straggling workers; expected workers >= 2 with arm=ddppo")
        if self.arm == "steal":
            if self.workers < 2:
                raise ValueError("workers: work stealing moves worlds between workers; expected workers >= 2 "
                                 "with arm=steal")
            if self.cost_mode != "virtual":
                raise ValueError(f"cost_mode: work stealing is simulated on virtual clocks; expected 'virtual' "
                                 f"with arm=steal, got {self.cost_mode!r}")
            if self.batch_transitions or self.max_wait:
                raise ValueError("batch_transitions, max_wait: work stealing needs windows of rollout_length "
                                 "steps (a moved world's transitions land in the same rows); expected 0 with "
                                 "arm=steal")
        return self


def war_config_to_dict(config: WarConfig) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(config)))


def war_config_from_dict(values: dict[str, Any]) -> WarConfig:
    names = {f.name for f in dataclasses.fields(WarConfig)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(f"unknown WAR config fields {unknown}; valid fields: {sorted(names)}")
    return WarConfig(**values).validate()


# ----------------------------------------------------------------------------- CLI
def _option(name: str) -> str:
    return "--arm" if name == "arm" else WAR_OPTION_PREFIX + name.replace("_", "-")


def add_war_options(parser) -> None:
    """``--war`` and one option per ``WarConfig`` field (``--arm``, ``--war-<field>``) on the
    ``train`` parser; all default to SUPPRESS so that only given options override."""
    import argparse

    def json_value(kind):
        def parse(text):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise argparse.ArgumentTypeError(f"expected JSON, got {text!r} ({exc.msg})") from None
            if not isinstance(value, kind):
                raise argparse.ArgumentTypeError(f"expected a JSON {kind.__name__}, got {text!r}")
            return value
        return parse

    group = parser.add_argument_group(
        "WAR harness (Workload-Aware Rollouts; WarConfig fields)",
        "--war (or any of these options) trains in the WAR mode (war_train.war_mode) instead of lock-step; see docs/war.md.")
    group.add_argument("--war", action="store_true", default=argparse.SUPPRESS,
                       help="train on WAR batches (arm war unless --arm says otherwise)")
    defaults = WarConfig()
    for field in dataclasses.fields(WarConfig):
        default = getattr(defaults, field.name)
        help_text = f"{field.metadata['help']} (default: {json.dumps(default)})"
        kind = field.type if isinstance(field.type, str) else field.type.__name__
        if kind == "bool":
            group.add_argument(_option(field.name), dest=f"war__{field.name}", action=argparse.BooleanOptionalAction,
                               default=argparse.SUPPRESS, help=help_text)
        elif kind in ("dict", "list"):
            group.add_argument(_option(field.name), dest=f"war__{field.name}", default=argparse.SUPPRESS,
                               type=json_value(dict if kind == "dict" else list), metavar="JSON", help=help_text)
        else:
            typ = {"int": int, "float": float, "str": str}[kind]
            group.add_argument(_option(field.name), dest=f"war__{field.name}", type=typ, default=argparse.SUPPRESS,
                               metavar=typ.__name__.upper(), help=help_text)


def resolve_war_config(args) -> WarConfig | None:
    """The ``WarConfig`` the options ask for, or None when no WAR option was given."""
    given = {k[len("war__"):]: v for k, v in vars(args).items() if k.startswith("war__")}
    if not given and not getattr(args, "war", False):
        return None
    return war_config_from_dict(given)
