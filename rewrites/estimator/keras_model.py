"""An Estimator made by ``tf.keras.estimator.model_to_estimator``: its Keras model, trained by fit itself.

The model is the program's own code; what changes is where it runs and what it compiles with.
A ParameterServerStrategy model makes its variables in ``strategy.scope()``, so the statements
making and compiling it run there, in the set-up emit.py writes before the first driver (the
Keras model plays the part of a model_fn's generated ``build_model``; the drivers, datasets,
checkpoints and results are the pipeline's as for any Estimator):

- made where the drivers run (``model = image_classifier(hparams)``, ``model.compile(...)``):
  those statements move into ``with strategy.scope():``, with the lines before making a
  functional model's layers (``x = Dense(...)(x)``) and those reading what they bind;
- the result of a call (``keras_model=create_keras_model()``): called there;
- made in a factory (``def keras_estimator(model_dir, config, params): ... return
  model_to_estimator(keras_model=model, ...)``): the factory returns the compiled model, named
  ``keras_model``, without the parameters only model_to_estimator read, and is called there.

The compile names the optimizer model_to_estimator trained with (keras_compile.py). The modules
of the model spell TensorFlow's Keras ``keras.X``: Keras 2, as the generated code imports it
(``tf.keras`` is Keras 3 from TensorFlow 2.16).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import Assignment

from rewrites.estimator import keras_compile
from rewrites.estimator.keras_compile import Optimizer
from rewrites.estimator.program import Model, ModelFn
from rewrites.keras_v1_layers import tf2_layer_notes, v1_layer_calls
from rewrites.program.modules import ModuleView
from rewrites.program.places import Place, Value
from rewrites.program.values import Values
from rewrites.syntax import Replace, Unsupported, bind_arguments, is_none, single_assign, source, subtree

MODEL_TO_ESTIMATOR = "keras.estimator.model_to_estimator"
PARAMETERS = ("keras_model", "keras_model_path", "custom_objects", "model_dir", "config", "checkpoint_format",
              "use_v2_estimator", "metric_names_map", "export_outputs")
NOT_MIGRATED = {  # model_to_estimator's arguments the migration leaves to a person, and what to do
    "keras_model_path": "loads a saved model: load it with keras.models.load_model in the strategy's scope",
    "custom_objects": "names custom objects for a clone of the model: build the model in the strategy's scope",
    "checkpoint_format": "chooses a format of TF1's checkpoints, which the migrated program does not write",
    "metric_names_map": "renames the metrics TF1 reported: name the Keras metrics as the program reads them",
    "export_outputs": "exports serving signatures: save the Keras model after training",
}


@dataclass
class KerasModel:
    """Where the model of a model_to_estimator Estimator is made, and how the set-up makes it."""

    compile: Value                         # its compile(...) call
    optimizer: Optimizer
    name: str | None = None                # made where the drivers run: the model's name there ...
    statements: list[cst.BaseStatement] = field(default_factory=list)  # ... and the statements moving
    expression: Value | None = None        # else what makes it: a call, or the call of the factory
    factory: cst.FunctionDef | None = None  # the factory returning model_to_estimator(...)
    returned: cst.CSTNode | None = None     # there: the expression returning the Estimator
    model: Value | None = None              # there: keras_model=...
    dropped: tuple[str, ...] = ()           # its parameters only model_to_estimator read


class KerasModelReader:
    def __init__(self, values: Values, spelling, place: Place) -> None:
        """``place``: where the drivers run; ``spelling(view)``: a module's Spelling."""
        self.values, self.spelling, self.place = values, spelling, place

    def read(self, estimator: Value, args: dict[str, Value]) -> tuple[ModelFn, Model]:
        for name, why in NOT_MIGRATED.items():
            if name in args and not is_none(args[name].node):
                raise args[name].fail(f"model_to_estimator({name}=...) {why}, by hand")
        if "keras_model" not in args:
            raise estimator.fail("model_to_estimator without keras_model=: migrate by hand")
        model = args["keras_model"]
        factory = None if estimator.place.same_scope(self.place) else self._factory(estimator)
        if isinstance(model.node, cst.Name):
            keras = self._statements(estimator, model)
        elif isinstance(model.node, cst.Call):
            keras = self._expression(model)
        else:
            raise model.fail("keras_model= is migrated when it names a model made beside it, or calls a function "
                             "of the files given that makes and compiles it")
        if factory is not None:
            keras.factory, keras.model, keras.statements, keras.name = factory, model, [], None
            keras.returned, keras.dropped = self._returned(estimator, factory), self._dropped(estimator, factory)
        elif keras.name is not None:
            keras.statements = self._moved(estimator.view, keras)
        view = estimator.view if factory else keras.compile.view
        notes = [("TFM401", keras.optimizer.node, keras.optimizer.why)] if keras.optimizer.why else []
        if notes and keras.compile.view is not view:
            raise keras.compile.fail(f"{keras.optimizer.why}: migrate by hand")
        notes += [("TFM401", node, why) for each in {id(v): v for v in (estimator.view, keras.compile.view)}.values()
                  for node, why in tf2_layer_notes(each)]
        model_fn = ModelFn(view, factory, estimator.place, model, keras=keras)
        return model_fn, Model(metrics=keras_compile.metrics(keras.compile), slots=keras.optimizer.slots, notes=notes)

    # -- where the model is made ------------------------------------------------------------------

    def _factory(self, estimator: Value) -> cst.FunctionDef:
        function, call = estimator.place.function, estimator.place.call
        view = estimator.view
        if not (isinstance(function, cst.FunctionDef) and view.parent(function) is view.module and call is not None
                and call.place.same_scope(self.place)):
            raise estimator.fail("model_to_estimator is migrated where the Estimator is driven, or in a function "
                                 "of the module's top level that returns it to there")
        params = function.params
        if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg or params.posonly_params \
                or params.kwonly_params or bind_arguments(call.node, [p.name.value for p in params.params]) is None:
            raise Value(function, estimator.place).fail(f"`{function.name.value}` takes or is given *args, **kwargs, "
                                                        "positional-only or keyword-only parameters: make them plain")
        return function

    def _returned(self, estimator: Value, factory: cst.FunctionDef) -> cst.CSTNode:
        """What the factory returns: model_to_estimator(...) itself, or the name bound to it."""
        view = estimator.view
        (returned,) = [node.value for node in subtree(factory.body)
                       if isinstance(node, cst.Return) and view.enclosing_function(node) is factory]
        statement = view.statement_of(estimator.node)
        if returned is estimator.node or (isinstance(returned, cst.Name) and single_assign(statement) is not None
                                          and single_assign(statement)[0] == returned.value):
            return returned
        raise estimator.fail("the factory is migrated when it returns the model_to_estimator(...) it makes")

    def _dropped(self, estimator: Value, factory: cst.FunctionDef) -> tuple[str, ...]:
        """The factory's parameters that only model_to_estimator(...) reads (model_dir, config)."""
        view = estimator.view
        inside = {id(node) for node in subtree(estimator.node)}
        scope = view.scope(factory.body)
        dropped = []
        for param in factory.params.params:
            assignments = [a for a in scope[param.name.value] if isinstance(a, Assignment) and a.node is param]
            references = [r.node for a in assignments for r in a.references]
            if references and all(id(node) in inside for node in references):
                dropped.append(param.name.value)
        return tuple(dropped)

    def _statements(self, estimator: Value, model: Value) -> KerasModel:
        """`model = ...; model.compile(...)` before model_to_estimator(keras_model=model), in its block."""
        view, name = model.view, model.node.value
        binding = self.values.binding(model.node, model.place)
        scope = view.scope(model.node)
        assignments = [a for a in scope[name] if isinstance(a, Assignment)] if scope is not None else []
        if binding.kind != "value" or len(assignments) != 1:
            raise model.fail(f"`{name}` is bound more than once, or otherwise than by `{name} = ...`: bind the "
                             "Keras model once")
        first = view.statement_of(assignments[0].node)
        block, made = view.parent(first), view.statement_of(estimator.node)
        if single_assign(first) is None or view.parent(made) is not block:
            raise model.fail(f"the Keras model is migrated when `{name} = ...`, its compile and model_to_estimator "
                             "stand in one block")
        body = list(block.body)
        start = _layers_made_before(view, body[:body.index(first)], first, name) or first
        span = body[body.index(start):body.index(made)]
        compiles = [Value(node, model.place) for statement in span for node in subtree(statement)
                    if _compiles(node, name)]
        compile = self._one(compiles, model)
        optimizer = keras_compile.optimizer(self.values, self.spelling, compile, span)
        made_before = view.statement_of(optimizer.node)
        if view.parent(made_before) is block and body.index(made_before) < body.index(first):
            span = body[body.index(made_before):body.index(made)]  # it moves into the scope with the model
        elif not any(id(optimizer.node) == id(node) for statement in span for node in subtree(statement)):
            raise model.fail("compile's optimizer is made away from the model: make it beside the model, to move "
                             "into the strategy's scope with it")
        return KerasModel(compile, optimizer, name=name, statements=span)

    def _expression(self, model: Value) -> KerasModel:
        """keras_model=create_keras_model(...): a function of the files given making and compiling the model."""
        function = self.values.resolve(Value(model.node.func, model.place))
        if not isinstance(function.node, cst.FunctionDef):
            raise model.fail(f"`{source(model.node.func)}` is not a function of the files given: the migration "
                             "must read its compile")
        place = Place(function.view, function.node, outer=function.place)
        compiles = [Value(node, place) for node in subtree(function.node.body)
                    if isinstance(node, cst.Call) and _compiles(node, None)]
        compile = self._one(compiles, model)
        return KerasModel(compile, keras_compile.optimizer(self.values, self.spelling, compile, [function.node]),
                          expression=model)

    @staticmethod
    def _one(compiles: list[Value], model: Value) -> Value:
        if len(compiles) != 1:
            raise model.fail(f"{'no' if not compiles else 'more than one'} `compile(...)` of the Keras model where "
                             "the migration reads it (beside the model, or in the function making it)")
        return compiles[0]

    @staticmethod
    def _moved(view: ModuleView, keras: KerasModel) -> list[cst.BaseStatement]:
        """The statements using the model before model_to_estimator, those binding what they read (its
        optimizer, its layers) and those reading what they bind (a sub-model of its layers); the others between
        them stay where they are."""
        scope = view.scope(keras.statements[0])
        moved = [statement for statement in keras.statements if keras.name in _names(statement)]
        span = keras.statements[:keras.statements.index(moved[-1]) + 1]
        while True:
            read = {name for statement in moved for name in _names(statement)}
            bound = {name for statement in moved for name in _bound(statement, scope)}
            more = [statement for statement in span if all(statement is not other for other in moved)
                    and (_bound(statement, scope) & read or _names(statement) & bound)]
            if not more:
                return [statement for statement in span if any(statement is other for other in moved)]
            moved += more


