"""`assay.evaluate` end to end against the loopback judge (a real server in
its own process), compared with the `assay` command the wheel installs."""

import asyncio
import inspect
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import types

import datasets
import pandas as pd
import pyarrow as pa
import pytest
from conftest import EXAMPLE, KEY, Judge

import assay

METRICS = ["faithfulness", "answer_relevance", "context_precision", "rouge"]


def rows():
    return [json.loads(line) for line in EXAMPLE.open()]


def records_of(path):
    with open(path) as f:
        return sorted((json.loads(line) for line in f), key=lambda r: (r["row"], r["metric"]))


def by_key(records):
    return sorted(records, key=lambda r: (r["row"], r["metric"]))


def test_deepeval_conversational_test_cases_score_as_their_chat_spelling(tmp_path, judge):
    # Telemetry off before deepeval is imported (and its pytest plugin is
    # not loaded: pyproject's addopts).
    os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "YES"
    from deepeval.test_case import ConversationalTestCase, ToolCall, Turn

    def case(row):
        # DeepEval's turns are the user's and the assistant's; a call's
        # result is its `output`, not a message of its own.
        turns, results = (
            [],
            {m["tool_call_id"]: m["content"] for m in row["messages"] if m["role"] == "tool"},
        )
        for m in row["messages"]:
            if m["role"] == "user":
                turns.append(Turn(role="user", content=m["content"]))
            elif m["role"] == "assistant":
                calls = [
                    ToolCall(
                        name=c["function"]["name"],
                        input_parameters=json.loads(c["function"]["arguments"]),
                        output=results[c["id"]],
                    )
                    for c in m.get("tool_calls", [])
                ]
                turns.append(
                    Turn(role="assistant", content=m["content"] or "", tools_called=calls or None)
                )
        return ConversationalTestCase(turns=turns, chatbot_role=row["chatbot_role"])

    agent = EXAMPLE.parent / "agent.jsonl"
    chats = [json.loads(line) for line in agent.open()]
    chats = [
        {
            "messages": [m for m in c["messages"] if m["role"] != "system"],
            "chatbot_role": c.get("chatbot_role", "a travel assistant"),
        }
        for c in chats
    ]
    metrics = ["role_adherence", "argument_correctness", "task_completion"]
    kwargs = judge.kwargs(tmp_path)
    want = by_key(assay.evaluate(chats, metrics, **kwargs).records)
    got = by_key(assay.evaluate([case(c) for c in chats], metrics, **kwargs).records)

    # Evidence names a message by its place in its input: DeepEval's turns
    # hold no tool messages, so the places differ and nothing else does.
    def placeless(records):
        return re.sub(r"messages\[\d+\]", "messages[N]", json.dumps(records, sort_keys=True))

    assert placeless(got) == placeless(want)
    assert got != want, "a call's place in DeepEval's turns is its own"
    assert len(want) == len(chats) * len(metrics)
    assert {r["status"] for r in want} == {"scored", "skipped"}, want
    calls = [r for r in want if r["metric"] == "argument_correctness" and r["status"] == "scored"]
    assert calls and any(r["value"] < 1 for r in calls), "the wrong argument is found"


