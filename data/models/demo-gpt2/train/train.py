#!/usr/bin/python3
"""Trains attnscope's causal demo model (data/models/demo-gpt2): a tiny GPT-2 in Hugging
Face's GPT2LMHeadModel layout, from scratch, on the licence texts of corpus.txt.

The model is modeling_gpt2.py's GPT-2 written out in torch: pre-LN blocks, Conv1D weights
stored [in, out], the fused c_attn projection, gelu_new, a causal mask, ln_f, learned
positions, the LM head tied to wte.  Saved as model.safetensors (F32, "transformer." names,
no lm_head.weight: tied), config.json (GPT2Config keys) and tokenizer_config.json next to
the vocab.json / merges.txt that bpe.js writes.

Training examples are 64-token windows of the training text (paragraphs joined by
<|endoftext|>), and, in a share of the rows (--repeat), a run of distinct random tokens
(drawn from --pool, token ids [lo, hi); its length uniform in --run LO HI) repeated to fill
the row: the repeats reward copying what followed an earlier occurrence, the job of an
induction head, and of the previous-token head it reads (a model this small, trained on
~60 k tokens of text alone, had neither after 1,600 steps).  --wpe-init sinusoid starts the
learned positions from the Transformer's sinusoids instead of GPT-2's normal(0.02);
--decay-embeddings 0 exempts them from weight decay.  --episodes 1 makes a repeated row a
string of short runs, each repeated twice (A B A B C D E C D E ...): a run of two is
predicted by copying the previous token, so a previous-token head pays off on its own.  --chains and
--triples add rows where the token after position t is fixed by the token before t and the
token at t tells nothing (two interleaved chains x[t+1] = perm(x[t-1]), or triples
(a, x, perm(a))), rows only a previous-token head predicts; --init-from DIR trains a second
phase from a model this script made.  The recipe is recorded in
metrics.json ("recipe").

Then the acceptance figures on held-out data (metrics.json) and the loader check fixtures
(check/): held-out paragraphs, their ids (from bpe.js, i.e. Hugging Face's tokenizers),
the float64 reference forward of tests/hf/gen_gpt2.py (modeling_gpt2.py, cross-checked
with nn.MultiheadAttention there) on the weights as saved: attention [L,H,n,n], the
log-softmax of the logits at every position, and the top-5 next tokens after each one.

Every --eval-every steps the best previous-token head on the held-out paragraphs and the
best induction head on 20 repeated runs drawn with seed 8 (eval_figures) are printed and
kept in metrics.json ("evals"); --stop PREV IND ends the run at the first evaluation where
both reach those figures.  --init-std sets the std of the blocks' matrices at
initialisation: GPT-2's 0.02 is made for width 768 and at width 64 keeps the attention
scores so near zero that the copying plateau outlasted every run of 1,150 steps.

Usage (Debian's python3-torch; the script runs every thread pool with one thread):
  NODE_PATH=/work/wt/npm/node_modules node data/models/demo-gpt2/train/bpe.js
  nice /usr/bin/python3 data/models/demo-gpt2/train/train.py  (options: README.md)
"""
import argparse
import json
import math
import os
import sys
import time

# one thread in every pool, set before numpy and torch load their libraries: the machine's
# cores are shared, and torch's OpenMP pool fighting OpenBLAS's own threads made a step take
# 1.4-1.8x the CPU time (docs/ARCHITECTURE.md, "Platform notes"; figures in README.md)
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(OUT)))
sys.path.insert(0, os.path.join(ROOT, "tests", "hf"))
from gen_gpt2 import gpt2_forward, next_token_top5  # noqa: E402
from gen_models import write_safetensors  # noqa: E402

