"""Merge the Rust and Python benchmark outputs into one Markdown table.

Usage: report.py RUST_JSON PYTHON_JSON [--command TEXT]   (stdlib only)

Rows: each metric single-threaded ("1 thread") and on all cores. Columns:
assay-text pairs/s, the Python reference's pairs/s, their ratio (also on CPU
time for 1 thread), rougers' pairs/s and assay/rougers for ROUGE (ditto),
assay's scaling from 1 thread, and
whether assay (and rougers) produced the same scores as the Python reference
on the sample the Python side timed (sums of per-pair scores within 1e-9 per
pair).
"""

import argparse
import datetime
import json
import os
import platform
import subprocess

LABELS = {
    "rouge": "ROUGE 1+2+L+Lsum, score_multi, no stemmer",
    "rouge_stem": "ROUGE 1+2+L+Lsum, score_multi, Porter stemmer",
    "nltk_bleu": "NLTK sentence BLEU (no smoothing)",
    "sacrebleu_bleu": "sacreBLEU sentence BLEU",
    "chrf": "sacreBLEU sentence chrF",
}


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def git_commit(path):
    try:
        out = subprocess.run(
            ["git", "-C", path, "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        )
        dirty = subprocess.run(
            ["git", "-C", path, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True,
        )
        return out.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt_rate(value):
    return "n/a" if value is None else f"{value:,.0f}"


def fmt_ratio(num, den):
    if num is None or den is None or den == 0:
        return "n/a"
    return f"{num / den:,.1f}x"


def rate(entry, mode):
    return entry[mode]["pairs_per_s"] if entry else None


def cpu_rate(entry):
    """Pairs per CPU second of the single-threaded run, if recorded."""
    return entry["1"].get("pairs_per_cpu_s") if entry else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rust")
    parser.add_argument("python")
    parser.add_argument("--command", default="bench/run.sh")
    parser.add_argument("--load-start", default=None, help="load average when the run started")
    args = parser.parse_args()
    with open(args.rust, encoding="utf-8") as fh:
        rust = json.load(fh)
    with open(args.python, encoding="utf-8") as fh:
        python = json.load(fh)

    threads = rust["threads"]
    same_sample = (
        rust["pairs_replicated"] == python["pairs_replicated"]
        and rust["sample"]["pairs"] == python["pairs_timed"]
    )
    lines = [
        "# Lexical metrics benchmark",
        "",
        f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"commit {git_commit(os.path.dirname(os.path.abspath(__file__)))}",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs; load average "
        + (f"at start {args.load_start.replace(' ', ', ')}; " if args.load_start else "")
        + f"at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
        "(other work on the machine slows both sides and flattens the scaling)",
        f"- Command: `{args.command}`",
        f"- Data: the {rust['pairs_replicated']:,} pairs of the parity set replicated cyclically "
        f"(owned copies); assay-text and rougers score all of them, best of {rust['repeat']} runs.",
        f"- Python references ({', '.join(f'{k} {v}' for k, v in python['versions'].items())}, "
        f"Python {python['python']}) are timed once on a sample of {python['pairs_timed']:,} pairs "
        f"({python['sampling']}), single process and with a multiprocessing.Pool of "
        f"{python['results'][next(iter(python['results']))]['N']['threads']} workers.",
        f"- All cores: {threads} threads for Rust (std::thread::scope over contiguous chunks, "
        "one scorer per thread).",
        "- Ratios compare wall-clock throughput measured in the same run. The CPU-time columns "
        "(1 thread only) divide pairs per CPU second instead, which other load on the machine "
        "barely affects; on a busy machine they are the steadier figure.",
        "",
        "| metric | mode | assay pairs/s | reference pairs/s | assay / reference "
        "| assay / reference, CPU time | rougers pairs/s | assay / rougers "
        "| assay / rougers, CPU time | assay scaling | same scores as the reference |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    notes = []
    for metric, label in LABELS.items():
        ours = rust["results"].get(metric, {})
        assay = ours.get("assay")
        rougers = ours.get("rougers")
        ref = python["results"].get(metric)
        if metric not in rust["results"] and ref is None:
            continue
        if assay is None:
            notes.append(f"- {label}: the assay-text side is not wired in this build.")
        verdicts = []
        for name, entry in (("assay", assay), ("rougers", rougers)):
            if entry is not None and ref is not None and same_sample:
                diff = abs(entry["sample_checksum"] - ref["1"]["checksum"])
                ok = diff <= 1e-9 * python["pairs_timed"]
                verdicts.append(f"{name}: " + ("yes" if ok else f"NO (sums differ by {diff:.3g})"))
        agree = "; ".join(verdicts) or "n/a"
        for mode in ("1", "N"):
            mode_label = "1 thread" if mode == "1" else f"{threads} threads"
            scaling = ""
            if mode == "N" and assay is not None:
                scaling = f"{assay['N']['pairs_per_s'] / assay['1']['pairs_per_s']:.2f} of {threads}"
            cpu_ratio = ""
            cpu_ratio_rougers = ""
            if mode == "1":
                cpu_ratio = fmt_ratio(cpu_rate(assay), cpu_rate(ref))
                if rougers:
                    cpu_ratio_rougers = fmt_ratio(cpu_rate(assay), cpu_rate(rougers))
            lines.append(
                f"| {label} | {mode_label} | {fmt_rate(rate(assay, mode))} "
                f"| {fmt_rate(ref[mode]['pairs_per_s'] if ref else None)} "
                f"| {fmt_ratio(rate(assay, mode), ref[mode]['pairs_per_s'] if ref else None)} "
                f"| {cpu_ratio} "
                f"| {fmt_rate(rate(rougers, mode)) if rougers else ''} "
                f"| {fmt_ratio(rate(assay, mode), rate(rougers, mode)) if rougers else ''} "
                f"| {cpu_ratio_rougers} | {scaling} | {agree} |"
            )
    lines += [
        "",
        f"One pass over the {rust['distinct_pairs']:,} distinct pairs, 1 thread, fresh scorer "
        "(assay-text's ROUGE scorer memoises stems across calls; this shows the "
        "throughput without the repeats that replication adds):",
        "",
        "| metric | assay pairs/s | assay / reference (1 process) | rougers pairs/s | assay / rougers |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for metric, label in LABELS.items():
        ours = rust["results"].get(metric, {})
        assay = ours.get("assay")
        rougers = ours.get("rougers")
        ref = python["results"].get(metric)
        if assay is None:
            continue
        lines.append(
            f"| {label} | {fmt_rate(rate(assay, 'distinct_1'))} "
            f"| {fmt_ratio(rate(assay, 'distinct_1'), ref['1']['pairs_per_s'] if ref else None)} "
            f"| {fmt_rate(rate(rougers, 'distinct_1')) if rougers else ''} "
            f"| {fmt_ratio(rate(assay, 'distinct_1'), rate(rougers, 'distinct_1')) if rougers else ''} |"
        )
    computes = []
    for metric in LABELS:
        for impl, entry in sorted(rust["results"].get(metric, {}).items()):
            computes.append(f"- {impl}, {metric}: {entry['computes']}")
    lines += ["", "What each Rust column computes:", ""] + computes
    if notes:
        lines += ["", "Not measured:", ""] + notes
    print("\n".join(lines))


if __name__ == "__main__":
    main()
