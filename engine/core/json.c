/* The one JSON parser of the engine: see json.h for the rules. */
#include "core/json.h"

#include "core/files.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* cJSON's allocator hooks are process-wide; ours call malloc and free unchanged, and only
 * count (per thread, inside atn_json_parse_raw) so that a parse can be bounded and an
 * allocation failure told apart from a syntax error.  Memory cJSON allocated before the
 * hooks were installed is freed with the same free(), so installing them late is safe. */
static _Thread_local struct {
    bool active;
    bool nomem, too_big;
    size_t allocs;
} parse_state;

static void *counting_malloc(size_t size) {
    if (parse_state.active) {
        if (++parse_state.allocs > ATN_JSON_MAX_ALLOCS) {
            parse_state.too_big = true;
            return NULL;
        }
    }
    void *p = malloc(size);
    if (!p && parse_state.active)
        parse_state.nomem = true;
    return p;
}

static void install_hooks(void) {
    cJSON_Hooks h = {counting_malloc, free};
    cJSON_InitHooks(&h);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

typedef struct member {
    const char *key;
    size_t index;
    cJSON *item;
} member;

static int by_key_then_index(const void *a, const void *b) {
    const member *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Every object under v keeps only the last member of each key (Python's dict semantics).
 * O(n log n) per object: a 300k-key index stays fast.  False when out of memory. */
static bool last_duplicate_wins(cJSON *v) {
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
        return true;
    size_t n = 0;
    for (cJSON *c = v->child; c; c = c->next) {
        if (!last_duplicate_wins(c))
            return false;
        n++;
    }
    if (!cJSON_IsObject(v) || n < 2)
        return true;
    member *m = malloc(n * sizeof *m);
    if (!m)
        return false;
    size_t i = 0;
    for (cJSON *c = v->child; c; c = c->next, i++)
        m[i] = (member){c->string ? c->string : "", i, c};
    qsort(m, n, sizeof *m, by_key_then_index);
    for (i = 0; i + 1 < n; i++)
        if (!strcmp(m[i].key, m[i + 1].key))   /* a later one of the same key follows */
            cJSON_Delete(cJSON_DetachItemViaPointer(v, m[i].item));
    free(m);
    return true;
}

/* The first NUL character inside a string of a valid JSON text: the escape \u0000 (cJSON
 * decodes it into a C string, which then ends there: "hidden_act\u0000x" would read as
 * "hidden_act") or a raw NUL byte.  On finding one, *nul_at is its offset and [*key_at,
 * *key_at + *key_len) the source text (without quotes) of the key it belongs to: the string
 * itself when it is a key, else the key of the member the value sits in (key_len 0 when the
 * value is not inside an object member).  Runs after cJSON accepted the text, so a simple
 * state machine is exact: strings, their escapes, ':' after a key. */
static bool find_nul_in_string(const char *text, size_t len, size_t *nul_at, size_t *key_at, size_t *key_len) {
    size_t cur_key = 0, cur_key_len = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] != '"')
            continue;
        size_t start = ++i;
        size_t nul = (size_t)-1;
        while (i < len && text[i] != '"') {
            if (text[i] == '\\') {
                if (i + 5 < len && text[i + 1] == 'u' && !memcmp(text + i + 2, "0000", 4) && nul == (size_t)-1)
                    nul = i;
                i += i + 1 < len && text[i + 1] == 'u' ? 6 : 2;
                continue;
            }
            if (text[i] == '\0' && nul == (size_t)-1)
                nul = i;
            i++;
        }
        size_t slen = (i < len ? i : len) - start;
        size_t j = i + 1;
        while (j < len && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r'))
            j++;
        bool is_key = j < len && text[j] == ':';
        if (is_key) {
            cur_key = start;
            cur_key_len = slen;
        }
        if (nul != (size_t)-1) {
            *nul_at = nul;
            *key_at = is_key ? start : cur_key;
            *key_len = is_key ? slen : cur_key_len;
            return true;
        }
    }
    return false;
}

atn_json_result atn_json_parse_raw(const char *text, size_t len, unsigned flags, cJSON **out, size_t *offset) {
    pthread_once(&hooks_once, install_hooks);
    size_t off_dummy;
    if (!offset)
        offset = &off_dummy;
    *out = NULL;
    *offset = 0;
    parse_state.active = true;
    parse_state.nomem = parse_state.too_big = false;
    parse_state.allocs = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    parse_state.active = false;
    if (!root) {
        if (parse_state.too_big)
            return ATN_JSON_TOO_BIG;
        if (parse_state.nomem)
            return ATN_JSON_NOMEM;
        const char *at = cJSON_GetErrorPtr();
        *offset = at && at >= text && at <= text + len ? (size_t)(at - text) : 0;
        return ATN_JSON_SYNTAX;
    }
    for (const char *p = end && end >= text ? end : text + len; p < text + len; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            cJSON_Delete(root);
            *offset = (size_t)(p - text);
            return ATN_JSON_TRAILING;
        }
    size_t key_at, key_len;
    if (find_nul_in_string(text, len, offset, &key_at, &key_len)) {
        cJSON_Delete(root);
        return ATN_JSON_NUL;
    }
    if (!(flags & ATN_JSON_KEEP_DUPLICATES) && !last_duplicate_wins(root)) {
        cJSON_Delete(root);
        return ATN_JSON_NOMEM;
    }
    *out = root;
    return ATN_JSON_PARSED;
}

void atn_json_nul_key(const char *text, size_t len, char *out, size_t size) {
    size_t nul_at, key_at = 0, key_len = 0, n = 0;
    if (size == 0)
        return;
    if (!find_nul_in_string(text, len, &nul_at, &key_at, &key_len))
        key_len = 0;
    /* the key as written in the file, its control bytes shown as '?', cut to fit */
    for (size_t i = 0; i < key_len && n + 4 < size; i++) {
        unsigned char c = (unsigned char)text[key_at + i];
        out[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    if (key_len > 0 && n + 4 >= size && n < key_len) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

atn_status atn_json_parse(const char *text, size_t len, const char *origin, unsigned flags, cJSON **out,
                          atn_error *err) {
    size_t off = 0;
    switch (atn_json_parse_raw(text, len, flags, out, &off)) {
    case ATN_JSON_PARSED:
        return ATN_OK;
    case ATN_JSON_SYNTAX:
        return atn_error_set(err, ATN_E_FORMAT, "%s: invalid JSON (near byte %zu)", origin, off);
    case ATN_JSON_TRAILING:
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: extra data after the JSON value (byte %zu); one file holds one value", origin,
                             off);
    case ATN_JSON_NUL: {
        char key[96];
        atn_json_nul_key(text, len, key, sizeof key);
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: a NUL character (\\u0000) inside a string (byte %zu, key \"%s\"); "
                             "names and values cannot hold one",
                             origin, off, key);
    }
    case ATN_JSON_TOO_BIG:
        return atn_error_set(err, ATN_E_FORMAT, "%s: the JSON is too large to parse (more than %d values)",
                             origin, (int)ATN_JSON_MAX_ALLOCS);
    case ATN_JSON_NOMEM:
    default:
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory while parsing the JSON", origin);
    }
}

atn_status atn_json_read_object(const char *path, size_t max, cJSON **out, atn_error *err) {
    char *text;
    size_t len = 0;
    *out = NULL;
    atn_status st = atn_read_file(path, max, &text, &len, err);
    if (st != ATN_OK)
        return st;
    st = atn_json_parse(text, len, path, 0, out, err);
    free(text);
    if (st != ATN_OK)
        return st;
    if (!cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        return atn_error_set(err, ATN_E_FORMAT, "%s: expected a JSON object at the top level", path);
    }
    return ATN_OK;
}
