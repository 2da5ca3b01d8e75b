"""Does a semantic signal beat counting words on grounding? An experiment,
not part of assay: its figures are in docs/calibration.md ("The semantic
lever, measured").

Scores every claim (a response sentence) of data/calibration's RAGTruth,
SummEval and HaluEval QA rows four ways: the content-word novelty baseline,
the all-MiniLM-L6-v2 cosine to the closest support chunk, and MiniLM as a
cross-encoder (claim, its four closest chunks) fine-tuned on the claims of
../shared/data/train, all weights or LoRA (rank 16) only; then LoRA again
with RAGTruth's own sentence labels added, five folds by source document.

    python3 grounding-semantic.py TRAIN_DIR CALIBRATION_DIR MINILM_DIR STOPWORDS

TRAIN_DIR holds the five training files (.jsonl or .jsonl.gz), MINILM_DIR
the model's config.json, tokenizer.json and model.safetensors (as
scripts/fetch-models.sh installs them), STOPWORDS
crates/assay-grounding/data/stopwords.txt. Needs torch, transformers,
scikit-learn and scipy; on one H200 it runs in about 6 minutes (CPU: hours).
Writes results.json, log.txt, claims.jsonl.gz and lora.safetensors to $OUT.
Seeded, but GPU training is not bit-for-bit reproducible across machines.
"""
import gzip, hashlib, json, math, os, random, re, sys, time
import numpy as np, torch, torch.nn as nn
from transformers import BertModel, PreTrainedTokenizerFast
from sklearn.metrics import roc_auc_score
from scipy.stats import spearmanr

TRAIN, CAL, MINILM, STOPWORDS = sys.argv[1:5]
OUT = os.environ.get("OUT", "/tmp/out")
SMALL = int(os.environ.get("SMALL", "0"))
EPOCHS = int(os.environ.get("EPOCHS", "3"))
dev = "cuda" if torch.cuda.is_available() else "cpu"
T0 = time.time()
LOG = open(os.path.join(OUT, "log.txt"), "a")
def log(*a):
    s = f"[{time.time()-T0:7.1f}s] " + " ".join(str(x) for x in a)
    print(s, flush=True); LOG.write(s + "\n"); LOG.flush()

STOP = set(open(STOPWORDS).read().split())
def words(t): return re.findall(r"[a-z0-9]+", t.lower())
def content(t): return [w for w in words(t) if w not in STOP]
SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")
def sentences(t):
    out = []
    for para in re.split(r"\n+", t):
        for s in SPLIT.split(para):
            s = s.strip()
            if s: out.append(s)
    return out
def spans_of(text):
    """sentences with their character offsets"""
    res, start = [], 0
    for s in sentences(text):
        i = text.find(s, start)
        if i < 0: i = start
        res.append((s, i, i + len(s))); start = i + len(s)
    return res
def chunks(text, max_words=60):
    out = []
    for s in sentences(text):
        w = s.split()
        for i in range(0, len(w), max_words):
            out.append(" ".join(w[i:i+max_words]))
    return out

