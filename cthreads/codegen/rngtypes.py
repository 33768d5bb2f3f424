"""The compiler's type of ``Random`` locals and parameters (``codegen/rng.py``).

A ``Random`` exists only in the frontend: a local is nine ``uint32`` locals (its word counter,
the four words of its stream and key, the four cached words of its block), so nothing below
the frontend sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lang.random import Random


@dataclass(frozen=True)
class RngType:
    elem: str = "uint32"         # the type of each of its words

    name = "Random"

    def __str__(self) -> str:
        return "Random"

    def concrete(self, widths) -> "RngType":
        return self

    def with_elem(self, elem: str) -> "RngType":
        return self


RANDOM = RngType()


def rng_of(obj) -> RngType | None:
    """``RANDOM`` when a resolved annotation object is the ``Random`` class, else None."""
    return RANDOM if obj is Random else None
