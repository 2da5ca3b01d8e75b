#!/usr/bin/env python3
"""Builds the tool-call parity set: conversations (OpenAI chat format) with
reference tool calls, each scored by the real reference code.

    python3 -m venv /tmp/v31 && /tmp/v31/bin/pip install ragas==0.4.3 deepeval==4.3.1
    /tmp/v31/bin/python crates/assay-metrics/tests/data/tool_calls/generate.py

writes, beside this script, cases.jsonl (one row per case: `id`,
`messages`, `reference_tool_calls`, and `expected`, the reference numbers
per metric and parameter setting) and provenance.json.

No LLM is involved:
- ragas: `ragas.metrics.ToolCallAccuracy(strict_order=...)` and
  `ragas.metrics.ToolCallF1()`, called through `multi_turn_ascore` on a
  `ragas.MultiTurnSample` (so its message-order validator runs). The
  newer `ragas.metrics.collections` classes are run too and must agree.
- DeepEval: `ToolCorrectnessMetric(model=Dummy(), async_mode=False,
  ...)` measured on an `LLMTestCase`; `Dummy` is a `DeepEvalBaseLLM` whose
  every method raises, so any call to a model would fail the script
  (without `available_tools` none is made).

The conversation is mapped to each library as its users would: system
messages are dropped for ragas (it has none), a null content is "", an
assistant's calls are `ToolCall(name, args=json.loads(arguments))` for
ragas and `ToolCall(name, input_parameters=...)` for DeepEval, in message
order.

Nested objects inside arguments are generated with their keys sorted:
assay reads JSON objects with sorted keys, while ragas compares
`str(value)`, which follows the input's key order (see docs/tool-calls.md).
"""

import asyncio
import json
import os
import random
import sys
import warnings
from importlib.metadata import version

warnings.filterwarnings("ignore")

SEED = 31
# No telemetry from either library.
os.environ["RAGAS_DO_NOT_TRACK"] = "true"
os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))

from ragas import MultiTurnSample  # noqa: E402
from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage  # noqa: E402
from ragas.metrics import ToolCallAccuracy, ToolCallF1  # noqa: E402
from ragas.metrics.collections import ToolCallAccuracy as NewAccuracy  # noqa: E402
from ragas.metrics.collections import ToolCallF1 as NewF1  # noqa: E402

from deepeval.metrics import ToolCorrectnessMetric  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase, ToolCallParams  # noqa: E402
from deepeval.test_case import ToolCall as DToolCall  # noqa: E402


class Dummy(DeepEvalBaseLLM):
    """A model that must never be called."""

    def __init__(self):
        self.model = None

    def load_model(self):
        return None

    def generate(self, *a, **k):
        raise AssertionError("the dummy model was called")

    async def a_generate(self, *a, **k):
        raise AssertionError("the dummy model was called")

    def get_model_name(self):
        return "dummy-never-called"


# ---------------------------------------------------------------- cases

NAMES = ["search", "weather", "book_flight", "convert", "get_time", "ünïcode_tool"]
KEYS = ["city", "days", "q", "unit", "filters", "limit", "ø"]
LEAVES = [
    1, 2, 0, -3, 1.0, 2.5, 0.1, 1e-05, 0.0001, 1e16, 123456789012345.6, 1.5e300,
    "1", "1.0", "True", "None", "Oslo", "oslo", "", "it's", 'say "hi"', "a\\b",
    "line\nbreak", "tab\tin", "ünïcødé", "日本語", "emoji 🎉", "nbsp\u00a0x", "zw\u200bsp",
    True, False, None,
]


def leaf(rng):
    return rng.choice(LEAVES)


def value(rng, depth=0):
    r = rng.random()
    if depth < 2 and r < 0.12:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 2 and r < 0.22:
        keys = sorted(rng.sample(KEYS, rng.randint(1, 3)))
        return {k: value(rng, depth + 1) for k in keys}
    return leaf(rng)