def read(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return [json.loads(l) for l in f if l.strip()]

def support_text(r):
    parts = ([r["user_input"]] if r.get("user_input") else []) + list(r.get("retrieved_contexts") or [])
    return parts

# ---------- claims -------------------------------------------------------
def train_claims():
    claims = []
    for name in ["xsum_hallucination_spans", "summedits_sample", "begin_dialogue", "wice_claims", "halueval_qa_extra"]:
        path = os.path.join(TRAIN, name + ".jsonl")
        rows = read(path if os.path.exists(path) else path + ".gz")
        if SMALL: rows = rows[:SMALL]
        for r in rows:
            lab = r["labels"]
            if lab.get("begin_label") == "Generic": continue
            sup = support_text(r)
            group = hashlib.sha256((r.get("retrieved_contexts") or [""])[0][:2000].encode()).hexdigest()
            sents = spans_of(r["response"])
            if not sents: continue
            if name.startswith("xsum"):
                for s, a, b in sents:
                    ann = {sp["annotator"] for sp in lab.get("spans", []) if sp["start"] < b and sp["end"] > a}
                    claims.append(dict(src=name, group=group, claim=s, support=sup, y=int(len(ann) < 2)))
            elif not lab["hallucinated"]:
                for s, _, _ in sents:
                    claims.append(dict(src=name, group=group, claim=s, support=sup, y=1))
            elif len(sents) == 1:
                claims.append(dict(src=name, group=group, claim=sents[0][0], support=sup, y=0))
    return claims

def ragtruth():
    rows = read(os.path.join(CAL, "meta/ragtruth_sample.jsonl"))
    out = []
    for r in rows:
        sup = support_text(r)
        sents = spans_of(r["response"]) or [(r["response"], 0, len(r["response"]))]
        cl = []
        for s, a, b in sents:
            bad = any(sp["start"] < b and sp["end"] > a for sp in r["labels"]["spans"])
            cl.append(dict(claim=s, support=sup, y=int(not bad)))
        out.append(dict(row=r, claims=cl, y=int(r["labels"]["hallucinated"]), group=r["meta"]["source_id"], task=r["meta"]["ragtruth_task"]))
    return out

def simple_rows(file):
    rows = read(os.path.join(CAL, file))
    out = []
    for r in rows:
        sup = support_text(r)
        sents = spans_of(r["response"]) or [(r["response"], 0, len(r["response"]))]
        out.append(dict(row=r, claims=[dict(claim=s, support=sup, y=-1) for s, _, _ in sents]))
    return out

def novelty(claim, support):
    c = content(claim); s = set(content(" ".join(support)))
    return (sum(w not in s for w in c) / len(c)) if c else 0.0

# ---------- model -------------------------------------------------------
tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(MINILM, "tokenizer.json"),
                              unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]", mask_token="[MASK]")
def base():
    m = BertModel.from_pretrained(MINILM, add_pooling_layer=False, torch_dtype=torch.float32)
    return m.to(dev)
def mean_pool(h, mask):
    m = mask.unsqueeze(-1).float()
    return (h * m).sum(1) / m.sum(1).clamp(min=1)

@torch.no_grad()
def embed(model, texts, bs=256):
    model.eval(); out = []
    for i in range(0, len(texts), bs):
        b = tok(texts[i:i+bs], padding=True, truncation=True, max_length=256, return_tensors="pt").to(dev)
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
            h = model(**b).last_hidden_state
        e = mean_pool(h.float(), b["attention_mask"])
        out.append(torch.nn.functional.normalize(e, dim=-1).cpu())
    return torch.cat(out) if out else torch.zeros(0, 384)

def add_evidence(claims, enc, k=4):
    """per claim: max cosine to a support chunk, and the top-k chunks in order"""
    cache = {}
    for c in claims:
        key = "\x00".join(c["support"])
        if key not in cache: cache[key] = None
    keys = list(cache)
    all_chunks, owner = [], []
    for j, key in enumerate(keys):
        ch = []
        for part in key.split("\x00"): ch += chunks(part)
        ch = ch or [""]
        cache[key] = (len(all_chunks), len(ch)); all_chunks += ch
    E = embed(enc, all_chunks)
    sets = [set(content(x)) for x in all_chunks]
    C = embed(enc, [c["claim"] for c in claims])
    for i, c in enumerate(claims):
        a, n = cache["\x00".join(c["support"])]
        sims = (E[a:a+n] @ C[i]).numpy()
        c["cos"] = float(sims.max())
        # blend cosine with lexical overlap for retrieval
        cw = set(content(c["claim"]))
        lex = np.array([len(cw & x) / max(1, len(cw)) for x in sets[a:a+n]])
        order = np.argsort(-(sims + lex))[:k]
        c["evidence"] = " ".join(all_chunks[a + j] for j in sorted(order))
        c["nov"] = novelty(c["claim"], c["support"])

class LoRA(nn.Module):
    def __init__(self, lin, r=16, alpha=32):
        super().__init__()
        self.lin = lin; self.r = r; self.scale = alpha / r
        self.A = nn.Parameter(torch.randn(r, lin.in_features) * 0.01)
        self.B = nn.Parameter(torch.zeros(lin.out_features, r))
    def forward(self, x):
        return self.lin(x) + (x @ self.A.t() @ self.B.t()) * self.scale

