"""The one implementation behind every ``war_envs.mpe2.<module>``: a table of mpe2 1.1.1's
module names, their war-envs scenario ids and mpe2's ``raw_env`` parameter lists, and
``build(module)``, which returns that module's ``env``, ``parallel_env`` and ``raw_env`` (mpe2's
parameters, then war-envs' one addition: keyword-only ``strict_actions=False``).

Nothing here imports torch, Warp or the scenario classes: a module's scenario is looked up in
``war_envs.registry`` when one of its functions is *called*, so importing a module whose
scenario is not registered works and the call raises ``NotImplementedError`` naming the id.
"""

from __future__ import annotations

import __future__
import functools
import inspect
from typing import Any

#: mpe2 module -> (war-envs scenario id, mpe2's ``raw_env.__init__`` parameters, in order)
MODULES: dict[str, tuple[str, str]] = {
    "simple_v3": (
        "Simple-v0",
        "max_cycles: int = 25, continuous_actions: bool = False, render_mode: str | None = None, "
        "dynamic_rescaling: bool = True, benchmark_data: bool = False"),
    "simple_adversary_v3": (
        "Adversary-v0",
        "N: int = 2, max_cycles: int = 25, continuous_actions: bool = False, "
        "render_mode: str | None = None, dynamic_rescaling: bool = True, benchmark_data: bool = False, "
        "num_agent_neighbors: int | None = None, num_landmark_neighbors: int | None = None"),
    "simple_crypto_v3": (
        "Crypto-v0",
        "max_cycles: int = 25, continuous_actions: bool = False, render_mode: str | None = None, "
        "dynamic_rescaling: bool = True, benchmark_data: bool = False"),
    "simple_push_v3": (
        "Push-v0",
        "max_cycles: int = 25, continuous_actions: bool = False, render_mode: str | None = None, "
        "dynamic_rescaling: bool = True, benchmark_data: bool = False"),
    "simple_reference_v3": (
        "Reference-v0",
        "local_ratio: float = 0.5, max_cycles: int = 25, continuous_actions: bool = False, "
        "render_mode: str | None = None, dynamic_rescaling: bool = True, benchmark_data: bool = False"),
    "simple_speaker_listener_v4": (
        "SpeakerListener-v0",
        "max_cycles: int = 25, continuous_actions: bool = False, render_mode: str | None = None, "
        "dynamic_rescaling: bool = True, benchmark_data: bool = False"),
    "simple_spread_v3": (
        "Spread-v0",
        "N: int = 3, local_ratio: float = 0.5, max_cycles: int = 25, continuous_actions: bool = False, "
        "render_mode: str | None = None, dynamic_rescaling: bool = True, benchmark_data: bool = False, "
        "curriculum: bool = False, terminate_on_success: bool = False, "
        "num_agent_neighbors: int | None = None, num_landmark_neighbors: int | None = None"),
    "simple_tag_v3": (
        "PredatorPrey-v0",
        "num_good: int = 1, num_adversaries: int = 3, num_obstacles: int = 2, max_cycles: int = 25, "
        "continuous_actions: bool = False, render_mode: str | None = None, dynamic_rescaling: bool = True, "
        "benchmark_data: bool = False, curriculum: bool = False, terminate_on_success: bool = False, "
        "num_agent_neighbors: int | None = None, num_landmark_neighbors: int | None = None"),
    "simple_world_comm_v3": (
        "WorldComm-v0",
        "num_good: int = 2, num_adversaries: int = 4, num_obstacles: int = 1, num_food: int = 2, "
        "max_cycles: int = 25, num_forests: int = 2, continuous_actions: bool = False, "
        "render_mode: str | None = None, dynamic_rescaling: bool = True, benchmark_data: bool = False"),
    "simple_formation_v1": (
        "Formation-v0",
        "N: int = 4, max_cycles: int = 25, continuous_actions: bool = False, render_mode: str | None = None, "
        "dynamic_rescaling: bool = True, benchmark_data: bool = False, terminate_on_success: bool = False"),
    "simple_line_v1": (
        "Line-v0",
        "N: int = 4, max_cycles: int = 25, continuous_actions: bool = False, render_mode: str | None = None, "
        "dynamic_rescaling: bool = True, benchmark_data: bool = False, terminate_on_success: bool = False"),
    "collect_treasure_v1": (
        "CollectTreasure-v0",
        "num_collectors: int = 6, num_deposits: int = 2, num_treasures: int = 6, max_cycles: int = 25, "
        "continuous_actions: bool = False, render_mode: str | None = None, dynamic_rescaling: bool = True, "
        "benchmark_data: bool = False"),
}

#: mpe2 arguments the PettingZoo front end takes itself (not scenario arguments)
_FRONT_END_ARGS = ("render_mode", "dynamic_rescaling")

