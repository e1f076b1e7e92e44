"""Running: ``train()`` and the run loop with its ``Mode`` protocol (``loop``), lock-step MAPPO's
mode (``lockstep``: the every-step schedule of the one collector), resume checks (``resume``),
restarts (``restarts``), policy selection (``selection``), evaluation and GIFs (``evaluate``),
metrics files and progress (``runlog``), plots (``plot``), a run folder from the CLI's options
(``training``) and the ``war-train`` command (``cli``)."""
