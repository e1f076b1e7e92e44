"""Sampling-v0: VMAS 1.5.2's ``sampling`` scenario (agents sample the cells of a grid laid over a
field made of Gaussians; a cell pays once)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const, info, param, scratch, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, Lidar, VmasBase, check_positive

N_RAYS = 12
LIDAR_START = 0.05
#: the eight neighbouring cells an agent observes, in VMAS's order (multiples of grid_spacing)
NEIGHBOURS = [(1, 0), (-1, 0), (0, 1), (0, -1), (-1, -1), (1, -1), (-1, 1), (1, 1)]


@wp.func(inline=True)
def density(w: Any, e: int, px: Any, py: Any):
    """The field at (px, py): the sum over the Gaussians of their densities, each as torch's
    ``MultivariateNormal(loc, cov I).log_prob(p).exp()`` rounds it (``(p - loc) / sqrt(cov)``
    squared and summed, ``-0.5 (2 log 2 pi + M) - log det / 2``)."""
    total = type(px)(0.0)
    for g in range(w.locs.shape[1]):
        a = (px - w.locs[e, g, 0]) / w.scale[g]
        b = (py - w.locs[e, g, 1]) / w.scale[g]
        m = a * a + b * b
        total = total + wp.exp(type(px)(-0.5) * (w.two_log_2pi + m) - w.half_log_det[g])
    return total


@wp.func
def cell(p: Any, spacing: Any, half: Any, n: int):
    """VMAS's cell index of a (clamped) coordinate: ``long(p / spacing + n / 2)`` (truncation),
    kept in 0..n-1 (VMAS would index out of its grid there)."""
    return wp.clamp(int(p / spacing + half), 0, n - 1)


@wp.func(inline=True)
def sample_at(w: Any, e: int, px: Any, py: Any, norm: int):
    """VMAS's ``sample`` at (px, py) in world e: 0 outside ``[-xdim, xdim] x [-ydim, ydim]`` or
    on a sampled cell, else the field at the point clamped into the world's bounds (divided by
    ``max_pdf`` with ``norm``).  Returns ``(value, cell x, cell y)``."""
    out = px < -w.xdim or px > w.xdim or py < -w.ydim or py > w.ydim
    cx = wp.clamp(px, -w.x_semidim, w.x_semidim)
    cy = wp.clamp(py, -w.y_semidim, w.y_semidim)
    ix = cell(cx, w.grid_spacing, w.half_x_cells, w.sampled.shape[1])
    iy = cell(cy, w.grid_spacing, w.half_y_cells, w.sampled.shape[2])
    value = type(px)(0.0)
    if not (out or w.sampled[e, ix, iy]):  # VMAS zeroes the field's value there: not worked out
        value = density(w, e, cx, cy)
        if norm != 0:
            value = value / w.max_pdf[e]
    return value, ix, iy


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: every Gaussian's centre ~ U[-xdim, xdim] x U[-ydim, ydim] (x
    then y), the grid unsampled, ``max_pdf`` the field's largest value over VMAS's grid points
    (``arange(-xdim, xdim, grid_spacing)`` in both axes, clamped into the bounds), then every
    agent ~ U[-xdim, xdim] x U[-ydim, ydim] (0 with ``spawn_same_pos``), clamped into the world's
    bounds (VMAS's ``sample`` clamps the position it is given in place).  (VMAS also works out
    each agent's sample there, which only its ``info()`` right after a reset shows; the info
    here keeps the last step's, as every scenario's.)"""
    rng = W.episode_stream(w, e)
    L = w.n_landmarks
    for g in range(w.locs.shape[1]):
        w.locs[e, g, 0] = W.uniform(wp.randf(rng), -w.xdim, w.xdim)
        w.locs[e, g, 1] = W.uniform(wp.randf(rng), -w.ydim, w.ydim)
    for ix in range(w.sampled.shape[1]):
        for iy in range(w.sampled.shape[2]):
            w.sampled[e, ix, iy] = False
    w.n_sampled[e] = 0
    best = type(w.dt)(0.0)
    for kx in range(w.xpoints.shape[0]):
        for ky in range(w.ypoints.shape[0]):
            value, ix, iy = sample_at(w, e, w.xpoints[kx], w.ypoints[ky], 0)
            best = wp.max(best, value)
    w.max_pdf[e] = best
    for i in range(w.u.shape[1]):
        x = W.uniform(wp.randf(rng), -w.spawn_x, w.spawn_x)
        y = W.uniform(wp.randf(rng), -w.spawn_y, w.spawn_y)
        x = wp.clamp(x, -w.x_semidim, w.x_semidim)
        y = wp.clamp(y, -w.y_semidim, w.y_semidim)
        w.pos[e, L + i, 0] = x
        w.pos[e, L + i, 1] = y


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent for all): agent by agent, its sample
    (``sample_at`` with ``norm``) and its cell marked sampled, so an agent on a cell an earlier
    agent took this step gets 0; the shared reward is their sum.  ``coverage``: the fraction of
    the grid's cells sampled.  VMAS's ``done()`` is never true."""
    L = w.n_landmarks
    n = w.u.shape[1]
    total = type(w.dt)(0.0)
    for i in range(n):
        value, ix, iy = sample_at(w, e, w.pos[e, L + i, 0], w.pos[e, L + i, 1], w.norm)
        if not w.sampled[e, ix, iy]:
            w.sampled[e, ix, iy] = True
            w.n_sampled[e] = w.n_sampled[e] + 1
        w.agent_sample[e, i] = value
        total = total + value
    for i in range(n):
        r = w.agent_sample[e, i]
        if w.shared_rew != 0:
            r = total
        w.reward[e, i] = r
    w.coverage[e] = type(w.dt)(w.n_sampled[e]) / type(w.dt)(w.sampled.shape[1] * w.sampled.shape[2])
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), lidar distances (12, with collisions), the samples of the eight
    neighbouring cells (``sample_at`` of pos + grid_spacing times (1, 0), (-1, 0), (0, 1),
    (0, -1), (-1, -1), (1, -1), (-1, 1), (1, 1); always normalized, as VMAS's observation)]."""
    b = w.n_landmarks + i
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    if w.collisions != 0:
        o = W.write_lidar_distances(out, e, i, o, w, i)
    for k in range(w.delta_x.shape[0]):
        value, ix, iy = sample_at(w, e, p[0] + w.delta_x[k], p[1] + w.delta_y[k], 1)
        o = W.write_value(out, e, i, o, value)


