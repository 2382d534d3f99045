/* attnscope examples: where a head fires over a corpus — the exemplars a partial or merged file
 * of `stats --shard` keeps for one head (engine/include/corpus-stats.h), filtered by the query
 * and key tokens' text, each shown in its sentence when the corpus is at hand. */
#include "cli.h"
#include "corpus-stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A token matches a --query/--key text: the same letters, case aside, with a WordPiece "##" or
 * a byte-level "Ġ" / SentencePiece "▁" word mark ignored. */
static bool token_matches(const char *token, const char *want) {
    if (!want)
        return true;
    if (!strncmp(token, "##", 2) && token[2])
        token += 2;
    else if (!strncmp(token, "\xc4\xa0", 2) || !strncmp(token, "\xe2\x96\x81", 3))
        token += token[0] == '\xc4' ? 2 : 3;
    return strcasecmp(token, want) == 0;
}

static void md_escape(FILE *f, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (strchr("\\`*_[]<>|#", s[i]))
            fputc('\\', f);
        fputc(s[i], f);
    }
}

/* The sentence with the query in **bold** and the key in `code` (byte spans from the
 * tokenizer; a token without one, or spans that do not fit the line, shows the line plain). */
static void md_sentence(FILE *f, const char *s, const atn_cs_exemplar *e) {
    size_t len = strlen(s);
    int32_t qs = e->query_start, qe = e->query_end, ks = e->key_start, ke = e->key_end;
    bool q_ok = qs >= 0 && qe >= qs && (size_t)qe <= len, k_ok = ks >= 0 && ke >= ks && (size_t)ke <= len;
    if (q_ok && k_ok && qs < ke && ks < qe)
        k_ok = false;   /* the same word: mark the query */
    size_t pos = 0;
    for (int pass = 0; pass < 2; pass++) {
        bool query_first = q_ok && (!k_ok || qs < ks);
        bool is_query = pass == 0 ? query_first : !query_first;
        bool ok = is_query ? q_ok : k_ok;
        if (!ok)
            continue;
        size_t a = (size_t)(is_query ? qs : ks), b = (size_t)(is_query ? qe : ke);
        md_escape(f, s + pos, a - pos);
        fputs(is_query ? "**" : "`", f);
        fwrite(s + a, 1, b - a, f);
        fputs(is_query ? "**" : "`", f);
        pos = b;
    }
    md_escape(f, s + pos, len - pos);
}

