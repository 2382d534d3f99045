/* The Hugging Face cache, read-only: where it is, which models it holds, and resolving
 * "org/name[@rev]" to a snapshot folder (hf-cache.h).  The layout is huggingface_hub's
 * (file_download.py: models--ORG--NAME/{blobs,refs,snapshots}); the download side is in
 * hub/, outside the engine. */
#include "hf-cache.h"

#include "core/files.h"
#include "core/json.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { PATH_MAX_ = 4096 };

/* a/b into out (PATH_MAX_ bytes); false when it does not fit */
static bool pjoin(char *out, const char *a, const char *b) {
    int k = snprintf(out, PATH_MAX_, "%s/%s", a, b);
    return k >= 0 && k < PATH_MAX_;
}

static bool env_set(const char *name, const char **out) {
    const char *v = getenv(name);
    if (v && *v) {
        *out = v;
        return true;
    }
    return false;
}

/* "~/x" -> "$HOME/x", as Python's expanduser does for the variables huggingface_hub reads. */
static char *expand_home(const char *p, const char *suffix, char *buf, size_t len) {
    const char *home = NULL;
    if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
        home = getenv("HOME");
        if (!home || !*home) {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (!home)
            return NULL;
        p++;
    }
    int k = snprintf(buf, len, "%s%s%s", home ? home : "", p, suffix);
    return k >= 0 && (size_t)k < len ? buf : NULL;
}

char *atn_hf_cache_dir(char *buf, size_t len) {
    const char *v;
    if (!buf || len == 0)
        return NULL;
    if (env_set("HF_HUB_CACHE", &v) || env_set("HUGGINGFACE_HUB_CACHE", &v))
        return expand_home(v, "", buf, len);
    if (env_set("HF_HOME", &v))
        return expand_home(v, "/hub", buf, len);
    if (env_set("XDG_CACHE_HOME", &v))
        return expand_home(v, "/huggingface/hub", buf, len);
    return expand_home("~/.cache", "/huggingface/hub", buf, len);
}

/* ---- names -------------------------------------------------------------------------- */

static bool valid_part(const char *s, size_t n) {
    if (n == 0 || n > 96)
        return false;
    if (s[0] == '.' || s[0] == '-' || s[n - 1] == '.' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return false;
        if (i > 0 && (c == '-' || c == '.') && s[i - 1] == c)
            return false;   /* "--" separates the parts of a cache folder name; ".." leaves it */
    }
    return true;
}

atn_status atn_hf_parse_spec(const char *spec, char id[ATN_HF_ID_MAX], char rev[ATN_HF_REV_MAX],
                             atn_error *err) {
    if (!spec || !*spec)
        return atn_error_set(err, ATN_E_INVALID, "no model id given");
    const char *at = strchr(spec, '@');
    size_t idn = at ? (size_t)(at - spec) : strlen(spec);
    const char *slash = memchr(spec, '/', idn);
    bool ok = idn < ATN_HF_ID_MAX;
    if (ok && slash)
        ok = valid_part(spec, (size_t)(slash - spec)) &&
             valid_part(slash + 1, idn - (size_t)(slash - spec) - 1);
    else if (ok)
        ok = valid_part(spec, idn);
    if (!ok)
        return atn_error_set(err, ATN_E_INVALID, "\"%.300s\" is not a Hugging Face model id (expected "
                             "org/name or org/name@revision: letters, digits, '.', '_', '-')", spec);
    memcpy(id, spec, idn);
    id[idn] = '\0';
    const char *r = at ? at + 1 : "main";
    size_t rn = strlen(r);
    bool rok = rn > 0 && rn < ATN_HF_REV_MAX && r[0] != '/' && !strstr(r, "..") && !strchr(r, '@');
    for (size_t i = 0; rok && i < rn; i++)
        rok = (unsigned char)r[i] >= 0x20 && r[i] != 0x7f && r[i] != '\\';
    if (!rok)
        return atn_error_set(err, ATN_E_INVALID, "\"%.300s\": bad revision after '@' (a branch, a tag or a "
                             "40-hex commit hash)", spec);
    memcpy(rev, r, rn + 1);
    return ATN_OK;
}

