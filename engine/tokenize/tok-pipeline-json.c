/* A tokenizer.json pipeline, step for step what the Rust tokenizers library does
 * (tokenizer/mod.rs encode_single_sequence, added_vocabulary.rs extract_and_normalize,
 * normalizer.rs NormalizedString, the normalizers, pre_tokenizers and processors).
 *
 * Text is held as characters that each carry the byte span of the original text they are
 * aligned to (atn_uchar), which is the library's alignment table (it keeps one pair per
 * normalized byte, all equal within a character).  Every change goes through transform(),
 * the library's NormalizedString::transform_range: a new character either replaces old
 * ones (taking the first one's alignment) or is inserted (taking the alignment of the old
 * character before it).  A token's span is the first character's start to the last one's
 * end, as expand_alignments does.
 *
 * Regular expressions are PCRE2's (UTF + UCP), where the library uses Oniguruma. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenize/tok-pipeline.h"

#include "tokenize/encoding.h"
#include "core/files.h"
#include "core/json.h"
#include "tokenize/tok-model.h"
#include "tokenize/tok-vocab.h"
#include "tokenize/unicode.h"

#include <cjson/cJSON.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_TOKENIZER_JSON = 1 << 30, PATH_LEN = 256, MAX_DEPTH = 16 };

/* ---- characters ------------------------------------------------------------------- */

/* Rust's char::is_whitespace (the White_Space property). */
static bool rs_is_space(uint32_t c) {
    if (c < 0x80)
        return c == ' ' || (c >= 9 && c <= 13);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Classes that need the general category, asked of PCRE2's Unicode tables. */
enum { CLS_MARK, CLS_WORD, N_CLS };
static pcre2_code *cls_re[N_CLS];
static pthread_once_t cls_once = PTHREAD_ONCE_INIT;

static void cls_init(void) {
    static const char *const pats[N_CLS] = {"\\p{M}", "[\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}]"};
    for (int i = 0; i < N_CLS; i++) {
        int e;
        PCRE2_SIZE off;
        cls_re[i] = pcre2_compile((PCRE2_SPTR)pats[i], PCRE2_ZERO_TERMINATED,
                                  PCRE2_UTF | PCRE2_UCP, &e, &off, NULL);
    }
}

static bool cls_is(int which, uint32_t cp) {
    pthread_once(&cls_once, cls_init);
    if (!cls_re[which])
        return false;
    char b[4];
    int n = atn_utf8_encode(cp, b);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        return false;
    int rc = pcre2_match(cls_re[which], (PCRE2_SPTR)b, (PCRE2_SIZE)n, 0,
                         PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, md, NULL);
    pcre2_match_data_free(md);
    return rc > 0;
}

/* What StripAccents drops: non-spacing marks (Mn), as the library's output shows
 * (Devanagari's spacing vowel signs, Mc, stay). */
static bool is_mark(uint32_t cp) {
    return cp >= 0x300 && atn_uc_class_of(cp) == ATN_UC_MN;
}

static bool is_word_char(uint32_t cp) {
    if (cp == 0x200C || cp == 0x200D)
        return true;
    if (cp < 0x80)
        return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
               cp == '_';
    return cls_is(CLS_WORD, cp);
}

/* GPT-2's byte-level alphabet (tok-bpe.c): the byte a character of it stands for, or -1. */
static int pl_char_byte(uint32_t cp) {
    if (cp < 0x144)
        for (int b = 0; b < 256; b++)
            if (atn_byte_level_char((uint8_t)b) == cp)
                return b;
    return -1;
}

/* ---- text with alignments ------------------------------------------------------------ */

typedef struct nstr {
    atn_uchar *v;
    size_t n, cap;
    int32_t shift;    /* where this piece starts in the original (offsets_original().0) */
    int32_t added;    /* the added token's id when the piece is one, else -1 */
} nstr;

static bool ns_reserve(nstr *s, size_t extra) {
    if (s->n + extra <= s->cap)
        return true;
    size_t cap = s->cap ? s->cap : 16;
    while (cap < s->n + extra)
        cap *= 2;
    atn_uchar *v = realloc(s->v, cap * sizeof *v);
    if (!v)
        return false;
    s->v = v;
    s->cap = cap;
    return true;
}

/* One character of a transformation: cp, and how many old characters it consumes (0: an
 * insertion). */
typedef struct titem {
    uint32_t cp;
    int32_t consume;
} titem;

typedef struct tbuf {
    titem *v;
    size_t n, cap;
    atn_uchar *spare;     /* a block transform writes into, then trades for the old one */
    size_t spare_cap;
} tbuf;

static bool tb_push(tbuf *t, uint32_t cp, int32_t consume) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        titem *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return false;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (titem){cp, consume};
    return true;
}

/* An item that only removes old characters (its consume count), writing none. */
#define SKIP UINT32_MAX

static bool tb_skip(tbuf *t, int32_t n) {
    return n <= 0 || tb_push(t, SKIP, n);
}

/* Rewrites s from the items, after skipping `initial` old characters: the library's
 * transform(dest, initial_offset). */
static bool transform(nstr *s, tbuf *t, size_t initial) {
    size_t need = t->n ? t->n : 1;
    if (t->spare_cap < need) {
        free(t->spare);
        t->spare_cap = need < 64 ? 64 : need;
        t->spare = malloc(t->spare_cap * sizeof *t->spare);
        if (!t->spare) {
            t->spare_cap = 0;
            return false;
        }
    }
    atn_uchar *nv = t->spare;
    size_t nv_cap = t->spare_cap;
    size_t p = initial, k = 0;
    for (size_t i = 0; i < t->n; i++) {
        int32_t a, b;
        if (t->v[i].cp == SKIP) {
            p += (size_t)t->v[i].consume;
            continue;
        }
        if (t->v[i].consume == 0) {
            if (p < 1) {
                a = b = s->shift;
            } else {
                a = s->v[p - 1].start;
                b = s->v[p - 1].end;
            }
        } else {
            size_t q = p < s->n ? p : (s->n ? s->n - 1 : 0);
            a = s->n ? s->v[q].start : s->shift;
            b = s->n ? s->v[q].end : s->shift;
            p += (size_t)t->v[i].consume;
        }
        nv[k++] = (atn_uchar){t->v[i].cp, a, b};
    }
    t->spare = s->v;
    t->spare_cap = s->v ? s->cap : 0;
    s->v = nv;
    s->n = k;
    s->cap = nv_cap;
    return true;
}

/* Keeps the characters keep() accepts (NormalizedString::filter). */
static bool ns_filter(nstr *s, bool (*keep)(uint32_t, const void *), const void *ctx, tbuf *t) {
    t->n = 0;
    size_t initial = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (keep(s->v[i].cp, ctx)) {
            if (!tb_push(t, s->v[i].cp, 1))
                return false;
        } else if (t->n) {
            t->v[t->n - 1].consume++;
        } else {
            initial++;
        }
    }
    return transform(s, t, initial);
}

/* UTF-8 of s with the byte offset of each character (offs[n] = total). */
typedef struct u8buf {
    char *b;
    int32_t *offs;
    size_t cap_b, cap_o, len;
} u8buf;

static bool ns_utf8(const nstr *s, u8buf *u) {
    if (u->cap_b < 4 * s->n + 1) {
        char *b = realloc(u->b, 4 * s->n + 1);
        if (!b)
            return false;
        u->b = b;
        u->cap_b = 4 * s->n + 1;
    }
    if (u->cap_o < s->n + 1) {
        int32_t *o = realloc(u->offs, (s->n + 1) * sizeof *o);
        if (!o)
            return false;
        u->offs = o;
        u->cap_o = s->n + 1;
    }
    size_t len = 0;
    for (size_t i = 0; i < s->n; i++) {
        u->offs[i] = (int32_t)len;
        len += (size_t)atn_utf8_encode(s->v[i].cp, u->b + len);
    }
    u->offs[s->n] = (int32_t)len;
    u->b[len] = '\0';
    u->len = len;
    return true;
}

/* The character index of byte offset off (a character boundary). */
/* The index of the character holding byte off (the last one starting at or before it). */
static size_t char_holding(const u8buf *u, size_t n_chars, int32_t off) {
    size_t lo = 0, hi = n_chars;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u->offs[mid] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

static size_t char_at(const u8buf *u, size_t n_chars, int32_t off) {
    size_t lo = 0, hi = n_chars;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u->offs[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- patterns ----------------------------------------------------------------------- */

typedef struct pattern {
    pcre2_code *re;   /* NULL: an empty string pattern (never matches) */
} pattern;

/* A found range [a, b) in characters and whether it is a match. */
typedef struct mrange {
    size_t a, b;
    bool match;
} mrange;

typedef struct mbuf {
    mrange *v;
    size_t n, cap;
} mbuf;

static bool mb_push(mbuf *m, size_t a, size_t b, bool match) {
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 32;
        mrange *v = realloc(m->v, cap * sizeof *v);
        if (!v)
            return false;
        m->v = v;
        m->cap = cap;
    }
    m->v[m->n++] = (mrange){a, b, match};
    return true;
}

/* Pattern::find_matches for a regex, in characters of s (u its UTF-8). */
static bool re_find(const pcre2_code *re, const nstr *s, const u8buf *u, mbuf *m,
                    pcre2_match_data **mdp) {
    m->n = 0;
    if (s->n == 0)
        return mb_push(m, 0, 0, false);
    if (!re)
        return mb_push(m, 0, s->n, false);
    if (!*mdp && !(*mdp = pcre2_match_data_create(1, NULL)))
        return false;
    pcre2_match_data *md = *mdp;
    size_t prev = 0, pos = 0;
    bool ok = true;
    while (pos <= u->len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)u->b, u->len, pos, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc < 0)   /* no match (or a match limit: the rest is then one piece) */
            break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t bs = ov[0], be = ov[1];
        size_t ca = char_at(u, s->n, (int32_t)bs), cb = char_at(u, s->n, (int32_t)be);
        if (prev != ca)
            ok &= mb_push(m, prev, ca, false);
        ok &= mb_push(m, ca, cb, true);
        prev = cb;
        if (be == bs) {   /* empty match: step over one character */
            if (be >= u->len)
                break;
            pos = (size_t)u->offs[cb + 1];
        } else {
            pos = be;
        }
    }
    if (ok && prev != s->n)
        ok &= mb_push(m, prev, s->n, false);
    return ok;
}

/* Pattern::find_matches for a character predicate: each accepted character alone. */
static bool fn_find(bool (*pred)(uint32_t), const nstr *s, mbuf *m) {
    m->n = 0;
    if (s->n == 0)
        return mb_push(m, 0, 0, false);
    size_t last = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (pred(s->v[i].cp)) {
            if (last < i && !mb_push(m, last, i, false))
                return false;
            if (!mb_push(m, i, i + 1, true))
                return false;
            last = i + 1;
        }
    }
    if (last != s->n && !mb_push(m, last, s->n, false))
        return false;
    return true;
}

/* ---- the components --------------------------------------------------------------- */

enum {
    N_BERT, N_NFC, N_NFD, N_NFKC, N_NFKD, N_LOWER, N_STRIP_ACCENTS, N_REPLACE, N_PREPEND,
    N_STRIP, N_PRECOMPILED, N_SEQUENCE
};

typedef struct normalizer {
    int type;
    bool clean_text, chinese, lowercase;
    int strip_accents;   /* -1: follows lowercase */
    bool strip_left, strip_right;
    pattern pat;
    char *content;       /* Replace's content, Prepend's prepend */
    void *charsmap;
    struct normalizer *kids;
    int n_kids;
} normalizer;

enum { B_REMOVED, B_ISOLATED, B_MERGED_PREV, B_MERGED_NEXT, B_CONTIGUOUS };

enum {
    P_BERT, P_BYTELEVEL, P_METASPACE, P_WHITESPACE, P_WHITESPACE_SPLIT, P_PUNCT, P_DIGITS,
    P_SPLIT, P_SEQUENCE
};

enum { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER };

typedef struct pretok {
    int type;
    bool add_prefix_space, use_regex, individual_digits, invert, split;
    int behavior;
    int prepend_scheme;
    uint32_t replacement;
    pattern pat;
    struct pretok *kids;
    int n_kids;
} pretok;

enum { PP_BERT, PP_ROBERTA, PP_TEMPLATE, PP_BYTELEVEL, PP_SEQUENCE };

typedef struct tpl_piece {
    bool special;
    int seq;            /* 0 A, 1 B */
    int type_id;
    int32_t *ids;       /* a special token's ids */
    char **tokens;
    int n_ids;
} tpl_piece;

typedef struct postproc {
    int type;
    int32_t cls_id, sep_id;
    char *cls, *sep;
    bool trim_offsets, add_prefix_space;
    tpl_piece *single, *pair;
    int n_single, n_pair;
    struct postproc *kids;
    int n_kids;
} postproc;