INPUTS = {"keras.Input", "keras.layers.Input"}  # they make no variables


def _layers_made_before(view: ModuleView, earlier: list[cst.BaseStatement], first: cst.BaseStatement,
                        name: str) -> cst.BaseStatement | None:
    """The first of the statements before `name = ...` making the Keras layers or tensors (a functional model's)
    it is made of: they move into the strategy's scope with it, their variables made there (its Inputs make none).
    Compound statements among those it reads do not move: the model is left."""
    scope = view.scope(first)
    read, reading = _names(first), []
    for statement in reversed(earlier):
        if _bound(statement, scope) & read:
            read |= _names(statement)
            reading.append(statement)
    making = [statement for statement in reading if any(
        isinstance(node, cst.Call) and (view.api(node.func) or "").startswith("keras.")
        and view.api(node.func) not in INPUTS for node in subtree(statement))]
    if not making:
        return None
    start = earlier.index(making[-1])
    for statement in reversed(reading):
        if earlier.index(statement) >= start and not isinstance(statement, cst.SimpleStatementLine):
            raise Unsupported(statement, f"`{name}` is made of Keras layers or tensors made before `{name} = ...`, "
                                         "and of what this statement binds, which does not move into the "
                                         "strategy's scope with them: make the layers in a function that returns "
                                         "the compiled model", view.path)
    return making[-1]


