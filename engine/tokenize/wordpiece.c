/* BERT's WordPiece tokenizer, token for token what Hugging Face's (Python) BertTokenizer
 * gives, plus the byte span of every token in the original text.
 *
 * HF's pipeline, which each step below follows:
 *   PreTrainedTokenizer.tokenize: with do_lower_case, every character outside special
 *     tokens is lower-cased on its own (a regex substitution, one character at a time);
 *     the text is split on special tokens written literally ("[MASK]").
 *   BasicTokenizer, on each piece between special tokens: drop U+0000, U+FFFD and C*
 *     characters; whitespace to ' '; spaces around CJK ideographs; NFC; split on
 *     whitespace; per word: lower-case, strip accents (NFD, drop Mn), split punctuation.
 *   WordpieceTokenizer: greedy longest match with "##" continuations; a word of more than
 *     100 characters, or one that cannot be covered, is a single [UNK].
 *   truncation=True: longest first, from the right.
 *
 * Each character carries the byte span of the original character(s) it came from through
 * every step (a composed character spans its parts), so a word piece's span is the union
 * of its characters' spans. */
#include "tokenize/encoding.h"
#include "core/cancel.h"
#include "core/files.h"
#include "core/json.h"
#include "core/name-map.h"
#include "tokenize/wordpiece.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tokenize/unicode.h"

enum { MAX_WORD_CHARS = 100 };   /* HF WordpieceTokenizer.max_input_chars_per_word */
enum { MAX_VOCAB_BYTES = 1 << 28 };   /* keeps line counts and the hash table in 32 bits */
/* tokenizer_config.json holds a few flags, special tokens and at most a chat template or an
 * added-tokens table: 16 MiB is far above any real one, and the size is checked before reading */
enum { MAX_TOKENIZER_CONFIG_BYTES = 16 << 20 };

/* In HF's SPECIAL_TOKENS_ATTRIBUTES order. */
static const char *const special_names[] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};
enum { SP_UNK, SP_SEP, SP_PAD, SP_CLS, SP_MASK, N_SPECIAL };
static const atn_token_role special_roles[] = {ATN_TOKEN_UNK, ATN_TOKEN_SEP, ATN_TOKEN_PAD,
                                               ATN_TOKEN_CLS, ATN_TOKEN_MASK};

typedef struct wordpiece_tok {
    atn_tokenizer base;           /* first: a wordpiece_tok * is an atn_tokenizer * */
    atn_wordpiece_options opts;   /* strip_accents resolved */
    char *pool;                   /* the vocabulary text, each token NUL-terminated */
    struct vocab_entry { uint32_t off, len; } *entries;   /* [n] id -> token in pool */
    int32_t n;
    atn_name_map map;             /* token -> id, keyed (core/name-map.h); keys in pool */
    uint32_t max_len;             /* the longest token, in bytes */
    int32_t special[N_SPECIAL];
} wordpiece_tok;

static const atn_tokenizer_ops wordpiece_ops;

/* ---- options ------------------------------------------------------------------ */

void atn_wordpiece_options_init(atn_wordpiece_options *o) {
    o->lower_case = true;
    o->strip_accents = -1;
    o->tokenize_chinese_chars = true;
}

static atn_status json_bool(const cJSON *root, const char *key, const char *path, bool *out,
                            bool *is_null, atn_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *is_null = !v || cJSON_IsNull(v);
    if (*is_null)
        return ATN_OK;
    if (!cJSON_IsBool(v))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" should be true, false or null", path, key);
    *out = cJSON_IsTrue(v);
    return ATN_OK;
}

