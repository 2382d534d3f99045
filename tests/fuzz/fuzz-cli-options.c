/* Fuzz target: the command line's option parser (app/cli.c: cli_parse, cli_get_int,
 * cli_get_double, cli_parse_int_list, cli_run_options, cli_check_unused; app/cli-whatif.c:
 * cli_interventions_parse).  The input is argv: NUL-separated arguments (at most 80), after
 * byte 0, which picks the command's flag list and the model shape the what-if options are
 * checked against.  Promises checked:
 *   - a numeric option comes back inside its range, or as its default with *ok false and a
 *     message naming "--NAME";
 *   - an integer list is all in int32 range and non-empty, or -1 with a message;
 *   - parsed what-if options name only layers/heads of the model and non-negative tokens;
 *   - every message is one line starting with a single prefix ("attnscope: " or
 *     "attnscope CMD: ", never "attnscope: attnscope").
 * stderr is captured in memory for the checks (the sanitizers write to fd 2, untouched). */
#include "fuzz-common.h"

#include "../../app/cli.c"
#include "../../app/cli-whatif.c"

#include <limits.h>

static char msgs[1 << 16];
static FILE *mem, *real_stderr;

/* a broken promise is reported on the real stderr, with what was printed so far */
#define FAIL(what, detail)                                                                   \
    do {                                                                                     \
        if (real_stderr && stderr != real_stderr) {                                          \
            fflush(stderr);                                                                  \
            stderr = real_stderr;                                                            \
            fprintf(stderr, "printed:\n%s\n", msgs);                                         \
        }                                                                                    \
        fuzz_fail(what, detail);                                                             \
    } while (0)

static void capture(void) {
    memset(msgs, 0, sizeof msgs);
    mem = fmemopen(msgs, sizeof msgs - 1, "w");
    if (!mem)
        FAIL("fmemopen", NULL);
    stderr = mem;
}

static const char *printed(void) {
    fflush(mem);
    return msgs;
}

static const char *release(void) {
    fflush(mem);
    fclose(mem);
    stderr = real_stderr;
    return msgs;
}

static void check_messages(const char *text) {
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (n < 10 || strncmp(line, "attnscope", 9) != 0)
            FAIL("a message without the attnscope prefix", line);
        const char *colon = memchr(line, ':', n);
        if (!colon || (colon + 2 <= line + n && strncmp(colon + 1, " attnscope", 10) == 0))
            FAIL("a doubled or missing prefix", line);
        line += n + (nl ? 1 : 0);
    }
}

typedef struct num_opt {
    const char *name;
    long lo, hi;
} num_opt;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    if (!real_stderr)
        real_stderr = stderr;
    static const char *const flag_sets[4][8] = {
        {"json", "all-heads", CLI_INTERVENTION_FLAGS, NULL},
        {"list", "json", NULL},
        {NULL},
        {"fp32", "compare-fp32", "causal", NULL},
    };
    static const atn_config shapes[4] = {
        {.n_layers = 12, .n_heads = 12, .use_embeddings = true},
        {.n_layers = 1, .n_heads = 1, .use_embeddings = true},
        {.n_layers = 2, .n_heads = 2, .use_embeddings = false},
        {.n_layers = 0, .n_heads = 0, .use_embeddings = true},
    };
    int pick = data[0] & 3;
    const atn_config *c = &shapes[(data[0] >> 2) & 3];
    data++, size--;

    /* argv: the pieces between NULs (the last need not end in one) */
    enum { MAX_ARGS = 80 };
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "cmd";
    for (size_t i = 0; i < size && argc <= MAX_ARGS;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;

    capture();
    cli_args a;
    bool parsed = cli_parse(&a, "attnscope fuzz", argc, argv, flag_sets[pick]);
    if (parsed) {
        static const num_opt ints[] = {
            {"layer", 0, CLI_MAX_INDEX}, {"head", 0, CLI_MAX_INDEX}, {"query", 0, CLI_MAX_INDEX},
            {"top", 1, 100}, {"repeat", 1, 1000}, {"length", 1, 100000}, {"seed", 0, LONG_MAX},
            {"max-lines", -5, 5}, {"threads", 0, 1024},
        };
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
            bool ok = true;
            long dflt = ints[i].lo - 1;
            long v = cli_get_int(&a, ints[i].name, dflt, ints[i].lo, ints[i].hi, &ok);
            if (ok && v != dflt && (v < ints[i].lo || v > ints[i].hi))
                FAIL("an integer outside its range", ints[i].name);
            if (!ok) {
                char opt[80];
                snprintf(opt, sizeof opt, "--%s", ints[i].name);
                if (v != dflt || !strstr(printed(), opt))
                    FAIL("a refused integer without its message", ints[i].name);
            }
        }
        static const struct { const char *name; double lo, hi; } dbls[] = {
            {"width", 0, 100000}, {"scale", 0.05, 16}, {"threshold", 0, 1}, {"temperature-x", 1e-30, 1e30},
        };
        for (size_t i = 0; i < sizeof dbls / sizeof dbls[0]; i++) {
            bool ok = true;
            double v = cli_get_double(&a, dbls[i].name, -7.0, dbls[i].lo, dbls[i].hi, &ok);
            if (v != -7.0 && (!(v >= dbls[i].lo && v <= dbls[i].hi) || !ok))
                FAIL("a number outside its range", dbls[i].name);
            char opt[80];
            snprintf(opt, sizeof opt, "--%s", dbls[i].name);
            if (!ok && (v != -7.0 || !strstr(printed(), opt)))
                FAIL("a refused number without its message", dbls[i].name);
        }
        static const char *const lists[] = {"ids", "type-ids", "mask"};
        for (size_t i = 0; i < 3; i++) {
            const char *s = cli_get(&a, lists[i]);
            if (!s)
                continue;
            int32_t *v = NULL;
            size_t before = strlen(printed());
            int n = cli_parse_int_list(s, lists[i], &v);
            if (n == 0 || (n < 0 && v))
                FAIL("an empty list accepted, or a refused one returned", lists[i]);
            if (n < 0 && strlen(printed()) == before && before < sizeof msgs - 200)
                FAIL("a refused list without a message", lists[i]);
            free(v);
        }
        atn_run_options o;
        (void)cli_run_options(&a, &o);
        if (o.threads < 0 || o.threads > 1024)
            FAIL("--threads outside 0..1024", NULL);
        cli_interventions ci;
        if (cli_interventions_parse(&a, c, &ci)) {
            const atn_interventions *iv = &ci.iv;
            for (int k = 0; k < iv->n_global; k++)
                if (iv->global_tokens[k] < 0)
                    FAIL("a negative global token", NULL);
            for (int k = 0; k < iv->n_hide; k++)
                if (iv->hide_tokens[k] < 0)
                    FAIL("a negative hidden token", NULL);
            if (!(iv->temperature > 0) || !isfinite(iv->temperature))
                FAIL("a temperature that is not positive and finite", NULL);
            if (iv->window < -1 || iv->strided < 0)
                FAIL("a negative window or stride", NULL);
            if ((iv->no_positions || iv->shuffle) && !c->use_embeddings)
                FAIL("positions changed in a model without them", NULL);
            (void)cli_interventions_check_tokens(&ci, a.prog, 5);
            cli_interventions_free(&ci);
        } else if (!printed()[0]) {
            FAIL("what-if options refused without a message", NULL);
        }
        (void)cli_get(&a, "model");
        (void)cli_flag(&a, "json");
        (void)cli_check_unused(&a);
    } else if (!printed()[0]) {
        FAIL("a command line refused without a message", NULL);
    }
    check_messages(release());
    free(buf);
    return 0;
}
