/* The session and lesson file parsers (ui/atn-session-file.c, ui/atn-lesson.c) with GLib
 * alone: no display, no model.  A saved state reads back field by field; every kind of bad
 * file is refused with a message naming the file and the key; the built-in lessons all read,
 * in English and Chinese, with placeholders that parse; placeholders fill from given numbers
 * (the worked example's correct softmax, hand-computed in the seeds' README). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atn-lesson.h"
#include "atn-session-file.h"

static char *tmpdir;

static char *write_tmp(const char *name, const char *text) {
    char *path = g_build_filename(tmpdir, name, NULL);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static void test_round_trip(void) {
    AtnSessionState s, back;
    atn_session_state_init(&s);
    atn_session_state_init(&back);
    atn_session_state_set_model_source(&s, "org/some-model@v1.2");
    g_assert_cmpint(s.model_kind, ==, ATN_SESSION_MODEL_HUB);
    g_assert_cmpstr(s.model, ==, "org/some-model");
    g_assert_cmpstr(s.revision, ==, "v1.2");
    s.text = g_strdup("我爱你 \"quoted\"");
    s.text_pair = g_strdup("second");
    s.view = g_strdup("whatif");
    s.layer = 3, s.head = 7, s.query = 11;
    s.colormap = g_strdup("magma");
    s.color_scale = g_strdup("fixed");
    s.precision = g_strdup("bf16");
    s.has_whatif = TRUE;
    s.heads_off = g_array_new(FALSE, FALSE, sizeof(int));
    int pairs[] = {0, 2, 1, 3};
    g_array_append_vals(s.heads_off, pairs, 4);
    s.uniform = TRUE;
    s.causal = TRUE;
    s.window = 2;
    s.global_tokens = g_array_new(FALSE, FALSE, sizeof(int));
    int g[] = {0, 5};
    g_array_append_vals(s.global_tokens, g, 2);
    s.alibi = TRUE;
    s.shuffle = TRUE;
    s.shuffle_seed = 42;
    s.temperature = 0.5;
    g_autofree char *text = atn_session_file_to_text(&s);
    g_assert_true(g_str_has_prefix(text, "{\n\t\"format\":\t\"attnscope-session/1\""));
    GError *error = NULL;
    g_assert_true(atn_session_file_parse(text, strlen(text), "/x/s.json", &back, &error));
    g_assert_no_error(error);
    g_assert_cmpint(back.model_kind, ==, ATN_SESSION_MODEL_HUB);
    g_assert_cmpstr(back.model, ==, "org/some-model");
    g_assert_cmpstr(back.revision, ==, "v1.2");
    g_autofree char *src = atn_session_state_model_source(&back);
    g_assert_cmpstr(src, ==, "org/some-model@v1.2");
    g_assert_cmpstr(back.text, ==, "我爱你 \"quoted\"");
    g_assert_cmpstr(back.text_pair, ==, "second");
    g_assert_cmpstr(back.view, ==, "whatif");
    g_assert_cmpint(back.layer, ==, 3);
    g_assert_cmpint(back.head, ==, 7);
    g_assert_cmpint(back.query, ==, 11);
    g_assert_cmpstr(back.colormap, ==, "magma");
    g_assert_cmpstr(back.color_scale, ==, "fixed");
    g_assert_cmpstr(back.precision, ==, "bf16");
    g_assert_true(back.has_whatif);
    g_assert_cmpuint(back.heads_off->len, ==, 4);
    for (int i = 0; i < 4; i++)
        g_assert_cmpint(g_array_index(back.heads_off, int, i), ==, pairs[i]);
    g_assert_true(back.uniform && back.causal && back.alibi && back.shuffle && !back.no_positions);
    g_assert_cmpint(back.window, ==, 2);
    g_assert_cmpuint(back.global_tokens->len, ==, 2);
    g_assert_cmpint(g_array_index(back.global_tokens, int, 1), ==, 5);
    g_assert_cmpuint(back.shuffle_seed, ==, 42);
    g_assert_cmpfloat(back.temperature, ==, 0.5);
    /* a path is made absolute against the session file's folder */
    const char *rel = "{\"format\": \"attnscope-session/1\", \"model\": {\"path\": \"models/m\"}}";
    g_assert_true(atn_session_file_parse(rel, strlen(rel), "/teach/day1/s.json", &back, &error));
    g_assert_cmpint(back.model_kind, ==, ATN_SESSION_MODEL_PATH);
    g_assert_cmpstr(back.model, ==, "/teach/day1/models/m");
    g_assert_cmpint(back.layer, ==, -1);   /* unset stays unset */
    g_assert_false(back.has_whatif);
    atn_session_state_clear(&s);
    atn_session_state_clear(&back);
}

