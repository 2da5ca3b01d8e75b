"""assay: exact, fast, reproducible scores for LLM applications.

`evaluate` scores RAG answers, summaries and QA with judged and lexical
metrics, as `assay eval` does; `assert_scores` turns that into a pytest
gate (the command line's gates); `calibrate` measures a judge against
human labels, `compare` sets two runs side by side and `report` writes a
run's HTML report, each the command line's library call; `assay.ray.evaluate` spreads one evaluation over a Ray cluster (the
extra `assay-eval[ray]`). The lexical scorers (`rouge`, `bleu`, `sacrebleu`, `chrf`, their
corpus forms, and `RougeScorer`) match rouge-score, nltk and sacreBLEU to
1e-9.
"""

from assay._assay import __version__, config_file
from assay._evaluate import (
    AuthError,
    Gate,
    JudgeUnavailableError,
    Result,
    UsageError,
    aevaluate,
    evaluate,
)
from assay._gates import assert_scores
from assay._generate import TestSet, generate
from assay._review import align, calibrate, compare, report
from assay._lexical import (
    BleuScore,
    RougeScorer,
    Score,
    bleu,
    chrf,
    corpus_bleu,
    corpus_chrf,
    corpus_sacrebleu,
    rouge,
    sacrebleu,
)

__all__ = [
    "AuthError",
    "BleuScore",
    "Gate",
    "JudgeUnavailableError",
    "Result",
    "TestSet",
    "UsageError",
    "aevaluate",
    "align",
    "assert_scores",
    "calibrate",
    "compare",
    "config_file",
    "evaluate",
    "generate",
    "report",
    "RougeScorer",
    "Score",
    "__version__",
    "bleu",
    "chrf",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_sacrebleu",
    "rouge",
    "sacrebleu",
]
