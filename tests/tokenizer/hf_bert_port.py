"""A plain-Python port of Hugging Face's slow BertTokenizer (transformers 4.3x-4.5x):
PreTrainedTokenizer.tokenize (lower-casing outside special tokens, splitting on special
tokens written in the text), BasicTokenizer, WordpieceTokenizer and longest-first
truncation.  It uses Python's own unicodedata, so it is independent of the C tables
(engine/tokenize/tables/unicode-tables.c, generated from Debian's UCD files).

HF's slow tokenizer gives no offsets, so `TrackedBert` reruns the same steps character
by character, carrying each character's byte span in the original text; `encode` checks
that it yields exactly the tokens of the literal port before trusting its spans.

No dependency beyond the standard library: used by gen_fixtures.py (once, to write the
committed fixtures) and by diff_random.py (a randomised comparison with the C code).
"""
import collections
import re
import unicodedata

SPECIAL_TOKENS = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"]


# ---- HF tokenization_utils helpers (verbatim logic) -------------------------------------

def _is_whitespace(char):
    if char == " " or char == "\t" or char == "\n" or char == "\r":
        return True
    cat = unicodedata.category(char)
    if cat == "Zs":
        return True
    return False


def _is_control(char):
    if char == "\t" or char == "\n" or char == "\r":
        return False
    cat = unicodedata.category(char)
    if cat.startswith("C"):
        return True
    return False


def _is_punctuation(char):
    cp = ord(char)
    if (cp >= 33 and cp <= 47) or (cp >= 58 and cp <= 64) or (cp >= 91 and cp <= 96) or (cp >= 123 and cp <= 126):
        return True
    cat = unicodedata.category(char)
    if cat.startswith("P"):
        return True
    return False


def _is_chinese_char(cp):
    return ((cp >= 0x4E00 and cp <= 0x9FFF) or (cp >= 0x3400 and cp <= 0x4DBF)
            or (cp >= 0x20000 and cp <= 0x2A6DF) or (cp >= 0x2A700 and cp <= 0x2B73F)
            or (cp >= 0x2B740 and cp <= 0x2B81F) or (cp >= 0x2B820 and cp <= 0x2CEAF)
            or (cp >= 0xF900 and cp <= 0xFAFF) or (cp >= 0x2F800 and cp <= 0x2FA1F))


def load_vocab(vocab_file):
    vocab = collections.OrderedDict()
    with open(vocab_file, "r", encoding="utf-8") as reader:
        tokens = reader.readlines()
    for index, token in enumerate(tokens):
        token = token.rstrip("\n")
        vocab[token] = index
    return vocab


def whitespace_tokenize(text):
    text = text.strip()
    if not text:
        return []
    return text.split()


class BasicTokenizer:
    def __init__(self, do_lower_case=True, never_split=None, tokenize_chinese_chars=True,
                 strip_accents=None, do_split_on_punc=True):
        self.do_lower_case = do_lower_case
        self.never_split = set(never_split or [])
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.strip_accents = strip_accents
        self.do_split_on_punc = do_split_on_punc

    def tokenize(self, text, never_split=None):
        never_split = self.never_split.union(set(never_split)) if never_split else self.never_split
        text = self._clean_text(text)
        if self.tokenize_chinese_chars:
            text = self._tokenize_chinese_chars(text)
        unicode_normalized_text = unicodedata.normalize("NFC", text)
        orig_tokens = whitespace_tokenize(unicode_normalized_text)
        split_tokens = []
        for token in orig_tokens:
            if token not in never_split:
                if self.do_lower_case:
                    token = token.lower()
                    if self.strip_accents is not False:
                        token = self._run_strip_accents(token)
                elif self.strip_accents:
                    token = self._run_strip_accents(token)
            split_tokens.extend(self._run_split_on_punc(token, never_split))
        return whitespace_tokenize(" ".join(split_tokens))

    def _run_strip_accents(self, text):
        text = unicodedata.normalize("NFD", text)
        return "".join(c for c in text if unicodedata.category(c) != "Mn")

    def _run_split_on_punc(self, text, never_split=None):
        if not self.do_split_on_punc or (never_split is not None and text in never_split):
            return [text]
        output = []
        start_new_word = True
        for char in text:
            if _is_punctuation(char):
                output.append([char])
                start_new_word = True
            else:
                if start_new_word:
                    output.append([])
                start_new_word = False
                output[-1].append(char)
        return ["".join(x) for x in output]

    def _tokenize_chinese_chars(self, text):
        output = []
        for char in text:
            if _is_chinese_char(ord(char)):
                output += [" ", char, " "]
            else:
                output.append(char)
        return "".join(output)

    def _clean_text(self, text):
        output = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or _is_control(char):
                continue
            output.append(" " if _is_whitespace(char) else char)
        return "".join(output)


