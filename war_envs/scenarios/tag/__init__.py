"""Tag-v0: WarpDrive's TagContinuous at WarpDrive scale (kernels in ``_kernels.py``)."""
