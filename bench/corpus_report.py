#!/usr/bin/python3
"""Summarises the corpus-pass part of `make bench` (tools/bench.sh): OUT/corpus-attnscope.json
(`attnscope bench --corpus N --json`) and OUT/corpus-torch*.json (bench/peer_torch.py
--corpus, padded batches of 32; the faster thread setting is kept).  Prints a Markdown table
and appends it to OUT/results.md.  Usage: corpus_report.py OUT [LOAD]"""
import json
import os
import sys


def main():
    out = sys.argv[1]
    load = sys.argv[2] if len(sys.argv) > 2 else "?"
    try:
        ours = json.load(open(os.path.join(out, "corpus-attnscope.json")))
    except (OSError, ValueError) as e:
        print(f"corpus: no attnscope result ({e})")
        return 1
    torch = None
    for name in ("corpus-torch2.json", "corpus-torch1.json"):
        try:
            doc = json.load(open(os.path.join(out, name)))
        except (OSError, ValueError):
            continue
        if torch is None or doc["seconds"] < torch["seconds"]:
            torch = doc
    runs = {r["name"]: r for r in ours["runs"]}
    loop = runs["loop"]["seconds"]
    lines = [
        f"Corpus pass, {ours['title']}: {ours['sentences']} sentences of {ours['min_tokens']}-{ours['max_tokens']} "
        f"tokens ({ours['tokens']} tokens), attention kept, stacks of up to {ours['rows']} rows; load average {load}",
        "",
        "| run | seconds | sentences/s | GFLOP/s | vs loop | stacked forwards | max rel. checksum diff vs loop |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in ("loop", "stacked-exact", "stacked"):
        r = runs[name]
        lines.append(f"| attnscope {name} | {r['seconds']:.2f} | {r['sentences_per_s']:.1f} | {r['gflops']:.1f} | "
                     f"{loop / r['seconds']:.2f}x | {r['stacked_forwards']} | {r['max_rel_checksum_diff']:.2g} |")
    if torch:
        lines.append(f"| torch {torch['version']}, batches of {torch['batch']} padded ({torch['padded_tokens']} "
                     f"tokens), {torch['torch_threads']} thread(s) | {torch['seconds']:.2f} | "
                     f"{torch['sentences_per_s']:.1f} | | {loop / torch['seconds']:.2f}x | | |")
    lines.append("")
    lines.append(f"one 128-token forward in the same process: {ours['forward_128_gflops']:.1f} GFLOP/s")
    best = min(runs["stacked"]["seconds"], runs["stacked-exact"]["seconds"])
    if torch:
        lines.append(f"stacked vs torch batched: {torch['seconds'] / best:.2f}x")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(out, "results.md"), "a") as f:
        f.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