class Cross(nn.Module):
    def __init__(self, lora):
        super().__init__()
        self.bert = base(); self.head = nn.Linear(384, 1)
        if lora:
            for p in self.bert.parameters(): p.requires_grad = False
            for layer in self.bert.encoder.layer:
                at = layer.attention.self
                at.query = LoRA(at.query); at.value = LoRA(at.value); at.key = LoRA(at.key)
                layer.attention.output.dense = LoRA(layer.attention.output.dense)
                layer.intermediate.dense = LoRA(layer.intermediate.dense)
                layer.output.dense = LoRA(layer.output.dense)
            self.bert.to(dev)
        self.head.to(dev)
    def forward(self, b):
        h = self.bert(**b).last_hidden_state
        return self.head(mean_pool(h.float(), b["attention_mask"])).squeeze(-1)

def batch(claims):
    return tok([c["claim"] for c in claims], [c["evidence"] for c in claims], padding=True,
               truncation="only_second", max_length=320, return_tensors="pt").to(dev)

def train(claims, lora, seed=0):
    torch.manual_seed(seed); random.seed(seed)
    m = Cross(lora)
    params = [p for p in m.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=3e-4 if lora else 4e-5, weight_decay=0.01)
    bs = 32; steps = EPOCHS * math.ceil(len(claims) / bs); step = 0
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / (0.06 * steps + 1)) * max(0.0, 1 - s / steps))
    pos = sum(c["y"] for c in claims); neg = len(claims) - pos
    lossf = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(neg / max(1, pos), device=dev))
    for ep in range(EPOCHS):
        m.train(); idx = list(range(len(claims))); random.shuffle(idx); tot = 0
        for i in range(0, len(idx), bs):
            cb = [claims[j] for j in idx[i:i+bs]]
            with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
                logit = m(batch(cb))
            loss = lossf(logit.float(), torch.tensor([c["y"] for c in cb], dtype=torch.float, device=dev))
            opt.zero_grad(); loss.backward(); opt.step(); sched.step(); tot += loss.item()
        log(f"  epoch {ep} loss {tot / max(1, len(idx) / bs):.4f}")
    return m

@torch.no_grad()
def predict(m, claims, bs=128):
    m.eval()
    for i in range(0, len(claims), bs):
        cb = claims[i:i+bs]
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
            p = torch.sigmoid(m(batch(cb)).float()).cpu().numpy()
        for c, v in zip(cb, p): c["ce"] = float(v)

# ---------- figures -------------------------------------------------------
def auc(y, s):
    try: return round(roc_auc_score(y, s), 3)
    except ValueError: return float("nan")
def resp(claims, key, agg):
    v = [c[key] for c in claims]
    return agg(v)
def rag_report(rt, key, name):
    res = {}
    for agg_name, agg in [("min", min), ("mean", np.mean)]:
        y = [1 - r["y"] for r in rt]  # faithful = 1
        s = [resp(r["claims"], key, agg) if key != "nov" else -resp(r["claims"], key, max if agg_name == "min" else np.mean) for r in rt]
        by = {}
        for t in ["QA", "Summary", "Data2txt"]:
            ix = [i for i, r in enumerate(rt) if r["task"] == t]
            by[t] = auc([y[i] for i in ix], [s[i] for i in ix])
        res[agg_name] = dict(all=auc(y, s), **by)
    cl = [c for r in rt for c in r["claims"]]
    sv = [c[key] if key != "nov" else -c[key] for c in cl]
    res["claim_auc"] = auc([c["y"] for c in cl], sv)
    log(f"RAGTruth {name}: {json.dumps(res)}")
    return res
