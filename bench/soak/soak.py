#!/usr/bin/env python3
"""The soak: the default RAG suite over many samples against the loopback
judge with faulty answers, the `assay eval` process killed (SIGKILL) at
random moments and resumed with the same command until it finishes; then
what the run directory and the judge say, set against an uninterrupted,
fault-free run of the same samples.

Python 3 standard library only; `bench/soak/run.sh` builds the two binaries
and calls it. Three runs, each with its own loopback judge (a fresh process,
so its counts are the run's own), its own cache file and run directory,
under --work:

1. baseline: all samples, no fault, no kill;
2. small: the first --small samples, no fault, no kill (the peak memory
   of a smaller run);
3. soak: all samples, --faulty-per-1000 faulty attempts, killed --kills
   times, each time resumed by the same command.

The samples are built from the shapes of examples/rag_qa.jsonl (its rows,
with and without contexts or a reference), each text made unique to its
sample, so no two samples ask the judge the same question: the cache is on,
as a user's is (resuming relies on it: answers from before a kill are not
asked again), and it cannot fold 10,000 samples into 10.

What is printed, and checked (exit code 1 when a check fails):

- outcomes: samples x 4 outputs expected; lost (an expected (sample,
  output) pair missing from results.jsonl) must be 0; doubled (a pair
  written more than once) must be 0; lines that do not parse must be 0;
  every pair scored in both runs has the same value; summary.json says
  complete and counts every sample of every output.
- requests: the judge counts every attempt and how it relates to earlier
  attempts of the same content (path and body): new (distinct), a retry
  of an attempt it answered with a failing fault, or a repeat (asked again
  although the previous attempt was answered well: a call in flight when
  the process was killed, whose answer it never stored). Repeats must be at
  most kills x (--concurrency + --threads): a request holds one of
  --concurrency slots (judge and embedder together) while it is on the
  wire, and its answer goes into the cache's log right after, with no await
  between, so at most one answer per runtime worker thread is between the
  two when the process dies. The extra requests over the baseline are the
  retries, the repeats and any difference in distinct requests (a call
  never asked because the one before it failed).
- memory: the peak resident set of every assay process, killed or not:
  its VmHWM (/proc/PID/status), read every 5 ms and right before each kill
  (a killed process cannot report its own; wait4's ru_maxrss would count
  this driver's own memory too, as a child's figure starts from its
  parent's at fork), set against the first segment's and the small run's.
  Printed, not checked.

Kill moments (seeded): each kill either waits until results.jsonl holds a
drawn number of lines (drawn over the run's outcomes, increasing from kill
to kill) plus up to 50 ms more, or, one time in four, comes at a drawn
moment in the first half second after the process starts (opening the
cache, reading back the results, the first calls).

No timing threshold: wall times are printed only. A process that writes
nothing for --hang-after seconds is killed and reported as a hang.
"""

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "rag_qa.jsonl"
SUITE = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
KEY = "sk-soak-5f0c2a9e7d1b34860000"


def parse_args():
    p = argparse.ArgumentParser(
        description="Soak assay eval: faults, kills and resumes against the loopback judge."
    )
    p.add_argument("--assay", required=True, help="the assay binary")
    p.add_argument("--judge", required=True, help="the loopback-judge binary")
    p.add_argument("--samples", type=int, default=10_000)
    p.add_argument("--kills", type=int, default=8)
    p.add_argument("--seed", type=int, default=33, help="samples, kill moments and faults")
    p.add_argument("--faulty-per-1000", type=int, default=50)
    p.add_argument("--concurrency", type=int, default=16, help="assay's --concurrency")
    p.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="assay's --threads (all cores)"
    )
    p.add_argument("--latency-ms", type=int, default=20, help="the judge's delay per answer")
    p.add_argument("--stall-ms", type=int, default=2500, help="how long a stalled body stalls")
    p.add_argument("--timeout", type=float, default=2.0, help="assay's --timeout (below the stall)")
    p.add_argument("--small", type=int, default=1000, help="samples of the small run (0: none)")
    p.add_argument("--hang-after", type=float, default=600.0)
    p.add_argument("--work", type=Path, default=REPO / "target" / "soak")
    args = p.parse_args()
    if args.samples < 1 or args.kills < 0 or args.concurrency < 1:
        p.error("--samples and --concurrency must be at least 1, --kills at least 0")
    if args.stall_ms / 1000 <= args.timeout:
        p.error("--stall-ms must exceed --timeout, or a stalled answer is no fault")
    return args


# ---------------------------------------------------------------- samples


