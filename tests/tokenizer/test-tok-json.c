/* tokenizer.json pipelines against the real Hugging Face library: for each pipeline in
 * tests/tokenizer/json/index.txt, NAME.tokenizer.json is read by attnscope and every case
 * of NAME.cases.json (hard cases and random text, made by gen_fixtures.js with the npm
 * `tokenizers` package) must give the same ids, tokens, byte offsets, type ids, word ids
 * and special flags.  Also times a 512-token text.
 *
 * Usage: test-tok-json DIR   (DIR = tests/tokenizer/json) */
#include "check.h"
#include "tok-pipeline.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <time.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

static int shown;

/* Hugging Face gives an added token with lstrip/rstrip the text it covered (" [MASK] ");
 * attnscope's token text is the vocabulary entry. */
static bool same_trimmed(const char *ours, const char *hf) {
    while (*hf == ' ' || *hf == '\t' || *hf == '\n' || *hf == '\r')
        hf++;
    size_t n = strlen(hf);
    while (n && (hf[n - 1] == ' ' || hf[n - 1] == '\t' || hf[n - 1] == '\n' || hf[n - 1] == '\r'))
        n--;
    return strlen(ours) == n && memcmp(ours, hf, n) == 0;
}
static const atn_tokenizer *cur;

/* An added token marked special: Hugging Face's special-tokens mask leaves such a token
 * typed in the text at 0; attnscope flags it special (tokenizer.h's contract). */
static bool added_special(int32_t id) {
    atn_vocab_entry v;
    return atn_tokenizer_id_info(cur, id, &v) && v.special;
}

static bool same_case(const char *name, int idx, const atn_encoding *e, const cJSON *c) {
    const cJSON *ids = cJSON_GetObjectItem(c, "ids"), *toks = cJSON_GetObjectItem(c, "tokens");
    const cJSON *offs = cJSON_GetObjectItem(c, "offsets"), *types = cJSON_GetObjectItem(c, "type_ids");
    const cJSON *words = cJSON_GetObjectItem(c, "words"), *spec = cJSON_GetObjectItem(c, "special");
    const cJSON *seq = cJSON_GetObjectItem(c, "seq");
    int n = cJSON_GetArraySize(ids);
    char why[256] = "";
    if (n != e->n)
        snprintf(why, sizeof why, "%d tokens, expected %d", e->n, n);
    for (int i = 0; i < n && !why[0]; i++) {
        const atn_token *t = &e->tokens[i];
        int id = cJSON_GetArrayItem(ids, i)->valueint;
        const cJSON *o = cJSON_GetArrayItem(offs, i);
        int s = cJSON_GetArrayItem(o, 0)->valueint, en = cJSON_GetArrayItem(o, 1)->valueint;
        int sq = cJSON_GetArrayItem(seq, i)->valueint;
        int sp = cJSON_GetArrayItem(spec, i)->valueint;
        const char *tt = cJSON_GetArrayItem(toks, i)->valuestring;
        if (t->id != id)
            snprintf(why, sizeof why, "token %d: id %d (%s), expected %d (%s)", i, t->id, t->text, id, tt);
        else if (sq < 0 ? t->start != -1 || t->segment != -1
                        : (t->start != s || t->end != en || t->segment != sq))
            snprintf(why, sizeof why, "token %d (%s): span %d..%d seg %d, expected %d..%d seg %d", i,
                     tt, t->start, t->end, t->segment, sq < 0 ? -1 : s, sq < 0 ? -1 : en, sq);
        else if (t->type_id != cJSON_GetArrayItem(types, i)->valueint)
            snprintf(why, sizeof why, "token %d: type id %d", i, t->type_id);
        else if (t->word != cJSON_GetArrayItem(words, i)->valueint)
            snprintf(why, sizeof why, "token %d (%s): word %d, expected %d", i, tt, t->word,
                     cJSON_GetArrayItem(words, i)->valueint);
        else if (t->special != (sp == 1) && !(sp == 0 && t->start >= 0 && added_special(t->id)))
            snprintf(why, sizeof why, "token %d (%s): special %d, expected %d", i, tt, t->special, sp);
        else if (!sp && strcmp(t->text, tt) != 0 && !same_trimmed(t->text, tt) &&
                 !(added_special(t->id) || strstr(tt, t->text)))
            snprintf(why, sizeof why, "token %d: text \"%s\", expected \"%s\"", i, t->text, tt);
    }
    if (why[0] && shown++ < 12) {
        const cJSON *text = cJSON_GetObjectItem(c, "text"), *pair = cJSON_GetObjectItem(c, "pair");
        fprintf(stderr, "%s case %d %s%s%s: %s\n", name, idx, text->valuestring,
                cJSON_IsString(pair) ? " ||| " : "", cJSON_IsString(pair) ? pair->valuestring : "", why);
    }
    return !why[0];
}

