"""Source texts in, the migrated texts and their findings out.

``migrate_group`` takes the files of one program (a file and the modules of the run it imports,
see ``program_groups``) and runs the enabled rewrite families in catalogue order: the per-file
families on each file, one parse each; then the program families over all the group's modules
at once, so a program whose model_fn lives in another module is migrated in all its files or
in none. Every result is parsed again (a result that does not parse is a bug: that file is
left untouched), and a second run changes nothing. Files whose code uses none of the names a
family handles are never parsed by libcst (migrator/scanning.py), and libcst is imported only when
some file needs it. The families of a file share one parse and one resolution of its metadata
until one of them changes the code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from migrator.findings import FileError, Finding, Safety
from migrator.scanning import FAMILY, Scan, families_for, may_need, scan
from rewrites import FAMILIES, RULES, Family, suppressions

# What a Python 2 line a Python 3 parser chokes on usually looks like.
_PYTHON2_HINTS = re.compile(
    r"^\s*(print\s+[^\s(=]|exec\s+[\"']|except\s+([\w.]+|\([\w.,\s]*\))\s*,\s*\w+\s*:)|`|\b0[0-7]+\b|\bur[\"']")


@dataclass
class Result:
    source: str
    findings: list[Finding] = field(default_factory=list)
    program: tuple[str, ...] = ()   # the files of the migrated program this file is part of, its entry first
    suppressed: list[Finding] = field(default_factory=list)  # findings a `# tf-migrate: ignore` comment suppressed
    # A notebook's: the results of the modules its `%%writefile` cells write (notebooks.written_modules), by cell.
    written: dict[int, Result | FileError] = field(default_factory=dict)


def program_groups(texts: dict[str, str], enabled: Collection[str],
                   scans: dict[str, Scan] | None = None) -> list[list[str]]:
    """The files in groups to migrate together: a program and the modules of the run it imports.
    ``scans``: each file's Scan if the caller has them (files without one need nothing)."""
    from rewrites.program.imports import program_groups as groups

    if scans is None:
        scans = {path: scan(text, enabled) for path, text in texts.items() if may_need(text, enabled)}
    # Only the files grouped here: a file scanned with them and not given here imports them too.
    imports = {path: found.imports for path, found in scans.items() if path in texts and found.imports is not None}
    return groups(texts, lambda path: path in scans and scans[path].wakes_a_program, imports)


def migrate(source: str, path: str, enabled: Collection[str], keras: str = "tf_keras") -> Result:
    """Migrate one file's text on its own. Raises FileError when it cannot be parsed or rewritten safely.

    ``keras``: how generated code imports Keras, "tf_keras" or "tf.keras".
    """
    result = migrate_group({path: source}, enabled, keras)[path]
    if isinstance(result, FileError):
        raise result
    return result


def migrate_group(sources: dict[str, str], enabled: Collection[str], keras: str = "tf_keras",
                  exists: Callable[[str], bool] = os.path.isfile,
                  woken: dict[str, tuple[str, ...]] | None = None) -> dict[str, Result | FileError]:
    """Migrate the files of one group; each file's Result, or the FileError that left it untouched.
    ``woken``: the families each file wakes (Scan.families), if the caller knows them."""
    if woken is None:
        todo = {path: families_for(text, enabled) for path, text in sources.items()}
    else:
        todo = {path: [FAMILY[module] for module in woken.get(path, ())] for path in sources}
    program_families = [family for family in FAMILIES if family.kind == "program"
                        and any(family in families for families in todo.values())]
    if not program_families and not any(todo.values()):
        return {path: with_unused_suppressions(Result(text), path, text, enabled) for path, text in sources.items()}
    states: dict[str, _FileState | FileError] = {}
    first = {path: [f for f in todo[path] if f.kind == "file" and not f.after_programs] for path in sources}
    for path, text in sources.items():
        if todo[path]:
            states[path] = _per_file(_FileState(path, [text]), first[path], enabled, keras, sources)
    _other_modules(states, sources, first, enabled, keras)
    for family in program_families:
        modules = {path: state for path, state in states.items() if isinstance(state, _FileState)}
        modules.update((path, _FileState(path, [text])) for path, text in sources.items() if path not in states)
        failed = _program_family(family, modules, [path for path in sources if family in todo[path]],
                                 enabled, keras, exists)
        states.update((path, state) for path, state in modules.items() if path not in states)
        for path in failed:
            if family in todo[path]:
                states[path] = failed[path]
    for path, state in states.items():
        last = [family for family in todo[path] if family.after_programs]
        if last and isinstance(state, _FileState):
            states[path] = _per_file(state, last, enabled, keras, sources)
    results: dict[str, Result | FileError] = {}
    for path, text in sources.items():
        state = states.get(path)
        if state is None:
            results[path] = with_unused_suppressions(Result(text), path, text, enabled)
        else:
            results[path] = state if isinstance(state, FileError) else with_unused_suppressions(
                state.result(), path, text, enabled)
    return results


