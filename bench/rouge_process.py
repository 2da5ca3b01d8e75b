"""rouge-score 0.1.2 over a JSONL file as a user's script does it, the
whole process timed by rouge_process.sh: read each row's response and
reference, score rouge1, rouge2, rougeL and rougeLsum (score_multi, no
stemmer, as `assay eval -m rouge` by default), write one JSON line of F
values per row.

    python rouge_process.py IN.jsonl OUT.jsonl
"""

import json
import sys

from rouge_score import rouge_scorer


def main(src, dst):
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    with open(src) as rows, open(dst, "w") as out:
        for line in rows:
            row = json.loads(line)
            scores = scorer.score_multi([row["reference"]], row["response"])
            out.write(
                json.dumps(
                    {"id": row["id"], **{k: v.fmeasure for k, v in scores.items()}}
                )
                + "\n"
            )


if __name__ == "__main__":
    main(*sys.argv[1:])
