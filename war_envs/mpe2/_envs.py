"""The env classes behind ``war_envs.mpe2``: ``Mpe2ParallelEnv`` (war-envs' PettingZoo
``ParallelEnv`` under an mpe2 module's name and arguments, clipping out-of-range continuous
actions as mpe2 does unless ``strict_actions=True``) and ``Mpe2RawEnv`` (the AEC env, the base
of each module's ``raw_env``).  torch and Warp load when an env is built, not at import
(``Mpe2ParallelEnv`` is created on first use)."""

from __future__ import annotations

import inspect
from typing import Any

from gymnasium.utils import EzPickle

from war_envs._extras import needs_extra

with needs_extra("pettingzoo", "war_envs.mpe2 (the mpe2 drop-in: PettingZoo envs)"):
    from pettingzoo import AECEnv
    from pettingzoo.utils.conversions import parallel_to_aec_wrapper
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from war_envs.mpe2 import _factory

__all__ = ["Mpe2ParallelEnv", "Mpe2RawEnv", "wrap_aec", "make_parallel", "build"]


def _parallel_class():
    cls = globals().get("_PARALLEL")
    if cls is not None:
        return cls
    from war_envs.core.validation import check_bool
    from war_envs.frontends.pettingzoo import ParallelEnv

    class Mpe2ParallelEnv(ParallelEnv):
        """war-envs' PettingZoo ``ParallelEnv`` for mpe2 module ``module`` with mpe2's
        arguments (``arguments``: every ``raw_env`` parameter by name); ``metadata["name"]``
        is mpe2's.  ``extra`` (seed, precision, device, ...) goes to ``war_envs.make``.
        Out-of-range continuous actions are clipped with PettingZoo's warning, as mpe2's
        ``parallel_env`` does (``clip_box_actions``); ``strict_actions=True`` refuses them."""

        def __init__(self, module: str, arguments: dict | None = None, extra: dict | None = None,
                     strict_actions: bool = False) -> None:
            strict_actions = check_bool("strict_actions", strict_actions)
            env_id, scenario = _factory.scenario_for(module)
            arguments = _factory._bind(module, (), dict(arguments or {}))
            extra = dict(extra or {})
            kwargs = _factory.scenario_kwargs(module, scenario, arguments)
            super().__init__(env_id, render_mode=arguments["render_mode"],
                             dynamic_rescaling=arguments["dynamic_rescaling"], **kwargs, **extra)
            # unpickling rebuilds through here
            EzPickle.__init__(self, module, arguments, extra, strict_actions)
            self.mpe2_module = module
            self.strict_actions = strict_actions
            self.clip_box_actions = not strict_actions
            self.metadata = {**self.metadata, "name": module}

        def __repr__(self) -> str:
            return f"war_envs.mpe2.{self.mpe2_module}.parallel_env(render_mode={self.render_mode!r})"

    Mpe2ParallelEnv.__module__ = __name__
    Mpe2ParallelEnv.__qualname__ = "Mpe2ParallelEnv"
    globals()["_PARALLEL"] = Mpe2ParallelEnv
    return Mpe2ParallelEnv


def __getattr__(name: str):
    if name == "Mpe2ParallelEnv":  # for pickle and `from war_envs.mpe2._envs import ...`
        return _parallel_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_CONVERSION = parallel_to_aec_wrapper.__dict__


