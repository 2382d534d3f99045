#!/usr/bin/python3
"""Fixtures for tests/precision/test-precision.c: an independent torch reference of
attnscope's reduced-precision CPU runs (engine/forward/precision.c).

Run with Debian's torch:  /usr/bin/python3 tests/precision/gen_precision.py
(CI never runs it; the fixtures it writes under tests/precision/fixtures and the model
folders under tests/precision/models are committed.)

The forward is written from scratch (post-LN BERT as modeling_bert.py computes it), with
autocast's products made explicit: every operand of every matrix product is rounded with
x.to(torch.bfloat16 | torch.float16).to(torch.float32) (torch's round-to-nearest-even
conversions), and the product runs in float32.  Softmax, LayerNorm, GELU (erf), biases and
residual adds stay float32.  The same forward with no rounding is the fp32 control.

Written:
  fixtures/rounding.npy      float32 [N, 3]: input, bf16(input), fp16(input) (edge cases and
                             random bit patterns); compared bit for bit
  fixtures/CASE-PREC-attn.npy    [L, H, n, n] probabilities
  fixtures/CASE-PREC-hidden.npy  [L+1, n, d] hidden states
  fixtures/CASE-PREC-qpre.npy    [n, d] layer 0's Q before rounding (the value rounded)
  fixtures/CASE-PREC-q.npy       [n, d] layer 0's Q rounded (what QK^T reads)
  fixtures/cases.json        per case: model folder, ids, type ids, mask; for the overflow
                             case the fp16 overflow counts per layer and operand
"""
import json
import os
import struct
import sys

import numpy as np
import torch

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(HERE, "fixtures")
MODELS = os.path.join(HERE, "models")
DT = {"bf16": torch.bfloat16, "fp16": torch.float16}
OPERANDS = ["weights", "input", "q", "k", "v", "probs", "context", "ffn_in", "ffn_mid"]


def rnd(x, prec):
    return x if prec == "fp32" else x.to(DT[prec]).to(torch.float32)


# ---- safetensors, read and written by hand (no safetensors package here) ----------------

