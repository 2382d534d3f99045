#!/usr/bin/python3
"""Writes small random BERT models in exact Hugging Face layout, and reference outputs.

Each model is a folder with config.json, model.safetensors (or a sharded index),
vocab.txt and sometimes tokenizer_config.json, under tests/hf/models/<name>/.  The
safetensors files are written by hand (struct + json) since Debian has no safetensors
package.  The reference forward pass below is BertModel's, written out in torch (float64)
from the weights as they were rounded to the file's dtype, and it is checked against
torch.nn.MultiheadAttention / TransformerEncoderLayer layer by layer.  It never calls
attnscope.  Outputs go to tests/hf/fixtures/:

  <model>.json              the cases: ids, type ids, mask (and a text for some)
  <model>-<case>-attn.npy   float32 [L, H, n, n]   attention probabilities
  <model>-<case>-hidden.npy float32 [L+1, n, d]    hidden states (embeddings output first)

Run with Debian's python3-torch:  /usr/bin/python3 tests/hf/gen_models.py
A bert-base sized random model for the open-time benchmark (not committed):
  /usr/bin/python3 tests/hf/gen_models.py --bert-base /tmp/attnscope-bert-base [--dtype F16]
  (--bert-large DIR: the same at bert-large's size, for the peak-memory figure)
"""
import argparse
import json
import math
import os
import shutil
import struct

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))

WORDS = ("the cat sat on mat a dog ran to park and it was very happy today we like tea "
         "bert reads text one two three four five six seven eight nine ten red blue green "
         "big small old new sun moon star tree house river road book").split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


# ---- safetensors by hand ------------------------------------------------------------

def tensor_bytes(t, dtype):
    """Bytes of t stored as dtype, and the float64 values those bytes hold."""
    if dtype == "F32":
        r = t.to(torch.float32)
        raw = r.contiguous().numpy().astype("<f4").tobytes()
    elif dtype == "F16":
        r = t.to(torch.float16)
        raw = r.contiguous().numpy().astype("<f2").tobytes()
    elif dtype == "BF16":
        r = t.to(torch.bfloat16)
        raw = r.contiguous().view(torch.int16).numpy().astype("<i2").tobytes()
    else:
        raise ValueError(dtype)
    return raw, r.to(torch.float64)


def write_safetensors(path, entries, align_data=0, pad_header=True):
    """entries: list of (name, dtype, shape, raw bytes).  align_data: when > 0, pad the
    header with spaces so that the data area starts at this offset modulo 4 (used to make
    F32 data unaligned in the file)."""
    header = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
    hb = json.dumps(header, separators=(",", ":")).encode()
    if align_data:
        while (8 + len(hb)) % 4 != align_data:
            hb += b" "
    elif pad_header:
        hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for _, _, _, raw in entries:
            f.write(raw)


# ---- random weights in Hugging Face names ------------------------------------------

