"""``[tool.tf-migrate]`` in the nearest pyproject.toml, and which rules are on.

    [tool.tf-migrate]
    select = ["TFM1", "TFM2"]        # rule ids or prefixes; default: all
    ignore = ["TFM102"]
    exclude = ["legacy/", "*_pb2.py"]  # globs, relative to the pyproject.toml's folder
    force-exclude = true             # exclude files named on the command line too (as pre-commit names them)
    keras = "auto"                   # how generated code imports Keras: "auto", "tf_keras" or "tf.keras"
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

LIST_KEYS = ("select", "ignore", "exclude")
BOOL_KEYS = ("force-exclude",)

# How generated code imports Keras 2 as `keras` (rewrites/base.py KERAS_IMPORTS):
# "auto": the keras package where it is Keras 2 (TensorFlow 2.15 and older), else tf_keras (from 2.16,
#   Keras 3, which ParameterServerStrategy cannot train); fast to start on every release;
# "tf_keras": the tf_keras package (TensorFlow 2.15 and every later release with `pip install tf-keras`;
#   on 2.15 autograph converts all of tf_keras at the first fit: seconds more at every start);
# "tf.keras": `from tensorflow import keras` (Keras 2 only up to TF 2.15).
KERAS_CHOICES = ("auto", "tf_keras", "tf.keras")


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    keras: str = "auto"
    force_exclude: bool = False
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
    unknown = sorted(set(table) - {*LIST_KEYS, *BOOL_KEYS, "keras"})
    if unknown:
        raise ConfigError(f"{pyproject}: unknown key(s) in [tool.tf-migrate]: {', '.join(unknown)} "
                          f"(known: {', '.join(LIST_KEYS)}, {', '.join(BOOL_KEYS)}, keras)")
    keras = table.get("keras", "auto")
    if keras not in KERAS_CHOICES:
        raise ConfigError(f"{pyproject}: [tool.tf-migrate] keras must be one of {', '.join(map(repr, KERAS_CHOICES))}, "
                          f"not {keras!r}")
    values = {}
    for key in LIST_KEYS:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{pyproject}: [tool.tf-migrate] {key} must be a list of strings")
        values[key] = tuple(value)
    for key in BOOL_KEYS:
        if not isinstance(table.get(key, False), bool):
            raise ConfigError(f"{pyproject}: [tool.tf-migrate] {key} must be true or false, not {table[key]!r}")
    return Config(select=values["select"] or ("ALL",), ignore=values["ignore"], exclude=values["exclude"],
                  keras=keras, force_exclude=table.get("force-exclude", False), root=pyproject.parent, source=pyproject)


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
