/* attnscope tokenize: how a model's tokenizer cuts a text: tokens, ids, type ids and the
 * byte span each token came from, as a table or as JSON. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Code points in s (for column alignment; wide CJK characters still take two cells). */
static int utf8_width(const char *s) {
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xC0) != 0x80;
    return n;
}

static void print_padded(const char *s, int width) {
    fputs(s, stdout);
    for (int w = utf8_width(s); w < width; w++)
        fputc(' ', stdout);
}

/* The original text of a token: its span in its own segment, with control characters
 * shown as escapes so the table stays on one line. */
static void print_span_text(const char *seg, const atn_token *t) {
    if (!seg || t->start < 0)
        return;
    fputc('"', stdout);
    for (int32_t i = t->start; i < t->end; i++) {
        unsigned char c = (unsigned char)seg[i];
        if (c < 0x20 || c == 0x7F)
            printf("\\x%02X", c);
        else
            fputc(c, stdout);
    }
    fputc('"', stdout);
}

static void print_table(const atn_encoding *e, const char *text, const char *pair) {
    int tw = 5;
    for (int32_t i = 0; i < e->n; i++) {
        int w = utf8_width(e->tokens[i].text);
        if (w > tw)
            tw = w;
    }
    if (tw > 40)
        tw = 40;
    printf("%5s  ", "#");
    print_padded("token", tw);
    printf("  %7s  %4s  %-11s  %s\n", "id", "type", "span", "text");
    for (int32_t i = 0; i < e->n; i++) {
        const atn_token *t = &e->tokens[i];
        char span[32] = "-";
        if (t->start >= 0)
            snprintf(span, sizeof span, "%s%d..%d", t->segment == 1 ? "B:" : "", t->start, t->end);
        printf("%5d  ", i);
        print_padded(t->text, tw);
        printf("  %7d  %4d  %-11s  ", t->id, t->type_id, span);
        print_span_text(t->segment == 1 ? pair : t->segment == 0 ? text : NULL, t);
        putchar('\n');
    }
    printf("%d tokens%s", e->n, e->truncated ? "" : "\n");
    if (e->truncated)
        printf(" (truncated: %d word pieces dropped)\n", e->n_dropped);
}

static const char *role_name(atn_token_role r) {
    switch (r) {
    case ATN_TOKEN_CLS: return "cls";
    case ATN_TOKEN_SEP: return "sep";
    case ATN_TOKEN_MASK: return "mask";
    case ATN_TOKEN_PAD: return "pad";
    case ATN_TOKEN_UNK: return "unk";
    default: return "word";
    }
}

/* Where the vocabulary entries' surfaces come from: the model's tokenizer or a tokenizer
 * opened on its own. */
typedef struct tok_source {
    const atn_model *model;
    const atn_text_tokenizer *tok;
} tok_source;

static void print_json(const atn_encoding *e, const char *model, const char *text, const char *pair,
                       const tok_source *src) {
    fputs("{\n  \"model\": ", stdout);
    cli_json_string(stdout, model);
    fputs(",\n  \"text\": ", stdout);
    if (text)
        cli_json_string(stdout, text);
    else
        fputs("null", stdout);
    fputs(",\n  \"text_pair\": ", stdout);
    if (pair)
        cli_json_string(stdout, pair);
    else
        fputs("null", stdout);
    printf(",\n  \"n\": %d,\n  \"truncated\": %s,\n  \"n_dropped\": %d,\n  \"tokens\": [", e->n,
           e->truncated ? "true" : "false", e->n_dropped);
    for (int32_t i = 0; i < e->n; i++) {
        const atn_token *t = &e->tokens[i];
        fputs(i ? ",\n    {\"token\": " : "\n    {\"token\": ", stdout);
        cli_json_string(stdout, t->text);
        printf(", \"id\": %d, \"type_id\": %d, \"start\": %d, \"end\": %d, \"segment\": %d, "
               "\"special\": %s, \"mask\": %d", t->id, t->type_id, t->start, t->end, t->segment,
               t->special ? "true" : "false", e->mask[i]);
        atn_token_info info;
        bool have = src->tok ? atn_text_tokenizer_token_info(src->tok, t->id, &info)
                             : atn_model_token_info(src->model, t->id, &info);
        fputs(", \"surface\": ", stdout);
        cli_json_string(stdout, have && info.surface ? info.surface : t->text);
        printf(", \"partial_char\": %s, \"role\": \"%s\", \"word\": %d, \"continuation\": %s}",
               have && info.partial_char ? "true" : "false", role_name(t->role), t->word,
               t->continuation ? "true" : "false");
    }
    fputs("\n  ]\n}\n", stdout);
}

