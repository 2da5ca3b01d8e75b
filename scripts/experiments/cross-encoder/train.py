"""The one GPU run: all-MiniLM-L6-v2 fine-tuned as a (window, claim)
cross-encoder on the pairs prepare.py made, then measured.

    python train.py PREPARED_DIR REPO_DIR OUT_DIR

Rows: a tenth of the documents (by a hash of the group key) chose the epoch
("chose"); the rest trained; data/calibration (RAGTruth, HaluEval QA,
SummEval) tested and chose nothing. The test follows assay's recipe: each
response sentence is a claim, the contexts are cut into windows that fit
beside it, a claim's support is its best window, a response's the minimum
or the mean over its claims. The figures printed here are a preview; the
ones reported come from `assay calibrate --grounding` on the weights.
"""

import hashlib
import json
import lzma
import math
import random
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer
from transformers import AutoModelForSequenceClassification

sys.path.insert(0, str(Path(__file__).parent))
from prepare import MAX_LEN, sentences, windows  # noqa: E402

SEED = 20261127
EPOCHS = 5
BATCH = 32
LR = 5e-5


def auc(scores, labels):
    """ROC-AUC by ranks (ties share their mean rank)."""
    r = ranks(scores)
    pos = sum(labels)
    neg = len(labels) - pos
    if pos == 0 or neg == 0:
        return float("nan")
    return (sum(x for x, y in zip(r, labels) if y) - pos * (pos + 1) / 2) / (pos * neg)


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb)


def chose(group):
    return int(hashlib.sha256(group.encode()).hexdigest(), 16) % 10 == 0


class Scorer:
    def __init__(self, model, tok, device):
        self.model, self.tok, self.device = model, tok, device

    def batches(self, pairs):
        for i in range(0, len(pairs), 128):
            yield pairs[i : i + 128]

    def encode(self, pairs):
        enc = self.tok.encode_batch([(w, c) for w, c in pairs])
        n = max(len(e.ids) for e in enc)
        ids = torch.zeros((len(enc), n), dtype=torch.long)
        types = torch.zeros_like(ids)
        mask = torch.zeros_like(ids)
        for i, e in enumerate(enc):
            ids[i, : len(e.ids)] = torch.tensor(e.ids)
            types[i, : len(e.ids)] = torch.tensor(e.type_ids)
            mask[i, : len(e.ids)] = 1
        return {
            "input_ids": ids.to(self.device),
            "token_type_ids": types.to(self.device),
            "attention_mask": mask.to(self.device),
        }

    @torch.no_grad()
    def support(self, pairs):
        self.model.eval()
        out = []
        for b in self.batches(pairs):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = self.model(**self.encode(b)).logits.float()
            out.extend(torch.softmax(logits, -1)[:, 1].tolist())
        return out


