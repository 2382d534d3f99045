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

Decoders: peer_torch.py --shape qwen2.5-0.5b|smollm2-135m|llama-3.2-1b --length 128,512 --threads 0
          the shapes of engine/core/random-decoder.c, written as transformers' LlamaModel /
          Qwen2Model run with eager attention and output_attentions=True (RMSNorm in float32,
          the rotation of LlamaRotaryEmbedding and apply_rotary_pos_emb, repeat_kv, the
          softmax in float32, every layer's probabilities and hidden states kept); --check
          works for them too (the embedding rows the input uses rebuilt exactly), and
          --write-reference PREFIX writes torch's arrays instead of comparing (the fixture
          tests/bench/fixtures/smollm2-8.*.npy: --shape smollm2-135m --length 8).

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
# The decoder shapes of engine/core/random-decoder.c: the published config.json values that
# shape the forward (Qwen/Qwen2.5-0.5B, HuggingFaceTB/SmolLM2-135M, meta-llama/Llama-3.2-1B)
DECODERS = {
    "qwen2.5-0.5b": dict(model_type="qwen2", layers=24, d=896, heads=14, kv=2, head_dim=64, ffn=4864,
                         vocab=151936, positions=32768, theta=1000000.0, eps=1e-6, rope_scaling=None),
    "smollm2-135m": dict(model_type="llama", layers=30, d=576, heads=9, kv=3, head_dim=64, ffn=1536,
                         vocab=49152, positions=8192, theta=100000.0, eps=1e-5, rope_scaling=None),
    "llama-3.2-1b": dict(model_type="llama", layers=16, d=2048, heads=32, kv=8, head_dim=64, ffn=8192,
                         vocab=128256, positions=131072, theta=500000.0, eps=1e-5,
                         rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                           original_max_position_embeddings=8192)),
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


def bench_ids(n, vocab=VOCAB):
    """The input of attnscope bench: [CLS] ids [SEP], token type 1 for the second half
    (app/cli.c, cli_encode_tokens; a decoder reads the same ids and no types)."""
    ids = [101 if i == 0 else 102 if i == n - 1 else 1000 + (i * 7919) % (vocab - 1000) for i in range(n)]
    types = [1 if i >= n // 2 else 0 for i in range(n)]
    return ids, types


# ---- the rotary decoders (Llama, Qwen2), as transformers' modeling_llama.py / modeling_qwen2.py
# run them with attn_implementation="eager", output_attentions=True, output_hidden_states=True

def decoder_inv_freq(c):
    """modeling_rope_utils: _compute_default_rope_parameters, or _compute_llama3_parameters."""
    dim, base = c["head_dim"], c["theta"]
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim))
    rs = c["rope_scaling"]
    if rs is None:
        return inv
    assert rs["rope_type"] == "llama3"
    factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    low_wl, high_wl = old / lo, old / hi
    wavelen = 2 * math.pi / inv
    inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
    smooth = (old / wavelen - lo) / (hi - lo)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
    return torch.where(medium, smoothed, inv_l)


def decoder_tensors(c):
    """(name, shape, center, scale) in engine/core/random-decoder.c's order (tensor t = index)."""
    d, f, dq, dkv = c["d"], c["ffn"], c["heads"] * c["head_dim"], c["kv"] * c["head_dim"]
    W, B, G = (0.0, W_SCALE), (0.0, B_SCALE), (1.0, G_SCALE)
    out = [("embed", (c["vocab"], d)) + W]
    for i in range(c["layers"]):
        p = f"{i}."
        out.append((p + "ln1", (d,)) + G)
        for x, rows in (("q", dq), ("k", dkv), ("v", dkv)):
            out.append((p + "w" + x, (rows, d)) + W)
            if c["model_type"] == "qwen2":
                out.append((p + "b" + x, (rows,)) + B)
        out += [(p + "wo", (d, dq)) + W, (p + "ln2", (d,)) + G, (p + "wg", (f, d)) + W, (p + "wu", (f, d)) + W,
                (p + "wd", (d, f)) + W]
    out.append(("norm", (d,)) + G)
    return out


