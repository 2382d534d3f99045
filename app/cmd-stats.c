/* attnscope stats / similarity: the numbers behind the pictures.  Per-head statistics with
 * pattern labels, and the head-to-head similarity matrix with its clustering order, for
 * one input or averaged over a corpus read one line at a time (memory stays flat). */
#include "cli.h"
#include "analysis.h"
#include "corpus-stats.h"
#include "stats-stream.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- one input or a corpus, fed to a consumer -------------------------------------- */

#define CORPUS_BATCH_HELP                                                                                  \
    "--batch exact|fast|off (with --corpus): exact (the default) runs consecutive sentences together,\n"   \
    "their tokens stacked into one forward, where the numbers stay bit for bit those of one sentence at\n"  \
    "a time (the AVX-512 kernels); fast stacks on every CPU (OpenBLAS's sums then differ in the last\n"    \
    "bits, ~1e-7 relative); off runs one forward per sentence.\n"


typedef atn_status (*consume_fn)(const atn_capture *cap, void *user, atn_error *err);
/* cfg: the model's (or the attention file's) shape; model: NULL for an attention file. */
typedef bool (*setup_fn)(const atn_config *cfg, const atn_model *model, void *user);

/* Opens the model, then runs either the one input or every non-empty line of --corpus,
 * calling consume for each capture; or, with --attention, reads the file's one capture
 * into *at (freed by the caller) and leaves *model_out NULL. */
static int feed(cli_args *a, setup_fn setup, consume_fn consume, void *user, atn_model **model_out,
                cli_attention *at, const atn_head_sink *sink) {
    if (cli_attention_wanted(a)) {
        *model_out = NULL;
        /* --stack decoder or cross reads that stack's heads alone (lazily, each checked when read):
           an encoder-decoder's other stacks are neither read nor checked */
        atn_stack_kind kind;
        const char *stack = cli_get(a, "stack");
        bool one_stack = stack && atn_stack_kind_parse(stack, &kind) && kind != ATN_STACK_ENCODER;
        int rc = one_stack ? cli_attention_open_lazy(a, at) : cli_attention_open(a, at);
        if (rc != CLI_EXIT_OK)
            return rc;
        /* the file's "n_kv_heads" (0 when absent: every head its own) */
        atn_config cfg = {.n_layers = at->cap->n_layers, .n_heads = at->cap->n_heads,
                          .n_kv_heads = atn_attn_file_get_info(at->file).n_kv_heads};
        atn_error err = {0};
        if (!setup(&cfg, NULL, user))
            return CLI_EXIT_FAIL;
        if (consume(at->cap, user, &err))
            return cli_fail(&err);
        return CLI_EXIT_OK;
    }
    const char *corpus = cli_get(a, "corpus"), *batch = cli_get(a, "batch");
    *model_out = NULL;
    atn_corpus_options copts;
    atn_corpus_options_init(&copts);
    if (batch && !corpus) {
        cli_error("%s: --batch goes with --corpus", a->prog);
        return CLI_EXIT_USAGE;
    }
    if (batch && !strcmp(batch, "off"))
        copts.rows = 1;
    else if (batch && !strcmp(batch, "fast"))
        copts.exact = false;
    else if (batch && strcmp(batch, "exact")) {
        cli_error("%s: --batch must be exact, fast or off, not \"%s\"", a->prog, batch);
        return CLI_EXIT_USAGE;
    }
    if (!corpus) {
        atn_model *model;
        atn_encoding *enc;
        atn_run *run;
        int rc = cli_model_run(a, &model, &enc, &run);
        if (rc == CLI_EXIT_OK) {
            atn_error err = {0};
            if (!setup(atn_model_config(model), model, user))
                rc = CLI_EXIT_FAIL;
            else if (consume(atn_run_capture(run), user, &err))
                rc = cli_fail(&err);
        }
        atn_run_free(run);
        atn_encoding_free(enc);
        *model_out = model;
        return rc;
    }
    if (cli_get(a, "text") || cli_get(a, "ids") || cli_get(a, "text-pair")) {
        cli_error("%s: give either --corpus or --text/--ids, not both", a->prog);
        return CLI_EXIT_USAGE;
    }
    atn_run_options opts;
    if (!cli_run_options(a, &opts))
        return CLI_EXIT_USAGE;
    opts.keep_trace_inputs = false; /* only the attention is needed: much less memory */
    opts.pinned_host = true;        /* one run for every sentence: on a GPU, page-locked pays off */
    cli_get(a, "model");
    cli_mark_whatif_options(a);   /* the input comes from --corpus: --mask etc. stay unknown */
    if (!cli_check_unused(a))
        return CLI_EXIT_USAGE;
    atn_error err = {0};
    atn_model *model = cli_open_model(a, &err);
    if (!model)
        return cli_fail(&err);
    *model_out = model;
    cli_interventions ci;   /* token positions out of a sentence's range fail that sentence's run */
    if (!cli_interventions_parse(a, atn_model_config(model), &ci))
        return CLI_EXIT_USAGE;
    opts.interventions = ci.any ? &ci.iv : NULL;
    if (atn_model_kind_of(model) == ATN_MODEL_TOY) {
        cli_error("%s: model \"%s\" is a toy model with its own tokens; --corpus needs a model with a tokenizer",
                  a->prog, atn_model_name(model));
        cli_interventions_free(&ci);
        return CLI_EXIT_USAGE;
    }
    FILE *f = strcmp(corpus, "-") ? fopen(corpus, "rb") : stdin;
    if (f && f != stdin)
        atn_input_guard_note(corpus);   /* -o naming the corpus is refused */
    if (!f) {
        cli_error("%s: cannot open the corpus: %s", corpus, strerror(errno));
        cli_interventions_free(&ci);
        return CLI_EXIT_USAGE;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        cli_error("%s: cannot read the corpus: %s", corpus, strerror(EISDIR));
        fclose(f);
        cli_interventions_free(&ci);
        return CLI_EXIT_USAGE;
    }
    double total = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 ? (double)sb.st_size : 0;
    if (!setup(atn_model_config(model), model, user)) {
        if (f != stdin)
            fclose(f);
        cli_interventions_free(&ci);
        return CLI_EXIT_FAIL;
    }
    if (sink) {   /* made from the heads as the forward makes them: no capture of them */
        opts.keep_attention = false;
        opts.head_sink = sink;
    }
    atn_corpus_report rep;
    cli_progress(0, ATN_STAGE_CORPUS, NULL);
    atn_status st = atn_corpus_run_ex(model, f, total, &opts, &copts, consume, cli_progress, user, &rep, &err);
    int rc = CLI_EXIT_OK;
    for (int64_t i = 0; i < rep.skipped && i < 3; i++)
        cli_error("%s:%lld: skipped: %s", corpus, (long long)rep.skip_line[i], rep.skip_reason[i]);
    if (st == ATN_E_CANCELLED) {
        cli_error("interrupted after %lld sentences; nothing written", (long long)rep.sentences);
        rc = CLI_EXIT_FAIL;
    } else if (st != ATN_OK) {
        cli_error("%s: %s", corpus, err.message);
        rc = st == ATN_E_FORMAT || st == ATN_E_IO ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;   /* bad input: 2 */
    } else if (rep.sentences == 0) {
        cli_error("%s: no sentences (the file has no non-empty lines)", corpus);
        rc = CLI_EXIT_USAGE;
    } else {
        fprintf(stderr, "attnscope: %lld sentences", (long long)rep.sentences);
        if (rep.truncated)
            fprintf(stderr, ", %lld truncated to the model's %d positions", (long long)rep.truncated,
                    atn_model_config(model)->max_positions);
        if (rep.cut)
            fprintf(stderr, ", %lld lines cut at %d bytes", (long long)rep.cut, (int)ATN_CORPUS_LINE_MAX);
        if (rep.skipped)
            fprintf(stderr, ", %lld lines skipped", (long long)rep.skipped);
        fputc('\n', stderr);
    }
    if (f != stdin)
        fclose(f);
    cli_interventions_free(&ci);
    return rc;
}