atn_status atn_wordpiece_options_from_json(atn_wordpiece_options *o, const char *path,
                                           atn_error *err) {
    struct stat st;
    if (!path || stat(path, &st) != 0)
        return ATN_OK;
    char *text;
    size_t len;
    atn_status s = atn_read_file(path, MAX_TOKENIZER_CONFIG_BYTES, &text, &len, err);
    if (s != ATN_OK)
        return s;
    cJSON *root = NULL;
    s = atn_json_parse(text, len, path, 0, &root, err);
    if (s == ATN_OK && !cJSON_IsObject(root))
        s = atn_error_set(err, ATN_E_FORMAT, "%s: not a JSON object", path);
    if (s != ATN_OK) {
        cJSON_Delete(root);
        free(text);
        return s;
    }
    atn_wordpiece_options t = *o;
    bool b = false, null = true;
    if ((s = json_bool(root, "do_lower_case", path, &b, &null, err)) == ATN_OK && !null)
        t.lower_case = b;
    if (s == ATN_OK && (s = json_bool(root, "strip_accents", path, &b, &null, err)) == ATN_OK)
        t.strip_accents = null ? -1 : b;
    if (s == ATN_OK && (s = json_bool(root, "tokenize_chinese_chars", path, &b, &null, err)) == ATN_OK && !null)
        t.tokenize_chinese_chars = b;
    cJSON_Delete(root);
    free(text);
    if (s == ATN_OK)
        *o = t;
    return s;
}

/* ---- the vocabulary -------------------------------------------------------------------- */

/* Looks up prefix + s[0..n) (prefix "" or "##"); -1 when absent. */
static int32_t vocab_find(const wordpiece_tok *tok, const char *prefix, size_t np, const char *s,
                          size_t n) {
    if (np == 0)
        return atn_name_map_get_n(&tok->map, s, n);
    /* a word has at most MAX_WORD_CHARS characters of 4 bytes; nothing longer than the
       longest entry can match */
    char key[2 + 4 * MAX_WORD_CHARS];
    if (np + n > sizeof key || np + n > tok->max_len)
        return -1;
    memcpy(key, prefix, np);
    memcpy(key + np, s, n);
    return atn_name_map_get_n(&tok->map, key, np + n);
}

static void wp_free(wordpiece_tok *tok) {
    if (!tok)
        return;
    free(tok->pool);
    free(tok->entries);
    atn_name_map_clear(&tok->map);
    free(tok);
}

static atn_status check_vocab_size(size_t len, const char *origin, atn_error *err) {
    if (len == 0)
        return atn_error_set(err, ATN_E_FORMAT, "%s: empty vocabulary (expected one token per line)",
                             origin);
    if (len > MAX_VOCAB_BYTES)
        return atn_error_set(err, ATN_E_FORMAT, "%s: %zu bytes is too large for a vocabulary (at "
                             "most %d)", origin, len, MAX_VOCAB_BYTES);
    return ATN_OK;
}

