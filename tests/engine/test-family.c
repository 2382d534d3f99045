/* The model-family table (engine/core/family.h): model_type -> family, the refusal of an
 * unknown model_type (naming config.json's value and listing the supported ones, the same
 * message from the table and from the loader), the table's completeness, and the
 * position rule. */
#include "check.h"
#include "attnscope.h"
#include "core/family.h"
#include "core/model-private.h"
#include "tokenize/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every name a family must have is there (a new entry cannot forget one silently). */
static void table_complete(void) {
    CHECK(atn_family_count() >= 1);
    CHECK(atn_family_at(0) == atn_family_bert());
    CHECK(atn_family_at(-1) == NULL && atn_family_at(atn_family_count()) == NULL);
    for (int32_t i = 0; i < atn_family_count(); i++) {
        const atn_family *f = atn_family_at(i);
        CHECK(f && f->name && f->model_types[0]);
        const atn_family_config *k = &f->config;
        CHECK_MSG(k->d_model && k->n_layers && k->n_heads && (k->d_ffn || k->d_ffn_default_mult) && k->vocab_size,
                  "%s: size keys", f->name);
        CHECK(k->act_default && k->position_type_default && k->ln_eps_default > 0);
        CHECK(k->max_positions_default > 0 && k->type_vocab_size_default > 0);
        const atn_family_tensors *t = &f->tensors;
        CHECK_MSG(t->prefixes[0] != NULL, "%s: no prefixes", f->name);
        /* a fused q/k/v tensor (GPT-2) stands for the three; a pre-LN family has a final
           LayerNorm instead of the embeddings' */
        bool fused = t->qkv_w != NULL;
        /* a rotary decoder has no position table and RMSNorms without bias, but a gated MLP
           whose gate it names, and its own LM head */
        bool rot = f->rotary;
        /* an ALiBi decoder (BLOOM) has no position table but the embeddings' LayerNorm;
           ModernBERT: no position table, bias-free norms (an embedding norm and a final one),
           the fused Wqkv and Wi */
        bool enc = f->rotary_encoder;
        CHECK(!enc || (f->pre_ln && !f->causal && !t->pos_emb && !t->ln1_b && !t->ln2_b && !t->final_ln_b &&
                       !t->emb_ln_b && t->emb_ln_w && t->final_ln_w && t->qkv_w && !f->mlm.ln_b));
        const char *names[] = {t->word_emb, rot ? t->gate_w : f->alibi || enc ? t->emb_ln_w : t->pos_emb,
                               f->pre_ln ? t->final_ln_w : t->emb_ln_w,
                               rot ? t->gate_b : enc ? t->qkv_b : f->pre_ln ? t->final_ln_b : t->emb_ln_b, t->layer,
                               fused ? t->qkv_w : t->wq, fused ? t->qkv_b : t->bq, fused ? t->qkv_w : t->wk,
                               fused ? t->qkv_b : t->bk, fused ? t->qkv_w : t->wv, fused ? t->qkv_b : t->bv, t->wo,
                               t->bo, t->ln1_w, rot ? t->lm_head_w : enc ? t->ln2_w : t->ln1_b, t->w1, t->b1, t->w2, t->b2, t->ln2_w,
                               rot ? t->lm_head_w : enc ? t->w2 : t->ln2_b};
        CHECK(!rot || (f->pre_ln && f->causal && !t->pos_emb && !t->ln1_b && !t->ln2_b && !t->final_ln_b &&
                       !t->emb_ln_w && f->config.kv_heads && f->config.rope_theta && f->config.rope_theta_default > 1));
        CHECK(!f->alibi || (f->pre_ln && f->causal && !rot && !t->pos_emb && t->emb_ln_w && t->emb_ln_b &&
                            fused && t->qkv_per_head));
        /* an encoder-decoder's names are engine/formats/hf-encdec.c's (two stacks, cross-attention):
           the table has only the shared embeddings; pre-norm T5, post-norm BART / Marian, bidirectional
           encoders, no masked-LM head */
        CHECK(!f->encdec || (f->pre_ln == (f->encdec == 1) && !f->causal && t->word_emb && !t->layer && !t->pos_emb && !f->mlm.dense_w));
        for (size_t j = 0; !f->encdec && j < sizeof names / sizeof names[0]; j++)
            CHECK_MSG(names[j] && names[j][0], "%s: tensor name %zu missing", f->name, j);
        CHECK(!f->token_types || t->type_emb);
        CHECK(!fused || (!t->wq && !t->wk && !t->wv));
        CHECK(f->pre_ln || (!t->final_ln_w && !t->final_ln_b));
        /* a masked-LM family names its head; a causal one's head is the tied LM head */
        CHECK(f->mlm.what);
        CHECK(f->causal || f->encdec || (f->mlm.dense_w && f->mlm.dense_b && f->mlm.ln_w && (f->mlm.ln_b || enc) && f->mlm.bias[0]));
        CHECK(f->vocab_file && f->vocab_file[0] && f->tokenizer && f->tokenizer[0]);
        /* model_type values are unique across the table, so a lookup is unambiguous */
        for (const char *const *a = f->model_types; *a; a++)
            for (int32_t i2 = 0; i2 < atn_family_count(); i2++)
                for (const char *const *b = atn_family_at(i2)->model_types; *b; b++)
                    CHECK_MSG(a == b || strcmp(*a, *b) != 0, "model_type \"%s\" twice", *a);
    }
    /* BERT is what transformers' BertConfig / BertForMaskedLM say */
    const atn_family *b = atn_family_bert();
    CHECK_STR(b->model_types[0], "bert");
    CHECK_STR(b->config.d_model, "hidden_size");
    CHECK_STR(b->config.ln_eps, "layer_norm_eps");
    CHECK(b->config.ln_eps_default == 1e-12f && b->config.max_positions_default == 512 &&
          b->config.type_vocab_size_default == 2);
    CHECK_STR(b->config.act_default, "gelu");
    CHECK_STR(b->tensors.prefixes[0], "bert.");
    CHECK_STR(b->tensors.prefixes[1], "");
    CHECK(b->tensors.prefixes[2] == NULL);
    CHECK(b->tensors.legacy_layernorm && b->token_types && b->positions == ATN_POSITIONS_FROM_0);
    CHECK_STR(b->mlm.dense_w, "cls.predictions.transform.dense.weight");
    CHECK_STR(b->tokenizer, "wordpiece");
    CHECK_STR(b->vocab_file, "vocab.txt");
    CHECK(!b->pre_ln && !b->causal && !b->tensors.qkv_w && !b->tensors.weights_in_out);

    /* GPT-2 is what transformers' GPT2Config / GPT2LMHeadModel say */
    const atn_family *g = atn_family_gpt2();
    CHECK(g && g != b);
    CHECK_STR(g->model_types[0], "gpt2");
    CHECK_STR(g->config.d_model, "n_embd");
    CHECK_STR(g->config.n_layers, "n_layer");
    CHECK_STR(g->config.n_heads, "n_head");
    CHECK_STR(g->config.d_ffn, "n_inner");
    CHECK(g->config.d_ffn_default_mult == 4);
    CHECK_STR(g->config.max_positions, "n_positions");
    CHECK(g->config.max_positions_default == 1024 && g->config.type_vocab_size == NULL);
    CHECK_STR(g->config.act, "activation_function");
    CHECK_STR(g->config.act_default, "gelu_new");
    CHECK_STR(g->config.ln_eps, "layer_norm_epsilon");
    CHECK(g->config.ln_eps_default == 1e-5f);
    CHECK_STR(g->config.scale_attn_weights, "scale_attn_weights");
    CHECK_STR(g->tensors.prefixes[0], "transformer.");
    CHECK_STR(g->tensors.prefixes[1], "");
    CHECK_STR(g->tensors.word_emb, "wte.weight");
    CHECK_STR(g->tensors.qkv_w, "attn.c_attn.weight");
    CHECK_STR(g->tensors.final_ln_w, "ln_f.weight");
    CHECK(g->tensors.weights_in_out && g->pre_ln && g->causal && !g->token_types);
    CHECK(!g->tensors.emb_ln_w && g->positions == ATN_POSITIONS_FROM_0);
    CHECK_STR(g->tokenizer, "bpe");
    CHECK_STR(g->vocab_file, "vocab.json");
    CHECK_STR(g->merges_file, "merges.txt");
}

