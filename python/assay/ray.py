"""`assay.ray`: one evaluation spread over a Ray cluster (the extra
`assay-eval[ray]`).

The driver writes the rows once, as JSONL, and puts them in Ray's object
store. Each of N tasks scores shard K/N of them (`--shard K/N`: the rows
whose sample id hashes to K-1 modulo N) with the same engine as
`assay.evaluate`, its own judge client and judge cache, in a temporary
folder on its node, and sends its run directory back. The driver keeps the
shards' run directories and merges them (`assay merge`): the records are
those of one `assay.evaluate` over all rows, and the summary (counts,
means, confidence intervals, corpus-level scores, ragas_score) is computed
from all of them, as one process would.

```python
import ray, assay.ray
ray.init()                                   # or ray.init(address="auto")
ds = ray.data.read_parquet("s3://bucket/rag-eval/")
result = assay.ray.evaluate(
    ds, ["faithfulness", "answer_relevancy", "rouge"],
    judge="vllm:Qwen/Qwen2.5-7B-Instruct", base_url="http://vllm:8000/v1",
    out="runs/nightly",
)
result.summary          # as summary.json
result.dataset()        # a ray.data.Dataset of the records
```
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay import _assay
from assay._evaluate import (
    PathLike,
    Result,
    UsageError,
    _columnar,
    _Copy,
    _rows,
    _write_rows,
)

#: What a run directory that `evaluate` keeps holds, besides the merged run.
SHARDS = "shards"

#: The judge limits that, when given, hold for the whole cluster: each of
#: the tasks running at once gets an equal share.
BUDGETS = ("concurrency", "rpm", "tpm")


class RayResult(Result):
    """A `Result` whose records can also be had as a Ray Dataset."""

    def dataset(self):
        """The records as a `ray.data.Dataset`, one row per record:
        `sample_id`, `row`, `repeat`, `metric`, `status`, `value` (None
        unless scored), `reason` (or the failure), and `record`, the whole
        record as JSON (verdicts included)."""
        import ray.data

        return ray.data.from_items([_flat(r) for r in self.records])


def _flat(record: dict[str, Any]) -> dict[str, Any]:
    error = record.get("error")
    reason = record.get("reason")
    if reason is None and isinstance(error, dict):
        reason = f"{error.get('kind')}: {error.get('message')}"
    return {
        "sample_id": record["sample_id"],
        "row": record["row"],
        "repeat": record.get("repeat", 0),
        "metric": record["metric"],
        "status": record["status"],
        "value": record.get("value") if record["status"] == "scored" else None,
        "reason": reason,
        "record": json.dumps(record, ensure_ascii=False, sort_keys=True),
    }


def _score_shard(
    blob: bytes, name: str, original: str | None, shard: str, args: tuple, kwargs: dict[str, Any]
) -> dict[str, bytes]:
    """One Ray task: shard `shard` of the input `blob` (named `name`), in a
    temporary folder on this node. Its messages name the rows as the
    driver's file `original`, or by their place in the data given in
    memory when None. Returns the run directory's files."""
    import assay

    with tempfile.TemporaryDirectory(prefix="assay-shard-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(blob)
        run = Path(tmp) / "run"
        copy = _Copy(path, original)
        assay.evaluate(copy, *args, out=run, shard=shard, progress=False, **kwargs)
        return {
            f.name: f.read_bytes()
            for f in run.iterdir()
            if f.is_file() and not f.name.startswith(".")
        }


def _complete(run: Path) -> bool:
    try:
        return bool(json.loads((run / "summary.json").read_text())["complete"])
    except (OSError, ValueError, KeyError):
        return False


def _keep(folder: Path, files: dict[str, bytes]) -> None:
    """Writes a shard's run directory whole, or not at all."""
    if folder.exists():
        shutil.rmtree(folder)
    partial = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
    for name, content in files.items():
        (partial / name).write_bytes(content)
    partial.replace(folder)


def evaluate(
    data: Any,
    metrics: Sequence[str],
    params: Mapping[str, Any] | None = None,
    *,
    out: PathLike | None = None,
    shards: int | None = None,
    num_cpus: float = 1,
    ray_remote_args: Mapping[str, Any] | None = None,
    force_new: bool = False,
    progress: bool = True,
    **kwargs: Any,
) -> RayResult:
    """Scores `data` with `metrics` across the Ray cluster that
    `ray.init()` connected to (a local one is started if none is).

    `data`: a `ray.data.Dataset`, or anything `assay.evaluate` takes.
    `shards`: how many tasks (default: the cluster's CPUs); each needs
    `num_cpus` (judge-bound work can ask for less than 1) plus
    `ray_remote_args` (e.g. `{"runtime_env": {"env_vars": {...}}}` to give
    the workers `OPENAI_API_KEY`); a task's `threads` (its local models'
    too) default to `num_cpus` rounded up. Every other keyword is
    `assay.evaluate`'s (judge, base_url, concurrency, rpm, cache, ...).
    `concurrency`, `rpm` and `tpm`, when given, are budgets for the whole
    cluster: at most that many tasks run at once, and each gets an equal
    share (rounded down), so that together they stay within the
    endpoint's limits. Not given, each task has `assay.evaluate`'s
    default concurrency (16) and no rate limit.

    `out`: a folder on the driver that keeps the input, each finished
    shard's run directory (`shards/K-of-N`) and the merged run; the same
    call again scores only the shards that did not finish (paid judge
    calls of an unfinished shard are in that node's judge cache).
    `force_new=True` starts over.
    """
    import ray

    if not ray.is_initialized():
        ray.init()
    keep = out is not None
    folder = Path(out) if keep else Path(tempfile.mkdtemp(prefix="assay-ray-"))
    try:
        _clear(folder, force_new)
        original = None
        if isinstance(data, (str, os.PathLike)):
            path = Path(data)
            original = str(path)
        elif hasattr(data, "iter_rows"):  # ray.data.Dataset, streamed
            path = _write_rows(_columnar(data.iter_rows()), folder)
        else:
            path = _write_rows(_rows(data), folder)
        n = shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
        dirs = {k: folder / SHARDS / f"{k}-of-{n}" for k in range(1, n + 1)}
        (folder / SHARDS).mkdir(parents=True, exist_ok=True)
        blob = ray.put(path.read_bytes())
        args = (list(metrics), dict(params or {}))
        # A local model on no more cores than the task holds.
        kwargs.setdefault("threads", max(1, math.ceil(num_cpus)))
        task = ray.remote(_score_shard).options(num_cpus=num_cpus, **(ray_remote_args or {}))
        todo = [k for k, d in dirs.items() if not _complete(d)]
        budget = {b: kwargs[b] for b in BUDGETS if kwargs.get(b) is not None}
        slots = _slots(len(todo), ray.cluster_resources().get("CPU", 1), num_cpus, budget)
        kwargs.update(_per_task(budget, slots))
        pending: dict[Any, int] = {}
        try:
            while todo or pending:
                # At most `slots` tasks at once, so that their shares of
                # the budgets add up to no more than the budgets.
                while todo and len(pending) < slots:
                    k = todo.pop(0)
                    pending[task.remote(blob, path.name, original, f"{k}/{n}", args, kwargs)] = k
                ready, _ = ray.wait(list(pending), num_returns=1)
                k = pending.pop(ready[0])
                _keep(dirs[k], ray.get(ready[0]))
                if progress:
                    done = n - len(pending) - len(todo)
                    print(f"assay.ray: shard {k}/{n} done ({done} of {n})", file=sys.stderr)
        finally:
            for ref in pending:
                ray.cancel(ref)
        merged = folder if keep else folder / "run"
        summary, records, unscored = _assay.merge(
            [str(d) for d in dirs.values()], str(merged), str(path)
        )
        return RayResult(merged if keep else None, summary, records, unscored=unscored)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def _slots(todo: int, cpus: float, num_cpus: float, budget: Mapping[str, int]) -> int:
    """How many shard tasks run at once: no more than the cluster's CPUs
    hold at `num_cpus` each, nor than any budget, as each task needs at
    least 1 of it; at least 1."""
    fit = int(cpus // num_cpus) if num_cpus > 0 else todo
    return max(1, min(todo, fit, *budget.values()))


def _per_task(budget: Mapping[str, int], slots: int) -> dict[str, int]:
    """Each of `slots` tasks' share of the cluster-wide budgets."""
    return {name: total // slots for name, total in budget.items()}


def _clear(folder: Path, force_new: bool) -> None:
    """Makes room for a new merge in `folder`: the earlier merged run goes
    (the shards are what it was made of), and with `force_new` the shards
    too, moved to `superseded-N/` (nothing deleted). Refuses a folder that
    holds a run `assay.ray` did not merge."""
    manifest = folder / "manifest.json"
    if not manifest.exists():
        return
    if "merged_from" not in json.loads(manifest.read_text()):
        raise UsageError(f"{folder} holds a run that assay.ray did not make: choose another out")
    merged = [folder / n for n in ("results.jsonl", "summary.json", "manifest.json")]
    if force_new:
        k = 1
        while (folder / f"superseded-{k}").exists():
            k += 1
        aside = folder / f"superseded-{k}"
        aside.mkdir()
        for p in [*merged, folder / SHARDS]:
            if p.exists():
                p.replace(aside / p.name)
    else:
        for p in merged:
            p.unlink(missing_ok=True)
