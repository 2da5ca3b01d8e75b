"""The judged conversation metrics of assay, DeepEval and ragas side by side.

The same conversations (those of the judged bench's conversation suite,
crates/assay-engine/benches/judged.rs: three exchanges, a tool call and its
result, contexts on each reply, a fact the user states; every text naming
its conversation, so nothing is shared across them) are scored by each
library's metric of the same definition, each run against a fresh loopback
judge (`loopback-judge --items 2`: answers follow from assay's prompts; a
prompt of another library gets the simplest value of the schema it asks
for, with lists of two items, so a metric that extracts a list then judges
each item makes those calls) answering after the same latency, with at most
the same number of conversations in flight. Per metric: the judge calls per
conversation the judge counted, the wall time, the most requests the judge
saw at once, and the peer's figures over assay's.

DeepEval 4.3.1 defines knowledge_retention, turn_relevancy,
conversation_completeness and role_adherence; ragas 0.4.3 defines
agent_goal_accuracy (with a reference) and topic_adherence. assay runs
each metric alone, as `assay eval` with `--concurrency` requests in flight;
the peers run `--concurrency` conversations at once (asyncio), each metric
making the calls of a conversation as it does.

Usage: bench/peers/run.sh [--conversations 50] [--latency-ms 200]
[--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

# The peers' clients read a key from the environment; the loopback judge
# ignores it.
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-loopback")
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
# Both peers deprecate the classes their documentation still shows; the
# metrics are the same.
warnings.filterwarnings("ignore", category=DeprecationWarning)

DEEPEVAL = [
    "knowledge_retention",
    "turn_relevancy",
    "conversation_completeness",
    "role_adherence",
]
RAGAS = ["agent_goal_accuracy", "topic_adherence"]


def conversation(i: int) -> dict:
    """Conversation `i`, as the judged bench writes it."""
    args = json.dumps({"flight": f"SK{i}", "seats": 2}, separators=(", ", ": "))
    return {
        "id": f"c{i}",
        "chatbot_role": "a polite travel assistant",
        "reference_topics": ["flights", "hotels"],
        "reference": f"Two seats to Rome {i} are booked",
        "messages": [
            {"role": "system", "content": "You are a travel assistant."},
            {
                "role": "user",
                "content": f"My name is Ada {i}. Which flights go to Rome {i}?",
            },
            {
                "role": "assistant",
                "content": f"Flights to Rome {i} leave daily. SK{i} leaves at nine",
                "retrieved_contexts": [
                    f"Flights to Rome {i} leave daily",
                    f"SK{i} leaves at nine",
                    "Cheese is tasty",
                ],
            },
            {"role": "user", "content": f"Book two seats on SK{i}."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "book_flight", "arguments": args},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": f"booked SK{i}"},
            {
                "role": "assistant",
                "content": f"Two seats on SK{i} are booked, Ada {i}",
                "retrieved_contexts": [f"booked SK{i}"],
            },
            {"role": "user", "content": f"Is there a hotel near Rome {i} airport?"},
            {
                "role": "assistant",
                "content": f"Hotel {i} is near the airport. It has a pool",
                "retrieved_contexts": [
                    f"Hotel {i} is near the airport",
                    "Rome has two airports",
                ],
            },
        ],
    }


class Judge:
    """A loopback judge process: its base URL while it runs, its counts after."""

    def __init__(self, binary: str, latency_ms: int, *flags: str):
        self.proc = subprocess.Popen(
            [binary, "--latency-ms", str(latency_ms), "--items", "2", *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self.proc.stdout.readline().strip()

    def close(self) -> dict[str, int]:
        """Stops the judge; its counts (`requests`, `peak_in_flight`, ...)."""
        out, _ = self.proc.communicate(input="", timeout=60)
        counts = {}
        for line in out.splitlines():
            name, _, value = line.partition(" ")
            if value.isdigit():
                counts[name] = int(value)
        return counts


def deepeval_case(row: dict):
    """The row as DeepEval's ConversationalTestCase: its user and assistant
    turns, a tool call with its result on the turn that made it."""
    from deepeval.test_case import ConversationalTestCase, ToolCall, Turn

    turns, calls = [], {}
    for m in row["messages"]:
        if m["role"] == "user":
            turns.append(Turn(role="user", content=m["content"]))
        elif m["role"] == "assistant" and m.get("tool_calls"):
            tools = []
            for c in m["tool_calls"]:
                call = ToolCall(
                    name=c["function"]["name"],
                    input_parameters=json.loads(c["function"]["arguments"]),
                )
                calls[c["id"]] = call
                tools.append(call)
            turns.append(Turn(role="assistant", content="", tools_called=tools))
        elif m["role"] == "assistant":
            turns.append(
                Turn(
                    role="assistant",
                    content=m["content"],
                    retrieval_context=m.get("retrieved_contexts"),
                )
            )
        elif m["role"] == "tool":
            calls[m["tool_call_id"]].output = m["content"]
    return ConversationalTestCase(turns=turns, chatbot_role=row["chatbot_role"])


def deepeval_metric(name: str, model):
    """DeepEval's metric `name`, judged by `model`."""
    from deepeval.metrics import (
        ConversationCompletenessMetric,
        KnowledgeRetentionMetric,
        RoleAdherenceMetric,
        TurnRelevancyMetric,
    )

    cls = {
        "knowledge_retention": KnowledgeRetentionMetric,
        "turn_relevancy": TurnRelevancyMetric,
        "conversation_completeness": ConversationCompletenessMetric,
        "role_adherence": RoleAdherenceMetric,
    }[name]
    return cls(model=model, async_mode=True)


