"""Jupyter notebooks: their code cells as one program in, the migrated program back into the cells.

The code cells are joined into one Python program, each preceded by a marker
statement (``__tf_migrate_cell__(N)``), so a name defined in one cell and used in
another resolves, and the rewrites see one module. IPython syntax is hidden from
them: a line magic, shell escape or help request (``%time x``, ``!pip ...``,
``files = !ls``, ``obj?``) that starts a statement (not a line inside a string or
brackets), and the first line of a cell magic that runs Python (``%%time``), becomes
``__tf_migrate_magic__(K)`` at the same indentation; a cell magic of another language
(``%%bash``) keeps its whole cell out of the program. After the migration the
program is cut at the markers and the hidden lines are put back as they were.

A code cell that still does not parse as Python 3 is told apart like this: it is
not Python, and left out of the program with a note, when its first line is a
one-`%` magic that is not one of IPython's line magics (Datalab wrote cell magics so:
``%bash``, ``%bq query``), or when Python's parser stops on a statement that starts
with an IPython command written without `%` followed by its arguments (automagic:
``ls -la``, ``cd dir``, ``pip install x``). Any other cell that does not parse is
Python with a syntax error, and the notebook fails as a .py file would. A cell is
never migrated unless it parsed.

Only the ``source`` of changed code cells is replaced in the JSON text (see
migrator.notebook_json); every other byte of the file stays: cell count, order, ids,
metadata, markdown and outputs, and the JSON layout, whatever it is, so a git diff
shows only the changed source lines. The notebook is read and checked with nbformat
(version 4).
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from migrator.findings import FileError, Note
from migrator.notebook_json import replace_sources

CELL = "__tf_migrate_cell__"
MAGIC = "__tf_migrate_magic__"
_CELL_LINE = re.compile(rf"^{CELL}\((\d+)\)$")
_MAGIC_LINE = re.compile(rf"^(\s*){MAGIC}\((\d+)\)$", re.MULTILINE)
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}
# IPython's line magics and aliases (and the line magics of common extensions): the names IPython also runs
# without `%` (automagic), and the one-`%` first lines that are no Datalab cell magic.
LINE_MAGICS = set("""alias alias_magic autoawait autocall automagic autosave bookmark cat cd clear colors conda config
    connect_info cp debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load
    load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic mamba man matplotlib micromamba
    mkdir more mv notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch
    psource pushd pwd pycat pylab qtconsole quickref recall rehashx reload_ext rep rerun reset reset_selective rm
    rmdir run save sc set_env store sx system tb time timeit unalias unload_ext who who_ls whos xdel xmode
    autoreload aimport tensorflow_version tensorboard""".split())
_WRITEFILE = re.compile(r"\s*%%writefile(?P<append>[ \t]+-a)?[ \t]+(?P<target>\S+\.py)[ \t]*\n(?P<body>.*)", re.DOTALL)
_AUTOMAGIC = re.compile(r"^\s*(\w+)[ \t]+(?![=,\s]|[-+*/%&|^<>!]?=)")  # `ls -la`, `cd dir`; not `ls = 1`, `ls += 1`
NOT_PYTHON = "not read as Python: {}; left as it is, and the names it defines are unknown to the other cells"
_IPYTHON_LINE = re.compile(r"""^\s*(
    [%!?]                                  # %magic, !shell, ?help
  | %{0,2}[\w.*]+\?{1,2}\s*$               # help?, obj.attr??, %magic?
  | [\w.]+(\s*,\s*[\w.]+)*\s*=\s*[%!]     # files = !ls, t = %timeit -o f()
)""", re.VERBOSE)


@dataclass
class Notebook:
    """A notebook read for migration."""

    path: str
    data: dict                   # the JSON, keys in the file's order
    text: str                    # the JSON as the file spells it
    program: str = ""            # the code cells as one program, IPython lines hidden
    magics: list[str] = field(default_factory=list)   # the hidden lines, by placeholder number
    starts: dict[int, int] = field(default_factory=dict)  # code cell index -> program line of its first line
    notes: list[Note] = field(default_factory=list)   # code cells left out of the program: not Python
    written: list[tuple[int, str, str]] = field(default_factory=list)  # %%writefile PATH.py cells: index, PATH, body
    appended: set[int] = field(default_factory=set)  # the cells of `written` that append (%%writefile -a)

    @property
    def cells(self) -> list[dict]:
        return self.data["cells"]

    def cell_source(self, index: int) -> str:
        return _source(self.cells[index])

    def locate(self, line: int) -> tuple[int, int]:
        """A line of the program -> (cell number counted from 1, line in that cell)."""
        before = [(start, index) for index, start in self.starts.items() if start <= line]
        start, index = max(before) if before else min((start, index) for index, start in self.starts.items())
        return index + 1, max(line - start + 1, 1)


def read_notebook(path: str, text: str) -> Notebook:
    """Parse and check a notebook; FileError saying what is wrong with it."""
    import nbformat

    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise FileError(path, f"not a notebook: invalid JSON ({error.msg})", error.lineno, error.colno) from None
    except RecursionError:
        raise FileError(path, "not a notebook: JSON nested too deeply") from None
    _check_version(path, data)
    try:
        node = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
        nbformat.validate(node)
    except nbformat.ValidationError as error:
        raise FileError(path, f"not a valid nbformat 4 notebook: {error.message}") from None
    except (AttributeError, TypeError, KeyError, ValueError):  # JSON that is no notebook at all (nbformat trips)
        raise FileError(path, "not a notebook: no nbformat 4 structure") from None
    notebook = Notebook(path, data, text)
    _build_program(notebook)
    return notebook


def _check_version(path: str, data: object) -> None:
    """Before nbformat, which asserts, or fails to import a module, on a version it does not know."""
    if not isinstance(data, dict):
        raise FileError(path, "not a notebook: no nbformat 4 structure")
    if "nbformat" not in data:
        raise FileError(path, "not a notebook: no nbformat version")
    for key in ("nbformat", "nbformat_minor"):
        if key in data and type(data[key]) is not int:  # nor a bool
            raise FileError(path, f"not a notebook: {key} {json.dumps(data[key])} is not a version number")
    if data["nbformat"] != 4:
        raise FileError(path, f"nbformat {data['nbformat']} notebook: only version 4 is migrated (convert it with "
                              "`jupyter nbconvert --to notebook --nbformat 4`)")


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _build_program(notebook: Notebook) -> None:
    lines: list[str] = []
    for index, cell in enumerate(notebook.cells):
        text = _source(cell)
        if cell.get("cell_type") != "code":
            continue
        if _is_foreign_cell(text):  # a cell of another language (%%bash), or the text of a file (%%writefile)
            written = _WRITEFILE.match(text)
            if written:
                notebook.written.append((index, written["target"], written["body"]))
                if written["append"]:
                    notebook.appended.add(index)
            continue
        hidden = len(notebook.magics)
        program = _hide_ipython(text, notebook.magics)
        reason = _not_python(text, program)
        if reason:
            del notebook.magics[hidden:]
            notebook.notes.append(Note(notebook.path, index + 1, reason[0], 1, NOT_PYTHON.format(reason[1])))
            continue
        lines.append(f"{CELL}({index})")
        notebook.starts[index] = len(lines) + 1
        lines.extend(program.split("\n"))
    notebook.program = "\n".join(lines) + "\n"


def _is_foreign_cell(text: str) -> bool:
    """A cell magic whose body is not Python; `%%time` and its kind run the Python below them."""
    first = text.lstrip().split("\n", 1)[0]
    return first.startswith("%%") and first[2:].split(" ", 1)[0] not in PYTHON_CELL_MAGICS


def _hide_ipython(text: str, magics: list[str]) -> str:
    """The cell with each IPython-only line replaced by a placeholder call at its indentation."""
    try:
        ast.parse(text)
        return text
    except SyntaxError:
        pass
    hidden: list[str] = []
    statement: list[str] = []  # the lines of a statement still open (a bracket, string or backslash)
    continued = None  # the indentation of an IPython line that ends with a backslash: its next line is its own
    for line in text.split("\n"):
        if continued is not None or (not statement and _IPYTHON_LINE.match(line)):
            indent = line[: len(line) - len(line.lstrip())] if continued is None else continued
            hidden.append(f"{indent}{MAGIC}({len(magics)})")
            magics.append(line)
            continued = indent if line.endswith("\\") else None
            continue
        hidden.append(line)
        statement.append(line)
        if not _is_open(statement):
            statement.clear()
    return "\n".join(hidden)


def _not_python(text: str, program: str) -> tuple[int, str] | None:
    """(line, why) if a code cell (``program``: its IPython lines hidden) is not Python, as the module's docstring
    tells; None if it parses, or is Python with a syntax error."""
    try:
        compile(program, "<cell>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return None
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:  # the engine reports these
        stop = getattr(error, "lineno", None) or 1
    lines = text.split("\n")
    first = next((number for number, line in enumerate(lines) if line.strip()), 0)
    magic = re.match(r"\s*%(\w+)", lines[first])
    if magic and magic.group(1) not in LINE_MAGICS:
        return first + 1, f"`%{magic.group(1)}` on its first line makes it a cell magic (Datalab's `%%{magic.group(1)}`)"
    command = _AUTOMAGIC.match(lines[stop - 1]) if stop <= len(lines) else None
    if command and command.group(1) in LINE_MAGICS and not _is_open(program.split("\n")[:stop - 1]):
        return stop, f"`{lines[stop - 1].strip()}` is an IPython command written without `%`"
    return None


def _is_open(lines: list[str]) -> bool:
    """Whether these lines end inside a bracket, a string or after a backslash: the next line continues them."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            pass
    except tokenize.TokenError:  # EOF in multi-line string / statement
        return True
    except SyntaxError:  # a bad dedent: the statement is over, ast reports the error later
        return False
    return False


