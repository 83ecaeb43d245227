"""The export check: does the migrated program's SavedModel serve what the old one served?

Each side copies the SavedModels its program exports as it makes them (migrator/parity/export_capture.py).
After both sides trained, the latest export of each folder is loaded in a fresh process of that side's
interpreter (migrator/parity/export_probe.py); the exports are paired by the folder they were exported
into, and compared: the signatures' names, methods, input and output keys with their dtypes and shapes, each
signature's answers to the same requests at the run's tolerances, and the files of assets.extra. A signature
missing, an input key renamed, a dtype changed, an assets.extra file missing or changed, an export on one side
only or one that does not load is a mismatch.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import PurePath

from migrator.parity.compare import compare_tensor
from migrator.parity.exchange import Exchange
from migrator.parity.interrupts import check
from migrator.parity.model import ExportComparison, SignatureComparison

SHOWN_ANSWERS = 4  # of differing string answers, the first few of each side


def check_exports(exchange: Exchange, pythons: dict[str, str], env: dict[str, str], timeout: float,
                  rtol: float, atol: float) -> list[ExportComparison]:
    """The exports of both sides compared (none: neither side exported)."""
    listings = {side: _listing(exchange, side) for side in ("old", "new")}
    if not any(listings.values()):
        return []
    probed = {side: _probe(exchange, pythons[side], sorted(listing.values()), env, timeout, side)
              for side, listing in listings.items()}
    comparisons = []
    for name, old_base, new_base in pair(listings["old"], listings["new"]):
        paths = {"old": listings["old"].get(old_base), "new": listings["new"].get(new_base)}
        found = {side: probed[side].get(path) if path else None for side, path in paths.items()}
        comparisons.append(compare_export(name, as_named(exchange, old_base), as_named(exchange, new_base),
                                          found["old"], found["new"], rtol, atol))
    return comparisons


def as_named(exchange: Exchange, path: str | None) -> str | None:
    """A folder a side exported into, as its program named it: the work folder's stand-ins for the program's
    folders (migrator/parity/isolation.py), the old Estimator's model_dir and the temporary folder, undone."""
    if path is None:
        return None
    for inside, named in (("old_files", "/"), ("new_files", "/"), ("old_model", "<model_dir>/"), ("tmp", "$TMPDIR/")):
        root = str(exchange.path(inside)) + os.sep
        if path.startswith(root):
            return named + path[len(root):]
    return path


def _listing(exchange: Exchange, side: str) -> dict[str, str]:
    name = f"{side}_exports.json"
    return exchange.read_json(name) if exchange.path(name).exists() else {}


# -- pairing -----------------------------------------------------------------------------------------

def pair(old: dict[str, str], new: dict[str, str]) -> list[tuple[str, str | None, str | None]]:
    """(name, old export folder, new export folder): paired by the longest run of path components their ends
    share (each side writes under a folder of its own: ``export/exporter`` of either model_dir), the rest alone."""
    candidates = sorted(((_common_end(o, n), o, n) for o in old for n in new), key=lambda c: -c[0])
    pairs, taken_old, taken_new = [], set(), set()
    for common, o, n in candidates:
        if common and o not in taken_old and n not in taken_new:
            pairs.append(("/".join(PurePath(o).parts[-common:]), o, n))
            taken_old.add(o)
            taken_new.add(n)
    pairs += [(_short(o), o, None) for o in old if o not in taken_old]
    pairs += [(_short(n), None, n) for n in new if n not in taken_new]
    return sorted(pairs, key=lambda p: p[0])


def _common_end(a: str, b: str) -> int:
    count = 0
    for x, y in zip(reversed(PurePath(a).parts), reversed(PurePath(b).parts)):
        if x != y or x == "/":
            break
        count += 1
    return count


def _short(base: str) -> str:
    return "/".join(PurePath(base).parts[-2:])


# -- probing -----------------------------------------------------------------------------------------

def _probe(exchange: Exchange, python: str, paths: list[str], env: dict[str, str], timeout: float,
           side: str) -> dict[str, dict]:
    """Each export's signatures as a fresh process of ``python`` loads them (an error for each if it fails)."""
    if not paths:
        return {}
    log, answers = exchange.path(f"{side}-probe.log"), exchange.path(f"{side}-probe.json")
    # Its answers go to a file: a pipe read only once it ends would stop it at 64 KiB of them.
    with open(log, "wb") as errors, open(answers, "wb") as out:
        process = subprocess.Popen([python, "-m", "migrator.parity.export_probe", str(exchange.folder), *paths],
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=errors, env=env,
                                   start_new_session=True)
    started = time.monotonic()
    try:
        while process.poll() is None:
            check()
            if time.monotonic() - started > timeout:
                return {path: {"error": f"loading it took longer than {timeout:g} s"} for path in paths}
            time.sleep(0.1)
        output = answers.read_text(errors="replace").strip().splitlines()
    finally:
        _stop(process)
    if process.returncode != 0 or not output:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [f"exit status {process.returncode}"]
        return {path: {"error": f"the {side} side's interpreter could not load it: {tail[0]}"} for path in paths}
    return json.loads(output[-1])


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


