#!/usr/bin/python3
"""Writes small random encoder models of the other Hugging Face families, and references.

RoBERTa, XLM-RoBERTa, DistilBERT, ALBERT and ELECTRA (discriminator and generator), each
in the exact layout transformers saves (config.json with the family's own keys,
model.safetensors with the family's tensor names, with or without the task model's
prefix), under tests/hf/models/<name>/, and the outputs of a from-scratch float64 torch
forward written from each family's modeling code (modeling_roberta.py,
modeling_distilbert.py, modeling_albert.py, modeling_electra.py; eager attention) under
tests/hf/fixtures/:

  <model>.json              the cases (ids, type ids, mask, masked-LM top 5, ALBERT's
                            layer -> [group, inner] map)
  <model>-<case>-attn.npy   float32 [L, H, n, n]   (ALBERT: L = num_hidden_layers x
                            inner_group_num, every application of every inner layer)
  <model>-<case>-hidden.npy float32 [L+1, n, d]    (the input of layer 0 first: for ALBERT
                            and ELECTRA the projected embeddings)

Each layer of every forward is checked against torch.nn.MultiheadAttention /
TransformerEncoderLayer (all of these are post-LN blocks).  The test folders carry a
WordPiece vocab.txt so that they open before the BPE / SentencePiece readers exist; the
cases are given as ids.  Run with Debian's python3-torch:
  /usr/bin/python3 tests/hf/gen_families.py
"""
import json
import math
import os
import shutil

import numpy as np
import torch
import torch.nn.functional as F

from gen_models import HERE, activation, tensor_bytes, vocab_for, write_safetensors

FMIN = torch.finfo(torch.float32).min


def rn(g, *shape, s=1.0):
    return torch.randn(*shape, generator=g, dtype=torch.float64).float() * s


def ln_params(W, name, dim, g):
    W[name + ".weight"] = 1 + rn(g, dim, s=0.1)
    W[name + ".bias"] = rn(g, dim, s=0.1)


def lin_params(W, name, out, inp, g, s=1.0):
    W[name + ".weight"] = rn(g, out, inp, s=s / math.sqrt(inp))
    W[name + ".bias"] = rn(g, out, s=0.1)


# ---- weights in each family's names (no prefix) ----------------------------------------

def bert_layer_weights(W, p, d, f, g):
    """BertLayer's names, which RobertaLayer and ElectraLayer copy."""
    for nm, s in (("attention.self.query", 1.6), ("attention.self.key", 1.6),
                  ("attention.self.value", 1.0), ("attention.output.dense", 1.0)):
        lin_params(W, p + nm, d, d, g, s)
    ln_params(W, p + "attention.output.LayerNorm", d, g)
    lin_params(W, p + "intermediate.dense", f, d, g)
    lin_params(W, p + "output.dense", d, f, g)
    ln_params(W, p + "output.LayerNorm", d, g)


def embeddings(W, E, c, g, types=True):
    W["embeddings.word_embeddings.weight"] = rn(g, c["vocab_size"], E, s=0.7)
    W["embeddings.position_embeddings.weight"] = rn(g, c["max_position_embeddings"], E, s=0.4)
    if types:
        W["embeddings.token_type_embeddings.weight"] = rn(g, c["type_vocab_size"], E, s=0.4)
    ln_params(W, "embeddings.LayerNorm", E, g)


def roberta_weights(c, g, mlm):
    d, f = c["hidden_size"], c["intermediate_size"]
    W = {}
    embeddings(W, d, c, g)
    for i in range(c["num_hidden_layers"]):
        bert_layer_weights(W, f"encoder.layer.{i}.", d, f, g)
    head = {}
    if mlm:   # RobertaLMHead
        lin_params(head, "lm_head.dense", d, d, g)
        ln_params(head, "lm_head.layer_norm", d, g)
        head["lm_head.bias"] = rn(g, c["vocab_size"], s=0.1)
        if mlm == "untied":
            head["lm_head.decoder.weight"] = rn(g, c["vocab_size"], d, s=0.5)
    return W, head


def sinusoidal(n_pos, dim):
    """DistilBERT's create_sinusoidal_embeddings (numpy float64, then FloatTensor)."""
    enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = torch.zeros(n_pos, dim)
    out[:, 0::2] = torch.FloatTensor(np.sin(enc[:, 0::2]))
    out[:, 1::2] = torch.FloatTensor(np.cos(enc[:, 1::2]))
    return out


