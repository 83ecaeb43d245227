"""Source texts in, the migrated texts and their findings out.

``migrate_group`` takes the files of one program (a file and the modules of the run it imports,
see ``program_groups``) and runs the enabled rewrite families in catalogue order: the per-file
families on each file, one parse each; then the program families over all the group's modules
at once, so a program whose model_fn lives in another module is migrated in all its files or
in none. Every result is parsed again (a result that does not parse is a bug: that file is
left untouched), and a second run changes nothing. Files that mention none of the words a
family handles are never parsed, and libcst is imported only when some file needs it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from migrator.findings import FileError, Finding
from rewrites import FAMILIES, RULES, Family

# What a Python 2 line a Python 3 parser chokes on usually looks like.
_PYTHON2_HINTS = re.compile(r"^\s*(print\s+[^\s(=]|exec\s+[\"']|except\s+[\w.]+\s*,\s*\w+\s*:)|`|\b0[0-7]+\b|\bur[\"']")
# Words that may tie two modules into one program (an Estimator, its model_fn or input_fn, its specs, or the
# feature columns a featurizer module makes for it).
PROGRAM_WORDS = ("estimator", "Estimator", "model_fn", "input_fn", "feature_column")


@dataclass
class Result:
    source: str
    findings: list[Finding] = field(default_factory=list)
    program: tuple[str, ...] = ()   # the files of the migrated program this file is part of, its entry first


def families_for(source: str, enabled: Collection[str]) -> list[Family]:
    """The families that could have anything to do in ``source``: a cheap text test."""
    if "tensorflow" not in source:
        return []
    return [
        family
        for family in FAMILIES
        if any(rule.id in enabled for rule in family.rules) and any(word in source for word in family.triggers)
    ]


def program_groups(texts: dict[str, str], enabled: Collection[str]) -> list[list[str]]:
    """The files in groups to migrate together: a program and the modules of the run it imports."""
    from rewrites.program.imports import program_groups as groups

    program = [family for family in FAMILIES if family.kind == "program"]
    return groups(texts, lambda text: any(family in families_for(text, enabled) for family in program), PROGRAM_WORDS)


def migrate(source: str, path: str, enabled: Collection[str], keras: str = "tf_keras") -> Result:
    """Migrate one file's text on its own. Raises FileError when it cannot be parsed or rewritten safely.

    ``keras``: how generated code imports Keras, "tf_keras" or "tf.keras".
    """
    result = migrate_group({path: source}, enabled, keras)[path]
    if isinstance(result, FileError):
        raise result
    return result


def migrate_group(sources: dict[str, str], enabled: Collection[str], keras: str = "tf_keras",
                  exists: Callable[[str], bool] = os.path.isfile) -> dict[str, Result | FileError]:
    """Migrate the files of one group; each file's Result, or the FileError that left it untouched."""
    todo = {path: families_for(text, enabled) for path, text in sources.items()}
    program_families = [family for family in FAMILIES if family.kind == "program"
                        and any(family in families for families in todo.values())]
    if not program_families and not any(todo.values()):
        return {path: Result(text) for path, text in sources.items()}
    import libcst as cst

    states: dict[str, _FileState | FileError] = {}
    for path, text in sources.items():
        if todo[path] or (program_families and len(sources) > 1):
            states[path] = _per_file(text, path, [f for f in todo[path] if f.kind == "file"], enabled, keras)
    for family in program_families:
        parsed = {path: state for path, state in states.items() if isinstance(state, _FileState)}
        failed = _program_family(family, parsed, enabled, keras, exists)
        for path in failed:
            if family in todo[path]:
                states[path] = failed[path]
    results: dict[str, Result | FileError] = {}
    for path, text in sources.items():
        state = states.get(path)
        if state is None:
            results[path] = Result(text)
        elif isinstance(state, FileError):
            results[path] = state
        else:
            results[path] = state.result(cst)
    return results


@dataclass
class _FileState:
    """One file as the families rewrite it: its module now, and the texts it went through."""

    path: str
    original: str
    module: object
    texts: list[str]
    findings: list[Finding] = field(default_factory=list)
    program: tuple[str, ...] = ()

    def advance(self, module, findings: list[Finding]) -> None:
        """A family's result: its findings are on lines of the current text; map them to the user's."""
        self.findings.extend(_in_original_lines(findings, self.texts))
        if module.code != self.texts[-1]:
            self.texts.append(module.code)
        self.module = module

    def result(self, cst) -> Result | FileError:
        new_source = self.module.code
        if new_source != self.original:
            try:
                cst.parse_module(new_source)
            except cst.ParserSyntaxError as error:
                return FileError(self.path, f"internal error: the migrated code does not parse ({error.message}); "
                                            "file left unchanged")
        return Result(new_source, sorted(self.findings), self.program)