typedef struct added_tok {
    char *content;
    size_t len;
    int32_t id;
    bool special, lstrip, rstrip, normalized, single_word;
    char *norm_content;   /* content after the normalizer (normalized tokens) */
    size_t norm_len;
} added_tok;

typedef struct pipeline {
    atn_tokenizer base;
    char *origin;
    normalizer *norm;
    pretok *pre;
    postproc *post;
    atn_tok_model *model;
    added_tok *added;    /* special tokens first, then the others, each in file order */
    int n_added;
    int32_t vocab_size;
    int32_t role_id[ATN_TOKEN_UNK + 1];
    bool byte_level, metaspace;
    uint32_t meta_char;
    char *wp_prefix;     /* WordPiece's continuing_subword_prefix */
    char **surface;      /* [vocab_size] lazily: surfaces, NULL until computed */
    bool *partial;
    pthread_once_t surf_once;
    bool surf_ok;
} pipeline;

static const atn_tokenizer_ops pipeline_ops;

/* ---- JSON reading ----------------------------------------------------------------- */

typedef struct jctx {
    const char *file;
    atn_error *err;
} jctx;

static atn_status jfail(const jctx *j, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static atn_status jfail(const jctx *j, const char *path, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return atn_error_set(j->err, ATN_E_FORMAT, "%s: %s: %s", j->file, path, what);
}

/* out = path + sep + key (+ suffix), cut at PATH_LEN - 1 bytes. */
static void pjoin(char *out, const char *path, const char *sep, const char *key, const char *suffix) {
    size_t n = 0;
    const char *parts[4] = {path, sep, key, suffix};
    for (int i = 0; i < 4; i++)
        for (const char *c = parts[i]; c && *c && n < PATH_LEN - 1; c++)
            out[n++] = *c;
    out[n] = '\0';
}

static void subpath(char *out, const char *path, const char *key) {
    pjoin(out, path, ".", key, NULL);
}

static void subindex(char *out, const char *path, int i) {
    char num[16];
    snprintf(num, sizeof num, "%d", i);
    pjoin(out, path, "[", num, "]");
}

static atn_status get_bool(const jctx *j, const cJSON *o, const char *path, const char *key,
                           bool def, bool *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = def;
    if (!v || cJSON_IsNull(v))
        return ATN_OK;
    if (!cJSON_IsBool(v)) {
        char p[PATH_LEN];
        subpath(p, path, key);
        return jfail(j, p, "should be true or false");
    }
    *out = cJSON_IsTrue(v);
    return ATN_OK;
}

/* A string member: *out borrowed; NULL when absent and !required. */
static atn_status get_str(const jctx *j, const cJSON *o, const char *path, const char *key,
                          bool required, const char **out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char p[PATH_LEN];
    subpath(p, path, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return required ? jfail(j, p, "missing (a string is needed)") : ATN_OK;
    if (!cJSON_IsString(v))
        return jfail(j, p, "should be a string");
    size_t n = strlen(v->valuestring);
    if (atn_utf8_check((const unsigned char *)v->valuestring, n) != n)
        return jfail(j, p, "not valid UTF-8");
    *out = v->valuestring;
    return ATN_OK;
}

static atn_status get_int(const jctx *j, const cJSON *v, const char *path, int32_t *out) {
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 2e9 ||
        v->valuedouble != (double)(int64_t)v->valuedouble)
        return jfail(j, path, "should be a non-negative integer");
    *out = (int32_t)v->valuedouble;
    return ATN_OK;
}

static atn_status nomem(const jctx *j) {
    return atn_error_set(j->err, ATN_E_NOMEM, "%s: out of memory", j->file);
}

static const char *type_of(const jctx *j, const cJSON *o, const char *path, atn_status *st) {
    if (!cJSON_IsObject(o)) {
        *st = jfail(j, path, "should be an object with a \"type\"");
        return NULL;
    }
    const char *t;
    if ((*st = get_str(j, o, path, "type", true, &t)) != ATN_OK)
        return NULL;
    return t;
}

/* Oniguruma's \p{Han} is the Script property; PCRE2's is Script_Extensions (so it also
 * matches "。", whose extensions list Han).  Rewrites \p{Name} / \P{Name} that are not
 * general categories or binary properties to \p{sc:Name}.  NULL when out of memory. */
static char *script_only(const char *re, size_t n) {
    static const char *const keep[] = {
        "Any", "L&", "Letter", "Mark", "Number", "Punctuation", "Symbol", "Separator", "Other",
        "Cased_Letter", "Uppercase_Letter", "Lowercase_Letter", "Titlecase_Letter",
        "Modifier_Letter", "Other_Letter", "Nonspacing_Mark", "Spacing_Mark", "Enclosing_Mark",
        "Decimal_Number", "Letter_Number", "Other_Number", "Connector_Punctuation",
        "Dash_Punctuation", "Open_Punctuation", "Close_Punctuation", "Initial_Punctuation",
        "Final_Punctuation", "Other_Punctuation", "Math_Symbol", "Currency_Symbol",
        "Modifier_Symbol", "Other_Symbol", "Space_Separator", "Line_Separator",
        "Paragraph_Separator", "Control", "Format", "Surrogate", "Private_Use", "Unassigned",
        "Alphabetic", "White_Space", "Lowercase", "Uppercase", "Emoji", "Xan", "Xsp", "Xps",
        "Xwd", "Xuc"};
    char *out = malloc(4 * n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (re[i] == '\\' && i + 2 < n && (re[i + 1] == 'p' || re[i + 1] == 'P') && re[i + 2] == '{') {
            size_t e = i + 3;
            while (e < n && re[e] != '}')
                e++;
            size_t nl = e - (i + 3);
            const char *name = re + i + 3;
            bool gc = nl <= 2 || memchr(name, ':', nl) || memchr(name, '=', nl) || name[0] == '^';
            for (size_t k = 0; !gc && k < sizeof keep / sizeof keep[0]; k++)
                gc = strlen(keep[k]) == nl && strncasecmp(keep[k], name, nl) == 0;
            memcpy(out + o, re + i, 3);
            o += 3;
            if (!gc && e < n) {
                memcpy(out + o, "sc:", 3);
                o += 3;
            }
            i += 3;
            continue;
        }
        out[o++] = re[i++];
    }
    out[o] = '\0';
    return out;
}

/* {"String": s} or {"Regex": r} */
static atn_status get_pattern(const jctx *j, const cJSON *o, const char *path, pattern *p) {
    char pp[PATH_LEN], rp[PATH_LEN];
    subpath(pp, path, "pattern");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "pattern");
    if (!cJSON_IsObject(v))
        return jfail(j, pp, "should be {\"String\": ...} or {\"Regex\": ...}");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, "String");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(v, "Regex");
    if ((s != NULL) == (r != NULL) || !cJSON_IsString(s ? s : r))
        return jfail(j, pp, "should be {\"String\": \"...\"} or {\"Regex\": \"...\"}");
    const char *text = (s ? s : r)->valuestring;
    subpath(rp, pp, s ? "String" : "Regex");
    size_t n = strlen(text);
    if (atn_utf8_check((const unsigned char *)text, n) != n)
        return jfail(j, rp, "not valid UTF-8");
    p->re = NULL;
    if (s && n == 0)
        return ATN_OK;
    char *fixed = NULL;
    if (!s) {
        fixed = script_only(text, n);
        if (!fixed)
            return nomem(j);
        text = fixed;
        n = strlen(fixed);
    }
    int ec;
    PCRE2_SIZE eoff;
    p->re = pcre2_compile((PCRE2_SPTR)text, n, s ? PCRE2_UTF | PCRE2_LITERAL : PCRE2_UTF | PCRE2_UCP,
                          &ec, &eoff, NULL);
    free(fixed);
    if (!p->re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return jfail(j, rp, "the regular expression does not compile (at offset %zu: %s)",
                     (size_t)eoff, (const char *)msg);
    }
    pcre2_jit_compile(p->re, PCRE2_JIT_COMPLETE);   /* when JIT is there; else interpreted */
    return ATN_OK;
}

static void free_normalizer(normalizer *n);
static void free_pretok(pretok *p);
static void free_postproc(postproc *p);

static void normalizer_clear(normalizer *n) {
    pcre2_code_free(n->pat.re);
    free(n->content);
    atn_charsmap_free(n->charsmap);
    for (int i = 0; i < n->n_kids; i++)
        normalizer_clear(&n->kids[i]);
    free(n->kids);
}

static void free_normalizer(normalizer *n) {
    if (n) {
        normalizer_clear(n);
        free(n);
    }
}

static atn_status parse_normalizer(const jctx *j, const cJSON *o, const char *path, normalizer *n,
                                   int depth) {
    atn_status st;
    memset(n, 0, sizeof *n);
    n->strip_accents = -1;
    if (depth > MAX_DEPTH)
        return jfail(j, path, "nested too deeply");
    const char *t = type_of(j, o, path, &st);
    if (!t)
        return st;
    char p[PATH_LEN];
    if (strcmp(t, "BertNormalizer") == 0) {
        n->type = N_BERT;
        if ((st = get_bool(j, o, path, "clean_text", true, &n->clean_text)) ||
            (st = get_bool(j, o, path, "handle_chinese_chars", true, &n->chinese)) ||
            (st = get_bool(j, o, path, "lowercase", true, &n->lowercase)))
            return st;
        const cJSON *sa = cJSON_GetObjectItemCaseSensitive(o, "strip_accents");
        if (sa && !cJSON_IsNull(sa)) {
            if (!cJSON_IsBool(sa)) {
                subpath(p, path, "strip_accents");
                return jfail(j, p, "should be true, false or null");
            }
            n->strip_accents = cJSON_IsTrue(sa);
        }
    } else if (strcmp(t, "NFC") == 0) {
        n->type = N_NFC;
    } else if (strcmp(t, "NFD") == 0) {
        n->type = N_NFD;
    } else if (strcmp(t, "NFKC") == 0) {
        n->type = N_NFKC;
    } else if (strcmp(t, "NFKD") == 0) {
        n->type = N_NFKD;
    } else if (strcmp(t, "Lowercase") == 0) {
        n->type = N_LOWER;
    } else if (strcmp(t, "StripAccents") == 0) {
        n->type = N_STRIP_ACCENTS;
    } else if (strcmp(t, "Replace") == 0) {
        n->type = N_REPLACE;
        const char *c;
        if ((st = get_pattern(j, o, path, &n->pat)) || (st = get_str(j, o, path, "content", true, &c)))
            return st;
        if (!(n->content = strdup(c)))
            return nomem(j);
    } else if (strcmp(t, "Prepend") == 0) {
        n->type = N_PREPEND;
        const char *c;
        if ((st = get_str(j, o, path, "prepend", true, &c)))
            return st;
        if (!(n->content = strdup(c)))
            return nomem(j);
    } else if (strcmp(t, "Strip") == 0) {
        n->type = N_STRIP;
        if ((st = get_bool(j, o, path, "strip_left", true, &n->strip_left)) ||
            (st = get_bool(j, o, path, "strip_right", true, &n->strip_right)))
            return st;
    } else if (strcmp(t, "Precompiled") == 0) {
        n->type = N_PRECOMPILED;
        const char *b64;
        if ((st = get_str(j, o, path, "precompiled_charsmap", true, &b64)))
            return st;
        subpath(p, path, "precompiled_charsmap");
        n->charsmap = atn_charsmap_from_base64(b64, j->file, p, j->err);
        if (!n->charsmap)
            return j->err ? j->err->status : ATN_E_FORMAT;
    } else if (strcmp(t, "Sequence") == 0) {
        n->type = N_SEQUENCE;
        subpath(p, path, "normalizers");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "normalizers");
        if (!cJSON_IsArray(a))
            return jfail(j, p, "should be an array of normalizers");
        int k = cJSON_GetArraySize(a);
        n->kids = calloc(k ? (size_t)k : 1, sizeof *n->kids);
        if (!n->kids)
            return nomem(j);
        int i = 0;
        for (const cJSON *e = a->child; e; e = e->next, i++) {
            char ip[PATH_LEN];
            subindex(ip, p, i);
            n->n_kids = i + 1;
            if ((st = parse_normalizer(j, e, ip, &n->kids[i], depth + 1)))
                return st;
        }
    } else {
        subpath(p, path, "type");
        return jfail(j, p, "unknown normalizer \"%s\"", t);
    }
    return ATN_OK;
}

static void pretok_clear(pretok *p) {
    pcre2_code_free(p->pat.re);
    for (int i = 0; i < p->n_kids; i++)
        pretok_clear(&p->kids[i]);
    free(p->kids);
}

static void free_pretok(pretok *p) {
    if (p) {
        pretok_clear(p);
        free(p);
    }
}

