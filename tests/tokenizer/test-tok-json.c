/* tokenizer.json pipelines against the real Hugging Face library: for each pipeline in
 * tests/tokenizer/json/index.txt, NAME.tokenizer.json (or the file the line names) is read by attnscope and every case
 * of NAME.cases.json (hard cases and random text, made by gen_fixtures.js with the npm
 * `tokenizers` package) must give the same ids, tokens, byte offsets, type ids, word ids
 * and special flags.  Also times a 512-token text.
 *
 * Usage: test-tok-json DIR   (DIR = tests/tokenizer/json) */
#include "check.h"
#include "common/test-files.h"
#include "tokenize/tok-model.h"
#include "tokenize/tok-pipeline.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <time.h>

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
    struct timespec a, b, ca, cb;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
    for (int i = 0; i < 200; i++) {
        e = NULL;
        atn_tokenizer_encode(tok, text, NULL, 0, &e, &err);
        atn_encoding_free(e);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
    double ms = ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6) / 200;
    double cpu = ((double)(cb.tv_sec - ca.tv_sec) * 1e3 + (double)(cb.tv_nsec - ca.tv_nsec) / 1e6) / 200;
    fprintf(stderr, "%s: %d tokens (%zu bytes) in %.3f ms (%.3f ms of CPU time)\n", name, n,
            strlen(text), ms, cpu);
}

/* Surfaces: a byte-level piece decoded ("Ġthe" reads " the"), part of a character
 * ("çĪ" is the first two bytes of 爱) marked partial, WordPiece's "##" dropped, a
 * Metaspace "▁" as a space; roles from the names. */
static void surfaces(void) {
    static const char bl[] =
        "{\"model\": {\"type\": \"WordLevel\", \"unk_token\": \"<unk>\", \"vocab\": "
        "{\"<unk>\": 0, \"\u0120the\": 1, \"\u00e7\u012a\": 2, \"\u00e7\u012a\u00b1\": 3, \"<mask>\": 4}},"
        "\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true},"
        "\"added_tokens\": [{\"id\": 4, \"content\": \"<mask>\", \"special\": true}]}";
    atn_error err = {0};
    atn_tokenizer *t = atn_tok_pipeline_from_json(bl, strlen(bl), "bl.json", &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    if (!t)
        return;
    atn_vocab_entry v;
    CHECK(atn_tokenizer_id_info(t, 1, &v) && strcmp(v.surface, " the") == 0 && !v.partial);
    CHECK(atn_tokenizer_id_info(t, 2, &v) && strcmp(v.surface, "\\xE7\\x88") == 0 && v.partial);
    CHECK(atn_tokenizer_id_info(t, 3, &v) && strcmp(v.surface, "\xe7\x88\xb1") == 0 && !v.partial);
    CHECK(atn_tokenizer_id_info(t, 4, &v) && v.special && v.role == ATN_TOKEN_MASK);
    CHECK(atn_tokenizer_special_id(t, ATN_TOKEN_UNK) == 0 && atn_tokenizer_special_id(t, ATN_TOKEN_MASK) == 4);
    CHECK(!atn_tokenizer_id_info(t, 5, &v));
    atn_tokenizer_free(t);
    static const char ms[] =
        "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"\u2581the\": 1, \"##s\": 2}},"
        "\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"prepend_scheme\": \"always\"}}";
    t = atn_tok_pipeline_from_json(ms, strlen(ms), "ms.json", &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    if (!t)
        return;
    CHECK(atn_tokenizer_id_info(t, 1, &v) && strcmp(v.surface, " the") == 0);
    CHECK(atn_tokenizer_id_info(t, 2, &v) && strcmp(v.surface, "s") == 0 && v.continuation);
    atn_encoding *e = NULL;
    CHECK(atn_tokenizer_encode(t, "the thes", NULL, 0, &e, &err) == ATN_OK && e->n == 3);
    if (e && e->n == 3) {   /* ▁the ▁the ##s: the third continues the second's word */
        CHECK(e->ids[0] == 1 && e->ids[1] == 1 && e->ids[2] == 2);
        CHECK(!e->tokens[1].continuation && e->tokens[2].continuation);
        CHECK(e->tokens[1].word == 1 && e->tokens[2].word == 1);
    }
    atn_encoding_free(e);
    atn_tokenizer_free(t);
}

/* What a bad file is told: file, JSON path, what is wrong. */
static void bad_files(void) {
    static const struct { const char *json, *want; atn_status st; } cases[] = {
        {"{", "bad.json: invalid JSON", ATN_E_FORMAT},
        {"[1]", "not a JSON object", ATN_E_FORMAT},
        {"{}", "bad.json: model: missing", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"Fancy\"}}", "model.type: unknown model \"Fancy\"", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"a\": -1}}}", "model.vocab[\"a\"]", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": []}}", "model.vocab should be an object", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}, \"normalizer\": {\"type\": \"Lowercase2\"}}",
         "normalizer.type: unknown normalizer \"Lowercase2\"", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}, \"pre_tokenizer\": {\"type\": \"Sequence\", "
         "\"pretokenizers\": [{\"type\": \"Whitespace\"}, {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(\"}, "
         "\"behavior\": \"Isolated\"}]}}", "pre_tokenizer.pretokenizers[1].pattern.Regex: the regular expression does not compile",
         ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}, \"pre_tokenizer\": {\"type\": \"Split\", "
         "\"pattern\": {\"Regex\": \"a\"}, \"behavior\": \"Sideways\"}}", "pre_tokenizer.behavior: unknown behavior", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}, \"normalizer\": {\"type\": \"BertNormalizer\", "
         "\"lowercase\": 1}}", "normalizer.lowercase: should be true or false", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}, \"post_processor\": {\"type\": \"TemplateProcessing\", "
         "\"single\": [{\"SpecialToken\": {\"id\": \"[X]\"}}], \"pair\": [], \"special_tokens\": {}}}",
         "post_processor.special_tokens[\"[X]\"]: missing", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}, \"added_tokens\": [{\"id\": \"1\", \"content\": \"x\"}]}",
         "added_tokens[0].id: should be a non-negative integer", ATN_E_FORMAT},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}, \"normalizer\": {\"type\": \"Sequence\", "
         "\"normalizers\": [{\"type\": \"NFKC\"}, {\"type\": \"Precompiled\"}]}}",
         "normalizer.normalizers[1].precompiled_charsmap: missing", ATN_E_FORMAT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        atn_error err = {0};
        atn_tokenizer *t = atn_tok_pipeline_from_json(cases[i].json, strlen(cases[i].json), "bad.json", &err);
        CHECK_MSG(t == NULL && err.status == cases[i].st && strstr(err.message, cases[i].want) &&
                  strstr(err.message, "bad.json"), "case %zu: %s", i, err.message);
        atn_tokenizer_free(t);
    }
}