def distilbert_weights(c, g, mlm):
    d, f = c["dim"], c["hidden_dim"]
    W = {"embeddings.word_embeddings.weight": rn(g, c["vocab_size"], d, s=0.7)}
    if c["sinusoidal_pos_embds"]:   # HF writes the table into the parameter: it is saved
        W["embeddings.position_embeddings.weight"] = sinusoidal(c["max_position_embeddings"], d)
    else:
        W["embeddings.position_embeddings.weight"] = rn(g, c["max_position_embeddings"], d, s=0.4)
    ln_params(W, "embeddings.LayerNorm", d, g)
    for i in range(c["n_layers"]):
        p = f"transformer.layer.{i}."
        for nm, s in (("attention.q_lin", 1.6), ("attention.k_lin", 1.6), ("attention.v_lin", 1.0),
                      ("attention.out_lin", 1.0)):
            lin_params(W, p + nm, d, d, g, s)
        ln_params(W, p + "sa_layer_norm", d, g)
        lin_params(W, p + "ffn.lin1", f, d, g)
        lin_params(W, p + "ffn.lin2", d, f, g)
        ln_params(W, p + "output_layer_norm", d, g)
    head = {}
    if mlm:   # DistilBertForMaskedLM: vocab_projector tied to the word embeddings
        lin_params(head, "vocab_transform", d, d, g)
        ln_params(head, "vocab_layer_norm", d, g)
        head["vocab_projector.bias"] = rn(g, c["vocab_size"], s=0.1)
    return W, head


def albert_weights(c, g, mlm):
    d, f, E = c["hidden_size"], c["intermediate_size"], c["embedding_size"]
    W = {}
    embeddings(W, E, c, g)
    lin_params(W, "encoder.embedding_hidden_mapping_in", d, E, g)
    for gi in range(c["num_hidden_groups"]):
        for j in range(c["inner_group_num"]):
            p = f"encoder.albert_layer_groups.{gi}.albert_layers.{j}."
            for nm, s in (("attention.query", 1.6), ("attention.key", 1.6), ("attention.value", 1.0),
                          ("attention.dense", 1.0)):
                lin_params(W, p + nm, d, d, g, s)
            ln_params(W, p + "attention.LayerNorm", d, g)
            lin_params(W, p + "ffn", f, d, g)
            lin_params(W, p + "ffn_output", d, f, g)
            ln_params(W, p + "full_layer_layer_norm", d, g)
    head = {}
    if mlm:   # AlbertMLMHead; the decoder is tied to the word embeddings ([V, E])
        lin_params(head, "predictions.dense", E, d, g)
        ln_params(head, "predictions.LayerNorm", E, g)
        head["predictions.bias"] = rn(g, c["vocab_size"], s=0.1)   # decoder.bias is tied to it
    return W, head


def electra_weights(c, g, mlm):
    d, f, E = c["hidden_size"], c["intermediate_size"], c["embedding_size"]
    W = {}
    embeddings(W, E, c, g)
    if E != d:
        lin_params(W, "embeddings_project", d, E, g)
    for i in range(c["num_hidden_layers"]):
        bert_layer_weights(W, f"encoder.layer.{i}.", d, f, g)
    head = {}
    if mlm:   # ElectraForMaskedLM: generator_lm_head tied to the word embeddings
        lin_params(head, "generator_predictions.dense", E, d, g)
        ln_params(head, "generator_predictions.LayerNorm", E, g)
        head["generator_lm_head.bias"] = rn(g, c["vocab_size"], s=0.1)
    else:     # ElectraForPreTraining: the discriminator's head (attnscope does not read it)
        lin_params(head, "discriminator_predictions.dense", d, d, g)
        lin_params(head, "discriminator_predictions.dense_prediction", 1, d, g)
    return W, head


# ---- the reference forward passes (eager attention, float64) ---------------------------

