"""Test-suite set-up: fixed thread counts (CI has 2 cores) and a known Warp kernel cache."""

import os
import pathlib

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# Keep compiled kernels in one known place (CI and developers alike); override with WARP_CACHE_PATH.
os.environ.setdefault("WARP_CACHE_PATH", str(pathlib.Path.home() / ".cache" / "war-envs" / "warp"))
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import torch  # noqa: E402

torch.set_num_threads(1)