def test_same_records_as_the_command_line(tmp_path, judge, assay_command):
    cli_out = tmp_path / "cli"
    done = subprocess.run(
        [
            str(assay_command),
            "eval",
            str(EXAMPLE),
            "-m",
            ",".join(METRICS),
            "--set",
            "rouge.use_stemmer=true",
            "--judge",
            "openai:judge-model",
            "--base-url",
            judge.base_url,
            "--cache",
            str(tmp_path / "cli-cache.sqlite"),
            "--out",
            str(cli_out),
            "--format",
            "json",
        ],
        env={**os.environ, "OPENAI_API_KEY": KEY},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    result = assay.evaluate(
        EXAMPLE,
        METRICS,
        params={"rouge.use_stemmer": True},
        out=tmp_path / "py",
        **judge.kwargs(tmp_path),
    )
    cli = records_of(cli_out / "results.jsonl")
    assert by_key(result.records) == cli
    assert len(cli) == 10 * (3 + 4)
    cli_summary = json.loads(done.stdout)
    assert result.means() == {o["name"]: o.get("mean") for o in cli_summary["outputs"]}
    # The judge's verdicts come back per sample.
    faithful = [r for r in result.records if r["metric"] == "faithfulness"]
    assert any(r["status"] == "scored" and r["details"]["statements"] for r in faithful)


def test_in_memory_containers_give_the_records_of_the_file(tmp_path, judge):
    kwargs = judge.kwargs(tmp_path)
    want = by_key(assay.evaluate(EXAMPLE, METRICS, **kwargs).records)
    frame = pd.DataFrame(rows())
    containers = (rows(), frame, pa.Table.from_pandas(frame), datasets.Dataset.from_pandas(frame))
    for data in containers:
        got = by_key(assay.evaluate(data, METRICS, **kwargs).records)
        assert got == want, type(data)
    table = assay.evaluate(frame, METRICS, **kwargs).to_pandas()
    assert list(table["sample_id"]) == [r["id"] for r in rows()]
    assert table.loc[0, "faithfulness.status"] == "scored"
    # q8 has no reference: a skip that names the field, and NaN as its value.
    q8 = table[table["sample_id"] == "q8"].iloc[0]
    assert q8["rouge1.status"] == "skipped" and math.isnan(q8["rouge1"])
    assert "reference" in q8["rouge1.reason"]


AGENT = EXAMPLE.parent / "agent.jsonl"
CONVERSATION_METRICS = ["tool_call_accuracy", "tool_call_f1", "tool_correctness", "role_adherence"]


def test_conversations_in_arrow_containers_give_the_records_of_the_file(tmp_path, judge):
    # Arrow gives each tool call's arguments the members of every other
    # row's (null where a row had none); read back, they are the file's.
    kwargs = judge.kwargs(tmp_path)
    want = by_key(assay.evaluate(AGENT, CONVERSATION_METRICS, **kwargs).records)
    agent = [json.loads(line) for line in AGENT.open()]
    # (From a DataFrame: Arrow's from_pylist reads the first row's keys only.)
    frame = pd.DataFrame(agent)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    args = table.column("reference_tool_calls").to_pylist()[0][0]["args"]
    assert args["seats"] is None, args
    for data in (frame, table, datasets.Dataset.from_pandas(frame)):
        got = by_key(assay.evaluate(data, CONVERSATION_METRICS, **kwargs).records)
        assert got == want, type(data)
    assert {r["status"] for r in want} == {"scored", "skipped"}, want


def test_a_ragas_evaluation_dataset_is_read_as_its_rows(tmp_path, judge):
    from ragas import EvaluationDataset

    # ragas samples have no id: both runs name rows by number.
    full = [row for row in rows() if "reference" in row and "retrieved_contexts" in row]
    plain = [{k: v for k, v in row.items() if k != "id"} for row in full]
    data = EvaluationDataset.from_list(plain)
    kwargs = judge.kwargs(tmp_path)
    got = assay.evaluate(data, METRICS, **kwargs)
    assert by_key(got.records) == by_key(assay.evaluate(plain, METRICS, **kwargs).records)
    assert {r["sample_id"] for r in got.records} == {str(i) for i in range(1, len(plain) + 1)}
    assert all(r["status"] == "scored" for r in got.records), got.records


def test_ragas_multi_turn_samples_score_as_their_chat_spelling():
    from ragas import EvaluationDataset, MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    def sample(row):
        turns = []
        for m in row["messages"]:
            if m["role"] == "user":
                turns.append(HumanMessage(content=m["content"]))
            elif m["role"] == "assistant":
                calls = [
                    ToolCall(
                        name=c["function"]["name"], args=json.loads(c["function"]["arguments"])
                    )
                    for c in m.get("tool_calls", [])
                ]
                turns.append(AIMessage(content=m["content"] or "", tool_calls=calls or None))
            elif m["role"] == "tool":
                turns.append(ToolMessage(content=m["content"]))
        return MultiTurnSample(
            user_input=turns,
            reference_tool_calls=[ToolCall(**c) for c in row["reference_tool_calls"]],
        )

    agent = EXAMPLE.parent / "agent.jsonl"
    chats = [json.loads(line) for line in agent.open()]
    chats = [
        {k: v for k, v in c.items() if k != "id"} for c in chats if "reference_tool_calls" in c
    ]
    metrics = ["tool_call_accuracy", "tool_call_f1", "tool_correctness"]
    want = assay.evaluate(chats, metrics, out=None, progress=False).records
    for data in (EvaluationDataset(samples=[sample(c) for c in chats]), [sample(c) for c in chats]):
        got = assay.evaluate(data, metrics, out=None, progress=False).records
        assert [(r["row"], r["metric"], r["value"]) for r in by_key(got)] == [
            (r["row"], r["metric"], r["value"]) for r in by_key(want)
        ]
    assert {r["value"] for r in want} != {1.0}, "the example's wrong calls score below 1"


def test_bad_rows_are_outcomes_not_exceptions(tmp_path, judge):
    data = [
        {"id": "ok", "response": "Paris is in France.", "reference": "Paris is in France."},
        {"id": "no-response", "reference": "x"},
        {"id": "bad-type", "response": 42, "reference": "x"},
    ]
    result = assay.evaluate(data, ["rouge"], out=tmp_path / "run", **judge.kwargs(tmp_path))
    status = {(r["sample_id"], r["metric"]): r for r in result.records}
    assert status[("ok", "rouge1")]["value"] == 1.0
    missing = status[("no-response", "rouge1")]
    assert missing["status"] == "skipped" and "response" in missing["reason"]
    # A row that cannot be read has no id: it is named by its position.
    bad = next(r for r in result.records if r["row"] == 3 and r["metric"] == "rouge1")
    assert bad["status"] == "failed" and bad["error"]["kind"] == "input"
    assert bad["error"]["message"] == (
        "data row 3 (index 2): field 'response': expected a string, got a number"
    )


def test_usage_errors_raise_before_any_call(tmp_path, judge):
    kwargs = judge.kwargs(tmp_path)
    with pytest.raises(assay.UsageError, match="unknown metric 'faithfulnes'"):
        assay.evaluate(rows(), ["faithfulnes"], out=tmp_path / "a", **kwargs)
    with pytest.raises(ValueError, match="strictness"):
        assay.evaluate(
            rows(), ["answer_relevancy"], params={"answer_relevancy.strictness": 0}, **kwargs
        )
    assert not (tmp_path / "a" / "results.jsonl").exists()
    assert not (tmp_path / "cache.sqlite").exists(), "nothing was asked"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # Each names the keyword at fault as Python writes it, never a flag.
        (
            {"params": {"rouge.stem": True}},
            "params[\"rouge.stem\"]: rouge has no parameter 'stem' (known: types, use_stemmer, tokenizer)",
        ),
        ({"params": {"rouge.types": "rouge0"}}, 'params["rouge.types"]="rouge0": '),
        ({"params": {"bleu.smoothing": "method1"}}, 'params["bleu.smoothing"]="method1": metric'),
        ({"params": {"rouge": 1}}, 'params["rouge"]="1": expected a key METRIC.PARAM'),
        ({"metrics": ["rouge", "rouge"]}, "metrics: metric 'rouge' listed twice"),
        ({"judge": "gpt-4o"}, "judge: "),
        ({"prices": {"gpt": "cheap"}}, "prices: gpt=cheap: "),
        ({"shard": "3/2"}, "shard: 3/2: expected K/N"),
        ({"threads": 0}, "threads: must be at least 1"),
        ({"input_format": "xml"}, "input_format: unknown input format 'xml'"),
        ({"reasons": "long"}, 'reasons: "long": expected'),
        # A value of the wrong type names its keyword too.
        ({"concurrency": "many"}, "concurrency: expected int, not str"),
        ({"concurrency": 2.5}, "concurrency: invalid digit"),
        ({"cache": 3}, "cache: expected bool | PathLike, not int"),
        ({"grounding_label": "yes"}, "grounding_label: names a label of the grounding model"),
        ({"repeats": -1}, "repeats: "),
        ({"timeout": "soon"}, "timeout: "),
        ({"metrics": "rouge"}, "metrics: "),
        ({"params": ["rouge.types"]}, "params: expected a mapping"),
        ({"prices": {"gpt": 1}}, "prices: "),
    ],
)
def test_a_usage_error_names_the_keyword_at_fault(tmp_path, kwargs, message):
    args = {"metrics": ["rouge"], **kwargs}
    with pytest.raises(assay.UsageError) as raised:
        assay.evaluate(rows(), out=tmp_path / "run", progress=False, **args)
    assert str(raised.value).startswith(message), str(raised.value)
    assert "--" not in str(raised.value)


