"""A MonitoredTrainingSession's scaffold and hooks: what each did in TF1's session, and what of it the migrated
program does.

``scaffold=tf.train.Scaffold(...)``: ``init_op`` / ``local_init_op`` / ``ready_op`` /
``ready_for_local_init_op`` of the initializers and readiness checks TF1 made by default (the
variables are created with their values in TF2, so there is nothing to do), ``saver=tf.train.Saver(
max_to_keep=N, keep_checkpoint_every_n_hours=H)`` (the CheckpointManager's own options),
``summary_op=tf.summary.merge_all()`` (the summaries TF1 wrote: TFM109 says what to do). Hooks besides
StopAtStepHook (session.py) and SyncReplicasOptimizer's (synchronous.py): a SummarySaverHook (TFM109,
as summaries), a CheckpointSaverHook into the session's checkpoint folder (its saver as the scaffold's), in
``hooks`` or ``chief_only_hooks``, which TF1 ran on the chief: the migrated program's chief, its coordinator,
saves the checkpoints. A chief-only hook of the module's own only evaluating the graph when the session ends
(end_hooks.py) runs on the chief after the loop. Anything else, and any other argument, stays manual, named in the
TFM104.

Beside the loop of any session (``saved``): a ``saver = tf.train.Saver(...)`` of every variable whose one use is
``saver.save(sess, <the session's checkpoint folder>)`` after the loop is the CheckpointManager's save when
training ends; ``sess.graph._unsafe_unfinalize()`` (which let TF1 add ops to a finalized graph) has nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from rewrites.between_graph import end_hooks, graph_calls
from rewrites.syntax import (Unsupported, bind_arguments, holder, is_name, list_elements, single_assign, source,
                             statement_value, subtree)

SCAFFOLD_API = "train.Scaffold"
SCAFFOLD = ("init_op", "init_feed_dict", "init_fn", "ready_op", "ready_for_local_init_op", "local_init_op",
            "summary_op", "saver", "copy_from_scaffold", "local_init_feed_dict")
SAVER = ("var_list", "reshape", "sharded", "max_to_keep", "keep_checkpoint_every_n_hours", "name",
         "restore_sequentially", "saver_def", "builder", "defer_build", "allow_empty", "write_version",
         "pad_step_number", "save_relative_paths", "filename")
# Saver options the CheckpointManager has; those that only say how TF1 wrote its files.
MANAGER_OPTIONS = ("max_to_keep", "keep_checkpoint_every_n_hours")
SAVER_FORMAT = ("sharded", "write_version", "save_relative_paths")
GLOBAL_INIT = {"global_variables_initializer", "initialize_all_variables"}
LOCAL_INIT = {"local_variables_initializer", "initialize_local_variables"}
READY = {"report_uninitialized_variables"}
# A scaffold's op -> what TF2 needs no counterpart of: the ops TF1 made by default (or their group).
DEFAULT_OPS = {"init_op": GLOBAL_INIT | LOCAL_INIT, "local_init_op": LOCAL_INIT, "ready_op": READY,
               "ready_for_local_init_op": READY}
SUMMARY_HOOK = ("save_steps", "save_secs", "output_dir", "summary_writer", "scaffold", "summary_op")
CHECKPOINT_HOOK = ("checkpoint_dir", "save_secs", "save_steps", "saver", "checkpoint_basename", "scaffold",
                   "listeners", "save_graph_def")
SUMMARIES = ("{what} wrote TF1's summaries: the migrated program writes none; log from the loop with a "
             "tf.summary.create_file_writer on the chief if you need them")


def read(session, names, only_for_session: dict[str, cst.BaseStatement]) -> None:
    """The session's scaffold and chief-only hooks: ``session.manager`` gets the Saver's options, ``session.notes``
    what the program does without; what cannot be carried over raises Unsupported."""
    if session.scaffold is not None:
        _scaffold(session, names, bound(session.scaffold, only_for_session), only_for_session)
    for hook in list_elements(bound(session.chief_hooks, only_for_session), "chief_only_hooks"):
        hook = bound(hook, only_for_session)
        if (definition := end_hooks.hook_class(names, hook)) is not None:
            session.end_hooks.append(end_hooks.read(names, hook, definition))
            session.notes.append(("TFM103", definition, end_hooks.ENDED.format(name=definition.name.value)))
            continue
        if not isinstance(hook, cst.Call) or names.api(hook.func) not in HOOKS:
            raise Unsupported(hook, f"a chief-only hook other than {_kinds()}: "
                                    "rewrite it as code around the migrated loop (on the chief, which drives it) by "
                                    "hand")
        other_hook(session, names, hook, only_for_session)


def other_hook(session, names, hook: cst.Call, only_for_session: dict[str, cst.BaseStatement]) -> None:
    """A hook of ``hooks`` or ``chief_only_hooks`` besides StopAtStepHook and SyncReplicasOptimizer's."""
    api = names.api(hook.func)
    if api not in HOOKS:
        name = source(hook.func) if isinstance(hook, cst.Call) else source(hook)
        raise Unsupported(hook, f"`{name}`: a hook other than StopAtStepHook(last_step=...), {_kinds()}: rewrite "
                                "it as code around the migrated loop by hand")
    HOOKS[api](session, names, hook, only_for_session)


