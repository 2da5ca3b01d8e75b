"""`assay.evaluate()`: the command line's `assay eval` on the data structures
people already have, with the same records, summary and run directory."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Callable, Literal, NamedTuple, Union

from assay import _assay

UsageError = _assay.UsageError
AuthError = _assay.AuthError
JudgeUnavailableError = _assay.JudgeUnavailableError

PathLike = Union[str, "os.PathLike[str]"]


class Gate(NamedTuple):
    """One gate's verdict: whether it held, the output it held to (None
    for the failed-fraction gate), and the line `assay eval` prints."""

    passed: bool
    output: str | None
    line: str


class Result:
    """What one evaluation wrote: the outcome records, one per sample and
    output (`results.jsonl`), and the summary (`summary.json`)."""

    def __init__(
        self,
        out: Path | None,
        summary: dict[str, Any],
        records: list[dict[str, Any]],
        gates: list[Gate] | None = None,
        report: Path | None = None,
        unscored: list[str] | None = None,
    ):
        #: The run directory, or None when the run was not kept.
        self.out = out
        #: Means, confidence intervals, coverage, usage and ragas_score
        #: (and `calibrated`, the corrected prevalence, with `calibration=`).
        self.summary = summary
        #: The outcome records, in row order.
        self.records = records
        #: Each gate's verdict, as `assay eval` prints it (none while the
        #: run is interrupted).
        self.gates = gates or []
        #: The HTML report, with `report=True`.
        self.report = report
        #: A line for each output that scored no row (every outcome
        #: skipped or failed), with the first reason; `assay eval` exits
        #: with 5 then.
        self.unscored = unscored or []

    @property
    def passed(self) -> bool:
        """Whether every gate held (True without gates) and every output
        scored some row."""
        return not self.unscored and all(g.passed for g in self.gates)

    @property
    def complete(self) -> bool:
        """Whether every row was scored (False after an interruption)."""
        return bool(self.summary.get("complete"))

    def means(self) -> dict[str, float | None]:
        """Each output's mean over its scored samples."""
        return {o["name"]: o.get("mean") for o in self.summary["outputs"]}

    def to_pandas(self):
        """One row per sample (and judging, under `repeats`): `sample_id`,
        `row`, `repeat`, then per output its value (NaN unless scored),
        `OUTPUT.status` and `OUTPUT.reason`."""
        import pandas as pd

        rows: dict[tuple[int, int], dict[str, Any]] = {}
        for r in self.records:
            key = (r["row"], r.get("repeat", 0))
            row = rows.setdefault(
                key, {"sample_id": r["sample_id"], "row": r["row"], "repeat": key[1]}
            )
            name = r["metric"]
            row[name] = r["value"] if r["status"] == "scored" else math.nan
            row[f"{name}.status"] = r["status"]
            row[f"{name}.reason"] = r.get("reason") or _failure_text(r)
        return pd.DataFrame([rows[k] for k in sorted(rows)])

    def __repr__(self) -> str:
        means = ", ".join(
            f"{k}={v:.4f}" if v is not None else f"{k}=None" for k, v in self.means().items()
        )
        return f"Result(rows={self.summary.get('rows')}, {means})"


def _failure_text(record: dict[str, Any]) -> str | None:
    error = record.get("error")
    if isinstance(error, dict):
        return f"{error.get('kind')}: {error.get('message')}"
    return None


