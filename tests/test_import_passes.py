"""Carrying out the imports rewrites schedule (rewrites/import_passes.py) without libcst's metadata passes."""

from __future__ import annotations

from textwrap import dedent

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from rewrites.import_passes import apply_scheduled, names_read

ADD = [("tensorflow", None, "tf"), ("os", None, None), ("tf_keras", None, "keras"), ("typing", "Any", None),
       ("__future__", "annotations", None), ("collections", "OrderedDict", "OD")]
REMOVE = [("tensorflow.compat.v1", None, "tf"), ("tensorflow.estimator", "Estimator", None), ("json", None, None)]

MODULES = {
    "docstring and imports": '''
        """A TF1 program."""
        import json
        import tensorflow.compat.v1 as tf
        from tensorflow.estimator import Estimator

        def main():
            return 1
        ''',
    "comments and blank lines": '''
        # Copyright
        import os  # the os

        import tensorflow.compat.v1 as tf
        # the estimator
        from tensorflow.estimator import Estimator
        from typing import List
        x = tf.constant(1)
        ''',
    "from-import to extend": '''
        from typing import List, Dict
        from collections import deque
        import json

        VALUE = json.dumps({})
        ''',
    "no imports": '''
        def main():
            pass
        ''',
    "nested import": '''
        import os

        def main():
            import json
            from tensorflow.estimator import Estimator
            return os.getcwd()
        ''',
    "parenthesised from-import": '''
        from tensorflow.estimator import (
            Estimator,  # the estimator
            RunConfig,
        )
        config = RunConfig()
        ''',
    "several on a line": '''
        import json, os
        print(os.sep)
        ''',
}


def libcst_passes(module: cst.Module, context: CodemodContext) -> cst.Module:
    """What libcst's own codemod machinery does with the same schedule."""
    for scheduled in (AddImportsVisitor, RemoveImportsVisitor):
        if context.scratch.get(scheduled.CONTEXT_KEY):
            module = scheduled(context).transform_module(module)
    return module


def scheduled_context(add=(), remove=()) -> CodemodContext:
    context = CodemodContext(filename="example.py", full_module_name="example", full_package_name="")
    for module, obj, asname in add:
        AddImportsVisitor.add_needed_import(context, module, obj, asname=asname)
    for module, obj, asname in remove:
        RemoveImportsVisitor.remove_unused_import(context, module, obj, asname=asname)
    return context


@pytest.mark.parametrize("add", [[], ADD[:1], ADD[:3], ADD], ids=["none", "one", "three", "all"])
@pytest.mark.parametrize("remove", [[], REMOVE], ids=["keep", "remove"])
@pytest.mark.parametrize("source", MODULES.values(), ids=MODULES.keys())
def test_the_same_code_as_libcsts_passes_where_no_name_is_shadowed(source, add, remove):
    module = cst.parse_module(dedent(source))
    ours = apply_scheduled(module, scheduled_context(add, remove)).code
    assert ours == libcst_passes(module, scheduled_context(add, remove)).code
    compile(ours, "example.py", "exec")


def removed(source: str, *remove) -> str:
    return apply_scheduled(cst.parse_module(dedent(source)), scheduled_context(remove=remove)).code


@pytest.mark.parametrize("source", [
    "import json\n\ndef f(json):\n    return json\n",  # a parameter of the same name: kept (harmless)
    "import json\n\ndef f(x: 'json.JSONDecoder'):\n    pass\n",  # a string annotation
    "import json\n\n__all__ = ['json']\n",
    "import json\n\n__all__ = []\n__all__ += ['json']\n",
    "import json\n\n__all__ = []\n__all__.extend(['json'])\n",
    "import json\n\nclass A:\n    def g(self):\n        return [json for _ in ()]\n",
])
def test_an_import_whose_name_may_still_be_read_stays(source):
    assert removed(source, ("json", None, None)) == dedent(source)


@pytest.mark.parametrize("source", [
    "import json\n\nx = y.json\n",  # an attribute of another name
    "import json\n\nx = f(json=1)\n",  # a keyword of a call
    "import json\n\nHELP = 'reads json files'\n",  # a word of a string that names nothing
    "import json  # comment\n\nx = 1\n",
])
def test_an_import_whose_name_is_not_read_goes(source):
    assert "import json" not in removed(source, ("json", None, None))


def test_only_the_scheduled_imports_go():
    code = removed("import json\nimport os\n\nx = 1\n", ("json", None, None))
    assert code == "import os\n\nx = 1\n"


def test_names_read_skips_imports_attributes_and_keywords_but_reads_annotations():
    module = cst.parse_module(dedent('''
        import alpha
        from beta import gamma
        value = delta.epsilon(zeta=eta)
        def f(x: "theta.Iota") -> kappa:
            return "lambda_"
        '''))
    assert names_read(module) == {"value", "delta", "eta", "f", "x", "theta", "Iota", "kappa"}
