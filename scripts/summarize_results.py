#!/usr/bin/env python3
"""Prints ours vs the best peer for every benchmark case in bench/results JSON lines."""
import argparse
import json
from collections import OrderedDict

parser = argparse.ArgumentParser()
parser.add_argument("files", nargs="+")
parser.add_argument("--since-commit", default="", help="only lines from this commit")
args = parser.parse_args()

cases = OrderedDict()
for path in args.files:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            j = json.loads(line)
            if args.since_commit and j.get("commit") != args.since_commit:
                continue
            key = (j["benchmark"], json.dumps(j["parameters"], sort_keys=True), j.get("device", ""))
            cases.setdefault(key, {})[j["implementation"]] = j

print(f"{'benchmark':<14} {'case':<58} {'ours ms':>9} {'best peer':>22} {'peer ms':>9} {'x':>6} {'floor ms':>9}")
for (bench, params, _device), impls in cases.items():
    ours = [j for j in impls.values() if j["ours"]]
    # Diagnostics (stages or variants of ours) are not peers; older lines mark them only by name.
    peers = [j for j in impls.values()
             if not j["ours"] and not j.get("diagnostic") and "(diagnostic)" not in j["implementation"]]
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
