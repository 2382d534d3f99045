"""BERT tokenization in plain Python, and a WordPiece vocabulary builder.

The tokenizer follows Hugging Face's BertTokenizer (slow, Python) with do_lower_case=True:
BasicTokenizer (clean text, space around CJK characters, NFC, whitespace split, lower-case,
strip accents via NFD minus Mn, split punctuation) then WordpieceTokenizer (greedy
longest-match-first, "##" continuations, a word with an unknown piece or longer than 100
characters becomes [UNK]).  Special tokens written in the text ("[MASK]") are kept whole, as
BertTokenizer's added-token splitting does.  The app's C tokenizer must give the same ids.

The vocabulary builder is the usual WordPiece training: start from the characters (word-initial
and "##" continuation forms), merge the most frequent adjacent pair until the target size,
then tokenize with greedy longest match (as the Hugging Face `tokenizers` WordPiece trainer).
"""

import collections
import heapq
import unicodedata

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def is_chinese_char(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def is_whitespace(ch):
    if ch in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def clean_text(text):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or is_control(ch):
            continue
        out.append(" " if is_whitespace(ch) else ch)
    return "".join(out)


def strip_accents(text):
    return "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")


def split_on_punc(text):
    out, cur = [], []
    for ch in text:
        if is_punctuation(ch):
            if cur:
                out.append("".join(cur))
                cur = []
            out.append(ch)
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def basic_tokenize(text):
    """BertTokenizer's BasicTokenizer with do_lower_case=True, tokenize_chinese_chars=True."""
    text = clean_text(text)
    text = "".join(f" {c} " if is_chinese_char(ord(c)) else c for c in text)
    text = unicodedata.normalize("NFC", text)
    out = []
    for tok in text.split():
        tok = strip_accents(tok.lower())
        out.extend(split_on_punc(tok))
    return " ".join(out).split()


class BertTokenizer:
    def __init__(self, vocab):
        """vocab: list of token strings, index = id."""
        self.vocab = list(vocab)
        self.ids = {t: i for i, t in enumerate(self.vocab)}
        self.unk_id = self.ids["[UNK]"]
        self.cls_id = self.ids["[CLS]"]
        self.sep_id = self.ids["[SEP]"]
        self.pad_id = self.ids["[PAD]"]
        self.mask_id = self.ids["[MASK]"]
        self._cache = {}

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls([ln.rstrip("\n") for ln in f])

    def wordpiece(self, word):
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        if len(word) > 100:
            res = [self.unk_id]
        else:
            res, start = [], 0
            while start < len(word):
                end, cur = len(word), None
                while start < end:
                    sub = word[start:end]
                    if start > 0:
                        sub = "##" + sub
                    if sub in self.ids:
                        cur = self.ids[sub]
                        break
                    end -= 1
                if cur is None:
                    res = [self.unk_id]
                    break
                res.append(cur)
                start = end
        if len(self._cache) < 500000:
            self._cache[word] = res
        return res

    def encode_text(self, text):
        """Ids of text without [CLS]/[SEP]; special tokens in the text are kept whole."""
        ids = []
        pieces = [text]
        for sp in SPECIALS:
            nxt = []
            for p in pieces:
                if p in SPECIALS:
                    nxt.append(p)
                    continue
                parts = p.split(sp)
                for i, part in enumerate(parts):
                    if i:
                        nxt.append(sp)
                    nxt.append(part)
            pieces = nxt
        for p in pieces:
            if p in SPECIALS:
                ids.append(self.ids[p])
                continue
            for w in basic_tokenize(p):
                ids.extend(self.wordpiece(w))
        return ids

    def encode(self, text, pair=None):
        """[CLS] text [SEP] (pair [SEP]); returns (ids, token_type_ids)."""
        a = self.encode_text(text)
        ids = [self.cls_id] + a + [self.sep_id]
        types = [0] * len(ids)
        if pair is not None:
            b = self.encode_text(pair)
            ids += b + [self.sep_id]
            types += [1] * (len(b) + 1)
        return ids, types

    def tokens(self, ids):
        return [self.vocab[i] for i in ids]


def build_vocab(texts, size, min_char_count=2, min_cjk_count=3, log=None):
    """WordPiece vocabulary of about `size` entries from an iterable of texts.

    Order: the specials (so [PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4), then the single
    characters (most frequent first, CJK characters included as whole tokens), their "##"
    forms for non-CJK, non-punctuation characters, then the merged pieces in merge order.
    """
    word_counts = collections.Counter()
    for t in texts:
        word_counts.update(basic_tokenize(t))
    char_counts = collections.Counter()
    for w, c in word_counts.items():
        for ch in w:
            char_counts[ch] += c

    def keep_char(ch, c):
        if is_chinese_char(ord(ch)):
            return c >= min_cjk_count
        return c >= min_char_count

    chars = sorted((ch for ch, c in char_counts.items() if keep_char(ch, c)),
                   key=lambda ch: (-char_counts[ch], ch))
    vocab = list(SPECIALS) + chars
    for ch in chars:
        if not is_chinese_char(ord(ch)) and not is_punctuation(ch):
            vocab.append("##" + ch)
    seen = set(vocab)
    if log:
        log(f"vocab: {len(word_counts)} word types, {len(chars)} characters kept "
            f"({sum(1 for ch in chars if is_chinese_char(ord(ch)))} CJK), "
            f"{len(vocab)} entries before merges")

    # Words made of kept characters, longer than one character, as symbol lists.
    alphabet = set(chars)
    words, counts = [], []
    for w, c in sorted(word_counts.items()):
        if len(w) < 2 or len(w) > 100 or any(ch not in alphabet for ch in w):
            continue
        words.append([w[0]] + ["##" + ch for ch in w[1:]])
        counts.append(c)

    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for wi, syms in enumerate(words):
        for a, b in zip(syms, syms[1:]):
            pair_count[(a, b)] += counts[wi]
            where[(a, b)].add(wi)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)

    def merged(a, b):
        return a + b[2:]

    while len(vocab) < size and heap:
        negc, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -negc or negc == 0:
            continue  # stale heap entry
        if -negc < 2:
            break
        a, b = pair
        new = merged(a, b)
        if new not in seen:
            vocab.append(new)
            seen.add(new)
        touched = collections.Counter()
        for wi in list(where[pair]):
            syms = words[wi]
            c = counts[wi]
            for x, y in zip(syms, syms[1:]):
                pair_count[(x, y)] -= c
                touched[(x, y)] += 0
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            words[wi] = out
            for x, y in zip(out, out[1:]):
                pair_count[(x, y)] += c
                where[(x, y)].add(wi)
                touched[(x, y)] += 0
        del pair_count[pair]
        where.pop(pair, None)
        for p in touched:
            c = pair_count.get(p, 0)
            if c > 0:
                heapq.heappush(heap, (-c, p))
            else:
                pair_count.pop(p, None)
    return vocab
