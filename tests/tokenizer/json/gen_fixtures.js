// Writes the tokenizer.json fixtures for tests/tokenizer/test-tok-json.c with the real
// Hugging Face tokenizers library (the npm package `tokenizers`, its Rust core over N-API).
//
//   NODE_PATH=/work/wt/npm/node_modules node tests/tokenizer/json/gen_fixtures.js
//
// For each pipeline below it writes NAME.tokenizer.json (built here, then loaded and saved
// back by the library so the file is what the library itself writes) and NAME.cases.json:
// every hard case and a few thousand random strings, each with the ids, tokens, offsets
// (converted from the library's character offsets to UTF-8 bytes), type ids, word ids and
// special-token mask the library gives.  The WordLevel vocabularies are made from the
// corpus below by the library's own normalizer and pre-tokenizer (the most frequent
// pieces), so every pipeline sees both known and unknown words.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

const here = __dirname;
const corpus = [
  'The cat sat on the mat because it was tired.',
  'The animal didn\'t cross the street because it was too tired.',
  'She put the book on the table and then she read it.',
  'Time flies like an arrow; fruit flies like a banana.',
  'I went to the bank to deposit money. Then I sat on the river bank.',
  'Where is the library? The library is closed on Sundays.',
  'A quick brown fox jumps over the lazy dog 1234 times, 56 or 7890!',
  'Café naïve résumé façade coöperate — déjà vu, piñata, Ærøskøbing.',
  '我爱自然语言处理。北京是中国的首都。今天天气很好！',
  'สวัสดีครับ ภาษาไทยไม่มีช่องว่างระหว่างคำ',
  'Привет, мир! Это тест. Ελληνικά γράμματα και λέξεις.',
  'こんにちは世界、カタカナとひらがな。한국어 문장도 있습니다.',
  'Emoji 😀 👍🏽 👨‍👩‍👧 ❤️ and symbols © ® ™ € £ ¥ ½ ² µ',
  'tabs\tand\nnewlines\r\nand   runs   of    spaces',
  'don\'t can\'t won\'t it\'s we\'re they\'ve I\'m you\'ll he\'d',
  'e-mail: someone@example.com, http://example.org/path?q=1&r=2',
  'The year 2024 had 366 days; pi is 3.14159 and e is 2.71828.',
  'Hello world hello WORLD HeLLo wOrLd',
];

const hard = [
  'Hello, world!', 'hello world', '  leading spaces', 'trailing spaces   ', '   ',
  '', 'a', '.', 'multiple   spaces    between', 'tab\tseparated\twords', 'new\nline\nwords',
  'carriage\r\nreturn', 'mixed \t\n whitespace', 'Café', 'Cafe\u0301', 'naïve na\u0131\u0308ve',
  'résumé re\u0301sume\u0301', 'ÅNGSTRÖM', 'İstanbul', 'ß straße STRASSE', 'Ǆ ǅ ǆ',
  '我爱你', '我爱自然语言处理', '北京是中国的首都。', '今天天气很好！', 'こんにちは世界',
  '한국어 문장', '\uAC00\u11A8', 'สวัสดีครับ', 'ภาษาไทย', 'Привет мир', 'Ελληνικά',
  '😀', '👍🏽', '👨‍👩‍👧', '❤️', 'emoji😀inside', 'a\u200db', 'zero\u200bwidth',
  '12345', '3.14159', '1,000,000', 'abc123def', '٣٤٥ ١٢', '½ ² ³', 'x²+y²',
  'don\'t', 'it\'s we\'re', 'I\'M YOU\'LL', '"quoted"', '(parens) [brackets] {braces}',
  '...!!!???', '--dashes--', 'e-mail@example.com', 'http://example.org/a?b=c',
  'supercalifragilisticexpialidocious', 'a'.repeat(120), 'ab'.repeat(70),
  'pneumonoultramicroscopicsilicovolcanoconiosis is long',
  'The cat sat on the mat.', 'THE CAT SAT', 'the\u00a0cat\u2003sat\u3000on',
  'control\u0001chars\u0007here', 'del\u007fbyte', 'replacement\ufffdchar', 'soft\u00adhyphen',
  'Ｆｕｌｌｗｉｄｔｈ ＡＢＣ', 'ﬁ ligature ﬀ', 'Ⅻ roman', 'mixed English 和中文 text',
  'русский and English', 'עברית ועוד', 'العربية نص', 'हिन्दी पाठ', '\u0915\u094d\u0937',
  // BertNormalizer's clean_text drops Cc, Cf, Co, Cs but keeps unassigned code points and
  // noncharacters (Cn): their word becomes [UNK] (issue 41)
  'a\uffffb', 'x \uffff y', '\u0378z', 'non\ufdd0char', 'priv\ue000ate',
];