/* Builds the tokenizer from pool[0..len) (NUL at pool[len]), taking ownership of pool. */
static wordpiece_tok *parse_vocab(char *pool, size_t len, const char *origin,
                                  const atn_wordpiece_options *o, atn_error *err) {
    wordpiece_tok *tok = calloc(1, sizeof *tok);
    if (!tok) {
        free(pool);
        goto nomem;
    }
    tok->base.ops = &wordpiece_ops;
    tok->pool = pool;

    /* Lines end with \n, \r\n or \r (Python's universal newlines); the last may have no
     * end.  Count them first. */
    size_t n_lines = 0;
    for (size_t i = 0; i < len; i++) {
        if (pool[i] == '\n' || (pool[i] == '\r' && (i + 1 == len || pool[i + 1] != '\n')))
            n_lines++;
    }
    if (pool[len - 1] != '\n' && pool[len - 1] != '\r')
        n_lines++;
    tok->n = (int32_t)n_lines;
    tok->entries = malloc(n_lines * sizeof *tok->entries);
    if (!tok->entries || !atn_name_map_init(&tok->map, n_lines))
        goto nomem;

    size_t start = 0;
    int32_t id = 0;
    for (size_t i = 0; i <= len && id < tok->n; i++) {
        if (i < len && pool[i] != '\n' && pool[i] != '\r')
            continue;
        if (atn_cancel_poll()) {
            atn_cancel_error(err, "reading the vocabulary");
            wp_free(tok);
            return NULL;
        }
        size_t n = i - start;
        size_t bad = atn_utf8_check((const unsigned char *)pool + start, n);
        if (bad != n) {
            atn_error_set(err, ATN_E_FORMAT, "%s: line %d (byte offset %zu): not valid UTF-8",
                          origin, id + 1, start + bad);
            wp_free(tok);
            return NULL;
        }
        tok->entries[id].off = (uint32_t)start;
        tok->entries[id].len = (uint32_t)n;
        if (n > tok->max_len)
            tok->max_len = (uint32_t)n;
        /* a repeated token keeps its last id, like HF's dict */
        if (atn_name_map_put_n(&tok->map, pool + start, n, id, true, NULL) < 0)
            goto nomem;
        /* end the token at its first line-end byte: with \r\n, the \r (else the text
           handed out would keep it) */
        bool crlf = i < len && pool[i] == '\r' && i + 1 < len && pool[i + 1] == '\n';
        if (i < len)
            pool[i] = '\0';
        if (crlf)
            i++;
        start = i + 1;
        id++;
    }

    for (int k = 0; k < N_SPECIAL; k++)
        tok->special[k] = vocab_find(tok, "", 0, special_names[k], strlen(special_names[k]));
    const int required[] = {SP_UNK, SP_CLS, SP_SEP};
    for (size_t k = 0; k < sizeof required / sizeof required[0]; k++) {
        if (tok->special[required[k]] < 0) {
            atn_error_set(err, ATN_E_FORMAT, "%s: the vocabulary (%d entries) has no %s token; a "
                          "BERT vocab.txt lists [PAD], [UNK], [CLS], [SEP] and [MASK]",
                          origin, tok->n, special_names[required[k]]);
            wp_free(tok);
            return NULL;
        }
    }

    atn_wordpiece_options_init(&tok->opts);
    if (o)
        tok->opts = *o;
    if (tok->opts.strip_accents < 0)
        tok->opts.strip_accents = tok->opts.lower_case ? 1 : 0;
    else
        tok->opts.strip_accents = tok->opts.strip_accents ? 1 : 0;
    return tok;

nomem:
    wp_free(tok);
    atn_error_set(err, ATN_E_NOMEM, "%s: out of memory loading %zu bytes", origin, len);
    return NULL;
}

atn_tokenizer *atn_wordpiece_from_buffer(const char *data, size_t len, const char *origin,
                                         const atn_wordpiece_options *o, atn_error *err) {
    if (!origin)
        origin = "vocabulary";
    if (!data && len) {
        atn_error_set(err, ATN_E_INVALID, "%s: no data", origin);
        return NULL;
    }
    if (check_vocab_size(len, origin, err) != ATN_OK)
        return NULL;
    char *pool = malloc(len + 1);
    if (!pool) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory loading %zu bytes", origin, len);
        return NULL;
    }
    memcpy(pool, data, len);
    pool[len] = '\0';
    wordpiece_tok *tok = parse_vocab(pool, len, origin, o, err);
    return tok ? &tok->base : NULL;
}

atn_tokenizer *atn_wordpiece_load(const char *vocab_path, const atn_wordpiece_options *o,
                                  atn_error *err) {
    if (!vocab_path) {
        atn_error_set(err, ATN_E_INVALID, "no vocabulary path given");
        return NULL;
    }
    char *data;
    size_t len;
    /* the cap before reading: a sparse 2 GiB vocab.txt cost 2 GB before the size check */
    if (atn_read_file(vocab_path, MAX_VOCAB_BYTES, &data, &len, err) != ATN_OK)
        return NULL;
    if (check_vocab_size(len, vocab_path, err) != ATN_OK) {
        free(data);
        return NULL;
    }
    wordpiece_tok *tok = parse_vocab(data, len, vocab_path, o, err);
    return tok ? &tok->base : NULL;
}

atn_wordpiece_options atn_wordpiece_options_of(const atn_tokenizer *t) {
    if (t && t->ops == &wordpiece_ops)
        return ((const wordpiece_tok *)t)->opts;
    atn_wordpiece_options o;
    atn_wordpiece_options_init(&o);
    return o;
}

/* The ops: the wrappers in tokenizer.c have checked tok (and token, out) for NULL. */

static int32_t wp_vocab_size(const atn_tokenizer *t) {
    return ((const wordpiece_tok *)t)->n;
}

static int32_t wp_token_to_id(const atn_tokenizer *t, const char *token) {
    return vocab_find((const wordpiece_tok *)t, "", 0, token, strlen(token));
}

