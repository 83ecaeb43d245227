"""Which values of a program are known before it runs: literals, names bound to them, flags' defaults, and
comparisons, arithmetic, boolean logic and subscripts of them; ``range`` and numpy's ``arange`` / ``linspace``
of numbers (bucket boundaries are commonly written so), a known string's `split` and `format`; a
comprehension's names in the round being read (``looping``)."""

from __future__ import annotations

import math
import operator
from contextlib import contextmanager
from typing import Iterator

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from rewrites.program.places import Value
from rewrites.syntax import bind_arguments, is_none, subtree

UNKNOWN = object()
"""What ``Values.constant`` gives for a value it cannot know before the program runs."""
# Builtins of one argument a program writes numbers and lists with (`int(1e4)`, `len(BOUNDARIES)`).
_BUILTINS = {"int": int, "float": float, "len": len, "list": list, "tuple": tuple, "str": str, "abs": abs}
_ARITHMETIC = {cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
               cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod,
               cst.Power: operator.pow}
_COMPARISONS = {cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.Is: lambda a, b: a is b,
                cst.IsNot: lambda a, b: a is not b, cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b}


_NUMPY_SEQUENCES = {"numpy.arange", "numpy.linspace"}
_SEQUENCE_PARAMETERS = {"range": ("start", "stop", "step"), "arange": ("start", "stop", "step"),
                        "linspace": ("start", "stop", "num")}
_LONGEST = 100_000  # a longer list is not something to write into a program


def _arange(start, stop, step, integers_only: bool) -> list | object:
    if step == 0 or (integers_only and not all(isinstance(n, int) for n in (start, stop, step))):
        return UNKNOWN
    count = max(0, math.ceil((stop - start) / step))
    if count > _LONGEST:
        return UNKNOWN
    if any(isinstance(n, float) for n in (start, stop, step)):  # numpy fills floats from its first two values
        start, step = float(start), (start + step) - start
    return [start + index * step for index in range(count)]


def _linspace(args: dict) -> list | object:
    """numpy's: `start + index * step`, the last one `stop` itself; floats."""
    start, stop, num = float(args["start"]), float(args["stop"]), args.get("num", 50)
    if not isinstance(num, int) or not 0 <= num <= _LONGEST:
        return UNKNOWN
    if num == 1:
        return [start]
    step = (stop - start) / (num - 1)
    return [start + index * step for index in range(num - 1)] + [stop] if num else []


