"""Gates in pytest: `assay.assert_scores` runs an evaluation and fails with
an `AssertionError` that says which gate failed, by how much, and on
which samples."""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping, Sequence
from typing import Any

from assay._evaluate import Result, evaluate

_OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
_GATE = re.compile(r"^\s*(>=|<=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")

#: How many of the worst samples a failed gate lists.
WORST = 5


def _parse(output: str, gate: str) -> tuple[str, float]:
    m = _GATE.match(gate)
    if m is None:
        raise ValueError(f"gate {output}: {gate!r}: expected '>= X', '> X', '<= X' or '< X'")
    return m.group(1), float(m.group(2))


def assert_scores(
    data: Any,
    metrics: Sequence[str],
    gates: Mapping[str, str],
    *,
    max_failed_fraction: float | None = None,
    **kwargs: Any,
) -> Result:
    """Evaluates `data` (keywords as `assay.evaluate`) and checks each gate
    `{"OUTPUT": ">= 0.7"}` against the output's mean. On failure raises
    `AssertionError` listing every failed gate with the mean, its 95% CI,
    the coverage and the worst samples with their reasons. Returns the
    result when every gate holds.
    """
    parsed = {name: _parse(name, gate) for name, gate in gates.items()}
    result = evaluate(data, metrics, **kwargs)
    by_name = {o["name"]: o for o in result.summary["outputs"]}
    unknown = [n for n in parsed if n not in by_name]
    if unknown:
        raise ValueError(f"gates on unknown outputs {unknown}: the run has {sorted(by_name)}")
    failures = []
    for name, (op, bound) in parsed.items():
        summary = by_name[name]
        mean = summary.get("mean")
        if mean is not None and _OPS[op](mean, bound):
            continue
        failures.append(_explain(result, summary, op, bound))
    if max_failed_fraction is not None:
        for name, summary in by_name.items():
            n = summary["n_scored"] + summary["n_skipped"] + summary["n_failed"]
            share = summary["n_failed"] / n if n else 0.0
            if share > max_failed_fraction:
                failures.append(
                    f"{name}: {summary['n_failed']} of {n} samples failed "
                    f"({share:.1%} > {max_failed_fraction:.1%}): {summary['failed_by_kind']}"
                )
    if failures:
        raise AssertionError("assay gates failed:\n" + "\n".join(failures))
    return result


def _explain(result: Result, summary: dict[str, Any], op: str, bound: float) -> str:
    name = summary["name"]
    mean = summary.get("mean")
    ci = summary.get("ci95")
    head = f"{name} {op} {bound}: "
    if mean is None:
        head += "no sample was scored"
    else:
        head += f"mean {mean:.4f}"
        if ci:
            head += f" (95% CI {ci['low']:.4f} to {ci['high']:.4f})"
    head += (
        f"; {summary['n_scored']} scored, {summary['n_skipped']} skipped, "
        f"{summary['n_failed']} failed"
    )
    scored = [r for r in result.records if r["metric"] == name and r["status"] == "scored"]
    # The samples that pull the mean the wrong way first.
    scored.sort(key=lambda r: r["value"], reverse=op in ("<=", "<"))
    lines = [head]
    for r in scored[:WORST]:
        reason = r.get("reason") or ""
        lines.append(f"  row {r['row']} ({r['sample_id']}): {r['value']:.4f} {reason}".rstrip())
    others = [r for r in result.records if r["metric"] == name and r["status"] != "scored"]
    for r in others[:WORST]:
        why = r.get("reason") or (r.get("error") or {}).get("message", "")
        lines.append(f"  row {r['row']} ({r['sample_id']}): {r['status']} {why}".rstrip())
    return "\n".join(lines)
