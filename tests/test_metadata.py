"""The metadata and syntax walks the rewrites share (rewrites/metadata.py, rewrites/syntax.py) give what libcst's
own would, for less work."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from rewrites.metadata import Printing
from rewrites.syntax import statements_mentioning

REPOSITORY = Path(__file__).resolve().parent.parent

TRICKY = {
    "decorators, parentheses, comments": '''\
        import tensorflow as tf  # the cluster


        @decorated(  # a comment in a call
            (1 + 2) * 3,
        )
        def f(a, *, b=((4))):
            """A docstring
            over lines."""
            return [x for x in (a, b) if x] + f"{a!r:>{b}}"


        class C(Base, metaclass=M):
            x: int = 1; y = 2
            if x: pass
            elif y:
                pass
            else: z = lambda q: q
        ''',
    "no last newline": "x = 1\nif x:\n    y = (1,\n         2)",
    "CRLF": "x = 1\r\nif x:\r\n    y = (1,\r\n         2)\r\n",
    "CR": "x = 1\ry = 2\r",
    "CRLF, no last newline": "def f():\r\n    return 1",
    "empty": "",
    "comments only": "# one\n\n# two\n",
}


@pytest.mark.parametrize("source", TRICKY.values(), ids=TRICKY)
def test_the_positions_and_code_of_a_printing_are_libcsts(source):
    module = cst.parse_module(dedent(source))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    printing = Printing(module)
    assert printing.code == module.code
    assert dict(printing.positions) == dict(expected)


def test_the_positions_of_the_examples_are_libcsts():
    for path in sorted((REPOSITORY / "examples").rglob("*.py")):
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        assert dict(Printing(module).positions) == dict(expected), path


def statement_lines(source: str, names, fragments=()) -> list[str]:
    """The first line of each statement statements_mentioning finds, in the order of the source."""
    module = cst.parse_module(dedent(source))
    starts = {node: (where.start.line, where.start.column) for node, where in Printing(module).positions.items()}
    found = sorted(statements_mentioning(module, names, fragments), key=starts.__getitem__)
    return [module.code_for_node(node).strip().splitlines()[0] for node in found]


def test_the_statements_mentioning_a_name_and_those_around_them():
    source = """\
        import tensorflow as tf

        def unrelated(x):
            return x.Servers + ServerLike(x)

        class Cluster:
            def start(self):
                if self.ready:
                    self.server = tf.train.Server(self.spec)

            def stop(self):
                pass
        """
    assert statement_lines(source, {"Server"}) == [
        "class Cluster:", "def start(self):", "if self.ready:", "self.server = tf.train.Server(self.spec)"]


def test_a_name_an_import_binds_under_another_is_mentioned_before_the_import_too():
    source = """\
        def start(spec):
            return S(spec)

        def other():
            return 1

        from tensorflow.compat.v1.train import Server as S
        """
    assert statement_lines(source, {"Server"}) == [
        "def start(spec):", "return S(spec)", "from tensorflow.compat.v1.train import Server as S"]


def test_strings_are_mentions_by_fragments_names_are_not():
    source = """\
        def place():
            return tf.device("/job:ps/task:0")

        def name():
            return "Server"
        """
    assert statement_lines(source, {"Server"}, ("/job:ps",)) == [
        "def place():", 'return tf.device("/job:ps/task:0")']
