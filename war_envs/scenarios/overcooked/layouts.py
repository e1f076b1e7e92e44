"""The kitchens of ``Overcooked-v0``: JaxMARL 0.2.0's ``overcooked_layouts``, as data.

A layout is a dict of JaxMARL's keys: ``height``, ``width`` and the flat cell indices
(``index = row * width + column``) ``wall_idx`` (every cell that is not floor: counters, and the
piles, pots and serving spots too), ``agent_idx`` (the two start cells), ``goal_idx`` (serving
spots), ``plate_pile_idx``, ``onion_pile_idx`` and ``pot_idx``.  ``counter_circuit`` is given
as a grid, read by ``layout_from_grid`` as JaxMARL's ``layout_grid_to_dict`` reads it.
"""

from __future__ import annotations

__all__ = ["LAYOUTS", "LAYOUT_KEYS", "layout_from_grid"]

#: the index keys of a layout (besides ``height`` and ``width``)
LAYOUT_KEYS = ("wall_idx", "agent_idx", "goal_idx", "plate_pile_idx", "onion_pile_idx", "pot_idx")

_SYMBOLS = {"W": "wall_idx", "A": "agent_idx", "X": "goal_idx", "B": "plate_pile_idx", "O": "onion_pile_idx",
            "P": "pot_idx"}


def layout_from_grid(grid: str) -> dict:
    """A layout dict from a grid of one line per row (JaxMARL's ``layout_grid_to_dict``): ``W``
    wall (counter), ``A`` agent start, ``X`` serving spot (goal), ``B`` plate pile, ``O`` onion
    pile, ``P`` pot, space floor; ``X``, ``B``, ``O`` and ``P`` are walls too."""
    rows = grid.split("\n")
    if len(rows[0]) == 0:
        rows = rows[1:]
    if len(rows[-1]) == 0:
        rows = rows[:-1]
    out: dict = {key: [] for key in LAYOUT_KEYS}
    out["height"], out["width"] = len(rows), len(rows[0])
    for i, row in enumerate(rows):
        for j, symbol in enumerate(row):
            idx = out["width"] * i + j
            if symbol in _SYMBOLS:
                out[_SYMBOLS[symbol]].append(idx)
            if symbol in "XBOP":
                out["wall_idx"].append(idx)
    return out


COUNTER_CIRCUIT_GRID = """
WWWPPWWW
W A    W
B WWWW X
W     AW
WWWOOWWW
"""

#: JaxMARL 0.2.0's ``overcooked_layouts``, in its order
LAYOUTS: dict[str, dict] = {
    "cramped_room": {
        "height": 4, "width": 5,
        "wall_idx": [0, 1, 2, 3, 4, 5, 9, 10, 14, 15, 16, 17, 18, 19],
        "agent_idx": [6, 8], "goal_idx": [18], "plate_pile_idx": [16], "onion_pile_idx": [5, 9], "pot_idx": [2],
    },
    "asymm_advantages": {
        "height": 5, "width": 9,
        "wall_idx": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 17, 18, 22, 26, 27, 31, 35, 36, 37, 38, 39,
                     40, 41, 42, 43, 44],
        "agent_idx": [29, 32], "goal_idx": [12, 17], "plate_pile_idx": [39, 41], "onion_pile_idx": [9, 14],
        "pot_idx": [22, 31],
    },
    "coord_ring": {
        "height": 5, "width": 5,
        "wall_idx": [0, 1, 2, 3, 4, 5, 9, 10, 12, 14, 15, 19, 20, 21, 22, 23, 24],
        "agent_idx": [7, 11], "goal_idx": [22], "plate_pile_idx": [10], "onion_pile_idx": [15, 21],
        "pot_idx": [3, 9],
    },
    "forced_coord": {
        "height": 5, "width": 5,
        "wall_idx": [0, 1, 2, 3, 4, 5, 7, 9, 10, 12, 14, 15, 17, 19, 20, 21, 22, 23, 24],
        "agent_idx": [11, 8], "goal_idx": [23], "onion_pile_idx": [5, 10], "plate_pile_idx": [15],
        "pot_idx": [3, 9],
    },
    "counter_circuit": layout_from_grid(COUNTER_CIRCUIT_GRID),
}