static void run_cases(const char *name, const atn_tokenizer *tok, const cJSON *cases, int *good,
                      int *total) {
    int idx = 0;
    shown = 0;
    cur = tok;
    for (const cJSON *c = cases ? cases->child : NULL; c; c = c->next, idx++) {
        const cJSON *t = cJSON_GetObjectItem(c, "text"), *p = cJSON_GetObjectItem(c, "pair");
        atn_encoding *e = NULL;
        atn_error err = {0};
        atn_status st = atn_tokenizer_encode(tok, t->valuestring,
                                             cJSON_IsString(p) ? p->valuestring : NULL, 0, &e, &err);
        (*total)++;
        if (st != ATN_OK) {
            if (shown++ < 12)
                fprintf(stderr, "%s case %d: %s\n", name, idx, err.message);
            continue;
        }
        *good += same_case(name, idx, e, c);
        atn_encoding_free(e);
    }
}

/* The pipeline built for the classic RoBERTa files (atn_tok_pipeline_classic, what
 * transformers' RobertaConverter makes) around wl-roberta's own model must give what the
 * library gives for wl-roberta.tokenizer.json, which is that same pipeline. */
static void classic_roberta(const char *json_path, const cJSON *cases) {
    size_t len;
    char *text = slurp(json_path, &len);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    atn_error err = {0};
    atn_tok_model *m = atn_tok_wordlevel_from_json(cJSON_GetObjectItem(root, "model"), "x", "model", &err);
    cJSON_Delete(root);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return;
    static const char *const sp[] = {"<s>", "</s>", "<unk>", "<pad>", "<mask>"};
    atn_tokenizer *t = atn_tok_pipeline_classic(m, true, false, sp, 5, "<mask>", "vocab.json", &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    if (!t)
        return;
    int good = 0, total = 0;
    run_cases("classic-roberta", t, cases, &good, &total);
    fprintf(stderr, "classic RoBERTa pipeline: %d of %d cases equal Hugging Face's\n", good, total);
    CHECK(good == total && total >= 60);
    CHECK(atn_tokenizer_special_id(t, ATN_TOKEN_CLS) == atn_tokenizer_token_to_id(t, "<s>"));
    CHECK(atn_tokenizer_special_id(t, ATN_TOKEN_MASK) == atn_tokenizer_token_to_id(t, "<mask>"));
    atn_tokenizer_free(t);
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
        /* "NAME" reads NAME.tokenizer.json; "NAME FILE" a tokenizer file kept elsewhere
           (the subword models' files of tests/tokenizer/models), FILE relative to DIR */
        char *file = strchr(line, ' ');
        if (file)
            *file++ = '\0';
        if (file)
            snprintf(path, sizeof path, "%s/%s", dir, file);
        else
            snprintf(path, sizeof path, "%s/%s.tokenizer.json", dir, line);
        atn_error err = {0};
        atn_tokenizer *tok = atn_tok_pipeline_load(path, &err);
        CHECK_MSG(tok != NULL, "%s: %s", line, err.message);
        if (!tok)
            continue;
        CHECK_STR(atn_tokenizer_kind(tok), "tokenizer.json");
        snprintf(path, sizeof path, "%s/%s.cases.json", dir, line);
        char *text = slurp(path, NULL);
        cJSON *cases = text ? cJSON_Parse(text) : NULL;
        CHECK_MSG(cJSON_IsArray(cases), "%s", path);
        int good = 0, total = 0;
        run_cases(line, tok, cases, &good, &total);
        fprintf(stderr, "%s: %d of %d cases equal Hugging Face's\n", line, good, total);
        CHECK_MSG(good == total && total >= 60, "%s: %d of %d", line, good, total);
        if (strcmp(line, "wl-roberta") == 0) {
            snprintf(path, sizeof path, "%s/%s.tokenizer.json", dir, line);
            classic_roberta(path, cases);
        }
        cJSON_Delete(cases);
        free(text);
        if (strcmp(line, "bert-uncased") == 0 || strcmp(line, "wl-roberta") == 0)
            time_512(line, tok);
        atn_tokenizer_free(tok);
        n_pipelines++;
    }
    CHECK(n_pipelines >= 10);
    surfaces();
    bad_files();
    free(index);
    return check_summary("tok-json");
}
