"""A model_fn that only calls another with its own arguments and more keywords: a functools.partial of that one.

Notebooks pick a net for a general model_fn this way::

    def configurable_model_fn(features, labels, mode, model=CNN_model):
      ...

    def model_fn(features, labels, mode):
      return configurable_model_fn(features, labels, mode, model=RNN_model_N)

    estimator = tf.estimator.Estimator(model_fn=model_fn)

which trains as ``functools.partial(configurable_model_fn, model=RNN_model_N)`` does: the migration reads it so
(rewrites/estimator/read.py) and the wrapper goes with the Estimator that alone named it. A wrapper computing
anything (a keyword reading its parameters), passing them otherwise than to the parameters of the same names,
giving one Estimator gives (``params=...``) or named elsewhere too is read as the model_fn itself, as before.
"""

from __future__ import annotations

import libcst as cst

from rewrites.program.places import Place, Value
from rewrites.syntax import name_reads, names_read

ESTIMATOR_GIVES = ("features", "labels", "mode", "params", "config")  # a model_fn's parameters by name


def partial_of(resolved: Value, reference: Value, values) -> tuple[Value, dict[str, Value]] | None:
    """For the wrapper ``resolved`` (a function) that Estimator was given as ``reference``: the function it calls
    and the keywords it adds, or None."""
    wrapper, view = resolved.node, resolved.view
    if not isinstance(wrapper, cst.FunctionDef) or wrapper.decorators or view.parent(wrapper) is not view.module:
        return None
    own = wrapper.params
    if own.star_arg is not cst.MaybeSentinel.DEFAULT or own.star_kwarg or own.kwonly_params or own.posonly_params:
        return None
    names = [param.name.value for param in own.params]
    body = wrapper.body.body
    small = body[0].body[0] if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) else \
        body[0] if len(body) == 1 else None
    call = small.value if isinstance(small, cst.Return) else None
    reads = [node for node in name_reads(view.module, wrapper.name.value) if node is not wrapper.name]
    if not isinstance(call, cst.Call) or any(arg.star for arg in call.args) or len(reads) != 1 or \
            reads[0] is not reference.node:
        return None
    inside = Place(view, wrapper, outer=resolved.place)
    callee = values.resolve(Value(call.func, inside))
    if not isinstance(callee.node, cst.FunctionDef):
        return None
    parameters = [param.name.value for param in callee.node.params.params]
    passed, keywords = [], {}
    for index, arg in enumerate(call.args):
        given = arg.keyword.value if arg.keyword else parameters[index] if index < len(parameters) else None
        if isinstance(arg.value, cst.Name) and arg.value.value in names and given == arg.value.value:
            passed.append(given)
        elif arg.keyword is None or given in ESTIMATOR_GIVES or any(name.value in names
                                                                    for name in names_read(arg.value)):
            return None
        else:
            keywords[given] = Value(arg.value, inside)
    if sorted(passed) != sorted(names) or not keywords:
        return None
    return Value(call.func, inside), keywords
