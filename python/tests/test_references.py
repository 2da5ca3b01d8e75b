"""`assay.evaluate(..., references=..., stitch=...)`: references joined onto
the samples of any input (a path, a mapping, rows), LLM calls without a
parent span stitched into conversations, and inputs with nothing to score
refused."""

import json

import pandas as pd
import pytest

import assay

TOOLS = ["tool_call_accuracy", "tool_call_f1", "tool_correctness"]
WANTED = [{"name": "search_flights", "args": {"to": "ROM"}}]


def _attr(key, value):
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _chat(trace, start, messages=None):
    """A chat span as opentelemetry-instrumentation-openai-v2 writes it
    (span_only), a root span of a trace of its own; no content when
    `messages` is None."""
    attributes = [
        _attr("gen_ai.operation.name", "chat"),
        _attr("gen_ai.system", "openai"),
        _attr("gen_ai.request.model", "gpt-4o-mini"),
    ]
    if messages is not None:
        attributes.append(_attr("gen_ai.input.messages", json.dumps(messages[0])))
        attributes.append(_attr("gen_ai.output.messages", json.dumps(messages[1])))
    return {
        "traceId": trace,
        "spanId": f"{start:016x}",
        "name": "chat gpt-4o-mini",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1),
        "attributes": attributes,
    }


def _text(role, content):
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _export(path, content=True):
    ask = [_text("user", "Flights Oslo-Rome?")]
    arguments = {"to": "ROM"}
    request = {"type": "tool_call", "id": "c1", "name": "search_flights", "arguments": arguments}
    call = {"role": "assistant", "parts": [request]}
    response = {"type": "tool_call_response", "id": "c1", "response": "SK4711"}
    result = {"role": "tool", "parts": [response]}
    first = (ask, [call])
    second = ([*ask, call, result], [_text("assistant", "SK4711 it is.")])
    spans = [
        _chat("a" * 32, 10, first if content else None),
        _chat("b" * 32, 20, second if content else None),
    ]
    with open(path, "w") as f:
        for span in spans:
            f.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    return path


@pytest.mark.parametrize(
    "references",
    [
        {"a" * 32: {"reference_tool_calls": WANTED}},
        [{"trace_id": "a" * 32, "reference_tool_calls": WANTED}],
        pd.DataFrame([{"id": "a" * 32, "reference_tool_calls": WANTED}]),
    ],
    ids=["mapping", "rows", "dataframe"],
)
def test_references_are_joined_onto_a_stitched_trace(tmp_path, references):
    traces = _export(tmp_path / "traces.json")
    result = assay.evaluate(traces, TOOLS, references=references, progress=False)
    assert {r["sample_id"] for r in result.records} == {"a" * 32}
    assert result.means() == {m: 1.0 for m in TOOLS}
    stitched = result.summary["input"]["stitched"]
    assert (stitched["calls"], stitched["rows"]) == (2, 1)
    assert result.summary["input"]["references"]["joined"] == 1


def test_stitch_false_keeps_one_row_per_call_and_unmatched_references_are_named(tmp_path):
    traces = _export(tmp_path / "traces.json")
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"trace_id": "f" * 32, "reference_tool_calls": []}) + "\n")
    result = assay.evaluate(
        traces, ["tool_correctness"], references=refs, stitch=False, progress=False
    )
    assert result.summary["rows"] == 2
    joined = result.summary["input"]["references"]
    assert joined["samples_without"] == 2
    assert joined["unmatched_keys"] == ["trace_id=" + "f" * 32]


def test_nothing_to_score_raises_usage_error(tmp_path):
    with pytest.raises(assay.UsageError, match="content capture is off"):
        assay.evaluate(_export(tmp_path / "bare.json", content=False), TOOLS, progress=False)
    with pytest.raises(assay.UsageError, match="no rows to score"):
        assay.evaluate([], ["rouge"], progress=False)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"reference": "no key"}\n')
    with pytest.raises(assay.UsageError, match="bad.jsonl: line 1: no key"):
        assay.evaluate([{"response": "r"}], ["rouge"], references=bad, progress=False)
