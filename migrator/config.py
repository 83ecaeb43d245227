"""``[tool.tf-migrate]`` in the nearest pyproject.toml, and which rules are on.

    [tool.tf-migrate]
    select = ["TFM1", "TFM2"]        # rule ids or prefixes; default: all
    ignore = ["TFM102"]
    exclude = ["legacy/", "*_pb2.py"]  # globs, relative to the pyproject.toml's folder
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rewrites import RULES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KEYS = ("select", "ignore", "exclude")


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    root: Path | None = None      # the folder of the pyproject.toml it came from
    source: Path | None = None


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in ``start`` or a folder above it."""
    folder = start.absolute()
    folder = folder if folder.is_dir() else folder.parent
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate / "pyproject.toml"
    return None


def load_config(pyproject: Path | None) -> Config:
    if pyproject is None:
        return Config()
    try:
        with open(pyproject, "rb") as handle:
            table = tomllib.load(handle).get("tool", {}).get("tf-migrate", {})
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read [tool.tf-migrate]: {error}") from None
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{pyproject}: unknown key(s) in [tool.tf-migrate]: {', '.join(unknown)} (known: {', '.join(KEYS)})")
    values = {}
    for key in KEYS:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{pyproject}: [tool.tf-migrate] {key} must be a list of strings")
        values[key] = tuple(value)
    return Config(select=values["select"] or ("ALL",), ignore=values["ignore"], exclude=values["exclude"],
                  root=pyproject.parent, source=pyproject)


def expand(selectors: Iterable[str]) -> set[str]:
    """Rule ids from ids and prefixes ("TFM2" is every TFM2xx rule, "ALL" every rule)."""
    ids: set[str] = set()
    for selector in selectors:
        selector = selector.strip().upper()
        matched = set(RULES) if selector == "ALL" else {rule for rule in RULES if rule.startswith(selector)}
        if not selector or not matched:
            raise ConfigError(f"unknown rule selector {selector!r} (see `tf-migrate rules`)")
        ids |= matched
    return ids


def enabled_rules(select: Iterable[str], ignore: Iterable[str]) -> frozenset[str]:
    return frozenset(expand(select) - expand(ignore))
