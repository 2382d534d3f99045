/* Filling a masked-LM guess into the sentence (atn_fill_guess): by the [MASK] token's byte
 * span in its own segment, so a "[MASK]" written elsewhere (twice, or inside a word) is
 * never the one replaced, and a continuation guess joins the word before it. */
#include "attnscope.h"
#include "check.h"

static atn_prediction guess(const char *surface, bool continuation) {
    atn_prediction p = {.id = 0, .token = surface, .prob = 1, .surface = surface, .continuation = continuation};
    return p;
}

/* The index of the n-th (0-based) [MASK] token of e, or -1. */
static int nth_mask(const atn_encoding *e, int n) {
    for (int i = 0; e && i < e->n; i++)
        if (e->tokens[i].role == ATN_TOKEN_MASK && n-- == 0)
            return i;
    return -1;
}

static void check_fill(const char *text, const atn_token *tok, atn_prediction g, const char *want) {
    char *got = atn_fill_guess(text, tok, &g);
    if (want)
        CHECK_STR(got, want);
    else
        CHECK_MSG(got == NULL, "filling \"%s\" gave \"%s\", expected nothing", text, got);
    free(got);
}

int main(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("demo", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return check_summary("fill");

    /* "[MASK]" written twice: the second token fills the second place only */
    const char *two = "the [MASK] sat on the [MASK] .";
    atn_encoding *e = NULL;
    CHECK(atn_model_encode(m, two, NULL, &e, &err) == ATN_OK);
    int first = nth_mask(e, 0), second = nth_mask(e, 1);
    CHECK(first > 0 && second > first);
    if (second > 0) {
        check_fill(two, &e->tokens[second], guess("mat", false), "the [MASK] sat on the mat .");
        check_fill(two, &e->tokens[first], guess("cat", false), "the cat sat on the [MASK] .");
        /* a continuation joins the word before, dropping the spaces between */
        check_fill(two, &e->tokens[second], guess("s", true), "the [MASK] sat on thes .");
        /* the text changed since it was encoded: the span no longer reads [MASK] */
        check_fill("the [MASK] sat on the mat .", &e->tokens[second], guess("x", false), NULL);
        check_fill("the", &e->tokens[second], guess("x", false), NULL);   /* span past the end */
        check_fill(two, &e->tokens[0], guess("x", false), NULL);          /* [CLS]: no span */
        check_fill(NULL, &e->tokens[second], guess("x", false), NULL);
        check_fill(two, NULL, guess("x", false), NULL);
        CHECK(atn_fill_guess(two, &e->tokens[second], NULL) == NULL);
    }
    atn_encoding_free(e);

    /* "[MASK]" inside a word before the real one: strstr would find "x[MASK]y" first */
    const char *inside = "x[MASK]y and [MASK]";
    CHECK(atn_model_encode(m, inside, NULL, &e, &err) == ATN_OK);
    second = nth_mask(e, 1);
    CHECK(second > 0);
    if (second > 0)
        check_fill(inside, &e->tokens[second], guess("more", false), "x[MASK]y and more");
    atn_encoding_free(e);

    /* a pair: the token's span is in the second text (its segment) */
    const char *a = "a [MASK] b", *b = "[MASK] c";
    CHECK(atn_model_encode(m, a, b, &e, &err) == ATN_OK);
    second = nth_mask(e, 1);
    CHECK(second > 0 && e->tokens[second].segment == 1);
    if (second > 0) {
        check_fill(b, &e->tokens[second], guess("the", false), "the c");
        check_fill(b, &e->tokens[second], guess("s", true), "s c");   /* nothing before to join */
    }
    atn_encoding_free(e);
    atn_model_free(m);
    return check_summary("fill");
}
