"""Reading one Estimator pipeline into a Program: the model_fn, RunConfig, the drivers and their inputs.

Everything the migrated program needs is read where it stands (the Estimator may be made in a
factory of another module, its specs in a helper) and written as code at the driver's place:
``Values.relocate`` keeps the program's own expressions (``args.train_steps``,
``FLAGS.batch_size``, ``params["lr"]``) and respells TF1 references for a module whose ``tf``
becomes TF2. Anything that cannot be read raises Unsupported, naming where and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.estimator import canned, forwarded, keras_model, model_fn_wrapper, predict, results
from rewrites.estimator.exports import Export, ExportReader
from rewrites.estimator.added_metrics import ADD_METRICS, AddedMetrics
from rewrites.estimator.config import ConfigReader, Steps
from rewrites.estimator.discover import Discovery, Pipeline, trail_functions, trail_statements
from rewrites.estimator.drivers import read_outside, reads_the_same
from rewrites.estimator.faithful import FaithfulReader
from rewrites.estimator.faithful_emit import TABLE_PARTITIONER
from rewrites.estimator.inputs import InputReader
from rewrites.estimator.model_fn import ModelFnReader
from rewrites.estimator.program import Driver, FitPlan, Input, Model, ModelFn, Note, Program, Setup
from rewrites.estimator.tpu import TPU_ESTIMATOR, tpu_settings
from rewrites.program.relocation import relocate
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import CallSite, Place, Value
from rewrites.program.values import Values, calls_in
from rewrites.syntax import Unsupported, bound_values, first_line, is_none, source

ESTIMATOR = ("model_fn", "model_dir", "config", "params", "warm_start_from")
UNTRAINED = ("an Estimator only evaluated or predicted with here: its Keras model is restored from model_dir's "
             "checkpoints, as TF1 read its trained model there (the migrated program's own in model_dir/tf2, else "
             "TF1's), or starts initialized where there are none, as TF1's did")
TRAIN_AND_EVALUATE = ("estimator", "train_spec", "eval_spec")
TRAIN_SPEC = ("input_fn", "max_steps", "hooks", "saving_listeners")
EVAL_SPEC = ("input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs", "throttle_secs")
TRAIN = ("input_fn", "hooks", "steps", "max_steps", "saving_listeners")
EVALUATE = ("input_fn", "steps", "hooks", "checkpoint_path", "name")
PREDICT = ("input_fn", "predict_keys", "hooks", "checkpoint_path", "yield_single_examples")
UNMIGRATED_HOOKS = {
    "hooks": "hooks= (SessionRunHooks run in TF1's session loop): migrate them by hand to Keras callbacks",
    "saving_listeners": "saving_listeners= run at TF1 checkpoints: migrate them by hand to a Keras callback",
}
EVAL_SPEC_DEFAULT_STEPS = "100"
EXPORTED = ("exporters= -> export_saved_model(predictor, ...) after the evaluation: TF1's folders and signatures, the "
            "serving function run as written; the migrated program evaluates once, at the end, so it exports once "
            "(TF1 exported after each evaluation), and in a cluster the chief exports (TF1's evaluator did)")
UNKNOWN_REPEAT = "whether the {} repeats is known only when the program runs (`repeat(n)` of an n the migration cannot read)"


@dataclass
class TrainPlan:
    input: Input
    fit: FitPlan


@dataclass
class EvalPlan:
    input: Input
    steps: str | None           # None: the whole input, counted
    target: str = ""            # `eval_result = ` when the program keeps the result
    step: bool = False          # the program may read the result's global_step: the migrated result holds it
    inline: cst.Call | None = None  # the evaluate call inside a larger expression: it reads the result from a name
    none_at_run_time: bool = False  # steps may be None when the program runs (a flag's default): the whole input


@dataclass
class DriverPlan:
    driver: Driver
    train: TrainPlan | None = None
    evaluate: EvalPlan | None = None
    predict: predict.Prediction | None = None
    exports: list[Export] = field(default_factory=list)  # after the evaluation
    edits: list = field(default_factory=list)  # (view, old, new): the serving functions' receivers
    builders: set[str] = field(default_factory=set)  # the generated serving function factories the exports call
    graph_code: list = field(default_factory=list)  # (view, function): TF1 code the exports run in a graph

    @property
    def export_call(self) -> bool:
        """``estimator.export_saved_model(...)``: the export alone, where the call stands."""
        return bool(self.exports) and self.train is None and self.evaluate is None


class ProgramReader:
    def __init__(self, values: Values, spelling, discovery: Discovery, faithful: bool = True) -> None:
        """``spelling(view)``: the Spelling of a module (shared across programs); ``faithful``: a model_fn tier 1
        cannot translate is kept as written (tier 2, TFM310)."""
        self.values, self.spelling, self.discovery, self.faithful = values, spelling, discovery, faithful

    def read(self, pipeline: Pipeline) -> tuple[Program, list[DriverPlan]]:
        self.place = self.home = pipeline.place
        self.notes: list[Note] = []
        self.trail = list(pipeline.trail)
        self.config = ConfigReader(self.values, self.code, self.trail)
        self.problems: list[Unsupported] = []  # every thing found that stops the program, not the first alone
        self.model_read = True
        setup = self._setup(pipeline.estimator)
        self.setup = setup
        plans = [plan for plan in map(self._noting(self._driver), pipeline.drivers) if plan is not None]
        if plans and not any(driver.kind in ("train", "train_and_evaluate") for driver in pipeline.drivers):
            self._noting(self._untrained)(plans)
        self.place = self.home
        anchor = self.discovery.anchor(pipeline)
        outside = self._noting(read_outside)(self.values, pipeline, anchor, self.model_dir,
                                             trail_statements(self.trail), self._spell)
        if self.problems:
            raise Unsupported.of_all(self.problems)
        self._map_examples(plans, setup.model)
        program = Program(setup, pipeline.drivers, pipeline.place, anchor, notes=self.notes)
        for plan in plans:
            program.edits += [edit for piece in (plan.train and plan.train.input, plan.evaluate and plan.evaluate.input,
                                                 plan.predict and plan.predict.input) if piece
                             for edit in piece.edits] + plan.edits
            program.graph_code += plan.graph_code
        program.removed = trail_statements(self.trail)
        program.attributes, program.handoff = outside
        program.factories = [(view, f) for view, f in trail_functions(self.trail) if f is not setup.model_fn.function]
        return program, plans

    def _untrained(self, plans: list[DriverPlan]) -> None:
        """An Estimator only evaluated or predicted with here (a notebook's second one on a trained model_dir):
        its model is the trained one TF1 read from model_dir, which the migrated set-up restores."""
        where = plans[0].driver.call
        if self.setup.checkpoints is None:
            raise where.fail("an Estimator that is only evaluated, predicted with or exported, never trained here, "
                             "and has no model_dir to read a trained model from")
        if not any(plan.evaluate or plan.predict for plan in plans):
            raise where.fail("an Estimator that is only exported, never trained here, is not migrated yet: export "
                             "where the program trains it")
        self.notes.append(Note("TFM301", where.view, where.node, UNTRAINED))

    @staticmethod
    def _map_examples(plans: list[DriverPlan], model) -> None:
        """What a canned estimator's head did to the examples, done by the inputs: labels looked up in its
        label_vocabulary (an unknown label fails, as in TF1), and Keras' example weights, the dataset's third
        element, taken from the weight_column."""
        if model.label_vocabulary is None and model.sample_weight is None:
            return
        labels = "labels" if model.label_vocabulary is None else (
            f"keras.layers.StringLookup(vocabulary={model.label_vocabulary!r}, num_oov_indices=0)(labels)"
            .replace("'", '"'))
        weights = f', features["{model.sample_weight}"]' if model.sample_weight else ""
        for plan in plans:
            for piece in (plan.train and plan.train.input, plan.evaluate and plan.evaluate.input):
                if piece is not None:
                    piece.code = f"{piece.code}.map(lambda features, labels: (features, {labels}{weights}))"

    def _noting(self, reader):
        """``reader`` that notes what stops the program and gives None, so that reading goes on."""
        def read(*args):
            try:
                return reader(*args)
            except Unsupported as problem:
                self.problems.append(problem)
                return None
        return read

    def code(self, value: Value) -> str:
        """``value`` as code at the driver, its TF1 references respelled."""
        return source(relocate(self.values, value, self.place, spell=self._spell))

    def _spell(self, view, node):
        return self.spelling(view).reference(node)

    # -- the Estimator ------------------------------------------------------------------------

    def _setup(self, estimator: Value) -> Setup:
        api = estimator.api()
        tpu = tpu_settings(self.values, estimator, self.code) if api == TPU_ESTIMATOR else None
        canned_parameters = canned.parameters(estimator, self._tf1_era(estimator))
        keras = api == keras_model.MODEL_TO_ESTIMATOR
        args = bound_values(estimator.node, tpu.parameters if tpu else canned_parameters or (
            keras_model.PARAMETERS if keras else ESTIMATOR))
        at = estimator.place
        arg = {name: Value(value, at) for name, value in args.items()}
        config = self._noting(self.config.run_config)(arg.get("config")) or {}
        model_dir = arg.get("model_dir") or config.get("model_dir")
        if canned_parameters:
            model_fn, model = self._canned(estimator)
        elif keras:
            try:
                model_fn, model = keras_model.KerasModelReader(self.values, self.spelling, self.place).read(estimator,
                                                                                                           arg)
            except Unsupported as problem:  # the drivers are read on, for what else stops them
                self.problems.append(problem)
                model_fn, model, self.model_read = ModelFn(estimator.view, None, at, estimator), Model(), False
        else:
            model_fn = self._model_fn(arg.get("model_fn") or estimator, arg.get("params"), tpu)
            try:
                model = ModelFnReader(model_fn.place, self.values, self.spelling(model_fn.view),
                                      flags=tpu is not None).read(model_fn.function, model_fn.bound)
            except Unsupported as why:
                model = self._kept(model_fn, why, tpu)
        for call in calls_in(self.trail, ADD_METRICS):
            self._noting(AddedMetrics(self.values, model, model_fn.canned, self.spelling, model_fn.view).read)(call)
        for call in forwarded.calls(self.trail):
            self._noting(forwarded.read)(call, model, model_fn.canned, self.values)
        params = arg.get("params")
        if params is not None and self.model_read and not model.uses_params and not model_fn.takes_params:
            raise params.fail("Estimator(params=...) for a model_fn that does not take params")
        self.notes += [Note(rule, model_fn.view, node, message) for rule, node, message in model.notes]
        seed = config.get("tf_random_seed")
        setup = Setup(model_fn, model,
                      model_dir=self.code(model_dir) if model_dir is not None else None,
                      seed=self.code(seed) if seed is not None else None,
                      params=self.code(params) if params is not None else None,
                      checkpoints=self.config.checkpoints(config) if model_dir is not None else None)
        setup.warm_start = self.config.warm_start(arg.get("warm_start_from"), model)
        if "train_distribute" in config:
            if tpu is not None:
                raise config["train_distribute"].fail("RunConfig(train_distribute=...) of a TPUEstimator is not "
                                                      "migrated: choose the strategy by hand")
            setup.local_strategy = self.code(config["train_distribute"])
        if tpu is not None:
            setup.batch_sizes = tpu.batch_sizes
            setup.tpu = tpu.on_tpu(self.values, arg.get("config"), model_fn, self.code, self.trail)
            self.notes += tpu.notes
        self.model_dir, self.params = model_dir, arg.get("params")
        return setup

    def _kept(self, model_fn: ModelFn, why: Unsupported, tpu) -> Model:
        """The model_fn kept as written and run in Keras (tier 2), where tier 1 cannot translate it."""
        try:
            if not self.faithful:
                raise why
            if tpu is not None:
                raise Unsupported.of_all([why, Unsupported(model_fn.function, "a TPUEstimator's model_fn is not kept "
                                                                              "as written (tier 2) yet")])
            parameters = [param.name.value for param in model_fn.function.params.params
                          if param.name.value not in model_fn.bound]
            faithful = FaithfulReader(model_fn.view, self.spelling(model_fn.view)).read(model_fn.function,
                                                                                       parameters, why)
        except Unsupported as problem:  # raised about the model_fn's module
            for each in problem.every():
                each.path = each.path or model_fn.view.path
            self.problems.append(problem)
            self.model_read = False  # the drivers are read on, for what else stops them
            return Model()
        return Model(faithful=faithful, uses_params="params" in parameters, slots=faithful.slots,
                     notes=list(faithful.notes), metrics=list(faithful.metrics.values()),
                     partitioner=f"{TABLE_PARTITIONER}()" if faithful.tables else None,
                     mod_tables=["*model.tables"] if faithful.mod_tables else [])

    def _tf1_era(self, estimator: Value) -> bool:
        """The module's plain `tf` is TF 1.x's (it reaches APIs TF 2 has only in compat.v1)."""
        return self.spelling(estimator.view).rebinding.kind == "tf1-era"

    def _canned(self, estimator: Value):
        """A canned estimator's Keras model, and the ModelFn standing for the function that will build it."""
        read = canned.CannedReader(self.values).read(estimator, self._tf1_era(estimator))
        view = estimator.view
        home = estimator.node
        while view.parent(home) is not view.module:
            home = view.parent(home)
        model_fn = ModelFn(view, None, estimator.place, estimator, keywords=read.keywords, canned=read.name, home=home)
        return model_fn, read.model

    def _model_fn(self, node: Value, params: Value | None, tpu) -> ModelFn:
        """The model_fn: a function (maybe of another module), a functools.partial of one (or a function only
        calling one with more keywords, rewrites/estimator/model_fn_wrapper.py), or a method."""
        trail: list = []
        resolved = self.values.resolve(node, trail=trail)
        keywords: dict[str, Value] = {}
        wrapper = None
        reference = node
        if resolved.is_partial():
            function_arg, *given = resolved.node.args
            if any(arg.keyword is None or arg.star for arg in given) or function_arg.keyword or function_arg.star:
                raise resolved.fail("functools.partial of the model_fn with positional or ** arguments: give the "
                                    "extra parameters by keyword")
            keywords = {arg.keyword.value: Value(arg.value, resolved.place) for arg in given}
            reference = Value(function_arg.value, resolved.place)
            resolved = self.values.resolve(reference)
        elif (partial := model_fn_wrapper.partial_of(resolved, node, self.values)) is not None:
            wrapper, (reference, keywords) = resolved, partial
            resolved = self.values.resolve(reference)
        if isinstance(resolved.node, cst.Call):  # an object with __call__
            resolved = self.values.method(resolved, "__call__") or resolved
        method_self = self._bound_method(resolved, node)
        function = resolved.node
        if not isinstance(function, cst.FunctionDef) and self.values.outside(trail):
            raise node.fail(f"the model_fn is in {self.values.outside(trail)}, which is not among the paths given: "
                            "include it in the run, so the files of the program are migrated together")
        if not isinstance(function, cst.FunctionDef):
            raise node.fail("the model_fn must be a function defined in the files given, a functools.partial of "
                            "one, or a method of an object made there")
        names = [p.name.value for p in function.params.params]
        bound = tuple(filter(None, (method_self, *keywords)))
        takes_params = "params" in names
        # The body is read with `params` bound to what Estimator gave the model_fn.
        place = Place(resolved.view, function, outer=resolved.place)
        if tpu is not None and takes_params:  # TPUEstimator adds use_tpu and the batch size
            params = tpu.params(params, node.place)
        if params is not None and takes_params:
            call = cst.Call(cst.Name(function.name.value), [cst.Arg(params.node, keyword=cst.Name("params"))])
            place = Place(resolved.view, function, CallSite(call, params.place), outer=resolved.place)
        return ModelFn(resolved.view, function, place, reference, bound, keywords, takes_params, wrapper=wrapper)

    def _bound_method(self, resolved: Value, node: Value) -> str | None:
        """A method's `self`, when the model_fn is `obj.method` (or `obj`, an object with __call__)."""
        function = resolved.node
        if isinstance(function, cst.FunctionDef):
            owner = resolved.view.parent(resolved.view.parent(function))
            if isinstance(owner, cst.ClassDef):
                if function.decorators or not function.params.params:
                    raise node.fail("the model_fn is a static or class method: make it a plain method or function")
                return function.params.params[0].name.value
        return None

    # -- the drivers ----------------------------------------------------------------------------

    def _driver(self, driver: Driver) -> DriverPlan:
        # A driver outside the model's place (drivers.py): its inputs and steps are code where it stands.
        self.place = self.home if driver.call.place.same_scope(self.home) else driver.call.place
        reader = getattr(self, f"_{driver.kind}")
        return reader(driver)

    def _inputs(self) -> InputReader:
        return InputReader(self.values, self.place, self.code, self.spelling)

    def _train_and_evaluate(self, driver: Driver) -> DriverPlan:
        args = bound_values(driver.call.node, TRAIN_AND_EVALUATE)
        at = driver.call.place
        train_spec = self._spec(Value(args.get("train_spec"), at), "estimator.TrainSpec", driver)
        eval_spec = self._spec(Value(args.get("eval_spec"), at), "estimator.EvalSpec", driver)
        train_args = {k: Value(v, train_spec.place) for k, v in bound_values(train_spec.node, TRAIN_SPEC).items()}
        eval_args = {k: Value(v, eval_spec.place) for k, v in bound_values(eval_spec.node, EVAL_SPEC).items()}
        for args_, names in ((train_args, ("saving_listeners",)), (eval_args, ("hooks",))):
            for name in names:
                if name in args_ and not is_none(self.values.resolve(args_[name]).node):
                    raise args_[name].fail(UNMIGRATED_HOOKS[name])
        plan = DriverPlan(driver)
        max_steps = train_args.get("max_steps")
        if max_steps is not None and self.values.constant(max_steps) is None:
            max_steps = None
        plan.train = self._training(train_args.get("input_fn") or train_spec, Steps(max_steps, max_steps is not None),
                                    train_args.get("hooks"))
        steps = eval_args.get("steps")
        eval_input = self._inputs().read(eval_args.get("input_fn") or eval_spec, "eval", self._input_params("eval"))
        if steps is not None and self.values.constant(steps) is None:  # EvalSpec(steps=None): the whole input
            steps_code = None
            self._whole_input(eval_input, steps)
        else:
            steps_code = self.code(steps) if steps is not None else EVAL_SPEC_DEFAULT_STEPS
            if not eval_input.repeats:
                self.notes.append(self._eval_steps_note(eval_spec, steps_code))
        self._evaluates(driver)
        plan.evaluate = EvalPlan(eval_input, steps_code, none_at_run_time=self._whole_if_none(steps, eval_input))
        self._results(plan.evaluate, driver, _eval_result_name(driver))
        if "exporters" in eval_args:
            self._exports(plan, eval_args["exporters"])
        return plan

    def _exports(self, plan: DriverPlan, exporters: Value) -> None:
        reader = ExportReader(self.values, self.code, self.trail)
        plan.exports = reader.read(exporters, self.setup.model_dir)
        if plan.exports:
            self._predicts(exporters, "exporters=")
            self._exported(plan, reader)
            self.notes.append(Note("TFM301", exporters.view, exporters.node, EXPORTED))
            self.notes += [Note("TFM301", value.view, value.node, text) for value, text in reader.notes]

    def _export_saved_model(self, driver: Driver) -> DriverPlan:
        self._predicts(driver.call, f"{driver.kind}()")
        if driver.caller:
            raise driver.call.fail(f"{driver.kind}() of the Estimator a training function returns is not migrated "
                                   "yet: export where the Estimator is trained")
        reader = ExportReader(self.values, self.code, self.trail)
        plan = DriverPlan(driver, exports=[reader.call(driver.call)])
        self._exported(plan, reader)
        self.notes.append(Note("TFM301", driver.call.view, driver.call.node, f"{driver.kind}() -> "
                               "export_saved_model(predictor, ...): TF1's signatures, the serving function run as "
                               "written, in a new folder of export_dir_base named by the time; it returns its path"))
        return plan

    _export_savedmodel = _export_saved_model

    @staticmethod
    def _exported(plan: DriverPlan, reader: ExportReader) -> None:
        plan.edits, plan.builders, plan.graph_code = reader.edits, reader.builders, reader.graph_code

    def _evaluates(self, driver: Driver) -> None:
        if not self.setup.model.evaluates:
            raise driver.call.fail(f"{driver.kind} evaluates with a model_fn that raises for EVAL: the TF1 program "
                                   "fails here too")

    def _none_at_run_time(self, steps: Value | None) -> bool:
        """Steps read when the program runs that are None unless it is given them (a flag whose default is None, a
        module's global None where it is made that another module sets): TF1 then went through the whole input."""
        if steps is None or self.values.constant(steps) is not UNKNOWN:
            return False
        home = self.values.binding(steps.node, steps.place).home if isinstance(steps.node, cst.Name) else None
        return self.values.constant(steps, flags=True) is None or \
            home is not None and self.values.constant(home) is None

    def _whole_if_none(self, steps: Value | None, given: Input) -> bool:
        """Evaluation steps that may be None when the program runs, of an input that ends: the migrated program
        counts the whole input then, as TF1 evaluated it."""
        return self._none_at_run_time(steps) and given.repeats is False

    def _whole_input(self, eval_input: Input, steps: Value) -> None:
        """Evaluating until the input ends: it must end."""
        if eval_input.repeats:
            raise steps.fail("evaluation until the input ends, of an input that repeats without end: TF1 evaluated "
                             "until stopped; give the number of batches")
        if eval_input.repeats is None:
            raise eval_input.fail(UNKNOWN_REPEAT.format("evaluation input") + "; give the number of batches")

    def _results(self, plan: EvalPlan, driver: Driver, name: cst.Name | None) -> None:
        """What the program reads of the evaluation's results: the same keys in the migrated program."""
        view, call = driver.call.view, driver.call.node
        statement = driver.statement
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if name is not None:
            reads = results.of_name(view, name)
            plan.target = f"{name.value} = "
        elif isinstance(small, cst.Expr) and small.value is call or _bound_unread(driver):
            return
        else:
            if driver.kind != "evaluate":
                raise driver.call.fail(f"the results of {driver.kind} are used in a way not migrated yet: use "
                                       "`eval_result, _ = train_and_evaluate(...)`")
            reads = results.of_expression(view, call)
            plan.inline = call
        if self.model_read:
            results.check(reads, self.setup.model, view.path, driver.kind)
        plan.step = reads.step

    def _spec(self, node: Value, api: str, driver: Driver) -> Value:
        spec = self.values.resolve(node, trail=self.trail)
        if not (isinstance(spec.node, cst.Call) and spec.api() == api):
            raise node.fail(f"expected a {api.rpartition('.')[2]}(...) the migration can follow (made in the files "
                            "given, bound once)")
        return spec

    def _train(self, driver: Driver) -> DriverPlan:
        args = {k: Value(v, driver.call.place) for k, v in bound_values(driver.call.node, TRAIN).items()}
        if "saving_listeners" in args:
            raise args["saving_listeners"].fail(UNMIGRATED_HOOKS["saving_listeners"])
        steps = Steps(args.get("max_steps"), True) if "max_steps" in args and not is_none(args["max_steps"].node) \
            else Steps(args.get("steps"), False)
        if steps.value is not None and is_none(steps.value.node):
            steps = Steps(None, False)
        plan = DriverPlan(driver)
        plan.train = self._training(args.get("input_fn") or driver.call, steps, args.get("hooks"))
        return plan

    def _evaluate(self, driver: Driver) -> DriverPlan:
        args = {k: Value(v, driver.call.place) for k, v in bound_values(driver.call.node, EVALUATE).items()}
        if set(args) - {"input_fn", "steps", "name"}:
            raise driver.call.fail("evaluate() with hooks or a checkpoint_path is not migrated yet")
        eval_input = self._inputs().read(args.get("input_fn") or driver.call, "eval", self._input_params("eval"))
        steps = args.get("steps")
        steps_code = None if steps is None or self.values.constant(steps) is None else self.code(steps)
        if steps_code is None:
            self._whole_input(eval_input, steps or driver.call)
        elif eval_input.repeats is not True:
            self.notes.append(self._eval_steps_note(driver.call, steps_code))
        self._evaluates(driver)
        plan = DriverPlan(driver, evaluate=EvalPlan(eval_input, steps_code,
                                                    none_at_run_time=self._whole_if_none(steps, eval_input)))
        self._results(plan.evaluate, driver, _assigned_name(driver))
        return plan

    @staticmethod
    def _eval_steps_note(where: Value, steps: str) -> Note:
        return Note("TFM303", where.view, where.node, f"the eval input does not repeat: TF1 stopped at its end, the "
                                                      f"migrated evaluate runs exactly steps={steps} batches (the same "
                                                      "if it has at least that many)")

    def _predict(self, driver: Driver) -> DriverPlan:
        args = {k: Value(v, driver.call.place) for k, v in bound_values(driver.call.node, PREDICT).items()}
        keys, batches = predict.options(args, self.values.constant, self.setup.model.predictions)
        self._predicts(driver.call, "predict()")
        given = self._inputs().read(args["input_fn"], "predict", self._input_params("predict"))
        return DriverPlan(driver, predict=predict.Prediction(given, keys, batches))

    def _predicts(self, where: Value, what: str) -> None:
        """``what`` (predict(), exporters) reads the model's predictions: refused where the migration has no Keras
        model of them."""
        if self.setup.model_fn.keras is not None and what == "predict()":
            raise where.fail(f"{what} of a model_to_estimator Estimator is not migrated yet: use the Keras model "
                             "by hand")
        faithful = self.setup.model.faithful
        if faithful is not None and faithful.signatures is None:
            raise where.fail(f"{what} of a model_fn kept as written (tier 2) that returns no predictions (TF1 failed "
                             "here too)")
        if faithful is not None and faithful.lookup_table is not None and what != "predict()" and (
                faithful.tables or faithful.keras_layers):
            raise where.fail(f"{what} of a model_fn kept as written (tier 2) that makes lookup tables as it runs "
                             f"(`{first_line(faithful.lookup_table)}`) and Keras "
                             f"{'weights of its partitioned tables' if faithful.tables else 'layers'} is not migrated: "
                             "its export is TF1's graph, which has neither")
        if faithful is None and self.setup.model_fn.keras is None and self.setup.model.predictions is None and \
                self.model_read:
            raise where.fail(f"{what} of a model_fn without a PREDICT branch (TF1 failed here too)")

    def _input_params(self, mode: str):
        """What Estimator passes an input_fn as params: its own, and a TPUEstimator's batch size of the mode (for a
        driver outside the model's place: the function giving that code there, called if the input_fn takes params)."""
        if self.place is self.home or self.params is None or reads_the_same(self.setup.params, self.home, self.place):
            return with_batch_size(self.setup.params, self.setup.batch_sizes.get(mode))
        return lambda: with_batch_size(self.code(self.params), self.setup.batch_sizes.get(mode))

    def _training(self, input_node: Value, steps: Steps, hooks: Value | None) -> TrainPlan:
        model = self.setup.model
        self.config.hooks(hooks, model.hooks, self.model_dir)
        train_input = self._inputs().read(input_node, "train", self._input_params("train"))
        if steps.value is None and train_input.repeats:
            raise train_input.fail("no max_steps and an input that repeats: TF1 trained until stopped; say how "
                                   "many steps to train")
        # One pass of an input whose length TensorFlow does not know (files, filter, ...) is counted when it runs.
        none_at_run_time = self._none_at_run_time(steps.value) and train_input.repeats is not True
        return TrainPlan(train_input, self.config.fit_plan(steps, model.hooks, self.setup.checkpoints,
                                                           ends=None if train_input.repeats is None
                                                           else not train_input.repeats,
                                                           none_at_run_time=none_at_run_time))


def _assignment(driver: Driver) -> cst.Assign | None:
    """``x = <the driver's call>``, the whole statement."""
    statement = driver.statement
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and small.value is driver.call.node:
        return small
    return None


def _assigned_name(driver: Driver) -> cst.Name | None:
    """The name ``evaluate(...)``'s result is bound to, if it is bound to one."""
    assign = _assignment(driver)
    if assign is not None and not isinstance(assign.targets[0].target, cst.Name):
        raise driver.call.fail("the results of evaluate are bound in a way not migrated yet: bind them to a name")
    return assign.targets[0].target if assign is not None else None


def _eval_result_name(driver: Driver) -> cst.Name | None:
    """The name ``train_and_evaluate(...)``'s evaluation result is bound to (`eval_result, _ = ...`)."""
    assign = _assignment(driver)
    if assign is None:
        return None
    target = assign.targets[0].target
    if _bound_unread(driver):
        return None
    if isinstance(target, cst.Tuple) and len(target.elements) == 2:
        first, second = (element.value for element in target.elements)
        # The export results (`result, export_results = ...`), when nothing reads them.
        if isinstance(second, cst.Name) and (second.value == "_" or _unread(driver.call.view, second)) and \
                isinstance(first, cst.Name):
            return first
    raise driver.call.fail("the results of train_and_evaluate are used in a way not migrated yet: use "
                           "`eval_result, _ = train_and_evaluate(...)`")


def _bound_unread(driver: Driver) -> bool:
    """``result = <the driver's call>``, and nothing reads ``result``: as if the call stood alone."""
    assign = _assignment(driver)
    return assign is not None and isinstance(assign.targets[0].target, cst.Name) and \
        _unread(driver.call.view, assign.targets[0].target)


def _unread(view, name: cst.Name) -> bool:
    """Does nothing read what ``name`` binds here?"""
    scope = view.scope(name)
    if scope is None or name.value not in scope:
        return False
    return not any(assignment.node is name and assignment.references for assignment in scope[name.value])


def with_batch_size(params: str | None, batch_size: str | None) -> str | None:
    """``params`` (code) with TPUEstimator's "batch_size" entry, if there is one."""
    if batch_size is None:
        return params
    return f'{{**{params}, "batch_size": {batch_size}}}' if params else f'{{"batch_size": {batch_size}}}'
