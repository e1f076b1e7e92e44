"""TagGridWorld-v0: WarpDrive's ``tag_gridworld`` (taggers chase one runner on an integer grid),
exact and batched (``tag_gridworld.py``; kernels in ``_kernels.py``)."""
