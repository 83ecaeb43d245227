"""Drivers outside the function that trains the Estimator, and what the program reads of the Estimator besides.

The Keras model (and the predictor that ``predict`` uses) is bound where the Estimator is trained: the one
function, or module level, holding its ``train`` / ``train_and_evaluate`` (the pipeline's place). A driver
elsewhere is migrated when it sees that binding:

- in a function defined there (at module level: a function of the module) reading the Estimator's own name,
  which is called there only after the set-up: it reads the model and the predictor by closure (or as globals);
- at a caller of the training function that ends with ``return estimator``: the function returns what its
  callers' drivers use instead (the model for ``evaluate``, the predictor for ``predict``), and each caller
  binds that where it bound the Estimator. Every call of the function among the files given is checked.

What the program reads of the Estimator becomes the code TF1 computed it with: ``estimator.eval_dir()`` is
``os.path.join(model_dir, "eval")`` (``"eval_" + name`` for a named evaluation, tensorflow_estimator's
``Estimator.eval_dir``), ``estimator.model_dir`` the model_dir the program gave it.

Before::

    estimator = tf.estimator.Estimator(model_fn, "results/model", config, params)
    Path(estimator.eval_dir()).mkdir(parents=True, exist_ok=True)
    tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

    def write_predictions(name):
      for prediction in estimator.predict(functools.partial(input_fn, name)):
        ...

After::

    Path(os.path.join("results/model", "eval")).mkdir(parents=True, exist_ok=True)
    ...  # the set-up: model, predictor = build_model(...) in strategy.scope(), fit and evaluate

    def write_predictions(name):
      for prediction in predict_examples(predictor, functools.partial(input_fn, name)(params=params)):
        ...

A driver that cannot see the model (in a function elsewhere, reading a name bound again, called before the
set-up) leaves the program with a TFM302 finding saying how to drive it instead.
"""

from __future__ import annotations

import builtins

import libcst as cst
from libcst.metadata import Assignment, ScopeProvider

from rewrites.estimator.config import RUN_CONFIGS, run_config_arguments
from rewrites.estimator.program import Driver, Handoff, Program
from rewrites.program.modules import ModuleView
from rewrites.program.places import Binding, Place, Value
from rewrites.program.relocation import function_scope, relocate
from rewrites.program.values import Values, own_nodes
from rewrites.syntax import Unsupported, bind_arguments, first_line, is_none, source, subtree

TRAINING = ("train", "train_and_evaluate")
ATTRIBUTES = ("eval_dir", "model_dir")  # what the migrated program computes of an Estimator
RETURNED = (("model", "evaluate"), ("predictor", "predict"))  # what a training function returns, for which driver
CALLER_NAMES = ("model", "predictor", "eval_dataset", "eval_steps", "eval_result")


def arrange(values: Values, found: list[tuple[Driver, Value, list]]) -> tuple[Place, Value, list[Driver], list]:
    """The place of the Keras model (where the Estimator is trained), the Estimator as read there, the drivers (those
    there first, each in order) and what the Estimator passed through there; Unsupported for a driver that cannot
    see the model."""
    trainers = [entry for entry in found if entry[0].kind in TRAINING] or found[:1]
    home = trainers[0][0].call.place
    for driver, _, _ in trainers:
        if not driver.call.place.same_scope(home):
            raise driver.call.fail("the Estimator is trained from two functions: the migration puts the Keras model "
                                   "where it is trained; train it in one function")
    at_home = [entry for entry in found if entry[0].call.place.same_scope(home)]
    trail = [step for _, _, steps in at_home for step in steps]
    bindings = estimator_bindings(home, trail)
    elsewhere = [driver for driver, _, _ in found if not driver.call.place.same_scope(home)]
    problems = []
    for driver in elsewhere:
        try:
            driver.caller = _reads_returned(values, driver, home, bindings)
        except Unsupported as problem:
            problems.append(problem)
    if problems:
        raise Unsupported.of_all(problems)
    ordered = sorted((driver for driver, _, _ in at_home), key=_position) + sorted(elsewhere, key=_position)
    return home, at_home[0][1], ordered, trail