static int32_t wp_special_id(const atn_tokenizer *t, atn_token_role role) {
    const wordpiece_tok *tok = (const wordpiece_tok *)t;
    for (int k = 0; k < N_SPECIAL; k++)
        if (special_roles[k] == role)
            return tok->special[k];
    return -1;
}

static bool wp_id_info(const atn_tokenizer *base, int32_t id, atn_vocab_entry *out) {
    const wordpiece_tok *tok = (const wordpiece_tok *)base;
    if (id < 0 || id >= tok->n)
        return false;
    const char *t = tok->pool + tok->entries[id].off;
    size_t len = tok->entries[id].len;
    out->text = t;
    out->role = ATN_TOKEN_WORD;
    for (int k = 0; k < N_SPECIAL; k++)   /* by name: a special token listed twice counts */
        if (strcmp(t, special_names[k]) == 0)
            out->role = special_roles[k];
    out->special = len > 2 && t[0] == '[' && t[len - 1] == ']';
    out->continuation = t[0] == '#' && t[1] == '#';
    out->surface = out->continuation ? t + 2 : t;
    return true;
}

/* One output word piece, before the special tokens are added around the segments. */
typedef struct piece {
    int32_t id;
    int32_t start, end;
    bool special;
    bool continuation;   /* a "##" piece */
    atn_token_role role;
} piece;

typedef struct pbuf {
    piece *v;
    size_t n, cap;
} pbuf;

static bool pbuf_push(pbuf *b, int32_t id, int32_t start, int32_t end, bool special,
                      bool continuation, atn_token_role role) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        piece *v = realloc(b->v, cap * sizeof *v);
        if (!v)
            return false;
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = (piece){id, start, end, special, continuation, role};
    return true;
}

/* Scratch buffers for one encode call.  Each step of a chunk writes its own buffer, so a
 * step's input is never its output: clean -> norm (a chunk), then word -> stripped (one
 * whitespace-separated word inside norm). */
typedef struct work {
    const wordpiece_tok *tok;
    atn_ustr clean, norm, word, stripped;
    char *bytes;          /* a word's UTF-8 */
    int32_t *offs;        /* [chars + 1] byte offset of each character in bytes */
    size_t bytes_cap, offs_cap;
    pbuf out;
} work;

static void work_free(work *w) {
    free(w->clean.v);
    free(w->norm.v);
    free(w->word.v);
    free(w->stripped.v);
    free(w->bytes);
    free(w->offs);
    free(w->out.v);
}

/* ---- WordPiece ---------------------------------------------------------------------- */

/* The role of a vocabulary id: a special token's, else a word's.  (A word piece can be a
 * special token's entry when cleaning made one out of the text: "[MA\x01SK]".) */
static atn_token_role role_of_id(const wordpiece_tok *tok, int32_t id) {
    for (int k = 0; k < N_SPECIAL; k++)
        if (tok->special[k] == id)
            return special_roles[k];
    return ATN_TOKEN_WORD;
}

