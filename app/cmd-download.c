/* attnscope download org/name[@revision]: the files attnscope needs, into the Hugging Face
 * cache (engine/hub/hub.h), with progress on stderr. */
#include "cli.h"
#include "hf-cache.h"
#include "hub.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void human(int64_t b, char *buf, size_t len) {
    if (b < 0)
        snprintf(buf, len, "?");
    else if (b < 1000)
        snprintf(buf, len, "%lld B", (long long)b);
    else if (b < 1000 * 1000)
        snprintf(buf, len, "%.1f kB", (double)b / 1e3);
    else if (b < 1000LL * 1000 * 1000)
        snprintf(buf, len, "%.1f MB", (double)b / 1e6);
    else
        snprintf(buf, len, "%.2f GB", (double)b / 1e9);
}

typedef struct dl_state {
    bool tty;
    int32_t last_file;
    bool line_open;
    bool said_waiting;
} dl_state;

/* A string from the server (a file name) for the terminal: control characters (C0, DEL, and
 * C1 as UTF-8 or as a stray byte) and bytes that are not UTF-8 shown as \xNN, so a name
 * cannot move the cursor, retitle the window or write the clipboard (OSC 52); cut to fit. */
static const char *shown(const char *s, char *buf, size_t len) {
    size_t k = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && k + 9 < len) {
        int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
        bool ok = n > 0 && !(n == 1 && (*p < 0x20 || *p == 0x7f)) && !(n == 2 && p[0] == 0xc2 && p[1] < 0xa0);
        for (int i = 1; ok && i < n; i++)
            ok = (p[i] & 0xc0) == 0x80;
        if (!ok) {
            k += (size_t)snprintf(buf + k, len - k, "\\x%02x", *p++);
            continue;
        }
        memcpy(buf + k, p, (size_t)n);
        k += (size_t)n;
        p += n;
    }
    buf[k] = '\0';
    return buf;
}

static bool keep_going(void *ud) {
    (void)ud;
    return !cli_interrupted();
}

static bool on_progress(const atn_hub_progress *p, void *ud) {
    dl_state *s = ud;
    if (cli_interrupted())
        return false;
    char name[1024];
    if (p->waiting_for && !s->said_waiting) {
        fprintf(stderr, "%swaiting for another download of %s to finish (it holds %s); Ctrl-C to stop\n",
                s->line_open ? "\n" : "", shown(p->file, name, sizeof name), p->waiting_for);
        s->said_waiting = true;
        s->line_open = false;
    }
    if (s->tty) {
        char done[32], total[32], rate[32], left[32] = "";
        human(p->file_done, done, sizeof done);
        human(p->file_total, total, sizeof total);
        human((int64_t)p->rate, rate, sizeof rate);
        if (p->eta >= 0) {
            long t = (long)(p->eta + 0.5);
            if (t >= 3600)
                snprintf(left, sizeof left, "%ld:%02ld:%02ld left", t / 3600, t / 60 % 60, t % 60);
            else
                snprintf(left, sizeof left, "%ld:%02ld left", t / 60, t % 60);
        }
        fprintf(stderr, "\r\033[K[%d/%d] %s  %s / %s  %s/s  %s", p->file_index + 1, p->n_files,
                shown(p->file, name, sizeof name), done, total,
                rate, left);
        s->line_open = true;
    } else if (p->file_index != s->last_file) {
        char total[32];
        human(p->file_total, total, sizeof total);
        fprintf(stderr, "[%d/%d] %s (%s)\n", p->file_index + 1, p->n_files, shown(p->file, name, sizeof name), total);
    }
    s->last_file = p->file_index;
    return true;
}

