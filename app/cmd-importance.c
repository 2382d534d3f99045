/* attnscope importance: for every head, the masked-LM loss change over a corpus when the
 * head alone is switched off and when it alone is kept in its layer (Michel et al. 2019's
 * question answered by ablation).  .csv (default, a row per head, ranked by the loss change
 * when off), .json, or a figure (.png/.svg/.pdf: the layers x heads map of that change). */
#include "cli.h"
#include "analysis.h"
#include "cli-figure.h"
#include "render.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static const atn_importance *rank_imp;   /* qsort has no context argument */

static int by_off_delta(const void *x, const void *y) {
    double a = rank_imp->off_delta[*(const int32_t *)x], b = rank_imp->off_delta[*(const int32_t *)y];
    return (a < b) - (a > b);
}

static void draw(cairo_t *cr, double w, double h, void *user) { atn_render_heatmap(cr, user, w, h); }

static int write_figure(const char *path, atn_output_format fmt, const atn_model *model, const atn_importance *imp) {
    int32_t L = imp->n_layers, H = imp->n_heads;
    float *v = malloc((size_t)L * H * sizeof(float));
    char (*labels)[16] = malloc((size_t)(L + H) * sizeof *labels);
    const char **rows = malloc((size_t)L * sizeof *rows), **cols = malloc((size_t)H * sizeof *cols);
    if (!v || !labels || !rows || !cols) {
        free(v), free(labels), free(rows), free(cols);
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    for (int32_t i = 0; i < L * H; i++)
        v[i] = (float)imp->off_delta[i];
    for (int32_t l = 0; l < L; l++)
        snprintf(labels[l], 16, "L%d", l), rows[l] = labels[l];
    for (int32_t h = 0; h < H; h++)
        snprintf(labels[L + h], 16, "H%d", h), cols[h] = labels[L + h];
    char title[512];
    snprintf(title, sizeof title, "%s \xc2\xb7 head importance: %s loss change when switched off (%lld "
             "sentences)", atn_model_name(model), imp->next_token ? "next-token" : "masked-LM",
             (long long)imp->sentences);
    atn_heatmap_spec s;
    atn_heatmap_spec_init(&s);
    s.values = v, s.rows = L, s.cols = H;
    s.row_labels = rows, s.col_labels = cols;
    s.title = title, s.row_axis = "layer", s.col_axis = "head", s.colorbar_label = "\xce\x94 loss (nats)";
    s.colormap = ATN_CMAP_RDBU;
    s.show_values = true;
    double w, h;
    atn_render_heatmap_natural_size(&s, &w, &h);
    int rc = cli_write_figure(path, fmt, w, h, 1.0, draw, &s, NULL);
    free(v), free(labels), free(rows), free(cols);
    return rc;
}

static int write_table(const char *path, bool json, const atn_importance *imp) {
    int32_t L = imp->n_layers, H = imp->n_heads;
    int32_t *order = malloc((size_t)L * H * sizeof *order);
    if (!order) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    for (int32_t i = 0; i < L * H; i++)
        order[i] = i;
    rank_imp = imp;
    qsort(order, (size_t)L * H, sizeof *order, by_off_delta);
    cli_atomic_file af;
    FILE *f = stdout;
    if (path && strcmp(path, "-")) {
        if (!cli_atomic_open(&af, path)) {
            free(order);
            return CLI_EXIT_USAGE;
        }
        f = af.f;
    }
    if (json) {
        if (imp->next_token)   /* a causal model: nothing masked, every next token predicted */
            fprintf(f, "{\n  \"layers\": %d,\n  \"heads\": %d,\n  \"loss\": \"next-token\",\n  \"sentences\": %lld,\n"
                    "  \"predicted_tokens\": %lld,\n  \"base_loss\": ", L, H, (long long)imp->sentences,
                    (long long)imp->masked);
        else
            fprintf(f, "{\n  \"layers\": %d,\n  \"heads\": %d,\n  \"sentences\": %lld,\n  \"masked_tokens\": %lld,\n"
                    "  \"base_loss\": ", L, H, (long long)imp->sentences, (long long)imp->masked);
        cli_json_number(f, imp->base_loss);
        fputs(",\n  \"heads_ranked\": [", f);
        for (int32_t r = 0; r < L * H; r++) {
            int32_t i = order[r];
            fprintf(f, "%s\n    {\"layer\": %d, \"head\": %d, \"loss_change_off\": ", r ? "," : "", i / H, i % H);
            cli_json_number(f, imp->off_delta[i]);
            fputs(", \"loss_change_kept_alone\": ", f);
            cli_json_number(f, imp->keep_delta[i]);
            fputc('}', f);
        }
        fputs("\n  ]\n}\n", f);
    } else {
        fprintf(f, "rank,layer,head,loss_change_off,loss_change_kept_alone\n");
        for (int32_t r = 0; r < L * H; r++) {
            int32_t i = order[r];
            fprintf(f, "%d,%d,%d,%.9g,%.9g\n", r + 1, i / H, i % H, imp->off_delta[i], imp->keep_delta[i]);
        }
    }
    free(order);
    if (f == stdout)
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    return cli_atomic_close(&af, true) || cli_interrupted() ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

static bool importance_progress(double fraction, atn_stage stage, void *user) {
    (void)stage, (void)user;
    return cli_report(fraction, "head importance");
}

int cmd_importance(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "no-reuse", NULL};
    if (!cli_parse(&a, "attnscope importance", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope importance --model M (--corpus FILE | --text T | --ids 1,2,3 | --tokens N)\n"
               "       [--seed N] [--mask-rate 0.15]\n"
               "       [--head-mode zero|uniform] [--no-reuse] [--batch off|fast] [-o importance.csv|.json|.png]\n\n"
               "For every head, the masked-LM loss change over the corpus (one sentence per line; 15%% of\n"
               "each sentence's words, at least one, replaced by [MASK] with a fixed seed) when the head\n"
               "alone is switched off, and when it alone is kept in its layer.  CSV (default, standard\n"
               "output) and JSON rank the heads by the change when off; a figure draws it as a layers x\n"
               "heads map.  An ablation in layer l reuses the plain run's layers below l (--no-reuse runs\n"
               "them again; the figures are the same).  A causal model (GPT-2) uses the next-token loss\n"
               "instead: every token predicts the one after it, nothing is masked (no --seed, --mask-rate).\n"
               "--batch fast runs each layer's ablations of a sentence together, the sentence's tokens\n"
               "stacked once per head gate in one forward (the figures then differ from --batch off, the\n"
               "default, by float rounding: ~1e-7 relative).\n"
               "One input (--text, --ids, or --tokens N for a model without a tokenizer such as random:gpt2)\n"
               "is a corpus of one sentence.\n");
        return 0;
    }
    const char *corpus = cli_get(&a, "corpus"), *out = cli_get(&a, "output"), *mode_s = cli_get(&a, "head-mode");
    /* one input instead of a corpus: --text, --ids or --tokens N (a model without a tokenizer,
       random:SHAPE, takes ids) */
    bool one = cli_get(&a, "text") || cli_get(&a, "ids") || cli_get(&a, "tokens");
    cli_get(&a, "text-pair"), cli_get(&a, "type-ids"), cli_get(&a, "mask");
    if (!corpus && !one) {
        cli_error("attnscope importance: --corpus FILE is required (one sentence per line), or one input: "
                  "--text T, --ids 1,2,3 or --tokens N");
        return CLI_EXIT_USAGE;
    }
    if (corpus && one) {
        cli_error("attnscope importance: give --corpus FILE or one input (--text, --ids, --tokens), not both");
        return CLI_EXIT_USAGE;
    }
    atn_output_format fmt;
    bool figure = out && atn_output_format_from_path(out, &fmt);
    bool json = out && ends_with(out, ".json");
    if (out && strcmp(out, "-") && !figure && !json && !ends_with(out, ".csv")) {
        cli_error("attnscope importance: output \"%s\" must end in .csv, .json, .png, .svg or .pdf", out);
        return CLI_EXIT_USAGE;
    }
    atn_head_mode mode = ATN_HEAD_ZERO;
    if (mode_s && !strcmp(mode_s, "uniform"))
        mode = ATN_HEAD_UNIFORM;
    else if (mode_s && strcmp(mode_s, "zero")) {
        cli_error("attnscope importance: --head-mode must be zero or uniform, not \"%s\"", mode_s);
        return CLI_EXIT_USAGE;
    }
    bool ok = true;
    long seed = cli_get_int(&a, "seed", 0, 0, LONG_MAX, &ok);
    double rate = cli_get_double(&a, "mask-rate", 0.15, 1e-9, 1.0, &ok);   /* (0, 1] */
    if (!ok)
        return CLI_EXIT_USAGE;
    bool reuse = !cli_flag(&a, "no-reuse");
    const char *batch = cli_get(&a, "batch");
    if (batch && strcmp(batch, "off") && strcmp(batch, "fast")) {
        cli_error("attnscope importance: --batch must be off or fast, not \"%s\"", batch);
        return CLI_EXIT_USAGE;
    }
    bool stacked = batch && !strcmp(batch, "fast");
    atn_run_options opts;
    if (!cli_run_options(&a, &opts))
        return CLI_EXIT_USAGE;
    cli_get(&a, "model");
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    atn_error err = {0};
    atn_model *model = cli_open_model(&a, &err);
    if (!model)
        return cli_fail(&err);
    bool causal = atn_model_is_causal(model);
    if (!causal && !atn_model_has_mlm_head(model)) {
        cli_error("attnscope importance: model \"%s\" has no masked-LM head: head importance measures the "
                  "masked-LM loss (or a causal model's next-token loss)", atn_model_name(model));
        atn_model_free(model);
        return CLI_EXIT_USAGE;
    }
    if (causal && (cli_get(&a, "seed") || cli_get(&a, "mask-rate"))) {
        cli_error("attnscope importance: --%s: model \"%s\" is causal, so its importance uses the next-token "
                  "loss and masks nothing", cli_get(&a, "seed") ? "seed" : "mask-rate", atn_model_name(model));
        atn_model_free(model);
        return CLI_EXIT_USAGE;
    }
    atn_encoding **sents = NULL;
    int32_t n = 0, cap = 0;
    if (!corpus) {   /* the one input is the corpus */
        sents = calloc(1, sizeof *sents);
        atn_status est = sents ? cli_encode(&a, model, &sents[0], &err)
                               : atn_error_set(&err, ATN_E_NOMEM, "out of memory");
        if (est != ATN_OK) {
            free(sents);
            atn_model_free(model);
            return cli_fail(&err);
        }
        n = 1;
    }
    FILE *f = !corpus ? NULL : strcmp(corpus, "-") ? fopen(corpus, "rb") : stdin;
    if (f && f != stdin)
        atn_input_guard_note(corpus);   /* -o naming the corpus is refused */
    if (corpus && !f) {
        cli_error("%s: cannot open the corpus: %s", corpus, strerror(errno));
        atn_model_free(model);
        return CLI_EXIT_USAGE;
    }
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    int rc = CLI_EXIT_OK;
    long lineno = 0;
    while (f && (got = getline(&line, &lcap, f)) >= 0 && rc == CLI_EXIT_OK) {
        lineno++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = 0;
        if (!got)
            continue;
        atn_encoding *e = NULL;
        if (atn_model_encode_cancellable(model, line, NULL, cli_keep_going, NULL, &e, &err)) {
            cli_error("%s:%ld: %s", corpus, lineno, err.message);
            rc = CLI_EXIT_USAGE;
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            atn_encoding **ns = realloc(sents, (size_t)cap * sizeof *ns);
            if (!ns) {
                atn_encoding_free(e);
                cli_error("out of memory");
                rc = CLI_EXIT_FAIL;
                break;
            }
            sents = ns;
        }
        sents[n++] = e;
    }
    if (f && ferror(f) && rc == CLI_EXIT_OK) {
        cli_error("%s: cannot read the corpus: %s", corpus, strerror(errno));
        rc = CLI_EXIT_USAGE;
    }
    free(line);
    if (f && f != stdin)
        fclose(f);
    if (rc == CLI_EXIT_OK && n == 0) {
        cli_error("%s: no sentences (the file has no non-empty lines)", corpus);
        rc = CLI_EXIT_USAGE;
    }
    atn_importance *imp = NULL;
    if (rc == CLI_EXIT_OK) {
        atn_status st = stacked ? atn_importance_compute_stacked(model, sents, n, rate, (uint64_t)seed, mode, reuse,
                                                                 0, &opts, importance_progress, NULL, &imp, &err)
                                : atn_importance_compute(model, sents, n, rate, (uint64_t)seed, mode, reuse, &opts,
                                                         importance_progress, NULL, &imp, &err);
        if (st == ATN_E_CANCELLED)
            rc = CLI_EXIT_USAGE;   /* main says "interrupted" and exits 130 */
        else if (st)
            rc = cli_fail(&err);
    }
    if (imp) {
        fprintf(stderr, "attnscope: %lld sentences, %lld %s tokens, base loss %.4f, %.2f s\n",
                (long long)imp->sentences, (long long)imp->masked, imp->next_token ? "predicted" : "masked",
                imp->base_loss, imp->seconds);
        rc = figure ? write_figure(out, fmt, model, imp) : write_table(out, json, imp);
    }
    atn_importance_free(imp);
    for (int32_t i = 0; i < n; i++)
        atn_encoding_free(sents[i]);
    free(sents);
    atn_model_free(model);
    return rc;
}
