/* attnscope run: run a model and write every head's attention, as .npy or .json. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static bool write_json(const char *path, const atn_capture *cap) {
    cli_atomic_file af;
    if (!cli_atomic_open(&af, path))
        return false;
    FILE *f = af.f;
    const atn_encoding *e = cap->enc;
    int32_t n = cap->n;
    fputs("{\n  \"tokens\": [", f);
    for (int32_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        cli_json_string(f, e->tokens[i].text);
    }
    fputs("],\n  \"ids\": [", f);
    for (int32_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", e->ids[i]);
    fputs("],\n  \"type_ids\": [", f);
    for (int32_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", e->type_ids[i]);
    fputs("],\n  \"mask\": [", f);
    for (int32_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", e->mask[i]);
    fprintf(f, "],\n  \"shape\": [%d, %d, %d, %d],\n  \"attentions\": [", cap->n_layers, cap->n_heads, n, n);
    for (int32_t l = 0; l < cap->n_layers; l++) {
        fputs(l ? ",\n   [" : "\n   [", f);
        for (int32_t h = 0; h < cap->n_heads; h++) {
            fputs(h ? ",\n    [" : "\n    [", f);
            const float *a = cap->attn + ((size_t)l * cap->n_heads + h) * n * n;
            for (int32_t i = 0; i < n; i++) {
                fputs(i ? ", [" : "[", f);
                for (int32_t j = 0; j < n; j++) {
                    if (j)
                        fputs(", ", f);
                    cli_json_number(f, a[(size_t)i * n + j]);
                }
                fputc(']', f);
            }
            fputc(']', f);
        }
        fputc(']', f);
    }
    fprintf(f, "],\n  \"nonfinite_layer\": %d\n}\n", cap->nonfinite_layer);
    return cli_atomic_close(&af, true);
}

/* How far fp16/bf16 attention moves from fp32, per head. */
static int print_precision_report(const atn_model *model, const atn_encoding *enc, atn_precision precision,
                                  const char *name) {
    const atn_config *c = atn_model_config(model);
    size_t heads = (size_t)c->n_layers * c->n_heads;
    float *mx = calloc(heads, sizeof(float)), *mean = calloc(heads, sizeof(float));
    atn_error err = {0};
    int rc = CLI_EXIT_OK;
    if (!mx || !mean) {
        cli_error("out of memory");
        rc = CLI_EXIT_FAIL;
    } else if (atn_compare_precision(model, enc, precision, mx, mean, &err)) {
        rc = cli_fail(&err);
    } else {
        float worst = 0;
        printf("%s vs fp32 attention, |p_%s - p_fp32| per head\nlayer head   max        mean\n", name, name);
        for (size_t i = 0; i < heads; i++) {
            printf("%5zu %4zu   %.3e  %.3e\n", i / c->n_heads, i % c->n_heads, mx[i], mean[i]);
            worst = mx[i] > worst ? mx[i] : worst;
        }
        printf("largest difference over all heads: %.3e\n", worst);
    }
    free(mx);
    free(mean);
    return rc;
}

int cmd_run(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "compare-fp32", CLI_INTERVENTION_FLAGS, NULL};
    if (!cli_parse(&a, "attnscope run", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope run --model M (--text T [--text-pair T2] | --ids 1,2,3 [--type-ids ...] "
               "[--mask 1,1,0]) [--device cpu|cuda|auto] -o OUT.npy|OUT.json\n\n"
               "Writes the attention of every layer and head: .npy is float32 [layers, heads, n, n];\n"
               ".json has tokens, ids and the nested attention lists.  Toy models take no text.\n"
               "-o - --format npy|json writes to standard output.\n\n"
               "On a GPU, --precision fp16|bf16 computes in reduced precision; add --compare-fp32 to print,\n"
               "per layer and head, how far those maps move from fp32 (max and mean |difference|).\n\n" CLI_INTERVENTION_HELP);
        return 0;
    }
    const char *out = cli_get(&a, "output"), *format = cli_get(&a, "format");
    if (!out) {
        cli_error("attnscope run: -o OUT.npy or -o OUT.json is required");
        return CLI_EXIT_USAGE;
    }
    bool to_stdout = !strcmp(out, "-");
    if (to_stdout && (!format || (strcmp(format, "npy") && strcmp(format, "json")))) {
        cli_error("attnscope run: -o - (standard output) needs --format npy or --format json");
        return CLI_EXIT_USAGE;
    }
    if (!to_stdout && format) {
        cli_error("attnscope run: --format goes with -o - (standard output); name the file OUT.npy|OUT.json");
        return CLI_EXIT_USAGE;
    }
    if (!to_stdout && !ends_with(out, ".npy") && !ends_with(out, ".json")) {
        cli_error("attnscope run: output \"%s\" must end in .npy or .json", out);
        return CLI_EXIT_USAGE;
    }
    bool npy = to_stdout ? !strcmp(format, "npy") : ends_with(out, ".npy");
    bool compare = cli_flag(&a, "compare-fp32");
    const char *prec = cli_get(&a, "precision");
    if (compare && (!prec || !strcmp(prec, "fp32"))) {
        cli_error("attnscope run: --compare-fp32 needs --precision fp16 or bf16 (and a GPU)");
        return CLI_EXIT_USAGE;
    }
    atn_model *model;
    atn_encoding *enc;
    atn_run *run;
    int rc = cli_model_run(&a, &model, &enc, &run);
    if (rc == CLI_EXIT_OK && compare)
        rc = print_precision_report(model, enc, !strcmp(prec, "bf16") ? ATN_PRECISION_BF16 : ATN_PRECISION_FP16, prec);
    if (rc == CLI_EXIT_OK) {
        const atn_capture *cap = atn_run_capture(run);
        if (cap->nonfinite_layer >= 0)
            fprintf(stderr, "attnscope: warning: values became NaN or infinite at layer %d\n", cap->nonfinite_layer);
        bool ok;
        if (npy) {
            int64_t shape[4] = {cap->n_layers, cap->n_heads, cap->n, cap->n};
            atn_error err = {0};
            ok = !cli_interrupted() && atn_npy_write_f32(out, cap->attn, shape, 4, &err) == ATN_OK;
            if (!ok && !cli_interrupted())
                cli_fail(&err);
        } else {
            ok = write_json(out, cap);
        }
        rc = ok ? CLI_EXIT_OK : CLI_EXIT_USAGE;   /* an unwritable output, as everywhere */
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(model);
    return rc;
}
