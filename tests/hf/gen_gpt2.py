#!/usr/bin/python3
"""Writes small random GPT-2 models in exact Hugging Face layout, and reference outputs.

Each model is a folder under tests/hf/models/<name>/ with config.json (GPT2Config keys:
n_embd, n_layer, n_head, n_inner, n_positions, activation_function, layer_norm_epsilon,
scale_attn_*), model.safetensors in GPT2LMHeadModel's names ("transformer." prefix, no
lm_head.weight since it is tied to wte) or GPT2Model's (no prefix), Conv1D weights stored
[in, out] and the fused c_attn [d, 3d], plus a WordPiece vocab.txt so that the folder
opens and tokenizes before the byte-level BPE reader lands (the cases are ids).

The reference forward below is modeling_gpt2.py's (GPT2Model with eager attention,
GPT2LMHeadModel's tied head), written out in torch float64 from the weights as rounded to
the file's dtype; each attention block is cross-checked against torch.nn.MultiheadAttention
with a causal attn_mask where the block is the same computation.  It never calls attnscope.
Outputs go to tests/hf/fixtures/:

  <model>.json              the cases: ids, mask, next-token top-5 after the last real token
                            and after position 2 (ids and probabilities)
  <model>-<case>-attn.npy   float32 [L, H, n, n]   attention probabilities
  <model>-<case>-hidden.npy float32 [L+1, n, d]    HF's hidden_states tuple: the embeddings
                            (wte + wpe), each block's output, the last one after ln_f

Run with Debian's python3-torch:  /usr/bin/python3 tests/hf/gen_gpt2.py
A gpt2-small sized random folder (not committed):  --gpt2-small DIR
"""
import argparse
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_models import tensor_bytes, write_safetensors, vocab_for  # noqa: E402


def gpt2_config(**kw):
    cfg = {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "activation_function": "gelu_new",
        "attn_pdrop": 0.1, "embd_pdrop": 0.1, "resid_pdrop": 0.1,
        "bos_token_id": 2, "eos_token_id": 3,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-5,
        "n_ctx": 32, "n_embd": 24, "n_head": 4, "n_inner": None, "n_layer": 2, "n_positions": 32,
        "reorder_and_upcast_attn": False,
        "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True,
        "vocab_size": 64,
    }
    cfg.update(kw)
    return cfg


def d_ffn(cfg):
    return cfg["n_inner"] if cfg.get("n_inner") is not None else 4 * cfg["n_embd"]


