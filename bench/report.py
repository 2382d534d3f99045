#!/usr/bin/python3
"""Summarises one `make bench` run (tools/bench.sh): reads OUT/attnscope-SHAPE-N.json and
OUT/torchT-SHAPE-N.json, prints the side-by-side table and the CPU targets (docs/ARCHITECTURE.md, "Targets"), and writes
OUT/results.md (the same table in Markdown) and OUT/bench.png (a chart; needs matplotlib).
Usage: report.py OUT"""
import glob
import json
import os
import re
import sys


def load(out):
    ours, torch = {}, {}
    for path in glob.glob(os.path.join(out, "*.json")):
        m = re.match(r"(attnscope|torch(\d+))-(bert-\w+)-(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        shape, n = m.group(3), int(m.group(4))
        if m.group(1) == "attnscope":
            ours[(shape, n)] = (doc, doc["results"][0])
        else:
            r = doc["results"][0]
            key = (shape, n)
            # the faster torch configuration for this length
            if key not in torch or r["forward_ms_median"] < torch[key][1]["forward_ms_median"]:
                torch[key] = (doc, r)
    return ours, torch


def fmt(x, spec, missing="-"):
    return missing if x is None else format(x, spec)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/bench"
    ours, torch = load(out)
    if not ours:
        print(f"report: no attnscope results in {out}")
        return 1
    header = ["model", "tokens", "attnscope ms", "torch ms", "torch / attnscope", "GFLOP/s", "sgemm GFLOP/s",
              "% of sgemm", "no-capture ms", "capture cost", "weights GB/s", "peak RSS MB", "capture MB"]
    rows = []
    for (shape, n) in sorted(ours, key=lambda k: (["bert-tiny", "bert-base", "bert-large"].index(k[0]), k[1])):
        doc, r = ours[(shape, n)]
        t = torch.get((shape, n))
        tm = t[1]["forward_ms_median"] if t else None
        ratio = tm / r["forward_ms_median"] if tm else None
        rows.append({
            "shape": shape, "n": n, "ms": r["forward_ms_median"], "torch_ms": tm, "ratio": ratio,
            "torch_threads": t[0]["torch_threads"] if t else None, "gflops": r["gflops"],
            "sgemm": r["sgemm_gflops"], "pct": r["percent_of_sgemm"], "nocap": r["nocapture_ms_median"],
            "overhead": r["capture_overhead_percent"], "gbps": r["weights_gbps"],
            "rss": r["peak_rss_bytes"] / 1e6, "cap_mb": r["capture_bytes"] / 1e6,
            "kernel": doc["blas_kernel"], "threads": doc["threads"], "read_gbps": doc.get("read_gbps"),
            "first_ms": doc.get("first_forward_ms"), "packed_mb": doc.get("packed_weight_bytes", 0) / 1e6})
    cells = [[x["shape"], str(x["n"]), fmt(x["ms"], ".1f"), fmt(x["torch_ms"], ".1f"),
              fmt(x["ratio"], ".2f") + ("x" if x["ratio"] else ""), fmt(x["gflops"], ".0f"), fmt(x["sgemm"], ".0f"),
              fmt(x["pct"], ".0f") + "%", fmt(x["nocap"], ".1f"), fmt(x["overhead"], "+.1f") + "%",
              fmt(x["gbps"], ".1f"), fmt(x["rss"], ".0f"), fmt(x["cap_mb"], ".1f")] for x in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    print("== results (medians; the ratio is torch's median over attnscope's, from this run)")
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)))
    tt = [f"{x['shape']}/{x['n']}: {x['torch_threads']}" for x in rows if x["torch_threads"]]
    if tt:
        print("torch's faster thread setting (torch.set_num_threads) per model/tokens: " + ", ".join(tt))
    kernels = sorted({x["kernel"] for x in rows})
    print(f"attnscope: {rows[0]['threads']} threads; sgemm reference: OpenBLAS {', '.join(kernels)}, same process, "
          "at the FFN shape [n,d]x[d,f]; weights GB/s: layer weights read per forward / time")

    base = [x for x in rows if x["shape"] == "bert-base"]
    print("\n== targets (bert-base; docs/ARCHITECTURE.md)")
    for n in (128, 512):
        x = next((b for b in base if b["n"] == n), None)
        if x and x["pct"] is not None:
            print(f"  {n} tokens: forward with full capture at {x['pct']:.0f}% of same-run sgemm "
                  f"({'meets' if x['pct'] >= 80 else 'misses'} the 80% target)")
    with_torch = [b for b in base if b["ratio"]]
    if with_torch:
        worst = min(with_torch, key=lambda b: b["ratio"])
        every = all(b["ratio"] > 1 for b in with_torch)
        print(f"  vs PyTorch eager: {'faster' if every else 'NOT faster'} at every length measured "
              f"({', '.join(str(b['n']) for b in with_torch)}); smallest ratio {worst['ratio']:.2f}x at {worst['n']} tokens")
    else:
        print("  vs PyTorch eager: not measured (torch not installed)")
    ov = [b for b in base if b["overhead"] is not None]
    if ov:
        worst = max(ov, key=lambda b: b["overhead"])
        print(f"  capture overhead: at most {worst['overhead']:+.1f}% (at {worst['n']} tokens; target <= 5%)")
    x8 = next((b for b in base if b["n"] == 8), None)
    if x8:
        bw = f" ({100 * x8['gbps'] / x8['read_gbps']:.0f}% of the {x8['read_gbps']:.1f} GB/s a plain read loop reached " \
             "in the same process)" if x8["read_gbps"] else ""
        print(f"  8 tokens: {x8['gbps']:.1f} GB/s of layer weights streamed per forward{bw}")
    if base and base[0]["first_ms"] is not None:
        firsts = ", ".join(f"{b['first_ms']:.0f} ms at {b['n']}" for b in base)
        print(f"  first forward of each process (packs {base[0]['packed_mb']:.0f} MB of weights once): {firsts}")

    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("| " + " | ".join(header) + " |\n|" + "|".join("---:" for _ in header) + "|\n")
        for c in cells:
            f.write("| " + " | ".join(c) + " |\n")
    chart(out, base or rows)
    return 0


