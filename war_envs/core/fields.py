"""A scenario's own Warp-struct fields, declared as data (``Field``), for the scenario families
whose kernels read one ``wp.struct`` per world batch (MPE, VMAS): the family's shared fields plus
the scenario's own, one struct type per scenario and float type (``world_struct``), and the
generated ``clear_info`` that zeroes a scenario's per-step info fields (``info_clearer``).
Every family's world struct and kernels are made once per process here: ``struct_type`` (the
``wp.struct`` cache) and ``module_kernels`` (one Warp module of kernels per scenario, float
type and family, named by ``kernel_module_name`` for the struct families).

A field's role says what it is: ``param`` (a scalar), ``const`` (a 1-D array shared by every
world), ``state`` (per world, in ``get_state``/``set_state``), ``info`` (per world, in ``step``'s
info) or ``scratch``.  Generated functions read ``w.dt`` for the world's float type.
"""

from __future__ import annotations

import dataclasses
import hashlib
import linecache
import re
from typing import Any

import warp as wp

from war_envs.core.episode import KERNEL_MODULE_OPTIONS, module_level_suffix

wp.set_module_options(KERNEL_MODULE_OPTIONS)


@wp.func
def no_info(w: Any, e: int):
    """A scenario whose info needs no clearing on the NEXT_STEP reset-only step."""
    pass


@dataclasses.dataclass(frozen=True)
class Field:
    """One of a scenario's struct fields.

    ``role``: ``"param"`` (a scalar ``value``), ``"const"`` (a 1-D array of ``value``, shared by
    every world), ``"state"`` (per world, ``[E, *shape]``, in ``get_state``/``set_state``: the
    random choices of a reset), ``"info"`` (per world, in ``step``'s info: ``[E]`` for
    ``shape=()``) or ``"scratch"``.  ``dtype``: ``"float"`` (the world's precision), ``"int"``
    (int32) or ``"bool"``.
    """

    role: str
    dtype: str
    shape: tuple[int, ...] = ()
    value: object = None


def param(value, dtype: str = "float") -> Field:
    return Field("param", dtype, (), value)


def const(values, dtype: str = "float") -> Field:
    return Field("const", dtype, (len(values),), list(values))


def state(dtype: str, *shape: int) -> Field:
    return Field("state", dtype, tuple(shape))


def info(dtype: str, *shape: int) -> Field:
    return Field("info", dtype, tuple(shape))


def scratch(dtype: str, *shape: int) -> Field:
    return Field("scratch", dtype, tuple(shape))


ROLES = ("param", "const", "state", "info", "scratch")
_ZEROS = {"float": "type(w.dt)(0.0)", "int": "0", "bool": "False"}
_CLEARERS: dict = {}


def info_clearer(fields: dict[str, Field]):
    """The ``clear_info(w, e)`` Warp function that zeroes every ``info`` field of world e
    (``no_info`` when there is none).  Its source is generated (one function per distinct
    set of info names, dtypes and ranks, so a kernel's hash, hence Warp's kernel cache, depends
    only on them) and registered with ``linecache``, where Warp reads a function's source."""
    body = []
    for name, f in fields.items():
        if f.role == "info":
            index = ", ".join(["e", *(f"k{d}" for d in range(len(f.shape)))])
            for d in range(len(f.shape)):
                body.append("    " * (d + 1) + f"for k{d} in range(w.{name}.shape[{d + 1}]):")
            body.append("    " * (len(f.shape) + 1) + f"w.{name}[{index}] = {_ZEROS[f.dtype]}")
    if not body:
        return no_info
    name = "clear_info_" + hashlib.sha256("\n".join(body).encode()).hexdigest()[:12]
    func = _CLEARERS.get(name)
    if func is None:
        source = "\n".join([f"def {name}(w: Any, e: int):",
                            '    """NEXT_STEP\'s reset-only step: every info field zero."""', *body, ""])
        filename = f"<war_envs.core.fields {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {"Any": Any, "wp": wp, "__name__": __name__}
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 (our own generated source)
        func = _CLEARERS[name] = wp.func(namespace[name])
    return func


