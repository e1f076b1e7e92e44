"""SwitchRiddle-v0: JaxMARL's ``switch_riddle`` (the prisoners, the room and the light bulb),
exact and batched (``switch_riddle.py``; kernels in ``_kernels.py``)."""
