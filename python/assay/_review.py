"""What follows a run, from Python: `calibrate` a judge against human
labels, `compare` two runs, write a run's HTML `report`. Each is the same
library call as the command line's `assay calibrate`, `assay compare` and
`assay report`, with the same numbers."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable, Literal

from assay import _assay
from assay._evaluate import PathLike, _Bar


def calibrate(
    metric: str,
    *,
    set: str | None = None,
    data: PathLike | None = None,
    labels: str | None = None,
    high_score_means: bool | None = None,
    task: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    out: PathLike | None = None,
    threads: int | None = None,
    # <generated: judge options>
    judge: str = "local",
    embedder: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    concurrency: int = 16,
    rpm: int | None = None,
    tpm: int | None = None,
    max_retries: int = 6,
    timeout: float = 60.0,
    max_tokens: int | None = None,
    cache: bool | PathLike = True,
    prompts: PathLike | None = None,
    prices: Mapping[str, str] | None = None,
    repeats: int = 1,
    reasons: Literal["composed", "llm"] = "composed",
    protocol: Literal["listed", "per-item", "likelihood", "grounding"] | None = None,
    grounding: PathLike | None = None,
    grounding_label: str | None = None,
    alignment: PathLike | None = None,
    language: str | None = None,
    # </generated>
    progress: bool | Callable[[str, Any], None] = True,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Runs the judged `metric` over human-labelled rows and returns what
    `calibration.json` holds: agreement with the labels per task and
    overall, each figure with its 95% bootstrap interval, beside the
    length and lexical baselines (as `assay calibrate`).

    `set`: a built-in labelled set (`ragtruth`, `halueval-qa`,
    `halueval-general`, `summeval`, `ragchecker`), or `data`: your own
    JSONL with a label field named by `labels` (for a yes/no label,
    `high_score_means` says which value a high score predicts). `task`,
    `limit` and `offset` select rows as `--task`, `--limit`, `--offset`.
    `out`: the run directory (resumed by the same call); None:
    `runs/calibrate-<unix time>`. The judge keywords are `evaluate`'s.
    """
    options = dict(locals())
    del options["progress"], options["stop"]
    bar = _Bar() if progress is True else None
    callback = bar if bar is not None else (progress if callable(progress) else None)
    try:
        return _assay.calibrate(options, progress=callback, stop=stop)
    finally:
        if bar is not None:
            bar.close()


def align(
    out: PathLike,
    *,
    set: str | None = None,
    data: PathLike | None = None,
    labels: str | None = None,
    true_means_supported: bool = False,
) -> dict[str, Any]:
    """Refits the grounding verdict's combiner on labelled rows (as
    `assay align`) and writes the alignment file `out`, which
    `evaluate(..., alignment=out)` uses; returns what the file holds,
    with `evaluation` giving the held-out ROC-AUC before and after beside
    the word-count and length baselines, pooled and (`evaluation["tasks"]`)
    per task where the rows name one.

    `set`: a built-in labelled set (`ragtruth`, `halueval-qa`, ...), or
    `data`: your own JSONL in the calibrate format; `labels`: the yes/no
    label field (default `hallucinated`), whose true value means
    unsupported unless `true_means_supported`.
    """
    return _assay.align(
        os.fspath(out),
        set,
        None if data is None else os.fspath(data),
        labels,
        true_means_supported,
    )


def compare(a: PathLike, b: PathLike, *, top: int = 10) -> dict[str, Any]:
    """Compares the run directories `a` and `b` sample by sample (as
    `assay compare`): per output, the mean of each, the paired difference
    with its 95% interval, and the `top` most-changed samples."""
    return _assay.compare(os.fspath(a), os.fspath(b), top)


def report(run: PathLike, *, input_format: str | None = None) -> Path:
    """Writes the run directory's self-contained `report.html` (as
    `assay report`) and returns its path."""
    return Path(_assay.report(os.fspath(run), input_format))
