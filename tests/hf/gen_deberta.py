#!/usr/bin/python3
"""Writes small random DeBERTa-v2/v3 models in exact Hugging Face layout, and reference outputs
for tests/hf/test-hf-deberta.c.

Each model is a folder under tests/hf/models/<name>/: config.json with DebertaV2Config keys,
model.safetensors in DebertaV2ForMaskedLM's names ("deberta." before the encoder; the head as
lm_predictions.lm_head.* (legacy false) or cls.predictions.* (legacy true), the decoder tied to
the word embeddings and not stored), F32 or BF16, and a WordPiece vocab.txt so that the folder
opens (the cases are ids).

The reference forward below follows modeling_deberta_v2.py (DebertaV2Model, eager, with
output_attentions and output_hidden_states; DebertaV2ForMaskedLM's heads), written out in torch
float64 from the weights as rounded to the file's dtype:
  - embeddings: word (+ position_embeddings when position_biased_input) (+ token types when
    type_vocab_size > 0), LayerNorm, times the attention mask (a padded row is zero)
  - relative positions: build_relative_position / make_log_bucket_position exactly as HF
    computes them (float32 torch ops on the long distances), rel_embeddings through
    encoder.LayerNorm when norm_rel_ebd has "layer_norm"
  - each layer: query_proj / key_proj / value_proj, scale = sqrt(head_size * scale_factor)
    with scale_factor 1 + the number of pos_att_type entries, c2p = gather(q pos_key^T,
    clamp(rel + span)), p2c = gather(k pos_query^T, clamp(-rel + span)) transposed, each / scale
    (pos_key / pos_query: key_proj / query_proj of rel_embeddings with share_att_key, else
    pos_key_proj / pos_query_proj), XSoftmax with mask = query mask x key mask (finfo.min where
    hidden, softmax, then 0 where hidden: a padded query's row is all zero); BERT's post-LN
    output, intermediate (hidden_act) and output
  - the head: LN(act(dense(h))) word_embeddings^T + bias
It never calls attnscope.  Outputs go to tests/hf/fixtures/:

  <model>.json              the cases: ids, type ids, mask, masked-LM log-probabilities (all V)
                            and the top 5 ids at mlm_positions; the bucket of every distance
  <model>-<case>-attn.npy   float32 [L, H, n, n]   attention probabilities
  <model>-<case>-hidden.npy float32 [L+1, n, d]    the embeddings and each layer's output
  <model>-<case>-c2p.npy, -p2c.npy  float32 [L, H, n, n]  the two terms (scaled) alone
  deberta/v3-base-buckets.json      the buckets of distances -1023..1023 with 256 buckets up to 512

Run with Debian's python3-torch:  /usr/bin/python3 tests/hf/gen_deberta.py
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

MODELS = [
    # DeBERTa-v3 style: relative attention with log buckets (position_buckets 8,
    # max_relative_positions -1 -> max_position_embeddings 24), both terms, share_att_key,
    # norm_rel_ebd layer_norm, no absolute positions, no token types, the
    # lm_predictions.lm_head head (legacy false); F32; a case of 20 tokens in the log buckets
    ("deberta-v3-f32",
     {"relative_attention": True, "pos_att_type": "p2c|c2p", "position_buckets": 8, "max_relative_positions": -1,
      "max_position_embeddings": 24, "share_att_key": True, "norm_rel_ebd": "layer_norm",
      "position_biased_input": False, "type_vocab_size": 0, "legacy": False},
     {"dtype": "F32", "long": 20}),
    # DeBERTa-v2 style: c2p only (scale_factor 2) from its own pos_key_proj, no buckets and
    # max_relative_positions 4 (distances past 4 clamp), absolute positions and two token types
    # too, no LayerNorm on rel_embeddings, cls.predictions (legacy); BF16; 3 heads
    ("deberta-v2-bf16",
     {"relative_attention": True, "pos_att_type": ["c2p"], "position_buckets": -1, "max_relative_positions": 4,
      "max_position_embeddings": 32, "share_att_key": False, "norm_rel_ebd": "none",
      "position_biased_input": True, "type_vocab_size": 2, "legacy": True, "num_attention_heads": 3,
      "hidden_size": 18, "intermediate_size": 20, "num_hidden_layers": 2},
     {"dtype": "BF16", "long": 12}),
]


def base_config(**kw):
    cfg = {
        "architectures": ["DebertaV2ForMaskedLM"], "model_type": "deberta-v2",
        "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 3, "num_attention_heads": 2,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": 24, "layer_norm_eps": 1e-7, "vocab_size": 64, "pad_token_id": 0,
        "initializer_range": 0.02, "pooler_hidden_size": 16, "pooler_dropout": 0, "pooler_hidden_act": "gelu",
        "torch_dtype": "float32",
    }
    cfg.update(kw)
    return cfg


def span_of(cfg):
    mr = cfg.get("max_relative_positions", -1)
    if mr < 1:
        mr = cfg["max_position_embeddings"]
    pb = cfg.get("position_buckets", -1)
    return (pb if pb > 0 else mr), mr, pb


def pos_types(cfg):
    p = cfg.get("pos_att_type")
    if isinstance(p, str):
        p = [x.strip() for x in p.lower().split("|")]
    return p or []


def make_weights(cfg, g):
    d, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    span, _, _ = span_of(cfg)
    types = pos_types(cfg)

    def rn(*shape, s=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * s

    P = "deberta."
    W = {P + "embeddings.word_embeddings.weight": rn(V, d, s=0.8),
         P + "embeddings.LayerNorm.weight": 1 + rn(d, s=0.1), P + "embeddings.LayerNorm.bias": rn(d, s=0.1)}
    if cfg["position_biased_input"]:
        W[P + "embeddings.position_embeddings.weight"] = rn(cfg["max_position_embeddings"], d, s=0.5)
    if cfg["type_vocab_size"] > 0:
        W[P + "embeddings.token_type_embeddings.weight"] = rn(cfg["type_vocab_size"], d, s=0.5)
    W[P + "encoder.rel_embeddings.weight"] = rn(2 * span, d, s=1.0)
    if "layer_norm" in [x.strip() for x in cfg["norm_rel_ebd"].lower().split("|")]:
        W[P + "encoder.LayerNorm.weight"] = 1 + rn(d, s=0.1)
        W[P + "encoder.LayerNorm.bias"] = rn(d, s=0.1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"{P}encoder.layer.{i}."
        for nm in ("query_proj", "key_proj", "value_proj"):
            W[p + f"attention.self.{nm}.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
            W[p + f"attention.self.{nm}.bias"] = rn(d, s=0.2)
        if not cfg["share_att_key"]:
            if "c2p" in types:
                W[p + "attention.self.pos_key_proj.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
                W[p + "attention.self.pos_key_proj.bias"] = rn(d, s=0.2)
            if "p2c" in types:
                W[p + "attention.self.pos_query_proj.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
                W[p + "attention.self.pos_query_proj.bias"] = rn(d, s=0.2)
        W[p + "attention.output.dense.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
        W[p + "attention.output.dense.bias"] = rn(d, s=0.1)
        W[p + "attention.output.LayerNorm.weight"] = 1 + rn(d, s=0.1)
        W[p + "attention.output.LayerNorm.bias"] = rn(d, s=0.1)
        W[p + "intermediate.dense.weight"] = rn(f, d, s=1.0 / math.sqrt(d))
        W[p + "intermediate.dense.bias"] = rn(f, s=0.1)
        W[p + "output.dense.weight"] = rn(d, f, s=1.0 / math.sqrt(f))
        W[p + "output.dense.bias"] = rn(d, s=0.1)
        W[p + "output.LayerNorm.weight"] = 1 + rn(d, s=0.1)
        W[p + "output.LayerNorm.bias"] = rn(d, s=0.1)
    if cfg["legacy"]:   # LegacyDebertaV2OnlyMLMHead
        H = "cls.predictions."
        W[H + "transform.dense.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
        W[H + "transform.dense.bias"] = rn(d, s=0.1)
        W[H + "transform.LayerNorm.weight"] = 1 + rn(d, s=0.1)
        W[H + "transform.LayerNorm.bias"] = rn(d, s=0.1)
        W[H + "bias"] = rn(V, s=0.3)
    else:               # DebertaV2OnlyMLMHead
        H = "lm_predictions.lm_head."
        W[H + "dense.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
        W[H + "dense.bias"] = rn(d, s=0.1)
        W[H + "LayerNorm.weight"] = 1 + rn(d, s=0.1)
        W[H + "LayerNorm.bias"] = rn(d, s=0.1)
        W[H + "bias"] = rn(V, s=0.3)
    return W


def make_log_bucket_position(relative_pos, bucket_size, max_position):
    """modeling_deberta_v2.make_log_bucket_position, the same torch ops (float32 on long)."""
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where((relative_pos < mid) & (relative_pos > -mid), torch.tensor(mid - 1).type_as(relative_pos),
                          torch.abs(relative_pos))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid))
                         * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)


def build_relative_position(q, k, bucket_size, max_position):
    rel = torch.arange(0, q)[:, None] - torch.arange(0, k)[None, :]
    if bucket_size > 0 and max_position > 0:
        rel = make_log_bucket_position(rel, bucket_size, max_position)
    return rel.to(torch.long)


def bucket64(rel, bucket_size, max_position):
    """The same buckets in float64 (a cross-check of the float32 ones)."""
    mid = bucket_size // 2
    a = mid - 1 if -mid < rel < mid else abs(rel)
    if a <= mid:
        return rel
    lp = math.ceil(math.log(a / mid) / math.log((max_position - 1) / mid) * (mid - 1)) + mid
    return int(lp if rel > 0 else -lp)


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def act(cfg):
    assert cfg["hidden_act"] == "gelu"
    return gelu


def lin(x, R, name):
    return x @ R[name + ".weight"].T + R[name + ".bias"]


def forward(R, cfg, ids, type_ids, mask):
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    hd = d // H
    eps = cfg["layer_norm_eps"]
    n = len(ids)
    P = "deberta."
    span, max_rel, buckets = span_of(cfg)
    types = pos_types(cfg)
    m = torch.tensor(mask, dtype=torch.float64)
    x = R[P + "embeddings.word_embeddings.weight"][torch.tensor(ids)]
    if cfg["position_biased_input"]:
        x = x + R[P + "embeddings.position_embeddings.weight"][torch.arange(n)]
    if cfg["type_vocab_size"] > 0:
        x = x + R[P + "embeddings.token_type_embeddings.weight"][torch.tensor(type_ids)]
    x = layer_norm(x, R[P + "embeddings.LayerNorm.weight"], R[P + "embeddings.LayerNorm.bias"], eps)
    x = x * m[:, None]
    # get_attention_mask: mask[i] * mask[j]
    amask = (m[None, :] * m[:, None]).bool()
    relpos = build_relative_position(n, n, buckets, max_rel)
    rel = R[P + "encoder.rel_embeddings.weight"]
    if "layer_norm" in [t.strip() for t in cfg["norm_rel_ebd"].lower().split("|")]:
        rel = layer_norm(rel, R[P + "encoder.LayerNorm.weight"], R[P + "encoder.LayerNorm.bias"], eps)
    rel = rel[0:2 * span]
    sf = 1 + ("c2p" in types) + ("p2c" in types)
    scale = math.sqrt(hd * sf)

    def heads(t):   # [n, d] -> [H, n, hd]
        return t.view(t.shape[0], H, hd).permute(1, 0, 2)

    hiddens, attns, c2ps, p2cs = [x], [], [], []
    fmin = torch.finfo(torch.float64).min
    for i in range(cfg["num_hidden_layers"]):
        p = f"{P}encoder.layer.{i}."
        q = heads(lin(x, R, p + "attention.self.query_proj"))
        k = heads(lin(x, R, p + "attention.self.key_proj"))
        v = heads(lin(x, R, p + "attention.self.value_proj"))
        s = q @ k.transpose(-1, -2) / scale
        c2p_t = torch.zeros(H, n, n, dtype=torch.float64)
        p2c_t = torch.zeros(H, n, n, dtype=torch.float64)
        if cfg["relative_attention"]:
            kp = "key_proj" if cfg["share_att_key"] else "pos_key_proj"
            qp = "query_proj" if cfg["share_att_key"] else "pos_query_proj"
            if "c2p" in types:
                pos_key = heads(lin(rel, R, p + "attention.self." + kp))              # [H, 2span, hd]
                c2p_att = q @ pos_key.transpose(-1, -2)                               # [H, n, 2span]
                c2p_pos = torch.clamp(relpos + span, 0, span * 2 - 1)
                c2p_t = torch.gather(c2p_att, dim=-1, index=c2p_pos.expand([H, n, n])) / scale
            if "p2c" in types:
                pos_query = heads(lin(rel, R, p + "attention.self." + qp))
                p2c_pos = torch.clamp(-relpos + span, 0, span * 2 - 1)
                p2c_att = k @ pos_query.transpose(-1, -2)                             # [H, n(key), 2span]
                p2c_t = torch.gather(p2c_att, dim=-1, index=p2c_pos.expand([H, n, n])).transpose(-1, -2) / scale
            s = s + (c2p_t + p2c_t)
        # XSoftmax
        s = s.masked_fill(~amask, fmin)
        w = torch.softmax(s, dim=-1).masked_fill(~amask, 0.0)
        attns.append(w)
        c2ps.append(c2p_t)
        p2cs.append(p2c_t)
        ctx = (w @ v).permute(1, 0, 2).reshape(n, d)
        a = layer_norm(lin(ctx, R, p + "attention.output.dense") + x, R[p + "attention.output.LayerNorm.weight"],
                       R[p + "attention.output.LayerNorm.bias"], eps)
        h = act(cfg)(lin(a, R, p + "intermediate.dense"))
        x = layer_norm(lin(h, R, p + "output.dense") + a, R[p + "output.LayerNorm.weight"],
                       R[p + "output.LayerNorm.bias"], eps)
        hiddens.append(x)
    return torch.stack(attns), torch.stack(hiddens), torch.stack(c2ps), torch.stack(p2cs), relpos


def mlm_logits(R, cfg, h):
    H = "cls.predictions.transform." if cfg["legacy"] else "lm_predictions.lm_head."
    t = layer_norm(act(cfg)(lin(h, R, H + "dense")), R[H + "LayerNorm.weight"], R[H + "LayerNorm.bias"],
                   cfg["layer_norm_eps"])
    b = R["cls.predictions.bias" if cfg["legacy"] else "lm_predictions.lm_head.bias"]
    return t @ R["deberta.embeddings.word_embeddings.weight"].T + b


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

    # the float32 buckets against float64 ones over every distance the cases reach
    span, max_rel, buckets = span_of(cfg)
    long_n = opts["long"]
    rp = build_relative_position(long_n, long_n, buckets, max_rel)
    if buckets > 0:
        for a in range(long_n):
            for b in range(long_n):
                assert int(rp[a, b]) == bucket64(a - b, buckets, max_rel), (a, b)

    V = cfg["vocab_size"]
    mask_id = vocab.index("[MASK]")
    rng = np.random.default_rng(seed)
    words = [int(x) for x in rng.integers(5, V, 7)]
    words[3] = mask_id
    cases = [{"name": "single", "ids": words, "mask": [1] * 7, "type_ids": [0] * 7},
             # right padding (id 0 = [PAD]): a padded query's row and embedding are zero
             {"name": "padded", "ids": [int(x) for x in rng.integers(5, V, 6)] + [0, 0],
              "mask": [1] * 6 + [0, 0], "type_ids": [0] * 8},
             {"name": "one", "ids": [int(rng.integers(5, V))], "mask": [1], "type_ids": [0]}]
    long_ids = [int(x) for x in rng.integers(5, V, long_n)]
    long_ids[long_n - 2] = mask_id
    cases.append({"name": "long", "ids": long_ids, "mask": [1] * long_n,
                  "type_ids": [0] * (long_n // 2) + [1 if cfg["type_vocab_size"] > 1 else 0] * (long_n - long_n // 2)})
    for c in cases:
        attn, hidden, c2p, p2c, relpos = forward(R, cfg, c["ids"], c["type_ids"], c["mask"])
        n = len(c["ids"])
        c["mlm_positions"] = sorted({0, n - 1} | {i for i, t in enumerate(c["ids"]) if t == mask_id and c["mask"][i]})
        c["mlm_positions"] = [q for q in c["mlm_positions"] if c["mask"][q]]
        c["mlm_log_probs"] = [torch.log_softmax(mlm_logits(R, cfg, hidden[-1][q]), dim=-1).tolist()
                              for q in c["mlm_positions"]]
        c["mlm_top_ids"] = [[int(i) for i in torch.topk(torch.tensor(lp), 5).indices] for lp in c["mlm_log_probs"]]
        for what, arr in (("attn", attn), ("hidden", hidden), ("c2p", c2p), ("p2c", p2c)):
            np.save(os.path.join(out_fix, f"{name}-{c['name']}-{what}.npy"), arr.numpy().astype("<f4"))
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    types = pos_types(cfg)
    meta = {"model": name, "family": "DeBERTa-v2", "n_layers": cfg["num_hidden_layers"], "n_heads": H,
            "d_head": d // H, "d_model": d, "vocab_size": V, "mask_id": mask_id, "span": span,
            "scale_factor": 1 + ("c2p" in types) + ("p2c" in types),
            "buckets": [int(rp[max(t, 0), max(-t, 0)]) for t in range(-(long_n - 1), long_n)],
            "bucket_distances": list(range(-(long_n - 1), long_n)),
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
        write_model(name, over, opts, out_models, out_fix, 3500 + seed)
        print("wrote", name)
    # deberta-v3-base's buckets (position_buckets 256, max_relative_positions 512) over
    # distances -1023..1023, as torch's float32 make_log_bucket_position gives them
    rel = torch.arange(-1023, 1024)
    b = make_log_bucket_position(rel, 256, 512).to(torch.long)
    # (in a folder of its own: tests/cli reads every fixtures/*.json as a list of cases)
    os.makedirs(os.path.join(out_fix, "deberta"), exist_ok=True)
    with open(os.path.join(out_fix, "deberta", "v3-base-buckets.json"), "w") as fh:
        json.dump({"buckets": 256, "max_relative": 512, "from": -1023, "bucket": b.tolist()}, fh)


if __name__ == "__main__":
    main()