def self_attention(x, R, names, H, ext, distil=False):
    """BertSelfAttention (RoBERTa, ELECTRA), AlbertAttention and DistilBERT's
    MultiHeadSelfAttention: [H, n, n] probabilities and the context [n, d]."""
    n, d = x.shape
    k = d // H

    def heads(t):
        return t.view(n, H, k).transpose(0, 1)

    q, kk, v = (heads(F.linear(x, R[nm + ".weight"], R[nm + ".bias"])) for nm in names)
    if distil:   # q / sqrt(dim_per_head), then masked_fill(mask == 0, finfo.min)
        scores = (q / math.sqrt(k)) @ kk.transpose(-1, -2)
        scores = scores.masked_fill((ext == FMIN).view(1, 1, n).expand_as(scores), FMIN)
    else:        # scores / sqrt(head size) + the extended mask (1 - mask) * finfo.min
        scores = q @ kk.transpose(-1, -2) / math.sqrt(k) + ext
    probs = torch.softmax(scores, dim=-1)
    return probs, (probs @ v).transpose(0, 1).reshape(n, d)


def post_ln_layer(x, R, L, H, eps, act, ext, distil=False):
    """One post-LN block in the names of L (a dict of the layer's tensor names)."""
    d = x.shape[1]
    probs, ctx = self_attention(x, R, (L["q"], L["k"], L["v"]), H, ext, distil)
    a = F.linear(ctx, R[L["o"] + ".weight"], R[L["o"] + ".bias"])
    x1 = F.layer_norm(a + x, (d,), R[L["ln1"] + ".weight"], R[L["ln1"] + ".bias"], eps)
    h = act(F.linear(x1, R[L["f1"] + ".weight"], R[L["f1"] + ".bias"]))
    out = F.layer_norm(F.linear(h, R[L["f2"] + ".weight"], R[L["f2"] + ".bias"]) + x1, (d,),
                       R[L["ln2"] + ".weight"], R[L["ln2"] + ".bias"], eps)
    return probs, out


def bert_names(p):
    return {"q": p + "attention.self.query", "k": p + "attention.self.key", "v": p + "attention.self.value",
            "o": p + "attention.output.dense", "ln1": p + "attention.output.LayerNorm",
            "f1": p + "intermediate.dense", "f2": p + "output.dense", "ln2": p + "output.LayerNorm"}


def extended_mask(mask):
    return (1.0 - torch.tensor(mask, dtype=torch.float64))[None, :] * FMIN


def create_position_ids_from_input_ids(ids, padding_idx):
    """modeling_roberta.py: padding_idx + cumsum over non-padding tokens, padding_idx for padding."""
    m = (torch.tensor(ids) != padding_idx).long()
    return torch.cumsum(m, dim=0) * m + padding_idx


def run_layers(x, R, layer_names, H, eps, act, ext, distil=False):
    hidden, attns, used = [x], [], []
    for L in layer_names:
        probs, x = post_ln_layer(x, R, L, H, eps, act, ext, distil)
        attns.append(probs)
        hidden.append(x)
        used.append(L)
    return torch.stack(attns), torch.stack(hidden), used


def roberta_forward(R, c, ids, type_ids, mask):
    d, eps = c["hidden_size"], c["layer_norm_eps"]
    pos = create_position_ids_from_input_ids(ids, c["pad_token_id"])
    x = (R["embeddings.word_embeddings.weight"][torch.tensor(ids)] +
         R["embeddings.token_type_embeddings.weight"][torch.tensor(type_ids)] +
         R["embeddings.position_embeddings.weight"][pos])
    x = F.layer_norm(x, (d,), R["embeddings.LayerNorm.weight"], R["embeddings.LayerNorm.bias"], eps)
    names = [bert_names(f"encoder.layer.{i}.") for i in range(c["num_hidden_layers"])]
    return run_layers(x, R, names, c["num_attention_heads"], eps, activation(c["hidden_act"]), extended_mask(mask))


def distilbert_forward(R, c, ids, type_ids, mask):
    d, eps = c["dim"], 1e-12
    n = len(ids)
    x = R["embeddings.word_embeddings.weight"][torch.tensor(ids)] + R["embeddings.position_embeddings.weight"][:n]
    x = F.layer_norm(x, (d,), R["embeddings.LayerNorm.weight"], R["embeddings.LayerNorm.bias"], eps)
    names = []
    for i in range(c["n_layers"]):
        p = f"transformer.layer.{i}."
        names.append({"q": p + "attention.q_lin", "k": p + "attention.k_lin", "v": p + "attention.v_lin",
                      "o": p + "attention.out_lin", "ln1": p + "sa_layer_norm", "f1": p + "ffn.lin1",
                      "f2": p + "ffn.lin2", "ln2": p + "output_layer_norm"})
    return run_layers(x, R, names, c["n_heads"], eps, activation(c["activation"]), extended_mask(mask), distil=True)


