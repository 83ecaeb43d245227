"""The TF2 program of a between-graph graph: the chief's strategy and step, the module made TF2's."""

from __future__ import annotations

import libcst as cst

from rewrites import tf_api
from rewrites.base import KERAS_IMPORTS
from rewrites.between_graph.graph import Graph, Names
from rewrites.between_graph.runs import as_tuple
from rewrites.between_graph.session import Session
from rewrites.between_graph.synchronous import Server
from rewrites.program.edits import ModuleEdits
from rewrites.program.modules import ModuleView
from rewrites.program.spelling import Spelling
from rewrites.syntax import Unsupported, subtree
from rewrites.tf1_checkpoints import Part, restore_context, restores_shard_slots


def serve_unless_chief(server: str, is_chief: cst.BaseExpression, device: cst.With, names: Names,
                       elsewhere: cst.BaseExpression | None = None, end: str = "return") -> list:
    """The workers but TF1's chief serve; where ``elsewhere`` holds (the servers run elsewhere: this process has
    none), they print so and ``end``."""
    chief = names.code(is_chief)
    simple = is_chief.lpar or isinstance(is_chief, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
    code = (f"if not {chief if simple else f'({chief})'}:\n"
            + (f"    if {names.code(elsewhere)}:\n"
               f"        print(\"The servers run elsewhere; TF1's chief's client drives their training: this client "
               f"has nothing to do.\")\n"
               f"        {end}\n" if elsewhere is not None else "")
            + f"    # TF1's chief drives the cluster's training now; the other workers serve it.\n"
              f"    {server}.join()\n")
    statement = cst.parse_statement(code)
    return [statement.with_changes(leading_lines=device.leading_lines)]


def strategy(graph: Graph, server: Server, session: Session, dataset: list[cst.BaseStatement],
             names: Names, synchronous: bool, evaluated: str | None = None, summed: bool = False,
             returned: str | None = None, chosen: tuple | None = None, local: bool = False,
             master: bool = False) -> list[cst.BaseStatement]:
    """The strategy over the server's cluster (ParameterServerStrategy, or MultiWorkerMirroredStrategy for
    ``synchronous`` training: a SyncReplicasOptimizer), the variables, layers and optimizer in its scope, the
    coordinator, the per-worker dataset and the step function (and ``evaluated``'s: the graph computing that
    tensor, without training); ``summed``: the workers' gradients summed, not averaged (TF 0.11's
    SyncReplicasOptimizer); ``returned``: what a step returns, the loss or another tensor its run fetched;
    ``chosen``: (a flag's Mode choosing training or not, the statements serving the coordinator): the coordinator's
    program where it trains, each worker's own (`evaluate_batch`) otherwise (modes.py); ``local``: without a
    cluster, the default strategy, each step run in this process (local.py); ``master``: the cluster's chief may be
    a `master` job (names_a_master_job), which ParameterServerStrategy refuses."""
    from templates import render

    after = [line.replace("model.trainable_variables", f"[{', '.join(graph.variable_names)}]")
             for line in graph.after_optimizer]
    specs = [f"{name}_spec" for name in graph.elements]
    used = any(spec in line for spec in specs for line in graph.variables)
    text = render("between_graph_step.py.j2", local=local, master=master, cluster=server.cluster,
                  protocol=server.protocol,
                  synchronous=synchronous, summed=summed, job=synchronous and names.code(server.job),
                  task=synchronous and names.code(server.task), partitioner=graph.partitioner,
                  variables=graph.variables, optimizer=graph.optimizer, optimizer_name=graph.optimizer_name,
                  after_optimizer=after, computation=graph.computation, loss=graph.loss,
                  returned=returned or graph.loss,
                  variable_names=graph.variable_names,
                  dataset=[names.code(statement).strip() for statement in dataset],
                  dataset_name=graph.dataset, specs=", ".join(specs) if used else "",
                  parameters=["iterator"] * bool(graph.elements) + graph.placeholders, inputs=graph.inputs,
                  arguments=_step_arguments(graph), evaluated=evaluated, placeholders=graph.placeholders,
                  signature=_signature(graph), mode=chosen and names.code(chosen[0].test),
                  training_first=chosen and chosen[0].training_first, predicted=chosen and chosen[0].returned,
                  head=[line for statement in (chosen[1] if chosen else [])
                        for line in cst.Module([statement.with_changes(leading_lines=[])]).code.splitlines()])
    return _parsed(text)


def names_a_master_job(module: cst.Module) -> bool:
    """The program names a `master` job (`task.type == 'master'`): TF1's chief in a TF_CONFIG of Cloud ML Engine's,
    whose cluster has no `chief`."""
    return any(isinstance(node, cst.SimpleString) and node.evaluated_value == "master" for node in subtree(module))


def _signature(graph: Graph) -> list[str]:
    """The TensorSpecs of the step's placeholders, where it takes only those and each has its dtype: the values
    given are converted to them (checked against their shapes), as TF1 converted what it was fed. Floating-point
    placeholders only: TF1 truncated floats fed to an integer one, which a TensorSpec refuses."""
    floating = [graph.dtypes.get(name, "").rpartition(".")[2].startswith(("float", "bfloat"))
                for name in graph.placeholders]
    if graph.elements or not floating or not all(floating):
        return []
    return [f"tf.TensorSpec({graph.shapes.get(name, 'None')}, {graph.dtypes[name]})" for name in graph.placeholders]

def checkpoints(graph: Graph, session: Session, names: Names, restore: dict[str, str], synchronous: bool
                ) -> list[cst.BaseStatement]:
    """Before the session's loop: the checkpoints the program resumes from, its own or else its TF1 program's
    (``restore``: the names of the functions restore_functions() writes); each ``synchronous`` worker's."""
    from templates import render

    return _parsed(render("between_graph_checkpoints.py.j2", checkpoints=names.code(session.checkpoints),
                          synchronous=synchronous, optimizer_name=graph.optimizer_name,
                          checkpoint_items=", ".join(f"{name}={name}" for name in graph.tracked),
                          tf1_names={name: code for name, code in graph.tf1_names.items() if name},
                          tf1_named=graph.tf1_named,
                          shard_slots=restores_shard_slots(graph.partitioner, graph.slots) and
                          "[" + ", ".join(graph.tf1_names.values()) + "]",
                          restore=restore, max_to_keep=session.manager.get("max_to_keep", "5"),
                          every_n_hours=session.manager.get("keep_checkpoint_every_n_hours")))


def _parsed(text: str) -> list[cst.BaseStatement]:
    module = cst.parse_module(text)
    statements = list(module.body)
    statements[0] = statements[0].with_changes(leading_lines=[*module.header, *statements[0].leading_lines])
    # Blank lines without the block's indentation on them.
    return [statement.with_changes(leading_lines=[line.with_changes(indent=False) if not line.comment else line
                                                  for line in statement.leading_lines])
            for statement in statements]


def restore_functions(graph: Graph, names: dict[str, str]) -> list[cst.BaseStatement]:
    """The module-level functions that start the program from its TF1 program's checkpoint (and restore the
    slots of sharded variables from its own): ``names`` holds their names, by template name."""
    from templates import render

    context = restore_context([Part("variables", "optimizer", graph.slots)], step=graph.step_name)
    text = render("tf1_checkpoint.py.j2", model=False, restore=True, renamed={}, names=names, **context)
    if restores_shard_slots(graph.partitioner, graph.slots):
        text += "\n\n" + render("restore_shard_slots.py.j2", names=names)
    statements = list(cst.parse_module(text).body)
    return [statement.with_changes(leading_lines=[cst.EmptyLine(indent=False)] * 2) for statement in statements]


def _step_arguments(graph: Graph) -> str:
    """`strategy.run`'s args: the iterator's next batch (unpacked if TF1 unpacked it), the placeholders."""
    if not graph.elements:
        return as_tuple(graph.placeholders)
    if not graph.placeholders and graph.packed:
        return "next(iterator)"
    return as_tuple(["*next(iterator)" if graph.packed else "next(iterator)", *graph.placeholders])


def make_tf2(edits: ModuleEdits, spelling: Spelling, replaced: set[cst.CSTNode],
             imports: dict[str, tuple[str, str | None]]) -> None:
    """The module imports TF2 as `tf` (and ``imports``: name -> (module, object)), its TF1 references respelled,
    graph mode switched off, other names of TensorFlow folded into `tf`."""
    view = edits.view
    blocker = spelling.graph_only_use(replaced)
    if blocker is not None:
        function = view.enclosing_function(blocker)
        where = f" in `{function.name.value}()`" if function is not None else ""
        raise Unsupported(blocker, f"`{view.api(blocker)}`{where} still needs TF1's graph mode, which the migrated "
                                   "program does not run in: migrate it by hand")
    unknown = spelling.unknown_use()  # (the graph's code is respelled into the step: none is skipped)
    if unknown is not None:
        api = view.api(unknown)
        renamed = f" (TensorFlow 0.x's; TF 1.x's is `tf.{tf_api.TF0_RENAMED[api]}`)" if api in tf_api.TF0_RENAMED \
            else ""
        raise Unsupported(unknown, f"`tf.{api}` is a name neither TF 1.x nor TF 2 has{renamed}: `tf.compat.v1.{api}` "
                                   "would raise; spell it as TF 1.x does and migrate again")
    for statement in spelling.graph_mode_switches():
        edits.remove(statement)
    rebinding = spelling.rebinding
    for statement in rebinding.reassignments:
        edits.remove(statement)
    tf2 = cst.Import(names=[cst.ImportAlias(name=cst.Name("tensorflow"), asname=cst.AsName(cst.Name("tf")))])
    for statement in rebinding.imports:
        edits.expressions[statement] = tf2
    for block in rebinding.blocks:
        edits.replace(block, [] if rebinding.plain_import else [
            cst.SimpleStatementLine([tf2], leading_lines=block.leading_lines)])
    for node, new in spelling.all_references().items():
        edits.expressions.setdefault(node, new)
    for node in _other_names_of_tensorflow(view, edits):
        edits.expressions[node] = cst.Name("tf")
    for name, (module, obj) in imports.items():
        if name == "keras":
            edits.import_keras(next(choice for choice, spelled in KERAS_IMPORTS.items() if spelled == (module, obj)))
            continue
        edits.add_import(module, obj, None if name in (module, obj) else name)


def _other_names_of_tensorflow(view: ModuleView, edits: ModuleEdits) -> list[cst.Name]:
    """The uses of `tensorflow` imported under another name than `tf` (`import tensorflow as tf2`, as TFM101
    imports it where `tf` was TF1's); their import lines go."""
    others = set()
    for statement in view.module.body:
        imports = [small for small in statement.body if isinstance(small, cst.Import)] \
            if isinstance(statement, cst.SimpleStatementLine) else []
        names = {alias.evaluated_alias or alias.evaluated_name for small in imports for alias in small.names
                 if alias.evaluated_name == "tensorflow" and (alias.evaluated_alias or "tensorflow") != "tf"}
        if names and len(statement.body) == 1 and len(imports[0].names) == 1:
            edits.remove(statement)
            others |= names
    return [node for node in subtree(view.module) if isinstance(node, cst.Name) and node.value in others
            and not isinstance(view.parent(node), (cst.ImportAlias, cst.AsName))]
