#!/usr/bin/python3
"""Writes small random ModernBERT models in exact Hugging Face layout, and reference outputs
for tests/hf/test-hf-modernbert.c.

Each model is a folder under tests/hf/models/<name>/: config.json with ModernBertConfig keys,
model.safetensors in ModernBertForMaskedLM's names ("model." before the encoder, head.* and
decoder.bias unprefixed, decoder.weight tied to model.embeddings.tok_embeddings.weight and not
stored), F32 or BF16, and a WordPiece vocab.txt so that the folder opens (the cases are ids).

The reference forward below follows modeling_modernbert.py (ModernBertModel with eager
attention, output_attentions=True, output_hidden_states=True; ModernBertForMaskedLM's head),
written out in torch float64 from the weights as rounded to the file's dtype:
  - embeddings: norm(tok_embeddings(ids)), LayerNorm without bias (norm_bias false)
  - layer i: attn_norm (nn.Identity in layer 0), Wqkv viewed [n, 3, H, hd], rotary with
    rope_theta of "full_attention" (global_rope_theta) in layers i % global_attn_every_n_layers
    == 0 and of "sliding_attention" (local_rope_theta) in the others; cos / sin made in float32
    as ModernBertRotaryEmbedding makes them; scores * hd**-0.5 + mask, softmax, Wo; the local
    layers' mask is _update_attention_mask's sliding_window_mask: the padding mask with
    finfo.min where |i - j| > local_attention // 2
  - h + attn, then h + Wo(act(input) * gate) with input, gate = Wi(mlp_norm(h)).chunk(2)
  - final_norm; hidden_states = the embeddings and each layer's output (before final_norm)
    and the last hidden state after it (attnscope keeps the latter in its last slot)
  - the head: decoder(norm(gelu(dense(h)))), decoder = tok_embeddings (tied) + decoder.bias
It never calls attnscope.  Outputs go to tests/hf/fixtures/:

  <model>.json              the cases: ids, mask, masked-LM log-probabilities (all V) and the
                            top 5 ids at mlm_positions (the first, the last and each [MASK])
  <model>-<case>-attn.npy   float32 [L, H, n, n]   attention probabilities
  <model>-<case>-hidden.npy float32 [L+1, n, d]    the embeddings, each layer's output, the
                            last one after final_norm

Run with Debian's python3-torch:  /usr/bin/python3 tests/hf/gen_modernbert.py
"""
import argparse
import json
import math
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_models import tensor_bytes, write_safetensors, vocab_for  # noqa: E402

# name, config overrides, options.  Both have global and local layers and a case longer than
# the window.
MODELS = [
    # 4 layers: global 0 and 3, local 1 and 2; window |i-j| <= 3; no biases; F32
    ("modernbert-f32", {}, {"dtype": "F32", "long": 12}),
    # 3 layers, global every 2nd (0, 2), odd local_attention 5 (|i-j| <= 2), every bias,
    # transformers 5's layer_types and rope_parameters; BF16
    ("modernbert-bf16-bias",
     {"num_hidden_layers": 3, "global_attn_every_n_layers": 2, "local_attention": 5,
      "attention_bias": True, "mlp_bias": True, "classifier_bias": True, "decoder_bias": True,
      "layer_types": ["full_attention", "sliding_attention", "full_attention"],
      "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 80000.0},
                          "sliding_attention": {"rope_type": "default", "rope_theta": 500.0}}},
     {"dtype": "BF16", "long": 11}),
]


def base_config(**kw):
    cfg = {
        "architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert",
        "hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 4, "num_attention_heads": 2,
        "hidden_activation": "gelu", "max_position_embeddings": 64, "norm_eps": 1e-5, "norm_bias": False,
        "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "global_attn_every_n_layers": 3,
        "local_attention": 6, "attention_bias": False, "mlp_bias": False, "classifier_bias": False,
        "classifier_activation": "gelu", "decoder_bias": True, "tie_word_embeddings": True,
        "vocab_size": 64, "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 3, "cls_token_id": 2,
        "sep_token_id": 3, "initializer_range": 0.02, "torch_dtype": "float32", "attention_dropout": 0.0,
        "embedding_dropout": 0.0, "mlp_dropout": 0.0,
    }
    cfg.update(kw)
    return cfg