static void lookup(void) {
    atn_error err = {0};
    CHECK(atn_family_lookup("bert", "x/config.json", &err) == atn_family_bert());
    CHECK(err.status == ATN_OK && err.message[0] == '\0');
    /* every listed model_type finds its own family */
    for (int32_t i = 0; i < atn_family_count(); i++)
        for (const char *const *t = atn_family_at(i)->model_types; *t; t++)
            CHECK(atn_family_lookup(*t, NULL, &err) == atn_family_at(i));

    const char *unknown[] = {"deberta", "BERT", "bert ", "", "gpt_neo", "GPT2"};
    for (size_t u = 0; u < sizeof unknown / sizeof unknown[0]; u++) {
        atn_error_clear(&err);
        CHECK(atn_family_lookup(unknown[u], "/m/config.json", &err) == NULL);
        CHECK(err.status == ATN_E_UNSUPPORTED);
        char want[128];
        snprintf(want, sizeof want, "/m/config.json: \"model_type\" is \"%s\"", unknown[u]);
        CHECK_MSG(strncmp(err.message, want, strlen(want)) == 0, "got: %s", err.message);
        /* lists every supported model_type, quoted */
        for (int32_t i = 0; i < atn_family_count(); i++)
            for (const char *const *t = atn_family_at(i)->model_types; *t; t++) {
                char q[80];
                snprintf(q, sizeof q, "\"%s\"", *t);
                CHECK_MSG(strstr(err.message + strlen(want), q), "%s not listed in: %s", q, err.message);
            }
    }
    atn_error_clear(&err);
    CHECK(atn_family_lookup("deberta", "/m/config.json", &err) == NULL);
    CHECK_STR(err.message, "/m/config.json: \"model_type\" is \"deberta\", which attnscope does not open "
              "(supported: \"bert\", \"roberta\", \"xlm-roberta\", \"camembert\", \"distilbert\", \"albert\", "
              "\"electra\", \"gpt2\", \"llama\", \"qwen2\", \"qwen3\", \"mistral\", \"gemma2\", "
              "\"gemma3_text\", \"bloom\", \"t5\", \"mt5\", \"bart\", \"marian\", \"modernbert\", \"deberta-v2\")");
    atn_error_clear(&err);
    CHECK(atn_family_lookup(NULL, NULL, &err) == NULL && err.status == ATN_E_UNSUPPORTED);
    CHECK(strstr(err.message, "config.json: no \"model_type\"") == err.message);
    CHECK(atn_family_lookup("deberta", NULL, NULL) == NULL);   /* err NULL: no crash */
}