class ConstantReading:
    """Mixed into Values (whose resolve and place_of it uses)."""

    _looping: tuple = ()  # (comprehension, name, value) of each comprehension being read round by round

    @contextmanager
    def looping(self, comprehension: cst.CSTNode, bound: dict[str, object]) -> Iterator[None]:
        """Read a comprehension's element with its names bound to one round's values (``bound``)."""
        saved = self._looping
        self._looping = (*saved, *((comprehension, name, value) for name, value in bound.items()))
        try:
            yield
        finally:
            self._looping = saved

    def looped(self, value: Value) -> object:
        """The value of a comprehension's name, in the round being read (``looping``); UNKNOWN for another node."""
        node = value.node
        if isinstance(node, cst.Name):
            for comprehension, name, bound in reversed(self._looping):
                if name == node.value and any(a is comprehension for a in value.view.ancestors(node)):
                    return bound
        return UNKNOWN

    def constant(self, value: Value, constants: dict[str, object] | None = None, flags: bool = False) -> object:
        """The Python value of ``value`` when it is known before the program runs (literals, names bound to them,
        comparisons and boolean logic of them), else UNKNOWN. ``constants``: TensorFlow APIs with a known value
        (e.g. "estimator.ModeKeys.TRAIN": "train"); ``flags``: a command-line flag counts as its default."""
        constants = constants or {}
        if self._looping and (looped := self.looped(value)) is not UNKNOWN:
            return looped
        resolved = self.resolve(value)
        node = resolved.node
        if flags and (default := self.flag_default(resolved)) is not UNKNOWN:
            return default
        api = resolved.view.api(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if api is not None:
            return constants.get(api, UNKNOWN)
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
            return node.evaluated_value
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            inner = self.constant(Value(node.expression, resolved.place), constants, flags)
            return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else UNKNOWN
        if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = self.constant(Value(node.expression, resolved.place), constants, flags)
            return UNKNOWN if inner is UNKNOWN else not inner
        if isinstance(node, cst.BooleanOperation):
            left = self.constant(Value(node.left, resolved.place), constants, flags)
            right = self.constant(Value(node.right, resolved.place), constants, flags)
            if isinstance(node.operator, cst.And):
                return False if left is False or right is False else UNKNOWN if UNKNOWN in (left, right) else \
                    bool(left and right)
            return True if left is True or right is True else UNKNOWN if UNKNOWN in (left, right) else \
                bool(left or right)
        if isinstance(node, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
            items = [self.constant(Value(element.value, resolved.place), constants, flags) for element in node.elements]
            return UNKNOWN if UNKNOWN in items else items
        if isinstance(node, cst.Subscript) and len(node.slice) == 1:
            return self._constant_subscript(resolved, constants, flags)
        if isinstance(node, cst.BinaryOperation) and type(node.operator) in _ARITHMETIC:
            return self._constant_arithmetic(resolved, constants, flags)
        if isinstance(node, cst.Call) and (sequence := self._constant_sequence(resolved, constants, flags)) is not None:
            return sequence
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "split", "format"):
            return self._constant_string_method(resolved, constants, flags)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in _BUILTINS \
                and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star \
                and self.binding(node.func, resolved.place).kind == "builtin":
            inner = self.constant(Value(node.args[0].value, resolved.place), constants, flags)
            try:
                return UNKNOWN if inner is UNKNOWN else _BUILTINS[node.func.value](inner)
            except (TypeError, ValueError, OverflowError):
                return UNKNOWN
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            left = self.constant(Value(node.left, resolved.place), constants, flags)
            right = self.constant(Value(node.comparisons[0].comparator, resolved.place), constants, flags)
            operator = type(node.comparisons[0].operator)
            if UNKNOWN in (left, right) or operator not in _COMPARISONS:
                return UNKNOWN
            try:
                return _COMPARISONS[operator](left, right)
            except TypeError:  # `1 in "ab"`
                return UNKNOWN
        return UNKNOWN

    def _constant_arithmetic(self, value: Value, constants, flags: bool) -> object:
        """`24 * 7`, `NBUCKETS ** 2`, `len(WORDS) + 1` of known numbers; `LIST + LIST`, `STRING + STRING`."""
        node = value.node
        left = self.constant(Value(node.left, value.place), constants, flags)
        right = self.constant(Value(node.right, value.place), constants, flags)
        numbers = all(isinstance(side, (int, float)) and not isinstance(side, bool) for side in (left, right))
        lists = isinstance(node.operator, cst.Add) and (isinstance(left, list) and isinstance(right, list)
                                                        or isinstance(left, str) and isinstance(right, str))
        if not (numbers or lists) or (isinstance(node.operator, cst.Power) and abs(right) > 64):
            return UNKNOWN
        try:
            return _ARITHMETIC[type(node.operator)](left, right)
        except (ArithmeticError, ValueError):
            return UNKNOWN

    def _constant_string_method(self, value: Value, constants, flags: bool) -> object:
        """`"a,b,c".split(",")`, `"d_{}".format(key)` of a known string and known arguments."""
        node = value.node
        text = self.constant(Value(node.func.value, value.place), constants, flags)
        args = [self.constant(Value(arg.value, value.place), constants, flags) for arg in node.args
                if arg.keyword is None and not arg.star]
        known = (str, int, float, bool, type(None))
        if not isinstance(text, str) or len(args) != len(node.args) or not all(isinstance(a, known) for a in args):
            return UNKNOWN
        if node.func.attr.value == "format":
            return text.format(*args)
        return text.split(*args) if len(args) <= 1 and all(isinstance(a, (str, type(None))) for a in args) \
            else UNKNOWN

    def _constant_sequence(self, value: Value, constants, flags: bool) -> list | None:
        """`range(a, b, step)`, `np.arange(...)` / `np.linspace(...)` of known numbers, `<that>.tolist()`: the list
        of numbers numpy would give (None: not such a call, UNKNOWN: its arguments are not known)."""
        node = value.node
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "tolist" and not node.args:
            inner = self.resolve(Value(func.value, value.place))
            return self._constant_sequence(inner, constants, flags) if isinstance(inner.node, cst.Call) else None
        names = {name.name for name in value.view.get_metadata(QualifiedNameProvider, func, set())}
        builtin = isinstance(func, cst.Name) and func.value == "range" and \
            self.binding(func, value.place).kind == "builtin"
        kind = "range" if builtin else next((name[6:] for name in names if name in _NUMPY_SEQUENCES), None)
        if kind is None:
            return None
        bound = bind_arguments(node, _SEQUENCE_PARAMETERS[kind])
        if bound is None:
            return UNKNOWN
        args = {key: self.constant(Value(argument.value, value.place), constants, flags)
                for key, (_, argument) in bound.items()}
        if any(not isinstance(arg, (int, float)) or isinstance(arg, bool) for arg in args.values()):
            return UNKNOWN
        if kind == "linspace":
            return _linspace(args)
        if "stop" not in args:  # arange(stop)
            args = {"start": 0, "stop": args["start"]}
        return _arange(args["start"], args["stop"], args.get("step", 1), kind == "range")

    def _constant_subscript(self, value: Value, constants, flags: bool) -> object:
        """`LIST[1:]`, `LIST[0]` of a constant list."""
        node, place = value.node, value.place
        container = self.constant(Value(node.value, place), constants, flags)
        part = node.slice[0].slice
        if not isinstance(container, list):
            return UNKNOWN
        if isinstance(part, cst.Index):
            index = self.constant(Value(part.value, place), constants, flags)
            return container[index] if isinstance(index, int) and -len(container) <= index < len(container) else UNKNOWN
        bounds = [None if bound is None else self.constant(Value(bound, place), constants, flags)
                  for bound in (part.lower, part.upper, part.step)]
        if any(bound is UNKNOWN or not (bound is None or isinstance(bound, int)) for bound in bounds):
            return UNKNOWN
        return container[slice(*bounds)]

    def flag_default(self, value: Value) -> object:
        """For `FLAGS.name` (tf.flags, tf.app.flags, absl.flags): the default its DEFINE_* call gives; for
        `args.name` of `args = parser.parse_args()`: its add_argument's; else UNKNOWN."""
        node = value.node
        if not isinstance(node, cst.Attribute):
            return UNKNOWN
        holder = self.resolve(Value(node.value, value.place)).node
        if isinstance(holder, cst.Call):
            return self._argument_default(holder, node.attr.value, value)
        names = value.view.get_metadata(QualifiedNameProvider, node.value, set()) | (
            value.view.get_metadata(QualifiedNameProvider, holder, set()) if holder is not node.value else set())
        if not any(name.name.endswith("flags.FLAGS") for name in names):
            return UNKNOWN
        for view in value.view.tree.views:
            for call in (n for n in subtree(view.module) if isinstance(n, cst.Call)):
                func = call.func.attr.value if isinstance(call.func, cst.Attribute) else \
                    call.func.value if isinstance(call.func, cst.Name) else ""
                if not func.startswith("DEFINE_") or not call.args:
                    continue
                bound = bind_arguments(call, ("name", "default", "help"))
                flag = bound and bound.get("name")
                if flag and isinstance(flag[1].value, cst.SimpleString) and \
                        flag[1].value.evaluated_value == node.attr.value and "default" in bound:
                    return self.constant(Value(bound["default"][1].value, self.place_of(view, call)))
        return UNKNOWN

    def _argument_default(self, parsed: cst.Call, name: str, value: Value) -> object:
        """The default of the argparse option whose destination is ``name``, for the namespace ``parsed``
        (`parser.parse_args()`) gives: `default=`, None when it has none, False / True for store_true / store_false;
        UNKNOWN for a required option or another parser."""
        func = parsed.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "parse_args" and isinstance(func.value,
                                                                                                 cst.Name)):
            return UNKNOWN
        view, parser = value.view, func.value.value
        for call in (n for n in subtree(view.module) if isinstance(n, cst.Call)):
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"
                    and isinstance(call.func.value, cst.Name) and call.func.value.value == parser):
                continue
            options = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
            flags = [arg.value.evaluated_value for arg in call.args if arg.keyword is None
                     and isinstance(arg.value, cst.SimpleString)]
            long = next((flag for flag in flags if flag.startswith("--")), flags[0] if flags else "")
            dest = options["dest"].evaluated_value if isinstance(options.get("dest"), cst.SimpleString) else \
                long.lstrip("-").replace("-", "_")
            if dest != name:
                continue
            if "required" in options and not is_none(options["required"]) and not (
                    isinstance(options["required"], cst.Name) and options["required"].value == "False"):
                return UNKNOWN
            action = options.get("action")
            action = action.evaluated_value if isinstance(action, cst.SimpleString) else None
            if "default" in options:
                return self.constant(Value(options["default"], self.place_of(view, call)))
            return {"store_true": False, "store_false": True}.get(action, None if action in (None, "store") else
                                                                  UNKNOWN)
        return UNKNOWN
