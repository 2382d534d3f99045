/* attnscope stats in parts: --shard I/N writes a partial (engine/include/corpus-stats.h) for
 * one deterministic range of a corpus's lines, checkpointed every K lines and resumable;
 * `stats merge` adds partials up; `stats --from` prints a merged file as `stats --corpus`
 * would.  docs/cluster.md runs them under Slurm and GNU parallel. */
#include "cli.h"
#include "corpus-stats.h"
#include "stats-stream.h"
#include "hf-cache.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- where a shard starts ---------------------------------------------------------------- */

/* The corpus's line count (a last line without '\n' counts, as atn_corpus_run reads it) and
 * the byte offset where line `want` (1-based) starts (*at; the file's end when there are
 * fewer lines).  false on a read error. */
static bool scan_lines(FILE *f, int64_t want, int64_t *lines, long long *at) {
    char buf[1 << 16];
    int64_t n = 0;
    long long pos = 0;
    bool open_line = false;
    *at = want <= 1 ? 0 : -1;
    size_t got;
    rewind(f);
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < got; i++)
            if (buf[i] == '\n') {
                n++;
                if (n + 1 == want)
                    *at = pos + (long long)i + 1;
            }
        open_line = buf[got - 1] != '\n';
        pos += (long long)got;
    }
    if (ferror(f))
        return false;
    *lines = n + (open_line ? 1 : 0);
    if (*at < 0)
        *at = pos;
    return true;
}

/* The hash of the tokenizer's vocabulary (64-bit FNV-1a over each entry's text, special flag
 * and role), as 16 hex digits. */
