"""The drop-in lexical scorers against the shared parity set: every public
pair scored by rouge-score 0.1.2, nltk 3.10.4 and sacreBLEU 2.6.0, to 1e-9."""

import json
import math
from pathlib import Path

import pytest

import assay

PARITY = Path(__file__).resolve().parents[2] / "crates/assay-text/tests/data/parity"
TOL = 1e-9
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


@pytest.fixture(scope="module")
def parity():
    pairs = [json.loads(line) for line in (PARITY / "public.jsonl").open()]
    expected = json.loads((PARITY / "public.expected.json").read_text())
    by_id = {row["id"]: row for row in expected["pairs"]}
    assert len(by_id) == len(pairs) == expected["input"]["pairs"]
    return pairs, [by_id[p["id"]] for p in pairs], expected["corpus"]


def close(a, b):
    return math.isclose(a, b, rel_tol=0.0, abs_tol=TOL)


def columns(pairs):
    return [p["prediction"] for p in pairs], [p["references"] for p in pairs]


@pytest.mark.parametrize("stem", [False, True])
def test_rouge_list_form_matches_rouge_score(parity, stem):
    pairs, expected, _ = parity
    preds, refs = columns(pairs)
    got = assay.rouge(preds, refs, types=TYPES, use_stemmer=stem)
    key = "rouge_stem" if stem else "rouge"
    bad = [
        (p["id"], t, field)
        for p, g, e in zip(pairs, got, expected)
        for t in TYPES
        for field in ("precision", "recall", "fmeasure")
        if not close(getattr(g[t], field), e[key][t][field])
    ]
    assert not bad, bad[:5]


def test_rouge_scorer_has_rouge_scores_call_signature(parity):
    pairs, expected, _ = parity
    scorer = assay.RougeScorer(TYPES, use_stemmer=True)
    for p, e in zip(pairs[:200], expected[:200]):
        multi = scorer.score_multi(p["references"], p["prediction"])
        for t in TYPES:
            assert close(multi[t].fmeasure, e["rouge_stem"][t]["fmeasure"]), (p["id"], t)
        # score(target, prediction): one reference, as rouge-score orders them.
        one = scorer.score(p["references"][0], p["prediction"])
        for t in TYPES:
            want = e["rouge_stem_per_ref"][t][0]
            assert [one[t].precision, one[t].recall, one[t].fmeasure] == pytest.approx(
                want, abs=TOL
            ), (p["id"], t)


def test_one_pair_gives_one_result_and_lists_give_lists():
    one = assay.rouge("the cat sat", "the cat sat down", types=["rouge1"])
    assert set(one) == {"rouge1"}
    assert one["rouge1"].recall == 0.75 and one["rouge1"].precision == 1.0
    many = assay.rouge(["the cat sat", "a dog"], ["the cat sat down", ["a dog", "dogs"]])
    assert len(many) == 2 and many[1]["rouge1"].fmeasure == 1.0
    assert isinstance(assay.bleu("a b c d", "a b c d"), float)
    assert isinstance(assay.chrf(["a b"], [["a b"]]), list)


def test_bleu_matches_nltk_with_every_smoothing(parity):
    pairs, expected, corpus = parity
    preds, refs = columns(pairs)
    for k in (0, 1, 2, 3, 4, 5, 7):
        got = assay.bleu(preds, refs, smoothing=f"method{k}")
        for p, g, e in zip(pairs, got, expected):
            assert close(g, e["nltk_bleu_smoothing"][f"method{k}"]), (p["id"], k)
    # nltk's method6 raises on some pairs: so does assay, pair by pair, and
    # a list names the first such pair.
    raised = 0
    for p, e in zip(pairs, expected):
        want = e["nltk_bleu_smoothing"]["method6"]
        if want is None:
            raised += 1
            with pytest.raises(ValueError):
                assay.bleu(p["prediction"], p["references"], smoothing="method6")
        else:
            got = assay.bleu(p["prediction"], p["references"], smoothing="method6")
            assert close(got, want), p["id"]
    assert raised > 0
    first = next(i for i, e in enumerate(expected) if e["nltk_bleu_smoothing"]["method6"] is None)
    with pytest.raises(ValueError, match=f"pair {first}: "):
        assay.bleu(preds, refs, smoothing="method6")
    assert close(assay.corpus_bleu(preds, refs), corpus["nltk_corpus_bleu"])
    assert close(
        assay.corpus_bleu(preds, refs, smoothing="method1"), corpus["nltk_corpus_bleu_method1"]
    )


def test_sacrebleu_and_chrf_match_sacrebleu(parity):
    pairs, expected, corpus = parity
    preds, refs = columns(pairs)
    for p, g, e in zip(pairs, assay.sacrebleu(preds, refs), expected):
        want = e["sacrebleu_bleu"]
        assert close(g.score, want["score"]), p["id"]
        assert g.counts == want["counts"] and g.totals == want["totals"], p["id"]
        assert close(g.bp, want["bp"]), p["id"]
    for p, g, e in zip(pairs, assay.chrf(preds, refs), expected):
        assert close(g, e["sacrebleu_chrf"]), p["id"]
    for p, g, e in zip(pairs, assay.chrf(preds, refs, word_order=2), expected):
        assert close(g, e["sacrebleu_chrfpp"]), p["id"]
    whole = assay.corpus_sacrebleu(preds, refs)
    assert close(whole.score, corpus["sacrebleu_corpus_bleu"]["score"])
    assert whole.counts == corpus["sacrebleu_corpus_bleu"]["counts"]
    assert close(assay.corpus_chrf(preds, refs), corpus["sacrebleu_corpus_chrf"]["score"])
    assert close(
        assay.corpus_chrf(preds, refs, word_order=2), corpus["sacrebleu_corpus_chrfpp"]["score"]
    )


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="rougeX"):
        assay.RougeScorer(["rougeX"])
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        assay.rouge(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="method9"):
        assay.bleu("a", "a", smoothing="method9")
    with pytest.raises(TypeError, match="list of references"):
        assay.chrf(["a"], "a")
    with pytest.raises(ValueError):
        assay.sacrebleu("a", [])


def test_rouge_scorer_refuses_the_options_it_would_score_without():
    class Chars:
        def tokenize(self, text):
            return list(text)

    for kwargs in ({"tokenizer": Chars()}, {"split_summaries": True}):
        with pytest.raises(ValueError, match="rouge_score.rouge_scorer.RougeScorer"):
            assay.RougeScorer(["rouge1"], **kwargs)
    assert assay.RougeScorer(["rouge1"], split_summaries=False, tokenizer=None).score("a b", "a")
