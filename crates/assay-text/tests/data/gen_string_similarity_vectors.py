"""Generate string_similarity_vectors.json: ragas string metrics via rapidfuzz.

Usage (from this directory, in a venv with `pip install rapidfuzz==3.14.6`):

    python gen_string_similarity_vectors.py > string_similarity_vectors.json

Each case holds `reference`, `response` and the values ragas computes:
`exact_match` (reference == response), `string_presence` (reference in
response) and, per distance measure, `1 - normalized_distance(reference,
response)` with rapidfuzz's default arguments (Hamming pads by default).
Cases: the first 200 pairs of parity/public.jsonl (first reference vs
prediction), hand-written edge cases, and seeded random strings that cross
the 64-character word boundaries of the bit-parallel algorithms.
"""

import json
import pathlib
import random
import sys

import rapidfuzz
from rapidfuzz.distance import Hamming, Jaro, JaroWinkler, Levenshtein

HERE = pathlib.Path(__file__).resolve().parent
MEASURES = {
    "levenshtein": Levenshtein,
    "hamming": Hamming,
    "jaro": Jaro,
    "jaro_winkler": JaroWinkler,
}

EDGE_CASES = [
    ("", ""),
    ("", "a"),
    ("a", ""),
    ("a", "a"),
    ("a", "b"),
    ("ab", "ba"),
    ("abc", "abd"),
    ("ab", "abcd"),
    ("abcd", "ab"),
    ("MARTHA", "MARHTA"),
    ("DWAYNE", "DUANE"),
    ("DIXON", "DICKSONX"),
    ("CRATE", "TRACE"),
    ("JELLYFISH", "SMELLYFISH"),
    ("abcdefgh", "badcfehg"),
    ("kitten", "sitting"),
    ("The Eiffel Tower is located in Paris.", "The Eiffel Tower is located in India."),
    ("Paris", "The capital of France is Paris."),
    ("paris", "The capital of France is Paris."),
    ("same text", "same text"),
    ("caf\u00e9", "cafe\u0301"),
    ("f\u00fcr", "fu\u0308r"),
    ("\u6771\u4eac\u30bf\u30ef\u30fc", "\u6771\u4eac\u30bf\u30ef\u30fc\u306f\u9ad8\u3044"),
    ("\U0001f642 smile", "smile \U0001f642"),
    ("\u0410\u0411\u0412\u0413", "\u0410\u0412\u0411\u0413"),
    ("x", "y" * 300 + "x"),
    ("x" * 300, "x"),
    ("a" * 64, "a" * 63 + "b"),
    ("a" * 65, "b" + "a" * 64),
    ("ab" * 70, "ba" * 70),
    (" leading and trailing ", "leading and trailing"),
    ("line one\nline two", "line one line two"),
    ("tab\tseparated", "tab separated"),
]


def random_cases(rng):
    alphabets = ["ab", "abcde", "abcdefghijklmnopqrstuvwxyz ", "x\u00e9\u5b57\U0001f642y"]
    cases = []
    for i in range(160):
        alphabet = alphabets[i % len(alphabets)]
        length = rng.choice([1, 2, 3, 7, 31, 63, 64, 65, 100, 127, 128, 129, 200, 400])
        a = "".join(rng.choice(alphabet) for _ in range(length))
        kind = i % 3
        if kind == 0:
            # independent strings of a similar size
            b = "".join(rng.choice(alphabet) for _ in range(max(0, length + rng.randint(-5, 5))))
        elif kind == 1:
            # a few edits: substitutions, insertions, deletions, swaps
            b = list(a)
            for _ in range(rng.randint(1, 6)):
                op = rng.randrange(4)
                pos = rng.randrange(len(b) + 1)
                if op == 0 and pos < len(b):
                    b[pos] = rng.choice(alphabet)
                elif op == 1:
                    b.insert(pos, rng.choice(alphabet))
                elif op == 2 and pos < len(b):
                    del b[pos]
                elif op == 3 and pos + 1 < len(b):
                    b[pos], b[pos + 1] = b[pos + 1], b[pos]
            b = "".join(b)
        else:
            # very different lengths
            b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))
            if rng.random() < 0.5:
                a, b = b, a
        cases.append((a, b))
    return cases


def parity_cases(limit):
    cases = []
    with open(HERE / "parity" / "public.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["references"]:
                cases.append((row["id"], row["references"][0], row["prediction"]))
            if len(cases) == limit:
                break
    return cases


def case(source, reference, response):
    out = {
        "source": source,
        "reference": reference,
        "response": response,
        "exact_match": reference == response,
        "string_presence": reference in response,
    }
    for name, measure in MEASURES.items():
        out[name] = 1.0 - measure.normalized_distance(reference, response)
    return out


def main():
    rng = random.Random(20261121)
    cases = [case("edge", a, b) for a, b in EDGE_CASES]
    cases += [case("random", a, b) for a, b in random_cases(rng)]
    cases += [case(pid, ref, pred) for pid, ref, pred in parity_cases(200)]
    doc = {
        "generator": "crates/assay-text/tests/data/gen_string_similarity_vectors.py",
        "rapidfuzz_version": rapidfuzz.__version__,
        "python_version": sys.version.split()[0],
        "semantics": "ragas string metrics: value = 1 - rapidfuzz.distance.<Measure>.normalized_distance(reference, response), default arguments",
        "cases": cases,
    }
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
