"""TFM301-303, TFM401: an Estimator program becomes a Keras program trained with ParameterServerStrategy.

TFM301 estimator-program (numeric). A module-level ``train_and_evaluate`` of an
``Estimator``, or its ``train`` / ``evaluate`` / ``predict`` calls, whose ``model_fn``
rewrites/model_fn.py can read (layers on ``features``, a loss, metrics, mode branches,
an optimizer and ``minimize``) becomes the TF2 program shape: a
``strategy_for_this_task()`` bootstrap reading the cluster from ``TF_CONFIG`` (ps and
worker tasks serve, the chief trains with ``ParameterServerStrategy``, an evaluator
evaluates checkpoints, no ``TF_CONFIG`` trains locally), the model built and compiled
in ``strategy.scope()`` with the Keras optimizer and loss arguments that keep TF1's
numbers, ``fit`` for ``max_steps`` steps, then ``evaluate`` (``predict`` through a second
Keras model on the PREDICT branch's outputs and a generator of one dict per example,
as ``Estimator.predict`` yielded them). The input functions stay as they are and are
called once. RunConfig's checkpoints become a ``tf.train.CheckpointManager`` the program
resumes from; ``warm_start_from`` loads the TF1 checkpoint's values by their TF1 names;
``params`` become a module-level ``params``. A decay function of the global step becomes
a Keras schedule; ``MomentumOptimizer`` on such a rate becomes a generated
``TF1Momentum`` (Keras' legacy SGD with TF1's update, from templates/tf1_momentum.py.j2);
a partitioner on a ``variable_scope`` around the layers moves onto the strategy. Float
results may differ in the last bits: prove the migration with ``tf-migrate parity``.

Before::

    def _model_fn(features, labels, mode):
      logits = tf1.layers.Dense(1)(features)
      loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
      optimizer = tf1.train.AdagradOptimizer(0.05)
      train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
      return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    config = tf1.estimator.RunConfig(model_dir=model_dir, tf_random_seed=42)
    estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config)
    train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn, max_steps=20)
    eval_spec = tf1.estimator.EvalSpec(input_fn=_eval_input_fn, steps=3)
    eval_result, _ = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

After::

    def strategy_for_this_task():
      ...  # TF_CONFIG roles: ps/worker serve, chief -> ParameterServerStrategy, none -> local

    keras.utils.set_random_seed(42)
    task_type, strategy = strategy_for_this_task()

    dataset = _input_fn()

    with strategy.scope():
      model = keras.Sequential([
          keras.layers.Dense(units=1),
      ])
      model.build(dataset.element_spec[0].shape)
      optimizer = keras.optimizers.legacy.Adagrad(learning_rate=0.05, initial_accumulator_value=0.1, epsilon=1e-30)
      model.compile(optimizer, loss=keras.losses.MeanSquaredError())

    eval_dataset = _eval_input_fn().repeat()

    checkpoints = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=optimizer), model_dir, max_to_keep=5)
    ...
    checkpoints.restore_or_initialize()
    if task_type == "evaluator":
      ...  # keras.utils.SidecarEvaluator on the chief's checkpoints
    else:
      steps_done = int(optimizer.iterations)
      if steps_done < 20:
        model.fit(dataset, epochs=1, steps_per_epoch=20 - steps_done, callbacks=[save_checkpoint], verbose=2)
    eval_result = model.evaluate(eval_dataset, steps=3, return_dict=True, verbose=2)

TFM303 eval-steps (numeric). PSS needs a repeating eval dataset, so ``evaluate`` runs
exactly ``EvalSpec.steps`` batches of the repeated input, where TF1 stopped at the end
of the input if that came first. Reported when the eval ``input_fn`` does not repeat.

TFM304 checkpoint-cadence (exact). RunConfig's checkpoints become a
``tf.train.CheckpointManager`` in ``model_dir`` that the program resumes from (``max_steps``
counts the steps of earlier runs, as in TF1), saved once per Keras epoch of
``save_checkpoints_steps`` steps. Reported when they cannot be saved at TF1's moments:
``save_checkpoints_secs`` (Keras has no timer) or steps that do not visibly divide
``max_steps``; the migrated program then saves at the end of training.

Training hooks with a Keras counterpart are migrated exactly: ``StopAtStepHook(last_step=N)``
stops ``fit`` at step N, ``CheckpointSaverHook(model_dir, save_steps=N)`` sets the
checkpoint cadence. Other hooks leave the program manual, with what to write instead
(rewrites/hooks.py).

TFM206 partitioner-scope (exact). TF1 attached a partitioner to a ``variable_scope`` (or one
``get_variable``); ParameterServerStrategy takes one partitioner for every variable the model
creates. Reported at the first layer with weights outside the partitioned scope: its
variables are split too. Placement only: the numbers are the same.

TFM401 keras-numerics (numeric). A model_fn piece whose Keras counterpart computes
the same thing only up to a documented difference (``MomentumOptimizer`` with a
learning rate that is not a constant, ``log_loss``, which Keras clips): migrated,
with a finding that says what may differ (dropout's random masks; batch normalization
whose UPDATE_OPS were never run in TF1; an ``embedding_lookup`` on a partitioned table
with TF1's default "mod" strategy, where TF2 shards by "div"). The tables live in
``rewrites/keras_equivalents.py``.

TFM302 estimator-manual (manual). An Estimator program in a shape this version does
not migrate safely (another model_fn structure, hooks, exporters, a model_fn from
another module, ...): the whole program is left untouched, and the finding points at
the construct and says what a person should do. Never a half-migrated program.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.codemod.visitors import RemoveImportsVisitor
from libcst.metadata import QualifiedNameProvider, ScopeProvider

from rewrites import hooks as hooks_code
from rewrites.base import TFCodemod, source, subtree
from rewrites.keras_equivalents import NoKerasEquivalent
from rewrites.model_fn import (Model, ModelFnReader, Unsupported, bound_values, list_elements, single_assign,
                               statement_value)

# Names the generated code binds or reads at module level, and the module each must be if already bound.
GENERATED_NAMES = ("TF1Momentum", "strategy_for_this_task", "task_type", "strategy", "dataset", "eval_dataset", "model",
                   "optimizer", "checkpoints", "save_checkpoint", "steps_done", "warm_start",
                   "warm_start_names")
PREDICT_NAMES = ("predict_examples", "predictor")

CANNED_MESSAGE = ("canned estimator {} left as it is: not migrated yet; write the Keras model of the same shape by "
                  "hand (its v1 defaults, loss reduction and optimizer, differ from v2's) and prove it with tf-migrate parity")
UNMIGRATED_HOOKS = {
    "hooks": "hooks= (SessionRunHooks run in TF1's session loop): migrate them by hand to Keras callbacks",
    "saving_listeners": "saving_listeners= run at TF1 checkpoints: migrate them by hand to a Keras callback",
    "exporters": "exporters= export SavedModels from the evaluator: export the Keras model after training by hand",
}
TRAIN_AND_EVALUATE = ("estimator", "train_spec", "eval_spec")
ESTIMATOR = ("model_fn", "model_dir", "config", "params", "warm_start_from")
RUN_CONFIG_KEPT = {"model_dir", "tf_random_seed", "save_checkpoints_steps", "save_checkpoints_secs", "keep_checkpoint_max"}
TF1_KEEP_CHECKPOINT_MAX = "5"
RUN_CONFIG_LOGGING = {"log_step_count_steps", "save_summary_steps"}  # logging only: fit(verbose=2) logs every epoch
WARM_START_SETTINGS = ("ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
                       "var_name_to_prev_var_name")
TRAIN_SPEC = ("input_fn", "max_steps", "hooks", "saving_listeners")
# Without steps, TF1 trained one pass over an input that ends: Keras needs it repeated, and counted.
ONE_PASS = cst.parse_expression("int(dataset.cardinality())")
UNKNOWN_LENGTH = {"filter", "flat_map", "interleave", "from_generator", "list_files", "unbatch", "rejection_resample",
                  "take_while", "scan", "group_by_window", "bucket_by_sequence_length", "ignore_errors",
                  "TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset", "sample_from_datasets",
                  "choose_from_datasets", "load", "snapshot"}
EVAL_SPEC = ("input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs", "throttle_secs")


@dataclass
class Checkpoints:
    """RunConfig's checkpoint settings, as the migrated program keeps them."""

    keep: str                      # keep_checkpoint_max
    every_steps: cst.BaseExpression | None = None  # save_checkpoints_steps
    every_secs: cst.BaseExpression | None = None   # save_checkpoints_secs, given explicitly
    comment: str = "at the end of training"


