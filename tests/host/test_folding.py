"""Folding a flat workgroup count into the device's per-dimension limit
(``backend/dispatch.fold_groups``), checked against a brute-force reference."""

from __future__ import annotations

import pytest

from cthreads.backend.dispatch import fold_groups
from cthreads.errors import GpuInvalidArgument


def reference(groups: int, limit: int) -> tuple[int, int, int] | None:
    """The fold with the fewest rows whose grid covers ``groups`` with less than one row's worth
    of spare workgroups and stays within ``limit`` per dimension; None when none exists."""
    for rows in range(1, limit + 1):
        width = -(-groups // rows)
        if width <= limit:
            return (max(width, 1), rows, 1)
    return None


@pytest.mark.parametrize("limit", [1, 2, 7, 16])
def test_every_count_matches_the_reference(limit):
    for groups in range(0, limit * limit + 3):
        want = reference(groups, limit)
        if want is None:
            with pytest.raises(GpuInvalidArgument):
                fold_groups(groups, limit)
            continue
        x, y, z = fold_groups(groups, limit)
        assert (x, y, z) == want, groups
        assert x * y >= groups and x <= limit and y <= limit and z == 1
        if groups:
            assert x * y - groups < y                      # wasting less than a row


@pytest.mark.parametrize("groups, expected", [
    (0, (1, 1, 1)), (1, (1, 1, 1)), (65_535, (65_535, 1, 1)), (65_536, (32_768, 2, 1)),
    (1_000_000, (62_500, 16, 1)), (65_535 * 65_535, (65_535, 65_535, 1)),
])
def test_counts_on_a_real_limit(groups, expected):
    assert fold_groups(groups, 65_535) == expected


def test_beyond_the_grid_is_refused_with_the_numbers():
    with pytest.raises(GpuInvalidArgument) as info:
        fold_groups(65_535 * 65_535 + 1, 65_535)
    assert str(info.value) == ("a dispatch of 4,294,836,226 workgroups exceeds the device's "
                               "65,535 x 65,535 grid; use a smaller n")