static atn_status get_behavior(const jctx *j, const cJSON *o, const char *path, int def, int *out) {
    const char *b;
    atn_status st = get_str(j, o, path, "behavior", false, &b);
    *out = def;
    if (st || !b)
        return st;
    static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious",
                                        "MergedWithNext", "Contiguous"};
    for (int i = 0; i < 5; i++)
        if (strcmp(b, names[i]) == 0) {
            *out = i;
            return ATN_OK;
        }
    char p[PATH_LEN];
    subpath(p, path, "behavior");
    return jfail(j, p, "unknown behavior \"%s\" (Removed, Isolated, MergedWithPrevious, "
                 "MergedWithNext or Contiguous)", b);
}

static atn_status parse_pretok(const jctx *j, const cJSON *o, const char *path, pretok *pt,
                               int depth) {
    atn_status st;
    memset(pt, 0, sizeof *pt);
    if (depth > MAX_DEPTH)
        return jfail(j, path, "nested too deeply");
    const char *t = type_of(j, o, path, &st);
    if (!t)
        return st;
    char p[PATH_LEN];
    if (strcmp(t, "BertPreTokenizer") == 0) {
        pt->type = P_BERT;
    } else if (strcmp(t, "ByteLevel") == 0) {
        pt->type = P_BYTELEVEL;
        if ((st = get_bool(j, o, path, "add_prefix_space", true, &pt->add_prefix_space)) ||
            (st = get_bool(j, o, path, "use_regex", true, &pt->use_regex)))
            return st;
        bool trim;
        if ((st = get_bool(j, o, path, "trim_offsets", true, &trim)))
            return st;
        if (pt->use_regex) {
            static const char gpt2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| "
                                       "?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
            int ec;
            PCRE2_SIZE eo;
            pt->pat.re = pcre2_compile((PCRE2_SPTR)gpt2, PCRE2_ZERO_TERMINATED,
                                       PCRE2_UTF | PCRE2_UCP, &ec, &eo, NULL);
            if (!pt->pat.re)
                return nomem(j);
            pcre2_jit_compile(pt->pat.re, PCRE2_JIT_COMPLETE);
        }
    } else if (strcmp(t, "Metaspace") == 0) {
        pt->type = P_METASPACE;
        const char *r, *scheme;
        if ((st = get_str(j, o, path, "replacement", false, &r)) ||
            (st = get_str(j, o, path, "prepend_scheme", false, &scheme)) ||
            (st = get_bool(j, o, path, "split", true, &pt->split)))
            return st;
        pt->replacement = 0x2581;
        if (r) {
            uint32_t cp;
            size_t rl = strlen(r);
            if (rl == 0 || atn_utf8_decode((const unsigned char *)r, rl, &cp) != (int)rl) {
                subpath(p, path, "replacement");
                return jfail(j, p, "should be one character");
            }
            pt->replacement = cp;
        }
        pt->prepend_scheme = PREPEND_ALWAYS;
        if (scheme) {
            if (strcmp(scheme, "always") == 0)
                pt->prepend_scheme = PREPEND_ALWAYS;
            else if (strcmp(scheme, "first") == 0)
                pt->prepend_scheme = PREPEND_FIRST;
            else if (strcmp(scheme, "never") == 0)
                pt->prepend_scheme = PREPEND_NEVER;
            else {
                subpath(p, path, "prepend_scheme");
                return jfail(j, p, "should be \"always\", \"first\" or \"never\"");
            }
        } else {
            bool aps;   /* the older files' add_prefix_space */
            if ((st = get_bool(j, o, path, "add_prefix_space", true, &aps)))
                return st;
            pt->prepend_scheme = aps ? PREPEND_ALWAYS : PREPEND_NEVER;
        }
    } else if (strcmp(t, "Whitespace") == 0) {
        pt->type = P_WHITESPACE;
        /* \w+|[^\w\s]+ with the library's \w (letters, marks, decimal digits, connectors) */
        static const char ws[] = "[\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}]+|"
                                 "[^\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}\\s]+";
        int ec;
        PCRE2_SIZE eo;
        pt->pat.re = pcre2_compile((PCRE2_SPTR)ws, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                   &ec, &eo, NULL);
        if (!pt->pat.re)
            return nomem(j);
        pcre2_jit_compile(pt->pat.re, PCRE2_JIT_COMPLETE);
    } else if (strcmp(t, "WhitespaceSplit") == 0) {
        pt->type = P_WHITESPACE_SPLIT;
    } else if (strcmp(t, "Punctuation") == 0) {
        pt->type = P_PUNCT;
        if ((st = get_behavior(j, o, path, B_ISOLATED, &pt->behavior)))
            return st;
    } else if (strcmp(t, "Digits") == 0) {
        pt->type = P_DIGITS;
        if ((st = get_bool(j, o, path, "individual_digits", false, &pt->individual_digits)))
            return st;
        int ec;
        PCRE2_SIZE eo;
        pt->pat.re = pcre2_compile((PCRE2_SPTR) "\\p{N}", PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &ec, &eo, NULL);
        if (!pt->pat.re)
            return nomem(j);
    } else if (strcmp(t, "Split") == 0) {
        pt->type = P_SPLIT;
        if ((st = get_pattern(j, o, path, &pt->pat)) ||
            (st = get_behavior(j, o, path, -1, &pt->behavior)) ||
            (st = get_bool(j, o, path, "invert", false, &pt->invert)))
            return st;
        if (pt->behavior < 0) {
            subpath(p, path, "behavior");
            return jfail(j, p, "missing (Removed, Isolated, MergedWithPrevious, MergedWithNext "
                         "or Contiguous)");
        }
    } else if (strcmp(t, "Sequence") == 0) {
        pt->type = P_SEQUENCE;
        subpath(p, path, "pretokenizers");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "pretokenizers");
        if (!cJSON_IsArray(a))
            return jfail(j, p, "should be an array of pre-tokenizers");
        int k = cJSON_GetArraySize(a);
        pt->kids = calloc(k ? (size_t)k : 1, sizeof *pt->kids);
        if (!pt->kids)
            return nomem(j);
        int i = 0;
        for (const cJSON *e = a->child; e; e = e->next, i++) {
            char ip[PATH_LEN];
            subindex(ip, p, i);
            pt->n_kids = i + 1;
            if ((st = parse_pretok(j, e, ip, &pt->kids[i], depth + 1)))
                return st;
        }
    } else {
        subpath(p, path, "type");
        return jfail(j, p, "unknown pre-tokenizer \"%s\"", t);
    }
    return ATN_OK;
}

static void postproc_clear(postproc *p) {
    free(p->cls);
    free(p->sep);
    for (int pass = 0; pass < 2; pass++) {
        tpl_piece *v = pass ? p->pair : p->single;
        int n = pass ? p->n_pair : p->n_single;
        for (int i = 0; i < n; i++) {
            free(v[i].ids);
            for (int k = 0; k < v[i].n_ids; k++)
                free(v[i].tokens[k]);
            free(v[i].tokens);
        }
        free(v);
    }
    for (int i = 0; i < p->n_kids; i++)
        postproc_clear(&p->kids[i]);
    free(p->kids);
}

static void free_postproc(postproc *p) {
    if (p) {
        postproc_clear(p);
        free(p);
    }
}

/* ["[CLS]", 101] */
static atn_status get_pair(const jctx *j, const cJSON *o, const char *path, const char *key,
                           char **name, int32_t *id) {
    char p[PATH_LEN];
    subpath(p, path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsString(v->child))
        return jfail(j, p, "should be [\"token\", id]");
    char ip[PATH_LEN];
    subindex(ip, p, 1);
    atn_status st = get_int(j, v->child->next, ip, id);
    if (st)
        return st;
    if (!(*name = strdup(v->child->valuestring)))
        return nomem(j);
    return ATN_OK;
}

static atn_status parse_template(const jctx *j, const cJSON *o, const char *path, const char *key,
                                 const cJSON *specials, tpl_piece **out, int *n_out) {
    char p[PATH_LEN];
    subpath(p, path, key);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(a))
        return jfail(j, p, "should be an array of {\"Sequence\": ...} and {\"SpecialToken\": ...}");
    int n = cJSON_GetArraySize(a);
    *out = calloc(n ? (size_t)n : 1, sizeof **out);
    if (!*out)
        return nomem(j);
    int i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        char ip[PATH_LEN], kp[PATH_LEN];
        subindex(ip, p, i);
        tpl_piece *t = &(*out)[i];
        *n_out = i + 1;
        const cJSON *sq = cJSON_GetObjectItemCaseSensitive(e, "Sequence");
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(e, "SpecialToken");
        if (!cJSON_IsObject(e) || (!cJSON_IsObject(sq) && !cJSON_IsObject(sp)))
            return jfail(j, ip, "should be {\"Sequence\": {...}} or {\"SpecialToken\": {...}}");
        const cJSON *body = sq ? sq : sp;
        subpath(kp, ip, sq ? "Sequence" : "SpecialToken");
        const char *id;
        atn_status st = get_str(j, body, kp, "id", true, &id);
        if (st)
            return st;
        const cJSON *ti = cJSON_GetObjectItemCaseSensitive(body, "type_id");
        t->type_id = 0;
        if (ti) {
            char tp[PATH_LEN];
            subpath(tp, kp, "type_id");
            int32_t tv = 0;
            if ((st = get_int(j, ti, tp, &tv)))
                return st;
            t->type_id = tv;
        }
        if (sq) {
            if (strcmp(id, "A") != 0 && strcmp(id, "B") != 0) {
                char tp[PATH_LEN];
                subpath(tp, kp, "id");
                return jfail(j, tp, "should be \"A\" or \"B\"");
            }
            t->seq = id[0] == 'B';
            continue;
        }
        t->special = true;
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(specials, id);
        char dp[PATH_LEN], sp2[PATH_LEN];
        subpath(sp2, path, "special_tokens");
        char quoted[48];
        snprintf(quoted, sizeof quoted, "%.40s", id);
        pjoin(dp, sp2, "[\"", quoted, "\"]");
        if (!cJSON_IsObject(def))
            return jfail(j, dp, "missing: %s uses the special token \"%s\"", ip, id);
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(def, "ids");
        const cJSON *toks = cJSON_GetObjectItemCaseSensitive(def, "tokens");
        if (!cJSON_IsArray(ids) || !cJSON_IsArray(toks) ||
            cJSON_GetArraySize(ids) != cJSON_GetArraySize(toks))
            return jfail(j, dp, "should have \"ids\" and \"tokens\" arrays of one length");
        int k = cJSON_GetArraySize(ids);
        t->ids = calloc(k ? (size_t)k : 1, sizeof *t->ids);
        t->tokens = calloc(k ? (size_t)k : 1, sizeof *t->tokens);
        if (!t->ids || !t->tokens)
            return nomem(j);
        const cJSON *x = ids->child, *y = toks->child;
        for (int m = 0; m < k; m++, x = x->next, y = y->next) {
            char mp[PATH_LEN], ip2[PATH_LEN];
            subpath(ip2, dp, "ids");
            subindex(mp, ip2, m);
            if ((st = get_int(j, x, mp, &t->ids[m])))
                return st;
            if (!cJSON_IsString(y)) {
                subpath(ip2, dp, "tokens");
                subindex(mp, ip2, m);
                return jfail(j, mp, "should be a string");
            }
            if (!(t->tokens[m] = strdup(y->valuestring)))
                return nomem(j);
            t->n_ids = m + 1;
        }
    }
    return ATN_OK;
}

static atn_status parse_postproc(const jctx *j, const cJSON *o, const char *path, postproc *pp,
                                 int depth) {
    atn_status st;
    memset(pp, 0, sizeof *pp);
    if (depth > MAX_DEPTH)
        return jfail(j, path, "nested too deeply");
    const char *t = type_of(j, o, path, &st);
    if (!t)
        return st;
    char p[PATH_LEN];
    if (strcmp(t, "BertProcessing") == 0 || strcmp(t, "RobertaProcessing") == 0) {
        pp->type = t[0] == 'B' ? PP_BERT : PP_ROBERTA;
        if ((st = get_pair(j, o, path, "cls", &pp->cls, &pp->cls_id)) ||
            (st = get_pair(j, o, path, "sep", &pp->sep, &pp->sep_id)))
            return st;
        if (pp->type == PP_ROBERTA &&
            ((st = get_bool(j, o, path, "trim_offsets", true, &pp->trim_offsets)) ||
             (st = get_bool(j, o, path, "add_prefix_space", true, &pp->add_prefix_space))))
            return st;
    } else if (strcmp(t, "TemplateProcessing") == 0) {
        pp->type = PP_TEMPLATE;
        const cJSON *specials = cJSON_GetObjectItemCaseSensitive(o, "special_tokens");
        if (specials && !cJSON_IsObject(specials)) {
            subpath(p, path, "special_tokens");
            return jfail(j, p, "should be an object");
        }
        if ((st = parse_template(j, o, path, "single", specials, &pp->single, &pp->n_single)) ||
            (st = parse_template(j, o, path, "pair", specials, &pp->pair, &pp->n_pair)))
            return st;
    } else if (strcmp(t, "ByteLevel") == 0) {
        pp->type = PP_BYTELEVEL;
        if ((st = get_bool(j, o, path, "trim_offsets", true, &pp->trim_offsets)) ||
            (st = get_bool(j, o, path, "add_prefix_space", true, &pp->add_prefix_space)))
            return st;
    } else if (strcmp(t, "Sequence") == 0) {
        pp->type = PP_SEQUENCE;
        subpath(p, path, "processors");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "processors");
        if (!cJSON_IsArray(a))
            return jfail(j, p, "should be an array of post-processors");
        int k = cJSON_GetArraySize(a);
        pp->kids = calloc(k ? (size_t)k : 1, sizeof *pp->kids);
        if (!pp->kids)
            return nomem(j);
        int i = 0;
        for (const cJSON *e = a->child; e; e = e->next, i++) {
            char ip[PATH_LEN];
            subindex(ip, p, i);
            pp->n_kids = i + 1;
            if ((st = parse_postproc(j, e, ip, &pp->kids[i], depth + 1)))
                return st;
        }
    } else {
        subpath(p, path, "type");
        return jfail(j, p, "unknown post-processor \"%s\"", t);
    }
    return ATN_OK;
}