class Mpe2RawEnv(AECEnv, EzPickle):
    """An mpe2 module's ``raw_env``: the AEC env over ``Mpe2ParallelEnv`` (``self.env``), a
    plain ``AECEnv`` as mpe2's ``raw_env`` is, so ``env.unwrapped`` is this object.  Each
    module's subclass sets ``mpe2_module`` and mpe2's signature; the parallel env's attributes and
    methods (``batched``, ``max_cycles``, ``curriculum_stage``, ``advance_curriculum``,
    ``set_curriculum_stage``, ``strict_actions``, ...) are reachable from here.  Out-of-range
    continuous actions are clipped with PettingZoo's warning (mpe2's ``raw_env`` applies them
    unchecked; its ``env()`` clips them) unless ``strict_actions=True``."""

    mpe2_module: str = ""

    # PettingZoo's parallel-to-AEC conversion, borrowed method by method rather than inherited:
    # its api_test requires that ``env.unwrapped`` is not a ``parallel_to_aec_wrapper``
    observation_space = _CONVERSION["observation_space"]
    action_space = _CONVERSION["action_space"]
    reset = _CONVERSION["reset"]
    observe = _CONVERSION["observe"]
    state = _CONVERSION["state"]
    step = _CONVERSION["step"]
    last = _CONVERSION["last"]
    render = _CONVERSION["render"]
    close = _CONVERSION["close"]

    def __init__(self, *args: Any, strict_actions: bool = False, **kwargs: Any) -> None:
        if not self.mpe2_module:
            raise TypeError("Mpe2RawEnv is a base class: use war_envs.mpe2.<module>.raw_env")
        arguments = _factory._bind(self.mpe2_module, args, kwargs)  # mpe2's signature
        EzPickle.__init__(self, strict_actions=strict_actions, **arguments)
        par = _parallel_class()(self.mpe2_module, arguments, strict_actions=strict_actions)
        self.continuous_actions = bool(arguments["continuous_actions"])  # read by wrap_aec
        parallel_to_aec_wrapper.__init__(self, par)

    def __getattr__(self, name: str):
        # only called for names not found normally: forward public ones to the parallel env
        if name.startswith("_") or name == "env":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"war_envs.mpe2.{self.mpe2_module}.raw_env(render_mode={self.render_mode!r})"

    def __str__(self) -> str:
        return self.mpe2_module


def wrap_aec(raw: Mpe2RawEnv):
    """Wrap ``raw`` as mpe2's ``make_env`` does: continuous actions clipped to the box
    (war-envs' ``ClippedActionWrapper``, a subclass of mpe2's ``ClipOutOfBoundsWrapper`` that
    clips with the parallel env's code and warning), discrete ones checked
    (``CheckedActionWrapper``, a subclass of mpe2's ``AssertOutOfBoundsWrapper`` that raises a
    clear error naming the agent, as it does for continuous ones with ``strict_actions=True``);
    ``OrderEnforcingWrapper`` outermost."""
    from war_envs.frontends.pettingzoo import CheckedActionWrapper, ClippedActionWrapper

    clip = raw.continuous_actions and not raw.strict_actions
    return OrderEnforcingWrapper(ClippedActionWrapper(raw) if clip else CheckedActionWrapper(raw))


def make_parallel(module: str, extra: dict | None = None, *, strict_actions: bool = False, **kwargs: Any):
    """``<module>.parallel_env(**kwargs)`` whose batched env also gets ``extra`` (``seed``,
    ``precision``, ``device``: arguments of ``war_envs.make`` that mpe2 does not have)."""
    return _parallel_class()(module, _factory._bind(module, (), kwargs), extra, strict_actions=strict_actions)


def build(module: str):
    """``(env, parallel_env, raw_env)`` for mpe2 module ``module``, with mpe2's signatures."""
    qual = f"war_envs.mpe2.{module}"

    raw_env = type("raw_env", (Mpe2RawEnv,), {
        "__module__": qual, "__qualname__": "raw_env", "mpe2_module": module,
        "__signature__": _factory.public_raw_signature(module),
        "__doc__": _factory._doc(module, f"``{module}.raw_env``: the unwrapped AEC env (as mpe2's raw_env).")})

    def env(**kwargs) -> Any:
        return wrap_aec(raw_env(**kwargs))

    def parallel_env(**kwargs) -> Any:
        return make_parallel(module, None, **kwargs)

    env.__signature__ = _factory.keyword_signature(module, "AECEnv")
    env.__doc__ = _factory._doc(module, f"``{module}.env``: the AEC env: ``raw_env`` wrapped as mpe2's "
                               "``make_env`` does (action check / clip, then order enforcing).")
    parallel_env.__signature__ = _factory.keyword_signature(module, inspect.Signature.empty)
    parallel_env.__doc__ = _factory._doc(module, f"``{module}.parallel_env``: the PettingZoo ParallelEnv "
                                        "(war-envs' native one, not an AEC-to-parallel conversion; "
                                        "it checks and clips actions as mpe2's wrappers do).")
    for fn in (env, parallel_env):
        fn.__module__ = qual
        fn.__qualname__ = fn.__name__
    return env, parallel_env, raw_env
