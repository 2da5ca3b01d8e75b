"""Pairs for training all-MiniLM-L6-v2 as a (window, claim) cross-encoder.

Runs here, on CPU, before the one GPU run (train.py): it reads
../shared/data/train, cuts each context into windows the way assay's
classifier does (whole sentences packed to the token budget left beside the
claim, one sentence of overlap) and keeps, per row, the window that shares
the most content words with the response -- the window a supported claim
would be scored best against. It writes a compact, compressed JSONL and an
fp16 copy of the base model, small enough to travel to the GPU machine.

    python prepare.py ../../../../shared/data/train OUT_DIR MODEL_DIR

Labels: supported = not `labels.hallucinated`; SNLI entailment is
supported, neutral and contradiction are not; BEGIN's "Generic" responses
make no claim and are left out. Each pair keeps a group key (the hash of its
context; WiCE sub-claims share their claim's article) so that train.py
splits by document.
"""

import hashlib
import json
import lzma
import re
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer

MAX_LEN = 512
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"\w+")
STOP = set(
    "a an the of in on at to for and or but is are was were be been being by with as "
    "that this it its from has have had he she they we you i his her their our not no "
    "will would can could do does did so than then there which who what when where".split()
)


def content_words(text):
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


def sentences(text):
    out = []
    for para in text.split("\n"):
        out.extend(s.strip() for s in SENTENCE_END.split(para) if s.strip())
    return out


def windows(context, budget, count):
    pieces = []
    for s in sentences(context):
        n = count(s)
        if n <= budget:
            pieces.append((s, n))
        else:
            words, cur = s.split(), []
            for w in words:
                if cur and count(" ".join(cur + [w])) > budget:
                    pieces.append((" ".join(cur), count(" ".join(cur))))
                    cur = []
                cur.append(w)
            if cur:
                pieces.append((" ".join(cur), count(" ".join(cur))))
    out, current, used = [], [], 0
    for piece in pieces:
        if current and used + piece[1] > budget:
            out.append(" ".join(p[0] for p in current))
            last = current[-1]
            current, used = [], 0
            if last[1] + piece[1] <= budget:
                current, used = [last], last[1]
        used += piece[1]
        current.append(piece)
    if current:
        out.append(" ".join(p[0] for p in current))
    return out


def label(row):
    labels = row["labels"]
    if row["source"] == "SNLI":
        return labels["nli_label"] == "entailment"
    if labels.get("begin_label") == "Generic":
        return None
    return not labels["hallucinated"]


def group(row):
    if row["source"] == "WiCE":
        return "wice:" + row["id"].split("-")[2].split("_")[0]
    context = "\n".join(row["retrieved_contexts"])
    return hashlib.sha256(context.encode()).hexdigest()[:16]


def main(train_dir, out_dir, model_dir):
    out_dir = Path(out_dir)
    (out_dir / "model").mkdir(parents=True, exist_ok=True)
    tok = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    cache = {}

    def count(text):
        if text not in cache:
            cache[text] = len(tok.encode(text, add_special_tokens=False).ids)
        return cache[text]

    pairs, kept, dropped = [], {}, {}
    for path in sorted(Path(train_dir).glob("*.jsonl")):
        for line in path.open():
            row = json.loads(line)
            y = label(row)
            if (
                y is None
                or not row.get("retrieved_contexts")
                or not row["response"].strip()
            ):
                dropped[row["source"]] = dropped.get(row["source"], 0) + 1
                continue
            claim = row["response"].strip()
            claim_tokens = len(tok.encode(claim, add_special_tokens=False).ids)
            budget = max(MAX_LEN - claim_tokens - 3, MAX_LEN // 4)
            context = "\n".join(row["retrieved_contexts"])
            wins = windows(context, budget, count) or [context]
            words = content_words(claim)
            best = max(wins, key=lambda w: len(words & content_words(w)))
            pairs.append(
                {
                    "w": best,
                    "c": claim,
                    "y": int(y),
                    "g": group(row),
                    "s": row["source"],
                }
            )
            kept[row["source"]] = kept.get(row["source"], 0) + 1
    with lzma.open(out_dir / "pairs.jsonl.xz", "wt", preset=9) as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    weights = load_file(str(Path(model_dir) / "model.safetensors"))
    save_file(
        {k: v.to(torch.float16).contiguous() for k, v in weights.items()},
        str(out_dir / "model" / "model.safetensors"),
    )
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(Path(model_dir) / name, out_dir / "model" / name)
    print(json.dumps({"pairs": len(pairs), "kept": kept, "dropped": dropped}))


if __name__ == "__main__":
    main(*sys.argv[1:])
