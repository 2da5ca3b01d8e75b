"""Times assay's Python scorers against rouge-score, nltk and sacreBLEU in
one process, on the parity set's pairs: the list form (one call for all
pairs) and per-pair calls (FFI overhead included). Prints a Markdown table
of pairs per second and ratios, and checks that the scores agree.

    bench/python.sh            # builds the release wheel into bench/.venv, then runs this
"""

import json
import warnings
import os
import sys
import time
from pathlib import Path

import nltk.translate.bleu_score as nltk_bleu
import sacrebleu
from rouge_score import rouge_scorer

import assay

PARITY = (
    Path(__file__).resolve().parents[1]
    / "crates/assay-text/tests/data/parity/public.jsonl"
)
PAIRS = int(os.environ.get("PAIRS", "3000"))
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def best(fn, repeat=3):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    warnings.simplefilter("ignore")  # nltk warns on every zero-overlap pair
    rows = [json.loads(line) for line in PARITY.open()]
    rows = [rows[i % len(rows)] for i in range(PAIRS)]
    preds = [r["prediction"] for r in rows]
    refs = [r["references"] for r in rows]
    ref_scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=False)
    our_scorer = assay.RougeScorer(TYPES, use_stemmer=False)

    def rouge_sum(scores):
        return sum(s[t].fmeasure for s in scores for t in TYPES)

    cases = [
        (
            "ROUGE (4 types, score_multi)",
            lambda: rouge_sum(
                [ref_scorer.score_multi(r, p) for p, r in zip(preds, refs)]
            ),
            lambda: rouge_sum(assay.rouge(preds, refs, types=TYPES)),
            lambda: rouge_sum(
                [our_scorer.score_multi(r, p) for p, r in zip(preds, refs)]
            ),
        ),
        (
            "nltk sentence BLEU",
            lambda: sum(
                nltk_bleu.sentence_bleu([x.split() for x in r], p.split())
                for p, r in zip(preds, refs)
            ),
            lambda: sum(assay.bleu(preds, refs)),
            lambda: sum(assay.bleu(p, r) for p, r in zip(preds, refs)),
        ),
        (
            "sacreBLEU sentence BLEU",
            lambda: sum(
                sacrebleu.sentence_bleu(p, r).score for p, r in zip(preds, refs)
            ),
            lambda: sum(s.score for s in assay.sacrebleu(preds, refs)),
            lambda: sum(assay.sacrebleu(p, r).score for p, r in zip(preds, refs)),
        ),
        (
            "sacreBLEU sentence chrF",
            lambda: sum(
                sacrebleu.sentence_chrf(p, r).score for p, r in zip(preds, refs)
            ),
            lambda: sum(assay.chrf(preds, refs)),
            lambda: sum(assay.chrf(p, r) for p, r in zip(preds, refs)),
        ),
    ]
    print(
        f"{PAIRS} pairs (the parity set cycled), one thread, best of 3; Python {sys.version.split()[0]}"
    )
    print()
    print(
        "| scorer | reference pairs/s | assay list pairs/s | ratio | assay per-pair pairs/s | ratio | sums agree |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, reference, listed, per_pair in cases:
        t_ref, s_ref = best(reference, repeat=1)
        t_list, s_list = best(listed)
        t_pair, s_pair = best(per_pair)
        agree = (
            abs(s_ref - s_list) <= 1e-9 * PAIRS and abs(s_ref - s_pair) <= 1e-9 * PAIRS
        )
        print(
            f"| {name} | {PAIRS / t_ref:,.0f} | {PAIRS / t_list:,.0f} | {t_ref / t_list:,.0f}x "
            f"| {PAIRS / t_pair:,.0f} | {t_ref / t_pair:,.0f}x | {'yes' if agree else 'NO'} |"
        )


if __name__ == "__main__":
    main()
