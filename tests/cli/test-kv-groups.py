#!/usr/bin/env python3
"""similarity --by-kv-group and stats --by-kv-group (issue 33) on the grouped-query test folders
of tests/hf (llama-f32: 4 query heads over 2 K/V heads; mistral-window: 8 over 2; llama-bf16-mqa:
4 over 1), against figures computed here from the torch reference's attention
(tests/hf/fixtures/<model>-single-attn.npy, written by tests/hf/gen_decoders.py, which never
calls attnscope):

- cosine similarity of two heads' flattened maps, then the mean over pairs of distinct heads
  within one group (query heads h*g .. h*g+g-1 read K/V head h), between groups of one layer,
  and each group-by-group cell; the Jensen-Shannon distance (mean over query rows of the
  square root of the base-2 JS divergence) the same way, to 1e-4 (attnscope's log2 is a
  polynomial good to 2.5e-7, which a square root near 0 magnifies);
- per-head row entropy in bits and attention to the token itself, averaged over the group.

stats --from PARTIAL --by-kv-group (a merged partial and one shard) equals stats --corpus
--by-kv-group on the same lines (JSON within 1e-9 relative, CSV byte for byte) and the mean of the
group's heads' means; a partial of a model without groups exits 2 naming n_kv_heads.
Also: a model whose every query head has its own K/V head exits 2 naming --by-kv-group; the
attention file `run -o` writes for llama-f32 holds n_kv_heads 2 and kv_heads [0, 0, 1, 1] (issue
36), and stats / similarity --by-kv-group and export grid (its K/V group brackets) on it equal
--model's; a file without them exits 2
naming n_kv_heads, one with another map exits 2 naming kv_heads.
No NumPy: the .npy files are read with struct.
Usage: test-kv-groups.py ATTNSCOPE"""
import ast
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HF = os.path.join(HERE, "..", "hf")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + hlen].decode("latin-1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    shape = header["shape"]
    flat = struct.unpack("<%df" % (len(data[10 + hlen:]) // 4), data[10 + hlen:])
    L, H, n, _ = shape
    return [[[list(flat[((l * H + h) * n + i) * n:((l * H + h) * n + i + 1) * n]) for i in range(n)]
             for h in range(H)] for l in range(L)]


def cosine(a, b):
    x = [v for row in a for v in row]
    y = [v for row in b for v in row]
    return sum(p * q for p, q in zip(x, y)) / math.sqrt(sum(p * p for p in x) * sum(q * q for q in y))


def js(a, b):
    total = 0.0
    for p, q in zip(a, b):
        def h(r):
            return -sum(v * math.log2(v) for v in r if v > 0)
        d = h([(u + v) / 2 for u, v in zip(p, q)]) - (h(p) + h(q)) / 2
        total += math.sqrt(max(d, 0.0))
    return total / len(a)


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p


def group_figures(att, kv, metric):
    """within, between, and the (layer, kv) x (layer, kv) matrix of pair means, model scope."""
    L, H = len(att), len(att[0])
    g = H // kv
    heads = [(l, h) for l in range(L) for h in range(H)]
    sums, counts = {}, {}
    within, between = [], []
    for i, (l1, h1) in enumerate(heads):
        for j, (l2, h2) in enumerate(heads):
            if i == j:
                continue
            v = metric(att[l1][h1], att[l2][h2])
            key = (l1 * kv + h1 // g, l2 * kv + h2 // g)
            sums[key] = sums.get(key, 0.0) + v
            counts[key] = counts.get(key, 0) + 1
            if j > i and key[0] == key[1]:
                within.append(v)
            elif j > i and l1 == l2:
                between.append(v)
    cells = {k: sums[k] / counts[k] for k in sums}
    mean = (lambda xs: sum(xs) / len(xs) if xs else None)
    return mean(within), mean(between), cells


def similarity(exe, model, tmp):
    folder = os.path.join(HF, "models", model)
    fx = json.load(open(os.path.join(HF, "fixtures", model + ".json")))
    case = next(c for c in fx["cases"] if c["name"] == "single")
    att = read_npy(os.path.join(HF, "fixtures", model + "-single-attn.npy"))
    kv, H, L = fx["n_kv_heads"], fx["n_heads"], fx["n_layers"]
    ids = ",".join(str(i) for i in case["ids"])
    for metric, fn, tol in (("cosine", cosine, 1e-5), ("js", js, 1e-4)):
        out = os.path.join(tmp, "%s-%s.json" % (model, metric))
        run([exe, "similarity", "--model", folder, "--ids", ids, "--metric", metric, "--by-kv-group", "-o", out])
        try:
            doc = json.load(open(out))["kv_groups"]
        except (OSError, ValueError, KeyError) as e:
            check(False, "%s %s: no kv_groups in the output (%s)" % (model, metric, e))
            continue
        within, between, cells = group_figures(att, kv, fn)
        check(doc["kv_heads"] == kv and doc["heads_per_group"] == H // kv,
              "%s: kv_heads %r, heads_per_group %r" % (model, doc["kv_heads"], doc["heads_per_group"]))
        check([g["heads"] for g in doc["groups"][:kv]] == [list(range(k * H // kv, (k + 1) * H // kv))
                                                            for k in range(kv)], "%s: groups %r" % (model, doc["groups"]))
        check(len(doc["values"]) == L * kv, "%s: %d groups, expected %d" % (model, len(doc["values"]), L * kv))
        worst = abs(doc["within"] - within)
        if between is None:
            check(doc["between"] is None, "%s %s: between %r with one group per layer" % (model, metric, doc["between"]))
        else:
            worst = max(worst, abs(doc["between"] - between))
        for (a, b), v in cells.items():
            worst = max(worst, abs(doc["values"][a][b] - v))
        check(worst <= tol, "%s %s: max |attnscope - here| = %g > %g (within %r vs %r)" % (model, metric, worst, tol,
                                                                                          doc["within"], within))
        print("%s, %d heads over %d K/V heads, %s: within %.6f, between %s; max difference %.2g" % (
            model, H, kv, metric, within, "%.6f" % between if between is not None else "none (one group)", worst))
    # the layer scope: the groups of one layer only
    out = os.path.join(tmp, model + "-layer.csv")
    run([exe, "similarity", "--model", folder, "--ids", ids, "--metric", "cosine", "--layer", str(L - 1),
         "--by-kv-group", "-o", out])
    rows = [line.split(",") for line in open(out).read().splitlines()]
    _, _, cells = group_figures([att[L - 1]], kv, cosine)
    check(rows[0] == ["group"] + ["KV%d" % k for k in range(kv)], "%s layer csv header %r" % (model, rows[0]))
    for a in range(kv):
        for b in range(kv):
            if (a, b) in cells:
                check(abs(float(rows[1 + a][1 + b]) - cells[(a, b)]) <= 1e-5, "%s layer csv [%d][%d] %s vs %g" % (
                    model, a, b, rows[1 + a][1 + b], cells[(a, b)]))


def stats(exe, model, tmp):
    folder = os.path.join(HF, "models", model)
    fx = json.load(open(os.path.join(HF, "fixtures", model + ".json")))
    case = next(c for c in fx["cases"] if c["name"] == "single")
    att = read_npy(os.path.join(HF, "fixtures", model + "-single-attn.npy"))
    kv, H = fx["n_kv_heads"], fx["n_heads"]
    g = H // kv
    out = os.path.join(tmp, model + "-stats.json")
    run([exe, "stats", "--model", folder, "--ids", ",".join(str(i) for i in case["ids"]), "--by-kv-group", "-o", out])
    try:
        doc = json.load(open(out))
    except (OSError, ValueError) as e:
        check(False, "%s stats: %s" % (model, e))
        return
    worst = 0.0
    for grp in doc["groups"]:
        l, k = grp["layer"], grp["kv_head"]
        check(grp["heads"] == list(range(k * g, (k + 1) * g)), "%s stats heads %r" % (model, grp["heads"]))
        ent = sum(sum(-sum(v * math.log2(v) for v in row if v > 0) for row in att[l][h]) / len(att[l][h])
                  for h in grp["heads"]) / g
        self_ = sum(sum(att[l][h][i][i] for i in range(len(att[l][h]))) / len(att[l][h]) for h in grp["heads"]) / g
        worst = max(worst, abs(grp["entropy"] - ent), abs(grp["self"] - self_))
    check(len(doc["groups"]) == fx["n_layers"] * kv, "%s stats: %d groups" % (model, len(doc["groups"])))
    check(worst <= 1e-5, "%s stats: max |attnscope - here| = %g" % (model, worst))
    print("%s stats by K/V group: entropy and self within %.2g" % (model, worst))


def read_st_meta(path):
    """A safetensors file's __metadata__ (string -> string)."""
    with open(path, "rb") as f:
        hlen = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(hlen)).get("__metadata__", {})


def write_st_meta(src, dst, meta):
    """src with its __metadata__ replaced by meta (offsets are relative to the data: unchanged)."""
    with open(src, "rb") as f:
        hlen = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(hlen))
        data = f.read()
    header["__metadata__"] = meta
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def partials(exe, model, tmp):
    """stats --from PARTIAL --by-kv-group: two shards of a 12-line corpus merged (and one shard alone)
    against stats --corpus --by-kv-group over the same lines, and each group's figure against the
    mean of its heads' means that stats --from prints per head."""
    folder = os.path.join(HF, "models", model)
    d = os.path.join(tmp, "parts-" + model)
    os.makedirs(d)
    words = "the cat sat on mat a dog ran to park and it was very happy today we like tea one two red".split()
    lines = [" ".join(words[(7 * i + 3 * j) % len(words)] for j in range(3 + i % 9)) for i in range(12)]
    for name, part in (("c.txt", lines), ("c0.txt", lines[:6])):
        with open(os.path.join(d, name), "w") as f:
            f.write("\n".join(part) + "\n")
    c, c0 = os.path.join(d, "c.txt"), os.path.join(d, "c0.txt")
    p0, p1, m = (os.path.join(d, x) for x in ("p0.safetensors", "p1.safetensors", "m.safetensors"))
    run([exe, "stats", "--model", folder, "--corpus", c, "--shard", "0/2", "-o", p0])
    run([exe, "stats", "--model", folder, "--corpus", c, "--shard", "1/2", "-o", p1])
    run([exe, "stats", "merge", p1, p0, "-o", m])
    check(read_st_meta(m).get("n_kv_heads") is not None, "%s: the merged partial has no n_kv_heads" % model)
    worst = worst_heads = 0.0
    for part, corpus, n in ((m, c, 12), (p0, c0, 6)):
        got = json.loads(run([exe, "stats", "--from", part, "--by-kv-group", "--format", "json"]).stdout or "{}")
        ref = json.loads(run([exe, "stats", "--model", folder, "--corpus", corpus, "--by-kv-group", "--format",
                              "json"]).stdout or "{}")
        heads = json.loads(run([exe, "stats", "--from", part, "--format", "json"]).stdout or "{}")
        check(got.get("sentences") == n and len(got.get("groups", [])) == len(ref.get("groups", [None])),
              "%s --from %s --by-kv-group: %r sentences, %d groups" % (
                  model, os.path.basename(part), got.get("sentences"), len(got.get("groups", []))))
        for a, b in zip(got.get("groups", []), ref.get("groups", [])):
            for k, v in b.items():
                if isinstance(v, float):
                    worst = max(worst, abs(a[k] - v) / max(abs(v), 1e-300))
                else:
                    check(a[k] == v, "%s --from --by-kv-group %s: %r, --corpus %r" % (model, k, a[k], v))
            # the count-weighted mean of the group's heads' means (every head counts n sentences)
            hs = [h for h in heads["heads"] if h["layer"] == a["layer"] and h["head"] in a["heads"]]
            for k in ("entropy", "self", "prev", "distance", "cls"):   # the heads' means are printed to 9 digits
                want = sum(h[k] * n for h in hs) / (n * len(hs))
                worst_heads = max(worst_heads, abs(a[k] - want) / max(abs(want), 1e-300))
        csv = [run([exe, "stats"] + src + ["--by-kv-group", "--format", "csv"]).stdout
               for src in (["--from", part], ["--model", folder, "--corpus", corpus])]
        check(csv[0] == csv[1] and csv[0].startswith("layer,kv_head,"), "%s --from %s --by-kv-group csv differs from "
              "--corpus's" % (model, os.path.basename(part)))
    check(worst <= 1e-9, "%s stats --from --by-kv-group vs --corpus: largest relative difference %g" % (model, worst))
    check(worst_heads <= 1e-8, "%s stats --from --by-kv-group vs its heads' means: largest relative difference %g" % (
        model, worst_heads))
    print("%s stats --from (merged, one shard) --by-kv-group: vs --corpus --by-kv-group largest relative difference "
          "%.2g, vs the mean of its heads' means (9 digits) %.2g" % (model, worst, worst_heads))


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for model in ("llama-f32", "mistral-window", "llama-bf16-mqa"):
            similarity(exe, model, tmp)
            stats(exe, model, tmp)
            if model == "mistral-window":   # 8 query heads over 2 K/V heads (each run is ~0.3 s)
                partials(exe, model, tmp)
        for cmd in (["similarity", "-o", os.path.join(tmp, "x.json")], ["stats"]):
            p = subprocess.run([exe] + cmd[:1] + ["--model", os.path.join(HF, "models", "llama-sharded"), "--ids",
                                                  "3,4,5", "--by-kv-group"] + cmd[1:],
                               capture_output=True, text=True, timeout=600)
            check(p.returncode == 2 and "--by-kv-group" in p.stderr and "own K/V head" in p.stderr,
                  "%s on a model without groups: exit %d, %r" % (cmd[0], p.returncode, p.stderr))
        # a partial of a model without groups records no n_kv_heads: --from --by-kv-group exits 2 saying so
        nog = os.path.join(tmp, "nogroups.safetensors")
        corpus = os.path.join(tmp, "two.txt")
        with open(corpus, "w") as f:
            f.write("the cat sat\na dog ran\n")
        run([exe, "stats", "--model", os.path.join(HF, "models", "llama-sharded"), "--corpus", corpus, "-o", nog])
        check("n_kv_heads" not in read_st_meta(nog), "a partial of llama-sharded (a K/V head per head) records n_kv_heads")
        p = subprocess.run([exe, "stats", "--from", nog, "--by-kv-group"], capture_output=True, text=True, timeout=600)
        check(p.returncode == 2 and "--by-kv-group" in p.stderr and "n_kv_heads" in p.stderr and "nogroups" in p.stderr,
              "stats --from a partial without groups --by-kv-group: exit %d, %r" % (p.returncode, p.stderr))
        p = subprocess.run([exe, "stats", "--model", os.path.join(HF, "models", "llama-f32"), "--corpus", corpus,
                            "--shard", "0/1", "--by-kv-group", "-o", os.path.join(tmp, "x.safetensors")],
                           capture_output=True, text=True, timeout=600)
        check(p.returncode == 2 and "--by-kv-group" in p.stderr, "--by-kv-group writing a partial: exit %d, %r" % (
            p.returncode, p.stderr))
        # run -o writes "n_kv_heads" and "kv_heads": --by-kv-group on the file gives --model's figures
        att = os.path.join(tmp, "a.safetensors")
        llama = os.path.join(HF, "models", "llama-f32")
        run([exe, "run", "--model", llama, "--ids", "3,4,5", "-o", att])
        meta = read_st_meta(att)
        check(meta.get("n_kv_heads") == "2" and json.loads(meta.get("kv_heads", "null")) == [0, 0, 1, 1],
              "run -o on llama-f32 (4 heads over 2 K/V heads): n_kv_heads %r, kv_heads %r" % (
                  meta.get("n_kv_heads"), meta.get("kv_heads")))
        for cmd, key in (("stats", "groups"), ("similarity", "kv_groups")):
            docs = []
            for src in (["--model", llama, "--ids", "3,4,5"], ["--attention", att]):
                out = os.path.join(tmp, "%s-%s.json" % (cmd, src[0][2:]))
                run([exe, cmd] + src + ["--by-kv-group", "-o", out])
                try:
                    docs.append(json.load(open(out))[key])
                except (OSError, ValueError, KeyError) as e:
                    docs.append(None)
                    check(False, "%s %s --by-kv-group: %s" % (cmd, src[0], e))
            check(docs[0] is not None and docs[0] == docs[1], "%s --by-kv-group: --attention %r != --model %r" % (
                cmd, docs[1], docs[0]))
            print("%s --by-kv-group --attention FILE equals --model: %s" % (cmd, docs[0] == docs[1]))
        # the file's capture carries n_kv_heads: the model grid brackets the K/V groups as --model's does
        grids = []
        for src in (["--model", llama, "--ids", "3,4,5"], ["--attention", att]):
            out = os.path.join(tmp, "grid-%s.svg" % src[0][2:])
            run([exe, "export", "grid"] + src + ["-o", out])
            grids.append(open(out, "rb").read() if os.path.exists(out) else None)
        check(grids[0] is not None and grids[0] == grids[1], "export grid --attention differs from --model's")
        # a file that does not say which K/V head each query head reads: exit 2, saying so
        bare = os.path.join(tmp, "bare.safetensors")
        write_st_meta(att, bare, {k: v for k, v in meta.items() if k not in ("n_kv_heads", "kv_heads")})
        for cmd in (["similarity", "-o", os.path.join(tmp, "y.json")], ["stats"]):
            p = subprocess.run([exe] + cmd[:1] + ["--attention", bare, "--by-kv-group"] + cmd[1:], capture_output=True,
                               text=True, timeout=600)
            check(p.returncode == 2 and "--by-kv-group" in p.stderr and "n_kv_heads" in p.stderr,
                  "%s --attention without n_kv_heads: exit %d, %r" % (cmd[0], p.returncode, p.stderr))
        # a map other than h / (H / n_kv_heads): exit 2 naming the key
        bad = os.path.join(tmp, "bad.safetensors")
        write_st_meta(att, bad, dict(meta, kv_heads="[0, 1, 0, 1]"))
        p = subprocess.run([exe, "stats", "--attention", bad, "--by-kv-group"], capture_output=True, text=True,
                           timeout=600)
        check(p.returncode == 2 and '"kv_heads"' in p.stderr and "bad.safetensors" in p.stderr,
              "a bad kv_heads map: exit %d, %r" % (p.returncode, p.stderr))
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