def args(rng):
    keys = rng.sample(KEYS, rng.randint(0, 3))
    return {k: value(rng) for k in keys}


def mutate_value(rng, v):
    """A value that may or may not compare equal to v, in either library."""
    if isinstance(v, bool):
        return rng.choice([int(v), str(v), not v])
    if isinstance(v, int):
        return rng.choice([float(v), str(v), v + 1, bool(v)])
    if isinstance(v, float):
        return rng.choice([int(v) if v.is_integer() and abs(v) < 1e15 else v * 2, str(v), -v])
    if isinstance(v, str):
        return rng.choice([v.upper(), v + " ", "", 1])
    if isinstance(v, dict) and v:
        k = rng.choice(sorted(v))
        w = dict(v)
        w[k] = mutate_value(rng, v[k])
        return w
    if isinstance(v, list):
        return list(reversed(v)) if len(v) > 1 else v + [1]
    return rng.choice([0, "None", False])


def mutate_call(rng, call):
    name, a = call["name"], dict(call["args"])
    op = rng.randrange(5)
    if op == 0:
        name = rng.choice(NAMES)
    elif op == 1 and a:
        k = rng.choice(sorted(a))
        a[k] = mutate_value(rng, a[k])
    elif op == 2:
        a[rng.choice(KEYS)] = value(rng)
    elif op == 3 and a:
        del a[rng.choice(sorted(a))]
    else:
        a = {k: a[k] for k in reversed(list(a))}  # key order only
    return {"name": name, "args": a}


def predicted(rng, ref):
    pred = [dict(c) for c in ref]
    if pred and rng.random() < 0.4:
        # Arguments only: the calls stay aligned, their arguments differ.
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(pred))
            a = dict(pred[i]["args"])
            if a:
                k = rng.choice(sorted(a))
                a[k] = mutate_value(rng, a[k])
            else:
                a[rng.choice(KEYS)] = value(rng)
            pred[i] = {"name": pred[i]["name"], "args": a}
        return pred
    for _ in range(rng.randint(0, 3)):
        op = rng.randrange(6)
        if op == 0 and pred:
            pred.pop(rng.randrange(len(pred)))
        elif op == 1 and pred:
            i = rng.randrange(len(pred))
            pred.insert(i, dict(pred[i]))
        elif op == 2 and len(pred) > 1:
            i, j = rng.sample(range(len(pred)), 2)
            pred[i], pred[j] = pred[j], pred[i]
        elif op == 3 and pred:
            i = rng.randrange(len(pred))
            pred[i] = mutate_call(rng, pred[i])
        elif op == 4:
            pred.insert(rng.randint(0, len(pred)), {"name": rng.choice(NAMES), "args": args(rng)})
        # op 5: leave as is
    return pred


def conversation(rng, calls, system=True):
    """OpenAI messages whose assistant turns make `calls`, in order, each
    turn's results following it."""
    msgs = []
    if system and rng.random() < 0.5:
        msgs.append({"role": "system", "content": "You are an agent."})
    msgs.append({"role": "user", "content": "Help me, please."})
    n = 0
    i = 0
    while i < len(calls):
        k = rng.randint(1, 3)
        turn = calls[i:i + k]
        i += k
        tcs = []
        for c in turn:
            n += 1
            text = json.dumps(c["args"], ensure_ascii=rng.random() < 0.5)
            tcs.append({"id": f"call_{n}", "type": "function",
                        "function": {"name": c["name"], "arguments": text}})
        msgs.append({"role": "assistant", "content": None if rng.random() < 0.5 else "", "tool_calls": tcs})
        for tc in tcs:
            msgs.append({"role": "tool", "tool_call_id": tc["id"], "content": "ok"})
        if rng.random() < 0.3:
            msgs.append({"role": "user", "content": "And then?"})
    msgs.append({"role": "assistant", "content": "Done."})
    return msgs


