"""Writes rouge_tokenizer_expected.json: rouge-score 0.1.2's
`RougeScorer(types, tokenizer=T)` on pairs in Chinese, Japanese, Arabic,
Russian, Hindi and English, for each tokenizer object T defined here, so
that python/tests/test_lexical.py can check `assay.RougeScorer` with the
same objects where rouge-score is not installed.

Regenerate from the repository root with the bench venv (rouge-score 0.1.2):

    bench/.venv/bin/python python/tests/data/gen_rouge_tokenizer_expected.py

The pairs are those of crates/assay-text/tests/data/parity/tokenize_parity.json
(written by gen_tokenize_parity.py beside it), copied into the output so the
test reads one file. Per pair, per tokenizer, per set of types (every set
for `chars` and `space_only`, the default set for the others):
`score_multi(references, prediction)` as [precision, recall, fmeasure] per
type, and for the default set `score(references[0], prediction)` too. The test imports the tokenizers
from this module; it does not import rouge_score.
"""

import json
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PAIRS = ROOT / "crates/assay-text/tests/data/parity/tokenize_parity.json"
OUT = HERE / "rouge_tokenizer_expected.json"

TYPE_SETS = {
    "default": ["rouge1", "rouge2", "rougeL", "rougeLsum"],
    "lsum_only": ["rougeLsum"],
    "higher": ["rouge3", "rougeL"],
}


class Chars:
    """Every character but white space."""

    def tokenize(self, text):
        return [c for c in text if not c.isspace()]


class Split:
    """`str.split()`."""

    def tokenize(self, text):
        return text.split()


class SpaceOnly:
    """`str.split(" ")`: a line break stays inside a token and two spaces
    make an empty token, so the whole text's tokens are not its lines'."""

    def tokenize(self, text):
        return text.split(" ")


class Words:
    """Lowercased `re` word runs (any script)."""

    def tokenize(self, text):
        return re.findall(r"\w+", text.lower())


class CjkChars:
    """Each Chinese character and kana alone, other word runs whole."""

    CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"

    def tokenize(self, text):
        return re.findall(rf"[{self.CJK}]|[^\W{self.CJK}]+", text.lower())


class JoinedString:
    """Returns a str, not a list: rouge-score then treats its characters as
    the tokens."""

    def tokenize(self, text):
        return "".join(text.split())


class WordLengths:
    """Integers as tokens."""

    def tokenize(self, text):
        return [len(w) for w in text.split()]


class Falsy(Chars):
    """A false tokenizer: rouge-score's `if tokenizer:` then uses its
    default one."""

    def __bool__(self):
        return False


TOKENIZERS = {
    "chars": Chars(),
    "split": Split(),
    "space_only": SpaceOnly(),
    "words": Words(),
    "cjk_chars": CjkChars(),
    "joined_string": JoinedString(),
    "word_lengths": WordLengths(),
    "falsy": Falsy(),
}


def main():
    from rouge_score import rouge_scorer

    pairs = [
        {"id": p["id"], "prediction": p["prediction"], "references": p["references"]}
        for p in json.loads(PAIRS.read_text())["pairs"]
    ]
    expected = {}
    for name, tokenizer in TOKENIZERS.items():
        per_types = {}
        for types_name, types in TYPE_SETS.items():
            if types_name != "default" and name not in ("chars", "space_only"):
                continue
            scorer = rouge_scorer.RougeScorer(types, tokenizer=tokenizer)
            rows = []
            for p in pairs:
                multi = scorer.score_multi(p["references"], p["prediction"])
                row = {"multi": {t: list(multi[t]) for t in types}}
                if types_name == "default":
                    one = scorer.score(p["references"][0], p["prediction"])
                    row["first"] = {t: list(one[t]) for t in types}
                rows.append(row)
            per_types[types_name] = rows
        expected[name] = per_types
    out = {
        "schema": "assay-rouge-tokenizer-expected/1",
        "reference": "rouge-score 0.1.2",
        "type_sets": TYPE_SETS,
        "pairs": pairs,
        "expected": expected,
    }
    OUT.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