static const atn_family *family_named(const char *name) {
    for (int32_t i = 0; i < atn_family_count(); i++)
        if (strcmp(atn_family_at(i)->name, name) == 0)
            return atn_family_at(i);
    return NULL;
}

static void positions(void) {
    int32_t ids[5] = {2, 10, 11, 12, 3}, pos[5] = {-1, -1, -1, -1, -1};
    atn_encoding enc = {.n = 5, .ids = ids};
    atn_config c = {.max_positions = 512};
    atn_family_position_ids(atn_family_bert(), &c, &enc, pos);
    for (int32_t i = 0; i < 5; i++)
        CHECK_MSG(pos[i] == i, "pos[%d] = %d", i, pos[i]);
    CHECK(atn_family_max_tokens(atn_family_bert(), &c) == 512);

    /* RoBERTa, by hand from create_position_ids_from_input_ids with padding_idx 1:
       <s> a b </s> <pad> <pad> -> mask 1 1 1 1 0 0, cumsum 1 2 3 4 4 4, * mask, + 1 */
    const atn_family *r = family_named("RoBERTa");
    CHECK(r && r->positions == ATN_POSITIONS_AFTER_PAD);
    if (r) {
        int32_t rid[6] = {0, 40, 41, 2, 1, 1}, rpos[6], want[6] = {2, 3, 4, 5, 1, 1};
        atn_encoding renc = {.n = 6, .ids = rid};
        atn_config rc = {.max_positions = 514, .pad_token_id = 1};
        atn_family_position_ids(r, &rc, &renc, rpos);
        for (int32_t i = 0; i < 6; i++)
            CHECK_MSG(rpos[i] == want[i], "roberta pos[%d] = %d, expected %d", i, rpos[i], want[i]);
        /* a padding id in the middle keeps the count: 0 5 1 6 -> 2 3 1 4 */
        int32_t mid[4] = {0, 5, 1, 6}, mpos[4], mwant[4] = {2, 3, 1, 4};
        renc = (atn_encoding){.n = 4, .ids = mid};
        atn_family_position_ids(r, &rc, &renc, mpos);
        for (int32_t i = 0; i < 4; i++)
            CHECK_MSG(mpos[i] == mwant[i], "roberta pos[%d] = %d, expected %d", i, mpos[i], mwant[i]);
        CHECK(atn_family_max_tokens(r, &rc) == 512);   /* roberta-base: 514 rows, 512 tokens */
        rc.max_positions = 2;
        CHECK(atn_family_max_tokens(r, &rc) == 0);
    }

    /* ALBERT's layer groups, by hand from AlbertTransformer: 12 layers, 1 group, 1 inner ->
       group 0 always; 6 applications, 3 groups, 2 inner -> application i runs group
       int(i / 2), captured layer l is inner l % 2 of application l / 2; 5 applications,
       2 groups: int(i / 2.5) = 0 0 0 1 1 */
    int32_t g = -1, j = -1;
    for (int32_t l = 0; l < 12; l++) {
        atn_family_layer_source(l, 12, 1, 1, &g, &j);
        CHECK(g == 0 && j == 0);
    }
    int32_t want_g[12] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
    for (int32_t l = 0; l < 12; l++) {
        atn_family_layer_source(l, 6, 3, 2, &g, &j);
        CHECK_MSG(g == want_g[l] && j == l % 2, "layer %d: group %d inner %d", l, g, j);
    }
    int32_t want5[5] = {0, 0, 0, 1, 1};
    for (int32_t l = 0; l < 5; l++) {
        atn_family_layer_source(l, 5, 2, 1, &g, &j);
        CHECK_MSG(g == want5[l] && j == 0, "layer %d: group %d", l, g);
    }
}

