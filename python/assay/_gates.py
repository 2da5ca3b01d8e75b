"""Gates in pytest: `assay.assert_scores` runs an evaluation and fails with
an `AssertionError` that says which gate failed, by how much, and on
which samples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay._evaluate import Result, evaluate

#: How many of the worst samples a failed gate lists.
WORST = 5


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
    the coverage and the worst samples with their reasons, and every
    output that scored no row. Returns the result when every gate holds
    and every output scored.
    """
    # The gates are checked by the same library call as `assay eval`'s;
    # a typo raises before any judge call.
    result = evaluate(data, metrics, gates=gates, max_failed_fraction=max_failed_fraction, **kwargs)
    by_name = {o["name"]: o for o in result.summary["outputs"]}
    written = dict(gates)
    failures = []
    for passed, output, line in result.gates:
        if passed:
            continue
        if output is None:
            failures.append(line)
            continue
        # The gate as written, under the output it resolved to.
        gate = written.get(output) or next(
            g for n, g in written.items() if by_name[output]["metric"] == n
        )
        failures.append(_explain(result, by_name[output], gate.strip()))
    failures.extend(result.unscored)
    if failures:
        raise AssertionError("assay gates failed:\n" + "\n".join(failures))
    return result


def _explain(result: Result, summary: dict[str, Any], gate: str) -> str:
    name = summary["name"]
    mean = summary.get("mean")
    ci = summary.get("ci95")
    head = f"{name} {gate}: "
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
    scored.sort(key=lambda r: r["value"], reverse=gate.startswith("<"))
    lines = [head]
    for r in scored[:WORST]:
        reason = r.get("reason") or ""
        lines.append(f"  row {r['row']} ({r['sample_id']}): {r['value']:.4f} {reason}".rstrip())
    others = [r for r in result.records if r["metric"] == name and r["status"] != "scored"]
    for r in others[:WORST]:
        why = r.get("reason") or (r.get("error") or {}).get("message", "")
        lines.append(f"  row {r['row']} ({r['sample_id']}): {r['status']} {why}".rstrip())
    return "\n".join(lines)