def with_unused_suppressions(result: Result, path: str, text: str, enabled: Collection[str]) -> Result:
    """``result`` with a TFM001 finding for each `# tf-migrate: ignore` comment of ``text`` that suppressed
    nothing, if TFM001 is on (the command line turns it on with --check only)."""
    found = suppressions.of(text) if suppressions.UNUSED_RULE in enabled else None
    unused = found.unused(path, result.suppressed) if found else []
    return replace(result, findings=sorted([*result.findings, *unused])) if unused else result


@dataclass
class _FileState:
    """One file as the families rewrite it: its module now, with the metadata resolved on it (shared by every
    family until one changes the code), and the texts it went through."""

    path: str
    texts: list[str]
    wrapper: object = None  # None: its text is not parsed (yet)
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    program: tuple[str, ...] = ()
    # Other modules a rewrite of this file changed with it: path -> (the family, their new text, its findings).
    other_modules: dict[str, tuple[str, str, list]] = field(default_factory=dict)
    printed: str = ""  # libcst's printing of the user's text, once a family changed it

    def parsed(self):
        """The wrapper of the current text, parsed when first needed: the last family's code only by Python's
        own parser (in ``result``). Raises FileError when a family's code does not parse (a bug: the file is
        left as it was)."""
        if self.wrapper is None:
            self.wrapper = _wrapped(_parse(self.texts[-1], self.path, internal=len(self.texts) > 1))
        return self.wrapper

    def unexplained(self, code: str, findings: list[Finding]) -> bool:
        """Whether ``code`` changes the file with no exact or numeric finding (of a rule that is on) saying why."""
        return code != self.texts[-1] and all(finding.safety is Safety.MANUAL for finding in findings)

    def advance(self, code: str, findings: list[Finding], suppressed: list[Finding], family: str,
                enabled: Collection[str]) -> None:
        """A family's result: its findings are on lines of the current text; map them to the user's. Where rule
        enabling is applied: a finding of a rule that is off is dropped, and a change that no finding of a rule
        that is on explains (exact or numeric) is a bug of the family: FileError, the file left as it was."""
        findings = [finding for finding in findings if finding.rule in enabled]
        if self.unexplained(code, findings):
            raise FileError(self.path, f"internal error in rewrite {family!r}: it changed the file without an "
                                       "exact or numeric finding of a rule that is on; file left unchanged")
        self.findings.extend(_in_original_lines(findings, self.texts))
        self.suppressed.extend(_in_original_lines(suppressed, self.texts))
        if code != self.texts[-1]:
            if len(self.texts) == 1:
                self.printed = self.parsed().printing.code  # printed already if the family reported positions
            self.wrapper = None
            self.texts.append(code)

    def result(self) -> Result | FileError:
        from migrator.untouched import first_difference, with_untouched_lines

        text = self.texts[-1]
        if len(self.texts) > 1:
            if self.wrapper is None and (error := _generated_syntax_error(text, self.path)):
                return error
            text = with_untouched_lines(self.texts[0], self.printed, text)
            if text is None:
                return FileError(self.path, "libcst does not print this file back as it is (line "
                                            f"{first_difference(self.texts[0], self.printed)}); file left unchanged")
        return Result(text, sorted(self.findings), self.program, sorted(set(self.suppressed)))


