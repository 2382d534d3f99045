#!/usr/bin/env python3
"""stats and similarity --stack encoder|decoder|cross (issue 34) against numpy, written here
from the definitions (docs/cli.md "stats", engine/include/analysis.h), on the random-weight T5
v1.0 and BART folders of tests/hf/models (gen_encdec.py): the maps are the command line's own
`run -o x.npz` arrays "encoder", "decoder" and "cross"; the token kinds come from the folder's
tokenizer.json (the id's piece: "</s>" is [SEP], "<s>"/"[CLS]" [CLS], a piece made only of
punctuation (ASCII symbols included) is punctuation unless it is a special token).

Checked, per stack and head: entropy (bits) and entropy_norm, cls, sep, punct; for the two
self-attention stacks self, prev, next, local (|i - j| <= 2), distance and same_segment; for
cross-attention (target rows over source keys) those are not defined: null in JSON, nan in the
CSV, "-" in the table.  similarity --stack decoder|cross: Jensen-Shannon (mean over the target
rows of the distance between two heads' rows); for cross also cosine and Pearson of the
flattened maps.

Usage: test-stats-stack.py ATTNSCOPE SOURCE_ROOT.  Needs numpy (python3-numpy): re-runs itself
with /usr/bin/python3 when this python lacks it, else skips (77)."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unicodedata
import zipfile

try:
    import numpy as np
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("numpy is not installed: skipped")
    sys.exit(77)

A, ROOT = sys.argv[1], sys.argv[2]
SOURCE, TARGET = "The cat is in the house, the dog is not.", "I see the cat."
STACKS = ("encoder", "decoder", "cross")


def attnscope(*args):
    p = subprocess.run([A, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: attnscope %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def is_punct(piece):
    """head-stats.c's rule: every character punctuation (ASCII: every non-alphanumeric printable;
    beyond ASCII: a Unicode punctuation category, P*: "▁" (So) is not)."""
    if piece.startswith("##") and len(piece) > 2:
        piece = piece[2:]
    if not piece:
        return False
    for ch in piece:
        c = ord(ch)
        if c < 0x80:
            if not (33 <= c <= 47 or 58 <= c <= 64 or 91 <= c <= 96 or 123 <= c <= 126):
                return False
        elif unicodedata.category(ch)[0] != "P":
            return False
    return True


def kinds_of(ids, folder):
    """[n] kinds: 'cls', 'sep', 'punct' or '' from the tokenizer.json piece of each id."""
    tok = json.load(open(os.path.join(folder, "tokenizer.json"), encoding="utf-8"))
    pieces = [p for p, _ in tok["model"]["vocab"]]
    special = {a["id"] for a in tok["added_tokens"] if a.get("special")}
    out = []
    for i in ids:
        p = pieces[i]
        out.append("cls" if p in ("<s>", "[CLS]") else "sep" if p in ("</s>", "[SEP]") else
                   "punct" if i not in special and is_punct(p) else "")
    return out


def head_stats(a, qkeep, kkeep, kinds, square):
    """One head [nq][nk]: the means over the kept query rows (numpy, double)."""
    a = a.astype(np.float64)[np.ix_(qkeep, kkeep)]
    w = np.where(a > 0, a, 1.0)
    ent = -(a * np.log2(w)).sum(axis=1)
    m = len(kkeep)
    s = {"entropy": ent.mean(), "entropy_norm": (ent / np.log2(m)).mean() if m > 1 else 0.0}
    for k in ("cls", "sep", "punct"):
        cols = np.array([kinds[j] == k for j in kkeep])
        s[k] = a[:, cols].sum(axis=1).mean()
    if not square:
        for k in ("self", "prev", "next", "local", "same_segment", "distance"):
            s[k] = None
        return s
    assert qkeep == kkeep   # a self-attention stack: the same tokens down and across
    keep = qkeep
    d = np.abs(np.array(keep)[:, None] - np.array(keep)[None, :])
    m = len(keep)
    s["self"] = np.diag(a).mean()
    prev = [a[r, r - 1] for r in range(1, m) if keep[r - 1] == keep[r] - 1]
    nxt = [a[r, r + 1] for r in range(m - 1) if keep[r + 1] == keep[r] + 1]
    s["prev"] = np.mean(prev) if prev else 0.0
    s["next"] = np.mean(nxt) if nxt else 0.0
    s["local"] = (a * (d <= 2)).sum(axis=1).mean()
    s["same_segment"] = 1.0   # one text
    s["distance"] = (a * d).sum(axis=1).mean()
    return s


def js(a, b):
    """Mean over the rows of the Jensen-Shannon distance (bits) between two heads."""
    def h(p):
        return -(p * np.log2(np.where(p > 0, p, 1.0))).sum(axis=1)
    a, b = a.astype(np.float64), b.astype(np.float64)
    d = h((a + b) / 2) - (h(a) + h(b)) / 2
    return np.sqrt(np.maximum(d, 0)).mean()


def similarity(heads, metric):
    c = len(heads)
    out = np.zeros((c, c))
    flat = np.array([h.astype(np.float64).ravel() for h in heads])
    if metric == "pearson":
        flat = flat - flat.mean(axis=1, keepdims=True)
    for i in range(c):
        for j in range(c):
            if metric == "js":
                out[i, j] = 0.0 if i == j else js(heads[i], heads[j])
            else:
                n = np.linalg.norm(flat[i]) * np.linalg.norm(flat[j])
                out[i, j] = flat[i] @ flat[j] / n if n > 0 else 0.0
    return out


def close(got, want, tol, what):
    if want is None:
        if got is not None:
            sys.exit("FAIL: %s: %r, expected null (not defined)" % (what, got))
        return
    if got is None or abs(got - want) > tol * max(1.0, abs(want)):
        sys.exit("FAIL: %s: attnscope %r, numpy %r" % (what, got, want))


def check(folder):
    name = os.path.basename(folder)
    base = ["--model", folder, "--text", SOURCE, "--target", TARGET]
    with tempfile.TemporaryDirectory() as t:
        attnscope("run", *base, "-o", t + "/x.npz")
        attnscope("run", *base, "-o", t + "/x.json")
        z = np.load(t + "/x.npz")
        meta = json.load(open(t + "/x.json"))
    src_ids, src_mask, tgt_ids = meta["source_ids"], meta["source_mask"], meta["target_ids"]
    kinds = {"encoder": kinds_of(src_ids, folder), "cross": kinds_of(src_ids, folder),
             "decoder": kinds_of(tgt_ids, folder)}
    src_keep = [i for i, m in enumerate(src_mask) if m]
    assert z["cross"].shape[2] == len(tgt_ids) != len(src_ids), z["cross"].shape
    assert any(k == "sep" for k in kinds["cross"]) and any(k == "punct" for k in kinds["cross"]), kinds["cross"]
    assert any(k == "punct" for k in kinds["decoder"]), kinds["decoder"]   # the target's "."
    for stack in STACKS:
        arr = z[stack]
        L, H, nq, nk = arr.shape
        qkeep = src_keep if stack == "encoder" else list(range(nq))
        kkeep = src_keep if stack != "decoder" else list(range(nk))
        got = json.loads(attnscope("stats", *base, "--stack", stack, "--format", "json"))
        assert got["stack"] == stack and got["layers"] == L and got["heads_per_layer"] == H, got["stack"]
        assert got["tokens"] == len(qkeep), (got["tokens"], len(qkeep))
        for row in got["heads"]:
            l, h = row["layer"], row["head"]
            want = head_stats(arr[l, h], qkeep, kkeep, kinds[stack], stack != "cross")
            for k, v in want.items():
                close(row[k], v, 1e-6, "%s %s L%d H%d %s" % (name, stack, l, h, k))
        if stack == "cross":   # a cross head's positional figures: nan in the CSV, "-" in the table
            rows = list(csv.DictReader(io.StringIO(attnscope("stats", *base, "--stack", stack, "--format", "csv"))))
            assert len(rows) == L * H and all(r["self"] == "nan" and r["distance"] == "nan" for r in rows), rows[0]
            close(float(rows[-1]["entropy"]), got["heads"][-1]["entropy"], 1e-8, "cross CSV entropy")
            table = attnscope("stats", *base, "--stack", stack).splitlines()
            assert table[0].startswith("cross-attention heads"), table[0]
            cells = table[3].split()
            assert cells[7:13] == ["-"] * 6, table[3]
        if stack == "encoder":   # --stack encoder is the default
            assert got["heads"] == json.loads(attnscope("stats", *base, "--format", "json"))["heads"]
            continue
        for metric in ("js", "cosine", "pearson") if stack == "cross" else ("js",):   # fewer runs under ASan
            with tempfile.TemporaryDirectory() as t:
                attnscope("similarity", *base, "--stack", stack, "--metric", metric, "-o", t + "/s.json")
                sim = json.load(open(t + "/s.json"))
            assert sim["stack"] == stack and len(sim["labels"]) == L * H, (sim["stack"], sim["labels"])
            heads = [arr[l, h][np.ix_(qkeep, kkeep)] for l in range(L) for h in range(H)]
            want = similarity(heads, metric)
            got_v = np.array(sim["values"], dtype=np.float64)
            err = np.abs(got_v - want).max()
            print("%s similarity --stack %s --metric %s: largest difference %.3g" % (name, stack, metric, err))
            # js: the engine's log2 is a polynomial (2.5e-7), and a square root magnifies it near 0
            if err > (2e-5 if metric == "js" else 5e-6):
                sys.exit("FAIL: %s similarity --stack %s --metric %s: off by %g" % (name, stack, metric, err))
        print("%s: %s stats and similarity match numpy" % (name, stack))
    print("%s: encoder stats match numpy" % name)


for m in ("t5-v1-f32", "bart-f32"):
    check(os.path.join(ROOT, "tests", "hf", "models", m))
print("ok")