def clock_fields() -> dict:
    """The per-world episode state every world struct holds for ``BatchedEnv._wire_common``
    (State): stream key, episode count, clock and the autoreset flags."""
    return {"world_seed": wp.array(dtype=wp.int32), "episode": wp.array(dtype=wp.int32),
            "t": wp.array(dtype=wp.int32), "pending_reset": wp.array(dtype=wp.int32),
            "reset_now": wp.array(dtype=wp.int32)}


def flag_fields(F) -> dict:
    """The per-world step outputs every world struct holds for ``BatchedEnv._wire_common``
    (Outputs): rewards ``[E, A]`` in float type ``F`` and the episode flags."""
    return {"reward": wp.array2d(dtype=F), "terminated": wp.array(dtype=wp.bool),
            "truncated": wp.array(dtype=wp.bool)}


_WARP_DTYPES = {"int": wp.int32, "bool": wp.bool}
_STRUCTS: dict = {}
_KERNELS: dict = {}


def warp_dtype(dtype: str, F):
    return F if dtype == "float" else _WARP_DTYPES[dtype]


def struct_type(name: str, module: str, annotations, key=()):
    """The ``wp.struct`` type ``name`` (``__module__`` ``module``) whose fields are
    ``annotations()`` (name -> Warp type), made once per process for ``(name, key)``: the world
    struct of every family (Warp hashes a kernel with its struct's name and fields, so the same
    name and fields keep its kernel cache)."""
    struct = _STRUCTS.get((name, key))
    if struct is None:
        struct = wp.struct(type(name, (), {"__annotations__": annotations(), "__module__": module,
                                           "__qualname__": name}))
        _STRUCTS[(name, key)] = struct
    return struct


def kernel_module_name(family: str, cls, F) -> str:
    """The Warp module name of scenario ``cls``'s kernels in float type ``F`` (``family``:
    ``"mpe"``, ``"vmas"``, ``"classic"``)."""
    return re.sub(r"\W", "_", f"war_envs_{family}_{cls.__module__}_{cls.__name__}_{F.__name__}")


def module_kernels(key: str, functions) -> dict:
    """The kernels of the kernel functions ``functions()`` returns, by function name, in one
    Warp module named ``key`` with ``KERNEL_MODULE_OPTIONS`` (kernel ``f`` named ``{key}_f``),
    made once per process: the kernel cache of every family.  Inside
    ``war_envs.core.episode.kernels_compiled_at(level)`` the module is compiled at that level
    (named ``{key}_O{level}`` where it is not the process's level)."""
    level, suffix = module_level_suffix()
    key += suffix
    kernels = _KERNELS.get(key)
    if kernels is None:
        kernels = {func.__name__: wp.kernel(func, name=f"{key}_{func.__name__}", module=key)
                   for func in functions()}
        wp.get_module(key).options.update({**KERNEL_MODULE_OPTIONS, "optimization_level": level})
        _KERNELS[key] = kernels
    return kernels


def world_struct(cls, F, shared: dict, fields: dict[str, Field], family: str = "shared world"):
    """The ``wp.struct`` type of scenario ``cls``'s worlds in float type ``F``: its family's
    ``shared`` fields (name -> Warp type) and the scenario's own (a type depends on field names
    and types only)."""

    def annotations() -> dict:
        out = dict(shared)
        for name, f in fields.items():
            if name in out:
                raise ValueError(f"{cls.__name__}._fields: {name!r} is a {family} field")
            dtype = warp_dtype(f.dtype, F)
            if f.role == "param":
                out[name] = dtype
            elif f.role == "const":
                out[name] = wp.array(dtype=dtype)
            else:
                out[name] = wp.array(dtype=dtype, ndim=1 + len(f.shape))
        return out

    key = (cls, F, tuple((n, f.role, f.dtype, len(f.shape)) for n, f in fields.items()))
    return struct_type(f"{cls.__name__}World_{F.__name__}", cls.__module__, annotations, key)
