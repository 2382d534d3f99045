/* Fuzz target: the engine's one JSON parser (engine/core/json.c, atn_json_parse).  Promises
 * checked: an error has a message that starts with the origin; a NUL refusal names a key
 * without control bytes; a parsed value has no duplicate keys, prints, and reads back equal
 * (so no string was cut short by a NUL: its printed form would differ from the text). */
#include "fuzz-common.h"

#include "core/json.h"

#include <stdbool.h>

static void check_no_duplicates(const cJSON *v) {
    for (const cJSON *c = v->child; c; c = c->next) {
        check_no_duplicates(c);
        if (!cJSON_IsObject(v))
            continue;
        for (const cJSON *d = c->next; d; d = d->next)
            if (c->string && d->string && !strcmp(c->string, d->string))
                fuzz_fail("a duplicate key survived", c->string);
    }
}

/* Whether every number under v is finite (cJSON prints inf and nan as null). */
static bool all_finite(const cJSON *v) {
    if (cJSON_IsNumber(v) && !(v->valuedouble - v->valuedouble == 0))
        return false;
    for (const cJSON *c = v->child; c; c = c->next)
        if (!all_finite(c))
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096)   /* the duplicate check above is quadratic; the parser's bounds are not */
        return 0;
    const char *text = (const char *)data;
    cJSON *v = NULL;
    atn_error err = {0};
    atn_status st = atn_json_parse(text, size, "fuzz.json", 0, &v, &err);
    if (st != ATN_OK) {
        if (v)
            fuzz_fail("a value handed out on error", NULL);
        if (strncmp(err.message, "fuzz.json: ", 11) != 0)
            fuzz_fail("the message does not name the origin", err.message);
        size_t off = 0;
        if (atn_json_parse_raw(text, size, 0, &v, &off) == ATN_JSON_NUL) {
            char key[64];
            atn_json_nul_key(text, size, key, sizeof key);
            for (const char *k = key; *k; k++)
                if ((unsigned char)*k < 0x20)
                    fuzz_fail("a control byte in the key named", key);
            if (off >= size)
                fuzz_fail("the NUL's offset is past the text", NULL);
        }
        return 0;
    }
    check_no_duplicates(v);
    char *printed = all_finite(v) ? cJSON_PrintUnformatted(v) : NULL;
    if (printed) {
        cJSON *again = NULL;
        if (atn_json_parse_raw(printed, strlen(printed), 0, &again, NULL) != ATN_JSON_PARSED)
            fuzz_fail("the printed value does not parse", printed);
        if (!cJSON_Compare(v, again, 1))
            fuzz_fail("the printed value reads back different", printed);
        cJSON_Delete(again);
        free(printed);
    }
    cJSON_Delete(v);
    return 0;
}
