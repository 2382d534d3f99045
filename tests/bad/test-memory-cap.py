#!/usr/bin/env python3
"""The memory check before a run honours limits other than physical memory (engine/core/memlimit.c).

1. RLIMIT_AS (ulimit -v), set on the child: a run of 2048 tokens through a sparse 2-layer,
   16-head model needs 561.5 MB for the full capture (2 x 16 x 2048^2 floats of attention and
   the rest), more than a 640 MiB address space leaves; it runs with heads made on demand
   (41.4 MB: one head's 2048^2 instead of 32), says so, and writes the .npy byte for byte as
   the same run without the limit.  12,288 tokens do not fit even on demand (1.26 GB: a head
   and the mask, 12288^2 floats each): refused with exit 2 before anything is allocated,
   naming both figures and the limit; 256 tokens (9 MB) run in full.  SKIP when the binary
   cannot start under the limit (a sanitizer build reserves terabytes of shadow memory).
2. A memory cgroup (v2, a child of this process's own cgroup, memory.max 300 MiB): the same
   12,288-token run is refused naming the cgroup's limit instead of being OOM-killed.  SKIP
   where no such cgroup can be created (no cgroup v2 memory controller delegated here).

Usage: test-memory-cap.py ATTNSCOPE
"""
import importlib.util
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("catalogue", os.path.join(HERE, "run-catalogue.py"))
catalogue = importlib.util.module_from_spec(spec)
spec.loader.exec_module(catalogue)

A = os.path.abspath(sys.argv[1])
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")
LIMIT = 640 << 20
failures, skips = [], []


def run(args, preexec=None):
    return subprocess.run([A] + args, capture_output=True, env=ENV, timeout=120, preexec_fn=preexec)


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def as_limit():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, resource.getrlimit(resource.RLIMIT_AS)[1]))


tmp = tempfile.mkdtemp(prefix="attnscope-memcap-")
try:
    model = os.path.join(tmp, "model")
    os.makedirs(model)
    catalogue.sparse_model(model, "2 16 64 64 12288 24")
    big = ["run", "--model", model, "--ids", ",".join(["5"] * 2048), "-o", os.path.join(tmp, "big.npy")]
    small = ["run", "--model", model, "--ids", ",".join(["5"] * 256), "-o", os.path.join(tmp, "small.npy")]
    huge = ["run", "--model", model, "--ids", ",".join(["5"] * 12288), "-o", os.path.join(tmp, "huge.npy")]

    # the figures by hand (floats, L 2, H 16, d = f = 64): hidden 3nd, Q K V ctx out 5Lnd, the
    # attention LHn^2 (on demand: one head n^2), one nd block, nf, the mask n^2, n positions
    def need_bytes(n, on_demand):
        L, H, d, f = 2, 16, 64, 64
        return 4 * ((L + 1) * n * d + 5 * L * n * d + (1 if on_demand else L * H) * n * n + n * d + n * f + n * n + n)
    assert round(need_bytes(2048, False) / 1e6, 1) == 561.5 and round(need_bytes(2048, True) / 1e6, 1) == 41.4
    need = ("a run of 12288 tokens through 2 layers x 16 heads needs %.1f GB of memory (attention alone: "
            "2 x 16 x 12288 x 12288 floats) or %.1f GB with heads made on demand" %
            (need_bytes(12288, False) / 1e9, need_bytes(12288, True) / 1e9))
    assert need.endswith("needs 20.0 GB of memory (attention alone: 2 x 16 x 12288 x 12288 floats) "
                         "or 1.3 GB with heads made on demand")

    # 1. RLIMIT_AS
    if run(["--version"], as_limit).returncode != 0:
        skips.append("RLIMIT_AS: the binary does not start under a 640 MiB address space (sanitizer build?)")
    else:
        r = run(huge, as_limit)
        err = r.stderr.decode()
        expect(r.returncode == 2, "RLIMIT_AS: the 12288-token run exits 2 (got %d: %s)" % (r.returncode, err.strip()))
        expect(re.fullmatch(re.escape("attnscope: " + need) + r", more than the [0-9.]+ MB allowed by RLIMIT_AS "
                            r"\(ulimit -v\) of 0\.67 GB with 0\.[0-9]+ GB of address space in use\n", err) is not None,
               "RLIMIT_AS: the message names both needs and the limit: %r" % err)
        expect(not os.path.exists(os.path.join(tmp, "huge.npy")), "RLIMIT_AS: nothing written")
        r = run(big, as_limit)
        err = r.stderr.decode()
        expect(r.returncode == 0 and "each head is made again when it is read" in err,
               "RLIMIT_AS: the 2048-token run goes on demand (%d: %s)" % (r.returncode, err.strip()))
        full = big[:-1] + [os.path.join(tmp, "full.npy")]
        r2 = run(full)
        expect(r2.returncode == 0 and "made again" not in r2.stderr.decode(), "the same run without the limit: full")
        same = False
        if r.returncode == 0 and r2.returncode == 0:
            with open(os.path.join(tmp, "big.npy"), "rb") as a, open(os.path.join(tmp, "full.npy"), "rb") as b:
                same = True
                while same:
                    x, y = a.read(1 << 20), b.read(1 << 20)
                    same = x == y
                    if not x:
                        break
            expect(os.path.getsize(os.path.join(tmp, "big.npy")) == 128 + 2 * 16 * 2048 * 2048 * 4, "big.npy size")
        expect(same, "RLIMIT_AS: the on-demand .npy is byte for byte the full capture's")
        r = run(small, as_limit)
        expect(r.returncode == 0 and os.path.getsize(os.path.join(tmp, "small.npy")) > 2 * 16 * 256 * 256 * 4,
               "RLIMIT_AS: the 256-token run fits and runs (%d %s)" % (r.returncode, r.stderr.decode().strip()))

    # 2. a memory cgroup of our own (v2 only; nothing is created elsewhere)
    cg = None
    try:
        with open("/proc/self/cgroup") as f:
            own = next((l.split("::", 1)[1].strip() for l in f if l.startswith("0::")), None)
        for mount in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
            base = mount + (own if own and own != "/" else "")
            ctrl = os.path.join(base, "cgroup.controllers")
            if own is not None and os.path.exists(ctrl) and "memory" in open(ctrl).read().split():
                cg = os.path.join(base, "attnscope-test-%d" % os.getpid())
                os.mkdir(cg)
                with open(os.path.join(cg, "memory.max"), "w") as f:
                    f.write(str(300 << 20))
                break
    except OSError as e:
        cg = None
        skips.append("memory cgroup: cannot create one here (%s)" % e)
    if cg is None:
        if not any(s.startswith("memory cgroup") for s in skips):
            skips.append("memory cgroup: no cgroup v2 memory controller in this process's cgroup")
    else:
        def join_cgroup():
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        try:
            r = run(huge, join_cgroup)
            err = r.stderr.decode()
            expect(r.returncode == 2 and err.startswith("attnscope: " + need) and
                   "allowed by the memory cgroup's limit of 0.31 GB" in err,
                   "memory cgroup: refused naming the cgroup (%d: %s)" % (r.returncode, err.strip()))
        finally:
            try:
                os.rmdir(cg)
            except OSError:
                pass
finally:
    shutil.rmtree(tmp, ignore_errors=True)

for s in skips:
    print("SKIP " + s)
if failures:
    sys.exit(1)
sys.exit(77 if len(skips) == 2 else 0)   # 77: nothing could be checked (meson's SKIP)