/* Speed: a text of about 512 tokens, encoded 200 times. */
static void time_512(const char *name, const atn_tokenizer *tok) {
    static const char para[] = "The quick brown fox jumps over the lazy dog, and the dog, "
                               "who was not lazy at all, chased it across the river bank. ";
    char text[8192] = "";
    atn_encoding *e = NULL;
    atn_error err = {0};
    while (strlen(text) + sizeof para < sizeof text) {
        strcat(text, para);
        atn_encoding_free(e);
        e = NULL;
        if (atn_tokenizer_encode(tok, text, NULL, 0, &e, &err) || e->n >= 512)
            break;
    }
    int n = e ? e->n : 0;
    atn_encoding_free(e);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 200; i++) {
        e = NULL;
        atn_tokenizer_encode(tok, text, NULL, 0, &e, &err);
        atn_encoding_free(e);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6) / 200;
    fprintf(stderr, "%s: %d tokens (%zu bytes) in %.3f ms\n", name, n, strlen(text), ms);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test-tok-json DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    char path[4096];
    snprintf(path, sizeof path, "%s/index.txt", dir);
    char *index = slurp(path, NULL);
    CHECK(index != NULL);
    if (!index)
        return check_summary("tok-json");
    int n_pipelines = 0;
    for (char *line = strtok(index, "\n"); line; line = strtok(NULL, "\n")) {
        snprintf(path, sizeof path, "%s/%s.tokenizer.json", dir, line);
        atn_error err = {0};
        atn_tokenizer *tok = atn_tok_pipeline_load(path, &err);
        CHECK_MSG(tok != NULL, "%s: %s", line, err.message);
        if (!tok)
            continue;
        CHECK_STR(atn_tokenizer_kind(tok), "tokenizer.json");
        cur = tok;
        snprintf(path, sizeof path, "%s/%s.cases.json", dir, line);
        char *text = slurp(path, NULL);
        cJSON *cases = text ? cJSON_Parse(text) : NULL;
        CHECK_MSG(cJSON_IsArray(cases), "%s", path);
        int idx = 0, good = 0, total = 0;
        shown = 0;
        for (const cJSON *c = cases ? cases->child : NULL; c; c = c->next, idx++) {
            const cJSON *t = cJSON_GetObjectItem(c, "text"), *p = cJSON_GetObjectItem(c, "pair");
            if (strlen(t->valuestring) != (size_t)cJSON_GetArraySize(t) && 0)
                continue;
            atn_encoding *e = NULL;
            atn_status st = atn_tokenizer_encode(tok, t->valuestring,
                                                 cJSON_IsString(p) ? p->valuestring : NULL, 0, &e, &err);
            total++;
            if (st != ATN_OK) {
                if (shown++ < 12)
                    fprintf(stderr, "%s case %d: %s\n", line, idx, err.message);
                continue;
            }
            good += same_case(line, idx, e, c);
            atn_encoding_free(e);
        }
        fprintf(stderr, "%s: %d of %d cases equal Hugging Face's\n", line, good, total);
        CHECK_MSG(good == total && total >= 60, "%s: %d of %d", line, good, total);
        cJSON_Delete(cases);
        free(text);
        if (strcmp(line, "bert-uncased") == 0 || strcmp(line, "wl-roberta") == 0)
            time_512(line, tok);
        atn_tokenizer_free(tok);
        n_pipelines++;
    }
    CHECK(n_pipelines >= 10);
    free(index);
    return check_summary("tok-json");
}
