/* attnscope cost: what attention costs at a length — the cells of every head's n x n map,
 * the bytes of the capture (per head, layer, capture and batch), and what the long-sequence
 * variants keep of it (dense, causal, sliding window, Longformer, strided / block-sparse,
 * and the mask the what-if options choose), with the attention FLOPs per layer.  A table on
 * standard output, .json, or a bar chart (.png/.svg/.pdf, ui/render's cost chart). */
#include "cli.h"
#include "analysis.h"
#include "cli-figure.h"
#include "render.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void draw(cairo_t *cr, double w, double h, void *user) { atn_render_cost_chart(cr, user, w, h); }

static int write_figure(const char *path, atn_output_format fmt, const atn_cost_chart_spec *spec) {
    double w, h;
    atn_render_cost_chart_natural_size(spec, &w, &h);
    return cli_write_figure(path, fmt, w, h, 1.0, draw, (void *)spec, NULL);
}

static void write_json(FILE *f, const char *model, const atn_cost_row *rows, int32_t count) {
    const atn_attention_cost *d = &rows[0].cost;
    fputs("{\n  \"model\": ", f);
    cli_json_string(f, model);
    fprintf(f, ",\n  \"tokens\": %d,\n  \"layers\": %d,\n  \"heads\": %d,\n  \"head_size\": %d,\n  \"batch\": %d,\n"
               "  \"cells_per_head\": %lld,\n  \"bytes_per_head\": %lld,\n  \"bytes_per_layer\": %lld,\n"
               "  \"bytes_per_capture\": %lld,\n  \"bytes_per_batch\": %lld,\n  \"variants\": [",
            d->n, d->n_layers, d->n_heads, d->d_head, d->batch, (long long)d->cells_head, (long long)d->bytes_head,
            (long long)d->bytes_layer, (long long)d->bytes_capture, (long long)d->bytes_batch);
    for (int32_t i = 0; i < count; i++) {
        const atn_attention_cost *c = &rows[i].cost;
        fprintf(f, "%s\n    {\"variant\": ", i ? "," : "");
        cli_json_string(f, rows[i].label);
        fprintf(f, ", \"kept_cells_per_head\": %lld, \"kept_fraction\": ", (long long)c->kept_head);
        cli_json_number(f, (double)c->kept_head / (double)c->cells_head);
        fprintf(f, ", \"kept_bytes_per_capture\": %lld, \"flops_per_layer\": ", (long long)c->kept_bytes_capture);
        cli_json_number(f, c->flops_kept_layer);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
}

static void write_table(FILE *f, const char *model, const atn_cost_row *rows, int32_t count) {
    const atn_attention_cost *d = &rows[0].cost;
    char bh[32], bl[32], bc[32], bb[32];
    atn_render_format_bytes(bh, sizeof bh, (double)d->bytes_head);
    atn_render_format_bytes(bl, sizeof bl, (double)d->bytes_layer);
    atn_render_format_bytes(bc, sizeof bc, (double)d->bytes_capture);
    atn_render_format_bytes(bb, sizeof bb, (double)d->bytes_batch);
    fprintf(f, "%s at %d tokens: %d layers x %d heads of %d dimensions\n", model, d->n, d->n_layers, d->n_heads,
            d->d_head);
    fprintf(f, "dense map: %lld cells per head = %s float32; %s per layer, %s per capture, %s for a batch of %d\n\n",
            (long long)d->cells_head, bh, bl, bc, bb, d->batch);
    fprintf(f, "%-36s %16s %9s %14s %16s\n", "variant", "cells per head", "of dense", "kept capture",
            "FLOPs per layer");
    for (int32_t i = 0; i < count; i++) {
        const atn_attention_cost *c = &rows[i].cost;
        char kb[32];
        atn_render_format_bytes(kb, sizeof kb, (double)c->kept_bytes_capture);
        fprintf(f, "%-36s %16lld %8.2f%% %14s %16.4g\n", rows[i].label, (long long)c->kept_head,
                100.0 * (double)c->kept_head / (double)c->cells_head, kb, c->flops_kept_layer);
    }
}

int cmd_cost(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", CLI_INTERVENTION_FLAGS, NULL};
    if (!cli_parse(&a, "attnscope cost", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope cost --model M (--tokens N | --text T | --ids ...) [--batch 32]\n"
               "       [--window W [--global-tokens 0,5]] [--strided S] [--causal] [--hide-tokens ...]\n"
               "       [-o cost.json|cost.png]\n\n"
               "What attention costs at N tokens: each head's N x N map (cells and float32 bytes, per\n"
               "layer, per capture and for a batch), and what the long-sequence variants keep of it -\n"
               "dense, causal, a sliding window (default N/8 each side), Longformer (that window + the\n"
               "global tokens, default token 0), strided / block-sparse (default step sqrt N) and the\n"
               "mask the options choose - with the attention FLOPs per layer (q.k and p.v over the kept\n"
               "cells).  Counted cell by cell with the rule the run's mask uses (N up to %d).\n",
               ATN_COST_MAX_TOKENS);
        return 0;
    }
    const char *out = cli_get(&a, "output");
    atn_output_format fmt;
    bool figure = out && atn_output_format_from_path(out, &fmt);
    bool json = out && (ends_with(out, ".json") || !strcmp(out, "-"));
    if (out && !figure && !json) {
        cli_error("attnscope cost: output \"%s\" must end in .json, .png, .svg or .pdf", out);
        return CLI_EXIT_USAGE;
    }
    bool ok = true;
    long tokens = cli_get_int(&a, "tokens", 0, 1, ATN_COST_MAX_TOKENS, &ok);
    long batch = cli_get_int(&a, "batch", 32, 1, 1 << 20, &ok);
    if (!ok)
        return CLI_EXIT_USAGE;
    if (tokens && (cli_get(&a, "text") || cli_get(&a, "ids"))) {
        cli_error("attnscope cost: --tokens gives the length; it cannot be combined with --text or --ids");
        return CLI_EXIT_USAGE;
    }
    cli_mark_model_options(&a);
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    atn_error err = {0};
    atn_model *model = cli_open_model(&a, &err);
    if (!model)
        return cli_fail(&err);
    const atn_config *c = atn_model_config(model);
    cli_interventions ci;
    if (!cli_interventions_parse(&a, c, &ci)) {
        atn_model_free(model);
        return CLI_EXIT_USAGE;
    }
    int rc = CLI_EXIT_OK;
    int32_t n = (int32_t)tokens;
    if (!n) {
        atn_encoding *enc = NULL;
        if (cli_encode(&a, model, &enc, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        n = enc->n;
        atn_encoding_free(enc);
        if (n > ATN_COST_MAX_TOKENS) {
            cli_error("attnscope cost: the text has %d tokens, over the %d this command counts", n,
                      ATN_COST_MAX_TOKENS);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
    }
    if (!cli_interventions_check_tokens(&ci, a.prog, n)) {
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    atn_cost_row rows[ATN_COST_VARIANTS_MAX];
    const atn_interventions *iv = &ci.iv;
    int32_t count = atn_cost_variants(n, c->n_layers, c->n_heads, c->d_model / c->n_heads, (int32_t)batch, iv->window,
                                      iv->window >= 0 ? iv->global_tokens : NULL, iv->window >= 0 ? iv->n_global : 0,
                                      iv->strided, iv, rows, &err);
    if (count < 0) {
        rc = cli_fail(&err);
        goto done;
    }
    if (figure) {
        char title[512];
        snprintf(title, sizeof title, "%s \xc2\xb7 attention cost at %d tokens", atn_model_name(model), n);
        atn_cost_chart_spec spec = {.rows = rows, .n_rows = count, .title = title};
        rc = write_figure(out, fmt, &spec);
    } else if (json && strcmp(out, "-")) {
        cli_atomic_file af;
        if (!cli_atomic_open(&af, out)) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        write_json(af.f, atn_model_name(model), rows, count);
        rc = cli_atomic_close(&af, true) ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    } else {
        if (json)
            write_json(stdout, atn_model_name(model), rows, count);
        else
            write_table(stdout, atn_model_name(model), rows, count);
        rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
done:
    cli_interventions_free(&ci);
    atn_model_free(model);
    return rc;
}
