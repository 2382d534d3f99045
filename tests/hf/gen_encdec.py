#!/usr/bin/python3
"""Writes small random encoder-decoders (T5 v1.0, T5 v1.1 / Flan-T5) in exact Hugging Face
layout, and reference outputs for tests/hf/test-hf-encdec.c.

Each model is a folder under tests/hf/models/<name>/: config.json with T5Config keys,
model.safetensors in T5ForConditionalGeneration's names (shared.weight, encoder.block.<i>.
layer.<j>..., decoder.block.<i>.layer.<j>..., lm_head.weight when untied), and a SentencePiece
Unigram tokenizer.json in T5's layout (Metaspace, "</s>" appended) so that the folder opens;
the cases are ids (the tokenizers have their own tests).

The reference forward below is modeling_t5.py's (T5ForConditionalGeneration with eager
attention, output_attentions=True, output_hidden_states=True), written out in torch float64
from the weights as rounded to the file's dtype:
  - T5LayerNorm: w * x / sqrt(mean(x^2) + eps), no mean, no bias;
  - T5Attention: scores = q k^T (no 1/sqrt(k)), + position_bias (+ the mask, finfo.min),
    softmax; the bias from layer 0's relative_attention_bias through
    _relative_position_bucket (copied as HF writes it, the log in float32), bidirectional in
    the encoder and causal in the decoder, computed once and shared by every layer;
    cross-attention (EncDecAttention) has no position bias, only the source's padding;
  - blocks: h + SelfAttention(LN(h)), [h + EncDecAttention(LN(h), encoder output)],
    h + DenseReluDense(LN(h)), relu (wi, wo) or gated-gelu = gelu_new(wi_0 h) * wi_1 h;
  - each stack's final_layer_norm; the last entry of hidden_states is after it;
  - the head: tied (tie_word_embeddings true, T5 v1.0) decoder output * d_model^-0.5 times
    shared^T, untied (v1.1) lm_head.weight.
It never calls attnscope.  Outputs go to tests/hf/fixtures/:

  <model>.json                    the cases: source ids and mask, target (decoder input) ids
  <model>-<case>-encoder.npy      float32 [L, H, n, n]      encoder self-attention
  <model>-<case>-decoder.npy      float32 [Ld, H, t, t]     decoder self-attention
  <model>-<case>-cross.npy        float32 [Ld, H, t, n]     cross-attention
  <model>-<case>-enc-hidden.npy   float32 [L+1, n, d]       encoder_hidden_states
  <model>-<case>-dec-hidden.npy   float32 [Ld+1, t, d]      decoder_hidden_states
  <model>-<case>-logprobs.npy     float32 [t, V]            log_softmax of the logits
  <model>-trace.json              one head (TRACE_LAYER, TRACE_HEAD) of each stack in case
                                  "long", for tests/hf/test-hf-encdec-trace.c: per query row the
                                  head's q and every key's k (projection + bias, before BART's
                                  head_dim^-0.5 on q), the raw dot products q.k, and for T5 the
                                  bucket and position bias of each (query, key) (self-attention
                                  only: cross-attention has none), all float64

Run with Debian's python3-torch:  /usr/bin/python3 tests/hf/gen_encdec.py
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
from gen_models import tensor_bytes, write_safetensors  # noqa: E402

F32_MIN = float(torch.finfo(torch.float32).min)

# the head whose arithmetic gen_trace dumps, in every stack (layer counts each stack's layers)
TRACE_LAYER, TRACE_HEAD, TRACE_CASE = 1, 2, "long"
TAP = {}   # attention prefix -> (q, k) [H, n, dk] as the last forward computed them


def t5_config(**kw):
    cfg = {
        "architectures": ["T5ForConditionalGeneration"], "model_type": "t5",
        "d_model": 32, "d_kv": 8, "d_ff": 48, "num_layers": 2, "num_decoder_layers": 2, "num_heads": 4,
        "relative_attention_num_buckets": 8, "relative_attention_max_distance": 20, "dropout_rate": 0.0,
        "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0, "feed_forward_proj": "relu",
        "is_encoder_decoder": True, "use_cache": True, "pad_token_id": 0, "eos_token_id": 1,
        "decoder_start_token_id": 0, "vocab_size": 96, "tie_word_embeddings": True, "torch_dtype": "float32",
    }
    cfg.update(kw)
    return cfg


def bart_config(**kw):
    cfg = {
        "architectures": ["BartForConditionalGeneration"], "model_type": "bart",
        "d_model": 32, "encoder_layers": 2, "decoder_layers": 3, "encoder_attention_heads": 4,
        "decoder_attention_heads": 4, "encoder_ffn_dim": 48, "decoder_ffn_dim": 48, "activation_function": "gelu",
        "max_position_embeddings": 40, "scale_embedding": False, "vocab_size": 96, "pad_token_id": 1,
        "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2, "is_encoder_decoder": True,
        "tie_word_embeddings": True, "dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0,
        "torch_dtype": "float32",
    }
    cfg.update(kw)
    return cfg


# name, config overrides, dtype, cases: (name, source ids, source mask, target ids)
MODELS = [
    ("t5-v1-f32", {}, "F32"),
    ("t5-v11-bf16", {"d_kv": 12, "num_heads": 3, "d_ff": 40, "num_decoder_layers": 3, "feed_forward_proj": "gated-gelu",
                     "tie_word_embeddings": False, "relative_attention_num_buckets": 6,
                     "relative_attention_max_distance": 10, "torch_dtype": "bfloat16"}, "BF16"),
    ("bart-f32", {"model_type": "bart"}, "F32"),
    ("marian-f16", {"model_type": "marian", "architectures": ["MarianMTModel"], "scale_embedding": True,
                    "activation_function": "swish", "pad_token_id": 95, "eos_token_id": 0,
                    "decoder_start_token_id": 95, "decoder_layers": 2, "torch_dtype": "float16"}, "F16"),
]


def cases_for(cfg, g):
    V, eos, pad = cfg["vocab_size"], cfg["eos_token_id"], cfg["pad_token_id"]
    long_src = [int(x) for x in torch.randint(3, V, (26,), generator=g)] + [eos]
    short_src = [int(x) for x in torch.randint(3, V, (5,), generator=g)] + [eos, pad, pad]
    start = cfg["decoder_start_token_id"]
    tgt = [start] + [int(x) for x in torch.randint(3, V, (6,), generator=g)]
    return [
        ("long", long_src, [1] * len(long_src), tgt),                 # past max_distance both ways
        ("padded", short_src, [1] * 6 + [0, 0], [start]),             # padding, the start token alone
        ("mid", short_src[:6], [1] * 6, tgt[:4]),
    ]


def bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5Attention._relative_position_bucket, as modeling_t5.py writes it."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, large)
    return relative_buckets


def compute_bias(table, q_len, k_len, bidirectional, cfg):
    ctx = torch.arange(q_len, dtype=torch.long)[:, None]
    mem = torch.arange(k_len, dtype=torch.long)[None, :]
    b = bucket(mem - ctx, bidirectional, cfg["relative_attention_num_buckets"], cfg["relative_attention_max_distance"])
    return table[b].permute(2, 0, 1)   # [H, q, k]


def rms(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def attention(xq, xkv, W, pre, H, dk, bias_mask):
    nq, nk = xq.shape[0], xkv.shape[0]
    q = (xq @ W[pre + "q.weight"].T).view(nq, H, dk).transpose(0, 1)
    k = (xkv @ W[pre + "k.weight"].T).view(nk, H, dk).transpose(0, 1)
    TAP[pre] = (q, k)
    v = (xkv @ W[pre + "v.weight"].T).view(nk, H, dk).transpose(0, 1)
    scores = q @ k.transpose(-1, -2) + bias_mask
    p = torch.softmax(scores, dim=-1)
    ctx = (p @ v).transpose(0, 1).reshape(nq, H * dk)
    return ctx @ W[pre + "o.weight"].T, p


def ffn(x, W, pre, cfg):
    if cfg["feed_forward_proj"].startswith("gated"):
        h = gelu_new(x @ W[pre + "wi_0.weight"].T) * (x @ W[pre + "wi_1.weight"].T)
    else:
        h = torch.relu(x @ W[pre + "wi.weight"].T)
    return h @ W[pre + "wo.weight"].T


def forward(W, cfg, src, src_mask, tgt):
    H, dk, eps = cfg["num_heads"], cfg["d_kv"], cfg["layer_norm_epsilon"]
    n, t = len(src), len(tgt)
    pad = torch.tensor([0.0 if m else F32_MIN for m in src_mask], dtype=torch.float64)
    # the encoder
    h = W["shared.weight"][torch.tensor(src)]
    enc_bias = compute_bias(W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], n, n, True, cfg)
    enc_bias = enc_bias + pad[None, None, :]
    enc_hidden, enc_attn = [h], []
    for i in range(cfg["num_layers"]):
        b = f"encoder.block.{i}."
        a, p = attention(rms(h, W[b + "layer.0.layer_norm.weight"], eps), rms(h, W[b + "layer.0.layer_norm.weight"], eps),
                         W, b + "layer.0.SelfAttention.", H, dk, enc_bias)
        h = h + a
        h = h + ffn(rms(h, W[b + "layer.1.layer_norm.weight"], eps), W, b + "layer.1.DenseReluDense.", cfg)
        enc_attn.append(p)
        enc_hidden.append(h)
    h = rms(h, W["encoder.final_layer_norm.weight"], eps)
    enc_hidden[-1] = h
    enc_out = h
    # the decoder
    causal = torch.triu(torch.full((t, t), F32_MIN, dtype=torch.float64), diagonal=1)
    dec_bias = compute_bias(W["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], t, t, False, cfg)
    dec_bias = dec_bias + causal[None]
    cross_mask = torch.zeros(H, t, n, dtype=torch.float64) + pad[None, None, :]
    h = W["shared.weight"][torch.tensor(tgt)]
    dec_hidden, dec_attn, cross_attn = [h], [], []
    for i in range(cfg["num_decoder_layers"]):
        b = f"decoder.block.{i}."
        x = rms(h, W[b + "layer.0.layer_norm.weight"], eps)
        a, p = attention(x, x, W, b + "layer.0.SelfAttention.", H, dk, dec_bias)
        h = h + a
        a, pc = attention(rms(h, W[b + "layer.1.layer_norm.weight"], eps), enc_out, W, b + "layer.1.EncDecAttention.",
                          H, dk, cross_mask)
        h = h + a
        h = h + ffn(rms(h, W[b + "layer.2.layer_norm.weight"], eps), W, b + "layer.2.DenseReluDense.", cfg)
        dec_attn.append(p)
        cross_attn.append(pc)
        dec_hidden.append(h)
    h = rms(h, W["decoder.final_layer_norm.weight"], eps)
    dec_hidden[-1] = h
    if cfg["tie_word_embeddings"]:
        logits = (h * cfg["d_model"] ** -0.5) @ W["shared.weight"].T
    else:
        logits = h @ W["lm_head.weight"].T
    return (torch.stack(enc_attn), torch.stack(dec_attn), torch.stack(cross_attn), torch.stack(enc_hidden),
            torch.stack(dec_hidden), torch.log_softmax(logits, dim=-1))


def layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def bart_attention(xq, xkv, W, pre, H, mask):
    """BartAttention (eager): q_proj(x) * head_dim^-0.5, softmax(q k^T + mask), out_proj."""
    nq, nk, d = xq.shape[0], xkv.shape[0], xq.shape[1]
    dk = d // H
    q = ((xq @ W[pre + "q_proj.weight"].T + W[pre + "q_proj.bias"]) * dk ** -0.5).view(nq, H, dk).transpose(0, 1)
    k = (xkv @ W[pre + "k_proj.weight"].T + W[pre + "k_proj.bias"]).view(nk, H, dk).transpose(0, 1)
    TAP[pre] = (q / dk ** -0.5, k)   # q before the scaling: the trace scales the scores
    v = (xkv @ W[pre + "v_proj.weight"].T + W[pre + "v_proj.bias"]).view(nk, H, dk).transpose(0, 1)
    p = torch.softmax(q @ k.transpose(-1, -2) + mask, dim=-1)
    ctx = (p @ v).transpose(0, 1).reshape(nq, d)
    return ctx @ W[pre + "out_proj.weight"].T + W[pre + "out_proj.bias"], p


def act_fn(cfg, x):
    a = cfg["activation_function"]
    if a == "gelu":
        return torch.nn.functional.gelu(x)
    if a in ("swish", "silu"):
        return torch.nn.functional.silu(x)
    raise ValueError(a)


def bart_forward(W, cfg, src, src_mask, tgt):
    """BartForConditionalGeneration / MarianMTModel (post-LN), as modeling_bart.py and
    modeling_marian.py write them: embed_tokens * embed_scale + positions (BART: learned, row
    position + 2; Marian: sinusoidal, no offset), BART's layernorm_embedding, then
    h = LN(h + SelfAttn(h)), [h = LN(h + CrossAttn(h, encoder output))], h = LN(h + fc2(act(fc1(h)))),
    logits = h shared^T + final_logits_bias."""
    marian = cfg["model_type"] == "marian"
    H = cfg["encoder_attention_heads"]
    d = cfg["d_model"]
    scale = math.sqrt(d) if cfg["scale_embedding"] else 1.0
    n, t = len(src), len(tgt)
    pad = torch.tensor([0.0 if m else F32_MIN for m in src_mask], dtype=torch.float64)
    E = W["model.shared.weight"]

    def embed(ids, stack):
        x = E[torch.tensor(ids)] * scale
        if marian:
            x = x + sinusoidal(cfg["max_position_embeddings"], d)[: len(ids)]
        else:
            x = x + W[f"model.{stack}.embed_positions.weight"][torch.arange(len(ids)) + 2]
            x = layer_norm(x, W[f"model.{stack}.layernorm_embedding.weight"], W[f"model.{stack}.layernorm_embedding.bias"])
        return x

    def ffn(x, b):
        return act_fn(cfg, x @ W[b + "fc1.weight"].T + W[b + "fc1.bias"]) @ W[b + "fc2.weight"].T + W[b + "fc2.bias"]

    h = embed(src, "encoder")
    enc_hidden, enc_attn = [h], []
    for i in range(cfg["encoder_layers"]):
        b = f"model.encoder.layers.{i}."
        a, p = bart_attention(h, h, W, b + "self_attn.", H, pad[None, None, :])
        h = layer_norm(h + a, W[b + "self_attn_layer_norm.weight"], W[b + "self_attn_layer_norm.bias"])
        h = layer_norm(h + ffn(h, b), W[b + "final_layer_norm.weight"], W[b + "final_layer_norm.bias"])
        enc_attn.append(p)
        enc_hidden.append(h)
    enc_out = h
    causal = torch.triu(torch.full((t, t), F32_MIN, dtype=torch.float64), diagonal=1)
    h = embed(tgt, "decoder")
    dec_hidden, dec_attn, cross_attn = [h], [], []
    for i in range(cfg["decoder_layers"]):
        b = f"model.decoder.layers.{i}."
        a, p = bart_attention(h, h, W, b + "self_attn.", H, causal[None])
        h = layer_norm(h + a, W[b + "self_attn_layer_norm.weight"], W[b + "self_attn_layer_norm.bias"])
        a, pc = bart_attention(h, enc_out, W, b + "encoder_attn.", H, pad[None, None, :])
        h = layer_norm(h + a, W[b + "encoder_attn_layer_norm.weight"], W[b + "encoder_attn_layer_norm.bias"])
        h = layer_norm(h + ffn(h, b), W[b + "final_layer_norm.weight"], W[b + "final_layer_norm.bias"])
        dec_attn.append(p)
        cross_attn.append(pc)
        dec_hidden.append(h)
    logits = h @ E.T + W["final_logits_bias"][0]
    return (torch.stack(enc_attn), torch.stack(dec_attn), torch.stack(cross_attn), torch.stack(enc_hidden),
            torch.stack(dec_hidden), torch.log_softmax(logits, dim=-1))


def sinusoidal(rows, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: sin in the first half, cos in the second."""
    pos = np.array([[p / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for p in range(rows)])
    out = torch.zeros(rows, dim, dtype=torch.float64)
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out[:, 0:sentinel] = torch.tensor(np.sin(pos[:, 0::2]))
    out[:, sentinel:] = torch.tensor(np.cos(pos[:, 1::2]))
    return out


def bart_weights(cfg, g):
    d, f, V, P = cfg["d_model"], cfg["encoder_ffn_dim"], cfg["vocab_size"], cfg["max_position_embeddings"] + 2
    marian = cfg["model_type"] == "marian"
    W = {}

    def r(*shape, s=0.3):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * s

    W["model.shared.weight"] = r(V, d, s=1.0)
    W["final_logits_bias"] = r(1, V, s=0.5)
    for stack, L in (("encoder", cfg["encoder_layers"]), ("decoder", cfg["decoder_layers"])):
        if not marian:
            W[f"model.{stack}.embed_positions.weight"] = r(P, d, s=0.5)
            W[f"model.{stack}.layernorm_embedding.weight"] = 1.0 + r(d, s=0.1)
            W[f"model.{stack}.layernorm_embedding.bias"] = r(d, s=0.1)
        for i in range(L):
            b = f"model.{stack}.layers.{i}."
            for att in ["self_attn"] + (["encoder_attn"] if stack == "decoder" else []):
                for pr in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    W[f"{b}{att}.{pr}.weight"] = r(d, d)
                    W[f"{b}{att}.{pr}.bias"] = r(d, s=0.1)
                W[f"{b}{att}_layer_norm.weight"] = 1.0 + r(d, s=0.1)
                W[f"{b}{att}_layer_norm.bias"] = r(d, s=0.1)
            W[b + "fc1.weight"], W[b + "fc1.bias"] = r(f, d), r(f, s=0.1)
            W[b + "fc2.weight"], W[b + "fc2.bias"] = r(d, f), r(d, s=0.1)
            W[b + "final_layer_norm.weight"], W[b + "final_layer_norm.bias"] = 1.0 + r(d, s=0.1), r(d, s=0.1)
    return W


def make_weights(cfg, g):
    d, H, dk, f, V = cfg["d_model"], cfg["num_heads"], cfg["d_kv"], cfg["d_ff"], cfg["vocab_size"]
    dq = H * dk
    nb = cfg["relative_attention_num_buckets"]
    gated = cfg["feed_forward_proj"].startswith("gated")
    W = {}

    def r(*shape, s=0.3):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * s

    def ln():
        return 1.0 + r(d, s=0.1)

    W["shared.weight"] = r(V, d, s=1.0)
    for stack, L in (("encoder", cfg["num_layers"]), ("decoder", cfg["num_decoder_layers"])):
        for i in range(L):
            b = f"{stack}.block.{i}.layer."
            subs = ["0.SelfAttention."] + (["1.EncDecAttention."] if stack == "decoder" else [])
            for j, s in enumerate(subs):
                W[b + s + "q.weight"] = r(dq, d)
                W[b + s + "k.weight"] = r(dq, d)
                W[b + s + "v.weight"] = r(dq, d)
                W[b + s + "o.weight"] = r(d, dq)
                W[b + f"{j}.layer_norm.weight"] = ln()
            if i == 0:
                W[b + "0.SelfAttention.relative_attention_bias.weight"] = r(nb, H, s=1.0)
            m = len(subs)
            if gated:
                W[b + f"{m}.DenseReluDense.wi_0.weight"] = r(f, d)
                W[b + f"{m}.DenseReluDense.wi_1.weight"] = r(f, d)
            else:
                W[b + f"{m}.DenseReluDense.wi.weight"] = r(f, d)
            W[b + f"{m}.DenseReluDense.wo.weight"] = r(d, f)
            W[b + f"{m}.layer_norm.weight"] = ln()
        W[f"{stack}.final_layer_norm.weight"] = ln()
    if not cfg["tie_word_embeddings"]:
        W["lm_head.weight"] = r(V, d)
    return W


def tokenizer_json(V):
    """T5's tokenizer.json layout (Unigram, Metaspace, "</s>" appended by TemplateProcessing)
    over the first pieces of tests/tokenizer/models/unigram-metaspace.json."""
    src = json.load(open(os.path.join(HERE, "..", "tokenizer", "models", "unigram-metaspace.json")))
    pieces = [p for p in src["model"]["vocab"] if p[0] not in ("<unk>", "\n")][: V - 3]
    vocab = [["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]] + pieces
    special = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                "special": True} for i, c in enumerate(["<pad>", "</s>", "<unk>"])]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": special, "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 2, "vocab": vocab, "byte_fallback": False},
    }


