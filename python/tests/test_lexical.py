"""The drop-in lexical scorers against the shared parity set: every public
pair scored by rouge-score 0.1.2, nltk 3.10.4 and sacreBLEU 2.6.0, to 1e-9."""

import importlib.util
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


def test_rouge_scorer_refuses_split_summaries_and_bad_tokenizers():
    with pytest.raises(ValueError, match="nltk's punkt"):
        assay.RougeScorer(["rougeLsum"], split_summaries=True)
    with pytest.raises(TypeError, match="tokenize"):
        assay.RougeScorer(["rouge1"], tokenizer=object())
    with pytest.raises(ValueError, match="default, unicode, whitespace, char"):
        assay.RougeScorer(["rouge1"], tokenizer="jieba")
    assert assay.RougeScorer(["rouge1"], split_summaries=False, tokenizer=None).score("a b", "a")


# rouge-score's RougeScorer(types, tokenizer=T) on pairs in six scripts, for
# the tokenizer objects of data/gen_rouge_tokenizer_expected.py, which wrote
# the expected values with rouge-score 0.1.2 (not installed here).
ROUGE_TOKENIZERS = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def rouge_tokenizers():
    spec = importlib.util.spec_from_file_location(
        "gen_rouge_tokenizer_expected",
        ROUGE_TOKENIZERS / "gen_rouge_tokenizer_expected.py",
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = json.loads((ROUGE_TOKENIZERS / "rouge_tokenizer_expected.json").read_text())
    return module.TOKENIZERS, expected


def test_rouge_scorer_honours_tokenizer_objects_as_rouge_score(rouge_tokenizers):
    tokenizers, expected = rouge_tokenizers
    pairs = expected["pairs"]
    assert {p["id"][:2] for p in pairs} >= {"zh", "ja", "ar", "ru", "hi", "en"}
    bad, compared = [], 0
    for name, per_types in expected["expected"].items():
        for types_name, rows in per_types.items():
            types = expected["type_sets"][types_name]
            scorer = assay.RougeScorer(types, tokenizer=tokenizers[name])
            for p, want in zip(pairs, rows):
                got = {"multi": scorer.score_multi(p["references"], p["prediction"])}
                if "first" in want:
                    got["first"] = scorer.score(p["references"][0], p["prediction"])
                for how, scores in got.items():
                    for t in types:
                        compared += 1
                        if list(scores[t]) != pytest.approx(want[how][t], abs=TOL):
                            bad.append((name, types_name, p["id"], how, t))
    assert compared > 9_000
    assert not bad, bad[:5]


def test_rouge_takes_a_tokenizer_by_name_or_object(rouge_tokenizers):
    tokenizers, _ = rouge_tokenizers
    zh = ("猫坐在垫子上。", "猫在垫子上。")
    assert assay.rouge(*zh, types=["rouge1"])["rouge1"].fmeasure == 0.0
    for tokenizer in ("unicode", "char", tokenizers["chars"]):
        got = assay.rouge(*zh, types=["rouge1"], tokenizer=tokenizer)["rouge1"]
        # The full stop is a token of the object's, not of assay's.
        n = 7 if tokenizer is tokenizers["chars"] else 6
        assert (got.precision, got.recall) == ((n - 1) / n, 1.0), tokenizer
    hindi = assay.rouge("बिल्ली चटाई पर बैठी है।", "बिल्ली चटाई पर बैठी थी।", tokenizer="unicode")
    assert hindi["rouge1"].fmeasure == pytest.approx(0.8, abs=TOL)
    assert assay.rouge("a,b c", "a,b c", tokenizer="whitespace")["rouge2"].fmeasure == 1.0
    with pytest.raises(ValueError, match="use_stemmer"):
        assay.rouge("a", "a", use_stemmer=True, tokenizer=tokenizers["chars"])
    with pytest.raises(ValueError, match="default, unicode, whitespace, char"):
        assay.rouge("a", "a", tokenizer="jieba")


# sacreBLEU's tokenizers and chrF options through the Python functions, on
# the parity set of crates/assay-text (tokenize_parity.json, written by its
# gen_tokenize_parity.py with sacrebleu 2.6.0).
@pytest.fixture(scope="module")
def tokenize_parity():
    return json.loads((PARITY / "tokenize_parity.json").read_text())


def test_sacrebleu_tokenize_matches_sacrebleu(tokenize_parity):
    pairs = tokenize_parity["pairs"]
    preds, refs = columns(pairs)
    for key, config in tokenize_parity["bleu_configs"].items():
        options = {"tokenize": config["tokenize"], "lowercase": config["lowercase"]}
        for p, got in zip(pairs, assay.sacrebleu(preds, refs, **options)):
            want = p["bleu"][key]
            assert math.isclose(got.score, want["score"], rel_tol=0.0, abs_tol=1e-12), (
                p["id"],
                key,
            )
            assert (got.counts, got.totals) == (want["counts"], want["totals"]), (p["id"], key)
            assert (got.sys_len, got.ref_len) == (want["sys_len"], want["ref_len"]), (p["id"], key)
        whole = assay.corpus_sacrebleu(preds, refs, **options)
        want = tokenize_parity["corpus"]["all"]["bleu"][key]
        assert close(whole.score, want["score"]) and whole.counts == want["counts"], key


def test_chrf_options_match_sacrebleu(tokenize_parity):
    pairs = tokenize_parity["pairs"]
    preds, refs = columns(pairs)
    for key, config in tokenize_parity["chrf_configs"].items():
        got = assay.chrf(preds, refs, **config)
        bad = [p["id"] for p, g in zip(pairs, got) if not close(g, p["chrf"][key])]
        assert not bad, (key, bad[:5])
        want = tokenize_parity["corpus"]["all"]["chrf"][key]["score"]
        assert close(assay.corpus_chrf(preds, refs, **config), want), key


def test_unknown_lexical_options_name_the_accepted_ones():
    with pytest.raises(ValueError, match="none, 13a, intl, zh, char"):
        assay.sacrebleu("a", "a", tokenize="ja-mecab")
    with pytest.raises(ValueError, match="none, 13a, intl, zh, char"):
        assay.corpus_sacrebleu(["a"], ["a"], tokenize="spm")
    # The new options are keyword-only: sacreBLEU's positional
    # `remove_whitespace` means the opposite of `whitespace`.
    with pytest.raises(TypeError):
        assay.chrf("a", "a", 6, 0, 2, True)  # type: ignore[misc]