def albert_groups(c):
    """AlbertTransformer: application i runs group int(i / (layers / groups)), each of its
    inner layers in turn: [(group, inner)] per captured layer."""
    out = []
    for i in range(c["num_hidden_layers"]):
        gi = int(i / (c["num_hidden_layers"] / c["num_hidden_groups"]))
        out += [(gi, j) for j in range(c["inner_group_num"])]
    return out


def albert_forward(R, c, ids, type_ids, mask):
    E, eps = c["embedding_size"], c["layer_norm_eps"]
    n = len(ids)
    x = (R["embeddings.word_embeddings.weight"][torch.tensor(ids)] +
         R["embeddings.token_type_embeddings.weight"][torch.tensor(type_ids)] +
         R["embeddings.position_embeddings.weight"][:n])
    x = F.layer_norm(x, (E,), R["embeddings.LayerNorm.weight"], R["embeddings.LayerNorm.bias"], eps)
    x = F.linear(x, R["encoder.embedding_hidden_mapping_in.weight"], R["encoder.embedding_hidden_mapping_in.bias"])
    names = []
    for gi, j in albert_groups(c):
        p = f"encoder.albert_layer_groups.{gi}.albert_layers.{j}."
        names.append({"q": p + "attention.query", "k": p + "attention.key", "v": p + "attention.value",
                      "o": p + "attention.dense", "ln1": p + "attention.LayerNorm", "f1": p + "ffn",
                      "f2": p + "ffn_output", "ln2": p + "full_layer_layer_norm"})
    return run_layers(x, R, names, c["num_attention_heads"], eps, activation(c["hidden_act"]), extended_mask(mask))


def electra_forward(R, c, ids, type_ids, mask):
    E, d, eps = c["embedding_size"], c["hidden_size"], c["layer_norm_eps"]
    n = len(ids)
    x = (R["embeddings.word_embeddings.weight"][torch.tensor(ids)] +
         R["embeddings.token_type_embeddings.weight"][torch.tensor(type_ids)] +
         R["embeddings.position_embeddings.weight"][:n])
    x = F.layer_norm(x, (E,), R["embeddings.LayerNorm.weight"], R["embeddings.LayerNorm.bias"], eps)
    if E != d:   # ElectraModel.embeddings_project
        x = F.linear(x, R["embeddings_project.weight"], R["embeddings_project.bias"])
    names = [bert_names(f"encoder.layer.{i}.") for i in range(c["num_hidden_layers"])]
    return run_layers(x, R, names, c["num_attention_heads"], eps, activation(c["hidden_act"]), extended_mask(mask))


# ---- masked-LM heads ---------------------------------------------------------------------

def gelu_exact(x):
    return F.gelu(x)


