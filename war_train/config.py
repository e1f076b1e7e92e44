"""The trainer's configuration: ``TrainConfig`` (every run) and its WAR section ``WarConfig`` (the
WAR harness: ``war-train train ... --war``), dataclasses whose field help texts become
``war-train --help`` (``WarConfig``'s as ``--arm`` and ``--war-<field>``).  Imports nothing heavy:
the CLI builds its parser from it.

Defaults are the MAPPO paper's on-policy settings for MPE (marlbenchmark/on-policy,
``simple_spread``): 128 worlds x 25 steps per update, lr 7e-4, 10 epochs, 1 minibatch, clip
0.2, entropy 0.01, gamma 0.99, GAE lambda 0.95, Huber value loss (delta 10) with value
clipping, running value normalizer (beta 0.99999), Adam eps 1e-5, LayerNorm, hidden 64, Tanh,
policy head gain 0.01, max grad norm 10.  Scenario presets (``war_train.presets``) override a
few of them to learn faster on a small CPU.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from war_train.presets.onpolicy import PRESET as _ONPOLICY

__all__ = ["TrainConfig", "Coefficients", "config_fields", "config_from_dict", "config_to_dict", "WarConfig",
           "war_config_from_dict", "war_config_to_dict", "WAR_OPTION_PREFIX"]


@dataclasses.dataclass(frozen=True)
class Coefficients:
    """The scheduled coefficients of one update (``TrainConfig.schedule``): what the learn step
    (``war_train.learn.step``) applies.  A new coefficient with a schedule is a field here, its
    schedule in ``TrainConfig.schedule`` and its use in the loss."""

    lr: float            # actor learning rate (before a group's ``group_lr_scale``)
    critic_lr: float     # critic learning rate (likewise)
    entropy_coef: float  # entropy bonus
    temperature: float = 1.0   # sampling temperature of categorical heads (rollouts and the PPO loss)


def _f(default, help: str, **kw):
    """A dataclass field carrying its ``--help`` text."""
    if isinstance(default, (dict, list)):
        return dataclasses.field(default_factory=lambda d=default: json.loads(json.dumps(d)),
                                 metadata={"help": help, **kw})
    return dataclasses.field(default=default, metadata={"help": help, **kw})


@dataclasses.dataclass
class TrainConfig:
    """MAPPO hyperparameters and run settings (defaults: the on-policy code's MPE settings)."""

    # ---------------------------------------------------------------- environment
    scenario: str = _f(_ONPOLICY["scenario"], "registered war_envs id to train on")
    env_kwargs: dict = _f({}, "scenario arguments passed to war_envs.make, as JSON "
                              "(e.g. '{\"N\": 3, \"local_ratio\": 0.5}')")
    num_envs: int = _f(128, "parallel worlds stepped per kernel launch (on-policy: 128 rollout threads)")
    rollout_length: int = _f(25, "steps per world collected per update (on-policy: episode_length 25)")
    total_env_steps: int = _f(20_000_000, "training budget in env steps (world steps; "
                                          "agent steps = env steps x agents per world)")
    seed: int = _f(1, "seed of the env worlds, the network initialisation and the action sampler")
    device: str = _f("cpu", "torch/Warp device for env and networks: cpu or cuda:N")
    torch_threads: int = _f(1, "torch intra-op threads (results are reproducible for a fixed count)")
    precision: str = _f("float32", "env world precision: float32 or float64")

    # ---------------------------------------------------------------- optimisation
    lr: float = _f(7e-4, "actor learning rate (Adam)")
    critic_lr: float = _f(7e-4, "critic learning rate (Adam)")
    anneal_lr: bool = _f(False, "decay both learning rates linearly to 0 over the run")
    group_lr_scale: dict = _f({}, "per-group factor on both learning rates, as JSON (e.g. '{\"runner\": 0.2}'; "
                                  "groups left out: 1); WarpDrive's Tag config also trains its groups at "
                                  "different rates")
    adam_eps: float = _f(1e-5, "Adam epsilon")
    epochs: int = _f(10, "PPO epochs over each batch")
    num_minibatches: int = _f(1, "minibatches per epoch (split over worlds x steps)")
    gamma: float = _f(0.99, "discount factor")
    gae_lambda: float = _f(0.95, "GAE lambda")
    bootstrap_truncation: bool = _f(True, "a time-limit truncation bootstraps the return with V(final state), as if "
                                          "the episode could go on (False: it ends the return as a termination "
                                          "does, as JaxMARL's MAPPO treats every done; for tasks scored within "
                                          "the time limit, e.g. SMAX-v0, where a battle still open at the limit "
                                          "is a draw worth no win bonus)")
    clip_coef: float = _f(0.2, "PPO ratio clip (also the value clip, in normalized units)")
    entropy_coef: float = _f(0.01, "entropy bonus coefficient")
    anneal_entropy: bool = _f(False, "decay the entropy coefficient linearly to 0 over the run")
    final_temperature: float = _f(1.0, "Discrete/MultiDiscrete actors: the sampling temperature at the end of the "
                                       "run (1: off).  From temperature_start of the run on, rollouts, the PPO "
                                       "loss and its entropy use the policy at logits / temperature, the "
                                       "temperature going linearly from 1 to this, so that late rollouts play "
                                       "nearly as the greedy policy does and training meets (and unlearns) what "
                                       "only greedy play does: e.g. SMAX-v0 allies that wait, out of the enemies' "
                                       "sight, for an ambush a sampled policy's jitter would have sprung; greedy "
                                       "actions are unchanged")
    temperature_start: float = _f(0.5, "fraction of the run after which final_temperature's anneal begins")
    value_coef: float = _f(1.0, "value loss coefficient")
    max_grad_norm: float = _f(10.0, "gradient norm clip, actor and critic separately (<= 0: off)")
    use_huber_loss: bool = _f(True, "Huber value loss (else squared error)")
    huber_delta: float = _f(10.0, "Huber loss delta")
    clip_value_loss: bool = _f(True, "clip value predictions around the rollout values (max of clipped and unclipped loss)")
    value_norm: bool = _f(True, "normalize value targets with a running mean/std (per group)")
    value_norm_beta: float = _f(0.99999, "decay of the value normalizer's running moments")
    norm_advantages: bool = _f(True, "normalize advantages over the full batch of each group")

    # ---------------------------------------------------------------- networks
    hidden_size: int = _f(64, "width of every hidden layer (and of the GRU)")
    num_layers: int = _f(2, "hidden layers of each MLP")
    group_network: dict = _f({}, "per-group network size, as JSON: group -> {\"hidden_size\": H, \"num_layers\": L} "
                                  "for that group's actor and critic (e.g. '{\"commander\": {\"hidden_size\": 1024}}': "
                                  "a planner that really computes beside cheap sentries); groups left out: "
                                  "hidden_size / num_layers")
    activation: str = _f("tanh", "hidden activation: tanh or relu")
    layer_norm: bool = _f(True, "LayerNorm on network inputs and after each hidden layer")
    use_gru: bool = _f(False, "add a GRU after the MLP of actor and critic (recurrent MAPPO); "
                              "trained by back-propagation through the whole rollout; in the WAR mode a "
                              "group's GRU steps only at its decisions (held between them)")
    agent_id: bool = _f(False, "append a one-hot agent index (within its group) to each actor input")
    share_actor: bool = _f(False, "one actor for every group (parameter-sharing MAPPO with heterogeneous agents): "
                                  "each agent's input zero-padded to the largest group's and a one-hot group id "
                                  "appended; the groups' actor losses combine with group-balancing weights "
                                  "(each group weighs its lock-step share of the agents, whatever its share of a "
                                  "WAR batch); needs one action space for all groups; critics stay per group")
    frame_stack: int = _f(1, "actor input: the agent's last N observations, newest first (zeros before its "
                             "episode's first), a feed-forward memory (e.g. Tag-v0, whose observations hold no "
                             "own heading); a local critic sees the same stack")
    policy_gain: float = _f(0.01, "orthogonal init gain of the policy head")
    critic_input: str = _f("state", "'state': one centralized critic per group on env.state() with a value per agent "
                                    "(MAPPO); 'world': the same on the env's world state (a scenario that declares "
                                    "one, e.g. SMAX-v0's JaxMARL get_world_state: every unit's position, health and "
                                    "cooldown, enemies included) followed by env.state(); 'world_only': the world "
                                    "state alone (JaxMARL's MAPPO critic; its size grows with the units, not with "
                                    "their square as env.state()'s does); 'local': a "
                                    "parameter-shared critic on each agent's own observation (IPPO/WarpDrive style; "
                                    "scales to thousands of agents per world)")
    critic_time: bool = _f(False, "the centralized critics also see the episode's elapsed fraction t / max_cycles "
                                  "(time-awareness, Pardo et al. 2018): where the time limit is part of the task "
                                  "(SMAX-v0: a battle open at the limit is a draw), a state's value depends on the "
                                  "time left, which no observation or world state shows; needs "
                                  "bootstrap_truncation=False (the limit is then a termination) and a 'state' or "
                                  "'world' critic")
    init_log_std: float = _f(0.0, "Box action spaces: initial log standard deviation of the Gaussian head, in "
                                  "normalized units (1 = half the box's width)")

    # ---------------------------------------------------------------- distributed (torchrun)
    dist_straggler: str = _f("off", "under torchrun: 'off' (synchronous: K ranks compute what one process with "
                                    "num_envs worlds computes), 'preempt' (DD-PPO: stop slow ranks early) or "
                                    "'war' (per-rank rollout quotas from measured speed, plus preemption)")
    dist_sync_frac: float = _f(0.6, "DD-PPO preemption: slow ranks stop once this fraction of ranks "
                                    "(rounded up) has finished its rollout")
    dist_min_frac: float = _f(0.25, "DD-PPO preemption: a rank stops only after collecting this fraction of its "
                                    "rollout (also the smallest WAR quota)")
    dist_rank_weights: str = _f("samples", "straggler modes: 'samples' (every transition weighs the same) or "
                                           "'balanced' (each rank keeps its lock-step share, as DD-PPO's average)")

    # ---------------------------------------------------------------- planner
    planner: str = _f("", "a group of one agent (Discrete actions) that decides by a PUCT search over copies of its "
                          "worlds, their hidden future re-drawn: its actor is the prior, its critic the leaf "
                          "value, the other groups act with their policies inside; it learns by PPO on the "
                          "search's actions, the search's improved policy their behaviour probability, plus "
                          "planner_distill x their cross-entropy (war_train.plan; '': none)")
    planner_simulations: int = _f(16, "planner: simulations per decision (each one batched env step over the "
                                      "deciding worlds)")
    planner_depth: int = _f(4, "planner: the most steps one simulation looks ahead")
    planner_c_puct: float = _f(1.25, "planner: PUCT weight of the prior against the (min-max normalised) Q")
    planner_ratio: str = _f("search", "planner: the behaviour probability PPO's ratio divides by: 'search' (the "
                                      "search's improved policy: importance-corrected) or 'policy' (the group's own "
                                      "policy's probability of the searched action: the search's actions taught as "
                                      "if the policy had sampled them)")
    planner_distill: float = _f(1.0, "planner: weight of the group's cross-entropy to the searched actions (samples "
                                     "of the search's improved policy: AlphaZero/MuZero's policy target), added "
                                     "to its PPO loss (0: PPO alone, which learns less on Relay-v0: docs/war.md)")

    # ---------------------------------------------------------------- run outputs
    checkpoint_every: int = _f(20, "write a checkpoint every N updates (0: only at the end)")
    eval_episodes: int = _f(100, "episodes of the final greedy evaluation (0: skip)")
    gif: bool = _f(True, "render one greedy episode to episode.gif at the end of the run")
    tensorboard: bool = _f(True, "write TensorBoard events (needs the tensorboard package)")
    progress: bool = _f(True, "show a progress bar on stderr")
    profile: bool = _f(False, "log the seconds of each update spent in the env step, the policy (forward passes, "
                              "sampling), learning and the rest (time/*_s columns); on CUDA this synchronizes "
                              "at each phase boundary")

    # ---------------------------------------------------------------- policy selection
    select_every: int = _f(0, "every N updates (and after the last) play select_episodes greedy episodes on the "
                              "run's selection worlds (a stream no run trains or is evaluated on) and keep the "
                              "networks that score best on select_metric: the run's result, evaluation and GIF "
                              "use them (0: the last update's networks)")
    select_episodes: int = _f(1000, "episodes of each selection evaluation (select_every > 0)")
    select_metric: str = _f("auto", "the episode statistic selection maximizes: 'auto' (the scenario's progress "
                                    "metric, the progress bar's: SMAX-v0's won, a VMAS task's success, ...), "
                                    "episode_return, episode_return/<group> or a metric the scenario declares")
    restarts: int = _f(0, "with select_every: train up to this many more policies after the first, one after "
                          "another while the best selected score is below restart_below, each a complete run "
                          "in <run>/restart_<k>/ with its own network initialisation, sampling and training "
                          "worlds (war_train.run.restarts); the run keeps the restart that scored best; each "
                          "restart costs a whole run")
    restart_below: float = _f(math.inf, "restarts: stop restarting once a restart's selected score reaches this "
                                        "(inf: train every restart and keep the best)")

    # ---------------------------------------------------------------- derived
    @property
    def batch_env_steps(self) -> int:
        """Env steps per update."""
        return self.num_envs * self.rollout_length

    @property
    def num_updates(self) -> int:
        return max(1, self.total_env_steps // self.batch_env_steps)

    def schedule(self, update: int) -> Coefficients:
        """The coefficients of update ``update`` (1-based): constant, or decayed linearly to 0
        over the run with ``anneal_lr`` / ``anneal_entropy``; the temperature 1 until
        ``temperature_start`` of the run, then linearly to ``final_temperature``."""
        frac = 1.0 - (update - 1) / self.num_updates
        lr_frac = frac if self.anneal_lr else 1.0
        done = (update - 1) / self.num_updates   # fraction of the run before this update
        start = self.temperature_start
        cool = 0.0 if done <= start else (done - start) / (1.0 - start)
        return Coefficients(lr_frac * self.lr, lr_frac * self.critic_lr,
                            self.entropy_coef * (frac if self.anneal_entropy else 1.0),
                            1.0 - (1.0 - self.final_temperature) * cool)

    def validate(self) -> "TrainConfig":
        """Raise ``ValueError`` naming the first bad field."""
        self._validate_flags()
        self._validate_numbers()
        self._validate_choices()
        return self

    def _validate_flags(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type in ("bool", bool) and not isinstance(value, bool):
                raise ValueError(f"{field.name}: expected True or False, got {value!r}")

    def _validate_numbers(self) -> None:
        positive_int = ("num_envs", "rollout_length", "total_env_steps", "torch_threads", "epochs",
                        "num_minibatches", "hidden_size", "num_layers", "frame_stack", "select_episodes",
                        "planner_simulations", "planner_depth")
        for name in positive_int:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {value!r}")
        for name in ("checkpoint_every", "eval_episodes", "seed", "select_every", "restarts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name}: expected an integer >= 0, got {value!r}")
        for name in ("lr", "critic_lr", "adam_eps", "huber_delta", "value_norm_beta", "policy_gain",
                     "planner_c_puct"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise ValueError(f"{name}: expected a number > 0, got {value!r}")
        for name in ("gamma", "gae_lambda"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}: expected a number in [0, 1], got {value!r}")
        for name in ("clip_coef", "entropy_coef", "value_coef", "max_grad_norm"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
                raise ValueError(f"{name}: expected a number, got {value!r}")
        if self.clip_coef <= 0:
            raise ValueError(f"clip_coef: expected a number > 0, got {self.clip_coef!r}")
        if not 0 < self.value_norm_beta <= 1:
            raise ValueError(f"value_norm_beta: expected a number in (0, 1], got {self.value_norm_beta!r}")
        if not isinstance(self.init_log_std, (int, float)) or isinstance(self.init_log_std, bool) or \
                not math.isfinite(self.init_log_std):
            raise ValueError(f"init_log_std: expected a finite number, got {self.init_log_std!r}")
        if isinstance(self.final_temperature, bool) or not isinstance(self.final_temperature, (int, float)) or \
                not 0.0 < self.final_temperature <= 1.0:
            raise ValueError(f"final_temperature: expected a number in (0, 1], got {self.final_temperature!r}")
        if isinstance(self.temperature_start, bool) or not isinstance(self.temperature_start, (int, float)) or \
                not 0.0 <= self.temperature_start < 1.0:
            raise ValueError(f"temperature_start: expected a number in [0, 1), got {self.temperature_start!r}")
        for name in ("dist_sync_frac", "dist_min_frac"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 < value <= 1.0:
                raise ValueError(f"{name}: expected a number in (0, 1], got {value!r}")

    def _validate_choices(self) -> None:
        if self.critic_input not in ("state", "world", "world_only", "local"):
            raise ValueError(f"critic_input: expected 'state', 'world', 'world_only' or 'local', "
                             f"got {self.critic_input!r}")
        if self.frame_stack > 1 and self.use_gru:
            raise ValueError("frame_stack: stacking is a feed-forward memory; use frame_stack=1 with use_gru=True")
        if self.share_actor:
            for name, bad, why in (("use_gru", self.use_gru, "use_gru=False"),
                                   ("frame_stack", self.frame_stack != 1, "frame_stack=1"),
                                   ("critic_input", self.critic_input == "local", "critic_input='state' or 'world'"),
                                   ("group_lr_scale", bool(self.group_lr_scale), "no group_lr_scale"),
                                   ("group_network", bool(self.group_network), "no group_network")):
                if bad:
                    raise ValueError(f"{name}: share_actor trains one feed-forward actor of one size and learning "
                                     f"rate for every group beside per-group state critics; use {why}")
        if self.critic_time and (self.bootstrap_truncation or self.critic_input == "local"):
            raise ValueError("critic_time: a critic that sees the time left treats the time limit as part of the "
                             "task, a termination; use bootstrap_truncation=False with critic_input='state' or "
                             f"'world' (got bootstrap_truncation={self.bootstrap_truncation}, "
                             f"critic_input={self.critic_input!r})")
        if self.critic_input == "local" and self.use_gru:
            raise ValueError("critic_input: a 'local' critic is feed-forward; use use_gru=False or critic_input='state'")
        if self.activation not in ("tanh", "relu"):
            raise ValueError(f"activation: expected 'tanh' or 'relu', got {self.activation!r}")
        if self.planner_ratio not in ("search", "policy"):
            raise ValueError(f"planner_ratio: expected 'search' or 'policy', got {self.planner_ratio!r}")
        if not (math.isfinite(self.planner_distill) and self.planner_distill >= 0):
            raise ValueError(f"planner_distill: expected a finite float >= 0, got {self.planner_distill!r}")
        if self.precision not in ("float32", "float64"):
            raise ValueError(f"precision: expected 'float32' or 'float64', got {self.precision!r}")
        if self.dist_straggler not in ("off", "preempt", "war"):
            raise ValueError(f"dist_straggler: expected 'off', 'preempt' or 'war', got {self.dist_straggler!r}")
        if self.dist_rank_weights not in ("samples", "balanced"):
            raise ValueError(f"dist_rank_weights: expected 'samples' or 'balanced', got {self.dist_rank_weights!r}")
        if not isinstance(self.group_lr_scale, dict) or not all(
                isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                and math.isfinite(v) for k, v in self.group_lr_scale.items()):
            raise ValueError(f"group_lr_scale: expected a dict of group name -> number >= 0, got "
                             f"{self.group_lr_scale!r}")
        if not isinstance(self.group_network, dict) or not all(
                isinstance(g, str) and isinstance(sizes, dict) and set(sizes) <= {"hidden_size", "num_layers"}
                and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in sizes.values())
                for g, sizes in self.group_network.items()):
            raise ValueError(f"group_network: expected a dict of group name -> {{'hidden_size': int >= 1, "
                             f"'num_layers': int >= 1}}, got {self.group_network!r}")
        if not isinstance(self.select_metric, str) or not self.select_metric:
            raise ValueError(f"select_metric: expected the name of an episode statistic, got {self.select_metric!r}")
        if isinstance(self.restart_below, bool) or not isinstance(self.restart_below, (int, float)) or \
                math.isnan(self.restart_below):
            raise ValueError(f"restart_below: expected a number (inf: every restart), got {self.restart_below!r}")
        if self.restarts and not self.select_every:
            raise ValueError(f"restarts: {self.restarts} restarts pick a policy by its selection score; set "
                             f"select_every > 0 (or restarts=0)")
        if not isinstance(self.env_kwargs, dict):
            raise ValueError(f"env_kwargs: expected a dict, got {type(self.env_kwargs).__name__}")
        if not isinstance(self.scenario, str) or not self.scenario:
            import war_envs

            raise ValueError(f"scenario: expected a registered war_envs id (one of {war_envs.registry.registered_ids()}), "
                             f"got {self.scenario!r}")
        samples = self.num_envs * self.rollout_length
        if self.num_minibatches > (self.num_envs if self.use_gru else samples):
            unit = "worlds (minibatches split worlds when use_gru)" if self.use_gru else "samples per batch"
            raise ValueError(f"num_minibatches: expected at most the {unit}, got {self.num_minibatches}")


def config_fields() -> list[dataclasses.Field]:
    return list(dataclasses.fields(TrainConfig))


def config_to_dict(config: TrainConfig) -> dict[str, Any]:
    """Plain dict (JSON and ``torch.load(weights_only=True)`` friendly)."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


def config_from_dict(values: dict[str, Any]) -> TrainConfig:
    """Build a config from a dict; unknown keys raise ``ValueError`` listing the valid ones."""
    names = {f.name for f in config_fields()}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(f"unknown config fields {unknown}; valid fields: {sorted(names)}")
    return TrainConfig(**values).validate()


# ----------------------------------------------------------------------------- the WAR section
#: option prefix of every field but ``arm``
WAR_OPTION_PREFIX = "--war-"



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
                                "interval exceeds 1 in the schedule planned from declared costs; cost_mode=real "
                                "plans from measured ones, so it needs them named)")
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
        if self.fill == "draft" and self.cost_mode == "real" and not self.draft_groups:
            raise ValueError("draft_groups: with cost_mode='real' the decision intervals are planned from costs "
                             "measured while training, so which groups hold between decisions is not known when "
                             "the drafts are built; name the groups that get one (e.g. draft_groups=['commander'])")
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
