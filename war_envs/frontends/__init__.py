"""Front ends over the batched core: ``gymnasium`` (joint env, native vector env) and
``pettingzoo`` (ParallelEnv / AEC).  Each imports its optional library only inside itself."""