def test_the_native_reader_takes_every_keyword_and_refuses_others(tmp_path):
    # `assay.evaluate` hands its keywords over as they are; a name the
    # extension does not read fails instead of being ignored.
    options = {"data": str(EXAMPLE), "metrics": ["rouge"], "out": str(tmp_path / "run")}
    with pytest.raises(assay.UsageError, match="^unknown keyword argument concurency$"):
        assay._assay.evaluate({**options, "concurency": 2})
    summary, records, gates, report, unscored = assay._assay.evaluate(options)
    assert (gates, report, unscored) == ([], None, [])
    assert summary["rows"] == len(rows())
    assert len(records) == len(summary["outputs"]) * len(rows())
    # Any mapping serves for params, its values written as --set takes them.
    result = assay.evaluate(
        rows(),
        ["rouge"],
        params=types.MappingProxyType(
            {"rouge.types": ("rouge1", "rougeL"), "rouge.use_stemmer": True}
        ),
        progress=False,
    )
    assert [o["name"] for o in result.summary["outputs"]] == ["rouge1", "rougeL"]
    with pytest.raises(assay.UsageError, match="^unknown keyword arguments a, b$"):
        assay._assay.calibrate({"metric": "faithfulness", "set": "ragtruth", "a": 1, "b": 2})


