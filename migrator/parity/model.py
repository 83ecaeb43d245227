"""The data of one parity run: what each side measured, and how they compare.

Plain dataclasses that round-trip through JSON (``to_json`` / ``from_json``): the
JSON report is ``asdict(ParityReport)``, its schema versioned by SCHEMA_VERSION.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, get_args, get_origin, get_type_hints

SCHEMA_VERSION = 1


@dataclass
class Variable:
    """A model variable as one side holds it: full shape, and the shard shapes if partitioned."""

    name: str
    shape: list[int]
    shards: list[list[int]] = field(default_factory=list)


@dataclass
class SideRun:
    """What one child process measured."""

    side: str                       # "old" or "new"
    program: str                    # path of the program as run
    python: str                     # interpreter that ran it
    versions: dict[str, str] = field(default_factory=dict)  # python, tensorflow, keras, tensorflow_estimator
    losses: list[float] = field(default_factory=list)        # loss of each training step, before its update
    eval_loss: float | None = None
    variables: list[Variable] = field(default_factory=list)  # model variables in creation order
    wall_seconds: float = 0.0       # the whole child process
    train_seconds: float = 0.0      # the training steps alone
    error: str | None = None        # why the side failed to run: the tail of its error output
    adjustments: list[str] = field(default_factory=list)     # what the harness changed to compare (migrator.parity.alignment)

    @property
    def steps_per_second(self) -> float:
        return len(self.losses) / self.train_seconds if self.train_seconds else 0.0


@dataclass
class StepComparison:
    step: int                       # 1-based
    old: float
    new: float
    abs_diff: float
    rel_diff: float
    ok: bool


@dataclass
class ValueComparison:
    """The eval loss, or one variable's final value, compared."""

    name: str                       # "eval loss", or the old variable name
    new_name: str
    shape: list[int]
    old_shards: list[list[int]]
    new_shards: list[list[int]]
    max_abs_diff: float
    max_rel_diff: float
    ok: bool
    kind: str = "variable"          # "variable", or in a resume run also an optimizer's "slot" or the "step"


@dataclass
class SignatureComparison:
    """One signature of an export, as each side's SavedModel has it, and its answers to the same requests."""

    name: str
    ok: bool
    problems: list[str] = field(default_factory=list)  # each difference, one line
    method: str = ""                # as the old export has it (the new one's, if the old has none)
    inputs: dict[str, list] = field(default_factory=dict)   # key -> [dtype, shape] (shape None: unknown rank)
    outputs: dict[str, list] = field(default_factory=dict)
    requests: int = 0               # examples each side answered (0: no request could be made)
    note: str | None = None         # why no request was made
    max_abs_diff: float = 0.0       # over the numeric outputs
    max_rel_diff: float = 0.0


@dataclass
class ExportComparison:
    """An export folder of both programs (``<model_dir>/export/<name>``, an export_dir_base), the latest export in
    it of each side."""

    name: str                       # the folder, by the path components both sides name alike
    old_path: str | None            # the folder each side exported into, as its program named it (None: none)
    new_path: str | None
    ok: bool
    problems: list[str] = field(default_factory=list)  # an export missing or failing to load
    signatures: list[SignatureComparison] = field(default_factory=list)


@dataclass
class ParityReport:
    verdict: str                    # "parity", "mismatch" or "error"
    message: str                    # one line saying why
    old: SideRun
    new: SideRun
    steps: int
    rtol: float
    atol: float
    data: str                       # "program" or "synthetic"
    cluster: str                    # "in-process: 1 worker, K ps" or "none"
    program_args: list[str] = field(default_factory=list)  # both programs' sys.argv[1:]
    resume: int | None = None       # the old program's steps before the checkpoint both sides resumed from
    first_diverging_step: int | None = None
    step_comparisons: list[StepComparison] = field(default_factory=list)
    eval: ValueComparison | None = None
    variables: list[ValueComparison] = field(default_factory=list)  # final weights, old <-> new by creation order
    exports: list[ExportComparison] = field(default_factory=list)   # the SavedModels both sides exported
    export_check: bool = True       # were the exports compared (--no-export-check: no)
    old_source: str = ""
    new_source: str = ""
    wall_seconds: float = 0.0       # the whole parity run
    schema_version: int = SCHEMA_VERSION

    @property
    def exit_code(self) -> int:
        return {"parity": 0, "mismatch": 1}.get(self.verdict, 2)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for side in ("old", "new"):
            data[side]["steps_per_second"] = getattr(self, side).steps_per_second
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ParityReport:
        return load(cls, data)


def load(kind, data):
    """Rebuild nested dataclasses from ``asdict`` output (extra keys, e.g. derived figures, are ignored)."""
    if data is None:
        return None
    origin = get_origin(kind)
    if origin is list:
        (item,) = get_args(kind)
        return [load(item, value) for value in data]
    if origin is not None:  # Optional[X] and other unions: the dataclass member, if any
        members = [arg for arg in get_args(kind) if is_dataclass(arg)]
        return load(members[0], data) if members else data
    if is_dataclass(kind):
        hints = get_type_hints(kind)
        return kind(**{f.name: load(hints[f.name], data[f.name]) for f in fields(kind) if f.name in data})
    return data
