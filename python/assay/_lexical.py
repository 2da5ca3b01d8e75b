"""Drop-in lexical scorers: ROUGE as rouge-score computes it, BLEU as nltk
and sacreBLEU do, chrF as sacreBLEU does; exact to the reference
implementations, computed in Rust with the GIL released.

Each function takes one pair (a prediction and a reference, or a list of
references) and returns one result, or a list of predictions with one
reference (or list of references) each and returns a list.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple, Protocol, Union

from assay import _assay

References = Union[str, Sequence[str]]

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


class Tokenizer(Protocol):
    """What rouge-score's `tokenizer=` takes: an object whose
    `tokenize(text)` returns the text's tokens (hashable, compared with
    `==`), as `rouge_score.tokenizers.Tokenizer` subclasses do."""

    def tokenize(self, text: str) -> Sequence[Hashable]: ...


# The tokenizer id lists of one call: the whole text's, and each
# non-empty line's.
_TokenIds = tuple[list[int], list[list[int]]]


def _token_ids(
    tokenizer: Tokenizer, types: Sequence[str], text: str, ids: dict[Hashable, int]
) -> _TokenIds:
    """`text` as rouge-score's `RougeScorer.score` tokenizes it with a
    tokenizer object: `tokenize(text)` for rougeN and rougeL (not called
    when rougeLsum is the only type), `tokenize(line)` for each non-empty
    `\\n`-separated line for rougeLsum; tokens become ids, equal tokens equal
    ids (`ids` is shared by the texts of one call)."""

    def numbered(tokens: Sequence[Hashable]) -> list[int]:
        return [ids.setdefault(t, len(ids)) for t in tokens]

    only_lsum = len(types) == 1 and types[0] == "rougeLsum"
    whole = [] if only_lsum else numbered(tokenizer.tokenize(text))
    lines = (
        [numbered(tokenizer.tokenize(line)) for line in text.split("\n") if len(line)]
        if "rougeLsum" in types
        else []
    )
    return whole, lines


def _rouge_rows(
    preds: list[str],
    refs: list[list[str]],
    types: list[str],
    use_stemmer: bool,
    tokenizer: str | Tokenizer,
) -> list[list[tuple[float, float, float]]]:
    """Per pair, (precision, recall, fmeasure) per type: with one of assay's
    tokenizers (a name) or with a tokenizer object's tokens."""
    if isinstance(tokenizer, str):
        return _assay.rouge(preds, refs, types, use_stemmer, tokenizer)
    token_preds, token_refs = [], []
    for pred, targets in zip(preds, refs):
        ids: dict[Hashable, int] = {}
        token_preds.append(_token_ids(tokenizer, types, pred, ids))
        token_refs.append([_token_ids(tokenizer, types, t, ids) for t in targets])
    return _assay.rouge_tokens(token_preds, token_refs, types)


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
    *,
    tokenizer: str | Tokenizer = "default",
) -> dict[str, Score] | list[dict[str, Score]]:
    """ROUGE per pair, as `rouge_score.rouge_scorer.RougeScorer(types,
    use_stemmer).score_multi(references, prediction)`: with several
    references, the best-scoring one per type.

    `tokenizer` is rouge-score's own by default (`"default"`: lowercased
    runs of `[a-z0-9]`, so other scripts have no tokens), one of assay's
    (`"unicode"`: letters, marks and digits of any script, each Chinese
    character and kana a token; `"whitespace"`; `"char"`), or an object
    with a `tokenize(text)` method, used as `RougeScorer(tokenizer=...)`
    uses it (then `use_stemmer` must stay off: the object does its own
    stemming).

    >>> import assay
    >>> assay.rouge("the cat sat", "the cat sat down", types=["rouge1"])["rouge1"].recall
    0.75
    >>> assay.rouge("猫坐在垫子上", "猫在垫子上", types=["rouge1"], tokenizer="unicode")["rouge1"].recall
    1.0
    """
    single, preds, refs = _pairs(predictions, references)
    types = list(types)
    if not isinstance(tokenizer, str) and use_stemmer:
        raise ValueError(
            "use_stemmer=True stems the tokens of assay's tokenizers; a tokenizer object "
            "stems (or not) itself, so leave use_stemmer off"
        )
    rows = [
        {t: Score(*prf) for t, prf in zip(types, row)}
        for row in _rouge_rows(preds, refs, types, use_stemmer, tokenizer)
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
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
) -> BleuScore | list[BleuScore]:
    """sacreBLEU `sentence_bleu(prediction, references, tokenize=...,
    lowercase=...)` per pair (exp smoothing, effective order).

    `tokenize` is one of sacreBLEU's tokenizers that need no external model:
    `"13a"` (its default), `"intl"`, `"zh"`, `"char"` or `"none"`; another
    name raises ValueError. `lowercase` lowercases both texts first.

    >>> import assay
    >>> assay.sacrebleu("猫坐在垫子上。", "猫坐在垫子上。", tokenize="zh").sys_len
    7
    """
    single, preds, refs = _pairs(predictions, references)
    scores = [BleuScore(*s) for s in _assay.sentence_sacrebleu(preds, refs, tokenize, lowercase)]
    return scores[0] if single else scores


