"""TFM103-109: a between-graph parameter-server program becomes a ClusterCoordinator program.

For developers: the TF1 shape is read in graph.py (the graph under replica_device_setter; graph_calls.py the
functions it calls) and session.py (the MonitoredTrainingSession or Supervisor loop; runs.py what its runs feed and
fetch, and the runs after the loop; monitored.py a MonitoredTrainingSession's scaffold and hooks; inputs.py the
graph's tf.data input as TFM008 writes a queue-runner one, input_functions.py a function of the program building
it, in the graph's module or another; holders.py what serves the session held in a trainer's attributes);
unread.py places the finding of a program whose session is read in none of those shapes; tfos.py reads a
TensorFlowOnSpark map_fun (its server, and the finding of one fed by Spark); emit.py writes the TF2 program; a
SyncReplicasOptimizer graph becomes a MultiWorkerMirroredStrategy program instead (synchronous.py). What stays TF1
is spelled tf.compat.v1.X (rewrites/program/spelling.py). The rule pages, what `tf-migrate rules TFMnnn` prints,
are in rules.py.
"""

from __future__ import annotations

import os
from dataclasses import replace

import libcst as cst

from rewrites.base import TFCodemod
from rewrites.between_graph import (device_functions, emit, end_hooks, exports, graph_calls, holders, in_graph,
                                    input_functions, inputs, model_modules, monitored, slim_names, synchronous, tfos,
                                    unlimited, unread)
from rewrites.between_graph.beside import host_values
from rewrites.between_graph.modes import read_mode
from rewrites.between_graph.graph import SEEDS, Graph, Names, read_graph
from rewrites.between_graph.fallbacks import fallbacks
from rewrites.between_graph.local import LOCAL, session_master
from rewrites.between_graph.local import TRAINING as LOCAL_TRAINING
from rewrites.between_graph.local import check as check_local
from rewrites.between_graph.placement import (check_graph_argument, check_places_variables, device_binding,
                                              graph_block, held_by_graph, is_device_block, local_of, named_device,
                                              uses)
from rewrites.between_graph.retry import RETRIED, Retry, retried
from rewrites.between_graph.runs import Evaluation, check_one_tensor, evaluations, global_step_reads, summary_writes
from rewrites.between_graph.session import (IN_PROCESS, SCHEDULED, SYNCHRONOUS, Session, Supervisors, config_notes,
                                            distinct_openings, last_step, loop_statements, migrated_loop,
                                            on_no_server, opens_session, owned, read_session, step_result,
                                            stop_statements)
from rewrites.program.edits import ModuleEdits
from rewrites.program.modules import ModuleView, Tree
from rewrites.program.spelling import Spelling
from rewrites.suppressions import needed
from rewrites.syntax import (Unsupported, assigned, bind_arguments, children, first_line, is_name, single_assign,
                             source, statement_value, subtree, with_blank_lines)
from rewrites.tf1_checkpoints import restores_shard_slots

# Names the migrated program defines (and `optimizer`, for one made in its minimize call).
GENERATED_NAMES = ("jobs", "resolver", "strategy", "coordinator", "train_step", "checkpoint", "manager", "dataset_fn",
                   "per_worker_iterator", "scheduled_steps", "trained_steps", "scaled_loss", "tf1_checkpoint",
                   "restored_steps", "evaluate_graph", "evaluate_batch", "worker_iterator")
# The module-level functions resuming from TF1's checkpoints, and restoring the slots of shards.
RESTORE = {"restore_tf1_checkpoint": "restore_tf1_checkpoint", "restore_shard_slots": "restore_shard_slots"}
SERVERS = {"train.Server", "distribute.Server"}
# Made beside a MonitoredTrainingSession and read nowhere, these change nothing: the session makes its own.
INERT_UNREAD = {"global_variables_initializer", "initialize_all_variables", "local_variables_initializer",
                "train.Saver", "summary.merge_all"}
SERVER = ("server_or_cluster_def", "job_name", "task_index", "protocol", "config", "start")
ADVICE = {
    "train.start_queue_runners": "queue runners feed a TF1 graph: feed the data as the step's arguments or a "
    "per-worker tf.data dataset by hand",
    "get_collection": "graph collections have no place in TF2 code: pass the values themselves",
}
CHECKPOINTS = ("checkpoints of TF1's session -> a tf.train.CheckpointManager in {folder}: the program resumes from "
               "it, or else from TF1's latest checkpoint (its variables, the optimizer's slots, the step), and saves "
               "when training ends (TF1 also saved on a timer); TF1's own files are only read")
ASYNCHRONOUS_TRAINING = ("between-graph training -> TF1's chief drives the cluster with a ClusterCoordinator of "
                         "ParameterServerStrategy, the other workers serve; prove it with tf-migrate parity")
SYNCHRONOUS_TRAINING = ("synchronous between-graph training -> every worker runs its steps on "
                        "MultiWorkerMirroredStrategy, the gradients {aggregated} over the workers as "
                        "SyncReplicasOptimizer did; ps tasks end; prove it with tf-migrate parity")
AGGREGATED = {False: "averaged", True: "summed"}
EXISTING_SERVERS = ("; where `{test}`, the servers run elsewhere: the program starts none, TF1's chief's client "
                    "drives them and the other clients end")
SUMMARIES = ("tf.summary ops fed TF1's summary writers: the migrated step computes the same without them; log from "
             "the loop with a tf.summary.create_file_writer if you need them")

SUMMARY_WRITES = ("the run's merged summaries, written to a TF1 summary writer: the migrated step makes none and the "
                  "program writes none; log from the loop with a tf.summary.create_file_writer on the chief if you "
                  "need them")


