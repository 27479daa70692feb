#!/usr/bin/env python3
"""Ours against every other implementation of the same run, shape by shape, from JSON lines.

  variant_table.py FILE.jsonl [--match TEXT] [--where KEY=VALUE ...]

One line a shape (the run's command and the line's parameters but the path): ours' median ms and
path, then each other implementation's median ms and its ratio to ours (below 1: faster than
ours). --match keeps only the implementations whose name holds TEXT (ours always stays); --where
keeps the shapes whose parameters match. For the A/B runs of a tuning rule, e.g.
  variant_table.py logs/results/topk_llm.jsonl --match row_ --where type=bf16
"""
import argparse
import json
import sys
from collections import OrderedDict

SHAPE_KEYS = ("rows", "n", "type", "k")


def shape_of(line):
    p = dict(line.get("parameters", {}))
    path = p.pop("path", None)
    key = (line.get("command", ""), json.dumps(p, sort_keys=True))
    return key, p, path


def label(p):
    head = " ".join(f"{k}={p[k]}" for k in SHAPE_KEYS if k in p)
    rest = " ".join(f"{k}={v}" for k, v in sorted(p.items()) if k not in SHAPE_KEYS and not isinstance(v, bool))
    return head if not rest else f"{head} ({rest})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--match", default="", help="implementations whose name holds this text")
    parser.add_argument("--where", nargs="*", default=[], help="KEY=VALUE: shapes whose parameters match")
    args = parser.parse_args()
    wanted = []
    for w in args.where:
        if "=" not in w:
            sys.exit(f"variant_table: --where takes KEY=VALUE, not '{w}'. fix: e.g. --where type=bf16")
        wanted.append(tuple(w.split("=", 1)))
    shapes = OrderedDict()
    with open(args.file) as f:
        for number, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as e:
                sys.exit(f"variant_table: {args.file}:{number} is not JSON ({e}). fix: pass a file of JSON lines")
            key, p, path = shape_of(line)
            if any(str(p.get(k)).lower() != v.lower() for k, v in wanted):
                continue
            entry = shapes.setdefault(key, {"params": p, "ours": None, "others": []})
            if line.get("ours"):
                entry["ours"] = (line["median_ms"], path)
            elif args.match in line.get("implementation", ""):
                entry["others"].append((line["implementation"], line["median_ms"]))
    for entry in shapes.values():
        if entry["ours"] is None:
            continue
        ours_ms, path = entry["ours"]
        print(f"{label(entry['params'])}: ours {ours_ms:.3f} ms ({path})")
        for name, ms in entry["others"]:
            print(f"    {ms:9.3f} ms  {ms / ours_ms:5.2f}x  {name}")


if __name__ == "__main__":
    main()
