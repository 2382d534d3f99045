/* The engine's one JSON parser (engine/core/json.c): one value per text (trailing data refused,
 * whitespace allowed), duplicate keys resolved to the last value at every depth as Python's
 * json.loads does, the allocation bound and its message, and a 300k-key object deduplicated
 * in well under a second (the check is O(n log n)). */
#include "check.h"
#include "core/json.h"

#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    cJSON *v = NULL;
    size_t off = 99;
    atn_error err = {0};

    /* whitespace after the value is fine; anything else is refused with its offset */
    const char *ok = " {\"a\": 1} \n\t\r ";
    CHECK(atn_json_parse_raw(ok, strlen(ok), 0, &v, &off) == ATN_JSON_PARSED && v);
    cJSON_Delete(v);
    const char *two = "{\"a\": 1}\n{\"a\": 2}\n";
    CHECK(atn_json_parse_raw(two, strlen(two), 0, &v, &off) == ATN_JSON_TRAILING && !v);
    CHECK(off == 9);
    CHECK(atn_json_parse(two, strlen(two), "x.json", 0, &v, &err) == ATN_E_FORMAT);
    CHECK_STR(err.message, "x.json: extra data after the JSON value (byte 9); one file holds one value");
    const char *bad = "{\"a\": tru}";
    CHECK(atn_json_parse(bad, strlen(bad), "y.json", 0, &v, &err) == ATN_E_FORMAT);
    CHECK_STR(err.message, "y.json: invalid JSON (near byte 6)");
    /* the length bounds the text: a value cut by the length is invalid, bytes after it unseen */
    CHECK(atn_json_parse_raw("[1, 2]xyz", 6, 0, &v, &off) == ATN_JSON_PARSED);
    cJSON_Delete(v);

    /* duplicates: the last wins (json.loads('{"a":1,"b":2,"a":3}') == {'a': 3, 'b': 2}),
     * nested objects too, inside arrays; the order of the survivors is kept */
    const char *dup = "{\"a\": 1, \"b\": {\"c\": 1, \"c\": [{\"d\": 1, \"d\": 2}]}, \"a\": 3}";
    CHECK(atn_json_parse_raw(dup, strlen(dup), 0, &v, &off) == ATN_JSON_PARSED);
    CHECK(cJSON_GetArraySize(v) == 2);
    CHECK(cJSON_GetObjectItemCaseSensitive(v, "a")->valueint == 3);
    CHECK_STR(v->child->string, "b");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v, "b"), "c");
    CHECK(cJSON_IsArray(c) && cJSON_GetArraySize(cJSON_GetArrayItem(c, 0)) == 1);
    CHECK(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(c, 0), "d")->valueint == 2);
    cJSON_Delete(v);
    /* keys differing only in case are different keys (Python's dict) */
    const char *cased = "{\"A\": 1, \"a\": 2}";
    CHECK(atn_json_parse_raw(cased, strlen(cased), 0, &v, &off) == ATN_JSON_PARSED);
    CHECK(cJSON_GetArraySize(v) == 2);
    cJSON_Delete(v);
    /* ATN_JSON_KEEP_DUPLICATES keeps both (the safetensors header refuses them by name) */
    CHECK(atn_json_parse_raw(dup, strlen(dup), ATN_JSON_KEEP_DUPLICATES, &v, &off) == ATN_JSON_PARSED);
    CHECK(cJSON_GetArraySize(v) == 3);
    cJSON_Delete(v);

    /* a NUL inside a key or a value (the escape or a raw byte) is refused, naming the key: a
       C string would end at it, so "hidden_act\u0000x" would override "hidden_act" */
    const char *nkey = "{\"hidden_act\": \"gelu\", \"hidden_act\\u0000x\": \"relu\"}";
    CHECK(atn_json_parse_raw(nkey, strlen(nkey), 0, &v, &off) == ATN_JSON_NUL && !v);
    CHECK(off == 34);
    CHECK(atn_json_parse(nkey, strlen(nkey), "c.json", 0, &v, &err) == ATN_E_FORMAT);
    CHECK_STR(err.message, "c.json: a NUL character (\\u0000) inside a string (byte 34, key "
                           "\"hidden_act\\u0000x\"); names and values cannot hold one");
    const char *nval = "{\"a\": [1, {\"b\": 2}], \"model_type\" : \"bert\\u0000evil\"}";
    CHECK(atn_json_parse(nval, strlen(nval), "c.json", 0, &v, &err) == ATN_E_FORMAT);
    CHECK_STR(err.message, "c.json: a NUL character (\\u0000) inside a string (byte 41, key "
                           "\"model_type\"); names and values cannot hold one");
    const char rawnul[] = "[\"ab\0c\"]";
    CHECK(atn_json_parse_raw(rawnul, sizeof rawnul - 1, 0, &v, &off) == ATN_JSON_NUL && off == 4);
    char key[16];
    atn_json_nul_key(rawnul, sizeof rawnul - 1, key, sizeof key);
    CHECK_STR(key, "");
    /* an escaped backslash before u0000 is no NUL, nor is \u00001 split differently */
    const char *notnul = "{\"k\\\\u0000\": \"\\\\u0000\", \"n\": \"\\u0001\"}";
    CHECK(atn_json_parse_raw(notnul, strlen(notnul), 0, &v, &off) == ATN_JSON_PARSED && v);
    CHECK_STR(v->child->string, "k\\u0000");
    cJSON_Delete(v);
    /* a long key is cut to fit, its control bytes shown as '?' */
    const char *longkey = "{\"0123456789abcdef\\u0000\": 1}";
    CHECK(atn_json_parse_raw(longkey, strlen(longkey), 0, &v, &off) == ATN_JSON_NUL);
    atn_json_nul_key(longkey, strlen(longkey), key, sizeof key);
    CHECK_STR(key, "0123456789ab...");

    /* 300k keys, every one twice: deduplicated fast */
    enum { N = 300000 };
    size_t cap = (size_t)N * 2 * 24 + 16, len = 0;
    char *big = malloc(cap);
    CHECK(big != NULL);
    big[len++] = '{';
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++)
            len += (size_t)snprintf(big + len, cap - len, "%s\"k%d\":%d", len > 1 ? "," : "", i, r);
    big[len++] = '}';
    double t0 = now();
    CHECK(atn_json_parse_raw(big, len, 0, &v, &off) == ATN_JSON_PARSED);
    double dt = now() - t0;
    /* quadratic deduplication would take minutes; a sanitizer build or a loaded machine is
       slower but linear (14.8 s seen under ASan at load 17), so only plain builds time it */
