"""A between-graph program's export function: the TF1 graph for serving it builds, restored from the training's
checkpoint and exported as a SavedModel, becomes TF2's tf.functions of the same signatures.

TensorFlowOnSpark's pipeline examples train in `map_fun(args, ctx)` and export in `export_fun(args)` (TFEstimator's
`export_fn`, run on one executor after the cluster ends): a new graph from placeholders and variables named as the
training's, a `tf.train.Saver()` restored in a `tf.Session()` from the latest checkpoint of the model folder, and
`TFNode.export_saved_model(sess, export_dir, tag, signatures)`, each signature `{'inputs': {key: placeholder},
'outputs': {key: tensor}, 'method_name': ...}`. The migrated training writes TF2 checkpoints in `<folder>/tf2`
(TFM108), its variables by their names in the step's code: the export restores its variables from there, each one
of the training's of the same TF1 name (what TF1's Saver matched), the graph after the placeholders becomes a
function of them, and each signature a tf.function of the placeholders (input keys: their TensorSpecs' names)
returning its outputs by key, saved with `tf.saved_model.save` under the serving tag. TF2 writes every signature
with the predict method: a classify or regress one is left.
"""

from __future__ import annotations

import keyword

import libcst as cst

from rewrites.between_graph.export_code import graph_function, saved, signature_functions
from rewrites.between_graph.graph import Names
from rewrites.between_graph.tfos import tfnode_names
from rewrites.program.edits import ModuleEdits
from rewrites.program.modules import ModuleView
from rewrites.program.spelling import Spelling
from rewrites.syntax import Unsupported, bind_arguments, is_name, single_assign, source, statement_value, subtree

PLACEHOLDER = ("dtype", "shape", "name")
GENERATED_WIDTH = 100  # of a line of generated code
VARIABLE_MAKERS = ("Variable", "get_variable", "compat.v1.get_variable")
VARIABLE_MAKING_MODULES = ("layers.", "keras.", "contrib.", "compat.v1.layers.")
V1_VARIABLE = ("initial_value", "trainable", "collections", "validate_shape", "caching_device", "name", "variable_def",
               "dtype", "expected_shape", "import_scope", "constraint")
V2_VARIABLE = ("initial_value", "trainable", "validate_shape", "caching_device", "name", "dtype", "constraint")
# The exports read, by api (TensorFlowOnSpark's TFNode.export_saved_model, TF's simple_save): their parameters.
EXPORTS = {"TFNode.export_saved_model": ("sess", "export_dir", "tag_set", "signatures"),
           "saved_model.simple_save": ("session", "export_dir", "inputs", "outputs", "legacy_init_op")}
SIMPLE_SAVE = "saved_model.simple_save"
CHECKPOINT_FOLDERS = ("train.get_checkpoint_state", "train.latest_checkpoint")
SAVERS = ("train.Saver",)
SESSIONS = ("Session",)
SERVING_TAGS = ("saved_model.tag_constants.SERVING", "saved_model.SERVING")
PREDICT = ("saved_model.signature_constants.PREDICT_METHOD_NAME", "saved_model.PREDICT_METHOD_NAME")
PREDICT_METHOD = "tensorflow/serving/predict"
EXPORTED = ("`{function}()` exports TF1's serving graph -> restores its variables from the migrated training's "
            "checkpoints in os.path.join({folder}, \"tf2\") (each the training's variable of its TF1 name) and saves "
            "a tf.function per signature ({keys}) with tf.saved_model.save: the same inputs and outputs{methods}")
METHODS = "; TF2 writes each with the predict method (TF1's {names})"