/* ---- normalizing ------------------------------------------------------------------ */

typedef struct work {
    const pipeline *pl;
    tbuf t;
    u8buf u;
    mbuf m;
    atn_tok_pieces pieces;
    pcre2_match_data *md;   /* one pair is all re_find reads */
    atn_error *err;
    /* token texts that are not vocabulary entries (a Unigram unk shows the text it covers),
       owned here until the encoding copies them */
    char **texts;
    size_t n_texts, cap_texts;
} work;

/* A copy of b[0, len) kept until work_free_texts; NULL when out of memory. */
static const char *work_keep_text(work *w, const char *b, size_t len) {
    if (w->n_texts == w->cap_texts) {
        size_t cap = w->cap_texts ? 2 * w->cap_texts : 16;
        char **v = realloc(w->texts, cap * sizeof *v);
        if (!v)
            return NULL;
        w->texts = v;
        w->cap_texts = cap;
    }
    char *t = malloc(len + 1);
    if (!t)
        return NULL;
    memcpy(t, b, len);
    t[len] = '\0';
    return w->texts[w->n_texts++] = t;
}

static bool keep_clean(uint32_t c, const void *ctx) {
    (void)ctx;
    if (c == 0 || c == 0xFFFD)
        return false;
    if (c == '\t' || c == '\n' || c == '\r')
        return true;
    if (c < 0x80)
        return !(c < 0x20 || c == 0x7F);
    return atn_uc_class_of(c) != ATN_UC_CONTROL;
}

static bool keep_not_mark(uint32_t c, const void *ctx) {
    (void)ctx;
    return !is_mark(c);
}

/* StripAccents drops every combining mark (M*: Mn, Mc, Me), BertNormalizer only Mn. */
static bool keep_not_any_mark(uint32_t c, const void *ctx) {
    (void)ctx;
    return c < 0x300 || !cls_is(CLS_MARK, c);
}

/* Replaces every character by one (map). */
static bool ns_map_space(nstr *s, tbuf *t) {
    t->n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t c = s->v[i].cp;
        if (c == '\t' || c == '\n' || c == '\r' || rs_is_space(c))
            c = ' ';
        if (!tb_push(t, c, 1))
            return false;
    }
    return transform(s, t, 0);
}

static bool ns_lower(nstr *s, tbuf *t) {
    t->n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t out[ATN_UC_MAX_LOWER];
        int k = atn_uc_lower(s->v[i].cp, out);
        for (int m = 0; m < k; m++)
            if (!tb_push(t, out[m], m == 0))
                return false;
    }
    return transform(s, t, 0);
}

/* Canonical decomposition and ordering; the items keep who consumes what. */
static bool nfd_items(const nstr *s, tbuf *t, bool compat) {
    t->n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t out[ATN_UC_MAX_COMPAT];
        int k = compat ? atn_uc_decompose_compat(s->v[i].cp, out) : atn_uc_decompose(s->v[i].cp, out);
        for (int m = 0; m < k; m++)
            if (!tb_push(t, out[m], m == 0))
                return false;
    }
    for (size_t i = 1; i < t->n; i++) {
        int c = atn_uc_ccc(t->v[i].cp);
        if (c == 0)
            continue;
        titem x = t->v[i];
        size_t k = i;
        while (k > 0 && atn_uc_ccc(t->v[k - 1].cp) > c) {
            t->v[k] = t->v[k - 1];
            k--;
        }
        t->v[k] = x;
    }
    /* the consumption follows the position, not the character (transform reads it in
       order): re-deal the consume counts so that each old character is consumed once and
       in order, by the first item of its decomposition's position */
    return true;
}

static bool ns_nfd(nstr *s, tbuf *t, bool compat) {
    return nfd_items(s, t, compat) && transform(s, t, 0);
}

static bool ns_nfc(nstr *s, tbuf *t, bool compat) {
    bool simple = true;
    for (size_t i = 0; i < s->n && simple; i++)
        simple = s->v[i].cp < (compat ? 0xA0 : 0x300);
    if (simple)
        return true;
    if (!nfd_items(s, t, compat))
        return false;
    /* compose; a removed character's consumption goes to the item before it */
    titem *v = t->v;
    size_t n = t->n;
    if (n == 0)
        return transform(s, t, 0);
    size_t starter = 0, out = 1, initial = 0;
    int last_class = atn_uc_ccc(v[0].cp);
    bool have_starter = last_class == 0;
    if (!have_starter)
        last_class = 256;
    for (size_t i = 1; i < n; i++) {
        titem c = v[i];
        int cls = atn_uc_ccc(c.cp);
        uint32_t comp = have_starter && (last_class < cls || last_class == 0)
                            ? atn_uc_compose(v[starter].cp, c.cp) : 0;
        if (comp) {
            v[starter].cp = comp;
            v[out - 1].consume += c.consume;
            continue;
        }
        if (cls == 0) {
            starter = out;
            have_starter = true;
        }
        last_class = cls;
        v[out++] = c;
    }
    t->n = out;
    return transform(s, t, initial);
}

static bool ns_replace(nstr *s, const normalizer *nz, work *w) {
    if (!ns_utf8(s, &w->u) || !re_find(nz->pat.re, s, &w->u, &w->m, &w->md))
        return false;
    tbuf *t = &w->t;
    t->n = 0;
    size_t initial = 0;
    const char *c = nz->content;
    for (size_t k = 0; k < w->m.n; k++) {
        const mrange *r = &w->m.v[k];
        if (!r->match) {
            for (size_t i = r->a; i < r->b; i++)
                if (!tb_push(t, s->v[i].cp, 1))
                    return false;
            continue;
        }
        if (!tb_skip(t, (int32_t)(r->b - r->a)))
            return false;
        for (size_t i = 0; c[i];) {
            uint32_t cp;
            int l = atn_utf8_decode((const unsigned char *)c + i, strlen(c + i), &cp);
            i += (size_t)l;
            if (!tb_push(t, cp, 0))
                return false;
        }
    }
    return transform(s, t, initial);
}

/* Prepends text (NormalizedString::prepend): the first new character replaces the old
 * first one, which comes back as an insertion. */
static bool ns_prepend(nstr *s, const char *text, tbuf *t) {
    if (s->n == 0)
        return true;
    t->n = 0;
    bool first = true;
    for (size_t i = 0; text[i];) {
        uint32_t cp;
        int l = atn_utf8_decode((const unsigned char *)text + i, strlen(text + i), &cp);
        i += (size_t)l;
        if (!tb_push(t, cp, first))
            return false;
        first = false;
    }
    if (!tb_push(t, s->v[0].cp, 0))
        return false;
    for (size_t i = 1; i < s->n; i++)
        if (!tb_push(t, s->v[i].cp, 1))
            return false;
    return transform(s, t, 0);
}

static bool ns_strip(nstr *s, bool left, bool right, tbuf *t) {
    size_t lead = 0, trail = 0;
    while (left && lead < s->n && rs_is_space(s->v[lead].cp))
        lead++;
    while (right && trail < s->n - lead && rs_is_space(s->v[s->n - 1 - trail].cp))
        trail++;
    if (!lead && !trail)
        return true;
    t->n = 0;
    for (size_t i = lead; i + trail < s->n; i++)
        if (!tb_push(t, s->v[i].cp, i + trail + 1 == s->n ? 1 + (int32_t)trail : 1))
            return false;
    return transform(s, t, lead);
}

static atn_status normalize(const normalizer *nz, nstr *s, work *w) {
    bool ok = true;
    tbuf *t = &w->t;
    switch (nz->type) {
    case N_BERT:
        if (nz->clean_text)
            ok = ns_filter(s, keep_clean, NULL, t) && ns_map_space(s, t);
        if (ok && nz->chinese) {
            bool any = false;
            for (size_t i = 0; i < s->n && !any; i++)
                any = atn_uc_is_cjk_ideograph(s->v[i].cp);
            if (any) {
                t->n = 0;
                for (size_t i = 0; i < s->n && ok; i++) {
                    uint32_t c = s->v[i].cp;
                    if (atn_uc_is_cjk_ideograph(c))
                        ok = tb_push(t, ' ', 1) && tb_push(t, c, 0) && tb_push(t, ' ', 0);
                    else
                        ok = tb_push(t, c, 1);
                }
                ok = ok && transform(s, t, 0);
            }
        }
        if (ok && (nz->strip_accents < 0 ? nz->lowercase : nz->strip_accents))
            ok = ns_nfd(s, t, false) && ns_filter(s, keep_not_mark, NULL, t);
        if (ok && nz->lowercase)
            ok = ns_lower(s, t);
        break;
    case N_NFC:
    case N_NFKC:
        ok = ns_nfc(s, t, nz->type == N_NFKC);
        break;
    case N_NFD:
    case N_NFKD:
        ok = ns_nfd(s, t, nz->type == N_NFKD);
        break;
    case N_LOWER:
        ok = ns_lower(s, t);
        break;
    case N_STRIP_ACCENTS:
        ok = ns_filter(s, keep_not_any_mark, NULL, t);
        break;
    case N_REPLACE:
        ok = ns_replace(s, nz, w);
        break;
    case N_PREPEND:
        ok = ns_prepend(s, nz->content, t);
        break;
    case N_STRIP:
        ok = ns_strip(s, nz->strip_left, nz->strip_right, t);
        break;
    case N_PRECOMPILED: {
        /* the charsmap works on bytes: map its byte alignment back to characters */
        if (!ns_utf8(s, &w->u))
            return atn_error_set(w->err, ATN_E_NOMEM, "out of memory");
        char *out = NULL;
        size_t out_len = 0;
        int32_t *ss = NULL, *se = NULL;
        atn_status st = atn_charsmap_normalize(nz->charsmap, w->u.b, w->u.len, &out, &out_len,
                                               &ss, &se, w->err);
        if (st)
            return st;
        nstr r = {.shift = s->shift, .added = -1};
        ok = ns_reserve(&r, out_len + 1);
        for (size_t i = 0; ok && i < out_len;) {
            uint32_t cp;
            int l = atn_utf8_decode((const unsigned char *)out + i, out_len - i, &cp);
            if (!l) {
                l = 1;
                cp = 0xFFFD;
            }
            size_t a = char_at(&w->u, s->n, ss[i]);
            int32_t e0 = se[i + (size_t)l - 1];
            size_t b = char_at(&w->u, s->n, e0);
            int32_t start = a < s->n ? s->v[a].start : s->shift;
            int32_t end = b > 0 && b <= s->n ? s->v[b - 1].end : start;
            r.v[r.n++] = (atn_uchar){cp, start, end};
            i += (size_t)l;
        }
        free(out);
        free(ss);
        free(se);
        if (ok) {
            free(s->v);
            s->v = r.v;
            s->n = r.n;
            s->cap = r.cap;
        } else {
            free(r.v);
        }
        break;
    }
    case N_SEQUENCE:
        for (int i = 0; i < nz->n_kids; i++) {
            atn_status st = normalize(&nz->kids[i], s, w);
            if (st)
                return st;
        }
        break;
    default:
        break;
    }
    if (!ok)
        return atn_error_set(w->err, ATN_E_NOMEM, "out of memory");
    return ATN_OK;
}

/* ---- splits ----------------------------------------------------------------------- */

typedef struct splits {
    nstr *v;
    size_t n, cap;
} splits;

static void splits_free(splits *sp) {
    for (size_t i = 0; i < sp->n; i++)
        free(sp->v[i].v);
    free(sp->v);
    sp->v = NULL;
    sp->n = sp->cap = 0;
}

/* Appends a copy of s[a, b) (dropped when empty, as PreTokenizedString::split drops
 * empty pieces). */