def estimator_bindings(home: Place, trail: list) -> list[Assignment]:
    """The names the drivers at ``home`` read the Estimator through, bound there."""
    scope = _scope(home)
    return [step.assignment for step in trail if isinstance(step, Binding) and step.kind == "value"
            and isinstance(step.assignment, Assignment) and step.assignment.scope is scope]


def _run_config_bindings(values: Values, view: ModuleView, statement: cst.CSTNode) -> list[tuple[Assignment, Value]]:
    """`config = tf.estimator.RunConfig(model_dir=...)`, a statement the migration removes: the binding of `config`,
    whose `config.model_dir` the program may read, and that model_dir."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and isinstance(small.value, cst.Call)):
        return []
    api = Value(small.value, values.place_of(view, small.value)).api()
    if api not in RUN_CONFIGS:
        return []
    try:
        model_dir = run_config_arguments(small.value, api).get("model_dir")
    except Unsupported:  # its reading says why, where the program reads it
        return []
    name, scope = small.targets[0].target, view.scope(small.targets[0].target)
    # A name bound again: which value a read finds is not followed (the read is then reported).
    if model_dir is None or scope is None or len(scope[name.value]) != 1:
        return []
    place = values.place_of(view, model_dir)
    return [(assignment, Value(model_dir, place)) for assignment in scope[name.value]
            if isinstance(assignment, Assignment) and assignment.node is name]


def _reads_returned(values: Values, driver: Driver, home: Place, bindings: list[Assignment]) -> bool:
    """False: the driver is in a function defined at ``home`` and reads the Estimator's name bound there; True: it
    reads what the training function ``home`` returned; else Unsupported."""
    view, receiver = driver.call.view, driver.call.node.func.value
    where = f"in `{home.function.name.value}()`" if isinstance(home.function, cst.FunctionDef) else \
        "in a lambda" if home.function else "at module level"
    if driver.passed is not None:  # rewrites/estimator/passed.py
        site = driver.call.place.call.place
        # A notebook's `model` bound again for the next Estimator: the binding a read finds in order of the cells.
        if not (site.same_scope(home) and values.binding(driver.passed, site).assignment in bindings):
            raise driver.call.fail(f"the Estimator is passed to `{driver.call.place.function.name.value}()` other "
                                   f"than by the name it is bound to where it is trained ({where}): pass it there, "
                                   "after training")
        return False
    if isinstance(receiver, cst.Name):
        if view is home.view and (home.function is None or home.function in view.ancestors(driver.call.node)):
            referents = _referents(view, receiver)
            if len(referents) == 1 and referents <= {*bindings}:
                return False
            raise driver.call.fail(f"`{receiver.value}` here is not (only) the Estimator trained {where}: drive it "
                                   "through the name the Estimator was bound to there, bound once")
        binding = values.binding(receiver, driver.call.place)
        if isinstance(home.function, cst.FunctionDef) and binding.kind == "value" \
                and isinstance(binding.value.node, cst.Call) \
                and values.resolve(Value(binding.value.node.func, binding.value.place)).node is home.function:
            if view is not home.view:
                raise driver.call.fail(f"the Estimator `{home.function.name.value}()` returns is driven in another "
                                       f"module: drive it in {home.view.path}, which gets the Keras model instead")
            return True
    raise driver.call.fail(f"the Estimator is trained {where} and driven here, where the Keras model the migration "
                           f"binds {where} cannot be seen: drive it {where}, in a function defined there, or (from a "
                           "training function) from what it returns: `return estimator`")


def read_outside(values: Values, pipeline, anchor: cst.BaseStatement, model_dir: Value | None,
                 removed: list[tuple[ModuleView, cst.BaseStatement]], spell) -> tuple[list, Handoff | None]:
    """What the drivers outside the model's place need, checked: the code of each `estimator.eval_dir()` /
    `.model_dir` the program reads (view, node, code), and the training function's return and its callers."""
    reader = _Outside(values, pipeline, anchor, model_dir, removed, spell)
    handoff = reader.handoff()
    for driver in pipeline.drivers:
        if not driver.caller and not driver.call.place.same_scope(pipeline.place):
            reader.called_after_setup(driver)
    for binding in estimator_bindings(pipeline.place, pipeline.trail):
        reader.attributes(pipeline.place.view, binding, ATTRIBUTES, model_dir)
    for view, statement in removed:
        for binding, model_dir in _run_config_bindings(values, view, statement):
            reader.attributes(view, binding, ("model_dir",), model_dir)
    if reader.problems:
        raise Unsupported.of_all(reader.problems)
    return reader.found, handoff


