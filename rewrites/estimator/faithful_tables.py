"""Tier 2: the embedding tables a model_fn kept as written partitions are made by Keras, sharded over the ps tasks.

TF1's variables run in Keras (``track_tf1_style_variables``) cannot be sharded: TF2 refuses ``get_variable``'s
partitioner. Yet ParameterServerStrategy is there to shard big tables. So a variable the model_fn partitions (in
a ``variable_scope(partitioner=...)`` or by ``get_variable(partitioner=...)``) and only looks up is made by the
generated Keras model instead: its custom getter, given the name, shape, initializer and partitioner the
model_fn asks for, adds the weight, which the strategy shards as that partitioner split it in TF1; every other
variable stays whole in the shim. The table keeps TF1's name, so TF1's checkpoints fit by name.

Its lookups read it "div", TF2's order, a shard after another (the restore puts TF1's "mod" rows in that
order): ``tf.nn.embedding_lookup(table, ids)`` of TF2, for a partitioned table and a whole one alike.

Before::

    with tf.variable_scope("embeddings", partitioner=tf.fixed_size_partitioner(2)):
      users = tf.get_variable("users", [NUM_USERS, 8])
    vectors = tf.nn.embedding_lookup(users, features["user"])

After (the generated model's ``tf1_variable`` getter makes ``embeddings/users``, in 2 shards)::

    with tf.compat.v1.variable_scope("embeddings", partitioner=tf.compat.v1.fixed_size_partitioner(2)):
      users = tf.compat.v1.get_variable("users", [NUM_USERS, 8])
    vectors = tf.nn.embedding_lookup(users, features["user"])

A partitioned variable read otherwise (a matmul, a sparse lookup), or anything else made in a partitioned scope,
is not migrated: the shim could not hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.syntax import Unsupported, bound_values, first_line, name_reads, single_assign, subtree

LOOKUP = "nn.embedding_lookup"
LOOKUP_PARAMETERS = ("params", "ids", "partition_strategy", "name", "validate_indices", "max_norm")
GET_VARIABLE = "get_variable"
SCOPE = "variable_scope"


@dataclass
class Tables:
    """The partitioned tables of a model_fn kept as written, and how they are read."""

    names: list[str] = field(default_factory=list)  # the names the model_fn binds them to
    lookups: dict[cst.Call, str] = field(default_factory=dict)  # each lookup -> TF2's (code)
    mod: bool = False  # TF1 looked them up "mod"
    problems: list[Unsupported] = field(default_factory=list)


def partitioned(view, node: cst.CSTNode) -> bool:
    """A call given a partitioner (or making one)."""
    return isinstance(node, cst.Call) and ("partitioner" in (view.api(node.func) or "") or any(
        arg.keyword is not None and arg.keyword.value == "partitioner" for arg in node.args))


def partitioned_elsewhere(view, outside: cst.CSTNode | None = None) -> Unsupported | None:
    """A partitioner in the module of ``view`` (a helper's) outside ``outside``, the model_fn, where tables are
    read: TF2 refuses it in the shim."""
    inside = {id(node) for node in subtree(outside)} if outside is not None else set()
    node = next((node for node in subtree(view.module) if id(node) not in inside and partitioned(view, node)), None)
    if node is None:
        return None
    return Unsupported(node, f"`{first_line(node)}`: a partitioned variable outside the model_fn kept as written "
                             "(tier 2) is not migrated (TF1's variables in Keras cannot be sharded; the model_fn's "
                             "own partitioned embedding tables are)", view.path)


class TableReader:
    def __init__(self, view, spelling, function: cst.FunctionDef) -> None:
        self.view, self.api, self.spelling, self.function = view, view.api, spelling, function

    def read(self) -> Tables:
        self.tables = Tables()
        made: set[int] = set()  # partitioned calls read as tables' or their scopes'
        for node in subtree(self.function.body):
            if isinstance(node, cst.With) and self._partitioned_scope(node):
                made |= self._partitioner_of(node.items[0].item)
                for statement in node.body.body:
                    made |= self._table(statement)
            elif isinstance(node, cst.Call) and self.api(node.func) == GET_VARIABLE and partitioned(self.view, node):
                made |= self._table(self.view.statement_of(node)) | self._partitioner_of(node)
        for node in subtree(self.function.body):
            if partitioned(self.view, node) and id(node) not in made:
                self._refuse(node, "a partitioned variable other than an embedding table made by `get_variable`")
                break
        strategies = set()
        for name in self.tables.names:
            for read in self._reads(name):
                strategies.add(self._lookup(read, name))
        strategies.discard(None)
        if len(strategies) > 1:
            self._refuse(self.function, "tables looked up \"mod\" and \"div\" both")
        self.tables.mod = strategies == {"mod"}
        return self.tables

    def _partitioned_scope(self, node: cst.With) -> bool:
        call = node.items[0].item if len(node.items) == 1 else None
        return isinstance(call, cst.Call) and self.api(call.func) == SCOPE and partitioned(self.view, call)

    def _partitioner_of(self, call: cst.Call) -> set[int]:
        """The call and what makes its partitioner."""
        given = next((arg.value for arg in call.args if arg.keyword and arg.keyword.value == "partitioner"), None)
        return {id(call), *(id(node) for node in subtree(given))} if given is not None else {id(call)}

    def _table(self, statement) -> set[int]:
        """`name = tf.get_variable(...)`: a table; anything else in a partitioned scope is refused."""
        assign = single_assign(statement)
        call = assign[1] if assign else None
        if not (isinstance(call, cst.Call) and self.api(call.func) == GET_VARIABLE):
            self._refuse(statement, "anything but `name = tf.get_variable(...)` in a partitioned variable scope")
            return set()
        if assign[0] not in self.tables.names:
            self.tables.names.append(assign[0])
        return {id(call)}

    def _reads(self, name: str) -> list[cst.Name]:
        targets = {id(small.targets[0].target) for node in subtree(self.function.body)
                   if isinstance(node, cst.SimpleStatementLine) for small in node.body
                   if isinstance(small, cst.Assign) and len(small.targets) == 1}
        return [read for read in name_reads(self.function.body, name) if id(read) not in targets]

    def _lookup(self, read: cst.Name, name: str) -> str | None:
        """The partition strategy of the lookup reading the table as its params; its TF2 code noted."""
        arg = self.view.parent(read)
        call = self.view.parent(arg) if isinstance(arg, cst.Arg) else None
        if not (isinstance(call, cst.Call) and self.api(call.func) == LOOKUP and call.args[0] is arg):
            self._refuse(read, f"`{name}`, a partitioned table, read other than by `tf.nn.embedding_lookup`")
            return None
        args = bound_values(call, LOOKUP_PARAMETERS)
        strategy = args.pop("partition_strategy", None)
        text = "mod" if strategy is None else strategy.evaluated_value if isinstance(strategy, cst.SimpleString) \
            else None
        if text not in ("mod", "div") or "validate_indices" in args:
            self._refuse(call, "a lookup of a partitioned table with arguments other than its ids, name and max_norm")
            return None
        given = ", ".join(self.spelling.code(args[key]) if key in ("params", "ids") else
                          f"{key}={self.spelling.code(args[key])}" for key in ("params", "ids", "max_norm", "name")
                          if key in args)
        self.tables.lookups[call] = f"tf.nn.embedding_lookup({given})"
        return text

    def _refuse(self, node: cst.CSTNode, what: str) -> None:
        self.tables.problems.append(Unsupported(node, f"`{first_line(node)}`: {what}, in a model_fn kept as written "
                                                      "(tier 2), is not migrated (TF1's variables in Keras cannot be "
                                                      "sharded)"))


# Feature columns' vocabularies make lookup tables when the columns are read (input_layer, linear_model), on every
# path of the model_fn: its PREDICT path, which an export saves, too; so do tf.lookup's tables made in it.
COLUMN_READERS = ("feature_column.input_layer", "feature_column.linear_model")
VOCABULARIES = "categorical_column_with_vocabulary"
TABLES = ("lookup.", "index_table_from_", "index_to_string_table_from_")


def lookup_table_made(module: cst.Module, function: cst.FunctionDef, api) -> cst.Call | None:
    """A call of the model_fn making a lookup table as the model runs (reading feature columns where the module
    makes a vocabulary column, or making a tf.lookup table): TF2 makes such a table outside the traced model,
    where Keras does not track it, so tf.saved_model.save refuses the model ("references an 'untracked'
    resource"), and the export builds the model_fn's PREDICT mode in a TF1 graph instead."""
    calls = [node for node in subtree(function.body) if isinstance(node, cst.Call)]
    made = next((node for node in calls if any(part in (api(node.func) or "") for part in TABLES)), None)
    if made is not None or not any(isinstance(node, cst.Call) and VOCABULARIES in (api(node.func) or "")
                                   for node in subtree(module)):
        return made
    return next((node for node in calls if (api(node.func) or "").endswith(COLUMN_READERS)), None)