class Rewrite(TFCodemod):
    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        updated_node = super().leave_Module(original_node, updated_node)
        supervisors = self._supervisors(original_node)
        openings = [(statement, block) for statement, block in _statements(original_node)
                    if opens_session(statement, self._names, supervisors)]
        openings = distinct_openings(openings, self._names, supervisors)
        if not openings:
            return self._report_unread(original_node, updated_node, supervisors)
        view = Tree({self.path: original_node.code}, exists=lambda path: False,
                    parsed={self.path: self.context.wrapper}).view(self.path)
        try:
            if "TFM103" not in self.enabled:
                raise Unsupported(openings[0][0], "TFM103 (between-graph-program) is switched off")
            openings = [(statement, block) for statement, block in openings if self.wants("TFM103", statement)]
            if not openings:  # suppressed: left as it is
                return updated_node
            feed = tfos.spark_feed(original_node)
            if feed is not None:
                raise Unsupported(*feed)
            followed = device_functions.follow(original_node, self._names.api)
            # The graphs' one-shot iterators go: the datasets they read become TF2's.
            devices = [s for s, _ in _statements(original_node) if is_device_block(s, self._names, followed)]
            spelling = Spelling(view, devices)
            names = Names(self._names.api, spelling.code, spelling.spelled,
                          replace(graph_calls.module_code(original_node, self.path), run=self.run, path=self.path))
            program = _Program(self, view, spelling, names, supervisors, followed)
            for statement, block in openings:
                program.migrate(statement, block)
            program.notes += exports.migrate(view, names, spelling, program.edits, program.trained, program.replaced)
            for rule, node, message in program.notes:
                if not self.wants(rule, node):
                    raise Unsupported(node, needed(rule, self.enabled, message))
            emit.make_tf2(program.edits, spelling, program.replaced, self.generated_imports())
            code = program.edits.apply()
            others = {path: _other_module(home, edits, call, self.path, does)
                      for path, (home, edits, call, does) in program.other_edits.items()}
            for path, notes in program.other_notes.items():
                others[path][1].extend(("TFM103", *home.position(node), message) for home, node, message in notes)
        except Unsupported as problem:
            self.report("TFM104", problem.node, f"between-graph program left as it is: {problem}")
            return updated_node
        for rule, node, message in program.notes:
            self.report(rule, node, message)
        self.other_modules.update(others)
        return cst.parse_module(code)

    def _report_unread(self, module: cst.Module, updated: cst.Module,
                       supervisors: Supervisors) -> cst.Module:
        """A between-graph program whose session is in none of the shapes read: where and why it stopped; an
        in-graph program's plain Session (in_graph.py) migrated."""
        devices = [s for s, _ in _statements(module) if is_device_block(s, self._names)]
        stop = unread.first_stop(module, self._names.api, supervisors, devices)
        if stop is None:
            return updated
        stop = tfos.spark_feed(module) or stop
        if self._names.api(getattr(stop[0], "func", None)) in unread.PLAIN_SESSIONS \
                and "TFM103" in self.enabled and self.wants("TFM103", stop[0]):
            view = Tree({self.path: module.code}, exists=lambda path: False,
                        parsed={self.path: self.context.wrapper}).view(self.path)
            edits, spelling = ModuleEdits(view), Spelling(view)
            try:
                removed = in_graph.migrate(view, self._names, spelling, stop[0], edits)
                emit.make_tf2(edits, spelling, removed, self.generated_imports())
                code = in_graph.without_graphs(edits.apply())
            except Unsupported as problem:
                stop = problem.node, str(problem)
            else:
                self.report("TFM103", stop[0], in_graph.IN_GRAPH)
                return cst.parse_module(code)
        self.report("TFM104", stop[0], f"between-graph program left as it is: {stop[1]}")
        return updated

    @property
    def _names(self) -> Names:
        return Names(self._api, source, lambda node: node)

    def _api(self, node: cst.CSTNode) -> str | None:
        """The TensorFlow API ``node`` names; tf-slim's as the tf.contrib one TFM005 (run first) moved there."""
        return name.api if (name := self.tf_name(node)) is not None else slim_names.contrib_api(self, node)

    def _supervisors(self, module: cst.Module) -> Supervisors:
        """name -> `name = tf.train.Supervisor(...)`, anywhere in the module (or the `if` choosing one by a flag,
        synchronous.supervisor_calls); `self.sv` -> `self.sv = tf.train.Supervisor(...)` in the one method of its
        class binding it, where that method places a graph on the cluster (an evaluator's Supervisor is not)."""
        found = Supervisors()
        for key, statement in self._bound_supervisors(module.body):
            if "." not in key:
                found[key] = statement
        for owner in (node for node in subtree(module) if isinstance(node, cst.ClassDef)):
            methods = [m for m in owner.body.body if isinstance(m, cst.FunctionDef) and m.params.params]
            binding = {}
            for method in methods:
                this = method.params.params[0].name.value
                for key, statement in self._bound_supervisors(method.body.body):
                    if key.startswith(f"{this}."):
                        binding.setdefault(key, []).append((statement, method))
            for key, [(statement, method)] in ((k, v) for k, v in binding.items() if len(v) == 1):
                if key not in found and any(isinstance(node, cst.Call) and self._names.api(node.func) in
                                            unread.PLACEMENT for node in subtree(method)):
                    found.bind_in_method(key, statement, method, owner)
        return found

    def _bound_supervisors(self, body) -> list[tuple[str, cst.BaseStatement]]:
        """(holder, statement) of the Supervisors ``body`` binds, however nested."""
        found, chosen = [], set()
        for statement, _ in _statements(body):
            if id(statement) in chosen or not synchronous.supervisor_calls(statement, self._names.api):
                continue
            if isinstance(statement, cst.If):
                chosen |= {id(statement.body.body[0]), id(statement.orelse.body.body[0])}
                found.append((assigned(statement.body.body[0])[0], statement))
            else:
                found.append((assigned(statement)[0], statement))
        return found


