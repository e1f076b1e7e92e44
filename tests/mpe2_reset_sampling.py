"""Reset distributions of our MPE worlds against mpe2's: many of our resets (one batch of worlds)
next to many mpe2 ``reset(seed=k)``, compared with a two-sample Kolmogorov–Smirnov distance
(continuous draws) and choice frequencies (discrete draws).  Seeds are fixed, so the tests are
deterministic; the bounds are loose enough for any seed and tight enough that a wrong range,
shift or choice rule cannot pass (each such error moves the statistic by ~10x the bound)."""

from __future__ import annotations

import numpy as np

import war_envs
from mpe2_reference import make_reference


def our_resets(env_id: str, n: int, seed: int = 0, **kwargs) -> dict[str, np.ndarray]:
    """get_state() of ``n`` freshly reset worlds, as float64 / int64 numpy arrays."""
    env = war_envs.make(env_id, num_envs=n, seed=seed, precision="float64", **kwargs)
    env.reset(seed=seed)
    state = {k: t.cpu().numpy() for k, t in env.get_state().items()}
    env.close()
    return state


def reference_resets(env_id: str, n: int, read, **kwargs) -> dict[str, np.ndarray]:
    """``read(raw)`` (a dict of arrays) after mpe2 ``reset(seed=k)``, k = 0 .. n-1, stacked."""
    par, raw = make_reference(env_id, **kwargs)
    rows = []
    for k in range(n):
        par.reset(seed=k)
        rows.append(read(raw))
    par.close()
    return {key: np.stack([r[key] for r in rows]) for key in rows[0]}


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """sup_x |F_a(x) - F_b(x)| of the two samples' empirical CDFs."""
    a, b = np.sort(np.ravel(a)), np.sort(np.ravel(b))
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return float(np.abs(fa - fb).max())


def assert_same_continuous(ours: np.ndarray, ref: np.ndarray, name: str) -> None:
    """Same distribution per component (last axis flattened with the sample axis): KS distance
    below 2x its 1% critical value, same range to 1%."""
    ours, ref = np.asarray(ours, np.float64), np.asarray(ref, np.float64)
    n, m = ours.shape[0], ref.shape[0]
    bound = 2.0 * 1.63 * np.sqrt((n + m) / (n * m))
    ours_c = ours.reshape(n, -1)
    ref_c = ref.reshape(m, -1)
    for c in range(ours_c.shape[1]):
        d = ks_distance(ours_c[:, c], ref_c[:, c])
        assert d < bound, (name, c, d, bound)
        assert abs(ours_c[:, c].min() - ref_c[:, c].min()) < 0.01, (name, c)
        assert abs(ours_c[:, c].max() - ref_c[:, c].max()) < 0.01, (name, c)


def assert_same_frequencies(ours: np.ndarray, ref: np.ndarray, values, name: str) -> None:
    """Same frequency of each of ``values`` (and nothing else) within 4 binomial standard
    deviations of the pooled estimate."""
    ours, ref = np.ravel(ours), np.ravel(ref)
    assert set(np.unique(ours)) <= set(values), (name, np.unique(ours))
    assert set(np.unique(ref)) <= set(values), (name, np.unique(ref))
    for value in values:
        p_ours, p_ref = float(np.mean(ours == value)), float(np.mean(ref == value))
        p = (p_ours * ours.size + p_ref * ref.size) / (ours.size + ref.size)
        sd = np.sqrt(p * (1 - p) * (1 / ours.size + 1 / ref.size))
        assert abs(p_ours - p_ref) < 4 * sd + 1e-12, (name, value, p_ours, p_ref)


def assert_agents_and_spaces_match(env_id: str, **kwargs) -> None:
    """Agent names and order, groups (name prefixes, in order), and each agent's observation
    and action space equal mpe2's."""
    import gymnasium

    env = war_envs.make(env_id, num_envs=1, **kwargs)
    par, _ = make_reference(env_id, **kwargs)
    names = [a for spec in env.groups.values() for a in spec.agents]
    assert names == list(par.possible_agents)
    prefixes = list(dict.fromkeys(a.rsplit("_", 1)[0] for a in par.possible_agents))
    assert list(env.groups) == prefixes
    for spec in env.groups.values():
        for name in spec.agents:
            ref_act, ref_obs = par.action_space(name), par.observation_space(name)
            assert spec.obs_dim == ref_obs.shape[0], name
            if isinstance(ref_act, gymnasium.spaces.Discrete):
                assert spec.action_space == gymnasium.spaces.Discrete(int(ref_act.n)), name
            else:
                assert spec.action_space.shape == ref_act.shape, name
                assert np.all(spec.action_space.low == ref_act.low), name
                assert np.all(spec.action_space.high == ref_act.high), name
    env.close()
    par.close()
