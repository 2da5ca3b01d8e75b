"""The native module: list-in, list-out scorers (see assay._lexical)."""

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias, TypedDict

_PathLike: TypeAlias = str | os.PathLike[str]

# The names the extension lists in its `__all__` (PyO3 adds each function
# and class it registers).
__all__ = [
    "__version__",
    "rouge",
    "rouge_tokens",
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
    "calibrate",
    "align",
    "generate",
    "config_file",
    "cli_main",
    "UsageError",
    "AuthError",
    "JudgeUnavailableError",
]

__version__: str

class UsageError(ValueError): ...
class JudgeUnavailableError(RuntimeError): ...
class AuthError(JudgeUnavailableError): ...

# `options` maps the keyword names of `assay.evaluate` (with `rows` and
# `name`, which say what the file `data` holds) and of `assay.calibrate`
# to their values; the extension types each and rejects unknown names.
def evaluate(
    options: Mapping[str, Any],
    progress: Callable[[str, Any], None] | None = None,
    stop: threading.Event | None = None,
) -> tuple[
    dict[str, Any],
    list[dict[str, Any]],
    list[tuple[bool, str | None, str]],
    os.PathLike[str] | None,
    list[str],
]: ...
def merge(
    dirs: list[str], out: str, input: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]: ...
def report(dir: str, input_format: str | None = None) -> os.PathLike[str]: ...
def compare(a: str, b: str, top: int = 10) -> dict[str, Any]: ...
def calibrate(
    options: Mapping[str, Any],
    progress: Callable[[str, Any], None] | None = None,
    stop: threading.Event | None = None,
) -> dict[str, Any]: ...
def align(
    out: str,
    set: str | None = None,
    data: str | None = None,
    labels: str | None = None,
    true_means_supported: bool = False,
) -> dict[str, Any]: ...

# Stub-only aliases (private, as the extension has no such names).
_Prf: TypeAlias = tuple[float, float, float]
_SacreScore: TypeAlias = tuple[float, list[int], list[int], list[float], float, int, int]
# A text as a caller's tokenizer split it, tokens as ids: the whole text's,
# and each non-empty line's.
_TokenIds: TypeAlias = tuple[list[int], list[list[int]]]

# The keywords that `evaluate`'s `options` take besides `data`, `metrics`,
# `params` and what it does after the run, as assay-config declares them.
class _EvalOptions(TypedDict, total=False):
    # <generated: eval options>
    out: _PathLike | None
    input_format: Literal["jsonl", "json", "csv", "otlp"] | None
    references: Any
    logs: _PathLike | None
    stitch: bool
    strict: bool
    threads: int | None
    force_new: bool
    shard: str | None
    # </generated>

# The judge keywords that `evaluate`'s and `calibrate`'s `options` take,
# as assay-config declares them.
class _JudgeOptions(TypedDict, total=False):
    # <generated: judge options>
    judge: str
    embedder: str | None
    base_url: str | None
    api_key: str | None
    concurrency: int
    rpm: int | None
    tpm: int | None
    max_retries: int
    timeout: float
    max_tokens: int | None
    cache: bool | _PathLike
    prompts: _PathLike | None
    prices: Mapping[str, str] | None
    repeats: int
    reasons: Literal["composed", "llm"]
    protocol: Literal["listed", "per-item", "likelihood", "grounding"] | None
    grounding: _PathLike | None
    grounding_label: str | None
    alignment: _PathLike | None
    language: str | None
    # </generated>

# What `evaluate`'s `options` take for after the run, besides `gates`, as
# assay-config declares it.
class _FinishOptions(TypedDict, total=False):
    # <generated: finish options>
    max_failed_fraction: float | None
    calibration: _PathLike | None
    report: bool
    # </generated>

class _ChrfOptions(TypedDict):
    char_order: int
    word_order: int
    beta: int
    whitespace: bool
    lowercase: bool

def rouge(
    predictions: list[str],
    references: list[list[str]],
    types: list[str],
    use_stemmer: bool,
    tokenizer: str,
) -> list[list[_Prf]]: ...
def rouge_tokens(
    predictions: list[_TokenIds], references: list[list[_TokenIds]], types: list[str]
) -> list[list[_Prf]]: ...
def sentence_bleu(
    predictions: list[str], references: list[list[str]], weights: list[float], smoothing: str
) -> list[float]: ...
def corpus_bleu(
    predictions: list[str], references: list[list[str]], weights: list[float], smoothing: str
) -> float: ...
def sentence_sacrebleu(
    predictions: list[str], references: list[list[str]], tokenize: str, lowercase: bool
) -> list[_SacreScore]: ...
def corpus_sacrebleu(
    predictions: list[str], references: list[list[str]], tokenize: str, lowercase: bool
) -> _SacreScore: ...
def sentence_chrf(
    predictions: list[str], references: list[list[str]], options: _ChrfOptions
) -> list[float]: ...
def corpus_chrf(
    predictions: list[str], references: list[list[str]], options: _ChrfOptions
) -> float: ...
def generate(
    options: Mapping[str, Any],
    progress: Callable[[str, Any], None] | None = None,
    stop: threading.Event | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], list[str]]: ...
def config_file(path: str | os.PathLike[str], judge_only: bool = False) -> dict[str, Any]: ...
def cli_main(argv: list[str]) -> int: ...
