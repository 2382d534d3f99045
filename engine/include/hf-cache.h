/* attnscope engine: the Hugging Face cache, read-only (no networking here).
 *
 * The cache is the folder huggingface_hub and transformers share:
 *   $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
 *   ~/.cache/huggingface/hub
 * with one folder per model repository:
 *   models--ORG--NAME/refs/REVISION          a text file holding a 40-hex commit hash
 *   models--ORG--NAME/snapshots/COMMIT/FILE  relative symlinks into ../../blobs/
 *   models--ORG--NAME/blobs/ETAG             the file contents (ETAG: the git blob sha1, or
 *                                            the sha256 of an LFS file)
 * A model id is "org/name" or "name" (models--name); "id@revision" names a branch or tag
 * (a file under refs/, e.g. "main", "pr/1") or a full 40-hex commit hash.
 *
 * Conventions as in attnscope.h: statuses and atn_error, caller-owned results freed with
 * their _free (NULL accepted), err may be NULL.  Nothing here keeps state; the
 * environment is read at each call. */
#ifndef ATTNSCOPE_HF_CACHE_H
#define ATTNSCOPE_HF_CACHE_H

#include "attnscope.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { ATN_HF_ID_MAX = 256, ATN_HF_REV_MAX = 256 };

/* The cache folder (not checked to exist) into buf (size len): NULL when it does not fit
 * or no home folder is known (HOME unset and no passwd entry); else buf. */
char *atn_hf_cache_dir(char *buf, size_t len);

/* Splits "org/name[@rev]" into id and revision (rev "main" when none is given).
 * A valid id is one or two parts separated by '/', each 1..96 of [A-Za-z0-9._-], not
 * starting or ending with '.' or '-', without "--" or ".."; a revision is non-empty, has
 * no "..", no leading '/', no control characters.  id and rev are ATN_HF_ID_MAX and
 * ATN_HF_REV_MAX bytes.  ATN_OK or ATN_E_INVALID saying what is wrong. */
atn_status atn_hf_parse_spec(const char *spec, char id[ATN_HF_ID_MAX], char rev[ATN_HF_REV_MAX],
                             atn_error *err);

/* "org/name" -> "models--org--name" into buf (size len); ATN_E_INVALID when it does not
 * fit. */
atn_status atn_hf_repo_folder_name(const char *id, char *buf, size_t len, atn_error *err);

/* Resolves spec ("org/name" or "org/name@rev") in the cache cache_dir (NULL: the default
 * above) to its snapshot folder, written to out (size out_len).  A revision that is a
 * 40-hex hash is used as is; else refs/REV gives the commit.  The snapshot folder must
 * exist.  ATN_OK; ATN_E_INVALID for a bad spec; ATN_E_IO when the model, the ref or the
 * snapshot is not in the cache: the message says which path was looked for, lists the
 * revisions that are cached, and suggests `attnscope download`. */
atn_status atn_hf_cache_resolve(const char *cache_dir, const char *spec, char *out, size_t out_len,
                                atn_error *err);

/* What one cached revision holds (files are checked through their symlinks: a dangling
 * link counts as missing). */
typedef struct atn_hf_revision {
    char *commit;        /* owned: the snapshot folder's name */
    char *refs;          /* owned: the refs pointing at it, comma-separated ("main,v1"); "" */
    char *folder;        /* owned: full path of snapshots/COMMIT */
    bool has_config;     /* config.json (in the transformer's folder for sentence-transformers) */
    bool has_tokenizer;  /* tokenizer.json, vocab.txt, vocab.json + merges.txt, or a
                            sentencepiece model */
    bool has_weights;    /* model.safetensors[.index.json] or pytorch_model.bin[.index.json] */
    const char *weights; /* static: "safetensors", "pytorch", "" */
    bool sentence_transformers;   /* modules.json present */
} atn_hf_revision;

typedef struct atn_hf_cached_model {
    char *id;                  /* owned: "org/name" */
    char *folder;              /* owned: full path of models--org--name */
    int64_t size;              /* bytes of the regular files under blobs/ */
    int32_t n_revisions;
    atn_hf_revision *revisions;   /* [n_revisions], sorted: referenced ones first, by commit */
} atn_hf_cached_model;

typedef struct atn_hf_cache_list {
    char *cache_dir;           /* owned: the folder that was scanned */
    int32_t n;
    atn_hf_cached_model *models;  /* [n], sorted by id */
} atn_hf_cache_list;

/* Lists the model repositories (models--*) of cache_dir (NULL: the default).  A missing
 * cache folder is an empty list (ATN_OK).  Datasets and spaces are skipped, as are
 * folders whose names are not model ids.  *out is the caller's (atn_hf_cache_list_free);
 * NULL on failure.  ATN_OK, ATN_E_IO (the folder exists but cannot be read), ATN_E_NOMEM. */
atn_status atn_hf_cache_list_models(const char *cache_dir, atn_hf_cache_list **out, atn_error *err);
void atn_hf_cache_list_free(atn_hf_cache_list *list);

/* A sentence-transformers folder (one with modules.json) keeps its transformer in the
 * folder of modules.json's sentence_transformers.models.Transformer entry ("" or "./": the
 * root; usually "0_Transformer" or the root).  Writes that folder to out (size out_len):
 * folder itself when there is no modules.json.  ATN_OK; ATN_E_FORMAT for a modules.json
 * that is not a JSON list of modules, names no Transformer module, or whose path leaves
 * the folder; ATN_E_IO when it cannot be read. */
atn_status atn_hf_transformer_folder(const char *folder, char *out, size_t out_len, atn_error *err);

/* The model id of a folder inside the cache: ".../models--ORG--NAME/snapshots/COMMIT" (or
 * a folder below it) -> "ORG/NAME" into id (size len); false (id "") for other paths. */
bool atn_hf_cache_id_of_path(const char *folder, char *id, size_t len);

#ifdef __cplusplus
}
#endif

#endif
