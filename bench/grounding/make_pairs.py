"""The fixed workload of the grounding benchmark: 64 (window, claim) pairs
of realistic lengths, written as JSON lines `{"window": ..., "claim": ...}`.

Made from the SummEval sample that the repository already carries
(data/calibration/meta/summeval_sample.jsonl: CNN/DailyMail articles and
their reference summaries; see data/calibration/LICENSES.md), so nothing
new is committed: the first 16 articles, each cut to a window of whole
sentences of 100 to 300 tokens (the target varies from one article to the
next), and for each window 4 claims of 10 to 30 tokens, sentences of the
article's reference summary and, where these run short, of the
summarisers' outputs. That is 16 windows x 4 claims: each claim is read
against its window, as Classifier::verify reads every claim against every
window.

Tokens are counted with the benchmark models' tokenizer.json (WordPiece,
no special tokens). Deterministic: the same files give the same workload.

    python bench/grounding/make_pairs.py TOKENIZER_JSON OUT_JSONL
"""

import json
import re
import sys
from pathlib import Path

from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "data/calibration/meta/summeval_sample.jsonl"
WINDOWS = 16
CLAIMS = 4
WINDOW_TOKENS = (100, 300)
CLAIM_TOKENS = (10, 30)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tokenizer = Tokenizer.from_file(sys.argv[1])
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    docs: dict[str, dict] = {}
    for line in SOURCE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        doc = docs.setdefault(
            row["meta"]["doc_id"],
            {"article": row["retrieved_contexts"][0], "reference": row["reference"], "responses": []},
        )
        doc["responses"].append(row["response"])

    out = []
    for doc in docs.values():
        if len(out) == WINDOWS * CLAIMS:
            break
        # Targets 100, 237, 174, 111, ... tokens: spread over the range.
        target = WINDOW_TOKENS[0] + (len(out) // CLAIMS * 137) % (WINDOW_TOKENS[1] - WINDOW_TOKENS[0] + 1)
        window, used = [], 0
        for sentence in sentences(doc["article"]):
            n = count(sentence)
            if used + n > target and used >= WINDOW_TOKENS[0]:
                break
            if used + n > WINDOW_TOKENS[1]:
                break
            window.append(sentence)
            used += n
        text = " ".join(window)
        if not WINDOW_TOKENS[0] <= count(text) <= WINDOW_TOKENS[1]:
            continue
        claims: list[str] = []
        for source in [doc["reference"], *doc["responses"]]:
            for sentence in sentences(source):
                if sentence not in claims and CLAIM_TOKENS[0] <= count(sentence) <= CLAIM_TOKENS[1]:
                    claims.append(sentence)
        if len(claims) < CLAIMS:
            continue
        out.extend({"window": text, "claim": claim} for claim in claims[:CLAIMS])

    if len(out) != WINDOWS * CLAIMS:
        sys.exit(f"only {len(out)} pairs could be made from {SOURCE}")
    Path(sys.argv[2]).write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in out), encoding="utf-8")
    w = [count(p["window"]) for p in out[::CLAIMS]]
    c = [count(p["claim"]) for p in out]
    print(
        f"{sys.argv[2]}: {len(out)} pairs; windows {min(w)}-{max(w)} tokens (mean {sum(w) / len(w):.0f}), "
        f"claims {min(c)}-{max(c)} (mean {sum(c) / len(c):.0f})",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
