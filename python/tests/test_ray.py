"""`assay.ray` on a local Ray cluster started by the test (two worker
CPUs), against the loopback judge: the shards, scored in Ray's worker
processes and merged, are one `assay.evaluate` over the same rows."""

import json

import pytest
import ray
import ray.data
from conftest import EXAMPLE, Judge

import assay
import assay.ray
from assay.ray import _per_task, _slots

METRICS = ["faithfulness", "context_precision", "rouge", "bleu", "chrf"]


def rows():
    return [json.loads(line) for line in EXAMPLE.open()]


def by_key(records):
    return sorted(records, key=lambda r: (r["row"], r["metric"]))


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def outputs(summary):
    return {o["name"]: o for o in summary["outputs"]}


def test_shards_on_a_cluster_are_one_process_run(tmp_path, judge, cluster):
    kwargs = judge.kwargs(tmp_path)
    ds = ray.data.from_items(rows())
    result = assay.ray.evaluate(ds, METRICS, out=tmp_path / "ray", shards=3, **kwargs)
    # The same rows, as the Dataset holds them, in one process.
    want = assay.evaluate(ds.take_all(), METRICS, **kwargs)

    assert by_key(result.records) == by_key(want.records)
    assert len(result.records) == 10 * (2 + 4 + 1 + 1)
    shard_dirs = sorted((tmp_path / "ray" / "shards").iterdir())
    assert [d.name for d in shard_dirs] == ["1-of-3", "2-of-3", "3-of-3"]
    sizes = [sum(1 for _ in (d / "results.jsonl").open()) for d in shard_dirs]
    assert sum(sizes) == len(result.records) and all(sizes), sizes

    got, ref = result.summary, want.summary
    assert got["rows"] == ref["rows"] == 10
    assert outputs(got).keys() == outputs(ref).keys()
    for name, o in outputs(ref).items():
        g = outputs(got)[name]
        for key in ("n_scored", "n_skipped", "n_failed", "min", "max", "ci95"):
            assert g.get(key) == o.get(key), (name, key)
        assert g["mean"] == pytest.approx(o["mean"], abs=1e-12), name
    # Corpus BLEU and chrF need every row's statistics, not the shards'.
    assert len(ref["corpus"]) == 2
    assert got["corpus"] == ref["corpus"]
    assert got["ragas_score"]["metrics"] == ref["ragas_score"]["metrics"]
    assert got["ragas_score"]["value"] == pytest.approx(ref["ragas_score"]["value"], abs=1e-12)

    # The records as a Ray Dataset, whole.
    table = result.dataset().take_all()
    assert by_key(json.loads(r["record"]) for r in table) == by_key(result.records)
    scored = next(r for r in table if r["metric"] == "rouge1" and r["sample_id"] == "q1")
    assert scored["status"] == "scored" and scored["value"] == pytest.approx(
        next(r["value"] for r in want.records if r["metric"] == "rouge1" and r["sample_id"] == "q1")
    )


def test_conversations_shard_on_a_cluster_as_in_one_process(tmp_path, judge, cluster):
    # Agent conversations as a Dataset: Arrow fills each tool call's
    # arguments with every other row's members (null); the shards read the
    # rows as they were, judged conversation metrics included.
    metrics = [
        "tool_call_accuracy",
        "tool_call_f1",
        "tool_correctness",
        "knowledge_retention",
        "role_adherence",
        "agent_goal_accuracy",
    ]
    agent = [json.loads(line) for line in (EXAMPLE.parent / "agent.jsonl").open()]
    kwargs = judge.kwargs(tmp_path)
    result = assay.ray.evaluate(ray.data.from_items(agent), metrics, shards=2, **kwargs)
    want = assay.evaluate(agent, metrics, **kwargs)
    assert by_key(result.records) == by_key(want.records)
    assert len(result.records) == len(agent) * len(metrics)
    scored = {r["metric"] for r in want.records if r["status"] == "scored"}
    assert scored == set(metrics), want.records


