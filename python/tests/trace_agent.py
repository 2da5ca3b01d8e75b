"""An agent instrumented as users instrument theirs, run against the
loopback judge (which calls each tool it is offered in turn, with the
`default`s of the tool's parameters, then answers with the last tool's
result), its trace exported as OTLP JSON.

    python trace_agent.py INSTRUMENTATION BASE_URL OUT [--parent] [--hex-ids]

INSTRUMENTATION is one of

- `openinference`: Arize's `openinference-instrumentation-openai`
  (`llm.input_messages.*` attributes);
- `openai-v2`: OpenTelemetry's official
  `opentelemetry-instrumentation-openai-v2` (`gen_ai.input.messages`, the
  GenAI semantic conventions), which writes messages on its spans only with
  `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` and
  `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only` in the
  environment;
- `openllmetry`: Traceloop's `opentelemetry-instrumentation-openai`
  (`gen_ai.input.messages` as well).

The agent runs each of `TASKS` on the real `openai` client: without
`--parent` it calls its client directly (each call a root span, a trace of
its own, which assay stitches into conversations); with `--parent` each run
is a span `agent` that parents its calls and a span per tool, and records
the run's reference tool calls on that span (`assay.reference_tool_calls`).

OUT gets the export in the protobuf JSON mapping (base64 ids), or with
`--hex-ids` as a collector's file exporter writes it (hex ids). OUT with
`.runs.jsonl` appended gets one line per run: its trace id in hex (the
parent span's, else its first call's) and the messages the agent held at
its end, in the OpenAI chat format.
"""

import base64
import json
import sys

import openai
from google.protobuf.json_format import MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def _string(value: str) -> dict:
    return {"type": "string", "default": value}


# Every object's keys in alphabetical order (the schema's, so the judge's
# arguments', and the references'): ragas compares a nested argument by its
# `str()`, which keeps the order it was given.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Find flights between two cities.",
            "parameters": {
                "type": "object",
                "properties": {"from": _string("OSL"), "to": _string("FCO")},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_flight",
            "description": "Book a seat on a flight.",
            "parameters": {
                "type": "object",
                "properties": {
                    "flight": _string("SK4711"),
                    "passenger": {
                        "type": "object",
                        "properties": {
                            "name": _string("Ada Lovelace"),
                            "seat": {
                                "type": "object",
                                "properties": {
                                    "letter": _string("C"),
                                    "row": {"type": "integer", "default": 12},
                                },
                            },
                        },
                    },
                },
            },
        },
    },
]

RESULTS = {
    "search_flights": "Flight SK4711 Oslo-Rome at 09:05",
    "book_flight": "Booked flight SK4711, seat 12C.",
}

SEARCH = {"name": "search_flights", "args": {"from": "OSL", "to": "FCO"}}
BOOK = {
    "name": "book_flight",
    "args": {
        "flight": "SK4711",
        "passenger": {"name": "Ada Lovelace", "seat": {"letter": "C", "row": 12}},
    },
}
WINDOW = {
    "name": "book_flight",
    "args": {
        "flight": "SK4711",
        "passenger": {"name": "Ada Lovelace", "seat": {"letter": "A", "row": 12}},
    },
}

# The runs: what the user asks, and the tool calls the agent should make
# (the judge makes SEARCH then BOOK every time): all of them; the right
# tools with a nested argument wrong; one call more than it wants.
TASKS = [
    ("Find a flight Oslo-Rome.", [SEARCH, BOOK]),
    ("Book Ada a window seat to Rome.", [SEARCH, WINDOW]),
    ("Book SK4711 for Ada, seat 12C.", [BOOK]),
]


def _run(client: openai.OpenAI, tracer, question: str, parent: bool) -> list[dict]:
    messages = [
        {"role": "system", "content": "You are a travel assistant."},
        {"role": "user", "content": question},
    ]
    while True:
        reply = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return messages
        for call in message.tool_calls:
            if parent:
                with tracer.start_as_current_span("tool " + call.function.name):
                    result = RESULTS[call.function.name]
            else:
                result = RESULTS[call.function.name]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def main(instrumentation: str, base_url: str, out: str, *flags: str) -> None:
    parent = "--parent" in flags
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if instrumentation == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
    elif instrumentation == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    elif instrumentation == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    else:
        raise SystemExit(f"unknown instrumentation {instrumentation!r}")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = openai.OpenAI(base_url=base_url, api_key="sk-trace-test")
    tracer = provider.get_tracer("travel-agent")
    runs = []
    for question, reference in TASKS:
        if parent:
            with tracer.start_as_current_span("agent") as root:
                root.set_attribute("assay.reference_tool_calls", json.dumps(reference))
                messages = _run(client, tracer, question, parent)
            trace_id = root.get_span_context().trace_id
        else:
            # The run's first call is the first span it ends.
            first = len(exporter.get_finished_spans())
            messages = _run(client, tracer, question, parent)
            trace_id = exporter.get_finished_spans()[first].get_span_context().trace_id
        runs.append({"trace_id": format(trace_id, "032x"), "messages": messages})
    export = MessageToJson(encode_spans(exporter.get_finished_spans()), indent=None)
    if "--hex-ids" in flags:
        export = json.loads(export)
        for resource in export["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64decode(span[key]).hex()
        export = json.dumps(export)
    with open(out, "w") as f:
        f.write(export + "\n")
    with open(out + ".runs.jsonl", "w") as f:
        for run in runs:
            f.write(json.dumps(run) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
