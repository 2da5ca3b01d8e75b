"""Test sets from documents, from Python: `generate` is the same library
call as `assay generate`, with the same rows."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from assay import _assay
from assay._evaluate import PathLike


class TestSet:
    """What one generation made: the rows (samples `assay.evaluate`
    reads once an application fills `response` and `retrieved_contexts`),
    the rejected candidates with their reasons, and the summary (counts,
    the questions not made and why, the judge's calls and tokens, the
    generator's signature). For a dry run, the rows are empty and the
    summary is the plan."""

    __test__ = False  # not a pytest test class, despite its name

    def __init__(
        self, rows: list[dict[str, Any]], rejected: list[dict[str, Any]], summary: dict[str, Any]
    ):
        self.rows = rows
        self.rejected = rejected
        self.summary = summary

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"TestSet(rows={len(self.rows)}, rejected={len(self.rejected)})"

    def to_pandas(self):
        """The rows as a pandas DataFrame (pandas must be installed)."""
        import pandas as pd

        return pd.DataFrame(self.rows)


def _names_a_path(text: str) -> bool:
    """Whether `text` is the name of a file or folder that exists (a text
    of several lines, or too long for a name, never is)."""
    if "\n" in text or len(text) > 4096:
        return False
    try:
        return Path(text).exists()
    except OSError:
        return False


def _documents(documents: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Paths and in-memory texts: a path (`os.PathLike`, or a `str` naming
    a file or folder that exists), a `str` of text, a LangChain `Document`
    (`page_content`, `metadata["source"]`) or a LlamaIndex one (`text`,
    `metadata`, `doc_id`)."""
    if isinstance(documents, (str, os.PathLike)) or not isinstance(documents, Iterable):
        documents = [documents]
    paths: list[str] = []
    texts: list[tuple[str, str]] = []
    for i, d in enumerate(documents):
        name = f"document {i + 1}"
        if isinstance(d, os.PathLike) or (isinstance(d, str) and _names_a_path(d)):
            paths.append(os.fspath(d))
        elif isinstance(d, str):
            texts.append((name, d))
        elif hasattr(d, "page_content"):
            meta = getattr(d, "metadata", None) or {}
            texts.append((str(meta.get("source", name)), d.page_content))
        elif hasattr(d, "text") and isinstance(d.text, str):
            meta = getattr(d, "metadata", None) or {}
            source = meta.get("file_path") or meta.get("file_name") or getattr(d, "doc_id", None)
            texts.append((str(source or name), d.text))
        else:
            raise _assay.UsageError(
                f"documents[{i}]: a {type(d).__name__}: expected a path, a text, "
                "or a LangChain or LlamaIndex document"
            )
    return paths, texts


def _notes(kind: str, payload: Any) -> None:
    if kind == "note":
        print(payload, file=sys.stderr)


def generate(
    documents: Any,
    size: int = 20,
    *,
    out: PathLike | None = None,
    mix: str | Mapping[str, float] | None = None,
    seed: int = 0,
    chunk_tokens: int = 256,
    personas: list[str] | None = None,
    evolutions: list[str] | None = None,
    dry_run: bool = False,
    max_calls: int | None = None,
    max_cost: float | None = None,
    critic: float | None = None,
    closed_book: bool = False,
    round_trip: bool = False,
    threads: int | None = None,
    progress: bool | Callable[[str, Any], None] = True,
    stop: threading.Event | None = None,
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
) -> TestSet:
    """Makes `size` questions, reference answers and reference contexts
    from `documents`, as `assay generate` does.

    `documents`: a path or a list of paths (Markdown, text, HTML or PDF files,
    or folders of them), texts, or LangChain / LlamaIndex documents. A
    `str` is a path when a file or folder of that name exists, else a
    text. `mix`: the question types' shares, `"single_hop=0.5,
    multi_hop=0.25,abstract=0.25"` (the default) or a mapping; a
    `conversation` share makes conversational scenarios (`scenario`,
    `user_description`, `expected_outcome`). `seed`: the
    plan's (which chunk, persona, style and length each question gets).
    `evolutions`: ways to make the questions harder, each question drawing
    one (`"reasoning"`, `"multi_context"`, `"concretizing"`,
    `"constrained"`, `"comparative"`, `"hypothetical"`, `"in_breadth"`).
    `out`: the test set's JSONL file, with `FILE.rejected.jsonl` and
    `FILE.summary.json` beside it; None writes nothing. `dry_run=True`
    returns the plan and the judge calls it needs, without a call.
    `max_calls` / `max_cost` stop at a budget of judge answers or of cost
    (at the judge's price, `prices={"MODEL": "IN/OUT"}`), keeping what was
    made. `critic`: the judge also scores each question that passes the
    checks for self-containment and clarity, 0 to 1, and those below this
    are rejected with its feedback. `closed_book`: the judge is also asked
    each question alone, without its contexts, and those it answers as the
    reference does are rejected. `round_trip`: the judge is also asked each
    single-hop and multi-hop question with its contexts, and those whose
    reference answer does not agree with its answer are rejected. `grounding`: a grounding model's folder
    (an NLI cross-encoder, MiniCheck, HHEM) reads whether each reference
    answer is supported by its contexts, in place of the lexical verdict.
    `progress`: True prints the generation's notes on stderr (a
    line at each tenth of the plan), a callable receives them as
    `("note", line)`, False is silent. Ctrl-C, or `stop` (a
    `threading.Event`) once set, stops the generation with what was made
    written and raises `KeyboardInterrupt`. The
    judge keywords are `evaluate`'s (the default is the local judge: no
    key, no network).
    """
    paths, texts = _documents(documents)
    if isinstance(mix, Mapping):
        mix = ",".join(f"{k}={v}" for k, v in mix.items())
    options = {
        k: v
        for k, v in locals().items()
        if k not in ("documents", "paths", "texts", "progress", "stop")
    }
    options.update(paths=paths, texts=texts)
    callback = _notes if progress is True else (progress if callable(progress) else None)
    rows, rejected, summary, unread = _assay.generate(options, progress=callback, stop=stop)
    for file in unread:
        print(f"assay: not read (not Markdown, text, HTML or PDF): {file}")
    return TestSet(rows, rejected, summary)