def make_weights(cfg, g, pooler=True, mlm=None):
    """Returns {hf name without prefix: float32 tensor}; cls.* names are at the top level."""
    d, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    P, T, L = cfg["max_position_embeddings"], cfg["type_vocab_size"], cfg["num_hidden_layers"]

    def rn(*shape, s=1.0):
        return torch.randn(*shape, generator=g) * s

    W = {}
    W["embeddings.word_embeddings.weight"] = rn(V, d, s=0.7)
    W["embeddings.position_embeddings.weight"] = rn(P, d, s=0.4)
    W["embeddings.token_type_embeddings.weight"] = rn(T, d, s=0.4)
    W["embeddings.LayerNorm.weight"] = 1 + rn(d, s=0.1)
    W["embeddings.LayerNorm.bias"] = rn(d, s=0.1)
    for i in range(L):
        p = f"encoder.layer.{i}."
        # Q and K scaled up so that the attention is far from uniform (a sharper test).
        for nm, s in (("attention.self.query", 1.6), ("attention.self.key", 1.6),
                      ("attention.self.value", 1.0), ("attention.output.dense", 1.0)):
            W[p + nm + ".weight"] = rn(d, d, s=s / math.sqrt(d))
            W[p + nm + ".bias"] = rn(d, s=0.1)
        W[p + "attention.output.LayerNorm.weight"] = 1 + rn(d, s=0.1)
        W[p + "attention.output.LayerNorm.bias"] = rn(d, s=0.1)
        W[p + "intermediate.dense.weight"] = rn(f, d, s=1.0 / math.sqrt(d))
        W[p + "intermediate.dense.bias"] = rn(f, s=0.1)
        W[p + "output.dense.weight"] = rn(d, f, s=1.0 / math.sqrt(f))
        W[p + "output.dense.bias"] = rn(d, s=0.1)
        W[p + "output.LayerNorm.weight"] = 1 + rn(d, s=0.1)
        W[p + "output.LayerNorm.bias"] = rn(d, s=0.1)
    if pooler:
        W["pooler.dense.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
        W["pooler.dense.bias"] = rn(d, s=0.1)
    if mlm:
        W["cls.predictions.transform.dense.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
        W["cls.predictions.transform.dense.bias"] = rn(d, s=0.1)
        W["cls.predictions.transform.LayerNorm.weight"] = 1 + rn(d, s=0.1)
        W["cls.predictions.transform.LayerNorm.bias"] = rn(d, s=0.1)
        W["cls.predictions.bias"] = rn(V, s=0.1)
        if mlm == "untied":
            W["cls.predictions.decoder.weight"] = rn(V, d, s=0.5)
        W["cls.seq_relationship.weight"] = rn(2, d, s=0.1)
        W["cls.seq_relationship.bias"] = rn(2, s=0.1)
    return W


# ---- the reference forward pass (BertModel, eager attention) -----------------------

def activation(name):
    if name == "gelu":
        return lambda x: F.gelu(x)
    if name in ("gelu_new", "gelu_pytorch_tanh"):
        return lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                                   (x + 0.044715 * torch.pow(x, 3.0))))
    if name == "relu":
        return F.relu
    raise ValueError(name)


def bert_forward(R, cfg, ids, type_ids, mask):
    """R: {name: float64 tensor} (no prefix).  Returns attentions [L,H,n,n] and hidden
    states [L+1,n,d], computed the way transformers' BertModel does with
    output_attentions=True (post-LN, additive mask (1 - mask) * finfo(float32).min)."""
    d, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    k = d // H
    eps = cfg["layer_norm_eps"]
    act = activation(cfg["hidden_act"])
    n = len(ids)
    ids_t = torch.tensor(ids)
    x = (R["embeddings.word_embeddings.weight"][ids_t] +
         R["embeddings.position_embeddings.weight"][torch.arange(n)] +
         R["embeddings.token_type_embeddings.weight"][torch.tensor(type_ids)])
    x = F.layer_norm(x, (d,), R["embeddings.LayerNorm.weight"], R["embeddings.LayerNorm.bias"], eps)
    ext = (1.0 - torch.tensor(mask, dtype=torch.float64))[None, None, :] * torch.finfo(torch.float32).min
    hidden, attns = [x], []
    for i in range(L):
        p = f"encoder.layer.{i}."

        def lin(nm, inp):
            return F.linear(inp, R[p + nm + ".weight"], R[p + nm + ".bias"])

        def heads(t):
            return t.view(n, H, k).transpose(0, 1)        # [H, n, k]

        q, kk, v = (heads(lin("attention.self." + s, x)) for s in ("query", "key", "value"))
        scores = q @ kk.transpose(-1, -2) / math.sqrt(k) + ext[0]
        probs = torch.softmax(scores, dim=-1)             # [H, n, n]
        ctx = (probs @ v).transpose(0, 1).reshape(n, d)
        a = lin("attention.output.dense", ctx)
        x1 = F.layer_norm(a + x, (d,), R[p + "attention.output.LayerNorm.weight"],
                          R[p + "attention.output.LayerNorm.bias"], eps)
        hmid = act(lin("intermediate.dense", x1))
        x = F.layer_norm(lin("output.dense", hmid) + x1, (d,), R[p + "output.LayerNorm.weight"],
                         R[p + "output.LayerNorm.bias"], eps)
        attns.append(probs)
        hidden.append(x)
    return torch.stack(attns), torch.stack(hidden)


