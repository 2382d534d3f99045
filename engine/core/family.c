/* The model-family tables (engine/core/family.h).  Names and defaults are Hugging Face's: each
 * family's config class (BertConfig, RobertaConfig, DistilBertConfig, AlbertConfig,
 * ElectraConfig) for the config keys, its model classes (BertModel / BertForMaskedLM,
 * RobertaForMaskedLM, DistilBertForMaskedLM, AlbertForMaskedLM, ElectraForMaskedLM /
 * ElectraForPreTraining) for the tensor names. */
#include "core/family.h"

#include <stdio.h>
#include <string.h>

/* The names BERT, RoBERTa and ELECTRA share (their modeling code copies BERT's modules). */
#define BERT_EMBEDDINGS                                                                                 \
    .word_emb = "embeddings.word_embeddings.weight",                                                    \
    .pos_emb = "embeddings.position_embeddings.weight",                                                 \
    .type_emb = "embeddings.token_type_embeddings.weight",                                              \
    .emb_ln_w = "embeddings.LayerNorm.weight",                                                          \
    .emb_ln_b = "embeddings.LayerNorm.bias"
#define BERT_LAYER                                                                                      \
    .wq = "attention.self.query.weight", .bq = "attention.self.query.bias",                             \
    .wk = "attention.self.key.weight", .bk = "attention.self.key.bias",                                 \
    .wv = "attention.self.value.weight", .bv = "attention.self.value.bias",                             \
    .wo = "attention.output.dense.weight", .bo = "attention.output.dense.bias",                         \
    .ln1_w = "attention.output.LayerNorm.weight", .ln1_b = "attention.output.LayerNorm.bias",           \
    .w1 = "intermediate.dense.weight", .b1 = "intermediate.dense.bias",                                 \
    .w2 = "output.dense.weight", .b2 = "output.dense.bias",                                             \
    .ln2_w = "output.LayerNorm.weight", .ln2_b = "output.LayerNorm.bias"
/* RobertaLMHead: dense, gelu (not hidden_act), layer_norm, decoder tied to the word
   embeddings, bias */
#define ROBERTA_MLM                                                                                     \
    {                                                                                                   \
        .what = "lm_head.*",                                                                            \
        .dense_w = "lm_head.dense.weight", .dense_b = "lm_head.dense.bias",                             \
        .ln_w = "lm_head.layer_norm.weight", .ln_b = "lm_head.layer_norm.bias",                         \
        .decoder_w = "lm_head.decoder.weight",                                                          \
        .bias = {"lm_head.bias", "lm_head.decoder.bias"},                                               \
        .act_gelu = true,                                                                               \
    }


/* The names Llama, Qwen2, Qwen3 and Mistral share (LlamaForCausalLM and its copies:
   "model." before the decoder, lm_head.weight unprefixed) */
#define ROTARY_TENSORS                                                                                  \
    .prefixes = {"model.", "", NULL},                                                                   \
    .word_emb = "embed_tokens.weight",                                                                  \
    .layer = "layers.",                                                                                 \
    .wq = "self_attn.q_proj.weight", .bq = "self_attn.q_proj.bias",                                     \
    .wk = "self_attn.k_proj.weight", .bk = "self_attn.k_proj.bias",                                     \
    .wv = "self_attn.v_proj.weight", .bv = "self_attn.v_proj.bias",                                     \
    .wo = "self_attn.o_proj.weight", .bo = "self_attn.o_proj.bias",                                     \
    .ln1_w = "input_layernorm.weight", .ln2_w = "post_attention_layernorm.weight",                      \
    .gate_w = "mlp.gate_proj.weight", .gate_b = "mlp.gate_proj.bias",                                   \
    .w1 = "mlp.up_proj.weight", .b1 = "mlp.up_proj.bias",                                               \
    .w2 = "mlp.down_proj.weight", .b2 = "mlp.down_proj.bias",                                           \
    .final_ln_w = "norm.weight",                                                                        \
    .lm_head_w = "lm_head.weight"
#define ROTARY_CONFIG(max_pos)                                                                          \
    .d_model = "hidden_size",                                                                           \
    .n_layers = "num_hidden_layers",                                                                    \
    .n_heads = "num_attention_heads",                                                                   \
    .d_ffn = "intermediate_size",                                                                       \
    .vocab_size = "vocab_size",                                                                         \
    .max_positions = "max_position_embeddings", .max_positions_default = (max_pos),                     \
    .type_vocab_size = NULL, .type_vocab_size_default = 1,                                              \
    .act = "hidden_act", .act_default = "silu",                                                         \
    .ln_eps = "rms_norm_eps", .ln_eps_default = 1e-6f,                                                  \
    .position_type = NULL, .position_type_default = "absolute",                                         \
    .kv_heads = "num_key_value_heads", .head_dim = "head_dim",                                          \
    .rope_theta = "rope_theta", .rope_theta_default = 10000.0, .rope_scaling = "rope_scaling",          \
    .tie_default_false = true
