/* The what-if lab's options, shared by run, export, stats, trace, predict, diff and
 * importance: --heads-off, --keep-heads, --head-mode, --window, --global-tokens, --causal,
 * --strided, --hide-tokens, --mask-layers, --alibi, --no-positions, --shuffle-seed,
 * --temperature, and the rotary knobs --rope-theta, --rope-factor, --sliding-off, --sliding-on,
 * --sliding-window.  Each
 * bad value or combination exits 2 with a message naming the option. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const cli_intervention_options[] = {"heads-off", "keep-heads", "head-mode", "window", "global-tokens",
                                                "causal", "strided", "hide-tokens", "mask-layers", "alibi",
                                                "no-positions", "shuffle-seed", "temperature", "rope-theta",
                                                "rope-factor", "rope-llama3", "sliding-off", "sliding-on",
                                                "sliding-window", NULL};

void cli_whatif_title(cli_args *a, char *buf, size_t size) {
    static const char *const flags[] = {CLI_INTERVENTION_FLAGS, NULL};
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; cli_intervention_options[i]; i++) {
        const char *name = cli_intervention_options[i];
        bool flag = false;
        for (int f = 0; flags[f]; f++)
            flag |= !strcmp(flags[f], name);
        const char *value = flag ? NULL : cli_get(a, name);
        if (!(flag ? cli_flag(a, name) : value != NULL))
            continue;
        int w = snprintf(buf + used, size - used, "%s--%s%s%s", used ? " " : "what-if: ", name, value ? " " : "",
                         value ? value : "");
        if (w < 0 || (size_t)w >= size - used)
            break;   /* cut: the title keeps what fits */
        used += (size_t)w;
    }
}

void cli_interventions_free(cli_interventions *ci) {
    if (!ci)
        return;
    free(ci->heads_off);
    free(ci->global);
    free(ci->hide);
    free(ci->mask_layers);
    free(ci->sliding);
    memset(ci, 0, sizeof *ci);
}

/* "3:5,7:1" → (layer, head) pairs checked against the model; marks them in mark[L][H]. */
static bool parse_heads(const char *prog, const char *opt, const char *s, const atn_config *c, uint8_t *mark) {
    const char *p = s;
    if (!*p) {
        cli_error("%s: --%s needs layer:head pairs, e.g. 3:5,7:1", prog, opt);
        return false;
    }
    while (*p) {
        char *end;
        errno = 0;
        long l = strtol(p, &end, 10);
        if (end == p || *end != ':' || errno) {
            cli_error("%s: --%s: \"%s\" is not a list of layer:head pairs (e.g. 3:5,7:1)", prog, opt, s);
            return false;
        }
        p = end + 1;
        long h = strtol(p, &end, 10);
        if (end == p || errno || (*end && *end != ',')) {
            cli_error("%s: --%s: \"%s\" is not a list of layer:head pairs (e.g. 3:5,7:1)", prog, opt, s);
            return false;
        }
        if (l < 0 || l >= c->n_layers) {
            cli_error("%s: --%s: layer %ld is outside the model's layers 0..%d", prog, opt, l, c->n_layers - 1);
            return false;
        }
        if (h < 0 || h >= c->n_heads) {
            cli_error("%s: --%s: head %ld is outside the model's heads 0..%d", prog, opt, h, c->n_heads - 1);
            return false;
        }
        mark[(size_t)l * c->n_heads + h] = 1;
        p = *end ? end + 1 : end;
    }
    return true;
}

/* --rope-theta, --rope-factor, --sliding-off / --sliding-on LAYERS, --sliding-window W into
 * ci (whether the model has rotary positions is the run's check, which names the knob). */
