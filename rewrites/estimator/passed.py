"""An Estimator passed to a function of the program that evaluates it: the function gets the Keras model instead.

A course notebook trains its Estimator, then hands it to a helper that evaluates it and prints what it reads of the
results (often of each Estimator it trains in turn). The helper's ``evaluate`` is migrated where it stands, on the
parameter, when each call of the helper is where an Estimator is trained, after training, and gives it that
Estimator's own name: the call passes the Keras model (the migration binds it there) and the helper's parameter
evaluates it. The helper's input is read through each call (``input_fn`` here is ``get_valid()`` there); what the
migration writes in the helper must be the same for every call.

Before::

    model = tf.estimator.LinearRegressor(feature_columns=feature_cols, model_dir=OUTDIR)
    model.train(input_fn=get_train(), steps=100)

    def print_rmse(model, name, input_fn):
      metrics = model.evaluate(input_fn=input_fn, steps=1)
      print('RMSE on {} dataset = {}'.format(name, np.sqrt(metrics['average_loss'])))
    print_rmse(model, 'validation', get_valid())

After::

    ...  # the set-up: model = build_linear_regressor_model(...) in strategy.scope(), fit

    def print_rmse(model, name, input_fn):
      metrics = model.evaluate(input_fn().repeat(), steps=1, return_dict=True, verbose=2)
      print('RMSE on {} dataset = {}'.format(name, np.sqrt(metrics['average_loss'])))
    print_rmse(model, 'validation', get_valid())
"""

from __future__ import annotations

import libcst as cst

from rewrites.program.places import CallSite, Place
from rewrites.syntax import bind_arguments

KINDS = ("evaluate",)  # the drivers a function the Estimator is passed to may hold


def passed_in(values, view, place: Place, receiver: cst.BaseExpression) -> list[tuple[Place, cst.Name]] | None:
    """``receiver.evaluate(...)`` in a function whose parameter ``receiver`` is: for each call of the function among
    the files given, the place of the driver with that call and the argument the call passes it (a name); None when
    ``receiver`` is not such a parameter, or the function is used otherwise than so called."""
    function = place.function
    if not isinstance(receiver, cst.Name) or not isinstance(function, cst.FunctionDef) \
            or view.parent(function) is not view.module:
        return None
    binding = values.binding(receiver, place)
    parameter = getattr(binding.assignment, "node", None)
    if binding.kind != "parameter" or not isinstance(parameter, cst.Param) \
            or view.parent(view.parent(parameter)) is not function:
        return None
    parameters = [p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                         *function.params.kwonly_params)]
    found = []
    for where, node in view.tree.references_to(view, function.name.value):
        site = where.parent(node)
        if where is not view or not (isinstance(site, cst.Call) and site.func is node):
            return None
        bound = bind_arguments(site, parameters)
        argument = bound[parameter.name.value][1].value if bound and parameter.name.value in bound else None
        if not isinstance(argument, cst.Name):
            return None
        found.append((Place(view, function, CallSite(site, values.place_of(view, site)), outer=place.outer),
                      argument))
    return found or None