/* Gemma2Config / Gemma3TextConfig: hidden_activation, tied by default, 4 K/V heads of 256 */
#define GEMMA_CONFIG(max_pos, theta)                                                                    \
    .d_model = "hidden_size",                                                                           \
    .n_layers = "num_hidden_layers",                                                                    \
    .n_heads = "num_attention_heads",                                                                   \
    .d_ffn = "intermediate_size",                                                                       \
    .vocab_size = "vocab_size",                                                                         \
    .max_positions = "max_position_embeddings", .max_positions_default = (max_pos),                     \
    .type_vocab_size = NULL, .type_vocab_size_default = 1,                                              \
    .act = "hidden_activation", .act_default = "gelu_pytorch_tanh",                                     \
    .ln_eps = "rms_norm_eps", .ln_eps_default = 1e-6f,                                                  \
    .position_type = NULL, .position_type_default = "absolute",                                         \
    .kv_heads = "num_key_value_heads", .head_dim = "head_dim",                                          \
    .kv_heads_default = 4, .head_dim_default = 256,                                                     \
    .rope_theta = "rope_theta", .rope_theta_default = (theta), .rope_scaling = "rope_scaling",          \
    .attention_bias = "attention_bias"
#define GEMMA_TENSORS                                                                                   \
    .prefixes = {"model.", "", NULL},                                                                   \
    .word_emb = "embed_tokens.weight",                                                                  \
    .layer = "layers.",                                                                                 \
    .wq = "self_attn.q_proj.weight", .bq = "self_attn.q_proj.bias",                                     \
    .wk = "self_attn.k_proj.weight", .bk = "self_attn.k_proj.bias",                                     \
    .wv = "self_attn.v_proj.weight", .bv = "self_attn.v_proj.bias",                                     \
    .wo = "self_attn.o_proj.weight", .bo = "self_attn.o_proj.bias",                                     \
    .ln1_w = "input_layernorm.weight", .ln2_w = "pre_feedforward_layernorm.weight",                     \
    .post_attn_ln_w = "post_attention_layernorm.weight",                                                \
    .post_ffn_ln_w = "post_feedforward_layernorm.weight",                                               \
    .gate_w = "mlp.gate_proj.weight", .gate_b = "mlp.gate_proj.bias",   /* biases never bound: no */  \
    .w1 = "mlp.up_proj.weight", .b1 = "mlp.up_proj.bias",               /* mlp_bias key in Gemma */   \
    .w2 = "mlp.down_proj.weight", .b2 = "mlp.down_proj.bias",                                           \
    .final_ln_w = "norm.weight",                                                                        \
    .lm_head_w = "lm_head.weight"