/* Each bad file: the error's code and the key its message names. */
static void test_bad_files(void) {
    static const struct {
        const char *text, *key;
        int code;
    } cases[] = {
        {"not json at all", NULL, ATN_SESSION_FILE_ERROR_JSON},
        {"[1, 2]", "must be a JSON object", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"model\": {\"builtin\": \"demo\"}}", "“format”", ATN_SESSION_FILE_ERROR_VERSION},
        {"{\"format\": \"attnscope-session/2\", \"model\": {\"builtin\": \"demo\"}}", "“format”: version “attnscope-session/2”",
         ATN_SESSION_FILE_ERROR_VERSION},
        {"{\"format\": \"attnscope-attention/1\"}", "“format”", ATN_SESSION_FILE_ERROR_VERSION},
        {"{\"format\": \"attnscope-session/1\"}", "“model”: is missing", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": \"demo\"}", "“model”: must be an object", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {}}", "“model”: must have one", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"nope\"}}", "“model.builtin”: “nope” is not one of",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\", \"hub\": \"a/b\"}}", "“model”: names more",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"hub\": \"nohub\"}}", "“model.hub”", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\", \"revision\": \"x\"}}", "“model.revision”",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"layer\": \"3\"}", "“layer”: must be a whole",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"head\": -1}", "“head”: must be from 0",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"query\": 1.5}", "“query”",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"text\": 7}", "“text”: must be a string",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"view\": \"graph\"}", "“view”",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"colormap\": \"rainbow\"}", "“colormap”",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"color_scale\": true}", "“color_scale”",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"precision\": \"int8\"}", "“precision”",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"whatif\": [1]}", "“whatif”: must be an object",
         ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"whatif\": {\"heads_off\": [[0, 1], [2]]}}",
         "“whatif.heads_off[1]”: must be a [layer, head] pair", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"whatif\": {\"causal\": 1}}",
         "“whatif.causal”: must be true or false", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"whatif\": {\"global_tokens\": [0]}}",
         "“whatif.global_tokens”: needs", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"whatif\": {\"temperature\": 0}}",
         "“whatif.temperature”", ATN_SESSION_FILE_ERROR_KEY},
        {"{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}, \"whatif\": {\"hide_tokens\": [\"a\"]}}",
         "“whatif.hide_tokens[0]”", ATN_SESSION_FILE_ERROR_KEY},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *name = g_strdup_printf("bad-%u.json", i);
        g_autofree char *path = write_tmp(name, cases[i].text);
        AtnSessionState s;
        atn_session_state_init(&s);
        s.text = g_strdup("left over");   /* cleared by a failed load too */
        GError *error = NULL;
        g_assert_false(atn_session_file_load(path, &s, &error));
        g_assert_error(error, ATN_SESSION_FILE_ERROR, cases[i].code);
        if (g_test_verbose())
            g_printerr("%s\n", error->message);
        g_assert_true(g_str_has_prefix(error->message, path));
        if (cases[i].key && !strstr(error->message, cases[i].key))
            g_error("case %u: “%s” does not name %s", i, error->message, cases[i].key);
        g_assert_null(s.text);
        g_assert_null(s.model);
        g_error_free(error);
    }
    /* not there, too large */
    GError *error = NULL;
    AtnSessionState s;
    atn_session_state_init(&s);
    g_autofree char *missing = g_build_filename(tmpdir, "missing.attnscope-session", NULL);
    g_assert_false(atn_session_file_load(missing, &s, &error));
    g_assert_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_READ);
    g_assert_nonnull(strstr(error->message, "missing.attnscope-session"));
    g_clear_error(&error);
    g_autofree char *big = g_strnfill((1 << 20) + 10, ' ');
    g_autofree char *bigpath = write_tmp("big.json", big);
    g_assert_false(atn_session_file_load(bigpath, &s, &error));
    g_assert_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_READ);
    g_clear_error(&error);
}