def test_the_same_call_scores_only_the_shards_that_did_not_finish(tmp_path, judge, cluster):
    kwargs = judge.kwargs(tmp_path)
    out = tmp_path / "ray"
    first = assay.ray.evaluate(rows(), METRICS, out=out, shards=2, **kwargs)
    kept = out / "shards" / "1-of-2" / "results.jsonl"
    lost = out / "shards" / "2-of-2"
    before = kept.stat()
    for f in lost.iterdir():
        f.unlink()
    lost.rmdir()

    again = assay.ray.evaluate(rows(), METRICS, out=out, shards=2, **kwargs)
    assert (kept.stat().st_ino, kept.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (lost / "results.jsonl").exists()
    assert by_key(again.records) == by_key(first.records)
    assert again.summary["outputs"] == first.summary["outputs"]

    # force_new starts over, moving the earlier shards aside.
    assay.ray.evaluate(rows(), METRICS, out=out, shards=2, force_new=True, **kwargs)
    assert (out / "superseded-1" / "shards" / "1-of-2" / "results.jsonl").exists()
    assert kept.stat().st_ino != before.st_ino


def test_bad_rows_are_named_as_in_one_process(tmp_path, judge, cluster):
    data = [
        {"id": "ok", "response": "Paris is in France.", "reference": "Paris is in France."},
        {"id": "no-response", "reference": "x"},
        {"id": "bad-type", "response": 42, "reference": "x"},
    ]
    kwargs = judge.kwargs(tmp_path)
    got = assay.ray.evaluate(data, ["rouge"], shards=2, **kwargs)
    want = assay.evaluate(data, ["rouge"], **kwargs)
    assert by_key(got.records) == by_key(want.records)
    bad = next(r for r in got.records if r["row"] == 3)
    assert bad["error"]["message"] == (
        "data row 3 (index 2): field 'response': expected a string, got a number"
    )
    # A file is named as the driver has it, not as the copy each task read.
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    got = assay.ray.evaluate(path, ["rouge"], shards=2, **kwargs)
    bad = next(r for r in got.records if r["row"] == 3)
    assert bad["error"]["message"] == (
        f"{path}:3: field 'response': expected a string, got a number"
    )


def test_an_unknown_metric_is_a_usage_error(tmp_path, judge, cluster):
    with pytest.raises(assay.UsageError, match="unknown metric 'faithfulnes'"):
        assay.ray.evaluate(rows(), ["faithfulnes"], shards=2, **judge.kwargs(tmp_path))


def test_a_folder_holding_another_run_is_refused(tmp_path, judge, cluster):
    kwargs = judge.kwargs(tmp_path)
    out = tmp_path / "single"
    assay.evaluate(rows(), ["rouge"], out=out, **kwargs)
    with pytest.raises(assay.UsageError, match="assay.ray did not make"):
        assay.ray.evaluate(rows(), ["rouge"], out=out, shards=2, **kwargs)
    assert (out / "results.jsonl").exists()


def test_judge_limits_are_budgets_for_the_whole_cluster(tmp_path, cluster):
    # Every answer takes 300 ms, so two tasks judging side by side would
    # have four requests in flight if each had the whole concurrency.
    judge = Judge("--latency-ms", "300")
    try:
        result = assay.ray.evaluate(
            str(EXAMPLE),
            ["faithfulness", "context_precision"],
            out=tmp_path / "ray",
            shards=2,
            concurrency=2,
            **judge.kwargs(tmp_path),
        )
    finally:
        peak = judge.close()
    assert len(result.records) == 10 * 2
    assert sum(r["status"] == "scored" for r in result.records) >= 10
    assert 1 <= peak <= 2, peak


def test_a_budget_is_shared_by_the_tasks_that_run_at_once():
    # Two CPUs at one each: two tasks at once, each with half.
    assert _slots(5, 2.0, 1, {"concurrency": 16, "rpm": 600}) == 2
    assert _per_task({"concurrency": 16, "rpm": 600}, 2) == {"concurrency": 8, "rpm": 300}
    # A quarter CPU each: as many as the budgets allow, never more than the shards.
    assert _slots(64, 16.0, 0.25, {"concurrency": 8}) == 8
    assert _slots(3, 16.0, 0.25, {}) == 3
    # A budget smaller than the tasks that fit leaves each task 1 of it.
    assert _slots(10, 8.0, 1, {"tpm": 5}) == 5
    assert _per_task({"tpm": 5, "rpm": 12}, 5) == {"tpm": 1, "rpm": 2}
    # Nothing left to run, or no CPU asked: still one slot, or one per shard.
    assert _slots(0, 2.0, 1, {}) == 1
    assert _slots(4, 2.0, 0, {}) == 4
