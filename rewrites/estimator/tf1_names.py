"""The names TF1 gives the trainable variables of a model_fn, for warm starts from TF1 checkpoints."""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import is_name


class TF1VariableNames:
    """The names TF1 gives the trainable variables a model_fn creates, in creation order.

    A tf.layers layer opens a variable scope named after its class, made unique within the
    enclosing scope (`dense`, `dense_1`, ...) unless given a name; `names` is None once a
    name cannot be known statically (a computed scope or layer name).
    """

    BASE = {"layers.dense": "dense", "layers.Dense": "dense", "layers.conv2d": "conv2d", "layers.Conv2D": "conv2d",
            "layers.batch_normalization": "batch_normalization", "layers.BatchNormalization": "batch_normalization"}
    TRAINABLE = {"dense": (("kernel", None), ("bias", "use_bias")), "conv2d": (("kernel", None), ("bias", "use_bias")),
                 "batch_normalization": (("gamma", "scale"), ("beta", "center"))}  # (variable, switched off by)

    def __init__(self) -> None:
        self.names: list[str] | None = []
        self.scopes: tuple[str, ...] = ()
        self.used: dict[tuple[tuple[str, ...], str], int] = {}  # (scope, base) -> layers named so far
        self.log: list[tuple] = []  # every layer and table named, to repeat a loop's

    def repeat(self, start: int, times: int | None) -> None:
        """A loop body ran ``times`` times in all (None: unknown): name what it made ``times - 1`` more times."""
        if times is None:
            self.names = None
            return
        for _ in range(times - 1):
            for scopes, method, args in self.log[start:]:
                outer, self.scopes = self.scopes, scopes
                getattr(self, method)(*args)
                self.scopes = outer

    def enter(self, name: cst.BaseExpression | None) -> None:
        self.scopes = (*self.scopes, self._literal(name))

    def layer(self, api: str, args: dict[str, cst.BaseExpression]) -> None:
        self.log.append((self.scopes, "layer", (api, args)))
        base = self.BASE.get(api)
        if base is None:
            return
        scope = self._literal(args["name"]) if "name" in args else self._default_scope(base)
        for variable, switch in self.TRAINABLE[base]:
            if not (switch in args and is_name(args[switch], "False")):
                self._add(scope, variable)

    def table(self, name: cst.BaseExpression | None) -> None:
        self.log.append((self.scopes, "table", (name,)))
        self._add(self._literal(name))

    def _default_scope(self, base: str) -> str:
        count = self.used.get((self.scopes, base), 0)
        self.used[(self.scopes, base)] = count + 1
        return f"{base}_{count}" if count else base

    def _add(self, *parts: str | None) -> None:
        path = (*self.scopes, *parts)
        if self.names is not None and None not in path:
            self.names.append("/".join(path))
        else:
            self.names = None

    @staticmethod
    def _literal(node: cst.BaseExpression | None) -> str | None:
        return node.evaluated_value if isinstance(node, cst.SimpleString) else None
