"""An Estimator passed to a function of the program that evaluates it: the function gets the Keras model instead.

A course notebook trains its Estimator, then hands it to a helper that evaluates it and prints what it reads of the
results (often of each Estimator it trains in turn). The helper's ``evaluate`` is migrated where it stands, on the
parameter, when each call of the helper is where an Estimator is trained, after training, and gives it that
Estimator's own name: the call passes the Keras model (the migration binds it there) and the helper's parameter
evaluates it. The helper's input is read through each call (``input_fn`` here is ``get_valid()`` there); what the
migration writes in the helper must be the same for every call.

An Estimator passed to the function that trains it (cloudml-template: ``estimator = model.create(args, config)`` in
task.py, then ``experiment.run(estimator, args)`` whose ``train_and_evaluate(estimator, ...)`` trains it) is not
migrated: the finding names the call that passes it (``passing_calls``, ``passed_on``).

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

from rewrites.program.places import CallSite, Place, Value
from rewrites.syntax import bind_arguments, source

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


def passing_calls(values, view, place: Place, receiver: cst.BaseExpression) -> list[tuple[object, cst.Call]]:
    """The calls of the module-level function holding ``place`` that give its parameter ``receiver`` a value, each
    with its module's view (none when ``receiver`` is not such a parameter)."""
    function = place.function
    if not isinstance(receiver, cst.Name) or not isinstance(function, cst.FunctionDef) \
            or view.parent(function) is not view.module or values.binding(receiver, place).kind != "parameter":
        return []
    found = []
    for where, node in view.tree.references_to(view, function.name.value):
        site = where.parent(node)
        if isinstance(site, cst.Call) and site.func is node:
            found.append((where, site))
    return found


def passed_on(values, view, function: cst.FunctionDef) -> tuple[object, cst.Call] | None:
    """A call of a function of the program that passes on what a call of ``function`` returns (`estimator =
    model.create(...)`, then `experiment.run(estimator, args)`): the first, with its module's view."""
    for where, node in view.tree.references_to(view, function.name.value):
        site = where.parent(node)
        statement = where.statement_of(node)
        assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if not (isinstance(site, cst.Call) and site.func is node and isinstance(assign, cst.Assign)
                and assign.value is site and len(assign.targets) == 1 and isinstance(assign.targets[0].target,
                                                                                      cst.Name)):
            continue
        scope = where.scope(assign.targets[0].target)
        name = assign.targets[0].target.value
        for assignment in scope[name] if scope is not None and name in scope else ():
            for reference in where.in_order(getattr(assignment, "references", ())):
                argument = where.parent(reference.node)
                call = where.parent(argument)
                if isinstance(argument, cst.Arg) and argument.value is reference.node and isinstance(values.resolve(
                        Value(call.func, values.place_of(where, call))).node, cst.FunctionDef):
                    return where, call
    return None


def parameter_reason(values, view, call: cst.Call, estimator: cst.BaseExpression) -> str | None:
    """Why ``call`` (train_and_evaluate) on ``estimator``, a parameter of the function holding it, is not migrated:
    the call giving it the Estimator (None when it is not such a parameter)."""
    place = values.place_of(view, call)
    passing = passing_calls(values, view, place, estimator)
    if not passing:
        return None
    where, site = passing[0]
    return (f"a parameter of `{place.function.name.value}()`, given the Estimator by `{source(site)}` "
            f"(`{where.path}:{where.position(site)[0]}`): the migration does not follow an Estimator passed to the "
            "function that trains it yet: make it in that function (or train it where it is made) and run "
            "tf-migrate again")


def returned_reason(values, view, returned: cst.Name) -> str | None:
    """Why the Estimator ``returned`` (`return estimator`) names is not migrated: the call of a function of the
    program its caller passes it to (None when no caller does)."""
    function = view.enclosing_function(returned)
    passing = passed_on(values, view, function) if function is not None else None
    if passing is None:
        return None
    where, site = passing
    return (f"it is returned by `{function.name.value}()`, and `{source(site)}` (`{where.path}:"
            f"{where.position(site)[0]}`) passes it to a function of the program, which the migration does not follow "
            "an Estimator into yet: make it where it is driven")
