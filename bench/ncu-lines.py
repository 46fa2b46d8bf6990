#!/usr/bin/env python3
"""Sums Nsight Compute's per-source-line counters per line and per enclosing function.

    bench/ncu-lines.py SOURCE.csv[.gz] default_program [TOP]

SOURCE.csv is `ncu -i R.ncu-rep --page source --csv --print-source cuda,sass`; default_program
is the kernel's source as NVRTC compiled it (cuda/bwt.cuh, a newline, cuda/inexact_match.cu),
whose lines the CSV's CUDA rows number. Prints each function's and the TOP lines' shares of the
launch's warp stall samples, warp instructions and L2 sectors, highest stalls first.
"""
import csv
import gzip
import re
import sys
from collections import defaultdict

METRICS = [
    ("stalls", "Warp Stall Sampling (All Samples)"),
    ("instr", "Instructions Executed"),
    ("L2 sectors", "L2 Theoretical Sectors Global"),
]
FUNCTION = re.compile(r"^\s*(?:extern \"C\" )?(?:__global__|__device__)[^(]*?(\w+)\s*\(")


def number(cell):
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return 0.0


def line_totals(path):
    """{line: [metric sums]} and {line: {stall reason: samples}} over the CSV's rows (one a SASS
    instruction, with its CUDA line)."""
    opener = gzip.open if path.endswith(".gz") else open
    totals = defaultdict(lambda: [0.0] * len(METRICS))
    reasons = defaultdict(lambda: defaultdict(float))
    with opener(path, "rt", newline="") as f:
        columns = None
        for row in csv.reader(f):
            if METRICS[0][1] in row:
                # A header: where the line number, each metric and each stall reason are.
                columns = row
                line_at = row.index("Line No")
                metric_at = [row.index(name) if name in row else None for _, name in METRICS]
                reason_at = [(i, c[len("stall_"):]) for i, c in enumerate(row)
                             if c.startswith("stall_") and not c.endswith("(Not Issued)")]
                continue
            if columns is None or len(row) != len(columns) or not row[line_at].strip().isdigit():
                continue
            line = int(row[line_at])
            for m, i in enumerate(metric_at):
                if i is not None:
                    totals[line][m] += number(row[i])
            for i, reason in reason_at:
                reasons[line][reason] += number(row[i])
    if not totals:
        sys.exit(f"{path}: no CUDA source rows with '{METRICS[0][1]}' (export with --print-source cuda,sass)")
    return totals, reasons


def top_reasons(samples, n=3):
    """The n stall reasons with the most samples, as shares of all of them."""
    whole = sum(samples.values()) or 1.0
    ranked = sorted(samples.items(), key=lambda kv: -kv[1])[:n]
    return " ".join("%s %d%%" % (name, round(100 * v / whole)) for name, v in ranked if v > 0)


def functions_of(source_lines):
    """The enclosing function's name of every line (1-based), by the last definition above it."""
    names, current = [""], "(file scope)"
    for text in source_lines:
        m = FUNCTION.match(text)
        if m:
            current = m.group(1)
        names.append(current)
    return names


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    totals, reasons = line_totals(sys.argv[1])
    source = open(sys.argv[2]).read().split("\n")
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    names = functions_of(source)
    all_sums = [sum(v[m] for v in totals.values()) or 1.0 for m in range(len(METRICS))]
    print("stall samples %d, warp instructions %.2f G, L2 sectors %.2f G" % (all_sums[0], all_sums[1] / 1e9, all_sums[2] / 1e9))

    def share(v):
        return "\t".join("%.1f%%" % (100 * v[m] / all_sums[m]) for m in range(len(METRICS)))

    per_function = defaultdict(lambda: [0.0] * len(METRICS))
    function_reasons = defaultdict(lambda: defaultdict(float))
    launch_reasons = defaultdict(float)
    for line, v in totals.items():
        name = names[line] if line < len(names) else "(beyond the source)"
        for m in range(len(METRICS)):
            per_function[name][m] += v[m]
        for reason, n in reasons[line].items():
            function_reasons[name][reason] += n
            launch_reasons[reason] += n
    print("stall reasons: " + top_reasons(launch_reasons, 6))
    print("function\t" + "\t".join(label for label, _ in METRICS) + "\tits stall reasons")
    for name, v in sorted(per_function.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{name}\t{share(v)}\t{top_reasons(function_reasons[name])}")
    print()
    print("line\t" + "\t".join(label for label, _ in METRICS) + "\tits stall reasons\tsource")
    for line, v in sorted(totals.items(), key=lambda kv: -kv[1][0])[:top]:
        text = source[line - 1].strip() if line <= len(source) else ""
        name = names[line] if line < len(names) else ""
        print(f"{line}\t{share(v)}\t{top_reasons(reasons[line], 2)}\t{name}: {text}")


if __name__ == "__main__":
    main()
