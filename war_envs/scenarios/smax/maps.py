"""SMAX's unit types and maps as data: JaxMARL 0.2.0's ``SMAX.__init__`` defaults and its
``MAP_NAME_TO_SCENARIO`` table (``jaxmarl/environments/smax/smax_env.py``)."""

from __future__ import annotations

import dataclasses

__all__ = ["UNIT_TYPES", "UNIT_TYPE_DEFAULTS", "MapSpec", "MAPS", "SMAX_DEFAULTS"]

#: unit type index -> (name, shorthand), JaxMARL's order
UNIT_TYPES: tuple[tuple[str, str], ...] = (
    ("marine", "m"), ("marauder", "M"), ("stalker", "s"), ("zealot", "Z"), ("zergling", "z"),
    ("hydralisk", "h"),
)

#: JaxMARL's per-type tables (index = unit type)
UNIT_TYPE_DEFAULTS: dict[str, tuple[float, ...]] = {
    "unit_type_velocities": (3.15, 2.25, 4.13, 3.15, 4.13, 3.15),
    "unit_type_attacks": (9.0, 10.0, 13.0, 8.0, 5.0, 12.0),
    "unit_type_attack_ranges": (5.0, 6.0, 6.0, 2.0, 2.0, 5.0),
    "unit_type_sight_ranges": (9.0, 10.0, 10.0, 9.0, 8.0, 9.0),
    "unit_type_radiuses": (0.375, 0.5625, 0.625, 0.5, 0.375, 0.625),
    "unit_type_health": (45.0, 125.0, 160.0, 150.0, 35.0, 80.0),
    "unit_type_weapon_cooldowns": (0.61, 1.07, 1.87, 0.86, 0.5, 0.59),
}

#: every other ``SMAX.__init__`` argument and its JaxMARL default
SMAX_DEFAULTS: dict = {
    "num_allies": 5,
    "num_enemies": 5,
    "map_width": 32,
    "map_height": 32,
    "world_steps_per_env_step": 8,
    "time_per_step": 1.0 / 16,
    "use_self_play_reward": False,
    "see_enemy_actions": True,
    "won_battle_bonus": 1.0,
    "walls_cause_death": True,
    "max_steps": 100,
    "smacv2_position_generation": False,
    "smacv2_unit_type_generation": False,
    "observation_type": "unit_list",
    "action_type": "discrete",
    **UNIT_TYPE_DEFAULTS,
}


@dataclasses.dataclass(frozen=True)
class MapSpec:
    """One map: every unit's type (allies first), team sizes, SMACv2 start generation."""

    unit_types: tuple[int, ...]
    num_allies: int
    num_enemies: int
    smacv2_position_generation: bool = False
    smacv2_unit_type_generation: bool = False

    def __post_init__(self) -> None:
        if len(self.unit_types) != self.num_allies + self.num_enemies:
            raise ValueError(f"unit_types: expected {self.num_allies + self.num_enemies} types "
                             f"(num_allies + num_enemies), got {len(self.unit_types)}")


def _m(n: int) -> tuple[int, ...]:
    return (0,) * n


_S3Z5 = (2, 2, 2, 3, 3, 3, 3, 3)

#: JaxMARL's MAP_NAME_TO_SCENARIO (types: 0 marine, 2 stalker, 3 zealot, 5 hydralisk)
MAPS: dict[str, MapSpec] = {
    "3m": MapSpec(_m(6), 3, 3),
    "2s3z": MapSpec((2, 2, 3, 3, 3) * 2, 5, 5),
    "25m": MapSpec(_m(50), 25, 25),
    "3s5z": MapSpec(_S3Z5 * 2, 8, 8),
    "8m": MapSpec(_m(16), 8, 8),
    "5m_vs_6m": MapSpec(_m(11), 5, 6),
    "10m_vs_11m": MapSpec(_m(21), 10, 11),
    "27m_vs_30m": MapSpec(_m(57), 27, 30),
    "3s5z_vs_3s6z": MapSpec(_S3Z5 + (2, 2, 2, 3, 3, 3, 3, 3, 3), 8, 9),
    "3s_vs_5z": MapSpec(_S3Z5, 3, 5),
    "6h_vs_8z": MapSpec((5,) * 6 + (3,) * 8, 6, 8),
    "smacv2_5_units": MapSpec(_m(10), 5, 5, True, True),
    "smacv2_10_units": MapSpec(_m(20), 10, 10, True, True),
    "smacv2_20_units": MapSpec(_m(40), 20, 20, True, True),
}
