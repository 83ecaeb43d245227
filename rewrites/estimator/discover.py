"""Finding Estimator programs wherever they stand: which Estimator each driver call drives, and where.

A driver is ``train_and_evaluate(estimator, train_spec, eval_spec)`` or ``estimator.train`` /
``evaluate`` / ``predict``, at module level or in any function, its Estimator made there or
returned by a factory in another module (values.py follows it). The drivers of one Estimator
form a ``Pipeline``, at the place that trains it; drivers elsewhere must see the Keras model
bound there (drivers.py). The set-up of the migrated program goes before the first driver
there, outside any loop around it (a train / evaluate loop keeps its loop).

Every Estimator that no pipeline takes is reported with the reason (``leftovers``): nothing
the tool recognises as Estimator code is left without a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import Assignment

from rewrites.estimator import added_metrics, canned, forwarded, passed
from rewrites.estimator.drivers import ATTRIBUTES, arrange
from rewrites.estimator.forwarded_by_hand import called, wrapping
from rewrites.estimator.keras_model import MODEL_TO_ESTIMATOR
from rewrites.estimator.specs import SPECS
from rewrites.estimator.program import Driver
from rewrites.program.modules import ModuleView, Tree
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Binding, Place, Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, bind_arguments, source, subtree

# Estimators of a model the program writes: a model_fn's, or a Keras model's (rewrites/estimator/keras_model.py).
CUSTOM = {"estimator.Estimator", "estimator.tpu.TPUEstimator", MODEL_TO_ESTIMATOR}
TRAIN_AND_EVALUATE = "estimator.train_and_evaluate"
DRIVER_METHODS = ("train", "evaluate", "predict", "export_saved_model", "export_savedmodel")
WRAPPERS = added_metrics.ADD_METRICS | forwarded.FORWARD_FEATURES  # calls taking an Estimator, giving one
LOOPS = (cst.For, cst.While)
# The Estimator's other methods, and what to do instead.
OTHER_METHODS = {
    "experimental_export_all_saved_models": "exports SavedModels: save the Keras model with model.save(path) by hand",
    "get_variable_value": "reads a variable from the latest checkpoint: read it from the Keras model's weights",
    "get_variable_names": "lists the checkpoint's variables: use the Keras model's weights",
    "latest_checkpoint": "names the latest checkpoint: use tf.train.latest_checkpoint(model_dir)",
}
# Functions a framework calls to get the Estimator it trains: what to do instead.
FRAMEWORK_ENTRY_POINTS = {
    "estimator_fn": "`estimator_fn(run_config, params)` is the entry point of SageMaker's legacy TensorFlow framework "
                    "mode (TF 1.11 and earlier containers: the container made and trained the Estimator with "
                    "train_input_fn / eval_input_fn); TF 2 containers run a script: write its main, driving this "
                    "Estimator with train_and_evaluate on those input functions, and run tf-migrate again",
}
EXPERIMENT = ("Experiment(estimator, train_input_fn, eval_input_fn, train_steps=, eval_steps=) is "
              "train_and_evaluate(estimator, TrainSpec(train_input_fn, max_steps=train_steps), "
              "EvalSpec(eval_input_fn, steps=eval_steps)) since TF 1.4: write it so, with a tf.estimator Estimator (a "
              "tf.contrib.learn Estimator's model_fn returns ModelFnOps, which nothing in TF 2 runs), and run "
              "tf-migrate again")
LEARN_RUNNER = ("learn_runner.run(experiment_fn, ...) runs the Experiment that experiment_fn returns: call "
                "train_and_evaluate where experiment_fn makes it, and call that function instead")
UNDRIVEN = ("which the migration cannot follow to an Estimator made in the files given: make it where it is driven (or "
            "in a function of these files) and run tf-migrate again")
RUNNERS = {"contrib.learn.Experiment": EXPERIMENT, "contrib.learn.learn_runner.run": LEARN_RUNNER,
           "contrib.learn.python.learn.learn_runner.run": LEARN_RUNNER}
CANNED_MESSAGE = ("canned estimator {} left as it is: not migrated yet; write the Keras model of the same shape by "
                  "hand (its v1 defaults, loss reduction and optimizer, differ from v2's) and prove it with "
                  "tf-migrate parity")
# Canned estimators TFM309 does not write a Keras model for, and what to do instead.
OTHER_CANNED = {
    "BaselineClassifier": "it learns the label prior alone (one bias per class, Ftrl): a Keras model of one bias "
                          "trained on the same head does the same; write it by hand",
    "BaselineRegressor": "it learns the label mean alone (one bias, Ftrl): a Keras model of one bias trained on the "
                         "same head does the same; write it by hand",
    "BoostedTreesClassifier": "gradient boosted trees have no Keras counterpart: TensorFlow Decision Forests "
                              "(tfdf.keras.GradientBoostedTreesModel) trains such trees, with numbers of its own",
    "BoostedTreesRegressor": "gradient boosted trees have no Keras counterpart: TensorFlow Decision Forests "
                             "(tfdf.keras.GradientBoostedTreesModel) trains such trees, with numbers of its own",
    "RNNClassifier": "its sequence feature columns have no Keras preprocessing written for them: write the Keras "
                     "RNN by hand",
    "RNNEstimator": "its sequence feature columns have no Keras preprocessing written for them: write the Keras "
                    "RNN by hand",
}


def is_canned(api: str) -> bool:
    """tf.estimator.DNNClassifier, LinearRegressor, BoostedTreesClassifier, ... (not Estimator itself)."""
    name = api.rpartition(".")[2]
    return (api.startswith("estimator.") and name.endswith(("Classifier", "Regressor", "Estimator"))
            and api not in CUSTOM)


# Estimators made otherwise than by the Estimator classes: what to do instead.
MADE_OTHERWISE = {
    "contrib.estimator.boosted_trees_classifier_train_in_memory": "in-memory boosted trees of tf.contrib: no Keras "
                                                                  "counterpart; TensorFlow Decision Forests trains them",
    "contrib.estimator.boosted_trees_regressor_train_in_memory": "in-memory boosted trees of tf.contrib: no Keras "
                                                                 "counterpart; TensorFlow Decision Forests trains them",
}


def made_otherwise(api: str) -> str | None:
    """Why an Estimator made by ``api`` (other than Estimator, TPUEstimator and the canned ones) stays as it is."""
    if api in MADE_OTHERWISE:
        return MADE_OTHERWISE[api]
    name = api.rpartition(".")[2]
    if api.startswith("contrib.") and name.endswith(("Estimator", "Classifier", "Regressor")):
        family = ".".join(api.split(".")[:2])
        return (f"tf.{api}, an Estimator of tf.{family}: its model and training loop are that library's own; write "
                "the Keras model and its training by hand")
    return None


@dataclass
class Pipeline:
    """The drivers of one Estimator, all at one place."""

    estimator: Value                       # the Estimator(...) call
    drivers: list[Driver]
    place: Place                           # where the drivers run
    trail: list = field(default_factory=list)  # what the estimator passed through: bindings and factories


class Discovery:
    def __init__(self, tree: Tree, values: Values) -> None:
        self.tree, self.values = tree, values
        self.constructions: dict[int, Value] = {}   # id(call) -> every Estimator made in the tree
        self.subclasses: list[tuple[ModuleView, cst.ClassDef]] = []
        self.other: list[tuple[ModuleView, cst.CSTNode, str]] = []  # contrib.learn and the like: (view, node, why)
        self.undriven: list[tuple[ModuleView, cst.Call, cst.BaseExpression]] = []  # train_and_evaluate of what?
        self.specs: list[tuple[ModuleView, cst.Call]] = []  # EstimatorSpec(...) calls: what model_fns return
        self.stopped: set[int] = set()  # Estimators whose pipeline is an Unsupported (its findings say why)
        self.wrappers: set[int] = set()  # Estimators of the program's own forward_features that drivers reach through

    def pipelines(self) -> list[Pipeline | Unsupported]:
        """The pipelines of the tree, in order; a pipeline that cannot be taken is its Unsupported."""
        found: dict[int, list[tuple[Driver, list]]] = {}
        estimators: dict[int, Value] = {}
        for view in self.tree.entries:
            for node in subtree(view.module):
                if isinstance(node, cst.ClassDef):
                    self._subclass(view, node)
                if not isinstance(node, cst.Call):
                    continue
                api = view.api(node.func) or ""
                if api in CUSTOM or is_canned(api):
                    self.constructions[id(node)] = Value(node, self.values.place_of(view, node))
                elif api in RUNNERS:
                    self.other.append((view, node, f"tf.{api} drives an Estimator through tf.contrib.learn, which "
                                                   f"TF 2 does not have: {RUNNERS[api]}"))
                elif made_otherwise(api):
                    self.other.append((view, node, f"Estimator left as it is: {made_otherwise(api)}"))
                elif api in SPECS:
                    self.specs.append((view, node))
                for driver_value, estimator, trail in self._drivers(view, node, api):
                    estimators[id(estimator.node)] = estimator
                    found.setdefault(id(estimator.node), []).append((driver_value, estimator, trail))
        result = []
        for key, drivers in found.items():
            estimator = estimators[key]
            if is_canned(estimator.api()) and canned.parameters(estimator) is None:
                continue  # left, with the reason, among the leftovers
            try:
                result.append(self._pipeline(drivers))
            except Unsupported as problem:
                self.stopped.add(key)
                result.append(problem)
        return result

    def _subclass(self, view: ModuleView, node: cst.ClassDef) -> None:
        for base in node.bases:
            api = view.api(base.value) or ""
            if api in CUSTOM or is_canned(api) or api == "estimator.EstimatorV2":
                self.subclasses.append((view, node))

    def _drivers(self, view: ModuleView, call: cst.Call, api: str) -> list[tuple[Driver, Value, list]]:
        """The driver ``call`` is, with the Estimator it drives; in a function the Estimator is passed to, one for
        each call of the function (rewrites/estimator/passed.py)."""
        place = self.values.place_of(view, call)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in passed.KINDS:
            calls = passed.passed_in(self.values, view, place, call.func.value)
            if calls is not None:
                return list(filter(None, (self._driver(view, call, api, *called) for called in calls)))
        driver = self._driver(view, call, api, place)
        return [driver] if driver is not None else []

    def _driver(self, view: ModuleView, call: cst.Call, api: str, place: Place,
                argument: cst.Name | None = None) -> tuple[Driver, Value, list] | None:
        """``argument``: the Estimator's name where the function holding the driver is called with it (``place``
        that call's)."""
        trail: list = []
        if api == TRAIN_AND_EVALUATE:
            bound = bind_arguments(call, ("estimator", "train_spec", "eval_spec"))
            if not bound or "estimator" not in bound:
                return None
            estimator = self.values.resolve(Value(bound["estimator"][1].value, place), trail=trail)
            kind = "train_and_evaluate"
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value in DRIVER_METHODS:
            kind = call.func.attr.value
            estimator = self.values.resolve(Value(call.func.value, place), trail=trail)
        else:
            return None
        estimator = self._unwrapped(estimator, trail)
        estimator_api = estimator.api() if isinstance(estimator.node, cst.Call) else None
        if not (estimator_api in CUSTOM or is_canned(estimator_api or "")):
            outside = self.values.outside(trail)
            if outside and (kind == "train_and_evaluate" or "estimator" in view.tree.sources.get(view.path, "")):
                self.other.append((view, call, f"Estimator program left as it is: its Estimator comes from {outside}, "
                                               "which is not among the paths given: include it in the run, so the "
                                               "files of the program are migrated together"))
            elif kind == "train_and_evaluate" and not (estimator_api and made_otherwise(estimator_api)):
                # TF's own driver: whatever it drives is an Estimator, and leaving it must not go without a word.
                self.undriven.append((view, call, bound["estimator"][1].value))
            return None
        return Driver(kind, Value(call, place), view.statement_of(call), passed=argument), estimator, trail

    def _unwrapped(self, estimator: Value, trail: list) -> Value:
        """The Estimator inside ``add_metrics(estimator, metric_fn)`` or ``forward_features(estimator, keys)`` (the
        call joins the trail)."""
        inner = _wrapped(estimator)
        while inner is not None:
            trail.append(estimator)
            if wrapping(estimator) is not None:  # the Estimator of the program's own forward_features
                self.wrappers.add(id(estimator.node))
            estimator = self.values.resolve(inner, trail=trail)
            inner = _wrapped(estimator)
        return estimator

    def _pipeline(self, drivers: list[tuple[Driver, Value, list]]) -> Pipeline:
        """The drivers of one Estimator, where its Keras model goes (rewrites/estimator/drivers.py)."""
        place, estimator, ordered, trail = arrange(self.values, drivers)
        return Pipeline(estimator, ordered, place, trail)

    def anchor(self, pipeline: Pipeline) -> cst.BaseStatement:
        """The statement the set-up goes before: the one holding the first driver in the innermost block that
        holds every driver, or the outermost loop around that block (a train / evaluate loop keeps its loop)."""
        view = pipeline.place.view
        paths = [_blocks(view, driver.statement) for driver in pipeline.drivers
                 if driver.call.place.same_scope(pipeline.place)]
        depth = 0
        while all(len(path) > depth for path in paths) and len({id(path[depth][0]) for path in paths}) == 1:
            depth += 1
        first = paths[0]
        loop = next((statement for _, statement in first[:depth - 1] if isinstance(statement, LOOPS)), None)
        return loop if loop is not None else first[depth - 1][1]

    # -- what is left ------------------------------------------------------------------------

    def leftovers(self, taken: set[int], reported: set[int]) -> list[tuple[ModuleView, cst.CSTNode, str]]:
        """(view, node, why) for every Estimator made but not migrated, subclass and tf.contrib.learn use."""
        found = list(self.other)
        found += [(view, call, "Estimator program left as it is: train_and_evaluate drives "
                               f"`{source(estimator)}`, " + (
                                   passed.parameter_reason(self.values, view, call, estimator) or UNDRIVEN))
                  for view, call, estimator in self.undriven if not self._bound_to_estimators(view, estimator)]
        for key, construction in self.constructions.items():
            if key in taken or key in reported or key in self.stopped or key in self.wrappers \
                    or self._never_made(construction):
                continue
            api = construction.api()
            name = api.rpartition(".")[2]
            if canned.parameters(construction) is not None:
                found.append((construction.view, construction.node, f"canned {name} left as it is: " +
                              self.why_not_driven(construction)))
            elif name in OTHER_CANNED:
                found.append((construction.view, construction.node, f"canned {name} left as it is: " +
                              OTHER_CANNED[name]))
            elif is_canned(api):
                found.append((construction.view, construction.node, CANNED_MESSAGE.format(name)))
            else:
                found.append((construction.view, construction.node, "Estimator left as it is: " +
                              self.why_not_driven(construction)))
        for view, node in self.subclasses:
            found.append((view, node, "an Estimator subclass: its methods run inside TF1's Estimator machinery; "
                                      "write its model as a Keras model by hand"))
        if not self.constructions and not found:
            found += self._model_fns_of_no_estimator()
        return found

    def _never_made(self, construction: Value) -> bool:
        """`estimator = Regressor(...)` in the branch of an `if` whose test is known to skip it."""
        target = _assigned_target(construction.view, construction.node)
        scope = construction.view.scope(target) if isinstance(target, cst.Name) else None
        return scope is not None and target.value in scope and any(
            self.values.ruled_out(construction.view, assignment, construction.place)
            for assignment in scope[target.value] if getattr(assignment, "node", None) is target)

    def _model_fns_of_no_estimator(self) -> list[tuple[ModuleView, cst.CSTNode, str]]:
        """A model_fn (a function returning an EstimatorSpec) in a tree that makes no Estimator: the Estimator that
        trains it is made elsewhere (a framework's entry point, as SageMaker's TensorFlow containers did)."""
        found, seen = [], set()
        for view, call in self.specs:
            function = view.enclosing_function(call)
            if function is None or id(function) in seen:
                continue
            seen.add(id(function))
            found.append((view, function, f"model_fn `{function.name.value}` left as it is: no Estimator among the "
                                          "files given uses it (a framework or a module not given makes it): "
                                          "migrate it with the program that trains it"))
        return found

    def why_not_driven(self, construction: Value) -> str:
        """Why no pipeline took this Estimator: what is done with it instead."""
        view, node = construction.view, construction.node
        parent = view.parent(node)
        if isinstance(parent, cst.Arg):
            call = view.parent(parent)
            return (f"it is passed to `{_callee(call)}`, which the migration cannot follow; drive it with "
                    "train_and_evaluate or train / evaluate / predict where it is made")
        if isinstance(parent, cst.Return):
            function = view.enclosing_function(node)
            name = function.name.value if function else "a function"
            if name in FRAMEWORK_ENTRY_POINTS and not self.tree.references_to(view, name):
                return FRAMEWORK_ENTRY_POINTS[name]
            return (f"it is returned by `{name}()`, and no caller among the files given drives it with "
                    "train_and_evaluate or train / evaluate / predict")
        target = _assigned_target(view, node)
        if isinstance(target, cst.Name):
            use = self._chosen_at_run_time(view, target) or self._first_other_use(view, target)
            if use is not None:
                return use
        if isinstance(target, cst.Attribute):
            return (f"it is kept on an object (`{source(target)}`) and driven from its methods, which the migration "
                    "does not follow yet: make and drive it in one function (or a factory that function calls)")
        return ("no train_and_evaluate or train / evaluate / predict call drives it where the migration can "
                "follow: drive it in the function that makes it (or from a factory the driver calls)")

    def _bound_to_estimators(self, view: ModuleView, node: cst.CSTNode) -> bool:
        """``node`` is a name bound to Estimators made above, more than one: each says why it is left."""
        scope = view.scope(node) if isinstance(node, cst.Name) else None
        assignments = scope[node.value] if scope is not None and node.value in scope else ()
        return sum(1 for a in assignments if isinstance(a, Assignment) and isinstance(a.node, cst.Name) and isinstance(
            value := view.statement_of(a.node).body[0].value, cst.Call) and id(value) in self.constructions) > 1

    def _chosen_at_run_time(self, view: ModuleView, target: cst.Name) -> str | None:
        """`if args.use_tpu: estimator = TPUEstimator(...)` / `else: estimator = Estimator(...)`: one name, an
        Estimator of each branch."""
        scope = view.scope(target)
        others = [a.node for a in (scope[target.value] if scope is not None and target.value in scope else ())
                  if isinstance(a, Assignment) and a.node is not target and isinstance(a.node, cst.Name)]
        made = [node for node in others if isinstance(value := view.statement_of(node).body[0].value, cst.Call)
                and id(value) in self.constructions]
        branch = next((a for a in view.ancestors(target) if isinstance(a, cst.If)), None)
        if not made or branch is None or self.values.constant(Value(branch.test, self.values.place_of(
                view, branch))) is not UNKNOWN:
            return None  # an `if` known before the program runs makes one of them
        apis = {self.constructions[id(view.statement_of(node).body[0].value)].api() for node in [*made, target]}
        condition = source(branch.test)
        tpu = (f": a TPUEstimator with use_tpu={condition} trains as a plain Estimator when it is False, and "
               "migrates with the strategy picked at run time") if any("TPUEstimator" in (api or "") for api in apis) \
            else ""
        return (f"`{target.value}` is one of {len(made) + 1} Estimators chosen at run time (`if {condition}:`), which "
                f"the migration does not follow: make one Estimator for every case{tpu}")

    def _wraps(self, view: ModuleView, call: cst.Call) -> bool:
        """A call giving an Estimator wrapped (``WRAPPERS``, or a forward_features of the program's own)."""
        place = self.values.place_of(view, call)
        return view.api(call.func) in WRAPPERS or called(self.values, Value(call, place)) is not None

    def _first_other_use(self, view: ModuleView, target: cst.Name) -> str | None:
        scope = view.scope(target)
        assignments = [a for a in (scope[target.value] if scope is not None and target.value in scope else ())
                       if isinstance(a, Assignment) and a.node is target]
        for assignment in assignments:
            for reference in view.in_order(assignment.references):
                node = reference.node
                parent = view.parent(node)
                if isinstance(parent, cst.Attribute) and parent.value is node:
                    method = parent.attr.value
                    if method in OTHER_METHODS:
                        return f"`{target.value}.{method}(...)` {OTHER_METHODS[method]}"
                    if method not in (*DRIVER_METHODS, *ATTRIBUTES):
                        return f"`{target.value}.{method}` is used, which the migrated program has no counterpart of"
                if isinstance(parent, cst.Return) and (why := passed.returned_reason(self.values, view, node)):
                    return why
                if isinstance(parent, cst.Arg) and not self._wraps(view, view.parent(parent)):
                    return (f"`{target.value}` is passed to `{_callee(view.parent(parent))}`, which the migration "
                            "cannot follow; drive it where it is made")
        return None


