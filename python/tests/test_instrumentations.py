"""The instrumentations people use, set up as docs/tool-calls.md says: an
agent on the real `openai` client (`trace_agent.py`) runs its tasks against
the loopback judge, which calls a flat tool and then one with nested
arguments before it answers; its OTLP JSON export, joined with a
references file keyed by trace id, scores the tool-call metrics exactly as
the same conversations do when written as JSONL samples."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import assay
from trace_agent import TASKS

AGENT = Path(__file__).with_name("trace_agent.py")
METRICS = ["tool_call_accuracy", "tool_call_f1", "tool_correctness"]

# What each instrumentation needs in the environment to put the messages
# on its spans.
ENVIRONMENT = {
    "openinference": {},
    "openai-v2": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
    },
    "openllmetry": {},
}

# Per task of TASKS: all calls right; the nested seat wrong; one call the
# reference does not want.
EXPECTED = [
    {"tool_call_accuracy": 1.0, "tool_call_f1": 1.0, "tool_correctness": 1.0},
    {"tool_call_accuracy": 0.75, "tool_call_f1": 0.5, "tool_correctness": 1.0},
    {"tool_call_accuracy": 0.0, "tool_call_f1": 0.6667, "tool_correctness": 1.0},
]


def _values(result) -> dict:
    values = {}
    for record in result.records:
        assert record["status"] == "scored", record
        values[record["sample_id"], record["metric"]] = record["value"]
    return values


@pytest.mark.parametrize(
    ("instrumentation", "flags"),
    [
        ("openinference", []),
        ("openai-v2", ["--hex-ids"]),
        ("openllmetry", ["--hex-ids"]),
        ("openai-v2", ["--parent", "--hex-ids"]),
        ("openinference", ["--parent"]),
        ("openllmetry", ["--parent", "--hex-ids"]),
    ],
    ids=[
        "openinference",
        "openai-v2",
        "openllmetry",
        "openai-v2-parent",
        "openinference-parent",
        "openllmetry-parent",
    ],
)
def test_an_instrumented_agent_scores_its_tool_calls_as_its_conversations_do(
    tmp_path, judge, instrumentation, flags
):
    traces = tmp_path / "traces.json"
    subprocess.run(
        [sys.executable, str(AGENT), instrumentation, judge.base_url, str(traces), *flags],
        check=True,
        env={**os.environ, **ENVIRONMENT[instrumentation]},
    )
    runs = [json.loads(line) for line in Path(f"{traces}.runs.jsonl").read_text().splitlines()]
    ids = [run["trace_id"] for run in runs]
    assert len(set(ids)) == len(TASKS)

    references = tmp_path / "references.jsonl"
    with open(references, "w") as f:
        for trace_id, (_, wanted) in zip(ids, TASKS):
            f.write(json.dumps({"trace_id": trace_id, "reference_tool_calls": wanted}) + "\n")
    from_traces = assay.evaluate(traces, METRICS, references=references, progress=False)

    samples = tmp_path / "samples.jsonl"
    with open(samples, "w") as f:
        for run in runs:
            f.write(json.dumps({"id": run["trace_id"], **run}) + "\n")
    from_samples = assay.evaluate(samples, METRICS, references=references, progress=False)

    values = _values(from_traces)
    assert values == _values(from_samples)
    assert values == {
        (trace_id, metric): value
        for trace_id, expected in zip(ids, EXPECTED)
        for metric, value in expected.items()
    }
    assert from_traces.summary["input"]["references"]["joined"] == len(TASKS)
    stitched = from_traces.summary["input"].get("stitched")
    if "--parent" in flags:
        assert stitched is None
        # The references the agent recorded on each run's span say the same.
        assert _values(assay.evaluate(traces, METRICS, progress=False)) == values
    else:
        assert (stitched["calls"], stitched["rows"]) == (3 * len(TASKS), len(TASKS))
