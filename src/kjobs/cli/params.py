"""Option types shared by the commands."""

from __future__ import annotations

import math
from typing import Any

import click


class FloatRange(click.FloatRange):
    """`click.FloatRange` that also refuses `nan`: every comparison with NaN is false, so click's bounds let it
    through (`--backoff nan` ran as a back-off of 0). `inf` stays: a bound no timer reaches."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        converted = super().convert(value, param, ctx)
        if isinstance(converted, float) and math.isnan(converted):
            self.fail(f"{value!r} is not a number.", param, ctx)
        return converted