@dataclass
class WarmStart:
    """Estimator(warm_start_from=...): the TF1 checkpoint, and the TF1 names of the model's trainable variables."""

    path: str
    names: list[str]


@dataclass
class ModelFn:
    """The model_fn to read, and what the program gives it besides features, labels, mode and params."""

    function: cst.FunctionDef
    statement: cst.CSTNode | None           # the module-level def the migration removes (None: a method stays)
    bound: tuple[str, ...] = ()             # parameters given otherwise: a method's self, partial's keywords
    bindings: dict[str, str] = field(default_factory=dict)  # module-level `name = code` the model needs
    this_object: tuple[str, str] | None = None  # a method's (self, the module-level object it was called on)


@dataclass
class Input:
    """An input_fn as the migrated program calls it."""

    code: str               # the expression giving its dataset: `train_input_fn()`, or a lambda's body
    node: cst.CSTNode       # where findings point
    repeats: bool           # it visibly repeats without end


@dataclass
class FitPlan:
    epochs: str
    steps_per_epoch: str
    absolute: bool        # the steps count those of earlier runs (max_steps), so a resumed run trains the rest
    dataset: str          # what fit trains on: `dataset`, or `dataset.repeat()` for one pass over an input that ends


@dataclass
class EstimatorSetup:
    """What the Estimator and its RunConfig say, and the statements that said it."""

    model: Model
    model_dir: str | None
    seed: str | None
    statements: tuple[cst.CSTNode | None, ...]  # the model_fn and the RunConfig, which the migration removes
    bindings: dict[str, str] = field(default_factory=dict)  # name -> code: what Estimator passed the model_fn
    checkpoints: Checkpoints | None = None  # None: the TF1 program wrote none (no model_dir, or switched off)
    warm_start: WarmStart | None = None