def chart(out, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no chart: matplotlib is not installed; apt-get install python3-matplotlib)")
        return
    ns = [x["n"] for x in rows]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    a1.plot(ns, [x["ms"] for x in rows], "o-", color="C0", label="attnscope, full capture")
    a1.plot(ns, [x["nocap"] for x in rows], "s--", color="C1", label="attnscope, no capture")
    if any(x["torch_ms"] for x in rows):
        a1.plot([x["n"] for x in rows if x["torch_ms"]], [x["torch_ms"] for x in rows if x["torch_ms"]], "^-",
                color="C2", label="PyTorch eager (attentions kept)")
    a1.set_xscale("log", base=2)
    a1.set_yscale("log")
    a1.set_xlabel("tokens")
    a1.set_ylabel("forward pass, ms (median)")
    a1.set_title(f"{rows[0]['shape']}, {rows[0]['threads']} threads")
    a1.grid(True, which="both", alpha=0.3)
    a1.legend()
    a2.plot(ns, [x["gflops"] for x in rows], "o-", color="C0", label="attnscope forward")
    a2.plot(ns, [x["sgemm"] for x in rows], "k:", label="OpenBLAS sgemm, FFN shape (same run)")
    if any(x["torch_ms"] for x in rows):
        a2.plot([x["n"] for x in rows if x["torch_ms"]],
                [x["gflops"] * x["ratio"] ** -1 for x in rows if x["torch_ms"]], "^-", color="C2",
                label="PyTorch eager")
    a2.set_xscale("log", base=2)
    a2.set_xlabel("tokens")
    a2.set_ylabel("GFLOP/s (matrix products)")
    a2.grid(True, which="both", alpha=0.3)
    a2.legend()
    from matplotlib.ticker import NullLocator
    for a in (a1, a2):
        a.set_xticks(ns)
        a.set_xticklabels([str(n) for n in ns])
        a.xaxis.set_minor_locator(NullLocator())
    fig.tight_layout()
    path = os.path.join(out, "bench.png")
    fig.savefig(path, dpi=90)
    print(f"chart: {path}")


if __name__ == "__main__":
    sys.exit(main())