// A seeded generator for the random cross-check.
let seed = 12345;
function rnd() {  // mulberry32
  seed = (seed + 0x6D2B79F5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const alphabet = Array.from('aabcdeefghiilmnoorsttu  AEIOUTH.,;!?\'-0123456789éüñçø我爱中文ไทย😀👍\t\n\u0301\u00a0€');
const words = corpus.join(' ').split(/\s+/);
function randomText() {
  const n = Math.floor(rnd() * 12);
  let s = '';
  for (let i = 0; i < n; i++) {
    const r = rnd();
    if (r < 0.5) s += words[Math.floor(rnd() * words.length)];
    else if (r < 0.85) for (let k = Math.floor(rnd() * 6); k >= 0; k--) s += alphabet[Math.floor(rnd() * alphabet.length)];
    else s += ['[MASK]', '<mask>', '[SEP]', '<s>', ' ', '  ', '\n'][Math.floor(rnd() * 7)];
    if (rnd() < 0.7) s += ' ';
  }
  return s;
}

// Character (code point) offsets -> UTF-8 byte offsets.
function byteOffsets(text, offsets) {
  const cps = Array.from(text);
  const pos = [0];
  for (const c of cps) pos.push(pos[pos.length - 1] + Buffer.byteLength(c, 'utf8'));
  return offsets.map(([a, b]) => [pos[a], pos[b]]);
}

function wordLevelVocab(base, n) {
  // the pieces the library's own normalizer and pre-tokenizer make of the corpus
  const t = Tokenizer.fromString(JSON.stringify(base));
  const norm = t.getNormalizer(), pre = t.getPreTokenizer();
  const count = new Map();
  for (const line of corpus.concat(hard.slice(0, 30))) {
    const s = norm ? norm.normalizeString(line) : line;
    const pieces = pre ? pre.preTokenizeString(s).map(p => p[0]) : [s];
    for (const p of pieces) count.set(p, (count.get(p) || 0) + 1);
  }
  const sorted = [...count.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return sorted.slice(0, n).map(e => e[0]);
}

function vocabObject(specials, pieces) {
  const v = {};
  let id = 0;
  for (const s of specials) v[s] = id++;
  for (const p of pieces) if (!(p in v)) v[p] = id++;
  return v;
}

function added(list) {
  return list.map(([id, content, o]) => Object.assign({ id, content, single_word: false, lstrip: false,
    rstrip: false, normalized: false, special: true }, o || {}));
}

function base(model, normalizer, pre, post, addedTokens) {
  return { version: '1.0', truncation: null, padding: null, added_tokens: addedTokens || [],
    normalizer: normalizer || null, pre_tokenizer: pre || null, post_processor: post || null,
    decoder: null, model };
}

const bertVocab = fs.readFileSync(path.join(here, '..', 'bert-base-uncased-vocab.txt'), 'utf8')
  .split('\n').filter((l, i, a) => i < a.length - 1 || l.length);
const bertV = {};
bertVocab.forEach((t, i) => { if (!(t in bertV)) bertV[t] = i; else bertV[t] = i; });
const casedVocab = fs.readFileSync(path.join(here, '..', 'small-cased-vocab.txt'), 'utf8')
  .split('\n').filter((l, i, a) => i < a.length - 1 || l.length);
const casedV = {};
casedVocab.forEach((t, i) => { casedV[t] = i; });

const bertAdded = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map(t => [bertV[t], t]);
const casedAdded = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].filter(t => t in casedV).map(t => [casedV[t], t]);

const specialsRob = ['<s>', '<pad>', '</s>', '<unk>', '<mask>'];
const pipelines = [];

// 1. BERT uncased, exactly as bert-base-uncased's tokenizer.json.
pipelines.push(['bert-uncased', base(
  { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: bertV },
  { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  { type: 'BertPreTokenizer' },
  { type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
           { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
    special_tokens: { '[CLS]': { id: '[CLS]', ids: [bertV['[CLS]']], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [bertV['[SEP]']], tokens: ['[SEP]'] } } },
  added(bertAdded))]);

// 2. BERT cased (DistilBERT/ELECTRA style): no lower case, accents kept, BertProcessing.
pipelines.push(['bert-cased', base(
  { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: casedV },
  { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: false },
  { type: 'BertPreTokenizer' },
  { type: 'BertProcessing', sep: ['[SEP]', casedV['[SEP]']], cls: ['[CLS]', casedV['[CLS]']] },
  added(casedAdded))]);

// 3. BERT with strip_accents but no lower case, CJK off, WordPiece with a short word limit.
pipelines.push(['bert-strip', base(
  { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 12, vocab: bertV },
  { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: false, strip_accents: true, lowercase: false },
  { type: 'BertPreTokenizer' },
  { type: 'BertProcessing', sep: ['[SEP]', bertV['[SEP]']], cls: ['[CLS]', bertV['[CLS]']] },
  added(bertAdded))]);

function wl(name, normalizer, pre, post, specials, addedOpts, n) {
  const b0 = base({ type: 'WordLevel', vocab: { '<unk>': 0 }, unk_token: '<unk>' }, normalizer, pre, null, []);
  const pieces = wordLevelVocab(b0, n || 400);
  const v = vocabObject(specials, pieces);
  const postp = typeof post === 'function' ? post(v) : post;
  const unk = specials.includes('<unk>') ? '<unk>' : specials[0];
  pipelines.push([name, base({ type: 'WordLevel', vocab: v, unk_token: unk }, normalizer, pre, postp,
    added(specials.map(s => [v[s], s, (addedOpts || {})[s]])))]);
}

// 4. RoBERTa-style byte level: ByteLevel pre-tokenizer, RobertaProcessing, <mask> lstrip.
wl('wl-roberta', null, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
  v => ({ type: 'RobertaProcessing', sep: ['</s>', v['</s>']], cls: ['<s>', v['<s>']], trim_offsets: true, add_prefix_space: false }),
  specialsRob, { '<mask>': { lstrip: true } });
// 5. GPT-2 style with add_prefix_space and the ByteLevel post-processor.
wl('wl-gpt2', null, { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true }, ['<|endoftext|>']);
// 6. ByteLevel without the regex, after a Split on spaces (merged with the next word).
wl('wl-bytelevel-split', { type: 'NFC' },
  { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithNext', invert: false },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] },
  v => ({ type: 'Sequence', processors: [{ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [v['<s>']], tokens: ['<s>'] } } }] }),
  ['<s>', '<unk>']);
// 7. XLM-R / ALBERT style text handling: Metaspace (always), NFD, StripAccents, Lowercase.
wl('wl-metaspace', { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Lowercase' },
    { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }] },
  { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
  v => ({ type: 'TemplateProcessing', single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
    special_tokens: { '[CLS]': { id: '[CLS]', ids: [v['[CLS]']], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [v['[SEP]']], tokens: ['[SEP]'] } } }),
  ['<pad>', '<unk>', '[CLS]', '[SEP]', '[MASK]'], { '[MASK]': { lstrip: true, rstrip: false } });
// 8. Metaspace first/no split, Prepend + Strip normalizers, Digits and Punctuation.
wl('wl-meta-first', { type: 'Sequence', normalizers: [{ type: 'Strip', strip_left: true, strip_right: true },
    { type: 'Prepend', prepend: '>' }, { type: 'Replace', pattern: { String: 'the' }, content: 'THE' }] },
  { type: 'Sequence', pretokenizers: [{ type: 'Metaspace', replacement: '_', prepend_scheme: 'first', split: true },
    { type: 'Digits', individual_digits: true }, { type: 'Punctuation', behavior: 'Isolated' }] },
  null, ['<unk>', '<mask>'], { '<mask>': { special: false, normalized: true, single_word: true } });
// 9. Whitespace pre-tokenizer, Lowercase, Digits contiguous, added tokens with rstrip.
wl('wl-whitespace', { type: 'Lowercase' },
  { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, { type: 'Digits', individual_digits: false }] },
  null, ['<unk>', '[MASK]', '[SEP]'], { '[MASK]': { rstrip: true, lstrip: true } });
// 10. Split with regexes and every behaviour, inverted too.
wl('wl-split', { type: 'NFC' },
  { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'Removed', invert: false },
    { type: 'Split', pattern: { Regex: '[\\p{P}\\p{S}]' }, behavior: 'MergedWithPrevious', invert: false },
    { type: 'Split', pattern: { Regex: '\\p{N}+' }, behavior: 'Contiguous', invert: false },
    { type: 'Split', pattern: { Regex: '\\p{Han}|\\p{Thai}' }, behavior: 'Isolated', invert: false },
    { type: 'Split', pattern: { Regex: '[aeiou]' }, behavior: 'MergedWithNext', invert: true }] },
  null, ['<unk>'], null, 500);
