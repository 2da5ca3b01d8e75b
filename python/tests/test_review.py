"""`assay.calibrate`, `assay.compare` and `assay.report` against the
command line on the same runs: the same library calls, the same numbers."""

import json
import os
import subprocess

import assay
import pytest
from conftest import EXAMPLE, KEY


def rows():
    return [json.loads(line) for line in EXAMPLE.open()]


def cli(assay_command, *args):
    done = subprocess.run(
        [str(assay_command), *map(str, args)],
        env={**os.environ, "OPENAI_API_KEY": KEY},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_compare_is_the_command_line_s(tmp_path, assay_command):
    a, b = tmp_path / "a", tmp_path / "b"
    assay.evaluate(rows(), ["rouge", "bleu"], out=a, progress=False)
    changed = rows()
    changed[0]["response"] = "Something else entirely."
    assay.evaluate(changed, ["rouge", "bleu"], out=b, progress=False)
    mine = assay.compare(a, b, top=3)
    theirs = json.loads(cli(assay_command, "compare", a, b, "--top", 3, "--format", "json"))
    assert mine == theirs
    rouge1 = next(o for o in mine["outputs"] if o["name"] == "rouge1")
    # Only the first sample changed, so it heads the list of changes.
    assert rouge1["most_changed"][0]["sample_id"] == changed[0]["id"]
    with pytest.raises(assay.UsageError, match="not a run directory|cannot read"):
        assay.compare(a, tmp_path / "missing")


def test_report_writes_the_command_line_s_page(tmp_path, assay_command):
    run = tmp_path / "run"
    assay.evaluate(rows(), ["rouge"], out=run, progress=False)
    path = assay.report(run)
    assert path == run / "report.html"
    mine = path.read_bytes()
    path.unlink()
    cli(assay_command, "report", run)
    assert path.read_bytes() == mine
    assert b"rouge1" in mine
    with pytest.raises(assay.UsageError, match="is not a run directory"):
        assay.report(tmp_path)


def test_calibrate_gives_the_command_line_s_figures(tmp_path, judge, assay_command):
    kwargs = judge.kwargs(tmp_path)
    mine = assay.calibrate(
        "faithfulness", set="halueval-qa", limit=12, out=tmp_path / "py", **kwargs
    )
    theirs = json.loads(
        cli(
            assay_command,
            "calibrate",
            "--set",
            "halueval-qa",
            "--metric",
            "faithfulness",
            "--limit",
            12,
            "--judge",
            "openai:judge-model",
            "--base-url",
            judge.base_url,
            "--cache",
            kwargs["cache"],
            "--out",
            tmp_path / "cli",
            "--format",
            "json",
        )
    )
    assert mine == theirs
    assert mine["counts"]["selected"] == 12
    overall = next(g for g in mine["groups"] if g["group"] == "overall")
    assert "roc_auc" in overall["figures"] and "lexical_roc_auc" in overall["figures"]
    # Every judge keyword of evaluate reaches calibrate: judged twice by a
    # deterministic judge, each row scores its one value and every row is
    # used once.
    twice = assay.calibrate(
        "faithfulness", set="halueval-qa", limit=12, out=tmp_path / "py2", repeats=2, **kwargs
    )
    assert twice["counts"] == mine["counts"]
    assert twice["groups"] == mine["groups"]
    with pytest.raises(assay.UsageError, match="give one of"):
        assay.calibrate("faithfulness", **kwargs)
    with pytest.raises(assay.UsageError, match="not a judged metric"):
        assay.calibrate("rouge", set="halueval-qa", **kwargs)


def test_conversations_in_memory_score_as_the_example_file(tmp_path):
    agent = EXAMPLE.parent / "agent.jsonl"
    metrics = ["tool_call_accuracy", "tool_call_f1", "tool_correctness"]
    from_file = assay.evaluate(agent, metrics, progress=False)
    rows = [json.loads(line) for line in agent.open()]
    in_memory = assay.evaluate(rows, metrics, progress=False)
    assert in_memory.means() == from_file.means()
    # A bare list of messages is a conversation without references: the
    # reference-based metrics say which field is missing.
    bare = assay.evaluate([rows[0]["messages"]], ["tool_call_f1"], progress=False)
    (record,) = bare.records
    assert record["status"] == "skipped", record
    assert "reference_tool_calls" in json.dumps(record)


def test_align_writes_the_command_line_s_file_and_evaluate_uses_it(tmp_path, assay_command):
    mine = assay.align(tmp_path / "py.json", set="halueval-qa")
    cli(assay_command, "align", "--set", "halueval-qa", "--out", tmp_path / "cli.json")
    assert (tmp_path / "py.json").read_text() == (tmp_path / "cli.json").read_text()
    assert mine == json.loads((tmp_path / "cli.json").read_text())
    assert mine["evaluation"]["rows"] == sum(f["rows"] for f in mine["evaluation"]["folds"])
    assert [(t["task"], t["rows"]) for t in mine["evaluation"]["tasks"]] == [("rag", 300)]
    plain = assay.evaluate(EXAMPLE, ["faithfulness"], cache=False, progress=False)
    aligned = assay.evaluate(
        EXAMPLE, ["faithfulness"], alignment=tmp_path / "py.json", cache=False, progress=False
    )

    # The refit changes the probabilities, and the figures measured for
    # the built-in verdict are not shown for it.
    def probabilities(result):
        return [
            s["yes_probability"]
            for r in result.records
            if r["status"] == "scored"
            for s in r["details"]["statements"]
        ]

    assert probabilities(plain) != probabilities(aligned)
    assert plain.summary["agreement"] and aligned.summary["agreement"] == []
    with pytest.raises(assay.UsageError, match="give one of"):
        assay.align(tmp_path / "x.json")


def test_a_grounding_model_from_a_folder_gives_verdicts_with_windows(tmp_path):
    fixture = EXAMPLE.parents[1] / "crates/assay-classifier/tests/fixtures/modernbert"
    result = assay.evaluate(
        EXAMPLE, ["faithfulness"], grounding=fixture, cache=False, progress=False
    )
    statements = [
        s for r in result.records if r["status"] == "scored" for s in r["details"]["statements"]
    ]
    assert statements and all("best window: " in s["reason"] for s in statements)
    assert result.summary["agreement"] == []
    with pytest.raises(assay.UsageError, match="grounding.*no-such-model.*not a folder"):
        assay.evaluate(
            EXAMPLE, ["faithfulness"], grounding=tmp_path / "no-such-model", progress=False
        )
