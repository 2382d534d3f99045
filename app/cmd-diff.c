/* attnscope diff: the same text through the original and the changed model (the what-if
 * options), compared: per-head Jensen-Shannon distance and largest |change| as a layers x
 * heads map, per-layer hidden-state drift, and the masked-LM guesses before and after
 * with the probability of the original word.  .json (everything), .npy (float32 [2][L][H]:
 * JS distance, max |change|) or .png/.svg/.pdf (the JS distance map, ui/render's heatmap). */
#include "cli.h"
#include "analysis.h"
#include "cli-figure.h"
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

typedef struct diff_figure {
    atn_heatmap_spec spec;
} diff_figure;

static void draw(cairo_t *cr, double w, double h, void *user) {
    atn_render_heatmap(cr, &((diff_figure *)user)->spec, w, h);
}

static int write_figure(const char *path, atn_output_format fmt, const atn_model *model, const atn_capture_diff *d,
                     bool max_abs) {
    int32_t L = d->n_layers, H = d->n_heads;
    char **rows = calloc((size_t)L, sizeof *rows), **cols = calloc((size_t)H, sizeof *cols);
    int rc = CLI_EXIT_OK;
    for (int32_t l = 0; rows && l < L; l++)
        if ((rows[l] = malloc(16)))
            snprintf(rows[l], 16, "L%d", l);
    for (int32_t h = 0; cols && h < H; h++)
        if ((cols[h] = malloc(16)))
            snprintf(cols[h], 16, "H%d", h);
    char title[512];
    snprintf(title, sizeof title, "%s \xc2\xb7 what-if: %s per head", atn_model_name(model),
             max_abs ? "largest |change|" : "Jensen-Shannon distance");
    diff_figure f;
    atn_heatmap_spec_init(&f.spec);
    f.spec.values = max_abs ? d->max_abs : d->js;
    f.spec.rows = L, f.spec.cols = H;
    f.spec.row_labels = (const char *const *)rows;
    f.spec.col_labels = (const char *const *)cols;
    f.spec.title = title;
    f.spec.row_axis = "layer";
    f.spec.col_axis = "head";
    f.spec.colorbar_label = max_abs ? "max |\xce\x94|" : "JS distance";
    f.spec.range.automatic = false;
    f.spec.range.vmin = 0, f.spec.range.vmax = 1;
    f.spec.show_values = true;
    double w, h;
    atn_render_heatmap_natural_size(&f.spec, &w, &h);
    if (!rows || !cols) {
        cli_error("out of memory");
        rc = CLI_EXIT_FAIL;
    } else {
        rc = cli_write_figure(path, fmt, w, h, 1.0, draw, &f, NULL);
    }
    for (int32_t l = 0; rows && l < L; l++)
        free(rows[l]);
    for (int32_t hh = 0; cols && hh < H; hh++)
        free(cols[hh]);
    free(rows);
    free(cols);
    return rc;
}

static void json_floats(FILE *f, const float *v, int32_t n) {
    fputc('[', f);
    for (int32_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        cli_json_number(f, v[i]);
    }
    fputc(']', f);
}

static void json_map(FILE *f, const float *v, int32_t L, int32_t H) {
    fputc('[', f);
    for (int32_t l = 0; l < L; l++) {
        fputs(l ? ",\n    " : "\n    ", f);
        json_floats(f, v + (size_t)l * H, H);
    }
    fputs("\n  ]", f);
}

static void json_guesses(FILE *f, const atn_prediction *p, int k) {
    fputc('[', f);
    for (int r = 0; r < k; r++) {
        fputs(r ? ", {\"token\": " : "{\"token\": ", f);
        cli_json_string(f, p[r].token);
        fprintf(f, ", \"id\": %d, \"prob\": ", p[r].id);
        cli_json_number(f, p[r].prob);
        fputc('}', f);
    }
    fputc(']', f);
}

/* The guesses: at each [MASK] (the original word: the original model's first guess), or
 * at every word when there is none (the original word: the token itself). */