class Rewrite(TFCodemod):
    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        updated_node = super().leave_Module(original_node, updated_node)
        driver = self._driver(original_node) or self._train_call(original_node)
        if driver is None:
            self._report_unmigrated_estimators(original_node)
            return updated_node
        try:
            if self._api(_call_statement(driver).func) == "estimator.train_and_evaluate":
                body, removed, notes = self._migrated_body(original_node, driver)
            else:
                body, removed, notes = self._migrated_calls(original_node, driver)
        except Unsupported as problem:
            self.report("TFM302", problem.node, f"Estimator program left as it is: {problem}")
            return updated_node
        for statement in removed:
            RemoveImportsVisitor.remove_unused_import_by_node(self.context, statement)
        self.report("TFM301", driver, "Estimator program -> Keras fit under ParameterServerStrategy; Keras averages "
                                      "the eval loss per example (TF1 per batch: differs with a short last batch); "
                                      "prove it with tf-migrate parity")
        for rule, node, message in notes:
            self.report(rule, node, message)
        return updated_node.with_changes(body=body)

    # -- finding the program ------------------------------------------------

    def _driver(self, module: cst.Module) -> cst.SimpleStatementLine | None:
        for statement in module.body:
            call = _call_statement(statement)
            if call is not None and self._api(call.func) == "estimator.train_and_evaluate":
                return statement
        return None

    def _train_call(self, module: cst.Module) -> cst.SimpleStatementLine | None:
        """The module-level `estimator.train(...)` statement of an Estimator built at module level."""
        estimators = self._estimator_names(module)
        for statement in module.body:
            call = _call_statement(statement)
            if call is not None and _method_of(call, estimators) == "train":
                return statement
        return None

    def _estimator_names(self, module: cst.Module) -> set[str]:
        return {name for name, (_, value) in _module_definitions(module).items()
                if isinstance(value, cst.Call) and self._api(value.func) == "estimator.Estimator"}

    def _report_unmigrated_estimators(self, module: cst.Module) -> None:
        for call in (node for node in subtree(module) if isinstance(node, cst.Call)):
            api = self._api(call.func) or ""
            if _is_canned(api):
                self.report("TFM302", call, CANNED_MESSAGE.format(api.rpartition(".")[2]))
            elif api == "estimator.Estimator":
                self.report("TFM302", call, "Estimator left as it is: this version migrates an Estimator built at "
                                            "module level and driven there by train_and_evaluate or train()")

    def _api(self, node: cst.CSTNode) -> str | None:
        name = self.tf_name(node)
        return name.api if name else None

    # -- the migration ------------------------------------------------------

    def _migrated_body(self, module: cst.Module, driver: cst.SimpleStatementLine):
        definitions = _module_definitions(module)
        call = _call_statement(driver)
        estimator_arg, train_arg, eval_arg = (self._required(call, TRAIN_AND_EVALUATE, name) for name in TRAIN_AND_EVALUATE)
        estimator, estimator_statement = self._call_of(estimator_arg, "estimator.Estimator", definitions)
        train_spec, train_statement = self._call_of(train_arg, "estimator.TrainSpec", definitions)
        eval_spec, eval_statement = self._call_of(eval_arg, "estimator.EvalSpec", definitions)

        setup = self._estimator_setup(estimator, definitions)

        train_args = bound_values(train_spec, TRAIN_SPEC)
        eval_args = bound_values(eval_spec, EVAL_SPEC)
        for args, names in ((train_args, ("saving_listeners",)), (eval_args, ("hooks", "exporters"))):
            for name in names:
                if name in args:
                    raise Unsupported(args[name], UNMIGRATED_HOOKS[name])
        hook_statements = self._read_hooks(train_args.get("hooks"), definitions, setup)
        train_input, train_steps = self._training_input(train_args.get("input_fn") or train_spec, definitions,
                                                        train_args.get("max_steps"))
        eval_input = self._input_function(eval_args.get("input_fn") or eval_spec, definitions)
        if _is_none(eval_args.get("steps")):
            raise Unsupported(eval_args["steps"], "EvalSpec(steps=None) evaluates until the input ends: give the "
                                                  "number of batches, which the migrated evaluate needs")
        model = setup.model
        notes = list(model.notes)
        steps = source(eval_args["steps"]) if "steps" in eval_args else "100"  # EvalSpec's default
        if not eval_input.repeats:
            notes.append(("TFM303", eval_spec, f"the eval input does not repeat: TF1 stopped at its end, the migrated "
                                               f"evaluate runs exactly steps={steps} batches (the same if it has at least that many)"))

        removed = [s for s in (*setup.statements, *hook_statements, estimator_statement, train_statement,
                               eval_statement, driver) if s is not None]
        self._check_nothing_else_uses(module, removed)
        self._check_generated_names_are_free(module, _generated_names(setup, predict=False))
        fit = self._fit_plan(train_steps, train_steps is not ONE_PASS, setup, notes)
        generated = self._generated(
            "estimator_program.py.j2", setup, predict=False, train_input=train_input.code,
            eval_input=eval_input.code, fit=fit, eval_steps=steps,
            eval_target=self._eval_target(driver))
        return _replaced(module, removed, {driver: generated}), removed, notes

    def _migrated_calls(self, module: cst.Module, train_statement: cst.SimpleStatementLine):
        """`estimator.train(...)`, then maybe `estimator.evaluate(...)` and `estimator.predict(...)` calls."""
        definitions = _module_definitions(module)
        train = _call_statement(train_statement)
        name = train.func.value.value
        estimator_statement, estimator = definitions[name]
        setup = self._estimator_setup(estimator, definitions)
        train_args = bound_values(train, ("input_fn", "hooks", "steps", "max_steps", "saving_listeners"))
        if "saving_listeners" in train_args:
            raise Unsupported(train_args["saving_listeners"], UNMIGRATED_HOOKS["saving_listeners"])
        hook_statements = self._read_hooks(train_args.get("hooks"), definitions, setup)
        absolute = train_args.get("max_steps") is not None  # max_steps counts earlier runs' steps, steps= does not
        train_input, steps = self._training_input(train_args.get("input_fn") or train, definitions,
                                                  train_args.get("max_steps") or train_args.get("steps"))
        absolute = absolute and steps is not ONE_PASS

        replacements: dict[cst.CSTNode, list[cst.BaseStatement]] = {}
        predicts = []
        for statement in module.body[module.body.index(train_statement) + 1:]:
            call = _call_statement(statement)
            if call is not None and _method_of(call, {name}) == "evaluate":
                replacements[statement] = self._evaluate(statement, call, definitions)
            else:
                predicts += [(statement, node) for node in subtree(statement)
                             if isinstance(node, cst.Call) and _method_of(node, {name}) == "predict"]
        model = setup.model
        if predicts and model.predictions is None:
            raise Unsupported(predicts[0][1], "predict() of a model_fn without a PREDICT branch")
        for statement, call in predicts:
            replacements[statement] = [replacements.get(statement, [statement])[0].deep_replace(
                call, self._predict(call, definitions))]
        removed = [s for s in (*setup.statements, *hook_statements, estimator_statement) if s is not None]
        evaluations = list(replacements)
        self._check_nothing_else_uses(module, [*removed, train_statement],
                                      allowed={*evaluations, *(node for _, node in predicts)})
        if predicts:
            model.chain = False  # the predictor shares the functional model's tensors
        self._check_generated_names_are_free(module, _generated_names(setup, predict=bool(predicts)))
        notes = list(model.notes)
        fit = self._fit_plan(steps, absolute, setup, notes)
        replacements[train_statement] = self._generated(
            "estimator_train.py.j2", setup, predict=bool(predicts), train_input=train_input.code,
            fit=fit)
        return _replaced(module, removed, replacements), [*removed, train_statement], notes

    def _evaluate(self, statement, call: cst.Call, definitions) -> list[cst.BaseStatement]:
        args = bound_values(call, ("input_fn", "steps", "hooks", "checkpoint_path", "name"))
        if set(args) - {"input_fn", "steps"}:
            raise Unsupported(call, "evaluate() with hooks, a checkpoint_path or a name is not migrated yet")
        eval_input = self._input_function(args.get("input_fn") or call, definitions)
        from templates import render

        steps = args.get("steps")
        text = render("estimator_evaluate.py.j2", eval_input=eval_input.code,
                      eval_steps=None if steps is None or _is_none(steps) else source(steps),
                      eval_target=_assign_target(statement))
        generated = list(cst.parse_module(text).body)
        generated[0] = generated[0].with_changes(leading_lines=statement.leading_lines)
        return generated

    def _predict(self, call: cst.Call, definitions) -> cst.BaseExpression:
        args = bound_values(call, ("input_fn", "predict_keys", "hooks", "checkpoint_path", "yield_single_examples"))
        if set(args) != {"input_fn"}:
            raise Unsupported(call, "predict() with more than an input_fn is not migrated yet")
        return cst.parse_expression(f"predict_examples(predictor, {self._input_function(args['input_fn'], definitions).code})")

    def _estimator_setup(self, estimator: cst.Call, definitions) -> EstimatorSetup:
        estimator_args = bound_values(estimator, ESTIMATOR)
        config_args, config_statement = self._run_config(estimator_args.get("config"), definitions)
        model_dir = estimator_args.get("model_dir") or config_args.get("model_dir")
        model_fn = self._model_fn(estimator_args.get("model_fn") or estimator, definitions)
        seed = config_args.get("tf_random_seed")
        params = estimator_args.get("params")
        model = ModelFnReader(self._api, _resolver(definitions, params)).read(model_fn.function, model_fn.bound)
        if model_fn.this_object:
            model.rename(*model_fn.this_object)
        if params is not None and not model.uses_params:
            raise Unsupported(params, "Estimator(params=...) for a model_fn that does not take params")
        bindings = {**model_fn.bindings, **(_params_binding(params) if model.uses_params else {})}
        return EstimatorSetup(model, source(model_dir) if model_dir is not None else None,
                              source(seed) if seed is not None else None, (model_fn.statement, config_statement),
                              bindings,
                              _checkpoints(config_args) if model_dir is not None else None,
                              self._warm_start(estimator_args.get("warm_start_from"), model))

    def _warm_start(self, node: cst.BaseExpression | None, model: Model) -> WarmStart | None:
        """`warm_start_from=PATH` or `WarmStartSettings(PATH)`: every trainable variable, by its TF1 name."""
        if node is None:
            return None
        path = node
        if isinstance(node, cst.Call) and self._api(node.func) == "estimator.WarmStartSettings":
            args = bound_values(node, WARM_START_SETTINGS)
            pattern = args.get("vars_to_warm_start")
            if set(args) - {"ckpt_to_initialize_from", "vars_to_warm_start"} or not (
                    pattern is None or isinstance(pattern, cst.SimpleString) and pattern.evaluated_value == ".*"):
                raise Unsupported(node, "WarmStartSettings other than a checkpoint for every trainable variable "
                                        "(vars_to_warm_start='.*'): load the chosen variables by hand")
            path = args["ckpt_to_initialize_from"]
        if model.partitioner is not None:
            raise Unsupported(node, "warm_start_from for a partitioned model: assign the checkpoint's full tensors "
                                    "to the shards by hand")
        if model.tf1_trainable_names is None:
            raise Unsupported(node, "warm_start_from where the TF1 variable names cannot be read from the code "
                                    "(a computed scope or layer name): load the checkpoint by hand")
        return WarmStart(source(path), model.tf1_trainable_names)

    def _generated(self, template: str, setup: EstimatorSetup, **context) -> list[cst.BaseStatement]:
        from templates import render

        model = setup.model
        text = render(template, model=model, sequential=model.chain, partitioner=model.partitioner or "None",
                      tf1_momentum=model.tf1_momentum, seed=setup.seed, model_dir=setup.model_dir,
                      bindings=setup.bindings, checkpoints=setup.checkpoints, warm_start=setup.warm_start, **context)
        self.add_generated_imports()
        generated = list(cst.parse_module(text).body)
        generated[0] = generated[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        return generated

    def _read_hooks(self, node: cst.BaseExpression | None, definitions, setup: EstimatorSetup) -> list[cst.CSTNode]:
        """The training hooks into ``setup.model.hooks``; the module-level statements that built them."""
        statements = []
        if isinstance(node, cst.Name) and node.value in definitions:
            statement, node = definitions[node.value]
            statements.append(statement)
        for hook in list_elements(node):
            if isinstance(hook, cst.Name) and hook.value in definitions:
                statement, hook = definitions[hook.value]
                statements.append(statement)
            if not isinstance(hook, cst.Call):
                raise Unsupported(hook, "a hook that is not constructed in this module: " + hooks_code.CUSTOM)
            try:
                hooks_code.read_hook(self._api(hook.func), hook, setup.model.hooks, model_dir=setup.model_dir)
            except NoKerasEquivalent as problem:
                raise Unsupported(hook, str(problem)) from None
        return statements

    @staticmethod
    def _fit_plan(steps: cst.BaseExpression, absolute: bool, setup: EstimatorSetup, notes: list) -> FitPlan:
        """The training steps as epochs x steps_per_epoch: one epoch per checkpoint TF1 saved every N steps.
        ``absolute``: ``steps`` counts the steps of earlier runs too (max_steps)."""
        hooks, checkpoints = setup.model.hooks, setup.checkpoints
        if hooks.last_step is not None:
            steps = _earlier_stop(steps, hooks.last_step, absolute)
        whole = FitPlan("1", source(steps), absolute, "dataset.repeat()" if steps is ONE_PASS else "dataset")
        if checkpoints is None:
            return whole
        if hooks.checkpoint_steps is not None:  # the Estimator then adds no saver of its own
            checkpoints.every_steps, checkpoints.every_secs = hooks.checkpoint_steps, None
        if checkpoints.every_secs is not None:
            notes.append(("TFM304", checkpoints.every_secs, "Keras has no checkpoints on a timer: the migrated program "
                                                            "saves one at the end of training; give RunConfig "
                                                            "save_checkpoints_steps for regular ones"))
        every = checkpoints.every_steps
        if every is None:
            return whole
        if not (isinstance(steps, cst.Integer) and isinstance(every, cst.Integer)
                and steps.evaluated_value % every.evaluated_value == 0):
            notes.append(("TFM304", every, f"save_checkpoints_steps={source(every)} does not visibly divide "
                                           f"the {source(steps)} training steps (both whole-number literals): the "
                                           "migrated program saves one checkpoint, at the end of training"))
            return whole
        checkpoints.comment = f"every {source(every)} steps (one epoch each)"
        return FitPlan(str(steps.evaluated_value // every.evaluated_value), source(every), absolute, "dataset")

    # -- pieces of the program ----------------------------------------------

    def _required(self, call: cst.Call, params: tuple[str, ...], name: str) -> cst.BaseExpression:
        args = bound_values(call, params)
        if name not in args:
            raise Unsupported(call, f"no {name} argument")
        return args[name]

    def _call_of(self, node: cst.BaseExpression, api: str, definitions: dict):
        """The ``api(...)`` call ``node`` is, or names at module level, and the statement that assigns it."""
        statement = None
        if isinstance(node, cst.Name):
            statement, node = definitions.get(node.value, (None, node))
        found = self._api(node.func) if isinstance(node, cst.Call) else None
        if _is_canned(found or ""):
            raise Unsupported(node, CANNED_MESSAGE.format(found.rpartition(".")[2]))
        if found != api:
            raise Unsupported(node, f"expected a {api.rsplit('.', 1)[-1]}(...) defined at module level")
        return node, statement

    def _run_config(self, node, definitions):
        if node is None:
            return {}, None
        call, statement = self._call_of(node, "estimator.RunConfig", definitions)
        args = {}
        for arg in call.args:
            name = arg.keyword.value if arg.keyword else None
            if name in RUN_CONFIG_LOGGING:
                continue
            if name not in RUN_CONFIG_KEPT:
                raise Unsupported(arg, f"RunConfig({name or 'positional argument'}=...) is not migrated yet: "
                                       "set it on the Keras side by hand (checkpoint callback, tf.config, ...)")
            args[name] = arg.value
        return args, statement

    def _model_fn(self, node: cst.BaseExpression, definitions) -> ModelFn:
        """A function of this module, a functools.partial of one, a method of a module-level object, or such an
        object with __call__."""
        if isinstance(node, cst.Call) and self._is_partial(node.func):
            return self._partial(node, definitions)
        if isinstance(node, cst.Name) and isinstance(definitions.get(node.value, (None,))[0], cst.FunctionDef):
            return ModelFn(definitions[node.value][0], definitions[node.value][0])
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            return self._method(node.value.value, node.attr.value, definitions, node)
        if isinstance(node, cst.Name):
            return self._method(node.value, "__call__", definitions, node)
        raise Unsupported(node, "the model_fn must be a function of this module, a functools.partial of one, or a "
                                "method (or __call__) of an object built at module level")

    def _partial(self, call: cst.Call, definitions) -> ModelFn:
        """`functools.partial(model_fn, name=value, ...)`: the keywords become module-level names."""
        function, *given = call.args
        if any(arg.keyword is None or arg.star for arg in given) or function.keyword or function.star:
            raise Unsupported(call, "functools.partial of the model_fn with positional or ** arguments: give the "
                                    "extra parameters by keyword")
        model_fn = self._model_fn(function.value, definitions)
        if model_fn.bound:
            raise Unsupported(call, "functools.partial of a method: give the model_fn as a plain function")
        bindings = {arg.keyword.value: source(arg.value) for arg in given}
        return ModelFn(model_fn.function, model_fn.statement, tuple(bindings), bindings)

    def _method(self, instance: str, method: str, definitions, node: cst.CSTNode) -> ModelFn:
        """A method of `instance = Class(...)`, Class defined in this module; its `self` becomes `instance`."""
        statement, value = definitions.get(instance, (None, None))
        cls = definitions.get(value.func.value, (None,))[0] if isinstance(value, cst.Call) and isinstance(
            value.func, cst.Name) else None
        function = next((item for item in cls.body.body if isinstance(item, cst.FunctionDef)
                         and item.name.value == method), None) if isinstance(cls, cst.ClassDef) else None
        if function is None or not function.params.params or function.decorators:
            raise Unsupported(node, f"the model_fn `{source(node)}` must be a method of an object built at module "
                                    "level from a class of this module")
        this = function.params.params[0].name.value
        return ModelFn(function, None, (this,), this_object=(this, instance))

    def _is_partial(self, node: cst.CSTNode) -> bool:
        return any(name.name == "functools.partial" for name in self.get_metadata(QualifiedNameProvider, node, set()))

    def _function(self, node, definitions, role: str) -> cst.FunctionDef:
        if isinstance(node, cst.Name) and isinstance(definitions.get(node.value, (None,))[0], cst.FunctionDef):
            return definitions[node.value][0]
        raise Unsupported(node, f"the {role} must be a function defined in this module")

    def _input_function(self, node, definitions) -> Input:
        """An input_fn: a function of this module, or a lambda, returning a tf.data.Dataset expression."""
        if isinstance(node, cst.Lambda) and not node.params.params and self._is_dataset_chain(node.body, {}):
            return Input(source(node.body), node, _repeats(node.body))
        function = self._function(node, definitions, "input_fn")
        params = function.params
        if any(param.default is None for param in (*params.params, *params.kwonly_params)) or params.posonly_params:
            raise Unsupported(function, "an input_fn that takes arguments (params, input_context) is not migrated yet")
        if not self._returns_dataset(function):
            raise Unsupported(function, "an input_fn that does not return a tf.data.Dataset expression "
                                        "(features and labels tensors, a generator, ...) is not migrated yet")
        return Input(f"{function.name.value}()", function, _repeats(function))

    def _training_input(self, node, definitions, steps: cst.BaseExpression | None) -> tuple[Input, cst.BaseExpression]:
        """The training input, and the steps to train: without steps, one pass over an input that ends."""
        train_input = self._input_function(node, definitions)
        if steps is not None and not _is_none(steps):
            if not train_input.repeats:
                raise Unsupported(train_input.node, "the training input_fn does not visibly repeat(): TF1 stopped at "
                                                    "its end or at the steps, whichever came first; add .repeat(), or "
                                                    "drop the steps to train one pass")
            return train_input, steps
        if train_input.repeats:
            raise Unsupported(train_input.node, "no max_steps and an input that repeats: TF1 trained until stopped; "
                                                "say how many steps to train")
        unknown = next((node for node in subtree(train_input.node) if isinstance(node, cst.Attribute)
                        and node.attr.value in UNKNOWN_LENGTH), None)
        if unknown is not None:
            raise Unsupported(unknown, f"no max_steps, and .{unknown.attr.value} makes the length of the input "
                                       "unknown ahead: say how many steps to train")
        return train_input, ONE_PASS

    def _returns_dataset(self, function: cst.FunctionDef) -> bool:
        """Does every return of the function give a tf.data.Dataset method chain (maybe through local names)?"""
        local = dict(filter(None, map(single_assign, function.body.body)))
        returns = [node for node in subtree(function) if isinstance(node, cst.Return)]
        return bool(returns) and all(self._is_dataset_chain(node.value, local) for node in returns)

    def _is_dataset_chain(self, node, local: dict[str, cst.BaseExpression]) -> bool:
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if (self._api(node.func) or "").startswith("data."):
                return True
            node = node.func.value
        return isinstance(node, cst.Name) and node.value in local and self._is_dataset_chain(local.pop(node.value), local)

    def _eval_target(self, driver: cst.SimpleStatementLine) -> str:
        small = driver.body[0]
        if not isinstance(small, cst.Assign):
            return ""
        target = small.targets[0].target
        if isinstance(target, cst.Tuple) and len(target.elements) == 2:
            first, second = (element.value for element in target.elements)
            if isinstance(second, cst.Name) and second.value == "_" and isinstance(first, cst.Name):
                return f"{first.value} = "
        raise Unsupported(driver, "the results of train_and_evaluate are used in a way not migrated yet: "
                                  "use `eval_result, _ = train_and_evaluate(...)`")

    # -- safety checks -------------------------------------------------------

    def _check_nothing_else_uses(self, module: cst.Module, removed: list[cst.CSTNode], allowed=frozenset()) -> None:
        inside = {node for statement in (*removed, *allowed) for node in subtree(statement)}
        scope = self.get_metadata(ScopeProvider, module)
        for name in _bound_names(removed):
            for assignment in scope[name]:
                for reference in assignment.references:
                    if reference.node not in inside:
                        raise Unsupported(reference.node, f"`{name}` is used outside the Estimator set-up; "
                                                          "migrate that use by hand")

    def _check_generated_names_are_free(self, module: cst.Module, names: tuple[str, ...]) -> None:
        scope = self.get_metadata(ScopeProvider, module)
        for name in names:
            if name in scope:
                raise Unsupported(next(iter(scope[name])).node, f"the migrated program defines `{name}`, "
                                                                "which this module already uses")
        conflict = self.generated_import_conflict(module)
        if conflict is not None:
            raise Unsupported(*conflict)


# -- small syntax helpers ------------------------------------------------------


def _module_definitions(module: cst.Module) -> dict[str, tuple[cst.CSTNode, cst.CSTNode]]:
    """Module-level `name = value`, `def name` and `class name` bound exactly once: name -> (statement, value or
    definition)."""
    found: dict[str, list] = {}
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            found.setdefault(statement.name.value, []).append((statement, statement))
        assign = single_assign(statement)
        if assign is not None:
            found.setdefault(assign[0], []).append((statement, assign[1]))
    return {name: places[0] for name, places in found.items() if len(places) == 1}


def _bound_names(statements: list[cst.CSTNode]) -> list[str]:
    names = []
    for statement in statements:
        if isinstance(statement, cst.FunctionDef):
            names.append(statement.name.value)
        elif (assign := single_assign(statement)) is not None:
            names.append(assign[0])
    return names


def _repeats(code: cst.CSTNode) -> bool:
    """Does the code hold a `.repeat()` without a count?"""
    return any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "repeat"
               and not node.args for node in subtree(code))


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _call_statement(statement: cst.CSTNode) -> cst.Call | None:
    """The call a simple statement `call(...)`, `x = call(...)` or `a, b = call(...)` makes."""
    value = statement_value(statement)
    return value if isinstance(value, cst.Call) else None


def _method_of(call: cst.Call, objects: set[str]) -> str | None:
    """"train" for `estimator.train(...)` when `estimator` is one of ``objects``."""
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in objects:
        return func.attr.value
    return None


def _assign_target(statement: cst.SimpleStatementLine) -> str:
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return f"{source(small.targets[0].target)} = "
    return ""


def _replaced(module: cst.Module, removed: list[cst.CSTNode], replacements: dict) -> list[cst.BaseStatement]:
    """The module's statements without ``removed``, each key of ``replacements`` replaced by its statements."""
    body = []
    for statement in module.body:
        if statement in replacements:
            body.extend(replacements[statement])
        elif not any(statement is r for r in removed):
            body.append(statement)
    return body


def _is_canned(api: str) -> bool:
    """tf.estimator.DNNClassifier, LinearRegressor, BoostedTreesClassifier, ... (not Estimator itself)."""
    name = api.rpartition(".")[2]
    return api.startswith("estimator.") and name.endswith(("Classifier", "Regressor", "Estimator")) and name != "Estimator"


def _resolver(definitions: dict, params: cst.BaseExpression | None):
    """What a name stands for in the model_fn: a module-level value, or an entry of Estimator(params={...})."""

    def resolve(node: cst.BaseExpression) -> cst.BaseExpression:
        seen = set()
        while id(node) not in seen:
            seen.add(id(node))
            statement, value = definitions.get(node.value, (None, None)) if isinstance(node, cst.Name) else (None, None)
            if statement is not None and not isinstance(statement, cst.FunctionDef):
                node = value
            elif (key := _params_key(node)) is not None and isinstance(entries := resolve(params), cst.Dict):
                values = [element.value for element in entries.elements if isinstance(element, cst.DictElement)
                          and isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key]
                node = values[0] if len(values) == 1 else node
        return node

    return resolve


def _params_key(node: cst.BaseExpression) -> str | None:
    """"key" for `params["key"]`."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == "params" \
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = node.slice[0].slice.value
        return index.evaluated_value if isinstance(index, cst.SimpleString) else None
    return None


def _earlier_stop(steps: cst.BaseExpression, last_step: cst.BaseExpression, absolute: bool) -> cst.Integer:
    """max_steps and a StopAtStepHook(last_step=...): training stops at whichever comes first."""
    if not (absolute and isinstance(steps, cst.Integer) and isinstance(last_step, cst.Integer)):
        raise Unsupported(last_step, "StopAtStepHook(last_step=...) is migrated beside max_steps, both whole-number "
                                     "literals: fold the smaller into max_steps by hand")
    return cst.Integer(str(min(steps.evaluated_value, last_step.evaluated_value)))


def _checkpoints(config: dict[str, cst.BaseExpression]) -> Checkpoints | None:
    """RunConfig's checkpoint settings; None when both intervals are None (TF1 then saved no checkpoints)."""
    steps, secs = config.get("save_checkpoints_steps"), config.get("save_checkpoints_secs")
    if (steps is None or _is_none(steps)) and secs is not None and _is_none(secs):
        return None
    keep = config.get("keep_checkpoint_max")
    return Checkpoints(source(keep) if keep is not None else TF1_KEEP_CHECKPOINT_MAX,
                       None if steps is None or _is_none(steps) else steps,
                       None if secs is None or _is_none(secs) else secs)


def _params_binding(params: cst.BaseExpression | None) -> dict[str, str]:
    """The model_fn's `params`: Estimator's argument (it passed {} without one)."""
    if isinstance(params, cst.Name) and params.value == "params":
        return {}  # the module's own `params`, already bound
    return {"params": source(params) if params is not None else "{}"}


def _generated_names(setup: EstimatorSetup, predict: bool) -> tuple[str, ...]:
    """The module-level names the migrated program binds."""
    model = setup.model
    return (*GENERATED_NAMES, *(PREDICT_NAMES if predict else ()), *(() if model.chain else model.names()),
            *setup.bindings)
