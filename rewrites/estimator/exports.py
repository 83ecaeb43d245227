"""``EvalSpec(exporters=...)`` -> the generated ``export_saved_model(predictor, export_dir_base, serving_input_fn,
exports_to_keep, assets_extra, as_text)`` after the evaluation, writing what TF1's exporter wrote where it wrote it; and
``estimator.export_saved_model(export_dir_base, serving_input_fn)`` (``export_savedmodel``) -> that function, called
where the program called it (it returns the export's path, as TF1's did).

A SavedModel is what a serving stack reads: its folder (``<model_dir>/export/<exporter name>/<timestamp>``), its
signatures' names, their input keys, dtypes and shapes, and their output keys. The migrated export keeps all of
them: the serving function stays TF1 code run as written (its placeholders become the signatures' inputs, see
templates/export_saved_model.py.j2), and each signature TF1's model exported (``Model.signatures``) is a
signature of the predictor under the same name.

Before::

    def serving_input_fn():
        inputs = {"x": tf.placeholder(tf.float32, [None])}
        return tf.estimator.export.ServingInputReceiver(inputs, inputs)


    estimator = tf.estimator.DNNRegressor([8], [tf.feature_column.numeric_column("x")], model_dir="out")
    exporter = tf.estimator.LatestExporter("exporter", serving_input_fn, exports_to_keep=3)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=1, exporters=exporter)
    tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(train_input_fn, max_steps=10), eval_spec)

After::

    def serving_input_fn():
        inputs = {"x": tf.compat.v1.placeholder(tf.float32, [None])}
        return inputs, inputs
    ...  # the Keras model, and a model of its predictions: `model, predictor = ...`; fit; evaluate
    # TF1's exporters exported where the evaluation ran: the chief exports here.
    if task_type != "evaluator":
        export_saved_model(
            predictor, os.path.join("out", "export", "exporter"), serving_input_fn, exports_to_keep=3)
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.program.places import Value
from rewrites.program.spelling import MODE_KEYS
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, bound_values, is_none, source, subtree

EXPORTERS = {  # TF1's exporter -> its arguments, in order
    "estimator.LatestExporter": ("name", "serving_input_receiver_fn", "assets_extra", "as_text", "exports_to_keep"),
    "estimator.FinalExporter": ("name", "serving_input_receiver_fn", "assets_extra", "as_text"),
    "estimator.BestExporter": ("name", "serving_input_receiver_fn", "event_file_pattern", "compare_fn",
                               "assets_extra", "as_text", "exports_to_keep"),
}
KEEPS = "5"  # LatestExporter's and BestExporter's default exports_to_keep
# tensorflow_estimator's BestExporter.export: the first evaluation of a run always exports (`not
# self._has_exported`); compare_fn decides from the second on.
BEST = ("BestExporter -> export_saved_model(...) after the evaluation: TF1 exported at a run's first evaluation and "
        "then at each evaluation its compare_fn found better than the best so far; the migrated program evaluates "
        "once, at the end, and exports that model, as TF1's first evaluation did (compare_fn and event_file_pattern "
        "have nothing to compare)")
RECEIVERS = {  # the receivers a serving function returns -> their arguments
    "estimator.export.ServingInputReceiver": ("features", "receiver_tensors", "receiver_tensors_alternatives"),
    "estimator.export.TensorServingInputReceiver": ("features", "receiver_tensors",
                                                    "receiver_tensors_alternatives"),
}
BUILDERS = {  # TF1's serving function factories -> the generated function making the same one, its arguments
    "estimator.export.build_parsing_serving_input_receiver_fn": ("parsing_serving_input_fn",
                                                                 ("feature_spec", "default_batch_size")),
    "estimator.export.build_raw_serving_input_receiver_fn": ("raw_serving_input_fn",
                                                             ("features", "default_batch_size")),
}


EXPORT_CALLS = {  # the Estimator's export methods -> their arguments
    "export_saved_model": ("export_dir_base", "serving_input_receiver_fn", "assets_extra", "as_text",
                           "checkpoint_path", "experimental_mode"),
    "export_savedmodel": ("export_dir_base", "serving_input_receiver_fn", "assets_extra", "as_text",
                          "checkpoint_path", "strip_default_attrs"),
}


@dataclass
class Export:
    """One export, as code at the driver."""

    base: str                 # export_dir_base: an exporter's is <model_dir>/export/<its name>
    serving: str              # the serving function; with a builder, the builder's arguments
    builder: str | None = None  # the generated serving function factory called with them (BUILDERS)
    keep: str | None = None   # how many exports to keep; None: all
    assets: str | None = None  # assets_extra: {destination in assets.extra: the file copied there}
    as_text: bool = False     # the SavedModel written as saved_model.pbtxt

    def call(self, names) -> str:
        """The generated export_saved_model's call (``names``: the generated code's names)."""
        serving = f"{names[self.builder]}({self.serving})" if self.builder else self.serving
        options = [f"exports_to_keep={self.keep}"] if self.keep else []
        options += [f"assets_extra={self.assets}"] if self.assets else []
        options += ["as_text=True"] if self.as_text else []
        given = "".join(f", {option}" for option in options)
        return f"{names.export_saved_model}({names.predictor}, {self.base}, {serving}{given})"


class ExportReader:
    def __init__(self, values: Values, code, trail: list) -> None:
        """``code(value)``: the value as code at the driver; ``trail``: gets what the exporters passed through
        (their statements go with the program)."""
        self.values, self.code, self.trail = values, code, trail
        self.builders: set[str] = set()   # the generated serving function factories the exports call
        self.edits: list[tuple] = []      # (view, receiver call, the tuple it becomes)
        self.graph_code: list[tuple] = []  # (view, function): serving functions, run in a TF1 graph by the export
        self.notes: list[tuple[Value, str]] = []  # what an exporter does differently once migrated

    def read(self, exporters: Value, model_dir: str | None) -> list[Export]:
        """``model_dir``: the Estimator's, as code at the driver."""
        self.model_dir = model_dir
        resolved = self.values.resolve(exporters, trail=self.trail)
        if is_none(resolved.node):
            return []
        if isinstance(resolved.node, (cst.List, cst.Tuple)):
            elements = [Value(element.value, resolved.place) for element in resolved.node.elements]
        else:
            elements = [resolved]
        return [self._exporter(element) for element in elements]

    def _exporter(self, value: Value) -> Export:
        exporter = self.values.resolve(value, trail=self.trail)
        api = exporter.api() if isinstance(exporter.node, cst.Call) else None
        if api not in EXPORTERS:
            raise value.fail("an exporter must be a LatestExporter, BestExporter or FinalExporter made in the files "
                             "given (an exporter of the program's own class is not migrated)")
        args = {k: Value(v, exporter.place) for k, v in bound_values(exporter.node, EXPORTERS[api]).items()}
        if "name" not in args or "serving_input_receiver_fn" not in args:
            raise exporter.fail("an exporter needs its name and serving_input_receiver_fn (TF1 raised here too)")
        if not isinstance(self.values.constant(args["name"]), str):
            raise args["name"].fail("the exporter's name must be a string the migration can read (it names the "
                                    "export folder)")
        if self.model_dir is None:
            raise value.fail("an exporter of an Estimator without a model_dir (TF1 exported into a temporary "
                             "folder): give the Estimator its model_dir")
        keep = None if api == "estimator.FinalExporter" else KEEPS
        if api == "estimator.BestExporter":
            self.notes.append((exporter, BEST))
        if "exports_to_keep" in args:
            keep = None if is_none(self.values.resolve(args["exports_to_keep"]).node) else self.code(
                args["exports_to_keep"])
        base = f'os.path.join({self.model_dir}, "export", {self.code(args["name"])})'
        serving = self.serving(args["serving_input_receiver_fn"])
        return Export(base, *serving, keep, *self._files(args, "an exporter's"))

    def _files(self, args: dict, whose: str) -> tuple[str | None, bool]:
        """assets_extra (as code) and as_text, as an export call takes them."""
        assets = None if "assets_extra" not in args or self._off(args["assets_extra"]) else self.code(
            args["assets_extra"])
        as_text = "as_text" in args and not self._off(args["as_text"])
        if as_text and self.values.constant(args["as_text"]) is not True:
            raise args["as_text"].fail(f"{whose} as_text= must be True or False as written (it decides the file "
                                       "the SavedModel is written to)")
        return assets, as_text

    def call(self, driver: Value) -> Export:
        """``estimator.export_saved_model(export_dir_base, serving_input_receiver_fn)``, as code at the driver."""
        method = driver.node.func.attr.value
        args = {k: Value(v, driver.place) for k, v in bound_values(driver.node, EXPORT_CALLS[method]).items()}
        if "checkpoint_path" in args and not self._off(args["checkpoint_path"]):
            raise args["checkpoint_path"].fail(f"{method}(checkpoint_path=...) is not migrated yet")
        mode = args.get("experimental_mode")
        if mode is not None and self.values.constant(mode, MODE_KEYS) != "infer":
            raise mode.fail(f"{method}(experimental_mode=...) exports a training or evaluation graph, which the "
                            "migration does not")
        if "export_dir_base" not in args or "serving_input_receiver_fn" not in args:
            raise driver.fail(f"{method} needs its export_dir_base and serving_input_receiver_fn (TF1 raised here too)")
        return Export(self.code(args["export_dir_base"]), *self.serving(args["serving_input_receiver_fn"]), None,
                      *self._files(args, f"{method}'s"))

    def _off(self, value: Value) -> bool:
        """An argument given as its default: None or False."""
        node = self.values.resolve(value).node
        return is_none(node) or self.values.constant(value) is False

    # -- the serving function ---------------------------------------------------------------------------

    def serving(self, value: Value) -> tuple[str, str | None]:
        """The serving function as code at the driver, or a builder's arguments and the builder; its receivers
        become the ``(features, receiver_tensors)`` the generated export reads (``edits``)."""
        resolved = self.values.resolve(value)
        node = resolved.node
        if isinstance(node, cst.Call) and resolved.api() in BUILDERS:
            self.values.resolve(value, trail=self.trail)  # its statement goes with the program
            function, names = BUILDERS[resolved.api()]
            self.builders.add(function)
            args = bound_values(node, names)
            if names[0] not in args:
                raise resolved.fail(f"{resolved.api().rpartition('.')[2]} needs its {names[0]}")
            codes = {name: self.code(Value(args[name], resolved.place)) for name in names if name in args}
            if function == "raw_serving_input_fn":
                codes["features"] = self._specs(Value(args["features"], resolved.place))
            code = ", ".join(code if index == 0 else f"{name}={code}" for index, (name, code) in enumerate(codes.items()))
            return code, function
        for body, call in self._picked(resolved) or [self._function(resolved)]:
            if body is None:
                raise value.fail("a serving function the migration cannot follow: make it a function of the files "
                                 "given returning a ServingInputReceiver, or one of tf.estimator.export's builders")
            self._called_elsewhere(body, call)
            self._receivers(body)
            self.graph_code.append((body.view, body.node))
        return self.code(value), None

    def _picked(self, resolved: Value) -> list[tuple[Value | None, cst.Call | None]]:
        """``SERVING_FUNCTIONS[args.export_format]``: one of a dict's serving functions, picked when the program
        runs (the Cloud ML samples'); each is migrated, and the pick stays as written."""
        node = resolved.node
        if not isinstance(node, cst.Subscript):
            return []
        table = self.values.resolve(Value(node.value, resolved.place))
        if not isinstance(table.node, cst.Dict) or not table.node.elements:
            return []
        picked = []
        for element in table.node.elements:
            if not isinstance(element, cst.DictElement):
                return [(None, None)]
            picked.append(self._function(self.values.resolve(Value(element.value, table.place))))
        return picked

    def _specs(self, features: Value) -> str:
        """build_raw_serving_input_receiver_fn's features as code at the driver, their placeholders tf.TensorSpecs
        (TF2 has none outside a graph; the generated function reads their dtypes and shapes alone): in the dict
        written there, or where they are made."""
        inline = isinstance(features.node, cst.Dict)
        resolved = features if inline else self.values.resolve(features)
        if not isinstance(resolved.node, cst.Dict):
            raise features.fail("build_raw_serving_input_receiver_fn's features must be a dict written out (of "
                                "placeholders or tensors)")
        items = []
        for element in resolved.node.elements:
            if not isinstance(element, cst.DictElement):
                raise features.fail("build_raw_serving_input_receiver_fn's features must be a dict written out")
            value = self.values.resolve(Value(element.value, resolved.place))
            spec = None
            if isinstance(value.node, cst.Call) and value.api() == "placeholder":
                args = bound_values(value.node, ("dtype", "shape", "name"))
                spec = "tf.TensorSpec({})".format(", ".join(
                    f"{name}={self.code(Value(args[name], value.place)) if inline else source(args[name])}"
                    for name in ("shape", "dtype", "name") if name in args))
                if not inline or value.node is not element.value:
                    self.edits.append((value.view, value.node, cst.parse_expression(spec)))
            if inline:
                written = spec if spec and value.node is element.value else self.code(
                    Value(element.value, resolved.place))
                items.append(f"{self.code(Value(element.key, resolved.place))}: {written}")
        return "{" + ", ".join(items) + "}" if inline else self.code(features)

    def _function(self, resolved: Value) -> tuple[Value | None, cst.Call | None]:
        """The function definition that holds the serving function's code: a factory's, for a call of one; the
        function a ``functools.partial`` binds; the function ``lambda: serving_input_fn(args.size)`` calls (and that
        call, the one a serving function may be called by)."""
        node, call = resolved.node, None
        if isinstance(node, cst.Lambda):
            if node.params.params or not isinstance(node.body, cst.Call) or Value(
                    node.body, resolved.place).api() in RECEIVERS:
                raise resolved.fail("a serving function written as a lambda that makes its receiver: make it a def "
                                    "(its receiver is rewritten where it is made)")
            node = call = node.body
        if isinstance(node, cst.Call):
            function = node.args[0].value if Value(node, resolved.place).is_partial() else node.func
            resolved = self.values.resolve(Value(function, resolved.place))
            node = resolved.node
        return (resolved, call) if isinstance(node, cst.FunctionDef) else (None, None)

    @staticmethod
    def _called_elsewhere(function: Value, serving_call: cst.Call | None) -> None:
        """The serving function returns ``(features, receiver_tensors)`` once migrated: no code of its module may
        call it for the receiver TF1 returned (but the lambda that is the serving function)."""
        name = function.node.name.value
        for node in subtree(function.view.module):
            if node is serving_call:
                continue
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name:
                raise Unsupported(node, f"`{name}`, a serving function, is also called here: migrated, it returns "
                                  "(features, receiver_tensors), not a ServingInputReceiver", function.view.path)

    def _receivers(self, function: Value) -> None:
        view = function.view
        found = False
        for node in subtree(function.node):
            if not isinstance(node, cst.Call) or Value(node, function.place).api() not in RECEIVERS:
                continue
            found = True
            args = bound_values(node, RECEIVERS[Value(node, function.place).api()])
            if "receiver_tensors_alternatives" in args and not is_none(args["receiver_tensors_alternatives"]):
                raise Unsupported(node, "receiver_tensors_alternatives (more signatures, fed past the parsing) "
                                  "are not migrated yet", view.path)
            if not isinstance(view.parent(node), cst.Return):
                raise Unsupported(node, "the serving function must return its receiver where it makes it "
                                  "(`return ServingInputReceiver(...)`)", view.path)
            if "features" not in args or "receiver_tensors" not in args:
                raise Unsupported(node, "a receiver needs its features and receiver_tensors (TF1 raised here too)",
                                  view.path)
            pair = cst.Tuple([cst.Element(args["features"]), cst.Element(args["receiver_tensors"])], lpar=[], rpar=[])
            self.edits.append((view, node, pair))
        if not found:
            raise function.fail("a serving function that does not return a ServingInputReceiver where the migration "
                                "can see it")
