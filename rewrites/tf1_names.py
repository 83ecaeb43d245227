"""The names TF1 gives the variables of a model_fn or a graph, and the Keras layer names that keep them.

TF1 names a ``tf.layers`` layer's variables in a variable scope named after the layer's class,
made unique within the enclosing scope (``dense``, ``dense_1``, ...) unless the layer is given a
name: ``linear/dense_1/kernel``. ``get_variable`` names its variable itself, inside the enclosing
scopes. The migrated Keras layers are named after those scopes, so that the model's variables
answer to TF1's names: a TF1 checkpoint maps onto them by name (the generated
``restore_tf1_checkpoint``, templates/tf1_checkpoint.py.j2).

In a loop, a layer's number counts the layers made by the iterations before: its name is an
expression of the loop's index (``f"dense_{index}" if index else "dense"``), and after the loop
the count has grown by the loop's length (``len(params["hidden_units"])`` when only known at run
time). Names inside a loop are known when its body has been read (how many layers one iteration
makes), so they are handed out as placeholders that ``end_loop`` resolves.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import libcst as cst

from rewrites.syntax import is_name

# The layer functions and classes with variables, by the scope name TF1 gives them.
BASES = {"layers.dense": "dense", "layers.Dense": "dense", "layers.conv2d": "conv2d", "layers.Conv2D": "conv2d",
         "layers.batch_normalization": "batch_normalization",
         "layers.BatchNormalization": "batch_normalization", "keras.layers.Dense": "dense"}
# Their variables, and the argument that switches one off.
VARIABLES = {"dense": (("kernel", None), ("bias", "use_bias")), "conv2d": (("kernel", None), ("bias", "use_bias")),
             "batch_normalization": (("gamma", "scale"), ("beta", "center"), ("moving_mean", None),
                                     ("moving_variance", None))}
_PLACEHOLDER = "__tf1_name_{}__"  # a name in a loop, until the loop has been read


@dataclass(frozen=True)
class Count:
    """How many layers of one kind a scope has made so far: a number plus multiples of run-time values."""

    number: int = 0
    terms: tuple[tuple[int, str], ...] = ()  # (factor, code)

    def __add__(self, other: Count) -> Count:
        factors: dict[str, int] = {}
        for factor, code in (*self.terms, *other.terms):
            factors[code] = factors.get(code, 0) + factor
        return Count(self.number + other.number, tuple((f, c) for c, f in factors.items() if f))

    def code(self) -> str:
        parts = [code if factor == 1 else f"{factor} * {code}" for factor, code in self.terms]
        return " + ".join([*parts, *([str(self.number)] if self.number or not parts else [])])


@dataclass
class _Loop:
    index: str
    length: int | str | None       # its number of iterations: a number, code, or unknown
    start: dict                    # the counts when it began
    made: dict = field(default_factory=dict)  # (scopes, base) -> layers one iteration made so far
    pending: dict = field(default_factory=dict)  # placeholder -> (scopes, base, j-th of the iteration)
    followed: bool = True          # False around a loop in it: its names would need both indexes


class TF1Names:
    """TF1's names of the variables a model_fn (or a between-graph graph) creates, read in creation order."""

    def __init__(self) -> None:
        self.scopes: tuple[str | None, ...] = ()
        self.counts: dict[tuple[tuple, str], Count | None] = {}  # (scopes, base) -> layers named so far
        self.loops: list[_Loop] = []
        self.known = True  # False once a name could not be known (a computed scope, a loop in a loop)
        self._placeholders = itertools.count()

    def enter(self, name: cst.BaseExpression | None) -> None:
        """A `variable_scope(name)` begins (the caller restores ``scopes`` when it ends)."""
        self.scopes = (*self.scopes, _literal(name))

    def layer(self, api: str, args: dict[str, cst.BaseExpression]) -> str | None:
        """A layer is made: the Keras name that keeps TF1's scope of its variables (code), None for a layer
        without variables or a name that cannot be known."""
        base = BASES.get(api)
        if base is None:
            return None
        if "name" in args:
            return self._code(self._path(_literal(args["name"])))
        return self._numbered(base)

    def variables(self, api: str, args: dict[str, cst.BaseExpression]) -> tuple[str, ...]:
        """The variables a layer of ``api`` makes, given its arguments (attributes of its Keras layer too)."""
        base = BASES.get(api)
        return tuple(variable for variable, switch in VARIABLES.get(base, ())
                     if not (switch in args and is_name(args[switch], "False")))

    def variable(self, name: cst.BaseExpression | None) -> str | None:
        """`get_variable(name, ...)`: its TF1 name (code), in the enclosing scopes."""
        return self._code(self._path(_literal(name)))

    # -- loops --------------------------------------------------------------------------------

    def begin_loop(self, index: str, length: int | str | None) -> None:
        """A loop over layers begins: ``index`` names its iteration (0, 1, ...), ``length`` is its number of
        iterations (code when known at run time only, None when not known)."""
        self.loops.append(_Loop(index, length, dict(self.counts)))

    def end_loop(self) -> dict[str, str | None]:
        """The loop ends: what its placeholders stand for (None: not known); the counts after it."""
        loop = self.loops.pop()
        for outer in self.loops:
            outer.followed = False
        unknown = bool(self.loops) or not loop.followed
        names = {}
        for placeholder, (scopes, base, j) in loop.pending.items():
            start = loop.start.get((scopes, base), Count())
            count = None if start is None or unknown else \
                start + Count(j, ((loop.made[(scopes, base)], loop.index),))
            names[placeholder] = self._code(None if count is None else self._numbered_path(scopes, base, count))
        for key, made in loop.made.items():
            start = loop.start.get(key, Count())
            if start is None or loop.length is None or unknown:
                self.counts[key] = None
            elif isinstance(loop.length, int):
                self.counts[key] = start + Count(made * loop.length)
            else:
                self.counts[key] = start + Count(0, ((made, loop.length),))
        return names

    # -- helpers --------------------------------------------------------------------------------

    def _numbered(self, base: str) -> str | None:
        key = (self.scopes, base)
        if self.loops:
            loop = self.loops[-1]
            j = loop.made.get(key, 0)
            loop.made[key] = j + 1
            placeholder = _PLACEHOLDER.format(next(self._placeholders))
            loop.pending[placeholder] = (self.scopes, base, j)
            return placeholder
        count = self.counts.get(key, Count())
        self.counts[key] = None if count is None else count + Count(1)
        return self._code(None if count is None else self._numbered_path(self.scopes, base, count))

    def _path(self, name: str | None) -> tuple | None:
        path = (*self.scopes, name)
        return None if None in path else path

    @staticmethod
    def _numbered_path(scopes: tuple, base: str, count: Count) -> tuple | None:
        return None if None in scopes else (*scopes, (base, count))

    def _code(self, path: tuple | None) -> str | None:
        """A name as code: a string, or an f-string of the counts known at run time."""
        if path is None:
            self.known = False
            return None
        *scopes, last = path
        prefix = "".join(f"{scope}/" for scope in scopes)
        if isinstance(last, str):
            return _string(prefix + last)
        base, count = last
        if not count.terms:
            return _string(prefix + (f"{base}_{count.number}" if count.number else base))
        number = count.code()
        quote = "'" if '"' in number else '"'
        numbered = f"f{quote}{prefix}{base}_{{{number}}}{quote}"
        if count.number:
            return numbered
        # No layer before it if the count is 0: an empty loop's values, or the first iteration.
        lengths = [code[4:-1] for _, code in count.terms if code.startswith("len(") and code.endswith(")")]
        zero = " or ".join(lengths) if len(lengths) == len(count.terms) else number
        return f"{numbered} if {zero} else {_string(prefix + base)}"


def _literal(node: cst.BaseExpression | None) -> str | None:
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def placeholders_resolved(code: str, names: dict[str, str | None]) -> str:
    """``code`` with the loop's name placeholders replaced by the names they stand for; an unknown name's
    ``name=`` argument goes (Keras names the layer itself)."""
    for placeholder, name in names.items():
        code = re.sub(rf",\s*name={placeholder}\b", "", code) if name is None else code.replace(placeholder, name)
    return code