def cross_check(R, cfg, ids, type_ids, mask, attn, hidden):
    """The same layers through torch's own nn.MultiheadAttention / TransformerEncoderLayer."""
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    pad = torch.tensor([[m == 0 for m in mask]])
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        in_w = torch.cat([R[p + f"attention.self.{s}.weight"] for s in ("query", "key", "value")])
        in_b = torch.cat([R[p + f"attention.self.{s}.bias"] for s in ("query", "key", "value")])
        act = cfg["hidden_act"]
        layer = torch.nn.TransformerEncoderLayer(
            d, H, cfg["intermediate_size"], dropout=0.0, batch_first=True,
            layer_norm_eps=cfg["layer_norm_eps"],
            activation=("relu" if act == "relu" else activation(act))).double().eval()
        with torch.no_grad():
            layer.self_attn.in_proj_weight.copy_(in_w)
            layer.self_attn.in_proj_bias.copy_(in_b)
            layer.self_attn.out_proj.weight.copy_(R[p + "attention.output.dense.weight"])
            layer.self_attn.out_proj.bias.copy_(R[p + "attention.output.dense.bias"])
            layer.norm1.weight.copy_(R[p + "attention.output.LayerNorm.weight"])
            layer.norm1.bias.copy_(R[p + "attention.output.LayerNorm.bias"])
            layer.linear1.weight.copy_(R[p + "intermediate.dense.weight"])
            layer.linear1.bias.copy_(R[p + "intermediate.dense.bias"])
            layer.linear2.weight.copy_(R[p + "output.dense.weight"])
            layer.linear2.bias.copy_(R[p + "output.dense.bias"])
            layer.norm2.weight.copy_(R[p + "output.LayerNorm.weight"])
            layer.norm2.bias.copy_(R[p + "output.LayerNorm.bias"])
            src = hidden[i][None]
            _, w = layer.self_attn(src, src, src, key_padding_mask=pad, need_weights=True,
                                   average_attn_weights=False)
            layer.train(False)
            out = layer._sa_block(src, None, pad)
            out = layer.norm1(src + out)
            out = layer.norm2(out + layer._ff_block(out))
        assert torch.allclose(w[0], attn[i], atol=1e-9), f"layer {i}: attention differs"
        assert torch.allclose(out[0], hidden[i + 1], atol=1e-9), f"layer {i}: output differs"


# ---- models ------------------------------------------------------------------------

def base_config(**kw):
    c = {
        "architectures": ["BertModel"], "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
        "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-12,
        "max_position_embeddings": 24, "model_type": "bert", "num_attention_heads": 4,
        "num_hidden_layers": 2, "pad_token_id": 0, "position_embedding_type": "absolute",
        "torch_dtype": "float32", "transformers_version": "4.40.0", "type_vocab_size": 2,
        "use_cache": True, "vocab_size": 48,
    }
    c.update(kw)
    return c


# name, config overrides, options
MODELS = [
    ("f32", dict(), dict(dtype="F32")),
    ("f16", dict(torch_dtype="float16", layer_norm_eps=1e-5), dict(dtype="F16")),
    ("bf16", dict(torch_dtype="bfloat16", hidden_act="gelu_pytorch_tanh", hidden_size=24,
                  num_attention_heads=2, intermediate_size=48), dict(dtype="BF16")),
    ("mlm", dict(architectures=["BertForMaskedLM"], hidden_size=16, intermediate_size=32),
     dict(dtype="F32", prefix="bert.", mlm="untied", pooler=False, position_ids=True,
          tokenizer_config={"do_lower_case": True, "model_max_length": 24})),
    ("legacy", dict(architectures=["BertForPreTraining"], hidden_size=16, num_attention_heads=2,
                    intermediate_size=32, num_hidden_layers=3),
     dict(dtype="F32", prefix="bert.", mlm="tied", pooler=False, legacy=True)),
    ("sharded", dict(hidden_size=16, num_attention_heads=2, intermediate_size=32),
     dict(dtype="F32", shards=2)),
    ("odd3-relu", dict(hidden_size=30, num_attention_heads=3, intermediate_size=40,
                       hidden_act="relu", vocab_size=40, max_position_embeddings=16),
     dict(dtype="F32", pooler=False)),
    ("odd5-mixed", dict(hidden_size=30, num_attention_heads=5, intermediate_size=36,
                        hidden_act="gelu_new", vocab_size=41, type_vocab_size=3,
                        max_position_embeddings=16),
     dict(dtype="mixed")),
]


