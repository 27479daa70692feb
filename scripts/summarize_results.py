#!/usr/bin/env python3
"""Summarizes the benchmark JSON lines in bench/results/.

  summarize_results.py FILE...            ours against the best peer for every case in FILE(s)
  summarize_results.py --readme README.md [--write | --check]
                                          the README's "Measured" table, made from the JSON lines
                                          and the row list bench/results/readme_table.json

The README's table sits between the markers <!-- results:begin --> and <!-- results:end -->.
--write replaces it with the table made from the JSON lines; --check exits 1, printing the
difference, when the README's table is not what the JSON lines give (CI runs this).

Each README row names a JSON-lines file, the parameters a line must have, our implementation and
one peer (name prefixes). The row shows the latest run (commit and command) holding both, so ours
and the peer always come from the same run.
"""
import argparse
import difflib
import json
import os
import sys
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def is_peer(j):
    # Diagnostics (stages or variants of ours) are not peers; some lines mark them only by name.
    return not j["ours"] and not j.get("diagnostic") and "(diagnostic)" not in j["implementation"]


def print_cases(files, since_commit):
    cases = OrderedDict()
    for path in files:
        for j in read_lines(path):
            if since_commit and j.get("commit") != since_commit:
                continue
            key = (j["benchmark"], json.dumps(j["parameters"], sort_keys=True), j.get("device", ""))
            cases.setdefault(key, {})[j["implementation"]] = j
    print(f"{'benchmark':<14} {'case':<58} {'ours ms':>9} {'best peer':>22} {'peer ms':>9} {'x':>6} {'floor ms':>9}")
    for (bench, params, _device), impls in cases.items():
        ours = [j for j in impls.values() if j["ours"]]
        peers = [j for j in impls.values() if is_peer(j)]
        if not ours:
            continue
        o = min(ours, key=lambda j: j["median_ms"])
        p = min(peers, key=lambda j: j["median_ms"]) if peers else None
        ratio = p["median_ms"] / o["median_ms"] if p and o["median_ms"] > 0 else float("nan")
        shown = {k: v for k, v in json.loads(params).items() if k not in ("seed", "via")}
        # Lines from `radixmesh bench ...` (host-level API) are told apart from the drivers' lines.
        prefix = "cli:" if "via" in json.loads(params) else ""
        short = (prefix + ",".join(f"{k}={v}" for k, v in shown.items()))[:58]
        print(f"{bench:<14} {short:<58} {o['median_ms']:>9.3f} {(p['implementation'] if p else '-')[:22]:>22} "
              f"{(p['median_ms'] if p else float('nan')):>9.3f} {ratio:>6.2f} {o.get('floor_ms', float('nan')):>9.3f}")


def ms(x):
    if x >= 100:
        return f"{x:.0f} ms"
    if x >= 10:
        return f"{x:.1f} ms"
    if x >= 1:
        return f"{x:.2f} ms"
    return f"{x:.3f} ms"


def device_of(j):
    if j["device"].startswith("NVIDIA "):
        return j["device"][len("NVIDIA "):]
    return j["device"]


def latest_pair(lines, row, peer_prefix):
    """(ours, peer) lines of the latest run holding both, the fastest of each in that run."""
    runs = {}
    for j in lines:
        if any(j["parameters"].get(k) != v for k, v in row["params"].items()):
            continue
        run = runs.setdefault((j["commit"], j["command"]), {"date": "", "ours": [], "peer": []})
        run["date"] = max(run["date"], j["date"])
        if j["ours"] and j["implementation"].startswith(row["ours"]):
            run["ours"].append(j)
        elif is_peer(j) and j["implementation"].startswith(peer_prefix):
            run["peer"].append(j)
    complete = [r for r in runs.values() if r["ours"] and r["peer"]]
    if not complete:
        return None, None
    run = max(complete, key=lambda r: r["date"])
    return (min(run["ours"], key=lambda j: j["median_ms"]), min(run["peer"], key=lambda j: j["median_ms"]))


def readme_table():
    with open(os.path.join(RESULTS, "readme_table.json")) as f:
        rows = json.load(f)
    cache = {}
    out = ["| what | ours | peer, same run (peer time ÷ ours) | device | commit |", "|---|---|---|---|---|"]
    for row in rows:
        lines = cache.setdefault(row["file"], read_lines(os.path.join(RESULTS, row["file"])))
        peers = [{"peer": row["peer"], "peer_name": row["peer_name"]}] + row.get("also", [])
        ours_line, cells = None, []
        for peer in peers:
            o, p = latest_pair(lines, row, peer["peer"])
            if o is None:
                continue
            if ours_line is None:
                ours_line = o
            cells.append(f"{peer['peer_name']} {ms(p['median_ms'])} ({p['median_ms'] / o['median_ms']:.2f}×)")
        if ours_line is None:
            sys.exit(f"summarize_results: no run holds both ours and the peer for README row '{row['what']}'. "
                     f"fix: correct its selector in bench/results/readme_table.json or run its benchmark")
        out.append(f"| {row['what']} | {ms(ours_line['median_ms'])} | {'; '.join(cells)} | "
                   f"{device_of(ours_line)} | {ours_line['commit'][:7]} |")
    return "\n".join(out) + "\n"


def readme(path, write, check):
    with open(path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit(f"summarize_results: {path} has no {BEGIN} ... {END} block. fix: add the markers around the table")
    head, rest = text.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    made = "\n" + readme_table()
    if check:
        if current != made:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), made.splitlines(True),
                                                       "README.md (now)", "made from bench/results"))
            print("summarize_results: README.md's table differs from the JSON lines. "
                  "fix: python3 scripts/summarize_results.py --readme README.md --write")
            sys.exit(1)
        print("summarize_results: README.md's table matches the JSON lines")
    elif write:
        with open(path, "w") as f:
            f.write(head + BEGIN + made + END + tail)
    else:
        sys.stdout.write(made)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--since-commit", default="", help="only lines from this commit")
    parser.add_argument("--readme", help="the README whose results table to make, write or check")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.readme:
        readme(args.readme, args.write, args.check)
    elif args.files:
        print_cases(args.files, args.since_commit)
    else:
        parser.error("give JSON-lines files, or --readme README.md")


if __name__ == "__main__":
    main()
