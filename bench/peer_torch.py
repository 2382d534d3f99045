#!/usr/bin/python3
"""The PyTorch peer of `attnscope bench`: the same BERT shapes and inputs, run in PyTorch
eager mode the way Hugging Face's BertModel runs with output_attentions=True and
output_hidden_states=True (every layer's attention probabilities and hidden states kept).

Timing:   peer_torch.py --shape bert-base --length 8,128,512 --repeat 10 [--threads 2] [--json]
Corpus:   peer_torch.py --shape bert-base --corpus IDS [--batch 32] [--repeat 1] [--json]
          the sentences of `attnscope bench --corpus N --dump-corpus IDS`, padded batches of 32
Checking: peer_torch.py --shape bert-tiny --length 77 --check PREFIX
          rebuilds attnscope's random weights exactly (atn_model_new_random's generator,
          engine/include/attnscope.h),
          runs them and compares with PREFIX.attn.npy / PREFIX.hidden.npy written by
          `attnscope bench --shape bert-tiny --length 77 --dump PREFIX`.  Exit 1 if any
          value differs by more than --tol (1e-4).

Needs Debian's python3-torch (and numpy).  Threads: torch.set_num_threads(T) for its own
kernels; its matrix products go to the system OpenBLAS (libblas.so.3), whose threads follow
OPENBLAS_NUM_THREADS (bench.sh sets both to T).
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

SHAPES = {  # layers, d, heads, ffn (as engine/core/random-model.c)
    "bert-tiny": (2, 128, 2, 512),
    "bert-base": (12, 768, 12, 3072),
    "bert-large": (24, 1024, 16, 4096),
}
VOCAB, POSITIONS, TYPES, EPS = 30522, 512, 2, 1e-12
W_SCALE, B_SCALE, G_SCALE = np.float32(0.0346), np.float32(0.02), np.float32(0.1)
M64 = (1 << 64) - 1


def mix64(z):
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def gen(seed, t, index, center, scale):
    """Elements `index` (uint64 array) of tensor number t, as engine/core/random-model.c makes them."""
    base = np.uint64((seed * 0x9E3779B97F4A7C15 + (t << 40)) & M64)
    with np.errstate(over="ignore"):
        x = mix64(base + index)
    u = (x >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    return np.float32(center) + scale * (np.float32(2.0) * u - np.float32(1.0))


def tensor(seed, t, shape, center, scale):
    count = int(np.prod(shape))
    return torch.from_numpy(gen(seed, t, np.arange(count, dtype=np.uint64), center, scale).reshape(shape))


def bench_ids(n):
    """The input of attnscope bench: [CLS] ids [SEP], token type 1 for the second half."""
    ids = [101 if i == 0 else 102 if i == n - 1 else 1000 + (i * 7919) % (VOCAB - 1000) for i in range(n)]
    types = [1 if i >= n // 2 else 0 for i in range(n)]
    return ids, types


def exact_weights(shape, seed, ids):
    """attnscope's random weights (only the word-embedding rows the input uses)."""
    L, d, H, f = SHAPES[shape]
    uniq = sorted(set(ids))
    rows = np.array(uniq, dtype=np.uint64)
    index = (rows[:, None] * np.uint64(d) + np.arange(d, dtype=np.uint64)[None, :]).reshape(-1)
    word_rows = torch.from_numpy(gen(seed, 0, index, 0.0, W_SCALE).reshape(len(uniq), d))
    remap = {tok: i for i, tok in enumerate(uniq)}
    w = {
        "word": word_rows,
        "ids": [remap[i] for i in ids],
        "pos": tensor(seed, 1, (POSITIONS, d), 0.0, W_SCALE),
        "type": tensor(seed, 2, (TYPES, d), 0.0, W_SCALE),
        "emb_g": tensor(seed, 3, (d,), 1.0, G_SCALE),
        "emb_b": tensor(seed, 4, (d,), 0.0, B_SCALE),
        "layers": [],
    }
    t = 5
    for _ in range(L):
        lw = {}
        for name in ("q", "k", "v", "o"):
            lw["w" + name] = tensor(seed, t, (d, d), 0.0, W_SCALE)
            lw["b" + name] = tensor(seed, t + 1, (d,), 0.0, B_SCALE)
            t += 2
        lw["ln1_g"] = tensor(seed, t, (d,), 1.0, G_SCALE)
        lw["ln1_b"] = tensor(seed, t + 1, (d,), 0.0, B_SCALE)
        lw["w1"] = tensor(seed, t + 2, (f, d), 0.0, W_SCALE)
        lw["b1"] = tensor(seed, t + 3, (f,), 0.0, B_SCALE)
        lw["w2"] = tensor(seed, t + 4, (d, f), 0.0, W_SCALE)
        lw["b2"] = tensor(seed, t + 5, (d,), 0.0, B_SCALE)
        lw["ln2_g"] = tensor(seed, t + 6, (d,), 1.0, G_SCALE)
        lw["ln2_b"] = tensor(seed, t + 7, (d,), 0.0, B_SCALE)
        t += 8
        w["layers"].append(lw)
    return w


