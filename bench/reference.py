"""Time the Python reference implementations of the lexical metrics.

Usage: reference.py [--pairs N] [--sample K] [--procs P] [--metrics a,b,...]

The workload is the parity set (crates/assay-text/tests/data/parity/public.jsonl)
repeated cyclically to N pairs (default 20000), the same set the Rust benchmark
scores. Python is slow, so only a sample of K pairs (default 2000) is timed:
every (N // K)-th pair of the replicated set, which keeps the mix of short,
long and multi-reference pairs of the whole set. Throughput is reported in
pairs per second for that sample, single process ("1") and with a
multiprocessing.Pool of P workers (default os.cpu_count()). The pool is
started and warmed before the clock starts; work is sent in chunks. The
single-process mode also reports pairs per CPU second (time.process_time),
which other load on the machine barely affects.

Metrics (keys shared with the Rust benchmark):
  rouge           rouge-score RougeScorer([rouge1, rouge2, rougeL, rougeLsum],
                  use_stemmer=False).score_multi(references, prediction)
  rouge_stem      the same with use_stemmer=True
  nltk_bleu       nltk sentence_bleu on str.split() tokens, default weights,
                  no smoothing (its zero-count warnings are silenced)
  sacrebleu_bleu  sacrebleu.sentence_bleu(prediction, references)
  chrf            sacrebleu.sentence_chrf(prediction, references)

Each metric's "checksum" is the sum of its per-pair scores over the sample
(F-measures for ROUGE), so the Rust side can show that both computed the same.

Prints one JSON object on stdout.
"""

import argparse
import json
import multiprocessing
import os
import pathlib
import platform
import sys
import time
import warnings
from importlib import metadata

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "crates" / "assay-text" / "tests" / "data" / "parity" / "public.jsonl"
ROUGE_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
METRICS = ["rouge", "rouge_stem", "nltk_bleu", "sacrebleu_bleu", "chrf"]


def load_pairs(path):
    pairs = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            pairs.append((row["prediction"], row["references"]))
    return pairs


def replicate(pairs, n):
    return [pairs[i % len(pairs)] for i in range(n)]


def sample_indices(n, k):
    """Every (n // k)-th index, k of them (the Rust benchmark uses the same rule)."""
    stride = max(1, n // max(1, k))
    return list(range(0, n, stride))[:k]


def make_scorer(metric):
    """Returns a function (prediction, references) -> float for one metric."""
    if metric in ("rouge", "rouge_stem"):
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(ROUGE_TYPES, use_stemmer=metric == "rouge_stem")

        def score(prediction, references):
            scores = scorer.score_multi(references, prediction)
            return sum(scores[t].fmeasure for t in ROUGE_TYPES)

        return score
    if metric == "nltk_bleu":
        from nltk.translate.bleu_score import sentence_bleu

        # Without smoothing nltk warns on every pair with a zero n-gram order.
        warnings.filterwarnings("ignore")

        def score(prediction, references):
            return float(sentence_bleu([r.split() for r in references], prediction.split()))

        return score
    if metric == "sacrebleu_bleu":
        import sacrebleu

        def score(prediction, references):
            return sacrebleu.sentence_bleu(prediction, references).score

        return score
    if metric == "chrf":
        import sacrebleu

        def score(prediction, references):
            return sacrebleu.sentence_chrf(prediction, references).score

        return score
    raise ValueError(f"unknown metric {metric!r}")


_worker_scorer = None


def _init_worker(metric):
    global _worker_scorer
    _worker_scorer = make_scorer(metric)


def _score_chunk(chunk):
    return sum(_worker_scorer(prediction, references) for prediction, references in chunk)


def _noop(_):
    return os.getpid()


def time_single(metric, work):
    """Returns (wall seconds, CPU seconds of this process, checksum)."""
    score = make_scorer(metric)
    cpu_start = time.process_time()
    start = time.perf_counter()
    checksum = 0.0
    for prediction, references in work:
        checksum += score(prediction, references)
    return time.perf_counter() - start, time.process_time() - cpu_start, checksum


def time_pool(metric, work, procs):
    # Several chunks per worker so uneven pair lengths even out.
    chunk_len = max(1, len(work) // (procs * 8))
    chunks = [work[i : i + chunk_len] for i in range(0, len(work), chunk_len)]
    with multiprocessing.Pool(procs, initializer=_init_worker, initargs=(metric,)) as pool:
        pool.map(_noop, range(procs * 4), chunksize=1)
        start = time.perf_counter()
        checksum = sum(pool.map(_score_chunk, chunks, chunksize=1))
        elapsed = time.perf_counter() - start
    return elapsed, checksum


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20000, help="size of the replicated set")
    parser.add_argument("--sample", type=int, default=2000, help="pairs actually timed")
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--metrics", default=",".join(METRICS))
    parser.add_argument("--data", default=str(DATA))
    args = parser.parse_args()
    metrics = [m for m in args.metrics.split(",") if m]
    for metric in metrics:
        if metric not in METRICS:
            parser.error(f"unknown metric {metric!r}; choose from {METRICS}")

    replicated = replicate(load_pairs(args.data), args.pairs)
    indices = sample_indices(args.pairs, args.sample)
    work = [replicated[i] for i in indices]

    results = {}
    for metric in metrics:
        modes = {}
        for mode, procs in (("1", 1), ("N", args.procs)):
            entry = {"threads": procs, "pairs": len(work)}
            if procs == 1:
                elapsed, cpu, checksum = time_single(metric, work)
                entry["cpu_seconds"] = cpu
                entry["pairs_per_cpu_s"] = len(work) / cpu
            else:
                elapsed, checksum = time_pool(metric, work, procs)
            entry.update(seconds=elapsed, pairs_per_s=len(work) / elapsed, checksum=checksum)
            modes[mode] = entry
            print(f"reference.py: {metric} x{procs}: {len(work) / elapsed:.0f} pairs/s", file=sys.stderr)
        results[metric] = modes

    out = {
        "tool": "python-reference",
        "python": platform.python_version(),
        "versions": {p: metadata.version(p) for p in ("rouge-score", "nltk", "sacrebleu")},
        "data": os.path.relpath(args.data, ROOT),
        "pairs_replicated": args.pairs,
        "pairs_timed": len(work),
        "sampling": f"every {max(1, args.pairs // max(1, args.sample))}th pair of the replicated set",
        "cpu_count": os.cpu_count(),
        "results": results,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