def _plain(value: Any) -> Any:
    """A value JSON can hold: numpy scalars and arrays, NaN as null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _unfilled(value: Any) -> Any:
    """`value` without the null members of its objects, at any depth.

    Arrow (a pyarrow Table, a Hugging Face or Ray Dataset, a DataFrame read
    from Parquet) gives every object in a column all the members that any
    row's has, null where the row had none: the tool arguments
    `{"from": "OSL"}` and `{"seats": 2}` come back as `{"from": "OSL",
    "seats": None}` and `{"from": None, "seats": 2}`, which are other
    arguments. So in rows of those containers a null member reads as absent,
    as a missing cell does."""
    if isinstance(value, Mapping):
        return {k: _unfilled(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_unfilled(v) for v in value]
    return value


def _columnar(rows: Iterable[Any]) -> Iterable[Any]:
    """The rows of a columnar container, as they were before Arrow filled
    them (see `_unfilled`)."""
    return (_unfilled(_plain(row)) for row in rows)


def _rows(data: Any) -> Iterable[Mapping[str, Any]]:
    """The rows of any supported container, by duck typing (no import of
    pandas, pyarrow, datasets or ragas)."""
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # pandas.DataFrame
        return _columnar(data.to_dict(orient="records"))
    if hasattr(data, "to_pylist"):  # pyarrow.Table
        return _columnar(data.to_pylist())
    if hasattr(data, "to_list") and not isinstance(data, list):  # datasets.Dataset, ragas
        return _columnar(data.to_list())
    if isinstance(data, Mapping):
        raise TypeError("data is one dict: give a list of rows")
    return data


class _Copy:
    """A file that holds the rows of `original` (a file's name), or of rows
    given in memory when None: the copy of an input on a Ray node, named in
    messages as what it stands for."""

    def __init__(self, path: PathLike, original: str | None):
        self.path = os.fspath(path)
        self.original = original


def _source(data: Any, folder: Path) -> dict[str, Any]:
    """How the engine reads `data`: a path, and for rows given in memory
    (written as JSONL named by their content's hash, so the same data in
    the same run directory resumes) that messages name them by their place
    in the data, or the file a copy stands for."""
    if isinstance(data, _Copy) and data.original is not None:
        return {"data": data.path, "name": data.original}
    if isinstance(data, _Copy):
        return {"data": data.path, "rows": True, "input_format": "jsonl"}
    if isinstance(data, (str, os.PathLike)):
        return {"data": os.fspath(data)}
    return {"data": str(_write_rows(_rows(data), folder)), "rows": True, "input_format": "jsonl"}


def _write_rows(rows: Iterable[Any], folder: Path) -> Path:
    """Writes `rows` as `folder/input-<sha256 prefix>.jsonl`, streaming (a
    dataset larger than memory is fine), and returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="input.", suffix=".part", dir=folder)
    partial = Path(name)
    digest = hashlib.sha256()
    with open(fd, "w", encoding="utf-8") as f:
        for i, row in enumerate(rows):
            if isinstance(row, (list, tuple)):  # a conversation: its messages
                row = {"messages": list(row)}
            elif hasattr(row, "model_dump") and not isinstance(row, Mapping):  # ragas samples
                row = row.model_dump(exclude_none=True)
            if not isinstance(row, Mapping):
                partial.unlink()
                raise TypeError(
                    f"data row {i}: expected a mapping of field names to values, "
                    "or a conversation's list of messages"
                )
            line = json.dumps(_plain(row), ensure_ascii=False) + "\n"
            digest.update(line.encode())
            f.write(line)
    path = folder / f"input-{digest.hexdigest()[:16]}.jsonl"
    partial.replace(path)
    return path


def _references(references: Any, folder: Path) -> str:
    """The path of a references file for `references`: a path as given; a
    mapping `{id: {field: value}}` or rows with a `trace_id`, `sample_id`
    or `id` column (a list of dicts, a DataFrame) written as
    `folder/references-<sha256 prefix>.jsonl`, so that the same references
    resume the same run."""
    if isinstance(references, (str, os.PathLike)):
        return os.fspath(references)
    if isinstance(references, Mapping):
        rows: list[Any] = []
        for key, fields in references.items():
            if not isinstance(fields, Mapping):
                raise TypeError(
                    f"references[{key!r}]: expected a mapping of reference fields to values"
                )
            rows.append({"id": key, **fields})
    else:
        rows = list(_rows(references))
    lines = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(f"references row {i}: expected a mapping of field names to values")
        lines.append(json.dumps(_plain(row), ensure_ascii=False) + "\n")
    text = "".join(lines)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"references-{hashlib.sha256(text.encode()).hexdigest()[:16]}.jsonl"
    path.write_text(text, encoding="utf-8")
    return str(path)


