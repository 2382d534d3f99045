/* atn_error's parts for translation (engine/core/error.c): atn_error_set keeps the format and
 * each argument as printed; atn_error_translate rebuilds the message from a translated
 * format (in order, or numbered "%2$s"), after the prefix atn_error_prefix added; it
 * refuses (and gives the English message) when the translation names other arguments,
 * when the message was written by hand since, or when an argument did not fit. */
#include "check.h"
#include "attnscope.h"

#include <stdint.h>
#include <unistd.h>

static void translate_cases(void) {
    atn_error err = {0};
    char out[2048];

    CHECK(atn_error_set(&err, ATN_E_FORMAT, "%s: \"%s\" is %g; expected a small positive number",
                        "/m/config.json", "layer_norm_eps", -1e-12) == ATN_E_FORMAT);
    CHECK_STR(err.message, "/m/config.json: \"layer_norm_eps\" is -1e-12; expected a small positive number");
    CHECK_STR(err.format, "%s: \"%s\" is %g; expected a small positive number");
    CHECK(err.n_args == 3);
    CHECK_STR(err.args[2], "-1e-12");
    CHECK(atn_error_translate(&err, "%s：“%s”为 %g；应为一个很小的正数", out, sizeof out));
    CHECK_STR(out, "/m/config.json：“layer_norm_eps”为 -1e-12；应为一个很小的正数");
    /* numbered: another order */
    CHECK(atn_error_translate(&err, "“%2$s”（%1$s）= %3$s", out, sizeof out));
    CHECK_STR(out, "“layer_norm_eps”（/m/config.json）= -1e-12");
    /* the English format itself rebuilds the message */
    CHECK(atn_error_translate(&err, err.format, out, sizeof out));
    CHECK_STR(out, err.message);

    /* every kind of conversion the engine's messages use */
    atn_error_set(&err, ATN_E_SHAPE, "%d %ld %lld %u %zu %llu %.3f %.*s", -3, -4L, -5LL, 6u, (size_t)7,
                  18446744073709551615ull, 0.5, 2, "abc");
    CHECK_STR(err.message, "-3 -4 -5 6 7 18446744073709551615 0.500 ab");
    CHECK(err.n_args == 8);
    CHECK(atn_error_translate(&err, "%8$s|%7$s|%6$s|%5$s|%4$s|%3$s|%2$s|%1$s", out, sizeof out));
    CHECK_STR(out, "ab|0.500|18446744073709551615|7|6|-5|-4|-3");
    atn_error_set(&err, ATN_E_IO, "%c%%%x %5.1f %-4s|%p", 'x', 255u, 2.25, "a", (void *)0);
    CHECK(err.format != NULL);
    CHECK(atn_error_translate(&err, "%5$s %4$s %3$s %2$s %1$s 100%%", out, sizeof out));

    /* after a prefix: the prefix stays as it is, the rest is translated */
    atn_error_set(&err, ATN_E_IO, "%s: cannot open: %s", "model-00002.safetensors", "No such file");
    atn_error_prefix(&err, "shard listed in %s", "/m/index.json");
    CHECK_STR(err.message, "shard listed in /m/index.json: model-00002.safetensors: cannot open: No such file");
    CHECK(atn_error_translate(&err, "%s：无法打开：%s", out, sizeof out));
    CHECK_STR(out, "shard listed in /m/index.json: model-00002.safetensors：无法打开：No such file");

    /* refused: too few / unknown arguments, a '*' in the translation, NULL */
    CHECK(!atn_error_translate(&err, "%s %s %s", out, sizeof out));
    CHECK_STR(out, err.message);
    CHECK(!atn_error_translate(&err, "%3$s", out, sizeof out));
    CHECK(!atn_error_translate(&err, "%*s", out, sizeof out));
    CHECK(!atn_error_translate(&err, "%n", out, sizeof out));
    CHECK(!atn_error_translate(&err, NULL, out, sizeof out));
    CHECK_STR(out, err.message);
    CHECK(!atn_error_translate(NULL, "x", out, sizeof out));
    CHECK_STR(out, "");

    /* a message written by hand after it was set is not rebuilt from stale parts */
    atn_error_set(&err, ATN_E_IO, "%s: gone", "a");
    snprintf(err.message, sizeof err.message, "something else");
    CHECK(!atn_error_translate(&err, "%s：没了", out, sizeof out));
    CHECK_STR(out, "something else");
    /* nor is a message whose argument did not fit */
    char big[600];
    memset(big, 'p', sizeof big - 1);
    big[sizeof big - 1] = 0;
    atn_error_set(&err, ATN_E_IO, "%s: gone", big);
    CHECK(err.format == NULL);
    CHECK(!atn_error_translate(&err, "%s：没了", out, sizeof out));
    /* too many arguments */
    atn_error_set(&err, ATN_E_IO, "%d%d%d%d%d%d%d%d%d", 1, 2, 3, 4, 5, 6, 7, 8, 9);
    CHECK_STR(err.message, "123456789");
    CHECK(err.format == NULL);
    /* a small output buffer gets a cut, terminated message */
    atn_error_set(&err, ATN_E_IO, "%s: gone", "abcdef");
    char tiny[5];
    atn_error_translate(&err, "%s：没了", tiny, sizeof tiny);
    CHECK(strlen(tiny) < sizeof tiny);
    atn_error_clear(&err);
    CHECK(err.format == NULL && err.message[0] == 0);
    CHECK(!atn_error_translate(&err, "", out, sizeof out));
}

/* A real engine error: a broken config.json keeps its format and arguments. */
static void engine_case(void) {
    char dir[] = "/tmp/attnscope-error-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    char path[256];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"model_type\": \"bert\", \"hidden_act\": \"swish\"}", f);
    fclose(f);
    atn_error err = {0};
    CHECK(atn_model_open_hf(dir, NULL, NULL, &err) == NULL);
    CHECK(err.format != NULL);
    char out[2048];
    CHECK(atn_error_translate(&err, err.format, out, sizeof out));
    CHECK_STR(out, err.message);
    fprintf(stderr, "engine message: %s\n  format: %s\n", err.message, err.format ? err.format : "(none)");
    remove(path);
    rmdir(dir);
}

int main(void) {
    translate_cases();
    engine_case();
    return check_summary("engine-error");
}