def _other_module(home: graph_calls.ModuleCode, edits: ModuleEdits, call: cst.Call, path: str, does: str
                  ) -> tuple[str, list[tuple[str, int, int, str]]]:
    """The new code of another module whose function builds the graph's input, a TF2 module now (the migrated
    program imports it), and its TFM103 findings, at each return changed; Unsupported at the graph's ``call``."""
    try:
        emit.make_tf2(edits, Spelling(home.view, set(edits.statements)), set(edits.statements), {})
    except Unsupported as problem:
        raise Unsupported(call, f"`{source(call).split('(')[0]}(` in the graph {does} in {home.file}, "
                                f"which becomes a TF2 module: {problem} (line {home.position(problem.node)[0]} of "
                                f"{home.file}: `{first_line(problem.node)}`)") from None
    return edits.apply(), [("TFM103", *home.position(statement), "the function builds the per-worker dataset of the "
                            f"between-graph program of {os.path.basename(path)} now: it returns its tf.data "
                            "pipeline, not its one-shot iterator's batches") for statement, new in
                           edits.statements.items() if new and not isinstance(statement, cst.FunctionDef)]


class _Program:
    """The between-graph programs of one module, migrated into one set of edits."""

    def __init__(self, rewrite: Rewrite, view: ModuleView, spelling: Spelling, names: Names,
                 supervisors: Supervisors, followed: dict[int, device_functions.DeviceFunction]) -> None:
        self.rewrite, self.view, self.spelling, self.names = rewrite, view, spelling, names
        self.supervisors = supervisors
        self.followed = followed  # the device blocks whose setter a function of the module makes
        self.edits = ModuleEdits(view)
        # Another module's functions building the graph's input: its path -> (its code, the edits of it).
        # (and the graph's call, what it does there)
        self.other_edits: dict[str, tuple[graph_calls.ModuleCode, ModuleEdits, cst.Call, str]] = {}
        self.other_notes: dict[str, list[tuple[graph_calls.ModuleCode, cst.CSTNode, str]]] = {}  # TFM103s there
        self.notes: list[tuple[str, cst.CSTNode, str]] = []
        self.replaced: set[cst.CSTNode] = set()
        self.restore_written = False
        self.trained: dict[str, str] | None = None  # TF1 name -> key of a variable in the training's checkpoints
        self.tfos_servers: dict[int, tuple[list[cst.BaseStatement], str]] = {}  # TensorFlowOnSpark's: tfos.py

    def migrate(self, opening: cst.BaseStatement, block: list) -> None:
        retry = retried(opening, self.view, self.names.api) if isinstance(opening, cst.With) else None
        found = self._device(retry.loop, retry.block) if retry is not None else self._device(opening, block)
        if found is not None:  # the graph first: what stops it comes before the session in the source
            device, outer, code, wrapper = found
            followed = self.followed.get(id(device))
            check_places_variables(device, _scope(self.view, device), self.names,
                                   followed.setter if followed is not None else None)
            inside = code is not outer  # the session's code written in the device block, after the graph
            graph = read_graph(device, self.names, code[0] if inside else None)
        session = read_session(opening, block, self.names, self.supervisors)
        session.retried = retry.flag if retry is not None else None
        own = on_no_server(session, placed=found is not None)
        if own is not None:
            raise Unsupported(opening, own)
        if found is None:
            _refuse_device_from_a_call(block[:block.index(opening)], self.names)
            raise Unsupported(opening, "no `with tf.device(replica_device_setter(...))` graph before the session "
                                       "in the same block: migrate the graph by hand")
        check_graph_argument(session, wrapper, _scope(self.view, opening))
        block = code
        flag = graph.flag
        synchronized = graph.sync_replicas is not None
        summed = synchronized and synchronous.sums(graph.sync_replicas)
        aggregates = synchronous.AGGREGATES[summed]
        local = local_of(device, _scope(self.view, device), self.names)  # trained without a cluster too
        check_local(local, flag, synchronized, device, _scope(self.view, device), session.opening)
        # synchronous or not, where chosen; asynchronous on the cluster, local without
        modes = (True, False) if flag is not None else (False, LOCAL) if local is not None else (synchronized,)
        chooser = flag or local
        before = self._visible_before(device)
        if local is not None:  # the cluster's branch: what it binds is the cluster's
            session.master = session_master(session.master, local)
            before = [*reversed(local.branch.body.body), *before]
        server = self._server(before, session, self.followed.get(id(device)))
        session.mode = read_mode(session, graph)
        if session.mode is not None and local is not None:
            raise Unsupported(session.mode.statement, "a program training without a cluster too chooses in its loop "
                                                      "between training and other runs: migrate it by hand")
        session.written, fetched = summary_writes(loop_statements(session, self.names.api), session.name, graph)
        # (what a Local's cluster branch binds for the session goes with it, as its `else:` does; not the server)
        cluster_branch, unbound = ([s for s in local.branch.body.body if (single_assign(s) or ("",))[0] != server.name],
                                   [local.branch.orelse]) if local is not None else ([], [])
        only = self._only_for_the_session([*block, *outer, *cluster_branch], session, graph, device,
                                          keep_chief=False in modes, also=[*session.written, *fetched, *unbound])
        last_step(session, graph, self.names, only)
        monitored.read(session, self.names, only)
        around = session.opening.body.body if isinstance(session.opening, cst.With) else block
        started = synchronous.chief_start(around, flag, session.name) if flag is not None else []
        # (a Saver made for the session, its Supervisor's or Scaffold's, goes with it)
        started += monitored.saved(session, self.names, [s for s in around if s not in only.values()],
                                   _scope(self.view, session.opening))
        step_reads, step_functions = global_step_reads(around, session, graph, self.names)
        started += step_reads
        outside = [s for s in around if s is not session.loop and s not in started]
        stopped = stop_statements(block, session.owners)
        self.supervisors.check_other_uses(session, [*session.statements, session.loop, *started, *stopped],
                                          _scope(self.view, opening))
        steppings = {True: SYNCHRONOUS, False: SCHEDULED, LOCAL: IN_PROCESS}
        loops = {mode: migrated_loop(session, graph, self.names, outside, steppings[mode]) for mode in modes}
        _, ran, notes, in_loop = loops[False if local is not None else modes[-1]]
        evaluated = evaluations(session, graph, self.names, around[around.index(session.loop) + 1:])
        ended = [(hook, end_hooks.evaluations(hook, session, graph, self.names)) for hook in session.end_hooks]
        at_end = [e for _, found in ended for e in found]
        check_one_tensor([*in_loop, *evaluated, *at_end])
        runs = [*ran, *(s for e in evaluated for s in (e.run, e.held) if s is not None), *(e.run for e in at_end)]
        hook_classes = [hook.definition for hook in session.end_hooks]
        host = host_values(device, graph, self.names, [*block, *session.kept],
                           {id(node) for code in [device, *runs] for node in subtree(code)})
        self._check_names_are_free(block, graph, {id(node) for code in [device, *runs] for node in subtree(code)})
        self._check_graph_stays_in_the_step([*block, *session.kept], graph,
                                            {device, *session.statements, *only.values(), *hook_classes},
                                            [*runs, *step_reads], {device, wrapper})
        for statement in block:
            self._refuse_graph_mode_leftovers(statement)
        graph_statements = list(device.body.body[:device.body.body.index(block[0])]) if inside else [device]
        removed = [*graph_statements, *session.statements, *only.values(), *stopped, *hook_classes]
        if id(device) not in self.followed:  # a followed device's binding goes in device_functions.migrate
            removed += [s for s in device_binding(device, self.view, _scope(self.view, device)) if s not in removed]
        scope = _scope(self.view, device)
        synchronous.check_flag(flag, session.supervisor, scope, [device, *session.statements, *started])
        if id(server.statement) in self.tfos_servers and not synchronized:
            started, note = self.tfos_servers[id(server.statement)]
            self.edits.replace(server.statement, started)
            notes.append(("TFM103", server.statement, note))
        if synchronized:
            notes += synchronous.notes(graph.sync_replicas, session.sync_hook, self.names.code, flag)
            synchronous.without_servers(server, scope, session.master, self.edits, self.names, flag)
        if local is not None:  # the `if` goes with what it bound, or its `else:` alone
            if all(statement in removed for statement in local.branch.body.body):
                removed.append(local.branch)
            else:
                self.edits.expressions[local.branch.orelse] = cst.RemoveFromParent()
        for statement in removed:
            self.edits.remove(statement)
        for function, module_class, home in graph.models:
            if home is None:
                self.edits.replace(function, [module_class])
                removed.append(function)
                continue
            self.other_edits.setdefault(home.module.path, (home.module, ModuleEdits(home.module.view), home.call,
                                                           "makes variables"))[1].replace(function, [module_class])
            self.other_notes.setdefault(home.module.path, []).append((home.module, function, home.note(
                module_class, os.path.basename(self.rewrite.path))))
        for layer, home, call, function in graph.kept:  # kept as TF1 code, run in a Keras layer (model_modules.py)
            self.edits.insert_before(self.view.module_statement_of(device), [layer])
            self.edits.legacy_keras = True  # before TensorFlow is imported
            self.edits.add_import("importlib.metadata")
            self.edits.add_import("os")
            if home is not None:  # its module made TF2's with this one
                self.other_edits.setdefault(home.path, (home, ModuleEdits(home.view), call, "makes variables"))
                self.other_notes.setdefault(home.path, []).append((home, function, model_modules.module_note(
                    function, layer, os.path.basename(self.rewrite.path))))
        for function in [*graph.training_functions, *step_functions]:
            self.edits.remove(function)
            removed.append(function)
        for call in graph.iterated_elsewhere:  # other TF1 graphs read its dataset's batches as they did
            self.edits.expressions[call] = input_functions.iterated_call(self.spelling.spelled(call))
        for batches, pipeline, home in graph.returns:  # a function building the graph's input returns its dataset
            if home is None:
                self.edits.replace(batches, pipeline)
                removed.append(batches)
            else:
                self.other_edits.setdefault(home.path, (home, ModuleEdits(home.view), graph.input_call,
                                                        "builds its input"))[1].replace(
                    batches, pipeline)
        dataset = self._dataset(graph, wrapper or device, outer)
        tensor = next((e.tensor for e in [*in_loop, *evaluated, *at_end]), None)
        returned = step_result(session, graph, self.names.api)
        unled = device.with_changes(leading_lines=[]) if flag is not None else device
        end = "return" if isinstance(scope, cst.FunctionDef) else "raise SystemExit(0)"

        def program(mode: bool) -> list[cst.BaseStatement]:
            head = [] if mode else emit.serve_unless_chief(server.name, session.is_chief, unled, self.names,
                                                           session.elsewhere, end)
            setup = flag.setup_and_check(self.names, aggregates) if flag is not None and mode else []
            if session.mode is not None:  # serving the coordinator where the flag chooses training (modes.py)
                head, chosen = [], (session.mode, head)
            else:
                chosen = None
            return [*setup, *head, *emit.strategy(graph, server, session, dataset, self.names, mode is True, tensor,
                                                   summed, returned, chosen, local=mode == LOCAL,
                                                   master=emit.names_a_master_job(self.view.module))]

        new = _by_mode(chooser, modes, program, device.leading_lines)
        if host:  # made where TF1 made them, before the graph
            new = [*(self.spelling.spelled(statement) for statement in host), *new]
        if inside:
            self.edits.insert_before(device, new)
            self.edits.unwrap(device)
        else:
            self.edits.replace(device, new)
        if wrapper is not None:
            self.edits.unwrap(wrapper)
        elif (holder := graph_block(device, session.opening, self.view, self.names, scope)) is not None:
            self.edits.unwrap(holder)
        if retry is not None:
            self._drop_retries(retry)
        resumed = []
        if session.checkpoints is not None:
            self.edits.add_import("os")
            if True in modes:
                self.edits.add_import("tempfile")
            self._restore_function(device, graph)
            resumed = _by_mode(chooser, modes, lambda mode: emit.checkpoints(graph, session, self.names, RESTORE,
                                                                             mode is True))
        loop = _by_mode(chooser, modes, lambda mode: loops[mode][0])
        self._replace_loop(session, loop, resumed, graph, evaluated, started,
                           [s for hook, found in ended for s in end_hooks.after_the_loop(hook, found,
                                                                                        self.spelling.spelled)])
        for statement in block:
            self._seed(statement)
        self.replaced |= {*removed, *started, *([device.items[0]] if inside else []),
                          *([wrapper.items[0]] if wrapper is not None else [])}
        aggregated = AGGREGATED[summed]
        training = ASYNCHRONOUS_TRAINING if not synchronized else \
            SYNCHRONOUS_TRAINING.format(aggregated=aggregated) if flag is None else \
            synchronous.FLAG_TRAINING.format(flag=self.names.code(flag.test), aggregated=aggregated)
        if local is not None:
            training += LOCAL_TRAINING.format(test=self.names.code(local.branch.test))
        if session.elsewhere is not None:
            training += EXISTING_SERVERS.format(test=self.names.code(session.elsewhere))
        self.notes.append(("TFM103", opening, training))
        self.notes += graph.notes + notes + session.notes + config_notes(session, self.names, only)
        if graph.summaries:
            self.notes.append(("TFM109", graph.summaries[0], SUMMARIES))
        if session.written:
            self.notes.append(("TFM109", session.written[0], SUMMARY_WRITES))
        if session.checkpoints is not None:
            self.trained = {**(self.trained or {}), **{tf1: code for tf1, code in graph.tf1_names.items()
                                                       if tf1 and code in graph.tracked}}
            self.notes.append(("TFM108", session.checkpoints, CHECKPOINTS.format(
                folder=f"os.path.join({self.names.code(session.checkpoints)}, \"tf2\")")))

    def _drop_retries(self, retry: Retry) -> None:
        """The retry loop around the session goes (retry.py)."""
        self.edits.unwrap(retry.loop)
        self.edits.unwrap(retry.attempt)
        for statement in retry.dropped:
            self.edits.remove(statement)
        self.replaced |= {*retry.dropped, *retry.attempt.handlers}
        self.notes.append(("TFM103", retry.loop, RETRIED))

    def _restore_function(self, device: cst.With, graph: Graph) -> None:
        """restore_tf1_checkpoint, once, before the module-level statement holding the graph."""
        for name in RESTORE.values():
            if name in self.view.top_level:
                raise Unsupported(self.view.top_level[name][0], f"the migrated program defines `{name}`, which "
                                                                "this module already has")
        if not self.restore_written:
            top = self.view.module_statement_of(device)
            self.edits.insert_before(top, emit.restore_functions(graph, RESTORE))
            self.restore_written = True

    # -- where the pieces are ---------------------------------------------------------

    def _device(self, opening, block: list) -> tuple[cst.With, list, list, cst.With | None] | None:
        """The device block of the graph, the block holding it, the statements of the session's code (those after
        the graph in the same block, or in the device block itself, after the graph's: _graph_end), and the `with
        tf.Graph().as_default() as graph:` holding nothing but the device block, if it does."""
        scope = _scope(self.view, opening)
        for statement in reversed(block[:block.index(opening)]):
            if is_device_block(statement, self.names, self.followed) or named_device(statement, scope, self.names):
                return statement, block, block, None
            inner = held_by_graph(statement, self.names, scope)
            if inner is not None:
                return inner, block, block, statement
        owner = self.view.parent(self.view.parent(opening))
        if isinstance(owner, cst.With) and is_device_block(owner, self.names, self.followed):
            holder = self.view.parent(owner)
            outer = list(holder.body) if isinstance(holder, (cst.IndentedBlock, cst.Module)) else [owner]
            return owner, outer, block[_graph_end(block, opening, self.names):], None
        return None

    def _visible_before(self, statement: cst.CSTNode) -> list[cst.BaseStatement]:
        """The statements run before ``statement`` in its block and in the blocks around it, nearest first."""
        found, node = [], statement
        while (parent := self.view.parent(node)) is not None:
            if isinstance(parent, (cst.IndentedBlock, cst.Module)) and node in parent.body:
                found += reversed(parent.body[:list(parent.body).index(node)])
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
                break
            node = parent
        return found

    def _server(self, before: list, session: Session,
                followed: device_functions.DeviceFunction | None) -> synchronous.Server:
        """The server of `server = Server(cluster, ...)` whose target the session opened; the one a function
        returns the target of with the graph's device (device_functions.py), which then returns it."""
        target = session.master
        if followed is not None:
            if not is_name(target, followed.target):
                raise Unsupported(session.opening, f"the session's master is not `{followed.target}`, the target "
                                                   f"`{followed.function.name.value}()` returns with the device")
            self.notes += device_functions.migrate(followed, self.edits, _scope(self.view, session.opening))
            name = followed.server
            return synchronous.Server(name, f"{name}.server_def.cluster", f"{name}.server_def.protocol", None)
        name = target.value.value if (
            isinstance(target, cst.Attribute) and target.attr.value == "target"
            and isinstance(target.value, cst.Name)) else None
        if session.elsewhere is not None:  # made only where the servers do not run elsewhere
            before = [s for guard in before if _tests_not(guard, session.elsewhere) for s in guard.body.body]
        for statement in before:
            assign = single_assign(statement)
            if assign and assign[0] == name and isinstance(assign[1], cst.Call) \
                    and self.names.api(assign[1].func) in SERVERS:
                args = bind_arguments(assign[1], SERVER)
                if args is None or "server_or_cluster_def" not in args:
                    raise Unsupported(assign[1], "a Server whose cluster cannot be read statically")
                cluster = args["server_or_cluster_def"][1].value
                protocol = self.names.code(args["protocol"][1].value) if "protocol" in args else '"grpc"'
                job, task = (args[key][1].value if key in args else None for key in ("job_name", "task_index"))
                return synchronous.Server(name, self.names.code(cluster), protocol, statement, job, task)
            started = tfos.cluster_server(statement, name, self.view.module) if name else None
            if started is not None:
                self.tfos_servers[id(started[0].statement)] = started[1:]
                return started[0]
        if name is None:
            raise Unsupported(session.opening, "a session of `server.target` for a `tf.train.Server` is migrated; "
                                               "other masters are not")
        if session.elsewhere is not None:
            test = self.names.code(session.elsewhere)
            raise Unsupported(session.opening, f"the session opens on servers running elsewhere where `{test}`: "
                                               f"migrated where `{name}`, its target otherwise, is a Server made "
                                               f"under `if not {test}:` before the graph; migrate the `if` by hand")
        # A server made elsewhere (a parameter of the training function): the cluster and protocol it serves.
        return synchronous.Server(name, f"{name}.server_def.cluster", f"{name}.server_def.protocol", None)

    def _only_for_the_session(self, block: list, session: Session, graph: Graph, device: cst.With,
                              keep_chief: bool, also: list[cst.CSTNode]) -> dict[str, cst.CSTNode]:
        """name -> `name = value` statements that only make an argument of the session or its Supervisor (hooks, a
        ConfigProto, an init_op, a Saver) or of the device setter (`worker_device = ...`), or of those: they go
        with them. The chief's test stays if asked, the checkpoint folder always."""
        kept = {node.value for node in subtree(session.is_chief) if isinstance(node, cst.Name)} \
            if keep_chief else set()
        # The checkpoint folder stays: the migrated program's checkpoints go there.
        kept |= {node.value for node in subtree(session.checkpoints) if isinstance(node, cst.Name)} \
            if session.checkpoints is not None else set()
        scope = _scope(self.view, session.opening)
        candidates = {}
        for statement in [*block, *graph.session_only.values()]:
            assign = single_assign(statement)
            if assign and assign[0] not in kept:
                candidates[assign[0]] = statement
        # The checkpoints' folder stays: the migrated program's are there.
        folder = {id(node) for node in subtree(session.checkpoints)} if session.checkpoints is not None else set()
        reads = {id(node) for argument in [*session.arguments, *device.items, *also, *fallbacks(device)]
                 for node in subtree(argument)} - folder
        found: dict[str, cst.CSTNode] = {}
        while True:
            more = {name: statement for name, statement in candidates.items() if name not in found
                    and _only_read_in(scope, name, statement, reads)}
            if not more:
                break
            found |= more
            reads |= {id(node) for statement in more.values() for node in subtree(single_assign(statement)[1])}
        found |= holders.only_for_the_session(self.view.module, scope, {
            key: statement for key, statement in graph.session_only.items() if "." in key}, reads)
        found |= {name: statement for name, statement in graph.session_only.items() if name not in found
                  and session.supervisor is None and "." not in name and self.names.api(single_assign(statement)[1].func) in INERT_UNREAD
                  and not any(id(node) not in _target_ids(statement) for node in uses(scope, name))}
        unused = next((name for name, statement in graph.session_only.items() if name not in found), None)
        if unused is not None:
            raise Unsupported(graph.session_only[unused], f"`{unused}` serves a TF1 session: the migrated program "
                                                          "has none; migrate its other uses by hand")
        return found

    # -- checks --------------------------------------------------------------------------

    def _check_names_are_free(self, block: list, graph: Graph, gone: set[int]) -> None:
        """The names the migrated code binds where the block stands are not the program's: used in the block, in
        the function holding it, or bound at module level (a `def train_step` of the program's own). The train op
        (`train_step = opt.minimize(...)`) may have one of them where it goes (``gone``: the graph's nodes and the
        runs')."""
        names = GENERATED_NAMES + (() if graph.optimizer_name else ("optimizer",))
        owner = _scope(self.view, block[0]) if block else self.view.module
        for statement in [*block, *([owner] if isinstance(owner, cst.FunctionDef) else [])]:
            taken = next((node for node in subtree(statement) if isinstance(node, cst.Name) and node.value in names
                          and not (node.value == graph.train_op and id(node) in gone)), None)
            if taken is not None:
                raise Unsupported(taken, f"the migrated program defines `{taken.value}`, which this code already uses")
        bound = next((name for name in names if name in self.view.top_level), None)
        if bound is not None:
            raise Unsupported(self.view.top_level[bound][0], f"the migrated program defines `{bound}`, which this "
                                                             "module already binds")

    def _check_graph_stays_in_the_step(self, block: list, graph: Graph, gone: set, runs: list, placed: set) -> None:
        """The graph's tensors live in the step function now: no code but the session's runs (and the feeds they
        hold) may name them. ``placed``: the device block, and the graph block holding it."""
        tensors = graph.tensors
        skipped = {id(node) for run in runs for node in subtree(run)}
        for statement in block:
            if statement in gone and not isinstance(statement, cst.With) or statement in placed:
                continue
            skipped |= {id(node.keyword) for node in subtree(statement) if isinstance(node, cst.Arg) and node.keyword}
            skipped |= {id(node.attr) for node in subtree(statement) if isinstance(node, cst.Attribute)}
            used = next((node for node in subtree(statement) if isinstance(node, cst.Name) and node.value in tensors
                         and id(node) not in skipped), None)
            if used is not None:
                raise Unsupported(used, f"`{used.value}`, a tensor of the TF1 graph, is used outside the session's "
                                        "run: it only exists in the step function now; migrate that use by hand")

    def _refuse_graph_mode_leftovers(self, statement) -> None:
        for node in subtree(statement):
            if isinstance(node, cst.Call) and self.names.api(node.func) in ADVICE:
                api = self.names.api(node.func)
                raise Unsupported(node, f"{api.rpartition('.')[2]}: {ADVICE[api]}")

    # -- the TF2 program ------------------------------------------------------------------

    def _dataset(self, graph: Graph, device: cst.With, block: list) -> list[cst.BaseStatement]:
        """The statements building the dataset the graph's iterator reads: in the graph, or before it in the
        block; those before it move into the per-worker dataset function."""
        if graph.dataset is None:
            return []
        before = [s for s in block[:block.index(device)] if (single_assign(s) or ("",))[0] == graph.dataset]
        moved = {id(node) for statement in [*before, device] for node in subtree(statement)}
        for name in [graph.dataset, *(name for s in graph.dataset_statements for name in inputs.names_bound(s))]:
            other = next((node for node in uses(_scope(self.view, device), name) if id(node) not in moved), None)
            if other is not None:
                what = "the dataset the graph's iterator reads" if name == graph.dataset else "part of its pipeline"
                raise Unsupported(other, f"`{name}`, {what}, is used elsewhere: it moves into the per-worker "
                                         "dataset function; migrate that use by hand")
        for statement in before:
            self.edits.remove(statement)
        return [*before, *graph.dataset_statements]

    def _replace_loop(self, session: Session, loop: list[cst.BaseStatement], resumed: list[cst.BaseStatement],
                      graph: Graph, evaluated: list[Evaluation], dropped: list[cst.BaseStatement],
                      ended: list[cst.BaseStatement]) -> None:
        """The session's loop, scheduling steps; a checkpoint saved when it ends, then what chief-only hooks did
        at the end (``ended``: end_hooks.py); the runs ``evaluated`` after it.
        Where the session opened (the start of a `with` session's body, which it gives way to), what ``resumed``
        restores. The ``dropped`` statements go."""
        save = []
        if session.checkpoints is not None:
            # Only after a step has the optimizer made the slots of shards part of its checkpoints.
            trained = restores_shard_slots(graph.partitioner, graph.slots)
            save = [cst.parse_statement(f"if int({graph.optimizer_name}.iterations) > restored_steps:\n"
                                        "    manager.save()\n" if trained else "manager.save()\n")]
            if session.mode is not None:  # every worker evaluating on its own (modes.py): the chief saves
                chief = session.is_chief.with_changes(lpar=[], rpar=[])
                save = [cst.If(test=self.spelling.spelled(chief), body=cst.IndentedBlock(save))]
        if session.saved_every is not None:  # no end: the chief saves on TF1's timer
            self.edits.add_import("time")
            loop, save = unlimited.saving(loop, session.saved_every), []
        loop = [loop[0].with_changes(leading_lines=session.loop.leading_lines), *loop[1:], *save, *ended]
        replaced = {e.run: [e.replacement] for e in evaluated}
        replaced |= {e.held: [] for e in evaluated if e.held is not None} | {statement: [] for statement in dropped}
        if isinstance(session.opening, cst.With):
            use = next((node for s in session.opening.body.body if s is not session.loop and s not in replaced
                        for node in subtree(s) if owned(node, session.owners)), None)
            if use is not None:
                raise Unsupported(use, f"`{source(use)}` is used besides the one run of each step: migrate that by "
                                       "hand")
            body = []
            for statement in session.opening.body.body:
                kept = replaced.get(statement, [self.spelling.spelled(statement)])
                body += loop if statement is session.loop else kept
            if resumed:
                body = [*resumed, with_blank_lines(body[0], 1), *body[1:]]
            comments = [line for line in session.opening.leading_lines if line.comment]
            body[0] = body[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *comments])
            self.edits.replace(session.opening, body)
        else:
            # The servers running elsewhere: what that branch did besides opening the session stays.
            kept = [session.opening.with_changes(body=session.opening.body.with_changes(
                body=[self.spelling.spelled(s) for s in session.kept]), orelse=None)] if session.kept else []
            if resumed and not kept:  # where the session opened, restoring TF1's checkpoint
                resumed[0] = resumed[0].with_changes(leading_lines=session.opening.leading_lines)
            if kept or resumed:
                self.edits.replace(session.opening, [*kept, *resumed])
            self.edits.replace(session.loop, loop)
            for statement, new in replaced.items():
                self.edits.replace(statement, new)

    def _seed(self, statement) -> None:
        """`tf1.set_random_seed(s)` -> `tf.random.set_seed(s)`, TF2's global seed."""
        value = statement_value(statement)
        if isinstance(value, cst.Call) and self.names.api(value.func) in SEEDS:
            self.edits.expressions[value.func] = cst.parse_expression("tf.random.set_seed")


