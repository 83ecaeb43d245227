"""TFM012: the TF1 tutorials' MNIST model module, written into the program that imports it.

TFM012 mnist-tutorial-model

What it does: `from tensorflow.examples.tutorials.mnist import mnist` goes, and the module gains what of it the
program uses, as TF1's tutorial wrote it (spelled `tf.compat.v1`): its constants (`mnist.IMAGE_PIXELS` ->
`MNIST_IMAGE_PIXELS`, `NUM_CLASSES`, `IMAGE_SIZE`) and functions (`mnist.inference(images, hidden1, hidden2)` ->
`mnist_inference(...)`: two ReLU hidden layers and a linear layer, each layer's `weights` and `biases` in a name scope
of its own; `mnist.loss(logits, labels)`, the mean sparse softmax cross entropy; `mnist.training(loss,
learning_rate)`, a gradient-descent `minimize` advancing a `global_step` variable; `mnist.evaluation(logits,
labels)`, how many examples' top logit is their label), each named after the name the import bound. Done where the
program reads only those names of it (`mnist.X`), and binds none of the new ones.
Why: TensorFlow 2 has no `tensorflow.examples.tutorials`, so a program that imports it cannot start; that model was
the graph of many TF1 programs (tensorflow/ecosystem's cluster trainers), which the between-graph migration (TFM103)
then reads as the program's own functions.
What may differ: nothing: the code is the tutorial's last TF1 release (before TF 1.5 its loss was the same mean cross
entropy, computed with sparse_softmax_cross_entropy_with_logits and reduce_mean). Any other use of the module stays,
and TFM003 reports the import.

Before:

    import tensorflow as tf
    from tensorflow.examples.tutorials.mnist import mnist

    images = tf.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])
    labels = tf.placeholder(tf.int32, [None])
    loss = mnist.loss(images, labels)

After:

    import tensorflow as tf

    MNIST_NUM_CLASSES = 10
    MNIST_IMAGE_SIZE = 28
    MNIST_IMAGE_PIXELS = MNIST_IMAGE_SIZE * MNIST_IMAGE_SIZE


    def mnist_loss(logits, labels):
        \"\"\"The TF1 tutorials' MNIST loss: the mean cross entropy of the logits and the labels.\"\"\"
        labels = tf.compat.v1.to_int64(labels)
        return tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


    images = tf.placeholder(tf.float32, [None, MNIST_IMAGE_PIXELS])
    labels = tf.placeholder(tf.int32, [None])
    loss = mnist_loss(images, labels)

Finding:

    2:1: TFM012 [exact] the TF1 tutorials' MNIST model (tensorflow.examples.tutorials.mnist.mnist, gone in TF 2) ->
    its code written in this module: MNIST_IMAGE_PIXELS, mnist_loss
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from rewrites.base import TFCodemod
from rewrites.syntax import Bindings, subtree, with_blank_lines

RULE = "TFM012"
MODULE = "tensorflow.examples.tutorials.mnist"

CONSTANTS = '''
{P}_NUM_CLASSES = 10
{P}_IMAGE_SIZE = 28
{P}_IMAGE_PIXELS = {P}_IMAGE_SIZE * {P}_IMAGE_SIZE
'''

# The tutorial's functions: name -> (its code, whether it reads `math`).
FUNCTIONS = {
    "inference": ('''
def {p}_inference(images, hidden1_units, hidden2_units):
    """The TF1 tutorials' MNIST network: the logits of two ReLU layers and a linear one."""
    with {v1}.name_scope("hidden1"):
        weights = {v1}.Variable(
            {v1}.truncated_normal(
                [{P}_IMAGE_PIXELS, hidden1_units], stddev=1.0 / math.sqrt(float({P}_IMAGE_PIXELS))),
            name="weights")
        biases = {v1}.Variable({tf}.zeros([hidden1_units]), name="biases")
        hidden1 = {tf}.nn.relu({tf}.matmul(images, weights) + biases)
    with {v1}.name_scope("hidden2"):
        weights = {v1}.Variable(
            {v1}.truncated_normal(
                [hidden1_units, hidden2_units], stddev=1.0 / math.sqrt(float(hidden1_units))),
            name="weights")
        biases = {v1}.Variable({tf}.zeros([hidden2_units]), name="biases")
        hidden2 = {tf}.nn.relu({tf}.matmul(hidden1, weights) + biases)
    with {v1}.name_scope("softmax_linear"):
        weights = {v1}.Variable(
            {v1}.truncated_normal(
                [hidden2_units, {P}_NUM_CLASSES], stddev=1.0 / math.sqrt(float(hidden2_units))),
            name="weights")
        biases = {v1}.Variable({tf}.zeros([{P}_NUM_CLASSES]), name="biases")
        logits = {tf}.matmul(hidden2, weights) + biases
    return logits
''', True),
    "loss": ('''
def {p}_loss(logits, labels):
    """The TF1 tutorials' MNIST loss: the mean cross entropy of the logits and the labels."""
    labels = {v1}.to_int64(labels)
    return {v1}.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
''', False),
    "training": ('''