static atn_status wordpiece(work *w, const atn_uchar *chars, size_t n, atn_error *err) {
    if (n == 0)
        return ATN_OK;
    const wordpiece_tok *tok = w->tok;
    int32_t wstart = chars[0].start, wend = chars[0].end;
    for (size_t i = 1; i < n; i++) {
        if (chars[i].start < wstart) wstart = chars[i].start;
        if (chars[i].end > wend) wend = chars[i].end;
    }
    if (n > MAX_WORD_CHARS) {
        if (!pbuf_push(&w->out, tok->special[SP_UNK], wstart, wend, false, false, ATN_TOKEN_UNK))
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return ATN_OK;
    }
    if (w->bytes_cap < 4 * n || w->offs_cap < n + 1) {
        char *b = realloc(w->bytes, 4 * n);
        if (b) { w->bytes = b; w->bytes_cap = 4 * n; }
        int32_t *o = realloc(w->offs, (n + 1) * sizeof *o);
        if (o) { w->offs = o; w->offs_cap = n + 1; }
        if (!b || !o)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    int32_t len = 0;
    for (size_t i = 0; i < n; i++) {
        w->offs[i] = len;
        len += atn_utf8_encode(chars[i].cp, w->bytes + len);
    }
    w->offs[n] = len;

    size_t first = w->out.n;
    size_t start = 0;
    while (start < n) {
        size_t end = n, prefix = start > 0 ? 2 : 0;
        int32_t id = -1;
        /* nothing longer than the longest vocabulary entry can match */
        while (end > start + 1 && (size_t)(w->offs[end] - w->offs[start]) + prefix > tok->max_len)
            end--;
        while (start < end) {
            if (atn_cancel_poll())
                return atn_cancel_error(err, "matching WordPiece pieces");
            id = vocab_find(tok, "##", prefix, w->bytes + w->offs[start],
                            (size_t)(w->offs[end] - w->offs[start]));
            if (id >= 0)
                break;
            end--;
        }
        if (id < 0) {   /* the whole word becomes one [UNK] */
            w->out.n = first;
            if (!pbuf_push(&w->out, tok->special[SP_UNK], wstart, wend, false, false, ATN_TOKEN_UNK))
                return atn_error_set(err, ATN_E_NOMEM, "out of memory");
            return ATN_OK;
        }
        int32_t s = chars[start].start, e = chars[start].end;
        for (size_t i = start + 1; i < end; i++) {
            if (chars[i].start < s) s = chars[i].start;
            if (chars[i].end > e) e = chars[i].end;
        }
        if (!pbuf_push(&w->out, id, s, e, false, start > 0, role_of_id(tok, id)))
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        start = end;
    }
    return ATN_OK;
}

/* ---- basic tokenizer ------------------------------------------------------------------ */

static bool equals_special_name(const atn_uchar *c, size_t n) {
    for (int k = 0; k < N_SPECIAL; k++) {
        const char *s = special_names[k];
        size_t len = strlen(s);
        if (len != n)
            continue;
        size_t i = 0;
        while (i < n && c[i].cp == (unsigned char)s[i])
            i++;
        if (i == n)
            return true;
    }
    return false;
}

/* One word of the whitespace split: lower-case, strip accents, split punctuation, then
 * WordPiece each part. */
static atn_status basic_word(work *w, const atn_uchar *chars, size_t n, atn_error *err) {
    const atn_wordpiece_options *o = &w->tok->opts;
    /* HF passes the special tokens as never_split: such a word is left whole. */
    if (equals_special_name(chars, n))
        return wordpiece(w, chars, n, err);
    const atn_uchar *c = chars;
    if (o->lower_case) {
        if (!atn_ustr_lower(c, n, &w->word))
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        c = w->word.v;
        n = w->word.n;
    }
    if (o->strip_accents) {
        if (!atn_ustr_nfd(c, n, &w->stripped))
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        atn_ustr_strip_marks(&w->stripped);
        c = w->stripped.v;
        n = w->stripped.n;
    }
    size_t run = 0;
    atn_status s;
    for (size_t i = 0; i < n; i++) {
        if (!atn_uc_is_bert_punct(c[i].cp))
            continue;
        if ((s = wordpiece(w, c + run, i - run, err)) != ATN_OK ||
            (s = wordpiece(w, c + i, 1, err)) != ATN_OK)
            return s;
        run = i + 1;
    }
    return wordpiece(w, c + run, n - run, err);
}

/* BasicTokenizer.tokenize on the characters between two special tokens.  The caller has
 * already lower-cased them when do_lower_case is set. */
static atn_status basic_chunk(work *w, const atn_uchar *chars, size_t n, atn_error *err) {
    const atn_wordpiece_options *o = &w->tok->opts;
    atn_ustr *clean = &w->clean;
    clean->n = 0;
    if (!atn_ustr_reserve(clean, 3 * n))
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = chars[i].cp;
        if (cp == 0 || cp == 0xFFFD || atn_uc_is_bert_control(cp))
            continue;
        if (atn_uc_is_bert_space(cp)) {
            atn_ustr_push(clean, ' ', chars[i].start, chars[i].end);
        } else if (o->tokenize_chinese_chars && atn_uc_is_cjk_ideograph(cp)) {
            atn_ustr_push(clean, ' ', -1, -1);
            atn_ustr_push(clean, cp, chars[i].start, chars[i].end);
            atn_ustr_push(clean, ' ', -1, -1);
        } else {
            atn_ustr_push(clean, cp, chars[i].start, chars[i].end);
        }
    }
    atn_ustr *norm = &w->norm;
    if (!atn_ustr_nfc(clean->v, clean->n, norm))
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    size_t i = 0;
    atn_status s;
    while (i < norm->n) {
        if (atn_cancel_poll())
            return atn_cancel_error(err, "tokenizing");
        while (i < norm->n && atn_uc_is_py_split_space(norm->v[i].cp))
            i++;
        size_t j = i;
        while (j < norm->n && !atn_uc_is_py_split_space(norm->v[j].cp))
            j++;
        if (j > i && (s = basic_word(w, norm->v + i, j - i, err)) != ATN_OK)
            return s;
        i = j;
    }
    return ATN_OK;
}