def vocab_for(V):
    toks = SPECIALS + WORDS
    toks += [f"tok{i}" for i in range(V - len(toks))] if V > len(toks) else []
    return toks[:V]


def hf_name(name, prefix, legacy):
    full = name if name.startswith("cls.") else prefix + name
    if legacy and full.endswith("LayerNorm.weight"):
        full = full[:-len("weight")] + "gamma"
    elif legacy and full.endswith("LayerNorm.bias"):
        full = full[:-len("bias")] + "beta"
    return full


def write_model(name, cfg, opts, out_models, out_fix, seed):
    g = torch.Generator().manual_seed(seed)
    W = make_weights(cfg, g, pooler=opts.get("pooler", True), mlm=opts.get("mlm"))
    prefix, legacy = opts.get("prefix", ""), opts.get("legacy", False)
    folder = os.path.join(out_models, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)

    entries, R = [], {}
    for i, (nm, t) in enumerate(W.items()):
        dtype = opts["dtype"]
        if dtype == "mixed":   # 1-D tensors (biases, LayerNorm) in F16, matrices in F32
            dtype = "F16" if t.dim() == 1 else "F32"
        raw, rounded = tensor_bytes(t, dtype)
        R[nm] = rounded
        full = hf_name(nm, prefix, legacy)
        entries.append((full, dtype, tuple(t.shape), raw))
    if opts.get("position_ids"):   # the int64 buffer older checkpoints carry
        P = cfg["max_position_embeddings"]
        entries.append((prefix + "embeddings.position_ids", "I64", (1, P),
                        np.arange(P, dtype="<i8").tobytes()))
    entries.sort(key=lambda e: e[0])

    shards = opts.get("shards", 0)
    if shards:
        per = math.ceil(len(entries) / shards)
        weight_map, total = {}, 0
        for s in range(shards):
            fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = entries[s * per:(s + 1) * per]
            write_safetensors(os.path.join(folder, fname), part)
            for e in part:
                weight_map[e[0]] = fname
                total += len(e[3])
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    else:
        write_safetensors(os.path.join(folder, "model.safetensors"), entries,
                          align_data=2 if opts["dtype"] == "mixed" else 0)

    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    vocab = vocab_for(cfg["vocab_size"])
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    if "tokenizer_config" in opts:
        with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
            json.dump(opts["tokenizer_config"], f, indent=2)

    # Cases: one sentence; a pair with two padded positions at the end.
    V, T = cfg["vocab_size"], cfg["type_vocab_size"]
    rng = np.random.default_rng(seed)
    words = [int(x) for x in rng.integers(5, V, size=12)]
    cases = [
        {"name": "single", "ids": [2] + words[:5] + [3], "type_ids": [0] * 7, "mask": [1] * 7},
        {"name": "pair-padded", "ids": [2] + words[5:7] + [3] + words[7:10] + [3, 0, 0],
         "type_ids": [0] * 4 + [1] * 4 + [0, 0], "mask": [1] * 8 + [0, 0]},
    ]
    if T > 2:
        cases[1]["type_ids"][5] = 2
    # A text whose words are all whole vocabulary entries, so its ids are plain look-ups.
    text_words = ["the", "cat", "sat", "on", "the", "mat"]
    if all(w in vocab for w in text_words):
        ids = [2] + [vocab.index(w) for w in text_words] + [3]
        cases.append({"name": "text", "text": "The cat sat on the MAT", "ids": ids,
                      "type_ids": [0] * len(ids), "mask": [1] * len(ids)})

    if opts.get("mlm"):
        # [MASK] at position 3: the masked-LM head's top 5 (BertForMaskedLM's prediction head)
        masked = dict(cases[0], name="masked", ids=list(cases[0]["ids"]))
        masked["ids"][3] = vocab.index("[MASK]")
        cases.append(masked)

    for c in cases:
        attn, hidden = bert_forward(R, cfg, c["ids"], c["type_ids"], c["mask"])
        if c["name"] == "masked":
            h = hidden[-1][3]
            t = F.linear(h, R["cls.predictions.transform.dense.weight"], R["cls.predictions.transform.dense.bias"])
            t = F.layer_norm(activation(cfg["hidden_act"])(t), (cfg["hidden_size"],),
                             R["cls.predictions.transform.LayerNorm.weight"],
                             R["cls.predictions.transform.LayerNorm.bias"], cfg["layer_norm_eps"])
            E = R.get("cls.predictions.decoder.weight", R["embeddings.word_embeddings.weight"])
            probs = torch.softmax(F.linear(t, E, R["cls.predictions.bias"]), dim=-1)
            top = torch.topk(probs, 5)
            c["mlm_position"] = 3
            c["mlm_top_ids"] = [int(i) for i in top.indices]
            c["mlm_top_probs"] = [float(p) for p in top.values]
        cross_check(R, cfg, c["ids"], c["type_ids"], c["mask"], attn, hidden)
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-attn.npy"), attn.numpy().astype("<f4"))
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-hidden.npy"),
                hidden.numpy().astype("<f4"))
    meta = {"model": name, "n_layers": cfg["num_hidden_layers"],
            "n_heads": cfg["num_attention_heads"], "d_model": cfg["hidden_size"],
            "has_mlm_head": bool(opts.get("mlm")), "cases": cases}
    with open(os.path.join(out_fix, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=1)


def write_bert_base(folder, dtype="F32", large=False):
    """Random bert-base-uncased-sized weights (440 MB in F32) for the open-time benchmark;
    large: bert-large-uncased's size (24 layers of 1024, 1.34 GB in F32)."""
    d, L, f, H = (1024, 24, 4096, 16) if large else (768, 12, 3072, 12)
    cfg = base_config(hidden_size=d, num_attention_heads=H, num_hidden_layers=L,
                      intermediate_size=f, vocab_size=30522, max_position_embeddings=512)
    shapes = {"embeddings.word_embeddings.weight": (30522, d),
              "embeddings.position_embeddings.weight": (512, d),
              "embeddings.token_type_embeddings.weight": (2, d),
              "embeddings.LayerNorm.weight": (d,), "embeddings.LayerNorm.bias": (d,),
              "pooler.dense.weight": (d, d), "pooler.dense.bias": (d,)}
    for i in range(L):
        p = f"encoder.layer.{i}."
        for nm in ("attention.self.query", "attention.self.key", "attention.self.value",
                   "attention.output.dense"):
            shapes[p + nm + ".weight"], shapes[p + nm + ".bias"] = (d, d), (d,)
        for nm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + nm + ".weight"], shapes[p + nm + ".bias"] = (d,), (d,)
        shapes[p + "intermediate.dense.weight"] = (f, d)
        shapes[p + "intermediate.dense.bias"] = (f,)
        shapes[p + "output.dense.weight"] = (d, f)
        shapes[p + "output.dense.bias"] = (d,)
    rng = np.random.default_rng(0)
    entries = []
    for nm in sorted(shapes):
        a = rng.standard_normal(shapes[nm], dtype=np.float32) * 0.02
        entries.append((nm, dtype, shapes[nm], tensor_bytes(torch.from_numpy(a), dtype)[0]))
    os.makedirs(folder, exist_ok=True)
    write_safetensors(os.path.join(folder, "model.safetensors"), entries)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab_for(30522)) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=HERE, help="folder holding models/ and fixtures/")
    ap.add_argument("--bert-base", metavar="DIR", help="write only a random bert-base to DIR")
    ap.add_argument("--bert-large", metavar="DIR", help="write only a random bert-large to DIR")
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"],
                    help="dtype of the --bert-base weights")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.bert_base or a.bert_large:
        if a.bert_base:
            write_bert_base(a.bert_base, a.dtype)
        if a.bert_large:
            write_bert_base(a.bert_large, a.dtype, large=True)
        return
    out_models, out_fix = os.path.join(a.out, "models"), os.path.join(a.out, "fixtures")
    for d in (out_models, out_fix):
        os.makedirs(d, exist_ok=True)
    for seed, (name, over, opts) in enumerate(MODELS):
        write_model(name, base_config(**over), opts, out_models, out_fix, 1000 + seed)
        print("wrote", name)


if __name__ == "__main__":
    main()