def save(path, x):
    np.save(path, x.to(torch.float32).numpy())


def trace_dump(cfg, W, t5, n, t):
    """One head of each stack from TAP (the last forward's): q, k, q.k and T5's buckets / bias."""
    L, h = TRACE_LAYER, TRACE_HEAD
    if t5:
        pre = {"encoder": f"encoder.block.{L}.layer.0.SelfAttention.", "decoder": f"decoder.block.{L}.layer.0.SelfAttention.",
               "cross": f"decoder.block.{L}.layer.1.EncDecAttention."}
    else:
        pre = {"encoder": f"model.encoder.layers.{L}.self_attn.", "decoder": f"model.decoder.layers.{L}.self_attn.",
               "cross": f"model.decoder.layers.{L}.encoder_attn."}
    out = {"case": TRACE_CASE, "layer": L, "head": h, "stacks": {}}
    for stack, p in pre.items():
        q, k = TAP[p][0][h], TAP[p][1][h]
        e = {"q": q.tolist(), "k": k.tolist(), "scores": (q @ k.T).tolist()}
        if t5 and stack != "cross":
            nq = n if stack == "encoder" else t
            ctx = torch.arange(nq, dtype=torch.long)[:, None]
            mem = torch.arange(nq, dtype=torch.long)[None, :]
            b = bucket(mem - ctx, stack == "encoder", cfg["relative_attention_num_buckets"],
                       cfg["relative_attention_max_distance"])
            table = W[f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
            e["buckets"] = b.tolist()
            e["bias"] = table[b][:, :, h].tolist()
        out["stacks"][stack] = e
    return out


def write_model(name, over, dtype, out_models, out_fix, seed):
    g = torch.Generator().manual_seed(seed)
    t5 = over.get("model_type", "t5") == "t5"
    cfg = t5_config(**over) if t5 else bart_config(**over)
    W = make_weights(cfg, g) if t5 else bart_weights(cfg, g)
    folder = os.path.join(out_models, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    entries, stored = [], {}
    for k in sorted(W):
        raw, val = tensor_bytes(W[k], dtype)
        entries.append((k, dtype, list(W[k].shape), raw))
        stored[k] = val
    write_safetensors(os.path.join(folder, "model.safetensors"), entries)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(cfg["vocab_size"]), f, ensure_ascii=False)
    cases = []
    for cname, src, mask, tgt in cases_for(cfg, g):
        outs = forward(stored, cfg, src, mask, tgt) if t5 else bart_forward(stored, cfg, src, mask, tgt)
        if cname == TRACE_CASE and dtype == "F32":
            with open(os.path.join(out_fix, name + "-trace.json"), "w") as f:
                json.dump(trace_dump(cfg, stored, t5, len(src), len(tgt)), f)
        for what, x in zip(("encoder", "decoder", "cross", "enc-hidden", "dec-hidden", "logprobs"), outs):
            save(os.path.join(out_fix, f"{name}-{cname}-{what}.npy"), x)
        top = [[int(i) for i in torch.topk(outs[5][r], 5).indices] for r in range(len(tgt))]
        cases.append({"name": cname, "ids": src, "mask": mask, "target": tgt, "next_top_ids": top})
    if t5:
        meta = {"model": name, "family": "T5", "n_layers": cfg["num_layers"], "n_dec_layers": cfg["num_decoder_layers"],
                "n_heads": cfg["num_heads"], "d_kv": cfg["d_kv"], "decoder_start": cfg["decoder_start_token_id"]}
    else:
        meta = {"model": name, "family": "BART" if cfg["model_type"] == "bart" else "Marian",
                "n_layers": cfg["encoder_layers"], "n_dec_layers": cfg["decoder_layers"],
                "n_heads": cfg["encoder_attention_heads"], "d_kv": cfg["d_model"] // cfg["encoder_attention_heads"],
                "decoder_start": cfg["decoder_start_token_id"]}
    meta.update({"d_model": cfg["d_model"], "vocab_size": cfg["vocab_size"], "cases": cases})
    with open(os.path.join(out_fix, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=HERE, help="folder holding models/ and fixtures/")
    a = ap.parse_args()
    torch.set_num_threads(1)
    out_models, out_fix = os.path.join(a.out, "models"), os.path.join(a.out, "fixtures")
    for d in (out_models, out_fix):
        os.makedirs(d, exist_ok=True)
    for seed, (name, over, dtype) in enumerate(MODELS):
        write_model(name, over, dtype, out_models, out_fix, 3400 + seed)
        print("wrote", name)


if __name__ == "__main__":
    main()
