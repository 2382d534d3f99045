#!/usr/bin/env python3
"""The GUI section of `make bench` (tools/bench.sh): the window's figures next to the bare
forward of the same length, measured in the same run, and issue 18's targets as ratios.

Usage: gui_report.py DIR   (reads DIR/gui-fwd-N.json from `attnscope bench --json` and
DIR/gui-N.json from `attnscope --gui-bench --json`, N = 128, 512)."""
import glob
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main():
    d = sys.argv[1]
    lengths = sorted(int(re.search(r"gui-(\d+)\.json$", p).group(1)) for p in glob.glob(os.path.join(d, "gui-*.json"))
                     if re.search(r"gui-(\d+)\.json$", p))
    rows = []
    for n in lengths:
        g, b = load(os.path.join(d, f"gui-{n}.json")), load(os.path.join(d, f"gui-fwd-{n}.json"))
        if not g:
            continue
        k = g["keystroke_to_head_view_ms"]
        fwd = b["results"][0]["forward_ms_median"] if b else None
        rows.append((n, g, b, k, fwd))
    if not rows:
        print("no GUI figures (see the lines above)")
        return
    print("| tokens | bench forward ms | window run ms | run / bench (target <= 1.15) | keystroke -> Head view ms "
          "| keystroke / run (target <= 1.5 at 128, 1.25 at 512) | main-thread CPU during the run ms "
          "| new run buffers | main loop late, worst ms (echo: target <= 16) | load |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, g, b, k, fwd in rows:
        ratio = f"{k['run_median'] / fwd:.2f}" if fwd else "-"
        print(f"| {n} | {fwd:.1f} | {k['run_median']:.1f} | {ratio} | {k['median']:.1f} | "
              f"{k['median'] / k['run_median']:.2f} | {k.get('main_thread_cpu_during_run_median', 0):.1f} | "
              f"{k.get('new_run_buffers', '-')} | {k.get('main_loop_late_ms_max', float('nan')):.1f} | "
              f"{g.get('load_average', 0):.1f} |"
              if fwd else f"| {n} | - | {k['run_median']:.1f} | - | {k['median']:.1f} | - | - | - | - | - |")
    print()
    print("| tokens | view | switch -> drawn ms, median (target <= 50) | max | main-thread CPU ms "
          "| of which showing the page | until its frame is laid out "
          "| switch -> first frame painted, median | its CPU | first switch -> first frame painted |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    nan = float("nan")
    for n, g, b, k, fwd in rows:
        for name, v in g.get("view_switch_ms", {}).items():
            label = "(none: one frame of the Head view)" if name == "head" else name
            first = (v.get("first_paint_rounds_ms") or [nan])[0]   # the round that builds the page
            print(f"| {n} | {label} | {v['median']:.1f} | {v['max']:.1f} | {v['main_thread_cpu_median']:.1f} "
                  f"| {v.get('show_cpu_median', nan):.1f} | {v.get('layout_cpu_median', nan):.1f} "
                  f"| {v.get('first_paint_median', nan):.1f} | {v.get('first_paint_cpu_median', nan):.1f} "
                  f"| {first:.1f} |")
    print()
    print("| tokens | peak RSS, bench MB | weights + capture MB | ratio (target <= 1.2) | window peak RSS MB "
          "| open + first run in the window ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n, g, b, k, fwd in rows:
        if not b:
            continue
        r = b["results"][0]
        base = b.get("model_weight_bytes", 0) + r["capture_bytes"]
        ratio = f"{r['peak_rss_bytes'] / base:.2f}" if base else "-"
        print(f"| {n} | {r['peak_rss_bytes'] / 1e6:.0f} | {base / 1e6:.0f} | {ratio} | "
              f"{g.get('peak_rss_bytes', 0) / 1e6:.0f} | {g['open_and_first_run_ms']:.0f} |")
    print("(weights: layers + embeddings in F32; the window's RSS adds GTK, the figures' surfaces and a second run"
          " buffer; its open + first run includes making the random weights)")


if __name__ == "__main__":
    main()
