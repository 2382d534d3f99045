/* The Hugging Face cache (engine/formats/hf-cache.c): where it is, listing, resolving
 * org/name[@rev], opening a cached model through atn_model_open, and sentence-transformers
 * folders.  The caches are built here in a temporary folder in huggingface_hub's exact
 * layout (models--ORG--NAME/{blobs/ETAG, snapshots/COMMIT/FILE -> ../../blobs/ETAG,
 * refs/REV}) from the generated test models in tests/hf/models. */
#define _GNU_SOURCE   /* nftw, mkdtemp */
#include "check.h"
#include "attnscope.h"
#include "hf-cache.h"

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char src_root[2048];
static char tmp_root[256];

static const char *C1 = "1111111111111111111111111111111111111111";   /* main */
static const char *C2 = "2222222222222222222222222222222222222222";   /* v1 and pr/1 */
static const char *C3 = "3333333333333333333333333333333333333333";   /* no ref, files missing */

static void die(const char *what, const char *path) {
    fprintf(stderr, "%s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static void mkdirs(const char *path) {
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        die("mkdir", p);
}

static size_t copy_file(const char *from, const char *to) {
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    if (!a)
        die("open", from);
    if (!b)
        die("create", to);
    char buf[65536];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) {
        if (fwrite(buf, 1, n, b) != n)
            die("write", to);
        total += n;
    }
    fclose(a);
    if (fclose(b) != 0)
        die("close", to);
    return total;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        die("write", path);
}

/* A made-up but well-formed etag per (file, commit): 40 hex digits as git's blob sha1. */
static void etag_of(const char *file, const char *commit, char out[41]) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = file; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    for (const char *p = commit; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    snprintf(out, 41, "%016llx%016llx%08x", (unsigned long long)h, (unsigned long long)(h * 31),
             (unsigned)(h >> 7));
}

/* Puts model folder src (a tests/hf/models name) into repo as snapshot commit, each file a
 * blob plus a relative symlink, as huggingface_hub does; sub is a folder inside the
 * snapshot ("" or "0_Transformer").  Returns the bytes of the blobs written. */
static size_t add_snapshot(const char *repo, const char *commit, const char *src, const char *sub,
                           const char *const *files) {
    char snap[4000], blobs[4000];
    snprintf(snap, sizeof snap, "%s/snapshots/%s%s%s", repo, commit, *sub ? "/" : "", sub);
    snprintf(blobs, sizeof blobs, "%s/blobs", repo);
    mkdirs(snap);
    mkdirs(blobs);
    size_t total = 0;
    for (int i = 0; files[i]; i++) {
        char from[4096], blob[4200], link[4200], target[4096], tag[41], key[512];
        snprintf(key, sizeof key, "%s/%s", sub, files[i]);
        etag_of(key, commit, tag);
        snprintf(from, sizeof from, "%s/tests/hf/models/%s/%s", src_root, src, files[i]);
        snprintf(blob, sizeof blob, "%s/%s", blobs, tag);
        total += copy_file(from, blob);
        snprintf(link, sizeof link, "%s/%s", snap, files[i]);
        snprintf(target, sizeof target, "%s../../blobs/%s", *sub ? "../" : "", tag);
        if (symlink(target, link) != 0)
            die("symlink", link);
    }
    return total;
}

