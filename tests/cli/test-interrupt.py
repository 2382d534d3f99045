#!/usr/bin/env python3
"""Ctrl-C (SIGINT) and SIGTERM stop every command that runs a model (issue 19, item 4; diff and
importance, issue 17).

A bert-base-shaped model (12 layers, 768 wide, 500 tokens; sparse all-zero weights, so
nothing is downloaded) runs long enough to be interrupted.  Each command gets the signal
while it is still working (30% into an uninterrupted run's time, 0.3-1 s), and must exit 130 with "interrupted" on
stderr within a few layers' time, leave the existing output byte for byte as it was and
leave no temporary file (".atn-*") next to it.

Usage: test-interrupt.py ATTNSCOPE
"""
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bad"))
sys.dont_write_bytecode = True
from sparse_bert import write_sparse_bert  # noqa: E402  (tests/bad/sparse_bert.py)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat"]


def sparse_bert(d, L=12, H=12, D=768, F=3072, P=512):
    """A Hugging Face BERT folder with a masked-LM head and all-zero (sparse) F32 weights."""
    write_sparse_bert(d, L, H, D, F, P, VOCAB, prefix="bert.", mlm=True)


def main():
    exe = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model")
        os.mkdir(model)
        sparse_bert(model)
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        ids = ",".join(["5"] * 240 + ["4"] + ["6"] * 259)   # 500 tokens, one [MASK]
        common = ["--model", model, "--ids", ids]
        # importance: long sentences (about 480 tokens each), so 288 ablations take minutes
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w") as f:
            f.write(("the cat sat on the mat " * 80).strip() + "\n" + ("on the mat the cat sat " * 80).strip() + "\n")
        cases = [  # (name, arguments, output file or None, signal)
            ("run .npy", ["run"] + common + ["-o", "old.npy"], "old.npy", signal.SIGINT),
            ("run .json", ["run"] + common + ["-o", "old.json"], "old.json", signal.SIGTERM),
            ("export heatmap", ["export", "heatmap"] + common + ["-o", "old.png"], "old.png", signal.SIGINT),
            ("export --all-heads", ["export", "heatmap", "--all-heads"] + common + ["-o", "heads/"], None,
             signal.SIGINT),
            ("trace", ["trace"] + common + ["--layer", "0", "--head", "0", "--query", "0"], None, signal.SIGINT),
            ("predict", ["predict"] + common, None, signal.SIGINT),
            ("stats", ["stats"] + common + ["-o", "old-stats.json"], "old-stats.json", signal.SIGINT),
            ("similarity", ["similarity"] + common + ["-o", "old-sim.csv"], "old-sim.csv", signal.SIGTERM),
            ("diff", ["diff"] + common + ["--heads-off", "3:5", "-o", "old-diff.json"], "old-diff.json",
             signal.SIGINT),
            ("importance", ["importance", "--model", model, "--corpus", corpus, "-o", "old-imp.csv"], "old-imp.csv",
             signal.SIGINT),
            ("importance .json", ["importance", "--model", model, "--corpus", corpus, "-o", "old-imp.json"],
             "old-imp.json", signal.SIGTERM),
        ]
        # the signal comes 30% into what an uninterrupted run takes on this machine, at least
        # 0.3 s (the handler is installed) and at most 1 s (the load may drop after this run)
        t0 = time.monotonic()
        full = subprocess.run([exe, "run"] + common + ["-o", "full.npy"], cwd=out, capture_output=True)
        whole = time.monotonic() - t0
        if full.returncode != 0:
            print("FAIL: the uninterrupted run failed: %s" % full.stderr.decode(errors="replace"), file=sys.stderr)
            return 1
        os.remove(os.path.join(out, "full.npy"))
        delay = min(1.0, max(0.3, 0.3 * whole))
        print("an uninterrupted run takes %.2f s; signals after %.2f s" % (whole, delay))
        for name, args, path, sig in cases:
            before = None
            if path:
                before = ("the old %s, which must stay as it was\n" % path).encode()
                with open(os.path.join(out, path), "wb") as f:
                    f.write(before)
            p = subprocess.Popen([exe] + args, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            time.sleep(delay)
            if p.poll() is not None:
                failures.append("%s: finished (exit %d) before the signal; the test model is too small"
                                % (name, p.returncode))
                p.communicate()
                continue
            p.send_signal(sig)
            t0 = time.monotonic()
            try:
                so, se = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                so, se = p.communicate()
                failures.append("%s: still running 30 s after %s" % (name, sig.name))
                continue
            took = time.monotonic() - t0
            err = se.decode(errors="replace")
            if p.returncode != 130:
                failures.append("%s: exit %d after %s, expected 130; stderr: %s" % (name, p.returncode,
                                                                                  sig.name, err.strip()))
            if "attnscope: interrupted" not in err:
                failures.append("%s: stderr lacks 'interrupted': %s" % (name, err.strip()))
            if took > 10:
                failures.append("%s: took %.1f s to stop" % (name, took))
            if path:
                with open(os.path.join(out, path), "rb") as f:
                    if f.read() != before:
                        failures.append("%s: the existing %s was replaced" % (name, path))
            left = [f for f in os.listdir(out) if f.startswith(".atn-")]
            if left:
                failures.append("%s: temporary files left: %s" % (name, left))
                for f in left:
                    os.remove(os.path.join(out, f))
            heads = os.path.join(out, "heads")
            if os.path.isdir(heads) and [f for f in os.listdir(heads) if f.startswith(".atn-")]:
                failures.append("%s: temporary files left in heads/" % name)
            print("%-20s %s: exit %d in %.2f s" % (name, sig.name, p.returncode, took))
        # a FIFO nobody reads: the open waits, and Ctrl-C ends the wait
        fifo = os.path.join(out, "fifo.npy")
        os.mkfifo(fifo)
        p = subprocess.Popen([exe, "run", "--model", "worked-example", "-o", fifo], cwd=out,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.5)
        if p.poll() is not None:
            failures.append("FIFO: finished (exit %d) without a reader" % p.returncode)
        p.send_signal(signal.SIGINT)
        try:
            so, se = p.communicate(timeout=10)
            if p.returncode != 130 or b"attnscope: interrupted" not in se:
                failures.append("FIFO: exit %d, stderr %s" % (p.returncode, se.decode(errors="replace").strip()))
            print("%-20s SIGINT: exit %d" % ("run -o FIFO", p.returncode))
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            failures.append("FIFO: still waiting for a reader 10 s after SIGINT")
        if not os.path.exists(fifo) or not stat.S_ISFIFO(os.stat(fifo).st_mode):
            failures.append("FIFO: replaced")
        tokenizing(exe, tmp, failures)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


# A Unigram tokenizer.json with the pieces "a", "aa", ... up to 1,500 "a": its Viterbi search
# walks up to 1,500 trie steps at each of the text's 120,000 characters (as the Rust library's
# common-prefix search does), seconds of tokenizing in 30 MB before any layer runs.
LONGEST_PIECE = 1500


def slow_tokenizer_model(d):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + ["a" * k for k in range(1, LONGEST_PIECE + 1)]
    write_sparse_bert(d, 1, 2, 64, 64, 512, vocab)
    import json
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump({"version": "1.0", "pre_tokenizer": {"type": "WhitespaceSplit"},
                   "model": {"type": "Unigram", "unk_id": 1,
                             "vocab": [[w, -10.0 if i < 5 else -float(i - 4)] for i, w in enumerate(vocab)]}}, f)


def tokenizing(exe, tmp, failures):
    """Ctrl-C while the tokenizer works on a huge input (issue 41): `run`, `tokenize` and a corpus
    line of `stats --corpus` stop
    within a fraction of the tokenizing time (the tokenizer's loops ask the CLI's cancel
    hook), exit 130 and say "interrupted".  Before, the signal waited for the whole text."""
    model = os.path.join(tmp, "slow-tokenizer")
    os.mkdir(model)
    slow_tokenizer_model(model)
    text = "a" * 120000
    corpus = os.path.join(tmp, "one-long-line.txt")
    with open(corpus, "w") as f:
        f.write(text + "\n")
    cases = [("run (tokenizing)", ["run", "--model", model, "--text", text, "-o", "tok.npy"]),
             ("tokenize", ["tokenize", "--model", model, "--text", text]),
             ("stats --corpus", ["stats", "--model", model, "--corpus", corpus, "-o", "tok-stats.json"])]
    out = os.path.join(tmp, "out")
    for name, args in cases:
        t0 = time.monotonic()
        full = subprocess.run([exe] + args, cwd=out, capture_output=True)
        whole = time.monotonic() - t0
        if full.returncode != 0:
            failures.append("%s: the uninterrupted run failed: %s" % (name, full.stderr.decode(errors="replace")))
            continue
        delay = max(0.3, 0.2 * whole)
        p = subprocess.Popen([exe] + args, cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(delay)
        if p.poll() is not None:
            failures.append("%s: finished before the signal" % name)
            p.communicate()
            continue
        p.send_signal(signal.SIGINT)
        t1 = time.monotonic()
        try:
            _, se = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            failures.append("%s: still running 60 s after SIGINT" % name)
            continue
        took = time.monotonic() - t1
        err = se.decode(errors="replace")
        if p.returncode != 130 or "attnscope: interrupted" not in err:
            failures.append("%s: exit %d, stderr %s" % (name, p.returncode, err.strip()))
        # what was left of the tokenizing is about 0.8 of it; stopping must take far less
        if took > max(0.5, 0.25 * whole):
            failures.append("%s: took %.2f s to stop (an uninterrupted run takes %.2f s)" % (name, took, whole))
        for f in os.listdir(out):
            if f.startswith(".atn-"):
                failures.append("%s: temporary file %s left" % (name, f))
                os.remove(os.path.join(out, f))
        print("%-20s SIGINT after %.2f s: exit %d in %.2f s (uninterrupted %.2f s)" % (name, delay, p.returncode,
                                                                                      took, whole))


if __name__ == "__main__":
    sys.exit(main())