def _names(node: cst.CSTNode) -> set[str]:
    return {inner.value for inner in subtree(node) if isinstance(inner, cst.Name)}


def _bound(statement: cst.CSTNode, scope) -> set[str]:
    """The names ``statement`` binds in ``scope``."""
    inside = {id(node) for node in subtree(statement)}
    return {assignment.name for assignment in (scope.assignments if scope is not None else ())
            if isinstance(assignment, Assignment) and id(assignment.node) in inside}


def _compiles(node: cst.CSTNode, name: str | None) -> bool:
    """``name.compile(...)`` (any ``x.compile(...)`` for None)."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile" \
        and isinstance(node.func.value, cst.Name) and (name is None or node.func.value.value == name)


# -- writing it -------------------------------------------------------------------------------------


def rename_factory(emitter, program) -> None:
    """A factory returns the compiled model, renamed after it, without the parameters only model_to_estimator
    read."""
    model_fn, keras = program.setup.model_fn, program.setup.model_fn.keras
    factory = keras.factory
    view, name = model_fn.view, factory.name.value
    model_fn.new_name = name.replace("estimator", "model")
    if model_fn.new_name != name and not model_fn.new_name.startswith(("build_", "create_", "make_", "get_")):
        model_fn.new_name = f"build_{model_fn.new_name}"  # keras_estimator -> build_keras_model
    if model_fn.new_name != name and model_fn.new_name in view.top_level:
        raise model_fn.where.fail(f"the factory returns the Keras model as `{model_fn.new_name}`, which this module "
                                  "already has")
    edits = emitter.module_edits(view)
    edits.expressions[factory.name] = cst.Name(model_fn.new_name)
    kept = [param for param in factory.params.params if param.name.value not in keras.dropped]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    edits.expressions[factory.params] = factory.params.with_changes(params=kept)
    edits.expressions[keras.returned] = emitter.spelling(view).spelled(keras.model.node)


def build(emitter, program, plans, names, reference: str) -> list[str]:
    """The statements making the model in the strategy's scope (code at the driver; ``reference``: how it names a
    factory); the model's code changed where it stands: its optimizer, its Keras."""
    keras = program.setup.model_fn.keras
    optimizer = keras.optimizer
    new = cst.parse_expression(optimizer.code)
    after = _after_compile(keras)
    for view in {program.place.view, program.setup.model_fn.view, keras.compile.view}:
        edits = emitter.module_edits(view)
        spelled = emitter.spelling(view).keras_references()
        edits.expressions.update({**spelled, **v1_layer_calls(view, spelled)})
        edits.import_keras(emitter.keras)
    if keras.factory is not None:
        call = program.setup.model_fn.place.call.node
        params = [param.name.value for param in keras.factory.params.params]
        bound = bind_arguments(call, params)
        arguments = [f"{name}={emitter.relocated(Value(arg.value, program.place), program)}"
                     for name, (_, arg) in bound.items() if name not in keras.dropped]
        lines = [f"{names.model} = {reference}({', '.join(arguments)})"]
    elif keras.expression is not None:
        lines = [f"{names.model} = {emitter.relocated(keras.expression, program)}"]
    else:
        _check_moved(keras, program, plans)
        return _moved(emitter, program, new, after)
    edits = emitter.module_edits(keras.compile.view)
    edits.expressions[optimizer.node] = new
    if after:
        view, statement = keras.compile.view, keras.compile.view.statement_of(keras.compile.node)
        body = list(view.parent(statement).body)
        if statement is body[-1]:
            raise keras.compile.fail("the model's compile ends its block, where the migrated program sets the "
                                     "optimizer's slots after it: put a statement after it")
        edits.insert_before(body[body.index(statement) + 1], after)
    return lines