class _Bar:
    """Progress on long runs. On a terminal or in a notebook: tqdm when
    installed, else one line on stderr redrawn in place. Elsewhere (CI logs,
    files) plain lines, at most one every ``PLAIN_EVERY`` seconds and one at
    the end, with no carriage returns or escape codes."""

    PLAIN_EVERY = 30.0

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.tqdm = None
        self.drawn = False
        self.live = sys.stderr.isatty() or "ipykernel" in sys.modules
        self.written_at: float | None = None
        self.pending = ""

    def __call__(self, kind: str, payload: Any) -> None:
        if kind == "note":
            print(payload, file=sys.stderr)
            return
        if time.monotonic() - self.start < 1.0:
            return
        total, done = payload["total_bytes"], payload["bytes_read"]
        extra = (
            f"{payload['scored']} scored {payload['skipped']} skipped {payload['failed']} failed"
        )
        if payload["calls"]:
            extra += (
                f" | judge {payload['calls']} calls {payload['cache_hits']} cached "
                f"{payload['prompt_tokens']}+{payload['completion_tokens']} tokens"
            )
            if payload["cost"] is not None:
                extra += f" cost {payload['cost']:.4f}"
        if self.live and self.tqdm is None and not self.drawn:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.tqdm = tqdm(total=total, unit="B", unit_scale=True, desc="assay")
        if self.tqdm is not None:
            self.tqdm.n = done
            self.tqdm.set_postfix_str(f"{payload['rows']} rows | {extra}", refresh=True)
            self.drawn = True
            return
        elapsed = time.monotonic() - self.start
        share = f"{100 * done / total:3.0f}% " if total else ""
        eta = ""
        if total and done:
            eta = f" ETA {elapsed * (total - done) / done:.0f}s"
        line = f"{share}{payload['rows']} rows{eta} | {extra}"
        if self.live:
            print(f"\r\x1b[2K{line}", end="", file=sys.stderr)
            self.drawn = True
            return
        self.pending = line
        now = time.monotonic()
        if self.written_at is None or now - self.written_at >= self.PLAIN_EVERY:
            self._write_pending(now)

    def _write_pending(self, now: float) -> None:
        print(f"assay: {self.pending}", file=sys.stderr)
        self.pending = ""
        self.written_at = now

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()
        elif self.drawn:
            print("\r\x1b[2K", end="", file=sys.stderr)
        elif self.pending:
            self._write_pending(time.monotonic())


