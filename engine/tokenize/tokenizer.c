/* The tokenizer interface's wrappers: argument checks, then the implementation's ops. */
#include "tokenize/tokenizer.h"

#include <stddef.h>

void atn_tokenizer_free(atn_tokenizer *tok) {
    if (tok)
        tok->ops->free(tok);
}

const char *atn_tokenizer_kind(const atn_tokenizer *tok) {
    return tok ? tok->ops->kind : "";
}

int32_t atn_tokenizer_vocab_size(const atn_tokenizer *tok) {
    return tok ? tok->ops->vocab_size(tok) : 0;
}

int32_t atn_tokenizer_token_to_id(const atn_tokenizer *tok, const char *token) {
    return tok && token ? tok->ops->token_to_id(tok, token) : -1;
}

bool atn_tokenizer_id_info(const atn_tokenizer *tok, int32_t id, atn_vocab_entry *out) {
    if (!tok || !out)
        return false;
    atn_vocab_entry v = {.role = ATN_TOKEN_WORD};
    if (!tok->ops->id_info(tok, id, &v))
        return false;
    *out = v;
    return true;
}

const char *atn_tokenizer_id_to_token(const atn_tokenizer *tok, int32_t id) {
    atn_vocab_entry v;
    return atn_tokenizer_id_info(tok, id, &v) ? v.text : NULL;
}

int32_t atn_tokenizer_special_id(const atn_tokenizer *tok, atn_token_role role) {
    return tok && role != ATN_TOKEN_WORD ? tok->ops->special_id(tok, role) : -1;
}

atn_status atn_tokenizer_encode(const atn_tokenizer *tok, const char *text,
                                const char *text_pair, int32_t max_len, atn_encoding **out,
                                atn_error *err) {
    if (out)
        *out = NULL;
    if (!tok || !text || !out)
        return atn_error_set(err, ATN_E_INVALID, "atn_tokenizer_encode: %s is NULL",
                             !tok ? "the tokenizer" : !text ? "the text" : "out");
    return tok->ops->encode(tok, text, text_pair, max_len, out, err);
}
