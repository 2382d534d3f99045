// The causal demo model's tokenizer: a byte-level BPE in GPT-2's format (vocab.json +
// merges.txt, GPT-2's pre-tokenizer regex and byte-to-unicode alphabet), learnt from
// corpus.txt; then every line of corpus.txt and heldout.txt encoded by Hugging Face's own
// tokenizers library (the npm `tokenizers` package) from the files written, so the ids the
// model is trained on are those a GPT2TokenizerFast would give.
//
// Usage: NODE_PATH=/work/wt/npm/node_modules node bpe.js [--merges 767] [--out ..]
// Writes OUT/vocab.json, OUT/merges.txt and train/ids.json ({"train": [[ids]], "heldout": ...}).
"use strict";
const fs = require("fs");
const path = require("path");
const { Tokenizer, BPE, byteLevelPreTokenizer } = require("tokenizers");

const here = __dirname;
let nMerges = 767, out = path.join(here, "..");
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === "--merges") nMerges = parseInt(process.argv[++i], 10);
  else if (process.argv[i] === "--out") out = process.argv[++i];
}

// GPT-2's bytes_to_unicode (openai/gpt-2 encoder.py)
function bytesToUnicode() {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  const m = {};
  bs.forEach((b, i) => { m[b] = String.fromCodePoint(cs[i]); });
  return { map: m, order: bs };
}
const PAT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const { map: b2u, order } = bytesToUnicode();

const lines = fs.readFileSync(path.join(here, "corpus.txt"), "utf8").split("\n").filter((l) => l.length);
const counts = new Map();
for (const line of lines)
  for (const w of line.match(PAT) || []) {
    const s = Array.from(Buffer.from(w, "utf8")).map((b) => b2u[b]).join("");
    counts.set(s, (counts.get(s) || 0) + 1);
  }
// words as arrays of symbols; deterministic order
const words = [...counts.keys()].sort().map((w) => ({ sym: Array.from(w), n: counts.get(w) }));
const merges = [];
for (let m = 0; m < nMerges; m++) {
  const pc = new Map();
  for (const w of words)
    for (let i = 0; i + 1 < w.sym.length; i++) {
      const k = w.sym[i] + " " + w.sym[i + 1];
      pc.set(k, (pc.get(k) || 0) + w.n);
    }
  let best = null, bn = 0;
  for (const [k, c] of pc) if (c > bn || (c === bn && k < best)) { best = k; bn = c; }
  if (!best || bn < 2) break;
  merges.push(best);
  const [a, b] = best.split(" ");
  for (const w of words) {
    const s = w.sym;
    if (s.length < 2) continue;
    const t = [];
    for (let i = 0; i < s.length; i++) {
      if (i + 1 < s.length && s[i] === a && s[i + 1] === b) { t.push(a + b); i++; } else t.push(s[i]);
    }
    w.sym = t;
  }
}
const vocab = {};
order.slice().sort((x, y) => x - y).forEach((b, i) => { vocab[b2u[b]] = i; });
merges.forEach((mg, i) => { vocab[mg.replace(" ", "")] = 256 + i; });
vocab["<|endoftext|>"] = 256 + merges.length;
fs.writeFileSync(path.join(out, "vocab.json"), JSON.stringify(vocab));
fs.writeFileSync(path.join(out, "merges.txt"), "#version: 0.2\n" + merges.join("\n") + "\n");

(async () => {
  const model = await BPE.fromFile(path.join(out, "vocab.json"), path.join(out, "merges.txt"));
  const tok = new Tokenizer(model);
  tok.setPreTokenizer(byteLevelPreTokenizer(false, true));
  const res = {};
  for (const part of ["corpus", "heldout"]) {
    const ls = fs.readFileSync(path.join(here, part + ".txt"), "utf8").split("\n").filter((l) => l.length);
    res[part === "corpus" ? "train" : "heldout"] = [];
    for (const l of ls) {
      const e = await tok.encode(l);
      res[part === "corpus" ? "train" : "heldout"].push(e.getIds());
    }
  }
  fs.writeFileSync(path.join(here, "ids.json"), JSON.stringify(res));
  const nt = res.train.reduce((s, x) => s + x.length, 0), nh = res.heldout.reduce((s, x) => s + x.length, 0);
  console.log(`vocab ${Object.keys(vocab).length} (${merges.length} merges); ${nt} training tokens, ${nh} held out`);
})();