def random_weights(shape, ids):
    """Weights of the same shapes for timing (values do not change the time)."""
    L, d, H, f = SHAPES[shape]
    g = torch.Generator().manual_seed(1)

    def u(*s, center=0.0, scale=0.0346):
        return (torch.rand(*s, generator=g) * 2 - 1) * scale + center

    w = {"word": u(VOCAB, d), "ids": list(ids), "pos": u(POSITIONS, d), "type": u(TYPES, d),
         "emb_g": u(d, center=1.0, scale=0.1), "emb_b": u(d, scale=0.02), "layers": []}
    for _ in range(L):
        lw = {}
        for name in ("q", "k", "v", "o"):
            lw["w" + name], lw["b" + name] = u(d, d), u(d, scale=0.02)
        lw.update(ln1_g=u(d, center=1.0, scale=0.1), ln1_b=u(d, scale=0.02), w1=u(f, d), b1=u(f, scale=0.02),
                  w2=u(d, f), b2=u(d, scale=0.02), ln2_g=u(d, center=1.0, scale=0.1), ln2_b=u(d, scale=0.02))
        w["layers"].append(lw)
    return w


def forward(w, types, H):
    """Hugging Face BertModel's eager forward (post-LN), batch of one, no padding; returns
    the attention probabilities [L][1,H,n,n] and hidden states [L+1][1,n,d], all kept."""
    ids = torch.tensor([w["ids"]])
    tt = torch.tensor([types])
    n = ids.shape[1]
    d = w["pos"].shape[1]
    k = d // H
    x = w["word"][ids] + w["pos"][:n].unsqueeze(0) + w["type"][tt]
    x = F.layer_norm(x, (d,), w["emb_g"], w["emb_b"], EPS)
    mask = torch.zeros(1, 1, 1, n)   # (1 - attention_mask) * finfo.min, nothing padded
    hidden, attentions = [x], []
    for lw in w["layers"]:
        def heads(t):
            return t.view(1, n, H, k).transpose(1, 2)
        q = heads(F.linear(x, lw["wq"], lw["bq"]))
        kk = heads(F.linear(x, lw["wk"], lw["bk"]))
        v = heads(F.linear(x, lw["wv"], lw["bv"]))
        scores = torch.matmul(q, kk.transpose(-1, -2)) / math.sqrt(k) + mask
        probs = torch.softmax(scores, dim=-1)
        attentions.append(probs)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(1, n, d)
        h1 = F.layer_norm(F.linear(ctx, lw["wo"], lw["bo"]) + x, (d,), lw["ln1_g"], lw["ln1_b"], EPS)
        inter = F.gelu(F.linear(h1, lw["w1"], lw["b1"]))
        x = F.layer_norm(F.linear(inter, lw["w2"], lw["b2"]) + h1, (d,), lw["ln2_g"], lw["ln2_b"], EPS)
        hidden.append(x)
    return attentions, hidden


