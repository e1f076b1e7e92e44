"""Scenario families: ``mpe`` (mpe2's environments and the WAR tasks), ``vmas``, ``smax``, ``tag``,
``tag_gridworld``, ``classic``, ``switch_riddle`` and ``coin_game`` (JaxMARL's small games)."""
