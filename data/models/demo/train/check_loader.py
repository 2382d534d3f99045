#!/usr/bin/python3
"""Checks that the app's loader and forward pass give the trainer's own attention on the demo model.

    python3 data/models/demo/train/check_loader.py [--exe build/app/attnscope] [--model data/models/demo]

For each sentence in train/check/sentences.json (written by train.py from the F16 weights it
saved, computed in float64) this runs
    attnscope run --model MODEL --ids 2,... [--type-ids 0,...,1] -o OUT.npy
and compares OUT.npy (float32 [layers, heads, n, n]) with attn_K.npy: max |difference| must be
<= --tol (1e-4).  Needs only numpy.  Exit 0 = all equal within tol, 1 = a difference or a
failed run, 77 = no attnscope executable found (skipped).
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile


def _use_system_python(module):
    """Re-run under Debian's python3 when this interpreter lacks `module` (e.g. a pyenv one)."""
    import importlib.util
    if importlib.util.find_spec(module) is None and os.path.exists("/usr/bin/python3") \
            and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)


_use_system_python("numpy")

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))


def find_exe(given):
    if given:
        return given if os.access(given, os.X_OK) else None
    for cand in [os.path.join(REPO, "build", "app", "attnscope")] + sorted(
            glob.glob(os.path.join(REPO, "build*", "app", "attnscope"))):
        if os.access(cand, os.X_OK):
            return cand
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--exe", help="attnscope executable (default: build/app/attnscope)")
    p.add_argument("--model", default=os.path.normpath(os.path.join(HERE, "..")))
    p.add_argument("--tol", type=float, default=1e-4)
    args = p.parse_args()
    exe = find_exe(args.exe)
    if exe is None:
        print("check_loader: no attnscope executable found; skipped", file=sys.stderr)
        return 77
    with open(os.path.join(HERE, "check", "sentences.json"), encoding="utf-8") as f:
        sentences = json.load(f)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, s in enumerate(sentences):
            want = np.load(os.path.join(HERE, "check", s["attn_file"]))
            out = os.path.join(tmp, f"attn_{k}.npy")
            cmd = [exe, "run", "--model", args.model, "--ids", ",".join(str(i) for i in s["ids"])]
            if any(s["type_ids"]):
                cmd += ["--type-ids", ",".join(str(t) for t in s["type_ids"])]
            cmd += ["-o", out]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0 or not os.path.exists(out):
                print(f"sentence {k}: `{' '.join(cmd)}` failed (exit {r.returncode}):\n"
                      f"{r.stderr.strip()}")
                failures += 1
                continue
            got = np.load(out)
            if got.shape != want.shape:
                print(f"sentence {k}: attention shape {got.shape}, expected {want.shape}")
                failures += 1
                continue
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
            ok = float(diff.max()) <= args.tol
            print(f"sentence {k} ({len(s['ids'])} tokens: {s['text']!r}"
                  f"{' / ' + repr(s['text_pair']) if s['text_pair'] else ''}): "
                  f"max |diff| {diff.max():.3e} at [layer, head, query, key] "
                  f"{list(map(int, worst))} (got {got[worst]:.6f}, trainer {want[worst]:.6f}) "
                  f"-> {'ok' if ok else 'FAIL'}")
            failures += 0 if ok else 1
    print("check_loader:", "all sentences within" if not failures else f"{failures} failing;",
          f"tolerance {args.tol:g}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