def mlm_logits(family, R, c, h):
    """The family's head at one position's last hidden state h."""
    if family in ("roberta", "xlm-roberta"):   # RobertaLMHead: dense, gelu, layer_norm, decoder
        t = F.linear(h, R["lm_head.dense.weight"], R["lm_head.dense.bias"])
        t = F.layer_norm(gelu_exact(t), (t.shape[-1],), R["lm_head.layer_norm.weight"],
                         R["lm_head.layer_norm.bias"], c["layer_norm_eps"])
        dec = R.get("lm_head.decoder.weight", R["embeddings.word_embeddings.weight"])
        return F.linear(t, dec, R["lm_head.bias"])
    if family == "distilbert":   # vocab_transform, activation, vocab_layer_norm, vocab_projector
        t = activation(c["activation"])(F.linear(h, R["vocab_transform.weight"], R["vocab_transform.bias"]))
        t = F.layer_norm(t, (t.shape[-1],), R["vocab_layer_norm.weight"], R["vocab_layer_norm.bias"], 1e-12)
        return F.linear(t, R["embeddings.word_embeddings.weight"], R["vocab_projector.bias"])
    if family == "albert":   # AlbertMLMHead: dense, hidden_act, LayerNorm, decoder
        t = activation(c["hidden_act"])(F.linear(h, R["predictions.dense.weight"], R["predictions.dense.bias"]))
        t = F.layer_norm(t, (t.shape[-1],), R["predictions.LayerNorm.weight"], R["predictions.LayerNorm.bias"],
                         c["layer_norm_eps"])
        return F.linear(t, R["embeddings.word_embeddings.weight"], R["predictions.bias"])
    if family == "electra":   # ElectraGeneratorPredictions (gelu) + generator_lm_head
        t = gelu_exact(F.linear(h, R["generator_predictions.dense.weight"], R["generator_predictions.dense.bias"]))
        t = F.layer_norm(t, (t.shape[-1],), R["generator_predictions.LayerNorm.weight"],
                         R["generator_predictions.LayerNorm.bias"], c["layer_norm_eps"])
        return F.linear(t, R["embeddings.word_embeddings.weight"], R["generator_lm_head.bias"])
    raise ValueError(family)


# ---- the cross-check: torch's own attention and encoder layer ----------------------------

def cross_check(R, layers, H, f, eps, act_name, mask, attn, hidden):
    d = hidden.shape[-1]
    pad = torch.tensor([[m == 0 for m in mask]])
    for i, L in enumerate(layers):
        layer = torch.nn.TransformerEncoderLayer(
            d, H, f, dropout=0.0, batch_first=True, layer_norm_eps=eps,
            activation=("relu" if act_name == "relu" else activation(act_name))).double().eval()
        with torch.no_grad():
            layer.self_attn.in_proj_weight.copy_(torch.cat([R[L[s] + ".weight"] for s in "qkv"]))
            layer.self_attn.in_proj_bias.copy_(torch.cat([R[L[s] + ".bias"] for s in "qkv"]))
            for mod, key in ((layer.self_attn.out_proj, "o"), (layer.norm1, "ln1"), (layer.linear1, "f1"),
                             (layer.linear2, "f2"), (layer.norm2, "ln2")):
                mod.weight.copy_(R[L[key] + ".weight"])
                mod.bias.copy_(R[L[key] + ".bias"])
            src = hidden[i][None]
            _, w = layer.self_attn(src, src, src, key_padding_mask=pad, need_weights=True,
                                   average_attn_weights=False)
            out = layer.norm1(src + layer._sa_block(src, None, pad))
            out = layer.norm2(out + layer._ff_block(out))
        assert torch.allclose(w[0], attn[i], atol=1e-9), f"layer {i}: attention differs from MultiheadAttention"
        assert torch.allclose(out[0], hidden[i + 1], atol=1e-9), f"layer {i}: output differs from the torch layer"


# ---- the models --------------------------------------------------------------------------

FAMILIES = {
    "roberta": (roberta_weights, roberta_forward, "roberta."),
    "xlm-roberta": (roberta_weights, roberta_forward, "roberta."),
    "distilbert": (distilbert_weights, distilbert_forward, "distilbert."),
    "albert": (albert_weights, albert_forward, "albert."),
    "electra": (electra_weights, electra_forward, "electra."),
}


def sizes(c):
    """(d, H, f, act, eps) in the family's key names."""
    if c["model_type"] == "distilbert":
        return c["dim"], c["n_heads"], c["hidden_dim"], c["activation"], 1e-12
    return c["hidden_size"], c["num_attention_heads"], c["intermediate_size"], c["hidden_act"], c["layer_norm_eps"]


