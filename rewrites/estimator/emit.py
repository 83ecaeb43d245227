"""Writing the TF2 program of a read Estimator pipeline, each piece where it stands.

- the model_fn becomes, in place, the function that builds and compiles its Keras model
  (``model_fn`` -> ``build_model(input_spec, params)``; a method stays a method);
- before the first driver: the strategy for this task, the training dataset, the model built in
  ``strategy.scope()``, RunConfig's checkpoints restored, a warm start;
- each driver in place: ``train`` -> ``fit``, ``evaluate`` -> ``evaluate``, ``predict`` -> a
  generator of one dict per example, ``train_and_evaluate`` -> both (and the evaluator's job);
- ``strategy_for_this_task()`` (and ``predict_examples``) at module level, before the function
  that drives the Estimator;
- what only built the Estimator goes: the RunConfig, the specs, the Estimator, its factories (one that
  computes the feature columns stays, returning them: rewrites/estimator/factory_columns.py);
- every module it edits gets TF2's ``tf`` (rewrites/program/spelling.py).

Generated names never collide with the program's: ``model`` is ``keras_model`` where the
program has a ``model`` (a module, often: ``from trainer import model``).
"""

from __future__ import annotations

import re
import textwrap

import libcst as cst
from libcst.metadata import ScopeProvider

from rewrites.base import module_level_statements
from rewrites.estimator import eval_loss, factory_columns, faithful_emit, keras_model
from rewrites.estimator.drivers import emit_outside, seen_outside
from rewrites.estimator.factory_columns import Kept
from rewrites.estimator.program import ModelFn, Program
from rewrites.estimator.read import DriverPlan, with_batch_size
from rewrites.program.edits import ModuleEdits
from rewrites.program.modules import ModuleView
from rewrites.program.relocation import module_alias, relocate
from rewrites.program.places import Value
from rewrites.program.values import Values, own_nodes
from rewrites.syntax import Unsupported, children, default_indented, is_name, source, subtree, with_blank_lines
from rewrites.tf1_checkpoints import Part, restore_context, restores_shard_slots

# The names generated code binds where the Estimator was driven, and their second choices.
DRIVER_NAMES = ("task_type", "strategy", "dataset", "eval_dataset", "eval_steps", "eval_result", "model", "checkpoints",
                "save_checkpoint", "tf1_checkpoint", "steps_done", "warm_start", "predictor", "checkpoint_path",
                "train_steps", "train_batches")
PREFERRED = {"bootstrap": "strategy_for_this_task", "checkpoint_saver": "CheckpointSaver"}
BUILD_LOCALS = ("model", "optimizer", "predictor")


class Names(dict):
    """name -> the identifier generated code uses for it; attribute access for templates."""

    __getattr__ = dict.__getitem__


def free_names(wanted, taken: set[str]) -> Names:
    names = Names()
    for name in wanted:
        preferred = PREFERRED.get(name, name)
        for candidate in (preferred, f"keras_{preferred}", *(f"{preferred}_{i}" for i in range(2, 100))):
            if candidate not in taken:
                names[name] = candidate
                taken.add(candidate)
                break
    return names


def taken(view: ModuleView, owner: cst.CSTNode, skip: set[int] = frozenset()) -> set[str]:
    """The names that code added to ``owner``'s scope (a function, a class or the module) would clash with:
    those bound there, and those read there or in nested scopes that would find a new binding there, but in the
    subtrees ``skip`` holds (code the migration removes)."""
    scope = view.scope(owner.body) if isinstance(owner, (cst.FunctionDef, cst.ClassDef)) else \
        view.get_metadata(ScopeProvider, view.module)
    found, stack = set(), [owner]
    while stack:
        node = stack.pop()
        if id(node) in skip:
            continue
        if isinstance(node, cst.Name) and _reaches(view.scope(node), scope, node.value):
            found.add(node.value)
        stack.extend(children(node))
    return found