def test_calibrate_takes_every_judge_keyword_of_evaluate():
    def keywords(f):
        return set(inspect.signature(f).parameters)

    only_evaluate = {
        "metrics",
        "params",
        "input_format",
        "references",
        "logs",
        "stitch",
        "strict",
        "force_new",
        "shard",
        # What `assay eval` does once the run is done.
        "gates",
        "max_failed_fraction",
        "calibration",
        "report",
    }
    assert keywords(assay.evaluate) - only_evaluate <= keywords(assay.calibrate)


def test_protocol_per_item_scores_each_statement_alone(tmp_path, judge):
    kwargs = judge.kwargs(tmp_path)
    row = {
        "id": "eiffel",
        "user_input": "Where is the Eiffel Tower",
        "response": "The Eiffel Tower is in Paris. The Eiffel Tower is made of cheese",
        "retrieved_contexts": ["The Eiffel Tower is in Paris", "Cheese is tasty"],
    }
    listed = assay.evaluate([row], ["faithfulness"], **kwargs).records[0]
    per_item = assay.evaluate([row], ["faithfulness"], protocol="per-item", **kwargs).records[0]
    assert listed["value"] == per_item["value"] == 0.5
    statements = [s["statement"] for s in per_item["details"]["statements"]]
    assert statements == ["The Eiffel Tower is in Paris.", "The Eiffel Tower is made of cheese"]
    with pytest.raises(assay.UsageError, match="unknown protocol 'each'"):
        assay.evaluate([row], ["faithfulness"], protocol="each", **kwargs)
    # An HTTP judge cannot score a given reply.
    with pytest.raises(assay.UsageError, match="needs an in-process judge"):
        assay.evaluate([row], ["faithfulness"], protocol="likelihood", **kwargs)


def test_refused_credentials_raise_auth_error(tmp_path):
    # The judge's 401 quotes the key it was given, as OpenAI's does.
    refusing = Judge("--status", "401")
    try:
        with pytest.raises(assay.AuthError) as raised:
            assay.evaluate(rows(), ["faithfulness"], **refusing.kwargs(tmp_path))
    finally:
        refusing.close()
    message = str(raised.value)
    assert "Incorrect API key provided" in message and KEY not in message, message


def test_a_judge_that_refuses_every_connection_raises_judge_unavailable(tmp_path):
    # A port that was just free: nothing listens there.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(assay.JudgeUnavailableError) as raised:
        assay.evaluate(
            rows(),
            ["faithfulness"],
            judge="openai:judge-model",
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key=KEY,
            cache=tmp_path / "cache.sqlite",
            progress=False,
        )
    assert not isinstance(raised.value, assay.AuthError)
    message = str(raised.value)
    assert f"http://127.0.0.1:{port}/v1" in message and "connection" in message, message
    assert KEY not in message


