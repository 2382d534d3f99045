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
    if (!(flags & ATN_JSON_KEEP_DUPLICATES) && !last_duplicate_wins(root)) {
        cJSON_Delete(root);
        return ATN_JSON_NOMEM;
    }
    *out = root;
    return ATN_JSON_PARSED;
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