/* The other families' tables say what their transformers classes say. */
static void encoder_families(void) {
    const atn_family *r = family_named("RoBERTa"), *x = family_named("XLM-RoBERTa"),
                     *db = family_named("DistilBERT"), *al = family_named("ALBERT"), *el = family_named("ELECTRA");
    CHECK(r && x && db && al && el);
    if (!r || !x || !db || !al || !el)
        return;
    atn_error err = {0};
    CHECK(atn_family_lookup("roberta", NULL, &err) == r);
    CHECK(atn_family_lookup("xlm-roberta", NULL, &err) == x && atn_family_lookup("camembert", NULL, &err) == x);
    CHECK(atn_family_lookup("distilbert", NULL, &err) == db);
    CHECK(atn_family_lookup("albert", NULL, &err) == al && atn_family_lookup("electra", NULL, &err) == el);
    CHECK_STR(r->tensors.prefixes[0], "roberta.");
    CHECK_STR(r->mlm.dense_w, "lm_head.dense.weight");
    CHECK_STR(r->mlm.bias[0], "lm_head.bias");
    CHECK(r->mlm.act_gelu && r->config.pad_id_default == 1 && r->token_types);
    CHECK_STR(r->tokenizer, "bpe");
    CHECK_STR(r->vocab_file, "vocab.json");
    CHECK_STR(x->vocab_file, "sentencepiece.bpe.model");
    CHECK(x->positions == ATN_POSITIONS_AFTER_PAD);
    CHECK_STR(db->config.d_model, "dim");
    CHECK_STR(db->config.n_layers, "n_layers");
    CHECK_STR(db->config.d_ffn, "hidden_dim");
    CHECK_STR(db->config.act, "activation");
    CHECK(db->config.ln_eps == NULL && db->config.ln_eps_default == 1e-12f && !db->token_types);
    CHECK_STR(db->tensors.wq, "attention.q_lin.weight");
    CHECK_STR(db->tensors.ln1_w, "sa_layer_norm.weight");
    CHECK_STR(db->tensors.ln2_w, "output_layer_norm.weight");
    CHECK_STR(db->mlm.decoder_w, "vocab_projector.weight");
    CHECK_STR(db->config.sinusoidal, "sinusoidal_pos_embds");
    CHECK(!db->mlm.act_gelu);
    CHECK_STR(al->config.d_embed, "embedding_size");
    CHECK(al->config.d_embed_default == 128);
    CHECK_STR(al->config.n_groups, "num_hidden_groups");
    CHECK_STR(al->config.inner_layers, "inner_group_num");
    CHECK_STR(al->config.act_default, "gelu_new");
    CHECK_STR(al->tensors.layer, "encoder.albert_layer_groups.");
    CHECK_STR(al->tensors.inner, ".albert_layers.");
    CHECK_STR(al->tensors.emb_proj_w, "encoder.embedding_hidden_mapping_in.weight");
    CHECK_STR(al->tensors.w2, "ffn_output.weight");
    CHECK_STR(al->tensors.ln2_w, "full_layer_layer_norm.weight");
    CHECK_STR(al->mlm.dense_w, "predictions.dense.weight");
    CHECK_STR(el->tensors.emb_proj_w, "embeddings_project.weight");
    CHECK_STR(el->mlm.decoder_w, "generator_lm_head.weight");
    CHECK(el->mlm.act_gelu && el->config.d_embed_default == 128);
}