def _assigned_target(view: ModuleView, node: cst.CSTNode) -> cst.BaseAssignTargetExpression | None:
    """The one target of the assignment statement holding ``node``."""
    statement = view.statement_of(node)
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    return small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None


def _wrapped(estimator: Value) -> Value | None:
    inner = added_metrics.wrapped(estimator)
    return Value(inner, estimator.place) if inner is not None else forwarded.wrapped(estimator)


def _blocks(view: ModuleView, statement: cst.BaseStatement) -> list[tuple[cst.CSTNode, cst.BaseStatement]]:
    """(block, the statement in it that holds ``statement``), from the function's (or module's) body inwards."""
    found, held = [], statement
    for ancestor in view.ancestors(statement):
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
            found.append((ancestor, held))
        if isinstance(ancestor, (cst.FunctionDef, cst.Module)):
            break
        if isinstance(ancestor, cst.BaseCompoundStatement):
            held = ancestor
    return list(reversed(found))


def _callee(call: cst.CSTNode) -> str:
    if isinstance(call, cst.Call):
        return source(call.func)
    return "a function"


def trail_statements(trail: list) -> list[tuple[ModuleView, cst.BaseStatement]]:
    """The statements that bound the names a pipeline's value passed through (they go with it)."""
    found = []
    for step in trail:
        if isinstance(step, Binding) and step.kind == "value" and isinstance(step.assignment, Assignment):
            view = step.value.view
            node = step.assignment.node
            if isinstance(node, cst.Name):
                found.append((view, view.statement_of(node)))
    return found


def trail_functions(trail: list) -> list[tuple[ModuleView, cst.FunctionDef]]:
    return [(step.view, step.node) for step in trail if isinstance(step, Value) and isinstance(step.node, cst.FunctionDef)]
