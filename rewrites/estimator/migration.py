"""One run of the Estimator family over the modules of a program: discover, read, check, emit, spell.

Each pipeline is migrated whole or not at all: its edits are collected on their own and kept
only when every piece read and every check passed. The modules the kept edits touch are then
made TF2 modules (rewrites/program/spelling.py), and each file of a program gets a finding
naming the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites import suppressions
from rewrites.estimator import eval_loss, faithful_emit, faithful_keras
from rewrites.estimator import faithful_regularization as regularization
from rewrites.estimator import faithful_tables
from rewrites.estimator.discover import Discovery, Pipeline
from rewrites.estimator.emit import Emitter
from rewrites.estimator.explicit_graphs import graph_blocks
from rewrites.estimator.faithful import variable_made_elsewhere
from rewrites.estimator.read import ProgramReader
from rewrites.program.edits import ModuleEdits
from rewrites.program.modules import ModuleView, Tree
from rewrites.program.spelling import Spelling
from rewrites.program.values import Values
from rewrites.suppressions import needed
from rewrites.syntax import Unsupported, source, subtree

MAIN = "Estimator program -> Keras fit under ParameterServerStrategy{}; prove it with tf-migrate parity"
EVAL_LOSS = "; Keras averages the eval loss per example (TF1 per batch: differs with a short last batch)"


@dataclass
class Reported:
    """A finding of the family: rule, module, node, message."""

    rule: str
    view: ModuleView
    node: cst.CSTNode
    message: str


@dataclass
class Outcome:
    texts: dict[str, str] = field(default_factory=dict)        # path -> new code, for the modules changed
    findings: list[Reported] = field(default_factory=list)
    programs: list[list[str]] = field(default_factory=list)    # the files of each program migrated, its entry first
    suppressed: list[Reported] = field(default_factory=list)   # findings a `# tf-migrate: ignore` comment suppressed


class Suppressed(Exception):
    """A program whose TFM301 finding a comment suppresses: left as it is."""


class Migration:
    def __init__(self, tree: Tree, enabled: frozenset[str], keras: str) -> None:
        self.tree, self.enabled, self.keras = tree, enabled, keras
        self.values = Values(called_at_once=frozenset({"train", "evaluate"}))
        self._spellings: dict[int, Spelling] = {}
        self.edits: dict[int, ModuleEdits] = {}
        self.respelled: dict[int, ModuleView] = {}  # helper modules of tier-2 model_fns, made TF2 as they are
        self.written: dict[int, dict[str, str]] = {}  # module-level code the programs migrated so far defined
        self.outcome = Outcome()
        self._reported: set[tuple] = set()

    def spelling(self, view: ModuleView) -> Spelling:
        if id(view) not in self._spellings:
            self._spellings[id(view)] = Spelling(view)
        return self._spellings[id(view)]

    def run(self) -> Outcome:
        discovery = Discovery(self.tree, self.values)
        taken, reported = set(), set()
        for pipeline in discovery.pipelines():
            if isinstance(pipeline, Unsupported):
                self._manual(pipeline, None)
                continue
            reported.add(id(pipeline.estimator.node))
            try:
                self._migrate(pipeline, discovery)
                taken.add(id(pipeline.estimator.node))
            except Unsupported as problem:
                self._manual(problem, pipeline)
            except Suppressed:  # left as it is, as its comment asks
                pass
        for view, node, why in discovery.leftovers(taken, reported):
            if not self._replaced(view, node):  # an Estimator of a branch never taken, in a factory that went
                self._report("TFM302", view, node, why)
        for view in self._edited_views():
            self._make_tf2(view)
        for edits in self.edits.values():
            self.outcome.texts[edits.view.path] = edits.apply()
        return self.outcome

    # -- one pipeline ---------------------------------------------------------------------

    def _migrate(self, pipeline: Pipeline, discovery: Discovery) -> None:
        if "TFM301" not in self.enabled:
            driver = pipeline.drivers[0].call
            raise Unsupported(driver.node, "TFM301 (estimator-program) is switched off", driver.view.path)
        program, plans = ProgramReader(self.values, self.spelling, discovery,
                                       faithful="TFM310" in self.enabled).read(pipeline)
        emitter = Emitter(self.values, self.spelling, self.keras, self.written)
        emitter.emit(program, plans)
        from rewrites.estimator.checks import check_program

        check_program(self.tree, program, plans, emitter)
        others = [view.path for view in program.views if view is not program.place.view]
        findings = [*self._program_findings(program, plans, others), *program.notes]
        findings += self._module_findings(program, emitter, findings)
        if any(self._suppressed(main) for main in findings if main.rule == "TFM301"):
            raise Suppressed()
        blocker = next((note for note in program.notes if note.rule not in self.enabled or self._suppressed(note)),
                       None)
        if blocker is not None:
            raise Unsupported(blocker.node, needed(blocker.rule, self.enabled, blocker.message), blocker.view.path)
        for edits in emitter.edits.values():
            done = self._edits(edits.view)
            graph_code = {node for view, node in program.graph_code if view is edits.view} | graph_blocks(edits.view)
            self._check_tf2(edits.view, {*done.statements, *done.expressions, *edits.statements, *edits.expressions},
                            graph_code)
        helpers = self._helper_modules(program, emitter)
        for view in helpers:
            self._check_tf2(view, set(), set())
            elsewhere = regularization.read_elsewhere(view) or faithful_tables.partitioned_elsewhere(view) \
                or faithful_keras.keras_made_elsewhere(view) or variable_made_elsewhere(view)
            if elsewhere is not None:
                raise elsewhere
        for edits in emitter.edits.values():
            self._edits(edits.view).merge(edits)
        for view_id, defined in emitter.defined.items():
            self.written.setdefault(view_id, {}).update(defined)
        for view in helpers:
            self.respelled[id(view)] = view
            how = "respelled for TF2" if _respelled(self.spelling(view)) else "unchanged (TF2 runs it as it is)"
            findings.append(Reported("TFM310", view, _tensorflow_import(view),
                                     f"part of the Estimator program driven in {program.place.view.path}: TF1 code "
                                     f"its model_fn kept as written (tier 2) runs, {how}{_dependencies(view)}"))
        self.outcome.programs.append([program.place.view.path, *others])
        for finding in findings:
            self._report(finding.rule, finding.view, finding.node, finding.message)

    def _program_findings(self, program, plans, others: list[str]) -> list[Reported]:
        """The TFM301 findings of a migrated program: at its first driver, and at its model_fn in another module."""
        with_others = f" (with {', '.join(others)})" if others else ""
        # The Keras model of a model_to_estimator keeps its own compile: Keras' loss, without TF1EvalLoss.
        differs = program.setup.model_fn.keras is not None and eval_loss.needed(plans)
        found = [Reported("TFM301", program.place.view, plans[0].driver.statement,
                          MAIN.format(EVAL_LOSS if differs else "") + with_others)]
        model_fn = program.setup.model_fn
        if model_fn.canned is not None and model_fn.view is not program.place.view:
            found.append(Reported("TFM301", model_fn.view, model_fn.reference.node,
                                  f"canned {model_fn.canned} -> `{model_fn.new_name}`, its Keras model, for the "
                                  f"Estimator program driven in {program.place.view.path}"))
        elif model_fn.keras is not None:  # a factory of another module that returned model_to_estimator(...)
            if model_fn.function is not None and model_fn.view is not program.place.view:
                found.append(Reported("TFM301", model_fn.view, model_fn.function,
                                      f"`{model_fn.function.name.value}` -> `{model_fn.new_name}`: returns its "
                                      "compiled Keras model (model_to_estimator goes), for the Estimator program "
                                      f"driven in {program.place.view.path}"))
        elif model_fn.view is not program.place.view:
            found.append(Reported("TFM301", model_fn.view, model_fn.function,
                                  f"model_fn `{model_fn.function.name.value}` -> `{model_fn.new_name}`, the Keras "
                                  f"model of the Estimator program driven in {program.place.view.path}"))
        faithful = program.setup.model.faithful
        if faithful is not None:
            found.append(Reported("TFM310", model_fn.view, model_fn.function, faithful_emit.finding(faithful)))
        return found

    @staticmethod
    def _module_findings(program, emitter: Emitter, findings: list[Reported]) -> list[Reported]:
        """A TFM301 finding in each other module the migration edits where none is yet (an input function's module:
        its iterator made a dataset), so that no file changes without a finding saying why."""
        explained = {id(finding.view) for finding in findings}
        found = []
        for edits in emitter.edits.values():
            nodes = [*edits.statements, *edits.before, *edits.expressions]
            if id(edits.view) in explained or not nodes:
                continue
            first = min(nodes, key=edits.view.position)
            found.append(Reported("TFM301", edits.view, first, f"part of the Estimator program driven in "
                                                              f"{program.place.view.path}, migrated with it"))
        return found

    def _edits(self, view: ModuleView) -> ModuleEdits:
        if id(view) not in self.edits:
            self.edits[id(view)] = ModuleEdits(view)
        return self.edits[id(view)]

    def _replaced(self, view: ModuleView, node: cst.CSTNode) -> bool:
        """Is ``node`` in a statement a migrated program removed or replaced?"""
        edits = self.edits.get(id(view))
        return edits is not None and any(id(ancestor) in {id(s) for s in edits.statements}
                                         for ancestor in (node, *view.ancestors(node)))

    def _edited_views(self) -> list[ModuleView]:
        edited = {id(edits.view): edits.view for edits in self.edits.values() if edits}
        return list({**edited, **self.respelled}.values())

    def _helper_modules(self, program, emitter: Emitter) -> list[ModuleView]:
        """The modules of the files given that a model_fn kept as written (tier 2) imports, directly or through
        another, and the migration does not edit: their TF1 code runs in the Keras model, so it is respelled."""
        if program.setup.model.faithful is None:
            return []
        edited = {id(edits.view) for edits in emitter.edits.values() if edits}
        start = program.setup.model_fn.view
        found, queue = {id(start): start}, [start]
        while queue:
            view = queue.pop()
            for node in subtree(view.module):
                if not isinstance(node, (cst.Import, cst.ImportFrom)) or isinstance(node.names, cst.ImportStar):
                    continue
                for alias in node.names:
                    other = view.tree.import_target(view, node, alias)[0].view
                    if other is not None and id(other) not in found:
                        found[id(other)] = other
                        queue.append(other)
        return [view for key, view in found.items() if key not in edited and view.imported("tf")]

    def _check_tf2(self, view: ModuleView, removed: set[cst.CSTNode], graph_code: set[cst.CSTNode]) -> None:
        """Can the module become TF2 once the ``removed`` code is gone (statements, replaced expressions)? The
        ``graph_code`` the migrated program runs in a TF1 graph may use graph mode's APIs. (Checked for each
        program, so that a program is migrated whole or not at all.)"""
        blocker = self.spelling(view).graph_only_use(removed | graph_code)
        if blocker is not None:
            raise Unsupported(blocker, f"`tf.{view.api(blocker)}` still needs TF1's graph mode, which Keras training "
                                       "does not run in: migrate it by hand", view.path)
        gone = self.spelling(view).gone_use(removed)
        if gone is not None:
            raise Unsupported(gone, f"`tf.{view.api(gone)}` is gone in TF 2, so the migrated program could not run: "
                                    "replace it (tf_slim for slim and contrib.layers, tf.keras, tensorflow_addons), "
                                    "then run tf-migrate again", view.path)

    def _make_tf2(self, view: ModuleView) -> None:
        """The module's `tf` becomes TF2, its TF1 references respelled, graph mode switched off."""
        spelling = self.spelling(view)
        edits = self._edits(view)
        for statement in spelling.graph_mode_switches():
            edits.remove(statement)
        rebinding = spelling.rebinding
        for statement in rebinding.reassignments:
            edits.remove(statement)
        tf2_import = cst.Import(names=[cst.ImportAlias(name=cst.Name("tensorflow"), asname=cst.AsName(cst.Name("tf")))])
        for statement in rebinding.imports:
            edits.expressions[statement] = tf2_import
        for block in rebinding.blocks:
            edits.replace(block, [] if rebinding.plain_import else [
                cst.SimpleStatementLine([tf2_import], leading_lines=block.leading_lines)])
        for node, new in spelling.all_references().items():
            edits.expressions.setdefault(node, new)

    # -- findings -----------------------------------------------------------------------------

    def _manual(self, problems: Unsupported, pipeline: Pipeline | None) -> None:
        """A TFM302 finding for each thing that stops the program (and one at its driver for those elsewhere)."""
        for problem in problems.every():
            self._one_manual(problem, pipeline)

    def _one_manual(self, problem: Unsupported, pipeline: Pipeline | None) -> None:
        view = self.tree.view(problem.path) if problem.path else (pipeline.place.view if pipeline else None)
        if view is None:
            return
        node = problem.node if _in(view, problem.node) else (pipeline.drivers[0].call.node if pipeline else
                                                              view.module)
        self._report("TFM302", view, node, f"Estimator program left as it is: {problem}")
        if pipeline is not None and view is not pipeline.place.view:
            line, col = view.position(node)
            self._report("TFM302", pipeline.place.view, pipeline.drivers[0].call.node,
                         f"Estimator program left as it is: see {view.path}:{line}:{col}")

    def _report(self, rule: str, view: ModuleView, node: cst.CSTNode, message: str) -> None:
        finding = Reported(rule, view, node, message)
        key = (rule, id(view), id(node), message)
        if rule in self.enabled and key not in self._reported and not self._suppressed(finding):
            self._reported.add(key)
            self.outcome.findings.append(finding)

    def _suppressed(self, finding: Reported) -> bool:
        """Does a `# tf-migrate: ignore` comment suppress ``finding`` (then counted as suppressed)?"""
        found = suppressions.of(self.tree.sources.get(finding.view.path, ""))
        if found is None or finding.rule not in self.enabled:
            return False
        if not found.covers(finding.rule, finding.view.position(finding.node)[0]):
            return False
        if finding not in self.outcome.suppressed:
            self.outcome.suppressed.append(finding)
        return True


