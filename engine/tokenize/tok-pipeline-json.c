/* Reading a tokenizer.json into a pipeline: one parse_* per component kind (normalizer,
 * pre-tokenizer, post-processor, added tokens), the model through tok-model.h's builders,
 * and the checks across them.  Every error names the file, the JSON path of the value
 * (pre_tokenizer.pretokenizers[1].pattern.Regex) and what is wrong.  All JSON goes
 * through engine/core/json.c. */
#include "tokenize/tok-pipeline-private.h"

#include "core/files.h"
#include "core/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_TOKENIZER_JSON = 1 << 30, PATH_LEN = 256, MAX_DEPTH = 16 };

/* ---- JSON reading ----------------------------------------------------------------- */


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
        /* any other escape is copied whole: in "\\\\p{Han}" the second backslash is escaped,
           and "p{Han}" after it is literal text, not a property */
        if (re[i] == '\\' && i + 1 < n && re[i + 1] != 'p' && re[i + 1] != 'P') {
            out[o++] = re[i++];
            out[o++] = re[i++];
            continue;
        }
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

atn_status atn_tp_parse_pretok(const jctx *j, const cJSON *o, const char *path, pretok *pt,
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
            if ((st = atn_tp_parse_pretok(j, e, ip, &pt->kids[i], depth + 1)))
                return st;
        }
    } else {
        subpath(p, path, "type");
        return jfail(j, p, "unknown pre-tokenizer \"%s\"", t);
    }
    return ATN_OK;
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
            if (id >= pl->vocab_size || !atn_tp_id_text(pl, id)[0]) {
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
                    if (v[i].ids[m] >= pl->vocab_size || !atn_tp_id_text(pl, v[i].ids[m])[0]) {
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
    pl->base.ops = &atn_tp_pipeline_ops;
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
        if (!pl->pre || (st = atn_tp_parse_pretok(&j, v, "pre_tokenizer", pl->pre, 0)))
            goto fail_st;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "post_processor")) && !cJSON_IsNull(v)) {
        pl->post = calloc(1, sizeof *pl->post);
        if (!pl->post || (st = parse_postproc(&j, v, "post_processor", pl->post, 0)))
            goto fail_st;
    }
    if ((st = parse_added(&j, pl, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"))))
        goto fail;
    if ((st = atn_tp_normalize_added(pl, err)))
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
    atn_tp_default_roles(pl);
    cJSON_Delete(root);
    return &pl->base;

fail_st:
    if (st == ATN_OK)
        st = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
fail:
    (void)st;
    cJSON_Delete(root);
    atn_tp_pipeline_free(&pl->base);
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
