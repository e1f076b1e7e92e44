"""Shared by the JaxMARL reference scripts (``smax_reference.py``, ``facmac_reference.py``,
``hanabi_reference.py``, ``overcooked_reference.py``, ``jaxmarl_games_reference.py``), which run in
JaxMARL's venv: a reset whose state has the types ``step_env`` gives back.

JaxMARL's resets leave some leaves weakly typed (a Python int in the state: ``~int32``) where its
steps return them strongly typed, so a jitted ``step_env`` fed the reset's state and then its own
compiles twice (the second compilation is most of a short trace's time).  The same values with
the step's types, as ``jax.lax.scan`` would make them in JaxMARL's own training loops."""

import jax


def strongly_typed(tree):
    """``tree`` with every weakly typed leaf made strongly typed (same dtype, same values)."""
    return jax.tree.map(lambda x: jax.lax.convert_element_type(x, x.dtype), tree)


def jit_reset(reset):
    """``jax.jit`` of ``reset`` whose outputs are ``strongly_typed``."""
    return jax.jit(lambda *args: strongly_typed(reset(*args)))