static int write_guesses(FILE *f, const atn_model *model, const atn_capture *a, const atn_capture *b) {
    enum { K = 5 };
    bool any_mask = false;
    for (int32_t i = 0; i < a->n; i++)
        any_mask |= a->enc->tokens[i].role == ATN_TOKEN_MASK;
    fputs(",\n  \"guesses\": [", f);
    int found = 0;
    for (int32_t i = 0; i < a->n; i++) {
        const atn_token *t = &a->enc->tokens[i];
        if (any_mask ? t->role != ATN_TOKEN_MASK : (t->special || !a->enc->mask[i]))
            continue;
        atn_prediction pa[K], pb[K];
        atn_error err = {0};
        double la, lb;
        if (atn_predict_position(model, a, i, K, pa, &err) || atn_predict_position(model, b, i, K, pb, &err))
            return cli_fail(&err);
        int32_t orig = any_mask ? pa[0].id : a->enc->ids[i];
        if (atn_predict_log_prob(model, a, i, orig, &la, &err) || atn_predict_log_prob(model, b, i, orig, &lb, &err))
            return cli_fail(&err);
        fprintf(f, "%s\n    {\"position\": %d, \"token\": ", found++ ? "," : "", i);
        cli_json_string(f, t->text);
        fprintf(f, ", \"original_id\": %d, \"p_original_before\": ", orig);
        cli_json_number(f, exp(la));
        fputs(", \"p_original_after\": ", f);
        cli_json_number(f, exp(lb));
        fputs(",\n     \"before\": ", f);
        json_guesses(f, pa, K);
        fputs(",\n     \"after\": ", f);
        json_guesses(f, pb, K);
        fputc('}', f);
    }
    fputs(found ? "\n  ]" : "]", f);
    return CLI_EXIT_OK;
}

