"""Tier 2: a Scaffold feeding the placeholders a model_fn kept as written makes its variables from (part of
rewrites/estimator/faithful.py, read with the EstimatorSpec that returns it).

TF1 programs loaded pretrained embeddings so: a ``tf.Variable`` made from a placeholder, fed the numpy matrix once, by
``tf.train.Scaffold(init_feed_dict={placeholder: matrix})`` as the session initialized the variables. In TF2 there
is no session to feed, and the shim (``track_tf1_style_variables``) tracks ``get_variable``'s variables, not
``tf.Variable``'s (made again at each call, which a ``tf.function`` refuses). So the variable is made by
``get_variable`` of the same name, shape, dtype and trainability, its initializer the value the Scaffold fed
(``constant_initializer``: the matrix is read once, eagerly, as the Keras model is built, never put in a traced
graph); the placeholder goes, and the Scaffold with the spec.

Before::

    embeddings_placeholder = tf.placeholder(tf.float64, [VOCABULARY, DIMENSION], name="embedding_placeholder")
    embeddings = tf.Variable(embeddings_placeholder, trainable=False, name="embeddings", dtype=tf.float64)
    ...
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      scaffold=tf.train.Scaffold(init_feed_dict={embeddings_placeholder: MATRIX}))

After::

    embeddings = tf.compat.v1.get_variable("embeddings", shape=[VOCABULARY, DIMENSION], dtype=tf.float64,
                                           initializer=tf.compat.v1.constant_initializer(MATRIX), trainable=False)
    ...
    return {"loss": loss}

Not migrated (a finding names it): any other argument of the Scaffold (``init_op``, ``init_fn``, ``ready_op``,
``local_init_op``, ``saver``, ...); a feed other than a dict written in the Scaffold; a fed placeholder read other
than as the initial value of one ``tf.Variable`` made directly in the model_fn's body (not in a block, whose scope
could name it otherwise); such a variable given more than its name, dtype, trainability and expected shape; a
placeholder of a shape not written out whole; a fed value reading what the model_fn computes.
"""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import (Bindings, Unsupported, bound_values, first_line, is_name, is_none, name_reads, names_read,
                             single_assign, subtree)

SCAFFOLD = "train.Scaffold"
SCAFFOLD_PARAMETERS = ("init_op", "init_feed_dict", "init_fn", "ready_op", "ready_for_local_init_op",
                       "local_init_op", "summary_op", "saver", "copy_from_scaffold", "local_init_feed_dict")
PLACEHOLDER = ("dtype", "shape", "name")
VARIABLES = {"Variable", "compat.v1.Variable"}
KEPT = ("name", "dtype", "trainable")  # what get_variable is given as tf.Variable was
DROPPED = ("expected_shape",)  # TF1 ignored it once the initial value had a shape


def fed_variables(reader, scaffold: cst.BaseExpression) -> None:
    """The Scaffold of a spec the FaithfulReader ``reader`` reads: each variable made from a placeholder it feeds
    becomes a get_variable initialized with the value fed; the placeholder goes."""
    if is_none(scaffold):
        return
    if not (isinstance(scaffold, cst.Call) and reader.api(scaffold.func) == SCAFFOLD):
        raise Unsupported(scaffold, f"`{first_line(scaffold)}` as the EstimatorSpec's scaffold, in a model_fn kept as "
                                    "written (tier 2), is not migrated yet (a tf.train.Scaffold written there is)")
    args = {name: value for name, value in bound_values(scaffold, SCAFFOLD_PARAMETERS).items() if not is_none(value)}
    other = sorted(set(args) - {"init_feed_dict"})
    if other:
        raise Unsupported(args[other[0]], f"Scaffold({other[0]}=...) in a model_fn kept as written (tier 2) is not "
                                          "migrated (Keras has no session to run it): set the Keras model's initial "
                                          "values or checkpoints up by hand")
    feed = args.get("init_feed_dict")
    if feed is None:
        return
    if not isinstance(feed, cst.Dict) or not all(isinstance(element, cst.DictElement) for element in feed.elements):
        raise Unsupported(feed, "a Scaffold's init_feed_dict other than a dict written there, in a model_fn kept as "
                                "written (tier 2), is not migrated yet")
    for element in feed.elements:
        _fed(reader, element)


