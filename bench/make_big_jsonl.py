"""Write N JSONL rows {"id", "response", "reference"} built from the parity set.

Usage: make_big_jsonl.py N OUT   (stdlib only)

Rows cycle through crates/assay-text/tests/data/parity/public.jsonl, taking
each pair's prediction as "response" and its first reference as "reference";
ids are "big-<row number>", so every row is distinct. Meant for checking that
the CLI's memory stays flat on a large input (e.g. N = 1000000, about 360 MB).
Writes in a streaming fashion, so the script's own memory stays small.
"""

import json
import pathlib
import sys

DATA = (
    pathlib.Path(__file__).resolve().parent.parent
    / "crates" / "assay-text" / "tests" / "data" / "parity" / "public.jsonl"
)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    try:
        n = int(sys.argv[1])
    except ValueError:
        sys.exit(f"N must be an integer, got {sys.argv[1]!r}")
    if n < 0:
        sys.exit("N must be non-negative")

    base = []
    with open(DATA, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            base.append((row["prediction"], row["references"][0] if row["references"] else ""))

    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for i in range(n):
            response, reference = base[i % len(base)]
            out.write(json.dumps({"id": f"big-{i:07d}", "response": response, "reference": reference}))
            out.write("\n")


if __name__ == "__main__":
    main()