static bool splits_push_slice(splits *sp, const nstr *s, size_t a, size_t b, int32_t added) {
    if (b <= a)
        return true;
    if (sp->n == sp->cap) {
        size_t cap = sp->cap ? 2 * sp->cap : 16;
        nstr *v = realloc(sp->v, cap * sizeof *v);
        if (!v)
            return false;
        sp->v = v;
        sp->cap = cap;
    }
    nstr *d = &sp->v[sp->n];
    memset(d, 0, sizeof *d);
    if (!ns_reserve(d, b - a))
        return false;
    memcpy(d->v, s->v + a, (b - a) * sizeof *d->v);
    d->n = b - a;
    d->shift = s->v[a].start;
    d->added = added;
    sp->n++;
    return true;
}

/* NormalizedString::split with a behaviour, appending the pieces to out. */
static bool split_by(const nstr *s, const mbuf *m, int behavior, bool invert, splits *out) {
    /* (a, b, remove) after merging */
    size_t n = m->n;
    mrange *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        return false;
    size_t k = 0;
    bool prev = false;
    if (behavior == B_MERGED_NEXT) {
        for (size_t ii = n; ii-- > 0;) {
            mrange x = m->v[ii];
            if (invert)
                x.match = !x.match;
            if (x.match && !prev && k) {
                r[k - 1].a = x.a;
            } else {
                r[k++] = (mrange){x.a, x.b, false};
            }
            prev = x.match;
        }
        for (size_t i = 0; i < k / 2; i++) {
            mrange t = r[i];
            r[i] = r[k - 1 - i];
            r[k - 1 - i] = t;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            mrange x = m->v[i];
            if (invert)
                x.match = !x.match;
            switch (behavior) {
            case B_ISOLATED:
                r[k++] = (mrange){x.a, x.b, false};
                break;
            case B_REMOVED:
                r[k++] = (mrange){x.a, x.b, x.match};
                break;
            case B_CONTIGUOUS:
                if (x.match == prev && k)
                    r[k - 1].b = x.b;
                else
                    r[k++] = (mrange){x.a, x.b, false};
                break;
            case B_MERGED_PREV:
                if (x.match && !prev && k)
                    r[k - 1].b = x.b;
                else
                    r[k++] = (mrange){x.a, x.b, false};
                break;
            }
            prev = x.match;
        }
    }
    bool ok = true;
    for (size_t i = 0; i < k && ok; i++)
        if (!r[i].match)
            ok = splits_push_slice(out, s, r[i].a, r[i].b, -1);
    free(r);
    return ok;
}

static bool pred_space(uint32_t c) {
    return rs_is_space(c);
}

static bool pred_punct(uint32_t c) {
    return atn_uc_is_bert_punct(c);
}

/* One pre-tokenizer over every piece of sp that is not an added token. */
static atn_status pre_tokenize(const pretok *pt, splits *sp, work *w) {
    if (pt->type == P_SEQUENCE) {
        for (int i = 0; i < pt->n_kids; i++) {
            atn_status st = pre_tokenize(&pt->kids[i], sp, w);
            if (st)
                return st;
        }
        return ATN_OK;
    }
    splits out = {0};
    bool ok = true;
    for (size_t i = 0; i < sp->n && ok; i++) {
        nstr *s = &sp->v[i];
        if (s->added >= 0) {
            ok = splits_push_slice(&out, s, 0, s->n, s->added);
            if (ok)
                out.v[out.n - 1].shift = s->shift;
            continue;
        }
        switch (pt->type) {
        case P_BERT:
            /* split(is_whitespace, Removed) then split(is_bert_punc, Isolated), in one
               pass: runs of other characters and each punctuation mark are kept */
            w->m.n = 0;
            for (size_t c = 0; c < s->n && ok;) {
                uint32_t cp = s->v[c].cp;
                size_t e = c + 1;
                if (rs_is_space(cp)) {
                    ok = mb_push(&w->m, c, e, true);
                } else if (atn_uc_is_bert_punct(cp)) {
                    ok = mb_push(&w->m, c, e, false);
                } else {
                    while (e < s->n && !rs_is_space(s->v[e].cp) && !atn_uc_is_bert_punct(s->v[e].cp))
                        e++;
                    ok = mb_push(&w->m, c, e, false);
                }
                c = e;
            }
            ok = ok && split_by(s, &w->m, B_REMOVED, false, &out);
            break;
        case P_WHITESPACE_SPLIT:
            ok = fn_find(pred_space, s, &w->m) && split_by(s, &w->m, B_REMOVED, false, &out);
            break;
        case P_PUNCT:
            ok = fn_find(pred_punct, s, &w->m) && split_by(s, &w->m, pt->behavior, false, &out);
            break;
        case P_WHITESPACE:
            ok = ns_utf8(s, &w->u) && re_find(pt->pat.re, s, &w->u, &w->m, &w->md) &&
                 split_by(s, &w->m, B_REMOVED, true, &out);
            break;
        case P_DIGITS:
            ok = ns_utf8(s, &w->u) && re_find(pt->pat.re, s, &w->u, &w->m, &w->md) &&
                 split_by(s, &w->m, pt->individual_digits ? B_ISOLATED : B_CONTIGUOUS, false, &out);
            break;
        case P_SPLIT:
            ok = ns_utf8(s, &w->u) && re_find(pt->pat.re, s, &w->u, &w->m, &w->md) &&
                 split_by(s, &w->m, pt->behavior, pt->invert, &out);
            break;
        case P_BYTELEVEL: {
            if (pt->add_prefix_space && s->n && s->v[0].cp != ' ')
                ok = ns_prepend(s, " ", &w->t);
            size_t first = out.n;
            if (ok && pt->use_regex)
                ok = ns_utf8(s, &w->u) && re_find(pt->pat.re, s, &w->u, &w->m, &w->md) &&
                     split_by(s, &w->m, B_ISOLATED, false, &out);
            else if (ok)
                ok = splits_push_slice(&out, s, 0, s->n, -1);
            /* every piece to the byte-level alphabet */
            for (size_t k = first; k < out.n && ok; k++) {
                nstr *x = &out.v[k];
                tbuf *t = &w->t;
                t->n = 0;
                for (size_t c = 0; c < x->n && ok; c++) {
                    char b[4];
                    int l = atn_utf8_encode(x->v[c].cp, b);
                    for (int q = 0; q < l && ok; q++)
                        ok = tb_push(t, atn_byte_level_char((uint8_t)b[q]), q == 0);
                }
                ok = ok && transform(x, t, 0);
            }
            break;
        }
        case P_METASPACE: {
            /* ' ' -> replacement, each replaced character an insertion after the space */
            tbuf *t = &w->t;
            t->n = 0;
            size_t initial = 0;
            for (size_t c = 0; c < s->n && ok; c++) {
                if (s->v[c].cp == ' ') {
                    ok = tb_skip(t, 1) && tb_push(t, pt->replacement, 0);
                } else {
                    ok = tb_push(t, s->v[c].cp, 1);
                }
            }
            ok = ok && transform(s, t, initial);
            bool pre = ok && s->n && s->v[0].cp != pt->replacement &&
                       (pt->prepend_scheme == PREPEND_ALWAYS ||
                        (pt->prepend_scheme == PREPEND_FIRST && s->shift == 0));
            if (pre) {
                char rb[5];
                rb[atn_utf8_encode(pt->replacement, rb)] = '\0';
                ok = ns_prepend(s, rb, t);
            }
            if (ok && pt->split) {
                w->m.n = 0;
                size_t last = 0;
                for (size_t c = 0; c < s->n && ok; c++) {
                    if (s->v[c].cp == pt->replacement) {
                        if (last < c)
                            ok = mb_push(&w->m, last, c, false);
                        ok = ok && mb_push(&w->m, c, c + 1, true);
                        last = c + 1;
                    }
                }
                if (ok && (last != s->n || s->n == 0))
                    ok = mb_push(&w->m, last, s->n, false);
                ok = ok && split_by(s, &w->m, B_MERGED_NEXT, false, &out);
            } else if (ok) {
                ok = splits_push_slice(&out, s, 0, s->n, -1);
            }
            break;
        }
        }
    }
    if (!ok) {
        splits_free(&out);
        return atn_error_set(w->err, ATN_E_NOMEM, "out of memory");
    }
    splits_free(sp);
    *sp = out;
    return ATN_OK;
}

/* ---- added tokens ----------------------------------------------------------------- */

static bool ends_with_word(const nstr *s, size_t at) {
    return at > 0 && is_word_char(s->v[at - 1].cp);
}

static bool starts_with_word(const nstr *s, size_t at) {
    return at < s->n && is_word_char(s->v[at].cp);
}

/* AddedVocabulary::find_matches + split_with_indices on one piece: the added tokens
 * (normalized or not, as `norm` says) found leftmost-longest in s. */
static bool split_added(const pipeline *pl, const nstr *s, bool norm, splits *out, work *w) {
    if (!ns_utf8(s, &w->u))
        return false;
    const char *b = w->u.b;
    size_t len = w->u.len;
    size_t start_off = 0;   /* characters */
    size_t pos = 0;         /* bytes */
    bool ok = true;
    while (pos < len && ok) {
        /* leftmost position where some token matches, longest there */
        int best = -1;
        size_t blen = 0;
        for (size_t at = pos; at < len && best < 0; at++) {
            for (int k = 0; k < pl->n_added; k++) {
                const added_tok *a = &pl->added[k];
                if (a->normalized != norm)
                    continue;
                const char *c = norm ? a->norm_content : a->content;
                size_t cl = norm ? a->norm_len : a->len;
                if (cl == 0 || cl > len - at || cl <= blen || memcmp(b + at, c, cl) != 0)
                    continue;
                best = k;
                blen = cl;
            }
            if (best >= 0) {
                pos = at;
                break;
            }
        }
        if (best < 0)
            break;
        const added_tok *a = &pl->added[best];
        size_t ca = char_at(&w->u, s->n, (int32_t)pos);
        size_t cb = char_at(&w->u, s->n, (int32_t)(pos + blen));
        pos += blen;
        if (a->single_word && (ends_with_word(s, ca) || starts_with_word(s, cb)))
            continue;
        if (a->lstrip) {
            size_t ns = ca;
            while (ns > 0 && rs_is_space(s->v[ns - 1].cp))
                ns--;
            ca = ns > start_off ? ns : start_off;
        }
        if (a->rstrip) {
            while (cb < s->n && rs_is_space(s->v[cb].cp))
                cb++;
            pos = (size_t)w->u.offs[cb];
        }
        ok = splits_push_slice(out, s, start_off, ca, -1) &&
             splits_push_slice(out, s, ca, cb, a->id);
        start_off = cb;
    }
    return ok && splits_push_slice(out, s, start_off, s->n, -1);
}

/* ---- one sequence: text -> tokens ----------------------------------------------------- */

typedef struct etok {
    int32_t id;
    int32_t start, end;
    int32_t word;
    int32_t type_id;
    bool special;        /* added by the post-processor */
    bool added;          /* an added token found in the text */
    bool continuation;
    const char *text;    /* borrowed: the token's vocabulary text */
    int32_t segment;     /* 0 text, 1 pair, -1 added by the post-processor */
    int32_t lead, trail; /* characters of its text, front and back, that are 'Ġ' or white
                            space (what ByteLevel's offset trimming looks at) */
} etok;

static bool trim_char(uint32_t cp) {
    return cp == 0x120 || rs_is_space(cp);
}

/* lead and trail of a token whose text is s */
static void count_trim(const char *s, int32_t *lead, int32_t *trail) {
    size_t len = strlen(s), p = 0;
    *lead = *trail = 0;
    while (p < len) {
        uint32_t cp;
        int l = atn_utf8_decode((const unsigned char *)s + p, len - p, &cp);
        if (!l || !trim_char(cp))
            break;
        (*lead)++;
        p += (size_t)l;
    }
    size_t q = len;
    while (q > 0) {
        size_t st = q - 1;
        while (st > 0 && ((unsigned char)s[st] & 0xC0) == 0x80)
            st--;
        uint32_t cp;
        int l = atn_utf8_decode((const unsigned char *)s + st, q - st, &cp);
        if (!l || !trim_char(cp))
            break;
        (*trail)++;
        q = st;
    }
}

typedef struct ebuf {
    etok *v;
    size_t n, cap;
} ebuf;

static bool eb_push(ebuf *e, etok t) {
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 64;
        etok *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return false;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = t;
    return true;
}

static const char *pl_id_text(const pipeline *pl, int32_t id) {
    for (int k = 0; k < pl->n_added; k++)
        if (pl->added[k].id == id)
            return pl->added[k].content;
    const char *t = pl->model->ops->id_to_token(pl->model, id);
    return t ? t : "";
}