def _fed(reader, element: cst.DictElement) -> None:
    function, faithful = reader.function, reader.faithful
    if not isinstance(element.key, cst.Name):
        raise Unsupported(element.key, f"`{first_line(element.key)}` fed by a Scaffold, in a model_fn kept as written "
                                       "(tier 2): only a placeholder the model_fn binds to a name is migrated")
    name = element.key.value
    placeholder, statement = _placeholder(reader, element.key)
    target = statement.body[0].targets[0].target
    reads = [node for node in name_reads(function.body, name) if node is not target and not _fed_key(reader, node)]
    variable, made = _variable(reader, reads[0]) if len(reads) == 1 else (None, None)
    if variable is None:
        raise Unsupported(reads[0] if reads else element.key,
                          f"`{name}`, a placeholder fed by a Scaffold, read other than as the initial value of one "
                          "`tf.Variable` made in the model_fn's body, in a model_fn kept as written (tier 2): not "
                          "migrated yet")
    bindings = Bindings()
    function.body.visit(bindings)  # its parameters are there at the variable's line too
    local = set(bindings.counts)
    read = next((node for node in names_read(element.value) if node.value in local), None)
    if read is not None:
        raise Unsupported(read, f"`{first_line(element.value)}`, fed by a Scaffold, reads `{read.value}`, which the "
                                "model_fn computes: in a model_fn kept as written (tier 2) it is not migrated yet")
    code = f"{made.body[0].targets[0].target.value} = {_get_variable(reader, variable, placeholder, element.value)}"
    if faithful.replaced.setdefault(made, code) != code:
        raise Unsupported(element, f"`{name}` fed different values by the Scaffolds of two EstimatorSpecs, in a "
                                   "model_fn kept as written (tier 2): not migrated yet")
    if statement not in faithful.removed:
        faithful.removed.append(statement)
        faithful.notes.append(("TFM310", variable, f"`{first_line(variable)}` starts from the value the Scaffold fed "
                                                   f"`{name}` (`{first_line(element.value)}`): made by get_variable "
                                                   "with it as its initializer, which the Keras model tracks"))


def _fed_key(reader, node: cst.Name) -> bool:
    """Is ``node`` a key of a Scaffold's init_feed_dict (of this spec, or of another the model_fn returns)?"""
    parents = [node]
    for _ in range(4):  # DictElement, Dict, Arg, Call
        parents.append(reader.view.parent(parents[-1]))
    _, element, _, arg, call = parents
    return isinstance(element, cst.DictElement) and element.key is node and isinstance(call, cst.Call) \
        and reader.api(call.func) == SCAFFOLD and arg in call.args


def _placeholder(reader, key: cst.Name) -> tuple[cst.Call, cst.SimpleStatementLine]:
    """The `tf.placeholder(...)` the model_fn binds ``key``'s name to, once, in its body, of a shape written out, and
    that statement."""
    body = reader.function.body.body
    bindings = [node for node in subtree(reader.function.body) if isinstance(node, cst.AssignTarget)
                and any(is_name(target, key.value) for target in subtree(node.target))]
    statement = next((statement for statement in body if (single_assign(statement) or ("",))[0] == key.value), None)
    value = single_assign(statement)[1] if statement is not None else None
    if len(bindings) != 1 or not (isinstance(value, cst.Call) and reader.api(value.func) == "placeholder"):
        raise Unsupported(key, f"`{key.value}`, fed by a Scaffold, is not a `tf.placeholder` bound once in the "
                               "model_fn's body, in a model_fn kept as written (tier 2): not migrated yet")
    shape = bound_values(value, PLACEHOLDER).get("shape")
    if not isinstance(shape, (cst.List, cst.Tuple)) or any(
            not isinstance(item, cst.Element) or is_none(item.value) for item in shape.elements):
        raise Unsupported(value, f"`{key.value}`, fed by a Scaffold, a placeholder of a shape not written out whole, "
                                 "in a model_fn kept as written (tier 2): not migrated yet")
    return value, statement


def _variable(reader, read: cst.Name) -> tuple[cst.Call, cst.SimpleStatementLine] | tuple[None, None]:
    """The `variable = tf.Variable(placeholder, ...)` directly in the model_fn's body that ``read`` is the initial
    value of, given what get_variable can be given: the call and its statement; Nones otherwise."""
    arg = reader.view.parent(read)
    call = reader.view.parent(arg) if isinstance(arg, cst.Arg) else None
    if not (isinstance(call, cst.Call) and reader.api(call.func) in VARIABLES):
        return None, None
    # TF1's and TF2's tf.Variable differ from the second parameter on: keywords only, after the initial value
    positional = [given for given in call.args if given.keyword is None]
    if any(given.star for given in call.args) or len(positional) > 1:
        return None, None
    keywords = {given.keyword.value: given.value for given in call.args if given.keyword is not None}
    first = positional[0].value if positional else keywords.pop("initial_value", None)
    validate = keywords.pop("validate_shape", None)
    if first is not read or set(keywords) - set(KEPT) - set(DROPPED) or not (
            validate is None or is_name(validate, "True")):
        return None, None
    statement = next((statement for statement in reader.function.body.body if single_assign(statement)
                      and single_assign(statement)[1] is call), None)
    return (call, statement) if statement is not None else (None, None)


def _get_variable(reader, variable: cst.Call, placeholder: cst.Call, value: cst.BaseExpression) -> str:
    """get_variable making ``variable`` (a tf.Variable of ``placeholder``) with ``value`` as its initial value."""
    code = reader.spelling.code
    given = {arg.keyword.value: arg.value for arg in variable.args if arg.keyword is not None}
    fed = bound_values(placeholder, PLACEHOLDER)
    name = code(given["name"]) if "name" in given else '"Variable"'  # tf.Variable's default name
    dtype = given.get("dtype", fed.get("dtype"))
    arguments = [name, f"shape={code(fed['shape'])}", *([f"dtype={code(dtype)}"] if dtype is not None else []),
                 f"initializer=tf.compat.v1.constant_initializer({code(value)})",
                 *([f"trainable={code(given['trainable'])}"] if "trainable" in given else [])]
    return f"tf.compat.v1.get_variable({', '.join(arguments)})"