atn_status atn_hf_repo_folder_name(const char *id, char *buf, size_t len, atn_error *err) {
    size_t k = 0;
    const char *pre = "models--";
    for (const char *p = pre; *p; p++)
        if (k + 1 < len)
            buf[k++] = *p;
        else
            goto toolong;
    for (const char *p = id; *p; p++) {
        if (*p == '/') {
            if (k + 2 >= len)
                goto toolong;
            buf[k++] = '-';
            buf[k++] = '-';
        } else if (k + 1 < len) {
            buf[k++] = *p;
        } else {
            goto toolong;
        }
    }
    buf[k] = '\0';
    return ATN_OK;
toolong:
    if (len)
        buf[0] = '\0';
    return atn_error_set(err, ATN_E_INVALID, "%.300s: model id too long", id);
}

/* "models--org--name" -> "org/name"; false when it is not a model folder's name. */
static bool id_from_folder(const char *name, char *id, size_t len) {
    if (strncmp(name, "models--", 8) != 0)
        return false;
    const char *s = name + 8;
    const char *sep = strstr(s, "--");
    int k = sep ? snprintf(id, len, "%.*s/%s", (int)(sep - s), s, sep + 2) : snprintf(id, len, "%s", s);
    if (k < 0 || (size_t)k >= len)
        return false;
    char i2[ATN_HF_ID_MAX], r2[ATN_HF_REV_MAX];
    return atn_hf_parse_spec(id, i2, r2, NULL) == ATN_OK;
}