def respond(scorer, rows):
    """Each row's (min, mean) support over its claims, best window each."""
    count_tok = scorer.tok

    def count(t):
        return len(count_tok.encode(t, add_special_tokens=False).ids)

    jobs, spans = [], []
    for row in rows:
        claims = sentences(row["response"]) or [row["response"]]
        longest = max(count(c) for c in claims)
        budget = max(MAX_LEN - longest - 3, MAX_LEN // 4)
        wins = windows("\n".join(row["retrieved_contexts"]), budget, count) or [""]
        start = len(jobs)
        for c in claims:
            jobs.extend((w, c) for w in wins)
        spans.append((start, len(claims), len(wins)))
    p = scorer.support(jobs)
    out = []
    for start, n_claims, n_wins in spans:
        best = [
            max(p[start + k * n_wins : start + (k + 1) * n_wins])
            for k in range(n_claims)
        ]
        out.append((min(best), sum(best) / len(best)))
    return out


def test(scorer, repo):
    cal = Path(repo) / "data" / "calibration" / "meta"
    result = {}
    rt = [json.loads(line) for line in (cal / "ragtruth_sample.jsonl").open()]
    scores = respond(scorer, rt)
    for agg, k in (("min", 0), ("mean", 1)):
        hal = [1 - s[k] for s in scores]
        y = [int(r["labels"]["hallucinated"]) for r in rt]
        per = {}
        for task in ("QA", "Summary", "Data2txt"):
            idx = [i for i, r in enumerate(rt) if r["meta"]["ragtruth_task"] == task]
            per[task] = auc([hal[i] for i in idx], [y[i] for i in idx])
        result[f"ragtruth_{agg}"] = {
            "pooled": auc(hal, y),
            "per_task": per,
            "macro": sum(per.values()) / 3,
        }
    hq = [json.loads(line) for line in (cal / "halueval_qa_sample.jsonl").open()]
    scores = respond(scorer, hq)
    y = [int(r["labels"]["hallucinated"]) for r in hq]
    result["halueval_qa"] = {
        a: auc([1 - s[k] for s in scores], y) for a, k in (("min", 0), ("mean", 1))
    }
    se = [json.loads(line) for line in (cal / "summeval_sample.jsonl").open()]
    scores = respond(scorer, se)
    cons = [r["labels"]["expert_consistency"] for r in se]
    result["summeval_consistency_spearman"] = {
        a: spearman([s[k] for s in scores], cons) for a, k in (("min", 0), ("mean", 1))
    }
    return result


def main(prepared, repo, out):
    t0 = time.time()
    random.seed(SEED)
    torch.manual_seed(SEED)
    prepared, out = Path(prepared), Path(out)
    pairs = [json.loads(line) for line in lzma.open(prepared / "pairs.jsonl.xz", "rt")]
    train = [p for p in pairs if not chose(p["g"])]
    val = [p for p in pairs if chose(p["g"])]
    print(f"pairs {len(pairs)}: trained {len(train)}, chose {len(val)}", flush=True)

    tok = Tokenizer.from_file(str(prepared / "model" / "tokenizer.json"))
    tok.enable_truncation(max_length=MAX_LEN, strategy="only_first")
    tok.no_padding()
    device = "cuda"
    model = AutoModelForSequenceClassification.from_pretrained(
        str(prepared / "model"),
        num_labels=2,
        id2label={0: "unsupported", 1: "supported"},
        label2id={"unsupported": 0, "supported": 1},
        dtype=torch.float32,
    ).to(device)
    scorer = Scorer(model, tok, device)
    steps = EPOCHS * math.ceil(len(train) / BATCH)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    warm = max(1, int(0.06 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm)))
    )
    history, best, best_state = [], -1.0, None
    for epoch in range(EPOCHS):
        model.train()
        random.shuffle(train)
        # Length-sorted within shuffled blocks: less padding, same mix.
        order = []
        for i in range(0, len(train), BATCH * 50):
            block = sorted(
                train[i : i + BATCH * 50], key=lambda p: len(p["w"]) + len(p["c"])
            )
            bs = [block[j : j + BATCH] for j in range(0, len(block), BATCH)]
            random.shuffle(bs)
            order.extend(bs)
        total = 0.0
        for b in order:
            enc = scorer.encode([(p["w"], p["c"]) for p in b])
            y = torch.tensor([p["y"] for p in b], device=device)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(**enc).logits.float()
            loss = torch.nn.functional.cross_entropy(logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            total += loss.item()
        p = scorer.support([(v["w"], v["c"]) for v in val])
        y = [v["y"] for v in val]
        by_source = {
            s: auc(
                [p[i] for i, v in enumerate(val) if v["s"] == s],
                [y[i] for i, v in enumerate(val) if v["s"] == s],
            )
            for s in sorted({v["s"] for v in val})
        }
        non_nli = [i for i, v in enumerate(val) if v["s"] != "SNLI"]
        score = auc([p[i] for i in non_nli], [y[i] for i in non_nli])
        history.append(
            {
                "epoch": epoch + 1,
                "loss": total / len(order),
                "chose_auc_non_nli": score,
                "by_source": by_source,
                "seconds": time.time() - t0,
            }
        )
        print(json.dumps(history[-1]), flush=True)
        if score > best:
            best = score
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    result = {
        "history": history,
        "chosen_epoch": max(history, key=lambda h: h["chose_auc_non_nli"])["epoch"],
        "test": test(scorer, repo),
        "seconds": time.time() - t0,
        "rows": {"trained": len(train), "chose": len(val)},
    }
    print(json.dumps(result["test"]), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(result, indent=1))
    state = {k: v.to(torch.float16).contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    model.config.architectures = ["BertForSequenceClassification"]
    model.config.save_pretrained(str(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
