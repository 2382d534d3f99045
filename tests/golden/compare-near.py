#!/usr/bin/env python3
"""Compares golden outputs within a tolerance, for a machine whose kind has no recorded set
(tests/golden/test-golden.sh): compare-near.py RECORDED_DIR OUT_DIR [TOL]

Every file of RECORDED_DIR but KERNEL must be in OUT_DIR and agree with it:
  .npy        the same header (dtype, shape), and every float within TOL
  other text  the same text once numbers are set aside, integers equal, every other number
              within TOL
where a and b agree within TOL when |a - b| <= TOL * max(1, |a|, |b|) (absolute below 1,
relative above; NaN only with NaN).  TOL defaults to 1e-4.  Prints one line per file (its
largest difference) and each disagreement; exit 0 when all agree, 1 otherwise."""
import math
import os
import re
import struct
import sys

NUM = re.compile(rb"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf|NaN|Infinity)")


def within(a, b, tol):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b), 0.0
    if math.isinf(a) or math.isinf(b):
        return a == b, 0.0
    d = abs(a - b) / max(1.0, abs(a), abs(b))
    return d <= tol, d


def npy(data):
    if data[:6] != b"\x93NUMPY":
        raise ValueError("not an .npy file")
    major = data[6]
    hlen = struct.unpack("<H", data[8:10])[0] if major == 1 else struct.unpack("<I", data[8:12])[0]
    start = (10 if major == 1 else 12) + hlen
    return data[:start], data[start:]


def compare(recorded, out, tol):
    """(largest relative difference, [messages])"""
    with open(recorded, "rb") as f:
        a = f.read()
    with open(out, "rb") as f:
        b = f.read()
    worst, msgs = 0.0, []
    if recorded.endswith(".npy"):
        ha, da = npy(a)
        hb, db = npy(b)
        if ha != hb or len(da) != len(db):
            return math.inf, ["header or size differs: %r vs %r" % (ha[10:].strip(), hb[10:].strip())]
        if b"'<f4'" not in ha:
            return (0.0, []) if da == db else (math.inf, ["not float32, and the bytes differ"])
        n = len(da) // 4
        fa, fb = struct.unpack("<%df" % n, da), struct.unpack("<%df" % n, db)
        for i in range(n):
            ok, d = within(fa[i], fb[i], tol)
            worst = max(worst, d)
            if not ok and len(msgs) < 5:
                msgs.append("float %d: %r recorded, %r now" % (i, fa[i], fb[i]))
        return (worst if not msgs else max(worst, tol * 2)), msgs
    ta, tb = NUM.split(a), NUM.split(b)
    na, nb = NUM.findall(a), NUM.findall(b)
    if ta != tb or len(na) != len(nb):
        for i, (x, y) in enumerate(zip(ta, tb)):
            if x != y:
                return math.inf, ["the text differs at piece %d: %r recorded, %r now" % (i, x[:60], y[:60])]
        return math.inf, ["the text differs in length: %d pieces recorded, %d now" % (len(ta), len(tb))]
    for x, y in zip(na, nb):
        if re.fullmatch(rb"[-+]?\d+", x) and re.fullmatch(rb"[-+]?\d+", y):
            if int(x) != int(y) and len(msgs) < 5:
                msgs.append("integer %s recorded, %s now" % (x.decode(), y.decode()))
            continue
        ok, d = within(float(x), float(y), tol)
        worst = max(worst, d)
        if not ok and len(msgs) < 5:
            msgs.append("%s recorded, %s now" % (x.decode(), y.decode()))
    return worst, msgs


def main(argv):
    recorded, out = argv[1], argv[2]
    tol = float(argv[3]) if len(argv) > 3 else 1e-4
    fail = 0
    for name in sorted(os.listdir(recorded)):
        if name == "KERNEL":
            continue
        if not os.path.exists(os.path.join(out, name)):
            print("FAIL %s: no output" % name)
            fail = 1
            continue
        worst, msgs = compare(os.path.join(recorded, name), os.path.join(out, name), tol)
        print("%s %s: largest difference %.3g (tolerance %g)" % ("FAIL" if msgs else "ok", name, worst, tol))
        for m in msgs:
            print("    " + m)
        fail |= bool(msgs)
    return fail


if __name__ == "__main__":
    sys.exit(main(sys.argv))
