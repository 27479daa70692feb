"""Charts of the benchmark results: python3 -m radixmesh.plot bench/results/*.jsonl --out DIR

Reads the JSON lines the benchmarks append (one line per implementation per case; the lines of
one case share its command, date and parameters) and writes PNG charts with matplotlib (Debian's
python3-matplotlib, which scripts/setup installs), per benchmark:
  <benchmark>-vs-peers.png       ours against each peer in the latest runs: one bar per peer and
                                 case, its length the peer's time over ours, the ratio written on it
  <benchmark>-throughput-vs-n.png  our throughput against the input size, one line per device and
                                 set of parameters with at least two sizes
  <benchmark>-scaling.png        our throughput against the GPU count (distinct GPUs; logical
                                 devices left out), one line per device model and parameters with
                                 at least two counts
Diagnostic lines (ours in another configuration) are left out of the peer bars.
"""
import argparse
import json
import os
import sys
from collections import defaultdict

# Parameters that give the size of a case (throughput against n) and the device list (scaling).
SIZE_KEYS = ("n", "keys", "bytes_per_device", "columns")
MAX_CASES = 12  # peer bars: the latest cases of each benchmark


def load(paths):
    lines = []
    for path in paths:
        with open(path) as f:
            for number, text in enumerate(f, 1):
                text = text.strip()
                if not text:
                    continue
                try:
                    lines.append(json.loads(text))
                except json.JSONDecodeError as e:
                    raise SystemExit(f"radixmesh.plot: {path}:{number} is not JSON ({e}). fix: repair or drop the line")
    return lines


def runs_of(lines):
    """Lines grouped by case of one run (benchmark, device, command, date, parameters: a run may
    measure several cases), in date order."""
    runs = defaultdict(list)
    for line in lines:
        key = (line.get("benchmark"), line.get("device"), line.get("command"), str(line.get("date")),
               describe(line.get("parameters", {})))
        runs[key].append(line)
    return [runs[k] for k in sorted(runs, key=lambda k: k[3])]


def describe(params, leave_out=()):
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in leave_out)


def gpu_count(devices):
    ids = [d for d in str(devices).split(",") if d != ""]
    if not ids or any(not d.isdigit() for d in ids) or len(set(ids)) != len(ids):
        return None  # logical devices of one GPU, or CPU devices
    return len(ids)


def peer_bars(benchmark, runs, plt, out):
    """One horizontal bar per (case, peer): the peer's median time over ours."""
    bars = []  # (label, ratio)
    latest = {}
    for run in runs:  # the latest run of each case (device and parameters)
        ours = [l for l in run if l.get("ours")]
        if ours:
            latest[(ours[0].get("device"), describe(ours[0].get("parameters", {})))] = run
    cases = list(latest.values())[-MAX_CASES:]
    # Labels name the device and the parameters that differ between the cases shown.
    all_params = [next(l for l in run if l.get("ours")).get("parameters", {}) for run in cases]
    keys = sorted({k for p in all_params for k in p})
    varying = [k for k in keys if len({str(p.get(k)) for p in all_params}) > 1]
    for run in cases:
        ours = next(l for l in run if l.get("ours"))
        params = ours.get("parameters", {})
        label = f"{ours.get('device')}: " + ", ".join(f"{k}={params[k]}" for k in varying if k in params)
        for peer in run:
            if peer.get("ours") or peer.get("diagnostic") or not peer.get("median_ms") or not ours.get("median_ms"):
                continue
            bars.append((f"{label}\nvs {peer['implementation']}", peer["median_ms"] / ours["median_ms"]))
    if not bars:
        return None
    fig, ax = plt.subplots(figsize=(13, 0.5 * len(bars) + 1.5))
    labels = [b[0] for b in bars]
    ratios = [b[1] for b in bars]
    colors = ["#2ca02c" if r >= 1 else "#d62728" for r in ratios]
    ax.barh(range(len(bars)), ratios, color=colors)
    for i, r in enumerate(ratios):
        ax.text(r, i, f" {r:.2f}x", va="center", fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlim(0, max(ratios) * 1.15)
    ax.set_yticks(range(len(bars)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("peer's median time / radixmesh's (> 1: radixmesh faster)")
    ax.set_title(f"{benchmark}: peers against radixmesh, same run, latest {len(cases)} cases", fontsize=10, loc="right")
    fig.tight_layout()
    path = os.path.join(out, f"{benchmark}-vs-peers.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def lines_chart(benchmark, series, xlabel, title, suffix, plt, out, log_x):
    series = {k: sorted(v) for k, v in series.items() if len({x for x, _ in v}) >= 2}
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(10, 6))
    for label, points in sorted(series.items())[:10]:
        best = {}
        for x, y in points:  # the latest point per x (points come in date order)
            best[x] = y
        xs = sorted(best)
        ax.plot(xs, [best[x] / 1e9 for x in xs], marker="o", label=label)
    if log_x:
        ax.set_xscale("log", base=2)
    else:
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("throughput (G items/s)")
    ax.set_title(title)
    ax.legend(fontsize=6)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out, f"{benchmark}-{suffix}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def throughput_vs_n(benchmark, lines, plt, out):
    series = defaultdict(list)
    for l in lines:
        if l.get("ours") and l.get("throughput_per_s") and l.get("items"):
            params = l.get("parameters", {})
            series[f"{l.get('device')}: {describe(params, SIZE_KEYS)}"].append((l["items"], l["throughput_per_s"]))
    return lines_chart(benchmark, series, "items", f"{benchmark}: throughput against input size", "throughput-vs-n",
                       plt, out, True)


def scaling(benchmark, lines, plt, out):
    series = defaultdict(list)
    for l in lines:
        params = l.get("parameters", {})
        gpus = gpu_count(params.get("devices", ""))
        if l.get("ours") and gpus and l.get("throughput_per_s"):
            series[f"{l.get('device')}: {describe(params, ('devices', 'passes', 'tiles'))}"].append(
                (gpus, l["throughput_per_s"]))
    return lines_chart(benchmark, series, "GPUs", f"{benchmark}: throughput against GPU count", "scaling", plt, out,
                       False)


def main(argv):
    parser = argparse.ArgumentParser(prog="python3 -m radixmesh.plot", description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="JSON-lines files (bench/results/*.jsonl)")
    parser.add_argument("--out", required=True, help="folder for the PNG charts (made if missing)")
    args = parser.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("radixmesh.plot: matplotlib is not installed for this Python. fix: apt install python3-matplotlib "
              "(scripts/setup does) and run it with /usr/bin/python3", file=sys.stderr)
        return 2
    lines = load(args.results)
    os.makedirs(args.out, exist_ok=True)
    by_benchmark = defaultdict(list)
    for line in lines:
        by_benchmark[line.get("benchmark", "unknown")].append(line)
    written = []
    for benchmark, blines in sorted(by_benchmark.items()):
        blines.sort(key=lambda l: str(l.get("date")))
        for chart in (peer_bars(benchmark, runs_of(blines), plt, args.out), throughput_vs_n(benchmark, blines, plt, args.out),
                      scaling(benchmark, blines, plt, args.out)):
            if chart:
                written.append(chart)
    for path in written:
        print(path)
    if not written:
        print("radixmesh.plot: no chart: the lines hold no run with a peer, no two sizes and no two GPU counts",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