def _reaches(inner, scope, name: str) -> bool:
    """Would ``name`` read in ``inner`` find a binding made in ``scope`` (an enclosing scope, or itself)?"""
    while inner is not None:
        if inner is scope:
            return True
        if name in inner.assignments:
            return False
        if inner.parent is inner:
            return False
        inner = inner.parent
    return False


def build_function_names(name: str) -> tuple[str, str]:
    """model_fn -> build_model, _model_fn -> _build_model, cnn_model_fn -> build_cnn_model, __call__ -> build_model;
    second, the name taken where the module already uses the first: build_keras_model, build_keras_cnn_model."""
    stripped = name.lstrip("_")
    prefix = name[:len(name) - len(stripped)]
    base = stripped[:-3] if stripped.endswith("_fn") else stripped
    if name.startswith("__") and name.endswith("__"):
        prefix, base = "", "model"
    base = base if base == "model" or base.endswith("_model") else f"{base}_model"
    return f"{prefix}build_{base}", f"{prefix}build_keras_{base}"


class Emitter:
    def __init__(self, values: Values, spelling, keras: str, written: dict[int, dict[str, str]] | None = None) -> None:
        self.values, self.spelling, self.keras = values, spelling, keras
        self.edits: dict[int, ModuleEdits] = {}
        self._module_defs: dict[tuple, Names] = {}   # (view, template, its context) -> the names written
        # Module-level names the programs migrated before this one defined, with their code (view -> name -> code),
        # and this program's: a name defined again must be the same code, or a later definition would replace an
        # earlier one that a function of the module reads when it runs.
        self.written = written if written is not None else {}
        self.defined: dict[int, dict[str, str]] = {}

    def _clashes(self, view: ModuleView, names, text: str) -> bool:
        """Some of ``names`` an earlier program defined in ``view`` as other code than ``text``."""
        earlier = self.written.get(id(view), {})
        return any(name in earlier and earlier[name] != text for name in names)

    def _define(self, view: ModuleView, names, text: str) -> None:
        self.defined.setdefault(id(view), {}).update({name: text for name in names})

    def module_edits(self, view: ModuleView) -> ModuleEdits:
        if id(view) not in self.edits:
            self.edits[id(view)] = ModuleEdits(view)
        return self.edits[id(view)]

    def emit(self, program: Program, plans: list[DriverPlan]) -> None:
        from templates import render

        place = program.place
        view = place.view
        replaced = [plan.driver.statement for plan in plans
                    if plan.predict is None and not plan.export_call and not (plan.evaluate and plan.evaluate.inline)]
        gone = {id(n) for statement in [*replaced, *(s for _, s in program.removed)] for n in subtree(statement)}
        gone |= {id(plan.driver.passed) for plan in plans if plan.driver.passed is not None}  # passes the model
        owner = place.function if isinstance(place.function, cst.FunctionDef) else view.module
        setup = program.setup
        model_fn = setup.model_fn
        keras = model_fn.keras
        if keras is None:
            model_fn.new_name = self._build_function(program, _predicts(plans), plans)
            self._factory_returns_the_build_function(model_fn)
        elif keras.factory is not None:
            keras_model.rename_factory(self, program)
        reference = self._function_reference(model_fn, program) if keras is None or keras.factory else ""
        kept = factory_columns.keep(self, program, taken(view, owner, gone) | _builtins()) if keras is None else Kept()
        # The program's own expressions the generated code reads (`model.make_input_fn(...)`) keep their names.
        names = free_names(DRIVER_NAMES, taken(view, owner, gone) | _builtins() | _names_in(
            *filter(None, [reference, *_codes(program, plans)])) | seen_outside(program) | set(kept.names))
        if keras is not None and keras.name:  # the program's own model, made where the drivers run
            names["model"] = keras.name
        if keras is not None or setup.model.faithful is not None:  # the Keras model predicts too
            names["predictor"] = names["model"]
        names.update(self._module_level(program, view, plans, names))
        first_train = next((plan.train for plan in plans if plan.train is not None), None)
        # Never trained here (ProgramReader._untrained): built on what it evaluates, else on what it predicts from.
        setup_input = first_train.input.code if first_train else next(
            plan.evaluate.input.code if plan.evaluate else plan.predict.input.code for plan in plans
            if plan.evaluate or plan.predict)
        features_only = first_train is None and not any(plan.evaluate for plan in plans)
        predict = _predicts(plans)
        build_target = f"{names.model}, {names.predictor}" if predict and names.predictor != names.model \
            else names.model
        build = keras_model.build(self, program, plans, names, reference) if keras else [
            *kept.lines, f"{build_target} = {self._build_call(program, names, reference, features_only, kept.codes)}"]
        # The step counter: a combined model's optimizers (linear, DNN) both count every step.
        iterations = f"{names.model}.optimizer{'[1]' if setup.model.wide_deep else ''}.iterations"
        context = dict(names=names, seed=setup.seed, checkpoints=setup.checkpoints, model_dir=setup.model_dir,
                       strategy_arguments=setup.tpu.arguments() if setup.tpu else setup.local_strategy or "",
                       shard_slots=restores_shard_slots(setup.model.partitioner, setup.model.slots),
                       iterations=iterations,
                       warm_start=setup.warm_start, train_input=setup_input, trains=first_train is not None,
                       build=build)
        edits = self.module_edits(view)
        setup_statements = _statements(render("estimator_setup.py.j2", **context), program.anchor)
        top_level = view.parent(program.anchor) is view.module
        first_in_block = _first_in_block(view, program.anchor, {id(statement) for _, statement in program.removed})
        setup_statements[0] = with_blank_lines(setup_statements[0].with_changes(leading_lines=[]),
                                               2 if top_level else 0 if first_in_block else 1)
        edits.insert_before(program.anchor, setup_statements)
        if all(plan.driver.statement is not program.anchor for plan in plans):  # a loop of drivers, say
            edits.blank_lines[program.anchor] = 1
        contexts = emit_outside(self, program, plans, names, context, gone)  # the callers' drivers: their names
        for plan in plans:
            self._driver(plan, contexts.get(id(plan), context), setup_input, edits, program.anchor)
        for removed_view, statement in program.removed:
            self.module_edits(removed_view).remove(statement)
        for edit_view, old, new in program.edits:
            module = self.module_edits(edit_view)
            if new is None:
                module.remove(old)
            else:
                module.expressions[old] = new
        for module in (view, model_fn.view):
            if setup.model.faithful is not None:  # before TensorFlow is imported, where the program starts too
                self.module_edits(module).legacy_keras = True
                self.module_edits(module).add_import("os")
                self.module_edits(module).add_import("importlib.metadata")
            self._imports(module)
        for module in setup.model.imports:
            self.module_edits(model_fn.view).add_import(module)

    # -- pieces --------------------------------------------------------------------------

    def _driver(self, plan: DriverPlan, context: dict, setup_input: str, edits: ModuleEdits, anchor) -> None:
        from templates import render

        driver, names = plan.driver, context["names"]
        if plan.predict is not None:
            edits.expressions[driver.call.node] = cst.parse_expression(
                f"{names.predict_examples}({names.predictor}, {plan.predict.input.code}{plan.predict.arguments()})")
            return
        if plan.export_call:
            edits.expressions[driver.call.node] = cst.parse_expression(plan.exports[0].call(names))
            return
        text = ""
        evaluate = plan.evaluate
        if evaluate is not None:
            target = f"{names.eval_result} = " if evaluate.inline else evaluate.target
            context = dict(context, eval_input=evaluate.input.code, eval_steps=evaluate.steps, eval_target=target,
                           eval_steps_none=evaluate.none_at_run_time,
                           eval_step=evaluate.step,
                           exports=[export.call(names) for export in plan.exports])
        if plan.train is not None:
            data = names.dataset if plan.train.input.code == setup_input else plan.train.input.code
            train_context = dict(context, fit=plan.train.fit, train_data=data)
            template = "fit.py.j2" if evaluate is None else "estimator_train_and_evaluate.py.j2"
            text = render(template, **train_context)
        elif evaluate is not None:
            text = render("estimator_evaluate.py.j2", **context)
        if evaluate is not None and evaluate.inline:  # the result is read where the call stood
            edits.insert_before(driver.statement, _statements(text, driver.statement, leading=True))
            edits.expressions[evaluate.inline] = cst.Name(names.eval_result)
            return
        statements = _statements(text, driver.statement, leading=True)
        if driver.statement is anchor:  # right after the set-up
            statements[0] = with_blank_lines(statements[0], 1)
        edits.replace(driver.statement, statements)

    def _module_level(self, program: Program, view: ModuleView, plans: list[DriverPlan], names: Names) -> Names:
        """strategy_for_this_task (and predict_examples, export_saved_model, and what resumes from TF1's
        checkpoints) before the top-level statement holding the drivers."""
        from templates import render

        top = view.module_statement_of(program.anchor)
        in_use = taken(view, view.module) | _builtins() | set(names.values())
        found = Names()
        setup = program.setup
        wanted = [(("bootstrap",), "strategy_bootstrap.py.j2", dict(partitioner=setup.model.partitioner or "None",
                                                                     local=setup.local_strategy is not None))]
        if setup.tpu:  # TPUStrategy when a TPU is named at run time
            wanted = [(("bootstrap",), "tpu_strategy_bootstrap.py.j2",
                       dict(partitioner=setup.model.partitioner or "None", location=[*setup.tpu.location],
                            local=False))]
        predict = [plan.predict for plan in plans if plan.predict]
        faithful = setup.model.faithful
        if predict:
            single = not faithful.predictions_dict if faithful else setup.model.predictions[0][0] is None
            wanted.append((("predict_examples",), "predict_examples.py.j2", dict(
                single=single, keys=any(p.keys is not None for p in predict), batches=any(p.batches for p in predict),
                results=faithful is not None, forwarded=setup.model.forwarded)))
        builders = sorted({builder for plan in plans for builder in plan.builders})
        graph = faithful is not None and faithful.lookup_table is not None  # exported through TF1's graph
        if any(plan.exports for plan in plans):
            signatures = faithful.signatures if faithful else setup.model.signatures
            wanted.append((("export_saved_model", *builders), "export_saved_model.py.j2",
                           dict(signatures=signatures, builders=builders, results=faithful is not None, graph=graph,
                                forwarded=setup.model.forwarded_exported,
                                keras_outputs=setup.model_fn.keras is not None,
                                assets=any(e.assets for plan in plans for e in plan.exports),
                                text=any(e.as_text for plan in plans for e in plan.exports))))
        if setup.checkpoints or setup.warm_start:
            wanted.append((("tf1_variables", "restore_tf1_checkpoint"), "tf1_checkpoint.py.j2",
                           _tf1_checkpoint(setup.model, restore=setup.checkpoints is not None)))
        if setup.checkpoints and any(plan.train for plan in plans):
            wanted.append((("checkpoint_saver",), "checkpoint_saver.py.j2", {}))
        if setup.checkpoints and restores_shard_slots(setup.model.partitioner, setup.model.slots):
            wanted.append((("restore_shard_slots",), "restore_shard_slots.py.j2", {}))
        for wanted_names, template, extra in wanted:
            key = (id(view), template, repr(extra))
            if key not in self._module_defs:
                chosen = free_names(wanted_names, set(in_use))
                text = render(template, names=chosen, **extra)
                if self._clashes(view, chosen.values(), text):
                    chosen = free_names(wanted_names, in_use | set(self.written[id(view)]))
                    text = render(template, names=chosen, **extra)
                in_use |= set(chosen.values())
                self._module_defs[key] = chosen
                self._define(view, chosen.values(), text)
                self.module_edits(view).insert_before(top, _module_statements(text))
                self.module_edits(view).blank_lines[top] = 2
            found.update(self._module_defs[key])
        if setup.checkpoints or any(plan.exports for plan in plans):
            self.module_edits(view).add_import("os")
            self.module_edits(view).add_import("time")
        if any(plan.exports for plan in plans) and not graph:
            self.module_edits(view).add_import("tensorflow.core.protobuf", "saved_model_pb2")
        if any(e.as_text for plan in plans for e in plan.exports) and not graph:
            self.module_edits(view).add_import("google.protobuf", "text_format")
        return found

    def _eval_loss(self, view: ModuleView, top: cst.BaseStatement, model, plans: list[DriverPlan]) -> str | None:
        """The TF1EvalLoss metric reporting the loss, if the program needs it, its class written before ``top``
        (also for the metrics of the loss's mean compiled already)."""
        from templates import render

        reported = eval_loss.needed(plans)
        if not (reported or eval_loss.used(model)):
            return None
        if (id(view), eval_loss.TEMPLATE) not in self._module_defs:
            if eval_loss.CLASS in taken(view, view.module):
                raise Unsupported(top, f"the migrated program names a generated class `{eval_loss.CLASS}`, which "
                                       "this module already uses", view.path)
            self._module_defs[id(view), eval_loss.TEMPLATE] = Names()
            self.module_edits(view).insert_before(top, _module_statements(render(eval_loss.TEMPLATE)))
        return eval_loss.metric(model) if reported else None

    def _build_function(self, program: Program, predict: bool, plans: list[DriverPlan]) -> str:
        """The model_fn, replaced in place by the function building its compiled Keras model; its name."""
        from templates import render

        model_fn, model = program.setup.model_fn, program.setup.model
        if model_fn.canned is not None:
            return self._canned_build_function(model_fn, model, predict, plans)
        function, view = model_fn.function, model_fn.view
        owner = view.parent(view.parent(function))
        enclosing = view.enclosing_function(view.parent(function))
        scope_names = taken(view, owner if isinstance(owner, cst.ClassDef) else view.module) | _builtins() | (
            taken(view, enclosing) if enclosing is not None and not isinstance(owner, cst.ClassDef) else set())
        names = build_function_names(function.name.value)
        new_name = next((name for name in names if name not in scope_names), None)
        if new_name is None:
            raise Value(function, model_fn.place).fail(f"the migrated program names the model_fn's Keras function "
                                                       f"`{names[0]}` or `{names[1]}`, which this module already "
                                                       "uses")
        if model.faithful is not None:
            following, text = faithful_emit.build_function(self, program, new_name, scope_names, predict,
                                                            any(plan.exports for plan in plans))
            column = view.position(function)[1] - 1
            statements = _module_statements(text, column)
            if following is None:  # the model_fn ends its module (or function)
                statements[0] = with_blank_lines(statements[0], 1 if column else 2)
                self.module_edits(view).insert_after(function, statements)
            else:
                self.module_edits(view).insert_before(following, statements)
                self.module_edits(view).blank_lines[following] = 1 if column else 2
            return new_name
        loss_metric = self._eval_loss(view, view.module_statement_of(function), model, plans)
        local = free_names(BUILD_LOCALS, {*model.bound, "features", "input_spec", "params", *model_fn.bound,
                                          *model_fn.keywords})
        parameters = [*(model_fn.bound[:1] if model_fn.bound and model_fn.bound[0] not in model_fn.keywords else []),
                      "input_spec", *(["params"] if model_fn.takes_params else []), *model_fn.keywords]
        steps_per_execution = program.setup.tpu and program.setup.tpu.steps_per_execution
        if steps_per_execution and not steps_per_execution.isdigit():  # the program's expression: passed in
            parameters, steps_per_execution = [*parameters, "steps_per_execution"], "steps_per_execution"
        text = render("keras_model.py.j2", model=model, sequential=model.chain and not predict, predict=predict,
                      steps_per_execution=steps_per_execution, eval_loss=loss_metric,
                      local=local, function=dict(name=new_name, parameters=parameters,
                                                 docstring=_docstring(function.name.value, model, predict)))
        statements = _module_statements(text)
        statements[0] = statements[0].with_changes(leading_lines=function.leading_lines,
                                                   decorators=function.decorators)
        if model.tf1_momentum:
            momentum = _module_statements(render("tf1_momentum.py.j2"))
            statements = [*momentum[:1], with_blank_lines(statements[0], 2)]
        self.module_edits(view).replace(function, statements)
        return new_name

    def _canned_build_function(self, model_fn: ModelFn, model, predict: bool, plans: list[DriverPlan]) -> str:
        """A canned estimator's Keras model: a function before the top-level statement making the estimator."""
        from templates import render

        view = model_fn.view
        new_name = f"build_{_snake(model_fn.canned)}_model"
        if new_name in taken(view, view.module) | _builtins():
            raise model_fn.reference.fail(f"the migrated program names the Keras model function `{new_name}`, which "
                                          "this module already uses")
        local = free_names(BUILD_LOCALS, {*model.bound, "features", "input_spec", *model_fn.keywords})
        docstring = f"TF1's canned {model_fn.canned} as a Keras model, compiled as it trained." if not predict else \
            f"TF1's canned {model_fn.canned} as a compiled Keras model, and a model of its predictions."
        loss_metric = self._eval_loss(view, model_fn.home, model, plans)
        base, index = new_name, 1
        while True:  # another name where an earlier program of the module built another model under this one
            text = render("keras_model.py.j2", model=model, sequential=False, predict=predict, local=local,
                          eval_loss=loss_metric, function=dict(
                              name=new_name, parameters=["input_spec", *model_fn.keywords], docstring=docstring))
            if not self._clashes(view, [new_name], text):
                break
            index += 1
            new_name = f"{base}_{index}"
        self._define(view, [new_name], text)
        self.module_edits(view).insert_before(model_fn.home, _module_statements("\n\n".join([*model.classes, text])))
        self.module_edits(view).blank_lines[model_fn.home] = 2
        return new_name

    def _build_call(self, program: Program, names: Names, reference: str, features_only: bool, codes: dict) -> str:
        """`build_model(dataset.element_spec[0], params=...)` at the driver (``features_only``: the dataset is a
        predict input's, which may give features without labels; ``codes``: keywords' code given)."""
        setup, model_fn = program.setup, program.setup.model_fn
        spec = f"{names.dataset}.element_spec"
        features = f"{spec}[0] if isinstance({spec}, tuple) else {spec}" if features_only else f"{spec}[0]"
        # A model_fn kept as written (tier 2) makes its variables as it runs: on a batch of the dataset.
        arguments = [names.dataset if setup.model.faithful is not None else features]
        if model_fn.takes_params:
            arguments.append(f"params={with_batch_size(setup.params, setup.batch_sizes.get('train')) or '{}'}")
        arguments += [f"{key}={codes.get(key) or self.relocated(value, program)}"
                      for key, value in model_fn.keywords.items()]
        if setup.tpu and setup.tpu.steps_per_execution and not setup.tpu.steps_per_execution.isdigit():
            arguments.append(f"steps_per_execution={setup.tpu.steps_per_execution}")
        return f"{reference}({', '.join(arguments)})"

    def _factory_returns_the_build_function(self, model_fn: ModelFn) -> None:
        """A model_fn a factory makes and returns (`return _model_fn`): the factory returns the build function."""
        factory = _factory_of(model_fn)
        if factory is None:
            return
        name = model_fn.function.name.value
        for node in own_nodes(factory):
            if not isinstance(node, cst.Return):
                continue
            if not is_name(node.value, name):
                raise model_fn.where.fail(f"`{factory.name.value}` makes the model_fn and returns it otherwise than "
                                          f"as `return {name}`, which would return the Keras model's build function")
            self.module_edits(model_fn.view).expressions[node.value] = cst.Name(model_fn.new_name)

    def _function_reference(self, model_fn: ModelFn, program: Program) -> str:
        """How the driver names the build function: as it named the model_fn (the factory's result, for a model_fn
        a factory returns), or through an import of its module (which the driver gets when it has none)."""
        view, function, driver = model_fn.view, model_fn.function, program.place
        if function is not None and _factory_of(model_fn) is not None:
            return source(relocate(self.values, model_fn.reference, driver))
        if function is not None and isinstance(view.parent(view.parent(function)), cst.ClassDef):
            # a method: on the object the model_fn was taken from
            code = relocate(self.values, model_fn.reference, driver)
            if function.name.value == "__call__":  # the object itself: its new method
                return f"{source(code)}.{model_fn.new_name}"
            if isinstance(code, cst.Attribute):
                return source(code.with_changes(attr=cst.Name(model_fn.new_name)))
            raise model_fn.reference.fail("the model_fn must be named as `object.method`")
        if view is driver.view:
            return model_fn.new_name
        alias = module_alias(driver, view)
        if alias is not None:
            return f"{alias}.{model_fn.new_name}"
        self._import_build_function(model_fn, program)
        return model_fn.new_name

    def _import_build_function(self, model_fn: ModelFn, program: Program) -> None:
        """`from trainer.model import build_model` at the driver, spelled as its other imports of that module."""
        view, home = program.place.view, model_fn.view
        if model_fn.new_name in taken(view, view.module):
            raise model_fn.where.fail(
                f"the driver's module already has a `{model_fn.new_name}`, the name of the model_fn's Keras function")
        for statement in module_level_statements(view.module):
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    found, obj = view.tree.import_target(view, small, small.names[0])
                    if found.view is home and obj is not None:
                        module = source(small.module) if small.module is not None else ""
                        self.module_edits(view).add_import(module, model_fn.new_name, relative=len(small.relative))
                        return
        if home.module_name is None:
            raise model_fn.where.fail("the model_fn's module has no importable name")
        self.module_edits(view).add_import(home.module_name, model_fn.new_name)

    def relocated(self, value: Value, program: Program) -> str:
        """``value`` as code where the drivers run, its TF1 references respelled."""
        return source(relocate(self.values, value, program.place, spell=lambda v, n: self.spelling(v).reference(n)))

    def _imports(self, view: ModuleView) -> None:
        """Keras 2 as `keras` (KERAS_IMPORTS, as --keras says) and TF2's `import tensorflow as tf`."""
        edits = self.module_edits(view)
        edits.import_keras(self.keras)
        edits.add_import("tensorflow", None, "tf")


