/* The model-family tables (engine/family.h).  Names and defaults are Hugging Face's:
 * BertConfig for the config keys, BertModel / BertForMaskedLM for the tensor names. */
#include "family.h"

#include <stdio.h>
#include <string.h>

static const atn_family families[] = {
    {
        .name = "BERT",
        .model_types = {"bert", NULL},
        .config = {
            .d_model = "hidden_size",
            .n_layers = "num_hidden_layers",
            .n_heads = "num_attention_heads",
            .d_ffn = "intermediate_size",
            .vocab_size = "vocab_size",
            .max_positions = "max_position_embeddings", .max_positions_default = 512,
            .type_vocab_size = "type_vocab_size", .type_vocab_size_default = 2,
            .act = "hidden_act", .act_default = "gelu",
            .ln_eps = "layer_norm_eps", .ln_eps_default = 1e-12f,
            .position_type = "position_embedding_type", .position_type_default = "absolute",
        },
        .tensors = {
            .prefixes = {"bert.", "", NULL},
            .word_emb = "embeddings.word_embeddings.weight",
            .pos_emb = "embeddings.position_embeddings.weight",
            .type_emb = "embeddings.token_type_embeddings.weight",
            .emb_ln_w = "embeddings.LayerNorm.weight",
            .emb_ln_b = "embeddings.LayerNorm.bias",
            .layer = "encoder.layer.",
            .wq = "attention.self.query.weight", .bq = "attention.self.query.bias",
            .wk = "attention.self.key.weight", .bk = "attention.self.key.bias",
            .wv = "attention.self.value.weight", .bv = "attention.self.value.bias",
            .wo = "attention.output.dense.weight", .bo = "attention.output.dense.bias",
            .ln1_w = "attention.output.LayerNorm.weight", .ln1_b = "attention.output.LayerNorm.bias",
            .w1 = "intermediate.dense.weight", .b1 = "intermediate.dense.bias",
            .w2 = "output.dense.weight", .b2 = "output.dense.bias",
            .ln2_w = "output.LayerNorm.weight", .ln2_b = "output.LayerNorm.bias",
            .legacy_layernorm = true,
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = true,
        .mlm = {
            .what = "cls.predictions.*",
            .dense_w = "cls.predictions.transform.dense.weight",
            .dense_b = "cls.predictions.transform.dense.bias",
            .ln_w = "cls.predictions.transform.LayerNorm.weight",
            .ln_b = "cls.predictions.transform.LayerNorm.bias",
            .decoder_w = "cls.predictions.decoder.weight",
            .bias = {"cls.predictions.bias", "cls.predictions.decoder.bias"},
        },
        .tokenizer = "wordpiece",
        .vocab_file = "vocab.txt",
    },
};

enum { N_FAMILIES = sizeof families / sizeof families[0] };

const atn_family *atn_family_bert(void) { return &families[0]; }

int32_t atn_family_count(void) { return N_FAMILIES; }

const atn_family *atn_family_at(int32_t i) { return i >= 0 && i < N_FAMILIES ? &families[i] : NULL; }

const atn_family *atn_family_lookup(const char *model_type, const char *where, atn_error *err) {
    for (int32_t i = 0; model_type && i < N_FAMILIES; i++)
        for (const char *const *t = families[i].model_types; *t; t++)
            if (strcmp(*t, model_type) == 0)
                return &families[i];
    char list[512];
    size_t len = 0;
    list[0] = '\0';
    for (int32_t i = 0; i < N_FAMILIES; i++)
        for (const char *const *t = families[i].model_types; *t; t++) {
            int k = snprintf(list + len, sizeof list - len, "%s\"%s\"", len ? ", " : "", *t);
            if (k < 0 || (size_t)k >= sizeof list - len)
                break;
            len += (size_t)k;
        }
    if (!model_type)
        atn_error_set(err, ATN_E_UNSUPPORTED, "%s: no \"model_type\" (supported: %s)",
                      where ? where : "config.json", list);
    else
        atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"model_type\" is \"%.64s\", which attnscope does not "
                      "open (supported: %s)", where ? where : "config.json", model_type, list);
    return NULL;
}

void atn_family_position_ids(const atn_family *f, const atn_encoding *enc, int32_t *pos) {
    switch (f->positions) {
    case ATN_POSITIONS_FROM_0:
        for (int32_t i = 0; i < enc->n; i++)
            pos[i] = i;
        break;
    }
}
