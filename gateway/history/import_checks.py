"""What an imported session may contain: titles by the title rules, messages scanned.

Imported content is history, never instructions (see :mod:`gateway.history.transfer`).
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.errors import UserInputError
from gateway.history.lineage import title_problem
from gateway.security.scanner import scan

#: Scanner categories that are no reason to refuse history: a token pasted into a chat is
#: the user's own data, not an instruction to the model.
HISTORY_MAY_HOLD = frozenset({"secret"})


def check_imported(line: int, title: str | None, messages: Iterable[tuple[str, str]]) -> None:
    """Refuse line ``line`` of an import when its title or one of its (role, content)
    messages may not be stored; the error names the line, the message and the rule."""
    if title is not None:
        problem = title_problem(title)
        if problem is not None:
            raise UserInputError(f"line {line}: title: {problem}; nothing was imported")
    for number, (role, content) in enumerate(messages, start=1):
        findings = [f for f in scan(content).findings if f.category not in HISTORY_MAY_HOLD]
        if findings:
            first = findings[0]
            raise UserInputError(
                f"line {line}, message {number} ({role}): refused by the security scan, "
                f"rule '{first.rule}' ({first.category}) on '{first.excerpt}'. Imported "
                "history may not carry instructions for the model; remove or reword that "
                "message. Nothing was imported."
            )
