"""The TF2 code of an export function (exports.py): TF1's serving graph as a function of its placeholders, a
tf.function per signature, and tf.saved_model.save of the restored variables with them."""

from __future__ import annotations

import json

import libcst as cst

from rewrites.syntax import with_blank_lines


def graph_function(tensors: list[str], placeholders: list[str], returned: list[str], leading_lines: list
                   ) -> cst.BaseStatement:
    """`def graph(<placeholders>):`, the graph's statements (``tensors``, code), returning the tensors the signatures
    do."""
    body = "".join(f"    {line}\n" for code in tensors for line in code.splitlines())
    code = (f"def graph({', '.join(placeholders)}):\n"
            f"    \"\"\"TF1's graph for serving, from its placeholders.\"\"\"\n"
            f"{body}    return {', '.join(returned)}\n")
    return with_blank_lines(cst.parse_statement(code).with_changes(leading_lines=leading_lines), 1)


def signature_functions(functions: dict[str, tuple[str, dict[str, str], dict[str, str]]],
                        placeholders: dict[str, tuple[str, str]], computed: list[str]) -> list[cst.BaseStatement]:
    """A tf.function per signature (name -> (key code, {input key: placeholder}, {output key: tensor})), of the
    placeholders (name -> (dtype, shape) code) as TensorSpecs named by the input keys, returning its outputs by
    key from graph()'s ``computed`` tensors."""
    found = []
    for name, (_, inputs, returned) in functions.items():
        keys = {placeholder: key for key, placeholder in inputs.items()}
        specs = ", ".join(f"tf.TensorSpec({shape}, {dtype}, name={_string(keys[placeholder])})"
                          for placeholder, (dtype, shape) in placeholders.items())
        result = ", ".join(f"{_string(key)}: {tensor}" for key, tensor in returned.items())
        code = (f"@tf.function(input_signature=[{specs}])\n"
                f"def {name}({', '.join(placeholders)}):\n"
                f"    {', '.join(computed)} = graph({', '.join(placeholders)})\n"
                f"    return {{{result}}}\n")
        found.append(cst.parse_statement(code).with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
    return found


def saved(folder: str, functions: dict[str, tuple[str, dict, dict]]) -> cst.BaseStatement:
    """`tf.saved_model.save(trained, <folder>, signatures={<key>: <function>, ...})`."""
    items = "".join(f"    {key}: {name},\n" for name, (key, _, _) in functions.items())
    code = f"tf.saved_model.save(trained, {folder}, signatures={{\n{items}}})\n"
    return cst.parse_statement(code).with_changes(leading_lines=[cst.EmptyLine(indent=False)])


def _string(text: str) -> str:
    return json.dumps(text)
