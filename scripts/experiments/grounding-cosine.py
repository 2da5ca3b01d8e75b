"""Does the embedder's cosine add to the grounding model's lexical features?
An experiment, not part of assay: its figures are in docs/calibration.md
("The semantic lever, measured").

Reads the claims that `crates/assay-local/examples/grounding-cosine.rs`
writes (the training claims and the calibration rows' response sentences,
each with the grounding model's lexical features and two MiniLM cosines)
and fits the grounding model's logistic regression (standardised
features, L2 penalty 1 on the weights, as `assay_grounding::fit`) on the
training claims only, with and without the cosines. Reports the
out-of-fold claim-level ROC-AUC on the training folds (by source
document, as the committed model's provenance), and on the calibration
rows (tested only, never fitted on): RAGTruth's response ROC-AUC of
hallucinated against the mean P(supported) of its sentences, per task;
SummEval's Spearman with the experts' consistency; HaluEval QA's paired
accuracy; and, on the same rows, the trivial baselines (the response's
length in characters, and the share of its content words its sources
lack), each in the direction that does better on the whole set. The
first variant's features are the committed model's, so its figures
should match docs/calibration.md's.

    python3 grounding-cosine.py CLAIMS.jsonl

Needs numpy and scipy.
"""

import json
import sys
from collections import defaultdict

import numpy as np
from scipy.stats import rankdata, spearmanr

CLAIMS = sys.argv[1]


def fit(x, y, l2=1.0, iterations=100):
    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-z @ beta))
        grad = z.T @ (y - p) - penalty * beta
        hess = -(z.T * (p * (1 - p))) @ z - np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return lambda xs: 1 / (
        1 + np.exp(-(np.hstack([(xs - mean) / scale, np.ones((len(xs), 1))]) @ beta))
    )


def auc(scores, labels):
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    r = rankdata(scores)
    pos, neg = labels.sum(), (~labels).sum()
    return (r[labels].sum() - pos * (pos + 1) / 2) / (pos * neg)


def figures(score, meta):
    """Per set, its figures for a score per row (high: supported)."""
    rt = [k for k in score if k[0] == "ragtruth"]
    ragtruth = {}
    for task in [None, "QA", "Summary", "Data2txt"]:
        keys = [k for k in rt if task is None or meta[k]["task"] == task]
        ragtruth[task or "all"] = round(
            auc(
                [-score[k] for k in keys],
                [meta[k]["labels"]["hallucinated"] for k in keys],
            ),
            3,
        )
    se = [k for k in score if k[0] == "summeval"]
    summeval = spearmanr(
        [score[k] for k in se], [meta[k]["labels"]["expert_consistency"] for k in se]
    )[0]
    hq = defaultdict(dict)
    for k in score:
        if k[0] == "halueval-qa":
            hq[meta[k]["question"]][meta[k]["labels"]["hallucinated"]] = score[k]
    pairs = [v for v in hq.values() if len(v) == 2]
    paired = np.mean(
        [
            1.0 if v[False] > v[True] else 0.5 if v[False] == v[True] else 0.0
            for v in pairs
        ]
    )
    return {
        "ragtruth": ragtruth,
        "summeval spearman": round(float(summeval), 3),
        "halueval paired": round(float(paired), 3),
    }


rows = [json.loads(line) for line in open(CLAIMS)]
train = [r for r in rows if r["set"] == "train"]
tests = [r for r in rows if r["set"] != "train"]
meta = {(r["set"], r["id"]): r for r in tests}

# The trivial baselines on the same rows, each in the direction that does
# better on the whole of a set (as `assay calibrate` chooses it).
for baseline in ["novelty", "length"]:
    up = figures({k: m[baseline] for k, m in meta.items()}, meta)
    down = figures({k: -m[baseline] for k, m in meta.items()}, meta)
    best = {
        "ragtruth": max(up["ragtruth"], down["ragtruth"], key=lambda f: f["all"]),
        "summeval spearman": max(up["summeval spearman"], down["summeval spearman"]),
        "halueval paired": max(up["halueval paired"], down["halueval paired"]),
    }
    print(f"baseline: {baseline}", json.dumps(best), flush=True)

VARIANTS = {
    "lexical (the committed model's features)": lambda r: r["features"],
    "lexical + cos_max": lambda r: r["features"] + [r["cos_max"]],
    "lexical + cos_max + cos_lexical": lambda r: r["features"]
    + [
        r["cos_max"],
        r["cos_lexical"] if r["cos_lexical"] is not None else r["cos_max"],
    ],
    "cos_max alone": lambda r: [r["cos_max"]],
}
y = np.array([r["supported"] for r in train], float)
folds = np.array([r["fold"] for r in train])
for name, of in VARIANTS.items():
    x = np.array([of(r) for r in train], float)
    oof = np.zeros(len(train))
    for k in range(5):
        held = folds == k
        oof[held] = fit(x[~held], y[~held])(x[held])
    per_fold = [round(auc(oof[folds == k], y[folds == k]), 3) for k in range(5)]
    p = fit(x, y)(np.array([of(r) for r in tests], float))
    by_row = defaultdict(list)
    for r, pi in zip(tests, p):
        by_row[(r["set"], r["id"])].append(pi)
    score = {k: float(np.mean(v)) for k, v in by_row.items()}
    out = {"train folds": per_fold, **figures(score, meta)}
    print(name, json.dumps(out), flush=True)
