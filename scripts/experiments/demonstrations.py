"""Demonstrations for an LLM judge, measured: faithfulness by a local judge
with and without an alignment's demonstrations, on RAGTruth rows held out
by source document.

For each of the five folds `assay align` uses (the first byte of the
SHA-256 of "alignment\\n" + the row's source id, mod 5), the rows of the
other folds (every task) **train**: `assay align --data` makes an
alignment file whose demonstrations are their labelled sentences. The
fold's rows of one task are **tested**: `assay eval -m faithfulness` with
the judge, once without the alignment and once with it. Nothing is
**chosen** on the tested rows (the judge, the protocol and the number of
demonstrations are fixed beforehand). The figure is the ROC-AUC of the
rows' scores for faithful rows, pooled over the folds, beside the
word-count baseline on the same rows.

Run from the repository root, after `cargo build --release -p assay` and
`scripts/fetch-models.sh --with qwen2.5-coder-1.5b`:

    python3 scripts/experiments/demonstrations.py --task QA --rows 30

It prints one line per condition and writes its runs under
`/tmp/demonstrations`. Standard library only.
"""

import argparse
import hashlib
import json
import pathlib
import re
import subprocess
import sys

FOLDS = 5
DATA = pathlib.Path("data/calibration/meta/ragtruth_sample.jsonl")
STOP = set(
    "a an the and or but of to in on at for with by from as is are was were be been it its this that "
    "these those he she they them his her their we you i not no do does did has have had".split()
)


def fold(row):
    group = json.dumps(row["meta"]["source_id"])
    return hashlib.sha256(f"alignment\n{group}".encode()).digest()[0] % FOLDS


def roc_auc(scores, positive):
    pairs = [(s, p) for s, p in zip(scores, positive)]
    pos = [s for s, p in pairs if p]
    neg = [s for s, p in pairs if not p]
    if not pos or not neg:
        return float("nan")
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def words(text):
    return [w for w in re.findall(r"\w+", text.lower()) if w not in STOP]


def novelty(row):
    known = set(w for t in [row.get("user_input", "")] + row["retrieved_contexts"] for w in words(t))
    content = words(row["response"])
    return sum(w not in known for w in content) / len(content) if content else 0.0


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default="QA")
    ap.add_argument("--rows", type=int, default=30, help="tested rows at most, spread over the folds")
    ap.add_argument("--judge", default="local:qwen2.5-coder-1.5b")
    ap.add_argument("--protocol", default="per-item")
    ap.add_argument("--assay", default="target/release/assay")
    ap.add_argument("--work", default="/tmp/demonstrations")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    # A fixed order that does not follow the file's: by SHA-256 of the id.
    tested = sorted(
        (r for r in rows if r["meta"]["ragtruth_task"] == args.task),
        key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest(),
    )[: args.rows]
    # The score as written, and the soft one (the mean P(yes) of the
    # statements), which ranks rows that the same share of "yes" ties.
    scores = {"without": {}, "with": {}}
    soft = {"without": {}, "with": {}}
    for k in range(FOLDS):
        test = [r for r in tested if fold(r) == k]
        if not test:
            continue
        train = [r for r in rows if fold(r) != k]
        write(work / f"train{k}.jsonl", train)
        write(work / f"test{k}.jsonl", test)
        alignment = work / f"aligned{k}.json"
        subprocess.run(
            [args.assay, "align", "--data", str(work / f"train{k}.jsonl"), "--out", str(alignment)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        for condition, extra in [("without", []), ("with", ["--alignment", str(alignment)])]:
            out = work / f"run-{condition}-{k}"
            subprocess.run(
                ["nice", args.assay, "eval", str(work / f"test{k}.jsonl"), "-m", "faithfulness"]
                + ["--judge", args.judge, "--protocol", args.protocol, "--out", str(out)]
                + ["--cache", str(work / "cache.sqlite")]
                + extra,
                check=False,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for line in (out / "results.jsonl").read_text().splitlines():
                r = json.loads(line)
                if r.get("status") == "scored":
                    scores[condition][r["sample_id"]] = r["value"]
                    p = [s["yes_probability"] for s in r["details"]["statements"]]
                    soft[condition][r["sample_id"]] = sum(p) / len(p) if p else 1.0
        print(f"fold {k}: {len(test)} rows tested, {len(train)} rows trained", file=sys.stderr)
    faithful = {r["id"]: not r["labels"]["hallucinated"] for r in tested}
    print(f"RAGTruth {args.task}, {len(tested)} rows held out by source document, judge {args.judge} ({args.protocol})")
    for condition, by_id in scores.items():
        ids = sorted(by_id)
        auc = roc_auc([by_id[i] for i in ids], [faithful[i] for i in ids])
        auc_soft = roc_auc([soft[condition][i] for i in ids], [faithful[i] for i in ids])
        print(
            f"  {condition} demonstrations: ROC-AUC {auc:.3f} (score), {auc_soft:.3f} (mean P(yes))"
            f" on {len(ids)} scored rows"
        )
    ids = sorted(faithful)
    nov = {r["id"]: -novelty(r) for r in tested}
    print(f"  word-count baseline: ROC-AUC {roc_auc([nov[i] for i in ids], [faithful[i] for i in ids]):.3f}")


if __name__ == "__main__":
    main()
