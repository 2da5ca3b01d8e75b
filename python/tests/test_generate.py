"""`assay.generate` against the loopback judge: the same rows as `assay
generate`, documents as paths, texts and LangChain- or LlamaIndex-shaped
objects, the plan of a dry run, and a test set `assay.evaluate` scores."""

import json
import os
import subprocess
from dataclasses import dataclass, field

import pytest
from conftest import KEY, REPO

import assay

DOCS = REPO / "examples" / "docs"


def judge_keywords(judge, folder):
    kwargs = judge.kwargs(folder)
    del kwargs["progress"], kwargs["embedder"]
    return kwargs


def test_the_same_rows_as_the_command_line(tmp_path, judge, assay_command):
    done = subprocess.run(
        [
            str(assay_command),
            "generate",
            str(DOCS),
            "--size",
            "6",
            "--out",
            str(tmp_path / "cli.jsonl"),
            "--judge",
            "openai:judge-model",
            "--base-url",
            judge.base_url,
            "--cache",
            str(tmp_path / "cache.sqlite"),
        ],
        # HOME or ASSAY_HOME: where the fetched models are (the embedder).
        env={"OPENAI_API_KEY": KEY, "PATH": "/usr/bin:/bin"}
        | {k: os.environ[k] for k in ("HOME", "ASSAY_HOME") if k in os.environ},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    cli = [json.loads(line) for line in (tmp_path / "cli.jsonl").open()]
    notes = []
    made = assay.generate(
        DOCS,
        6,
        out=tmp_path / "py.jsonl",
        progress=lambda kind, line: notes.append((kind, line)),
        **judge_keywords(judge, tmp_path),
    )
    assert len(made) == 6
    # The command's line at each tenth of the plan, to the callback.
    asked = [line.split(",")[0] for kind, line in notes if kind == "note"]
    assert asked == [f"generate: {k} of 6 questions asked" for k in range(1, 6)]
    assert made.rows == [json.loads(line) for line in (tmp_path / "py.jsonl").open()]
    assert [r["user_input"] for r in made.rows] == [r["user_input"] for r in cli]
    assert made.summary["made"] == 6
    assert made.summary["judge"]["cache_hits"] == made.summary["judge"]["calls"]


@dataclass
class LangChainDocument:
    page_content: str
    metadata: dict = field(default_factory=dict)


@dataclass
class LlamaIndexDocument:
    text: str
    doc_id: str


def test_texts_and_framework_documents_and_a_dry_run(tmp_path, judge):
    curie = (DOCS / "en_wikipedia_pierre_curie.md").read_text()
    http = (DOCS / "fr_mdn_apercu_de_http.md").read_text()
    pep = (DOCS / "en_pep-0013_python_language_governance.txt").read_text()
    documents = [
        curie,
        LangChainDocument(http, {"source": "mdn/http.md"}),
        LlamaIndexDocument(pep, "pep-13"),
    ]
    plan = assay.generate(documents, 6, dry_run=True)
    assert len(plan) == 0 and plan.summary["planned"] == 6
    # At most three attempts on each of five chunks of two documents.
    assert plan.summary["judge_calls"] == {"at_least": 6, "at_most": 180}
    assert plan.summary["estimated_cost"] is None  # the local judge is free
    # A critic's call per candidate doubles the calls.
    criticised = assay.generate(documents, 6, dry_run=True, critic=0.5).summary
    assert criticised["judge_calls"] == {"at_least": 12, "at_most": 360}
    assert criticised["estimated_prompt_tokens"] > plan.summary["estimated_prompt_tokens"]
    # So does the closed-book question; both, three calls a candidate.
    both = assay.generate(documents, 6, dry_run=True, critic=0.5, closed_book=True).summary
    assert both["judge_calls"] == {"at_least": 18, "at_most": 540}
    assert both["estimated_prompt_tokens"] > criticised["estimated_prompt_tokens"]
    # The round trip asks the specific questions again, not the abstract
    # ones, of which the default mix has some.
    by_type = plan.summary["by_type"]
    specific = by_type.get("single_hop", 0) + by_type.get("multi_hop", 0)
    assert 0 < specific < 6
    trip = assay.generate(documents, 6, dry_run=True, round_trip=True).summary
    assert trip["judge_calls"] == {"at_least": 6 + specific, "at_most": 30 * (6 + specific)}
    # At a price, the plan's tokens cost: prompts as estimated, answers of
    # 80 tokens each, every attempt at most (three on each of five chunks
    # of two documents).
    priced = assay.generate(
        documents, 6, dry_run=True, judge="openai:m", prices={"m": "1/2"}
    ).summary
    first = priced["estimated_prompt_tokens"] * 1e-6 + 6 * 80 * 2e-6
    assert priced["estimated_cost"]["first_attempts"] == pytest.approx(first)
    assert priced["estimated_cost"]["at_most"] == pytest.approx(30 * first)
    made = assay.generate(
        documents,
        6,
        mix={"single_hop": 1.0},
        evolutions=["concretizing"],
        **judge_keywords(judge, tmp_path),
    )
    assert len(made) == 6
    assert {r["question_type"] for r in made.rows} == {"single_hop"}
    assert {r["evolution"] for r in made.rows} == {"concretizing"}
    assert sorted(made.summary["by_document"]) == ["document 1", "mdn/http.md", "pep-13"]
    french = [r for r in made.rows if r["meta"]["document"] == "mdn/http.md"]
    assert french and all(r["meta"]["language"] == "French" for r in french)
    # An application answers with the reference's context; evaluate scores it.
    rows = [
        {**r, "response": r["reference_contexts"][0], "retrieved_contexts": r["reference_contexts"]}
        for r in made.rows
    ]
    result = assay.evaluate(rows, ["rouge"], progress=False)
    assert len(result.records) == 6 * 4


def test_a_grounding_model_reads_the_answers(tmp_path, judge):
    """`grounding=DIR`: the model reads whether each answer is supported;
    its identity is in the signature, its verdicts in the rejections, and
    a folder it cannot read is refused before any call."""
    model = REPO / "crates" / "assay-classifier" / "tests" / "fixtures" / "modernbert"
    made = assay.generate(
        DOCS,
        9,
        seed=3,
        out=tmp_path / "set.jsonl",
        grounding=model,
        **judge_keywords(judge, tmp_path),
    )
    assert len(made) == 9
    assert " grounding=modernbert@sha256:" in made.summary["generator"]
    unsupported = [r for r in made.rejected if r["rejection"]["reason"] == "unsupported"]
    assert unsupported
    assert all(r["rejection"]["evidence"].startswith("P(supported) 0.") for r in unsupported)
    with pytest.raises(assay.UsageError, match="grounding"):
        assay.generate(DOCS, 2, grounding=tmp_path, **judge_keywords(judge, tmp_path))
