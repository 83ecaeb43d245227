"""A parity run for people and for CI: terminal summary, JSON file, self-contained HTML page."""

from __future__ import annotations

import difflib
import json
import math
import shlex
from dataclasses import dataclass
from pathlib import Path

from migrator.files import write_report_file
from migrator.parity.model import ParityReport, SideRun
from migrator.report import code_html, prose_html

VERDICT_COLORS = {"parity": "32", "mismatch": "31", "error": "33"}  # ANSI green, red, yellow
TABLE_HEAD, TABLE_TAIL, TABLE_AROUND = 3, 2, 1  # steps the terminal table shows of a long run


# -- terminal ---------------------------------------------------------------------------------------

def terminal_summary(report: ParityReport, color: bool = False) -> str:
    def paint(text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if color else text

    lines = [f"{paint(report.verdict.upper(), '1;' + VERDICT_COLORS[report.verdict])}: {report.message}"]
    lines += [f"  {run.side}  {run.program}  {describe_side(run)}" for run in (report.old, report.new)]
    lines.append(f"  {report.steps} steps, data {report.data}, cluster {report.cluster}, "
                 f"rtol {report.rtol:g}, atol {report.atol:g}, {report.wall_seconds:.1f} s in all")
    if report.resume:
        lines.append(f"  both sides resumed from the old program's checkpoint of step {report.resume}")
    if report.program_args:
        lines.append(f"  arguments of both programs: {shlex.join(report.program_args)}")
    lines += [f"  adjusted, {run.side} side: {note}" for run in (report.old, report.new) for note in run.adjustments]
    for run in (report.old, report.new):
        if run.error:
            lines += ["", f"  last lines of the {run.side} program's output:"]
            lines += [f"  | {line}" for line in run.error.splitlines()]
    if report.step_comparisons:
        lines += ["", *step_table(report, paint)]
    diverged = [v for v in report.variables if not v.ok]
    if report.variables:
        lines.append(f"  final weights: {len(report.variables) - len(diverged)} of {len(report.variables)} "
                     f"{'variables, slots and steps' if report.resume else 'variables'} match"
                     + "".join(f"\n    {paint('differs', '31')}  {v.name}{'' if v.kind == 'variable' else ' / ' + v.new_name}"
                               f"  (max abs diff {v.max_abs_diff:.3g})" for v in diverged))
    lines += export_lines(report, paint)
    return "\n".join(lines)


def export_lines(report: ParityReport, paint) -> list[str]:
    """A line per export: its signatures the same and answering alike, or each difference."""
    lines = []
    for export in report.exports:
        names = ", ".join(signature.name for signature in export.signatures)
        answered = max((signature.requests for signature in export.signatures), default=0)
        if export.ok:
            worst = max((signature.max_rel_diff for signature in export.signatures), default=0.0)
            lines.append(f"  export {export.name}: the same signatures ({names}), "
                         + (f"{answered} requests answered alike (max rel diff {worst:.3g})" if answered
                            else "answers not compared"))
            continue
        lines.append(f"  export {export.name}: {paint('differs', '31')}")
        lines += [f"    {problem}" for problem in export.problems]
        lines += [f"    {signature.name}: {problem}" for signature in export.signatures
                  for problem in signature.problems]
    if not report.export_check:
        lines.append("  exports not compared (--no-export-check)")
    return lines


def describe_side(run: SideRun) -> str:
    versions = ", ".join(f"{name} {version}" for name, version in run.versions.items())
    speed = f", {run.steps_per_second:.1f} steps/s" if run.train_seconds else ""
    return f"({versions or 'no result'}; {run.wall_seconds:.1f} s{speed})"


def step_table(report: ParityReport, paint) -> list[str]:
    lines = [f"  {'step':>5}  {'old loss':>15}  {'new loss':>15}  {'abs diff':>10}  {'rel diff':>10}"]
    shown = steps_to_show(report)
    previous = 0
    for comparison in report.step_comparisons:
        if comparison.step not in shown:
            continue
        if comparison.step != previous + 1:
            lines.append(f"  {'...':>5}")
        row = (f"  {comparison.step:>5}  {comparison.old:>15.9g}  {comparison.new:>15.9g}  "
               f"{comparison.abs_diff:>10.3g}  {comparison.rel_diff:>10.3g}")
        lines.append(row if comparison.ok else paint(row + "  <- past tolerance", "31"))
        previous = comparison.step
    if previous != len(report.step_comparisons):
        lines.append(f"  {'...':>5}")
    if report.eval is not None:
        old, new = report.old.eval_loss, report.new.eval_loss
        row = f"  {'eval':>5}  {fmt(old):>15}  {fmt(new):>15}  {report.eval.max_abs_diff:>10.3g}  {report.eval.max_rel_diff:>10.3g}"
        lines.append(row if report.eval.ok else paint(row + "  <- past tolerance", "31"))
    return lines


def steps_to_show(report: ParityReport) -> set[int]:
    """All steps of a short run; of a long one the first and last few and those around the divergence."""
    count = len(report.step_comparisons)
    if count <= TABLE_HEAD + TABLE_TAIL + 2 * TABLE_AROUND + 1:
        return set(range(1, count + 1))
    shown = set(range(1, TABLE_HEAD + 1)) | set(range(count - TABLE_TAIL + 1, count + 1))
    if report.first_diverging_step is not None:
        step = report.first_diverging_step
        shown |= set(range(max(1, step - TABLE_AROUND), min(count, step + TABLE_AROUND) + 1))
    return shown


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.9g}"


