"""A program's own ``forward_features(estimator, key)``: the wrapper TF1 notebooks wrote instead of tf.contrib's.

Google's training notebooks (babyweight's trainer among them) forwarded a key to the predictions so::

    def forward_features(estimator, key):
        def new_model_fn(features, labels, mode, config):
            spec = estimator.model_fn(features, labels, mode, config)
            predictions = spec.predictions
            predictions[key] = features[key]
            return spec._replace(predictions=predictions)
        return tf.estimator.Estimator(model_fn=new_model_fn, model_dir=estimator.model_dir, config=estimator.config)

    estimator = forward_features(estimator, KEY_COLUMN)

The call is migrated as contrib's is (rewrites/estimator/forwarded.py), the key in ``predict`` alone.

It is recognised by its shape, whatever its names: a function of (estimator, key or keys) holding a model_fn of
(features, labels, mode, config or params) and returning ``Estimator(model_fn=<it>, model_dir=estimator.model_dir,
config=estimator.config)`` (``params=estimator.params`` too, or not). The model_fn calls ``estimator.model_fn`` with
its own parameters, adds ``features[key]`` (or each key of ``for key in keys:``) to that spec's predictions dict and
returns the spec: itself, ``spec._replace(predictions=...)``, or an ``EstimatorSpec`` that carries the spec's loss,
train_op, eval_metric_ops and export_outputs over. Anything more or else (another field, another value, a condition)
is not this wrapper: the program is then read as it is written, and left with the reasons.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.program.modules import ModuleView
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import bind_arguments, is_docstring, is_name, single_assign

ESTIMATOR = "estimator.Estimator"
ESTIMATOR_PARAMETERS = ("model_fn", "model_dir", "config", "params", "warm_start_from")
SPEC = "estimator.EstimatorSpec"
SPEC_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
               "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks")
CARRIED = ("loss", "train_op", "eval_metric_ops", "export_outputs")  # a new EstimatorSpec must carry these over
MODEL_FN_PARAMETERS = ("features", "labels", "mode", "config")  # of an Estimator's model_fn property


@dataclass(frozen=True)
class Wrapper:
    function: cst.FunctionDef
    estimator: str  # the parameter the wrapped Estimator is passed as
    keys: str       # the parameter the key (or the list of keys) is passed as
    loop: bool      # the keys are a list, each forwarded by a loop
    made: cst.Call  # the Estimator(...) it returns


@dataclass(frozen=True)
class Wrapping:
    """One call of a wrapper: its arguments, read at the call."""

    wrapper: Wrapper
    call: Value
    arguments: dict[str, Value]


def wrapping(value: Value) -> Wrapping | None:
    """The wrapper call whose Estimator ``value`` is (the Estimator(...) of a wrapper, resolved through a call)."""
    function, site = value.place.function, value.place.call
    if not isinstance(function, cst.FunctionDef) or site is None:
        return None
    found = wrapper(value.view, function)
    if found is None or found.made is not value.node:
        return None
    params = [param.name.value for param in function.params.params]
    bound = bind_arguments(site.node, params)
    if bound is None:
        return None
    return Wrapping(found, Value(site.node, site.place),
                    {name: Value(arg.value, site.place) for name, (_, arg) in bound.items()})


def called(values: Values, call: Value) -> Wrapper | None:
    """The wrapper ``call`` calls, if it is one."""
    function = values.resolve(Value(call.node.func, call.place))
    return wrapper(function.view, function.node) if isinstance(function.node, cst.FunctionDef) else None


def wrapper(view: ModuleView, function: cst.FunctionDef) -> Wrapper | None:
    """``function`` read as a forward_features wrapper (None: it is not one)."""
    if not _plain(function, 2):
        return None
    estimator, keys = (param.name.value for param in function.params.params)
    body = [statement for statement in function.body.body if not is_docstring(statement)]
    if len(body) != 2 or not isinstance(body[0], cst.FunctionDef):
        return None
    model_fn, made = body[0], _returned(body[1])
    if not (isinstance(made, cst.Call) and view.api(made.func) == ESTIMATOR):
        return None
    arguments = {name: arg.value for name, (_, arg) in (bind_arguments(made, ESTIMATOR_PARAMETERS) or {}).items()}
    params = arguments.pop("params", None)
    if not (is_name(arguments.pop("model_fn", None), model_fn.name.value) and set(arguments) == {"model_dir", "config"}
            and all(_field(value, estimator, name) for name, value in arguments.items())
            and (params is None or _field(params, estimator, "params"))):
        return None
    loop = _ModelFn(view, estimator, keys).forwards(model_fn)
    return Wrapper(function, estimator, keys, loop, made) if loop is not None else None


class _ModelFn:
    """Follows the statements of a wrapper's model_fn: the names holding the spec, and its predictions dict."""

    def __init__(self, view: ModuleView, estimator: str, keys: str) -> None:
        self.view, self.estimator, self.keys = view, estimator, keys

    def forwards(self, model_fn: cst.FunctionDef) -> bool | None:
        """True: each key of a list; False: one key; None: not a wrapper's model_fn."""
        self.passed = [param.name.value for param in model_fn.params.params]
        if not (_plain(model_fn, 4) and self.passed[:3] == list(MODEL_FN_PARAMETERS[:3])
                and self.passed[3] in ("config", "params") and not {self.estimator, self.keys} & {*self.passed}):
            return None
        self.kinds: dict[str, str] = {}  # name -> "spec" / "predictions"
        self.called = False
        *statements, last = [statement for statement in model_fn.body.body if not is_docstring(statement)] or [None]
        forwarded = []
        for statement in statements:
            if isinstance(statement, cst.For):
                forwarded.append(self._loop(statement))
            elif (assigned := single_assign(statement)) is not None:
                name, value = assigned
                kind = self._kind(value)
                if kind is None or name in (*self.passed, self.estimator, self.keys):
                    return None
                self.kinds[name] = kind
            else:
                forwarded.append(False if self._forward(statement, self.keys) else None)
        if len(forwarded) != 1 or forwarded[0] is None or not self._spec(_returned(last)):
            return None
        return forwarded[0]

    def _loop(self, loop: cst.For) -> bool | None:
        """`for key in keys: predictions[key] = features[key]`."""
        key = loop.target.value if isinstance(loop.target, cst.Name) else None
        if (key is None or key in (*self.passed, *self.kinds, self.estimator) or not is_name(loop.iter, self.keys)
                or loop.orelse is not None or loop.asynchronous is not None or len(loop.body.body) != 1):
            return None
        return True if self._forward(loop.body.body[0], key) else None

    def _forward(self, statement: cst.CSTNode, key: str) -> bool:
        """`predictions[key] = features[key]`."""
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
            return False
        target = small.targets[0].target
        return (isinstance(target, cst.Subscript) and self._predictions(target.value) and _index(target, key)
                and isinstance(small.value, cst.Subscript) and is_name(small.value.value, self.passed[0])
                and _index(small.value, key))

    def _kind(self, value: cst.BaseExpression) -> str | None:
        if self._model_fn_call(value):
            return "spec"
        if self._predictions(value):
            return "predictions"
        return "spec" if self._spec(value) else None

    def _model_fn_call(self, value: cst.BaseExpression) -> bool:
        """`estimator.model_fn(features, labels, mode, config)`, the first time."""
        if self.called or not (isinstance(value, cst.Call) and _field(value.func, self.estimator, "model_fn")):
            return False
        bound = bind_arguments(value, MODEL_FN_PARAMETERS) or {}
        self.called = len(bound) == 4 and all(is_name(bound[name][1].value, passed)
                                              for name, passed in zip(MODEL_FN_PARAMETERS, self.passed))
        return self.called

    def _predictions(self, value: cst.BaseExpression) -> bool:
        """The spec's predictions dict: a name holding it, or `spec.predictions`."""
        if isinstance(value, cst.Name):
            return self.kinds.get(value.value) == "predictions"
        return isinstance(value, cst.Attribute) and value.attr.value == "predictions" and self._spec(value.value)

    def _spec(self, value: cst.BaseExpression | None) -> bool:
        """The spec, its predictions being the dict the features are added to."""
        if isinstance(value, cst.Name):
            return self.kinds.get(value.value) == "spec"
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "_replace":
            return (self._spec(value.func.value) and len(value.args) == 1
                    and is_name(value.args[0].keyword, "predictions") and self._predictions(value.args[0].value))
        bound = bind_arguments(value, SPEC_FIELDS) if self.view.api(value.func) == SPEC else None
        if bound is None or not all(name in bound for name in ("mode", "predictions", *CARRIED)):
            return False
        fields = {name: arg.value for name, (_, arg) in bound.items()}
        return (self._predictions(fields.pop("predictions"))
                and (is_name(fields["mode"], self.passed[2]) or self._carried(fields["mode"], "mode"))
                and all(self._carried(value, name) for name, value in fields.items() if name != "mode"))

    def _carried(self, value: cst.BaseExpression, name: str) -> bool:
        """`spec.<name>`."""
        return isinstance(value, cst.Attribute) and value.attr.value == name and self._spec(value.value)


def _plain(function: cst.FunctionDef, count: int) -> bool:
    """A function of ``count`` positional parameters, no more, no decorators."""
    params = function.params
    return (len(params.params) == count and not params.posonly_params and not params.kwonly_params
            and not isinstance(params.star_arg, (cst.Param, cst.ParamStar)) and params.star_kwarg is None
            and not function.decorators)


def _returned(statement: cst.CSTNode | None) -> cst.BaseExpression | None:
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    return small.value if isinstance(small, cst.Return) else None


def _field(value: cst.BaseExpression | None, owner: str, name: str) -> bool:
    """`owner.name`."""
    return isinstance(value, cst.Attribute) and is_name(value.value, owner) and value.attr.value == name


def _index(subscript: cst.Subscript, key: str) -> bool:
    """`...[key]`."""
    return (len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index)
            and is_name(subscript.slice[0].slice.value, key))
