/* attnscope view FILE: the window on an attention file (docs/attention-file.md), attention
 * computed by another program, shown without weights.  The file's header is read here first,
 * so that a file that is not an attention file exits 2 with the engine's message (naming the
 * tensor or key) before a window opens; the layers are read and checked by the window. */
#include "cli.h"
#include "corpus-stats.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The GUI entry point, provided by ui/ when GTK is built (app/gui-main.c). */
int attnscope_gui_main(int argc, char **argv) __attribute__((weak));

static void view_usage(FILE *f) {
    fprintf(f, "Usage: attnscope view FILE [--view VIEW] [--layer L] [--head H]\n\n"
               "Opens the window on an attention file: attention computed by any model, anywhere\n"
               "(a safetensors file, an .npz, or an .npy with tokens.json beside it; docs/attention-file.md),\n"
               "or on a merged corpus statistics file (stats merge; docs/cluster.md) in the Statistics view,\n"
               "or on a session file (File → Save Session…; docs/session-file.md): its model, text and view.\n"
               "The Head, Model, Similarity and Statistics views, rollout and the exports work without\n"
               "weights; what needs the model (what-if, predictions, the trace) is off and says why.\n"
               "The window options --view, --layer and --head are as without a command.\n");
}

/* "attnscope-session/" in the first 4 KiB (as the MIME magic and atn_session_file_sniff):
 * a session file, which the window's --session reads and checks (exit 2 naming the key). */
static bool is_session_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char buf[4097];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return memchr(buf, 0, n) == NULL && strstr(buf, "\"attnscope-session/") != NULL;
}

int cmd_view(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            view_usage(stdout);
            return CLI_EXIT_OK;
        }
    if (argc < 2 || argv[1][0] == '-') {
        cli_error("view: give the attention file first: attnscope view FILE");
        view_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--model") || !strcmp(argv[i], "-m") || !strcmp(argv[i], "--text") ||
            !strcmp(argv[i], "-t") || !strncmp(argv[i], "--model=", 8) || !strncmp(argv[i], "--text=", 7)) {
            cli_error("view: %s does not apply: an attention file brings its own tokens and has no model", argv[i]);
            return CLI_EXIT_USAGE;
        }
    atn_attn_file *f = NULL;
    atn_error err = {0};
    const char *as = "--attention";
    if (is_session_file(argv[1])) {
        if (!attnscope_gui_main) {
            cli_error("%s: a session file opens in the window, and this build has no GUI", argv[1]);
            return CLI_EXIT_USAGE;
        }
        as = "--session";
    } else if (atn_corpus_stats_sniff(argv[1])) {   /* a merged statistics file: read whole here (its errors exit 2) */
        atn_corpus_stats *cs = atn_corpus_stats_load(argv[1], &err);
        if (!cs)
            return cli_fail(&err);
        atn_corpus_stats_free(cs);
        as = "--stats";
    } else if (atn_attn_file_open(argv[1], &f, &err) != ATN_OK)
        return cli_fail(&err);
    atn_attn_file_free(f);
    if (!attnscope_gui_main) {
        cli_error("this build has no GUI; use export, stats or similarity with --attention %s", argv[1]);
        return CLI_EXIT_USAGE;
    }
    /* the window's own option: attnscope --attention FILE [window options] */
    char *args[argc + 2];
    args[0] = "attnscope";
    args[1] = (char *)as;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    args[argc + 1] = NULL;
    return attnscope_gui_main(argc + 1, args);
}