// 11. WhitespaceSplit, Punctuation Contiguous, non-special normalized added tokens.
wl('wl-wssplit', { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: false, lowercase: true },
  { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Punctuation', behavior: 'Contiguous' }] },
  null, ['<unk>', 'hello', 'the cat'], { 'hello': { special: false, normalized: true }, 'the cat': { special: false, normalized: true } });

// 12. NFKC (XLNet/ALBERT-style compatibility folding) and 13. NFKD with Whitespace.
wl('wl-nfkc', { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }] },
  { type: 'WhitespaceSplit' }, null, ['<unk>'], null, 500);
wl('wl-nfkd', { type: 'NFKD' }, { type: 'Whitespace' }, null, ['<unk>'], null, 500);

// 14.-17. The subword models' tokenizer files (tests/tokenizer/models, trained there with
// the library: byte-level BPE as GPT-2/RoBERTa, BPE with affixes, Unigram with Metaspace as
// XLM-R/ALBERT, with byte fallback, and an spm_train model with its Precompiled charsmap)
// through the whole pipeline; read where they are, not copied.  Not bpe-affix yet: its
// byte_fallback pieces of a continuing_subword_prefix / end_of_word_suffix get offsets from
// the Rust library's char converter that the pipeline does not reproduce (the ids match).
for (const name of ['bpe-bytelevel', 'unigram-metaspace', 'unigram-bytefallback', 'spm-unigram'])
  pipelines.push(['full-' + name, null, path.join('..', 'models', name + '.json')]);

