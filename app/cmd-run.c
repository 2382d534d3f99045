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

int cmd_run(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", NULL};
    if (!cli_parse(&a, "attnscope run", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope run --model M (--text T [--text-pair T2] | --ids 1,2,3 [--type-ids ...] "
               "[--mask 1,1,0]) [--device cpu|cuda|auto] -o OUT.npy|OUT.json\n\n"
               "Writes the attention of every layer and head: .npy is float32 [layers, heads, n, n];\n"
               ".json has tokens, ids and the nested attention lists.  Toy models take no text.\n");
        return 0;
    }
    const char *out = cli_get(&a, "output");
    if (!out) {
        cli_error("attnscope run: -o OUT.npy or -o OUT.json is required");
        return CLI_EXIT_USAGE;
    }
    if (!ends_with(out, ".npy") && !ends_with(out, ".json")) {
        cli_error("attnscope run: output \"%s\" must end in .npy or .json", out);
        return CLI_EXIT_USAGE;
    }
    atn_model *model;
    atn_encoding *enc;
    atn_run *run;
    int rc = cli_model_run(&a, &model, &enc, &run);
    if (rc == CLI_EXIT_OK) {
        const atn_capture *cap = atn_run_capture(run);
        if (cap->nonfinite_layer >= 0)
            fprintf(stderr, "attnscope: warning: values became NaN or infinite at layer %d\n", cap->nonfinite_layer);
        bool ok;
        if (ends_with(out, ".npy")) {
            int64_t shape[4] = {cap->n_layers, cap->n_heads, cap->n, cap->n};
            atn_error err = {0};
            ok = atn_npy_write_f32(out, cap->attn, shape, 4, &err) == ATN_OK;
            if (!ok)
                cli_fail(&err);
        } else {
            ok = write_json(out, cap);
        }
        rc = ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(model);
    return rc;
}