class _Outside:
    def __init__(self, values: Values, pipeline, anchor, model_dir: Value | None, removed, spell) -> None:
        self.values, self.pipeline, self.anchor, self.model_dir, self.spell = values, pipeline, anchor, model_dir, spell
        self.home, self.view = pipeline.place, pipeline.place.view
        self.going = {id(node) for _, statement in removed for node in subtree(statement)} | {
            id(node) for driver in pipeline.drivers for node in subtree(driver.statement)}
        self.found: list[tuple[ModuleView, cst.CSTNode, str]] = []
        self.problems: list[Unsupported] = []

    def _fail(self, view: ModuleView, node: cst.CSTNode, message: str) -> None:
        self.problems.append(Unsupported(node, message, view.path))

    # -- a function defined where the model is -------------------------------------------------

    def called_after_setup(self, driver: Driver) -> None:
        """The function holding ``driver`` (the outermost below the model's place) is defined there and only called
        there, after the set-up: the model is bound whenever the driver runs."""
        view = self.view
        if driver.passed is not None:  # the call passing it the Estimator (rewrites/estimator/passed.py)
            if not _after(view, driver.passed, self.anchor):
                self._fail(view, driver.passed, "the Estimator is passed here where the Keras model the migration "
                                                "binds before training may not be bound yet: pass it after training")
            return
        function = [a for a in view.ancestors(driver.call.node) if isinstance(a, (cst.FunctionDef, cst.Lambda))
                    and a is not self.home.function and self.home.function in (None, *view.ancestors(a))][-1]
        home_scope = _scope(self.home)
        if not isinstance(function, cst.FunctionDef) or view.scope(function) is not home_scope:
            return self._fail(view, driver.call.node, "the Estimator is driven here, in a function the migration "
                                                      "cannot follow to its calls: drive it in a function defined "
                                                      "where it is trained, called there after training")
        for where, node in self._references(function):
            call = where.parent(node)
            if not (where is view and isinstance(call, cst.Call) and call.func is node
                    and where.scope(node) is home_scope and _after(view, node, self.anchor)):
                return self._fail(where, node, f"`{function.name.value}`, which drives the Estimator, is used here "
                                               f"(`{first_line(where.statement_of(node))}`), where the Keras model "
                                               "the migration binds before training may not be bound yet: call it "
                                               "only after training, where the Estimator is trained")

    def _references(self, function: cst.FunctionDef) -> list[tuple[ModuleView, cst.CSTNode]]:
        """Every use of the function's name, among the files given (Unsupported when it is bound twice)."""
        view, name = self.view, function.name.value
        assignments = view.scope(function)[name]
        if len(assignments) != 1:
            raise Unsupported(function, f"`{name}`, which drives or trains the Estimator, is bound more than once: "
                                        "give it a name of its own", view.path)
        if view.scope(function) is _scope(Place(view)):
            return view.tree.references_to(view, name)
        return [(view, access.node) for access in view.in_order(next(iter(assignments)).references)]

    # -- a training function returning its Estimator -------------------------------------------

    def handoff(self) -> Handoff | None:
        """`return estimator` of the training function: what it returns instead, and the names its callers bind."""
        function, view = self.home.function, self.view
        callers = [driver for driver in self.pipeline.drivers if driver.caller]
        returns = [node for node in own_nodes(function) if isinstance(node, cst.Return)] if isinstance(
            function, cst.FunctionDef) else []
        bindings = set(estimator_bindings(self.home, self.pipeline.trail))
        returned = next((r.value for r in returns if isinstance(r.value, cst.Name)
                         and _referents(view, r.value) & bindings), None)
        if returned is None or len(returns) != 1 or not _referents(view, returned) <= bindings:
            for driver in callers:
                self._fail(driver.call.view, driver.call.node, f"`{function.name.value}()` returns the Estimator "
                                                               "in a way not migrated yet: end it with `return "
                                                               "estimator`")
            return None
        if not _after(view, returned, self.anchor):
            self._fail(view, returned, "the Estimator is returned where the Keras model the migration binds before "
                                       "training may not be bound: return it after training, in the same block")
        targets = self._callers(function, {id(driver.call.node) for driver in callers})
        return Handoff(view, returned, targets)

    def _callers(self, function: cst.FunctionDef, drivers: set[int]) -> list[cst.Name]:
        """The names the calls of ``function`` bind its result to; each use of them checked."""
        targets: list[tuple[cst.Name, Assignment]] = []
        try:
            references = self._references(function)
        except Unsupported as problem:
            self.problems.append(problem)
            return []
        for where, node in references:
            call = where.parent(node)
            statement = where.statement_of(node)
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
            if not (isinstance(call, cst.Call) and call.func is node):
                self._fail(where, node, f"`{function.name.value}`, which returns the Estimator, is used here "
                                        f"otherwise than called (`{first_line(statement)}`): migrate that use by hand")
            elif isinstance(small, cst.Expr) and small.value is call:
                continue  # the result is dropped
            elif isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name) and where is self.view:
                name = small.targets[0].target
                targets.append((name, next(a for a in where.scope(name)[name.value] if a.node is name)))
            else:
                self._fail(where, node, f"the Estimator `{function.name.value}()` returns is used here in a way not "
                                        f"migrated yet (`{first_line(statement)}`): bind it to a name in "
                                        f"{self.view.path} and drive it from there")
        assignments = {assignment for _, assignment in targets}
        for _, assignment in targets:
            self._uses(assignment, assignments, drivers)
        return [name for name, _ in targets]

    def _uses(self, assignment: Assignment, assignments: set[Assignment], drivers: set[int]) -> None:
        """Each use of a name bound to the training function's result: a driver (reading it where it is bound), or
        one of ATTRIBUTES. The first that is neither is reported (the others follow from the same binding)."""
        from rewrites.estimator.discover import OTHER_METHODS

        view, name = self.view, assignment.name
        problems = len(self.problems)
        for access in view.in_order(assignment.references):
            if len(self.problems) > problems:
                return
            node, parent = access.node, view.parent(access.node)
            method = parent.attr.value if isinstance(parent, cst.Attribute) and parent.value is node else None
            call = view.parent(parent) if method else None
            driven = isinstance(call, cst.Call) and call.func is parent and id(call) in drivers
            if not set(access.referents) <= assignments:
                self._fail(view, node, f"`{name}` here may be the Estimator the training function returns or "
                                       "something else: bind that Estimator to a name of its own")
            elif method in ATTRIBUTES:
                self._attribute(view, node, parent, method, self.model_dir)
            elif method in OTHER_METHODS:
                self._fail(view, node, f"`{name}.{method}(...)` {OTHER_METHODS[method]}")
            elif not driven or view.scope(node) is not assignment.scope:
                self._fail(view, node, f"`{name}` (the Estimator the training function returns) is used here "
                                       f"(`{first_line(view.statement_of(node))}`), which the migrated program has "
                                       "no counterpart of: drive it with evaluate or predict where it is bound")

    # -- eval_dir() and model_dir ----------------------------------------------------------------

    def attributes(self, view: ModuleView, assignment: Assignment, names, model_dir: Value | None) -> None:
        """``names`` (of ATTRIBUTES) read of what ``assignment`` binds, as code, ``model_dir`` the one it has."""
        for access in view.in_order(assignment.references):
            parent = view.parent(access.node)
            if isinstance(parent, cst.Attribute) and parent.value is access.node and parent.attr.value in names \
                    and id(access.node) not in self.going:
                self._attribute(view, access.node, parent, parent.attr.value, model_dir)

    def _attribute(self, view: ModuleView, node: cst.CSTNode, attribute: cst.Attribute, name: str,
                   model_dir: Value | None) -> None:
        """`estimator.model_dir` or `estimator.eval_dir(...)` as code where it stands."""
        call = view.parent(attribute)
        whole = call if name == "eval_dir" and isinstance(call, cst.Call) and call.func is attribute else attribute
        if name == "eval_dir" and whole is attribute:
            return self._fail(view, node, "`eval_dir` is read but not called: migrate that use by hand")
        try:
            self.found.append((view, whole, self._code(view, whole, model_dir)))
        except Unsupported as problem:
            self._fail(view, whole, f"`{source(whole)}`: {problem}")

    def _code(self, view: ModuleView, whole: cst.CSTNode, model_dir: Value | None) -> str:
        if model_dir is None or is_none(model_dir.node):
            raise Unsupported(whole, "the Estimator is given no model_dir (TF1 used a temporary directory): give it "
                                     "one, or migrate this use by hand", view.path)
        place = self.values.place_of(view, whole)
        try:
            code = source(relocate(self.values, model_dir, place, spell=self.spell))
        except Unsupported:
            raise Unsupported(whole, f"its model_dir, `{source(model_dir.node)}`, cannot be read here: migrate "
                                     "this use by hand", view.path) from None
        if isinstance(whole, cst.Attribute):
            return code
        bound = bind_arguments(whole, ("name",))
        name = self.values.constant(Value(bound["name"][1].value, place)) if bound and "name" in bound else None
        if bound is None or not (name is None or isinstance(name, str)):
            raise Unsupported(whole, "an evaluation name known only when the program runs: migrate this use by hand",
                              view.path)
        folder = f"eval_{name}" if name else "eval"
        return f'os.path.join({code}, "{folder}")'


