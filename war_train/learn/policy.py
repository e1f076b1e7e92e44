"""A group's policy (actor + critic + action head), how to build one per group of an env, and how
checkpoints describe and restore them.

Per group: a parameter-shared actor on each agent's observation (plus a one-hot agent index with
``agent_id``) whose output parameterises the group's action head (``war_train.learn.distributions``:
Discrete, MultiDiscrete or Box), and a critic — centralized on ``env.state()`` with one value
per agent of the group (``critic_input="state"``, MAPPO; ``"world"``: on the env's world state
and ``env.state()``; ``"world_only"``: on the world state alone), or parameter-shared on each
agent's own observation (``"local"``).
"""

from __future__ import annotations

import dataclasses

import gymnasium
import torch
from torch import nn

from war_envs.core.validation import check_action_mask, check_keys
from war_train.checkpoint import load_checkpoint, malformed_entries
from war_train.config import TrainConfig
from war_train.learn.distributions import Categorical, action_head, space_from_signature, space_signature
from war_train.learn.networks import Actor, Critic, with_agent_id

__all__ = ["CriticState", "GroupPolicy", "build_policies", "critic_state_dim", "host_reads_are_free", "joint_state", "set_temperature", "env_signature", "load_networks", "load_policies",
           "first_action_mask", "step_action_mask", "push_frame"]