MODELS = [
    # RobertaForMaskedLM, F32, "roberta." names, padding_idx 1 (the [UNK] row of the test
    # vocabulary: only ids matter), 1 token type, 2 + 16 position rows, hidden_act gelu_new
    # while the head's gelu stays exact
    ("roberta-f32", dict(model_type="roberta", architectures=["RobertaForMaskedLM"], hidden_size=32,
                         num_attention_heads=4, num_hidden_layers=2, intermediate_size=64, vocab_size=48,
                         max_position_embeddings=18, type_vocab_size=1, pad_token_id=1, bos_token_id=0,
                         eos_token_id=2, layer_norm_eps=1e-5, hidden_act="gelu_new",
                         position_embedding_type="absolute"),
     dict(dtype="F32", prefix=True, mlm="tied")),
    # XLMRobertaModel, BF16, bare names, 3 heads, padding_idx 0, untied head omitted
    ("xlmr-bf16", dict(model_type="xlm-roberta", architectures=["XLMRobertaModel"], hidden_size=24,
                       num_attention_heads=3, num_hidden_layers=2, intermediate_size=40, vocab_size=45,
                       max_position_embeddings=16, type_vocab_size=1, pad_token_id=0, layer_norm_eps=1e-5,
                       hidden_act="gelu"),
     dict(dtype="BF16", prefix=False, mlm=None)),
    # DistilBertForMaskedLM, F16, sinusoidal positions, 5 heads, relu
    ("distilbert-f16", dict(model_type="distilbert", architectures=["DistilBertForMaskedLM"], dim=30, n_heads=5,
                            n_layers=2, hidden_dim=36, vocab_size=44, max_position_embeddings=16,
                            sinusoidal_pos_embds=True, activation="relu", pad_token_id=0, dropout=0.1,
                            attention_dropout=0.1, qa_dropout=0.1, seq_classif_dropout=0.2),
     dict(dtype="F16", prefix=True, mlm="tied")),
    # DistilBertModel, F32, bare names, learned positions, gelu
    ("distilbert-f32", dict(model_type="distilbert", architectures=["DistilBertModel"], dim=16, n_heads=2,
                            n_layers=3, hidden_dim=32, vocab_size=40, max_position_embeddings=12,
                            sinusoidal_pos_embds=False, activation="gelu", pad_token_id=0),
     dict(dtype="F32", prefix=False, mlm=None)),
    # AlbertForMaskedLM, F32: embedding_size 16 != hidden 32, 3 applications of 2 groups x 2
    # inner layers (group int(i / 1.5): 0 0 1) = 6 captured layers, gelu_new
    ("albert-f32", dict(model_type="albert", architectures=["AlbertForMaskedLM"], embedding_size=16,
                        hidden_size=32, num_attention_heads=4, num_hidden_layers=3, num_hidden_groups=2,
                        inner_group_num=2, intermediate_size=48, vocab_size=46, max_position_embeddings=16,
                        type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu_new", pad_token_id=0,
                        position_embedding_type="absolute"),
     dict(dtype="F32", prefix=True, mlm="tied")),
    # AlbertModel, F16, bare names, embedding_size == hidden (the mapping is still there),
    # 4 applications of 1 group x 1 inner layer, 3 heads
    ("albert-f16", dict(model_type="albert", architectures=["AlbertModel"], embedding_size=24, hidden_size=24,
                        num_attention_heads=3, num_hidden_layers=4, num_hidden_groups=1, inner_group_num=1,
                        intermediate_size=20, vocab_size=41, max_position_embeddings=14, type_vocab_size=2,
                        layer_norm_eps=1e-12, hidden_act="gelu_new"),
     dict(dtype="F16", prefix=False, mlm=None)),
    # ElectraForPreTraining (a discriminator), F32, embeddings_project 16 -> 32: no
    # masked-LM head
    ("electra-disc", dict(model_type="electra", architectures=["ElectraForPreTraining"], embedding_size=16,
                          hidden_size=32, num_attention_heads=4, num_hidden_layers=2, intermediate_size=64,
                          vocab_size=48, max_position_embeddings=16, type_vocab_size=2, layer_norm_eps=1e-12,
                          hidden_act="gelu"),
     dict(dtype="F32", prefix=True, mlm=None)),
    # ElectraForMaskedLM (a generator), F32: embeddings 24 wider than hidden 16 and the FFN
    # 20; hidden_act relu while the generator head's gelu stays exact
    ("electra-gen", dict(model_type="electra", architectures=["ElectraForMaskedLM"], embedding_size=24,
                         hidden_size=16, num_attention_heads=2, num_hidden_layers=2, intermediate_size=20,
                         vocab_size=48, max_position_embeddings=16, type_vocab_size=2, layer_norm_eps=1e-12,
                         hidden_act="relu"),
     dict(dtype="F32", prefix=True, mlm="tied")),
    # DistilBertModel, F32, sinusoidal positions NOT stored (a checkpoint saved without the
    # table): the engine computes create_sinusoidal_embeddings itself
    ("distilbert-nopos", dict(model_type="distilbert", architectures=["DistilBertModel"], dim=16, n_heads=4,
                              n_layers=2, hidden_dim=24, vocab_size=40, max_position_embeddings=12,
                              sinusoidal_pos_embds=True, activation="gelu", pad_token_id=0),
     dict(dtype="F32", prefix=False, mlm=None, store_positions=False)),
]