# -- comparing ---------------------------------------------------------------------------------------

def compare_export(name: str, old_base: str | None, new_base: str | None, old: dict | None, new: dict | None,
                   rtol: float, atol: float) -> ExportComparison:
    comparison = ExportComparison(name, old_base, new_base, ok=False)
    if old is None or new is None:
        missing, made = ("new", "old") if old is not None else ("old", "new")
        comparison.problems.append(f"the {made} program exported to {name}, the {missing} one did not")
        return comparison
    for side, found in (("old", old), ("new", new)):
        if "error" in found:
            comparison.problems.append(f"the {side} export does not load: {found['error']}")
    if comparison.problems:
        return comparison
    old_assets, new_assets = old.get("assets_extra", {}), new.get("assets_extra", {})
    for name in sorted(set(old_assets) | set(new_assets)):
        if old_assets.get(name) != new_assets.get(name):
            how = ("missing from the new export" if name not in new_assets else "only in the new export"
                   if name not in old_assets else "differs")
            comparison.problems.append(f"assets.extra/{name} {how}")
    comparison.signatures = compare_signatures(old["signatures"], new["signatures"], rtol, atol)
    comparison.ok = not comparison.problems and all(signature.ok for signature in comparison.signatures)
    return comparison


def compare_signatures(old: dict, new: dict, rtol: float, atol: float) -> list[SignatureComparison]:
    comparisons = []
    for name in sorted(set(old) | set(new)):
        shown = old.get(name) or new[name]
        comparison = SignatureComparison(name, True, method=shown["method"], inputs=shown["inputs"],
                                         outputs=shown["outputs"], requests=shown["requests"], note=shown["note"])
        if name not in new or name not in old:
            comparison.ok = False
            comparison.problems.append("missing from the new export" if name not in new else "only in the new export")
            comparisons.append(comparison)
            continue
        problems = comparison.problems
        if old[name]["method"] != new[name]["method"]:
            problems.append(f"method {old[name]['method']} (old), {new[name]['method']} (new)")
        for part in ("inputs", "outputs"):
            problems += _tensor_problems(part[:-1], old[name][part], new[name][part])
        if not problems:
            _compare_answers(comparison, old[name], new[name], rtol, atol)
        comparison.ok = not problems
        comparisons.append(comparison)
    return comparisons


def _tensor_problems(kind: str, old: dict, new: dict) -> list[str]:
    problems = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            problems.append(f"{kind} '{key}' is missing from the new signature")
        elif key not in old:
            problems.append(f"{kind} '{key}' is only in the new signature")
        else:
            for index, what in enumerate(("dtype", "shape")):
                if old[key][index] != new[key][index]:
                    problems.append(f"{kind} '{key}': {what} {_shown(old[key][index])} (old), "
                                    f"{_shown(new[key][index])} (new)")
    return problems


def _shown(value) -> str:
    return "unknown" if value is None else str(value)


def _compare_answers(comparison: SignatureComparison, old: dict, new: dict, rtol: float, atol: float) -> None:
    import numpy as np

    if old["answers"] and not new["answers"]:
        comparison.problems.append(f"the new signature gave no answer: {new['note']}")
        return
    for key in sorted(set(old["answers"]) & set(new["answers"])):
        before, after = np.asarray(old["answers"][key]), np.asarray(new["answers"][key])
        if before.shape != after.shape:
            comparison.problems.append(f"output '{key}': answers of shape {list(before.shape)} (old), "
                                       f"{list(after.shape)} (new)")
        elif before.dtype.kind in "US" or after.dtype.kind in "US":
            if before.tolist() != after.tolist():
                comparison.problems.append(f"output '{key}' answers differ: {before.ravel()[:SHOWN_ANSWERS].tolist()} "
                                           f"(old), {after.ravel()[:SHOWN_ANSWERS].tolist()} (new)")
        else:
            max_abs, max_rel, ok = compare_tensor(before.astype(np.float64), after.astype(np.float64), rtol, atol)
            comparison.max_abs_diff = max(comparison.max_abs_diff, max_abs)
            comparison.max_rel_diff = max(comparison.max_rel_diff, max_rel)
            if not ok:
                comparison.problems.append(f"output '{key}' answers differ by up to {max_abs:.3g} "
                                           f"(rel {max_rel:.3g})")