def _by_mode(flag, modes: tuple, make, leading_lines=()) -> list[cst.BaseStatement]:
    """``make(mode)``'s statements, or where a flag (or a Local) chooses, `if flag: make(modes[0]) else:
    make(modes[1])`."""
    if flag is None:
        return make(modes[0])
    return [flag.branches(make(modes[0]), make(modes[1]), leading_lines)]


def _refuse_device_from_a_call(before: list, names: Names) -> None:
    """The graph's `with tf.device(device):` before the session, ``device`` bound by a call in the same block
    (`device, target = device_and_target()`): the replica_device_setter that call makes is not followed."""
    for statement in reversed(before):
        if not (isinstance(statement, cst.With) and len(statement.items) == 1):
            continue
        call = statement.items[0].item
        if not (isinstance(call, cst.Call) and names.api(call.func) == "device" and len(call.args) == 1
                and isinstance(call.args[0].value, cst.Name)):
            continue
        device = call.args[0].value.value
        made = next((value for s in reversed(before[:before.index(statement)])
                     if (value := statement_value(s)) is not None and isinstance(value, cst.Call)
                     and isinstance(s.body[0], cst.Assign) and device in _assigned(s.body[0])), None)
        if made is not None:
            raise Unsupported(statement, f"the graph's device `{device}` comes from `{names.code(made)}`: a "
                                         "replica_device_setter made there is not followed (one a function of this "
                                         "module returns with its server's target is); write `with tf.device(tf.train."
                                         "replica_device_setter(...)):` here, or migrate the graph by hand")
        return