class WordpieceTokenizer:
    def __init__(self, vocab, unk_token, max_input_chars_per_word=100):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text):
        output_tokens = []
        for token in whitespace_tokenize(text):
            chars = list(token)
            if len(chars) > self.max_input_chars_per_word:
                output_tokens.append(self.unk_token)
                continue
            is_bad = False
            start = 0
            sub_tokens = []
            while start < len(chars):
                end = len(chars)
                cur_substr = None
                while start < end:
                    substr = "".join(chars[start:end])
                    if start > 0:
                        substr = "##" + substr
                    if substr in self.vocab:
                        cur_substr = substr
                        break
                    end -= 1
                if cur_substr is None:
                    is_bad = True
                    break
                sub_tokens.append(cur_substr)
                start = end
            if is_bad:
                output_tokens.append(self.unk_token)
            else:
                output_tokens.extend(sub_tokens)
        return output_tokens


class BertTokenizerPort:
    """BertTokenizer + the parts of PreTrainedTokenizer it relies on."""

    def __init__(self, vocab_file, do_lower_case=True, tokenize_chinese_chars=True, strip_accents=None):
        self.vocab = load_vocab(vocab_file)
        self.do_lower_case = do_lower_case
        self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case,
                                              tokenize_chinese_chars=tokenize_chinese_chars,
                                              strip_accents=strip_accents)
        self.wordpiece_tokenizer = WordpieceTokenizer(self.vocab, "[UNK]")
        self.all_special_tokens = list(SPECIAL_TOKENS)

    def _split_on_added_tokens(self, text):
        """Trie.split for tokens none of which is a prefix of another: leftmost matches."""
        out, i, last = [], 0, 0
        while i < len(text):
            hit = None
            for t in self.all_special_tokens:
                if text.startswith(t, i) and (hit is None or len(t) > len(hit)):
                    hit = t
            if hit:
                if i > last:
                    out.append(text[last:i])
                out.append(hit)
                i += len(hit)
                last = i
            else:
                i += 1
        if last < len(text):
            out.append(text[last:])
        return out

    def tokenize(self, text):
        if self.do_lower_case:
            escaped = [re.escape(t) for t in self.all_special_tokens]
            pattern = r"(" + r"|".join(escaped) + r")|" + r"(.+?)"
            text = re.sub(pattern, lambda m: m.groups()[0] or m.groups()[1].lower(), text)
        tokens = self._split_on_added_tokens(text)
        out = []
        for token in tokens:
            if not token:
                continue
            if token in self.all_special_tokens:
                out.append(token)
            else:
                out.extend(self._tokenize(token))
        return out

    def _tokenize(self, text):
        split_tokens = []
        for token in self.basic_tokenizer.tokenize(text, never_split=self.all_special_tokens):
            if token in self.basic_tokenizer.never_split:
                split_tokens.append(token)
            else:
                split_tokens += self.wordpiece_tokenizer.tokenize(token)
        return split_tokens

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab.get(t, self.vocab.get("[UNK]")) for t in tokens]

    def encode(self, text, text_pair=None, max_length=0):
        """HF __call__(text, text_pair, truncation=bool(max_length), max_length)."""
        ids = self.convert_tokens_to_ids(self.tokenize(text))
        pair_ids = self.convert_tokens_to_ids(self.tokenize(text_pair)) if text_pair is not None else None
        n_special = 3 if pair_ids is not None else 2
        total = len(ids) + (len(pair_ids) if pair_ids is not None else 0) + n_special
        removed = 0
        if max_length and total > max_length:
            ids, pair_ids = truncate_longest_first(ids, pair_ids, total - max_length)
            removed = total - max_length
        cls, sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
        if pair_ids is None:
            return [cls] + ids + [sep], [0] * (len(ids) + 2), removed
        return ([cls] + ids + [sep] + pair_ids + [sep],
                [0] * (len(ids) + 2) + [1] * (len(pair_ids) + 1), removed)


