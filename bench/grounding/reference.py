"""The reference side of the grounding benchmark: the workload that
crates/assay-classifier/benches/pairs.rs scores, scored the same way with
`transformers` on torch's CPU backend, float32.

Same tokenizer.json (through PreTrainedTokenizerFast), the pair read as
(window, claim) with only the window truncated to 512 tokens, the pairs
sorted by length (stable) and run in batches of 16 padded to their
longest, P(entailment) the softmax of the logits: what
Classifier::support does. Timed the same way too: tokenizing, batching,
the forward passes and the softmax, one warm-up pass, then the median of
ASSAY_BENCH_REPS passes (default 5) on ASSAY_BENCH_THREADS threads
(default 2; torch.set_num_threads, and one inter-op thread).

    python bench/grounding/reference.py MODEL_DIR PAIRS_JSONL [--assay-probabilities FILE] [--onnx]

With --onnx the same model runs in ONNX Runtime instead (the CPU execution
provider, ASSAY_BENCH_THREADS intra-op threads, one inter-op thread, its
default graph optimisations), exported once by torch.onnx's
torch.export-based exporter (batch and length dynamic) to MODEL_DIR/model.onnx: the runtime assay
could have used through the `ort` crate.

Prints `key value` lines like the Rust side. With --assay-probabilities
(the file the Rust side writes with ASSAY_BENCH_PROBABILITIES), checks that
both computed the same thing: the mean probability and every pair's within
1e-4, and exits 1 where they do not.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

THREADS = int(os.environ.get("ASSAY_BENCH_THREADS", os.environ.get("THREADS", "2")))
torch.set_num_threads(THREADS)
try:
    torch.set_num_interop_threads(1)
except RuntimeError:
    pass

import transformers  # noqa: E402
from transformers import AutoModelForSequenceClassification, PreTrainedTokenizerFast  # noqa: E402

BATCH = 16
MAX_TOKENS = 512
MEAN_TOLERANCE = 1e-4
PAIR_TOLERANCE = 1e-4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--assay-probabilities", type=Path)
    parser.add_argument("--onnx", action="store_true", help="run the model in ONNX Runtime")
    args = parser.parse_args()
    reps = max(1, int(os.environ.get("ASSAY_BENCH_REPS", "5")))

    rows = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
    windows = [r["window"] for r in rows]
    claims = [r["claim"] for r in rows]

    start = time.perf_counter()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(args.model / "tokenizer.json"),
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )
    model = AutoModelForSequenceClassification.from_pretrained(args.model, dtype=torch.float32).eval()
    label = model.config.label2id["entailment"]
    runtime = f"transformers {transformers.__version__}"
    if args.onnx:
        forward = onnx_forward(model, args.model)
        import onnxruntime

        runtime = f"onnxruntime {onnxruntime.__version__}"
    else:

        def forward(batch):
            return model(**batch).logits

    load_ms = (time.perf_counter() - start) * 1000

    def support() -> list[float]:
        enc = tokenizer(windows, claims, truncation="only_first", max_length=MAX_TOKENS)
        features = [{k: enc[k][i] for k in enc.keys()} for i in range(len(rows))]
        order = sorted(range(len(rows)), key=lambda i: len(features[i]["input_ids"]))
        out = [0.0] * len(rows)
        with torch.inference_mode():
            for at in range(0, len(order), BATCH):
                chunk = order[at : at + BATCH]
                batch = tokenizer.pad([features[i] for i in chunk], return_tensors="pt")
                logits = forward(batch).double()
                probabilities = torch.softmax(logits, dim=-1)[:, label].tolist()
                for i, p in zip(chunk, probabilities):
                    out[i] = p
        return out

    probabilities = support()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        support()
        times.append(time.perf_counter() - start)
    median = statistics.median(times)

    enc = tokenizer(windows, claims, truncation="only_first", max_length=MAX_TOKENS)
    tokens = sum(len(ids) for ids in enc["input_ids"])
    n = len(rows)
    mean = sum(probabilities) / n
    print(f"pairs {n}")
    print(f"tokens_per_pair {tokens / n:.1f}")
    print(f"ms_per_pair {median * 1000 / n:.2f}")
    print(f"mean_probability {mean:.7f}")
    print(f"probability_range {min(probabilities):.4f}-{max(probabilities):.4f}")
    print(f"load_ms {load_ms:.0f}")
    print(f"threads {torch.get_num_threads()}")
    print(f"reps {reps}")
    print(f"torch {torch.__version__}")
    print(f"transformers {transformers.__version__}")
    print(f"runtime {runtime.replace(' ', '-')}")
    print(f"attention {model.config._attn_implementation}")

    if args.assay_probabilities:
        theirs = [float(x) for x in args.assay_probabilities.read_text().split()]
        if len(theirs) != n:
            print(f"agreement: assay scored {len(theirs)} pairs, transformers {n}", file=sys.stderr)
            sys.exit(1)
        mean_difference = abs(sum(theirs) / n - mean)
        max_difference = max(abs(a - b) for a, b in zip(theirs, probabilities))
        print(f"mean_difference {mean_difference:.2e}")
        print(f"max_difference {max_difference:.2e}")
        if mean_difference > MEAN_TOLERANCE or max_difference > PAIR_TOLERANCE:
            print(
                f"agreement: failed (mean probability differs by {mean_difference:.2e}, "
                f"a pair's by up to {max_difference:.2e})",
                file=sys.stderr,
            )
            sys.exit(1)


def onnx_forward(model, folder: Path):
    """Exports `model` to folder/model.onnx (once) and returns a forward
    pass through ONNX Runtime that takes and gives what the torch one does."""
    import numpy as np
    import onnxruntime

    path = folder / "model.onnx"
    names = ["input_ids", "token_type_ids", "attention_mask"]
    if not path.exists():
        dummy = {k: torch.ones(2, 8, dtype=torch.long) for k in names}
        dummy["attention_mask"][1, 5:] = 0
        batch, tokens = torch.export.Dim("batch"), torch.export.Dim("tokens", max=MAX_TOKENS)
        # torch.export (dynamo): the older tracing exporter turned
        # transformers 5's mask code into constants and disagreed by 0.1.
        torch.onnx.export(
            model,
            (),
            str(path),
            kwargs=dummy,
            input_names=names,
            output_names=["logits"],
            dynamic_shapes={k: {0: batch, 1: tokens} for k in names},
            dynamo=True,
        )
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def forward(batch):
        feed = {k: batch[k].numpy().astype(np.int64) for k in names}
        return torch.from_numpy(session.run(["logits"], feed)[0])

    return forward


if __name__ == "__main__":
    main()
