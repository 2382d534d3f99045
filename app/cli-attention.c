/* --attention FILE in place of --model: the weight-free commands (export, stats,
 * similarity) read an attention file (engine/include/attention-file.h) instead of running
 * a model.  The file's matrices go through the same code as a run's capture. */
#include "cli.h"

#include <string.h>

/* Whether the option was given, without marking it read (cli_get would). */
static bool given(const cli_args *a, const char *name) {
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->names[i], name))
            return true;
    return false;
}

bool cli_attention_wanted(const cli_args *a) { return given(a, "attention"); }

static int attention_open(cli_args *a, cli_attention *out, bool lazy) {
    memset(out, 0, sizeof *out);
    out->lazy = lazy;
    static const char *const model_only[] = {"model", "text", "text-pair", "ids", "type-ids", "mask", "corpus",
                                             "batch", "device", "precision", NULL};
    bool ok = true;
    for (int i = 0; model_only[i]; i++)
        if (given(a, model_only[i])) {
            cli_error("%s: --%s goes with --model; --attention FILE already holds the attention (and its tokens)",
                      a->prog, model_only[i]);
            ok = false;
        }
    for (int i = 0; cli_intervention_options[i]; i++)
        if (given(a, cli_intervention_options[i])) {
            cli_error("%s: --%s changes a model's run; an attention file has no model to change", a->prog,
                      cli_intervention_options[i]);
            ok = false;
        }
    const char *path = cli_get(a, "attention");
    if (!ok || !cli_check_unused(a))
        return CLI_EXIT_USAGE;
    if (!*path) {
        cli_error("%s: --attention needs a file name", a->prog);
        return CLI_EXIT_USAGE;
    }
    atn_error err = {0};
    if (atn_attn_file_open(path, &out->file, &err))
        return cli_fail(&err);
    if (lazy ? atn_attn_file_capture_lazy(out->file, &out->cap, &err)
             : atn_attn_file_capture(out->file, &out->cap, cli_progress, NULL, &err)) {
        atn_attn_file_free(out->file);
        out->file = NULL;
        return err.status == ATN_E_CANCELLED ? CLI_EXIT_INTERRUPTED : cli_fail(&err);
    }
    const char *warning = lazy ? NULL : atn_attn_file_warning(out->file);
    if (warning)
        fprintf(stderr, "attnscope: warning: %s\n", warning);
    atn_attn_file_info info = atn_attn_file_get_info(out->file);
    out->name = *info.model_id ? info.model_id : path;
    out->causal = info.causal;
    return CLI_EXIT_OK;
}

int cli_attention_open(cli_args *a, cli_attention *out) { return attention_open(a, out, false); }
int cli_attention_open_lazy(cli_args *a, cli_attention *out) { return attention_open(a, out, true); }

void cli_attention_free(cli_attention *at) {
    if (!at)
        return;
    const char *warning = at->lazy && at->file ? atn_attn_file_warning(at->file) : NULL;   /* the layers read */
    if (warning)
        fprintf(stderr, "attnscope: warning: %s\n", warning);
    atn_attn_file_free(at->file);
    memset(at, 0, sizeof *at);
}
