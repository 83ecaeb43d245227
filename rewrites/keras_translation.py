"""The machinery of the Keras tables (rewrites/keras_equivalents.py, rewrites/keras_optimizers.py).

A ``Translation`` pairs a TF1 callable's signature with its Keras counterpart; ``bind`` binds a
call's arguments to the TF1 signature (positional or keyword), ``keras_call`` writes them as
Keras keywords, with the TF1 defaults that differ from Keras' written out.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst

from migrator.findings import Safety
from rewrites.syntax import bind_arguments, source


@dataclass(frozen=True)
class KerasCode:
    """A Keras expression and how far it can be trusted.

    why: for Safety.NUMERIC, one line on what differs from TF1 (a finding message); for IDENTITY, why.
    after_compile: statements to run right after ``model.compile(...)``, inside the same
        strategy scope, with ``optimizer`` and ``model`` bound and the model built.
    """

    code: str
    safety: Safety
    why: str = ""
    after_compile: tuple[str, ...] = ()


class NoKerasEquivalent(Exception):
    """The call cannot be translated safely; str(error) says why and what a person should do."""


@dataclass(frozen=True)
class Translation:
    """One TF1 callable and its Keras counterpart.

    tf1: the TF1 signature as TF1 documents it; parameters without a default are required.
    keywords: the Keras keywords in the Keras signature's order: a TF1 parameter name
        (passed on when given), or ``keyword=source`` (always written). A bound TF1
        parameter not listed is dropped; the functions below refuse the values of
        dropped parameters that would change the numbers.
    renames: TF1 parameter -> Keras keyword, where they differ.
    explicit: TF1 parameters whose TF1 default differs from Keras': written out when absent.
    """

    keras: str
    tf1: str
    keywords: tuple[str, ...]
    renames: Mapping[str, str] = field(default_factory=dict)
    explicit: tuple[str, ...] = ()


def lookup(table: Mapping[str, Translation], api: str, kind: str,
           refused: Mapping[str, str] | None = None) -> Translation:
    """The translation of ``api``; NoKerasEquivalent saying why for one ``refused`` or unknown."""
    if refused and api in refused:
        raise NoKerasEquivalent(f"{api}: {refused[api]}")
    if api not in table:
        raise NoKerasEquivalent(f"{api}: no Keras {kind} is known to compute the same thing; translate it by hand")
    return table[api]


@functools.lru_cache(maxsize=None)
def signature(tf1: str) -> dict[str, cst.BaseExpression | None]:
    """"learning_rate, epsilon=1e-08" -> {"learning_rate": None, "epsilon": <1e-08>}: parameter -> default."""
    function = cst.ensure_type(cst.parse_statement(f"def f({tf1}): pass"), cst.FunctionDef)
    return {param.name.value: param.default for param in function.params.params}


def bind(api: str, call: cst.Call, translation: Translation) -> dict[str, cst.BaseExpression]:
    """TF1 parameter -> argument expression; NoKerasEquivalent when that cannot be known statically."""
    defaults = signature(translation.tf1)
    bound = bind_arguments(call, list(defaults))
    if bound is None:
        raise NoKerasEquivalent(f"{api}: the arguments cannot be mapped statically (*args, **kwargs, an unknown "
                                "keyword or too many arguments); translate the call by hand")
    missing = [name for name, default in defaults.items() if default is None and name not in bound]
    if missing:
        raise NoKerasEquivalent(f"{api}: missing {', '.join(missing)}; TF1 requires it, so this call never ran")
    return {name: arg.value for name, (_, arg) in bound.items()}


def keras_call(translation: Translation, bound: Mapping[str, cst.BaseExpression]) -> str:
    """``Keras(keyword=source, ...)``: the given arguments and the TF1 defaults Keras does not share.

    A literal None where TF1's default is None means "the default", as it does in Keras: left out.
    """
    defaults = signature(translation.tf1)
    arguments = []
    for name in translation.keywords:
        if "=" in name:
            arguments.append(name)
            continue
        value = bound.get(name, defaults[name] if name in translation.explicit else None)
        if value is not None and not (is_name_in(value, "None") and is_name_in(defaults[name], "None")):
            arguments.append(f"{translation.renames.get(name, name)}={source(value)}")
    return f"{translation.keras}({', '.join(arguments)})"


def is_number(node: cst.BaseExpression, value: float) -> bool:
    return isinstance(node, (cst.Integer, cst.Float)) and math.isclose(node.evaluated_value, value, rel_tol=1e-12)


def is_name_in(node: cst.BaseExpression | None, *names: str) -> bool:
    return isinstance(node, cst.Name) and node.value in names