/* Output to -o FILE (through a temporary name) or stdout. */
typedef struct out_file {
    cli_atomic_file af;
    FILE *f;
} out_file;

static bool out_open(out_file *o, const char *path) {
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        o->f = stdout;
        return true;
    }
    if (!cli_atomic_open(&o->af, path))
        return false;
    o->f = o->af.f;
    return true;
}

static bool out_close(out_file *o, bool ok) {
    if (o->f == stdout)
        return cli_stdout_flush() && ok;
    return cli_atomic_close(&o->af, ok);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* --by-kv-group on an attention file without "n_kv_heads": say so (exit 2) rather than that
 * the model has no groups. */
static bool groups_known(const cli_attention *at, const char *cmd) {
    if (!at->file || atn_attn_file_get_info(at->file).n_kv_heads > 0)
        return true;
    cli_error("attnscope %s: --by-kv-group: the attention file (%s) has no \"n_kv_heads\" in its metadata, so "
              "which K/V head each query head reads is not known; give --model instead", cmd, at->name);
    return false;
}

/* ---- stats ---------------------------------------------------------------------------- */

/* --stack encoder|decoder|cross: which of an encoder-decoder's stacks stats and similarity
 * read (the default: the encoder's, the capture's attention). */
typedef struct stack_choice {
    bool given;
    atn_stack_kind kind;
    const atn_model *model;   /* the run's (NULL: an attention file): the target's tokens */
} stack_choice;

/* Parses --stack into *sc; false (the message printed) for another value or with --corpus (a
 * corpus has no targets). */
static bool stack_parse(cli_args *a, const char *prog, stack_choice *sc) {
    const char *name = cli_get(a, "stack");
    memset(sc, 0, sizeof *sc);
    if (!name)
        return true;
    sc->given = true;
    if (!atn_stack_kind_parse(name, &sc->kind)) {
        cli_error("%s: --stack must be encoder, decoder or cross, not \"%s\"", prog, name);
        return false;
    }
    if (sc->kind != ATN_STACK_ENCODER && cli_get(a, "corpus")) {
        cli_error("%s: --stack %s reads one source and its --target; --corpus has no targets", prog, name);
        return false;
    }
    return true;
}

/* The stack's shape for a capture: the encoder's is the capture's own.  ATN_E_INVALID for
 * --stack with a capture that has one stack. */
static atn_status stack_shape(const stack_choice *sc, const atn_capture *cap, int32_t *layers, int32_t *heads,
                              atn_error *err) {
    if (sc->given && !cap->n_stacks)
        return atn_error_set(err, ATN_E_INVALID, "--stack is for encoder-decoder models (T5, BART, Marian); this "
                             "model has one stack of self-attention");
    const atn_stack *k = sc->given ? atn_capture_stack(cap, sc->kind) : NULL;
    *layers = k ? k->n_layers : cap->n_layers;
    *heads = k ? k->n_heads : cap->n_heads;
    return ATN_OK;
}

/* The statistics and, unless --stack asks for another stack, the sink that makes them from
 * the forward's heads. */
typedef struct stats_job {
    stack_choice stack;
    atn_stats *st;
    atn_stats_stream stream;
} stats_job;

static bool stats_setup(const atn_config *cfg, const atn_model *model, void *user) {
    stats_job *j = user;
    j->stack.model = model;
    if (j->stack.given)   /* the stack's shape: made with the first capture */
        return true;
    atn_error err = {0};
    j->st = atn_stats_new(cfg->n_layers, cfg->n_heads, &err);
    if (!j->st)
        cli_fail(&err);
    atn_stats_stream_init(&j->stream, j->st, NULL);
    return j->st != NULL;
}

static atn_status stats_consume(const atn_capture *cap, void *user, atn_error *err) {
    stats_job *j = user;
    if (!j->stack.given)
        return atn_stats_stream_add(&j->stream, cap, 0, err);
    int32_t layers = 0, heads = 0;   /* set by stack_shape unless it fails */
    atn_status s = stack_shape(&j->stack, cap, &layers, &heads, err);
    if (s)
        return s;
    if (!j->st && !(j->st = atn_stats_new(layers, heads, err)))
        return err ? err->status : ATN_E_NOMEM;
    atn_encoding *target = NULL;   /* the decoder's tokens: their kinds ([SEP], punctuation) */
    if (j->stack.kind == ATN_STACK_DECODER && j->stack.model && cap->target_ids &&
        (s = atn_model_encode_ids(j->stack.model, cap->target_ids, NULL, NULL, cap->n_tgt, &target, err)))
        return s;
    s = atn_stats_add_stack(j->st, cap, j->stack.kind, target, err);
    atn_encoding_free(target);
    return s;
}

/* Which of an encoder-decoder's stacks the heads are (the table's first line says so). */
static const char *stack_heads_note(atn_stack_kind kind) {
    switch (kind) {
    case ATN_STACK_DECODER:
        return "decoder self-attention heads (target over earlier target tokens; --stack encoder|cross for the others)";
    case ATN_STACK_CROSS:
        return "cross-attention heads (target tokens over source tokens; --stack encoder|decoder for the others): "
               "self, prev, next, local, distance and induct compare a target index with a source index and are "
               "not defined (-)";
    default:
        return "encoder self-attention heads (source over source; --stack decoder|cross for the decoder's and "
               "cross-attention)";
    }
}

/* Whether the heads read are an encoder-decoder's encoder's: a model's, or an attention file's
 * that holds the three stacks (its attn is the encoder's), so both say so alike. */
static bool encoder_heads(const atn_model *model, const cli_attention *at) {
    return model ? atn_model_is_encoder_decoder(model) : at->cap && at->cap->n_stacks > 0;
}

/* A CSV field in double quotes (quotes doubled). */
static void csv_quoted(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* atn_stats_write_csv's table with, for a partial (cs), three more columns: the label read off the
 * corpus evidence, that evidence in words, and its figure (atn_corpus_stats_label_info's value). */
static void stats_write_csv(FILE *f, const atn_stats *st, const atn_corpus_stats *cs) {
    if (!cs) {
        atn_stats_write_csv(st, f, NULL);   /* a write error shows when the file is closed */
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem || atn_stats_write_csv(st, mem, NULL) != ATN_OK || fclose(mem) != 0) {
        free(text);
        fputs("(out of memory)\n", f);   /* fails the comparison of any reader; cannot happen short of ENOMEM */
        return;
    }
    char *line = text, *nl;
    for (int64_t row = -1; (nl = strchr(line, '\n')); row++, line = nl + 1) {
        fwrite(line, 1, (size_t)(nl - line), f);
        if (row < 0)
            fputs(",corpus_label,label_evidence,label_figure\n", f);
        else {
            char why[320];
            atn_cs_label_info in;
            int32_t l = (int32_t)(row / st->n_heads), h = (int32_t)(row % st->n_heads);
            const char *label = atn_corpus_stats_label(cs, l, h, why, sizeof why);
            atn_corpus_stats_label_info(cs, l, h, &in);
            fputc(',', f);
            csv_quoted(f, label ? label : "");
            fputc(',', f);
            csv_quoted(f, label ? why : "");
            fprintf(f, ",%.9g\n", label ? in.value : 0.0);
        }
    }
    free(text);
}

/* A table cell: the number, or "-" right-aligned for a statistic not defined (NaN: a cross
 * stack's positional figures). */
static void table_number(FILE *f, int width, double v) {
    if (isnan(v))
        fprintf(f, " %*s", width, "-");
    else
        fprintf(f, " %*.4f", width, v);
}

/* encdec: an encoder-decoder's heads, of stack kind (the outputs say which). */
static void stats_write(FILE *f, const atn_stats *st, const char *format, const char *model_name, bool encdec,
                        atn_stack_kind kind, const atn_corpus_stats *cs) {
    int json = !strcmp(format, "json");
    if (!strcmp(format, "csv")) {
        stats_write_csv(f, st, cs);
        return;
    }
    if (json) {
        fputs("{\n  \"model\": ", f);
        cli_json_string(f, model_name);
        fprintf(f, ",\n  \"sentences\": %lld,\n  \"tokens\": %lld,\n  \"layers\": %d,\n  \"heads_per_layer\": %d,\n"
                   "  \"entropy_unit\": \"bits\",",
                (long long)st->n_sentences, (long long)st->n_tokens, st->n_layers, st->n_heads);
        if (encdec)   /* which stack; a cross stack's undefined figures are null */
            fprintf(f, "\n  \"stack\": \"%s\",", kind == ATN_STACK_CROSS ? "cross" : kind == ATN_STACK_DECODER
                                                                               ? "decoder" : "encoder");
        fputs("\n  \"heads\": [", f);
    } else {
        if (encdec)
            fprintf(f, "%s\n", stack_heads_note(kind));
        fprintf(f, "%lld sentence%s, %lld tokens; entropy in bits, the rest mean attention weights; distance in "
                   "tokens\n", (long long)st->n_sentences, st->n_sentences == 1 ? "" : "s", (long long)st->n_tokens);
        fprintf(f, "%5s %4s %7s %6s %6s %6s %6s %6s %6s %6s %6s %8s %6s  %s\n", "layer", "head", "entropy", "norm",
                "[CLS]", "[SEP]", "punct", "self", "prev", "next", "local", "distance", "induct", "pattern");
    }
    for (int32_t l = 0; l < st->n_layers; l++)
        for (int32_t h = 0; h < st->n_heads; h++) {
            const atn_head_stats *s = &st->heads[(size_t)l * st->n_heads + h];
            if (json) {
                fprintf(f, "%s\n    {\"layer\": %d, \"head\": %d, \"entropy\": ", l || h ? "," : "", l, h);
                const double v[] = {s->entropy, s->entropy_norm, s->cls, s->sep, s->punct, s->self,
                                    s->prev, s->next, s->local, s->same_segment, s->distance};
                static const char *const names[] = {"entropy", "entropy_norm", "cls", "sep", "punct", "self",
                                                    "prev", "next", "local", "same_segment", "distance"};
                cli_json_number(f, v[0]);
                for (int i = 1; i < 11; i++) {
                    fprintf(f, ", \"%s\": ", names[i]);
                    cli_json_number(f, v[i]);
                }
                fputs(", \"pattern\": ", f);
                if (atn_head_stats_absent(s))   /* an attention file's layer without this head */
                    fputs("null, \"absent\": true", f);
                else
                    cli_json_string(f, atn_pattern_name(s->pattern));
                atn_cs_label_info in;
                char why[320];
                const char *label = cs ? atn_corpus_stats_label(cs, l, h, why, sizeof why) : NULL;
                if (label && atn_corpus_stats_label_info(cs, l, h, &in)) {   /* a partial's: the corpus label */
                    fputs(", \"corpus_label\": ", f);
                    cli_json_string(f, label);
                    fputs(", \"label_evidence\": ", f);
                    cli_json_string(f, why);
                    fputs(", \"label_figure\": ", f);
                    cli_json_number(f, in.value);
                    if (in.kind == ATN_CS_LABEL_POSITIONAL)
                        fprintf(f, ", \"label_offset\": %d", in.offset);
                    if (atn_corpus_stats_has_offsets(cs)) {
                        fputs(", \"offset_weights\": [", f);
                        for (int32_t d = -ATN_CS_OFFSET_MAX; d <= ATN_CS_OFFSET_MAX; d++) {
                            double w;
                            atn_corpus_stats_offset(cs, l, h, d, &w, NULL);
                            if (d > -ATN_CS_OFFSET_MAX)
                                fputs(", ", f);
                            cli_json_number(f, w);
                        }
                        fputc(']', f);
                    }
                }
                fputc('}', f);
            } else {
                fprintf(f, "%5d %4d", l, h);
                const double v[] = {s->entropy, s->entropy_norm, s->cls, s->sep, s->punct, s->self, s->prev,
                                    s->next, s->local, s->distance, s->induction};
                static const int width[] = {7, 6, 6, 6, 6, 6, 6, 6, 6, 8, 6};
                for (int i = 0; i < 11; i++)
                    table_number(f, width[i], v[i]);
                fprintf(f, "  %s", atn_head_stats_absent(s) ? "(no head: the layer has fewer)" : atn_pattern_name(s->pattern));
                char why[320];
                const char *label = cs ? atn_corpus_stats_label(cs, l, h, why, sizeof why) : NULL;
                if (label)   /* a partial's: the corpus label and its evidence */
                    fprintf(f, "  corpus: %s (%s)", label, why);
                fputc('\n', f);
            }
        }
    if (json)
        fputs("\n  ]\n}\n", f);
}

/* stats --by-kv-group: each K/V group's means (g [L][kv]) as a table, CSV or JSON. */
static void stats_write_groups(FILE *f, const atn_stats *st, const atn_head_stats *g, int32_t kv, const char *format,
                               const char *model_name) {
    static const char *const names[] = {"entropy", "entropy_norm", "cls", "sep", "punct", "self", "prev", "next",
                                        "local", "distance", "induction"};
    int32_t per = st->n_heads / kv;
    bool json = !strcmp(format, "json"), csv = !strcmp(format, "csv");
    if (json) {
        fputs("{\n  \"model\": ", f);
        cli_json_string(f, model_name);
        fprintf(f, ",\n  \"sentences\": %lld,\n  \"layers\": %d,\n  \"heads_per_layer\": %d,\n  \"kv_heads\": %d,\n"
                   "  \"heads_per_group\": %d,\n  \"entropy_unit\": \"bits\",\n  \"groups\": [",
                (long long)st->n_sentences, st->n_layers, st->n_heads, kv, per);
    } else if (csv) {
        atn_stats_write_kv_groups_csv(st, g, kv, f, NULL);   /* a write error shows when the file is closed */
        return;
    } else {
        fprintf(f, "%lld sentence%s; the mean over each K/V group's %d query heads (heads k*%d .. k*%d+%d read K/V "
                   "head k); entropy in bits\n", (long long)st->n_sentences, st->n_sentences == 1 ? "" : "s", per, per,
                per, per - 1);
        fprintf(f, "%5s %4s %7s %7s %6s %6s %6s %6s %6s %6s %8s %6s  %s\n", "layer", "kv", "heads", "entropy", "norm",
                "self", "prev", "next", "local", "[CLS]", "distance", "induct", "pattern (most heads)");
    }
    for (int32_t l = 0; l < st->n_layers; l++)
        for (int32_t k = 0; k < kv; k++) {
            const atn_head_stats *m = &g[(size_t)l * kv + k];
            const double v[] = {m->entropy, m->entropy_norm, m->cls, m->sep, m->punct, m->self, m->prev, m->next,
                                m->local, m->distance, m->induction};
            if (json) {
                fprintf(f, "%s\n    {\"layer\": %d, \"kv_head\": %d, \"heads\": [", l || k ? "," : "", l, k);
                for (int32_t j = 0; j < per; j++)
                    fprintf(f, "%s%d", j ? ", " : "", k * per + j);
                fputc(']', f);
                for (int i = 0; i < 11; i++) {
                    fprintf(f, ", \"%s\": ", names[i]);
                    cli_json_number(f, v[i]);
                }
                fputs(", \"pattern\": ", f);
                cli_json_string(f, atn_pattern_name(m->pattern));
                fputc('}', f);
            } else {
                char heads[24];
                snprintf(heads, sizeof heads, "%d-%d", k * per, k * per + per - 1);
                fprintf(f, "%5d %4d %7s %7.4f %6.4f %6.4f %6.4f %6.4f %6.4f %6.4f %8.4f %6.4f  %s\n", l, k, heads,
                        m->entropy, m->entropy_norm, m->self, m->prev, m->next, m->local, m->cls, m->distance,
                        m->induction, atn_pattern_name(m->pattern));
            }
        }
    if (json)
        fputs("\n  ]\n}\n", f);
}

/* stats --from FILE: a partial's (or a merged file's) means, printed as stats --corpus prints; by_group:
 * its K/V groups' (atn_corpus_stats_by_kv_group), as stats --corpus --by-kv-group prints them. */
static int stats_from(cli_args *a, const char *format, const char *out, bool by_group) {
    const char *path = cli_get(a, "from");
    if (!cli_check_unused(a))
        return CLI_EXIT_USAGE;
    atn_error err = {0};
    int rc = CLI_EXIT_OK;
    atn_corpus_stats *cs = cli_load_partials(path, &rc);
    if (!cs)
        return rc;
    atn_stats *st = NULL;
    atn_head_stats *groups = NULL;
    int64_t sentences, mf, ml;
    atn_corpus_stats_counts(cs, &sentences, NULL, NULL, NULL, NULL);
    int32_t missing = atn_corpus_stats_missing(cs, &mf, &ml, 1);
    out_file of;
    if (sentences == 0) {
        cli_error("%s: no sentences (the partial covers no non-empty line)", path);
        rc = CLI_EXIT_USAGE;
    } else if (atn_corpus_stats_means(cs, &st, &err))
        rc = cli_fail(&err);
    else if (by_group && atn_corpus_stats_by_kv_group(cs, &groups, &err)) {
        cli_error("attnscope stats: --by-kv-group: %s: %s", path, err.message);
        rc = CLI_EXIT_USAGE;
    } else if (!out_open(&of, out))
        rc = CLI_EXIT_USAGE;
    else {
        fprintf(stderr, "attnscope: %lld sentences", (long long)sentences);
        if (missing)
            fprintf(stderr, "; %d range%s of lines missing, the first %lld-%lld", missing, missing == 1 ? "" : "s",
                    (long long)mf, (long long)ml);
        fputc('\n', stderr);
        if (!atn_corpus_stats_has_offsets(cs))
            fprintf(stderr, "attnscope: %s has no per-offset sums (made by an attnscope before them): its labels "
                            "cannot say \"positional\"; make the partials again for that\n", path);
        if (groups)
            stats_write_groups(of.f, st, groups, atn_corpus_stats_identity(cs)->n_kv_heads, format,
                               atn_corpus_stats_identity(cs)->model);
        else
            stats_write(of.f, st, format, atn_corpus_stats_identity(cs)->model, false, ATN_STACK_ENCODER, cs);
        if (!out_close(&of, true))
            rc = CLI_EXIT_USAGE;
    }
    free(groups);
    atn_stats_free(st);
    atn_corpus_stats_free(cs);
    return rc;
}

int cmd_stats(int argc, char **argv) {
    cli_args a;
    if (argc > 1 && !strcmp(argv[1], "merge"))
        return cmd_stats_merge(argc - 1, argv + 1);
    static const char *const flags[] = {"help", "resume", "on-demand", "by-kv-group", CLI_INTERVENTION_FLAGS, NULL};
    if (!cli_parse(&a, "attnscope stats", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope stats --model M (--text T | --corpus FILE [--batch exact|fast|off])\n"
               "       [--format table|csv|json] [-o FILE]\n"
               "       attnscope stats --attention FILE [--format ...] [-o FILE]   (an attention file, no model)\n"
               "       attnscope stats --model T5|BART|MARIAN --text SRC --target TGT [--stack encoder|decoder|cross]\n"
               "       attnscope stats --model M --corpus FILE [--shard I/N] [--top K] [--checkpoint-every LINES]\n"
               "       [--resume] -o PART.safetensors\n"
               "       attnscope stats merge PART.safetensors... -o ALL.safetensors\n"
               "       attnscope stats --from ALL.safetensors|@LIST [--format table|csv|json] [-o FILE]\n\n"
               "Per-head statistics (Clark et al. 2019): mean row entropy (bits; norm = / log2 of the tokens),\n"
               "mean attention to [CLS], [SEP], punctuation, the token itself, the previous and the next\n"
               "token, within 2 tokens (local), the mean attention distance |i-j|, induction (in a repeated\n"
               "span, attention to the token after the earlier copy; the table only),\n"
               "and a pattern label.\n"
               "--stack (an encoder-decoder's: T5, BART, Marian): encoder (the default) the encoder's\n"
               "self-attention, decoder the decoder's (target over earlier target tokens), cross the\n"
               "cross-attention (target tokens over the source's): entropy over the source tokens, attention\n"
               "to its [CLS]/[SEP]/punctuation; self, prev, next, local, distance and induction compare a\n"
               "target index with a source index and are not defined (table \"-\", JSON null, CSV nan).\n"
               "With --attention, the decoder's tokens have no kinds (the file keeps their text, not their\n"
               "roles): its --stack decoder [CLS]/[SEP]/punct columns are 0.\n"
               "--corpus reads one sentence per line (\"-\" for standard input) and averages over them.\n"
               CORPUS_BATCH_HELP
               "In parts (docs/cluster.md): -o PART.safetensors writes a partial: exact sums and sums of squares,\n"
               "min/max, histograms of row entropy, distance and sink mass, the --top K (default 32) heaviest\n"
               "exemplars per head (attnscope examples) and the provenance.  --shard I/N (0 <= I < N) takes\n"
               "lines floor(I*L/N)+1 .. floor((I+1)*L/N) of the L lines; the file is saved every\n"
               "--checkpoint-every lines (default 1000) and --resume goes on after the lines it covers.\n"
               "stats merge adds partials (any order, the same bytes); --from prints one as --corpus would.\n"
               "--corpus statistics are made from each head as the forward makes it (on the CPU): a sentence's run\n"
               "holds one head's n x n, not every head's.  --on-demand (a partial only) instead keeps each layer's\n"
               "Q, K, V and makes the heads again one at a time (the same bytes; more memory and time).\n"
               "--query-role R / --key-role R (R: " ATN_CS_ROLES "; a partial only): only query tokens of\n"
               "role R count (means, histograms, exemplars); exemplars take each row's heaviest key of role R.\n"
               "--corpus @LIST (and --from @LIST) read the files LIST names, one a line (relative to LIST's\n"
               "folder): a corpus's files are numbered as one, file after file, and shards split that.\n"
               "--by-kv-group (grouped-query models): one row per K/V group of each layer, every figure the\n"
               "mean over the query heads that share that K/V head, the pattern the label most of them have;\n"
               "with --from, made from the partial's per-head sums (the K/V heads it recorded).\n");
        return 0;
    }
    bool by_group = cli_flag(&a, "by-kv-group");
    if (by_group && (cli_get(&a, "shard") ||
                     (!cli_get(&a, "from") && cli_get(&a, "output") && ends_with(cli_get(&a, "output"), ".safetensors")))) {
        cli_error("attnscope stats: --by-kv-group goes with --text, --corpus, --attention or --from, not when writing "
                  "a partial (its per-head sums are what --from --by-kv-group groups)");
        return CLI_EXIT_USAGE;
    }
    const char *format = cli_get(&a, "format"), *out = cli_get(&a, "output");
    if (cli_get(&a, "shard") || (out && ends_with(out, ".safetensors") && !cli_get(&a, "from")))
        return cmd_stats_shard(&a);
    if (cli_flag(&a, "resume") || cli_flag(&a, "on-demand") || cli_get(&a, "top") || cli_get(&a, "checkpoint-every") ||
        cli_get(&a, "query-role") || cli_get(&a, "key-role")) {
        cli_error("attnscope stats: --resume, --on-demand, --top, --checkpoint-every, --query-role and --key-role go "
                  "with a partial "
                  "(-o FILE.safetensors)");
        return CLI_EXIT_USAGE;
    }
    if (!format)
        format = out && ends_with(out, ".json") ? "json" : out && ends_with(out, ".csv") ? "csv" : "table";
    if (strcmp(format, "table") && strcmp(format, "csv") && strcmp(format, "json")) {
        cli_error("attnscope stats: --format must be table, csv or json, not \"%s\"", format);
        return CLI_EXIT_USAGE;
    }
    if (cli_get(&a, "from")) {
        if (cli_get(&a, "stack")) {
            cli_error("attnscope stats: --stack reads a run's or an attention file's stacks, not --from's partial");
            return CLI_EXIT_USAGE;
        }
        return stats_from(&a, format, out, by_group);
    }
    stats_job j = {0};
    if (!stack_parse(&a, "attnscope stats", &j.stack))
        return CLI_EXIT_USAGE;
    atn_model *model = NULL;
    cli_attention at = {0};
    int rc = feed(&a, stats_setup, stats_consume, &j, &model, &at, j.stack.given ? NULL : &j.stream.sink);
    atn_stats_stream_free(&j.stream);
    atn_stats *st = j.st;
    if (rc == CLI_EXIT_OK) {
        atn_error err = {0};
        out_file of;
        atn_head_stats *groups = NULL;
        int32_t kv = model ? atn_model_config(model)->n_kv_heads
                           : at.file ? atn_attn_file_get_info(at.file).n_kv_heads : 0;
        if (kv <= 0)
            kv = st ? st->n_heads : 0;
        if (atn_stats_finish(st, &err))
            rc = cli_fail(&err);
        else if (by_group && !groups_known(&at, "stats"))
            rc = CLI_EXIT_USAGE;
        else if (by_group && atn_stats_by_kv_group(st, kv, &groups, &err)) {
            cli_error("attnscope stats: --by-kv-group: %s", err.message);
            rc = CLI_EXIT_USAGE;
        } else if (!out_open(&of, out))
            rc = CLI_EXIT_USAGE;   /* an unwritable output: 2 in every command */
        else {
            const char *name = model ? atn_model_name(model) : at.name;
            if (groups)
                stats_write_groups(of.f, st, groups, kv, format, name);
            else
                stats_write(of.f, st, format, name, encoder_heads(model, &at),
                            j.stack.given ? j.stack.kind : ATN_STACK_ENCODER, NULL);
            if (!out_close(&of, true))
                rc = CLI_EXIT_USAGE;
        }
        free(groups);
    }
    atn_stats_free(st);
    atn_model_free(model);
    cli_attention_free(&at);
    return rc;
}

/* ---- similarity ------------------------------------------------------------------------ */

typedef struct sim_job {
    atn_metric metric;
    atn_scope scope;
    long layer;
    atn_similarity *sim;
    stack_choice stack;
    int32_t kv_heads;   /* the model's K/V heads per layer (0: as many as query heads) */
    /* --scope layer over a corpus: the forward's head sink keeps that layer's heads alone */
    atn_head_sink sink;
    const atn_encoding *enc;   /* the sentence begun, or NULL */
    float *heads;              /* [H][n][n] of layer `layer` */
    size_t heads_floats;
    int32_t n_heads;
} sim_job;

static atn_status sim_sink_begin(void *user, const atn_encoding *enc, atn_error *err) {
    sim_job *j = user;
    size_t need = (size_t)j->n_heads * enc->n * enc->n;
    j->enc = NULL;
    if (need > j->heads_floats) {
        free(j->heads);
        j->heads_floats = 0;
        if (!(j->heads = malloc(need * sizeof *j->heads)))
            return atn_error_set(err, ATN_E_NOMEM, "similarity: out of memory for a layer's %d heads of %d tokens",
                                 j->n_heads, enc->n);
        j->heads_floats = need;
    }
    j->enc = enc;
    return ATN_OK;
}

/* each head from one thread (attnscope.h): the layer's heads go to their own places */
static void sim_sink_head(void *user, int32_t layer, int32_t head, const float *att, int32_t n) {
    sim_job *j = user;
    if (layer == j->layer && head < j->n_heads)
        memcpy(j->heads + (size_t)head * n * n, att, (size_t)n * n * sizeof *att);
}

static bool sim_setup(const atn_config *cfg, const atn_model *model, void *user) {
    sim_job *j = user;
    j->kv_heads = cfg->n_kv_heads > 0 ? cfg->n_kv_heads : cfg->n_heads;
    j->n_heads = cfg->n_heads;
    if (j->stack.given)   /* the stack's shape: made with the first capture */
        return true;
    atn_error err = {0};
    j->sim = atn_similarity_new(cfg->n_layers, cfg->n_heads, j->metric, j->scope, (int32_t)j->layer, &err);
    if (!j->sim)
        cli_fail(&err);
    else
        atn_similarity_set_progress(j->sim, cli_keep_going, NULL);   /* Ctrl-C inside a long sentence */
    return j->sim != NULL;
}

static atn_status sim_consume(const atn_capture *cap, void *user, atn_error *err) {
    sim_job *j = user;
    if (!j->stack.given && cap->layer_heads && j->sim->n_sentences == 0) {
        /* an attention file whose layers have different head counts: the heads they have */
        atn_similarity *s = atn_similarity_new_capture(cap, j->metric, j->scope, (int32_t)j->layer, err);
        if (!s)
            return err ? err->status : ATN_E_NOMEM;
        atn_similarity_free(j->sim);
        j->sim = s;
        atn_similarity_set_progress(j->sim, cli_keep_going, NULL);
    }
    if (!j->stack.given && !atn_capture_has_heads(cap)) {   /* streamed: the layer's heads alone */
        if (!j->enc || j->enc != cap->enc)
            return atn_error_set(err, ATN_E_INVALID, "similarity: the run kept no attention and streamed none");
        j->enc = NULL;
        return atn_similarity_add_layer(j->sim, cap->enc, j->heads, err);
    }
    if (!j->stack.given)
        return atn_similarity_add(j->sim, cap, err);
    int32_t layers = 0, heads = 0;   /* set by stack_shape unless it fails */
    atn_status s = stack_shape(&j->stack, cap, &layers, &heads, err);
    if (s)
        return s;
    if (!j->sim) {
        if (!(j->sim = atn_similarity_new(layers, heads, j->metric, j->scope, (int32_t)j->layer, err)))
            return err ? err->status : ATN_E_NOMEM;
        atn_similarity_set_progress(j->sim, cli_keep_going, NULL);
    }
    return atn_similarity_add_stack(j->sim, cap, j->stack.kind, err);
}

/* "L3 KV1" (model scope) or "KV1" (layer scope): group a of g. */
static const char *group_label(const atn_kv_groups *g, const atn_similarity *s, int32_t a, char *buf, size_t size) {
    if (s->scope == ATN_SCOPE_LAYER)
        snprintf(buf, size, "KV%d", g->kv_of[a]);
    else
        snprintf(buf, size, "L%d KV%d", g->layer_of[a], g->kv_of[a]);
    return buf;
}

/* --by-kv-group in JSON: the groups, their heads, the within / between means, the matrix. */
static void groups_write_json(FILE *f, const atn_kv_groups *g, const atn_similarity *s) {
    char buf[32];
    fprintf(f, ",\n  \"kv_groups\": {\n    \"kv_heads\": %d,\n    \"heads_per_group\": %d,\n    \"labels\": [",
            g->kv_heads, g->per_group);
    for (int32_t a = 0; a < g->count; a++) {
        fputs(a ? ", " : "", f);
        cli_json_string(f, group_label(g, s, a, buf, sizeof buf));
    }
    fputs("],\n    \"groups\": [", f);
    for (int32_t a = 0; a < g->count; a++) {
        fprintf(f, "%s{\"layer\": %d, \"kv_head\": %d, \"heads\": [", a ? ", " : "", g->layer_of[a], g->kv_of[a]);
        for (int32_t j = 0; j < g->per_group; j++)
            fprintf(f, "%s%d", j ? ", " : "", g->kv_of[a] * g->per_group + j);
        fputs("]}", f);
    }
    fputs("],\n    \"within\": ", f);
    cli_json_number(f, g->within);
    fputs(",\n    \"between\": ", f);
    cli_json_number(f, g->between);
    fputs(",\n    \"values\": [", f);
    for (int32_t r = 0; r < g->count; r++) {
        fputs(r ? ",\n      [" : "\n      [", f);
        for (int32_t c = 0; c < g->count; c++) {
            fputs(c ? ", " : "", f);
            cli_json_number(f, g->values[(size_t)r * g->count + c]);
        }
        fputc(']', f);
    }
    fputs("\n    ]\n  }", f);
}

static bool sim_write_json(FILE *f, const atn_similarity *s, const char *model_name, bool encdec,
                           atn_stack_kind kind, const atn_kv_groups *g) {
    char buf[32];
    fputs("{\n  \"model\": ", f);
    cli_json_string(f, model_name);
    if (encdec)   /* which of an encoder-decoder's stacks these heads are */
        fprintf(f, ",\n  \"stack\": \"%s\"", kind == ATN_STACK_CROSS ? "cross" : kind == ATN_STACK_DECODER
                                                                              ? "decoder" : "encoder");
    fprintf(f, ",\n  \"metric\": \"%s\",\n  \"metric_is_distance\": %s,\n  \"scope\": \"%s\",\n  \"layer\": %d,\n"
               "  \"sentences\": %lld,\n  \"labels\": [",
            atn_metric_name(s->metric), atn_metric_is_distance(s->metric) ? "true" : "false",
            atn_scope_name(s->scope), s->layer, (long long)s->n_sentences);
    for (int32_t c = 0; c < s->count; c++) {
        fputs(c ? ", " : "", f);
        cli_json_string(f, atn_similarity_label(s, c, buf, sizeof buf));
    }
    fputs("],\n  \"heads\": [", f);
    for (int32_t c = 0; c < s->count; c++)
        fprintf(f, "%s[%d, %d]", c ? ", " : "", s->layer_of[c], s->head_of[c]);
    fputs("],\n  \"order\": [", f);
    for (int32_t c = 0; c < s->count; c++)
        fprintf(f, "%s%d", c ? ", " : "", s->order[c]);
    fputs("],\n  \"linkage\": [", f);
    for (int32_t m = 0; m + 1 < s->count; m++) {
        fprintf(f, "%s[%d, %d, ", m ? ", " : "", s->merge_a[m], s->merge_b[m]);
        cli_json_number(f, s->merge_height[m]);
        fputc(']', f);
    }
    fputs("],\n  \"values\": [", f);
    for (int32_t r = 0; r < s->count; r++) {
        fputs(r ? ",\n    [" : "\n    [", f);
        for (int32_t c = 0; c < s->count; c++) {
            fputs(c ? ", " : "", f);
            cli_json_number(f, s->values[(size_t)r * s->count + c]);
        }
        fputc(']', f);
    }
    fputs("\n  ]", f);
    if (g)
        groups_write_json(f, g, s);
    fputs("\n}\n", f);
    return true;
}

static void sim_write_csv(FILE *f, const atn_similarity *s, const atn_kv_groups *g) {
    char buf[32];
    if (g) {   /* the group matrix: the diagonal within a group, the rest between two */
        fputs("group", f);
        for (int32_t c = 0; c < g->count; c++)
            fprintf(f, ",%s", group_label(g, s, c, buf, sizeof buf));
        fputc('\n', f);
        for (int32_t r = 0; r < g->count; r++) {
            fputs(group_label(g, s, r, buf, sizeof buf), f);
            for (int32_t c = 0; c < g->count; c++)
                fprintf(f, ",%.9g", g->values[(size_t)r * g->count + c]);
            fputc('\n', f);
        }
        return;
    }
    fputs("head", f);
    for (int32_t c = 0; c < s->count; c++)
        fprintf(f, ",%s", atn_similarity_label(s, c, buf, sizeof buf));
    fputc('\n', f);
    for (int32_t r = 0; r < s->count; r++) {
        fputs(atn_similarity_label(s, r, buf, sizeof buf), f);
        for (int32_t c = 0; c < s->count; c++)
            fprintf(f, ",%.9g", s->values[(size_t)r * s->count + c]);
        fputc('\n', f);
    }
}

int cmd_similarity(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "by-kv-group", NULL};
    if (!cli_parse(&a, "attnscope similarity", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope similarity --model M (--text T | --corpus FILE) [--metric js|cosine|pearson]\n"
               "       [--scope layer|model] [--layer L] -o FILE.json|FILE.npy|FILE.csv\n"
               "       attnscope similarity --attention FILE [...]   (an attention file in place of --model)\n"
               "       attnscope similarity --model T5|BART|MARIAN --text SRC --target TGT --stack encoder|decoder|cross\n\n"
               "Head-to-head similarity: js = Jensen-Shannon distance between the heads' attention rows\n"
               "(base 2, 0..1, mean over query tokens; Clark et al. 2019), cosine or Pearson of the\n"
               "flattened maps.  --scope layer (the default when --layer is given) compares the heads of\n"
               "one layer, model every head.  .json also has the labels, the average-linkage clustering\n"
               "order and the linkage (scipy's convention); .npy is the float32 matrix; .csv a labelled table.\n"
               "-o - --format json|npy|csv writes to standard output.\n"
               "--stack (an encoder-decoder's: T5, BART, Marian): the encoder's self-attention heads (the\n"
               "default), the decoder's (target over target) or the cross-attention heads (each target row's\n"
               "distribution over the source tokens; js averages over the target rows).\n"
               "--by-kv-group (grouped-query models: query heads sharing a K/V head form a group): .json gains\n"
               "\"kv_groups\": the mean over pairs of heads within one group, between groups of one layer, and\n"
               "the group-by-group matrix of pair means (its diagonal: within each group); .npy and .csv are that\n"
               "matrix.\n"
               CORPUS_BATCH_HELP);
        return 0;
    }
    sim_job j = {ATN_METRIC_JS, ATN_SCOPE_MODEL, 0, NULL, {0}, 0};
    bool by_group = cli_flag(&a, "by-kv-group");
    bool ok = stack_parse(&a, "attnscope similarity", &j.stack);
    const char *metric = cli_get(&a, "metric"), *scope = cli_get(&a, "scope"), *out = cli_get(&a, "output");
    const char *format = cli_get(&a, "format");
    if (cli_get(&a, "layer"))
        j.scope = ATN_SCOPE_LAYER;
    j.layer = cli_get_int(&a, "layer", 0, 0, CLI_MAX_INDEX, &ok);
    if (metric && !atn_metric_from_name(metric, &j.metric)) {
        cli_error("attnscope similarity: --metric must be js, cosine or pearson, not \"%s\"", metric);
        ok = false;
    }
    if (scope && !atn_scope_from_name(scope, &j.scope)) {
        cli_error("attnscope similarity: --scope must be layer or model, not \"%s\"", scope);
        ok = false;
    }
    if (!out) {
        cli_error("attnscope similarity: -o FILE.json|FILE.npy|FILE.csv is required");
        ok = false;
    } else if (!strcmp(out, "-")) {
        if (!format || (strcmp(format, "json") && strcmp(format, "npy") && strcmp(format, "csv"))) {
            cli_error("attnscope similarity: -o - (standard output) needs --format json, npy or csv");
            ok = false;
        }
    } else if (format) {
        cli_error("attnscope similarity: --format goes with -o - (standard output); name the file "
                  "FILE.json|FILE.npy|FILE.csv");
        ok = false;
    } else if (!ends_with(out, ".json") && !ends_with(out, ".npy") && !ends_with(out, ".csv")) {
        cli_error("attnscope similarity: output \"%s\" must end in .json, .npy or .csv", out);
        ok = false;
    }
    /* the kind of file: its extension, or --format for standard output */
    const char *kind = !ok ? "" : format ? format : ends_with(out, ".npy") ? "npy" : ends_with(out, ".json") ? "json"
                                                                                                         : "csv";
    if (!ok)
        return CLI_EXIT_USAGE;
    atn_model *model = NULL;
    cli_attention at = {0};
    j.sink = (atn_head_sink){sim_sink_begin, sim_sink_head, &j};
    /* a layer over a corpus: that layer's [H][n][n] per sentence instead of the capture's
       [L][H][n][n] (docs/ARCHITECTURE.md, "Attention at any length"); the model scope
       compares every head with every other and keeps the capture */
    bool stream = j.scope == ATN_SCOPE_LAYER && !j.stack.given && cli_get(&a, "corpus");
    int rc = feed(&a, sim_setup, sim_consume, &j, &model, &at, stream ? &j.sink : NULL);
    free(j.heads);
    atn_kv_groups *groups = NULL;
    if (rc == CLI_EXIT_OK) {
        atn_error err = {0};
        if (atn_similarity_finish(j.sim, &err)) {
            rc = cli_fail(&err);
        } else if (by_group && !groups_known(&at, "similarity")) {
            rc = CLI_EXIT_USAGE;
        } else if (by_group && atn_similarity_by_kv_group(j.sim, j.kv_heads, &groups, &err)) {
            cli_error("attnscope similarity: --by-kv-group: %s", err.message);
            rc = CLI_EXIT_USAGE;
        } else if (!strcmp(kind, "npy")) {
            int32_t count = groups ? groups->count : j.sim->count;
            const double *values = groups ? groups->values : j.sim->values;
            size_t cc = (size_t)count * count;
            float *v = malloc(cc * sizeof *v);
            int64_t shape[2] = {count, count};
            if (!v) {
                cli_error("out of memory");
                rc = CLI_EXIT_FAIL;
            } else {
                for (size_t i = 0; i < cc; i++)
                    v[i] = (float)values[i];
                if (!cli_interrupted() && atn_npy_write_f32(out, v, shape, 2, &err))
                    rc = cli_fail(&err);
                free(v);
            }
        } else {
            out_file of;
            if (!out_open(&of, out)) {
                rc = CLI_EXIT_USAGE;
            } else {
                if (!strcmp(kind, "json"))
                    sim_write_json(of.f, j.sim, model ? atn_model_name(model) : at.name, encoder_heads(model, &at),
                                   j.stack.given ? j.stack.kind : ATN_STACK_ENCODER, groups);
                else
                    sim_write_csv(of.f, j.sim, groups);
                if (!out_close(&of, true))
                    rc = CLI_EXIT_USAGE;
            }
        }
    }
    atn_kv_groups_free(groups);
    atn_similarity_free(j.sim);
    atn_model_free(model);
    cli_attention_free(&at);
    return rc;
}
