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


def test_a_row_the_grounding_verdict_cannot_read_is_skipped_naming_its_language():
    rows = [json.loads(line) for line in (EXAMPLE.parent / "multilingual.jsonl").open()]
    picked = [r for r in rows if r["id"] in ("fr-negated", "zh-wrong_name")]
    result = assay.evaluate(picked, ["faithfulness"], cache=False, progress=False)
    by_id = {r["sample_id"]: r for r in result.records}
    assert by_id["fr-negated"]["value"] == 0.0, by_id["fr-negated"]
    assert by_id["zh-wrong_name"]["status"] == "skipped"
    assert by_id["zh-wrong_name"]["reason"].startswith("unsupported_language: Mandarin: ")
    # Read as English, "n'est pas" negates nothing.
    french = [r for r in picked if r["id"] == "fr-negated"]
    english = assay.evaluate(french, ["faithfulness"], language="en", cache=False, progress=False)
    assert english.records[0]["value"] == 1.0, english.records[0]
    with pytest.raises(assay.UsageError, match="the grounding verdict reads English"):
        assay.evaluate(french, ["faithfulness"], language="zh", cache=False, progress=False)


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


def test_evaluate_finishes_a_run_as_the_command_does(tmp_path, assay_command):
    calibration = tmp_path / "calibration.json"
    calibration.write_text(
        json.dumps(
            {
                "format_version": 1,
                "metric": "faithfulness",
                "output": "faithfulness",
                "label": {"kind": "binary", "positive": "faithful", "field": "hallucinated"},
                "threshold": {"value": 0.5},
                "confusion": {"tp": 40, "fn": 10, "tn": 45, "fp": 5},
            }
        )
    )
    mine = assay.evaluate(
        EXAMPLE,
        ["faithfulness"],
        out=tmp_path / "py",
        gates={"faithfulness": ">= 0.99"},
        max_failed_fraction=0.5,
        calibration=calibration,
        report=True,
        cache=False,
        progress=False,
    )
    done = subprocess.run(
        [str(assay_command), "eval", EXAMPLE, "-m", "faithfulness", "--out", tmp_path / "cli"]
        + ["--fail-under", "faithfulness=0.99", "--max-failed-fraction", "0.5"]
        + ["--calibration", calibration, "--report", "--no-cache", "--format", "json"],
        capture_output=True,
        text=True,
    )
    # The example's faithfulness is below 0.99: the gate fails both ways.
    assert done.returncode == 1, done.stderr
    printed = json.loads(done.stdout)
    assert mine.summary["calibrated"] == printed["calibrated"]
    assert mine.summary["calibrated"]["raw"] is not None
    assert [g.line for g in mine.gates] == [
        line for line in done.stderr.splitlines() if line.startswith("gate ")
    ]
    assert [g.passed for g in mine.gates] == [False, True]
    assert not mine.passed
    assert mine.report == tmp_path / "py" / "report.html" and mine.report.is_file()
    assert (tmp_path / "cli" / "report.html").is_file()
    with pytest.raises(assay.UsageError, match="give out="):
        assay.evaluate(EXAMPLE, ["faithfulness"], report=True, progress=False)