def _tf1_checkpoint(model, restore: bool) -> dict:
    """The context of templates/tf1_checkpoint.py.j2 for this model (a combined one has two optimizers)."""
    if model.wide_deep:
        parts = [Part("model.linear_model", "model.optimizer[0]", model.wide_deep_slots),
                 Part("model.dnn_model", "model.optimizer[1]", model.slots)]
    else:
        parts = [Part("model", "model.optimizer", model.slots)]
    return dict(model=True, restore=restore, renamed=model.tf1_renamed, runtime_linear=model.runtime_linear,
                by_name=model.faithful is not None,
                keras_layers=model.faithful is not None and model.faithful.keras_layers,
                tables=model.faithful is not None and model.faithful.tables, **restore_context(parts, model.mod_tables))


def _factory_of(model_fn: ModelFn) -> cst.FunctionDef | None:
    """The function the model_fn is defined in, if that function returns it (a factory making it)."""
    view, function = model_fn.view, model_fn.function
    owner = view.parent(view.parent(function)) if function is not None else None
    if not isinstance(owner, cst.FunctionDef):
        return None
    name = function.name.value
    returned = any(isinstance(node, cst.Name) and node.value == name for statement in own_nodes(owner)
                   if isinstance(statement, cst.Return) for node in subtree(statement))
    return owner if returned else None