def forward_padded(w, ids, H, batch):
    """The same BERT over a corpus as Hugging Face runs a padded batch: sentences in input
    order, `batch` at a time, each batch padded to its longest sentence (pad id 0), the
    padded keys masked with (1 - attention_mask) * finfo.min, every layer's probabilities
    and hidden states kept (output_attentions / output_hidden_states)."""
    d = w["pos"].shape[1]
    k = d // H
    kept = 0
    for b0 in range(0, len(ids), batch):
        group = ids[b0:b0 + batch]
        B, n = len(group), max(len(s) for s in group)
        tok = torch.zeros(B, n, dtype=torch.long)
        am = torch.zeros(B, n)
        for i, s in enumerate(group):
            tok[i, :len(s)] = torch.tensor(s)
            am[i, :len(s)] = 1
        x = w["word"][tok] + w["pos"][:n].unsqueeze(0) + w["type"][torch.zeros_like(tok)]
        x = F.layer_norm(x, (d,), w["emb_g"], w["emb_b"], EPS)
        mask = ((1.0 - am) * torch.finfo(torch.float32).min)[:, None, None, :]
        hidden, attentions = [x], []
        for lw in w["layers"]:
            def heads(t):
                return t.view(B, n, H, k).transpose(1, 2)
            q = heads(F.linear(x, lw["wq"], lw["bq"]))
            kk = heads(F.linear(x, lw["wk"], lw["bk"]))
            v = heads(F.linear(x, lw["wv"], lw["bv"]))
            scores = torch.matmul(q, kk.transpose(-1, -2)) / math.sqrt(k) + mask
            probs = torch.softmax(scores, dim=-1)
            attentions.append(probs)
            ctx = torch.matmul(probs, v).transpose(1, 2).reshape(B, n, d)
            h1 = F.layer_norm(F.linear(ctx, lw["wo"], lw["bo"]) + x, (d,), lw["ln1_g"], lw["ln1_b"], EPS)
            inter = F.gelu(F.linear(h1, lw["w1"], lw["b1"]))
            x = F.layer_norm(F.linear(inter, lw["w2"], lw["b2"]) + h1, (d,), lw["ln2_g"], lw["ln2_b"], EPS)
            hidden.append(x)
        kept += len(attentions) + len(hidden)
        del attentions, hidden
    return kept


def corpus(args):
    """Times a corpus pass over the ids of `attnscope bench --corpus N --dump-corpus FILE`."""
    L, d, H, f = SHAPES[args.shape]
    ids = [[int(t) for t in line.split()] for line in open(args.corpus) if line.strip()]
    flat = sorted({t for s in ids for t in s})
    w = exact_weights(args.shape, args.seed, flat)   # attnscope's weights (word rows remapped)
    remap = {t: i for i, t in enumerate(flat)}
    rid = [[remap[t] for t in s] for s in ids]
    times = []
    with torch.inference_mode():
        forward_padded(w, rid[:args.batch], H, args.batch)   # warm-up
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            forward_padded(w, rid, H, args.batch)
            times.append(time.perf_counter() - t0)
    best = min(times)
    tokens = sum(len(s) for s in ids)
    padded = sum(max(len(s) for s in ids[b:b + args.batch]) * len(ids[b:b + args.batch])
                 for b in range(0, len(ids), args.batch))
    doc = {"tool": "torch", "mode": "corpus", "version": torch.__version__, "shape": args.shape,
           "torch_threads": torch.get_num_threads(), "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
           "blas_kernel": blas_core(), "sentences": len(ids), "tokens": tokens, "padded_tokens": padded,
           "batch": args.batch, "repeat": args.repeat, "seconds": best, "seconds_all": times,
           "sentences_per_s": len(ids) / best}
    if args.json:
        print(json.dumps(doc))
    else:
        print(f"torch {torch.__version__}, {args.shape}: {len(ids)} sentences ({tokens} tokens, {padded} padded) "
              f"in batches of {args.batch}: {best:.3f} s, {len(ids) / best:.1f} sentences/s")
    return 0


