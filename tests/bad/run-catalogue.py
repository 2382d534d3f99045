#!/usr/bin/env python3
"""Runs the bad-file catalogue (tests/bad/catalogue.txt) through the command line.

For each case: a fresh temporary folder gets the case's base (tests/bad/base or
base-sharded), then the case's own files from tests/bad/cases/<case>/ on top, then the
removals and run-time setups the entry names (things git cannot hold: a folder without
permissions, a symlink loop, a sparse multi-GB model).  The command runs with the case
folder as {dir} and must exit with the given code and print exactly the given text on
stderr (no sanitizer report, no other line).

Usage: run-catalogue.py ATTNSCOPE [--print] [CASE ...]
  --print   show what each case prints now (paths as {dir}), for writing new entries
Exit status 0 when every case passed (skipped ones are named).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
from sparse_bert import write_sparse_bert  # noqa: E402  (tests/bad/sparse_bert.py)


def parse(path):
    cases, cur = [], None
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line.startswith(" "):
                word, _, rest = line.partition(" ")
                if word != "case":
                    sys.exit("%s:%d: expected 'case NAME'" % (path, lineno))
                cur = {"name": rest.strip(), "base": "base", "remove": [], "setup": [],
                       "stderr": [], "creates": [], "contains": [], "exit": None, "run": None, "line": lineno}
                cases.append(cur)
                continue
            key, _, value = line.strip().partition(" ")
            if key in ("remove", "setup", "stderr", "creates", "contains"):
                cur[key].append(value)
            elif key in ("base", "run"):
                cur[key] = value
            elif key == "exit":
                cur["exit"] = int(value)
            else:
                sys.exit("%s:%d: unknown key %r" % (path, lineno, key))
    for c in cases:
        if c["run"] is None or c["exit"] is None or not c["stderr"]:
            sys.exit("%s:%d: case %s needs run, exit and stderr" % (path, c["line"], c["name"]))
    return cases


def sparse_model(d, spec):
    """setup sparse-model L H D F P V: a Hugging Face folder whose model.safetensors has the
    right header for that shape and all-zero (sparse, never read) F32 data; the vocabulary
    is base/vocab.txt's, V the config's vocab_size."""
    L, H, D, F, P, V = (int(x) for x in spec.split())
    with open(os.path.join(HERE, "base", "vocab.txt"), encoding="utf-8") as f:
        base_vocab = f.read().splitlines()
    # the tensors are sized for V entries; vocab.txt is the base's (at most V lines)
    write_sparse_bert(d, L, H, D, F, P, (base_vocab + ["[unused%d]" % i for i in range(V)])[:V])
    shutil.copy(os.path.join(HERE, "base", "vocab.txt"), os.path.join(d, "vocab.txt"))


def prepare(case, tmp):
    d = os.path.join(tmp, case["name"])
    if case["base"] != "none":
        shutil.copytree(os.path.join(HERE, case["base"]), d)
    else:
        os.makedirs(d)
    own = os.path.join(HERE, "cases", case["name"])
    if os.path.isdir(own):
        for f in os.listdir(own):
            shutil.copy(os.path.join(own, f), os.path.join(d, f))
    for f in case["remove"]:
        os.remove(os.path.join(d, f))
    skip = None
    as_user = None
    for s in case["setup"]:
        word, _, arg = s.partition(" ")
        if word == "symlink-loop":          # arg: a name in the folder that points at itself
            p = os.path.join(d, arg)
            if os.path.lexists(p):
                os.remove(p)
            os.symlink(arg, p)
        elif word == "symlink-loop-folder":  # the case folder itself is a loop
            shutil.rmtree(d)
            os.symlink(os.path.basename(d), d)
        elif word == "chmod":               # arg: MODE [NAME]; needs a non-root user to mean anything
            mode, _, name = arg.partition(" ")
            os.chmod(os.path.join(d, name) if name else d, int(mode, 8))
            if os.geteuid() == 0:
                if shutil.which("setpriv") and nobody_can_run():
                    as_user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
                else:
                    skip = "runs as root and cannot drop to 'nobody'"
        elif word == "symlink":             # arg: NAME TARGET (a dangling link when TARGET is absent)
            name, _, target = arg.partition(" ")
            p = os.path.join(d, name)
            if os.path.lexists(p):
                os.remove(p)
            os.symlink(target, p)
        elif word == "sparse":              # arg: NAME BYTES (a sparse file of that size, never read)
            name, _, size = arg.partition(" ")
            with open(os.path.join(d, name), "ab") as f:
                f.truncate(int(size))
        elif word == "sparse-model":
            sparse_model(d, arg)
        elif word == "fifo":
            p = os.path.join(d, arg)
            if os.path.lexists(p):
                os.remove(p)
            os.mkfifo(p)
        else:
            sys.exit("case %s: unknown setup %r" % (case["name"], s))
    return d, as_user, skip


_nobody_ok = None


def nobody_can_run():
    """True when user 'nobody' can run the binary and reach the temporary folder."""
    global _nobody_ok
    if _nobody_ok is None:
        try:
            r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                "--", ATTNSCOPE, "--version"], capture_output=True, timeout=60)
            _nobody_ok = r.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _nobody_ok = False
    return _nobody_ok


def expand(s, d, out):
    return s.replace("{dir}", d).replace("{out}", out)


def expand_arg(a, d, out):
    """{dir} {out}, {ids:N} (N ids "5,5,..."), {words:N} (N words), and \\xNN escapes for
    bytes that are not UTF-8 (the argument becomes bytes)."""
    a = expand(a, d, out)
    m = re.fullmatch(r"\{ids:(\d+)\}", a)
    if m:
        return ",".join(["5"] * int(m.group(1)))
    a = re.sub(r"\{words:(\d+)\}", lambda m: " ".join(["cat"] * int(m.group(1))), a)
    if "\\x" in a:
        parts = re.split(r"\\x([0-9a-fA-F]{2})", a)
        return b"".join(bytes([int(p, 16)]) if i % 2 else p.encode() for i, p in enumerate(parts))
    return a


# What a build with gcov instrumentation (make coverage: -Db_coverage=true) adds to stderr
# when the program exits: libgcov writes the .gcda counters then, and a case run as 'nobody'
# cannot write them (the build folder is root's), two processes merging at once mismatch, and
# so on ("profiling:/.../x.gcda:Merge mismatch for function 12", "libgcov profiling error:
# ...:overwriting an existing profile data with a different timestamp").  These lines are no
# part of the program's message and are dropped before the comparison; attnscope's own lines
# never start like this.
COVERAGE_NOISE = re.compile(r"^(?:profiling:|libgcov profiling error:).*(?:\n|$)", re.M)


def without_coverage_noise(err):
    return COVERAGE_NOISE.sub("", err)


def stderr_matches(got, want):
    """Exact, except that {num} in the expected text stands for a machine-dependent
    number (the memory limit comes from the machine's RAM)."""
    if "{num}" not in want:
        return got == want
    parts = re.split(r"(\{num\})", want)   # odd items are the placeholders
    pattern = "".join(r"[0-9]+(?:\.[0-9]+)?" if i % 2 else re.escape(p)
                      for i, p in enumerate(parts))
    return re.fullmatch(pattern, got, re.S) is not None


DOUBLED_PREFIX = re.compile(r"^attnscope(?: [\w-]+)?: attnscope\b")


def main():
    global ATTNSCOPE
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    ATTNSCOPE = os.path.abspath(args.pop(0))
    show = "--print" in args
    names = [a for a in args if a != "--print"]
    cases = parse(os.path.join(HERE, "catalogue.txt"))
    # one prefix per message: "attnscope: ..." or "attnscope CMD: ...", never both
    doubled = [(c["name"], s) for c in cases for s in c["stderr"] if DOUBLED_PREFIX.search(s)]
    for name, s in doubled:
        print("FAIL %s: the catalogue expects a doubled prefix: %s" % (name, s))
    if names:
        cases = [c for c in cases if c["name"] in names]
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    passed, failed, skipped = 0, [], []
    tmp = tempfile.mkdtemp(prefix="attnscope-bad-")
    os.chmod(tmp, 0o755)
    try:
        for case in cases:
            d, as_user, skip = prepare(case, tmp)
            out = os.path.join(tmp, "out-" + case["name"])
            os.makedirs(out)
            os.chmod(out, 0o777)
            if skip and not show:
                skipped.append("%s (%s)" % (case["name"], skip))
                print("SKIP %s: %s" % (case["name"], skip))
                continue
            argv = (as_user or []) + [ATTNSCOPE] + [expand_arg(a, d, out) for a in
                                                    shlex.split(case["run"])]
            try:
                r = subprocess.run(argv, capture_output=True, env=env, timeout=120)
                err = without_coverage_noise(r.stderr.decode("utf-8", "backslashreplace"))
                rc = r.returncode
            except subprocess.TimeoutExpired:
                err, rc = "(timed out after 120 s)\n", "timeout"
            want = "\n".join(expand(s, d, out) for s in case["stderr"]) + "\n"
            if case["stderr"] == ["(none)"]:   # a run that must print nothing
                want = ""
            if show:
                print("case %s  (exit %s)" % (case["name"], rc))
                for line in err.replace(d, "{dir}").replace(out, "{out}").splitlines():
                    print("  stderr " + line)
                continue
            problems = []
            if "Sanitizer" in err or "runtime error:" in err or "==ERROR" in err:
                problems.append("a sanitizer report")
            if rc != case["exit"]:
                problems.append("exit %s, expected %d" % (rc, case["exit"]))
            if any(DOUBLED_PREFIX.search(line) for line in err.splitlines()):
                problems.append("a doubled \"attnscope: attnscope\" prefix")
            if not stderr_matches(err, want):
                problems.append("stderr differs")
            for f in case["creates"]:
                if not os.path.isfile(expand(f, d, out)):
                    problems.append("%s was not written" % f)
            for spec in case["contains"]:   # FILE TEXT: the written file holds TEXT
                f, _, text = spec.partition(" ")
                try:
                    with open(expand(f, d, out), encoding="utf-8") as fh:
                        if text not in fh.read():
                            problems.append("%s lacks %r" % (f, text))
                except OSError as e:
                    problems.append("%s: %s" % (f, e))
            if problems:
                failed.append(case["name"])
                print("FAIL %s (catalogue.txt line %d): %s" % (case["name"], case["line"],
                                                              "; ".join(problems)))
                print("  expected stderr:\n    " + want.rstrip("\n").replace("\n", "\n    "))
                print("  got:\n    " + err.rstrip("\n").replace("\n", "\n    "))
            else:
                passed += 1
                print("ok   %s: exit %d: %s" % (case["name"], rc, (err.strip().splitlines() or ["(no message)"])[-1]))
    finally:
        for root, dirs, _ in os.walk(tmp):
            for x in dirs:
                p = os.path.join(root, x)
                if not os.path.islink(p):
                    os.chmod(p, 0o755)
        shutil.rmtree(tmp, ignore_errors=True)
    if show:
        return 0
    print("%d cases: %d passed, %d failed, %d skipped%s" % (
        len(cases), passed, len(failed), len(skipped),
        "" if not failed else " (failed: %s)" % ", ".join(failed)))
    return 1 if failed or doubled else 0


if __name__ == "__main__":
    sys.exit(main())
