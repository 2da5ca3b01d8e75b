"""The reference side of the embedder benchmark: all-MiniLM-L6-v2 in ONNX Runtime.

No ONNX export of the model can be installed here, so the graph is built
from the same safetensors that assay-local reads (a plain BERT encoder:
embeddings, 6 layers of masked self-attention and an Erf-GELU feed-forward
block, each with a residual LayerNormalization). ONNX Runtime then applies
its default graph optimisations (here: bias folded into GELU, the score
scale into the attention MatMul; attention itself stays unfused).

The workload is the `embed` part of crates/assay-local/benches/local.rs:
the same 256 sentences in batches of 32, tokenised by the model's
tokenizer.json with our settings (at most 256 tokens, padding only to the
longest text of a batch), mean pooling over real tokens and L2 norm.
Tokenising and pooling are timed too, as they are on our side.

    python embed_ort.py MODEL_DIR

prints `key value` lines like the Rust bench: tokens per sentence (to check
that both sides read the same input), sentences/s (median of
ASSAY_BENCH_REPS, default 3) on ASSAY_BENCH_THREADS (default 2) intra-op
threads, and the cosine of two STS sentences, which must be 0.7553 (the
model's known value) within 1e-3, else the script fails.
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MAX_TOKENS = 256
BATCH = 32
COSINE_PAIR = ("A man is eating food.", "A man is eating a piece of bread.")
COSINE_EXPECTED = 0.7553
# The base sentences of the Rust bench's `embed` part (one file serves both).
BASE = (Path(__file__).parent / "sentences.txt").read_text().splitlines()


class Graph:
    """Collects the nodes and initializers of one ONNX graph."""

    def __init__(self, weights):
        self.weights = weights
        self.nodes = []
        self.inits = []
        self.count = 0

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, name):
        return self.const(name, self.weights[name])

    def op(self, kind, *inputs, **attrs):
        self.count += 1
        out = f"{kind.lower()}_{self.count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def linear(self, x, prefix):
        # PyTorch stores [out, in]; MatMul wants [in, out].
        w = f"{prefix}.weight"
        y = self.op("MatMul", x, self.const(w, np.ascontiguousarray(self.weights[w].T)))
        return self.op("Add", y, self.weight(f"{prefix}.bias"))

    def norm(self, x, prefix, eps):
        return self.op(
            "LayerNormalization",
            x,
            self.weight(f"{prefix}.weight"),
            self.weight(f"{prefix}.bias"),
            axis=-1,
            epsilon=eps,
        )


def build_model(model_dir, config):
    """The encoder as an ONNX model: (input_ids, attention_mask) -> hidden states."""
    weights = load_file(str(model_dir / "model.safetensors"))
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = config["layer_norm_eps"]
    g = Graph(weights)

    ids = "input_ids"
    mask = "attention_mask"
    seq_len = g.op("Gather", g.op("Shape", ids), g.const("one", np.array([1], np.int64)), axis=0)
    zero = g.const("zero", np.array([0], np.int64))
    positions = g.op("Slice", g.weight("embeddings.position_embeddings.weight"), zero, seq_len)
    # Token type 0 for every token, as for a single text.
    token_type = g.const("token_type_0", weights["embeddings.token_type_embeddings.weight"][0])
    x = g.op("Gather", g.weight("embeddings.word_embeddings.weight"), ids, axis=0)
    x = g.op("Add", g.op("Add", x, positions), token_type)
    x = g.norm(x, "embeddings.LayerNorm", eps)

    # Padding gets a large negative score before the softmax: [B, 1, 1, S].
    keep = g.op("Cast", mask, to=TensorProto.FLOAT)
    f_one = g.const("f_one", np.array(1.0, np.float32))
    blocked = g.op("Sub", f_one, keep)
    bias = g.op("Mul", blocked, g.const("neg", np.array(-1e9, np.float32)))
    bias = g.op("Unsqueeze", bias, g.const("axes_1_2", np.array([1, 2], np.int64)))

    split = g.const("split_heads", np.array([0, 0, heads, head_dim], np.int64))
    merge = g.const("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (
            g.op("Reshape", g.linear(x, f"{p}.attention.self.{n}"), split)
            for n in ("query", "key", "value")
        )
        q = g.op("Transpose", q, perm=[0, 2, 1, 3])  # [B, H, S, D]
        k = g.op("Transpose", k, perm=[0, 2, 3, 1])  # [B, H, D, S]
        v = g.op("Transpose", v, perm=[0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        ctx = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        ctx = g.op("Reshape", g.op("Transpose", ctx, perm=[0, 2, 1, 3]), merge)
        x = g.op("Add", x, g.linear(ctx, f"{p}.attention.output.dense"))
        x = g.norm(x, f"{p}.attention.output.LayerNorm", eps)
        up = g.linear(x, f"{p}.intermediate.dense")
        # GELU, exact: x/2 (1 + erf(x / sqrt 2)).
        erf = g.op("Erf", g.op("Div", up, sqrt2))
        up = g.op("Mul", g.op("Mul", up, half), g.op("Add", erf, f_one))
        x = g.op("Add", x, g.linear(up, f"{p}.output.dense"))
        x = g.norm(x, f"{p}.output.LayerNorm", eps)

    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        g.nodes,
        "all-minilm-l6-v2",
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "seq", hidden])],
        g.inits,
    )
    # Opset 17 has LayerNormalization; IR 8 is the first version that reads it.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    return model


def load_tokenizer(model_dir):
    """tokenizer.json with our settings: its own pad to 128 and cut at 128 replaced."""
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: the longest of the batch
    return tok


def embed(session, tok, texts):
    """Unit-length mean-pooled embeddings of `texts` (one batch)."""
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], np.int64)
    mask = np.array([e.attention_mask for e in enc], np.int64)
    (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
    m = mask[:, :, None].astype(np.float32)
    pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: embed_ort.py MODEL_DIR")
    model_dir = Path(sys.argv[1])
    threads = int(os.environ.get("ASSAY_BENCH_THREADS", "2"))
    reps = int(os.environ.get("ASSAY_BENCH_REPS", "3"))
    # The tokenizer batches on rayon's pool, made at its first use: give it
    # as many threads as ONNX Runtime.
    os.environ.setdefault("RAYON_NUM_THREADS", str(threads))
    config = json.loads((model_dir / "config.json").read_text())

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(
        build_model(model_dir, config).SerializeToString(),
        options,
        providers=["CPUExecutionProvider"],
    )
    tok = load_tokenizer(model_dir)

    a, b = embed(session, tok, list(COSINE_PAIR))
    cosine = float(a @ b)

    sentences = [f"{BASE[i % len(BASE)]} ({i})" for i in range(256)]
    # Real tokens (as our side counts them) and the share of padding in
    # the batches ONNX Runtime computes.
    masks = [
        np.array([e.attention_mask for e in tok.encode_batch(sentences[i : i + BATCH])])
        for i in range(0, len(sentences), BATCH)
    ]
    tokens = sum(int(m.sum()) for m in masks)
    padding = 1 - tokens / sum(m.size for m in masks)
    rates = []
    for _ in range(reps):
        start = time.perf_counter()
        for i in range(0, len(sentences), BATCH):
            embed(session, tok, sentences[i : i + BATCH])
        rates.append(len(sentences) / (time.perf_counter() - start))

    print(f"embed_tokens_per_sentence {tokens / len(sentences):.1f}")
    print(f"embed_sentences_per_s {statistics.median(rates):.1f}")
    print(f"embed_padding_share {padding:.3f}")
    print(f"embed_cosine_check {cosine:.4f}")
    print(f"onnxruntime_version {ort.__version__}")
    if abs(cosine - COSINE_EXPECTED) > 1e-3:
        sys.exit(f"cosine {cosine:.4f} is not {COSINE_EXPECTED}: not the same model or computation")


if __name__ == "__main__":
    main()
