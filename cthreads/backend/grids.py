"""Workgroup grids: a flat count of workgroups folded into the device's per-axis limit."""

from __future__ import annotations

from ..errors import GpuInvalidArgument


def fold_groups(groups, max_per_dim: int) -> tuple[int, int, int]:
    """(x, y, 1) workgroup counts covering ``groups`` flat workgroups; a tuple (x, y, z),
    each within the limit, is the grid itself."""
    if isinstance(groups, tuple):
        return groups
    if groups <= max_per_dim:
        return (max(groups, 1), 1, 1)
    gy = -(-groups // max_per_dim)
    gx = -(-groups // gy)
    if gy > max_per_dim:
        raise GpuInvalidArgument(
            f"a dispatch of {groups:,} workgroups exceeds the device's "
            f"{max_per_dim:,} x {max_per_dim:,} grid; use a smaller n")
    return (gx, gy, 1)
