"""Numbers as the estimate prints them: a few significant figures, never in exponent form
(a DBA reads 0.000685 cores at a glance; 6.85e-04 is a puzzle)."""

from __future__ import annotations

import math


def significant(value: float, digits: int = 3) -> str:
    """`digits` significant figures: 0.000123, 0.0523, 1.23, 12.3, 1,234."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    places = max(0, min(6, digits - 1 - math.floor(math.log10(abs(value)))))
    return f"{value:,.{places}f}"