/* The loader takes the family from config.json: the demo model is BERT with the "bert."
 * prefix; the same folder with another model_type is refused with the table's message. */
static void loader(void) {
    const char *root = getenv("ATN_SOURCE_ROOT");
    char demo[4096], dir[] = "/tmp/atn-family-XXXXXX", path[4200], target[4200];
    snprintf(demo, sizeof demo, "%s/data/models/demo", root ? root : ".");
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(demo, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        CHECK(m->family == atn_family_bert());
        CHECK(m->w.word_emb && m->w.pos_emb && m->w.type_emb && atn_model_has_mlm_head(m));
        CHECK_STR(atn_tokenizer_kind(m->tokenizer), m->family->tokenizer);   /* the family's tokenizer */
        atn_model_free(m);
    }
    /* toy models are BERT-layout encoders too */
    atn_model *t = atn_model_alloc(ATN_MODEL_TOY, "t", "");
    CHECK(t && t->family == atn_family_bert());
    atn_model_free(t);

    CHECK(mkdtemp(dir) != NULL);
    const char *links[] = {"model.safetensors", "vocab.txt", "tokenizer_config.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, links[i]);
        snprintf(target, sizeof target, "%s/%s", demo, links[i]);
        CHECK(symlink(target, path) == 0);
    }
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("{\"model_type\": \"deberta\", \"vocab_size\": 8000, \"hidden_size\": 128, \"num_hidden_layers\": 4, "
              "\"num_attention_heads\": 16, \"intermediate_size\": 512}\n", f);
        fclose(f);
    }
    atn_error_clear(&err);
    CHECK(atn_model_open_hf(dir, NULL, NULL, &err) == NULL);
    CHECK(err.status == ATN_E_UNSUPPORTED);
    atn_error want = {0};
    atn_family_lookup("deberta", path, &want);
    CHECK_STR(err.message, want.message);
    for (int i = 0; i < 3; i++) {
        snprintf(target, sizeof target, "%s/%s", dir, links[i]);
        unlink(target);
    }
    unlink(path);
    rmdir(dir);
}

int main(void) {
    table_complete();
    lookup();
    positions();
    encoder_families();
    loader();
    return check_summary("engine-family");
}
