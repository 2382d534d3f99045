/* atn_model_encode's refusals as attnscope.h states them: NULL text is ATN_E_INVALID with a
 * message (not an empty sentence), *out stays NULL; an empty text is [CLS] [SEP]. */
#include "attnscope.h"
#include "check.h"

int main(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("demo", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return check_summary("encode");

    static atn_encoding sentinel;
    atn_encoding *e = &sentinel;   /* not NULL, so a refusal must clear it */
    atn_status st = atn_model_encode(m, NULL, NULL, &e, &err);
    CHECK_MSG(st == ATN_E_INVALID, "NULL text gave status %d", (int)st);
    CHECK(e == NULL);
    CHECK_MSG(strstr(err.message, "text") != NULL, "message: %s", err.message);
    if (st == ATN_OK)
        atn_encoding_free(e);

    /* a NULL text with a pair is refused too, not read as "" + pair */
    e = NULL;
    st = atn_model_encode(m, NULL, "the cat", &e, &err);
    CHECK_MSG(st == ATN_E_INVALID, "NULL text with a pair gave status %d", (int)st);
    if (st == ATN_OK)
        atn_encoding_free(e);

    /* an empty text is a sentence with no words: [CLS] [SEP] */
    e = NULL;
    CHECK_MSG(atn_model_encode(m, "", NULL, &e, &err) == ATN_OK, "%s", err.message);
    CHECK(e && e->n == 2 && e->tokens[0].role == ATN_TOKEN_CLS && e->tokens[1].role == ATN_TOKEN_SEP);
    atn_encoding_free(e);

    atn_model_free(m);
    return check_summary("encode");
}