def write_model(name, c, opts, out_models, out_fix, seed):
    fam = c["model_type"]
    make, forward, prefix = FAMILIES[fam]
    g = torch.Generator().manual_seed(seed)
    W, head = make(c, g, opts["mlm"])
    pre = prefix if opts["prefix"] else ""
    folder = os.path.join(out_models, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    entries, R = [], {}
    for nm, t in list(W.items()) + list(head.items()):
        raw, rounded = tensor_bytes(t, opts["dtype"])
        R[nm] = rounded
        if nm == "embeddings.position_embeddings.weight" and not opts.get("store_positions", True):
            continue
        full = nm if nm in head else pre + nm
        entries.append((full, opts["dtype"], tuple(t.shape), raw))
    entries.sort(key=lambda e: e[0])
    write_safetensors(os.path.join(folder, "model.safetensors"), entries)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(c, f, indent=2, sort_keys=True)
    V = c["vocab_size"]
    vocab = vocab_for(V)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")

    T = c.get("type_vocab_size", 1) if fam != "distilbert" else 1
    pad = c.get("pad_token_id", 0)
    rng = np.random.default_rng(seed)
    words = [int(x) for x in rng.integers(5, V, size=12)]
    words = [w if w != pad else w + 1 for w in words]
    # DistilBERT has no token types: its pair carries type ids that must be ignored
    pair_types = [0] * 4 + [1] * 4 + [0, 0] if T > 1 or fam == "distilbert" else [0] * 10
    cases = [
        {"name": "single", "ids": [2] + words[:5] + [3], "type_ids": [0] * 7, "mask": [1] * 7},
        {"name": "pair-padded", "ids": [2] + words[5:7] + [3] + words[7:10] + [3, pad, pad],
         "type_ids": pair_types, "mask": [1] * 8 + [0, 0]},
    ]
    if opts["mlm"]:
        masked = dict(cases[0], name="masked", ids=list(cases[0]["ids"]))
        masked["ids"][3] = vocab.index("[MASK]")
        cases.append(masked)
    d, H, f, act, eps = sizes(c)
    for case in cases:
        attn, hidden, layers = forward(R, c, case["ids"], case["type_ids"], case["mask"])
        cross_check(R, layers, H, f, eps, act, case["mask"], attn, hidden)
        if case["name"] == "masked":
            probs = torch.softmax(mlm_logits(fam, R, c, hidden[-1][3]), dim=-1)
            top = torch.topk(probs, 5)
            case["mlm_position"] = 3
            case["mlm_top_ids"] = [int(i) for i in top.indices]
            case["mlm_top_probs"] = [float(p) for p in top.values]
        np.save(os.path.join(out_fix, f"{name}-{case['name']}-attn.npy"), attn.numpy().astype("<f4"))
        np.save(os.path.join(out_fix, f"{name}-{case['name']}-hidden.npy"), hidden.numpy().astype("<f4"))
    meta = {"model": name, "family": fam, "n_layers": int(attn.shape[0]), "n_heads": H, "d_model": d,
            "has_mlm_head": bool(opts["mlm"]), "cases": cases}
    if fam == "albert":
        meta["layer_weights"] = [list(x) for x in albert_groups(c)]
    with open(os.path.join(out_fix, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=1)


def main():
    torch.set_num_threads(1)
    out_models, out_fix = os.path.join(HERE, "models"), os.path.join(HERE, "fixtures")
    for dname in (out_models, out_fix):
        os.makedirs(dname, exist_ok=True)
    for seed, (name, c, opts) in enumerate(MODELS):
        write_model(name, c, opts, out_models, out_fix, 2000 + seed)
        print("wrote", name)


if __name__ == "__main__":
    main()