def test_the_key_is_never_written(tmp_path, judge):
    out = tmp_path / "run"
    assay.evaluate(rows(), ["faithfulness"], out=out, **judge.kwargs(tmp_path))
    for path in [*out.rglob("*"), tmp_path / "cache.sqlite"]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_gates_pass_or_explain(tmp_path, judge):
    kwargs = judge.kwargs(tmp_path)
    result = assay.assert_scores(rows(), ["rouge"], {"rouge1": ">= 0.1"}, **kwargs)
    assert result.means()["rouge1"] > 0.1
    with pytest.raises(AssertionError) as failed:
        assay.assert_scores(
            rows(),
            METRICS,
            {"rouge1": ">= 0.99", "answer_relevance": "> 0.6"},
            **kwargs,
        )
    message = str(failed.value)
    assert "rouge1 >= 0.99: mean" in message and "95% CI" in message
    # Strict: a mean of exactly 0.6 fails "> 0.6".
    assert "answer_relevance > 0.6: mean 0.6000" in message
    # The worst sample first, with its reason.
    worst = min(
        (r for r in result.records if r["metric"] == "rouge1" and r["status"] == "scored"),
        key=lambda r: r["value"],
    )
    first_row = message.split("rouge1 >= 0.99")[1].splitlines()[1]
    assert f"row {worst['row']} ({worst['sample_id']})" in first_row
    with pytest.raises(assay.UsageError, match="has several outputs"):
        assay.assert_scores(rows(), ["rouge"], {"rouge": ">= 0.5"}, **kwargs)
    with pytest.raises(assay.UsageError, match="is not an output of this run"):
        assay.assert_scores(rows(), ["rouge"], {"bleu": ">= 0.5"}, **kwargs)
    with pytest.raises(assay.UsageError, match="higher-is-better, so use '>= 0.5'"):
        assay.assert_scores(rows(), ["rouge"], {"rouge1": "<= 0.5"}, **kwargs)
    with pytest.raises(ValueError, match="expected"):
        assay.assert_scores(rows(), ["rouge"], {"rouge1": "at least 0.5"}, **kwargs)


def test_an_output_that_scores_nothing_fails_the_run(tmp_path):
    # Rows without references: BLEU skips every one, so the run measured
    # nothing, and says so rather than passing.
    bare = [{k: v for k, v in r.items() if k not in ("reference", "references")} for r in rows()]
    result = assay.evaluate(bare, ["bleu"], progress=False)
    assert result.complete and not result.passed
    assert len(result.unscored) == 1
    assert result.unscored[0].startswith(f"nothing scored: bleu: {len(bare)} skipped, 0 failed")
    assert "missing required field 'reference'" in result.unscored[0]
    with pytest.raises(AssertionError, match="nothing scored: bleu"):
        assay.assert_scores(bare, ["bleu"], {}, progress=False)
    assert assay.evaluate(rows(), ["bleu"], progress=False).passed


def test_aevaluate_inside_a_running_loop(tmp_path, judge):
    async def main():
        return await assay.aevaluate(rows(), ["rouge"], **judge.kwargs(tmp_path))

    assert asyncio.run(main()).means()["rouge1"] > 0


def test_cancelling_aevaluate_stops_the_run_and_the_same_call_resumes(tmp_path):
    slow = Judge("--latency-ms", "300")
    out = tmp_path / "run"
    kwargs = {
        "judge": "openai:judge-model",
        "base_url": slow.base_url,
        "api_key": KEY,
        "cache": tmp_path / "c.sqlite",
        "concurrency": 1,
        "threads": 1,
    }

    async def main():
        loop = asyncio.get_running_loop()
        started = asyncio.Event()

        def progress(kind, payload):
            if kind == "progress" and payload["rows"] >= 1:
                loop.call_soon_threadsafe(started.set)

        task = asyncio.create_task(
            assay.aevaluate(EXAMPLE, ["faithfulness"], out=out, progress=progress, **kwargs)
        )
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main())
        partial = records_of(out / "results.jsonl")
        assert 0 < len(partial) < 10
        assert json.loads((out / "summary.json").read_text())["complete"] is False
        # The run directory was released when the task ended: the same call
        # resumes at once (a held directory would raise UsageError).
        result = assay.evaluate(EXAMPLE, ["faithfulness"], out=out, progress=False, **kwargs)
        assert result.complete
        assert sorted(r["row"] for r in result.records) == list(range(1, 11))
        assert all(r in result.records for r in partial), "what was done is kept"
    finally:
        slow.close()


