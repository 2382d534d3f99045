/* config.json of a DeBERTa-v2/v3 model (DebertaV2Config): the disentangled attention's keys
 * (engine/formats/hf-deberta.c, called by hf-model.c's read_config). */
#ifndef ATN_HF_DEBERTA_H
#define ATN_HF_DEBERTA_H

#include "core/model-private.h"

#include <cjson/cJSON.h>

/* Reads relative_attention, pos_att_type (a "|"-separated string or a list of "c2p" /
 * "p2c"), max_relative_positions (< 1: max_position_embeddings), position_buckets,
 * share_att_key, norm_rel_ebd ("none" / "layer_norm"), position_biased_input (default
 * true) and type_vocab_size (default 0) of config.json (root, from path) into out and c
 * (c->max_positions, d_model, n_heads read already; c->type_vocab_size is set to 1 when it
 * is 0, *no_types true).  Refused by name (ATN_E_UNSUPPORTED): conv_kernel_size > 0 (the
 * ConvLayer after layer 0), an attention_head_size or embedding_size other than hidden /
 * heads and hidden_size, a pos_att_type or norm_rel_ebd entry HF does not compute here
 * ("p2p"); ATN_E_FORMAT for a malformed value.  Messages "PATH: \"key\" ...". */
atn_status atn_hf_deberta_config(const char *path, const cJSON *root, atn_config *c, atn_deberta *out, bool *no_types,
                                 atn_error *err);

#endif