def _predicts(plans: list[DriverPlan]) -> bool:
    """The build function makes a model of the predictions too: predict() or an export reads it."""
    return any(plan.predict or plan.exports for plan in plans)


def _snake(name: str) -> str:
    """DNNClassifier -> dnn_classifier, LinearRegressor -> linear_regressor."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _docstring(name: str, model, predict: bool) -> str:
    if predict:
        text = f"The TF1 model_fn `{name}` as a compiled Keras model, and a model of its predictions."
    else:
        text = f"The TF1 model_fn `{name}` as a Keras model, compiled with its loss and optimizer."
    return "\n".join(textwrap.wrap(text, 90))


def _codes(program: Program, plans: list[DriverPlan]) -> list[str]:
    """The program's expressions (as code at the driver) that the generated code reads."""
    setup = program.setup
    codes = [setup.model_dir, setup.seed, setup.params, *setup.batch_sizes.values(),
             setup.warm_start.path if setup.warm_start else None]
    if setup.checkpoints is not None:
        codes += [setup.checkpoints.keep, setup.checkpoints.every_steps, setup.checkpoints.every_secs,
                  setup.checkpoints.every_hours]
    for plan in plans:
        codes += [piece.input.code for piece in (plan.train, plan.evaluate) if piece is not None]
        codes += [plan.predict.input.code if plan.predict else None, plan.evaluate.steps if plan.evaluate else None]
        codes += [plan.train.fit.steps_per_epoch, plan.train.fit.last_step] if plan.train else []
    codes += [source(value.node) for value in setup.model_fn.keywords.values()]
    codes += setup.tpu.codes() if setup.tpu else []
    return [code for code in codes if code]


