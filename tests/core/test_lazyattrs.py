"""`kjobs.lazyattrs.lazy_getattr`: the PEP 562 hook `kjobs` and `kjobs.store` share (docs/startup52.md)."""

from __future__ import annotations

import sys
import types

import pytest

from kjobs.lazyattrs import lazy_getattr


def _package(table: dict[str, str]) -> types.ModuleType:
    module = types.ModuleType("lazy_pkg")
    module.__getattr__ = lazy_getattr("lazy_pkg", table, vars(module))  # type: ignore[attr-defined]
    return module


def test_a_name_is_read_from_its_module_once_and_then_kept_in_the_package() -> None:
    sys.modules.pop("colorsys", None)
    package = _package({"rgb_to_hsv": "colorsys"})
    assert "colorsys" not in sys.modules
    function = package.rgb_to_hsv
    assert function is sys.modules["colorsys"].rgb_to_hsv
    assert vars(package)["rgb_to_hsv"] is function


def test_an_unknown_name_raises_the_attribute_error_python_gives_a_module() -> None:
    package = _package({})
    with pytest.raises(AttributeError, match=r"^module 'lazy_pkg' has no attribute 'nope'$"):
        package.nope  # noqa: B018
    assert not hasattr(package, "nope")


@pytest.mark.parametrize(
    ("package", "name", "module"),
    [("kjobs", "validate_manifest", "kjobs.validate"), ("kjobs.store", "SqliteStore", "kjobs.store.sqlite")],
)
def test_the_packages_hand_out_the_very_object_of_the_module(package: str, name: str, module: str) -> None:
    imported = __import__(package, fromlist=[name])
    assert getattr(imported, name) is getattr(sys.modules[module], name)
    with pytest.raises(AttributeError, match=rf"^module '{package}' has no attribute 'missing_name'$"):
        getattr(imported, "missing_name")  # noqa: B009