def export_calls(module: cst.Module, names: Names) -> list[tuple[cst.Call, str]]:
    """The module's calls exporting a SavedModel from a session, each with its kind (a key of EXPORTS)."""
    tfnode = tfnode_names(module)
    found = []
    for node in subtree(module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.value.value in tfnode:
            found.append((node, f"TFNode.{node.func.attr.value}"))
        elif isinstance(node, cst.Call):
            found.append((node, names.api(node.func)))
    return [(call, kind) for call, kind in found if kind in EXPORTS]


def migrate(view: ModuleView, names: Names, spelling: Spelling, edits: ModuleEdits, trained: dict[str, str] | None,
            replaced: set[cst.CSTNode]) -> list[tuple[str, cst.CSTNode, str]]:
    """Each export function of the module (one making a session of its own and exporting from it) in TF2, its
    findings; ``trained``: TF1 name (code) -> the key of the migrated training's checkpoint holding that variable
    (None: the training saves none)."""
    notes = []
    for call, kind in export_calls(view.module, names):
        function = view.enclosing_function(call)
        session = _session_of(view, call, EXPORTS[kind], names)
        if function is None or session is None or view.enclosing_function(session) is not function:
            continue  # exported from the training's own session: not an export function's
        if trained is None:
            raise Unsupported(call, f"`{function.name.value}()` exports a model from TF1's checkpoints, which the "
                                    "migrated training does not save: migrate it by hand")
        notes.append(_Export(view, names, spelling, edits, function, session, call, kind, trained).migrate(replaced))
    return notes


def _session_of(view: ModuleView, call: cst.Call, parameters: tuple[str, ...], names: Names) -> cst.With | None:
    """The `with tf.Session() as sess:` around ``call`` that it exports from (its first parameter)."""
    args = bind_arguments(call, parameters)
    for node in view.ancestors(call):
        if isinstance(node, cst.With) and len(node.items) == 1 and isinstance(item := node.items[0].item, cst.Call) \
                and names.api(item.func) in SESSIONS and node.items[0].asname is not None and args \
                and parameters[0] in args and is_name(args[parameters[0]][1].value,
                                                      source(node.items[0].asname.name)):
            return node
    return None


class _Export:
    def __init__(self, view: ModuleView, names: Names, spelling: Spelling, edits: ModuleEdits,
                 function: cst.FunctionDef, session: cst.With, call: cst.Call, kind: str, trained: dict[str, str]
                 ) -> None:
        self.view, self.names, self.spelling, self.edits = view, names, spelling, edits
        self.function, self.session, self.call, self.trained = function, session, call, trained
        self.kind, self.args = kind, bind_arguments(call, EXPORTS[kind])
        self.sess = source(session.items[0].asname.name)
        self.placeholders: dict[str, tuple[str, str]] = {}  # name -> (dtype, shape) code
        self.variables: dict[str, str] = {}  # name -> the training's checkpoint key
        self.tensors: list[cst.BaseStatement] = []  # the graph after its placeholders and variables
        self.computed: set[str] = set()
        self.comments: list[cst.EmptyLine] = []  # the signatures' comments
        self.folder_call: tuple[cst.Call, cst.Call] | None = None  # reading the checkpoints' folder, and in TF2
        self.graph_names: set[str] = set()  # the placeholders, tensors and Saver, which go

    def migrate(self, replaced: set[cst.CSTNode]) -> tuple[str, cst.CSTNode, str]:
        body = list(self.function.body.body)
        at = body.index(self.session) if self.session in body else self._not_at_top()
        saver = None
        for statement in body[:at]:
            saver = self._graph_statement(statement) or saver
        if saver is None:
            raise Unsupported(self.session, f"`{self.function.name.value}()` restores no `tf.train.Saver()` of its "
                                            "graph: migrate it by hand")
        self._check_variables_made(body[:at])
        self.graph_names = {*self.placeholders, *self.computed, saver}
        folder, signatures = self._session_body(saver)
        self._check_unused(body[at + 1:], "after its session")
        self.edits.unwrap(self.session)
        if any(not line.comment for line in self.session.leading_lines):
            self.edits.blank_lines[self.session.body.body[0]] = 1
        replaced |= {*self.edits.statements, self.session.items[0]}
        methods = sorted({method for _, _, method in signatures.values() if method is not None})
        keys = ", ".join(source(key) for key in signatures)
        return ("TFM103", self.function, EXPORTED.format(
            function=self.function.name.value, folder=folder, keys=keys,
            methods=METHODS.format(names=", ".join(methods)) if methods else ""))

    def _not_at_top(self):
        raise Unsupported(self.session, f"`{self.function.name.value}()` opens its session inside a block: migrate "
                                        "it by hand")

    # -- the graph -----------------------------------------------------------------------------------------------

    def _graph_statement(self, statement: cst.BaseStatement) -> str | None:
        """Read one statement of the graph: the Saver's name where it makes one."""
        assign = single_assign(statement)
        value = statement_value(statement)
        api = self.names.api(value.func) if isinstance(value, cst.Call) else None
        if assign and api == "placeholder":
            args = bind_arguments(value, PLACEHOLDER)
            if args is None or "shape" not in args:
                raise Unsupported(value, "a placeholder of the export whose shape is not given: migrate it by hand")
            self.placeholders[assign[0]] = (self.spelling.code(args["dtype"][1].value),
                                            self.spelling.code(args["shape"][1].value))
            self.edits.remove(statement)
        elif assign and api == "Variable":
            self.variables[assign[0]] = self._checkpoint_key(value)
            self.edits.expressions[value.func] = cst.parse_expression("tf.Variable")
        elif assign and api in SAVERS:
            if value.args:
                raise Unsupported(value, "a Saver of some variables only: migrate the export by hand")
            self.edits.remove(statement)
            return assign[0]
        elif api is not None and api.startswith("summary."):
            self.edits.remove(statement)  # nothing runs them: the SavedModel's signatures do not
        elif self._reads_graph(statement):
            if not assign:
                raise Unsupported(statement, "a statement of the export's graph that binds no one tensor: migrate "
                                             "it by hand")
            self.tensors.append(statement)
            self.computed.add(assign[0])
            self.edits.remove(statement)
        return None

    def _check_variables_made(self, statements: list) -> None:
        """The graph makes no variables but its `name = tf.Variable(..., name=...)` statements (which the restore
        fills): not in a block, a layer or a function of the module the graph calls, whose variables would be made
        anew in each signature's tf.function."""
        read = {id(statement) for statement in statements if (single_assign(statement) or ("",))[0] in self.variables}
        for statement in statements:
            for node in subtree(statement) if id(statement) not in read else ():
                if isinstance(node, cst.Call) and _makes_variables(self.names.api(node.func) or "") or (
                        isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
                        and self._module_function_makes_variables(node.func.value)):
                    raise Unsupported(node, "the export's graph makes variables otherwise than `name = "
                                            "tf.Variable(..., name=...)` at the top of its function: migrate it by "
                                            "hand")

    def _module_function_makes_variables(self, name: str) -> bool:
        definition = next((node for node in self.view.top_level.get(name, ()) if isinstance(node, cst.FunctionDef)),
                          None)
        return definition is not None and any(isinstance(node, cst.Call) and _makes_variables(
            self.names.api(node.func) or "") for node in subtree(definition))

    def _checkpoint_key(self, call: cst.Call) -> str:
        """The key of the training's checkpoint holding the variable of TF1's Variable(...) call, whose arguments
        TF2's Variable takes alike."""
        args = bind_arguments(call, V1_VARIABLE)
        if args is None or set(args) - set(V2_VARIABLE):
            raise Unsupported(call, "a variable of the export made with arguments TF2's Variable does not take "
                                    "alike: migrate the export by hand")
        name = args.get("name")
        if name is None or not isinstance(name[1].value, cst.SimpleString):
            raise Unsupported(call, "a variable of the export without a name: TF1's Saver restored it by the name "
                                    "its graph gave it; name it as the training's")
        key = self.trained.get(f'"{name[1].value.evaluated_value}"')
        if key is None:
            raise Unsupported(call, f"the export's variable {source(name[1].value)} is none of the migrated "
                                    "training's: migrate the export by hand")
        return key

    def _reads_graph(self, statement: cst.CSTNode) -> bool:
        graph = {*self.placeholders, *self.variables, *self.computed}
        return any(isinstance(node, cst.Name) and node.value in graph for node in subtree(statement))

    # -- the session -----------------------------------------------------------------------------------------------

    def _session_body(self, saver: str) -> tuple[str, dict]:
        """The session's statements: the checkpoint's folder read in `<folder>/tf2`, the restore and the export
        in TF2; the signatures read."""
        folder, restored, signatures = None, False, None
        statements = list(self.session.body.body)
        for statement in statements:
            value = statement_value(statement)
            assign = single_assign(statement)
            folders = [self._checkpoint_folder(node) for node in subtree(statement)
                       if isinstance(node, cst.Call) and self.names.api(node.func) in CHECKPOINT_FOLDERS]
            folder = folder or next(iter(folders), None)
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and is_name(value.func.value, saver) and value.func.attr.value == "restore":
                self._restore(statement, value)
                restored = True
            elif value is self.call:
                signatures = self._export(statement, statements)
            elif assign and isinstance(value, cst.Dict) and self._passed(assign[0]):
                self.edits.remove(statement)  # read with the export, which its comments go to
                self.comments = [line for line in statement.leading_lines if line.comment]
            else:
                self._check_unused([statement], "besides its restore and export")
        if folder is None or not restored or signatures is None:
            raise Unsupported(self.session, "an export that does not restore the latest checkpoint of a folder "
                                            "(`tf.train.get_checkpoint_state` or `latest_checkpoint`) before it "
                                            "exports: migrate it by hand")
        return folder, signatures

    def _check_unused(self, statements: list, where: str) -> None:
        """The session and the graph's tensors are not used in ``statements``."""
        for statement in statements:
            used = next((node for node in subtree(statement) if isinstance(node, cst.Name)
                         and node.value in (self.sess, *self.graph_names)), None)
            if used is not None:
                raise Unsupported(used, f"the export's session or graph is used {where}: migrate it by hand")

    def _passed(self, name: str) -> bool:
        return bool(self.args) and "signatures" in self.args and is_name(self.args["signatures"][1].value, name)

    def _checkpoint_folder(self, call: cst.Call) -> str:
        """`tf.train.get_checkpoint_state(folder)` (or latest_checkpoint): of `os.path.join(folder, "tf2")`, where
        the migrated training's checkpoints are."""
        if len(call.args) != 1 or call.args[0].keyword is not None:
            raise Unsupported(call, "a checkpoint's folder read with other arguments: migrate the export by hand")
        folder = self.spelling.code(call.args[0].value)
        new = call.with_changes(args=[call.args[0].with_changes(
            value=cst.parse_expression(f'os.path.join({folder}, "tf2")'))])
        self.edits.expressions[call] = self.spelling.spelled(new)
        self.folder_call = self.folder_call or (call, self.edits.expressions[call])
        self.edits.add_import("os")
        return folder

    def _restore(self, statement: cst.BaseStatement, call: cst.Call) -> None:
        """`saver.restore(sess, path)` -> the variables restored from the training's checkpoint at ``path``."""
        args = bind_arguments(call, ("sess", "save_path"))
        if args is None or "save_path" not in args or not is_name(args.get("sess", (0, None))[1].value, self.sess):
            raise Unsupported(call, "a restore of the export's Saver not in its session: migrate it by hand")
        items = ", ".join(f"{key}={name}" for name, key in self.variables.items())
        path = args["save_path"][1].value
        if self.folder_call and any(node is self.folder_call[0] for node in subtree(path)):
            path = path.deep_replace(*self.folder_call)  # `saver.restore(sess, tf.train.latest_checkpoint(folder))`
        path = self.spelling.code(path)
        checked = ".assert_existing_objects_matched().expect_partial()"
        if self.view.position(statement)[1] + len(f"trained.restore({path}){checked}") > GENERATED_WIDTH:
            path = f"\n    {path}\n"
        code = (f"# The variables as the migrated training saved them, by their names there: each one found, as\n"
                f"# TF1's Saver required (the training's optimizer is not read).\n"
                f"trained = tf.train.Checkpoint({items})\n"
                f"trained.restore({path}){checked}\n")
        parsed = cst.parse_module(code)
        new = list(parsed.body)
        self.edits.replace(statement, [new[0].with_changes(leading_lines=[*statement.leading_lines, *parsed.header,
                                                                          *new[0].leading_lines]), *new[1:]])

    def _export(self, statement: cst.BaseStatement, statements: list) -> dict:
        """`TFNode.export_saved_model(sess, export_dir, tag, signatures)` (or `simple_save(sess, export_dir,
        inputs, outputs)`: one predict signature, serving_default) -> the graph as a function of the placeholders,
        a tf.function per signature, and tf.saved_model.save."""
        args = self.args
        if args is None or set(args) != set(EXPORTS[self.kind]) - {"legacy_init_op"}:
            raise Unsupported(self.call, f"a {self.kind.rpartition('.')[2]} call of other arguments: migrate it by "
                                         "hand")
        if self.kind == SIMPLE_SAVE:
            signatures = {cst.SimpleString('"serving_default"'): (
                self._tensors(args["inputs"][1].value, "inputs", self.call),
                self._tensors(args["outputs"][1].value, "outputs", self.call), None)}
        else:
            self._check_tag(args["tag_set"][1].value)
            signatures = self._signatures(args["signatures"][1].value, statements)
        outputs = list(dict.fromkeys(tensor for _, returned, _ in signatures.values() for tensor in returned.values()))
        self._check_names_are_free(["graph", "trained", *map(self._function_name, signatures)], statement)
        computed = [name for name in outputs if name not in self.placeholders]
        if not computed:
            raise Unsupported(self.call, "signatures returning only their inputs: migrate the export by hand")
        if any(set(inputs.values()) != set(self.placeholders) for inputs, _, _ in signatures.values()):
            raise Unsupported(self.call, "a signature of some of the export's placeholders only: migrate it by hand")
        tensors = [self.spelling.code(s.with_changes(leading_lines=[])).strip() for s in self.tensors]
        functions = {self._function_name(key): (self.spelling.code(key), inputs, returned)
                     for key, (inputs, returned, _) in signatures.items()}
        self.edits.replace(statement, [
            graph_function(tensors, list(self.placeholders), computed, [*statement.leading_lines, *self.comments]),
            *signature_functions(functions, self.placeholders, computed),
            saved(self.spelling.code(args["export_dir"][1].value), functions)])
        return signatures

    def _check_tag(self, tag: cst.BaseExpression) -> None:
        if not (self.names.api(tag) in SERVING_TAGS or isinstance(tag, cst.SimpleString)
                and tag.evaluated_value == "serve"):
            raise Unsupported(tag, "a SavedModel of other tags than `serve`, which tf.saved_model.save writes: "
                                   "migrate the export by hand")

    def _signatures(self, value: cst.BaseExpression, statements: list) -> dict:
        """signature key (node) -> ({input key: placeholder}, {output key: tensor}, TF1's method name where it is
        not predict), from the dict the export reads (a literal, or a name bound to one in the session)."""
        if isinstance(value, cst.Name):
            bound = next((s for s in statements if (single_assign(s) or ("",))[0] == value.value), None)
            value = single_assign(bound)[1] if bound is not None else value
        if not isinstance(value, cst.Dict):
            raise Unsupported(self.call, "signatures the export does not spell out as a dict: migrate it by hand")
        found = {}
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.value, cst.Dict):
                raise Unsupported(value, "a signature not written as a dict: migrate the export by hand")
            parts = {_key(part.key): part.value for part in element.value.elements
                     if isinstance(part, cst.DictElement)}
            inputs, outputs = (self._tensors(parts.get(part), part, element) for part in ("inputs", "outputs"))
            if set(inputs.values()) - set(self.placeholders):
                raise Unsupported(element, "a signature whose inputs are not the export's placeholders: migrate it "
                                           "by hand")
            # (a signature without a method name: TensorFlowOnSpark names it after its key)
            method = parts.get("method_name")
            found[element.key] = (inputs, outputs, _signature_name(element.key) if method is None
                                  else self._method(method))
        return found

    def _tensors(self, value, part: str, element) -> dict[str, str]:
        if not isinstance(value, cst.Dict) or not all(
                isinstance(e, cst.DictElement) and _key(e.key) and isinstance(e.value, cst.Name)
                and e.value.value in {*self.placeholders, *self.computed} for e in value.elements):
            raise Unsupported(element, f"a signature whose {part} are not a dict of the graph's tensors by string "
                                       "keys: migrate it by hand")
        return {_key(e.key): e.value.value for e in value.elements}

    def _method(self, value: cst.BaseExpression) -> str | None:
        """TF1's method name of a signature where it is not predict's (a name of the program's own, which TF
        Serving's Predict API serves as a predict one); Unsupported for classify and regress."""
        api = self.names.api(value) or ""
        if api in PREDICT or _key(value) == PREDICT_METHOD:
            return None
        if not isinstance(value, cst.SimpleString) or value.evaluated_value.startswith("tensorflow/serving/") \
                or api.startswith("saved_model."):
            raise Unsupported(value, f"a signature of the method {source(value)}: TF2 writes every signature with "
                                     "the predict method; migrate the export by hand")
        return value.evaluated_value

    def _check_names_are_free(self, generated: list[str], export: cst.BaseStatement) -> None:
        """The names the migrated export binds are not the function's (in what stays of it) or the module's."""
        kept = {id(node) for statement in [*self.tensors, *self.edits.statements, export]
                for node in subtree(statement)}
        taken = next((node for node in subtree(self.function) if isinstance(node, cst.Name)
                      and node.value in generated and id(node) not in kept), None)
        if taken is None and (bound := next((name for name in generated if name in self.view.top_level), None)):
            taken = self.view.top_level[bound][0]
        if taken is not None:
            raise Unsupported(taken, f"the migrated export defines {', '.join(f'`{name}`' for name in generated)}, "
                                     "which this code already uses: migrate it by hand")

    def _function_name(self, key: cst.BaseExpression) -> str:
        """A signature's tf.function's name: its key (`<key>_signature` where a tensor of the graph has that name)."""
        name = _signature_name(key)
        return f"{name}_signature" if name in {*self.placeholders, *self.computed} else name


def _makes_variables(api: str) -> bool:
    return api in VARIABLE_MAKERS or api.startswith(VARIABLE_MAKING_MODULES)


def _key(node: cst.BaseExpression | None) -> str | None:
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def _signature_name(key: cst.BaseExpression) -> str:
    """A signature's key as a name (the default one's: serving_default)."""
    if isinstance(key, cst.SimpleString) and key.evaluated_value.isidentifier() \
            and not keyword.iskeyword(key.evaluated_value):
        return key.evaluated_value
    if source(key).endswith("DEFAULT_SERVING_SIGNATURE_DEF_KEY"):
        return "serving_default"
    raise Unsupported(key, "a signature key that is neither a string nor the default one: migrate the export by hand")
