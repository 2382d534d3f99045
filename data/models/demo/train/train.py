#!/usr/bin/python3
"""Trains attnscope's demo model and writes it in Hugging Face layout.

    python3 data/models/demo/train/train.py --out data/models/demo

One command, reproducible from --seed: extracts the corpus from Debian packages (fortunes,
fortunes-zh, manpages-zh), builds the WordPiece vocabulary, trains a small BERT with masked-LM
(singles and sentence pairs), writes config.json / model.safetensors (F16) / vocab.txt /
tokenizer_config.json, evaluates the F16 weights on held-out sentences, saves the loader check
files (train/check/) and writes the model card and loss curve.  Every batch and every mask is
a function of (seed, step), so --resume continues exactly where a checkpoint left off.
Needs Debian's python3-torch, python3-numpy, python3-matplotlib.
"""

import os
import sys


def _reexec():
    """Run under an interpreter that has torch, with OpenBLAS's fast kernel chosen before
    the library loads (docs/ARCHITECTURE.md, "Platform notes": the default kernel is 5x slower here)."""
    if os.environ.get("ATTNSCOPE_TRAIN_CHILD") == "1":
        return
    import importlib.util
    env = dict(os.environ)
    env["ATTNSCOPE_TRAIN_CHILD"] = "1"
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if "OPENBLAS_CORETYPE" not in env:
        try:
            with open("/proc/cpuinfo") as f:
                flags = f.read()
            if " avx512f" in flags:
                env["OPENBLAS_CORETYPE"] = "SkylakeX"
            elif " avx2" in flags:
                env["OPENBLAS_CORETYPE"] = "Haswell"
        except OSError:
            pass
    py = sys.executable
    if importlib.util.find_spec("torch") is None and os.path.exists("/usr/bin/python3"):
        py = "/usr/bin/python3"
    os.execve(py, [py] + sys.argv, env)


if __name__ == "__main__":
    _reexec()

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import corpus  # noqa: E402
import headstats  # noqa: E402
import hf_io  # noqa: E402
import wordpiece  # noqa: E402
from model import BertForMaskedLM  # noqa: E402

CSV_COLS = ["step", "seconds", "lr", "train_loss", "heldout_loss_en", "heldout_acc_en",
            "heldout_loss_zh", "heldout_acc_zh", "best_prev", "best_next", "best_special",
            "best_vertical"]

# Sentences for the loader check (written for this purpose, not from the corpus).
CHECK_SENTENCES = [
    ("The cat sat on the mat because it was tired.", None),
    ("我爱你，因为你每天都很努力。", "The old man smiled and said nothing."),
]
# Masked-word examples shown in the model card.
PREDICT_EXAMPLES = [
    "the cat sat on the [MASK].",
    "a fool and his money are soon [MASK].",
    "you can't teach an old dog new [MASK].",
    "this command prints the [MASK] of the current directory.",
    "我爱[MASK]。",
    "这个命令用来删除一个[MASK]件。",
    "中华人民共和[MASK]",
]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.normpath(os.path.join(HERE, "..")),
                   help="model folder to write (default: data/models/demo)")
    p.add_argument("--work", default="/tmp/attnscope-demo-work",
                   help="checkpoints and logs (not committed)")
    p.add_argument("--seed", type=int, default=20240607)
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--max-minutes", type=float, default=60.0,
                   help="stop training early (and still write everything) after this long")
    p.add_argument("--vocab-size", type=int, default=8000)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--max-position", type=int, default=128)
    p.add_argument("--max-len", type=int, default=32, help="tokens per ordinary example")
    p.add_argument("--long-frac", type=float, default=0.03,
                   help="share of examples packed to 65..max-position tokens")
    p.add_argument("--pair-prob", type=float, default=0.35)
    p.add_argument("--batch-tokens", type=int, default=2048)
    p.add_argument("--max-batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--decay-frac", type=float, default=0.15,
                   help="last share of steps in which the lr falls linearly to lr/10")
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--heldout-frac", type=float, default=0.03)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--ckpt-every", type=int, default=500)
    p.add_argument("--resume", action="store_true", help="continue from WORK/ckpt.pt")
    p.add_argument("--export-only", action="store_true",
                   help="skip training; export and evaluate WORK/ckpt.pt")
    p.add_argument("--no-card", action="store_true")
    return p.parse_args()