static int write_json(const char *path, const atn_model *model, const atn_capture *a, const atn_capture *b,
                      const atn_capture_diff *d) {
    cli_atomic_file af;
    FILE *f = stdout;
    if (strcmp(path, "-")) {
        if (!cli_atomic_open(&af, path))
            return CLI_EXIT_USAGE;
        f = af.f;
    }
    fputs("{\n  \"model\": ", f);
    cli_json_string(f, atn_model_name(model));
    fputs(",\n  \"tokens\": [", f);
    for (int32_t i = 0; i < a->n; i++) {
        if (i)
            fputs(", ", f);
        cli_json_string(f, a->enc->tokens[i].text);
    }
    fprintf(f, "],\n  \"layers\": %d,\n  \"heads\": %d,\n  \"js_distance\": ", d->n_layers, d->n_heads);
    json_map(f, d->js, d->n_layers, d->n_heads);
    fputs(",\n  \"max_abs_change\": ", f);
    json_map(f, d->max_abs, d->n_layers, d->n_heads);
    fputs(",\n  \"hidden_drift\": ", f);
    json_floats(f, d->drift, d->n_layers + 1);
    int rc = CLI_EXIT_OK;
    if (atn_model_has_mlm_head(model))
        rc = write_guesses(f, model, a, b);
    fputs("\n}\n", f);
    if (f == stdout)
        return cli_stdout_flush() && rc == CLI_EXIT_OK ? rc : CLI_EXIT_USAGE;
    bool ok = cli_atomic_close(&af, rc == CLI_EXIT_OK);
    return rc != CLI_EXIT_OK ? rc : ok || cli_interrupted() ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

int cmd_diff(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", CLI_INTERVENTION_FLAGS, NULL};
    if (!cli_parse(&a, "attnscope diff", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope diff --model M (--text T | --ids ...) WHAT-IF OPTIONS [--map js|max] "
               "[-o diff.json|diff.npy|diff.png]\n\n"
               "Runs the text through the original model and through the model changed by the what-if\n"
               "options, and compares them: per head the Jensen-Shannon distance (bits, square root; mean\n"
               "over the real query rows) and the largest |change| of the attention, per layer the hidden\n"
               "states' drift (mean 1 - cosine), and the masked-LM guesses before and after with the\n"
               "probability of the original word (at each [MASK], the original model's first guess; with\n"
               "no [MASK], at every word).  .npy is float32 [2, layers, heads] (JS distance, max |change|);\n"
               ".png/.svg/.pdf draws the --map (default js) as a layers x heads map.  Without -o (or with\n"
               "-o -) the .json report goes to standard output.\n\n" CLI_INTERVENTION_HELP);
        return 0;
    }
    const char *out = cli_get(&a, "output"), *map = cli_get(&a, "map");
    if (!out)
        out = "-";   /* the report, as JSON, on standard output */
    atn_output_format fmt;
    bool figure = atn_output_format_from_path(out, &fmt);
    bool npy = ends_with(out, ".npy"), json = ends_with(out, ".json") || !strcmp(out, "-");
    if (!figure && !npy && !json) {
        cli_error("attnscope diff: output \"%s\" must end in .json, .npy, .png, .svg or .pdf", out);
        return CLI_EXIT_USAGE;
    }
    if (map && strcmp(map, "js") && strcmp(map, "max")) {
        cli_error("attnscope diff: --map must be js or max, not \"%s\"", map);
        return CLI_EXIT_USAGE;
    }
    if (map && !figure) {
        cli_error("attnscope diff: --map chooses the figure's map: it needs -o diff.png, .svg or .pdf");
        return CLI_EXIT_USAGE;
    }
    atn_run_options opts;
    if (!cli_run_options(&a, &opts))
        return CLI_EXIT_USAGE;
    cli_mark_model_options(&a);
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    atn_error err = {0};
    atn_model *model = cli_open_model(&a, &err);
    if (!model)
        return cli_fail(&err);
    int rc = CLI_EXIT_OK;
    atn_encoding *enc = NULL;
    atn_run *ra = NULL, *rb = NULL;
    atn_capture_diff *d = NULL;
    cli_interventions ci;
    if (!cli_interventions_parse(&a, atn_model_config(model), &ci)) {
        atn_model_free(model);
        return CLI_EXIT_USAGE;
    }
    if (!ci.any) {
        cli_error("attnscope diff: nothing to compare: give a what-if option (--heads-off, --window, --alibi, ...)");
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    if (cli_encode(&a, model, &enc, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (!cli_interventions_check_tokens(&ci, a.prog, enc->n)) {
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    ra = atn_run_new(model), rb = atn_run_new(model);
    if (!ra || !rb) {
        cli_error("out of memory");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    if (atn_run_forward(ra, enc, &opts, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    opts.interventions = &ci.iv;
    if (atn_run_forward(rb, enc, &opts, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    cli_note_on_demand(atn_run_capture(ra));
    cli_note_on_demand(atn_run_capture(rb));
    const char *why = atn_run_fallback_reason(rb);
    if (why)
        fprintf(stderr, "attnscope: the changed model runs on the CPU (%s)\n", why);
    if (atn_capture_diff_compute(atn_run_capture(ra), atn_run_capture(rb), &d, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (figure) {
        rc = write_figure(out, fmt, model, d, map && !strcmp(map, "max"));
    } else if (npy) {
        size_t lh = (size_t)d->n_layers * d->n_heads;
        float *both = malloc(2 * lh * sizeof(float));
        if (!both) {
            cli_error("out of memory");
            rc = CLI_EXIT_FAIL;
            goto done;
        }
        memcpy(both, d->js, lh * sizeof(float));
        memcpy(both + lh, d->max_abs, lh * sizeof(float));
        int64_t shape[3] = {2, d->n_layers, d->n_heads};
        if (atn_npy_write_f32(out, both, shape, 3, &err))
            rc = cli_fail(&err);
        free(both);
    } else {
        rc = write_json(out, model, atn_run_capture(ra), atn_run_capture(rb), d);
    }
done:
    atn_capture_diff_free(d);
    atn_run_free(ra);
    atn_run_free(rb);
    atn_encoding_free(enc);
    cli_interventions_free(&ci);
    atn_model_free(model);
    return rc;
}
