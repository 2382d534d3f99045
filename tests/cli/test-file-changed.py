#!/usr/bin/env python3
"""A model file that shrinks while a corpus run is in flight (issue 19, item 1): the weights are
used in place from the file's mapping, and before the SIGBUS guard (engine/core/mapguard.c) the
process died with SIGBUS (exit 135) in embeddings_forward.  Now the run stops with exit 2 and
"FILE: the file changed while the model was open (it is now 200 bytes, was N); reopen the
model", and nothing is written.  Also a copy replaced in place by cp (same size, new bytes)
before the run starts: refused the same way at the first sentence.

Usage: test-file-changed.py ATTNSCOPE  (ATN_SOURCE_ROOT: the source tree)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

A = os.path.abspath(sys.argv[1])
SRC = os.environ.get("ATN_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(SRC, "tests", "hf", "models", "f32")
failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


tmp = tempfile.mkdtemp(prefix="attnscope-changed-")
try:
    corpus = os.path.join(tmp, "corpus.txt")
    with open(corpus, "w") as f:
        f.write("the cat sat on the mat\n" * 200000)   # far longer than the test waits
    copy = os.path.join(tmp, "model")
    shutil.copytree(MODEL, copy)
    weights = os.path.join(copy, "model.safetensors")
    size = os.path.getsize(weights)
    out = os.path.join(tmp, "stats.json")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    p = subprocess.Popen([A, "stats", "--model", copy, "--corpus", corpus, "-o", out],
                         stderr=subprocess.PIPE, env=env)
    # truncate once the run is under way (the model is open and sentences are running)
    time.sleep(1.0)
    still_running = p.poll() is None
    os.truncate(weights, 200)
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    err = err.decode("utf-8", "backslashreplace")
    expect(still_running, "the corpus run was still in flight when the file was truncated")
    expect(p.returncode == 2, "exit 2, not SIGBUS (got %s)" % p.returncode)
    want = "%s: the file changed while the model was open (it is now 200 bytes, was %d); reopen the model" % (
        weights, size)
    expect(want in err and "Bus error" not in err, "the message names the file: %r" % err.strip())
    expect(not os.path.exists(out), "no statistics written")

    # rewritten in place during the run with the same size (cp over it writes the same inode):
    # no SIGBUS to catch, so the check before each forward (size, mtime, inode) refuses it
    shutil.rmtree(copy)
    shutil.copytree(MODEL, copy)
    p = subprocess.Popen([A, "stats", "--model", copy, "--corpus", corpus, "-o", out],
                         stderr=subprocess.PIPE, env=env)
    time.sleep(1.0)
    with open(os.path.join(MODEL, "model.safetensors"), "rb") as f:
        data = f.read()
    with open(weights, "r+b") as f:   # other weights, same length, same inode
        f.write(data[:-4096] + bytes(reversed(data[-4096:])))
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    err = err.decode("utf-8", "backslashreplace")
    expect(p.returncode == 2 and "the file changed while the model was open (it is now %d bytes, was %d)" % (
        size, size) in err, "rewritten in place: refused (%s: %r)" % (p.returncode, err.strip()))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