static void tokenizer_hash(const atn_model *model, char out[17]) {
    uint64_t h = 1469598103934665603ULL;
    int32_t v = atn_model_config(model)->vocab_size;
    for (int32_t id = 0; id < v; id++) {
        atn_token_info ti;
        if (!atn_model_token_info(model, id, &ti))
            continue;
        for (const unsigned char *p = (const unsigned char *)(ti.text ? ti.text : ""); ; p++) {
            h = (h ^ *p) * 1099511628211ULL;   /* the NUL too: entries stay apart */
            if (!*p)
                break;
        }
        h = (h ^ (uint64_t)(ti.special * 16 + ti.role)) * 1099511628211ULL;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The Hub commit a model id resolves to in the cache; "builtin" for the built-in models;
 * "" for a folder. */
static void model_revision(const char *name, char *out, size_t size) {
    out[0] = 0;
    for (const char *const *b = atn_builtin_model_names(); *b; b++)
        if (!strcmp(*b, name)) {
            snprintf(out, size, "builtin");
            return;
        }
    char path[4096];
    atn_error err = {0};
    struct stat sb;
    if (stat(name, &sb) == 0 || atn_hf_cache_resolve(NULL, name, path, sizeof path, &err) != ATN_OK)
        return;
    const char *s = strstr(path, "/snapshots/");
    if (s) {
        snprintf(out, size, "%s", s + strlen("/snapshots/"));
        char *slash = strchr(out, '/');
        if (slash)
            *slash = 0;
    }
}

/* ---- the corpus: one file, or the files of a list, as one sequence of lines ------------------ */

/* `--corpus FILE` or `--corpus @LIST` (LIST: one file a line, relative to LIST's folder unless
 * absolute; blank lines and lines starting with '#' skipped).  The files' lines are numbered
 * as one corpus, file after file: a shard's range, a partial's lines and the exemplars' lines
 * are these global numbers. */
typedef struct corpus_file {
    char *path;
    FILE *f;
    int64_t lines;    /* its own */
    int64_t offset;   /* the global number of its line 0 (the lines of the files before it) */
} corpus_file;

typedef struct corpus_list {
    corpus_file *files;
    int n;
    int64_t lines;          /* all of them */
    char name[256];         /* the identity's corpus: the file's name, or "@LIST (N files, HASH)" */
} corpus_list;

static void corpus_list_free(corpus_list *c) {
    for (int i = 0; i < c->n; i++) {
        if (c->files[i].f)
            fclose(c->files[i].f);
        free(c->files[i].path);
    }
    free(c->files);
    memset(c, 0, sizeof *c);
}

static bool corpus_add(corpus_list *c, const char *path, const char *named_in) {
    corpus_file *grown = realloc(c->files, ((size_t)c->n + 1) * sizeof *grown);
    if (!grown) {
        cli_error("out of memory");
        return false;
    }
    c->files = grown;
    corpus_file *cf = &c->files[c->n];
    memset(cf, 0, sizeof *cf);
    cf->path = strdup(path);
    if (!cf->path) {
        cli_error("out of memory");
        return false;
    }
    c->n++;
    struct stat sb;
    cf->f = fopen(path, "rb");
    if (!cf->f || fstat(fileno(cf->f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        cli_error("%s: cannot read the corpus%s%s: %s", path, named_in ? ", named in " : "", named_in ? named_in : "",
                  !cf->f ? strerror(errno) : "not a regular file");
        return false;
    }
    long long at;
    if (!scan_lines(cf->f, 1, &cf->lines, &at)) {
        cli_error("%s: read error", path);
        return false;
    }
    cf->offset = c->lines;
    c->lines += cf->lines;
    return true;
}

static bool corpus_open(corpus_list *c, const char *arg) {
    memset(c, 0, sizeof *c);
    if (arg[0] != '@') {
        const char *base = strrchr(arg, '/');
        snprintf(c->name, sizeof c->name, "%s", base ? base + 1 : arg);
        return corpus_add(c, arg, NULL);
    }
    const char *list = arg + 1;
    FILE *lf = fopen(list, "rb");
    if (!lf) {
        cli_error("%s: cannot read the corpus list: %s", list, strerror(errno));
        return false;
    }
    const char *slash = strrchr(list, '/');
    int dir_len = slash ? (int)(slash - list) + 1 : 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    bool ok = true;
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a over the names as listed: lists of other files differ */
    int64_t no = 0;
    while (ok && (got = getline(&line, &cap, lf)) >= 0) {
        no++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = 0;
        if (!got || line[0] == '#')
            continue;
        if (memchr(line, 0, (size_t)got)) {
            cli_error("%s:%lld: a NUL byte in a file name", list, (long long)no);
            ok = false;
            break;
        }
        for (ssize_t i = 0; i <= got; i++)
            h = (h ^ (unsigned char)line[i]) * 1099511628211ULL;
        char *path = malloc((size_t)dir_len + (size_t)got + 1);
        if (path && (line[0] == '/' || !dir_len))
            memcpy(path, line, (size_t)got + 1);
        else if (path)
            snprintf(path, (size_t)dir_len + (size_t)got + 1, "%.*s%s", dir_len, list, line);
        if (!path) {
            cli_error("out of memory");
            ok = false;
        } else {
            char where[4096];
            snprintf(where, sizeof where, "%s:%lld", list, (long long)no);
            ok = corpus_add(c, path, where);
        }
        free(path);
    }
    free(line);
    if (ok && ferror(lf)) {
        cli_error("%s: read error", list);
        ok = false;
    }
    fclose(lf);
    if (ok && c->n == 0) {
        cli_error("%s: the corpus list names no file", list);
        ok = false;
    }
    const char *base = slash ? slash + 1 : list;
    snprintf(c->name, sizeof c->name, "@%.200s (%d files, %016llx)", base, c->n, (unsigned long long)h);
    return ok;
}

/* The file holding global line `line` (1 <= line <= c->lines). */
static corpus_file *corpus_file_of(corpus_list *c, int64_t line) {
    for (int i = 0; i < c->n; i++)
        if (line <= c->files[i].offset + c->files[i].lines)
            return &c->files[i];
    return &c->files[c->n - 1];
}

bool cli_corpus_read_lines(const char *arg, const int64_t *want, int32_t n, char **text, int64_t *n_lines) {
    corpus_list c;
    if (!corpus_open(&c, arg)) {
        corpus_list_free(&c);
        return false;
    }
    char *line = NULL;
    size_t cap = 0;
    bool ok = true;
    for (int i = 0; ok && i < c.n; i++) {
        corpus_file *cf = &c.files[i];
        rewind(cf->f);
        ssize_t len;
        for (int64_t no = cf->offset + 1; (len = getline(&line, &cap, cf->f)) >= 0; no++) {
            if (len > 0 && line[len - 1] == '\n')
                line[--len] = 0;
            while (len > 0 && line[len - 1] == '\r')
                line[--len] = 0;
            for (int32_t j = 0; j < n; j++)
                if (want[j] == no && !text[j] && !(text[j] = strdup(line))) {
                    cli_error("out of memory");
                    ok = false;
                }
        }
        if (ferror(cf->f)) {
            cli_error("%s: read error", cf->path);
            ok = false;
        }
    }
    free(line);
    *n_lines = c.lines;
    corpus_list_free(&c);
    return ok;
}

/* ---- stats --shard ------------------------------------------------------------------------- */

typedef struct shard_pass {
    atn_corpus_stats *cs;
    atn_stats_stream *stream;   /* the sink the forward feeds (and heads read from captures) */
    atn_corpus_report *rep;
    int64_t kill_at;   /* tests: SIGKILL this process when this line comes (0: never) */
} shard_pass;

static atn_status shard_consume(const atn_capture *cap, void *user, atn_error *err) {
    shard_pass *sp = user;
    if (sp->kill_at && sp->rep->current_line >= sp->kill_at)
        raise(SIGKILL);   /* as a scheduler's kill would: no chance to write */
    return atn_stats_stream_add(sp->stream, cap, sp->rep->current_line, err);
}

static bool parse_shard(const char *s, int64_t *index, int64_t *count) {
    char *end;
    errno = 0;
    long long i = strtoll(s, &end, 10);
    if (end == s || *end != '/' || errno)
        return false;
    const char *p = end + 1;
    long long n = strtoll(p, &end, 10);
    if (end == p || *end || errno || n < 1 || n > 100000000LL || i < 0 || i >= n)
        return false;
    *index = i, *count = n;
    return true;
}

int cmd_stats_shard(cli_args *a) {
    const char *corpus = cli_get(a, "corpus"), *out = cli_get(a, "output"), *shard = cli_get(a, "shard");
    const char *batch = cli_get(a, "batch");
    const char *qrole = cli_get(a, "query-role"), *krole = cli_get(a, "key-role");
    bool ok = true, resume = cli_flag(a, "resume");
    int64_t index = 0, count = 1;
    long top = cli_get_int(a, "top", 32, 1, ATN_CS_TOP_MAX, &ok);
    long every = cli_get_int(a, "checkpoint-every", 1000, 1, 1000000000L, &ok);
    if (!ok)
        return CLI_EXIT_USAGE;
    if (shard && !parse_shard(shard, &index, &count)) {
        cli_error("attnscope stats: --shard must be I/N with 0 <= I < N (0-based, as SLURM_ARRAY_TASK_ID), not \"%s\"",
                  shard);
        return CLI_EXIT_USAGE;
    }
    for (int r = 0; r < 2; r++) {
        const char *role = r ? krole : qrole;
        if (role && (!*role || !atn_cs_role_valid(role))) {
            cli_error("attnscope stats: --%s must be one of %s, not \"%s\"", r ? "key-role" : "query-role",
                      ATN_CS_ROLES, role);
            return CLI_EXIT_USAGE;
        }
    }
    if (!corpus || !strcmp(corpus, "-")) {
        cli_error("attnscope stats: a partial (--shard, -o FILE.safetensors) needs --corpus FILE (or @LIST of files), "
                  "a file that can be read again (not standard input)");
        return CLI_EXIT_USAGE;
    }
    if (!out || !strcmp(out, "-")) {
        cli_error("attnscope stats: a partial needs -o FILE.safetensors");
        return CLI_EXIT_USAGE;
    }
    if (cli_get(a, "format")) {
        cli_error("attnscope stats: --format goes with a table, not a partial (-o %s); print one with stats --from",
                  out);
        return CLI_EXIT_USAGE;
    }
    atn_corpus_options copts;
    atn_corpus_options_init(&copts);
    if (batch && !strcmp(batch, "off"))
        copts.rows = 1;
    else if (batch && !strcmp(batch, "fast"))
        copts.exact = false;
    else if (batch && strcmp(batch, "exact")) {
        cli_error("attnscope stats: --batch must be exact, fast or off, not \"%s\"", batch);
        return CLI_EXIT_USAGE;
    }
    atn_run_options opts;
    if (!cli_run_options(a, &opts))
        return CLI_EXIT_USAGE;
    opts.keep_trace_inputs = false;
    opts.pinned_host = true;
    /* heads made one at a time (atn_corpus_stats_add): asked for, or when the full capture does
       not fit the memory budget; the same bits either way, so not in the settings a merge compares */
    opts.attention_on_demand = cli_flag(a, "on-demand");
    opts.on_demand_over_budget = true;
    /* otherwise the statistics are made from the heads as the forward makes them: a sentence's
       run holds one head's n x n, not [L][H][n][n] (the same bytes) */
    atn_stats_stream stream = {0};
    const char *model_name = cli_get(a, "model");
    cli_mark_whatif_options(a);
    if (!cli_check_unused(a))
        return CLI_EXIT_USAGE;
    corpus_list cl;
    if (!corpus_open(&cl, corpus)) {
        corpus_list_free(&cl);
        return CLI_EXIT_USAGE;
    }
    int64_t lines = cl.lines;
    /* shard I of N: lines floor(I L / N) + 1 .. floor((I + 1) L / N) */
    int64_t first = (int64_t)((__int128)index * lines / count) + 1;
    int64_t last = (int64_t)((__int128)(index + 1) * lines / count);

    atn_error err = {0};
    atn_model *model = cli_open_model(a, &err);
    if (!model) {
        corpus_list_free(&cl);
        return cli_fail(&err);
    }
    int rc = CLI_EXIT_OK;
    cli_interventions ci;
    atn_corpus_stats *cs = NULL;
    if (!cli_interventions_parse(a, atn_model_config(model), &ci)) {
        corpus_list_free(&cl);
        atn_model_free(model);
        return CLI_EXIT_USAGE;
    }
    opts.interventions = ci.any ? &ci.iv : NULL;
    if (atn_model_kind_of(model) == ATN_MODEL_TOY) {
        cli_error("attnscope stats: model \"%s\" is a toy model with its own tokens; --corpus needs a model with a "
                  "tokenizer", atn_model_name(model));
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    /* everything that changes a number goes into the settings a merge compares */
    char settings[2048], tok[17], revision[256];
    int len = snprintf(settings, sizeof settings, "device=%s; batch=%s",
                       cli_get(a, "device") ? cli_get(a, "device") : "cpu", copts.exact ? "exact" : "fast");
    for (const char *const *o = cli_intervention_options; *o && len < (int)sizeof settings; o++)
        for (int i = 0; i < a->n; i++)
            if (!strcmp(a->names[i], *o))
                len += snprintf(settings + len, sizeof settings - (size_t)len, "; %s=%s", *o,
                                a->values[i] ? a->values[i] : "on");
    tokenizer_hash(model, tok);
    model_revision(model_name ? model_name : "demo", revision, sizeof revision);
    atn_cs_identity id = {
        .model = model_name ? model_name : atn_model_name(model), .revision = revision, .tokenizer = tok,
        .precision = atn_precision_name(opts.precision), .settings = settings, .corpus = cl.name,
        .corpus_lines = lines, .n_layers = atn_model_config(model)->n_layers,
        .n_heads = atn_model_config(model)->n_heads, .top_k = (int32_t)top,
        .query_role = qrole, .key_role = krole,
        /* a grouped-query model's K/V heads: `stats --from --by-kv-group` groups by them */
        .n_kv_heads = atn_model_config(model)->n_kv_heads > 0 &&
                              atn_model_config(model)->n_kv_heads < atn_model_config(model)->n_heads
                          ? atn_model_config(model)->n_kv_heads : 0,
    };
    cs = atn_corpus_stats_new(&id, &err);
    if (!cs) {
        rc = cli_fail(&err);
        goto done;
    }
    int64_t start = first;
    if (resume && access(out, F_OK) == 0) {
        atn_corpus_stats *old = atn_corpus_stats_load(out, &err);
        if (!old) {
            rc = cli_fail(&err);
            goto done;
        }
        atn_input_guard_forget(out);   /* read to be replaced: the output-onto-input guard allows it */
        int64_t rf = 0, rl = 0;
        int32_t nr = atn_corpus_stats_ranges(old, &rf, &rl, 1);
        if (atn_corpus_stats_merge(cs, old, &err) != ATN_OK) {
            cli_error("attnscope stats: cannot resume from %s: %s", out, err.message);
            rc = CLI_EXIT_USAGE;
        } else if (nr > 1 || (nr == 1 && (rf != first || rl > last))) {
            cli_error("attnscope stats: cannot resume from %s: it covers lines %lld-%lld%s, not a start of shard "
                      "%lld/%lld (lines %lld-%lld)", out, (long long)rf, (long long)rl, nr > 1 ? " and more" : "",
                      (long long)index, (long long)count, (long long)first, (long long)last);
            rc = CLI_EXIT_USAGE;
        } else if (nr == 1) {
            start = rl + 1;
            fprintf(stderr, "attnscope: resuming shard %lld/%lld after line %lld\n", (long long)index,
                    (long long)count, (long long)rl);
        }
        atn_corpus_stats_free(old);
        if (rc != CLI_EXIT_OK)
            goto done;
    }
    const char *kill_env = getenv("ATTNSCOPE_TEST_KILL_AT_LINE");
    atn_corpus_report rep;
    atn_stats_stream_init(&stream, NULL, cs);
    if (!opts.attention_on_demand)
        atn_stats_stream_use(&stream, &opts);
    shard_pass sp = {cs, &stream, &rep, kill_env ? atoll(kill_env) : 0};
    int64_t truncated = 0, sentences = 0;
    corpus_file *at_file = NULL;   /* the file read now, positioned at line start */
    while (start <= last) {
        /* a checkpoint's lines lie in one file: the run reads one FILE; the numbers are global */
        corpus_file *cf = corpus_file_of(&cl, start);
        int64_t end = last < cf->offset + cf->lines ? last : cf->offset + cf->lines;
        if (cf != at_file) {
            long long from = 0;
            int64_t n_lines;
            if (!scan_lines(cf->f, start - cf->offset, &n_lines, &from) || fseeko(cf->f, (off_t)from, SEEK_SET) != 0) {
                cli_error("%s: read error", cf->path);
                rc = CLI_EXIT_USAGE;
                goto done;
            }
            at_file = cf;
        }
        copts.first_line = start;
        copts.max_lines = end - start + 1 < every ? end - start + 1 : every;
        atn_status st = atn_corpus_run_ex(model, cf->f, 0, &opts, &copts, shard_consume, cli_keep_going, &sp, &rep,
                                          &err);
        for (int64_t i = 0; i < rep.skipped && i < 3; i++)
            cli_error("%s:%lld: skipped: %s", cf->path, (long long)(rep.skip_line[i] - cf->offset),
                      rep.skip_reason[i]);
        if (st == ATN_E_CANCELLED) {
            cli_error("interrupted at line %lld; %s covers the lines before it (--resume goes on)",
                      (long long)start, out);
            rc = CLI_EXIT_FAIL;
            goto done;
        }
        if (st != ATN_OK) {
            cli_error("%s: %s", cf->path, err.message);
            rc = st == ATN_E_FORMAT || st == ATN_E_IO ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
            goto done;
        }
        if (rep.lines < copts.max_lines) {
            cli_error("%s: ended at line %lld, before line %lld: the file changed while it was read", cf->path,
                      (long long)(start + rep.lines - 1 - cf->offset), (long long)(end - cf->offset));
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        truncated += rep.truncated;
        sentences += rep.sentences;
        if (atn_corpus_stats_cover(cs, start, start + rep.lines - 1, rep.cut, rep.skipped, &err) != ATN_OK ||
            atn_corpus_stats_save(cs, out, &err) != ATN_OK) {
            rc = cli_fail(&err);
            goto done;
        }
        start += rep.lines;
    }
    if (first > last || sentences == 0) {   /* nothing run: still a partial, of no lines or empty ones */
        if (atn_corpus_stats_save(cs, out, &err) != ATN_OK) {
            rc = cli_fail(&err);
            goto done;
        }
    }
    if (first <= last)
        fprintf(stderr, "attnscope: shard %lld/%lld: lines %lld-%lld of %lld, %lld sentences run%s\n", (long long)index,
                (long long)count, (long long)first, (long long)last, (long long)lines, (long long)sentences,
                truncated ? " (some truncated)" : "");
    else
        fprintf(stderr, "attnscope: shard %lld/%lld: no lines (the corpus has %lld)\n", (long long)index,
                (long long)count, (long long)lines);
done:
    atn_stats_stream_free(&stream);
    corpus_list_free(&cl);
    atn_corpus_stats_free(cs);
    cli_interventions_free(&ci);
    atn_model_free(model);
    return rc;
}

/* ---- stats merge ----------------------------------------------------------------------------- */

static int merge_files(cli_args *a_, const char **paths, int n_paths);

typedef struct part_ranges {
    const char *path;
    int64_t *first, *last;
    int32_t n;
} part_ranges;

int cmd_stats_merge(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", NULL};
    /* the partials apart from the options: a shell glob gives thousands, more than cli_args holds */
    char **opt_argv = malloc(((size_t)argc + 1) * sizeof *opt_argv);
    const char **paths = malloc(((size_t)argc + 1) * sizeof *paths);
    int opt_argc = 0, n_paths = 0;
    if (!opt_argv || !paths) {
        free(opt_argv), free(paths);
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        bool takes_value = !strcmp(s, "-o") || !strcmp(s, "--output");
        if (i > 0 && (s[0] != '-' || !s[1]))
            paths[n_paths++] = s;
        else {
            opt_argv[opt_argc++] = argv[i];
            if (takes_value && i + 1 < argc)
                opt_argv[opt_argc++] = argv[++i];
        }
    }
    opt_argv[opt_argc] = NULL;
    bool parsed = cli_parse(&a, "attnscope stats merge", opt_argc, opt_argv, flags);
    free(opt_argv);
    if (!parsed) {
        free(paths);
        return CLI_EXIT_USAGE;
    }
    a.n_positional = 0;
    int rc = merge_files(&a, paths, n_paths);
    free(paths);
    return rc;
}

static int merge_files(cli_args *a_, const char **paths, int n_paths) {
    cli_args a = *a_;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope stats merge PART.safetensors... -o ALL.safetensors\n\n"
               "Adds up partials written by stats --shard (or merged before): the same bytes in any order and any\n"
               "grouping.  Refuses partials of another model, tokenizer, precision, settings, corpus or --top, and\n"
               "two that cover the same line, naming both files; says which lines no partial covers.\n");
        return 0;
    }
    const char *out = cli_get(&a, "output");
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    if (!out) {
        cli_error("attnscope stats merge: -o ALL.safetensors is required");
        return CLI_EXIT_USAGE;
    }
    if (n_paths < 1) {
        cli_error("attnscope stats merge: name the partials to merge");
        return CLI_EXIT_USAGE;
    }
    part_ranges *parts = calloc((size_t)n_paths, sizeof *parts);
    atn_corpus_stats *all = NULL;
    int rc = CLI_EXIT_OK;
    atn_error err = {0};
    if (!parts) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < n_paths && rc == CLI_EXIT_OK; i++) {
        const char *path = paths[i];
        atn_corpus_stats *cs = atn_corpus_stats_load(path, &err);
        if (!cs) {
            rc = cli_fail(&err);
            break;
        }
        part_ranges *p = &parts[i];   /* kept to name the file an overlap is with */
        p->path = path;
        p->n = atn_corpus_stats_ranges(cs, NULL, NULL, 0);
        p->first = malloc(((size_t)p->n + 1) * sizeof *p->first);
        p->last = malloc(((size_t)p->n + 1) * sizeof *p->last);
        if (!p->first || !p->last) {
            cli_error("out of memory");
            rc = CLI_EXIT_FAIL;
        } else
            atn_corpus_stats_ranges(cs, p->first, p->last, p->n);
        if (rc == CLI_EXIT_OK && !all)
            all = cs, cs = NULL;
        else if (rc == CLI_EXIT_OK && atn_corpus_stats_merge(all, cs, &err) != ATN_OK) {
            rc = CLI_EXIT_USAGE;
            bool named = false;   /* an overlap: which earlier file (only now: n^2 pairs) */
            for (int j = 0; j < i && !named; j++)
                for (int32_t x = 0, y = 0; x < p->n && y < parts[j].n && !named;) {
                    int64_t lo = p->first[x] > parts[j].first[y] ? p->first[x] : parts[j].first[y];
                    int64_t hi = p->last[x] < parts[j].last[y] ? p->last[x] : parts[j].last[y];
                    if (lo <= hi) {
                        cli_error("attnscope stats merge: %s and %s both cover lines %lld-%lld", parts[j].path, path,
                                  (long long)lo, (long long)hi);
                        named = true;
                    }
                    if (p->last[x] < parts[j].last[y])
                        x++;
                    else
                        y++;
                }
            if (!named)
                cli_error("attnscope stats merge: %s and %s: %s", paths[0], path, err.message);
        }
        atn_corpus_stats_free(cs);
    }
    if (rc == CLI_EXIT_OK && atn_corpus_stats_save(all, out, &err) != ATN_OK)
        rc = cli_fail(&err);
    if (rc == CLI_EXIT_OK) {
        int64_t sentences, mf[4], ml[4];
        atn_corpus_stats_counts(all, &sentences, NULL, NULL, NULL, NULL);
        int32_t nm = atn_corpus_stats_missing(all, mf, ml, 4);
        fprintf(stderr, "attnscope: %d partials, %lld sentences of %lld lines", n_paths, (long long)sentences,
                (long long)atn_corpus_stats_identity(all)->corpus_lines);
        if (nm == 0)
            fputs("; every line covered\n", stderr);
        else {
            fputs("; missing lines ", stderr);
            for (int32_t i = 0; i < nm && i < 4; i++)
                fprintf(stderr, "%s%lld-%lld", i ? ", " : "", (long long)mf[i], (long long)ml[i]);
            fprintf(stderr, "%s\n", nm > 4 ? ", ..." : "");
        }
    }
    for (int i = 0; i < n_paths; i++)
        free(parts[i].first), free(parts[i].last);
    free(parts);
    atn_corpus_stats_free(all);
    return rc;
}

/* ---- stats --from @LIST ------------------------------------------------------------------------ */

atn_corpus_stats *cli_load_partials(const char *arg, int *rc) {
    atn_error err = {0};
    *rc = CLI_EXIT_OK;
    if (arg[0] != '@') {
        atn_corpus_stats *cs = atn_corpus_stats_load(arg, &err);
        if (!cs)
            *rc = cli_fail(&err);
        return cs;
    }
    const char *list = arg + 1;
    FILE *lf = fopen(list, "rb");
    if (!lf) {
        cli_error("%s: cannot read the list of partials: %s", list, strerror(errno));
        *rc = CLI_EXIT_USAGE;
        return NULL;
    }
    const char *slash = strrchr(list, '/');
    int dir_len = slash ? (int)(slash - list) + 1 : 0;
    char *line = NULL, *first = NULL;
    size_t cap = 0;
    ssize_t got;
    atn_corpus_stats *all = NULL;
    while (*rc == CLI_EXIT_OK && (got = getline(&line, &cap, lf)) >= 0) {
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = 0;
        if (!got || line[0] == '#')
            continue;
        char *path = malloc((size_t)dir_len + (size_t)got + 1);
        if (!path) {
            cli_error("out of memory");
            *rc = CLI_EXIT_FAIL;
            break;
        }
        snprintf(path, (size_t)dir_len + (size_t)got + 1, "%.*s%s", line[0] == '/' ? 0 : dir_len, list, line);
        atn_corpus_stats *cs = atn_corpus_stats_load(path, &err);
        if (!cs)
            *rc = cli_fail(&err);
        else if (!all) {
            all = cs;
            first = path, path = NULL;
        } else {
            if (atn_corpus_stats_merge(all, cs, &err) != ATN_OK) {
                cli_error("attnscope stats: %s and %s (named in %s): %s", first, path, list, err.message);
                *rc = CLI_EXIT_USAGE;
            }
            atn_corpus_stats_free(cs);
        }
        free(path);
    }
    free(line);
    free(first);
    fclose(lf);
    if (*rc == CLI_EXIT_OK && !all) {
        cli_error("%s: the list names no partial", list);
        *rc = CLI_EXIT_USAGE;
    }
    if (*rc != CLI_EXIT_OK) {
        atn_corpus_stats_free(all);
        return NULL;
    }
    return all;
}