def generate(n, seed, path):
    """Writes n samples shaped like the example's rows, each text unique
    to its sample."""
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    pool = [c for r in rows for c in r.get("retrieved_contexts", [])]
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            base = rng.choice(rows)
            tag = f"case {i}"
            row = {
                "id": f"soak-{i:05d}",
                "user_input": f"{base['user_input'].rstrip('?.')} ({tag})?",
                # The tag leads, so the first statement (which answer
                # relevancy's generated questions repeat) is unique too.
                "response": f"In {tag}: {base['response']}",
            }
            if "retrieved_contexts" in base:
                picked = base["retrieved_contexts"] + rng.sample(pool, rng.randint(0, 2))
                contexts = [f"{c} ({tag})" for c in picked]
                if rng.random() < 0.5:
                    # The response's first statement, word for word: supported.
                    contexts.append(row["response"].split(". ")[0].rstrip("."))
                rng.shuffle(contexts)
                row["retrieved_contexts"] = contexts
            if "reference" in base:
                row["reference"] = f"{base['reference']} Noted in {tag}."
            elif "references" in base:
                row["references"] = [f"{r} Noted in {tag}." for r in base["references"]]
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


# ------------------------------------------------------------------ judge


class Judge:
    """A running loopback-judge process."""

    def __init__(self, binary, *flags):
        self.process = subprocess.Popen(
            [binary, *flags], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            sys.exit(f"soak: loopback-judge printed {self.base_url!r}")

    def close(self):
        """Stops it; returns what it reports on its way out, by name."""
        self.process.stdin.close()
        report = {}
        for line in self.process.stdout.read().splitlines():
            name, _, value = line.partition(" ")
            report[name] = int(value) if value.isdigit() else value
        self.process.wait()
        return report


# ------------------------------------------------------------------ assay


class Lines:
    """Counts the whole lines of a growing results.jsonl, reading only what
    was added (from the start again when a resume cut it shorter)."""

    def __init__(self, path):
        self.path, self.offset, self.count = path, 0, 0

    def now(self):
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return 0
        if size < self.offset:
            self.offset, self.count = 0, 0
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            added = f.read(size - self.offset)
        self.offset += len(added)
        self.count += added.count(b"\n")
        return self.count


def eval_command(args, data, run, url):
    return [
        args.assay, "eval", str(data), "-m", ",".join(SUITE),
        "--judge", "openai:judge-model", "--embedder", "openai:embed-model",
        "--base-url", url, "--cache", str(run / "cache.sqlite"),
        "--out", str(run / "run"), "--format", "json",
        "--concurrency", str(args.concurrency), "--threads", str(args.threads),
        "--timeout", str(args.timeout),
    ]  # fmt: skip


def vm_hwm_kib(pid):
    """The most resident memory (KiB) process `pid` has used so far, or
    None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return None


def segment(args, command, run, number, kill):
    """Runs `command` once; `kill` is None, ("early", seconds after start)
    or ("lines", results lines to wait for, then seconds more). Returns how
    it ended, the results lines before and after, whether the last line is
    torn, its wall seconds and its peak RSS (KiB)."""
    results = run / "run" / "results.jsonl"
    lines = Lines(results)
    before = lines.now()
    env = dict(os.environ, OPENAI_API_KEY=KEY, ASSAY_HOME=str(run))
    with open(run / f"segment-{number}.out", "w") as log:
        start = time.monotonic()
        process = subprocess.Popen(command, stdout=log, stderr=log, env=env)
        ended, kill_at, progress_at, seen, peak = None, None, start, before, 0
        while True:
            # Read before asking whether it ended: a zombie has no VmHWM.
            peak = max(peak, vm_hwm_kib(process.pid) or 0)
            if process.poll() is not None:
                break
            now = time.monotonic()
            count = lines.now()
            if count != seen:
                seen, progress_at = count, now
            if kill and kill_at is None:
                if kill[0] == "early":
                    kill_at = start + kill[1]
                elif count >= kill[1]:
                    kill_at = now + kill[2]
            if kill_at is not None and now >= kill_at:
                ended = "killed"
            elif now - progress_at > args.hang_after:
                ended = "hang"
            if ended:
                peak = max(peak, vm_hwm_kib(process.pid) or 0)
                process.send_signal(signal.SIGKILL)
                process.wait()
                break
            time.sleep(0.005)
        wall = time.monotonic() - start
    torn = False
    if results.exists() and results.stat().st_size > 0:
        with open(results, "rb") as f:
            f.seek(-1, os.SEEK_END)
            torn = f.read(1) != b"\n"
    return {
        "ended": ended or f"exit {process.returncode}",
        "kill": kill,
        "before": before,
        "after": lines.now(),
        "torn": torn,
        "wall": wall,
        "peak_kib": peak,
    }


def single_run(args, name, data, judge_flags):
    """One uninterrupted run of `data` against a fresh judge."""
    run = args.work / name
    run.mkdir(parents=True)
    judge = Judge(args.judge, *judge_flags)
    seg = segment(args, eval_command(args, data, run, judge.base_url), run, 1, None)
    return run, seg, judge.close()


def kill_plan(rng, kills, expected):
    """The kills, in order: ("lines", n, then) waits for n results lines;
    ("early", s) kills s seconds after the process starts."""
    targets = sorted(rng.randint(expected // 50, expected * 49 // 50) for _ in range(kills))
    plan = []
    for target in targets:
        if rng.random() < 0.25:
            plan.append(("early", round(rng.uniform(0.0, 0.5), 3)))
        else:
            plan.append(("lines", target, round(rng.uniform(0.0, 0.05), 3)))
    return plan


# ----------------------------------------------------------------- checks


def read_results(path):
    """(sample_id, metric, repeat) -> list of records, and the count of
    lines that do not parse."""
    by_key, unreadable = collections.defaultdict(list), 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                r = json.loads(line)
                key = (r["sample_id"], r["metric"], r.get("repeat") or 0)
            except (ValueError, KeyError, TypeError):
                unreadable += 1
                continue
            by_key[key].append(r)
    return by_key, unreadable


def counts(counter):
    return ", ".join(f"{k} {n}" for k, n in sorted(counter.items()))


def by_status(by_key):
    return counts(collections.Counter(v[0]["status"] for v in by_key.values()))


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def main():
    args = parse_args()
    if args.work.exists():
        subprocess.run(["rm", "-rf", str(args.work)], check=True)
    args.work.mkdir(parents=True)
    data = args.work / "samples.jsonl"
    generate(args.samples, args.seed, data)
    ids = [json.loads(line)["id"] for line in data.read_text(encoding="utf-8").splitlines()]
    expected = {(i, m, 0) for i in ids for m in SUITE}
    latency = ["--latency-ms", str(args.latency_ms)]
    checks = []

    def check(ok, what):
        checks.append((ok, what))

    print(
        f"soak: {args.samples} samples x {len(SUITE)} outputs ({','.join(SUITE)}), seed {args.seed}, "
        f"{args.faulty_per_1000} faulty attempts per 1000, {args.kills} kills; assay --concurrency "
        f"{args.concurrency} --threads {args.threads} --timeout {args.timeout:g}; judge latency "
        f"{args.latency_ms} ms, stalls {args.stall_ms} ms; load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )

    base_run, base_seg, base_judge = single_run(args, "baseline", data, latency)
    print(
        f"baseline (no fault, no kill): {base_seg['ended']}, wall {base_seg['wall']:.1f} s, "
        f"peak RSS {mib(base_seg['peak_kib'])}, requests {base_judge['requests']} "
        f"(distinct {base_judge['distinct_requests']}, repeated {base_judge['repeated']})",
        flush=True,
    )
    check(base_seg["ended"] == "exit 0", "the baseline run ends with exit code 0")
    small_seg = None
    if 0 < args.small < args.samples:
        small = args.work / "small.jsonl"
        with open(data, encoding="utf-8") as f, open(small, "w", encoding="utf-8") as out:
            out.writelines(line for _, line in zip(range(args.small), f))
        _, small_seg, _ = single_run(args, "small", small, latency)
        print(
            f"small ({args.small} samples, no fault, no kill): {small_seg['ended']}, wall "
            f"{small_seg['wall']:.1f} s, peak RSS {mib(small_seg['peak_kib'])}",
            flush=True,
        )

    # The soak.
    rng = random.Random(args.seed)
    plan = kill_plan(rng, args.kills, len(expected))
    run = args.work / "soak"
    run.mkdir()
    judge = Judge(
        args.judge, *latency, "--faulty-per-1000", str(args.faulty_per_1000),
        "--fault-seed", str(args.seed), "--stall-ms", str(args.stall_ms),
    )  # fmt: skip
    command = eval_command(args, data, run, judge.base_url)
    segments, started = [], time.monotonic()
    print(
        "soak segments:\n  #   ended       kill moment              results lines    wall s  peak RSS"
    )
    while True:
        kill = plan[len(segments)] if len(segments) < len(plan) else None
        seg = segment(args, command, run, len(segments) + 1, kill)
        segments.append(seg)
        moment = {None: "-", "early": "early", "lines": "at lines"}[kill and kill[0]]
        if kill:
            moment += f" {kill[1]}" + (f" +{kill[2]:.3f} s" if kill[0] == "lines" else " s")
        print(
            f"  {len(segments):<3} {seg['ended']:<11} {moment:<24} {seg['before']:>6} -> "
            f"{seg['after']:<6}{' (torn)' if seg['torn'] else '       '} {seg['wall']:>6.1f}  "
            f"{mib(seg['peak_kib'])}",
            flush=True,
        )
        if seg["ended"] != "killed":
            break
    wall = time.monotonic() - started
    soak_judge = judge.close()
    kills = sum(s["ended"] == "killed" for s in segments)
    check(segments[-1]["ended"] == "exit 0", "the last segment ends with exit code 0")

    # Outcomes.
    by_key, unreadable = read_results(run / "run" / "results.jsonl")
    present = set(by_key)
    lost = expected - present
    foreign = present - expected
    doubled = sum(len(v) - 1 for v in by_key.values())
    failed_kinds = collections.Counter(
        v[0]["error"]["kind"] for v in by_key.values() if v[0]["status"] == "failed"
    )
    base_by_key, _ = read_results(base_run / "run" / "results.jsonl")
    both = [
        k for k, v in by_key.items()
        if v[0]["status"] == "scored" and base_by_key.get(k, [{}])[0].get("status") == "scored"
    ]  # fmt: skip
    differ = [k for k in both if by_key[k][0]["value"] != base_by_key[k][0]["value"]]
    summary = json.loads((run / "run" / "summary.json").read_text())
    counted = all(
        o["n_scored"] + o["n_skipped"] + o["n_failed"] == args.samples for o in summary["outputs"]
    )
    print(
        f"outcomes: expected {len(expected)}, present {len(present)}, lost {len(lost)}, "
        f"doubled {doubled}, foreign {len(foreign)}, unreadable lines {unreadable}; "
        f"{by_status(by_key)} (failed: {counts(failed_kinds) or 'none'}); baseline: "
        f"{by_status(base_by_key)}"
    )
    print(f"  {len(both)} outcomes scored in both runs, {len(differ)} with different values")
    for name, bad in [("lost", lost), ("doubled", [k for k, v in by_key.items() if len(v) > 1])]:
        for key in sorted(bad)[:10]:
            print(f"  {name}: {key}")
    check(not lost, "nothing lost")
    check(doubled == 0, "nothing doubled")
    check(not foreign and unreadable == 0, "no foreign or unreadable line")
    check(not differ, "every outcome scored in both runs has the same value")
    check(
        summary.get("complete") is True and counted, "summary.json complete, every sample counted"
    )

    # Requests.
    per_kill = args.concurrency + args.threads
    repeats, bound = soak_judge["repeated"], kills * per_kill
    extra = soak_judge["requests"] - base_judge["requests"]
    print(
        f"requests: {soak_judge['requests']} against {base_judge['requests']} for the baseline "
        f"({soak_judge['requests'] / base_judge['requests']:.3f}x): {extra:+} = "
        f"{soak_judge['retries_after_fault']} retries after a fault + {repeats} repeats + "
        f"{soak_judge['distinct_requests'] - base_judge['distinct_requests']:+} distinct "
        f"({soak_judge['distinct_requests']} against {base_judge['distinct_requests']})"
    )
    print(
        f"  faults injected {soak_judge['faults_injected']}: {soak_judge.get('faults_by_kind', '')}"
    )
    print(
        f"  repeats {repeats} <= {kills} kills x ({args.concurrency} requests + {args.threads} "
        f"answers being stored) = {bound}: "
        f"{'yes' if repeats <= bound else 'NO'} ({repeats / kills if kills else 0:.1f} per kill; "
        f"the baseline repeated {base_judge['repeated']})"
    )
    check(repeats <= bound, "repeats within kills x the in-flight bound")

    # Memory.
    first, last = segments[0]["peak_kib"], segments[-1]["peak_kib"]
    peaks = [s["peak_kib"] for s in segments]
    line = (
        f"peak RSS: segments {min(peaks) / 1024:.1f} to {max(peaks) / 1024:.1f} MiB; first "
        f"{mib(first)}, last {mib(last)} ({last / max(first, 1):.2f}x the first); baseline "
        f"{mib(base_seg['peak_kib'])}"
    )
    if small_seg:
        line += (
            f"; {args.small} samples {mib(small_seg['peak_kib'])} (baseline "
            f"{base_seg['peak_kib'] / small_seg['peak_kib']:.2f}x, largest segment "
            f"{max(peaks) / small_seg['peak_kib']:.2f}x)"
        )
    print(line)
    print(
        f"wall: soak {wall:.1f} s over {len(segments)} segments ({kills} killed), baseline "
        f"{base_seg['wall']:.1f} s"
    )

    failed = [what for ok, what in checks if not ok]
    for what in failed:
        print(f"FAILED: {what}")
    print("soak: " + ("FAILED" if failed else "ok: nothing lost, nothing doubled, repeats bounded"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