#define ROTARY_FAMILY                                                                                   \
    .positions = ATN_POSITIONS_FROM_0,                                                                  \
    .token_types = false,                                                                               \
    .mlm = {.what = "lm_head"},                                                                         \
    .tokenizer = "bpe",                                                                                 \
    .vocab_file = "vocab.json",                                                                         \
    .merges_file = "merges.txt",                                                                        \
    .pre_ln = true,                                                                                     \
    .causal = true,                                                                                     \
    .rotary = true

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
    {
        /* RobertaModel / RobertaForMaskedLM: BERT's layers under "roberta.", positions after
           padding_idx, the lm_head.* head with a fixed gelu */
        .name = "RoBERTa",
        .model_types = {"roberta", NULL},
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
            .pad_id = "pad_token_id", .pad_id_default = 1,
        },
        .tensors = {
            .prefixes = {"roberta.", "", NULL},
            BERT_EMBEDDINGS,
            .layer = "encoder.layer.",
            BERT_LAYER,
        },
        .positions = ATN_POSITIONS_AFTER_PAD,
        .token_types = true,
        .mlm = ROBERTA_MLM,
        .tokenizer = "bpe",              /* byte-level BPE */
        .vocab_file = "vocab.json",      /* with merges.txt */
    },
    {
        /* XLMRobertaModel, CamembertModel: RoBERTa's code and names, a SentencePiece
           vocabulary */
        .name = "XLM-RoBERTa",
        .model_types = {"xlm-roberta", "camembert", NULL},
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
            .pad_id = "pad_token_id", .pad_id_default = 1,
        },
        .tensors = {
            .prefixes = {"roberta.", "", NULL},
            BERT_EMBEDDINGS,
            .layer = "encoder.layer.",
            BERT_LAYER,
        },
        .positions = ATN_POSITIONS_AFTER_PAD,
        .token_types = true,
        .mlm = ROBERTA_MLM,
        .tokenizer = "unigram",                     /* SentencePiece */
        .vocab_file = "sentencepiece.bpe.model",
    },
    {
        /* DistilBertModel / DistilBertForMaskedLM: its own names, no token types, LayerNorm
           eps fixed at 1e-12, learned or sinusoidal positions (sinusoidal ones are written
           into position_embeddings.weight, so checkpoints carry them) */
        .name = "DistilBERT",
        .model_types = {"distilbert", NULL},
        .config = {
            .d_model = "dim",
            .n_layers = "n_layers",
            .n_heads = "n_heads",
            .d_ffn = "hidden_dim",
            .vocab_size = "vocab_size",
            .max_positions = "max_position_embeddings", .max_positions_default = 512,
            .type_vocab_size = NULL, .type_vocab_size_default = 1,
            .act = "activation", .act_default = "gelu",
            .ln_eps = NULL, .ln_eps_default = 1e-12f,
            .position_type = NULL, .position_type_default = "absolute",
            .sinusoidal = "sinusoidal_pos_embds",
        },
        .tensors = {
            .prefixes = {"distilbert.", "", NULL},
            .word_emb = "embeddings.word_embeddings.weight",
            .pos_emb = "embeddings.position_embeddings.weight",
            .emb_ln_w = "embeddings.LayerNorm.weight",
            .emb_ln_b = "embeddings.LayerNorm.bias",
            .layer = "transformer.layer.",
            .wq = "attention.q_lin.weight", .bq = "attention.q_lin.bias",
            .wk = "attention.k_lin.weight", .bk = "attention.k_lin.bias",
            .wv = "attention.v_lin.weight", .bv = "attention.v_lin.bias",
            .wo = "attention.out_lin.weight", .bo = "attention.out_lin.bias",
            .ln1_w = "sa_layer_norm.weight", .ln1_b = "sa_layer_norm.bias",
            .w1 = "ffn.lin1.weight", .b1 = "ffn.lin1.bias",
            .w2 = "ffn.lin2.weight", .b2 = "ffn.lin2.bias",
            .ln2_w = "output_layer_norm.weight", .ln2_b = "output_layer_norm.bias",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = false,
        .mlm = {
            /* vocab_transform, activation (config.activation), vocab_layer_norm, vocab_projector */
            .what = "vocab_transform / vocab_projector",
            .dense_w = "vocab_transform.weight", .dense_b = "vocab_transform.bias",
            .ln_w = "vocab_layer_norm.weight", .ln_b = "vocab_layer_norm.bias",
            .decoder_w = "vocab_projector.weight",
            .bias = {"vocab_projector.bias", NULL},
        },
        .tokenizer = "wordpiece",
        .vocab_file = "vocab.txt",
    },
    {
        /* AlbertModel / AlbertForMaskedLM: embeddings at embedding_size, mapped to hidden_size
           by encoder.embedding_hidden_mapping_in; num_hidden_groups groups of inner_group_num
           layers, applied num_hidden_layers times */
        .name = "ALBERT",
        .model_types = {"albert", NULL},
        .config = {
            .d_model = "hidden_size",
            .n_layers = "num_hidden_layers",
            .n_heads = "num_attention_heads",
            .d_ffn = "intermediate_size",
            .vocab_size = "vocab_size",
            .max_positions = "max_position_embeddings", .max_positions_default = 512,
            .type_vocab_size = "type_vocab_size", .type_vocab_size_default = 2,
            .act = "hidden_act", .act_default = "gelu_new",
            .ln_eps = "layer_norm_eps", .ln_eps_default = 1e-12f,
            .position_type = "position_embedding_type", .position_type_default = "absolute",
            .d_embed = "embedding_size", .d_embed_default = 128,
            .n_groups = "num_hidden_groups",
            .inner_layers = "inner_group_num",
        },
        .tensors = {
            .prefixes = {"albert.", "", NULL},
            BERT_EMBEDDINGS,
            .emb_proj_w = "encoder.embedding_hidden_mapping_in.weight",
            .emb_proj_b = "encoder.embedding_hidden_mapping_in.bias",
            .layer = "encoder.albert_layer_groups.",
            .inner = ".albert_layers.",
            .wq = "attention.query.weight", .bq = "attention.query.bias",
            .wk = "attention.key.weight", .bk = "attention.key.bias",
            .wv = "attention.value.weight", .bv = "attention.value.bias",
            .wo = "attention.dense.weight", .bo = "attention.dense.bias",
            .ln1_w = "attention.LayerNorm.weight", .ln1_b = "attention.LayerNorm.bias",
            .w1 = "ffn.weight", .b1 = "ffn.bias",
            .w2 = "ffn_output.weight", .b2 = "ffn_output.bias",
            .ln2_w = "full_layer_layer_norm.weight", .ln2_b = "full_layer_layer_norm.bias",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = true,
        .mlm = {
            /* AlbertMLMHead: dense hidden -> embedding_size, hidden_act, LayerNorm, decoder */
            .what = "predictions.*",
            .dense_w = "predictions.dense.weight", .dense_b = "predictions.dense.bias",
            .ln_w = "predictions.LayerNorm.weight", .ln_b = "predictions.LayerNorm.bias",
            .decoder_w = "predictions.decoder.weight",
            .bias = {"predictions.bias", "predictions.decoder.bias"},
        },
        .tokenizer = "unigram",          /* SentencePiece */
        .vocab_file = "spiece.model",
    },
    {
        /* ElectraModel (discriminators: ElectraForPreTraining, no masked-LM head) and
           ElectraForMaskedLM (generators): BERT's layers, embeddings at embedding_size
           projected by embeddings_project when it differs from hidden_size */
        .name = "ELECTRA",
        .model_types = {"electra", NULL},
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
            .d_embed = "embedding_size", .d_embed_default = 128,
        },
        .tensors = {
            .prefixes = {"electra.", "", NULL},
            BERT_EMBEDDINGS,
            .emb_proj_w = "embeddings_project.weight",
            .emb_proj_b = "embeddings_project.bias",
            .layer = "encoder.layer.",
            BERT_LAYER,
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = true,
        .mlm = {
            /* ElectraGeneratorPredictions (dense hidden -> embedding_size, gelu, LayerNorm)
               and generator_lm_head */
            .what = "generator_predictions.* / generator_lm_head",
            .dense_w = "generator_predictions.dense.weight", .dense_b = "generator_predictions.dense.bias",
            .ln_w = "generator_predictions.LayerNorm.weight", .ln_b = "generator_predictions.LayerNorm.bias",
            .decoder_w = "generator_lm_head.weight",
            .bias = {"generator_lm_head.bias", NULL},
            .act_gelu = true,
        },
        .tokenizer = "wordpiece",
        .vocab_file = "vocab.txt",
    },
    {
        /* GPT2Config for the keys, GPT2Model / GPT2LMHeadModel (modeling_gpt2.py) for the
           names: Conv1D weights [in, out], the fused c_attn, pre-LN blocks, ln_f, the LM
           head tied to wte */
        .name = "GPT-2",
        .model_types = {"gpt2", NULL},
        .config = {
            .d_model = "n_embd",
            .n_layers = "n_layer",
            .n_heads = "n_head",
            .d_ffn = "n_inner", .d_ffn_default_mult = 4,
            .vocab_size = "vocab_size",
            .max_positions = "n_positions", .max_positions_default = 1024,
            .type_vocab_size = NULL, .type_vocab_size_default = 1,
            .act = "activation_function", .act_default = "gelu_new",
            .ln_eps = "layer_norm_epsilon", .ln_eps_default = 1e-5f,
            .position_type = NULL, .position_type_default = "absolute",
            .scale_attn_weights = "scale_attn_weights",
            .scale_attn_by_inverse_layer_idx = "scale_attn_by_inverse_layer_idx",
            .reorder_and_upcast_attn = "reorder_and_upcast_attn",
        },
        .tensors = {
            .prefixes = {"transformer.", "", NULL},
            .word_emb = "wte.weight",
            .pos_emb = "wpe.weight",
            .layer = "h.",
            .qkv_w = "attn.c_attn.weight", .qkv_b = "attn.c_attn.bias",
            .wo = "attn.c_proj.weight", .bo = "attn.c_proj.bias",
            .ln1_w = "ln_1.weight", .ln1_b = "ln_1.bias",
            .w1 = "mlp.c_fc.weight", .b1 = "mlp.c_fc.bias",
            .w2 = "mlp.c_proj.weight", .b2 = "mlp.c_proj.bias",
            .ln2_w = "ln_2.weight", .ln2_b = "ln_2.bias",
            .weights_in_out = true,
            .final_ln_w = "ln_f.weight", .final_ln_b = "ln_f.bias",
            .lm_head_w = "lm_head.weight",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = false,
        .mlm = {.what = "lm_head (tied to wte)"},
        .tokenizer = "bpe",
        .vocab_file = "vocab.json",
        .merges_file = "merges.txt",
        .pre_ln = true,
        .causal = true,
    },
    {
        /* LlamaConfig / LlamaForCausalLM (modeling_llama.py): also SmolLM2 and MiniMind-style
           folders.  attention_bias gives q, k, v and o biases, mlp_bias the MLP's */
        .name = "Llama",
        .model_types = {"llama", NULL},
        .config = {ROTARY_CONFIG(2048), .attention_bias = "attention_bias", .mlp_bias = "mlp_bias"},
        .tensors = {ROTARY_TENSORS},
        ROTARY_FAMILY,
    },
    {
        /* Qwen2Config / Qwen2ForCausalLM (Qwen2, Qwen2.5): q, k, v biases, o_proj without;
           the sliding window in the layers from max_window_layers on when use_sliding_window */
        .name = "Qwen2",
        .model_types = {"qwen2", NULL},
        .config = {ROTARY_CONFIG(32768), .sliding_window = "sliding_window",
                   .use_sliding_window = "use_sliding_window", .max_window_layers = "max_window_layers",
                   .sliding_window_default = 4096, .max_window_layers_default = 28},
        .tensors = {ROTARY_TENSORS, .qkv_bias = true},
        ROTARY_FAMILY,
    },
    {
        /* Qwen3Config / Qwen3ForCausalLM: per-head q_norm / k_norm (RMSNorm over head_dim)
           before the rotation, head_dim apart from hidden / heads, attention_bias as Llama */
        .name = "Qwen3",
        .model_types = {"qwen3", NULL},
        .config = {ROTARY_CONFIG(32768), .attention_bias = "attention_bias", .sliding_window = "sliding_window",
                   .use_sliding_window = "use_sliding_window", .max_window_layers = "max_window_layers",
                   .sliding_window_default = 4096, .max_window_layers_default = 28},
        .tensors = {ROTARY_TENSORS, .q_norm_w = "self_attn.q_norm.weight", .k_norm_w = "self_attn.k_norm.weight"},
        ROTARY_FAMILY,
    },
    {
        /* MistralConfig / MistralForCausalLM: Llama's layers without biases; sliding_window
           (when set) in every layer */
        .name = "Mistral",
        .model_types = {"mistral", NULL},
        .config = {ROTARY_CONFIG(4096 * 32), .sliding_window = "sliding_window", .sliding_window_default = 4096},
        .tensors = {ROTARY_TENSORS},
        ROTARY_FAMILY,
    },
    {
        /* Gemma2Config / Gemma2ForCausalLM (modeling_gemma2.py, eager): Llama's tensor names
           with four norms per layer, GeGLU (gelu_pytorch_tanh), tied head; the keys that are
           Gemma's own (query_pre_attn_scalar, the soft-caps, sliding_window and the layers it
           applies to) are read by atn_hf_gemma_config */
        .name = "Gemma2",
        .model_types = {"gemma2", NULL},
        .config = {GEMMA_CONFIG(8192, 10000.0)},
        .tensors = {GEMMA_TENSORS},
        ROTARY_FAMILY,
        .gemma = true,
    },
    {
        /* Gemma3TextConfig / Gemma3ForCausalLM (modeling_gemma3.py): Gemma 2's layers with
           q_norm / k_norm (RMSNorm 1 + w) before the rotation, two bases (rope_local_base_freq
           in the sliding layers, rope_theta and rope_scaling in the others), no soft-cap */
        .name = "Gemma3",
        .model_types = {"gemma3_text", NULL},
        .config = {GEMMA_CONFIG(131072, 1000000.0)},
        .tensors = {GEMMA_TENSORS, .q_norm_w = "self_attn.q_norm.weight", .k_norm_w = "self_attn.k_norm.weight"},
        ROTARY_FAMILY,
        .gemma = true,
    },
    {
        /* BloomConfig / BloomForCausalLM (modeling_bloom.py): ALiBi instead of positions,
           the fused query_key_value per head, LayerNorm on the embeddings, pre-LN blocks,
           bloom_gelu (the tanh form), ln_f, lm_head tied to word_embeddings */
        .name = "BLOOM",
        .model_types = {"bloom", NULL},
        .config = {
            .d_model = "hidden_size",
            .n_layers = "n_layer",
            .n_heads = "n_head",
            .d_ffn = NULL, .d_ffn_default_mult = 4,   /* BloomMLP: 4 * hidden_size, no key */
            .vocab_size = "vocab_size",
            .max_positions = NULL, .max_positions_default = 1 << 16,   /* ALiBi: no table */
            .type_vocab_size = NULL, .type_vocab_size_default = 1,
            .act = NULL, .act_default = "gelu_new",   /* bloom_gelu_forward, fixed */
            .ln_eps = "layer_norm_epsilon", .ln_eps_default = 1e-5f,
            .position_type = NULL, .position_type_default = "absolute",
            .aliases = {"n_embed", "hidden_size", "num_attention_heads", "n_head", "num_hidden_layers", "n_layer",
                        NULL},
            .residual_post_ln = "apply_residual_connection_post_layernorm",
            .pretraining_tp = "pretraining_tp", .slow_but_exact = "slow_but_exact",
        },
        .tensors = {
            .prefixes = {"transformer.", "", NULL},
            .word_emb = "word_embeddings.weight",
            .emb_ln_w = "word_embeddings_layernorm.weight", .emb_ln_b = "word_embeddings_layernorm.bias",
            .layer = "h.",
            .qkv_w = "self_attention.query_key_value.weight", .qkv_b = "self_attention.query_key_value.bias",
            .qkv_per_head = true,
            .wo = "self_attention.dense.weight", .bo = "self_attention.dense.bias",
            .ln1_w = "input_layernorm.weight", .ln1_b = "input_layernorm.bias",
            .w1 = "mlp.dense_h_to_4h.weight", .b1 = "mlp.dense_h_to_4h.bias",
            .w2 = "mlp.dense_4h_to_h.weight", .b2 = "mlp.dense_4h_to_h.bias",
            .ln2_w = "post_attention_layernorm.weight", .ln2_b = "post_attention_layernorm.bias",
            .final_ln_w = "ln_f.weight", .final_ln_b = "ln_f.bias",
            .lm_head_w = "lm_head.weight",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = false,
        .mlm = {.what = "lm_head (tied to word_embeddings)"},
        .tokenizer = "bpe",
        .vocab_file = "vocab.json",
        .merges_file = "merges.txt",
        .pre_ln = true,
        .causal = true,
        .alibi = true,
    },
    {
        /* T5ForConditionalGeneration (modeling_t5.py): T5, mT5, Flan-T5 (feed_forward_proj
           gated-gelu), umT5 not (its buckets are per layer); the tensors are bound by
           engine/formats/hf-encdec.c, not by this table's names */
        .name = "T5",
        .model_types = {"t5", "mt5", NULL},
        .config = {
            .d_model = "d_model",
            .n_layers = "num_layers",
            .n_heads = "num_heads",
            .d_ffn = "d_ff",
            .vocab_size = "vocab_size",
            .max_positions = NULL, .max_positions_default = 1 << 20,   /* relative positions: no table */
            .type_vocab_size = NULL, .type_vocab_size_default = 1,
            .act = NULL, .act_default = "relu",   /* feed_forward_proj, read by hf-encdec.c */
            .ln_eps = "layer_norm_epsilon", .ln_eps_default = 1e-6f,
            .position_type = NULL, .position_type_default = "absolute",
        },
        .tensors = {
            .prefixes = {"", NULL},
            .word_emb = "shared.weight",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = false,
        .mlm = {.what = "lm_head (the decoder's next-token head)"},
        .tokenizer = "unigram",
        .vocab_file = "spiece.model",
        .pre_ln = true,
        .encdec = 1,
    },
    {
        /* BartForConditionalGeneration (modeling_bart.py): post-LN encoder and decoder, learned
           positions from row 2, layernorm_embedding, biases, tied head + final_logits_bias;
           tensors bound by engine/formats/hf-encdec.c */
        .name = "BART",
        .model_types = {"bart", NULL},
        .config = {
            .d_model = "d_model",
            .n_layers = "encoder_layers",
            .n_heads = "encoder_attention_heads",
            .d_ffn = "encoder_ffn_dim",
            .vocab_size = "vocab_size",
            .max_positions = "max_position_embeddings", .max_positions_default = 1024,
            .type_vocab_size = NULL, .type_vocab_size_default = 1,
            .act = NULL, .act_default = "relu",   /* activation_function, read by hf-encdec.c */
            .ln_eps = NULL, .ln_eps_default = 1e-5f,
            .position_type = NULL, .position_type_default = "absolute",
        },
        .tensors = {
            .prefixes = {"model.", "", NULL},
            .word_emb = "shared.weight",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = false,
        .mlm = {.what = "lm_head (the decoder's next-token head)"},
        .tokenizer = "bpe",
        .vocab_file = "vocab.json",
        .merges_file = "merges.txt",
        .encdec = 2,
    },
    {
        /* MarianMTModel (modeling_marian.py, the OPUS-MT translation models): BART's layers
           with sinusoidal positions (MarianSinusoidalPositionalEmbedding, no offset), no
           layernorm_embedding; tensors bound by engine/formats/hf-encdec.c */
        .name = "Marian",
        .model_types = {"marian", NULL},
        .config = {
            .d_model = "d_model",
            .n_layers = "encoder_layers",
            .n_heads = "encoder_attention_heads",
            .d_ffn = "encoder_ffn_dim",
            .vocab_size = "vocab_size",
            .max_positions = "max_position_embeddings", .max_positions_default = 1024,
            .type_vocab_size = NULL, .type_vocab_size_default = 1,
            .act = NULL, .act_default = "relu",   /* activation_function, read by hf-encdec.c */
            .ln_eps = NULL, .ln_eps_default = 1e-5f,
            .position_type = NULL, .position_type_default = "absolute",
        },
        .tensors = {
            .prefixes = {"model.", "", NULL},
            .word_emb = "shared.weight",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = false,
        .mlm = {.what = "lm_head (the decoder's next-token head)"},
        .tokenizer = "unigram",
        .vocab_file = "source.spm",
        .encdec = 3,
    },
    {
        /* ModernBertModel / ModernBertForMaskedLM (modeling_modernbert.py, eager): "model."
           before the encoder, the head and decoder unprefixed, decoder tied to
           tok_embeddings; the fused weights are split by bind_modernbert_layer (hf-model.c) */
        .name = "ModernBERT",
        .model_types = {"modernbert", NULL},
        .config = {
            .d_model = "hidden_size",
            .n_layers = "num_hidden_layers",
            .n_heads = "num_attention_heads",
            .d_ffn = "intermediate_size",
            .vocab_size = "vocab_size",
            .max_positions = "max_position_embeddings", .max_positions_default = 8192,
            .type_vocab_size = NULL, .type_vocab_size_default = 1,
            .act = "hidden_activation", .act_default = "gelu",
            .ln_eps = "norm_eps", .ln_eps_default = 1e-5f,
            .position_type = NULL, .position_type_default = "absolute",
            .attention_bias = "attention_bias", .mlp_bias = "mlp_bias",
        },
        .tensors = {
            .prefixes = {"model.", "", NULL},
            .word_emb = "embeddings.tok_embeddings.weight",
            .emb_ln_w = "embeddings.norm.weight",
            .layer = "layers.",
            .qkv_w = "attn.Wqkv.weight", .qkv_b = "attn.Wqkv.bias",
            .wo = "attn.Wo.weight", .bo = "attn.Wo.bias",
            .ln1_w = "attn_norm.weight", .ln2_w = "mlp_norm.weight",
            .w1 = "mlp.Wi.weight", .b1 = "mlp.Wi.bias",
            .w2 = "mlp.Wo.weight", .b2 = "mlp.Wo.bias",
            .final_ln_w = "final_norm.weight",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = false,
        .mlm = {
            /* ModernBertPredictionHead: dense (classifier_bias), classifier_activation (gelu
               only), norm (norm_bias); decoder tied to tok_embeddings, decoder.bias
               (decoder_bias) */
            .what = "head.* / decoder",
            .dense_w = "head.dense.weight", .dense_b = "head.dense.bias",
            .ln_w = "head.norm.weight",
            .decoder_w = "decoder.weight",
            .bias = {"decoder.bias", NULL},
            .act_gelu = true,
        },
        .tokenizer = "bpe",
        .vocab_file = "vocab.json",
        .merges_file = "merges.txt",
        .pre_ln = true,
        .rotary_encoder = true,
    },
    {
        /* DebertaV2Config / DebertaV2Model / DebertaV2ForMaskedLM (modeling_deberta_v2.py):
           DeBERTa-v2, v3 and mDeBERTa.  "deberta." before the encoder; the attention's
           query_proj / key_proj / value_proj and, without share_att_key, pos_key_proj /
           pos_query_proj; encoder.rel_embeddings and its LayerNorm (hf-deberta.c) */
        .name = "DeBERTa-v2",
        .model_types = {"deberta-v2", NULL},
        .config = {
            .d_model = "hidden_size",
            .n_layers = "num_hidden_layers",
            .n_heads = "num_attention_heads",
            .d_ffn = "intermediate_size",
            .vocab_size = "vocab_size",
            .max_positions = "max_position_embeddings", .max_positions_default = 512,
            /* type_vocab_size (default 0: no token types) is read by hf-deberta.c */
            .type_vocab_size = NULL, .type_vocab_size_default = 1,
            .act = "hidden_act", .act_default = "gelu",
            .ln_eps = "layer_norm_eps", .ln_eps_default = 1e-7f,
            .position_type = NULL, .position_type_default = "absolute",
        },
        .tensors = {
            .prefixes = {"deberta.", "", NULL},
            BERT_EMBEDDINGS,
            .layer = "encoder.layer.",
            .wq = "attention.self.query_proj.weight", .bq = "attention.self.query_proj.bias",
            .wk = "attention.self.key_proj.weight", .bk = "attention.self.key_proj.bias",
            .wv = "attention.self.value_proj.weight", .bv = "attention.self.value_proj.bias",
            .wo = "attention.output.dense.weight", .bo = "attention.output.dense.bias",
            .ln1_w = "attention.output.LayerNorm.weight", .ln1_b = "attention.output.LayerNorm.bias",
            .w1 = "intermediate.dense.weight", .b1 = "intermediate.dense.bias",
            .w2 = "output.dense.weight", .b2 = "output.dense.bias",
            .ln2_w = "output.LayerNorm.weight", .ln2_b = "output.LayerNorm.bias",
        },
        .positions = ATN_POSITIONS_FROM_0,
        .token_types = true,
        .mlm = {
            /* LegacyDebertaV2OnlyMLMHead (config.legacy, BERT's names); the other layout,
               DebertaV2OnlyMLMHead's lm_predictions.lm_head.{dense, LayerNorm, bias}, is
               bound by hf-model.c when the file has it.  Both: LN(act(dense h)) word_emb^T + bias
               with act = hidden_act */
            .what = "cls.predictions.* / lm_predictions.lm_head.*",
            .dense_w = "cls.predictions.transform.dense.weight", .dense_b = "cls.predictions.transform.dense.bias",
            .ln_w = "cls.predictions.transform.LayerNorm.weight", .ln_b = "cls.predictions.transform.LayerNorm.bias",
            .decoder_w = "cls.predictions.decoder.weight",
            .bias = {"cls.predictions.bias", "cls.predictions.decoder.bias"},
        },
        .tokenizer = "unigram",   /* SentencePiece (spm.model; tokenizer.json when shipped) */
        .vocab_file = "spm.model",
        .disentangled = true,
    },
};

enum { N_FAMILIES = sizeof families / sizeof families[0] };

const atn_family *atn_family_bert(void) { return &families[0]; }

const atn_family *atn_family_gpt2(void) {
    for (int32_t i = 0; i < N_FAMILIES; i++)
        if (strcmp(families[i].model_types[0], "gpt2") == 0)
            return &families[i];
    return NULL;
}

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

void atn_family_position_ids(const atn_family *f, const atn_config *c, const atn_encoding *enc, int32_t *pos) {
    switch (f->positions) {
    case ATN_POSITIONS_FROM_0:
        for (int32_t i = 0; i < enc->n; i++)
            pos[i] = i;
        break;
    case ATN_POSITIONS_AFTER_PAD: {
        int32_t pad = c->pad_token_id, count = 0;
        for (int32_t i = 0; i < enc->n; i++)
            pos[i] = enc->ids[i] == pad ? pad : pad + ++count;
        break;
    }
    }
}

int32_t atn_family_max_tokens(const atn_family *f, const atn_config *c) {
    int32_t most = c->max_positions;
    if (f->positions == ATN_POSITIONS_AFTER_PAD)
        most = c->max_positions - c->pad_token_id - 1;
    return most > 0 ? most : 0;
}

void atn_family_layer_source(int32_t l, int32_t applied, int32_t n_groups, int32_t inner_layers, int32_t *group,
                             int32_t *inner) {
    int32_t i = l / inner_layers;
    *inner = l % inner_layers;
    /* int(i / (num_hidden_layers / num_hidden_groups)), in double as Python divides */
    *group = (int32_t)((double)i / ((double)applied / (double)n_groups));
}