def _collected(info: dict) -> torch.Tensor:
    return info["agent_sample"].sum(-1)


def _coverage(info: dict) -> torch.Tensor:
    return info["coverage"]


def _check_cov(cov, n_gaussians: int) -> list[float]:
    """VMAS's ``cov``: one float for every Gaussian, or a sequence of ``n_gaussians`` floats."""
    if isinstance(cov, numbers.Real) and not isinstance(cov, bool):
        return [check_positive("cov", cov)] * n_gaussians
    if isinstance(cov, (str, bytes)) or not hasattr(cov, "__len__"):
        raise TypeError(f"cov: expected a float or a sequence of n_gaussians floats, got {type(cov).__name__}")
    if len(cov) != n_gaussians:
        raise ValueError(f"cov: expected n_gaussians={n_gaussians} values, got {len(cov)}")
    return [check_positive(f"cov[{k}]", c) for k, c in enumerate(cov)]


class Sampling(VmasBase):
    """VMAS 1.5.2's ``sampling``: ``n_agents`` spheres roam a ``2 xdim x 2 ydim`` field laid out
    as a grid of ``grid_spacing`` cells, over a density made of ``n_gaussians`` Gaussians whose
    centres are drawn at every reset; an agent collects the density where it stands, once per
    cell (a sampled cell pays nothing more to anyone).

    Same keyword arguments and defaults as VMAS's scenario (``n_agents=3``, ``shared_rew=True``,
    ``comms_range=0`` (drawing only), ``lidar_range=0.2``, ``agent_radius=0.025``, ``xdim=1``,
    ``ydim=1``, ``grid_spacing=0.05`` (``xdim`` and ``ydim`` multiples of it, as VMAS asserts),
    ``n_gaussians=3``, ``cov=0.05`` (every Gaussian's variance, or one per Gaussian),
    ``collisions=True``, ``spawn_same_pos=False`` (only without collisions, as VMAS asserts),
    ``norm=True``) plus VMAS's environment arguments (``continuous_actions``, ``max_steps``,
    ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0 …`` (one group ``agents``): holonomic spheres, force ``u ∈ [-1, 1]²``
    (continuous) or ``Discrete(9)``; one step of 0.1 s, drag 0.25, positions kept within
    ``xdim - agent_radius`` and ``ydim - agent_radius``; with ``collisions`` they collide and
    each has a lidar (12 rays from 0.05 rad, range ``lidar_range``) seeing the other agents.
    **The field**: ``n_gaussians`` Gaussians ``N(c_k, cov_k I)``, ``c_k`` uniform over the field;
    their summed density, divided (``norm``) by its largest value over the grid's corner points
    (``max_pdf``).  An agent's cell is ``trunc(p / grid_spacing + n_cells / 2)`` per axis.
    **Observation** ``[pos, vel, lidar, 8 neighbouring cells]``: the lidar's distances to the
    nearest agent along each ray (``lidar_range`` where none; with ``collisions``), then the
    value of the eight cells around the agent (right, left, up, down, then the corners: down
    left, down right, up left, up right), 0 where sampled or outside the field, always
    normalized (VMAS's observation ignores ``norm``).  **Reward**: agent by agent, the value of
    its cell (0 if sampled before, by anyone, this step included), which it then marks sampled;
    with ``shared_rew`` every agent gets the sum.  **Termination**: none (VMAS's ``done`` is
    never true); truncation at ``max_steps``.  **Info** (per agent): ``agent_sample`` (VMAS's:
    the agent's sample of the step), and ``coverage`` (per world: the fraction of cells sampled).
    **Episode metrics**: ``collected`` (the agents' samples summed over the episode) and
    ``coverage`` (at the episode's end).

    **Where this differs from VMAS.**  Without ``collisions`` VMAS's observation fails (it reads
    a lidar the agents do not have); here the observation leaves the lidar out
    (``[pos, vel, 8 cells]``).  VMAS's ``reset_at(i)`` recomputes every world's
    ``agent_sample`` (other worlds' agents then read 0, their cells being sampled) and its
    ``info()`` right after a reset shows the start cells' samples; here a reset touches its own
    world only and, as in every scenario, leaves the info of the last step (a SAME_STEP autoreset
    reports the finished step's).  A position that would index outside VMAS's grid (only with an
    ``agent_radius`` below float32 rounding of the bounds) takes the edge cell.

    **Version history**

    * v0: initial version (VMAS 1.5.2's ``sampling``)
    """

    env_id = "Sampling-v0"
    vmas_scenario = "sampling"
    per_agent_metrics = ("agent_sample",)
    episode_metrics = (
        EpisodeMetric("collected", "the agents' samples (their cells' field values, in max_pdf units with norm), "
                      "summed over agents and the episode's steps", _collected, "sum"),
        EpisodeMetric("coverage", "the fraction of the grid's cells sampled by the episode's end", _coverage,
                      "last"),
    )
    progress_metric = "collected"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 3, shared_rew: bool = True, comms_range: float = 0.0,
                 lidar_range: float = 0.2, agent_radius: float = 0.025, xdim: float = 1, ydim: float = 1,
                 grid_spacing: float = 0.05, n_gaussians: int = 3, cov: float | list[float] = 0.05,
                 collisions: bool = True, spawn_same_pos: bool = False, norm: bool = True, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.shared_rew = v.check_bool("shared_rew", shared_rew)
        self.comms_range = v.check_float("comms_range", comms_range, low=0.0)
        self.lidar_range = check_positive("lidar_range", lidar_range)
        self.agent_radius = check_positive("agent_radius", agent_radius)
        self.xdim = check_positive("xdim", xdim)
        self.ydim = check_positive("ydim", ydim)
        for name, dim in (("xdim", self.xdim), ("ydim", self.ydim)):
            if not dim > self.agent_radius:
                raise ValueError(f"{name}: expected more than agent_radius={self.agent_radius}, got {dim}")
        self.grid_spacing = check_positive("grid_spacing", grid_spacing)
        if (xdim / grid_spacing) % 1 != 0 or (ydim / grid_spacing) % 1 != 0:
            raise ValueError(f"grid_spacing: xdim={xdim} and ydim={ydim} must be multiples of it (VMAS), "
                             f"got {grid_spacing}")
        self.n_gaussians = v.check_int("n_gaussians", n_gaussians, minimum=1)
        self.covs = _check_cov(cov, self.n_gaussians)
        self.cov = cov
        self.collisions = v.check_bool("collisions", collisions)
        self.spawn_same_pos = v.check_bool("spawn_same_pos", spawn_same_pos)
        if self.spawn_same_pos and self.collisions:
            raise ValueError("spawn_same_pos: agents spawned at the same position cannot collide (VMAS); "
                             "pass collisions=False")
        self.norm = v.check_bool("norm", norm)
        self._dims = (xdim, ydim, grid_spacing)  # as given: VMAS's arange of the grid points
        self.n_x_cells = int((2 * xdim) / grid_spacing)
        self.n_y_cells = int((2 * ydim) / grid_spacing)
        self.x_semidim = self.xdim - self.agent_radius
        self.y_semidim = self.ydim - self.agent_radius
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, collide=self.collisions, radius=self.agent_radius,
                       color=COLORS["blue"]) for i in range(self.n_agents)]
        lidars = ([Lidar(a.name, n_rays=N_RAYS, max_range=self.lidar_range, sees=tuple(b.name for b in agents),
                         angle_start=LIDAR_START, angle_end=2 * math.pi + LIDAR_START) for a in agents]
                  if self.collisions else [])
        return Layout(bodies=agents, groups=[("agents", [a.name for a in agents])], x_semidim=self.x_semidim,
                      y_semidim=self.y_semidim, lidars=lidars)

    def _obs_dim(self, group: str) -> int:
        return 4 + (N_RAYS if self.collisions else 0) + len(NEIGHBOURS)

    def _fields(self) -> dict[str, Field]:
        tdtype = self.torch_float
        # the Gaussians' constants as torch works them out (cholesky of cov I, its log diagonal)
        scales, half_log_dets = [], []
        for c in self.covs:
            tril = torch.linalg.cholesky(torch.tensor([[c, 0.0], [0.0, c]], dtype=tdtype))
            scales.append(float(tril[0, 0]))
            half_log_dets.append(float(tril.diagonal().log().sum()))
        # VMAS's grid points (torch.arange's float32 values)
        xdim, ydim, spacing = self._dims
        xpoints = torch.arange(-xdim, xdim, spacing).double().tolist()
        ypoints = torch.arange(-ydim, ydim, spacing).double().tolist()
        gs = float(np.float32(self.grid_spacing)) if tdtype == torch.float32 else self.grid_spacing
        return {
            "xdim": param(self.xdim), "ydim": param(self.ydim), "grid_spacing": param(self.grid_spacing),
            "half_x_cells": param(self.n_x_cells / 2), "half_y_cells": param(self.n_y_cells / 2),
            "spawn_x": param(0.0 if self.spawn_same_pos else self.xdim),
            "spawn_y": param(0.0 if self.spawn_same_pos else self.ydim),
            "norm": param(int(self.norm), "int"), "shared_rew": param(int(self.shared_rew), "int"),
            "collisions": param(int(self.collisions), "int"),
            "two_log_2pi": param(2 * math.log(2 * math.pi)),
            "scale": const(scales), "half_log_det": const(half_log_dets),
            "xpoints": const(xpoints), "ypoints": const(ypoints),
            "delta_x": const([dx * gs for dx, _ in NEIGHBOURS]), "delta_y": const([dy * gs for _, dy in NEIGHBOURS]),
            "sampled": state("bool", self.n_x_cells, self.n_y_cells),
            "n_sampled": scratch("int"),  # cells of `sampled` set: counted in step, recounted on state writes
            "locs": state("float", self.n_gaussians, 2),
            "max_pdf": state("float"),
            "agent_sample": info("float", self.n_agents),
            "coverage": info("float"),
        }

    def _state_written(self) -> None:
        """``n_sampled`` (the step's running count of sampled cells) recounted from ``sampled``."""
        wp.to_torch(self._w.n_sampled).copy_(wp.to_torch(self._w.sampled).sum((1, 2)))

    # ------------------------------------------------------------------ picture
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world, a fixed view of the field: the
        density in six bands of orange, sampled cells in grey, the bounds, the agents and their
        lidar rays (``war_envs.scenarios.vmas.render``'s drawing)."""
        from war_envs.scenarios.vmas import render as RD

        world = self._checked_world(world)
        state = self.get_state()
        pos = state["pos"][world].double().numpy()
        locs = state["locs"][world].double().numpy()
        sampled = state["sampled"][world].numpy()
        scale = min(width, height) / (2 * 1.1 * max(self.xdim, self.ydim))
        ys, xs = np.mgrid[0:height, 0:width]
        fx = (xs + 0.5 - width / 2) / scale
        fy = (height / 2 - ys - 0.5) / scale
        field = np.zeros_like(fx)
        for (cx, cy), c in zip(locs, self.covs):
            field += np.exp(-((fx - cx) ** 2 + (fy - cy) ** 2) / (2 * c)) / (2 * math.pi * c)
        field = np.floor(field / max(field.max(), 1e-12) * 5.999) / 5  # six flat bands (small pictures)
        img = np.empty((height, width, 3), dtype=np.uint8)
        img[...] = RD.BACKGROUND
        inside = (np.abs(fx) <= self.xdim) & (np.abs(fy) <= self.ydim)
        ix = np.clip((fx / self.grid_spacing + self.n_x_cells / 2).astype(int), 0, self.n_x_cells - 1)
        iy = np.clip((fy / self.grid_spacing + self.n_y_cells / 2).astype(int), 0, self.n_y_cells - 1)
        shade = np.stack([np.full_like(field, 255.0), 255 - 120 * field, 255 - 230 * field], -1)
        shade[inside & sampled[ix, iy]] = (170, 170, 170)
        img[inside] = shade[inside].astype(np.uint8)

        def px(p):
            p = np.asarray(p, dtype=np.float64)
            return np.array([width / 2 + p[0] * scale, height / 2 - p[1] * scale])

        corners = [px(c) for c in ((-self.xdim, -self.ydim), (self.xdim, -self.ydim), (self.xdim, self.ydim),
                                   (-self.xdim, self.ydim))]
        for k in range(4):
            RD._segment(img, corners[k], corners[(k + 1) % 4], 2, RD.OUTLINE)
        readings = self.lidar_readings(world) if self.layout.lidars else []
        for lid, dists in zip(self.layout.lidars, readings):
            owner = self.body_index(lid.agent)
            origin, rot = pos[owner], float(state["rot"][world, owner])
            for angle, d in zip(lid.angles().astype(np.float64) + rot, dists):
                end = origin + d * np.array([math.cos(angle), math.sin(angle)])
                RD._segment(img, px(origin), px(end), 1, RD.RAY)
        color = (np.asarray(COLORS["blue"]) * 255).astype(np.uint8)
        for b, body in enumerate(self.layout.bodies):
            cx, cy = px(pos[b])
            r = max(body.radius * scale, 1.5)
            RD._disc(img, cx, cy, r + 1.5, RD.OUTLINE)
            RD._disc(img, cx, cy, r, color)
        return img