def corpus_sacrebleu(
    predictions: Sequence[str],
    references: Sequence[References],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
) -> BleuScore:
    """sacreBLEU `corpus_bleu` over the pairs, each prediction with its own
    references (sacreBLEU takes them transposed, as reference streams);
    `tokenize` and `lowercase` as for `sacrebleu`."""
    _, preds, refs = _pairs(predictions, references)
    return BleuScore(*_assay.corpus_sacrebleu(preds, refs, tokenize, lowercase))


def _chrf_options(
    char_order: int, word_order: int, beta: int, whitespace: bool, lowercase: bool
) -> dict[str, int | bool]:
    return {
        "char_order": char_order,
        "word_order": word_order,
        "beta": beta,
        "whitespace": whitespace,
        "lowercase": lowercase,
    }


def chrf(
    predictions: str | Sequence[str],
    references: References | Sequence[References],
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    *,
    whitespace: bool = False,
    lowercase: bool = False,
) -> float | list[float]:
    """sacreBLEU `CHRF(char_order, word_order, beta, lowercase,
    whitespace).sentence_score` per pair, 0..100 (`word_order=2`: chrF++).
    `whitespace=True` keeps white space in the character n-grams (what
    `sentence_chrf(..., remove_whitespace=False)` does)."""
    single, preds, refs = _pairs(predictions, references)
    options = _chrf_options(char_order, word_order, beta, whitespace, lowercase)
    scores = _assay.sentence_chrf(preds, refs, options)
    return scores[0] if single else scores


def corpus_chrf(
    predictions: Sequence[str],
    references: Sequence[References],
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    *,
    whitespace: bool = False,
    lowercase: bool = False,
) -> float:
    """sacreBLEU `CHRF(...).corpus_score` over the pairs, 0..100; the
    options as for `chrf`."""
    _, preds, refs = _pairs(predictions, references)
    options = _chrf_options(char_order, word_order, beta, whitespace, lowercase)
    return _assay.corpus_chrf(preds, refs, options)


class RougeScorer:
    """The call signature of `rouge_score.rouge_scorer.RougeScorer`, so that
    switching is one import line::

        from assay import RougeScorer  # was: from rouge_score.rouge_scorer import RougeScorer
        scorer = RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
        scorer.score(target, prediction)["rougeL"].fmeasure

    `tokenizer=` is used as rouge-score uses it: an object (if truthy)
    whose `tokenize(text)` gives the tokens of each text, and of each line
    for rougeLsum; `use_stemmer` is then unused, as in rouge-score. The
    prediction is tokenized once per call, not once per target. A name of
    one of assay's tokenizers (`"unicode"`, `"whitespace"`, `"char"`; see
    `assay.rouge`) is taken too. `split_summaries=True` is refused: it
    splits rougeLsum's texts with nltk's punkt sentence tokenizer, which
    assay does not reproduce.
    """

    def __init__(
        self,
        rouge_types: Sequence[str],
        use_stemmer: bool = False,
        split_summaries: bool = False,
        tokenizer: Tokenizer | str | None = None,
    ):
        # Scoring without an option rouge-score honours would differ from
        # it without a word.
        if split_summaries:
            raise ValueError(
                "split_summaries=True splits rougeLsum's texts into sentences with nltk's punkt "
                "(nltk.sent_tokenize), which assay does not reproduce; put one sentence per line "
                "('\\n'.join(sentences)) and leave split_summaries off, or use "
                "rouge_score.rouge_scorer.RougeScorer"
            )
        self.rouge_types = list(rouge_types)
        self.use_stemmer = use_stemmer
        # As rouge-score: `if tokenizer:` picks the object, else the default.
        self._tokenizer: Tokenizer | str = tokenizer if tokenizer else "default"
        if not isinstance(self._tokenizer, str) and not callable(
            getattr(self._tokenizer, "tokenize", None)
        ):
            raise TypeError("tokenizer: expected an object with a tokenize(text) method")
        # Checks the types (and a tokenizer name) now, as rouge-score checks
        # the types.
        _assay.rouge(
            [],
            [],
            self.rouge_types,
            use_stemmer,
            self._tokenizer if isinstance(self._tokenizer, str) else "default",
        )

    def score(self, target: str, prediction: str) -> dict[str, Score]:
        """Scores one prediction against one target (reference)."""
        return self.score_multi([target], prediction)

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, Score]:
        """Scores one prediction against several targets: the best per type."""
        rows = _rouge_rows(
            [prediction], [list(targets)], self.rouge_types, self.use_stemmer, self._tokenizer
        )
        return {t: Score(*prf) for t, prf in zip(self.rouge_types, rows[0])}