def blas_core():
    """The OpenBLAS kernel torch's products run on (the library torch already loaded)."""
    for name in ("libopenblas.so.0", "libblas.so.3"):
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return "unknown"


def flops(shape, n):
    L, d, H, f = SHAPES[shape]
    return L * (8 * n * d * d + 4 * n * n * d + 4 * n * d * f)


def check(args):
    n = args.lengths[0]
    ids, types = bench_ids(n)
    L, d, H, f = SHAPES[args.shape]
    w = exact_weights(args.shape, args.seed, ids)
    with torch.inference_mode():
        att, hid = forward(w, types, H)
    want_att = torch.cat(att, 0).numpy()              # [L, H, n, n]
    want_hid = torch.cat(hid, 0).numpy()              # [L+1, n, d]
    got_att = np.load(args.check + ".attn.npy")
    got_hid = np.load(args.check + ".hidden.npy")
    ok = True
    for name, got, want in (("attention", got_att, want_att), ("hidden states", got_hid, want_hid)):
        if got.shape != want.shape:
            print(f"{name}: shape {got.shape}, torch has {want.shape}")
            ok = False
            continue
        diff = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
        print(f"{name} {list(got.shape)}: max |attnscope - torch| = {diff:.3g} (tolerance {args.tol:g})")
        ok &= diff <= args.tol
    return 0 if ok else 1


def timing(args):
    L, d, H, f = SHAPES[args.shape]
    results = []
    weights = None
    for n in args.lengths:
        ids, types = bench_ids(n)
        if weights is None:
            weights = random_weights(args.shape, ids)
        weights["ids"] = ids
        times = []
        with torch.inference_mode():
            for _ in range(args.warmup):
                forward(weights, types, H)
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                att, hid = forward(weights, types, H)
                times.append(time.perf_counter() - t0)
                del att, hid
        med = statistics.median(times)
        results.append({"tokens": n, "repeat": args.repeat, "forward_ms_median": med * 1e3,
                        "forward_ms_min": min(times) * 1e3, "gflops": flops(args.shape, n) / med / 1e9})
        if not args.json:
            print(f"{n:6d} {med * 1e3:9.2f} {min(times) * 1e3:9.2f} {flops(args.shape, n) / med / 1e9:8.1f}")
    doc = {"tool": "torch", "version": torch.__version__, "shape": args.shape, "torch_threads": torch.get_num_threads(),
           "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"), "blas_kernel": blas_core(),
           "results": results}
    if args.json:
        print(json.dumps(doc))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="bert-base", choices=sorted(SHAPES))
    p.add_argument("--length", default="128", help="comma-separated token counts")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.add_argument("--check", metavar="PREFIX", help="compare with attnscope bench --dump PREFIX")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--corpus", metavar="FILE", help="ids of attnscope bench --dump-corpus: time a corpus pass")
    p.add_argument("--batch", type=int, default=32, help="with --corpus: sentences per padded batch")
    args = p.parse_args()
    args.lengths = [int(x) for x in args.length.split(",")]
    if any(not 1 <= n <= POSITIONS for n in args.lengths):
        p.error("lengths must be 1..512")
    torch.set_num_threads(args.threads)
    if args.check:
        return check(args)
    if args.corpus:
        if args.repeat == 10:
            args.repeat = 1
        return corpus(args)
    if not args.json:
        print(f"torch {torch.__version__} eager, {args.shape}, torch threads {torch.get_num_threads()}, "
              f"OpenBLAS kernel {blas_core()}\n{'tokens':>6} {'fwd ms':>9} {'min ms':>9} {'GFLOP/s':>8}")
    return timing(args)


if __name__ == "__main__":
    sys.exit(main())