def bound(node, only_for_session: dict[str, cst.BaseStatement]):
    """The value of a name bound only for the session, or the node."""
    if isinstance(node, cst.Name) and node.value in only_for_session:
        return single_assign(only_for_session[node.value])[1]
    return node


def _scaffold(session, names, scaffold, only_for_session) -> None:
    if not (isinstance(scaffold, cst.Call) and names.api(scaffold.func) == SCAFFOLD_API):
        raise Unsupported(scaffold, "a scaffold other than tf.train.Scaffold(...) made for the session: migrate it "
                                    "by hand")
    args = bind_arguments(scaffold, SCAFFOLD)
    if args is None:
        raise Unsupported(scaffold, "Scaffold arguments that cannot be read statically")
    for key, (_, arg) in args.items():
        value = bound(arg.value, only_for_session)
        if key in DEFAULT_OPS and _of_default_ops(value, DEFAULT_OPS[key], names):
            continue
        if key == "saver":
            _saver(session, names, value)
        elif key == "summary_op" and isinstance(value, cst.Call) and names.api(value.func) == "summary.merge_all":
            session.notes.append(("TFM109", arg.value, SUMMARIES.format(what="Scaffold(summary_op=...)")))
        else:
            raise Unsupported(arg.value, f"Scaffold({key}=...) is not migrated: TF2 creates the variables with their "
                                         "values; do its work around the migrated loop by hand")


def _of_default_ops(value, apis: set[str], names) -> bool:
    """``value`` is one of ``apis``' calls, or `tf.group(...)` of them."""
    if not isinstance(value, cst.Call):
        return False
    if names.api(value.func) == "group":
        return bool(value.args) and all(arg.keyword is None and _of_default_ops(arg.value, apis, names)
                                        for arg in value.args)
    return names.api(value.func) in apis and not value.args


def _saver(session, names, saver) -> None:
    """`tf.train.Saver(max_to_keep=N, ...)` of every variable: the CheckpointManager keeps as many."""
    args = _saver_arguments(names, saver)
    for key in MANAGER_OPTIONS:
        if key in args:
            session.manager[key] = names.code(args[key][1].value)


def _saver_arguments(names, saver) -> dict:
    """The arguments of a `tf.train.Saver(...)` of every variable, written the way the migrated checkpoints are."""
    if not (isinstance(saver, cst.Call) and names.api(saver.func) == "train.Saver"):
        raise Unsupported(saver, "a saver other than tf.train.Saver(...) made for the session: migrate it by hand")
    args = bind_arguments(saver, SAVER)
    other = next((key for key in args or () if key not in (*MANAGER_OPTIONS, *SAVER_FORMAT)), None)
    if args is None or other is not None:
        raise Unsupported(saver, f"Saver({other}=...) is not migrated: the migrated checkpoints hold every variable "
                                 "and the optimizer; migrate it by hand" if other else "Saver arguments that cannot "
                                 "be read statically")
    return args


def _summary_hook(session, names, hook: cst.Call, only_for_session) -> None:
    if bind_arguments(hook, SUMMARY_HOOK) is None:
        raise Unsupported(hook, "SummarySaverHook arguments that cannot be read statically")
    session.notes.append(("TFM109", hook, SUMMARIES.format(what="SummarySaverHook")))


def _checkpoint_hook(session, names, hook: cst.Call, only_for_session) -> None:
    """A CheckpointSaverHook into the session's checkpoint folder: the migrated program's checkpoints, saved when
    training ends."""
    args = bind_arguments(hook, CHECKPOINT_HOOK)
    if args is None or "checkpoint_dir" not in args:
        raise Unsupported(hook, "CheckpointSaverHook arguments that cannot be read statically")
    other = next((key for key in args if key not in ("checkpoint_dir", "save_secs", "save_steps", "saver")), None)
    if other is not None:
        raise Unsupported(args[other][1], f"CheckpointSaverHook({other}=...) is not migrated: migrate it by hand")
    folder = args["checkpoint_dir"][1].value
    if session.checkpoints is None or not folder.deep_equals(session.checkpoints):
        raise Unsupported(folder, "a CheckpointSaverHook into another folder than the session's checkpoint_dir (which "
                                  "it resumes from): the migrated program keeps one CheckpointManager; migrate it by "
                                  "hand")
    if "saver" in args:
        _saver(session, names, bound(args["saver"][1].value, only_for_session))