def _after_compile(keras: KerasModel) -> list[cst.BaseStatement]:
    """What runs right after compile (a TF1 RMSProp's slots at ones), on the model compile was called on."""
    model = source(keras.compile.node.func.value)
    function = keras.compile.place.function
    if keras.optimizer.after_compile and function is not None and any(
            isinstance(node, cst.Name) and node.value == "variable" for node in subtree(function)):
        raise keras.compile.fail("the migrated program sets the optimizer's slots after compile in a loop over "
                                 "`variable`, a name this function already uses: rename it")
    text = "\n".join(re.sub(r"\b(model|optimizer)\.", lambda found: f"{model}." if found.group(1) == "model" else
                            f"{model}.optimizer.", statement) for statement in keras.optimizer.after_compile)
    if not text:
        return []
    module = cst.parse_module(text + "\n")
    first, *rest = module.body
    return [first.with_changes(leading_lines=[*module.header, *first.leading_lines]), *rest]


def _moved(emitter, program, new: cst.BaseExpression, after: list[cst.BaseStatement]) -> list[str]:
    """The statements making the model where the drivers run, as code for the set-up (respelled, the optimizer
    replaced, the slots set after compile); taken from where they stood."""
    keras = program.setup.model_fn.keras
    view = keras.compile.view
    spelled = {**emitter.spelling(view).all_references(), **emitter.spelling(view).keras_references()}
    spelled.update(v1_layer_calls(view, spelled))
    compile_statement = view.statement_of(keras.compile.node)
    lines = []
    for statement in keras.statements:
        inside = {id(node) for node in subtree(statement)}
        replacements = {node: value for node, value in spelled.items() if id(node) in inside}
        if id(keras.optimizer.node) in inside:
            replacements[keras.optimizer.node] = new
        lines.append(view.module.code_for_node(statement.visit(Replace(replacements))))
        if statement is compile_statement:
            lines += [view.module.code_for_node(line) for line in after]
        elif after and id(keras.compile.node) in inside:
            raise keras.compile.fail("the model's compile stands inside another statement, where the migrated "
                                     "program cannot set the optimizer's slots after it: compile at the top")
        program.removed.append((view, statement))
    body = list(view.parent(keras.statements[0]).body)
    staying = next((statement for statement in body[body.index(keras.statements[0]):]
                    if all(statement is not moved for moved in keras.statements)), None)
    if staying is not None:  # it takes the place of the first, with its blank lines
        blank = next((i for i, line in enumerate(keras.statements[0].leading_lines) if line.comment), None)
        emitter.module_edits(view).blank_lines[staying] = len(keras.statements[0].leading_lines[:blank])
    lines = [lines[0].strip("\n"), *(line.rstrip("\n") for line in lines[1:])]
    return [part for line in lines for part in ([""] * (len(line) - len(line.lstrip("\n"))) + [line.lstrip("\n")])]


