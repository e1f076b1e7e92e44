"""Warp functions every scenario family computes the same way."""

from typing import Any

import warp as wp

from war_envs.core.episode import KERNEL_MODULE_OPTIONS

wp.set_module_options(KERNEL_MODULE_OPTIONS)


@wp.func
def distance(ax: Any, ay: Any, bx: Any, by: Any):
    """Euclidean distance |a - b| = sqrt(dx^2 + dy^2) (mpe2's sqrt(sum(square(a - b))), JaxMARL's
    jnp.linalg.norm of a 2-vector)."""
    dx = ax - bx
    dy = ay - by
    return wp.sqrt(dx * dx + dy * dy)