def _in(view: ModuleView, node: cst.CSTNode) -> bool:
    try:
        view.position(node)
        return True
    except KeyError:
        return False


def _respelled(spelling: Spelling) -> bool:
    """Does making the module TF2 change it?"""
    rebinding = spelling.rebinding
    return bool(rebinding.imports or rebinding.reassignments or rebinding.blocks or spelling.all_references()
                or spelling.graph_mode_switches())


def _dependencies(view: ModuleView) -> str:
    """What the migrated program needs installed beside TensorFlow, for the module's kept code."""
    for node in subtree(view.module):
        names = [alias.evaluated_name for alias in node.names] if isinstance(node, cst.Import) else \
            [source(node.module)] if isinstance(node, cst.ImportFrom) and node.module and not node.relative else []
        if any(name == "tf_slim" or name.startswith("tf_slim.") for name in names):
            return "; it needs the tf-slim package (`pip install tf-slim`)"
    return ""


def _tensorflow_import(view: ModuleView) -> cst.CSTNode:
    """The statement importing TensorFlow as `tf` (the module, if it cannot be told)."""
    for statement in view.module.body:
        for small in getattr(statement, "body", ()):
            if isinstance(small, (cst.Import, cst.ImportFrom)) and "tf" in {
                    alias.evaluated_alias for alias in small.names if isinstance(alias, cst.ImportAlias)}:
                return statement
    return view.module