static bool parse_rotary(cli_args *a, const atn_config *c, cli_interventions *ci) {
    atn_interventions *iv = &ci->iv;
    bool ok = true;
    iv->rope_theta = cli_get_double(a, "rope-theta", 0.0, 1e-30, 1e30, &ok);
    iv->rope_factor = cli_get_double(a, "rope-factor", 0.0, 1e-30, 1e30, &ok);
    iv->rope_llama3 = cli_get_double(a, "rope-llama3", 0.0, 1e-30, 1e30, &ok);
    long sw = cli_get_int(a, "sliding-window", 0, 1, INT32_MAX, &ok);
    if (!ok)
        return false;
    iv->sliding_window = (int32_t)sw;
    const char *names[2] = {"sliding-off", "sliding-on"};
    for (int which = 0; which < 2; which++) {
        const char *text = cli_get(a, names[which]);
        if (!text)
            continue;
        if (!ci->sliding && !(ci->sliding = calloc(c->n_layers > 0 ? (size_t)c->n_layers : 1, 1))) {
            cli_error("out of memory");
            return false;
        }
        uint8_t *mark = calloc(c->n_layers > 0 ? (size_t)c->n_layers : 1, 1);
        if (!mark) {
            cli_error("out of memory");
            return false;
        }
        atn_error err = {0};
        if (atn_parse_layer_list(text, c->n_layers, mark, &err) != ATN_OK) {
            cli_error("%s: --%s: %s", a->prog, names[which], err.message);
            free(mark);
            return false;
        }
        for (int32_t l = 0; l < c->n_layers; l++) {
            if (mark[l] && ci->sliding[l]) {
                cli_error("%s: --sliding-off and --sliding-on both name layer %d", a->prog, l);
                free(mark);
                return false;
            }
            if (mark[l])
                ci->sliding[l] = which ? 1 : -1;
        }
        free(mark);
    }
    iv->sliding = ci->sliding;
    return true;
}