def push_frame(frames: torch.Tensor, obs: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
    """A frame stack ``[E, n, F·d]`` (newest first) with ``obs[E, n, d]`` pushed in; in worlds
    where ``starts`` (a new episode begins at ``obs``) zeros behind it."""
    d = obs.shape[-1]
    older = frames[..., :-d] * (~starts).to(frames.dtype)[:, None, None]
    return torch.cat([obs, older], dim=-1)


class GroupPolicy(nn.Module):
    """Actor + critic of one group.  ``act`` is what evaluation and rendering use."""

    def __init__(self, n_agents: int, obs_dim: int, action_space, state_dim: int, cfg: TrainConfig,
                 group: str = "", shared: tuple[Actor, torch.Tensor, int] | None = None) -> None:
        """``shared``: ``(actor, group code, width)`` with ``share_actor``: the actor every group
        uses, this group's one-hot id, and the width its inputs are zero-padded to before it."""
        super().__init__()
        cfg = group_config(cfg, group)
        self.n_agents, self.obs_dim, self.state_dim = n_agents, obs_dim, state_dim
        self.action_space = action_space
        self.agent_id = cfg.agent_id
        self.recurrent = cfg.use_gru
        self.hidden_size = cfg.hidden_size
        self.local_critic = cfg.critic_input == "local"
        self.frames = cfg.frame_stack
        in_dim = self.frames * obs_dim + (n_agents if cfg.agent_id else 0)
        self.pad_to = None
        if shared is not None:
            self.actor, code, self.pad_to = shared
            self.register_buffer("group_code", code, persistent=False)
        else:
            self.actor = Actor(in_dim, action_head(action_space, cfg.init_log_std, group), cfg)
        self.critic = Critic(in_dim, 1, cfg) if self.local_critic else Critic(state_dim, n_agents, cfg)

    @property
    def dist(self):
        """The action head (``war_train.learn.distributions``)."""
        return self.actor.dist

    def actor_input(self, obs: torch.Tensor) -> torch.Tensor:
        x = with_agent_id(obs) if self.agent_id else obs
        if self.pad_to is None:
            return x
        # share_actor: [x, zeros up to the widest group's input, one-hot group id]
        pad = x.new_zeros(*x.shape[:-1], self.pad_to - x.shape[-1])
        return torch.cat([x, pad, self.group_code.to(x.dtype).expand(*x.shape[:-1], -1)], dim=-1)

    def stack(self, frames: torch.Tensor, obs: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        """``frame_stack``: ``push_frame(frames, obs, starts)``."""
        return push_frame(frames, obs, starts)

    def observed(self, h: torch.Tensor | None, obs: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        """What the actor (and a local critic) would see next for ``obs``: the observations, or
        with ``frame_stack`` the stack ``h`` with ``obs`` pushed in (``h`` itself is not changed)."""
        return self.stack(h, obs, starts) if self.frames > 1 else obs

    def forward_actor(self, obs: torch.Tensor, h: torch.Tensor | None = None, starts: torch.Tensor | None = None):
        """``obs[E, n, d]`` (one step) -> ``(out[E, n, head.n_outputs], h')``; ``starts[E]``.  The
        carried state ``h``: the GRU's ``[E, n, H]``, or with ``frame_stack`` the stacked
        observations ``[E, n, F·d]`` (what the actor saw: the rollout stores it for learning)."""
        E, n = obs.shape[:2]
        if self.frames > 1:
            h = self.stack(h, obs, starts)
            return self.actor(self.actor_input(h))[0], h
        x = self.actor_input(obs)
        if not self.recurrent:
            return self.actor(x)
        out, h = self.actor(x.reshape(1, E * n, -1), h.reshape(E * n, -1),
                            starts.repeat_interleave(n).reshape(1, E * n))
        return out.reshape(E, n, -1), h.reshape(E, n, -1)

    def actor_sequence(self, obs: torch.Tensor, h0: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        """Recurrent actor over time-major sequences: ``obs[T, B, n, d]`` from the GRU states
        ``h0[B, n, H]``, reset before step t in rows where ``starts[T, B]`` -> ``out[T, B, n,
        head.n_outputs]`` (what the learner re-runs over a rollout's sequences)."""
        T, B, n = obs.shape[:3]
        x = self.actor_input(obs).reshape(T, B * n, -1)
        out, _ = self.actor(x, h0.reshape(B * n, -1), starts.repeat_interleave(n, dim=1))
        return out.reshape(T, B, n, -1)

    def critic_forward(self, state: torch.Tensor | None, obs: torch.Tensor) -> torch.Tensor:
        """Feed-forward values ``[..., n]`` (normalized units) from ``state[..., S]`` or, for a
        local critic, ``obs[..., n, d]`` (the actor's input: stacked with ``frame_stack``)."""
        if self.local_critic:
            return self.critic(self.actor_input(obs))[0][..., 0]
        return self.critic(state)[0]

    def value(self, state: torch.Tensor | None, obs: torch.Tensor, h: torch.Tensor | None = None,
              starts: torch.Tensor | None = None):
        """One step: ``(values[E, n], h')`` (normalized units)."""
        if not self.recurrent:
            return self.critic_forward(state, obs), None
        v, h = self.critic(state.unsqueeze(0), h, starts.unsqueeze(0))
        return v[0], h

    @torch.no_grad()
    def act(self, obs: torch.Tensor, h=None, starts=None, greedy: bool = True, generator=None, mask=None):
        """Env actions for one step (greedy: the head's mode; else sampled from ``generator``).
        ``mask``: the action mask of ``obs[E, n, d]``, ``bool [E, n, n_actions]`` (True =
        available; a Discrete group of a scenario with ``has_action_mask``: ``env.action_mask()``
        or ``info["action_mask"]``): only available actions are chosen."""
        if mask is not None:
            if not isinstance(self.dist, Categorical):
                raise TypeError(f"mask: action masks apply to Discrete action spaces, this group has "
                                f"{self.action_space}")
            check_action_mask("mask", mask, (*obs.shape[:-1], self.dist.n), obs.device)
        out, h = self.forward_actor(obs, h, starts)
        actions = self.dist.mode(out, mask) if greedy else self.dist.draw(out, generator, mask)[0]
        return self.dist.to_env(actions), h

    def initial_hidden(self, E: int, device) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """``(actor state, critic state)`` at the start: GRU states, the empty frame stack, or None."""
        if self.frames > 1:
            return torch.zeros(E, self.n_agents, self.frames * self.obs_dim, device=device), None
        if not self.recurrent:
            return None, None
        return (torch.zeros(E, self.n_agents, self.hidden_size, device=device),
                torch.zeros(E, self.hidden_size, device=device))


def group_config(cfg: TrainConfig, group: str) -> TrainConfig:
    """``cfg`` with ``group``'s network size (``cfg.group_network[group]``) in place."""
    sizes = cfg.group_network.get(group)
    return dataclasses.replace(cfg, **sizes) if sizes else cfg


def build_policies(groups: dict, state_dim: int, cfg: TrainConfig, device) -> dict[str, GroupPolicy]:
    """One ``GroupPolicy`` per group, initialised from ``cfg.seed`` (the global RNG is untouched);
    with ``cfg.share_actor`` their ``actor`` is one module (built first)."""
    unknown = sorted(set(cfg.group_network) - set(groups))
    if unknown:
        raise ValueError(f"group_network: unknown groups {unknown}; the env's groups: {list(groups)}")
    boxes = [g for g, s in groups.items() if isinstance(s.action_space, gymnasium.spaces.Box)]
    if cfg.final_temperature != 1.0 and boxes:
        raise ValueError(f"final_temperature: a sampling temperature applies to Discrete and MultiDiscrete actors; "
                         f"group {boxes[0]!r} has {groups[boxes[0]].action_space} (use final_temperature=1.0)")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        shared = _shared_actor(groups, cfg) if cfg.share_actor else None
        return {g: GroupPolicy(s.n_agents, s.obs_dim, s.action_space, state_dim, cfg, g,
                               None if shared is None else (shared[0], shared[1][g], shared[2])).to(device)
                for g, s in groups.items()}


def _shared_actor(groups: dict, cfg: TrainConfig) -> tuple[Actor, dict[str, torch.Tensor], int]:
    """``share_actor``'s actor, each group's one-hot code and the padded input width."""
    spaces = {g: space_signature(s.action_space) for g, s in groups.items()}
    first = next(iter(groups))
    other = [g for g in groups if spaces[g] != spaces[first]]
    if other:
        raise ValueError(f"share_actor: one actor needs one action space, but group {first!r} has "
                         f"{groups[first].action_space} and group {other[0]!r} {groups[other[0]].action_space}")
    width = max(s.obs_dim + (s.n_agents if cfg.agent_id else 0) for s in groups.values())
    codes = {g: torch.eye(len(groups))[i] for i, g in enumerate(groups)}
    actor = Actor(width + len(groups), action_head(groups[first].action_space, cfg.init_log_std, first), cfg)
    return actor, codes, width


def host_reads_are_free(device: torch.device) -> bool:
    """Whether a rollout may branch on a device value (``bool(trunc.any())``, a policy call on
    the deciding worlds only): on the CPU the read costs nothing; on a GPU it would synchronize
    with the host every step, so the rollouts take their branch-free paths there
    (``tests/test_host_sync.py`` forces those paths on the CPU)."""
    return device.type == "cpu"


def joint_state(obs: dict[str, torch.Tensor]) -> torch.Tensor:
    """``env.state()`` computed from a dict of group observations (used for final observations)."""
    first = next(iter(obs.values()))
    return torch.cat([o.reshape(first.shape[0], -1) for o in obs.values()], dim=1)


#: ``TrainConfig.critic_input`` -> (the world state, ``env.state()``): what the centralized critics see
CRITIC_PARTS = {"state": (False, True), "local": (False, True), "world": (True, True), "world_only": (True, False)}


def critic_state_dim(state_dim: int, world_state_dim: int, critic_input: str = "state", time: bool = False) -> int:
    """The centralized critics' input size (``CRITIC_PARTS``): the world state's with ``"world"``
    and ``"world_only"``, then ``env.state()``'s but with ``"world_only"``, and one more with
    ``time`` (``critic_time``)."""
    world, joint = CRITIC_PARTS[critic_input]
    return (world_state_dim if world else 0) + (state_dim if joint else 0) + int(time)


class CriticState:
    """What the centralized critics see (``TrainConfig.critic_input``, ``CRITIC_PARTS``):
    ``env.state()`` (every agent's observation, computed from a dict of them), with ``"world"``
    after the env's world state (the scenario interface's ``world_state``), with ``"world_only"``
    the world state alone (JaxMARL's MAPPO critic input: its size grows with the units, not with
    their square); with ``critic_time`` then the episode's elapsed fraction ``t / max_cycles``
    (``env.elapsed_steps()``; 1 at the time limit)."""

    def __init__(self, env, critic_input: str = "state", time: bool = False) -> None:
        """``critic_input``: ``TrainConfig.critic_input``; ``time``: ``critic_time``."""
        if critic_input not in CRITIC_PARTS:
            raise ValueError(f"critic_input: expected one of {sorted(CRITIC_PARTS)}, got {critic_input!r}")
        self.env = env
        self.critic_input, self.time = critic_input, bool(time)
        self.world, self.joint = CRITIC_PARTS[critic_input]
        name = env.env_id or type(env).__name__
        if self.world and env.world_state_dim == 0:
            raise ValueError(f"critic_input: {critic_input!r} needs a scenario that declares a world state; "
                             f"{name} has none (world_state_dim is 0); use 'state'")
        cycles = getattr(env, "max_cycles", None)
        if self.time and (isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 1):
            raise ValueError(f"critic_time: needs a scenario whose episodes have a fixed length (max_cycles); "
                             f"{name} has max_cycles={cycles!r}")
        self.max_cycles = cycles
        self.dim = critic_state_dim(env.state_dim, env.world_state_dim, critic_input, self.time)

    @classmethod
    def of(cls, env, cfg) -> "CriticState":
        """The critics' input of a ``TrainConfig``."""
        return cls(env, cfg.critic_input, time=cfg.critic_time)

    def current(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The critics' input for ``obs``, the observations the env last returned (a new tensor)."""
        joint = joint_state(obs)
        time = self.env.elapsed_steps().to(joint.dtype) / self.max_cycles if self.time else None
        return self._join(self.env.world_state() if self.world else None, joint, time)

    def final(self, info: dict) -> torch.Tensor:
        """The critics' input for a step's final observations (SAME_STEP autoreset; valid where
        ``info["_final_obs"]``; their time, the limit's, as truncations are)."""
        joint = joint_state(info["final_obs"])
        time = torch.ones(joint.shape[0], dtype=joint.dtype, device=joint.device) if self.time else None
        return self._join(info["final_world_state"] if self.world else None, joint, time)

    def _join(self, world, joint, time) -> torch.Tensor:
        parts = [p for p in (world, joint if self.joint else None, None if time is None else time[:, None])
                 if p is not None]
        return torch.cat(parts, dim=1) if len(parts) > 1 else parts[0]


def step_action_mask(env, info: dict) -> dict:
    """Copies of a step's ``info["action_mask"]`` (a scenario with ``has_action_mask``)."""
    masks = info.get("action_mask")
    if masks is None:
        raise ValueError(f"{env.env_id or type(env).__name__}: has_action_mask is True but the step's info has no "
                         f"'action_mask' entry (a masked scenario puts {{group: bool [E, n_g, n]}} there every step)")
    return {g: masks[g].clone() for g in env.groups}


def first_action_mask(env) -> dict | None:
    """``env.action_mask()`` after a reset, checked and copied (None: ``has_action_mask`` False)."""
    if not env.has_action_mask:
        return None
    masks = env.action_mask()
    check_keys("env.action_mask()", masks, env.groups)
    device = getattr(env, "torch_device", None)
    for g, s in env.groups.items():
        if not isinstance(s.action_space, gymnasium.spaces.Discrete):
            raise ValueError(f"group {g!r}: war_train masks Discrete action spaces only, got {s.action_space}")
        check_action_mask(f"env.action_mask()[{g!r}]", masks[g], (env.num_envs, s.n_agents, int(s.action_space.n)),
                          device)
    return {g: m.clone() for g, m in masks.items()}


def env_signature(env, cfg: TrainConfig) -> dict:
    """What a checkpoint needs to rebuild (and check) the env and the policies (the world
    state's size only where the critics see it: ``critic_input="world"`` or ``"world_only"``)."""
    world = {"world_state_dim": env.world_state_dim} if CRITIC_PARTS[cfg.critic_input][0] else {}
    return {"id": env.env_id, "num_envs": cfg.num_envs, "state_dim": env.state_dim, **world,
            "groups": {g: {"n_agents": s.n_agents, "obs_dim": s.obs_dim, **space_signature(s.action_space)}
                       for g, s in env.groups.items()},
            "max_cycles": int(getattr(env, "max_cycles", cfg.rollout_length))}


def load_networks(policies: dict[str, GroupPolicy], ckpt: dict) -> None:
    """Actor and critic weights from a checkpoint; ``ValueError`` if they do not fit the networks."""
    for g, p in policies.items():
        for part, module in (("actors", p.actor), ("critics", p.critic)):
            if g not in ckpt[part]:
                raise ValueError(f"checkpoint: no {part[:-1]} weights for group {g!r} (it has {sorted(ckpt[part])})")
            try:
                module.load_state_dict(ckpt[part][g])
            except (RuntimeError, TypeError, KeyError, AttributeError) as exc:
                problems = [" ".join(line.split()) for line in str(exc).splitlines()[1:] if line.strip()]
                detail = (problems[0].rstrip(".") + (f"; and {len(problems) - 1} more" if len(problems) > 1 else "")
                          if problems else " ".join(str(exc).split()))
                raise ValueError(f"checkpoint: the {part[:-1]} weights of group {g!r} do not fit the network "
                                 f"its config describes ({detail})") from None


def set_temperature(policies: dict[str, GroupPolicy], temperature: float) -> None:
    """Every actor's sampling temperature (``TrainConfig.final_temperature``; greedy actions are
    unchanged)."""
    for p in policies.values():
        p.dist.temperature = float(temperature)


def load_policies(checkpoint, last: bool = False) -> tuple[dict[str, GroupPolicy], TrainConfig, dict]:
    """``(policies, config, env signature)`` from a checkpoint path (or its run folder): the
    networks the run selected (its ``"selection"`` entry, ``TrainConfig.select_every``) where it
    has them and ``last`` is False, else the last update's; the actors sample at the temperature
    of that update."""
    from war_train.config import config_from_dict

    ckpt = checkpoint if isinstance(checkpoint, dict) else load_checkpoint(checkpoint)
    cfg = config_from_dict(ckpt["config"])
    sig = ckpt["env"]

    @dataclasses.dataclass
    class _Spec:  # the parts of GroupSpec build_policies reads
        n_agents: int
        obs_dim: int
        action_space: object

    groups = {g: _Spec(d["n_agents"], d["obs_dim"], space_from_signature(d)) for g, d in sig["groups"].items()}
    policies = build_policies(groups, critic_state_dim(sig["state_dim"], sig.get("world_state_dim", 0),
                                                       cfg.critic_input, cfg.critic_time),
                              dataclasses.replace(cfg, device="cpu"), "cpu")
    source = ckpt if last or not ckpt.get("selection") else ckpt["selection"]
    bad = malformed_entries(source, {"update": int, "actors": dict, "critics": dict}) if source is not ckpt else []
    if bad:
        raise ValueError(f"checkpoint: its 'selection' entry lacks (or has malformed) {bad}; it is incomplete or "
                         f"was edited (last=True loads the last update's networks)")
    load_networks(policies, source)
    set_temperature(policies, cfg.schedule(max(1, int(source.get("update", 1)))).temperature)
    for p in policies.values():
        p.eval()
    return policies, cfg, sig
