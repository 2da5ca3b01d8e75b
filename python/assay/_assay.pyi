"""The native module: list-in, list-out scorers (see assay._lexical)."""

import os
import threading
from collections.abc import Callable
from typing import Any, TypeAlias

# The names the extension lists in its `__all__` (PyO3 adds each function
# and class it registers).
__all__ = [
    "__version__",
    "rouge",
    "sentence_bleu",
    "corpus_bleu",
    "sentence_sacrebleu",
    "corpus_sacrebleu",
    "sentence_chrf",
    "corpus_chrf",
    "evaluate",
    "merge",
    "report",
    "compare",
    "check_gates",
    "parse_gates",
    "calibrate",
    "cli_main",
    "UsageError",
    "AuthError",
    "JudgeUnavailableError",
]

__version__: str

class UsageError(ValueError): ...
class JudgeUnavailableError(RuntimeError): ...
class AuthError(JudgeUnavailableError): ...

def evaluate(
    data: str,
    metrics: list[str],
    params: list[tuple[str, str]],
    out: str,
    *,
    rows: bool = False,
    name: str | None = None,
    input_format: str | None = None,
    strict: bool = False,
    threads: int | None = None,
    force_new: bool = False,
    shard: str | None = None,
    judge: str | None = None,
    embedder: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    concurrency: int = 16,
    rpm: int | None = None,
    tpm: int | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
    cache: str | None = None,
    no_cache: bool = False,
    prompts: str | None = None,
    prices: list[tuple[str, str]] = ...,
    repeats: int = 1,
    reasons: str = "composed",
    protocol: str | None = None,
    progress: Callable[[str, Any], None] | None = None,
    stop: threading.Event | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...
def merge(
    dirs: list[str], out: str, input: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...
def report(dir: str, input_format: str | None = None) -> os.PathLike[str]: ...
def compare(a: str, b: str, top: int = 10) -> dict[str, Any]: ...
def parse_gates(gates: list[tuple[str, str]]) -> None: ...
def check_gates(
    summary: str, gates: list[tuple[str, str]], max_failed_fraction: float | None = None
) -> list[tuple[bool, str | None, str]]: ...
def calibrate(
    metric: str,
    *,
    set: str | None = None,
    data: str | None = None,
    labels: str | None = None,
    high_score_means: bool | None = None,
    task: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    out: str | None = None,
    threads: int | None = None,
    judge: str | None = None,
    embedder: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    concurrency: int = 16,
    max_retries: int | None = None,
    timeout: float | None = None,
    cache: str | None = None,
    no_cache: bool = False,
    prompts: str | None = None,
    protocol: str | None = None,
    progress: Callable[[str, Any], None] | None = None,
    stop: threading.Event | None = None,
) -> dict[str, Any]: ...

# Stub-only aliases (private, as the extension has no such names).
_Prf: TypeAlias = tuple[float, float, float]
_SacreScore: TypeAlias = tuple[float, list[int], list[int], list[float], float, int, int]

def rouge(
    predictions: list[str], references: list[list[str]], types: list[str], use_stemmer: bool
) -> list[list[_Prf]]: ...
def sentence_bleu(
    predictions: list[str], references: list[list[str]], weights: list[float], smoothing: str
) -> list[float]: ...
def corpus_bleu(
    predictions: list[str], references: list[list[str]], weights: list[float], smoothing: str
) -> float: ...
def sentence_sacrebleu(
    predictions: list[str], references: list[list[str]]
) -> list[_SacreScore]: ...
def corpus_sacrebleu(predictions: list[str], references: list[list[str]]) -> _SacreScore: ...
def sentence_chrf(
    predictions: list[str],
    references: list[list[str]],
    char_order: int,
    word_order: int,
    beta: int,
) -> list[float]: ...
def corpus_chrf(
    predictions: list[str],
    references: list[list[str]],
    char_order: int,
    word_order: int,
    beta: int,
) -> float: ...
def cli_main(argv: list[str]) -> int: ...
