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
order (`arguments` given as a JSON value rather than text is taken as it
is).

After the hand-picked and the 400 generated cases come four kinds of
input (issue 45), each a few cases by hand and KIND_CASES generated from
a seed of its own: nested objects in another key order (`nested-order`),
arguments holding the `str()` of the other side's value (`repr-string`),
several calls of one tool under `strict_order=false` (`same-tool`), and
null arguments (`null-args`). Where a reference raises, the value is
`{"error": "Type: message"}`: ragas' `ToolCall` refuses null arguments
(pydantic's ValidationError, for every ragas value), and DeepEval's
`_compare_dicts` reads None parameters (AttributeError, with
`input_parameters` when such a call meets an expected tool of its name).
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

from pydantic import ValidationError  # noqa: E402
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
            if c.get("literal_null"):
                text = None  # `"arguments": null` rather than `"null"`
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
    for kind, make in KINDS.items():
        # A generator of its own per kind, so that each kind's cases stay
        # as they are when another kind changes.
        krng = random.Random(f"{SEED}-{kind}")
        for name, ref, pred in KIND_HAND_PICKED[kind]:
            out.append((f"{kind}-hand-{name}", ref, pred))
        for i in range(KIND_CASES):
            ref, pred = make(krng)
            out.append((f"{kind}-{i:03d}", ref, pred))
    return out


# ---------------------------------------------------------------- four kinds
# Inputs a new user met where assay disagreed (issue 45): nested objects in
# another key order, strings holding Python's repr of the reference value,
# several calls of one tool without strict order, and null arguments.

KIND_CASES = 80
# Leaves whose str() is easy to get wrong: repr of floats, None, booleans,
# quotes, escapes and non-ASCII (printable or not).
REPR_LEAVES = [
    None, False, True, 0, -7, 10, 9, 1e-05, 0.0001, 2.5e-07, 0.1, 1.0, -0.0, 1e16, 1.5e300,
    123456789012345.6, "", "Oslo", "Zürich", "日本語", "emoji 🎉", "it's", 'say "hi"',
    "both ' and \"", "a\\b", "line\nbreak", "tab\tin", "nbsp\u00a0x", "zw\u200bsp", "None", "False",
]
NESTED_KEYS = ["b", "a", "z", "city", "unit", "é", "ø", "Z", "10", "9"]


def nested(rng, depth=0):
    """A value with objects in it, their keys in a random order."""
    r = rng.random()
    if depth < 3 and r < 0.45:
        keys = rng.sample(NESTED_KEYS, rng.randint(2, 4))
        return {k: nested(rng, depth + 1) for k in keys}
    if depth < 3 and r < 0.6:
        return [nested(rng, depth + 1) for _ in range(rng.randint(1, 3))]
    return rng.choice(REPR_LEAVES)


def reordered(rng, v, p):
    """v with the keys of each object shuffled with probability p."""
    if isinstance(v, dict):
        keys = list(v)
        if rng.random() < p:
            rng.shuffle(keys)
        return {k: reordered(rng, v[k], p) for k in keys}
    if isinstance(v, list):
        return [reordered(rng, x, p) for x in v]
    return v


def nested_order(rng):
    """Nested objects compared in the same or another key order."""
    ref = []
    for _ in range(rng.randint(1, 3)):
        a = {}
        for k in rng.sample(KEYS, rng.randint(1, 3)):
            a[k] = {n: nested(rng, 1) for n in rng.sample(NESTED_KEYS, rng.randint(2, 4))} \
                if rng.random() < 0.7 else nested(rng, 1)
        ref.append({"name": rng.choice(NAMES[:3]), "args": a})
    pred = []
    for c in ref:
        a = reordered(rng, c["args"], rng.choice([0.0, 0.5, 1.0]))
        if a and rng.random() < 0.2:
            k = rng.choice(sorted(a))
            a[k] = mutate_value(rng, a[k])
        pred.append({"name": c["name"], "args": a})
    if len(pred) > 1 and rng.random() < 0.3:
        rng.shuffle(pred)
    return ref, pred


def repr_string(rng):
    """Arguments given as the str() of the other side's value, or of one
    close to it."""
    ref, pred = [], []
    for _ in range(rng.randint(1, 3)):
        r, p = {}, {}
        for k in rng.sample(KEYS, rng.randint(1, 3)):
            v = nested(rng, rng.choice([1, 2, 3]))
            op = rng.random()
            if op < 0.55:
                r[k], p[k] = v, str(v)
            elif op < 0.7:
                r[k], p[k] = str(v), v  # the reference holds the text
            elif op < 0.8:
                r[k], p[k] = v, str(reordered(rng, v, 1.0))
            elif op < 0.9:
                r[k], p[k] = v, json.dumps(v, ensure_ascii=rng.random() < 0.5)
            else:
                r[k], p[k] = v, repr(v) if isinstance(v, str) else str(mutate_value(rng, v))
        name = rng.choice(NAMES[:3])
        ref.append({"name": name, "args": r})
        pred.append({"name": name, "args": p})
    return ref, pred


SAME_TOOL_VALUES = [
    9, 10, 100, -1, 1.0, 1e-05, 0.0001, 1e16, "9", "10", "a", "B", "b", "é", "Z", "日本", "x", "x ",
    None, True, False, [1, 2], [2], {"b": 1, "a": 2}, {"a": 2, "b": 1}, "ünïcode", "nbsp\u00a0x",
]


def same_tool(rng):
    """Several calls of one tool with different arguments, in another
    order: what strict_order=false sorts. Calls sort by the str() of their
    arguments, so most cases sort by an object's, which follows its key
    order; the others by scalars (10 before 9, "B" before "a")."""
    tools = rng.sample(NAMES, rng.randint(1, 2))
    by_object = rng.random() < 0.6
    ref = []
    for _ in range(rng.randint(2, 5)):
        if by_object:
            keys = rng.sample(["b", "a", "z", "y"], rng.randint(2, 3))
            a = {"f": {k: rng.randint(0, 2) for k in keys}, "q": rng.choice(SAME_TOOL_VALUES)}
        else:
            keys = rng.sample(["q", "limit", "ø", "city", "Unit"], rng.randint(0, 3))
            a = {k: rng.choice(SAME_TOOL_VALUES) for k in keys}
        ref.append({"name": rng.choice(tools), "args": a})
    # The same calls in another order, most objects' keys in another order.
    pred = [{"name": c["name"], "args": reordered(rng, c["args"], 0.6)} for c in ref]
    rng.shuffle(pred)
    for _ in range(rng.randint(0, 2)):
        i = rng.randrange(len(pred))
        a = pred[i]["args"]
        op = rng.randrange(5)
        if op == 0 and a:
            a[rng.choice(sorted(a))] = rng.choice(SAME_TOOL_VALUES)
        elif op == 1:
            a[rng.choice(["q", "limit", "ø"])] = rng.choice(SAME_TOOL_VALUES)
        elif op == 2:
            pred[i]["args"] = {k: a[k] for k in reversed(list(a))}
        elif op == 3:
            pred[i]["args"] = reordered(rng, a, 1.0)  # nested key order only
        else:
            pred.insert(rng.randint(0, len(pred)), {"name": pred[i]["name"], "args": dict(a)})
    return ref, pred


def null_arguments(rng):
    """Calls whose arguments are JSON null, as text ("null") or as the
    value itself."""
    name = rng.choice(NAMES[:3])
    ref = []
    for _ in range(rng.randint(0, 3)):
        ref.append({"name": name if rng.random() < 0.7 else rng.choice(NAMES),
                    "args": rng.choice([{}, {}, {"q": "x"}, args(rng)])})
    pred = [{"name": c["name"], "args": dict(c["args"])} for c in ref]
    for _ in range(rng.randint(1, 2)):
        call = {"name": name if rng.random() < 0.8 else rng.choice(NAMES), "args": None}
        if rng.random() < 0.5:
            call["literal_null"] = True
        if pred and rng.random() < 0.5:
            pred[rng.randrange(len(pred))] = call
        else:
            pred.insert(rng.randint(0, len(pred)), call)
    if len(pred) > 1 and rng.random() < 0.3:
        rng.shuffle(pred)
    return ref, pred


KINDS = {
    "nested-order": nested_order,
    "repr-string": repr_string,
    "same-tool": same_tool,
    "null-args": null_arguments,
}


def kind_hand_picked():
    w = lambda **a: {"name": "weather", "args": a}  # noqa: E731
    null = {"name": "weather", "args": None}
    literal = {"name": "weather", "args": None, "literal_null": True}
    v = {"b": None, "a": False, "c": 1e-05, "d": "Zürich", "e": [True, "日本\u00a0"]}
    return {
        "nested-order": [
            ("swapped", [w(f={"b": 1, "a": 2})], [w(f={"a": 2, "b": 1})]),
            ("same", [w(f={"b": 1, "a": 2})], [w(f={"b": 1, "a": 2})]),
            ("deep", [w(f={"x": {"b": 1, "a": 2}}, g=1)], [w(g=1, f={"x": {"a": 2, "b": 1}})]),
            ("in-list", [w(f=[{"b": 1, "a": 2}])], [w(f=[{"a": 2, "b": 1}])]),
        ],
        "repr-string": [
            ("object", [w(f=v)], [w(f=str(v))]),
            ("reference-holds-text", [w(f=str(v))], [w(f=v)]),
            ("none", [w(f=None)], [w(f="None")]),
            ("false", [w(f=False)], [w(f="False")]),
            ("small-float", [w(f=1e-05)], [w(f="1e-05")]),
            ("list", [w(f=[None, 1e-05, "é"])], [w(f="[None, 1e-05, 'é']")]),
            ("json-not-repr", [w(f=v)], [w(f=json.dumps(v))]),
        ],
        "same-tool": [
            ("ten-nine", [w(a=9), w(a=10)], [w(a=10), w(a=9)]),
            ("key-sets", [w(q="x"), w(limit=1, q="x")], [w(limit=1, q="x"), w(q="y")]),
            ("case", [w(q="b"), w(q="B"), w(q="a")], [w(q="a"), w(q="b"), w(q="B")]),
            ("unicode", [w(q="é"), w(q="z")], [w(q="z"), w(q="e")]),
            ("nested-str-order", [w(f={"z": 1, "a": 2}, g=1), w(f={"b": 1, "y": 0}, g=2)],
             [w(f={"b": 1, "y": 0}, g=1), w(f={"z": 1, "a": 2}, g=2)]),
        ],
        "null-args": [
            ("text-vs-empty", [w()], [null]),
            ("literal-vs-empty", [w()], [literal]),
            ("vs-args", [w(q="x")], [null]),
            ("no-reference", [], [null]),
            ("with-empty", [w(), w()], [null, w()]),
            ("other-name", [{"name": "search", "args": {"q": "x"}}], [null]),
        ],
    }


KIND_HAND_PICKED = kind_hand_picked()


# ---------------------------------------------------------------- references

def call_args(function):
    """A call's arguments as a user reads them: the JSON text parsed, a
    value given directly as it is (`null` then stays None)."""
    a = function["arguments"]
    return json.loads(a) if isinstance(a, str) else a


def ragas_messages(msgs):
    out = []
    for m in msgs:
        content = m.get("content") or ""
        if m["role"] == "user":
            out.append(HumanMessage(content=content))
        elif m["role"] == "assistant":
            tcs = [ToolCall(name=tc["function"]["name"], args=call_args(tc["function"]))
                   for tc in m.get("tool_calls") or []]
            out.append(AIMessage(content=content, tool_calls=tcs or None))
        elif m["role"] == "tool":
            out.append(ToolMessage(content=content))
    return out


def predicted_calls(msgs):
    return [(tc["function"]["name"], call_args(tc["function"]))
            for m in msgs if m["role"] == "assistant" for tc in m.get("tool_calls") or []]


def error(e):
    """What a reference raised, recorded in place of its value."""
    return {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}


def score_ragas(msgs, ref):
    """ragas' values, or, where it refuses the conversation (its ToolCall
    takes no null arguments), the error under each value's setting."""
    try:
        user_input = ragas_messages(msgs)
    except ValidationError as e:
        return {"tool_call_accuracy": {"strict_order=true": error(e), "strict_order=false": error(e)},
                "tool_call_f1": {"": error(e)}}
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
                key = (f"consider_ordering={str(ordering).lower()},exact_match={str(exact).lower()},"
                       f"input_parameters={str(params).lower()}")
                try:
                    out[key] = float(metric.measure(case, _show_indicator=False))
                except AttributeError as e:
                    # `_compare_dicts` on None parameters (null arguments).
                    if all(c.input_parameters is not None for c in called + expected):
                        raise
                    out[key] = error(e)
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
