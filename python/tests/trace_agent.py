"""An agent instrumented as users instrument theirs, run against the
loopback judge (which calls the first tool it is offered, then answers
with the tool's result), its trace exported as OTLP JSON.

    python trace_agent.py openinference|openllmetry BASE_URL OUT

`openinference` is Arize's OpenInference instrumentation of the OpenAI
client (`llm.input_messages.*` attributes), exported in the protobuf JSON
mapping (base64 ids); `openllmetry` is Traceloop's OpenTelemetry
instrumentation (`gen_ai.input.messages`, the GenAI semantic
conventions), exported as a collector's file exporter writes it (hex
ids). OUT gets the export; OUT with `.id` appended, the trace id in hex.
"""

import base64
import json
import sys

import openai
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Find flights between two cities.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


def search_flights() -> str:
    return "Flight SK4711 Oslo-Rome at 09:05"


def main(instrumentation: str, base_url: str, out: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if instrumentation == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
    else:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = openai.OpenAI(base_url=base_url, api_key="sk-trace-test")
    tracer = provider.get_tracer("travel-agent")
    with tracer.start_as_current_span("agent") as root:
        messages = [
            {"role": "system", "content": "You are a travel assistant."},
            {"role": "user", "content": "Find a flight Oslo-Rome."},
        ]
        while True:
            reply = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
            message = reply.choices[0].message
            if not message.tool_calls:
                break
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                with tracer.start_as_current_span("tool " + call.function.name):
                    result = search_flights()
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    export = MessageToDict(encode_spans(exporter.get_finished_spans()))
    if instrumentation == "openllmetry":
        for resource in export["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64decode(span[key]).hex()
    with open(out, "w") as f:
        f.write(json.dumps(export) + "\n")
    with open(out + ".id", "w") as f:
        f.write(format(root.get_span_context().trace_id, "032x"))


if __name__ == "__main__":
    main(*sys.argv[1:])
