"""Kubernetes resource quantities (`100m`, `1Gi`, `1e3`, `500M`): parse to an exact number, format canonically.

Kubernetes keeps quantities as exact decimals (`resource.Quantity`); this module uses `Fraction` for the same
exactness so that `1.5Gi` stays 1610612736 bytes and `0.1` stays 100m. The scanner follows Kubernetes'
`parseQuantityString` character by character, so what it accepts, rejects and the error texts match; formatting
follows `Quantity.String()` (canonical form: largest power-of-1000 / power-of-1024 suffix that keeps the number an
integer, keeping the family of suffix the user wrote). The scheduler and node agent reuse `parse_quantity`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from functools import lru_cache

QUANTITY_REGEX = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{QUANTITY_REGEX}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_MAX_EXPONENT = 1000  # far beyond any real resource; keeps hostile input from building huge integers


class QuantityError(ValueError):
    """A string that Kubernetes would not accept as a quantity; `str()` is Kubernetes' message."""


class Format(Enum):
    """How a quantity was written, which decides how it is printed back (Kubernetes' `Format`)."""

    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL.items()}
_BINARY_BY_EXP = {v: k for k, v in _BINARY.items()}
_NANO = Fraction(1, 10**9)
_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")


@dataclass(frozen=True)
class Quantity:
    """An exact quantity and the notation it was written in."""

    value: Fraction
    format: Format = Format.DECIMAL_SI

    def __str__(self) -> str:
        return format_quantity(self.value, self.format)

    def milli_value(self) -> int:
        """Thousandths, rounded up (Kubernetes' `MilliValue`): CPU in millicores."""
        return _ceil_away(self.value * 1000)

    def int_value(self) -> int:
        """Whole units, rounded up (Kubernetes' `Value`): memory in bytes."""
        return _ceil_away(self.value)

    def __float__(self) -> float:
        return float(self.value)


def _ceil_away(x: Fraction) -> int:
    return math.ceil(x) if x >= 0 else -math.ceil(-x)


def _scan(text: str) -> tuple[bool, str, str, str]:
    """Kubernetes' `parseQuantityString`: (positive, numerator digits, denominator digits, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:end]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """(base, exponent, format) of a suffix, or raise Kubernetes' suffix error."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], Format.DECIMAL_SI
    if suffix in _BINARY:
        return 2, _BINARY[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        rest = suffix[1:]
        body = rest[1:] if rest[0] in "+-" else rest
        if body and all(c in _DIGITS for c in body):
            exponent = int(rest)
            if abs(exponent) > _MAX_EXPONENT:
                raise QuantityError(ERR_NUMERIC)
            return 10, exponent, Format.DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


@lru_cache(maxsize=4096, typed=True)
def parse_quantity(raw: str | int | float) -> Quantity:
    """Parse a quantity as the API server decodes it (a JSON string or number); raises `QuantityError`."""
    if isinstance(raw, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(raw, int):
        return Quantity(Fraction(raw), Format.DECIMAL_SI)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(ERR_FORMAT_WRONG)
        raw = repr(raw)
    text = raw
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    positive, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    magnitude = Fraction(int(num + denom), 10 ** len(denom)) if denom else Fraction(int(num))
    magnitude *= Fraction(base) ** exponent
    if magnitude.denominator != 1 and (magnitude / _NANO).denominator != 1:
        magnitude = Fraction(math.ceil(magnitude / _NANO)) * _NANO
    return Quantity(magnitude if positive else -magnitude, fmt)


def format_quantity(value: Fraction, fmt: Format = Format.DECIMAL_SI) -> str:
    """Canonical text of a quantity, as Kubernetes' `Quantity.String()` prints it."""
    if value == 0:
        return "0"
    if fmt is Format.BINARY_SI:
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = Format.DECIMAL_SI
        else:
            mantissa = value.numerator
            exp = 0
            while exp < 60 and mantissa % 1024 == 0:
                mantissa //= 1024
                exp += 10
            return f"{mantissa}{_BINARY_BY_EXP.get(exp, '')}"
    mantissa, exp10 = _canonical_decimal(value)
    if exp10 == 0:
        return str(mantissa)
    if fmt is Format.DECIMAL_EXPONENT:
        return f"{mantissa}e{exp10}"
    suffix = _DECIMAL_BY_EXP.get(exp10)
    return f"{mantissa}{suffix}" if suffix is not None else f"{mantissa}e{exp10}"


def _canonical_decimal(value: Fraction) -> tuple[int, int]:
    """(mantissa, exponent): value = mantissa * 10**exponent, exponent a multiple of 3, as large as possible."""
    exp = 0
    scaled = value
    while scaled.denominator != 1:
        scaled *= 1000
        exp -= 3
    mantissa = scaled.numerator
    while mantissa != 0 and mantissa % 1000 == 0:
        mantissa //= 1000
        exp += 3
    return mantissa, exp


def canonical(raw: str | int | float) -> str:
    """Re-print a quantity the way the API server stores it (values rounded up to milli precision)."""
    q = parse_quantity(raw)
    value = q.value
    if (value * 1000).denominator != 1:
        value = Fraction(_ceil_away(value * 1000), 1000)
    return format_quantity(value, q.format)