class Log:
    def __init__(self, path):
        self.f = open(path, "a", encoding="utf-8")

    def __call__(self, msg):
        line = time.strftime("%H:%M:%S ") + msg
        print(line, flush=True)
        self.f.write(line + "\n")
        self.f.flush()


# ---------------------------------------------------------------- data

def prepare_data(args, log):
    c = corpus.load_corpus()
    rng = random.Random(args.seed)
    split = {}
    for lang in ("en", "zh"):
        docs = list(c[lang])
        rng.shuffle(docs)
        n_held = max(50, int(len(docs) * args.heldout_frac))
        split[lang] = {"train": docs[n_held:], "held": docs[:n_held]}
        log(f"corpus {lang}: {len(docs)} documents, "
            f"{sum(len(d) for d in docs)} sentences; {n_held} documents held out")
    t = time.time()
    train_texts = [s for lang in ("en", "zh") for d in split[lang]["train"] for s in d]
    vocab = wordpiece.build_vocab(train_texts, args.vocab_size, log=log)
    log(f"vocabulary: {len(vocab)} entries in {time.time() - t:.0f} s")
    tok = wordpiece.BertTokenizer(vocab)
    data = {}
    stats = {}
    for lang in ("en", "zh"):
        data[lang] = {}
        for part in ("train", "held"):
            docs = []
            for d in split[lang][part]:
                ids = [tok.encode_text(s) for s in d]
                pairs = [(s, i) for s, i in zip(d, ids) if i]
                if pairs:
                    docs.append(pairs)
            data[lang][part] = docs
        ntok = sum(len(i) for d in data[lang]["train"] for _, i in d)
        nunk = sum(i.count(tok.unk_id) for d in data[lang]["train"] for _, i in d)
        stats[lang] = {
            "documents": len(split[lang]["train"]) + len(split[lang]["held"]),
            "train_sentences": sum(len(d) for d in data[lang]["train"]),
            "heldout_sentences": sum(len(d) for d in data[lang]["held"]),
            "train_tokens": ntok, "train_unk_rate": nunk / max(ntok, 1)}
        log(f"tokens {lang}: {ntok} training tokens, [UNK] rate {nunk / max(ntok, 1):.4f}")
    stats["sources"] = c["sources"]
    log(f"sources: {c['sources']}")
    return tok, data, stats


def truncate_pair(a, b, budget):
    a, b = list(a), list(b)
    while len(a) + len(b) > budget:
        if len(a) >= len(b):
            a.pop()
        else:
            b.pop()
    return a, b


def single(tok, a, max_len):
    a = a[:max_len - 2]
    ids = [tok.cls_id] + a + [tok.sep_id]
    return ids, [0] * len(ids)


def pair(tok, a, b, max_len):
    a, b = truncate_pair(a, b, max_len - 3)
    ids = [tok.cls_id] + a + [tok.sep_id] + b + [tok.sep_id]
    return ids, [0] * (len(a) + 2) + [1] * (len(b) + 1)