def decoder_weights(shape, seed, ids, exact):
    """attnscope's random weights (exact: the generator's, only the embedding rows the input uses)
    or weights of the same shapes from torch.rand (timing: values do not change the time)."""
    c = DECODERS[shape]
    g = torch.Generator().manual_seed(seed)
    flat = {}
    for t, (name, shp, center, scale) in enumerate(decoder_tensors(c)):
        if name == "embed" and exact:
            uniq = sorted(set(ids))
            rows = np.array(uniq, dtype=np.uint64)
            d = shp[1]
            index = (rows[:, None] * np.uint64(d) + np.arange(d, dtype=np.uint64)[None, :]).reshape(-1)
            flat["embed"] = torch.from_numpy(gen(seed, t, index, center, scale).reshape(len(uniq), d))
            flat["ids"] = [uniq.index(i) for i in ids]
        elif exact:
            flat[name] = tensor(seed, t, shp, center, scale)
        else:
            flat[name] = (torch.rand(*shp, generator=g) * 2 - 1) * float(scale) + center
    if not exact:
        flat["ids"] = list(ids)
    w = {"embed": flat["embed"], "ids": flat["ids"], "norm": flat["norm"], "inv_freq": decoder_inv_freq(c),
         "layers": [{k: flat.get(f"{i}.{k}") for k in ("ln1", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "ln2",
                                                       "wg", "wu", "wd")} for i in range(c["layers"])]}
    return w


