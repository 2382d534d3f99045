"""A small BERT with a masked-LM head, written out in torch (Debian has no `transformers`).

The module tree mirrors Hugging Face's BertForMaskedLM, so state_dict() keys are the HF
tensor names (bert.embeddings.word_embeddings.weight, bert.encoder.layer.0.attention.self.
query.weight, ..., cls.predictions.transform.dense.weight, cls.predictions.bias); the decoder
is tied to the word embeddings and is not a separate parameter.  Post-LayerNorm, exact (erf)
GELU, LayerNorm eps from the config, attention scores scaled by 1/sqrt(head dim), padded keys
masked out.  Shapes: b batch, n tokens, d width, h heads, k head dim (d/h), f ffn width,
V vocabulary.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Embeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["hidden_size"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], d)
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], d)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], d)
        self.LayerNorm = nn.LayerNorm(d, eps=cfg["layer_norm_eps"])

    def forward(self, ids, types):  # ids, types [b,n] -> [b,n,d]
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.word_embeddings(ids) + self.position_embeddings(pos)[None] \
            + self.token_type_embeddings(types)
        return self.LayerNorm(x)


class SelfAttentionQKV(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)


class DenseLN(nn.Module):
    def __init__(self, d_in, d_out, eps):
        super().__init__()
        self.dense = nn.Linear(d_in, d_out)
        self.LayerNorm = nn.LayerNorm(d_out, eps=eps)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["hidden_size"]
        self.h = cfg["num_attention_heads"]
        setattr(self, "self", SelfAttentionQKV(d))
        self.output = DenseLN(d, d, cfg["layer_norm_eps"])

    def forward(self, x, bias, keep_probs):
        """x [b,n,d]; bias [b,1,1,n] additive key mask.  Returns (out [b,n,d], probs or None)."""
        b, n, d = x.shape
        h, k = self.h, d // self.h
        qkv = getattr(self, "self")
        q = qkv.query(x).view(b, n, h, k).transpose(1, 2)   # [b,h,n,k]
        kk = qkv.key(x).view(b, n, h, k).transpose(1, 2)
        v = qkv.value(x).view(b, n, h, k).transpose(1, 2)
        scores = q @ kk.transpose(-1, -2) / math.sqrt(k) + bias  # [b,h,n,n]
        probs = torch.softmax(scores, dim=-1)
        ctx = (probs @ v).transpose(1, 2).reshape(b, n, d)
        out = self.output.LayerNorm(self.output.dense(ctx) + x)
        return out, (probs if keep_probs else None)


class Intermediate(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.dense = nn.Linear(d, f)


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, f = cfg["hidden_size"], cfg["intermediate_size"]
        self.attention = Attention(cfg)
        self.intermediate = Intermediate(d, f)
        self.output = DenseLN(f, d, cfg["layer_norm_eps"])

    def forward(self, x, bias, keep_probs):
        a, probs = self.attention(x, bias, keep_probs)
        y = F.gelu(self.intermediate.dense(a))
        return self.output.LayerNorm(self.output.dense(y) + a), probs


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList([Layer(cfg) for _ in range(cfg["num_hidden_layers"])])


class Bert(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)


class Transform(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.dense = nn.Linear(d, d)
        self.LayerNorm = nn.LayerNorm(d, eps=eps)


class Predictions(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.transform = Transform(cfg["hidden_size"], cfg["layer_norm_eps"])
        self.bias = nn.Parameter(torch.zeros(cfg["vocab_size"]))


class Cls(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.predictions = Predictions(cfg)


class BertForMaskedLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.bert = Bert(cfg)
        self.cls = Cls(cfg)
        self.apply(self._init)

    def _init(self, m):
        std = self.cfg["initializer_range"]
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, std)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, std)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def encode(self, ids, types, mask=None, keep_probs=False):
        """ids, types [b,n] long; mask [b,n] (1 = real token) or None.
        Returns (hidden [b,n,d], list of per-layer probs [b,h,n,n] if keep_probs)."""
        x = self.bert.embeddings(ids, types)
        if mask is None:
            bias = torch.zeros(1, 1, 1, ids.shape[1], dtype=x.dtype, device=x.device)
        else:
            bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        probs = []
        for layer in self.bert.encoder.layer:
            x, p = layer(x, bias, keep_probs)
            probs.append(p)
        return x, probs

    def mlm_logits(self, hidden):
        """hidden [..., d] -> logits [..., V] (transform dense + GELU + LayerNorm, tied decoder)."""
        t = self.cls.predictions.transform
        y = t.LayerNorm(F.gelu(t.dense(hidden)))
        return y @ self.bert.embeddings.word_embeddings.weight.t() + self.cls.predictions.bias

    def attentions(self, ids, types):
        """One unpadded sequence: ids, types [n] -> attention [L,h,n,n]."""
        with torch.no_grad():
            _, probs = self.encode(ids[None], types[None], None, keep_probs=True)
        return torch.stack([p[0] for p in probs])