static void add_ref(const char *repo, const char *ref, const char *commit) {
    char p[4096];
    snprintf(p, sizeof p, "%s/refs/%s", repo, ref);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    mkdirs(p);
    *slash = '/';
    write_text(p, commit);   /* huggingface_hub writes the hash without a newline */
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

static const char *const bert_files[] = {"config.json", "model.safetensors", "vocab.txt", NULL};
static const char *const mlm_files[] = {"config.json", "model.safetensors", "tokenizer_config.json",
                                        "vocab.txt", NULL};

/* Attention of "the cat" through a model opened by name, against the folder itself. */
static void check_same_forward(const char *spec, const char *folder) {
    atn_error err = {0};
    atn_model *a = atn_model_open(spec, NULL, NULL, &err);
    CHECK_MSG(a != NULL, "%s: %s", spec, err.message);
    atn_model *b = atn_model_open(folder, NULL, NULL, &err);
    CHECK_MSG(b != NULL, "%s: %s", folder, err.message);
    if (!a || !b) {
        atn_model_free(a);
        atn_model_free(b);
        return;
    }
    atn_encoding *ea = NULL, *eb = NULL;
    CHECK(atn_model_encode(a, "the cat", NULL, &ea, &err) == ATN_OK);
    CHECK(atn_model_encode(b, "the cat", NULL, &eb, &err) == ATN_OK);
    atn_run *ra = atn_run_new(a), *rb = atn_run_new(b);
    CHECK(atn_run_forward(ra, ea, NULL, &err) == ATN_OK);
    CHECK(atn_run_forward(rb, eb, NULL, &err) == ATN_OK);
    const atn_capture *ca = atn_run_capture(ra), *cb = atn_run_capture(rb);
    CHECK(ca && cb && ca->n == cb->n && ca->n > 2);
    if (ca && cb && ca->n == cb->n) {
        size_t n = (size_t)ca->n_layers * ca->n_heads * ca->n * ca->n;
        CHECK(memcmp(ca->attn, cb->attn, n * sizeof(float)) == 0);
    }
    atn_run_free(ra);
    atn_run_free(rb);
    atn_encoding_free(ea);
    atn_encoding_free(eb);
    atn_model_free(a);
    atn_model_free(b);
}

static void test_cache_dir(void) {
    char buf[4096];
    unsetenv("HF_HUB_CACHE");
    unsetenv("HUGGINGFACE_HUB_CACHE");
    unsetenv("HF_HOME");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/student", 1);
    CHECK_STR(atn_hf_cache_dir(buf, sizeof buf), "/home/student/.cache/huggingface/hub");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    CHECK_STR(atn_hf_cache_dir(buf, sizeof buf), "/xdg/huggingface/hub");
    setenv("HF_HOME", "~/hfhome", 1);
    CHECK_STR(atn_hf_cache_dir(buf, sizeof buf), "/home/student/hfhome/hub");
    setenv("HUGGINGFACE_HUB_CACHE", "/legacy", 1);
    CHECK_STR(atn_hf_cache_dir(buf, sizeof buf), "/legacy");
    setenv("HF_HUB_CACHE", "/hubcache", 1);
    CHECK_STR(atn_hf_cache_dir(buf, sizeof buf), "/hubcache");
    setenv("HF_HUB_CACHE", "", 1);   /* empty counts as unset, as in huggingface_hub's constants */
    CHECK_STR(atn_hf_cache_dir(buf, sizeof buf), "/legacy");
    char tiny[5];
    CHECK(atn_hf_cache_dir(tiny, sizeof tiny) == NULL);
    unsetenv("HF_HUB_CACHE");
    unsetenv("HUGGINGFACE_HUB_CACHE");
    unsetenv("HF_HOME");
    unsetenv("XDG_CACHE_HOME");
}

static void test_parse(void) {
    char id[ATN_HF_ID_MAX], rev[ATN_HF_REV_MAX];
    atn_error err = {0};
    CHECK(atn_hf_parse_spec("bert-base-uncased", id, rev, &err) == ATN_OK);
    CHECK_STR(id, "bert-base-uncased");
    CHECK_STR(rev, "main");
    CHECK(atn_hf_parse_spec("FacebookAI/xlm-roberta-base@refs/pr/3", id, rev, &err) == ATN_OK);
    CHECK_STR(id, "FacebookAI/xlm-roberta-base");
    CHECK_STR(rev, "refs/pr/3");
    CHECK(atn_hf_parse_spec("sentence-transformers/all-MiniLM-L6-v2@v1.0", id, rev, &err) == ATN_OK);
    CHECK_STR(rev, "v1.0");
    const char *bad[] = {"", "/abs/path", "./rel", "a/b/c", "a--b/c", "a/../b", "-x/y", "x./y", "a b/c",
                         "org/name@", "org/name@../x", "org/name@/x", "dir/", "~/x", NULL};
    for (int i = 0; bad[i]; i++) {
        CHECK_MSG(atn_hf_parse_spec(bad[i], id, rev, &err) == ATN_E_INVALID, "\"%s\" accepted", bad[i]);
        CHECK(err.message[0] != '\0');
    }
    char folder[64];
    CHECK(atn_hf_repo_folder_name("google-bert/bert-base-uncased", folder, sizeof folder, &err) == ATN_OK);
    CHECK_STR(folder, "models--google-bert--bert-base-uncased");
    CHECK(atn_hf_repo_folder_name("gpt2", folder, sizeof folder, &err) == ATN_OK);
    CHECK_STR(folder, "models--gpt2");
    CHECK(atn_hf_repo_folder_name("google-bert/bert-base-uncased", folder, 20, &err) == ATN_E_INVALID);
    CHECK(atn_hf_cache_id_of_path("/c/models--org--tiny/snapshots/1111111111111111111111111111111111111111",
                                  id, sizeof id));
    CHECK_STR(id, "org/tiny");
    CHECK(atn_hf_cache_id_of_path("/c/models--gpt2/snapshots/abc/0_Transformer", id, sizeof id));
    CHECK_STR(id, "gpt2");
    CHECK(!atn_hf_cache_id_of_path("/home/me/models/tiny", id, sizeof id));
    CHECK_STR(id, "");
}

int main(void) {
    const char *root = getenv("ATN_SOURCE_ROOT");
    snprintf(src_root, sizeof src_root, "%s", root ? root : ".");
    snprintf(tmp_root, sizeof tmp_root, "/tmp/atn-hf-cache-XXXXXX");
    if (!mkdtemp(tmp_root))
        die("mkdtemp", tmp_root);
    const char *home_was = getenv("HOME");
    char *home_copy = home_was ? strdup(home_was) : NULL;

    test_cache_dir();
    test_parse();

    char cache[512], repo[1024], st_repo[1024], p[4096];
    snprintf(cache, sizeof cache, "%s/hub", tmp_root);
    atn_error err = {0};

    /* a missing cache folder is an empty list */
    atn_hf_cache_list *L = NULL;
    CHECK(atn_hf_cache_list_models(cache, &L, &err) == ATN_OK);
    CHECK(L && L->n == 0 && !strcmp(L->cache_dir, cache));
    atn_hf_cache_list_free(L);

    /* org/tiny: main -> C1 (bert f32), v1 and pr/1 -> C2 (mlm), C3 with a dangling weights link */
    snprintf(repo, sizeof repo, "%s/models--org--tiny", cache);
    size_t bytes = add_snapshot(repo, C1, "f32", "", bert_files);
    bytes += add_snapshot(repo, C2, "mlm", "", mlm_files);
    const char *const config_only[] = {"config.json", NULL};
    bytes += add_snapshot(repo, C3, "f32", "", config_only);
    snprintf(p, sizeof p, "%s/snapshots/%s/model.safetensors", repo, C3);
    CHECK(symlink("../../blobs/0000000000000000000000000000000000000000", p) == 0);
    snprintf(p, sizeof p, "%s/blobs/ffffffffffffffffffffffffffffffffffffffff.incomplete", repo);
    write_text(p, "12345");   /* a partial download: on disk, so it counts */
    bytes += 5;
    add_ref(repo, "main", C1);
    add_ref(repo, "v1", C2);
    add_ref(repo, "pr/1", C2);

    /* sentence-transformers/mini: modules.json + 0_Transformer/ holding the model */
    snprintf(st_repo, sizeof st_repo, "%s/models--sentence-transformers--mini", cache);
    const char *const inner[] = {"config.json", "model.safetensors", "vocab.txt", NULL};
    size_t st_bytes = add_snapshot(st_repo, C1, "f32", "0_Transformer", inner);
    snprintf(p, sizeof p, "%s/snapshots/%s/modules.json", st_repo, C1);
    write_text(p, "[{\"idx\": 0, \"name\": \"0\", \"path\": \"0_Transformer\", \"type\": "
                  "\"sentence_transformers.models.Transformer\"}, {\"idx\": 1, \"name\": \"1\", \"path\": "
                  "\"1_Pooling\", \"type\": \"sentence_transformers.models.Pooling\"}]");
    add_ref(st_repo, "main", C1);

    /* not models: a dataset, a lock folder, a stray file */
    snprintf(p, sizeof p, "%s/datasets--org--data/snapshots", cache);
    mkdirs(p);
    snprintf(p, sizeof p, "%s/.locks/models--org--tiny", cache);
    mkdirs(p);
    snprintf(p, sizeof p, "%s/version.txt", cache);
    write_text(p, "1");

    CHECK(atn_hf_cache_list_models(cache, &L, &err) == ATN_OK);
    CHECK_MSG(L && L->n == 2, "%d models", L ? L->n : -1);
    if (L && L->n == 2) {
        const atn_hf_cached_model *t = &L->models[0], *s = &L->models[1];
        CHECK_STR(t->id, "org/tiny");
        CHECK_STR(t->folder, repo);
        CHECK_MSG(t->size == (int64_t)bytes, "size %lld, expected %zu", (long long)t->size, bytes);
        CHECK(t->n_revisions == 3);
        if (t->n_revisions == 3) {
            /* referenced ones first, by commit: C1 (main), C2 (pr/1,v1), then C3 */
            CHECK_STR(t->revisions[0].commit, C1);
            CHECK_STR(t->revisions[0].refs, "main");
            CHECK(t->revisions[0].has_config && t->revisions[0].has_tokenizer && t->revisions[0].has_weights);
            CHECK_STR(t->revisions[0].weights, "safetensors");
            CHECK(!t->revisions[0].sentence_transformers);
            CHECK_STR(t->revisions[1].commit, C2);
            CHECK_STR(t->revisions[1].refs, "pr/1,v1");
            CHECK_STR(t->revisions[2].commit, C3);
            CHECK_STR(t->revisions[2].refs, "");
            CHECK(t->revisions[2].has_config);
            CHECK(!t->revisions[2].has_tokenizer);
            CHECK(!t->revisions[2].has_weights);   /* the dangling link is not weights */
            CHECK_STR(t->revisions[2].weights, "");
            snprintf(p, sizeof p, "%s/snapshots/%s", repo, C3);
            CHECK_STR(t->revisions[2].folder, p);
        }
        CHECK_STR(s->id, "sentence-transformers/mini");
        CHECK(s->size == (int64_t)st_bytes);
        CHECK(s->n_revisions == 1);
        if (s->n_revisions == 1) {
            CHECK(s->revisions[0].sentence_transformers);
            CHECK(s->revisions[0].has_config && s->revisions[0].has_tokenizer && s->revisions[0].has_weights);
        }
    }
    atn_hf_cache_list_free(L);

    /* resolving */
    char out[4096], want[4096];
    snprintf(want, sizeof want, "%s/snapshots/%s", repo, C1);
    CHECK(atn_hf_cache_resolve(cache, "org/tiny", out, sizeof out, &err) == ATN_OK);
    CHECK_STR(out, want);
    CHECK(atn_hf_cache_resolve(cache, "org/tiny@main", out, sizeof out, &err) == ATN_OK);
    CHECK_STR(out, want);
    snprintf(want, sizeof want, "%s/snapshots/%s", repo, C2);
    CHECK(atn_hf_cache_resolve(cache, "org/tiny@v1", out, sizeof out, &err) == ATN_OK);
    CHECK_STR(out, want);
    CHECK(atn_hf_cache_resolve(cache, "org/tiny@pr/1", out, sizeof out, &err) == ATN_OK);
    CHECK_STR(out, want);
    snprintf(p, sizeof p, "org/tiny@%s", C3);   /* a commit hash without a ref */
    snprintf(want, sizeof want, "%s/snapshots/%s", repo, C3);
    CHECK(atn_hf_cache_resolve(cache, p, out, sizeof out, &err) == ATN_OK);
    CHECK_STR(out, want);

    /* unknown model: says what was looked for and where */
    CHECK(atn_hf_cache_resolve(cache, "org/nothere", out, sizeof out, &err) == ATN_E_IO);
    snprintf(want, sizeof want, "org/nothere: not in the Hugging Face cache (looked for %s/models--org--nothere); "
             "`attnscope download org/nothere` fetches it", cache);
    CHECK_STR(err.message, want);
    CHECK_STR(out, "");
    /* unknown branch: lists the cached revisions */
    CHECK(atn_hf_cache_resolve(cache, "org/tiny@dev", out, sizeof out, &err) == ATN_E_IO);
    snprintf(want, sizeof want, "org/tiny@dev: revision \"dev\" is not in the Hugging Face cache (looked for "
             "%s/refs/dev); cached revisions: main (%s), pr/1,v1 (%s), %s; `attnscope download org/tiny@dev` "
             "fetches it", repo, C1, C2, C3);
    CHECK_STR(err.message, want);
    /* a commit that is not there */
    snprintf(p, sizeof p, "org/tiny@%s", "4444444444444444444444444444444444444444");
    CHECK(atn_hf_cache_resolve(cache, p, out, sizeof out, &err) == ATN_E_IO);
    CHECK(strstr(err.message, "4444444444444444444444444444444444444444") && strstr(err.message, "looked for"));
    /* a ref pointing at a snapshot that is gone */
    add_ref(repo, "gone", "5555555555555555555555555555555555555555");
    CHECK(atn_hf_cache_resolve(cache, "org/tiny@gone", out, sizeof out, &err) == ATN_E_IO);
    CHECK(strstr(err.message, "commit 5555555555555555555555555555555555555555") != NULL);
    snprintf(p, sizeof p, "%s/refs/gone", repo);
    unlink(p);
    /* a ref that is not a hash */
    add_ref(repo, "junk", "not a hash\n");
    CHECK(atn_hf_cache_resolve(cache, "org/tiny@junk", out, sizeof out, &err) == ATN_E_IO);
    snprintf(p, sizeof p, "%s/refs/junk", repo);
    unlink(p);
    CHECK(atn_hf_cache_resolve(cache, "not a model id", out, sizeof out, &err) == ATN_E_INVALID);
    CHECK(atn_hf_cache_resolve(cache, "org/tiny", out, 10, &err) == ATN_E_INVALID);

    /* opening through atn_model_open with the cache from the environment */
    setenv("HF_HUB_CACHE", cache, 1);
    atn_model *m = atn_model_open("org/tiny", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        CHECK_STR(atn_model_name(m), "org/tiny");
        CHECK(!atn_model_has_mlm_head(m));
        atn_model_free(m);
    }
    m = atn_model_open("org/tiny@v1", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        CHECK_STR(atn_model_name(m), "org/tiny@v1");
        CHECK(atn_model_has_mlm_head(m));   /* v1 is the mlm model */
        atn_model_free(m);
    }
    snprintf(p, sizeof p, "%s/tests/hf/models/f32", src_root);
    check_same_forward("org/tiny", p);
    snprintf(p, sizeof p, "%s/tests/hf/models/mlm", src_root);
    check_same_forward("org/tiny@pr/1", p);
    /* a snapshot folder given as a path is named by its model id */
    snprintf(p, sizeof p, "%s/snapshots/%s", repo, C1);
    m = atn_model_open(p, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        CHECK_STR(atn_model_name(m), "org/tiny");
        atn_model_free(m);
    }

    CHECK(atn_model_open("org/nothere", NULL, NULL, &err) == NULL);
    snprintf(want, sizeof want, "org/nothere: no such model: no such file or folder, and not in the Hugging Face "
             "cache (looked for %s/models--org--nothere); `attnscope download org/nothere` fetches it; built-in "
             "models: demo, demo-gpt2, worked-example", cache);
    CHECK_STR(err.message, want);
    CHECK(err.status == ATN_E_IO);
    CHECK(atn_model_open("org/tiny@nobranch", NULL, NULL, &err) == NULL);
    CHECK(strstr(err.message, "revision \"nobranch\"") && strstr(err.message, "cached revisions: main"));
    /* the built-in names still win over a cached model of the same name */
    snprintf(p, sizeof p, "%s/models--demo/snapshots/%s", cache, C1);
    mkdirs(p);
    add_ref(strcat(strcpy(p, cache), "/models--demo"), "main", C1);
    m = atn_model_open("demo", NULL, NULL, &err);
    CHECK_MSG(m != NULL && atn_model_config(m)->n_layers == 4, "%s", err.message);
    atn_model_free(m);

    /* sentence-transformers: by id, by the snapshot path, and as a plain folder */
    snprintf(p, sizeof p, "%s/tests/hf/models/f32", src_root);
    check_same_forward("sentence-transformers/mini", p);
    m = atn_model_open("sentence-transformers/mini", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        CHECK_STR(atn_model_name(m), "sentence-transformers/mini");
        atn_model_free(m);
    }
    snprintf(p, sizeof p, "%s/snapshots/%s", st_repo, C1);
    m = atn_model_open(p, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        CHECK_STR(atn_model_name(m), "sentence-transformers/mini");
        atn_model_free(m);
    }
    CHECK(atn_hf_transformer_folder(p, out, sizeof out, &err) == ATN_OK);
    CHECK(strlen(out) == strlen(p) + 14 && !strncmp(out, p, strlen(p)) && !strcmp(out + strlen(p), "/0_Transformer"));

    /* a sentence-transformers folder with the transformer at the root ("path": "") */
    char st2[1024];
    snprintf(st2, sizeof st2, "%s/st-root", tmp_root);
    mkdirs(st2);
    for (int i = 0; bert_files[i]; i++) {
        char from[4096], to[4096];
        snprintf(from, sizeof from, "%s/tests/hf/models/f32/%s", src_root, bert_files[i]);
        snprintf(to, sizeof to, "%s/%s", st2, bert_files[i]);
        copy_file(from, to);
    }
    snprintf(p, sizeof p, "%s/modules.json", st2);
    write_text(p, "[{\"idx\": 0, \"name\": \"0\", \"path\": \"\", \"type\": "
                  "\"sentence_transformers.models.Transformer\"}]");
    CHECK(atn_hf_transformer_folder(st2, out, sizeof out, &err) == ATN_OK);
    CHECK_STR(out, st2);
    snprintf(p, sizeof p, "%s/tests/hf/models/f32", src_root);
    check_same_forward(st2, p);
    m = atn_model_open(st2, NULL, NULL, &err);
    CHECK(m && !strcmp(atn_model_name(m), "st-root"));
    atn_model_free(m);
    /* bad modules.json: refused, naming the file and the problem */
    struct { const char *json, *msg; atn_status st; } bad[] = {
        {"{\"path\": \"\"}", "not a JSON list of modules", ATN_E_FORMAT},
        {"[{\"path\": \"1_Pooling\", \"type\": \"sentence_transformers.models.Pooling\"}]",
         "no module of type sentence_transformers.models.Transformer", ATN_E_FORMAT},
        {"[{\"type\": \"sentence_transformers.models.Transformer\"}]", "[0].path: the Transformer module has no "
         "path string", ATN_E_FORMAT},
        {"[{\"path\": \"../../etc\", \"type\": \"sentence_transformers.models.Transformer\"}]",
         "[0].path \"../../etc\" leaves the model folder", ATN_E_FORMAT},
        {"[{\"path\": \"/etc\", \"type\": \"sentence_transformers.models.Transformer\"}]",
         "[0].path \"/etc\" leaves the model folder", ATN_E_FORMAT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(p, sizeof p, "%s/modules.json", st2);
        write_text(p, bad[i].json);
        m = atn_model_open(st2, NULL, NULL, &err);
        CHECK(m == NULL);
        atn_model_free(m);
        CHECK_MSG(err.status == bad[i].st && strstr(err.message, bad[i].msg) && strstr(err.message, p),
                  "case %zu: %s", i, err.message);
    }
    /* the transformer folder named by modules.json is missing */
    snprintf(p, sizeof p, "%s/modules.json", st2);
    write_text(p, "[{\"path\": \"0_Transformer\", \"type\": \"sentence_transformers.models.Transformer\"}]");
    m = atn_model_open(st2, NULL, NULL, &err);
    CHECK(m == NULL);
    CHECK_MSG(strstr(err.message, "0_Transformer") != NULL, "%s", err.message);

    /* an unreadable cache folder is an error, not an empty list (root reads anything) */
    if (geteuid() != 0) {
        snprintf(p, sizeof p, "%s/locked", tmp_root);
        mkdirs(p);
        chmod(p, 0);
        CHECK(atn_hf_cache_list_models(p, &L, &err) == ATN_E_IO && L == NULL);
        CHECK(strstr(err.message, "cannot read the Hugging Face cache") != NULL);
        chmod(p, 0755);
    }

    unsetenv("HF_HUB_CACHE");
    if (home_copy)
        setenv("HOME", home_copy, 1);
    free(home_copy);
    nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_summary("hf-cache");
}