int cmd_examples(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", NULL};
    if (!cli_parse(&a, "attnscope examples", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope examples --from ALL.safetensors --layer L --head H [--query TEXT] [--key TEXT]\n"
               "       [--corpus FILE|@LIST] [--limit N] [-o FILE.md|FILE.json] [--format md|json]\n\n"
               "Where a head fires: the exemplars stats --shard kept for it (each query row's heaviest key that\n"
               "is not a special token, the --top heaviest over the corpus; ties by line, query, key), best\n"
               "first, after the head's label from the corpus evidence (previous/next token, self, sink,\n"
               "positional, delimiter, local window, broad, mixed) and the figure behind it.  --query / --key keep those whose query / key token is TEXT (case aside, \"##\" ignored).\n"
               "--corpus (the file or @LIST the statistics were made from) shows each in its sentence, the\n"
               "query in bold and the key as code (json: \"sentence\" and \"sentence_marked\").  -o - or no -o writes to standard output (markdown unless\n"
               "--format json).\n");
        return 0;
    }
    bool ok = true;
    const char *from = cli_get(&a, "from"), *want_q = cli_get(&a, "query"), *want_k = cli_get(&a, "key");
    const char *corpus = cli_get(&a, "corpus"), *out = cli_get(&a, "output"), *format = cli_get(&a, "format");
    long layer = cli_get_int(&a, "layer", -1, 0, CLI_MAX_INDEX, &ok);
    long head = cli_get_int(&a, "head", -1, 0, CLI_MAX_INDEX, &ok);
    long limit = cli_get_int(&a, "limit", ATN_CS_TOP_MAX, 1, ATN_CS_TOP_MAX, &ok);
    if (!ok || !cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    if (!from || layer < 0 || head < 0) {
        cli_error("attnscope examples: --from FILE.safetensors, --layer and --head are required");
        return CLI_EXIT_USAGE;
    }
    if (!format)
        format = out && ends_with(out, ".json") ? "json" : "md";
    if (strcmp(format, "md") && strcmp(format, "json")) {
        cli_error("attnscope examples: --format must be md or json, not \"%s\"", format);
        return CLI_EXIT_USAGE;
    }
    atn_error err = {0};
    atn_corpus_stats *cs = atn_corpus_stats_load(from, &err);
    if (!cs)
        return cli_fail(&err);
    const atn_cs_identity *id = atn_corpus_stats_identity(cs);
    int rc = CLI_EXIT_OK;
    const atn_cs_exemplar **keep = NULL;
    char **lines = NULL;
    int32_t kept = 0;
    if (layer >= id->n_layers || head >= id->n_heads) {
        cli_error("attnscope examples: %s has layers 0-%d and heads 0-%d; --layer %ld --head %ld is not one", from,
                  id->n_layers - 1, id->n_heads - 1, layer, head);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    const atn_cs_exemplar *ex;
    int32_t n = atn_corpus_stats_exemplars(cs, (int32_t)layer, (int32_t)head, &ex);
    keep = calloc((size_t)(n > 0 ? n : 1), sizeof *keep);
    if (!keep) {
        cli_error("out of memory");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    for (int32_t i = 0; i < n && kept < limit; i++)
        if (token_matches(ex[i].query_text, want_q) && token_matches(ex[i].key_text, want_k))
            keep[kept++] = &ex[i];
    if (corpus) {
        int64_t n_lines = 0, *want = malloc((size_t)(kept > 0 ? kept : 1) * sizeof *want);
        lines = calloc((size_t)(kept > 0 ? kept : 1), sizeof *lines);
        for (int32_t i = 0; want && i < kept; i++)
            want[i] = keep[i]->line;
        bool read = want && lines && cli_corpus_read_lines(corpus, want, kept, lines, &n_lines);
        free(want);
        if (!read) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        if (n_lines != id->corpus_lines) {
            cli_error("attnscope examples: %s has %lld lines, the statistics were made from a corpus of %lld (%s)",
                      corpus, (long long)n_lines, (long long)id->corpus_lines, id->corpus);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
    }
    cli_atomic_file af;
    FILE *f = stdout;
    if (out && strcmp(out, "-")) {
        if (!cli_atomic_open(&af, out)) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        f = af.f;
    }
    char why[320];
    atn_cs_label_info in = {0};
    const char *label = atn_corpus_stats_label(cs, (int32_t)layer, (int32_t)head, why, sizeof why);
    atn_corpus_stats_label_info(cs, (int32_t)layer, (int32_t)head, &in);
    if (!label)
        label = "none", snprintf(why, sizeof why, "no sentences");
    if (!strcmp(format, "json")) {
        fputs("{\n  \"model\": ", f);
        cli_json_string(f, id->model);
        fputs(",\n  \"label\": ", f);
        cli_json_string(f, label);
        fputs(",\n  \"evidence\": ", f);
        cli_json_string(f, why);
        fputs(",\n  \"label_figure\": ", f);
        cli_json_number(f, in.value);
        if (in.kind == ATN_CS_LABEL_POSITIONAL && label && strcmp(label, "none"))
            fprintf(f, ",\n  \"label_offset\": %d", in.offset);
        fputs(",\n  \"corpus\": ", f);
        cli_json_string(f, id->corpus);
        fprintf(f, ",\n  \"layer\": %ld,\n  \"head\": %ld,\n  \"exemplars\": [", layer, head);
        for (int32_t i = 0; i < kept; i++) {
            const atn_cs_exemplar *e = keep[i];
            fprintf(f, "%s\n    {\"line\": %lld, \"query\": %d, \"key\": %d, \"weight\": ", i ? "," : "",
                    (long long)e->line, e->query, e->key);
            cli_json_number(f, e->weight);
            fputs(", \"query_text\": ", f);
            cli_json_string(f, e->query_text);
            fputs(", \"key_text\": ", f);
            cli_json_string(f, e->key_text);
            fprintf(f, ", \"query_span\": [%d, %d], \"key_span\": [%d, %d]", e->query_start, e->query_end,
                    e->key_start, e->key_end);
            if (lines && lines[i]) {
                fputs(", \"sentence\": ", f);
                cli_json_string(f, lines[i]);
                char *marked = NULL;   /* the markdown's: the query in **bold**, the key as `code` */
                size_t mlen = 0;
                FILE *mem = open_memstream(&marked, &mlen);
                if (mem) {
                    md_sentence(mem, lines[i], e);
                    if (fclose(mem) == 0) {
                        fputs(", \"sentence_marked\": ", f);
                        cli_json_string(f, marked);
                    }
                }
                free(marked);
            }
            fputc('}', f);
        }
        fputs(kept ? "\n  ]\n}\n" : "]\n}\n", f);
    } else {
        fprintf(f, "# Layer %ld, head %ld: where it attends most\n\n", layer, head);
        fputs("Model `", f);
        md_escape(f, id->model, strlen(id->model));
        fputs("`, corpus `", f);
        md_escape(f, id->corpus, strlen(id->corpus));
        fprintf(f, "`; each query token's heaviest key that is not a special token, best first%s.\n\n",
                want_q || want_k ? ", filtered" : "");
        fprintf(f, "Label from the corpus: **%s** (%s).\n\n", label, why);
        if (!kept)
            fputs("No exemplars match.\n", f);
        for (int32_t i = 0; i < kept; i++) {
            const atn_cs_exemplar *e = keep[i];
            fprintf(f, "%d. %.4f — line %lld: **", i + 1, e->weight, (long long)e->line);
            md_escape(f, e->query_text, strlen(e->query_text));
            fprintf(f, "** (%d) → `%s` (%d)", e->query, e->key_text, e->key);
            if (lines && lines[i]) {
                fputs("  \n   ", f);
                md_sentence(f, lines[i], e);
            }
            fputc('\n', f);
        }
    }
    if (f == stdout) {
        if (fflush(stdout) != 0)
            rc = CLI_EXIT_USAGE;
    } else if (!cli_atomic_close(&af, true))
        rc = CLI_EXIT_USAGE;
done:
    if (lines)
        for (int32_t i = 0; i < kept; i++)
            free(lines[i]);
    free(lines);
    free(keep);
    atn_corpus_stats_free(cs);
    return rc;
}