def evaluate(
    data: Any,
    metrics: Sequence[str],
    params: Mapping[str, Any] | None = None,
    *,
    # <generated: eval options>
    out: PathLike | None = None,
    input_format: Literal["jsonl", "json", "csv", "otlp"] | None = None,
    references: Any = None,
    logs: PathLike | None = None,
    stitch: bool = True,
    strict: bool = False,
    threads: int | None = None,
    force_new: bool = False,
    shard: str | None = None,
    # </generated>
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
    gates: Mapping[str, str] | None = None,
    # <generated: finish options>
    max_failed_fraction: float | None = None,
    calibration: PathLike | None = None,
    report: bool = False,
    # </generated>
    progress: bool | Callable[[str, Any], None] = True,
    stop: threading.Event | None = None,
) -> Result:
    """Scores `data` with `metrics`, as `assay eval` does.

    `data`: a list of dicts, a pandas DataFrame, a pyarrow Table, a Hugging
    Face `datasets.Dataset`, a ragas `EvaluationDataset` (anything with
    `to_list()`) or list of ragas samples (`MultiTurnSample` included) or
    of DeepEval `ConversationalTestCase`s, a list of conversations (each a
    list of OpenAI chat messages), or a path
    to a JSONL, JSON or CSV file or an OTLP trace export. Field names and
    aliases are the command line's. `params`: `{"METRIC.PARAM": value}`
    (`--set`). `judge`/`embedder`: `local` (in-process, no key, the
    default) or `openai:MODEL`, `ollama:`, `vllm:`, `llamacpp:`; the API key
    comes from `OPENAI_API_KEY`/`ASSAY_API_KEY`, or `api_key=` (never
    stored); a project's options from a file (`assay.toml`, or
    `pyproject.toml`'s `[tool.assay]`): `**assay.config_file(path)`. `out`:
    a run directory, resumed by the same call; None keeps
    nothing. `cache`: True (the default place), False, or a path.
    `prices`: `{"MODEL": "IN/OUT"}` per million tokens. `shard`: `"K/N"`,
    score only shard K of N (as `--shard`; `assay.ray` uses it).
    `references`: reference fields joined onto the samples (as
    `--references`): a JSONL or CSV path, a mapping `{id: {"reference_tool_calls":
    [...], ...}}`, or rows (a list of dicts, a DataFrame) with a `trace_id`,
    `sample_id` or `id` column; which samples found none and which
    references matched no sample are in `summary["input"]["references"]`.
    `logs`: the OTLP logs export (a path) whose GenAI events
    (`gen_ai.user.message`, `gen_ai.choice`, ...) give the messages of a
    trace export's spans, as `opentelemetry-instrumentation-openai-v2`
    writes them with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`
    (as `--logs`).
    `stitch`: False reads each LLM call of a trace export that has no
    parent span as its own row, instead of stitching the calls into
    conversations (as `--no-stitch`).
    `protocol`: how closed verdicts are asked, `"listed"` (one call per
    list, a reason before each verdict), `"per-item"` (one call per
    item, the verdict read with its probabilities), `"likelihood"`
    (per-item, with grounding read from how much likelier the contexts
    make the response's words; local judges only) or `"grounding"`
    (per-item, with grounding, contradiction, usefulness and statement
    matches answered by the trained grounding model, toxicity and bias
    by a word screen, no judge asked for them); None: grounding for a
    local judge, listed for a remote one (as `--protocol`).
    `grounding`: a Hugging Face folder of a sequence classifier (an NLI
    cross-encoder, MiniCheck) that answers every closed grounding
    question under any judge, and `grounding_label` the label of it that
    means supported when its `id2label` does not say (as `--grounding`,
    `--grounding-label`). `alignment`: a file `assay.align` wrote, whose
    refitted combiner replaces the built-in grounding verdict's, and whose
    demonstrations an LLM judge reads (as `--alignment`). `language`:
    the language of every row for the lexical grounding verdict (`"en"`,
    `"fr"`, `"de"`, `"es"`); None: each row's, detected, and a row in a
    language it cannot read is skipped (as `--language`).

    What `assay eval` does once the run is done, done by the same library
    call: `gates` (`{"faithfulness": ">= 0.7"}`, an output or a
    single-output metric) and `max_failed_fraction` are checked against
    the finished run, into `Result.gates` (`Result.passed`; as
    `--fail-under`, `--fail-over`, `--max-failed-fraction`); an output
    that scored no row is named in `Result.unscored` (and `passed` is
    False, as `assay eval` exits with 5);
    `calibration`: a `calibration.json` of a yes/no judgement whose
    correction goes into `summary["calibrated"]` (as `--calibration`);
    `report=True` writes `report.html` into `out` (`Result.report`; as
    `--report`).

    A bad row is a `failed` or `skipped` outcome naming the row and field,
    never an exception. A usage error (unknown metric, bad parameter or
    model spec) raises `assay.UsageError` (a `ValueError`) before any judge
    call. A judge that cannot serve the run raises
    `assay.JudgeUnavailableError` at once: refused credentials (its
    subclass `assay.AuthError`), or, before it answered anything, a
    connection refused, an unknown host, a TLS failure or an unknown model;
    what is done is kept in `out` and the same call resumes. Ctrl-C raises
    `KeyboardInterrupt` within a second, keeping what is done in `out`;
    so does setting `stop` (a `threading.Event`) from another thread.
    """
    # Every keyword is an option of the run, passed on as given: the
    # native reader (`assay-py`'s `options.rs`) types each one and names a
    # mistake by its keyword.
    options = dict(locals())
    del options["progress"], options["stop"]
    if gates is not None:
        options["gates"] = list(gates.items())
    keep = out is not None
    if report and not keep:
        raise _assay.UsageError("report: the report is written into the run directory; give out=")
    folder = Path(out) if keep else Path(tempfile.mkdtemp(prefix="assay-"))
    try:
        source = _source(data, folder if keep else folder / "input")
        if references is not None:
            source["references"] = _references(references, folder if keep else folder / "input")
        if input_format is not None:
            source["input_format"] = input_format
        run_dir = folder if keep else folder / "run"
        options.update(source, metrics=list(metrics), out=run_dir)
        bar = _Bar() if progress is True else None
        callback = bar if bar is not None else (progress if callable(progress) else None)
        try:
            summary, records, verdicts, page, unscored = _assay.evaluate(
                options, progress=callback, stop=stop
            )
        finally:
            if bar is not None:
                bar.close()
        return Result(
            run_dir if keep else None,
            summary,
            records,
            [Gate(*v) for v in verdicts],
            Path(page) if page is not None else None,
            unscored,
        )
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


async def aevaluate(*args: Any, **kwargs: Any) -> Result:
    """`evaluate(*args, **kwargs)` in a worker thread, awaitable inside a
    running event loop (Jupyter); progress is off unless asked for.
    Cancelling the awaiting task (or interrupting the cell) stops the run:
    it returns once the run has stopped and released its run directory,
    keeping what is done, and the same call resumes."""
    kwargs.setdefault("progress", False)
    stop = threading.Event()
    kwargs["stop"] = stop
    run = asyncio.get_running_loop().run_in_executor(
        None, functools.partial(evaluate, *args, **kwargs)
    )
    try:
        return await asyncio.shield(run)
    except BaseException:
        if not run.done():
            stop.set()
            with contextlib.suppress(Exception, KeyboardInterrupt):
                await run
        raise