/* A model that is not there: a path, a Hub id the (empty) cache does not hold. */
static void test_missing_model(void) {
    const char *texts[] = {"{\"format\": \"attnscope-session/1\", \"model\": {\"path\": \"no/such/folder\"}}",
                           "{\"format\": \"attnscope-session/1\", \"model\": {\"hub\": \"nobody/nothing\"}}",
                           "{\"format\": \"attnscope-session/1\", \"model\": {\"builtin\": \"demo\"}}"};
    const char *keys[] = {"“model.path”", "“model.hub”", NULL};
    for (int i = 0; i < 3; i++) {
        g_autofree char *path = write_tmp("m.attnscope-session", texts[i]);
        AtnSessionState s;
        atn_session_state_init(&s);
        GError *error = NULL;
        g_assert_true(atn_session_file_load(path, &s, &error));
        gboolean there = atn_session_state_check_model(&s, path, &error);
        if (!keys[i])
            g_assert_true(there);
        else {
            g_assert_false(there);
            g_assert_nonnull(strstr(error->message, keys[i]));
            g_assert_true(g_str_has_prefix(error->message, path));
            g_clear_error(&error);
        }
        g_assert_true(atn_session_file_sniff(path));
        atn_session_state_clear(&s);
    }
    g_autofree char *other = write_tmp("other.json", "{\"format\": \"attnscope-lesson/1\"}");
    g_assert_false(atn_session_file_sniff(other));
}

/* Numbers for the placeholders: the worked example's head 0 (the seeds' README: query 0's
 * softmax [0.3760, 0.4487, 0.1752], 4 decimals), tokens 我 爱 你. */
static const double worked[3][3] = {{0.37602, 0.44873, 0.17524}, {0.3, 0.4, 0.3}, {0.2, 0.3, 0.5}};
static gboolean fake_attn(gpointer d, int l, int h, int q, int k, double *out) {
    if (l != 0 || h != 0 || q > 2 || k > 2)
        return FALSE;
    *out = worked[q][k];
    return TRUE;
}
static int fake_n(gpointer d) { return 3; }
static char *fake_token(gpointer d, int i) {
    static const char *t[] = {"我", "爱", "你"};
    return i < 3 ? g_strdup(t[i]) : NULL;
}