def rms_norm(x, weight, eps):
    """LlamaRMSNorm / Qwen2RMSNorm."""
    input_dtype = x.dtype
    x = x.to(torch.float32)
    variance = x.pow(2).mean(-1, keepdim=True)
    x = x * torch.rsqrt(variance + eps)
    return weight * x.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    """(batch, num_key_value_heads, seqlen, head_dim) -> (batch, num_attention_heads, seqlen, head_dim)"""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def decoder_forward(w, c):
    """LlamaModel / Qwen2Model.forward, eager attention, batch of one, nothing padded, positions
    0..n-1; returns the attention probabilities [L][1,H,n,n] and hidden states [L+1][1,n,d]
    (the last after the final norm, as output_hidden_states gives them), all kept."""
    ids = torch.tensor([w["ids"]])
    n = ids.shape[1]
    H, KV, hd, eps = c["heads"], c["kv"], c["head_dim"], c["eps"]
    x = F.embedding(ids, w["embed"])
    position_ids = torch.arange(n)[None, :]
    # LlamaRotaryEmbedding.forward (attention_scaling 1.0 for default and llama3)
    inv_freq_expanded = w["inv_freq"][None, :, None].float().expand(position_ids.shape[0], -1, 1)
    freqs = (inv_freq_expanded.float() @ position_ids[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().unsqueeze(1), emb.sin().unsqueeze(1)
    # the causal mask as masking_utils' eager path makes it: 0 where allowed, finfo.min above the diagonal
    mask = torch.full((n, n), torch.finfo(torch.float32).min).triu(1)[None, None]
    scaling = hd ** -0.5
    hidden, attentions = [x], []
    for i, lw in enumerate(w["layers"]):
        residual = x
        h = rms_norm(x, lw["ln1"], eps)
        q = F.linear(h, lw["wq"], lw["bq"]).view(1, n, H, hd).transpose(1, 2)
        k = F.linear(h, lw["wk"], lw["bk"]).view(1, n, KV, hd).transpose(1, 2)
        v = F.linear(h, lw["wv"], lw["bv"]).view(1, n, KV, hd).transpose(1, 2)
        q, k = (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)   # apply_rotary_pos_emb
        key_states, value_states = repeat_kv(k, H // KV), repeat_kv(v, H // KV)
        attn_weights = torch.matmul(q, key_states.transpose(2, 3)) * scaling
        attn_weights = attn_weights + mask[:, :, :, : key_states.shape[-2]]
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
        attentions.append(attn_weights)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous().reshape(1, n, H * hd)
        x = residual + F.linear(attn_output, lw["wo"])
        residual = x
        h = rms_norm(x, lw["ln2"], eps)
        x = residual + F.linear(F.silu(F.linear(h, lw["wg"])) * F.linear(h, lw["wu"]), lw["wd"])
        if i < len(w["layers"]) - 1:
            hidden.append(x)
    hidden.append(rms_norm(x, w["norm"], eps))
    return attentions, hidden


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
    """attnscope bench's count (app/cmd-bench.c, forward_flops): matrix products only."""
    if shape in DECODERS:
        c = DECODERS[shape]
        d, f, dq, dkv = c["d"], c["ffn"], c["heads"] * c["head_dim"], c["kv"] * c["head_dim"]
        return c["layers"] * (2 * n * d * (2 * dq + 2 * dkv) + 4 * n * n * dq + 6 * n * d * f)
    L, d, H, f = SHAPES[shape]
    return L * (8 * n * d * d + 4 * n * n * d + 4 * n * d * f)


def check(args):
    n = args.lengths[0]
    if args.shape in DECODERS:
        c = DECODERS[args.shape]
        ids, _ = bench_ids(n, c["vocab"])
        w = decoder_weights(args.shape, args.seed, ids, exact=True)
        with torch.inference_mode():
            att, hid = decoder_forward(w, c)
    else:
        ids, types = bench_ids(n)
        L, d, H, f = SHAPES[args.shape]
        w = exact_weights(args.shape, args.seed, ids)
        with torch.inference_mode():
            att, hid = forward(w, types, H)
    want_att = torch.cat(att, 0).numpy()              # [L, H, n, n]
    want_hid = torch.cat(hid, 0).numpy()              # [L+1, n, d]
    if args.write_reference:   # the fixture of tests/bench/test-bench-smoke.py (decoder)
        np.save(args.write_reference + ".attn.npy", want_att.astype(np.float32))
        np.save(args.write_reference + ".hidden.npy", want_hid.astype(np.float32))
        print(f"wrote {args.write_reference}.attn.npy {list(want_att.shape)} and .hidden.npy {list(want_hid.shape)}")
        return 0
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


def peak_rss_bytes():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0


def timing(args):
    dec = DECODERS.get(args.shape)
    results = []
    weights = None
    for n in args.lengths:
        ids, types = bench_ids(n, dec["vocab"] if dec else VOCAB)
        if weights is None:
            weights = (decoder_weights(args.shape, args.seed, ids, exact=False) if dec
                       else random_weights(args.shape, ids))
        weights["ids"] = ids
        if dec:
            run = lambda: decoder_forward(weights, dec)   # noqa: E731
        else:
            H = SHAPES[args.shape][2]
            run = lambda: forward(weights, types, H)   # noqa: E731
        times = []
        with torch.inference_mode():
            for _ in range(args.warmup):
                run()
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                att, hid = run()
                times.append(time.perf_counter() - t0)
                del att, hid
        med = statistics.median(times)
        results.append({"tokens": n, "repeat": args.repeat, "forward_ms_median": med * 1e3,
                        "forward_ms_min": min(times) * 1e3, "gflops": flops(args.shape, n) / med / 1e9,
                        "peak_rss_bytes": peak_rss_bytes()})
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
    p.add_argument("--shape", default="bert-base", choices=sorted(SHAPES) + sorted(DECODERS))
    p.add_argument("--length", default="128", help="comma-separated token counts")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (0: one per core)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.add_argument("--check", metavar="PREFIX", help="compare with attnscope bench --dump PREFIX")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--write-reference", metavar="PREFIX",
                   help="write torch's PREFIX.attn.npy and PREFIX.hidden.npy (attnscope's weights), no comparison")
    p.add_argument("--corpus", metavar="FILE", help="ids of attnscope bench --dump-corpus: time a corpus pass")
    p.add_argument("--batch", type=int, default=32, help="with --corpus: sentences per padded batch")
    args = p.parse_args()
    args.lengths = [int(x) for x in args.length.split(",")]
    limit = DECODERS[args.shape]["positions"] if args.shape in DECODERS else POSITIONS
    if any(not 1 <= n <= limit for n in args.lengths):
        p.error(f"lengths must be 1..{limit}")
    if args.threads <= 0:
        args.threads = os.cpu_count() or 1   # --threads 0: one per core
    torch.set_num_threads(args.threads)
    if args.check or args.write_reference:
        return check(args)
    if args.corpus:
        if args.shape in DECODERS:
            p.error("--corpus runs the BERT shapes only")
        if args.repeat == 10:
            args.repeat = 1
        return corpus(args)
    if not args.json:
        print(f"torch {torch.__version__} eager, {args.shape}, torch threads {torch.get_num_threads()}, "
              f"OpenBLAS kernel {blas_core()}\n{'tokens':>6} {'fwd ms':>9} {'min ms':>9} {'GFLOP/s':>8}")
    return timing(args)


if __name__ == "__main__":
    sys.exit(main())