static atn_status encode_seq(const pipeline *pl, const char *text, const char *what,
                             int32_t type_id, ebuf *out, work *w) {
    atn_error *err = w->err;
    size_t len = strlen(text);
    if (len > (size_t)INT32_MAX / 8)
        return atn_error_set(err, ATN_E_INVALID, "%s: %zu bytes is too long", what, len);
    nstr all = {.added = -1};
    if (!ns_reserve(&all, len + 1))
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int k = atn_utf8_decode(u + i, len - i, &cp);
        if (!k) {
            free(all.v);
            return atn_error_set(err, ATN_E_INVALID, "%s: invalid UTF-8 at byte offset %zu "
                                 "(byte 0x%02X)", what, i, u[i]);
        }
        all.v[all.n++] = (atn_uchar){cp, (int32_t)i, (int32_t)(i + (size_t)k)};
        i += (size_t)k;
    }
    atn_status st = ATN_OK;
    splits sp = {0}, sp2 = {0};
    bool ok;
    if (all.n == 0) {
        free(all.v);
        return ATN_OK;
    }
    /* 1. added tokens matched on the original text */
    ok = split_added(pl, &all, false, &sp, w);
    free(all.v);
    /* 2. normalize the rest, then the normalized added tokens */
    for (size_t i = 0; i < sp.n && ok && st == ATN_OK; i++) {
        nstr *s = &sp.v[i];
        if (s->added >= 0) {
            ok = splits_push_slice(&sp2, s, 0, s->n, s->added);
            if (ok)
                sp2.v[sp2.n - 1].shift = s->shift;
            continue;
        }
        if (pl->norm && (st = normalize(pl->norm, s, w)) != ATN_OK)
            break;
        if (s->n)
            ok = split_added(pl, s, true, &sp2, w);
    }
    splits_free(&sp);
    if (!ok && st == ATN_OK)
        st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
    /* 3. pre-tokenize */
    if (st == ATN_OK && pl->pre)
        st = pre_tokenize(pl->pre, &sp2, w);
    /* 4. the model, word by word */
    for (size_t i = 0; i < sp2.n && st == ATN_OK; i++) {
        nstr *s = &sp2.v[i];
        if (s->added >= 0) {
            etok t = {s->added, s->v[0].start, s->v[s->n - 1].end, (int32_t)i, type_id, false,
                      true, false, pl_id_text(pl, s->added), type_id, 0, 0};
            while (t.lead < (int32_t)s->n && trim_char(s->v[t.lead].cp))
                t.lead++;
            while (t.trail < (int32_t)s->n && trim_char(s->v[s->n - 1 - (size_t)t.trail].cp))
                t.trail++;
            if (!eb_push(out, t))
                st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            continue;
        }
        if (!ns_utf8(s, &w->u)) {
            st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            break;
        }
        w->pieces.n = 0;
        st = pl->model->ops->tokenize(pl->model, w->u.b, w->u.len, &w->pieces, err);
        for (int32_t k = 0; k < w->pieces.n && st == ATN_OK; k++) {
            const atn_tok_piece *p = &w->pieces.v[k];
            /* the piece's characters as the Rust library's BytesToCharOffsetConverter gives
               them: from the character holding its first byte to the one holding its last
               (a byte_fallback piece inside a multi-byte character covers that character);
               a span reaching past the word (the bytes of a continuing_subword_prefix or
               end_of_word_suffix) ends at the character after its start, or two on */
            int32_t wlen = (int32_t)w->u.len;
            size_t ca, cb;
            if (p->start >= 0 && p->start < p->end && p->end <= wlen) {
                ca = char_holding(&w->u, s->n, p->start);
                cb = char_holding(&w->u, s->n, p->end - 1) + 1;
            } else if (p->start >= 0 && p->start < wlen) {
                ca = char_holding(&w->u, s->n, p->start);
                cb = p->end < wlen ? char_holding(&w->u, s->n, p->end)
                     : p->end - 1 < wlen ? char_holding(&w->u, s->n, p->end - 1) + 1 : ca + 2;
                if (cb > s->n)
                    cb = s->n;
            } else {
                ca = char_at(&w->u, s->n, p->start);
                cb = char_at(&w->u, s->n, p->end);
            }
            int32_t a, b;
            if (cb > ca && cb <= s->n) {
                a = s->v[ca].start;
                b = s->v[cb - 1].end;
            } else {
                a = b = ca < s->n ? s->v[ca].start : s->v[s->n - 1].end;
            }
            const char *ttext = pl_id_text(pl, p->id);
            /* Unigram's tokens carry the text they cover: its unk reads as the text, not "<unk>" */
            if (pl->model->ops->unk_id(pl->model) == p->id && strcmp(pl->model->ops->type, "Unigram") == 0 &&
                p->start >= 0 && p->start <= p->end && p->end <= wlen &&
                !(ttext = work_keep_text(w, w->u.b + p->start, (size_t)(p->end - p->start)))) {
                st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
                break;
            }
            etok t = {p->id, a, b, (int32_t)i, type_id, false, false, k > 0, ttext, type_id, 0, 0};
            count_trim(t.text, &t.lead, &t.trail);
            if (!eb_push(out, t))
                st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
        }
    }
    splits_free(&sp2);
    return st;
}

/* ---- post-processing -------------------------------------------------------------- */

static int added_count(const postproc *pp, bool pair) {
    if (!pp)
        return 0;
    switch (pp->type) {
    case PP_BERT:
        return pair ? 3 : 2;
    case PP_ROBERTA:
        return pair ? 4 : 2;
    case PP_TEMPLATE: {
        int n = 0;
        const tpl_piece *v = pair ? pp->pair : pp->single;
        int k = pair ? pp->n_pair : pp->n_single;
        for (int i = 0; i < k; i++)
            if (v[i].special)
                n += v[i].n_ids;
        return n;
    }
    case PP_SEQUENCE: {
        int n = 0;
        for (int i = 0; i < pp->n_kids; i++)
            n += added_count(&pp->kids[i], pair);
        return n;
    }
    default:
        return 0;
    }
}

/* byte_level::process_offsets.  The library trims a count of characters off the offsets
 * it reports in characters (what transformers' offset_mapping gives); here the spans are
 * in bytes, so the same characters are stepped over in the original text src. */
static void trim_offsets(ebuf *e, bool add_prefix_space, const char *src) {
    for (size_t i = 0; i < e->n; i++) {
        etok *t = &e->v[i];
        int32_t lead = t->lead, trail = t->trail;
        if (t->special || t->start < 0 || !src)
            continue;
        if (lead > 0) {
            bool is_first = i == 0 || t->start == 0;
            if (is_first && add_prefix_space && lead == 1)
                lead = 0;
            int32_t p = t->start;
            for (int32_t k = 0; k < lead && p < t->end; k++) {
                p++;
                while (p < t->end && ((unsigned char)src[p] & 0xC0) == 0x80)
                    p++;
            }
            t->start = p;
        }
        if (trail > 0) {
            /* offsets.1 >= trailing_spaces, in characters */
            int32_t chars_before = 0;
            for (int32_t p = 0; p < t->end && chars_before < trail; p++)
                chars_before += ((unsigned char)src[p] & 0xC0) != 0x80;
            if (chars_before >= trail) {
                int32_t p = t->end;
                for (int32_t k = 0; k < trail && p > t->start; k++) {
                    p--;
                    while (p > t->start && ((unsigned char)src[p] & 0xC0) == 0x80)
                        p--;
                }
                t->end = p;
            }
        }
    }
}

/* A token the post-processor adds: its text is the vocabulary entry of its id (checked to
 * exist at load), trimming looks at the name the processor gives. */
static etok special_tok(const pipeline *pl, int32_t id, const char *text, int32_t type_id) {
    etok t = {id, -1, -1, -1, type_id, true, false, false, pl_id_text(pl, id), -1, 0, 0};
    count_trim(text, &t.lead, &t.trail);
    return t;
}

/* Runs processor pp on the n_enc (1 or 2) encodings. */
static bool post_process(const pipeline *pl, const postproc *pp, ebuf *enc, int n_enc,
                         const char *const src[2]) {
    switch (pp->type) {
    case PP_BYTELEVEL:
        if (pp->trim_offsets)
            for (int i = 0; i < n_enc; i++)
                trim_offsets(&enc[i], pp->add_prefix_space, src[i]);
        return true;
    case PP_SEQUENCE:
        for (int i = 0; i < pp->n_kids; i++)
            if (!post_process(pl, &pp->kids[i], enc, n_enc, src))
                return false;
        return true;
    case PP_BERT:
    case PP_ROBERTA: {
        bool rob = pp->type == PP_ROBERTA;
        if (rob && pp->trim_offsets)
            for (int i = 0; i < n_enc; i++)
                trim_offsets(&enc[i], pp->add_prefix_space, src[i]);
        for (int i = 0; i < n_enc; i++) {
            int32_t ty = rob ? 0 : i;
            ebuf o = {0};
            bool ok = true;
            if (i == 0)
                ok = eb_push(&o, special_tok(pl, pp->cls_id, pp->cls, 0));
            else if (rob)
                ok = eb_push(&o, special_tok(pl, pp->sep_id, pp->sep, 0));
            for (size_t k = 0; k < enc[i].n && ok; k++) {
                etok t = enc[i].v[k];
                t.type_id = ty;
                ok = eb_push(&o, t);
            }
            ok = ok && eb_push(&o, special_tok(pl, pp->sep_id, pp->sep, ty));
            if (!ok) {
                free(o.v);
                return false;
            }
            free(enc[i].v);
            enc[i] = o;
        }
        return true;
    }
    case PP_TEMPLATE: {
        const tpl_piece *v = n_enc == 2 ? pp->pair : pp->single;
        int k = n_enc == 2 ? pp->n_pair : pp->n_single;
        ebuf o = {0};
        bool ok = true;
        for (int i = 0; i < k && ok; i++) {
            if (v[i].special) {
                for (int m = 0; m < v[i].n_ids && ok; m++)
                    ok = eb_push(&o, special_tok(pl, v[i].ids[m], v[i].tokens[m], v[i].type_id));
            } else if (v[i].seq < n_enc) {
                const ebuf *from = &enc[v[i].seq];
                for (size_t q = 0; q < from->n && ok; q++) {
                    etok t = from->v[q];
                    t.type_id = v[i].type_id;
                    ok = eb_push(&o, t);
                }
            }
        }
        if (!ok) {
            free(o.v);
            return false;
        }
        for (int i = 0; i < n_enc; i++) {
            free(enc[i].v);
            enc[i] = (ebuf){0};
        }
        enc[0] = o;
        return true;
    }
    }
    return true;
}

/* ---- encode ------------------------------------------------------------------------- */

static atn_token_role role_of(const pipeline *pl, int32_t id) {
    for (int r = ATN_TOKEN_CLS; r <= ATN_TOKEN_UNK; r++)
        if (r != ATN_TOKEN_WORD && pl->role_id[r] == id && id >= 0)
            return (atn_token_role)r;
    return ATN_TOKEN_WORD;
}

static void work_free(work *w) {
    free(w->t.v);
    free(w->t.spare);
    pcre2_match_data_free(w->md);
    free(w->u.b);
    free(w->u.offs);
    free(w->m.v);
    free(w->pieces.v);
}

/* The kept token texts (work_keep_text): freed once the encoding has copied them. */
static void work_free_texts(work *w) {
    for (size_t i = 0; i < w->n_texts; i++)
        free(w->texts[i]);
    free(w->texts);
    w->texts = NULL;
    w->n_texts = w->cap_texts = 0;
}

