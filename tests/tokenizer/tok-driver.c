/* A line-oriented front end to the tokenizer for diff_random.py: reads JSON lines
 * {"text": ..., "pair": ... (optional), "max_len": N} on stdin and writes one JSON line
 * per request with the encoding (or {"error": ...}).  The first output line reports the
 * Unicode version of the tables.
 *
 * Usage: tok-driver VOCAB LOWER(0|1) STRIP(-1|0|1) CHINESE(0|1) */
#include "tokenize/wordpiece.h"
#include "tokenize/unicode-tables.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s VOCAB LOWER STRIP CHINESE\n", argv[0]);
        return 2;
    }
    atn_wordpiece_options o;
    atn_wordpiece_options_init(&o);
    o.lower_case = atoi(argv[2]) != 0;
    o.strip_accents = atoi(argv[3]);
    o.tokenize_chinese_chars = atoi(argv[4]) != 0;
    atn_error err = {0};
    atn_tokenizer *tok = atn_wordpiece_load(argv[1], &o, &err);
    if (!tok) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    printf("{\"unicode\": \"%s\"}\n", atn_uc_version);
    fflush(stdout);
    size_t cap = 0;
    char *line = NULL;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        cJSON *req = cJSON_ParseWithLength(line, (size_t)n);
        const cJSON *text = cJSON_GetObjectItem(req, "text");
        const cJSON *pair = cJSON_GetObjectItem(req, "pair");
        const cJSON *max_len = cJSON_GetObjectItem(req, "max_len");
        cJSON *res = cJSON_CreateObject();
        atn_encoding *e = NULL;
        if (!cJSON_IsString(text)) {
            cJSON_AddStringToObject(res, "error", "bad request");
        } else if (atn_tokenizer_encode(tok, text->valuestring, cJSON_IsString(pair) ? pair->valuestring : NULL,
                                        max_len ? max_len->valueint : 0, &e, &err) != ATN_OK) {
            cJSON_AddStringToObject(res, "error", err.message);
        } else {
            cJSON *toks = cJSON_AddArrayToObject(res, "tokens");
            cJSON *ids = cJSON_AddArrayToObject(res, "ids");
            cJSON *types = cJSON_AddArrayToObject(res, "type_ids");
            cJSON *starts = cJSON_AddArrayToObject(res, "starts");
            cJSON *ends = cJSON_AddArrayToObject(res, "ends");
            cJSON *segs = cJSON_AddArrayToObject(res, "segments");
            cJSON *sp = cJSON_AddArrayToObject(res, "special");
            for (int32_t i = 0; i < e->n; i++) {
                cJSON_AddItemToArray(toks, cJSON_CreateString(e->tokens[i].text));
                cJSON_AddItemToArray(ids, cJSON_CreateNumber(e->ids[i]));
                cJSON_AddItemToArray(types, cJSON_CreateNumber(e->type_ids[i]));
                cJSON_AddItemToArray(starts, cJSON_CreateNumber(e->tokens[i].start));
                cJSON_AddItemToArray(ends, cJSON_CreateNumber(e->tokens[i].end));
                cJSON_AddItemToArray(segs, cJSON_CreateNumber(e->tokens[i].segment));
                cJSON_AddItemToArray(sp, cJSON_CreateBool(e->tokens[i].special));
            }
            cJSON_AddBoolToObject(res, "truncated", e->truncated);
            cJSON_AddNumberToObject(res, "n_dropped", e->n_dropped);
            atn_encoding_free(e);
        }
        char *s = cJSON_PrintUnformatted(res);
        puts(s);
        fflush(stdout);
        free(s);
        cJSON_Delete(res);
        cJSON_Delete(req);
    }
    free(line);
    atn_tokenizer_free(tok);
    return 0;
}
