"""What `tf-migrate rules` prints: the rules sorted by id, or one rule's page in plain text.

A rule's page is its section of its family's pages (Family.pages: a module docstring): a line `TFMnnn name`,
then "What it does:", "Why:", "What may differ:" and a "Before:" / "After:" example, with the finding it makes
(tests/test_rules_cmd.py runs every example through the migration), until the next rule's line or the end.
"""

from __future__ import annotations

import re

from migrator.config import expand
from migrator.findings import Rule, Safety
from rewrites import FAMILIES, RULES

LEVELS = {
    Safety.EXACT: "exact: rewritten; the TF2 code computes the same thing.",
    Safety.NUMERIC: "numeric: rewritten; the same computation, but float results may differ in the last bits "
                    "(prove a migrated program with `tf-migrate parity`).",
    Safety.MANUAL: "manual: not migrated; the code stays as it is and the finding says what a person has to do.",
}


def matching(selector: str) -> list[Rule]:
    """The rules whose id starts with ``selector`` (any case), sorted by id; ConfigError if none."""
    return [RULES[rule_id] for rule_id in sorted(expand([selector]))]


def listing(rules: list[Rule]) -> str:
    """One line per rule, in columns as wide as the full list's, so a prefix's list is that list filtered."""
    width = max(len(rule.name) for rule in RULES.values())
    return "".join(f"{rule.id}  {rule.safety.value:<7}  {rule.name:<{width}}  {rule.summary}\n" for rule in rules)


def section(rule: Rule) -> str:
    """The rule's section of its family's pages, without its `TFMnnn name` line."""
    family = next(family for family in FAMILIES if rule in family.rules)
    doc = family.pages()
    found = re.search(rf"^{rule.id} {re.escape(rule.name)}\n(.*?)(?=^TFM\d{{3}} [a-z0-9-]+\n|\Z)", doc,
                      re.MULTILINE | re.DOTALL)
    if found is None:
        raise LookupError(f"rewrites.{family.pages_in or family.module} has no section `{rule.id} {rule.name}`")
    return found.group(1).strip("\n")


def page(rule: Rule) -> str:
    body = section(rule).replace("What may differ:", f"Level: {LEVELS[rule.safety]}\nWhat may differ:", 1)
    return f"{rule.id} {rule.name} ({rule.safety})\n\n{body}\n"


def render(selector: str | None) -> str:
    """What `tf-migrate rules [selector]` prints; ConfigError for a selector no rule matches."""
    if selector is None:
        return listing(sorted(RULES.values(), key=lambda rule: rule.id))
    rule = RULES.get(selector.strip().upper())
    return page(rule) if rule else listing(matching(selector))