bool cli_interventions_parse(cli_args *a, const atn_config *c, cli_interventions *ci) {
    memset(ci, 0, sizeof *ci);
    atn_interventions *iv = &ci->iv;
    atn_interventions_init(iv);
    const char *off = cli_get(a, "heads-off"), *keep = cli_get(a, "keep-heads"), *mode = cli_get(a, "head-mode");
    if (off && keep) {
        cli_error("%s: --heads-off and --keep-heads cannot be combined: give one of them", a->prog);
        return false;
    }
    if (mode && !off && !keep) {
        cli_error("%s: --head-mode needs --heads-off or --keep-heads", a->prog);
        return false;
    }
    if (mode) {
        if (!strcmp(mode, "zero"))
            iv->head_mode = ATN_HEAD_ZERO;
        else if (!strcmp(mode, "uniform"))
            iv->head_mode = ATN_HEAD_UNIFORM;
        else {
            cli_error("%s: --head-mode must be zero or uniform, not \"%s\"", a->prog, mode);
            return false;
        }
    }
    if (off || keep) {
        size_t lh = (size_t)c->n_layers * c->n_heads;
        ci->heads_off = calloc(lh ? lh : 1, 1);
        if (!ci->heads_off) {
            cli_error("out of memory");
            return false;
        }
        if (!parse_heads(a->prog, off ? "heads-off" : "keep-heads", off ? off : keep, c, ci->heads_off))
            goto bad;
        if (keep) {   /* in each layer named, every head not listed is switched off */
            for (int32_t l = 0; l < c->n_layers; l++) {
                uint8_t *row = ci->heads_off + (size_t)l * c->n_heads;
                bool named = false;
                for (int32_t h = 0; h < c->n_heads; h++)
                    named |= row[h] != 0;
                for (int32_t h = 0; named && h < c->n_heads; h++)
                    row[h] = !row[h];
            }
        }
        iv->heads_off = ci->heads_off;
    }
    bool ok = true;   /* the one numeric parser (app/cli.c): range-checked, the option named */
    long w = cli_get_int(a, "window", -1, 0, INT32_MAX, &ok), s = cli_get_int(a, "strided", 0, 1, INT32_MAX, &ok);
    long seed = cli_get_int(a, "shuffle-seed", -1, 0, LONG_MAX, &ok);
    if (!ok)
        goto bad;
    iv->window = (int32_t)w;
    iv->strided = (int32_t)s;
    const char *g = cli_get(a, "global-tokens"), *hide = cli_get(a, "hide-tokens");
    if (g && w < 0) {
        cli_error("%s: --global-tokens needs --window (Longformer: a window plus global tokens)", a->prog);
        goto bad;
    }
    if (g && (iv->n_global = cli_parse_int_list(g, "--global-tokens", &ci->global)) < 0)
        goto bad;
    iv->global_tokens = ci->global;
    if (hide && (iv->n_hide = cli_parse_int_list(hide, "--hide-tokens", &ci->hide)) < 0)
        goto bad;
    iv->hide_tokens = ci->hide;
    for (int i = 0; i < iv->n_global; i++)
        if (ci->global[i] < 0) {
            cli_error("%s: --global-tokens: token %d is negative", a->prog, ci->global[i]);
            goto bad;
        }
    for (int i = 0; i < iv->n_hide; i++)
        if (ci->hide[i] < 0) {
            cli_error("%s: --hide-tokens: token %d is negative", a->prog, ci->hide[i]);
            goto bad;
        }
    iv->causal = cli_flag(a, "causal");
    const char *ml = cli_get(a, "mask-layers");
    if (ml) {
        if (!iv->causal && w < 0 && s <= 0 && iv->n_hide <= 0) {
            cli_error("%s: --mask-layers needs a mask to limit: --causal, --window, --strided or --hide-tokens",
                      a->prog);
            goto bad;
        }
        ci->mask_layers = calloc(c->n_layers > 0 ? (size_t)c->n_layers : 1, 1);
        if (!ci->mask_layers) {
            cli_error("out of memory");
            goto bad;
        }
        atn_error err = {0};   /* the engine's one parser of layer lists (the window's too) */
        if (atn_parse_layer_list(ml, c->n_layers, ci->mask_layers, &err) != ATN_OK) {
            cli_error("%s: --mask-layers: %s", a->prog, err.message);
            goto bad;
        }
        iv->mask_layers = ci->mask_layers;
    }
    iv->alibi = cli_flag(a, "alibi");
    iv->no_positions = cli_flag(a, "no-positions");
    if (seed >= 0) {
        iv->shuffle = true;
        iv->shuffle_seed = (uint64_t)seed;
    }
    if ((iv->no_positions || iv->shuffle) && !c->use_embeddings) {
        cli_error("%s: --%s: a toy model has no position embeddings", a->prog,
                  iv->no_positions ? "no-positions" : "shuffle-seed");
        goto bad;
    }
    double t = cli_get_double(a, "temperature", 1.0, 1e-30, 1e30, &ok);   /* T > 0 */
    if (!ok)
        goto bad;
    iv->temperature = (float)t;
    if (!parse_rotary(a, c, ci))
        goto bad;
    ci->any = !atn_interventions_none(iv);
    return true;
bad:
    cli_interventions_free(ci);
    return false;
}

bool cli_interventions_check_tokens(const cli_interventions *ci, const char *prog, int32_t n) {
    const atn_interventions *iv = &ci->iv;
    for (int i = 0; i < iv->n_global; i++)
        if (iv->global_tokens[i] >= n) {
            cli_error("%s: --global-tokens: token %d is outside the input's tokens 0..%d", prog,
                      iv->global_tokens[i], n - 1);
            return false;
        }
    for (int i = 0; i < iv->n_hide; i++)
        if (iv->hide_tokens[i] >= n) {
            cli_error("%s: --hide-tokens: token %d is outside the input's tokens 0..%d", prog, iv->hide_tokens[i],
                      n - 1);
            return false;
        }
    return true;
}