def load_st(path):
    with open(path, "rb") as f:
        raw = f.read()
    hl = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + hl])
    base = 8 + hl
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        buf = raw[base + a:base + b]
        dt = info["dtype"]
        if dt == "F32":
            arr = np.frombuffer(buf, "<f4")
        elif dt == "F16":
            arr = np.frombuffer(buf, "<f2").astype(np.float32)
        elif dt == "BF16":
            arr = (np.frombuffer(buf, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{path}: {name}: dtype {dt}")
        out[name] = torch.from_numpy(arr.reshape(info["shape"]).copy())
    return out


def save_st(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        b = t.detach().to(torch.float32).numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


# ---- the forward ------------------------------------------------------------------------

def layernorm(x, g, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * g + b


def forward(W, cfg, ids, types, mask, prec, counts=None):
    """Returns (attn [L,H,n,n], hidden [L+1,n,d], layer 0's Q before and after rounding).
    counts (a dict) gets the fp16 overflow counts [(L+1) x operands] when given."""
    n = len(ids)
    d, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    k = d // H
    eps = cfg.get("layer_norm_eps", 1e-12)
    p = "bert." if "bert.embeddings.word_embeddings.weight" in W else ""
    g = lambda name: W[p + name]
    over = np.zeros((L + 1, len(OPERANDS)), dtype=np.int64)

    def R(x, row, op):
        r = rnd(x, prec)
        if prec == "fp16":
            over[row, OPERANDS.index(op)] += int((torch.isinf(r) & ~torch.isinf(x)).sum())
        return r

    ids_t = torch.tensor(ids)
    h = g("embeddings.word_embeddings.weight")[ids_t] + g("embeddings.position_embeddings.weight")[torch.arange(n)] \
        + g("embeddings.token_type_embeddings.weight")[torch.tensor(types)]
    h = layernorm(h, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"), eps)
    madd = torch.where(torch.tensor(mask) == 0, torch.tensor(torch.finfo(torch.float32).min), torch.tensor(0.0))
    hiddens, atts = [h], []
    q0pre = q0 = None
    for l in range(L):
        pre = f"encoder.layer.{l}."
        Wl = lambda name: g(pre + name)
        row = l + 1
        mats = {}
        for nm in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                   "intermediate.dense", "output.dense"]:
            mats[nm] = R(Wl(nm + ".weight"), row, "weights")
        x = R(h, row, "input")
        qpre = x @ mats["attention.self.query"].T + Wl("attention.self.query.bias")
        q = R(qpre, row, "q")
        kk = R(x @ mats["attention.self.key"].T + Wl("attention.self.key.bias"), row, "k")
        v = R(x @ mats["attention.self.value"].T + Wl("attention.self.value.bias"), row, "v")
        if l == 0:
            q0pre, q0 = qpre, q
        qh, kh, vh = (t.view(n, H, k).transpose(0, 1) for t in (q, kk, v))
        s = (qh @ kh.transpose(1, 2)) * (1.0 / np.sqrt(k)) + madd[None, None, :]
        pr = torch.softmax(s, dim=-1)
        atts.append(pr)
        ctx = (R(pr, row, "probs") @ vh).transpose(0, 1).reshape(n, d)
        ao = R(ctx, row, "context") @ mats["attention.output.dense"].T + Wl("attention.output.dense.bias")
        h1 = layernorm(ao + h, Wl("attention.output.LayerNorm.weight"), Wl("attention.output.LayerNorm.bias"), eps)
        ff = R(h1, row, "ffn_in") @ mats["intermediate.dense"].T + Wl("intermediate.dense.bias")
        ff = 0.5 * ff * (1.0 + torch.erf(ff / np.sqrt(2.0)))
        if counts is not None and l == 0:
            counts["ffn0"] = ff
        out = R(ff, row, "ffn_mid") @ mats["output.dense"].T + Wl("output.dense.bias") + h1
        h = layernorm(out, Wl("output.LayerNorm.weight"), Wl("output.LayerNorm.bias"), eps)
        hiddens.append(h)
    if counts is not None:
        counts["overflow"] = over.tolist()
    return torch.stack(atts), torch.stack(hiddens), q0pre, q0


# ---- the rounding table -----------------------------------------------------------------

def rounding_table():
    f = lambda bits: struct.unpack("<f", struct.pack("<I", bits))[0]
    vals = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"),
            65504.0, 65519.0, 65519.996, 65520.0, 65520.004, 65535.0, 65536.0, -65520.0, -65519.0,
            3.4028234663852886e38, 3.3961775e38, 3.3961776e38,
            2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 2.0 ** -25 * 1.0000001, 3 * 2.0 ** -26, 2.0 ** -26,
            1.401298464324817e-45, 1.1754942106924411e-38, 1.1754943508222875e-38, 1e-40,
            1.00390625, 1.01171875, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11,
            1.0009765625, 0.1, 1.0 / 3.0, 2.0 / 3.0, 1e-5, 6.1e-5, 6.097555160522461e-05]
    bits = [struct.unpack("<I", struct.pack("<f", v))[0] for v in vals]
    # ties and their neighbours for bf16 (low 16 bits 0x8000) and fp16 (low 13 bits 0x1000)
    rng = np.random.default_rng(22)
    for hi in rng.integers(0, 1 << 16, 200):
        for lo in (0x7fff, 0x8000, 0x8001):
            bits.append((int(hi) << 16) | lo)
    for hbits in rng.integers(0, 1 << 32, 400):
        base = int(hbits) & ~0x1fff
        for lo in (0x0fff, 0x1000, 0x1001):
            bits.append(base | lo)
    bits += [0x7f800001, 0xffc00000, 0x7fbfffff, 0x00000001, 0x807fffff, 0x38800000, 0x387fffff, 0x33000000,
             0x33000001, 0x477fefff, 0x477ff000, 0x7f7fffff, 0x7f7f7fff, 0x7f7f8000]
    bits += [int(b) for b in rng.integers(0, 1 << 32, 20000, dtype=np.uint64)]
    x = torch.from_numpy(np.array(bits, dtype=np.uint32).view(np.float32).copy())
    tab = torch.stack([x, rnd(x, "bf16"), rnd(x, "fp16")], 1).numpy()
    np.save(os.path.join(FIX, "rounding.npy"), tab)
    return len(bits)


# ---- the models --------------------------------------------------------------------------

def make_random_bert(folder, seed, big_ffn=False):
    """A small random BERT-shaped folder (d 64, 4 heads, f 256, 2 layers, vocab 64).  big_ffn:
    W_1 scaled so the feed-forward activations of layer 0 pass fp16's 65504, and one weight
    of layer 1's W_2 above it (the overflow case)."""
    cfg = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 64, "num_attention_heads": 4,
           "num_hidden_layers": 2, "intermediate_size": 256, "hidden_act": "gelu", "vocab_size": 64,
           "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
           "position_embedding_type": "absolute", "torch_dtype": "float32"}
    g = torch.Generator().manual_seed(seed)
    r = lambda *s, sd=0.5: torch.randn(*s, generator=g) * sd
    d, f = 64, 256
    T = {"embeddings.word_embeddings.weight": r(64, d, sd=1.0),
         "embeddings.position_embeddings.weight": r(32, d, sd=0.3),
         "embeddings.token_type_embeddings.weight": r(2, d, sd=0.3),
         "embeddings.LayerNorm.weight": 1 + r(d, sd=0.1), "embeddings.LayerNorm.bias": r(d, sd=0.1)}
    for l in range(2):
        p = f"encoder.layer.{l}."
        for nm, (o, i) in {"attention.self.query": (d, d), "attention.self.key": (d, d),
                           "attention.self.value": (d, d), "attention.output.dense": (d, d),
                           "intermediate.dense": (f, d), "output.dense": (d, f)}.items():
            T[p + nm + ".weight"] = r(o, i, sd=0.6 / np.sqrt(i) * 3)
            T[p + nm + ".bias"] = r(o, sd=0.1)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            T[p + ln + ".weight"] = 1 + r(d, sd=0.1)
            T[p + ln + ".bias"] = r(d, sd=0.1)
    if big_ffn:
        T["encoder.layer.0.intermediate.dense.weight"] *= 20000.0
        T["encoder.layer.1.output.dense.weight"][3, 7] = 70000.0
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as fo:
        json.dump(cfg, fo, indent=2)
    with open(os.path.join(folder, "vocab.txt"), "w") as fo:
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        fo.write("\n".join(specials + [f"w{i}" for i in range(64 - len(specials))]) + "\n")
    save_st(os.path.join(folder, "model.safetensors"), T)
    return cfg


def main():
    os.makedirs(FIX, exist_ok=True)
    print("rounding table:", rounding_table(), "values")
    make_random_bert(os.path.join(MODELS, "rand-bert"), 1)
    make_random_bert(os.path.join(MODELS, "rand-bert-big"), 2, big_ffn=True)
    vocab = open(os.path.join(ROOT, "data/models/demo/vocab.txt"), encoding="utf-8").read().split("\n")
    vid = {w: i for i, w in enumerate(vocab)}
    words = [w for w in "the cat sat on the mat and the dog ran".split() if w in vid]
    demo_ids = [vid["[CLS]"]] + [vid[w] for w in words[:4]] + [vid["[MASK]"]] + [vid[w] for w in words[5:7]] \
        + [vid["[SEP]"]] + [0, 0]
    demo_mask = [1] * (len(demo_ids) - 2) + [0, 0]
    rng = np.random.default_rng(5)
    rand_ids = [2] + [int(i) for i in rng.integers(5, 64, 14)] + [3]
    cases = {
        "demo": {"model": "data/models/demo", "ids": demo_ids, "types": [0] * len(demo_ids), "mask": demo_mask},
        "rand": {"model": "tests/precision/models/rand-bert", "ids": rand_ids,
                 "types": [0] * 8 + [1] * 8, "mask": [1] * 16},
        "big": {"model": "tests/precision/models/rand-bert-big", "ids": rand_ids[:10], "types": [0] * 10,
                "mask": [1] * 10},
    }
    for name, c in cases.items():
        folder = os.path.join(ROOT, c["model"])
        W = load_st(os.path.join(folder, "model.safetensors"))
        cfg = json.load(open(os.path.join(folder, "config.json")))
        for prec in ("fp32", "bf16", "fp16"):
            counts = {}
            with torch.no_grad():
                att, hid, qpre, q = forward(W, cfg, c["ids"], c["types"], c["mask"], prec, counts)
            if name == "big" and prec != "fp16":
                continue
            if name == "big":
                c["fp16_overflow"] = counts["overflow"]
                # the counts must not hang on values at the threshold, where the order of the
                # fp32 sums could decide
                gap = float(((counts["ffn0"].abs() - 65520.0).abs() / 65520.0).min())
                print(f"big: nearest layer-0 feed-forward activation to 65520: relative {gap:.2e}")
                assert gap > 1e-4
                continue
            for what, t in (("attn", att), ("hidden", hid), ("qpre", qpre), ("q", q)):
                np.save(os.path.join(FIX, f"{name}-{prec}-{what}.npy"), t.numpy().astype(np.float32))
            if prec != "fp32":
                a32 = np.load(os.path.join(FIX, f"{name}-fp32-attn.npy"))
                print(f"{name} {prec}: max |p - p_fp32| {np.abs(att.numpy() - a32).max():.3e}")
    with open(os.path.join(FIX, "cases.json"), "w") as fo:
        json.dump({"operands": OPERANDS, "cases": cases}, fo, indent=1)
    print("big fp16 overflow:", cases["big"]["fp16_overflow"])


if __name__ == "__main__":
    sys.exit(main())
