/* Filling a masked-LM guess into the text a [MASK] came from, by the token's byte span. */
#include "attnscope.h"

#include <stdlib.h>
#include <string.h>

char *atn_fill_guess(const char *text, const atn_token *tok, const atn_prediction *guess) {
    if (!text || !tok || !guess || !guess->surface || !tok->text)
        return NULL;
    size_t len = strlen(text);
    if (tok->start < 0 || tok->end < tok->start || (size_t)tok->end > len)
        return NULL;
    size_t start = (size_t)tok->start, end = (size_t)tok->end;
    if (end - start != strlen(tok->text) || memcmp(text + start, tok->text, end - start) != 0)
        return NULL;
    size_t before = start;
    while (guess->continuation && before > 0 && text[before - 1] == ' ')
        before--;
    size_t word = strlen(guess->surface), tail = len - end;
    char *out = malloc(before + word + tail + 1);
    if (!out)
        return NULL;
    memcpy(out, text, before);
    memcpy(out + before, guess->surface, word);
    memcpy(out + before + word, text + end, tail + 1);
    return out;
}
