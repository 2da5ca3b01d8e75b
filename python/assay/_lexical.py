"""Drop-in lexical scorers: ROUGE as rouge-score computes it, BLEU as nltk
and sacreBLEU do, chrF as sacreBLEU does; exact to the reference
implementations, computed in Rust with the GIL released.

Each function takes one pair (a prediction and a reference, or a list of
references) and returns one result, or a list of predictions with one
reference (or list of references) each and returns a list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Union

from assay import _assay

References = Union[str, Sequence[str]]

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


class Score(NamedTuple):
    """One ROUGE type's precision, recall and F1, as rouge-score's `Score`."""

    precision: float
    recall: float
    fmeasure: float


def _reference_list(references: References, what: str) -> list[str]:
    if isinstance(references, str):
        return [references]
    refs = list(references)
    if not all(isinstance(r, str) for r in refs):
        raise TypeError(f"{what}: a reference must be a str or a list of str")
    return refs


def _pairs(
    predictions: str | Sequence[str], references: References | Sequence[References]
) -> tuple[bool, list[str], list[list[str]]]:
    """(single, predictions, reference lists) from one pair or two lists."""
    if isinstance(predictions, str):
        return True, [predictions], [_reference_list(references, "references")]  # type: ignore[arg-type]
    preds = list(predictions)
    if isinstance(references, str):
        raise TypeError("a list of predictions needs a list of references, one per prediction")
    refs = [_reference_list(r, f"references[{i}]") for i, r in enumerate(references)]
    if len(preds) != len(refs):
        raise ValueError(
            f"{len(preds)} predictions but {len(refs)} references: give one per prediction"
        )
    return False, preds, refs


def rouge(
    predictions: str | Sequence[str],
    references: References | Sequence[References],
    types: Sequence[str] = DEFAULT_ROUGE_TYPES,
    use_stemmer: bool = False,
) -> dict[str, Score] | list[dict[str, Score]]:
    """ROUGE per pair, as `rouge_score.rouge_scorer.RougeScorer(types,
    use_stemmer).score_multi(references, prediction)`: with several
    references, the best-scoring one per type.

    >>> import assay
    >>> assay.rouge("the cat sat", "the cat sat down", types=["rouge1"])["rouge1"].recall
    0.75
    """
    single, preds, refs = _pairs(predictions, references)
    types = list(types)
    rows = [
        {t: Score(*prf) for t, prf in zip(types, row)}
        for row in _assay.rouge(preds, refs, types, use_stemmer)
    ]
    return rows[0] if single else rows


def bleu(
    predictions: str | Sequence[str],
    references: References | Sequence[References],
    weights: Sequence[float] = (0.25, 0.25, 0.25, 0.25),
    smoothing: str = "method0",
) -> float | list[float]:
    """nltk `sentence_bleu` per pair, on `str.split()` tokens, with
    `SmoothingFunction().methodK` named `"methodK"` (`"method0"`: none)."""
    single, preds, refs = _pairs(predictions, references)
    scores = _assay.sentence_bleu(preds, refs, list(weights), smoothing)
    return scores[0] if single else scores


def corpus_bleu(
    predictions: Sequence[str],
    references: Sequence[References],
    weights: Sequence[float] = (0.25, 0.25, 0.25, 0.25),
    smoothing: str = "method0",
) -> float:
    """nltk `corpus_bleu` over the pairs, on `str.split()` tokens."""
    _, preds, refs = _pairs(predictions, references)
    return _assay.corpus_bleu(preds, refs, list(weights), smoothing)


class BleuScore(NamedTuple):
    """sacreBLEU's `BLEUScore`: score 0..100 and its statistics."""

    score: float
    counts: list[int]
    totals: list[int]
    precisions: list[float]
    bp: float
    sys_len: int
    ref_len: int


def sacrebleu(
    predictions: str | Sequence[str],
    references: References | Sequence[References],
) -> BleuScore | list[BleuScore]:
    """sacreBLEU `sentence_bleu` per pair (13a tokenizer, exp smoothing,
    effective order)."""
    single, preds, refs = _pairs(predictions, references)
    scores = [BleuScore(*s) for s in _assay.sentence_sacrebleu(preds, refs)]
    return scores[0] if single else scores


def corpus_sacrebleu(predictions: Sequence[str], references: Sequence[References]) -> BleuScore:
    """sacreBLEU `corpus_bleu` over the pairs, each prediction with its own
    references (sacreBLEU takes them transposed, as reference streams)."""
    _, preds, refs = _pairs(predictions, references)
    return BleuScore(*_assay.corpus_sacrebleu(preds, refs))


def chrf(
    predictions: str | Sequence[str],
    references: References | Sequence[References],
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
) -> float | list[float]:
    """sacreBLEU `sentence_chrf` per pair, 0..100 (`word_order=2`: chrF++)."""
    single, preds, refs = _pairs(predictions, references)
    scores = _assay.sentence_chrf(preds, refs, char_order, word_order, beta)
    return scores[0] if single else scores


def corpus_chrf(
    predictions: Sequence[str],
    references: Sequence[References],
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
) -> float:
    """sacreBLEU `corpus_chrf` over the pairs, 0..100."""
    _, preds, refs = _pairs(predictions, references)
    return _assay.corpus_chrf(preds, refs, char_order, word_order, beta)


class RougeScorer:
    """The call signature of `rouge_score.rouge_scorer.RougeScorer`, so that
    switching is one import line::

        from assay import RougeScorer  # was: from rouge_score.rouge_scorer import RougeScorer
        scorer = RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
        scorer.score(target, prediction)["rougeL"].fmeasure
    """

    def __init__(
        self,
        rouge_types: Sequence[str],
        use_stemmer: bool = False,
        split_summaries: bool = False,
        tokenizer: object = None,
    ):
        # rouge-score's other options change its numbers; taking them and
        # scoring without them would differ from it without a word.
        if tokenizer is not None or split_summaries:
            raise ValueError(
                "assay.RougeScorer scores with rouge-score's default tokenizer and rougeLsum "
                "over newline-separated lines only; for tokenizer= or split_summaries=True "
                "use rouge_score.rouge_scorer.RougeScorer"
            )
        self.rouge_types = list(rouge_types)
        self.use_stemmer = use_stemmer
        # Checks the types now, as rouge-score does.
        _assay.rouge([], [], self.rouge_types, use_stemmer)

    def score(self, target: str, prediction: str) -> dict[str, Score]:
        """Scores one prediction against one target (reference)."""
        return self.score_multi([target], prediction)

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, Score]:
        """Scores one prediction against several targets: the best per type."""
        row = _assay.rouge([prediction], [list(targets)], self.rouge_types, self.use_stemmer)[0]
        return {t: Score(*prf) for t, prf in zip(self.rouge_types, row)}