static atn_status pl_encode(const atn_tokenizer *base, const char *text, const char *text_pair,
                            int32_t max_len, atn_encoding **out, atn_error *err) {
    const pipeline *pl = (const pipeline *)base;
    bool pair = text_pair != NULL;
    int n_special = added_count(pl->post, pair);
    if (max_len < 0 || (max_len > 0 && max_len < n_special + 1))
        return atn_error_set(err, ATN_E_INVALID, "maximum length %d is too small: the special "
                             "tokens alone need %d positions", max_len, n_special);
    work w = {.pl = pl, .err = err};
    ebuf enc[2] = {{0}, {0}};
    atn_status st = encode_seq(pl, text, "text", 0, &enc[0], &w);
    if (st == ATN_OK && pair)
        st = encode_seq(pl, text_pair, "text pair", 1, &enc[1], &w);
    work_free(&w);
    if (st) {
        work_free_texts(&w);
        free(enc[0].v);
        free(enc[1].v);
        return st;
    }
    size_t n1 = enc[0].n, n2 = enc[1].n, dropped = 0;
    bool truncated = false;
    if (max_len > 0 && n1 + n2 + (size_t)n_special > (size_t)max_len) {
        size_t ml = (size_t)max_len - (size_t)n_special;
        truncated = true;
        if (!pair) {
            dropped = n1 - ml;
            n1 = ml;
        } else {
            size_t a = n1, b = n2;
            bool swap = a > b;
            if (swap) {
                size_t t = a;
                a = b;
                b = t;
            }
            if (a > ml)
                b = a;
            else
                b = a > ml - a ? a : ml - a;
            if (a + b > ml) {
                a = ml / 2;
                b = a + ml % 2;
            }
            if (swap) {
                size_t t = a;
                a = b;
                b = t;
            }
            size_t k1 = n1 < a ? n1 : a, k2 = n2 < b ? n2 : b;
            dropped = n1 - k1 + n2 - k2;
            n1 = k1;
            n2 = k2;
        }
        enc[0].n = n1;
        enc[1].n = n2;
    }
    int n_enc = pair ? 2 : 1;
    const char *const seg_text[2] = {text, text_pair};
    bool ok = !pl->post || post_process(pl, pl->post, enc, n_enc, seg_text);
    if (!ok) {
        free(enc[0].v);
        free(enc[1].v);
        work_free_texts(&w);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    size_t n = enc[0].n + enc[1].n;
    atn_encoding *e = atn_encoding_alloc((int32_t)n);
    if (!e) {
        free(enc[0].v);
        free(enc[1].v);
        work_free_texts(&w);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory for %zu tokens", n);
    }
    e->n = (int32_t)n;
    e->truncated = truncated;
    e->n_dropped = (int32_t)dropped;
    int32_t unk = pl->model->ops->unk_id(pl->model);
    size_t k = 0;
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < enc[s].n; i++, k++) {
            const etok *t = &enc[s].v[i];
            atn_token *o = &e->tokens[k];
            int seg = t->special ? -1 : t->segment;
            int32_t ty = t->type_id;
            o->text = strdup(t->text ? t->text : "");
            if (!o->text)
                ok = false;
            o->id = t->id;
            o->type_id = ty;
            o->start = t->special ? -1 : t->start;
            o->end = t->special ? -1 : t->end;
            o->segment = seg;
            o->word = t->special ? -1 : t->word;
            bool added_special = false;
            if (t->added)
                for (int q = 0; q < pl->n_added; q++)
                    if (pl->added[q].id == t->id)
                        added_special = pl->added[q].special;
            o->special = t->special || added_special;
            o->role = role_of(pl, t->id);
            if (!t->special && !t->added && t->id == unk && unk >= 0)
                o->role = ATN_TOKEN_UNK;
            o->continuation = t->continuation;
            e->ids[k] = t->id;
            e->type_ids[k] = ty;
            e->mask[k] = 1;
        }
    }
    free(enc[0].v);
    free(enc[1].v);
    work_free_texts(&w);
    if (!ok) {
        atn_encoding_free(e);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    *out = e;
    return ATN_OK;
}

/* ---- the vocabulary side ------------------------------------------------------------ */

static int32_t pl_vocab_size(const atn_tokenizer *t) {
    return ((const pipeline *)t)->vocab_size;
}

static int32_t pl_token_to_id(const atn_tokenizer *t, const char *token) {
    const pipeline *pl = (const pipeline *)t;
    for (int k = 0; k < pl->n_added; k++)
        if (strcmp(pl->added[k].content, token) == 0)
            return pl->added[k].id;
    return pl->model->ops->token_to_id(pl->model, token, strlen(token));
}

static int32_t pl_special_id(const atn_tokenizer *t, atn_token_role role) {
    const pipeline *pl = (const pipeline *)t;
    if (role < ATN_TOKEN_CLS || role > ATN_TOKEN_UNK)
        return -1;
    return pl->role_id[role];
}

/* How a vocabulary entry reads in a text: byte-level pieces decoded, the metaspace
 * character as a space, WordPiece's prefix dropped. */
static char *make_surface(const pipeline *pl, const char *t, bool *partial) {
    size_t len = strlen(t);
    *partial = false;
    if (pl->wp_prefix && *pl->wp_prefix && strncmp(t, pl->wp_prefix, strlen(pl->wp_prefix)) == 0 &&
        len > strlen(pl->wp_prefix))
        return strdup(t + strlen(pl->wp_prefix));
    if (pl->byte_level) {
        unsigned char *b = malloc(len + 1);
        if (!b)
            return NULL;
        size_t n = 0;
        bool all = true;
        for (size_t i = 0; i < len && all;) {
            uint32_t cp;
            int l = atn_utf8_decode((const unsigned char *)t + i, len - i, &cp);
            int by = l ? pl_char_byte(cp) : -1;
            if (by < 0)
                all = false;
            else
                b[n++] = (unsigned char)by;
            i += l ? (size_t)l : 1;
        }
        if (all && n) {
            if (atn_utf8_check(b, n) == n) {
                b[n] = '\0';
                return (char *)b;
            }
            /* part of a character: the valid prefix, then the bytes as \xNN */
            *partial = true;
            size_t ok = atn_utf8_check(b, n);
            char *s = malloc(ok + 4 * (n - ok) + 1);
            if (!s) {
                free(b);
                return NULL;
            }
            memcpy(s, b, ok);
            size_t m = ok;
            for (size_t i = ok; i < n; i++)
                m += (size_t)sprintf(s + m, "\\x%02X", b[i]);
            s[m] = '\0';
            free(b);
            return s;
        }
        free(b);
    }
    if (pl->metaspace) {
        char mb[5];
        int ml = atn_utf8_encode(pl->meta_char, mb);
        char *s = malloc(len + 1);
        if (!s)
            return NULL;
        size_t m = 0;
        for (size_t i = 0; i < len;) {
            if (len - i >= (size_t)ml && memcmp(t + i, mb, (size_t)ml) == 0) {
                s[m++] = ' ';
                i += (size_t)ml;
            } else {
                s[m++] = t[i++];
            }
        }
        s[m] = '\0';
        return s;
    }
    return strdup(t);
}

static void build_surfaces(pipeline *pl) {
    pl->surface = calloc((size_t)pl->vocab_size + 1, sizeof *pl->surface);
    pl->partial = calloc((size_t)pl->vocab_size + 1, sizeof *pl->partial);
    if (!pl->surface || !pl->partial)
        return;
    for (int32_t id = 0; id < pl->vocab_size; id++) {
        const char *t = pl_id_text(pl, id);
        bool is_added = false;
        for (int k = 0; k < pl->n_added; k++)
            is_added |= pl->added[k].id == id;
        pl->surface[id] = is_added ? strdup(t) : make_surface(pl, t, &pl->partial[id]);
        if (!pl->surface[id])
            return;
    }
    pl->surf_ok = true;
}

static pthread_mutex_t surf_lock = PTHREAD_MUTEX_INITIALIZER;

static bool pl_id_info(const atn_tokenizer *base, int32_t id, atn_vocab_entry *out) {
    pipeline *pl = (pipeline *)base;   /* the surfaces are made once, on first use */
    if (id < 0 || id >= pl->vocab_size)
        return false;
    pthread_mutex_lock(&surf_lock);
    if (!pl->surface)
        build_surfaces(pl);
    pthread_mutex_unlock(&surf_lock);
    const char *t = pl_id_text(pl, id);
    out->text = t;
    out->surface = pl->surf_ok ? pl->surface[id] : t;
    out->role = role_of(pl, id);
    bool special = false;
    for (int k = 0; k < pl->n_added; k++)
        if (pl->added[k].id == id)
            special = pl->added[k].special;
    out->special = special;
    out->partial = pl->surf_ok && pl->partial[id];
    out->continuation = pl->wp_prefix && *pl->wp_prefix &&
                        strncmp(t, pl->wp_prefix, strlen(pl->wp_prefix)) == 0 &&
                        strlen(t) > strlen(pl->wp_prefix);
    return true;
}

static void pl_free(atn_tokenizer *base) {
    pipeline *pl = (pipeline *)base;
    if (!pl)
        return;
    free(pl->origin);
    free_normalizer(pl->norm);
    free_pretok(pl->pre);
    free_postproc(pl->post);
    atn_tok_model_free(pl->model);
    for (int k = 0; k < pl->n_added; k++) {
        free(pl->added[k].content);
        free(pl->added[k].norm_content);
    }
    free(pl->added);
    if (pl->surface)
        for (int32_t i = 0; i < pl->vocab_size; i++)
            free(pl->surface[i]);
    free(pl->surface);
    free(pl->partial);
    free(pl->wp_prefix);
    free(pl);
}

static const atn_tokenizer_ops pipeline_ops = {
    .kind = "tokenizer.json",
    .encode = pl_encode,
    .vocab_size = pl_vocab_size,
    .token_to_id = pl_token_to_id,
    .id_info = pl_id_info,
    .special_id = pl_special_id,
    .free = pl_free,
};

bool atn_tok_is_pipeline(const atn_tokenizer *tok) {
    return tok && tok->ops == &pipeline_ops;
}

bool atn_tok_pipeline_set_role(atn_tokenizer *tok, atn_token_role role, const char *name) {
    if (!atn_tok_is_pipeline(tok) || !name || role < ATN_TOKEN_CLS || role > ATN_TOKEN_UNK ||
        role == ATN_TOKEN_WORD)
        return false;
    int32_t id = pl_token_to_id(tok, name);
    if (id < 0)
        return false;
    ((pipeline *)tok)->role_id[role] = id;
    return true;
}

/* ---- reading the file ------------------------------------------------------------- */

static bool has_pretok(const pretok *p, int type) {
    if (!p)
        return false;
    if (p->type == type)
        return true;
    for (int i = 0; i < p->n_kids; i++)
        if (has_pretok(&p->kids[i], type))
            return true;
    return false;
}

static const pretok *find_pretok(const pretok *p, int type) {
    if (!p)
        return NULL;
    if (p->type == type)
        return p;
    for (int i = 0; i < p->n_kids; i++) {
        const pretok *q = find_pretok(&p->kids[i], type);
        if (q)
            return q;
    }
    return NULL;
}

static atn_status parse_added(const jctx *j, pipeline *pl, const cJSON *a) {
    if (!a || cJSON_IsNull(a))
        return ATN_OK;
    if (!cJSON_IsArray(a))
        return jfail(j, "added_tokens", "should be an array");
    int n = cJSON_GetArraySize(a);
    pl->added = calloc(n ? (size_t)n : 1, sizeof *pl->added);
    if (!pl->added)
        return nomem(j);
    /* special ones first, then the others (the library's special_tokens then
       added_tokens), each in file order */
    for (int pass = 0; pass < 2; pass++) {
        int i = 0;
        for (const cJSON *e = a->child; e; e = e->next, i++) {
            char p[PATH_LEN];
            subindex(p, "added_tokens", i);
            if (!cJSON_IsObject(e))
                return jfail(j, p, "should be an object");
            bool special;
            atn_status st = get_bool(j, e, p, "special", false, &special);
            if (st)
                return st;
            if (special != (pass == 0))
                continue;
            added_tok *t = &pl->added[pl->n_added];
            const char *c;
            const cJSON *idv = cJSON_GetObjectItemCaseSensitive(e, "id");
            char ip[PATH_LEN];
            subpath(ip, p, "id");
            if ((st = get_str(j, e, p, "content", true, &c)))
                return st;
            if (!idv)
                return jfail(j, ip, "missing");
            if ((st = get_int(j, idv, ip, &t->id)) ||
                (st = get_bool(j, e, p, "lstrip", false, &t->lstrip)) ||
                (st = get_bool(j, e, p, "rstrip", false, &t->rstrip)) ||
                (st = get_bool(j, e, p, "single_word", false, &t->single_word)) ||
                (st = get_bool(j, e, p, "normalized", !special, &t->normalized)))
                return st;
            t->special = special;
            if (!(t->content = strdup(c)))
                return nomem(j);
            t->len = strlen(c);
            pl->n_added++;
        }
    }
    return ATN_OK;
}

/* The normalized form of each normalized added token (refresh_added_tokens). */
static atn_status normalize_added(pipeline *pl, atn_error *err) {
    work w = {.pl = pl, .err = err};
    atn_status st = ATN_OK;
    for (int k = 0; k < pl->n_added && st == ATN_OK; k++) {
        added_tok *t = &pl->added[k];
        if (!t->normalized)
            continue;
        nstr s = {.added = -1};
        if (!ns_reserve(&s, t->len + 1)) {
            st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            break;
        }
        for (size_t i = 0; i < t->len;) {
            uint32_t cp;
            int l = atn_utf8_decode((const unsigned char *)t->content + i, t->len - i, &cp);
            s.v[s.n++] = (atn_uchar){cp, (int32_t)i, (int32_t)(i + (size_t)l)};
            i += (size_t)l;
        }
        if (pl->norm)
            st = normalize(pl->norm, &s, &w);
        if (st == ATN_OK) {
            if (!ns_utf8(&s, &w.u) || !(t->norm_content = strdup(w.u.b)))
                st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            else
                t->norm_len = w.u.len;
        }
        free(s.v);
    }
    work_free(&w);
    work_free_texts(&w);
    return st;
}

/* The roles the file itself shows: the post-processor's cls/sep, the model's unk, and
 * added tokens with the usual names. */