def hand_picked():
    """(name, reference calls, predicted calls) cases chosen by hand."""
    w = lambda **a: {"name": "weather", "args": a}  # noqa: E731
    s = lambda **a: {"name": "search", "args": a}  # noqa: E731
    return [
        ("both-empty", [], []),
        ("no-prediction", [w(city="Oslo")], []),
        ("no-reference", [], [w(city="Oslo")]),
        ("exact", [w(city="Oslo"), s(q="x")], [w(city="Oslo"), s(q="x")]),
        ("order-swap", [w(city="Oslo"), s(q="x")], [s(q="x"), w(city="Oslo")]),
        ("repeated-identical", [w(city="Oslo"), w(city="Oslo")], [w(city="Oslo"), w(city="Oslo")]),
        ("repeated-pred", [w(city="Oslo")], [w(city="Oslo"), w(city="Oslo")]),
        ("repeated-ref", [w(city="Oslo"), w(city="Oslo")], [w(city="Oslo")]),
        ("same-name-other-args", [w(city="Oslo"), w(city="Rome")], [w(city="Oslo"), w(city="Oslo")]),
        ("int-vs-float", [w(days=1)], [w(days=1.0)]),
        ("int-vs-string", [w(days=1)], [w(days="1")]),
        ("bool-vs-int", [w(days=True)], [w(days=1)]),
        ("bool-vs-string", [w(flag=True)], [w(flag="True")]),
        ("null-vs-string", [w(x=None)], [w(x="None")]),
        ("extra-arg", [w(city="Oslo")], [w(city="Oslo", unit="C")]),
        ("missing-arg", [w(city="Oslo", unit="C")], [w(city="Oslo")]),
        ("empty-args-both", [w()], [w()]),
        ("empty-ref-args", [w()], [w(city="Oslo")]),
        ("empty-pred-args", [w(city="Oslo")], [w()]),
        ("nested-partial", [w(f={"a": 1, "b": 2})], [w(f={"a": 1, "b": 3})]),
        ("nested-deep", [w(f={"a": {"b": 1, "c": 2}, "d": 3})], [w(f={"a": {"b": 1, "c": 9}, "d": 3})]),
        ("list-order", [w(days=[1, 2])], [w(days=[2, 1])]),
        ("list-int-float", [w(days=[1, 2])], [w(days=[1.0, 2])]),
        ("float-repr", [w(x=1e-05)], [w(x=0.00001)]),
        ("float-big", [w(x=1e16)], [w(x=10000000000000000)]),
        ("unicode-name", [{"name": "ünïcode_tool", "args": {"ø": "日本"}}], [{"name": "ünïcode_tool", "args": {"ø": "日本"}}]),
        ("unicode-nested", [w(f=["é", "日本\u00a0"])], [w(f=["é", "日本\u00a0"])]),
        ("quote-nested", [w(f=["it's", 'say "hi"'])], [w(f=["it's", 'say "hi"'])]),
        ("wrong-tool", [w(city="Oslo")], [s(city="Oslo")]),
        ("missing-call", [w(city="Oslo"), s(q="x")], [w(city="Oslo")]),
        ("extra-call", [w(city="Oslo")], [w(city="Oslo"), s(q="x")]),
        ("lcs-partial", [w(a=1), s(q="x"), w(a=2)], [s(q="x"), w(a=1), w(a=2)]),
        ("three-way-ties", [w(a=1, b=2), w(a=1, b=3)], [w(a=1, b=9), w(a=1, b=2)]),
        ("sort-by-str-args", [w(a=10), w(a=9)], [w(a=9), w(a=10)]),
        ("f1-1-32", [w(a=1)] + [s(q=str(i)) for i in range(31)], [w(a=1)] + [s(q=str(i)) for i in range(31, 62)]),
    ]


def cases(rng):
    out = []
    for name, ref, pred in hand_picked():
        out.append((f"hand-{name}", ref, pred))
    for i in range(400):
        ref = [{"name": rng.choice(NAMES), "args": args(rng)} for _ in range(rng.randint(0, 4))]
        out.append((f"gen-{i:03d}", ref, predicted(rng, ref)))
    return out


# ---------------------------------------------------------------- references