def _check_moved(keras: KerasModel, program, plans) -> None:
    """The statements move to the set-up, before the first driver: nothing between must read what they bind,
    and nothing after them may use the model, which TF1 did not train (its Estimator trained a copy)."""
    view, first = keras.compile.view, keras.statements[0]
    if view.parent(program.anchor) is not view.parent(first):
        raise keras.compile.fail("the Keras model is migrated when it is made in the block where the Estimator "
                                 "is driven")
    moving = {id(node) for statement in keras.statements for node in subtree(statement)}
    going = {id(node) for statement in [*(s for _, s in program.removed), *(p.driver.statement for p in plans)]
             for node in subtree(statement)}
    scope = view.scope(first)
    bound = {name for statement in keras.statements for name in _bound(statement, scope)}
    for name in sorted(bound):
        for assignment in scope[name]:
            for access in assignment.references if isinstance(assignment, Assignment) else ():
                if id(access.node) not in moving and id(access.node) not in going:
                    raise Unsupported(access.node, f"`{name}` is used here, apart from the statements making the "
                                                   "Keras model, which move into the strategy's scope before the "
                                                   "first driver (and TF1's Estimator trained a copy of the model, "
                                                   f"not `{keras.name}`): migrate this use by hand", view.path)
    before = [program.setup.seed, next(plan.train.input.code for plan in plans if plan.train is not None)]
    read = {name for code in filter(None, before) for name in _names(cst.parse_expression(code))}
    if read & bound:
        raise keras.compile.fail(f"the set-up before the model reads `{sorted(read & bound)[0]}`, which the "
                                 "statements making the Keras model bind: bind it before them")