def make_weights(cfg, g):
    """GPT2Model's state_dict names (no prefix), Conv1D weights [in, out]."""
    d, f, V, P = cfg["n_embd"], d_ffn(cfg), cfg["vocab_size"], cfg["n_positions"]

    def rn(*shape, s=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * s

    W = {"wte.weight": rn(V, d, s=0.5), "wpe.weight": rn(P, d, s=0.3)}
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        W[p + "ln_1.weight"] = 1 + rn(d, s=0.1)
        W[p + "ln_1.bias"] = rn(d, s=0.1)
        W[p + "attn.c_attn.weight"] = rn(d, 3 * d, s=0.6 / math.sqrt(d))
        W[p + "attn.c_attn.bias"] = rn(3 * d, s=0.1)
        W[p + "attn.c_proj.weight"] = rn(d, d, s=1 / math.sqrt(d))
        W[p + "attn.c_proj.bias"] = rn(d, s=0.1)
        W[p + "ln_2.weight"] = 1 + rn(d, s=0.1)
        W[p + "ln_2.bias"] = rn(d, s=0.1)
        W[p + "mlp.c_fc.weight"] = rn(d, f, s=1 / math.sqrt(d))
        W[p + "mlp.c_fc.bias"] = rn(f, s=0.1)
        W[p + "mlp.c_proj.weight"] = rn(f, d, s=1 / math.sqrt(f))
        W[p + "mlp.c_proj.bias"] = rn(d, s=0.1)
    W["ln_f.weight"] = 1 + rn(d, s=0.1)
    W["ln_f.bias"] = rn(d, s=0.1)
    return W


def activation(name):
    # transformers' ACT2FN: gelu_new / gelu_pytorch_tanh are the tanh form, gelu is erf
    if name in ("gelu_new", "gelu_pytorch_tanh"):
        return lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    if name == "gelu":
        return lambda x: F.gelu(x)
    if name == "relu":
        return F.relu
    raise ValueError(name)


def conv1d(x, w, b):
    """transformers' Conv1D: x @ W + b with W [in, out]."""
    return torch.addmm(b, x, w)


def gpt2_forward(R, cfg, ids, mask):
    """GPT2Model.forward (eager attention, no cache), one sequence.  Returns attention
    [L, H, n, n], hidden states [L+1, n, d] (HF's tuple: the last after ln_f), and the
    per-layer (ln_1 output, attention output before the residual) for the cross-check."""
    d, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    k = d // H
    eps = cfg["layer_norm_epsilon"]
    act = activation(cfg["activation_function"])
    n = len(ids)
    ids_t = torch.tensor(ids)
    pos = torch.arange(n)   # position_ids = cache_position: 0..n-1 whatever the padding
    h = R["wte.weight"][ids_t] + R["wpe.weight"][pos]
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    fmin = torch.finfo(torch.float64).min
    # the padding term of the attention mask: (1 - mask) * finfo.min on the keys
    pad = (1.0 - torch.tensor(mask, dtype=torch.float64)) * fmin
    hiddens, attns, blocks = [], [], []
    for i in range(L):
        hiddens.append(h)
        p = f"h.{i}."
        a = F.layer_norm(h, (d,), R[p + "ln_1.weight"], R[p + "ln_1.bias"], eps)
        qkv = conv1d(a, R[p + "attn.c_attn.weight"], R[p + "attn.c_attn.bias"])
        q, kk, v = qkv.split(d, dim=1)
        q = q.view(n, H, k).transpose(0, 1)
        kk = kk.view(n, H, k).transpose(0, 1)
        v = v.view(n, H, k).transpose(0, 1)
        w = torch.matmul(q, kk.transpose(-1, -2))
        if cfg["scale_attn_weights"]:
            w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
        if cfg["scale_attn_by_inverse_layer_idx"]:
            w = w / float(i + 1)
        w = torch.where(causal, w, torch.full([], fmin, dtype=w.dtype))
        w = w + pad
        w = torch.softmax(w, dim=-1)
        attns.append(w)
        ctx = torch.matmul(w, v).transpose(0, 1).reshape(n, d)
        o = conv1d(ctx, R[p + "attn.c_proj.weight"], R[p + "attn.c_proj.bias"])
        blocks.append((a, o, w))
        h = h + o
        m = F.layer_norm(h, (d,), R[p + "ln_2.weight"], R[p + "ln_2.bias"], eps)
        m = conv1d(act(conv1d(m, R[p + "mlp.c_fc.weight"], R[p + "mlp.c_fc.bias"])),
                   R[p + "mlp.c_proj.weight"], R[p + "mlp.c_proj.bias"])
        h = h + m
    h = F.layer_norm(h, (d,), R["ln_f.weight"], R["ln_f.bias"], eps)
    hiddens.append(h)
    return torch.stack(attns), torch.stack(hiddens), blocks


def cross_check(R, cfg, mask, blocks):
    """Each attention block against torch.nn.MultiheadAttention (float64) with a causal
    attn_mask and the key padding mask: the same probabilities and output, wherever the
    block is MHA's computation (scores / sqrt(k), which GPT-2's is unless scale_attn_weights
    is off or scale_attn_by_inverse_layer_idx divides a layer past the first)."""
    d, H = cfg["n_embd"], cfg["n_head"]
    checked = 0
    for i, (a, o, w) in enumerate(blocks):
        if not cfg["scale_attn_weights"] or (cfg["scale_attn_by_inverse_layer_idx"] and i > 0):
            continue
        p = f"h.{i}."
        mha = torch.nn.MultiheadAttention(d, H, bias=True, batch_first=True, dtype=torch.float64)
        with torch.no_grad():
            mha.in_proj_weight.copy_(R[p + "attn.c_attn.weight"].T)
            mha.in_proj_bias.copy_(R[p + "attn.c_attn.bias"])
            mha.out_proj.weight.copy_(R[p + "attn.c_proj.weight"].T)
            mha.out_proj.bias.copy_(R[p + "attn.c_proj.bias"])
        n = a.shape[0]
        future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        kpm = torch.tensor([m == 0 for m in mask]).unsqueeze(0)
        out, wm = mha(a.unsqueeze(0), a.unsqueeze(0), a.unsqueeze(0), attn_mask=future,
                      key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
        # rows whose every visible key is padding differ by construction (MHA: NaN); the
        # cases keep padding at the end, so every query sees a real token
        assert torch.allclose(wm[0], w, atol=1e-12), f"layer {i}: MHA probabilities differ"
        assert torch.allclose(out[0], o, atol=1e-12), f"layer {i}: MHA output differs"
        checked += 1
    return checked


def next_token_top5(R, hidden_last, pos):
    """GPT2LMHeadModel: lm_logits = lm_head(h) with lm_head tied to wte (no bias)."""
    logits = hidden_last[pos] @ R.get("lm_head.weight", R["wte.weight"]).T
    probs = torch.softmax(logits, dim=-1)
    top = torch.topk(probs, 5)
    return [int(i) for i in top.indices], [float(p) for p in top.values]


# name, config overrides, options
MODELS = [
    # GPT2LMHeadModel layout: "transformer." prefix, F32, and the buffers old checkpoints
    # carry (attn.bias, the uint8 causal tril, and attn.masked_bias) which are not weights
    ("gpt2-f32", {}, {"dtype": "F32", "prefix": "transformer.", "buffers": True, "text": True}),
    # GPT2Model layout: no prefix, F16, an odd head count (3 heads of 8), n_inner given
    ("gpt2-f16-odd3", {"n_head": 3, "n_inner": 40}, {"dtype": "F16", "prefix": ""}),
    # 5 heads of 4, 3 layers, erf gelu, eps 1e-6, scores also / (layer + 1),
    # reorder_and_upcast_attn (the same arithmetic in float32), and an untied LM head
    # (tie_word_embeddings false: lm_head.weight, unprefixed, is the head)
    ("gpt2-scaled5", {"n_embd": 20, "n_head": 5, "n_layer": 3, "activation_function": "gelu",
                      "layer_norm_epsilon": 1e-6, "scale_attn_by_inverse_layer_idx": True,
                      "reorder_and_upcast_attn": True, "tie_word_embeddings": False},
     {"dtype": "F32", "prefix": "transformer."}),
]


def write_model(name, cfg, opts, out_models, out_fix, seed):
    g = torch.Generator().manual_seed(seed)
    W = make_weights(cfg, g)
    prefix = opts["prefix"]
    folder = os.path.join(out_models, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    entries, R = [], {}
    if cfg.get("tie_word_embeddings") is False:
        W["lm_head.weight"] = torch.randn(cfg["vocab_size"], cfg["n_embd"], generator=g, dtype=torch.float64)
    for nm, t in W.items():
        raw, rounded = tensor_bytes(t, opts["dtype"])
        R[nm] = rounded
        full = nm if nm.startswith("lm_head.") else prefix + nm
        entries.append((full, opts["dtype"], tuple(t.shape), raw))
    if opts.get("buffers"):
        P = cfg["n_positions"]
        tril = np.tril(np.ones((P, P), dtype=np.uint8)).reshape(1, 1, P, P)
        for i in range(cfg["n_layer"]):
            entries.append((f"{prefix}h.{i}.attn.bias", "U8", (1, 1, P, P), tril.tobytes()))
            entries.append((f"{prefix}h.{i}.attn.masked_bias", "F32", (),
                            np.array(-1e4, dtype="<f4").tobytes()))
    entries.sort(key=lambda e: e[0])
    write_safetensors(os.path.join(folder, "model.safetensors"), entries)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    vocab = vocab_for(cfg["vocab_size"])
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")

    V = cfg["vocab_size"]
    rng = np.random.default_rng(seed)
    n1 = 7
    cases = [{"name": "single", "ids": [int(x) for x in rng.integers(5, V, n1)], "mask": [1] * n1}]
    # right padding (ids 0 = [PAD] in the WordPiece vocabulary), as a padded batch row
    ids = [int(x) for x in rng.integers(5, V, 7)] + [0, 0]
    cases.append({"name": "padded", "ids": ids, "mask": [1] * 7 + [0, 0]})
    if opts.get("text"):
        # the WordPiece fallback's tokens ([CLS] the cat sat on the mat [SEP])
        words = ["the", "cat", "sat", "on", "the", "mat"]
        ids = [2] + [vocab.index(w) for w in words] + [3]
        cases.append({"name": "text", "text": "The cat sat on the MAT", "ids": ids, "mask": [1] * len(ids)})
    mha_checked = 0
    for c in cases:
        c["type_ids"] = [0] * len(c["ids"])
        attn, hidden, blocks = gpt2_forward(R, cfg, c["ids"], c["mask"])
        mha_checked += cross_check(R, cfg, c["mask"], blocks)
        last = max(i for i, m in enumerate(c["mask"]) if m)
        c["next_positions"] = [last, 2]
        c["next_top_ids"], c["next_top_probs"] = [], []
        for pos in c["next_positions"]:
            ti, tp = next_token_top5(R, hidden[-1], pos)
            c["next_top_ids"].append(ti)
            c["next_top_probs"].append(tp)
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-attn.npy"), attn.numpy().astype("<f4"))
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-hidden.npy"), hidden.numpy().astype("<f4"))
    assert mha_checked > 0, name
    meta = {"model": name, "family": "GPT-2", "n_layers": cfg["n_layer"], "n_heads": cfg["n_head"],
            "d_model": cfg["n_embd"], "d_ffn": d_ffn(cfg), "has_mlm_head": False, "causal": True,
            "mha_checked_blocks": mha_checked, "untied_head": "lm_head.weight" in R, "cases": cases}
    with open(os.path.join(out_fix, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=1)


def write_gpt2_small(folder, dtype="F32"):
    """A random model of gpt2's shape (12 x 768, 12 heads, 1024 positions, 50257 tokens)."""
    cfg = gpt2_config(n_embd=768, n_head=12, n_layer=12, n_positions=1024, n_ctx=1024, vocab_size=50257)
    g = torch.Generator().manual_seed(7)
    W = make_weights(cfg, g)
    entries = [("transformer." + nm, dtype, tuple(t.shape), tensor_bytes(t.float(), dtype)[0])
               for nm, t in W.items()]
    os.makedirs(folder, exist_ok=True)
    write_safetensors(os.path.join(folder, "model.safetensors"), sorted(entries))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab_for(cfg["vocab_size"])) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=HERE, help="folder holding models/ and fixtures/")
    ap.add_argument("--gpt2-small", metavar="DIR", help="write only a random gpt2-small to DIR")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.gpt2_small:
        write_gpt2_small(a.gpt2_small)
        return
    out_models, out_fix = os.path.join(a.out, "models"), os.path.join(a.out, "fixtures")
    for d in (out_models, out_fix):
        os.makedirs(d, exist_ok=True)
    for seed, (name, over, opts) in enumerate(MODELS):
        write_model(name, gpt2_config(**over), opts, out_models, out_fix, 2000 + seed)
        print("wrote", name)


if __name__ == "__main__":
    main()