CFG = {
    "architectures": ["GPT2LMHeadModel"],
    "model_type": "gpt2",
    "activation_function": "gelu_new",
    "attn_pdrop": 0.0, "embd_pdrop": 0.0, "resid_pdrop": 0.0,
    "bos_token_id": 1023, "eos_token_id": 1023,
    "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-5,
    "n_ctx": 64, "n_embd": 64, "n_head": 8, "n_inner": None, "n_layer": 2, "n_positions": 64,
    "reorder_and_upcast_attn": False,
    "scale_attn_by_inverse_layer_idx": False,
    "scale_attn_weights": True,
    "tie_word_embeddings": True,
    "torch_dtype": "float32",
    "vocab_size": 1024,
}
EOT = 1023
# the synthetic runs draw from the first 64 merges (frequent word pieces such as " the",
# " of"): a 64-wide model cannot copy any of 1,024 tokens well through 16-wide heads
POOL = [256, 320]
SEQ = 64
RUN = [8, 32]
EPISODES = [False]
TWICE = [False]
TEXT_RUNS = [0.0]
CHAINS = [0.0, None]   # share of rows that are two interleaved chains of a fixed permutation, the permutation
TRIPLES = [0.0]        # share of rows of triples (a, x, perm(a)): a and x fresh, perm as CHAINS[1]


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2(torch.nn.Module):
    """GPT2LMHeadModel's computation, batched; parameters named as GPT2Model's state_dict."""

    def __init__(self, cfg, g):
        super().__init__()
        d, V, P, L = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"]
        self.cfg = cfg
        std = cfg["initializer_range"]
        mstd = cfg.get("_matrix_std") or std   # the blocks' matrices (--init-std), else GPT-2's
        P_ = torch.nn.Parameter
        self.p = {}   # GPT2Model names have dots, which nn.Module refuses

        def normal(*shape, s=std):
            return P_(torch.randn(*shape, generator=g) * s)

        self.p["wte.weight"] = normal(V, d)
        if cfg.get("_wpe_init") == "sinusoid":
            # the Transformer's sinusoids (Vaswani et al. 2017), scaled to the std of GPT-2's
            # normal(0.02) init (or --wpe-std), as the learned positions' starting point: neighbouring
            # positions start alike, so "attend to the token before me" is one smooth step away
            pos = torch.arange(P, dtype=torch.float32)[:, None]
            freq = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float32) / d)
            w = torch.zeros(P, d)
            w[:, 0::2], w[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
            self.p["wpe.weight"] = P_(w * ((cfg.get("_wpe_std") or 0.02) * math.sqrt(2.0)))
        else:
            self.p["wpe.weight"] = normal(P, d, s=cfg.get("_wpe_std") or 0.02)
        for i in range(L):
            q = f"h.{i}."
            self.p[q + "ln_1.weight"] = P_(torch.ones(d))
            self.p[q + "ln_1.bias"] = P_(torch.zeros(d))
            self.p[q + "attn.c_attn.weight"] = normal(d, 3 * d, s=mstd)
            self.p[q + "attn.c_attn.bias"] = P_(torch.zeros(3 * d))
            # GPT-2's init: residual projections scaled by 1/sqrt(2 n_layer)
            self.p[q + "attn.c_proj.weight"] = normal(d, d, s=mstd / math.sqrt(2 * L))
            self.p[q + "attn.c_proj.bias"] = P_(torch.zeros(d))
            self.p[q + "ln_2.weight"] = P_(torch.ones(d))
            self.p[q + "ln_2.bias"] = P_(torch.zeros(d))
            self.p[q + "mlp.c_fc.weight"] = normal(d, 4 * d, s=mstd)
            self.p[q + "mlp.c_fc.bias"] = P_(torch.zeros(4 * d))
            self.p[q + "mlp.c_proj.weight"] = normal(4 * d, d, s=mstd / math.sqrt(2 * L))
            self.p[q + "mlp.c_proj.bias"] = P_(torch.zeros(d))
        self.p["ln_f.weight"] = P_(torch.ones(d))
        self.p["ln_f.bias"] = P_(torch.zeros(d))

    def forward(self, ids, want_attn=False):
        c, R = self.cfg, self.p
        d, H = c["n_embd"], c["n_head"]
        k = d // H
        eps = c["layer_norm_epsilon"]
        B, n = ids.shape
        h = R["wte.weight"][ids] + R["wpe.weight"][torch.arange(n)]
        causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
        attns = []
        for i in range(c["n_layer"]):
            q = f"h.{i}."
            a = F.layer_norm(h, (d,), R[q + "ln_1.weight"], R[q + "ln_1.bias"], eps)
            qkv = a @ R[q + "attn.c_attn.weight"] + R[q + "attn.c_attn.bias"]
            qq, kk, vv = (t.view(B, n, H, k).transpose(1, 2) for t in qkv.split(d, dim=2))
            w = qq @ kk.transpose(-1, -2)
            if c["scale_attn_weights"]:
                w = w / math.sqrt(k)
            w = w.masked_fill(~causal, torch.finfo(w.dtype).min).softmax(-1)
            if want_attn:
                attns.append(w)
            ctx = (w @ vv).transpose(1, 2).reshape(B, n, d)
            h = h + ctx @ R[q + "attn.c_proj.weight"] + R[q + "attn.c_proj.bias"]
            m = F.layer_norm(h, (d,), R[q + "ln_2.weight"], R[q + "ln_2.bias"], eps)
            m = gelu_new(m @ R[q + "mlp.c_fc.weight"] + R[q + "mlp.c_fc.bias"])
            h = h + m @ R[q + "mlp.c_proj.weight"] + R[q + "mlp.c_proj.bias"]
        h = F.layer_norm(h, (d,), R["ln_f.weight"], R["ln_f.bias"], eps)
        logits = h @ R["wte.weight"].T
        return (logits, torch.stack(attns, 1)) if want_attn else logits


def batch(stream, rng, rows, repeat_frac):
    out = np.empty((rows, SEQ + 1), dtype=np.int64)
    for r in range(rows):
        u = rng.random()
        synthetic = u < repeat_frac
        if not synthetic and u < repeat_frac + CHAINS[0]:
            # two chains interleaved: x[t+1] = perm(x[t-1]), so the token after position t is
            # fixed by the token BEFORE t, and the token at t itself (the other chain) tells
            # nothing: only a head that looks at the previous token predicts it
            perm = CHAINS[1]
            x = np.empty(SEQ + 1, dtype=np.int64)
            x[:2] = rng.choice(np.arange(POOL[0], POOL[1]), 2, replace=False)
            for t in range(2, SEQ + 1):
                x[t] = perm[x[t - 2] - POOL[0]]
            out[r] = x
            continue
        if not synthetic and u < repeat_frac + CHAINS[0] + TRIPLES[0]:
            # triples (a, x, perm(a)) with a and x fresh draws: the third token is fixed by the
            # token before the second, and no other offset tells anything (two interleaved chains
            # let a head look at every odd offset back along its own chain instead)
            perm = CHAINS[1]
            x = rng.choice(np.arange(POOL[0], POOL[1]), SEQ + 3)
            x[2::3] = perm[x[0::3][:len(x[2::3])] - POOL[0]]
            out[r] = x[:SEQ + 1]
            continue
        if synthetic and EPISODES[0]:
            # episodes: a fresh run of distinct tokens, twice, then the next one; a run of 2
            # (A B A B) is predicted by copying the previous token, a longer one by induction
            row = []
            while len(row) < SEQ + 1:
                run = rng.choice(np.arange(POOL[0], POOL[1]), int(rng.integers(RUN[0], RUN[1] + 1)), replace=False)
                row.extend(run.tolist() * 2)
            out[r] = row[:SEQ + 1]
        elif synthetic and TWICE[0]:
            # the measured format: a run of distinct tokens exactly twice, at a random offset
            # in a window of text (so the copies do not always start at position 0)
            n = int(rng.integers(RUN[0], RUN[1] + 1))
            run = rng.choice(np.arange(POOL[0], POOL[1]), n, replace=False)
            s = int(rng.integers(0, len(stream) - SEQ - 1))
            out[r] = stream[s:s + SEQ + 1]
            o = int(rng.integers(0, SEQ + 2 - 2 * n))
            out[r, o:o + 2 * n] = np.concatenate([run, run])
        elif synthetic and TEXT_RUNS[0] > 0 and rng.random() < TEXT_RUNS[0]:
            # a stretch of the training text repeated to fill the row: copying it needs the
            # previous-token head on text tokens, not only on the pool's
            n = int(rng.integers(RUN[0], RUN[1] + 1))
            s = int(rng.integers(0, len(stream) - n))
            out[r] = np.resize(stream[s:s + n], SEQ + 1)
        elif synthetic:
            run = rng.choice(np.arange(POOL[0], POOL[1]), int(rng.integers(RUN[0], RUN[1] + 1)), replace=False)
            out[r] = np.resize(run, SEQ + 1)
        else:
            s = int(rng.integers(0, len(stream) - SEQ - 1))
            out[r] = stream[s:s + SEQ + 1]
    t = torch.from_numpy(out)
    return t[:, :-1], t[:, 1:]


EVAL_SEED = 7   # the induction sequences' seed: not the training seed, so they are fresh runs


def induction_cases(rng, count, run):
    return [np.concatenate([x, x]) for x in (rng.choice(np.arange(POOL[0], POOL[1]), run, replace=False)
                                              for _ in range(count))]


def head_figures(attn_list, first_row=1):
    """Per head (as attnscope stats averages): mean over held-out sequences of the mean over
    query rows i >= 1 of the weight on token i-1 (prev) and on token 0 (first)."""
    L, H = attn_list[0].shape[:2]
    prev, first = np.zeros((L, H)), np.zeros((L, H))
    for a in attn_list:
        n = a.shape[-1]
        i = np.arange(first_row, n)
        prev += a[:, :, i, i - 1].mean(-1)
        first += a[:, :, i, 0].mean(-1)
    return prev / len(attn_list), first / len(attn_list)


def induction_score(attn_list, run):
    """Per head: mean attention from each token of the second copy (positions run..2run-2)
    to the token after its earlier occurrence (position j - run + 1)."""
    L, H = attn_list[0].shape[:2]
    s = np.zeros((L, H))
    for a in attn_list:
        q = np.arange(run, 2 * run - 1)
        s += a[:, :, q, q - run + 1].mean(-1)
    return s / len(attn_list)


def eval_figures(model, ids):
    """Every head's previous-token score on the held-out paragraphs (as export measures it)
    and its induction score on 20 repeated runs drawn with seed EVAL_SEED + 1 (not the 50 of
    check/induction_ids.json, which stay for the final figures), with the held-out loss."""
    held = [p[:SEQ] for p in ids["heldout"] if len(p) >= 16]
    run = 20
    with torch.no_grad():
        at, hl, hn = [], 0.0, 0
        for p in held:
            lg, a = model(torch.tensor([p]), want_attn=True)
            at.append(a[0].numpy())
            hl += float(F.cross_entropy(lg[0, :-1], torch.tensor(p[1:]), reduction="sum"))
            hn += len(p) - 1
        prev, _ = head_figures(at)
        seqs = np.array(induction_cases(np.random.default_rng(EVAL_SEED + 1), 20, run))
        ind = induction_score(list(model(torch.from_numpy(seqs), want_attn=True)[1].numpy()), run)
    return prev, ind, hl / hn


def best_text(m):
    return "L%d.H%d %.3f" % (*np.unravel_index(np.argmax(m), m.shape), m.max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--repeat", type=float, default=0.3, help="share of rows that are a repeated random run")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--heads", type=int, default=CFG["n_head"])
    ap.add_argument("--pool", type=int, nargs=2, default=list(POOL))
    ap.add_argument("--run", type=int, nargs=2, default=list(RUN))
    ap.add_argument("--decay-embeddings", type=int, default=1, help="0: no weight decay on wpe (positions)")
    ap.add_argument("--wpe-init", choices=["normal", "sinusoid"], default="normal")
    ap.add_argument("--episodes", type=int, default=0,
                    help="1: a repeated row is a string of runs each repeated twice, not one run repeated")
    ap.add_argument("--twice", type=int, default=0,
                    help="1: a repeated row is one run twice (the measured format) inside a text window")
    ap.add_argument("--init-std", type=float, default=0.0,
                    help="std of the blocks' weight matrices at initialisation (0: initializer_range, GPT-2's "
                         "0.02, which at width 64 is a sixth of 1/sqrt(width))")
    ap.add_argument("--text-runs", type=float, default=0.0,
                    help="share of the repeated rows whose run is a stretch of training text, not pool tokens")
    ap.add_argument("--wpe-std", type=float, default=0.0,
                    help="std of the learned positions at initialisation (0: GPT-2's 0.02)")
    ap.add_argument("--weight-decay", type=float, default=0.1,
                    help="AdamW's decoupled weight decay on the matrices and embeddings")
    ap.add_argument("--chains", type=float, default=0.0,
                    help="share of rows made of two interleaved chains x[t+1] = perm(x[t-1]) over the pool "
                         "(a fixed random permutation): predicted only by looking at the previous token")
    ap.add_argument("--triples", type=float, default=0.0,
                    help="share of rows made of triples (a, x, perm(a)), a and x drawn afresh from the pool: "
                         "the third is predicted only by looking at the previous token")
    ap.add_argument("--no-scale-attn", action="store_true",
                    help="GPT-2's scale_attn_weights false: scores q.k not divided by sqrt(head width)")
    ap.add_argument("--init-from", default=None, metavar="DIR",
                    help="start from DIR/model.safetensors (a model this script trained, same shape) "
                         "instead of a fresh initialisation: a second phase with another recipe")
    ap.add_argument("--eval-every", type=int, default=250, help="steps between head evaluations")
    ap.add_argument("--stop", type=float, nargs=2, default=[0.0, 0.0], metavar=("PREV", "IND"),
                    help="stop at the first evaluation whose best previous-token and induction heads "
                         "reach these (0 0: run every step)")
    ap.add_argument("--export-only", action="store_true",
                    help="no training: the shipped model.safetensors' metrics and check fixtures again")
    a = ap.parse_args()
    # the output folder is made now, not found missing after the training: --out /tmp/new works
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(1)
    CFG["n_head"] = a.heads
    POOL[:], RUN[:] = a.pool, a.run
    EPISODES[0] = a.episodes
    TWICE[0] = a.twice
    TEXT_RUNS[0] = a.text_runs
    CHAINS[0] = a.chains
    CFG["scale_attn_weights"] = not a.no_scale_attn
    TRIPLES[0] = a.triples
    CHAINS[1] = np.random.default_rng(a.seed + 1).permutation(np.arange(POOL[0], POOL[1]))
    if a.export_only:
        reexport(a)
        return
    torch.manual_seed(a.seed)
    a.recipe = {"warmup": a.warmup, "repeat": a.repeat, "pool": list(POOL), "run_lengths": list(RUN),
                "distinct": True, "episodes": bool(a.episodes), "twice": bool(a.twice), "text_runs": a.text_runs, "init_std": a.init_std or CFG["initializer_range"],
                "wpe_std": a.wpe_std or 0.02,
                "wpe_init": a.wpe_init, "decay_embeddings": bool(a.decay_embeddings),
                "weight_decay": a.weight_decay, "chains": a.chains,
                "triples": a.triples, "scale_attn_weights": CFG["scale_attn_weights"]}
    ids = json.load(open(os.path.join(HERE, "ids.json")))
    stream = np.array([t for p in ids["train"] for t in p + [EOT]], dtype=np.int64)
    g = torch.Generator().manual_seed(a.seed)
    model = GPT2(dict(CFG, _wpe_init=a.wpe_init, _matrix_std=a.init_std, _wpe_std=a.wpe_std), g)
    if a.init_from:
        # the first phase's recipe and figures go into this one's record
        load_weights(model, a.init_from)
        first = json.load(open(os.path.join(a.init_from, "train", "metrics.json")))
        a.recipe["first_phase"] = {k: first.get(k) for k in ("steps", "rows", "lr", "seed", "recipe", "evals")}
    decays = lambda n: n.endswith(".weight") and "ln_" not in n and (a.decay_embeddings or not n.startswith("wpe"))
    decay = [p for n, p in model.p.items() if decays(n)]
    no_decay = [p for n, p in model.p.items() if not decays(n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    rng = np.random.default_rng(a.seed)
    warm = a.warmup
    log = []
    a.evals = []
    t0 = time.time()
    c0 = time.process_time()
    for step in range(a.steps):
        lr = a.lr * min(1.0, (step + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / a.steps)))
        for grp in opt.param_groups:
            grp["lr"] = lr
        x, y = batch(stream, rng, a.rows, a.repeat)
        loss = F.cross_entropy(model(x).reshape(-1, CFG["vocab_size"]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(model.p.values()), 1.0)
        opt.step()
        log.append(float(loss))
        if step % 50 == 0 or step == a.steps - 1:
            print(f"step {step} loss {np.mean(log[-50:]):.3f} lr {lr:.2e} {time.time() - t0:.0f}s "
                  f"({(step + 1) / (time.time() - t0):.2f} steps/s, {(time.process_time() - c0) / (step + 1) * 1e3:.0f} "
                  f"ms CPU a step)", flush=True)
        if (step + 1) % a.eval_every == 0 or step == a.steps - 1:
            prev, ind, hl = eval_figures(model, ids)
            a.evals.append({"step": step + 1, "prev": round(float(prev.max()), 4), "induction": round(float(ind.max()), 4),
                            "heldout_loss": round(hl, 4)})
            print(f"  eval after {step + 1}: previous {best_text(prev)}, induction {best_text(ind)}, "
                  f"held-out loss {hl:.3f}", flush=True)
            if a.stop[0] > 0 and prev.max() >= a.stop[0] and ind.max() >= a.stop[1]:
                print(f"  both targets reached with the margin asked for (--stop {a.stop[0]} {a.stop[1]}): stopping",
                      flush=True)
                a.steps = step + 1
                break
    minutes = (time.time() - t0) / 60
    export(model, a, ids, log, minutes)


def load_weights(model, folder):
    """Sets the model's parameters from FOLDER/model.safetensors (F32, "transformer." names)."""
    raw = open(os.path.join(folder, "model.safetensors"), "rb").read()
    hl = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + hl])
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b0, b1 = e["data_offsets"]
        t = np.frombuffer(raw[8 + hl + b0:8 + hl + b1], dtype="<f4").reshape(e["shape"])
        model.p[name[len("transformer."):]].data = torch.from_numpy(t.copy())


def reexport(a):
    """Loads OUT/model.safetensors (F32, "transformer." names) into the model and exports
    again: the same weights, metrics.json and check/ recomputed (training figures kept)."""
    CFG.update(json.load(open(os.path.join(a.out, "config.json"))))   # the shipped shape
    model = GPT2(CFG, torch.Generator().manual_seed(0))
    load_weights(model, a.out)
    old = json.load(open(os.path.join(a.out, "train", "metrics.json")))
    for k in ("steps", "rows", "lr", "seed"):
        setattr(a, k, old[k])
    a.evals = old.get("evals")
    a.recipe = old.get("recipe")   # None for a model trained before the recipe was recorded
    if not a.recipe and "pool" in old:   # recorded flat by the first runs of this recipe
        a.recipe = {k: old[k] for k in ("warmup", "repeat", "pool", "run_lengths") if k in old}
    if a.recipe:
        POOL[:], RUN[:] = a.recipe["pool"], a.recipe["run_lengths"]
    log = [x for x in old["loss_every_50"] for _ in range(50)]
    log[-50:] = [old["final_train_loss"]] * 50
    export(model, a, json.load(open(os.path.join(HERE, "ids.json"))), log, old["minutes"])


def export(model, a, ids, log, minutes):
    W = {n: p.detach().to(torch.float32).contiguous() for n, p in model.p.items()}
    entries = sorted(("transformer." + n, "F32", tuple(t.shape), t.numpy().astype("<f4").tobytes())
                     for n, t in W.items())
    write_safetensors(os.path.join(a.out, "model.safetensors"), entries)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(CFG, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(a.out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "GPT2Tokenizer", "model_max_length": SEQ, "add_prefix_space": False,
                   "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>",
                   "clean_up_tokenization_spaces": False}, f, indent=2)
        f.write("\n")
    R = {n: t.to(torch.float64) for n, t in W.items()}   # the weights as saved
    cfg = dict(CFG)

    # held-out text: the first 128 tokens of each held-out paragraph of 16 tokens or more
    held = [p[:SEQ] for p in ids["heldout"] if len(p) >= 16]
    attn_text = []
    with torch.no_grad():
        for p in held:
            _, at = model(torch.tensor([p]), want_attn=True)
            attn_text.append(at[0].numpy().astype(np.float64))
    prev, first = head_figures(attn_text)
    run = 20
    ind_seqs = induction_cases(np.random.default_rng(EVAL_SEED), 50, run)
    attn_ind = []
    with torch.no_grad():
        for s in ind_seqs:
            _, at = model(torch.tensor(np.array([s])), want_attn=True)
            attn_ind.append(at[0].numpy().astype(np.float64))
    ind = induction_score(attn_ind, run)
    with torch.no_grad():
        hl, hn = 0.0, 0
        for p in held:
            lg = model(torch.tensor([p]))[0]
            hl += float(F.cross_entropy(lg[:-1], torch.tensor(p[1:]), reduction="sum"))
            hn += len(p) - 1
    best = lambda m: [int(x) for x in np.unravel_index(np.argmax(m), m.shape)] + [float(m.max())]
    metrics = {"steps": a.steps, "rows": a.rows, "lr": a.lr, "seed": a.seed, "minutes": round(minutes, 1),
               "final_train_loss": float(np.mean(log[-50:])), "heldout_loss": hl / hn, "heldout_tokens": hn,
               "heldout_sequences": len(held), "induction_sequences": len(ind_seqs), "induction_run": run,
               "induction_pool": list(POOL), "induction_seed": EVAL_SEED,
               "prev": prev.round(4).tolist(), "first": first.round(4).tolist(), "induction": ind.round(4).tolist(),
               "best_prev": best(prev), "best_first": best(first), "best_induction": best(ind),
               "loss_every_50": [round(float(np.mean(log[i:i + 50])), 4) for i in range(0, len(log), 50)]}
    here = os.path.join(a.out, "train")   # HERE unless --out names another folder
    os.makedirs(here, exist_ok=True)
    if getattr(a, "recipe", None):
        metrics["recipe"] = a.recipe
    if getattr(a, "evals", None):
        metrics["evals"] = a.evals   # the best heads every --eval-every steps (eval_figures)
    with open(os.path.join(here, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=1)
    print(json.dumps({k: metrics[k] for k in ("final_train_loss", "heldout_loss", "best_prev", "best_first",
                                              "best_induction", "minutes")}))

    # loader check fixtures: float64 reference forward (tests/hf/gen_gpt2.py) on the saved weights
    chk = os.path.join(here, "check")
    os.makedirs(chk, exist_ok=True)
    with open(os.path.join(chk, "heldout_ids.json"), "w") as f:   # Hugging Face's ids (bpe.js)
        json.dump(ids["heldout"], f, separators=(",", ":"))
    lines = [l for l in open(os.path.join(HERE, "heldout.txt"), encoding="utf-8").read().split("\n") if l]
    picks = [i for i, p in enumerate(ids["heldout"]) if 12 <= len(p) <= 24][:3]
    cases = []
    worst = 0.0
    for ci, i in enumerate(picks):
        p = ids["heldout"][i]
        attn, hidden, _ = gpt2_forward(R, cfg, p, [1] * len(p))
        logits = hidden[-1] @ R["wte.weight"].T
        logp = torch.log_softmax(logits, -1)
        with torch.no_grad():   # the trainer's float32 model agrees with the reference
            lg32 = model(torch.tensor([p]))[0].double()
        worst = max(worst, float((torch.log_softmax(lg32, -1) - logp).abs().max()))
        tops = [next_token_top5(R, hidden[-1], pos) for pos in range(len(p))]
        np.save(os.path.join(chk, f"attn_{ci}.npy"), attn.numpy().astype("<f4"))
        np.save(os.path.join(chk, f"logprobs_{ci}.npy"), logp.numpy().astype("<f4"))
        cases.append({"text": lines[i], "ids": p, "next_top_ids": [t[0] for t in tops],
                      "next_top_probs": [t[1] for t in tops]})
    ind_case = [int(x) for x in ind_seqs[0]]
    attn, hidden, _ = gpt2_forward(R, cfg, ind_case, [1] * len(ind_case))
    np.save(os.path.join(chk, "attn_induction.npy"), attn.numpy().astype("<f4"))
    with open(os.path.join(chk, "induction_ids.json"), "w") as f:   # every induction sequence measured
        json.dump({"seed": EVAL_SEED, "pool": list(POOL), "run": run,
                   "ids": [[int(x) for x in q] for q in ind_seqs]}, f, separators=(",", ":"))
        f.write("\n")
    with open(os.path.join(chk, "cases.json"), "w") as f:
        json.dump({"cases": cases, "induction": {"ids": ind_case, "run": run},
                   "trainer_vs_reference_logprob_max_abs": worst}, f, indent=1)
    print(f"check fixtures: {len(cases)} cases; trainer float32 vs float64 reference log-probs {worst:.2e}")


if __name__ == "__main__":
    main()