int cmd_download(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "list", NULL};
    if (!cli_parse(&a, "attnscope download", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope download ORG/NAME[@REVISION] [--list]\n\n"
               "Downloads what attnscope needs of a Hugging Face model (config.json, the tokenizer files,\n"
               "one weights format: safetensors, else pytorch_model.bin, shards included) into the\n"
               "Hugging Face cache that transformers uses too ($HF_HUB_CACHE, else $HF_HOME/hub, else\n"
               "~/.cache/huggingface/hub), then prints the snapshot folder.  Open it afterwards with\n"
               "--model ORG/NAME.  REVISION is a branch, a tag or a commit (default main).\n\n"
               "  --list   only show the files, their sizes and which are cached\n\n"
               "Files already in the cache are not fetched again; an interrupted download (Ctrl-C, a\n"
               "dropped connection) continues where it stopped.  LFS files are checked against their\n"
               "sha256, the others against their git blob sha1.  Environment: HF_ENDPOINT (a mirror, e.g. https://hf-mirror.com), HF_TOKEN or the\n"
               "token saved by `huggingface-cli login` (gated and private models), HF_HUB_OFFLINE=1\n"
               "(no network: only report what is cached), https_proxy / http_proxy / no_proxy,\n"
               "HF_HUB_ETAG_TIMEOUT (seconds an API or HEAD answer may take, default 60),\n"
               "ATTNSCOPE_HUB_LOCK_TIMEOUT (seconds to wait while another process downloads the same\n"
               "file into the cache, default 1800).\n");
        return 0;
    }
    if (a.n_positional != 1) {
        cli_error("download: give one model id, e.g. attnscope download google-bert/bert-base-uncased");
        return CLI_EXIT_USAGE;
    }
    const char *spec = a.positional[0];
    a.n_positional = 0;
    bool list = cli_flag(&a, "list");
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    atn_error err = {0};
    char id[ATN_HF_ID_MAX], rev[ATN_HF_REV_MAX];
    if (atn_hf_parse_spec(spec, id, rev, &err) != ATN_OK)
        return cli_fail(&err);
    if (atn_hub_offline()) {
        char snap[4096];
        atn_error why = {0};
        if (atn_hf_cache_resolve(NULL, spec, snap, sizeof snap, &why) == ATN_OK) {
            fprintf(stderr, "attnscope: offline mode (HF_HUB_OFFLINE is set): %s is in the cache, not checking "
                            "the Hub for updates\n", spec);
            printf("%s\n", snap);
            return 0;
        }
        cli_error("offline mode (HF_HUB_OFFLINE is set), so nothing is downloaded: %s", why.message);
        return CLI_EXIT_USAGE;
    }
    atn_hub_plan *plan = NULL;
    if (atn_hub_plan_fetch(spec, keep_going, NULL, &plan, &err) != ATN_OK)
        return cli_fail(&err);   /* cancelled: main says "interrupted" (130) */
    if (list) {
        char total[32];
        human(plan->total_bytes, total, sizeof total);
        printf("%s@%s (commit %s), %s weights, %d files, %s:\n", plan->id, plan->revision, plan->commit,
               plan->weights, plan->n_files, total);
        for (int32_t i = 0; i < plan->n_files; i++) {
            char size[32];
            human(plan->files[i].size, size, sizeof size);
            char name[1024];
            printf("  %-48s %10s%s%s\n", shown(plan->files[i].name, name, sizeof name), size,
                   plan->files[i].lfs ? "  lfs" : "",
                   plan->files[i].cached ? "  cached" : "");
        }
        atn_hub_plan_free(plan);
        return 0;
    }
    char fetch[32];
    human(plan->fetch_bytes, fetch, sizeof fetch);
    fprintf(stderr, "%s@%s (commit %.12s): %d files, %s to fetch\n", plan->id, plan->revision, plan->commit,
            plan->n_files, fetch);
    dl_state s = {.tty = isatty(2), .last_file = -1};
    atn_status st = atn_hub_download(plan, on_progress, &s, &err);
    if (s.line_open)
        fputc('\n', stderr);
    if (st == ATN_E_CANCELLED) {
        atn_hub_plan_free(plan);
        fprintf(stderr, "attnscope: %s\n", err.message);
        return CLI_EXIT_INTERRUPTED;   /* main prints "interrupted" and exits 130 */
    }
    if (st != ATN_OK) {
        atn_hub_plan_free(plan);
        return cli_fail(&err);
    }
    printf("%s\n", plan->snapshot);
    atn_hub_plan_free(plan);
    return 0;
}