static int tokenize_alone(cli_args *a, const char *dir, bool json, const char *text,
                          const char *pair) {
    atn_error err = {0};
    if (cli_get(a, "ids") || cli_get(a, "type-ids") || cli_get(a, "mask")) {
        atn_error_set(&err, ATN_E_INVALID, "%s has no model (no config.json): give --text, not --ids",
                      dir);
        return cli_fail(&err);
    }
    if (!text) {
        atn_error_set(&err, ATN_E_INVALID, "tokenizer folder \"%s\" needs --text", dir);
        return cli_fail(&err);
    }
    atn_text_tokenizer *t = atn_text_tokenizer_open_cancellable(dir, cli_keep_going, NULL, &err);   /* Ctrl-C */
    if (!t)
        return cli_fail(&err);
    atn_encoding *enc = NULL;
    int32_t max_len = atn_text_tokenizer_max_length(t);
    if (atn_text_tokenizer_encode_cancellable(t, text, pair, max_len, cli_keep_going, NULL, &enc, &err) != ATN_OK) {
        atn_text_tokenizer_free(t);
        return cli_fail(&err);
    }
    if (enc->truncated)
        fprintf(stderr, "attnscope: notice: the input was truncated to %d tokens (the tokenizer's "
                "model_max_length); %d pieces were dropped\n", enc->n, enc->n_dropped);
    const char *slash = strrchr(dir, '/');
    const char *name = slash && slash[1] ? slash + 1 : dir;
    tok_source src = {NULL, t};
    if (json)
        print_json(enc, name, text, pair, &src);
    else
        print_table(enc, text, pair);
    atn_encoding_free(enc);
    atn_text_tokenizer_free(t);
    return CLI_EXIT_OK;
}

int cmd_tokenize(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "json", NULL};
    if (!cli_parse(&a, "attnscope tokenize", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope tokenize --model M --text T [--text-pair T2] [--json]\n\n"
               "Shows how the model's tokenizer (the same as Hugging Face's: WordPiece from vocab.txt,\n"
               "or the folder's tokenizer.json) cuts the text: each token with its id, token type and\n"
               "the byte span [start, end) it came from in its own text (B: marks the pair).  The\n"
               "special tokens ([CLS], [SEP] or <s>, </s>) are added; special tokens written in the\n"
               "text, like [MASK], are kept.  A text longer than the model's positions is truncated\n"
               "with a notice on stderr.  M may also be a folder with only tokenizer files (no\n"
               "config.json or weights).  --json prints the same as JSON, with each token's surface\n"
               "text, role, word index and continuation flag.\n");
        return 0;
    }
    bool json = cli_flag(&a, "json");
    const char *text = cli_get(&a, "text"), *pair = cli_get(&a, "text-pair");
    (void)cli_get(&a, "model");
    (void)cli_get(&a, "ids");
    (void)cli_get(&a, "type-ids");
    (void)cli_get(&a, "mask");
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    atn_error err = {0};
    /* A folder with tokenizer files but no config.json: the tokenizer alone, as
       AutoTokenizer would read it. */
    const char *mname = cli_get(&a, "model");
    struct stat sb;
    char cfg[4096];
    if (mname && stat(mname, &sb) == 0 && S_ISDIR(sb.st_mode) &&
        (size_t)snprintf(cfg, sizeof cfg, "%s/config.json", mname) < sizeof cfg &&
        stat(cfg, &sb) != 0)
        return tokenize_alone(&a, mname, json, text, pair);
    atn_model *model = cli_open_model(&a, &err);
    if (!model)
        return cli_fail(&err);
    atn_encoding *enc = NULL;
    if (cli_encode(&a, model, &enc, &err) != ATN_OK) {
        atn_model_free(model);
        return cli_fail(&err);
    }
    tok_source src = {model, NULL};
    if (json)
        print_json(enc, atn_model_name(model), text, pair, &src);
    else
        print_table(enc, text, pair);
    atn_encoding_free(enc);
    atn_model_free(model);
    return CLI_EXIT_OK;
}
