"""The scenario registry: public id -> class, resolved lazily so ``import war_envs`` stays cheap."""

from __future__ import annotations

import difflib
import importlib
import inspect

_SCENARIOS: dict[str, str] = {
    "Spread-v0": "war_envs.scenarios.mpe.spread:Spread",
    "PredatorPrey-v0": "war_envs.scenarios.mpe.predator_prey:PredatorPrey",
    "Command-v0": "war_envs.scenarios.mpe.command:Command",
    "Tag-v0": "war_envs.scenarios.tag.tag:Tag",
    "Formation-v0": "war_envs.scenarios.mpe.formation:Formation",
    "Line-v0": "war_envs.scenarios.mpe.line:Line",
    "CollectTreasure-v0": "war_envs.scenarios.mpe.collect_treasure:CollectTreasure",
    "Simple-v0": "war_envs.scenarios.mpe.simple:Simple",
    "SpeakerListener-v0": "war_envs.scenarios.mpe.speaker_listener:SpeakerListener",
    "Reference-v0": "war_envs.scenarios.mpe.reference:Reference",
    "Crypto-v0": "war_envs.scenarios.mpe.crypto:Crypto",
    "Adversary-v0": "war_envs.scenarios.mpe.adversary:Adversary",
    "Push-v0": "war_envs.scenarios.mpe.push:Push",
    "WorldComm-v0": "war_envs.scenarios.mpe.world_comm:WorldComm",
    "Relay-v0": "war_envs.scenarios.mpe.relay:Relay",
    "FacmacPredatorPrey-v0": "war_envs.scenarios.mpe.facmac:FacmacPredatorPrey",
    "FacmacPredatorPrey3a-v0": "war_envs.scenarios.mpe.facmac:FacmacPredatorPrey3a",
    "FacmacPredatorPrey6a-v0": "war_envs.scenarios.mpe.facmac:FacmacPredatorPrey6a",
    "FacmacPredatorPrey9a-v0": "war_envs.scenarios.mpe.facmac:FacmacPredatorPrey9a",
    "SMAX-v0": "war_envs.scenarios.smax.smax:SMAX",
    "Navigation-v0": "war_envs.scenarios.vmas.navigation:Navigation",
    "CartPole-v1": "war_envs.scenarios.classic.cartpole:CartPole",
    "Acrobot-v1": "war_envs.scenarios.classic.acrobot:Acrobot",
    "MountainCar-v0": "war_envs.scenarios.classic.mountain_car:MountainCar",
    "MountainCarContinuous-v0": "war_envs.scenarios.classic.mountain_car:MountainCarContinuous",
    "Pendulum-v1": "war_envs.scenarios.classic.pendulum:Pendulum",
    "TagGridWorld-v0": "war_envs.scenarios.tag_gridworld.tag_gridworld:TagGridWorld",
    "GiveWay-v0": "war_envs.scenarios.vmas.give_way:GiveWay",
    "Passage-v0": "war_envs.scenarios.vmas.passage:Passage",
    "Wheel-v0": "war_envs.scenarios.vmas.wheel:Wheel",
    "Dispersion-v0": "war_envs.scenarios.vmas.dispersion:Dispersion",
    "Balance-v0": "war_envs.scenarios.vmas.balance:Balance",
    "Transport-v0": "war_envs.scenarios.vmas.transport:Transport",
    "Sampling-v0": "war_envs.scenarios.vmas.sampling:Sampling",
    "Flocking-v0": "war_envs.scenarios.vmas.flocking:Flocking",
    "Discovery-v0": "war_envs.scenarios.vmas.discovery:Discovery",
    "Dropout-v0": "war_envs.scenarios.vmas.dropout:Dropout",
    "ReverseTransport-v0": "war_envs.scenarios.vmas.reverse_transport:ReverseTransport",
    "BallPassage-v0": "war_envs.scenarios.vmas.ball_passage:BallPassage",
    "WindFlocking-v0": "war_envs.scenarios.vmas.wind_flocking:WindFlocking",
    "MultiGiveWay-v0": "war_envs.scenarios.vmas.multi_give_way:MultiGiveWay",
    "JointPassage-v0": "war_envs.scenarios.vmas.joint_passage:JointPassage",
    "BallTrajectory-v0": "war_envs.scenarios.vmas.ball_trajectory:BallTrajectory",
    "BuzzWire-v0": "war_envs.scenarios.vmas.buzz_wire:BuzzWire",
    "Goal-v0": "war_envs.scenarios.vmas.goal:Goal",
    "HetMass-v0": "war_envs.scenarios.vmas.het_mass:HetMass",
    "VelControl-v0": "war_envs.scenarios.vmas.vel_control:VelControl",
    "Pollock-v0": "war_envs.scenarios.vmas.pollock:Pollock",
    "LineTrajectory-v0": "war_envs.scenarios.vmas.line_trajectory:LineTrajectory",
    "CircleTrajectory-v0": "war_envs.scenarios.vmas.circle_trajectory:CircleTrajectory",
    "JointPassageSize-v0": "war_envs.scenarios.vmas.joint_passage_size:JointPassageSize",
    "Football-v0": "war_envs.scenarios.vmas.football:Football",
    "AsymJoint-v0": "war_envs.scenarios.vmas.asym_joint:AsymJoint",
    "Waterfall-v0": "war_envs.scenarios.vmas.waterfall:Waterfall",
    "DiffDrive-v0": "war_envs.scenarios.vmas.diff_drive:DiffDrive",
    "KinematicBicycle-v0": "war_envs.scenarios.vmas.kinematic_bicycle:KinematicBicycle",
    "Drone-v0": "war_envs.scenarios.vmas.drone:Drone",
    "SwitchRiddle-v0": "war_envs.scenarios.switch_riddle.switch_riddle:SwitchRiddle",
    "CoinGame-v0": "war_envs.scenarios.coin_game.coin_game:CoinGame",
    "Hanabi-v0": "war_envs.scenarios.hanabi.hanabi:Hanabi",
    "Overcooked-v0": "war_envs.scenarios.overcooked.overcooked:Overcooked",
}

