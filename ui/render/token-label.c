/* How every view and figure shows a token: the one function (atn_render_token_label) the
 * window's chips, axes, trace, guesses and what-if chips and the command line's figures all
 * call, so a GPT-2 piece reads "␣the" everywhere and never "\u0120the". */
#include "render.h"

#include <stdlib.h>
#include <string.h>

char *atn_render_token_label(const char *text, const atn_token_info *info) {
    if (!text)
        text = "";
    if (!info || info->special || info->continuation || !info->surface || !strcmp(info->surface, text))
        return strdup(text);
    /* each space becomes "␣" (3 bytes in UTF-8) */
    size_t spaces = 0, len = strlen(info->surface);
    for (const char *c = info->surface; *c; c++)
        spaces += *c == ' ';
    char *out = malloc(len + 2 * spaces + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *c = info->surface; *c; c++) {
        if (*c == ' ') {
            memcpy(o, "\u2423", 3);   /* ␣: the space the piece starts its word with */
            o += 3;
        } else {
            *o++ = *c;
        }
    }
    *o = 0;
    return out;
}

char *atn_render_prediction_label(const atn_model *model, const atn_prediction *guess) {
    if (!guess)
        return NULL;
    atn_token_info info;
    bool have = model && atn_model_token_info(model, guess->id, &info);
    return atn_render_token_label(guess->token, have ? &info : NULL);
}

char **atn_render_token_labels(const atn_model *model, const atn_encoding *enc) {
    if (!enc)
        return NULL;
    char **labels = calloc((size_t)enc->n + 1, sizeof *labels);
    if (!labels)
        return NULL;
    for (int32_t i = 0; i < enc->n; i++) {
        atn_token_info info;
        bool have = model && atn_model_token_info(model, enc->tokens[i].id, &info);
        char *guess = NULL;
        if (!model && !enc->tokens[i].special && (guess = atn_token_surface_guess(enc->tokens[i].text))) {
            /* no tokenizer (an attention file): a byte-level piece still reads as its text */
            info = (atn_token_info){.text = enc->tokens[i].text, .surface = guess};
            have = true;
        }
        labels[i] = atn_render_token_label(enc->tokens[i].text, have ? &info : NULL);
        free(guess);
        if (!labels[i]) {
            atn_render_token_labels_free(labels);
            return NULL;
        }
    }
    return labels;
}

void atn_render_token_labels_free(char **labels) {
    if (!labels)
        return;
    for (char **l = labels; *l; l++)
        free(*l);
    free(labels);
}

int32_t atn_render_pair_split(const atn_encoding *enc) {
    if (!enc)
        return 0;
    for (int32_t i = 1; i < enc->n; i++)
        if (enc->tokens[i].type_id == 1)
            return i;
    for (int32_t i = 1; i < enc->n; i++)
        if (enc->tokens[i].segment == 1)
            return i;
    return 0;
}
