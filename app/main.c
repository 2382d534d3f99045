/* attnscope: main().  With no sub-command it opens the GUI; sub-commands run headless.
 *
 * Before anything else it makes sure OpenBLAS uses the right kernel: Debian 12's OpenBLAS
 * 0.3.21 does not recognise recent CPUs and silently picks its slowest (Prescott) kernel.
 * OPENBLAS_CORETYPE only takes effect before the library initialises, so we re-execute
 * ourselves once with it set, never overriding a value the user chose. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

typedef struct command {
    const char *name;
    cli_command_fn fn;
    const char *summary;
} command;

static const command commands[] = {
    {"models", cmd_models, "list the built-in models and those in the Hugging Face cache"},
    {"info", cmd_info, "what a model is: family, shape, and which weights each layer runs"},
    {"download", cmd_download, "download a model from the Hugging Face Hub into the shared cache"},
    {"tokenize", cmd_tokenize, "show the tokens, ids, type ids and byte spans of a text"},
    {"run", cmd_run, "run a model and write the attention (.npy or .json)"},
    {"trace", cmd_trace, "the arithmetic of one head for one query token, step by step"},
    {"devices", cmd_devices, "the compute backends, GPUs and the BLAS kernel in use"},
    {"export", cmd_export, "figures as PNG/SVG/PDF: heatmap, grid, similarity, headview, trace, rollout"},
    {"stats", cmd_stats, "per-head statistics and pattern labels (one text or a corpus)"},
    {"examples", cmd_examples, "where a head attends most over a corpus: the exemplars stats --shard kept"},
    {"similarity", cmd_similarity, "head-to-head similarity matrix and clustering order (.json/.npy/.csv)"},
    {"predict", cmd_predict, "the top words for each [MASK], or a causal model's next token"},
    {"diff", cmd_diff, "the original and the changed model (what-if options) compared, head by head"},
    {"importance", cmd_importance, "each head's masked-LM (causal: next-token) loss change when off / kept alone"},
    {"cost", cmd_cost, "what attention costs at a length: cells, bytes, dense vs window / Longformer / sparse"},
    {"train", cmd_train, "train a small transformer on a toy task or a text file; save it as a Hugging Face folder"},
    {"view", cmd_view, "the window on an attention file computed elsewhere (no weights needed)"},
    {"bench", cmd_bench, "time the forward pass against this machine's sgemm (random or real weights)"},
    {NULL, NULL, NULL},
};

/* The GUI entry point, provided by ui/ when GTK is built (app/gui-main.c). */
int attnscope_gui_main(int argc, char **argv) __attribute__((weak));

static void usage(FILE *f) {
    fprintf(f, "Usage: attnscope [COMMAND] [OPTIONS]\n\n"
               "Without a command, opens the attnscope window (window options: --model, --text, --view,\n"
               "--layer, --head, --memory-limit; see attnscope --help-all).\n\nCommands:\n");
    for (const command *c = commands; c->name; c++)
        fprintf(f, "  %-12s %s\n", c->name, c->summary);
    fprintf(f, "\nCommon options: --model NAME|PATH|random:SHAPE  --text TEXT [--text-pair TEXT]  --ids 1,2,3 "
               "[--type-ids ...] [--mask 1,1,0]  --tokens N  --device cpu|cuda|auto\n"
               "(random:SHAPE is a model of a shape `bench --shape` knows with random weights, e.g.\n"
               "random:gpt2 or random:bert-base@7 for seed 7; it has no tokenizer: give --ids or --tokens N,\n"
               "N made-up ids as bench runs)\n"
               "--memory-limit SIZE (e.g. 800M, 2G) bounds a run's memory (default: physical memory, the\n"
               "memory cgroup and ulimit -v); a run whose attention does not fit keeps each layer's Q, K, V\n"
               "and makes every head again when it is read, with the same numbers\n"
               "Run 'attnscope COMMAND --help' for a command's options.\n");
}

static void fix_blas_kernel(int argc, char **argv) {
    (void)argc;
    if (getenv("OPENBLAS_CORETYPE") || getenv("ATTNSCOPE_NO_REEXEC"))
        return;
    const char *better = atn_blas_better_core();
    if (!better)
        return;
    setenv("OPENBLAS_CORETYPE", better, 1);
    setenv("ATTNSCOPE_NO_REEXEC", "1", 1);   /* never loop, even if the kernel stays the same */
    execv("/proc/self/exe", argv);
    /* exec failed: carry on with the slow kernel rather than not at all */
}

int main(int argc, char **argv) {
    fix_blas_kernel(argc, argv);
    unsetenv("ATTNSCOPE_NO_REEXEC");   /* children of ours decide for themselves */

    if (argc >= 2) {
        const char *cmd = argv[1];
        if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(cmd, "--version")) {
            printf("attnscope %s (OpenBLAS kernel %s)\n", atn_version(), atn_blas_core_name());
            return 0;
        }
        for (const command *c = commands; c->name; c++)
            if (!strcmp(cmd, c->name)) {
                cli_catch_signals();
                /* ulimit -f: a write past it fails with EFBIG (reported, temporaries
                   removed, exit 2) instead of SIGXFSZ ending the process where it stands */
                signal(SIGXFSZ, SIG_IGN);
                /* -o naming one of the command's own inputs is refused (atn_atomic_open) */
                atn_input_guard_enable();
                int rc = c->fn(argc - 1, argv + 1);
                if (cli_interrupted()) {
                    cli_error("interrupted");
                    return CLI_EXIT_INTERRUPTED;
                }
                /* what went to stdout must have arrived: a full disk is an error */
                if (!cli_stdout_close() && rc == CLI_EXIT_OK)
                    rc = CLI_EXIT_USAGE;
                return rc;
            }
        if (cmd[0] != '-' && access(cmd, R_OK) == 0 && !strchr(cmd, '=')) {
            /* attnscope FILE (a file manager's Exec=attnscope %F): the window on that file */
            argv[0] = (char *)"view";
            return cmd_view(argc, argv);
        }
        if (cmd[0] != '-') {
            cli_error("unknown command \"%s\"", cmd);
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (attnscope_gui_main)
        return attnscope_gui_main(argc, argv);
    cli_error("this build has no GUI; use a command");
    usage(stderr);
    return CLI_EXIT_USAGE;
}
