"""Test-suite set-up: fixed thread counts (CI has 2 cores) and a known Warp kernel cache."""

import os
import pathlib

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# Keep compiled kernels in one known place (CI and developers alike); override with WARP_CACHE_PATH.
os.environ.setdefault("WARP_CACHE_PATH", str(pathlib.Path.home() / ".cache" / "war-envs" / "warp"))
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "optimized_kernels: the test's envs compile their kernels at -O3 even where the suite "
        "compiles at -O0 (war_envs.core.episode.kernels_compiled_at): long random-policy statistics")


@pytest.fixture(autouse=True)
def _optimized_kernels(request):
    """``@pytest.mark.optimized_kernels``: the test runs inside ``kernels_compiled_at(3)`` (a VMAS
    joint world steps about 90 times slower at -O0; the results are the same at every level)."""
    if request.node.get_closest_marker("optimized_kernels") is None:
        yield
        return
    from war_envs.core.episode import kernels_compiled_at

    with kernels_compiled_at(3):
        yield