def summeval_report(se, key, name):
    y = [r["row"]["labels"]["expert_consistency"] for r in se]
    out = {}
    for agg_name, agg in [("min", min), ("mean", np.mean)]:
        s = [resp(r["claims"], key, agg) if key != "nov" else -resp(r["claims"], key, max if agg_name == "min" else np.mean) for r in se]
        out[agg_name] = round(spearmanr(y, s).correlation, 3)
    log(f"SummEval {name}: {json.dumps(out)}")
    return out
def halueval_report(hq, key, name):
    by = {}
    for r in hq:
        k = r["row"]["id"].rsplit("-", 1)[0]
        s = resp(r["claims"], key, min) if key != "nov" else -resp(r["claims"], key, max)
        by.setdefault(k, {})[r["row"]["labels"]["hallucinated"]] = s
    pairs = [v for v in by.values() if len(v) == 2]
    acc = np.mean([1.0 if v[False] > v[True] else 0.5 if v[False] == v[True] else 0.0 for v in pairs])
    y = [1 - int(r["row"]["labels"]["hallucinated"]) for r in hq]
    s = [resp(r["claims"], key, min) if key != "nov" else -resp(r["claims"], key, max) for r in hq]
    log(f"HaluEval {name}: paired {acc:.3f} auc {auc(y, s)}")
    return dict(paired=round(float(acc), 3), auc=auc(y, s))

def main():
    results = {}
    tc = train_claims(); log("train claims", len(tc), "supported", sum(c["y"] for c in tc))
    rt = ragtruth(); se = simple_rows("meta/summeval_sample.jsonl"); hq = simple_rows("meta/halueval_qa_sample.jsonl")
    if SMALL: rt, se, hq = rt[:40], se[:40], hq[:40]
    enc = base()
    evc = [c for r in rt + se + hq for c in r["claims"]]
    add_evidence(tc, enc); add_evidence(evc, enc); del enc
    log("evidence done")
    for key in ["nov", "cos"]:
        results[key] = dict(rag=rag_report(rt, key, key), summeval=summeval_report(se, key, key), halueval=halueval_report(hq, key, key))
    for lora in [False, True]:
        name = "ce_lora" if lora else "ce_full"
        log("training", name)
        m = train(tc, lora)
        predict(m, evc)
        for c in evc: c[name] = c["ce"]
        results[name] = dict(rag=rag_report(rt, name, name), summeval=summeval_report(se, name, name), halueval=halueval_report(hq, name, name))
        json.dump(results, open(os.path.join(OUT, "results.json"), "w"), indent=1)
        if lora:
            sd = {k: v.detach().float().cpu().contiguous() for k, v in m.state_dict().items() if ".A" in k or ".B" in k or k.startswith("head")}
            from safetensors.torch import save_file
            save_file(sd, os.path.join(OUT, "lora.safetensors"))
        del m; torch.cuda.empty_cache() if dev == "cuda" else None
    dump(rt, se, hq)
    # in-domain: RAGTruth folds by source, train/ + 4 folds
    fold = lambda g: int(hashlib.sha256(g.encode()).hexdigest(), 16) % 5
    for r in rt:
        for c in r["claims"]: c["fold"] = fold(r["group"])
    name = "ce_lora_indomain"
    for f in range(5):
        trc = tc + [c for r in rt for c in r["claims"] if c["fold"] != f]
        m = train(trc, True, seed=f)
        tst = [c for r in rt for c in r["claims"] if c["fold"] == f]
        predict(m, tst)
        for c in tst: c[name] = c["ce"]
        del m
    results[name] = dict(rag=rag_report(rt, name, name))
    json.dump(results, open(os.path.join(OUT, "results.json"), "w"), indent=1)
    dump(rt, se, hq)
    log("done")

def dump(rt, se, hq):
    with gzip.open(os.path.join(OUT, "claims.jsonl.gz"), "wt") as f:
        for set_name, rows in [("ragtruth", rt), ("summeval", se), ("halueval", hq)]:
            for r in rows:
                for c in r["claims"]:
                    f.write(json.dumps(dict(set=set_name, id=r["row"]["id"], claim=c["claim"], y=c["y"], **{k: c.get(k) for k in ["nov", "cos", "ce_full", "ce_lora", "ce_lora_indomain"]})) + "\n")

main()