def ragas_sample(row: dict):
    """The row as ragas' MultiTurnSample, with its reference and topics."""
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    messages = []
    for m in row["messages"]:
        if m["role"] == "user":
            messages.append(HumanMessage(content=m["content"]))
        elif m["role"] == "assistant":
            calls = [
                ToolCall(
                    name=c["function"]["name"],
                    args=json.loads(c["function"]["arguments"]),
                )
                for c in m.get("tool_calls") or []
            ]
            messages.append(
                AIMessage(content=m["content"] or "", tool_calls=calls or None)
            )
        elif m["role"] == "tool":
            messages.append(ToolMessage(content=m["content"]))
    return MultiTurnSample(
        user_input=messages,
        reference=row["reference"],
        reference_topics=row["reference_topics"],
    )


def ragas_metric(name: str, url: str):
    """ragas' metric `name`, judged through LangChain's OpenAI client."""
    from langchain_openai import ChatOpenAI
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import AgentGoalAccuracyWithReference, TopicAdherenceScore

    llm = LangchainLLMWrapper(ChatOpenAI(model="bench", base_url=url, temperature=0))
    if name == "agent_goal_accuracy":
        return AgentGoalAccuracyWithReference(llm=llm)
    return TopicAdherenceScore(llm=llm, mode="f1")


async def peer_run(
    name: str, url: str, rows: list[dict], concurrency: int
) -> list[float]:
    """Scores `rows` with the peer's metric `name` against the judge at
    `url`, at most `concurrency` conversations at once; their scores (NaN
    where the peer failed)."""
    if name in DEEPEVAL:
        from deepeval.models import OpenAIModel

        cases = [deepeval_case(r) for r in rows]
        # A model name DeepEval knows to take structured outputs, so it
        # sends each schema as `response_format`, as it does for OpenAI's.
        model = OpenAIModel(model="gpt-4.1", base_url=url, temperature=0)

        def score(case):
            # A metric keeps one case's state: one per case, as DeepEval's
            # evaluate() copies them.
            return deepeval_metric(name, model).a_measure(case, _show_indicator=False)

    else:
        cases = [ragas_sample(r) for r in rows]
        metric = ragas_metric(name, url)

        def score(case):
            return metric.multi_turn_ascore(case)

    gate = asyncio.Semaphore(concurrency)

    async def one(case):
        async with gate:
            return await score(case)

    return await asyncio.gather(*(one(c) for c in cases))


def run_assay(assay: str, name: str, url: str, data: Path, concurrency: int) -> int:
    """Runs `assay eval -m NAME` on `data` against the judge at `url`; the
    number of conversations it scored."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            [
                assay,
                "eval",
                str(data),
                "-m",
                name,
                "--judge",
                "openai:bench",
                "--base-url",
                url,
                "--concurrency",
                str(concurrency),
                "--no-cache",
                "--out",
                out,
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"assay eval -m {name} failed: {done.stderr[-2000:]}")
        summary = json.loads(Path(out, "summary.json").read_text())
    return next(o["n_scored"] for o in summary["outputs"] if o["metric"] == name)


def measure(
    judge_bin: str, latency: int, work, *flags: str
) -> tuple[float, dict[str, int], object]:
    """Runs `work(url)` against a fresh loopback judge (given `flags` too);
    its wall time, the judge's counts and what it returned."""
    judge = Judge(judge_bin, latency, *flags)
    started = time.perf_counter()
    try:
        result = work(judge.url)
    finally:
        wall = time.perf_counter() - started
        counts = judge.close()
    return wall, counts, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assay", required=True, help="the assay binary")
    parser.add_argument("--judge", required=True, help="the loopback-judge binary")
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    # Imported before anything is timed: a peer's first metric would
    # otherwise carry its import time (seconds).
    import deepeval.metrics  # noqa: F401
    import langchain_openai  # noqa: F401
    import ragas.metrics  # noqa: F401

    rows = [conversation(i) for i in range(args.conversations)]
    # One loop for every peer run: the peers' HTTP clients outlive a run
    # and close on the loop they were made on.
    loop = asyncio.new_event_loop()
    n = len(rows)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp, "conversations.jsonl")
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(
            f"{n} conversations, latency {args.latency_ms} ms, "
            f"{args.concurrency} in flight, no cache"
        )
        header = (
            f"  {'metric':<26} {'library':<13} {'calls/conv':>10} {'wall s':>8} "
            f"{'peak':>5} {'scored':>7}   peer/assay: calls  wall"
        )
        print(header)
        for name in DEEPEVAL + RAGAS:
            wall, counts, scored = measure(
                args.judge,
                args.latency_ms,
                lambda url, name=name: run_assay(
                    args.assay, name, url, data, args.concurrency
                ),
            )
            mine = (counts["requests"] / n, wall)
            print(
                f"  {name:<26} {'assay':<13} {mine[0]:>10.2f} {wall:>8.2f} "
                f"{counts.get('peak_in_flight', 0):>5} {scored:>7}"
            )
            library = "deepeval 4.3.1" if name in DEEPEVAL else "ragas 0.4.3"
            wall, counts, scores = measure(
                args.judge,
                args.latency_ms,
                lambda url, name=name: loop.run_until_complete(
                    peer_run(name, url, rows, args.concurrency)
                ),
            )
            calls = counts["requests"] / n
            scored = sum(1 for s in scores if s == s)
            print(
                f"  {'':<26} {library:<13} {calls:>10.2f} {wall:>8.2f} "
                f"{counts.get('peak_in_flight', 0):>5} {scored:>7}   "
                f"{calls / mine[0]:>6.2f}x {wall / mine[1]:>5.2f}x"
            )


if __name__ == "__main__":
    main()