def make_weights(cfg, g):
    d, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]

    def rn(*shape, s=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * s

    W = {"model.embeddings.tok_embeddings.weight": rn(V, d, s=0.8),
         "model.embeddings.norm.weight": 1 + rn(d, s=0.1)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        if i != 0:
            W[p + "attn_norm.weight"] = 1 + rn(d, s=0.1)
        W[p + "attn.Wqkv.weight"] = rn(3 * d, d, s=1.0 / math.sqrt(d))
        W[p + "attn.Wo.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
        if cfg["attention_bias"]:
            W[p + "attn.Wqkv.bias"] = rn(3 * d, s=0.2)
            W[p + "attn.Wo.bias"] = rn(d, s=0.1)
        W[p + "mlp_norm.weight"] = 1 + rn(d, s=0.1)
        W[p + "mlp.Wi.weight"] = rn(2 * f, d, s=1.0 / math.sqrt(d))
        W[p + "mlp.Wo.weight"] = rn(d, f, s=1.0 / math.sqrt(f))
        if cfg["mlp_bias"]:
            W[p + "mlp.Wi.bias"] = rn(2 * f, s=0.1)
            W[p + "mlp.Wo.bias"] = rn(d, s=0.1)
    W["model.final_norm.weight"] = 1 + rn(d, s=0.1)
    W["head.dense.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
    if cfg["classifier_bias"]:
        W["head.dense.bias"] = rn(d, s=0.1)
    W["head.norm.weight"] = 1 + rn(d, s=0.1)
    if cfg["decoder_bias"]:
        W["decoder.bias"] = rn(V, s=0.3)
    return W


def thetas(cfg):
    """(global, local) rope_theta as ModernBertConfig.convert_rope_params_to_dict makes them."""
    rp = cfg.get("rope_parameters") or {}
    g = (rp.get("full_attention") or {}).get("rope_theta", cfg.get("global_rope_theta", 160000.0))
    loc = (rp.get("sliding_attention") or {}).get("rope_theta", cfg.get("local_rope_theta", 10000.0))
    return g, loc


def inv_freq(base, dim):
    """compute_default_rope_parameters: float32 1 / base ** (arange(0, dim, 2) / dim)."""
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def cos_sin(base, dim, n):
    inv = inv_freq(base, dim)
    pos = torch.arange(n)[None, :].float()
    freqs = (inv[None, :, None].float() @ pos[:, None, :]).transpose(1, 2)[0]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().double(), emb.sin().double()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def layer_norm(x, w, eps):
    """nn.LayerNorm(bias=False) in float64."""
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def lin(x, R, name):
    y = x @ R[name + ".weight"].T
    b = R.get(name + ".bias")
    return y + b if b is not None else y


def forward(R, cfg, ids, mask):
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    hd = d // H
    eps = cfg["norm_eps"]
    n = len(ids)
    every = cfg["global_attn_every_n_layers"]
    half = cfg["local_attention"] // 2
    fmin = torch.finfo(torch.float64).min
    keyok = torch.tensor([m == 1 for m in mask])
    glob = torch.where(keyok, torch.zeros(()), torch.full((), fmin, dtype=torch.float64))[None, :].expand(n, n)
    rows = torch.arange(n)[None, :]
    dist = torch.abs(rows - rows.T)
    local = glob.masked_fill(~(dist <= half), fmin)
    gth, lth = thetas(cfg)
    cs = {"g": cos_sin(gth, hd, n), "l": cos_sin(lth, hd, n)}
    h = layer_norm(R["model.embeddings.tok_embeddings.weight"][torch.tensor(ids)],
                   R["model.embeddings.norm.weight"], eps)
    hiddens, attns = [], []
    for i in range(cfg["num_hidden_layers"]):
        hiddens.append(h)
        p = f"model.layers.{i}."
        is_local = i % every != 0
        a = h if i == 0 else layer_norm(h, R[p + "attn_norm.weight"], eps)
        qkv = lin(a, R, p + "attn.Wqkv").view(n, 3, H, hd)
        q, k, v = qkv.permute(1, 2, 0, 3).unbind(0)          # [H, n, hd] each
        cos, sin = cs["l" if is_local else "g"]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        w = (q @ k.transpose(1, 2)) * hd ** -0.5
        w = w + (local if is_local else glob)
        w = torch.softmax(w, dim=-1)
        attns.append(w)
        ctx = (w @ v).transpose(0, 1).reshape(n, d)
        h = h + lin(ctx, R, p + "attn.Wo")
        m = layer_norm(h, R[p + "mlp_norm.weight"], eps)
        inp, gate = lin(m, R, p + "mlp.Wi").chunk(2, dim=-1)
        h = h + lin(gelu(inp) * gate, R, p + "mlp.Wo")
    h = layer_norm(h, R["model.final_norm.weight"], eps)
    hiddens.append(h)
    return torch.stack(attns), torch.stack(hiddens)


def mlm_logits(R, cfg, h):
    t = layer_norm(gelu(lin(h, R, "head.dense")), R["head.norm.weight"], cfg["norm_eps"])
    y = t @ R["model.embeddings.tok_embeddings.weight"].T
    b = R.get("decoder.bias")
    return y + b if b is not None else y


def write_model(name, over, opts, out_models, out_fix, seed):
    cfg = base_config(**over)
    g = torch.Generator().manual_seed(seed)
    W = make_weights(cfg, g)
    folder = os.path.join(out_models, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    R, entries = {}, []
    for nm, t in W.items():
        raw, rounded = tensor_bytes(t, opts["dtype"])
        R[nm] = rounded
        entries.append((nm, opts["dtype"], tuple(t.shape), raw))
    entries.sort(key=lambda e: e[0])
    write_safetensors(os.path.join(folder, "model.safetensors"), entries)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    vocab = vocab_for(cfg["vocab_size"])
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")

    V = cfg["vocab_size"]
    mask_id = vocab.index("[MASK]")
    rng = np.random.default_rng(seed)
    words = [int(x) for x in rng.integers(5, V, 7)]
    words[3] = mask_id
    cases = [{"name": "single", "ids": words, "mask": [1] * 7},
             # left padding (id 0 = [PAD]): positions 0..n-1, padded keys hidden
             {"name": "left-padded", "ids": [0, 0] + [int(x) for x in rng.integers(5, V, 6)],
              "mask": [0, 0] + [1] * 6},
             {"name": "one", "ids": [int(rng.integers(5, V))], "mask": [1]}]
    long_ids = [int(x) for x in rng.integers(5, V, opts["long"])]
    long_ids[opts["long"] - 2] = mask_id
    cases.append({"name": "long", "ids": long_ids, "mask": [1] * opts["long"]})
    for c in cases:
        c["type_ids"] = [0] * len(c["ids"])
        attn, hidden = forward(R, cfg, c["ids"], c["mask"])
        n = len(c["ids"])
        c["mlm_positions"] = sorted({0, n - 1} | {i for i, t in enumerate(c["ids"]) if t == mask_id})
        c["mlm_log_probs"] = [torch.log_softmax(mlm_logits(R, cfg, hidden[-1][p]), dim=-1).tolist()
                              for p in c["mlm_positions"]]
        c["mlm_top_ids"] = [[int(i) for i in torch.topk(torch.tensor(lp), 5).indices] for lp in c["mlm_log_probs"]]
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-attn.npy"), attn.numpy().astype("<f4"))
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-hidden.npy"), hidden.numpy().astype("<f4"))
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    gth, lth = thetas(cfg)
    every = cfg["global_attn_every_n_layers"]
    meta = {"model": name, "family": "ModernBERT", "n_layers": cfg["num_hidden_layers"], "n_heads": H,
            "d_head": d // H, "d_model": d, "d_ffn": cfg["intermediate_size"], "vocab_size": V,
            "mask_id": mask_id, "local_half": cfg["local_attention"] // 2,
            "local_layers": [int(i % every != 0) for i in range(cfg["num_hidden_layers"])],
            "inv_freq_global": inv_freq(gth, d // H).tolist(), "inv_freq_local": inv_freq(lth, d // H).tolist(),
            "cases": cases}
    with open(os.path.join(out_fix, f"{name}.json"), "w") as fh:
        json.dump(meta, fh, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=HERE, help="folder holding models/ and fixtures/")
    a = ap.parse_args()
    torch.set_num_threads(1)
    out_models, out_fix = os.path.join(a.out, "models"), os.path.join(a.out, "fixtures")
    for d in (out_models, out_fix):
        os.makedirs(d, exist_ok=True)
    for seed, (name, over, opts) in enumerate(MODELS):
        write_model(name, over, opts, out_models, out_fix, 3400 + seed)
        print("wrote", name)


if __name__ == "__main__":
    main()