def changed_cells(notebook: Notebook, program: str) -> dict[int, tuple[str, str]]:
    """Code cell index -> (source, migrated source), for the cells the migrated program changes."""
    changes = {}
    for index, text in split(notebook, program).items():
        original = _source(notebook.cells[index])
        if text != original:
            changes[index] = (original, text)
    return changes


def written_modules(notebook: Notebook) -> dict[str, tuple[int, str]]:
    """The modules the notebook's `%%writefile PATH.py` cells write, migrated with it: each one's path (beside the
    notebook, where Jupyter runs its cells) -> (its cell's index, its text). The cells ``written_left`` gives are
    left out."""
    left = written_left(notebook)
    return {_written_path(notebook, target): (index, body) for index, target, body in notebook.written
            if index not in left}


def written_left(notebook: Notebook) -> dict[int, str]:
    """The `%%writefile PATH.py` cells whose module is not migrated, and why."""
    paths: dict[str, list[int]] = {}
    for index, target, _ in notebook.written:
        paths.setdefault(_written_path(notebook, target), []).append(index)
    left = {}
    for index, target, _ in notebook.written:
        if index in notebook.appended:
            left[index] = "the cell appends to it (`-a`)"
        # A folder a variable names (`{project_folder}/train.py`) is the one folder all the same.
        elif re.search(r"[{}$~]", re.sub(r"^\{\w+\}/", "", target)):
            left[index] = "its path is known only when the cell runs"
        elif len(paths[_written_path(notebook, target)]) > 1:
            left[index] = "another cell writes the same file"
    return left


