/* The inside of an atn_model: configuration, weight pointers and where they live.
 * Shared by the loaders (toy JSON, Hugging Face folders) and the backends. */
#ifndef ATN_MODEL_PRIVATE_H
#define ATN_MODEL_PRIVATE_H

#include "attnscope.h"

/* One encoder layer.  Linear weights are [out, in] (y = x W^T + b), as in Hugging Face.
 * A NULL weight means identity (toy models only), a NULL bias or LayerNorm beta means
 * zero, a NULL LayerNorm gamma means one. */
typedef struct atn_layer_weights {
    const float *wq, *bq;        /* [d, d], [d]  attention.self.query */
    const float *wk, *bk;        /* [d, d], [d]  attention.self.key */
    const float *wv, *bv;        /* [d, d], [d]  attention.self.value */
    const float *wo, *bo;        /* [d, d], [d]  attention.output.dense */
    const float *ln1_g, *ln1_b;  /* [d]          attention.output.LayerNorm */
    const float *w1, *b1;        /* [f, d], [f]  intermediate.dense */
    const float *w2, *b2;        /* [d, f], [d]  output.dense */
    const float *ln2_g, *ln2_b;  /* [d]          output.LayerNorm */
} atn_layer_weights;

typedef struct atn_weights {
    const float *word_emb;       /* [V, d]         embeddings.word_embeddings */
    const float *pos_emb;        /* [max_pos, d]   embeddings.position_embeddings */
    const float *type_emb;       /* [types, d]     embeddings.token_type_embeddings */
    const float *emb_ln_g;       /* [d]            embeddings.LayerNorm */
    const float *emb_ln_b;
    atn_layer_weights *layers;   /* [L] */
    /* masked-LM head (cls.predictions.*); NULL when absent */
    const float *mlm_dense_w, *mlm_dense_b;   /* [d, d], [d] transform.dense */
    const float *mlm_ln_g, *mlm_ln_b;         /* [d] transform.LayerNorm */
    const float *mlm_decoder_w;               /* [V, d]; NULL: tied to word_emb */
    const float *mlm_decoder_b;               /* [V] cls.predictions.bias */
} atn_weights;

struct atn_tokenizer;   /* engine/tokenizer.h: the interface (WordPiece today) */
struct atn_family;      /* engine/family.h */

/* A block of memory the model owns; freed with the model. */
typedef struct atn_model_block {
    void *ptr;
    size_t len;
    bool mapped;   /* munmap instead of free */
} atn_model_block;

struct atn_model {
    atn_model_kind kind;
    /* the architecture family's table (engine/family.h): never NULL; BERT unless the loader
       found another model_type (toy and random models are BERT-layout encoders) */
    const struct atn_family *family;
    atn_config cfg;
    atn_weights w;
    char *name;
    char *path;

    /* toy models: their tokens and input vectors X [n, d] (mutable: the GUI edits them) */
    int32_t toy_n;
    char **toy_tokens;
    float *toy_x;
    /* toy models own every weight they have (malloc'ed through atn_model_alloc_floats),
       so toy-model.c may write through the const pointers of w */

    /* Hugging Face models */
    struct atn_tokenizer *tokenizer;

    atn_model_block *blocks;
    int32_t n_blocks;

    /* opaque per-backend state (weights uploaded to a GPU ...), freed with the model */
    void *backend_state;
    void (*backend_state_free)(void *state);

    /* the CPU forward's copy of the layer weights packed for its GEMM kernel (encoder.c),
       made on the first forward of a BERT model; its memory is one of blocks.  Toy models
       (editable) never get one; code that changes a BERT model's weights must drop it */
    void *cpu_packed;
};

/* Allocates and zeroes a model (family: BERT); name/path are copied. */
atn_model *atn_model_alloc(atn_model_kind kind, const char *name, const char *path);
/* Takes ownership of ptr (malloc'ed, or mmap'ed when mapped). Returns false on OOM
 * (and frees/unmaps ptr). */
bool atn_model_own(atn_model *model, void *ptr, size_t len, bool mapped);
/* Allocates floats owned by the model (zeroed). */
float *atn_model_alloc_floats(atn_model *model, size_t count);

#endif