def {p}_training(loss, learning_rate):
    """The TF1 tutorials' MNIST training op: a gradient-descent step on the loss, advancing a global step."""
    {v1}.summary.scalar("loss", loss)
    optimizer = {v1}.train.GradientDescentOptimizer(learning_rate)
    global_step = {v1}.Variable(0, name="global_step", trainable=False)
    train_op = optimizer.minimize(loss, global_step=global_step)
    return train_op
''', False),
    "evaluation": ('''
def {p}_evaluation(logits, labels):
    """The TF1 tutorials' MNIST evaluation: how many examples' top logit is their label."""
    correct = {v1}.nn.in_top_k(logits, labels, 1)
    return {tf}.reduce_sum({tf}.cast(correct, {tf}.int32))
''', False),
}
NAMES = {*FUNCTIONS, "NUM_CLASSES", "IMAGE_SIZE", "IMAGE_PIXELS"}


class Rewrite(TFCodemod):
    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._found = self._model_import(node)

    def _model_import(self, module: cst.Module) -> tuple[cst.SimpleStatementLine, str, list[str]] | None:
        """(the import's statement, the name it binds, the names of the tutorial's module the program reads) of a
        module-level `from tensorflow.examples.tutorials.mnist import mnist [as name]`, alone on its line, whose
        name is read only as `name.X` of the tutorial's names, where none of the names written here is bound."""
        statement = next((s for s in module.body if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                          and _imports_model(s.body[0])), None)
        if statement is None or self._tf2_alias is None:
            return None
        alias = statement.body[0].names[0]
        name = alias.evaluated_alias or "mnist"
        bindings = Bindings()
        module.visit(bindings)
        used, attributes = [], set()
        for node in subtree(module):
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name:
                if node.attr.value not in NAMES:
                    return None
                used.append(node.attr.value)
                attributes.add(id(node.value))
        imported = {id(node) for node in subtree(statement)}
        reads = [node for node in subtree(module) if isinstance(node, cst.Name) and node.value == name
                 and id(node) not in imported]
        if bindings.counts[name] != 1 or len(reads) != len(attributes) or not used:
            return None
        new = {f"{name}_{f}" for f in FUNCTIONS} | {f"{name.upper()}_{c}" for c in NAMES - set(FUNCTIONS)}
        math = any(FUNCTIONS[f][1] for f in used if f in FUNCTIONS)
        if new & bindings.written or math and bindings.counts["math"] and not _imports_math(module):
            return None
        return statement, name, used

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self._found is None or not (isinstance(original.value, cst.Name) and original.value.value == self._found[1]):
            return updated
        name = self._found[1]
        attribute = original.attr.value
        return cst.Name(f"{name}_{attribute}" if attribute in FUNCTIONS else f"{name.upper()}_{attribute}")

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._found is None or not self.wants(RULE, self._found[0]):
            return super().leave_Module(original_node, updated_node)
        statement, name, used = self._found
        functions = [f for f in FUNCTIONS if f in used]
        if any(FUNCTIONS[f][1] for f in functions):
            AddImportsVisitor.add_needed_import(self.context, "math")
        v1 = f"{self._tf2_alias}.compat.v1"
        constants = any(f not in FUNCTIONS for f in used) or "inference" in functions
        code = (CONSTANTS if constants else "") + "".join("\n" + FUNCTIONS[f][0] for f in functions)
        code = code.format(p=name, P=name.upper(), v1=v1, tf=self._tf2_alias)
        definitions = list(cst.parse_module(code.lstrip()).body)
        definitions = [with_blank_lines(s, 2 if isinstance(s, cst.FunctionDef) else 0) for s in definitions]
        definitions[0] = with_blank_lines(definitions[0], 1)
        index = original_node.body.index(statement)
        after = next((i for i in range(index + 1, len(original_node.body)) if not _is_import(original_node.body[i])),
                     len(original_node.body))
        body = list(updated_node.body)
        if after < len(body):
            body[after] = with_blank_lines(body[after], 2)
        body[after:after] = definitions
        del body[index]
        written = [f"{name.upper()}_{c}" for c in ("NUM_CLASSES", "IMAGE_SIZE", "IMAGE_PIXELS") if c in used]
        self.report(RULE, statement, "the TF1 tutorials' MNIST model (tensorflow.examples.tutorials.mnist.mnist, "
                                     "gone in TF 2) -> its code written in this module: "
                                     + ", ".join([*written, *(f"{name}_{f}" for f in functions)]))
        return super().leave_Module(original_node, updated_node.with_changes(body=body))


def _imports_model(small: cst.BaseSmallStatement) -> bool:
    """`from tensorflow.examples.tutorials.mnist import mnist [as name]`"""
    return isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative \
        and cst.Module([]).code_for_node(small.module) == MODULE and not isinstance(small.names, cst.ImportStar) \
        and len(small.names) == 1 and small.names[0].evaluated_name == "mnist"


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def _imports_math(module: cst.Module) -> bool:
    """Does the module bind `math` by `import math` (once: Bindings counted it)?"""
    return any(isinstance(node, cst.Import) and any(alias.evaluated_name == "math" and alias.asname is None
                                                    for alias in node.names) for node in subtree(module))