#: single-agent scenarios (one group of one agent): Gymnasium's front ends give them Gymnasium's
#: own spaces (``war_envs.frontends.single_agent``) instead of ``Dict`` spaces keyed by agent
_SINGLE_AGENT: set[str] = {"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0",
                           "Pendulum-v1"}


def add(env_id: str, entry_point: str, *, overwrite: bool = False, single_agent: bool = False) -> None:
    """Add scenario class ``entry_point`` (``"package.module:Class"``) as ``env_id`` for
    ``war_envs.make`` (``war_envs.register`` also registers it with Gymnasium and PettingZoo).
    ``single_agent=True`` declares a scenario of one group of one agent whose Gymnasium front
    ends have Gymnasium's own spaces (as ``CartPole-v1``'s)."""
    if not isinstance(env_id, str) or not env_id:
        raise TypeError(f"env_id: expected a non-empty str, got {env_id!r}")
    if not isinstance(single_agent, bool):
        raise TypeError(f"single_agent: expected a bool, got {type(single_agent).__name__}")
    if env_id in _SCENARIOS and not overwrite:
        raise ValueError(f"env_id: {env_id!r} is already registered (pass overwrite=True)")
    _SCENARIOS[env_id] = entry_point
    if single_agent:
        _SINGLE_AGENT.add(env_id)
    else:
        _SINGLE_AGENT.discard(env_id)


def is_single_agent(env_id: str) -> bool:
    """Whether ``env_id`` was registered as single-agent (Gymnasium's own spaces in
    ``gym.make`` / ``gym.make_vec``)."""
    key = env_id.split("/", 1)[1] if env_id.startswith("war_envs/") else env_id
    return key in _SINGLE_AGENT


def registered_ids() -> list[str]:
    """Every scenario id ``war_envs.make`` accepts (also registered with Gymnasium as
    ``war_envs/<id>`` and with PettingZoo), built-in ones first, then those added by ``register``."""
    return list(_SCENARIOS)


def scenario_family(env_id: str) -> str:
    """The scenario family (the folder under ``war_envs/scenarios``: ``"mpe"``, ``"vmas"``,
    ``"smax"``, ``"classic"`` ...) of a built-in id; ``""`` for one added by ``register`` from
    elsewhere."""
    scenario_class(env_id)  # a clear error for an unknown id
    key = env_id.split("/", 1)[1] if env_id.startswith("war_envs/") else env_id
    parts = _SCENARIOS[key].partition(":")[0].split(".")
    return parts[2] if parts[:2] == ["war_envs", "scenarios"] and len(parts) > 3 else ""


def scenario_class(env_id: str):
    """The class registered as ``env_id``; a clear error (with suggestions) otherwise."""
    if not isinstance(env_id, str):
        raise TypeError(f"id: expected a str such as 'Spread-v0', got {type(env_id).__name__}")
    key = env_id.split("/", 1)[1] if env_id.startswith("war_envs/") else env_id
    if key not in _SCENARIOS:
        close = difflib.get_close_matches(key, _SCENARIOS, n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise ValueError(f"id: unknown scenario {env_id!r}; registered: {list(_SCENARIOS)}{hint}")
    module, _, name = _SCENARIOS[key].partition(":")
    return getattr(importlib.import_module(module), name)


def accepted_kwargs(cls) -> list[str]:
    """Keyword arguments a scenario class accepts (its own and its bases')."""
    names: list[str] = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind == p.KEYWORD_ONLY and p.name not in names:
                names.append(p.name)
    return names


def make(env_id: str, **kwargs):
    """Build a batched scenario; unknown keyword arguments are an error that lists the valid ones."""
    cls = scenario_class(env_id)
    valid = accepted_kwargs(cls)
    unknown = [k for k in kwargs if k not in valid]
    if unknown:
        raise TypeError(f"{env_id}: unknown keyword argument(s) {unknown}; accepted: {valid}")
    return cls(**kwargs)
