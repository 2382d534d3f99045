#!/usr/bin/python3
"""Writes small random rotary decoders (Llama, Qwen2, Qwen3, Mistral) and ALiBi ones (BLOOM) in
exact Hugging Face layout, and reference outputs for tests/hf/test-hf-decoders.c.

Each model is a folder under tests/hf/models/<name>/: config.json with LlamaConfig /
Qwen2Config / Qwen3Config / MistralConfig keys, model.safetensors (or two shards and
model.safetensors.index.json) in *ForCausalLM's names ("model." before the decoder,
lm_head.weight unprefixed unless tie_word_embeddings), F32 or BF16, and a WordPiece vocab.txt
so that the folder opens (the cases are ids; the tokenizers have their own tests).

The reference forward below is modeling_llama.py's (LlamaModel with eager attention,
output_attentions=True; LlamaForCausalLM's head), with Qwen2's q/k/v biases, Qwen3's q_norm /
k_norm before the rotation, and Mistral's / Qwen2's sliding window (masking_utils'
sliding_window_overlay: kv_idx > q_idx - sliding_window), written out in torch float64 from
the weights as rounded to the file's dtype.  The rotation's cos / sin are made as
LlamaRotaryEmbedding makes them, in float32 (inv_freq from modeling_rope_utils' default,
linear and llama3 initialisers).  Position ids are 0..n-1 whatever the padding, as a plain
model(input_ids, attention_mask=...) call makes them.  Each model's scores are cross-checked
against Meta's original formulation (weights un-permuted as convert_llama_weights_to_hf.py
permutes them, rotation as complex multiplication of interleaved pairs).  It never calls
attnscope.  Outputs go to tests/hf/fixtures/:

  <model>.json              the cases: ids, mask, next-token log-probabilities (all V) after
                            the last token and after position 1
  <model>-<case>-attn.npy   float32 [L, H, n, n]   attention probabilities
  <model>-<case>-hidden.npy float32 [L+1, n, d]    hidden_states: the embeddings, each layer's
                            output, the last one after the final norm

Run with Debian's python3-torch:  /usr/bin/python3 tests/hf/gen_decoders.py
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


def base_config(model_type, **kw):
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
            "mistral": "MistralForCausalLM"}[model_type]
    cfg = {
        "architectures": [arch], "model_type": model_type,
        "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "hidden_act": "silu", "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0, "rope_scaling": None, "vocab_size": 64, "tie_word_embeddings": False,
        "bos_token_id": 2, "eos_token_id": 3, "initializer_range": 0.02, "torch_dtype": "float32",
        "use_cache": True, "attention_dropout": 0.0,
    }
    cfg.update(kw)
    return cfg


def dims(cfg):
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or H
    hd = cfg.get("head_dim") or d // H
    return d, H, kv, hd, cfg["intermediate_size"]


def biases(cfg):
    """(q/k/v, o, mlp) biases as each family's modules have them."""
    t = cfg["model_type"]
    ab = bool(cfg.get("attention_bias", False))
    if t == "qwen2":
        return True, False, False
    if t == "mistral":
        return False, False, False
    return ab, ab, bool(cfg.get("mlp_bias", False)) if t == "llama" else False