static void test_placeholders(void) {
    AtnLessonValues v = {fake_attn, fake_n, fake_token, NULL};
    g_autofree char *a = atn_lesson_fill("softmax {row layer=0 head=0 q=0}; {token i=1} gets {attn layer=0 head=0 q=0 k=1} "
                                         "of {n_tokens}; {{literal}} {attn layer=3 head=0 q=0 k=0} {token i=9}",
                                         &v);
    g_assert_cmpstr(a, ==, "softmax [0.3760, 0.4487, 0.1752]; 爱 gets 0.4487 of 3; {literal} ? ?");
    g_autofree char *none = atn_lesson_fill("w {attn layer=0 head=0 q=0 k=1}", NULL);
    g_assert_cmpstr(none, ==, "w …");
    static const char *bad[][2] = {
        {"{attn layer=0 head=0 q=0}", "key “k” is missing"},
        {"{attn layer=0 head=0 q=0 k=x}", "must be key=number"},
        {"{attn layer=0 head=0 q=0 k=1 z=2}", "unknown key “z”"},
        {"{score layer=0}", "{score}: unknown placeholder"},
        {"{token}", "key “i” is missing"},
        {"open { brace", "without its"},
        {"{}", "empty placeholder"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *why = NULL;
        g_assert_false(atn_lesson_check_placeholders(bad[i][0], &why));
        if (!strstr(why, bad[i][1]))
            g_error("“%s”: “%s” does not say %s", bad[i][0], why, bad[i][1]);
    }
}

static void test_lesson_files(void) {
    const char *good = "{\"format\": \"attnscope-lesson/1\", \"title\": {\"en\": \"T\", \"zh_CN\": \"题\"},"
                       " \"steps\": [{\"state\": {\"model\": {\"builtin\": \"worked-example\"}, \"head\": 1},"
                       " \"question\": \"Q {token i=0}\", \"answer\": {\"en\": \"A\", \"zh\": \"答\"}}]}";
    g_autofree char *path = write_tmp("lesson.json", good);
    GError *error = NULL;
    g_autoptr(AtnLesson) en = atn_lesson_load(path, "en", &error);
    g_assert_no_error(error);
    g_assert_cmpstr(en->title, ==, "T");
    AtnLessonStep *st = g_ptr_array_index(en->steps, 0);
    g_assert_cmpstr(st->question, ==, "Q {token i=0}");
    g_assert_cmpstr(st->answer, ==, "A");
    g_assert_cmpint(st->state.head, ==, 1);
    g_assert_cmpint(st->state.layer, ==, -1);
    g_assert_cmpint(st->state.model_kind, ==, ATN_SESSION_MODEL_BUILTIN);
    g_autoptr(AtnLesson) zh = atn_lesson_load(path, "zh-cn", &error);   /* the interface's tag, as Pango writes it */
    g_assert_no_error(error);
    g_assert_cmpstr(zh->title, ==, "题");
    g_assert_cmpstr(((AtnLessonStep *)g_ptr_array_index(zh->steps, 0))->answer, ==, "答");   /* "zh" for zh_CN */
    g_autoptr(AtnLesson) fr = atn_lesson_load(path, "fr", &error);   /* English when the language is not there */
    g_assert_cmpstr(fr->title, ==, "T");

    static const char *bad[][2] = {
        {"{\"format\": \"attnscope-lesson/2\", \"title\": \"t\", \"steps\": []}", "version “attnscope-lesson/2”"},
        {"{\"format\": \"attnscope-lesson/1\", \"steps\": []}", "key “title”: is missing"},
        {"{\"format\": \"attnscope-lesson/1\", \"title\": \"t\", \"steps\": []}", "key “steps”"},
        {"{\"format\": \"attnscope-lesson/1\", \"title\": \"t\", \"steps\": [{\"question\": \"q\"}]}", "steps[0]: key “answer”"},
        {"{\"format\": \"attnscope-lesson/1\", \"title\": \"t\", \"steps\": [{\"question\": \"q\", \"answer\": \"a\"},"
         " {\"question\": \"q\", \"answer\": \"{attn layer=0}\"}]}", "steps[1]: key “answer”: {attn}: key “head” is missing"},
        {"{\"format\": \"attnscope-lesson/1\", \"title\": \"t\", \"steps\": [{\"state\": {\"layer\": \"x\"}, \"question\": \"q\","
         " \"answer\": \"a\"}]}", "steps[0].state: key “layer”"},
        {"{\"format\": \"attnscope-lesson/1\", \"title\": {\"en\": 3}, \"steps\": []}", "key “title"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *p = write_tmp("bad-lesson.json", bad[i][0]);
        g_autoptr(AtnLesson) l = atn_lesson_load(p, "en", &error);
        g_assert_null(l);
        g_assert_nonnull(error);
        if (!strstr(error->message, bad[i][1]) || !g_str_has_prefix(error->message, p))
            g_error("lesson %u: “%s” does not name %s", i, error->message, bad[i][1]);
        g_clear_error(&error);
    }
}

/* Every built-in lesson reads in both languages, with the same steps and states, and each
 * names a model in its first step (a lesson opened from any model starts where it means to). */
static void test_builtin_lessons(void) {
    g_auto(GStrv) paths = atn_lesson_builtin_paths();
    g_assert_cmpuint(g_strv_length(paths), >=, 5);
    for (char **p = paths; *p; p++) {
        GError *error = NULL;
        g_autoptr(AtnLesson) en = atn_lesson_load(*p, "en", &error);
        g_assert_no_error(error);
        g_autoptr(AtnLesson) zh = atn_lesson_load(*p, "zh-cn", &error);
        g_assert_no_error(error);
        g_assert_cmpstr(en->title, !=, zh->title);
        g_assert_cmpuint(en->steps->len, ==, zh->steps->len);
        g_assert_cmpuint(en->steps->len, >=, 2);
        g_assert_cmpint(((AtnLessonStep *)g_ptr_array_index(en->steps, 0))->state.model_kind, !=, ATN_SESSION_MODEL_NONE);
        for (guint i = 0; i < en->steps->len; i++) {
            AtnLessonStep *a = g_ptr_array_index(en->steps, i), *b = g_ptr_array_index(zh->steps, i);
            g_assert_cmpstr(a->question, !=, b->question);
            g_assert_cmpstr(a->answer, !=, b->answer);
            g_assert_cmpint(a->state.layer, ==, b->state.layer);
            g_assert_cmpint(a->state.head, ==, b->state.head);
            g_assert_cmpint(a->state.query, ==, b->state.query);
        }
    }
}

int main(int argc, char **argv) {
    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("session-file-XXXXXX", NULL);
    g_autofree char *hf = g_build_filename(tmpdir, "hf", NULL);
    g_setenv("HF_HOME", hf, TRUE);   /* an empty Hugging Face cache */
    g_setenv("HF_HUB_CACHE", hf, TRUE);
    g_test_add_func("/session-file/round-trip", test_round_trip);
    g_test_add_func("/session-file/bad-files", test_bad_files);
    g_test_add_func("/session-file/missing-model", test_missing_model);
    g_test_add_func("/lesson/placeholders", test_placeholders);
    g_test_add_func("/lesson/files", test_lesson_files);
    g_test_add_func("/lesson/builtin", test_builtin_lessons);
    int rc = g_test_run();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    g_free(tmpdir);
    return rc;
}