# -- files ------------------------------------------------------------------------------------------

def write_json(report: ParityReport, path: Path) -> None:
    write_report_file(path, json.dumps(report.to_json(), indent=2, allow_nan=True) + "\n")


def write_html(report: ParityReport, path: Path) -> None:
    write_report_file(path, render_html(report))


# -- HTML -------------------------------------------------------------------------------------------

def render_html(report: ParityReport) -> str:
    from templates import render

    return render("parity_report.html.j2", report=report, chart=loss_chart(report),
                  source_rows=side_by_side(report.old_source, report.new_source), fmt=fmt, code=code_html,
                  prose=prose_html)


@dataclass
class Chart:
    """An SVG line chart of both sides' per-step losses, as coordinates the template draws."""

    width: int
    height: int
    left: int
    top: int
    bottom: int
    old_points: str
    new_points: str
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    divergence_x: float | None


def loss_chart(report: ParityReport, width: int = 760, height: int = 300) -> Chart | None:
    finite = [v for v in report.old.losses + report.new.losses if math.isfinite(v)]
    if not finite:
        return None
    left, right, top, bottom = 80, 20, 15, height - 35
    steps = max(len(report.old.losses), len(report.new.losses), 2)
    low, high = min(finite), max(finite)
    if high == low:
        low, high = low - 0.5, high + 0.5
    y_values, y_step = nice_ticks(low, high, 5)
    low, high = y_values[0], y_values[-1]  # the axis runs from tick to tick
    decimals = max(0, -math.floor(math.log10(y_step)))

    def x(step: float) -> float:
        return left + (step - 1) / (steps - 1) * (width - left - right)

    def y(loss: float) -> float:
        return bottom - (loss - low) / (high - low) * (bottom - top)

    def points(losses: list[float]) -> str:
        return " ".join(f"{x(step):.1f},{y(loss):.1f}" for step, loss in enumerate(losses, 1) if math.isfinite(loss))

    step_every = max(1, round(nice_ticks(1, steps, 8)[1]))
    tick_steps = sorted({1, *range(step_every, steps + 1, step_every)})
    divergence = report.first_diverging_step
    return Chart(width, height, left, top, bottom, points(report.old.losses), points(report.new.losses),
                 [(x(s), str(s)) for s in tick_steps], [(y(v), f"{v:.{decimals}f}") for v in y_values],
                 x(divergence) if divergence else None)


def nice_ticks(low: float, high: float, count: int) -> tuple[list[float], float]:
    """About ``count`` intervals of a round size (1, 2 or 5 times a power of ten) covering [low, high]: the
    ticks, from the round value at or below ``low`` to the one at or above ``high``, and the interval."""
    rough = (high - low) / count
    power = 10.0 ** math.floor(math.log10(rough))
    interval = next(power * multiple for multiple in (1, 2, 5, 10) if power * multiple >= rough)
    first, last = math.floor(low / interval), math.ceil(high / interval)
    return [k * interval for k in range(first, last + 1)], interval


@dataclass
class SourceRow:
    old_number: int | None
    old_line: str
    new_number: int | None
    new_line: str
    kind: str  # "same", "changed", "removed", "added"


def side_by_side(old: str, new: str) -> list[SourceRow]:
    """Old and new source aligned line by line, changed lines marked (difflib's opcodes)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    rows = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for offset in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + offset, j1 + offset
            old_present, new_present = i < i2, j < j2
            kind = {"equal": "same", "delete": "removed", "insert": "added"}.get(tag, "changed")
            if tag == "replace" and not (old_present and new_present):
                kind = "removed" if old_present else "added"
            rows.append(SourceRow(i + 1 if old_present else None, old_lines[i] if old_present else "",
                                  j + 1 if new_present else None, new_lines[j] if new_present else "", kind))
    return rows

