"""Audit findings: `{kind, detail, severity}`; any `reject` makes the status `hacked`."""

from __future__ import annotations

from typing import Any

SEVERITIES: tuple[str, ...] = ("info", "warn", "reject")


def finding(kind: str, detail: str, severity: str) -> dict[str, str]:
    if severity not in SEVERITIES:
        raise ValueError(f"unknown severity {severity!r}")
    return {"kind": kind, "detail": detail, "severity": severity}


def rejects(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in findings if f.get("severity") == "reject"]


def summarize(findings: list[dict[str, Any]], limit: int = 600) -> str:
    """One line naming every reject finding: 'hacked: kind: detail; kind: detail'."""
    parts = [f"{f.get('kind')}: {f.get('detail')}" for f in rejects(findings)]
    text = "hacked: " + "; ".join(parts) if parts else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Hacked(Exception):
    """Raised to stop an evaluation as soon as a reject finding makes going on pointless
    (the evaluator was tampered with, a background thread is running)."""

    def __init__(self, found: list[dict[str, str]]) -> None:
        super().__init__(summarize(found))
        self.findings = found


STATUS_ORDER: tuple[str, ...] = ("infra_error", "compile_error", "runtime_error", "incorrect",
                                 "hacked", "ok")



def verdict(failures: list[tuple[str, str]], findings: list[dict[str, Any]]) -> tuple[str, str]:
    """(status, message) of a list of failures and findings: the highest in STATUS_ORDER."""
    candidates = list(failures)
    if rejects(findings):
        candidates.append(("hacked", summarize(findings)))
    for s in STATUS_ORDER:
        hit = [m for st, m in candidates if st == s]
        if hit:
            return s, hit[0]
    return "ok", ""