/* Which special token (present in the vocabulary) is written at text[at], longest first;
 * -1 if none. */
static int special_at(const wordpiece_tok *tok, const char *text, size_t len, size_t at) {
    int best = -1;
    size_t best_len = 0;
    for (int k = 0; k < N_SPECIAL; k++) {
        if (tok->special[k] < 0)
            continue;
        size_t sl = strlen(special_names[k]);
        if (sl > best_len && sl <= len - at && memcmp(text + at, special_names[k], sl) == 0) {
            best = k;
            best_len = sl;
        }
    }
    return best;
}

/* Tokenizes one segment's text into w->out. */
static atn_status encode_segment(work *w, const char *text, const char *what, atn_error *err) {
    size_t len = strlen(text);
    if (len > (size_t)INT32_MAX - 1)
        return atn_error_set(err, ATN_E_INVALID, "%s: %zu bytes is too long", what, len);
    atn_ustr chars = {0};
    if (!atn_ustr_reserve(&chars, len + 1))
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for %zu bytes", what, len);
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        if (atn_cancel_poll()) {
            free(chars.v);
            return atn_cancel_error(err, "reading the text");
        }
        uint32_t cp;
        int k = atn_utf8_decode(u + i, len - i, &cp);
        if (!k) {
            free(chars.v);
            return atn_error_set(err, ATN_E_INVALID, "%s: invalid UTF-8 at byte offset %zu (byte 0x%02X)",
                                 what, i, u[i]);
        }
        atn_ustr_push(&chars, cp, (int32_t)i, (int32_t)(i + (size_t)k));
        i += (size_t)k;
    }

    /* Split on special tokens written in the text; HF lower-cases the rest first. */
    atn_ustr lowered = {0};
    atn_status s = ATN_OK;
    size_t chunk = 0;
    for (size_t i = 0; i <= chars.n && s == ATN_OK; i++) {
        int sp = -1;
        if (i < chars.n && chars.v[i].cp == '[')
            sp = special_at(w->tok, text, len, (size_t)chars.v[i].start);
        if (i < chars.n && sp < 0)
            continue;
        if (i > chunk) {
            const atn_uchar *c = chars.v + chunk;
            size_t n = i - chunk;
            if (w->tok->opts.lower_case) {
                if (!atn_ustr_lower(c, n, &lowered)) {
                    s = atn_error_set(err, ATN_E_NOMEM, "out of memory");
                    break;
                }
                c = lowered.v;
                n = lowered.n;
            }
            s = basic_chunk(w, c, n, err);
        }
        if (sp >= 0 && s == ATN_OK) {
            int32_t start = chars.v[i].start;
            int32_t end = start + (int32_t)strlen(special_names[sp]);
            if (!pbuf_push(&w->out, w->tok->special[sp], start, end, true, false, special_roles[sp]))
                s = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            while (i + 1 < chars.n && chars.v[i + 1].start < end)
                i++;
        }
        chunk = i + 1;
    }
    free(lowered.v);
    free(chars.v);
    return s;
}

/* ---- assembling [CLS] A [SEP] B [SEP] ------------------------------------------------- */