def _written_path(notebook: Notebook, target: str) -> str:
    return os.path.normpath(os.path.join(os.path.dirname(notebook.path), target))


def migrated_text(notebook: Notebook, program: str, written: dict[int, str] | None = None) -> str:
    """The notebook's JSON text, the source of each cell the migrated program changes replaced, in the file's own
    layout (the text itself if none changes); ``written``: a `%%writefile` cell's index -> its module migrated."""
    changes = {index: text for index, (_, text) in changed_cells(notebook, program).items()}
    for index, module in (written or {}).items():
        original = _source(notebook.cells[index])
        header = original[:len(original) - len(_WRITEFILE.match(original)["body"])]
        if header + module != original:
            changes[index] = header + module
    try:
        return replace_sources(notebook.text, notebook.data, changes) if changes else notebook.text
    except ValueError as error:
        raise FileError(notebook.path, f"internal error: {error}; file left unchanged") from None


def split(notebook: Notebook, program: str) -> dict[int, str]:
    """Code cell index -> its source in the migrated program (lines before the first cell go to the first)."""
    program = _MAGIC_LINE.sub(lambda match: notebook.magics[int(match.group(2))], program)
    parts: dict[int, list[str]] = {}
    before: list[str] = []  # what a rewrite put above the first cell: imports it added
    current = before
    for line in program.split("\n"):
        marker = _CELL_LINE.match(line)
        if marker:
            current = parts.setdefault(int(marker.group(1)), [])
        else:
            current.append(line)
    added = "\n".join(before).strip("\n")
    if parts and added:
        _place_imports(parts, added.split("\n"))
    sources = {}
    for index, lines in parts.items():
        original = _source(notebook.cells[index])
        text = "\n".join(lines).strip("\n")
        if text == original.strip("\n"):
            sources[index] = original
        else:
            sources[index] = text + ("\n" if original.endswith("\n") else "")
    return sources


def _place_imports(parts: dict[int, list[str]], imports: list[str]) -> None:
    """Imports a rewrite added above the first cell go into the first cell that has some: after its leading
    imports, before its first other statement (what a rewrite added there may read them; a cell may import more
    after its code); else at the top of the first cell, below its magics."""
    for index in sorted(parts):
        lines = parts[index]
        if not any(line.startswith(("import ", "from ")) for line in lines):
            continue
        code = next((i for i, line in enumerate(lines) if line[:1] not in ("", " ", "\t", "#", "%", "!", ")")
                     and not line.startswith(("import ", "from "))), len(lines))
        while code and (not lines[code - 1].strip() or lines[code - 1].startswith("#")):  # above its comments
            code -= 1
        lines[code:code] = imports
        return
    first = parts[min(parts)]
    magics = next((i for i, line in enumerate(first) if not line.startswith(("%", "!"))), len(first))
    first[magics:magics] = imports  # below the cell's leading magics


def runnable(notebook: Notebook, program: str) -> str:
    """The program as a script: the cell markers gone, each IPython line a `pass`."""
    program = _MAGIC_LINE.sub(lambda match: f"{match.group(1)}pass  # {notebook.magics[int(match.group(2))].strip()}",
                              program)
    return "\n".join(line for line in program.split("\n") if not _CELL_LINE.match(line)) + "\n"


def is_notebook(path: Path | str) -> bool:
    return str(path).endswith(".ipynb")