#: war-envs' one argument beyond mpe2's (keyword-only, after them): ``True`` refuses out-of-range
#: continuous actions (``ValueError`` naming the agent and the bounds) instead of clipping them
STRICT_ACTIONS = inspect.Parameter("strict_actions", inspect.Parameter.KEYWORD_ONLY, default=False,
                                   annotation="bool")


@functools.lru_cache(maxsize=None)
def raw_signature(module: str) -> inspect.Signature:
    """mpe2's ``<module>.raw_env`` signature (annotations as strings, as mpe2's; returns 'None')."""
    _, params = _entry(module)
    code = compile(f"def raw_env({params}) -> None: pass", f"<war_envs.mpe2.{module}>", "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102 - a fixed parameter list from the table above
    return inspect.signature(namespace["raw_env"])


def public_raw_signature(module: str) -> inspect.Signature:
    """Our ``raw_env``'s signature: mpe2's, then ``strict_actions`` (keyword-only)."""
    sig = raw_signature(module)
    return sig.replace(parameters=[*sig.parameters.values(), STRICT_ACTIONS])


def keyword_signature(module: str, return_annotation: Any) -> inspect.Signature:
    """``raw_env``'s parameters as keyword-only: what mpe2's ``env(**kwargs)`` and
    ``parallel_env(**kwargs)`` accept (they forward only keywords to ``raw_env``), then
    ``strict_actions``."""
    sig = raw_signature(module)
    params = [p.replace(kind=p.KEYWORD_ONLY) for p in sig.parameters.values()]
    return sig.replace(parameters=[*params, STRICT_ACTIONS], return_annotation=return_annotation)


def _entry(module: str) -> tuple[str, str]:
    try:
        return MODULES[module]
    except KeyError:
        raise ValueError(f"module: unknown mpe2 module {module!r}; known: {list(MODULES)}") from None


def scenario_for(module: str):
    """``(env_id, scenario class)`` of mpe2 module ``module``, resolved now through
    ``war_envs.registry``; ``NotImplementedError`` if that id is not registered."""
    from war_envs.registry import registered_ids, scenario_class

    env_id, _ = _entry(module)
    if env_id not in registered_ids():
        raise NotImplementedError(
            f"war_envs.mpe2.{module}: its war-envs scenario {env_id!r} is not registered "
            f"(registered: {registered_ids()}); this mpe2 environment is not available yet")
    cls = scenario_class(env_id)
    declared = getattr(cls, "mpe2_module", None)
    if declared not in (None, module):
        raise TypeError(f"war_envs.mpe2.{module}: {env_id!r} ({cls.__name__}) declares "
                        f"mpe2_module={declared!r}, not {module!r}")
    return env_id, cls


def scenario_kwargs(module: str, cls, arguments: dict) -> dict:
    """The scenario-class arguments for mpe2 ``arguments`` (every raw_env parameter, bound):
    each one the class accepts is passed on; one it does not accept must have mpe2's default
    (the behaviour the scenario implements), anything else is a ``ValueError``."""
    from war_envs.registry import accepted_kwargs

    accepted = accepted_kwargs(cls)
    defaults = {name: p.default for name, p in raw_signature(module).parameters.items()}
    out = {}
    for name, value in arguments.items():
        if name in _FRONT_END_ARGS:
            continue
        if name in accepted:
            out[name] = value
        elif value != defaults[name]:
            why = (" (mpe2's per-agent benchmark infos are not implemented; the infos carry the "
                   "scenario's task metrics instead)" if name == "benchmark_data" else "")
            raise ValueError(f"war_envs.mpe2.{module}: {name}={value!r} is not supported by war-envs' "
                             f"{cls.__name__}{why}; only mpe2's default {name}={defaults[name]!r} is")
    return out


def _bind(module: str, args: tuple, kwargs: dict) -> dict:
    sig = raw_signature(module)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as err:
        accepted = [*sig.parameters, STRICT_ACTIONS.name]
        raise TypeError(f"war_envs.mpe2.{module}: {err}; accepted: {accepted}") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def _doc(module: str, what: str) -> str:
    env_id, _ = _entry(module)
    params = ", ".join(f"{name}={p.default!r}" for name, p in raw_signature(module).parameters.items())
    return (f"{what}\n\nmpe2's ``{module}`` served by war-envs' ``{env_id}`` scenario (its page "
            f"documents the rules and any differences from mpe2).\n\nArguments (mpe2's names, order "
            f"and defaults): ``{params}``.\n"
            f"``render_mode`` (``None``, ``\"rgb_array\"``, ``\"human\"``) and ``dynamic_rescaling`` "
            f"go to the renderer; an mpe2 argument the scenario does not implement must keep "
            f"mpe2's default (``benchmark_data=True`` is not supported).\n\n"
            f"``continuous_actions=True``: out-of-range actions are clipped to the box with "
            f"PettingZoo's out-of-bound warning, as mpe2's ``env`` and ``parallel_env`` do; "
            f"war-envs' one extra argument, keyword-only ``strict_actions=True``, refuses them "
            f"instead (``ValueError`` naming the agent and the bounds).\n")