static bool set_token(atn_encoding *e, int32_t i, const wordpiece_tok *tok, const piece *p,
                      int32_t type_id, int32_t segment) {
    atn_token *t = &e->tokens[i];
    t->text = strdup(tok->pool + tok->entries[p->id].off);
    t->id = p->id;
    t->type_id = type_id;
    t->start = p->start;
    t->end = p->end;
    t->segment = segment;
    t->special = p->special;
    t->role = p->role;
    t->continuation = p->continuation;
    e->ids[i] = p->id;
    e->type_ids[i] = type_id;
    e->mask[i] = 1;
    return t->text != NULL;
}

static atn_status wp_encode(const atn_tokenizer *base, const char *text, const char *text_pair,
                            int32_t max_len, atn_encoding **out, atn_error *err) {
    const wordpiece_tok *tok = (const wordpiece_tok *)base;
    bool pair = text_pair != NULL;
    if (max_len < 0 || (max_len > 0 && max_len < 3))
        return atn_error_set(err, ATN_E_INVALID, "maximum length %d is too small: [CLS] and [SEP] "
                             "alone need %d positions", max_len, pair ? 3 : 2);

    work w = {.tok = tok};
    atn_status s = encode_segment(&w, text, "text", err);
    size_t n_a = w.out.n;
    if (s == ATN_OK && pair)
        s = encode_segment(&w, text_pair, "text pair", err);
    if (s != ATN_OK) {
        work_free(&w);
        return s;
    }
    size_t n_b = w.out.n - n_a;

    /* HF truncate_sequences, longest_first, truncation_side right. */
    size_t keep_a = n_a, keep_b = n_b, n_special = pair ? 3 : 2;
    size_t total = n_a + n_b + n_special;
    size_t remove = max_len > 0 && total > (size_t)max_len ? total - (size_t)max_len : 0;
    if (remove) {
        if (!pair) {
            keep_a = n_a - remove;
        } else {
            size_t diff = n_a > n_b ? n_a - n_b : n_b - n_a;
            size_t first = diff < remove ? diff : remove;
            size_t second = remove - first;
            size_t rm_a, rm_b;
            if (n_a > n_b) {
                rm_a = first + second / 2;
                rm_b = second - second / 2;
            } else {
                rm_a = second / 2;
                rm_b = first + second - second / 2;
            }
            keep_a = rm_a < n_a ? n_a - rm_a : 0;
            keep_b = rm_b < n_b ? n_b - rm_b : 0;
        }
    }

    size_t n = keep_a + keep_b + n_special;
    atn_encoding *e = atn_encoding_alloc((int32_t)n);
    if (!e) {
        work_free(&w);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory for %zu tokens", n);
    }
    e->n = (int32_t)n;
    e->truncated = remove > 0;
    e->n_dropped = (int32_t)(n_a + n_b - keep_a - keep_b);

    piece cls = {tok->special[SP_CLS], -1, -1, true, false, ATN_TOKEN_CLS};
    piece sep = {tok->special[SP_SEP], -1, -1, true, false, ATN_TOKEN_SEP};
    bool ok = true;
    int32_t k = 0;
    ok &= set_token(e, k++, tok, &cls, 0, -1);
    for (size_t i = 0; i < keep_a; i++)
        ok &= set_token(e, k++, tok, &w.out.v[i], 0, 0);
    ok &= set_token(e, k++, tok, &sep, 0, -1);
    if (pair) {
        for (size_t i = 0; i < keep_b; i++)
            ok &= set_token(e, k++, tok, &w.out.v[n_a + i], 1, 1);
        ok &= set_token(e, k++, tok, &sep, 1, -1);
    }
    work_free(&w);
    if (!ok) {
        atn_encoding_free(e);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory for %zu tokens", n);
    }
    *out = e;
    return ATN_OK;
}

static void wp_free_op(atn_tokenizer *t) {
    wp_free((wordpiece_tok *)t);
}

static const atn_tokenizer_ops wordpiece_ops = {
    .kind = "wordpiece",
    .encode = wp_encode,
    .vocab_size = wp_vocab_size,
    .token_to_id = wp_token_to_id,
    .id_info = wp_id_info,
    .special_id = wp_special_id,
    .free = wp_free_op,
};