def test_ctrl_c_raises_keyboard_interrupt_and_the_same_call_resumes(tmp_path):
    slow = Judge("--latency-ms", "300")
    out = tmp_path / "run"
    script = textwrap.dedent(
        f"""
        import signal, sys, assay
        from pathlib import Path
        # As in a terminal: a process started in the background by a
        # non-interactive shell inherits SIGINT ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        def progress(kind, payload):
            if kind == "progress" and payload["rows"] >= 1:
                print("started", flush=True)
        try:
            assay.evaluate({str(EXAMPLE)!r}, ["faithfulness"], out={str(out)!r},
                           judge="openai:judge-model", base_url={slow.base_url!r},
                           api_key={KEY!r}, cache=Path({str(tmp_path / "c.sqlite")!r}),
                           concurrency=1, threads=1, progress=progress)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
        print("finished", flush=True)
        """
    )
    try:
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "started"
        child.send_signal(signal.SIGINT)
        rest = child.stdout.read()
        assert child.wait() == 130, rest
        assert "interrupted" in rest
        partial = records_of(out / "results.jsonl")
        assert 0 < len(partial) < 10
        summary = json.loads((out / "summary.json").read_text())
        assert summary["complete"] is False
        # The same call goes on from there: every row once, none twice.
        result = assay.evaluate(
            EXAMPLE,
            ["faithfulness"],
            out=out,
            judge="openai:judge-model",
            base_url=slow.base_url,
            api_key=KEY,
            cache=tmp_path / "c.sqlite",
            progress=False,
        )
        assert result.complete
        assert sorted(r["row"] for r in result.records) == list(range(1, 11))
        assert all(r in result.records for r in partial), "what was done is kept"
    finally:
        slow.close()


def test_long_runs_show_progress_with_judge_usage(tmp_path, capfd):
    slow = Judge("--latency-ms", "100")
    try:
        kwargs = {**slow.kwargs(tmp_path), "progress": True, "concurrency": 1, "threads": 1}
        assay.evaluate(EXAMPLE, ["faithfulness"], **kwargs)
    finally:
        slow.close()
    err = capfd.readouterr().err
    assert " rows" in err and "judge " in err and " calls " in err and " tokens" in err, err
    # Not a terminal: whole lines, nothing redrawn, tqdm not used although
    # installed; the last line has the final counts.
    assert "\r" not in err and "\x1b" not in err and "it/s" not in err, repr(err)
    lines = [line for line in err.splitlines() if line.startswith("assay: ")]
    assert lines and lines[-1].startswith("assay: 100% 10 rows"), err


def test_a_config_file_gives_evaluate_its_keywords(tmp_path, judge, monkeypatch):
    """A pyproject's `[tool.assay]` table as keywords: the run is judged by
    the file's judge, a keyword also in the file is Python's own error,
    and a secret or an unknown key in the file names the file and key."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        textwrap.dedent(
            f"""\
            [project]
            name = "app"

            [tool.assay]
            judge = "openai:judge-model"
            base_url = "{judge.base_url}"
            cache = "{tmp_path / "cache.sqlite"}"
            max_retries = 0
            strict = true
            [tool.assay.prices]
            judge-model = "1/2"
            [tool.assay.fail_under]
            faithfulness = 0.0
            """
        )
    )
    options = assay.config_file(pyproject)
    assert options["max_retries"] == 0 and options["prices"] == {"judge-model": "1/2"}
    assert options["gates"] == {"faithfulness": ">= 0"}
    assert set(assay.config_file(pyproject, judge_only=True)) == {
        "judge",
        "base_url",
        "cache",
        "max_retries",
        "prices",
    }
    result = assay.evaluate(EXAMPLE, ["faithfulness"], out=tmp_path / "run", **options)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["judge"]["spec"] == "openai:judge-model"
    assert any(r["status"] == "scored" for r in result.records)
    assert [(g.passed, g.output) for g in result.gates] == [(True, "faithfulness")]
    with pytest.raises(TypeError, match="multiple values for keyword argument 'judge'"):
        assay.evaluate(EXAMPLE, ["faithfulness"], judge="local", **options)
    bad = tmp_path / "assay.toml"
    bad.write_text('api_key = "sk-in-a-file"\n')
    with pytest.raises(assay.UsageError, match='key "api_key": a secret is read from') as e:
        assay.config_file(bad)
    assert "sk-in-a-file" not in str(e.value)
    bad.write_text("concurency = 4\n")
    with pytest.raises(assay.UsageError, match=r'assay.toml: key "concurency": not a run option'):
        assay.config_file(bad)