static void default_roles(pipeline *pl) {
    for (int r = 0; r <= ATN_TOKEN_UNK; r++)
        pl->role_id[r] = -1;
    static const struct { const char *name; atn_token_role role; } names[] = {
        {"[CLS]", ATN_TOKEN_CLS}, {"<s>", ATN_TOKEN_CLS}, {"[SEP]", ATN_TOKEN_SEP},
        {"</s>", ATN_TOKEN_SEP}, {"[MASK]", ATN_TOKEN_MASK}, {"<mask>", ATN_TOKEN_MASK},
        {"[PAD]", ATN_TOKEN_PAD}, {"<pad>", ATN_TOKEN_PAD}, {"[UNK]", ATN_TOKEN_UNK},
        {"<unk>", ATN_TOKEN_UNK},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (pl->role_id[names[i].role] < 0)
            pl->role_id[names[i].role] = pl_token_to_id(&pl->base, names[i].name);
    const postproc *pp = pl->post;
    if (pp && pp->type == PP_SEQUENCE)
        for (int i = 0; i < pp->n_kids; i++)
            if (pp->kids[i].type != PP_BYTELEVEL)
                pp = &pp->kids[i];
    if (pp && (pp->type == PP_BERT || pp->type == PP_ROBERTA)) {
        pl->role_id[ATN_TOKEN_CLS] = pp->cls_id;
        pl->role_id[ATN_TOKEN_SEP] = pp->sep_id;
    } else if (pp && pp->type == PP_TEMPLATE && pp->n_single > 0) {
        /* a special before A is the classifier token, one after it the separator */
        for (int i = 0; i < pp->n_single; i++) {
            if (!pp->single[i].special || pp->single[i].n_ids != 1)
                continue;
            bool before = i + 1 < pp->n_single && !pp->single[i + 1].special;
            pl->role_id[before && i == 0 ? ATN_TOKEN_CLS : ATN_TOKEN_SEP] = pp->single[i].ids[0];
        }
    }
    int32_t unk = pl->model->ops->unk_id(pl->model);
    if (unk >= 0)
        pl->role_id[ATN_TOKEN_UNK] = unk;
}

/* Every id a post-processor adds must be in the vocabulary (the model has no row for
 * another). */
static atn_status check_post_ids(const jctx *j, const pipeline *pl, const postproc *pp,
                                 const char *path) {
    char p[PATH_LEN];
    switch (pp->type) {
    case PP_BERT:
    case PP_ROBERTA:
        for (int k = 0; k < 2; k++) {
            int32_t id = k ? pp->sep_id : pp->cls_id;
            if (id >= pl->vocab_size || !pl_id_text(pl, id)[0]) {
                subpath(p, path, k ? "sep" : "cls");
                return jfail(j, p, "id %d is not in the vocabulary (%d ids)", id, pl->vocab_size);
            }
        }
        return ATN_OK;
    case PP_TEMPLATE:
        for (int pass = 0; pass < 2; pass++) {
            const tpl_piece *v = pass ? pp->pair : pp->single;
            int n = pass ? pp->n_pair : pp->n_single;
            for (int i = 0; i < n; i++)
                for (int m = 0; m < v[i].n_ids; m++)
                    if (v[i].ids[m] >= pl->vocab_size || !pl_id_text(pl, v[i].ids[m])[0]) {
                        char q[PATH_LEN];
                        subpath(q, path, "special_tokens");
                        return jfail(j, q, "\"%s\" has id %d, which is not in the vocabulary "
                                     "(%d ids)", v[i].tokens[m], v[i].ids[m], pl->vocab_size);
                    }
        }
        return ATN_OK;
    case PP_SEQUENCE:
        for (int i = 0; i < pp->n_kids; i++) {
            char q[PATH_LEN];
            subpath(q, path, "processors");
            subindex(p, q, i);
            atn_status st = check_post_ids(j, pl, &pp->kids[i], p);
            if (st)
                return st;
        }
        return ATN_OK;
    default:
        return ATN_OK;
    }
}

static atn_tok_model *build_model(const jctx *j, const cJSON *m) {
    atn_status st;
    const char *t = NULL;
    if (cJSON_IsObject(m) && !cJSON_GetObjectItemCaseSensitive(m, "type")) {
        /* older files leave the type out: guess it from the fields as the library does */
        if (cJSON_GetObjectItemCaseSensitive(m, "merges"))
            t = "BPE";
        else if (cJSON_GetObjectItemCaseSensitive(m, "continuing_subword_prefix"))
            t = "WordPiece";
        else if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m, "vocab")))
            t = "Unigram";
        else
            t = "WordLevel";
    } else {
        t = type_of(j, m, "model", &st);
        if (!t)
            return NULL;
    }
    if (strcmp(t, "WordPiece") == 0)
        return atn_tok_wordpiece_from_json(m, j->file, "model", j->err);
    if (strcmp(t, "WordLevel") == 0)
        return atn_tok_wordlevel_from_json(m, j->file, "model", j->err);
    if (strcmp(t, "BPE") == 0) {
        return atn_tok_bpe_from_json(m, j->file, "model", j->err);
    }
    if (strcmp(t, "Unigram") == 0) {
        return atn_tok_unigram_from_json(m, j->file, "model", j->err);
    }
    jfail(j, "model.type", "unknown model \"%s\" (BPE, Unigram, WordPiece or WordLevel)", t);
    return NULL;
}

atn_tokenizer *atn_tok_pipeline_from_json(const char *text, size_t len, const char *origin,
                                          atn_error *err) {
    if (!origin)
        origin = "tokenizer.json";
    jctx j = {origin, err};
    if (!text) {
        atn_error_set(err, ATN_E_INVALID, "%s: no data", origin);
        return NULL;
    }
    cJSON *root = NULL;
    if (atn_json_parse(text, len, origin, 0, &root, err) != ATN_OK)   /* engine/core/json.c */
        return NULL;
    pipeline *pl = calloc(1, sizeof *pl);
    atn_status st = ATN_OK;
    if (!pl || !(pl->origin = strdup(origin))) {
        free(pl);
        cJSON_Delete(root);
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
        return NULL;
    }
    pl->base.ops = &pipeline_ops;
    if (!cJSON_IsObject(root)) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: not a JSON object (a tokenizer.json is "
                           "{\"model\": ..., \"normalizer\": ..., ...})", origin);
        goto fail;
    }
    const cJSON *v;
    v = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!v) {
        st = jfail(&j, "model", "missing (a tokenizer.json names its model)");
        goto fail;
    }
    pl->model = build_model(&j, v);
    if (!pl->model) {
        st = err ? err->status : ATN_E_FORMAT;
        goto fail;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "normalizer")) && !cJSON_IsNull(v)) {
        pl->norm = calloc(1, sizeof *pl->norm);
        if (!pl->norm || (st = parse_normalizer(&j, v, "normalizer", pl->norm, 0)))
            goto fail_st;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer")) && !cJSON_IsNull(v)) {
        pl->pre = calloc(1, sizeof *pl->pre);
        if (!pl->pre || (st = parse_pretok(&j, v, "pre_tokenizer", pl->pre, 0)))
            goto fail_st;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "post_processor")) && !cJSON_IsNull(v)) {
        pl->post = calloc(1, sizeof *pl->post);
        if (!pl->post || (st = parse_postproc(&j, v, "post_processor", pl->post, 0)))
            goto fail_st;
    }
    if ((st = parse_added(&j, pl, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"))))
        goto fail;
    if ((st = normalize_added(pl, err)))
        goto fail;
    pl->vocab_size = pl->model->ops->vocab_size(pl->model);
    for (int k = 0; k < pl->n_added; k++)
        if (pl->added[k].id + 1 > pl->vocab_size)
            pl->vocab_size = pl->added[k].id + 1;
    if (pl->post && (st = check_post_ids(&j, pl, pl->post, "post_processor")))
        goto fail;
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    const cJSON *dt = cJSON_IsObject(dec) ? cJSON_GetObjectItemCaseSensitive(dec, "type") : NULL;
    pl->byte_level = has_pretok(pl->pre, P_BYTELEVEL) ||
                     (cJSON_IsString(dt) && strcmp(dt->valuestring, "ByteLevel") == 0);
    const pretok *ms = find_pretok(pl->pre, P_METASPACE);
    pl->metaspace = ms != NULL;
    pl->meta_char = ms ? ms->replacement : 0x2581;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(m, "type");
    if (cJSON_IsString(mt) && strcmp(mt->valuestring, "WordPiece") == 0) {
        const cJSON *px = cJSON_GetObjectItemCaseSensitive(m, "continuing_subword_prefix");
        pl->wp_prefix = strdup(cJSON_IsString(px) ? px->valuestring : "##");
        if (!pl->wp_prefix) {
            st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            goto fail;
        }
    }
    default_roles(pl);
    cJSON_Delete(root);
    return &pl->base;

fail_st:
    if (st == ATN_OK)
        st = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
fail:
    (void)st;
    cJSON_Delete(root);
    pl_free(&pl->base);
    return NULL;
}

atn_tokenizer *atn_tok_pipeline_load(const char *path, atn_error *err) {
    if (!path) {
        atn_error_set(err, ATN_E_INVALID, "no tokenizer.json path given");
        return NULL;
    }
    char *data;
    size_t len;
    if (atn_read_file(path, MAX_TOKENIZER_JSON, &data, &len, err) != ATN_OK)
        return NULL;
    atn_tokenizer *t = atn_tok_pipeline_from_json(data, len, path, err);
    free(data);
    return t;
}

/* ---- the classic GPT-2 / RoBERTa files ---------------------------------------------- */

atn_tokenizer *atn_tok_pipeline_classic(atn_tok_model *model, bool roberta, bool add_prefix_space,
                                        const char *const specials[], int n_specials,
                                        const char *mask_token, const char *origin,
                                        atn_error *err) {
    if (!origin)
        origin = "vocab.json";
    pipeline *pl = calloc(1, sizeof *pl);
    if (!pl || !(pl->origin = strdup(origin))) {
        free(pl);
        atn_tok_model_free(model);
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
        return NULL;
    }
    pl->base.ops = &pipeline_ops;
    pl->model = model;
    jctx j = {origin, err};
    /* ByteLevel(add_prefix_space), as transformers' GPT2Converter / RobertaConverter */
    pl->pre = calloc(1, sizeof *pl->pre);
    pl->post = calloc(1, sizeof *pl->post);
    pl->added = calloc((size_t)n_specials + 1, sizeof *pl->added);
    if (!pl->pre || !pl->post || !pl->added)
        goto nomem;
    cJSON *bl = cJSON_CreateObject();
    if (!bl || !cJSON_AddStringToObject(bl, "type", "ByteLevel") ||
        !cJSON_AddBoolToObject(bl, "add_prefix_space", add_prefix_space)) {
        cJSON_Delete(bl);
        goto nomem;
    }
    atn_status st = parse_pretok(&j, bl, "pre_tokenizer", pl->pre, 0);
    cJSON_Delete(bl);
    if (st)
        goto fail;
    pl->byte_level = true;
    /* the special tokens, each once, as added special tokens (<mask> strips on its left) */
    for (int i = 0; i < n_specials; i++) {
        const char *s = specials[i];
        if (!s || !*s)
            continue;
        bool dup = false;
        for (int k = 0; k < pl->n_added; k++)
            dup |= strcmp(pl->added[k].content, s) == 0;
        int32_t id = model->ops->token_to_id(model, s, strlen(s));
        if (dup || id < 0)
            continue;
        added_tok *t = &pl->added[pl->n_added];
        if (!(t->content = strdup(s)))
            goto nomem;
        t->len = strlen(s);
        t->id = id;
        t->special = true;
        t->lstrip = mask_token && strcmp(s, mask_token) == 0;
        pl->n_added++;
    }
    postproc *pp = pl->post;
    if (roberta) {
        pp->type = PP_ROBERTA;
        pp->trim_offsets = true;
        pp->add_prefix_space = add_prefix_space;
        const char *cls = n_specials > 0 && specials[0] ? specials[0] : "<s>";
        const char *sep = n_specials > 1 && specials[1] ? specials[1] : "</s>";
        pp->cls_id = model->ops->token_to_id(model, cls, strlen(cls));
        pp->sep_id = model->ops->token_to_id(model, sep, strlen(sep));
        if (pp->cls_id < 0 || pp->sep_id < 0) {
            atn_error_set(err, ATN_E_FORMAT, "%s: the vocabulary has no %s token (RoBERTa's "
                          "sequences start with %s and end with %s)", origin,
                          pp->cls_id < 0 ? cls : sep, cls, sep);
            goto fail;
        }
        if (!(pp->cls = strdup(cls)) || !(pp->sep = strdup(sep)))
            goto nomem;
    } else {
        pp->type = PP_BYTELEVEL;   /* GPT-2: ByteLevel(trim_offsets=False) */
        pp->trim_offsets = false;
    }
    pl->vocab_size = model->ops->vocab_size(model);
    pl->meta_char = 0x2581;
    default_roles(pl);
    return &pl->base;
nomem:
    atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
fail:
    pl_free(&pl->base);
    return NULL;
}
