"""Input functions that return an iterator's tensors instead of their dataset (part of the input reader).

``return dataset.make_one_shot_iterator().get_next()``, ``tf.data.make_one_shot_iterator(dataset)
.get_next()``, ``iterator = dataset.make_one_shot_iterator(); return iterator.get_next()`` or
``features, labels = iterator.get_next(); return features, labels``, or the tensors a helper returns so,
rearranged (``image, label = make_batch(path); return {"image": image}, label``: the helper's dataset,
mapped), or a dict of them whose label it pops (``features = iterator.get_next(); labels =
features.pop("label"); return features, labels``: the dataset, mapped to split it so), or tensors the function
computes on before it returns them (``features["rgb"] = frames["rgb"]; return features, labels``: those
statements, and the return, in a function the dataset is mapped with): Estimator takes the
dataset as well, and the migrated program needs it, so the function is changed to return it (the iterator's
statements go when nothing else reads them, but lines printing its tensors, which go with them: TF1 printed the
tensors' description as it built the graph).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from rewrites.program.places import Place, Value
from rewrites.syntax import source, subtree

if TYPE_CHECKING:
    from rewrites.estimator.inputs import Dataset

ITERATOR_METHODS = {"make_one_shot_iterator", "make_initializable_iterator"}
ITERATORS = {"data.make_one_shot_iterator", "data.make_initializable_iterator"}
GRAPH_STATE = {"summary", "add_to_collection", "add_to_collections", "get_collection", "get_variable", "Variable"}


@dataclass(eq=False)
class Elements:
    """Names bound to the tensors of one element of a dataset: ``image, label = make_batch(path)``, where
    ``make_batch`` returns an iterator's tensors (and, migrated, its dataset)."""

    dataset: Dataset
    node: cst.BaseExpression   # the dataset expression (the call)
    targets: cst.BaseExpression
    statement: cst.SimpleStatementLine
    made: list                 # the edits that make it return its dataset