def make_weights(cfg, g):
    d, H, KV, hd, f = dims(cfg)
    V = cfg["vocab_size"]
    qkv_b, o_b, mlp_b = biases(cfg)

    def rn(*shape, s=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * s

    W = {"model.embed_tokens.weight": rn(V, d, s=0.8)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        W[p + "input_layernorm.weight"] = 1 + rn(d, s=0.1)
        W[p + "post_attention_layernorm.weight"] = 1 + rn(d, s=0.1)
        W[p + "self_attn.q_proj.weight"] = rn(H * hd, d, s=1.0 / math.sqrt(d))
        W[p + "self_attn.k_proj.weight"] = rn(KV * hd, d, s=1.0 / math.sqrt(d))
        W[p + "self_attn.v_proj.weight"] = rn(KV * hd, d, s=1.0 / math.sqrt(d))
        W[p + "self_attn.o_proj.weight"] = rn(d, H * hd, s=1.0 / math.sqrt(H * hd))
        if qkv_b:
            W[p + "self_attn.q_proj.bias"] = rn(H * hd, s=0.2)
            W[p + "self_attn.k_proj.bias"] = rn(KV * hd, s=0.2)
            W[p + "self_attn.v_proj.bias"] = rn(KV * hd, s=0.2)
        if o_b:
            W[p + "self_attn.o_proj.bias"] = rn(d, s=0.1)
        if cfg["model_type"] == "qwen3":
            W[p + "self_attn.q_norm.weight"] = 1 + rn(hd, s=0.2)
            W[p + "self_attn.k_norm.weight"] = 1 + rn(hd, s=0.2)
        W[p + "mlp.gate_proj.weight"] = rn(f, d, s=1.0 / math.sqrt(d))
        W[p + "mlp.up_proj.weight"] = rn(f, d, s=1.0 / math.sqrt(d))
        W[p + "mlp.down_proj.weight"] = rn(d, f, s=1.0 / math.sqrt(f))
        if mlp_b:
            W[p + "mlp.gate_proj.bias"] = rn(f, s=0.1)
            W[p + "mlp.up_proj.bias"] = rn(f, s=0.1)
            W[p + "mlp.down_proj.bias"] = rn(d, s=0.1)
    W["model.norm.weight"] = 1 + rn(d, s=0.1)
    if not cfg.get("tie_word_embeddings", False):
        W["lm_head.weight"] = rn(V, d, s=0.5)
    return W


def inv_freq_of(cfg):
    """modeling_rope_utils: default / linear / llama3, in float32 as transformers keeps it."""
    _, _, _, dim, _ = dims(cfg)
    base = cfg.get("rope_theta", 10000.0)
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim))
    rs = cfg.get("rope_scaling")
    kind = (rs or {}).get("rope_type", (rs or {}).get("type", "default"))
    if kind == "linear":
        inv = inv / rs["factor"]
    elif kind == "llama3":
        factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wl, high_wl = old / lo, old / hi
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        inv = torch.where(medium, smoothed, inv_l)
    else:
        assert kind == "default", kind
    return inv


def cos_sin(cfg, n):
    """LlamaRotaryEmbedding.forward: float32 freqs = inv_freq @ position_ids, cat twice."""
    inv = inv_freq_of(cfg)
    pos = torch.arange(n)[None, :].float()
    freqs = (inv[None, :, None].float() @ pos[:, None, :]).transpose(1, 2)[0]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().double(), emb.sin().double()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rms_norm(x, w, eps):
    """LlamaRMSNorm (float64 here)."""
    var = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(var + eps))


def lin(x, R, name):
    y = x @ R[name + ".weight"].T
    b = R.get(name + ".bias")
    return y + b if b is not None else y


def windows_of(cfg):
    """Each layer's sliding window or None: Mistral's in every layer; Qwen2Config / Qwen3Config's
    sliding_window = sliding_window if use_sliding_window else None, layer_types (default:
    "sliding_attention" where the window is set and i >= max_window_layers)."""
    t, L = cfg["model_type"], cfg["num_hidden_layers"]
    if t == "mistral":
        return [cfg.get("sliding_window", 4096)] * L
    if t in ("qwen2", "qwen3"):
        w = cfg.get("sliding_window", 4096) if cfg.get("use_sliding_window", False) else None
        types = cfg.get("layer_types") or ["sliding_attention" if w is not None and i >= cfg.get("max_window_layers", 28)
                                           else "full_attention" for i in range(L)]
        return [w if x == "sliding_attention" else None for x in types]
    return [None] * L


def window_of(cfg):
    """The window of every layer when all slide alike, else None."""
    ws = windows_of(cfg)
    return ws[0] if all(x is not None and x == ws[0] for x in ws) else None