# -- writing it ---------------------------------------------------------------------------------


def seen_outside(program: Program) -> set[str]:
    """The names the functions holding drivers outside the model's place read or bind (up to that place): the names
    of the model and the predictor must reach them unshadowed."""
    found: set[str] = set()
    for driver in program.drivers:
        if not (driver.caller or driver.passed) and not driver.call.place.same_scope(program.place):
            found |= _names_around(driver.call.view, driver.call.node, program.place.function)
    return found


def emit_outside(emitter, program: Program, plans, names, context: dict, gone: set[int]) -> dict[int, dict]:
    """eval_dir / model_dir as code, the training function's return and its callers' bindings of it; the template
    context of each caller's driver (id of its plan -> context), which reads the names the caller bound, and of each
    driver in a function the Estimator is passed to, which evaluates its parameter."""
    from rewrites.estimator.emit import Names, free_names, taken

    for view, node, code in program.attributes:
        edits = emitter.module_edits(view)
        edits.expressions[node] = cst.parse_expression(code)
        if code.startswith("os."):
            edits.add_import("os")
    for plan in plans:
        outside = not plan.driver.call.place.same_scope(program.place)
        around = _names_around(plan.driver.call.view, plan.driver.call.node, None if plan.driver.caller else
                               program.place.function)
        if plan.predict is not None and outside and names.predict_examples in around:
            raise plan.driver.call.fail(f"`{names.predict_examples}`, the name of the generated function giving the "
                                        "predictions, is bound here: rename it")
    chosen: dict[int, Names] = {}

    def names_at(view: ModuleView, node: cst.CSTNode) -> Names:
        """The names generated code binds where ``node`` is (the scope of a caller): its own, chosen once."""
        scope = view.scope(node)
        if id(scope) not in chosen:
            owner = emitter.values.place_of(view, node).function or view.module
            generated = {value for key, value in names.items() if key not in CALLER_NAMES}
            chosen[id(scope)] = Names({**names, **free_names(CALLER_NAMES, taken(view, owner, gone) | generated
                                                              | set(dir(builtins)))})
        return chosen[id(scope)]

    step = "[1]" if program.setup.model.wide_deep else ""
    contexts = {}
    for plan in plans:  # evaluated by a function the Estimator is passed to: by its parameter, given the model
        if plan.driver.passed is not None:
            view, receiver = plan.driver.call.view, plan.driver.call.node.func.value.value
            emitter.module_edits(view).expressions[plan.driver.passed] = cst.Name(names.model)
            inside = Names({**names_at(view, plan.driver.call.node), "model": receiver})
            contexts[id(plan)] = dict(context, names=inside, iterations=f"{receiver}.optimizer{step}.iterations")
    handoff = program.handoff
    if handoff is None:
        return contexts
    view = handoff.view
    kinds = {plan.driver.kind for plan in plans if plan.driver.caller}
    wanted = [name for name, kind in RETURNED if kind in kinds] or ["model"]
    edits = emitter.module_edits(view)
    edits.expressions[handoff.returned] = cst.parse_expression(", ".join(names[name] for name in wanted))
    for target in handoff.targets:
        edits.expressions[target] = cst.parse_expression(", ".join(names_at(view, target)[name] for name in wanted))
    for plan in plans:
        if plan.driver.caller:
            caller = names_at(view, plan.driver.call.node)
            contexts[id(plan)] = dict(context, names=caller, iterations=f"{caller.model}.optimizer{step}.iterations")
    return contexts


