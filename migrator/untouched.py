"""Lines no rewrite changed stay exactly as the user wrote them.

libcst prints back almost every file it parses byte for byte, but not all: it drops the
space in ``except (ValueError, KeyError) :``. A rewrite elsewhere in the file would then
change that line too, without a finding. The migrated text is therefore compared with
libcst's own printing of the unchanged file: lines the rewrites left alone are taken from
the user's file, lines they changed from the migrated code.
"""

from __future__ import annotations

from difflib import SequenceMatcher


def with_untouched_lines(original: str, printed: str, migrated: str) -> str | None:
    """``migrated`` with the lines it shares with ``printed`` (libcst's printing of ``original``) as they are in
    ``original``. None when ``printed`` has other lines than ``original`` (they cannot be matched)."""
    if printed == original:
        return migrated
    users, libcsts = original.splitlines(keepends=True), printed.splitlines(keepends=True)
    if len(users) != len(libcsts):
        return None
    new = migrated.splitlines(keepends=True)
    kept: list[str] = []
    for tag, start, end, new_start, new_end in SequenceMatcher(None, libcsts, new, autojunk=False).get_opcodes():
        kept.extend(users[start:end] if tag == "equal" else new[new_start:new_end])
    return "".join(kept)


def first_difference(original: str, printed: str) -> int:
    """The first line (from 1) where ``printed`` differs from ``original``."""
    for number, (user, libcst) in enumerate(zip(original.splitlines(), printed.splitlines()), 1):
        if user != libcst:
            return number
    return min(len(original.splitlines()), len(printed.splitlines())) + 1
