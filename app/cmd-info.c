/* attnscope models / devices: what is built in and what this machine can run on. */
#include "cli.h"

#include <stdio.h>
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

int cmd_models(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", NULL};
    if (!cli_parse(&a, "attnscope models", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope models\n\nLists the built-in models (name, kind, layers x heads).\n");
        return 0;
    }
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    printf("%-16s %-6s %-14s %s\n", "name", "kind", "layers x heads", "width / vocabulary");
    for (const char *const *name = atn_builtin_model_names(); *name; name++) {
        atn_error err = {0};
        atn_model *m = atn_model_open(*name, NULL, NULL, &err);
        if (!m) {
            printf("%-16s (not available: %s)\n", *name, err.message);
            continue;
        }
        const atn_config *c = atn_model_config(m);
        char lh[32];
        snprintf(lh, sizeof lh, "%d x %d", c->n_layers, c->n_heads);
        printf("%-16s %-6s %-14s d_model %d, %s %d\n", *name, atn_model_kind_of(m) == ATN_MODEL_TOY ? "toy" : "bert",
               lh, c->d_model, atn_model_kind_of(m) == ATN_MODEL_TOY ? "tokens" : "vocabulary",
               atn_model_kind_of(m) == ATN_MODEL_TOY ? atn_model_toy_n_tokens(m) : c->vocab_size);
        atn_model_free(m);
    }
    return 0;
}

int cmd_devices(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", NULL};
    if (!cli_parse(&a, "attnscope devices", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope devices\n\nLists the compute backends, the GPUs found (name, memory, compute\n"
               "capability) and the BLAS kernel; when no GPU is usable, says why.\n"
               "ATTNSCOPE_CUDA_MODULE names the CUDA module file to load instead of the one\n"
               "found next to the program.\n");
        return 0;
    }
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    const char *better = atn_blas_better_core();
    const char *user = getenv("OPENBLAS_CORETYPE");
    printf("cpu     OpenBLAS %s, kernel %s", openblas_get_config(), atn_blas_core_name());
    if (better && user)
        printf(" (OPENBLAS_CORETYPE=%s is set in your environment; this CPU could use the faster %s kernel)",
               user, better);
    else if (better)
        printf(" (slower than this CPU allows: %s would be faster)", better);
    printf("\n");
    atn_error err = {0};
    int32_t count = atn_cuda_device_count(&err);
    if (count == 0) {
        printf("cuda    not usable: %s\n", err.message);
        return 0;
    }
    for (int32_t i = 0; i < count; i++) {
        atn_device_info dev;
        if (atn_cuda_device_info(i, &dev, &err) != ATN_OK) {
            printf("cuda:%d  (cannot read its properties: %s)\n", i, err.message);
            continue;
        }
        printf("cuda:%d  %s, %.1f GiB (%.1f GiB free), compute capability %d.%d, %d multiprocessors%s\n", i, dev.name,
               dev.total_bytes / 1073741824.0, dev.free_bytes / 1073741824.0, dev.cc_major, dev.cc_minor,
               dev.multiprocessors, i == 0 ? " (used by --device cuda)" : "");
        if (i == count - 1)
            printf("        %s; module %s\n", dev.runtime, atn_cuda_module_path());
    }
    return 0;
}