def forward(R, cfg, ids, mask):
    """LlamaModel.forward (eager, output_attentions, output_hidden_states), one sequence.
    Returns attention [L, H, n, n], hidden states [L+1, n, d] and the per-layer (normed input,
    q and k before the rotation) for the cross-check."""
    d, H, KV, hd, f = dims(cfg)
    eps = cfg["rms_norm_eps"]
    n = len(ids)
    rep = H // KV
    h = R["model.embed_tokens.weight"][torch.tensor(ids)]
    cos, sin = cos_sin(cfg, n)
    qi = torch.arange(n)[:, None]
    kj = torch.arange(n)[None, :]
    causal = (kj <= qi) & torch.tensor([m == 1 for m in mask])[None, :]
    fmin = torch.finfo(torch.float64).min
    hiddens, attns, saved = [], [], []
    for i, W in enumerate(windows_of(cfg)):
        keep = causal & (kj > qi - W) if W is not None else causal
        add = torch.where(keep, torch.zeros(()), torch.full((), fmin, dtype=torch.float64))
        hiddens.append(h)
        p = f"model.layers.{i}."
        a = rms_norm(h, R[p + "input_layernorm.weight"], eps)
        q = lin(a, R, p + "self_attn.q_proj").view(n, H, hd)
        k = lin(a, R, p + "self_attn.k_proj").view(n, KV, hd)
        v = lin(a, R, p + "self_attn.v_proj").view(n, KV, hd).transpose(0, 1)
        if cfg["model_type"] == "qwen3":
            q = rms_norm(q, R[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, R[p + "self_attn.k_norm.weight"], eps)
        q, k = q.transpose(0, 1), k.transpose(0, 1)
        saved.append((a, q, k))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k[:, None].expand(KV, rep, n, hd).reshape(H, n, hd)   # repeat_kv
        v = v[:, None].expand(KV, rep, n, hd).reshape(H, n, hd)
        w = (q @ k.transpose(1, 2)) * hd ** -0.5
        w = w + add
        w = torch.softmax(w, dim=-1)
        attns.append(w)
        ctx = (w @ v).transpose(0, 1).reshape(n, H * hd)
        h = h + lin(ctx, R, p + "self_attn.o_proj")
        m = rms_norm(h, R[p + "post_attention_layernorm.weight"], eps)
        gate = lin(m, R, p + "mlp.gate_proj")
        m = lin(gate * torch.sigmoid(gate) * lin(m, R, p + "mlp.up_proj"), R, p + "mlp.down_proj")
        h = h + m
    h = rms_norm(h, R["model.norm.weight"], eps)
    hiddens.append(h)
    return torch.stack(attns), torch.stack(hiddens), saved


def meta_scores(cfg, q, k):
    """Meta's llama model.py: weights in the interleaved layout (undo HF's permute), the
    rotation as complex multiplication (precompute_freqs_cis / apply_rotary_emb).  q [H, n, hd],
    k [KV, n, hd] before the rotation in HF's layout.  Returns the raw scores [H, n, n]."""
    H, n, hd = q.shape
    KV = k.shape[0]

    def to_meta(x):   # permute's inverse on the head dimension: (2, hd/2) -> (hd/2, 2)
        return x.reshape(*x.shape[:-1], 2, hd // 2).transpose(-1, -2).reshape(x.shape)

    inv = inv_freq_of(cfg).double()
    t = torch.arange(n, dtype=torch.float32)
    angles = torch.outer(t, inv.float()).double()
    cis = torch.polar(torch.ones_like(angles), angles)
    qm = torch.view_as_complex(to_meta(q).reshape(H, n, hd // 2, 2).contiguous())
    km = torch.view_as_complex(to_meta(k).reshape(KV, n, hd // 2, 2).contiguous())
    qr = torch.view_as_real(qm * cis).reshape(H, n, hd)
    kr = torch.view_as_real(km * cis).reshape(KV, n, hd)
    kr = kr.repeat_interleave(H // KV, dim=0)
    return qr @ kr.transpose(1, 2)


def cross_check(cfg, saved, attn, mask):
    """The first layer's probabilities again from Meta's formulation (rows whose every key is
    hidden are uniform in both and skipped)."""
    _, _, q, k = (None,) + saved[0]
    _, H, KV, hd, _ = dims(cfg)
    s = meta_scores(cfg, q, k) * hd ** -0.5
    n = s.shape[-1]
    qi, kj = torch.arange(n)[:, None], torch.arange(n)[None, :]
    keep = (kj <= qi) & torch.tensor([m == 1 for m in mask])[None, :]
    W = windows_of(cfg)[0]
    if W is not None:
        keep = keep & (kj > qi - W)
    s = s.masked_fill(~keep, float("-inf"))
    rows = keep.any(-1)
    p = torch.softmax(s[:, rows], dim=-1)
    assert torch.allclose(p, attn[0][:, rows], atol=1e-6), "Meta's rotation disagrees"


# ---- BLOOM (modeling_bloom.py): ALiBi, the fused query_key_value per head, LayerNorm on the
# embeddings, pre-LN blocks, bloom_gelu, ln_f, lm_head tied to word_embeddings

def bloom_config(over):
    cfg = {"architectures": ["BloomForCausalLM"], "model_type": "bloom", "vocab_size": 64,
           "n_layer": 2, "layer_norm_epsilon": 1e-5, "apply_residual_connection_post_layernorm": False,
           "pretraining_tp": 1, "slow_but_exact": False, "bos_token_id": 1, "eos_token_id": 2,
           "pad_token_id": 3, "initializer_range": 0.02, "torch_dtype": "float32", "use_cache": True,
           "attention_dropout": 0.0, "hidden_dropout": 0.0}
    cfg.update(over)
    return cfg


def bloom_dims(cfg):
    d = cfg.get("hidden_size", cfg.get("n_embed"))
    H = cfg.get("n_head", cfg.get("num_attention_heads"))
    return d, H, d // H, 4 * d


def bloom_weights(cfg, g):
    d, H, hd, f = bloom_dims(cfg)
    V = cfg["vocab_size"]

    def rn(*shape, s=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * s

    W = {"transformer.word_embeddings.weight": rn(V, d, s=0.8),
         "transformer.word_embeddings_layernorm.weight": 1 + rn(d, s=0.1),
         "transformer.word_embeddings_layernorm.bias": rn(d, s=0.1)}
    for i in range(cfg["n_layer"]):
        p = f"transformer.h.{i}."
        for ln in ("input_layernorm", "post_attention_layernorm"):
            W[p + ln + ".weight"] = 1 + rn(d, s=0.1)
            W[p + ln + ".bias"] = rn(d, s=0.1)
        W[p + "self_attention.query_key_value.weight"] = rn(3 * d, d, s=1.0 / math.sqrt(d))
        W[p + "self_attention.query_key_value.bias"] = rn(3 * d, s=0.2)
        W[p + "self_attention.dense.weight"] = rn(d, d, s=1.0 / math.sqrt(d))
        W[p + "self_attention.dense.bias"] = rn(d, s=0.1)
        W[p + "mlp.dense_h_to_4h.weight"] = rn(f, d, s=1.0 / math.sqrt(d))
        W[p + "mlp.dense_h_to_4h.bias"] = rn(f, s=0.1)
        W[p + "mlp.dense_4h_to_h.weight"] = rn(d, f, s=1.0 / math.sqrt(f))
        W[p + "mlp.dense_4h_to_h.bias"] = rn(d, s=0.1)
    W["transformer.ln_f.weight"] = 1 + rn(d, s=0.1)
    W["transformer.ln_f.bias"] = rn(d, s=0.1)
    return W


def alibi_slopes(num_heads):
    """build_alibi_tensor's slopes, in float32 as it makes them."""
    closest = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        remaining = min(closest, num_heads - closest)
        extra = torch.pow(extra_base, torch.arange(1, 1 + 2 * remaining, 2, dtype=torch.int32))
        slopes = torch.cat([slopes, extra], dim=0)
    return slopes


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def bloom_gelu(x):
    """bloom_gelu_forward."""
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def bloom_forward(R, cfg, ids, mask):
    """BloomModel.forward (eager, output_attentions, output_hidden_states), one sequence:
    alibi = slope_h * ((cumsum(mask) - 1) * mask)[j] added to the scores (baddbmm, beta 1,
    alpha 1/sqrt(head_dim)) before the causal and padding mask."""
    d, H, hd, f = bloom_dims(cfg)
    eps = cfg["layer_norm_epsilon"]
    n = len(ids)
    m = torch.tensor(mask, dtype=torch.int64)
    arange = ((m.cumsum(-1) - 1) * m).double()
    alibi = alibi_slopes(H).double()[:, None, None] * arange[None, None, :]   # [H, 1, n]
    qi, kj = torch.arange(n)[:, None], torch.arange(n)[None, :]
    keep = (kj <= qi) & (m == 1)[None, :]
    fmin = torch.finfo(torch.float64).min
    add = torch.where(keep, torch.zeros(()), torch.full((), fmin, dtype=torch.float64))
    h = layer_norm(R["transformer.word_embeddings.weight"][torch.tensor(ids)],
                   R["transformer.word_embeddings_layernorm.weight"], R["transformer.word_embeddings_layernorm.bias"],
                   eps)
    hiddens, attns = [], []
    for i in range(cfg["n_layer"]):
        hiddens.append(h)
        p = f"transformer.h.{i}."
        a = layer_norm(h, R[p + "input_layernorm.weight"], R[p + "input_layernorm.bias"], eps)
        fused = lin(a, R, p + "self_attention.query_key_value").view(n, H, 3, hd)   # _reshape
        q, k, v = (fused[:, :, s].transpose(0, 1) for s in range(3))
        w = alibi + (q @ k.transpose(1, 2)) * (1.0 / math.sqrt(hd))
        w = torch.softmax(w + add, dim=-1)
        attns.append(w)
        ctx = (w @ v).transpose(0, 1).reshape(n, d)
        h = h + lin(ctx, R, p + "self_attention.dense")
        a = layer_norm(h, R[p + "post_attention_layernorm.weight"], R[p + "post_attention_layernorm.bias"], eps)
        h = h + lin(bloom_gelu(lin(a, R, p + "mlp.dense_h_to_4h")), R, p + "mlp.dense_4h_to_h")
    h = layer_norm(h, R["transformer.ln_f.weight"], R["transformer.ln_f.bias"], eps)
    hiddens.append(h)
    return torch.stack(attns), torch.stack(hiddens)


# ---- Gemma 2 / Gemma 3 text (modeling_gemma2.py, modeling_gemma3.py, eager): embeddings times
# sqrt(hidden) in the weights' dtype, RMSNorm(1 + w) in float32, four norms per layer, GeGLU
# with gelu_pytorch_tanh, scale query_pre_attn_scalar^-1/2, Gemma 2's attention soft-cap
# before the mask and final_logit_softcapping on the head, sliding and global layers (Gemma 3:
# q_norm / k_norm, rope_local_base_freq in the sliding layers)

GEMMA_DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}


def gemma_config(model_type, over):
    arch = {"gemma2": "Gemma2ForCausalLM", "gemma3_text": "Gemma3ForCausalLM"}[model_type]
    cfg = {"architectures": [arch], "model_type": model_type, "hidden_size": 32, "intermediate_size": 48,
           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
           "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
           "vocab_size": 64, "tie_word_embeddings": True, "bos_token_id": 2, "eos_token_id": 1,
           "pad_token_id": 0, "initializer_range": 0.02, "torch_dtype": "float32", "use_cache": True,
           "attention_dropout": 0.0, "attention_bias": False, "query_pre_attn_scalar": 8}
    cfg.update(over)
    return cfg


def gemma_weights(cfg, g, q_gain):
    d, H, KV, hd, f = dims(cfg)
    V = cfg["vocab_size"]

    def rn(*shape, s=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * s

    W = {"model.embed_tokens.weight": rn(V, d, s=0.3)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        for ln in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                   "post_feedforward_layernorm"):
            W[p + ln + ".weight"] = rn(d, s=0.2)   # the gain is 1 + w
        W[p + "self_attn.q_proj.weight"] = rn(H * hd, d, s=q_gain / math.sqrt(d))
        W[p + "self_attn.k_proj.weight"] = rn(KV * hd, d, s=1.0 / math.sqrt(d))
        W[p + "self_attn.v_proj.weight"] = rn(KV * hd, d, s=1.0 / math.sqrt(d))
        W[p + "self_attn.o_proj.weight"] = rn(d, H * hd, s=1.0 / math.sqrt(H * hd))
        if cfg["model_type"] == "gemma3_text":
            W[p + "self_attn.q_norm.weight"] = rn(hd, s=0.3)
            W[p + "self_attn.k_norm.weight"] = rn(hd, s=0.3)
        W[p + "mlp.gate_proj.weight"] = rn(f, d, s=1.0 / math.sqrt(d))
        W[p + "mlp.up_proj.weight"] = rn(f, d, s=1.0 / math.sqrt(d))
        W[p + "mlp.down_proj.weight"] = rn(d, f, s=1.0 / math.sqrt(f))
    W["model.norm.weight"] = rn(d, s=0.2)
    if not cfg.get("tie_word_embeddings", True):
        W["lm_head.weight"] = rn(V, d, s=0.5)
    return W


def gemma_sliding(cfg):
    """Which layers slide: layer_types, else Gemma2Config's (i + 1) % 2 / Gemma3TextConfig's
    (i + 1) % sliding_window_pattern."""
    L = cfg["num_hidden_layers"]
    if cfg.get("layer_types"):
        return [t == "sliding_attention" for t in cfg["layer_types"]]
    pattern = 2 if cfg["model_type"] == "gemma2" else cfg.get("sliding_window_pattern", 6)
    return [bool((i + 1) % pattern) for i in range(L)]


def gemma_caps(cfg):
    g2 = cfg["model_type"] == "gemma2"
    a = cfg.get("attn_logit_softcapping", 50.0 if g2 else None)
    f = cfg.get("final_logit_softcapping", 30.0 if g2 else None)
    return a, f


def gemma_inv_freq(cfg, local):
    """Gemma3TextModel: rotary_emb (rope_theta, rope_scaling) and rotary_emb_local
    (rope_local_base_freq, rope_type default); Gemma 2: rope_theta in every layer."""
    c = dict(cfg)
    if cfg["model_type"] == "gemma2":
        c.setdefault("rope_theta", 10000.0)
    else:
        c.setdefault("rope_theta", 1000000.0)
        if local:
            c["rope_theta"] = cfg.get("rope_local_base_freq", 10000.0)
            c["rope_scaling"] = None
    return inv_freq_of(c)


def gemma_rms(x, w, eps):
    """Gemma2RMSNorm: x * rsqrt(mean(x^2) + eps) * (1.0 + weight.float()), the gain in float32."""
    one = (1.0 + w.float()).double()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * one


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gemma_forward(R, cfg, ids, mask, dtype):
    """Gemma2Model / Gemma3TextModel.forward (eager, output_attentions, output_hidden_states), one
    sequence, float64.  Returns attention [L, H, n, n], hidden states [L+1, n, d] and the largest
    |scaled score| before the soft-cap."""
    d, H, KV, hd, f = dims(cfg)
    eps = cfg["rms_norm_eps"]
    n = len(ids)
    rep = H // KV
    g3 = cfg["model_type"] == "gemma3_text"
    normalizer = torch.tensor(d ** 0.5, dtype=GEMMA_DTYPES[dtype]).double()
    h = R["model.embed_tokens.weight"][torch.tensor(ids)] * normalizer
    scaling = float(torch.tensor(cfg["query_pre_attn_scalar"] ** -0.5, dtype=torch.float32))
    cap, _ = gemma_caps(cfg)
    if g3:
        cap = None
    sliding = gemma_sliding(cfg)
    W = cfg.get("sliding_window", 4096)
    qi, kj = torch.arange(n)[:, None], torch.arange(n)[None, :]
    keep = (kj <= qi) & torch.tensor([m == 1 for m in mask])[None, :]
    fmin = torch.finfo(torch.float64).min
    hiddens, attns, biggest = [], [], 0.0
    for i in range(cfg["num_hidden_layers"]):
        hiddens.append(h)
        p = f"model.layers.{i}."
        k_i = keep & (kj > qi - W) if sliding[i] else keep
        add = torch.where(k_i, torch.zeros(()), torch.full((), fmin, dtype=torch.float64))
        inv = gemma_inv_freq(cfg, sliding[i])
        freqs = (inv[None, :, None].float() @ torch.arange(n)[None, None, :].float()).transpose(1, 2)[0]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().double(), emb.sin().double()
        a = gemma_rms(h, R[p + "input_layernorm.weight"], eps)
        q = lin(a, R, p + "self_attn.q_proj").view(n, H, hd)
        k = lin(a, R, p + "self_attn.k_proj").view(n, KV, hd)
        v = lin(a, R, p + "self_attn.v_proj").view(n, KV, hd).transpose(0, 1)
        if g3:
            q = gemma_rms(q, R[p + "self_attn.q_norm.weight"], eps)
            k = gemma_rms(k, R[p + "self_attn.k_norm.weight"], eps)
        q, k = q.transpose(0, 1), k.transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k[:, None].expand(KV, rep, n, hd).reshape(H, n, hd)
        v = v[:, None].expand(KV, rep, n, hd).reshape(H, n, hd)
        w = (q @ k.transpose(1, 2)) * scaling
        biggest = max(biggest, float(w.abs().max()))
        if cap is not None:
            w = torch.tanh(w / cap) * cap
        w = torch.softmax(w + add, dim=-1)
        attns.append(w)
        ctx = (w @ v).transpose(0, 1).reshape(n, H * hd)
        h = h + gemma_rms(lin(ctx, R, p + "self_attn.o_proj"), R[p + "post_attention_layernorm.weight"], eps)
        m = gemma_rms(h, R[p + "pre_feedforward_layernorm.weight"], eps)
        m = lin(gelu_tanh(lin(m, R, p + "mlp.gate_proj")) * lin(m, R, p + "mlp.up_proj"), R, p + "mlp.down_proj")
        h = h + gemma_rms(m, R[p + "post_feedforward_layernorm.weight"], eps)
    h = gemma_rms(h, R["model.norm.weight"], eps)
    hiddens.append(h)
    return torch.stack(attns), torch.stack(hiddens), biggest


# name, model_type, config overrides, options
MODELS = [
    # Llama: GQA 2:1, an untied lm_head, F32
    ("llama-f32", "llama", {}, {"dtype": "F32"}),
    # Llama, BF16: MQA (1 K/V head), tied embeddings, attention_bias + mlp_bias, explicit
    # head_dim, llama3 rope scaling whose wavelength bands fall inside 8 original positions
    ("llama-bf16-mqa", "llama", {"num_key_value_heads": 1, "head_dim": 8, "tie_word_embeddings": True,
                                 "attention_bias": True, "mlp_bias": True, "rope_theta": 500000.0,
                                 "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                  "high_freq_factor": 4.0, "original_max_position_embeddings": 8}},
     {"dtype": "BF16"}),
    # Llama in two shards, every head its own K/V (1:1), linear scaling, 3 layers
    ("llama-sharded", "llama", {"num_key_value_heads": 4, "num_hidden_layers": 3,
                                "rope_scaling": {"type": "linear", "factor": 2.0}},
     {"dtype": "F32", "shards": 2}),
    # Qwen2: q/k/v biases, tied (as Qwen2.5-0.5B), rope_theta 1e6, use_sliding_window false
    ("qwen2-f32", "qwen2", {"rope_theta": 1000000.0, "tie_word_embeddings": True, "use_sliding_window": False,
                            "sliding_window": 4096, "max_window_layers": 2}, {"dtype": "F32"}),
    # Qwen3: per-head q_norm / k_norm, head_dim 12 (4 heads x 12 = 48, hidden 32), GQA 2:1
    ("qwen3-f32", "qwen3", {"head_dim": 12, "rope_theta": 1000000.0, "attention_bias": False}, {"dtype": "F32"}),
    # Mistral: a sliding window of 4 over 12 tokens, GQA 4:1 (8 heads of 4 over 2)
    ("mistral-window", "mistral", {"num_attention_heads": 8, "num_key_value_heads": 2, "sliding_window": 4},
     {"dtype": "F32", "long": 12}),
    # BLOOM with 6 heads (not a power of two: build_alibi_tensor's extra slopes), F32, the keys
    # as bloom-560m's config.json spells them (n_embed, num_attention_heads)
    ("bloom-6heads", "bloom", {"n_embed": 24, "num_attention_heads": 6}, {"dtype": "F32", "long": 12}),
    # BLOOM with 8 heads, BF16, the keys as BloomConfig writes them (hidden_size, n_head)
    ("bloom-8heads-bf16", "bloom", {"hidden_size": 32, "n_head": 8}, {"dtype": "BF16"}),
    # Gemma 2, F32: head_dim 16 (4 x 16 = 64 over hidden 32), query_pre_attn_scalar 24, an
    # attention soft-cap of 2 with q weights 4x larger so the scaled scores pass it, a final
    # soft-cap of 3, an untied head; layer 0 slides (window 4 over 12 tokens), layer 1 is global
    ("gemma2-f32", "gemma2", {"head_dim": 16, "query_pre_attn_scalar": 24, "attn_logit_softcapping": 2.0,
                              "final_logit_softcapping": 3.0, "sliding_window": 4, "tie_word_embeddings": False},
     {"dtype": "F32", "long": 12, "q_gain": 4.0}),
    # Gemma 2, BF16: hidden 40 (sqrt 6.3246 is 6.3125 in bf16), MQA, tied, the default caps
    # (50, 30), layer_types naming the one sliding layer of three (window 3 over 10 tokens)
    ("gemma2-bf16", "gemma2", {"hidden_size": 40, "num_key_value_heads": 1, "num_hidden_layers": 3,
                               "sliding_window": 3, "query_pre_attn_scalar": 8,
                               "layer_types": ["sliding_attention", "full_attention", "full_attention"]},
     {"dtype": "BF16", "long": 10, "q_gain": 1.0}),
    # Gemma 3 text, F32: q_norm / k_norm, 3 layers with sliding_window_pattern 3 (0 and 1
    # slide, 2 is global), rope_local_base_freq 10000 in the sliding layers, rope_theta 1e6
    # with linear scaling 2 in the global one, window 4 over 12 tokens, no soft-caps
    ("gemma3-f32", "gemma3_text", {"num_hidden_layers": 3, "sliding_window_pattern": 3, "sliding_window": 4,
                                   "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                                   "rope_scaling": {"rope_type": "linear", "factor": 2.0},
                                   "final_logit_softcapping": None, "attn_logit_softcapping": None},
     {"dtype": "F32", "long": 12, "q_gain": 1.0}),
    # Qwen2 with the window in some layers only: use_sliding_window, max_window_layers 1 of 3
    # (layers 1 and 2 slide, window 4 over 12 tokens), as Qwen2Config derives layer_types
    ("qwen2-window-some", "qwen2", {"num_hidden_layers": 3, "use_sliding_window": True, "sliding_window": 4,
                                    "max_window_layers": 1, "tie_word_embeddings": True}, {"dtype": "F32", "long": 12}),
]


def write_model(name, mtype, over, opts, out_models, out_fix, seed):
    bloom = mtype == "bloom"
    gemma = mtype.startswith("gemma")
    cfg = bloom_config(over) if bloom else gemma_config(mtype, over) if gemma else base_config(mtype, **over)
    g = torch.Generator().manual_seed(seed)
    W = bloom_weights(cfg, g) if bloom else gemma_weights(cfg, g, opts["q_gain"]) if gemma else make_weights(cfg, g)
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
    shards = opts.get("shards", 1)
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), entries)
    else:
        per = (len(entries) + shards - 1) // shards
        wmap = {}
        for s in range(shards):
            fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = entries[s * per:(s + 1) * per]
            write_safetensors(os.path.join(folder, fname), part)
            for e in part:
                wmap[e[0]] = fname
        total = sum(len(e[3]) for e in entries)
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": wmap}, f, indent=2, sort_keys=True)
    if gemma:
        cfg["torch_dtype"] = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[opts["dtype"]]
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab_for(cfg["vocab_size"])) + "\n")

    V = cfg["vocab_size"]
    rng = np.random.default_rng(seed)
    cases = [{"name": "single", "ids": [int(x) for x in rng.integers(5, V, 7)], "mask": [1] * 7},
             # left padding (id 0 = [PAD]): positions still 0..n-1, the padded rows see nothing
             {"name": "left-padded", "ids": [0, 0] + [int(x) for x in rng.integers(5, V, 6)],
              "mask": [0, 0] + [1] * 6},
             {"name": "one", "ids": [int(rng.integers(5, V))], "mask": [1]}]
    if opts.get("long"):
        cases.append({"name": "long", "ids": [int(x) for x in rng.integers(5, V, opts["long"])],
                      "mask": [1] * opts["long"]})
    for c in cases:
        c["type_ids"] = [0] * len(c["ids"])
        if bloom:
            attn, hidden = bloom_forward(R, cfg, c["ids"], c["mask"])
        elif gemma:
            attn, hidden, biggest = gemma_forward(R, cfg, c["ids"], c["mask"], opts["dtype"])
            c["largest_scaled_score"] = biggest
        else:
            attn, hidden, saved = forward(R, cfg, c["ids"], c["mask"])
            cross_check(cfg, saved, attn, c["mask"])
        n = len(c["ids"])
        c["next_positions"] = sorted({n - 1, min(1, n - 1)}, reverse=True)
        head = R["transformer.word_embeddings.weight"] if bloom else \
            R.get("lm_head.weight", R["model.embed_tokens.weight"])
        final_cap = gemma_caps(cfg)[1] if gemma else None

        def head_logits(x):
            z = x @ head.T
            return torch.tanh(z / final_cap) * final_cap if final_cap else z
        c["next_log_probs"] = [torch.log_softmax(head_logits(hidden[-1][p]), dim=-1).tolist()
                               for p in c["next_positions"]]
        c["next_top_ids"] = [[int(i) for i in torch.topk(torch.tensor(lp), 5).indices] for lp in c["next_log_probs"]]
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-attn.npy"), attn.numpy().astype("<f4"))
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-hidden.npy"), hidden.numpy().astype("<f4"))
    if bloom:
        d, H, hd, f = bloom_dims(cfg)
        meta = {"model": name, "family": "BLOOM", "n_layers": cfg["n_layer"], "n_heads": H, "n_kv_heads": H,
                "d_head": hd, "d_model": d, "d_ffn": f, "window": 0, "untied_head": False,
                "alibi_slopes": alibi_slopes(H).tolist(), "cases": cases}
    elif gemma:
        d, H, KV, hd, f = dims(cfg)
        sl = gemma_sliding(cfg)
        acap, fcap = gemma_caps(cfg)
        meta = {"model": name, "family": {"gemma2": "Gemma2", "gemma3_text": "Gemma3"}[mtype],
                "n_layers": cfg["num_hidden_layers"], "n_heads": H, "n_kv_heads": KV, "d_head": hd, "d_model": d,
                "d_ffn": f, "window": 0, "local_window": cfg.get("sliding_window", 4096) if any(sl) else 0,
                "local_layers": [int(x) for x in sl], "untied_head": "lm_head.weight" in R,
                "attn_softcap": (acap or 0.0) if mtype == "gemma2" else 0.0, "final_softcap": fcap or 0.0,
                "query_scale": float(torch.tensor(cfg["query_pre_attn_scalar"] ** -0.5, dtype=torch.float32)),
                "embed_scale": float(torch.tensor(d ** 0.5, dtype=GEMMA_DTYPES[opts["dtype"]])),
                "inv_freq": gemma_inv_freq(cfg, False).tolist(), "inv_freq_local": gemma_inv_freq(cfg, True).tolist(),
                "cases": cases}
    else:
        d, H, KV, hd, f = dims(cfg)
        meta = {"model": name, "family": {"llama": "Llama", "qwen2": "Qwen2", "qwen3": "Qwen3",
                                          "mistral": "Mistral"}[mtype],
                "n_layers": cfg["num_hidden_layers"], "n_heads": H, "n_kv_heads": KV, "d_head": hd, "d_model": d,
                "d_ffn": f, "window": window_of(cfg) or 0, "untied_head": "lm_head.weight" in R,
                **({} if window_of(cfg) or not any(windows_of(cfg)) else
                   {"local_window": [w for w in windows_of(cfg) if w][0],
                    "local_layers": [int(w is not None) for w in windows_of(cfg)]}),
                "inv_freq": inv_freq_of(cfg).tolist(), "cases": cases}
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
    for seed, (name, mtype, over, opts) in enumerate(MODELS):
        write_model(name, mtype, over, opts, out_models, out_fix, 3300 + seed)
        print("wrote", name)


if __name__ == "__main__":
    main()