def _assigned(assign: cst.Assign) -> set[str]:
    """The names `a, b = ...` or `a = ...` binds."""
    found = set()
    for target in assign.targets:
        node = target.target
        elements = [e.value for e in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]
        found |= {e.value for e in elements if isinstance(e, cst.Name)}
    return found


def _tests_not(statement, test: cst.BaseExpression) -> bool:
    """`if not <test>:` without an `else`."""
    return (isinstance(statement, cst.If) and statement.orelse is None
            and isinstance(statement.test, cst.UnaryOperation) and isinstance(statement.test.operator, cst.Not)
            and statement.test.expression.deep_equals(test))


def _graph_end(body: list, opening: cst.BaseStatement, names: Names) -> int:
    """Where the graph ends in a device block that also holds the session's code: after the train op's
    `minimize`, at the first statement that is not one of TensorFlow's calls (`init_op = tf.global_variables_
    initializer()` is the graph's, `train_dir = tempfile.mkdtemp()` the session's) or an `if` making a
    SyncReplicasOptimizer's machinery, and at the latest where the session opens."""
    at = body.index(opening)
    minimized = next((i for i, s in enumerate(body[:at]) if any(
        isinstance(node, cst.Attribute) and node.attr.value == "minimize" for node in subtree(s))), None)
    if minimized is None:
        return at
    return next((i for i in range(minimized + 1, at) if not (
        isinstance(value := statement_value(body[i]), cst.Call) and names.api(value.func) is not None
        or synchronous.makes_machinery(body[i]))), at)


