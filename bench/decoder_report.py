#!/usr/bin/python3
"""Summarises one `make bench-decoders` run (tools/bench-decoders.sh): reads
OUT/attnscope-SHAPE.json and OUT/torch-SHAPE.json, prints the side-by-side table and writes it
to OUT/results.md.  The ratio is torch's median time over attnscope's (above 1: attnscope is
faster); "% of sgemm" is attnscope's GFLOP/s over cblas_sgemm's at the FFN shape, measured in
the same process (this machine's FMA peak as OpenBLAS reaches it).
Usage: decoder_report.py OUT"""
import json
import os
import sys

ORDER = ["smollm2-135m", "qwen2.5-0.5b", "llama-3.2-1b"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/bench-decoders"
    header = ["model", "layers x heads / K/V heads", "tokens", "attnscope ms", "torch ms", "torch / attnscope",
              "attnscope GFLOP/s", "torch GFLOP/s", "sgemm GFLOP/s", "% of sgemm", "attnscope peak RSS MB",
              "torch peak RSS MB"]
    rows = []
    for shape in ORDER:
        a = load(os.path.join(out, f"attnscope-{shape}.json"))
        if not a:
            continue
        t = load(os.path.join(out, f"torch-{shape}.json"))
        tr = {r["tokens"]: r for r in t["results"]} if t else {}
        for r in a["results"]:
            x = tr.get(r["tokens"])
            tm = x["forward_ms_median"] if x else None
            rows.append([shape, f"{a['layers']} x {a['heads']} / {a['kv_heads']}", str(r["tokens"]),
                         f"{r['forward_ms_median']:.0f}", f"{tm:.0f}" if tm else "-",
                         f"{tm / r['forward_ms_median']:.2f}x" if tm else "-", f"{r['gflops']:.0f}",
                         f"{x['gflops']:.0f}" if x else "-",
                         f"{r['sgemm_gflops']:.0f}" if r.get("sgemm_gflops") else "-",
                         f"{r['percent_of_sgemm']:.0f}%" if r.get("percent_of_sgemm") else "-",
                         f"{r['peak_rss_bytes'] / 1e6:.0f}", f"{x['peak_rss_bytes'] / 1e6:.0f}" if x else "-"])
    if not rows:
        print(f"decoder_report: no attnscope results in {out}")
        return 1
    widths = [max(len(h), *(len(c[i]) for c in rows)) for i, h in enumerate(header)]
    print("== decoder shapes, forward with full capture (medians; ratio = torch / attnscope, same run)")
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for c in rows:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)))
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("| " + " | ".join(header) + " |\n|" + "|".join("---:" for _ in header) + "|\n")
        for c in rows:
            f.write("| " + " | ".join(c) + " |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