#ifndef __SANITIZE_ADDRESS__
    CHECK_MSG(dt < 10.0, "300k duplicated keys took %.2f s", dt);
#else
    (void)dt;
#endif
    CHECK(cJSON_GetArraySize(v) == N);
    CHECK(cJSON_GetObjectItemCaseSensitive(v, "k12345")->valueint == 1);
    cJSON_Delete(v);
    free(big);

    /* the allocation bound: an array of ATN_JSON_MAX_ALLOCS + 1 numbers is refused, named */
    size_t n = (size_t)ATN_JSON_MAX_ALLOCS + 1;
    big = malloc(2 * n + 2);
    CHECK(big != NULL);
    len = 0;
    big[len++] = '[';
    for (size_t i = 0; i < n; i++) {
        big[len++] = '0';
        big[len++] = i + 1 < n ? ',' : ']';
    }
    CHECK(atn_json_parse_raw(big, len, 0, &v, &off) == ATN_JSON_TOO_BIG && !v);
    CHECK(atn_json_parse(big, len, "h.json", 0, &v, &err) == ATN_E_FORMAT);
    CHECK_STR(err.message, "h.json: the JSON is too large to parse (more than 4000000 values)");
    /* the bound is per parse: a small text parses right after */
    CHECK(atn_json_parse_raw(ok, strlen(ok), 0, &v, &off) == ATN_JSON_PARSED);
    cJSON_Delete(v);
    free(big);
    return check_summary("engine-json");
}