def _names_in(*codes: str) -> set[str]:
    return {node.value for code in codes for node in subtree(cst.parse_expression(code)) if isinstance(node, cst.Name)}


def _first_in_block(view: ModuleView, statement: cst.CSTNode, removed: set[int]) -> bool:
    """Is ``statement`` first in its block once the ``removed`` statements are gone?"""
    body = list(getattr(view.parent(statement), "body", ()))
    return statement in body and all(id(before) in removed for before in body[:body.index(statement)])


def _statements(text: str, like: cst.BaseStatement, leading: bool = False) -> list[cst.BaseStatement]:
    """Generated statements for the block ``like`` stands in (its indentation comes from the block); ``leading``:
    the comments above ``like`` stay above them."""
    module = cst.parse_module(text)
    statements = [statement.with_changes(leading_lines=[_unindented(line) for line in (
        [*module.header, *statement.leading_lines] if index == 0 else statement.leading_lines)])
        for index, statement in enumerate(module.body)]
    if statements and leading:
        statements[0] = statements[0].with_changes(leading_lines=[*like.leading_lines, *statements[0].leading_lines])
    return statements


def _unindented(line: cst.EmptyLine) -> cst.EmptyLine:
    """A blank line prints no indentation, in whatever block it ends up."""
    return line if line.comment else line.with_changes(indent=False)


def _module_statements(text: str, column: int = 0) -> list[cst.BaseStatement]:
    """The statements of ``text``, to go where statements stand at ``column`` (a function's body: indented there
    as they are printed, so that their docstrings' lines are too)."""
    if column:
        module = cst.parse_module("if True:\n" + textwrap.indent(text, " " * column))
        statements, header = [default_indented(statement) for statement in module.body[0].body.body], []
    else:
        module = cst.parse_module(text)
        statements, header = list(module.body), module.header
    statements[0] = statements[0].with_changes(leading_lines=[*header, *statements[0].leading_lines])
    blank_lines = 1 if column else 2
    return [with_blank_lines(statement, blank_lines) if isinstance(statement, (cst.FunctionDef, cst.ClassDef))
            else statement for statement in statements]


def _builtins() -> set[str]:
    import builtins

    return set(dir(builtins))