def _statements(module):
    """Every statement of the module (or of a block's statements), however nested, with the statements of its
    block."""
    stack: list[list] = [list(getattr(module, "body", module))]
    while stack:
        block = stack.pop()
        for statement in block:
            yield statement, block
            stack += [list(child.body) for child in _blocks(statement)]


def _blocks(node: cst.CSTNode) -> list[cst.IndentedBlock]:
    """The indented blocks right below ``node`` (not those inside them)."""
    found = []
    for child in children(node):
        if isinstance(child, cst.IndentedBlock):
            found.append(child)
        elif not isinstance(child, cst.BaseStatement) or child is getattr(node, "orelse", None):  # `elif`
            found += _blocks(child)
    return found


def _scope(view: ModuleView, node: cst.CSTNode) -> cst.CSTNode:
    """The function (or module) ``node`` is in."""
    scope = view.parent(node)
    while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
        scope = view.parent(scope)
    return scope


def _target_ids(statement: cst.BaseStatement) -> set[int]:
    return {id(node) for node in subtree(statement.body[0].targets[0])}


def _only_read_in(scope: cst.CSTNode, name: str, statement: cst.BaseStatement, reads: set[int]) -> bool:
    """``statement`` binds ``name``, which is read, and only in the nodes of ``reads``."""
    target = _target_ids(statement)
    found = [node for node in uses(scope, name) if id(node) not in target]
    return bool(found) and all(id(node) in reads for node in found)