def _generated_syntax_error(code: str, path: str) -> FileError | None:
    import ast

    try:
        compile(code, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return FileError(path, f"internal error: the migrated code does not parse ({error}); file left unchanged")
    return None


def _wrapped(module):
    from rewrites.metadata import Parsed

    return Parsed(module)


def _per_file(state: _FileState, families: list[Family], enabled, keras: str,
              run: dict[str, str] | None = None) -> _FileState | FileError:
    from libcst.codemod import CodemodContext

    path = state.path
    try:
        for family in families:
            wrapper = state.parsed()
            rewrite = family.load()(CodemodContext(filename=path), enabled, path, keras)
            rewrite.suppressions = suppressions.of(state.texts[-1])
            rewrite.run = run or {path: state.texts[0]}
            try:
                code = _transform(rewrite, wrapper).code
            except Exception as error:  # a bug in a rewrite must not cost the user their file
                return FileError(path, f"internal error in rewrite {family.module!r}: {error!r}; file left unchanged")
            state.advance(code, rewrite.findings, rewrite.suppressed, family.module, enabled)
            state.other_modules.update((other, (family.module, *change))
                                       for other, change in rewrite.other_modules.items())
    except FileError as error:
        return error
    return state


def _other_modules(states: dict, sources: dict[str, str], families: dict[str, list[Family]], enabled,
                   keras: str) -> None:
    """The changes a file's rewrite made to other modules of the group (a between-graph program's input function
    in its model module): each such module migrates again from its edited text, and the two files change together
    or neither does."""
    for path, state in list(states.items()):
        for other, (family, code, reported) in getattr(state, "other_modules", {}).items():
            target = _state_path(sources, other)
            edited = _FileState(target, [sources[target]])
            findings = [Finding(target, line, column, rule, RULES[rule].safety, message)
                        for rule, line, column, message in reported]
            try:
                edited.advance(code, findings, [], family, enabled)
                done = _per_file(edited, families[target], enabled, keras, sources)
                if isinstance(done, FileError):
                    raise done
            except FileError as error:
                states[path], states[target] = (FileError(each, f"{error.message} ({os.path.basename(target)}, "
                                                                "changed with it)") for each in (path, target))
                continue
            states[target] = done
            done.program = state.program = (path, target)


def _transform(rewrite, wrapper):
    """What libcst's ``transform_module`` does, on the tree itself instead of a copy, its metadata resolved on
    demand."""
    from dataclasses import replace as changed

    from rewrites.import_passes import apply_scheduled
    from rewrites.metadata import lazily_resolved

    rewrite.metadata = lazily_resolved(wrapper, rewrite.get_inherited_dependencies())
    rewrite.context = changed(rewrite.context, wrapper=wrapper)
    module = wrapper.module.visit(rewrite)
    return apply_scheduled(module, rewrite.context)


def _program_family(family: Family, states: dict[str, _FileState], woken: list[str], enabled, keras: str,
                    exists) -> dict[str, FileError]:
    """Run a program family over the group's modules (programs start in the ``woken`` ones). A module that is
    not Python 3 fails alone (the family runs again without it); a crash of the family fails the files
    (returned), and changes nothing."""
    from rewrites.program.modules import Tree

    failed = {}
    for path, state in states.items():
        try:
            if len(state.texts) > 1:  # an earlier family's code: parsed now, where its errors fail only its file
                state.parsed()
        except FileError as error:
            failed[path] = error
    while True:
        readable = {path: state for path, state in states.items() if path not in failed}
        tree = Tree({path: state.texts[-1] for path, state in readable.items()}, exists=exists,
                    parsed={path: state.wrapper for path, state in readable.items() if state.wrapper is not None},
                    woken=[path for path in woken if path in readable],
                    parse=lambda path, code: _wrapped(_parse(code, path)),
                    originals={path: state.texts[0] for path, state in readable.items() if len(state.texts) > 1})
        try:
            outcome = family.load().migrate(tree, frozenset(enabled), keras)
            break
        except FileError as error:  # a module an import led to, which does not parse
            failed[_state_path(states, error.path)] = error
        except Exception as error:  # a bug in a rewrite must not cost the user their files
            return {path: FileError(path, f"internal error in rewrite {family.module!r}: {error!r}; file left "
                                          "unchanged") for path in states}
    findings: dict[str, list[Finding]] = {}
    suppressed: dict[str, list[Finding]] = {}
    for reported, into in [*((each, findings) for each in outcome.findings),
                           *((each, suppressed) for each in outcome.suppressed)]:
        line, col = reported.view.position(reported.node)
        path = _state_path(states, reported.view.path)
        into.setdefault(path, []).append(
            Finding(path, line, col, reported.rule, RULES[reported.rule].safety, reported.message))
    changed = {_state_path(states, path): text for path, text in outcome.texts.items()}
    for paths in outcome.programs:
        program = tuple(_state_path(states, path) for path in paths)
        for path in program:
            states[path].program = program
    unexplained = [path for path, state in readable.items() if state.unexplained(
        changed.get(path, state.texts[-1]), [each for each in findings.get(path, []) if each.rule in enabled])]
    if unexplained:  # a program changes in all its files or none
        return {path: FileError(path, f"internal error in rewrite {family.module!r}: it changed {unexplained[0]} "
                                      "without an exact or numeric finding of a rule that is on; file left unchanged")
                for path in states}
    for path, state in readable.items():
        try:
            state.advance(changed.get(path, state.texts[-1]), findings.get(path, []), suppressed.get(path, []),
                          family.module, enabled)
        except FileError as error:
            failed[path] = error
    return failed


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


def _parse(source: str, path: str, internal: bool = False):
    """libcst's module of ``source``. The user's code goes to Python's own parser first: libcst takes some
    Python 2 (``except E, e:``), crashes on code nested too deep, and says less clearly what is wrong."""
    import libcst as cst

    if not internal:
        _check_python(source, path)
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        if internal:
            raise FileError(path, f"internal error: the migrated code does not parse ({error.message}); "
                                  "file left unchanged") from None
        reason = error.message.splitlines()[0][:200] if error.message else "syntax error"
        raise FileError(path, f"Python 3 that libcst cannot parse: {reason}", error.raw_line,
                        error.raw_column + 1) from None


def _check_python(source: str, path: str) -> None:
    """Raises FileError with CPython's account of why ``source`` is not Python 3, if it is not."""
    import ast

    try:
        compile(source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        line, lines = error.lineno or 0, source.splitlines()
        line_text = lines[line - 1] if 0 < line <= len(lines) else ""
        hint = " (this looks like Python 2: run 2to3 first)" if _PYTHON2_HINTS.search(line_text) else ""
        raise FileError(path, f"not valid Python 3: {error.msg}{hint}", line, error.offset or 0) from None
    except (RecursionError, MemoryError):  # what CPython raises for code nested too deep
        raise FileError(path, "not valid Python 3: nested too deeply for Python's parser") from None