def truncate_longest_first(ids, pair_ids, num_tokens_to_remove):
    """tokenization_utils_base.truncate_sequences, LONGEST_FIRST, truncation_side right."""
    if pair_ids is None:
        assert len(ids) > num_tokens_to_remove
        return ids[:-num_tokens_to_remove], None
    len_pair_ids = len(pair_ids)
    len_ids = len(ids)
    first_remove = min(abs(len_pair_ids - len_ids), num_tokens_to_remove)
    second_remove = num_tokens_to_remove - first_remove
    if len_ids > len_pair_ids:
        ids_to_move = first_remove + second_remove // 2
        pair_ids_to_move = second_remove - second_remove // 2
    else:
        ids_to_move = second_remove // 2
        pair_ids_to_move = first_remove + second_remove - (second_remove // 2)
    ids = ids[:-ids_to_move] if ids_to_move > 0 else ids
    pair_ids = pair_ids[:-pair_ids_to_move] if pair_ids_to_move > 0 else pair_ids
    return ids, pair_ids


# ---- the same steps, character by character, with byte spans ---------------------------

def _compose_pair(a, b):
    """The primary composite of a + b, or None (via Python's NFC of the two characters)."""
    s = unicodedata.normalize("NFC", a + b)
    return s if len(s) == 1 and s != a else None


def _nfd_tracked(chars):
    out = []
    for c, s, e in chars:
        for d in unicodedata.normalize("NFD", c):
            out.append((d, s, e))
    # canonical ordering across the whole sequence (stable, by combining class)
    i = 1
    while i < len(out):
        cc = unicodedata.combining(out[i][0])
        j = i
        while cc and j > 0 and unicodedata.combining(out[j - 1][0]) > cc:
            out[j - 1], out[j] = out[j], out[j - 1]
            j -= 1
        i += 1
    return out


def _nfc_tracked(chars):
    d = _nfd_tracked(chars)
    if not d:
        return d
    out = [list(d[0])]
    starter = 0 if unicodedata.combining(d[0][0]) == 0 else None
    last = 0 if starter == 0 else 256
    for c, s, e in d[1:]:
        cc = unicodedata.combining(c)
        if starter is not None and (last < cc or last == 0):
            comp = _compose_pair(out[starter][0], c)
            if comp:
                out[starter][0] = comp
                out[starter][1] = min(out[starter][1], s)
                out[starter][2] = max(out[starter][2], e)
                continue
        if cc == 0:
            starter = len(out)
        last = cc
        out.append([c, s, e])
    return [tuple(x) for x in out]


class TrackedBert:
    """The steps of BertTokenizerPort on (char, start, end) triples."""

    def __init__(self, port):
        self.p = port
        b = port.basic_tokenizer
        self.lower = b.do_lower_case
        # BasicTokenizer.tokenize: lower case strips unless strip_accents is False;
        # otherwise only strip_accents=True strips
        self.strip = (b.do_lower_case and b.strip_accents is not False) or (
            not b.do_lower_case and bool(b.strip_accents))
        self.chinese = b.tokenize_chinese_chars

    def _lower(self, chars):
        return [(l, s, e) for c, s, e in chars for l in c.lower()]

    def _wordpiece(self, chars, out):
        if not chars:
            return
        vocab = self.p.vocab
        ws, we = min(s for _, s, _ in chars), max(e for _, _, e in chars)
        if len(chars) > 100:
            out.append(("[UNK]", ws, we, False))
            return
        pieces, start = [], 0
        while start < len(chars):
            end = len(chars)
            hit = None
            while start < end:
                sub = "".join(c for c, _, _ in chars[start:end])
                if start > 0:
                    sub = "##" + sub
                if sub in vocab:
                    hit = sub
                    break
                end -= 1
            if hit is None:
                out.append(("[UNK]", ws, we, False))
                return
            seg = chars[start:end]
            pieces.append((hit, min(s for _, s, _ in seg), max(e for _, _, e in seg), False))
            start = end
        out.extend(pieces)

    def _word(self, chars, out):
        if "".join(c for c, _, _ in chars) in SPECIAL_TOKENS:
            self._wordpiece(chars, out)
            return
        if self.lower:
            chars = self._lower(chars)
        if self.strip:
            chars = [x for x in _nfd_tracked(chars) if unicodedata.category(x[0]) != "Mn"]
        run = []
        for x in chars:
            if _is_punctuation(x[0]):
                self._wordpiece(run, out)
                self._wordpiece([x], out)
                run = []
            else:
                run.append(x)
        self._wordpiece(run, out)

    def _chunk(self, chars, out):
        clean = []
        for c, s, e in chars:
            if ord(c) == 0 or ord(c) == 0xFFFD or _is_control(c):
                continue
            if _is_whitespace(c):
                clean.append((" ", s, e))
            elif self.chinese and _is_chinese_char(ord(c)):
                clean += [(" ", -1, -1), (c, s, e), (" ", -1, -1)]
            else:
                clean.append((c, s, e))
        norm = _nfc_tracked(clean)
        word = []
        for x in norm + [(" ", -1, -1)]:
            if x[0].isspace():
                if word:
                    self._word(word, out)
                word = []
            else:
                word.append(x)

    def tokenize(self, text):
        """[(token, start, end, special)] with byte spans into text."""
        offs = [0]
        for c in text:
            offs.append(offs[-1] + len(c.encode("utf-8")))
        chars = [(c, offs[i], offs[i + 1]) for i, c in enumerate(text)]
        out = []
        i = last = 0
        while i <= len(chars):
            hit = None
            if i < len(chars):
                for t in SPECIAL_TOKENS:
                    if t in self.p.vocab and text.startswith(t, i) and (hit is None or len(t) > len(hit)):
                        hit = t
            if i < len(chars) and not hit:
                i += 1
                continue
            if i > last:
                seg = chars[last:i]
                self._chunk(self._lower(seg) if self.lower else seg, out)
            if hit:
                out.append((hit, offs[i], offs[i + len(hit)], True))
                i += len(hit)
            else:
                i += 1
            last = i
        return out


def encode(port, text, text_pair=None, max_length=0):
    """Everything a fixture holds: tokens, ids, type ids, spans, segments, special flags,
    truncation.  Asserts the tracked tokens equal the literal port's."""
    tracked = TrackedBert(port)
    segs = [tracked.tokenize(text)] + ([tracked.tokenize(text_pair)] if text_pair is not None else [])
    for seg, t in zip(segs, [text, text_pair]):
        lit = port.tokenize(t)
        assert [x[0] for x in seg] == lit, (t, [x[0] for x in seg], lit)
    ids, type_ids, removed = port.encode(text, text_pair, max_length)
    a = segs[0]
    b = segs[1] if text_pair is not None else None
    if removed:
        a, b = truncate_longest_first(a, b, removed)
    rows = [("[CLS]", -1, -1, -1, True)]
    rows += [(t, s, e, 0, sp) for t, s, e, sp in a]
    rows += [("[SEP]", -1, -1, -1, True)]
    if b is not None:
        rows += [(t, s, e, 1, sp) for t, s, e, sp in b]
        rows += [("[SEP]", -1, -1, -1, True)]
    tokens = [r[0] for r in rows]
    assert port.convert_tokens_to_ids(tokens) == ids, (tokens, ids)
    return {
        "tokens": tokens,
        "ids": ids,
        "type_ids": type_ids,
        "starts": [r[1] for r in rows],
        "ends": [r[2] for r in rows],
        "segments": [r[3] for r in rows],
        "special": [r[4] for r in rows],
        "truncated": removed > 0,
        "n_dropped": removed,
    }