static bool is_hash(const char *s) {
    size_t n = strlen(s);
    if (n != 40)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *dir, const char *name) {
    char p[PATH_MAX_];
    struct stat st;
    int k = snprintf(p, sizeof p, "%s/%s", dir, name);
    return k > 0 && (size_t)k < sizeof p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The commit refs/REV names (trimmed), into commit[41]; false when there is no such ref. */
static bool read_ref(const char *repo, const char *rev, char commit[41]) {
    char p[PATH_MAX_];
    int k = snprintf(p, sizeof p, "%s/refs/%s", repo, rev);
    if (k < 0 || (size_t)k >= sizeof p)
        return false;
    char *data = NULL;
    size_t n = 0;
    if (atn_read_file(p, 4096, &data, &n, NULL) != ATN_OK)
        return false;
    char *s = data;
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
    bool ok = is_hash(s);
    if (ok)
        memcpy(commit, s, 41);
    free(data);
    return ok;
}

/* ---- listing ------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Names in a folder (sorted, without "." and ".."); NULL-terminated, the caller frees each
 * and the array.  NULL with *count -1 when it cannot be read. */
static char **list_dir(const char *dir, int *count) {
    *count = -1;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    size_t n = 0, cap = 16;
    char **v = malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (n + 2 > cap) {
            char **nv = realloc(v, (cap *= 2) * sizeof *v);
            if (!nv) {
                for (size_t i = 0; i < n; i++)
                    free(v[i]);
                free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        if (!(v[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (!v)
        return NULL;
    v[n] = NULL;
    qsort(v, n, sizeof *v, cmp_str);
    *count = (int)n;
    return v;
}

static void free_names(char **v) {
    for (char **p = v; p && *p; p++)
        free(*p);
    free(v);
}

/* refs are files under refs/, possibly in sub-folders (refs/pr/1): appends "name" of each
 * ref that points at commit to buf. */
static void refs_for(const char *repo, const char *sub, const char *commit, char *buf, size_t len) {
    char dir[PATH_MAX_];
    if (snprintf(dir, sizeof dir, "%s/refs%s%s", repo, *sub ? "/" : "", sub) >= (int)sizeof dir)
        return;
    int n;
    char **names = list_dir(dir, &n);
    for (int i = 0; i < n; i++) {
        char rel[PATH_MAX_], full[PATH_MAX_];
        if (snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "", names[i]) >= (int)sizeof rel ||
            !pjoin(full, dir, names[i]))
            continue;
        if (is_dir(full)) {
            if (strlen(sub) < 512)
                refs_for(repo, rel, commit, buf, len);
            continue;
        }
        char c[41];
        if (read_ref(repo, rel, c) && !strcmp(c, commit)) {
            size_t k = strlen(buf);
            if (snprintf(buf + k, len - k, "%s%s", k ? "," : "", rel) >= (int)(len - k))
                buf[k] = '\0';   /* too many to name: the ones that fit */
        }
    }
    free_names(names);
}

static const char *const tokenizer_files[] = {"tokenizer.json", "vocab.txt", "sentencepiece.bpe.model",
                                              "spiece.model", "tokenizer.model", NULL};

static void describe_revision(atn_hf_revision *r) {
    char tf[PATH_MAX_];
    const char *dir = r->folder;
    r->sentence_transformers = is_file(r->folder, "modules.json");
    if (r->sentence_transformers && atn_hf_transformer_folder(r->folder, tf, sizeof tf, NULL) == ATN_OK)
        dir = tf;
    r->has_config = is_file(dir, "config.json");
    r->has_tokenizer = is_file(dir, "vocab.json") && is_file(dir, "merges.txt");
    for (int i = 0; !r->has_tokenizer && tokenizer_files[i]; i++)
        r->has_tokenizer = is_file(dir, tokenizer_files[i]);
    if (is_file(dir, "model.safetensors") || is_file(dir, "model.safetensors.index.json"))
        r->weights = "safetensors";
    else if (is_file(dir, "pytorch_model.bin") || is_file(dir, "pytorch_model.bin.index.json"))
        r->weights = "pytorch";
    else
        r->weights = "";
    r->has_weights = *r->weights != '\0';
}

static int cmp_rev(const void *a, const void *b) {
    const atn_hf_revision *x = a, *y = b;
    bool rx = *x->refs, ry = *y->refs;
    if (rx != ry)
        return rx ? -1 : 1;
    return strcmp(x->commit, y->commit);
}

static int64_t blobs_size(const char *repo) {
    char dir[PATH_MAX_];
    if (!pjoin(dir, repo, "blobs"))
        return 0;
    int n;
    char **names = list_dir(dir, &n);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX_];
        struct stat st;
        if (pjoin(p, dir, names[i]) && lstat(p, &st) == 0 && S_ISREG(st.st_mode))
            total += (int64_t)st.st_size;
    }
    free_names(names);
    return total;
}

static atn_status fill_model(atn_hf_cached_model *m, const char *cache, const char *name, const char *id) {
    char repo[PATH_MAX_], snaps[PATH_MAX_];
    bool named = pjoin(repo, cache, name) && pjoin(snaps, repo, "snapshots");
    if (!(m->id = strdup(id)) || !(m->folder = strdup(named ? repo : "")))
        return ATN_E_NOMEM;
    if (!named)
        return ATN_OK;   /* a path too long to name: listed without revisions */
    m->size = blobs_size(repo);
    int n;
    char **commits = list_dir(snaps, &n);
    if (n <= 0) {
        free_names(commits);
        return ATN_OK;
    }
    m->revisions = calloc((size_t)n, sizeof *m->revisions);
    if (!m->revisions) {
        free_names(commits);
        return ATN_E_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX_], refs[2048] = "";
        if (!pjoin(p, snaps, commits[i]) || !is_dir(p))
            continue;
        refs_for(repo, "", commits[i], refs, sizeof refs);
        atn_hf_revision *r = &m->revisions[m->n_revisions];
        r->commit = strdup(commits[i]);
        r->refs = strdup(refs);
        r->folder = strdup(p);
        m->n_revisions++;
        if (!r->commit || !r->refs || !r->folder) {
            free_names(commits);
            return ATN_E_NOMEM;
        }
        describe_revision(r);
    }
    free_names(commits);
    qsort(m->revisions, (size_t)m->n_revisions, sizeof *m->revisions, cmp_rev);
    return ATN_OK;
}

void atn_hf_cache_list_free(atn_hf_cache_list *list) {
    if (!list)
        return;
    for (int32_t i = 0; i < list->n; i++) {
        atn_hf_cached_model *m = &list->models[i];
        for (int32_t j = 0; j < m->n_revisions; j++) {
            free(m->revisions[j].commit);
            free(m->revisions[j].refs);
            free(m->revisions[j].folder);
        }
        free(m->revisions);
        free(m->id);
        free(m->folder);
    }
    free(list->models);
    free(list->cache_dir);
    free(list);
}

static int cmp_model(const void *a, const void *b) {
    return strcmp(((const atn_hf_cached_model *)a)->id, ((const atn_hf_cached_model *)b)->id);
}

atn_status atn_hf_cache_list_models(const char *cache_dir, atn_hf_cache_list **out, atn_error *err) {
    char def[PATH_MAX_];
    *out = NULL;
    if (!cache_dir && !(cache_dir = atn_hf_cache_dir(def, sizeof def)))
        return atn_error_set(err, ATN_E_IO, "no Hugging Face cache folder: HOME is not set (set HF_HOME or "
                             "HF_HUB_CACHE)");
    atn_hf_cache_list *L = calloc(1, sizeof *L);
    if (!L || !(L->cache_dir = strdup(cache_dir))) {
        free(L);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    int n;
    char **names = list_dir(cache_dir, &n);
    if (n < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR) {   /* no cache yet: nothing downloaded */
            *out = L;
            return ATN_OK;
        }
        atn_hf_cache_list_free(L);
        return atn_error_set(err, e == ENOMEM ? ATN_E_NOMEM : ATN_E_IO, "%s: cannot read the Hugging Face "
                             "cache: %s", cache_dir, strerror(e));
    }
    L->models = calloc((size_t)n + 1, sizeof *L->models);
    if (!L->models) {
        free_names(names);
        atn_hf_cache_list_free(L);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        char id[ATN_HF_ID_MAX], p[PATH_MAX_];
        if (!pjoin(p, cache_dir, names[i]) || !id_from_folder(names[i], id, sizeof id) || !is_dir(p))
            continue;
        atn_status st = fill_model(&L->models[L->n++], cache_dir, names[i], id);
        if (st != ATN_OK) {
            free_names(names);
            atn_hf_cache_list_free(L);
            return atn_error_set(err, st, "out of memory");
        }
    }
    free_names(names);
    qsort(L->models, (size_t)L->n, sizeof *L->models, cmp_model);
    *out = L;
    return ATN_OK;
}

/* ---- resolving ---------------------------------------------------------------------- */

/* ", cached: main (abc123...), 0123..." for messages. */
static void cached_revisions(const char *repo, char *buf, size_t len) {
    char snaps[PATH_MAX_];
    buf[0] = '\0';
    if (!pjoin(snaps, repo, "snapshots"))
        return;
    int n;
    char **commits = list_dir(snaps, &n);
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char refs[1024] = "";
        refs_for(repo, "", commits[i], refs, sizeof refs);
        size_t k = strlen(buf);
        int k2;
        if (*refs)
            k2 = snprintf(buf + k, len - k, "%s%s (%s)", k ? ", " : "", refs, commits[i]);
        else
            k2 = snprintf(buf + k, len - k, "%s%s", k ? ", " : "", commits[i]);
        if (k2 >= (int)(len - k)) {
            buf[k] = '\0';
            break;
        }
    }
    free_names(commits);
}

atn_status atn_hf_cache_resolve(const char *cache_dir, const char *spec, char *out, size_t out_len,
                                atn_error *err) {
    char id[ATN_HF_ID_MAX], rev[ATN_HF_REV_MAX], def[PATH_MAX_], folder[ATN_HF_ID_MAX + 16];
    if (out_len)
        out[0] = '\0';
    atn_status st = atn_hf_parse_spec(spec, id, rev, err);
    if (st != ATN_OK)
        return st;
    if (!cache_dir && !(cache_dir = atn_hf_cache_dir(def, sizeof def)))
        return atn_error_set(err, ATN_E_IO, "%s: not in the Hugging Face cache: no cache folder (HOME is not "
                             "set; set HF_HOME or HF_HUB_CACHE)", spec);
    if ((st = atn_hf_repo_folder_name(id, folder, sizeof folder, err)) != ATN_OK)
        return st;
    char repo[PATH_MAX_];
    int k = snprintf(repo, sizeof repo, "%s/%s", cache_dir, folder);
    if (k < 0 || (size_t)k >= sizeof repo)
        return atn_error_set(err, ATN_E_INVALID, "%s: cache path too long", spec);
    if (!is_dir(repo))
        return atn_error_set(err, ATN_E_IO, "%s: not in the Hugging Face cache (looked for %s); `attnscope "
                             "download %s` fetches it", spec, repo, id);
    char commit[41];
    if (is_hash(rev)) {
        memcpy(commit, rev, 41);
    } else if (!read_ref(repo, rev, commit)) {
        char have[1024];
        cached_revisions(repo, have, sizeof have);
        return atn_error_set(err, ATN_E_IO, "%s: revision \"%s\" is not in the Hugging Face cache (looked for "
                             "%s/refs/%s); cached revisions: %s; `attnscope download %s@%s` fetches it", spec,
                             rev, repo, rev, *have ? have : "none", id, rev);
    }
    k = snprintf(out, out_len, "%s/snapshots/%s", repo, commit);
    if (k < 0 || (size_t)k >= out_len) {
        if (out_len)
            out[0] = '\0';
        return atn_error_set(err, ATN_E_INVALID, "%s: cache path too long", spec);
    }
    if (!is_dir(out)) {
        char have[1024];
        cached_revisions(repo, have, sizeof have);
        atn_error_set(err, ATN_E_IO, "%s: revision %s (commit %s) is not in the Hugging Face cache (looked for "
                      "%s); cached revisions: %s", spec, rev, commit, out, *have ? have : "none");
        out[0] = '\0';
        return ATN_E_IO;
    }
    return ATN_OK;
}

/* ---- sentence-transformers ---------------------------------------------------------- */

atn_status atn_hf_transformer_folder(const char *folder, char *out, size_t out_len, atn_error *err) {
    char p[PATH_MAX_];
    int k = snprintf(p, sizeof p, "%s/modules.json", folder);
    if (k < 0 || (size_t)k >= sizeof p)
        return atn_error_set(err, ATN_E_INVALID, "%.200s...: path too long", folder);
    struct stat st;
    if (stat(p, &st) != 0) {
        k = snprintf(out, out_len, "%s", folder);
        return k >= 0 && (size_t)k < out_len ? ATN_OK : atn_error_set(err, ATN_E_INVALID, "%.200s: path too long", folder);
    }
    char *data = NULL;
    size_t n = 0;
    atn_status s = atn_read_file(p, 1 << 20, &data, &n, err);
    if (s != ATN_OK)
        return s;
    cJSON *root = NULL;
    s = atn_json_parse(data, n, p, 0, &root, err);   /* engine/core/json.c: its limits */
    free(data);
    if (s != ATN_OK)
        return s;
    if (!cJSON_IsArray(root)) {
        cJSON_Delete(root);
        return atn_error_set(err, ATN_E_FORMAT, "%s: not a JSON list of modules (a sentence-transformers "
                             "modules.json)", p);
    }
    const char *path = NULL;
    int idx = 0;
    cJSON *mod;
    cJSON_ArrayForEach(mod, root) {
        cJSON *type = cJSON_GetObjectItemCaseSensitive(mod, "type");
        cJSON *mp = cJSON_GetObjectItemCaseSensitive(mod, "path");
        if (cJSON_IsString(type) && !strcmp(type->valuestring, "sentence_transformers.models.Transformer")) {
            if (!cJSON_IsString(mp)) {
                cJSON_Delete(root);
                return atn_error_set(err, ATN_E_FORMAT, "%s: [%d].path: the Transformer module has no path "
                                     "string", p, idx);
            }
            path = mp->valuestring;
            break;
        }
        idx++;
    }
    if (!path) {
        cJSON_Delete(root);
        return atn_error_set(err, ATN_E_FORMAT, "%s: no module of type sentence_transformers.models.Transformer",
                             p);
    }
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    if (path[0] == '/' || strstr(path, "..")) {
        atn_error_set(err, ATN_E_FORMAT, "%s: [%d].path \"%s\" leaves the model folder", p, idx, path);
        cJSON_Delete(root);
        return ATN_E_FORMAT;
    }
    size_t pn = strlen(path);
    while (pn > 0 && path[pn - 1] == '/')
        pn--;
    if (pn == 0 || (pn == 1 && path[0] == '.'))
        k = snprintf(out, out_len, "%s", folder);
    else
        k = snprintf(out, out_len, "%s/%.*s", folder, (int)pn, path);
    cJSON_Delete(root);
    if (k < 0 || (size_t)k >= out_len)
        return atn_error_set(err, ATN_E_INVALID, "%.200s: path too long", folder);
    return ATN_OK;
}

bool atn_hf_cache_id_of_path(const char *folder, char *id, size_t len) {
    if (len)
        id[0] = '\0';
    if (!folder)
        return false;
    const char *s = strstr(folder, "/snapshots/");
    if (!s)
        return false;
    const char *start = s;
    while (start > folder && start[-1] != '/')
        start--;
    char name[ATN_HF_ID_MAX + 16];
    size_t n = (size_t)(s - start);
    if (n >= sizeof name)
        return false;
    memcpy(name, start, n);
    name[n] = '\0';
    if (!id_from_folder(name, id, len)) {
        if (len)
            id[0] = '\0';
        return false;
    }
    return true;
}
