"""Helper of tests/adversarial/run.sh (JSON handling without jq).

  verdicts.py list MANIFEST cpu|gpu [REGEX] [--expect ok|rejected]
      one line per selected entry: id, file, problem, backend, timing (0/1), tab-separated.
  verdicts.py check MANIFEST RESULTS_DIR cpu|gpu SECONDS [REGEX] [--out FILE.md]
                    [--expect ok|rejected]
      compares RESULTS_DIR/<id>.json (the EvalResult of `kernelsmith eval --json`) with the
      manifest's expectation, prints the table and the totals, writes them as markdown with
      --out, and exits 1 on any mismatch (with the message and stderr tail of each).
  --expect ok keeps the honest entries only (expected ok), --expect rejected the cheats only.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from pathlib import Path
from typing import Any


def load_entries(manifest: Path) -> list[dict[str, Any]]:
    """The manifest's entries, then those of each file its "include" list names (relative to
    the manifest: the red-team rounds keep their entries in fragments of their own)."""
    doc = json.loads(manifest.read_text())
    entries = list(doc["entries"])
    for rel in doc.get("include", []):
        entries += json.loads((manifest.parent / rel).read_text())["entries"]
    return entries


def selected(manifest: Path, part: str, regex: str, expect: str = "") -> list[dict[str, Any]]:
    """The entries of `part`; in the GPU part an entry's "expect_gpu" (a verdict that differs
    on the GPU: a Triton dot in TF32 where the interpreter computes in float32) replaces its
    "expect"."""
    entries = load_entries(manifest)
    if part == "gpu":
        entries = [{**e, "expect": e["expect_gpu"]} if "expect_gpu" in e else e
                   for e in entries]
    if expect:
        honest = expect == "ok"
        entries = [e for e in entries if (e["expect"]["status"] == "ok") == honest]
    if part == "gpu":
        keep = [e for e in entries if e["backend"] == "triton" or e.get("gpu_only")]
    else:
        keep = [e for e in entries if not e.get("gpu_only")]
    return [e for e in keep if not regex or re.search(regex, e["id"])]


def describe(status: str, finding: str, check: str) -> str:
    text = status
    if finding:
        text += f" / {finding}"
    if check:
        text += f" / check {check}"
    return text


def alt_check_list(alt: dict[str, Any] | None) -> list[str]:
    """The failed checks an alternative verdict accepts: "check" (one) or "checks" (several)."""
    if not alt:
        return []
    if "checks" in alt:
        return [str(c) for c in alt["checks"]]
    return [str(alt.get("check", ""))]


def verdict(entry: dict[str, Any], result: dict[str, Any] | None) -> tuple[str, str, bool]:
    """(expected text, got text, matches)."""
    want = entry["expect"]
    expected = describe(want["status"], want.get("finding", ""), want.get("check", ""))
    alt = want.get("or")
    alt_checks = alt_check_list(alt)
    if alt:
        expected += f" (or {describe(alt['status'], '', ' | '.join(alt_checks))})"
    if result is None:
        return expected, "no result", False
    status = str(result.get("status"))
    kinds = sorted({f.get("kind", "") for f in result.get("findings") or []
                    if f.get("severity") == "reject"})
    check = str(((result.get("stages") or {}).get("correctness") or {}).get("failed_check") or "")
    got = describe(status, ",".join(kinds), check)
    # "rejected": any verdict that gives the candidate no speedup (hacked, incorrect, errors)
    status_ok = status in ("hacked", "incorrect", "runtime_error", "compile_error") \
        if want["status"] == "rejected" else status == want["status"]
    ok = status_ok and (not want.get("finding") or want["finding"] in kinds) \
        and (not want.get("check") or check == want["check"])
    if not ok and alt:
        ok = status == alt["status"] and check in alt_checks
    # a cheat the timing neutralizes: accepted, but at no more than an honest kernel's speedup
    below = want.get("or_ok_at_most")
    if below is not None:
        expected += f" (or ok at <= {below}x)"
        speedup = result.get("speedup")
        ok = ok or (status == "ok" and isinstance(speedup, (int, float)) and speedup <= below)
    # a helper-thread cheat on a machine too busy to run its threads at once: accepted, but its
    # threads got no more CPU per wall second than one thread of the reference's did
    if want.get("or_ok_within_one_thread"):
        expected += " (or ok with no more CPU than one thread got)"
        timing = ((result.get("stages") or {}).get("timing") or {})
        used = (timing.get("cpu_per_wall") or {}).get("cand")
        one = timing.get("cpu_available")
        ok = ok or (status == "ok" and isinstance(used, (int, float))
                    and isinstance(one, (int, float)) and used <= one + 0.05)
    return expected, got, ok


def check(manifest: Path, results: Path, part: str, seconds: str, regex: str,
          out: str | None, expect: str = "") -> int:
    rows, problems, device = [], [], "?"
    hacks = hacks_ok = honest = honest_ok = still_open = 0
    for e in selected(manifest, part, regex, expect):
        path = results / f"{e['id']}.json"
        result = None
        try:
            result = json.loads(path.read_text().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            pass
        if result and device == "?":
            device = (result.get("device") or {}).get("name") or "?"
        expected, got, ok = verdict(e, result)
        if e["expect"]["status"] == "ok":
            honest, honest_ok = honest + 1, honest_ok + ok
        else:
            hacks, hacks_ok = hacks + 1, hacks_ok + ok
        if result and result.get("speedup") is not None:
            got += f" ({result['speedup']:.2f}x)"
        mark = "yes" if ok else ("open" if e.get("open") else "no")
        rows.append(f"| {e['id']} | {e['exploit']} | {expected} | {got} | {mark} |")
        if not ok and e.get("open"):
            still_open += 1  # a known hole, recorded in the entry: reported, not a failure
        elif not ok:
            log = results / f"{e['id']}.log"
            tail = log.read_text(errors="replace").splitlines()[-5:] if log.exists() else []
            msg = (result or {}).get("message", "")
            problems.append("\n".join([f"--- {e['id']}: expected {expected}, got {got}",
                                       f"message: {msg}", *tail]))
    label = "GPU" if part == "gpu" else "CPU"
    table = "\n".join(["| entry | exploit | expected | got | ok |", "|---|---|---|---|---|",
                       *rows])
    summary = (f"hacks rejected {hacks_ok}/{hacks}, honest accepted {honest_ok}/{honest}, "
               f"known open holes still passing {still_open} "
               f"({label} part, {len(rows)} entries, {seconds}s)")
    print(table)
    print(summary)
    if out:
        flag = " --gpu" if part == "gpu" else ""
        Path(out).write_text(
            f"# Adversarial corpus: {label} part\n\n`tests/adversarial/run.sh kernelsmith{flag}`, "
            f"{datetime.date.today().isoformat()}, device: {device}\n\n{table}\n\n{summary}\n")
    if problems:
        print(f"\nadversarial: {len(problems)} verdict(s) differ from the manifest:")
        print("\n".join(problems))
        return 1
    print("adversarial: all verdicts match")
    return 0


def take_option(argv: list[str], name: str) -> tuple[list[str], str | None]:
    """argv without `name VALUE`, and VALUE (None when absent)."""
    if name not in argv:
        return argv, None
    i = argv.index(name)
    return argv[:i] + argv[i + 2:], argv[i + 1]


def main(argv: list[str]) -> int:
    argv, out = take_option(argv, "--out")
    argv, expect = take_option(argv, "--expect")
    if expect not in (None, "ok", "rejected"):
        print(f"verdicts.py: --expect takes ok or rejected, not '{expect}'", file=sys.stderr)
        return 2
    expect = expect or ""
    if len(argv) >= 3 and argv[0] == "list":
        for e in selected(Path(argv[1]), argv[2], argv[3] if len(argv) > 3 else "", expect):
            print("\t".join([e["id"], e["file"], e["problem"], e["backend"],
                             "1" if e.get("timing") else "0"]))
        return 0
    if len(argv) >= 5 and argv[0] == "check":
        return check(Path(argv[1]), Path(argv[2]), argv[3], argv[4],
                     argv[5] if len(argv) > 5 else "", out, expect)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