def ragas_messages(msgs):
    out = []
    for m in msgs:
        content = m.get("content") or ""
        if m["role"] == "user":
            out.append(HumanMessage(content=content))
        elif m["role"] == "assistant":
            tcs = [ToolCall(name=tc["function"]["name"], args=json.loads(tc["function"]["arguments"]))
                   for tc in m.get("tool_calls") or []]
            out.append(AIMessage(content=content, tool_calls=tcs or None))
        elif m["role"] == "tool":
            out.append(ToolMessage(content=content))
    return out


def predicted_calls(msgs):
    return [(tc["function"]["name"], json.loads(tc["function"]["arguments"]))
            for m in msgs if m["role"] == "assistant" for tc in m.get("tool_calls") or []]


def score_ragas(msgs, ref):
    user_input = ragas_messages(msgs)
    refs = [ToolCall(name=c["name"], args=c["args"]) for c in ref]
    sample = MultiTurnSample(user_input=user_input, reference_tool_calls=refs)
    out = {"tool_call_accuracy": {}, "tool_call_f1": {}}
    for strict in (True, False):
        v = asyncio.run(ToolCallAccuracy(strict_order=strict).multi_turn_ascore(sample))
        new = asyncio.run(NewAccuracy(strict_order=strict).ascore(user_input, refs)).value
        assert v == new, (v, new)
        out["tool_call_accuracy"][f"strict_order={str(strict).lower()}"] = v
    v = asyncio.run(ToolCallF1().multi_turn_ascore(sample))
    new = asyncio.run(NewF1().ascore(user_input, refs)).value
    assert v == new, (v, new)
    out["tool_call_f1"][""] = v
    return out


def score_deepeval(msgs, ref):
    called = [DToolCall(name=n, input_parameters=a) for n, a in predicted_calls(msgs)]
    expected = [DToolCall(name=c["name"], input_parameters=c["args"]) for c in ref]
    out = {}
    for ordering in (False, True):
        for exact in (False, True):
            for params in (False, True):
                metric = ToolCorrectnessMetric(
                    model=Dummy(), async_mode=False, include_reason=True,
                    should_consider_ordering=ordering, should_exact_match=exact,
                    evaluation_params=[ToolCallParams.INPUT_PARAMETERS] if params else [],
                )
                case = LLMTestCase(input="Help me, please.", tools_called=called, expected_tools=expected)
                v = metric.measure(case, _show_indicator=False)
                key = (f"consider_ordering={str(ordering).lower()},exact_match={str(exact).lower()},"
                       f"input_parameters={str(params).lower()}")
                out[key] = float(v)
    return {"tool_correctness": out}


def main():
    rng = random.Random(SEED)
    rows = []
    for cid, ref, pred in cases(rng):
        msgs = conversation(rng, pred)
        expected = score_ragas(msgs, ref)
        expected.update(score_deepeval(msgs, ref))
        rows.append({"id": cid, "messages": msgs, "reference_tool_calls": ref, "expected": expected})
    with open(os.path.join(HERE, "cases.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    provenance = {
        "what": "tool-call parity set: expected values of ragas ToolCallAccuracy / ToolCallF1 and DeepEval "
                "ToolCorrectnessMetric (no available_tools, no model call) on each row of cases.jsonl",
        "command": "/tmp/v31/bin/python crates/assay-metrics/tests/data/tool_calls/generate.py",
        "seed": SEED,
        "cases": len(rows),
        "python": sys.version.split()[0],
        "ragas": version("ragas"),
        "deepeval": version("deepeval"),
        "pydantic": version("pydantic"),
        "langchain-community": version("langchain-community"),
        "note": "ragas 0.4.3 does not import with langchain-community 0.4 (no chat_models.vertexai): "
                "install langchain-community<0.4 beside it",
        "how": __doc__.strip(),
    }
    with open(os.path.join(HERE, "provenance.json"), "w", encoding="utf-8") as f:
        json.dump(provenance, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"{len(rows)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