class IteratorReading:
    """Mixed into InputReader (whose _expression reads the dataset an iterator iterates)."""

    def _iterated(self, value: cst.BaseExpression, place: Place, state: dict
                  ) -> tuple[cst.BaseExpression, Dataset, list] | None:
        """For `<dataset>.make_one_shot_iterator().get_next()` (or `make_one_shot_iterator(<dataset>)...`, or
        `iterator.get_next()` of such an iterator bound before): (the dataset expression, what it does, the
        statement binding the iterator, which goes)."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "get_next" and not value.args):
            return None
        source = self._next_source(value, place)
        if source is None:
            return None
        dataset_node, statements = source
        printing = _printing_only(place.view, statements, value)
        if printing is None:
            return None
        dataset = self._expression(Value(dataset_node, place), "", state)
        return (dataset_node, dataset, statements + printing) if dataset is not None else None

    def _next_source(self, next_call: cst.Call, place: Place) -> tuple[cst.BaseExpression, list] | None:
        """The dataset a `get_next()` call's iterator iterates, and the statement binding that iterator to a name
        (if it is bound: it goes with the call)."""
        iterator, statements = next_call.func.value, []
        if isinstance(iterator, cst.Name):
            binding = self.values.binding(iterator, place)
            if binding.kind != "value" or binding.value is None:
                return None
            iterator = binding.value.node
            statements.append(place.view.statement_of(iterator))
        dataset_node = self._iterator_source(iterator, place)
        return None if dataset_node is None else (dataset_node, statements)

    def _iterator_source(self, iterator: cst.BaseExpression, place: Place) -> cst.BaseExpression | None:
        if not isinstance(iterator, cst.Call):
            return None
        if isinstance(iterator.func, cst.Attribute) and iterator.func.attr.value in ITERATOR_METHODS \
                and not iterator.args and place.view.api(iterator.func) is None:
            return iterator.func.value
        if place.view.api(iterator.func) in ITERATORS and len(iterator.args) == 1:
            return iterator.args[0].value
        return None

    def _tensors_of_an_iterator(self, value, place: Place, state: dict, mode: str, edits: list) -> Dataset | None:
        """`features, labels = <iterator>.get_next()` ... `return features, labels` -> `return <dataset>`."""
        names = [e.value for e in value.elements] if isinstance(value, cst.Tuple) and all(
            isinstance(e.value, cst.Name) for e in value.elements) else [value] if isinstance(
            value, cst.Name) else None
        read = self._next_of(names[0], [], value, place, state, mode) if names else None
        if read is None:
            return None
        dataset_node, dataset, statements = read
        edits.append((place.view, value, enclosed(dataset_node)))
        edits.extend((place.view, statement, None) for statement in statements)
        return dataset

    def _popped_label(self, value, place: Place, state: dict, mode: str, edits: list) -> Dataset | None:
        """`features = <iterator>.get_next()` ... `labels = features.pop("label")` ... `return features, labels` (or
        `return features, features.pop("label")`) -> `return <dataset>.map(lambda features: ({key: ... if key !=
        "label"}, features["label"]))`."""
        if not (isinstance(value, cst.Tuple) and len(value.elements) == 2
                and isinstance(value.elements[0].value, cst.Name)):
            return None
        features, labels = (e.value for e in value.elements)
        if isinstance(labels, cst.Name):
            popped = self.values.binding(labels, place)
            call = popped.value.node if popped.kind == "value" and popped.value is not None else None
            also = [place.view.statement_of(call)] if call is not None else []
        else:
            call, also = labels, []
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "pop"
                and isinstance(call.func.value, cst.Name) and call.func.value.value == features.value
                and len(call.args) == 1 and isinstance(call.args[0].value, cst.SimpleString)):
            return None
        read = self._next_of(features, also, value, place, state, mode)
        if read is None:
            return None
        dataset_node, dataset, statements = read
        key, name = source(call.args[0].value), features.value
        split = cst.parse_expression(
            f"lambda {name}: ({{key: value for key, value in {name}.items() if key != {key}}}, {name}[{key}])")
        edits.append((place.view, value, mapped_chain(dataset_node, split)))
        edits.extend((place.view, statement, None) for statement in statements)
        return dataset

    def _next_of(self, name: cst.Name, also: list, value, place: Place, state: dict, mode: str):
        """For ``name`` bound to an iterator's `get_next()`: (the dataset expression, what it does, the statements
        that go: binding the name, the iterator, ``also``, and lines printing them), None otherwise."""
        binding = self.values.binding(name, place)
        next_call = binding.value.node if binding.kind == "value" and binding.value is not None else None
        if not (isinstance(next_call, cst.Call) and isinstance(next_call.func, cst.Attribute)
                and next_call.func.attr.value == "get_next"):
            return None
        found = self._next_source(next_call, place)
        if found is None:
            return None
        dataset_node, statements = found
        statements = [place.view.statement_of(next_call), *also, *statements]
        dataset = self._expression(Value(dataset_node, place), mode, state)
        printing = _printing_only(place.view, statements, value)
        if dataset is None or printing is None:
            return None
        return dataset_node, dataset, statements + printing

    def _elements(self, targets: list, node: cst.BaseExpression, statement, dataset: Dataset, made: list,
                  state: dict) -> bool:
        """``a, b = <a dataset>`` (``node``: the dataset's expression): the names hold one element's tensors, not
        datasets (state gets Elements)."""
        if len(targets) != 1 or not isinstance(targets[0], cst.Tuple) or not all(
                isinstance(element.value, cst.Name) for element in targets[0].elements):
            return False
        elements = Elements(dataset, node, targets[0], statement, made)
        for element in targets[0].elements:
            state[element.value.value] = elements
        return True

    def _restructured(self, value, place: Place, state: dict, edits: list) -> Dataset | None:
        """``return {"image": image}, label`` of ``image, label = make_batch(path)`` -> ``return make_batch(path)
        .map(lambda image, label: ({"image": image}, label))``: the same structure of the same tensors."""
        bound = {id(state[node.value]): state[node.value] for node in subtree(value)
                 if isinstance(node, cst.Name) and isinstance(state.get(node.value), Elements)}
        if len(bound) != 1:
            return None
        (elements,) = bound.values()
        printing = _printing_only(place.view, [elements.statement], value)
        if printing is None:
            return None
        parameters = cst.Parameters([cst.Param(element.value) for element in elements.targets.elements])
        body = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if isinstance(
            value, cst.Tuple) and not value.lpar else value
        mapped = mapped_chain(elements.node, cst.Lambda(parameters, body))
        edits.append((place.view, value, mapped))
        edits.extend((place.view, statement, None) for statement in [elements.statement, *printing])
        edits.extend(elements.made)
        return elements.dataset


    def _computed_on_the_batch(self, value, statement, place: Place, state: dict, edits: list) -> Dataset | None:
        """``(video, labels), (frames, _) = <dataset>.make_one_shot_iterator().get_next()``, statements computing on
        those tensors, then ``return features, labels``, all in the function's body -> the statements and the return
        in a function the dataset is mapped with: the same computation on each batch, as TF1 ran it on the batch
        the iterator gave."""
        function = place.function
        if not isinstance(function, cst.FunctionDef) or statement not in function.body.body:
            return None
        body = list(function.body.body)
        end = body.index(statement)
        start = next((index for index in range(end - 1, -1, -1) if _next_assignment(body[index])), None)
        if start is None:
            return None
        assign = body[start].body[0]
        iterated = self._iterated(assign.value, place, state)
        if iterated is None:
            return None
        dataset_node, dataset, iterator_statements = iterated
        moved = body[start + 1:end]
        if not _movable(place.view, function, [body[start], *moved], moved):
            return None
        target = assign.targets[0].target
        taken = {node.value for node in subtree(function) if isinstance(node, cst.Name)}
        name = next(n for n in (f"compute_on_batch{f'_{i}' if i else ''}" for i in range(100)) if n not in taken)
        if isinstance(target, cst.Name):
            header, unpacked = target.value, []
        elif isinstance(target, cst.Tuple) and all(isinstance(e.value, cst.Name) for e in target.elements):
            header, unpacked = ", ".join(e.value.value for e in target.elements), []
        else:
            header, unpacked = "*element", [cst.parse_statement(f"{source(target)} = element\n")]
        indent = function.body.indent or "    "
        text = "".join(source(cst.Module(body=[line])) for line in (*unpacked, *moved, statement)).lstrip("\n")
        code = f"def {name}({header}):\n" + "".join(
            indent + line if line.strip() else line for line in text.splitlines(keepends=True))
        leading = body[start].leading_lines or [cst.EmptyLine()]
        edits.append((place.view, body[start], cst.parse_statement(code).with_changes(leading_lines=leading)))
        edits.extend((place.view, line, None) for line in [*moved, *iterator_statements])
        edits.append((place.view, value, mapped_chain(dataset_node, cst.Name(name))))
        return dataset


def _next_assignment(statement) -> bool:
    """`<targets> = <something>.get_next()` on a line of its own."""
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(
        statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 and isinstance(
        statement.body[0].value, cst.Call) and isinstance(statement.body[0].value.func, cst.Attribute) and \
        statement.body[0].value.func.attr.value == "get_next"


def _movable(view, function: cst.FunctionDef, statements: list, moved: list) -> bool:
    """Can ``moved`` go into a function of their own: no return, yield, global or nonlocal among them, and each name
    ``statements`` bind bound nowhere else in ``function`` (else the new function's local would hide it); no
    summary or graph collection there either (a dataset's function writes none)."""
    nodes = [node for statement in moved for node in subtree(statement)]
    if any(isinstance(node, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal)) for node in nodes) or any(
            isinstance(node, cst.Call) and GRAPH_STATE.intersection((view.api(node.func) or "").split("."))
            for node in nodes):
        return False
    inside = {id(node) for statement in statements for node in subtree(statement)}
    for node in (n for statement in statements for n in subtree(statement) if isinstance(n, cst.Name)):
        scope = view.scope(node)
        assignments = list(scope[node.value]) if scope is not None and node.value in scope else []
        if not any(id(getattr(a, "node", None)) in inside for a in assignments):
            continue  # only read here
        if any(id(getattr(a, "node", None)) not in inside and _bound_in(view, function, a) for a in assignments):
            return False
    return True


def _bound_in(view, function: cst.FunctionDef, assignment) -> bool:
    node = getattr(assignment, "node", None)
    return node is not None and any(ancestor is function for ancestor in view.ancestors(node))


def enclosed(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` in parentheses when it spans lines: it leaves the parentheses of the iterator call around it."""
    if node.lpar or "\n" not in source(node):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def mapped_chain(node: cst.BaseExpression, function: cst.BaseExpression) -> cst.BaseExpression:
    """``node.map(function)``; a chain written over lines (`(files\n    .repeat()\n    .batch(4))`) gets its
    `.map(...)` on a line of its own, inside the same parentheses."""
    code = source(node.with_changes(lpar=[], rpar=[]))
    if "\n" not in code:
        return cst.Call(cst.Attribute(node, cst.Name("map")), [cst.Arg(function)])
    last = code.rsplit("\n", 1)[1]
    indent = last[:len(last) - len(last.lstrip())]
    return cst.parse_expression(f"({code}\n{indent}.map({source(function)}))")


def _printing_only(view, statements: list, value: cst.CSTNode) -> list | None:
    """If the names ``statements`` bind are read only by them, by ``value`` and by lines printing them, those lines
    (to go with them: TF1 printed a tensor's description as it built the graph); else None."""
    allowed = {id(node) for node in (*subtree(value), *(n for s in statements for n in subtree(s)))}
    printing = []
    for statement in statements:
        for target in (t.target for small in statement.body if isinstance(small, cst.Assign) for t in small.targets):
            names = [target] if isinstance(target, cst.Name) else [e.value for e in getattr(target, "elements", ())]
            for name in names:
                scope = view.scope(name)
                for assignment in scope[name.value] if scope is not None and name.value in scope else ():
                    for reference in assignment.references:
                        line = view.statement_of(reference.node)
                        if id(reference.node) in allowed:
                            continue
                        if not _prints(line):
                            return None
                        if line not in printing:
                            printing.append(line)
    return printing


def _prints(statement) -> bool:
    """`print(...)` on a line of its own."""
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.Call) \
        and isinstance(statement.body[0].value.func, cst.Name) and statement.body[0].value.func.value == "print"