def _kinds() -> str:
    """The hooks of the table, by their class names: `SummarySaverHook and CheckpointSaverHook`."""
    return " and ".join(api.rpartition(".")[2] for api in HOOKS)


HOOKS: dict[str, Callable] = {"train.SummarySaverHook": _summary_hook, "train.CheckpointSaverHook": _checkpoint_hook}


NO_QUEUES = ("`{code}` started the queue runners of TF1's graph, which this program has none of: the migrated "
             "program has no graph; it is dropped")
UNFINALIZED = ("`{code}` let TF1 add ops to the session's finalized graph: the migrated program has no graph to "
               "finalize; it is dropped")
SAVED = ("`{code}` after the loop: the migrated program's CheckpointManager saves when training ends, on the chief "
         "(into os.path.join({folder}, \"tf2\"), where TF1 wrote the prefix {folder} from every worker)")


def saved(session, names, around: list, scope: cst.CSTNode) -> list[cst.BaseStatement]:
    """The statements ``around`` the session's loop that save its variables when it ends, or that only served TF1's
    graph: dropped, with a note each (``session.notes``)."""
    dropped = []
    after = around[around.index(session.loop) + 1:]
    for statement in around:
        value = statement_value(statement)
        if _is_unfinalize(value, session.name):
            session.notes.append(("TFM103", statement, UNFINALIZED.format(code=names.code(value))))
            dropped.append(statement)
        if _starts_no_queue(value, session, names):
            session.notes.append(("TFM103", statement, NO_QUEUES.format(code=names.code(value))))
            dropped.append(statement)
        assign = single_assign(statement)
        if assign and isinstance(assign[1], cst.Call) and names.api(assign[1].func) == "train.Saver":
            dropped += _saved_at_the_end(session, names, statement, assign, after, scope)
    return dropped


def _starts_no_queue(value, session, names) -> bool:
    """`sv.start_queue_runners(sess)` of the session's Supervisor, in a module that makes no TF1 input queue (its
    graph's queue input, if any, became a tf.data dataset): TF1 started no runner there."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and session.supervisor is not None
            and value.func.attr.value == "start_queue_runners" and holder(value.func.value) in session.owners
            and len(value.args) == 1 and is_name(value.args[0].value, session.name)):
        return False
    module = names.module.tree
    return module is not None and not any(isinstance(node, cst.Call) and (api := names.api(node.func)) is not None
                                          and graph_calls.reads_queues(api) for node in subtree(module))


def _is_unfinalize(value, name: str) -> bool:
    """`sess.graph._unsafe_unfinalize()`"""
    return (isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "_unsafe_unfinalize" and isinstance(value.func.value, cst.Attribute)
            and value.func.value.attr.value == "graph" and is_name(value.func.value.value, name))


def _saved_at_the_end(session, names, statement, assign, after: list, scope: cst.CSTNode) -> list:
    """`saver = tf.train.Saver(...)` and its one `saver.save(sess, folder)` after the loop, into the folder the
    migrated program checkpoints in."""
    name, saver = assign
    _saver_arguments(names, saver)  # its max_to_keep does not matter: it saves once
    uses = [node for node in subtree(scope) if is_name(node, name)]
    saves = [s for s in after if _saves(statement_value(s), name, session.name)]
    if len(uses) != 2 or len(saves) != 1:
        raise Unsupported(saver, f"`{name}` is migrated where its one use is `{name}.save({session.name}, folder)` "
                                 "after the loop; migrate its other uses by hand")
    folder = statement_value(saves[0]).args[1].value
    if session.checkpoints is None or not folder.deep_equals(session.checkpoints):
        raise Unsupported(saves[0], f"`{name}.save` into another folder than the session's checkpoints "
                                    "(the migrated program keeps one CheckpointManager there): migrate it by hand")
    session.notes.append(("TFM108", saves[0], SAVED.format(code=names.code(statement_value(saves[0])),
                                                           folder=names.code(folder))))
    return [statement, saves[0]]


def _saves(value, saver: str, session: str) -> bool:
    """`saver.save(sess, folder)`"""
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "save"
            and is_name(value.func.value, saver) and len(value.args) == 2
            and all(arg.keyword is None and arg.star == "" for arg in value.args)
            and is_name(value.args[0].value, session))