// 18.-19. The rotary decoders' byte-level BPE (issue 33): the bpe-bytelevel model's vocabulary
// and merges behind Llama 3's pre-tokenizer (Split by its pattern, Isolated, then ByteLevel
// without its own regex; ignore_merges as Llama 3's model sets it) and Qwen2's (NFC first, the
// same kind of pattern with \p{N} one digit at a time); ByteLevel post-processing, no BOS.
{
  const bl = JSON.parse(fs.readFileSync(path.join(here, '..', 'models', 'bpe-bytelevel.json'), 'utf8'));
  const llama3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const qwen2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const pre = pattern => ({ type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] });
  const post = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true };
  pipelines.push(['bpe-llama3', base(Object.assign({}, bl.model, { ignore_merges: true }), null, pre(llama3), post)]);
  pipelines.push(['bpe-qwen2', base(bl.model, { type: 'NFC' }, pre(qwen2), post)]);
}

// 20. ModernBERT's layout (issue 34; answerdotai/ModernBERT-base: OLMo's byte-level BPE, NFC,
// ByteLevel with its regex and no prefix space, [CLS] A [SEP] (B [SEP]) by TemplateProcessing,
// [PAD] [UNK] [CLS] [SEP] [MASK] added after the vocabulary, [MASK] with lstrip) over the
// bpe-bytelevel model's vocabulary and merges.
{
  const bl = JSON.parse(fs.readFileSync(path.join(here, '..', 'models', 'bpe-bytelevel.json'), 'utf8'));
  let next = Math.max(...Object.values(bl.model.vocab)) + 1;
  const ids = {};
  for (const t of ['[UNK]', '[CLS]', '[SEP]', '[PAD]', '[MASK]']) ids[t] = next++;
  const post = { type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    special_tokens: { '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] } } };
  pipelines.push(['bpe-modernbert', base(Object.assign({}, bl.model, { unk_token: null, fuse_unk: false, byte_fallback: false }),
    { type: 'NFC' }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }, post,
    added(Object.entries(ids).map(([t, id]) => [id, t, t === '[MASK]' ? { lstrip: true } : {}])))]);
}

// 21.-23. SentencePiece BPE with byte fallback (issue 33: Llama 2, Gemma, Mistral's legacy-free
// files): a BPE trained here by the library on the corpus and data/models/demo's held-out text
// with Metaspace words (▁ before each), cut to the merges whose parts are known; <0x00>..<0xFF>
// byte tokens, an alphabet of ASCII, ▁ and a few accented letters (so Chinese, Thai and emoji
// fall back to bytes), fuse_unk.  Llama 2 (convert_slow_tokenizer's LlamaConverter, legacy):
// normalizer Prepend ▁ + Replace " " -> ▁, no pre-tokenizer, <s> $A / <s> $A <s> $B.  Gemma
// (GemmaConverter): Replace " " -> ▁ only, no prefix, <bos> $A, its specials <pad> <eos> <bos>
// <unk> first.  Metaspace (legacy false): no normalizer, Metaspace prepend_scheme first, split
// false, <s> $A.
{
  const os = require('os');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spbpe-'));
  const text = path.join(tmp, 'corpus.txt');
  const held = path.join(here, '..', '..', '..', 'data', 'models', 'demo', 'train', 'heldout.txt');
  fs.writeFileSync(text, corpus.join('\n') + '\n' + (fs.existsSync(held) ? fs.readFileSync(held, 'utf8') : ''));
  const { BPE, metaspacePreTokenizer } = require('tokenizers');
  const trainer = new Tokenizer(BPE.empty());
  trainer.setPreTokenizer(metaspacePreTokenizer('\u2581', 'always', true));
  trainer.train([text]);
  trainer.save(path.join(tmp, 'bpe.json'));
  const trained = JSON.parse(fs.readFileSync(path.join(tmp, 'bpe.json'), 'utf8'));
  fs.rmSync(tmp, { recursive: true, force: true });
  const spModel = specials => {
    const vocab = {};
    let id = 0;
    const add = t => { if (!(t in vocab)) vocab[t] = id++; };
    for (const t of specials) add(t);
    for (let b = 0; b < 256; b++) add('<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>');
    const alpha = Array.from('\u2581abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?\'"-()éèàçüñ');
    for (const c of alpha) add(c);
    const merges = [];
    for (const m of trained.model.merges) {
      const [a, b] = Array.isArray(m) ? m : m.split(' ');
      if (!(a in vocab) || !(b in vocab) || merges.length >= 1500)
        continue;
      merges.push([a, b]);
      add(a + b);
    }
    return { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab, merges };
  };
  const template = (bos, id) => ({ type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { [bos]: { id: bos, ids: [id], tokens: [bos] } } });
  const llama = spModel(['<unk>', '<s>', '</s>']);
  const specialsOf = (m, list) => added(list.map(t => [m.vocab[t], t, {}]));
  pipelines.push(['spbpe-llama2', base(llama, { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' },
    { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] }, null, template('<s>', 1),
    specialsOf(llama, ['<unk>', '<s>', '</s>']))]);
  const gemma = spModel(['<pad>', '<eos>', '<bos>', '<unk>']);
  pipelines.push(['spbpe-gemma', base(gemma, { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }, null,
    template('<bos>', 2), specialsOf(gemma, ['<pad>', '<eos>', '<bos>', '<unk>']))]);
  pipelines.push(['spbpe-metaspace', base(llama, null,
    { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false }, template('<s>', 1),
    specialsOf(llama, ['<unk>', '<s>', '</s>']))]);
}

// 24. DeBERTa-v3's layout (issue 34; microsoft/deberta-v3-base as transformers'
// DebertaV2Converter writes it): Unigram with [PAD] [CLS] [SEP] [UNK] as ids 0-3 (unk_id 3) and
// [MASK] added after the vocabulary, the normalizer Strip, Precompiled (the spm_train model's
// charsmap), Replace(" {2,}" -> " "), Metaspace (prepend_scheme always), [CLS] A [SEP] (B [SEP]
// with type id 1) by TemplateProcessing; over the spm-unigram model's pieces and scores.
{
  const spm = JSON.parse(fs.readFileSync(path.join(here, '..', 'models', 'spm-unigram.json'), 'utf8'));
  const specials = ['[PAD]', '[CLS]', '[SEP]', '[UNK]'];
  const vocab = specials.map(t => [t, 0]).concat(spm.model.vocab.filter(([p]) => !['<unk>', '<s>', '</s>'].includes(p)));
  const mask = vocab.length;
  const post = { type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
    special_tokens: { '[CLS]': { id: '[CLS]', ids: [1], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [2], tokens: ['[SEP]'] } } };
  const precompiled = spm.normalizer.normalizers.find(n => n.type === 'Precompiled');
  pipelines.push(['unigram-deberta', base({ type: 'Unigram', unk_id: 3, byte_fallback: false, vocab },
    { type: 'Sequence', normalizers: [{ type: 'Strip', strip_left: true, strip_right: true }, precompiled,
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    { type: 'Sequence', pretokenizers: [{ type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true }] },
    post, added(specials.map((t, i) => [i, t]).concat([[mask, '[MASK]']])))]);
}

// 25. T5's layout (issue 34; T5TokenizerFast's converter: SentencePiece Unigram with <pad> </s>
// <unk> first and unk_id 2, runs of spaces replaced by one, Metaspace with the prefix always,
// "$A </s>" / "$A </s> $B </s>" by TemplateProcessing, sentinel <extra_id_N> tokens added after
// the vocabulary; no Precompiled charsmap: the charsmap has its own tests) over the
// unigram-metaspace model's pieces.
{
  const um = JSON.parse(fs.readFileSync(path.join(here, '..', 'models', 'unigram-metaspace.json'), 'utf8'));
  const vocab = [['<pad>', 0], ['</s>', 0], ['<unk>', 0]].concat(um.model.vocab.filter(p => p[0] !== '<unk>'));
  const n = vocab.length;
  const post = { type: 'TemplateProcessing',
    single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
    pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
    special_tokens: { '</s>': { id: '</s>', ids: [1], tokens: ['</s>'] } } };
  pipelines.push(['unigram-t5', base({ type: 'Unigram', unk_id: 2, vocab, byte_fallback: false },
    { type: 'Sequence', normalizers: [{ type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true }, post,
    added([[0, '<pad>'], [1, '</s>'], [2, '<unk>'], [n, '<extra_id_1>'], [n + 1, '<extra_id_0>']]))]);
}

// With names as arguments, only those pipelines are written and index.txt keeps its other lines.
const only = process.argv.slice(2);

async function main() {
  const index = only.length ? fs.readFileSync(path.join(here, 'index.txt'), 'utf8').split('\n').filter(l => l) : [];
  for (const [name, json, kept] of pipelines) {
    if (only.length && !only.includes(name))
      continue;
    const file = kept || name + '.tokenizer.json';
    if (!kept)
      Tokenizer.fromString(JSON.stringify(json)).save(path.join(here, file), false);
    const back = Tokenizer.fromFile(path.join(here, file));
    const cases = [];
    const texts = hard.map(t => [t, null]);
    for (let i = 0; i + 1 < hard.length; i += 7) texts.push([hard[i], hard[i + 1]]);
    texts.push(['[MASK] the cat [SEP] <mask> sat', 'on <s> the </s> mat']);
    texts.push(['Hello [MASK]!', null], ['Hello<mask>', null], ['the cat sat', 'the cat sat too']);
    seed = 777 + name.length;
    for (let i = 0; i < (kept || name.startsWith('bpe-') || name.startsWith('spbpe-') ? 600 : 1500); i++) texts.push([randomText(), rnd() < 0.2 ? randomText() : null]);
    for (let i = 0; i < (kept || name.startsWith('bpe-') || name === 'unigram-deberta' ? 600 : 1500); i++) texts.push([randomText(), rnd() < 0.2 ? randomText() : null]);
    for (const [text, pair] of texts) {
      const e = await back.encode(text, pair, { addSpecialTokens: true });
      const offs = e.getOffsets();
      const seq = e.getSequenceIds();
      const o = [];
      for (let k = 0; k < offs.length; k++) {
        const src = seq[k] === 1 ? pair : text;
        o.push(seq[k] === null || seq[k] === undefined ? [0, 0] : byteOffsets(src, [offs[k]])[0]);
      }
      cases.push({ text, pair, ids: e.getIds(), tokens: e.getTokens(), offsets: o, type_ids: e.getTypeIds(),
        words: e.getWordIds().map(w => (w === null || w === undefined ? -1 : w)),
        special: e.getSpecialTokensMask(), seq: seq.map(s => (s === null || s === undefined ? -1 : s)) });
    }
    fs.writeFileSync(path.join(here, name + '.cases.json'), JSON.stringify(cases) + '\n');
    if (!index.includes(kept ? name + ' ' + kept : name))
      index.push(kept ? name + ' ' + kept : name);
    console.log(name, cases.length, 'cases');
  }
  fs.writeFileSync(path.join(here, 'index.txt'), index.join('\n') + '\n');
}
main().catch(e => { console.error(e); process.exit(1); });
