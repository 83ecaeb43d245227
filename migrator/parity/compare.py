"""The verdict: per-step losses, eval loss and final weights of the two sides, against tolerances."""

from __future__ import annotations

import math

from migrator.parity.model import ExportComparison, ParityReport, SideRun, StepComparison, ValueComparison


def close(old: float, new: float, rtol: float, atol: float) -> bool:
    """numpy.isclose's rule, with the old side as the reference; NaN matches only NaN."""
    if math.isnan(old) or math.isnan(new):
        return math.isnan(old) and math.isnan(new)
    return abs(new - old) <= atol + rtol * abs(old)


def relative(old: float, new: float) -> float:
    difference = abs(new - old)
    return difference / abs(old) if old else (0.0 if difference == 0 else math.inf)


def compare_steps(old: list[float], new: list[float], rtol: float, atol: float) -> list[StepComparison]:
    return [
        StepComparison(step, o, n, abs(n - o), relative(o, n), close(o, n, rtol, atol))
        for step, (o, n) in enumerate(zip(old, new), start=1)
    ]


def compare_eval(old: float | None, new: float | None, rtol: float, atol: float) -> ValueComparison | None:
    if old is None and new is None:
        return None
    ok = old is not None and new is not None and close(old, new, rtol, atol)
    difference = abs(new - old) if old is not None and new is not None else math.inf
    rel = relative(old, new) if old is not None and new is not None else math.inf
    return ValueComparison("eval loss", "eval loss", [], [], [], difference, rel, ok)


def compare_weights(mapping: list[dict], old_final: dict, new_final: dict, rtol: float, atol: float) -> list[ValueComparison]:
    """Final values of each mapped pair of variables, every element against the tensor's scale.

    An element is close when |new - old| <= atol + rtol * max|old| over the tensor: element by
    element, a weight that training left near zero would turn float rounding in its updates
    (which Adam or RMSprop scale up to the learning rate) into a large relative difference.
    """
    import numpy as np

    results = []
    for pair in mapping:
        old_value, new_value = old_final.get(pair["old"]), new_final.get(pair["new"])
        if old_value is None or new_value is None or old_value.shape != new_value.shape:
            max_abs = max_rel = math.inf
            ok = False
        else:
            max_abs, max_rel, ok = compare_tensor(old_value.astype(np.float64), new_value.astype(np.float64), rtol, atol)
        results.append(ValueComparison(pair["old"], pair["new"], pair["shape"], pair["old_shards"], pair["new_shards"],
                                       max_abs, max_rel, ok, pair.get("kind", "variable")))
    return results


def compare_tensor(old, new, rtol: float, atol: float) -> tuple[float, float, bool]:
    """(max abs diff, that over the tensor's scale max|old|, within tolerance); NaN matches only NaN."""
    import numpy as np

    if not np.array_equal(np.isnan(old), np.isnan(new)):
        return math.inf, math.inf, False
    present = ~np.isnan(old)
    scale = float(np.abs(old[present]).max(initial=0.0))
    max_abs = float(np.abs(new - old)[present].max(initial=0.0))
    return max_abs, relative(scale, scale + max_abs), max_abs <= atol + rtol * scale


def verdict(report: ParityReport, mapping_error: str | None) -> tuple[str, str]:
    """("parity" | "mismatch", one line saying why)."""
    old, new = report.old, report.new
    problems = []
    if mapping_error:
        problems.append(mapping_error)
    if len(old.losses) != len(new.losses):
        problems.append(f"the old program trained {len(old.losses)} steps, the new one {len(new.losses)}")
    if report.first_diverging_step is not None:
        step = report.step_comparisons[report.first_diverging_step - 1]
        problems.append(f"losses diverge from step {step.step} (old {step.old:.9g}, new {step.new:.9g}, "
                        f"rel diff {step.rel_diff:.3g})")
    if report.eval is not None and not report.eval.ok:
        problems.append(_eval_problem(old, new))
    for kind, what in (("variable", "final weights"), ("slot", "optimizer slots"), ("step", "steps")):
        diverged = [v.name if kind != "step" else f"{v.name} / {v.new_name}" for v in report.variables
                    if not v.ok and v.kind == kind]
        if diverged:
            problems.append(f"{what} differ: {', '.join(diverged)}")
    differing = export_problems(report.exports)
    if differing:
        more = f" (and {len(differing) - 1} more)" if len(differing) > 1 else ""
        problems.append(f"the exports differ: {differing[0]}{more}")
    if problems:
        return "mismatch", "; ".join(problems)
    worst = max((s.rel_diff for s in report.step_comparisons), default=0.0)
    return "parity", (f"{len(report.step_comparisons)} steps match (max rel diff {worst:.3g}), "
                      f"eval loss {'matches' if report.eval else 'not compared'}, " + matched(report.variables)
                      + exports_matched(report.exports))


def export_problems(exports: list[ExportComparison]) -> list[str]:
    """Every difference of the exports, each naming its export (and signature)."""
    return [f"{export.name}: {problem}" for export in exports for problem in export.problems] + [
        f"{export.name}, signature '{signature.name}': {problem}" for export in exports
        for signature in export.signatures for problem in signature.problems]


def exports_matched(exports: list[ExportComparison]) -> str:
    """", 2 exports serve alike (5 signatures)", or nothing when there were none."""
    if not exports:
        return ""
    signatures = sum(len(export.signatures) for export in exports)
    return (f", {len(exports)} export{'s' if len(exports) != 1 else ''} serve{'s' if len(exports) == 1 else ''} "
            f"alike ({signatures} signature{'s' if signatures != 1 else ''})")


def matched(variables: list[ValueComparison]) -> str:
    """"6 variables match", or in a resume run "6 variables, 12 slots and the step match"."""
    counts = [(sum(v.kind == kind for v in variables), kind) for kind in ("variable", "slot")]
    parts = [f"{count} {kind}{'s' if count != 1 else ''}" for count, kind in counts if count or kind == "variable"]
    if any(v.kind == "step" for v in variables):
        parts.append("the step")
    return (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + " match"


def _eval_problem(old: SideRun, new: SideRun) -> str:
    if old.eval_loss is None or new.eval_loss is None:
        missing = "old" if old.eval_loss is None else "new"
        return f"only one side evaluated (no eval loss from the {missing} program)"
    return f"eval loss differs (old {old.eval_loss:.9g}, new {new.eval_loss:.9g})"


def fill_comparisons(report: ParityReport, mapping: list[dict], mapping_error: str | None,
                     old_final: dict, new_final: dict) -> None:
    report.step_comparisons = compare_steps(report.old.losses, report.new.losses, report.rtol, report.atol)
    report.first_diverging_step = next((s.step for s in report.step_comparisons if not s.ok), None)
    report.eval = compare_eval(report.old.eval_loss, report.new.eval_loss, report.rtol, report.atol)
    report.variables = compare_weights(mapping, old_final, new_final, report.rtol, report.atol)
    report.verdict, report.message = verdict(report, mapping_error)