def make_examples(tok, data, epoch, args):
    """The examples of one epoch: singles, consecutive-sentence pairs, and a few long packed
    pairs (so that every position embedding up to max_position is trained)."""
    rng = random.Random(args.seed * 7919 + epoch)
    ex = []
    for lang in ("en", "zh"):
        docs = data[lang]["train"]
        n_lang = 0
        for d in docs:
            i = 0
            while i < len(d):
                if i + 1 < len(d) and rng.random() < args.pair_prob:
                    ex.append(pair(tok, d[i][1], d[i + 1][1], args.max_len))
                    i += 2
                else:
                    ex.append(single(tok, d[i][1], args.max_len))
                    i += 1
                n_lang += 1
        order = list(range(len(docs)))
        rng.shuffle(order)
        stream = [t for j in order for _, ids in docs[j] for t in ids]
        for _ in range(int(n_lang * args.long_frac)):
            total = rng.randint(args.max_len + 1, args.max_position) - 3
            la = rng.randint(total // 4, 3 * total // 4)
            p = rng.randrange(0, len(stream) - total)
            ex.append(pair(tok, stream[p:p + la], stream[p + la:p + total], args.max_position))
    return ex


def make_batches(examples, epoch, args):
    rng = random.Random(args.seed * 104729 + epoch)
    order = list(range(len(examples)))
    rng.shuffle(order)
    buckets = collections.defaultdict(list)
    for i in order:
        n = len(examples[i][0])
        buckets[(n + 7) // 8 * 8].append(i)
    batches = []
    for b in sorted(buckets):
        bs = max(8, min(args.max_batch, args.batch_tokens // b))
        idx = buckets[b]
        batches.extend(idx[j:j + bs] for j in range(0, len(idx), bs))
    rng.shuffle(batches)
    return batches


def collate(examples, idx, pad_id):
    n = max(len(examples[i][0]) for i in idx)
    ids = torch.full((len(idx), n), pad_id, dtype=torch.long)
    types = torch.zeros((len(idx), n), dtype=torch.long)
    mask = torch.zeros((len(idx), n), dtype=torch.long)
    for r, i in enumerate(idx):
        a, t = examples[i]
        ids[r, :len(a)] = torch.tensor(a)
        types[r, :len(t)] = torch.tensor(t)
        mask[r, :len(a)] = 1
    return ids, types, mask


def choose_masked(ids, tok, g, rate=0.15):
    """Boolean [b,n]: about `rate` of the ordinary tokens, at least one per row."""
    special = (ids == tok.cls_id) | (ids == tok.sep_id) | (ids == tok.pad_id)
    prob = torch.rand(ids.shape, generator=g)
    sel = (prob < rate) & ~special
    none = ~sel.any(1)
    if none.any():
        pick = prob.masked_fill(special, 2.0).argmin(1)
        rows = torch.nonzero(none).flatten()
        sel[rows, pick[rows]] = True
        sel &= ~special
    return sel


def mask_batch(ids, tok, vocab_size, g):
    """BERT's 80/10/10 masking; returns (input ids, selected [b,n] bool, labels [m])."""
    sel = choose_masked(ids, tok, g)
    r = torch.rand(ids.shape, generator=g)
    inp = ids.clone()
    inp[sel & (r < 0.8)] = tok.mask_id
    rnd = sel & (r >= 0.8) & (r < 0.9)
    inp[rnd] = torch.randint(len(wordpiece.SPECIALS), vocab_size, (int(rnd.sum()),), generator=g)
    return inp, sel, ids[sel]


# ---------------------------------------------------------------- evaluation

def heldout_sets(tok, data, args, per_lang=1000):
    """Fixed held-out MLM sets: single sentences, 15% of tokens replaced by [MASK]."""
    g = torch.Generator().manual_seed(args.seed + 17)
    sets = {}
    for lang in ("en", "zh"):
        sents = [ids for d in data[lang]["held"] for _, ids in d if len(ids) >= 3]
        sents = sents[:per_lang]
        ex = [single(tok, s, args.max_len) for s in sents]
        items = []
        for a, t in ex:
            ids = torch.tensor([a])
            sel = choose_masked(ids, tok, g)
            inp = ids.clone()
            inp[sel] = tok.mask_id
            items.append((inp[0], torch.tensor(t), sel[0], ids[0][sel[0]]))
        sets[lang] = items
    return sets


def mlm_eval(model, items, batch=64):
    model.eval()
    tot, n, top1, top5 = 0.0, 0, 0, 0
    items = sorted(items, key=lambda it: len(it[0]))
    with torch.no_grad():
        for j in range(0, len(items), batch):
            chunk = items[j:j + batch]
            L = max(len(it[0]) for it in chunk)
            ids = torch.zeros((len(chunk), L), dtype=torch.long)
            types = torch.zeros_like(ids)
            mask = torch.zeros_like(ids)
            sel = torch.zeros((len(chunk), L), dtype=torch.bool)
            for r, (inp, t, s, _) in enumerate(chunk):
                ids[r, :len(inp)] = inp
                types[r, :len(t)] = t
                mask[r, :len(inp)] = 1
                sel[r, :len(s)] = s
            labels = torch.cat([it[3] for it in chunk])
            wdt = model.bert.embeddings.word_embeddings.weight.dtype
            hidden, _ = model.encode(ids, types, mask.to(wdt))
            logits = model.mlm_logits(hidden[sel])
            tot += float(F.cross_entropy(logits.float(), labels, reduction="sum"))
            top = logits.topk(5, dim=-1).indices
            top1 += int((top[:, 0] == labels).sum())
            top5 += int((top == labels[:, None]).any(1).sum())
            n += len(labels)
    model.train()
    return {"loss": tot / n, "top1": top1 / n, "top5": top5 / n, "masked_tokens": n}


def head_stats(model, tok, data, args, per_lang=200, pairs=False, texts=None):
    """Statistics over the first per_lang held-out sentences (or consecutive pairs) of each
    language that have 5..max_len tokens untruncated; their texts are appended to `texts`
    (one per line, pairs tab-separated) when given."""
    model.eval()
    cfg = model.cfg
    hs = headstats.HeadStats(cfg["num_hidden_layers"], cfg["num_attention_heads"])
    for lang in ("en", "zh"):
        k = 0
        for d in data[lang]["held"]:
            if pairs:
                cands = [(d[i][0] + "\t" + d[i + 1][0], d[i][1], d[i + 1][1])
                         for i in range(0, len(d) - 1, 2)]
            else:
                cands = [(text, ids, None) for text, ids in d]
            for text, a, b in cands:
                n = len(a) + 2 + (len(b) + 1 if b is not None else 0)
                if n < 5 or n > args.max_len or k >= per_lang:
                    continue
                ids, types = pair(tok, a, b, n) if b is not None else single(tok, a, n)
                att = model.attentions(torch.tensor(ids), torch.tensor(types))
                hs.add(att.double().numpy(), ids, tok.sep_id, tok.cls_id)
                if texts is not None:
                    texts.append(text)
                k += 1
    model.train()
    return hs


def predict(model, tok, text, k=5):
    model.eval()
    ids, types = tok.encode(text)
    with torch.no_grad():
        hidden, _ = model.encode(torch.tensor([ids]), torch.tensor([types]))
        pos = [i for i, t in enumerate(ids) if t == tok.mask_id]
        probs = torch.softmax(model.mlm_logits(hidden[0, pos]).double(), -1)
    out = []
    for row in probs:
        p, i = row.topk(k)
        out.append([(tok.vocab[int(j)], round(float(q), 4)) for q, j in zip(p, i)])
    model.train()
    return out


# ---------------------------------------------------------------- training

def lr_at(step, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    start = int(args.steps * (1 - args.decay_frac))
    if step < start:
        return args.lr
    frac = (step - start) / max(1, args.steps - start)
    return args.lr * (1.0 - 0.9 * frac)


def make_optimizer(model, args):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.dim() < 2 else decay).append(p)
    return torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=args.lr, betas=(0.9, 0.999), eps=1e-8)


def write_csv(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(",".join(CSV_COLS) + "\n")
        for r in rows:
            f.write(",".join("" if r.get(c) is None else
                             (f"{r[c]:.6g}" if isinstance(r[c], float) else str(r[c]))
                             for c in CSV_COLS) + "\n")
    os.replace(tmp, path)


def save_ckpt(path, model, opt, step, elapsed, rows, vocab, cfg):
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                "elapsed": elapsed, "rows": rows, "vocab": vocab, "cfg": cfg}, tmp)
    os.replace(tmp, path)


def train(args, log, tok, data, cfg):
    torch.manual_seed(args.seed)
    model = BertForMaskedLM(cfg)
    opt = make_optimizer(model, args)
    ckpt_path = os.path.join(args.work, "ckpt.pt")
    step, elapsed, rows = 0, 0.0, []
    if args.resume or args.export_only:
        ck = torch.load(ckpt_path)
        if ck["vocab"] != tok.vocab or ck["cfg"] != cfg:
            raise SystemExit(f"{ckpt_path}: vocabulary or config differ from this run's")
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, elapsed, rows = ck["step"], ck["elapsed"], ck["rows"]
        log(f"resumed from {ckpt_path} at step {step} ({elapsed / 60:.1f} min trained)")
    if args.export_only:
        return model, step, elapsed, rows, False

    n_params = sum(p.numel() for p in model.parameters())
    log(f"model: {n_params} parameters; {args.steps} steps planned")
    held = heldout_sets(tok, data, args, per_lang=400)
    csv_path = os.path.join(args.work, "loss.csv")
    V = cfg["vocab_size"]

    # Find where `step` falls in the epoch sequence (epochs are regenerated from the seed).
    epoch, consumed = 0, 0
    examples = make_examples(tok, data, epoch, args)
    batches = make_batches(examples, epoch, args)
    log(f"epoch 0: {len(examples)} examples in {len(batches)} batches")
    while consumed + len(batches) <= step:
        consumed += len(batches)
        epoch += 1
        examples = make_examples(tok, data, epoch, args)
        batches = make_batches(examples, epoch, args)

    model.train()
    window = []
    t0 = time.time() - elapsed
    stopped_early = False
    while step < args.steps:
        bi = step - consumed
        if bi >= len(batches):
            consumed += len(batches)
            epoch += 1
            examples = make_examples(tok, data, epoch, args)
            batches = make_batches(examples, epoch, args)
            log(f"epoch {epoch}: {len(examples)} examples in {len(batches)} batches")
            continue
        ids, types, mask = collate(examples, batches[bi], tok.pad_id)
        g = torch.Generator().manual_seed(args.seed * 1000003 + step)
        inp, sel, labels = mask_batch(ids, tok, V, g)
        lr = lr_at(step, args)
        for group in opt.param_groups:
            group["lr"] = lr
        hidden, _ = model.encode(inp, types, mask.float())
        loss = F.cross_entropy(model.mlm_logits(hidden[sel]), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        window.append(float(loss))
        step += 1
        elapsed = time.time() - t0

        if step % args.log_every == 0:
            row = {"step": step, "seconds": round(elapsed, 1), "lr": lr,
                   "train_loss": sum(window) / len(window)}
            window = []
            if step % args.eval_every == 0 or step == args.steps:
                for lang in ("en", "zh"):
                    r = mlm_eval(model, held[lang])
                    row[f"heldout_loss_{lang}"] = r["loss"]
                    row[f"heldout_acc_{lang}"] = r["top1"]
                m = head_stats(model, tok, data, args, per_lang=60).means()
                row["best_prev"] = headstats.best(m, "prev")[0]
                row["best_next"] = headstats.best(m, "next")[0]
                row["best_special"] = headstats.best(m, "special")[0]
                row["best_vertical"] = headstats.best(m, "vertical")[0]
                ent = " ".join(f"{e:.2f}" for e in m["entropy"].mean(1))
                log("step {step} {seconds:.0f}s lr {lr:.2e} loss {train_loss:.3f} | held-out "
                    "en {heldout_loss_en:.3f}/{heldout_acc_en:.3f} zh {heldout_loss_zh:.3f}/"
                    "{heldout_acc_zh:.3f} | best prev {best_prev:.2f} next {best_next:.2f} "
                    "[CLS]+[SEP] {best_special:.2f} [CLS]|[SEP] {best_vertical:.2f}".format(**row) + f" | entropy by layer {ent}")
            else:
                log(f"step {step} {elapsed:.0f}s lr {lr:.2e} loss {row['train_loss']:.3f} "
                    f"({step / max(elapsed, 1e-9):.2f} steps/s overall)")
            rows.append(row)
            write_csv(csv_path, rows)
        if step % args.ckpt_every == 0:
            save_ckpt(ckpt_path, model, opt, step, elapsed, rows, tok.vocab, cfg)
        if elapsed > args.max_minutes * 60 and step < args.steps:
            log(f"time budget of {args.max_minutes} min reached at step {step}; stopping")
            stopped_early = True
            break
    save_ckpt(ckpt_path, model, opt, step, elapsed, rows, tok.vocab, cfg)
    return model, step, elapsed, rows, stopped_early


# ---------------------------------------------------------------- export

def load_exported(folder, dtype):
    cfg, state, vocab = hf_io.read_folder(folder)
    m = BertForMaskedLM(cfg).to(dtype)
    m.load_state_dict({k: torch.from_numpy(v).to(dtype) for k, v in state.items()}, strict=True)
    m.eval()
    return m, vocab


def write_check_files(model64, model32, tok, check_dir, log):
    os.makedirs(check_dir, exist_ok=True)
    meta = []
    for k, (a, b) in enumerate(CHECK_SENTENCES):
        ids, types = tok.encode(a, b)
        att64 = model64.attentions(torch.tensor(ids), torch.tensor(types)).numpy()
        att32 = model32.attentions(torch.tensor(ids), torch.tensor(types)).numpy()
        np.save(os.path.join(check_dir, f"ids_{k}.npy"), np.array(ids, dtype=np.int32))
        np.save(os.path.join(check_dir, f"type_ids_{k}.npy"), np.array(types, dtype=np.int32))
        np.save(os.path.join(check_dir, f"attn_{k}.npy"), att64.astype(np.float32))
        d = float(np.abs(att64 - att32).max())
        log(f"check sentence {k}: {len(ids)} tokens, attention {att64.shape}; "
            f"float32 vs float64 forward differ by {d:.2e}")
        meta.append({"text": a, "text_pair": b, "tokens": tok.tokens(ids), "ids": ids,
                     "type_ids": types, "attn_file": f"attn_{k}.npy",
                     "float32_vs_float64_max_abs_diff": d})
    hf_io.write_atomic(os.path.join(check_dir, "sentences.json"),
                       json.dumps(meta, ensure_ascii=False, indent=1) + "\n", "w")


def export_and_evaluate(args, log, tok, data, stats, cfg, model, step, elapsed, rows,
                        stopped_early):
    state = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    hf_io.write_folder(args.out, cfg, state, tok.vocab)
    log(f"wrote {args.out}: " + ", ".join(
        f"{f} {os.path.getsize(os.path.join(args.out, f))} B" for f in
        ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json")))
    # Everything below uses the F16 weights as read back from the file.
    m32, vocab = load_exported(args.out, torch.float32)
    m64, _ = load_exported(args.out, torch.float64)
    assert vocab == tok.vocab
    held = heldout_sets(tok, data, args, per_lang=1000)
    final = {lang: mlm_eval(m32, held[lang]) for lang in ("en", "zh")}
    for lang in ("en", "zh"):
        r = final[lang]
        log(f"final held-out {lang}: loss {r['loss']:.3f} top-1 {r['top1']:.3f} "
            f"top-5 {r['top5']:.3f} over {r['masked_tokens']} masked tokens")
    texts_single, texts_pair = [], []
    hs_single = head_stats(m64, tok, data, args, per_lang=400, texts=texts_single)
    hs_pair = head_stats(m64, tok, data, args, per_lang=200, pairs=True, texts=texts_pair)
    # The same sentences, one per line, for `attnscope stats --corpus train/heldout.txt`.
    hf_io.write_atomic(os.path.join(HERE, "heldout.txt"),
                       "".join(t.replace("\n", " ") + "\n" for t in texts_single), "w")
    ms, mp = hs_single.means(), hs_pair.means()
    for key in ("prev", "next", "self", "cls", "sep", "special", "vertical"):
        v, li, hi = headstats.best(ms, key)
        log(f"best head for {key}: L{li}.H{hi} {v:.3f} (single sentences)")
    write_check_files(m64, m32, tok, os.path.join(HERE, "check"), log)
    examples = [{"text": t, "top5": predict(m32, tok, t)} for t in PREDICT_EXAMPLES]
    for e in examples:
        log(f"predict {e['text']!r}: {e['top5']}")
    metrics = {
        "seed": args.seed, "args": vars(args), "config": cfg,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "steps": step, "steps_planned": args.steps, "stopped_early": stopped_early,
        "training_seconds": round(elapsed, 1), "corpus": stats,
        "vocab_size": len(tok.vocab),
        "heldout": final,
        "head_stats_single": {k: v.round(4).tolist() for k, v in ms.items()},
        "head_stats_pairs": {k: v.round(4).tolist() for k, v in mp.items()},
        "head_stats_sentences": {"single": hs_single.sentences, "pairs": hs_pair.sentences},
        "predict_examples": examples,
        "torch_version": torch.__version__,
        "files": {f: os.path.getsize(os.path.join(args.out, f)) for f in
                  ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json")},
    }
    hf_io.write_atomic(os.path.join(HERE, "metrics.json"),
                       json.dumps(metrics, ensure_ascii=False, indent=1) + "\n", "w")
    write_csv(os.path.join(HERE, "loss.csv"), rows)
    return metrics


def main():
    args = parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.work, exist_ok=True)
    log = Log(os.path.join(args.work, "train.log"))
    log(f"torch {torch.__version__}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}, "
        f"args {vars(args)}")
    random.seed(args.seed)
    np.random.seed(args.seed % 2**32)
    tok, data, stats = prepare_data(args, log)
    cfg = {
        "vocab_size": len(tok.vocab), "hidden_size": args.hidden,
        "num_hidden_layers": args.layers, "num_attention_heads": args.heads,
        "intermediate_size": 4 * args.hidden, "max_position_embeddings": args.max_position,
        "type_vocab_size": 2, "initializer_range": 0.02, "layer_norm_eps": 1e-12,
    }
    model, step, elapsed, rows, stopped = train(args, log, tok, data, cfg)
    metrics = export_and_evaluate(args, log, tok, data, stats, cfg, model, step, elapsed, rows,
                                  stopped)
    if not args.no_card:
        import card
        card.write_card(args.out, metrics, os.path.join(HERE, "loss.csv"))
        log(f"wrote {os.path.join(args.out, 'README.md')} and the loss curve")
    log("done")


if __name__ == "__main__":
    main()