def _per_file(text: str, path: str, families: list[Family], enabled, keras: str) -> _FileState | FileError:
    from libcst.codemod import CodemodContext

    try:
        module = _parse(text, path)
    except FileError as error:
        return error
    state = _FileState(path, text, module, [text])
    for family in families:
        rewrite = family.load()(CodemodContext(filename=path), enabled, path, keras)
        try:
            new_module = rewrite.transform_module(state.module)
        except Exception as error:  # a bug in a rewrite must not cost the user their file
            return FileError(path, f"internal error in rewrite {family.module!r}: {error!r}; file left unchanged")
        state.advance(new_module, rewrite.findings)
    return state


def _program_family(family: Family, states: dict[str, _FileState], enabled, keras: str,
                    exists) -> dict[str, FileError]:
    """Run a program family over the group's modules; each module it changes is parsed again for the next.
    A crash of the family fails the files that woke it (returned), and changes nothing."""
    import libcst as cst

    from rewrites.program.modules import Tree

    tree = Tree({path: state.module.code for path, state in states.items()}, exists=exists,
                parsed={path: state.module for path, state in states.items()})
    try:
        outcome = family.load().migrate(tree, frozenset(enabled), keras)
    except Exception as error:  # a bug in a rewrite must not cost the user their files
        return {path: FileError(path, f"internal error in rewrite {family.module!r}: {error!r}; file left unchanged")
                for path in states}
    findings: dict[str, list[Finding]] = {}
    for reported in outcome.findings:
        line, col = reported.view.position(reported.node)
        path = _state_path(states, reported.view.path)
        findings.setdefault(path, []).append(
            Finding(path, line, col, reported.rule, RULES[reported.rule].safety, reported.message))
    changed = {_state_path(states, path): text for path, text in outcome.texts.items()}
    for paths in outcome.programs:
        program = tuple(_state_path(states, path) for path in paths)
        for path in program:
            states[path].program = program
    for path, state in states.items():
        module = cst.parse_module(changed[path]) if path in changed else state.module
        state.advance(module, findings.get(path, []))
    return {}


def _state_path(states: dict, path: str) -> str:
    return next(key for key in states if os.path.normpath(key) == os.path.normpath(path))


def _in_original_lines(findings: list[Finding], texts: list[str]) -> list[Finding]:
    """Findings of a family given ``texts[-1]`` with lines counted in ``texts[0]``, the user's file:
    an import an earlier family added must not shift them."""
    for before, after in reversed(list(zip(texts, texts[1:]))):
        if before != after:
            origin = _line_origin(before, after)
            findings = [replace(finding, line=origin(finding.line)) for finding in findings]
    return findings


def _line_origin(before: str, after: str):
    """A function from a line number of ``after`` to the line of ``before`` it came from (inserted: the next one)."""
    import difflib

    opcodes = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False).get_opcodes()

    def origin(line: int) -> int:
        for _, i1, i2, j1, j2 in opcodes:
            if j1 <= line - 1 < j2:
                return i1 + min(line - 1 - j1, max(i2 - i1 - 1, 0)) + 1
        return line

    return origin


def _parse(source: str, path: str):
    import libcst as cst

    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        message, line, col = _python_syntax_error(source) or (error.message, error.raw_line, error.raw_column + 1)
        line_text = source.splitlines()[line - 1] if 0 < line <= len(source.splitlines()) else ""
        hint = " (this looks like Python 2: run 2to3 first)" if _PYTHON2_HINTS.search(line_text) else ""
        reason = message.splitlines()[0][:200] if message else "syntax error"
        raise FileError(path, f"not valid Python 3: {reason}{hint}", line, col) from None


def _python_syntax_error(source: str) -> tuple[str, int, int] | None:
    """CPython's own account of a syntax error: clearer than the parser's token list."""
    import ast

    try:
        ast.parse(source)
    except SyntaxError as error:
        return error.msg, error.lineno or 0, error.offset or 0
    except (ValueError, RecursionError):
        return None
    return None