def reads_the_same(code: str, home: Place, place: Place) -> bool:
    """Does ``code``, written where the model is, read the same in a function defined there (``place``): each name
    it reads bound at most once there, and in none of the functions between?"""
    if place.view is not home.view or not isinstance(place.function, cst.FunctionDef) or (
            home.function is not None and home.function not in place.view.ancestors(place.function)):
        return False
    scope, between = _scope(home), _names_around(place.view, place.function.body, home.function)
    names = {node.value for node in subtree(cst.parse_expression(code)) if isinstance(node, cst.Name)}
    return not names & between and all(len(scope[name]) <= 1 for name in names)


def _names_around(view: ModuleView, node: cst.CSTNode, stop) -> set[str]:
    """Every name in the functions holding ``node``, up to ``stop`` (a function, or None: the module)."""
    found: set[str] = set()
    for ancestor in view.ancestors(node):
        if ancestor is stop:
            break
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            found |= {name.value for name in subtree(ancestor) if isinstance(name, cst.Name)}
    return found


def _position(driver: Driver) -> tuple[int, int]:
    return driver.call.view.position(driver.call.node)


def _scope(place: Place):
    view = place.view
    return function_scope(view, place.function) if place.function is not None else \
        view.get_metadata(ScopeProvider, view.module, None)


def _referents(view: ModuleView, name: cst.Name) -> set:
    scope = view.scope(name)
    return {referent for access in (scope.accesses[name] if scope is not None else ()) for referent in access.referents}


def _after(view: ModuleView, node: cst.CSTNode, anchor: cst.BaseStatement) -> bool:
    """Does ``node`` run after the set-up goes in (before ``anchor``): in a statement of the anchor's block from the
    anchor on?"""
    block = view.parent(anchor)
    held = node
    while held is not None and view.parent(held) is not block:
        held = view.parent(held)
    if held is None:
        return False
    body = list(block.body)
    return next(i for i, s in enumerate(body) if s is held) >= next(i for i, s in enumerate(body) if s is anchor)
