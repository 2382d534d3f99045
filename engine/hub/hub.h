/* attnscope hub: downloading models from the Hugging Face Hub into the shared cache.
 *
 * The one module of attnscope that talks to the network (libcurl).  It sits beside the
 * engine: it uses the engine's public headers (atn_status, atn_error, hf-cache.h for the
 * cache folder and names) and only the command line and the window link it; the engine
 * itself never includes curl (tests/cli/test-layering.sh).
 *
 * What it writes is huggingface_hub's cache layout (file_download.py), so Python's
 * transformers and attnscope share every download:
 *   CACHE/models--ORG--NAME/blobs/ETAG               the file (ETAG: git sha1 of a small
 *                                                    file, sha256 of an LFS file)
 *   CACHE/models--ORG--NAME/blobs/ETAG.incomplete     a download in progress (resumed with
 *                                                    an HTTP Range request)
 *   CACHE/models--ORG--NAME/snapshots/COMMIT/FILE     relative symlink to ../../blobs/ETAG
 *   CACHE/models--ORG--NAME/refs/REVISION             the commit, no newline (when the
 *                                                    revision asked for is not the commit)
 *   CACHE/.locks/models--ORG--NAME/ETAG.lock          held (flock) while the blob is written
 *
 * Environment, read at each call: HF_ENDPOINT (default https://huggingface.co; mirrors),
 * HF_HUB_OFFLINE (1/true/yes/on: no network at all), HF_TOKEN (else the legacy
 * HUGGING_FACE_HUB_TOKEN, else the token file $HF_TOKEN_PATH or $HF_HOME/token), the
 * cache variables of hf-cache.h, and libcurl's proxy variables (http_proxy, https_proxy,
 * HTTPS_PROXY, all_proxy, no_proxy).  The token is sent only to the endpoint's host, never to
 * a CDN the Hub redirects to.
 *
 * Threads: no global state besides libcurl's one-time global init (done under
 * pthread_once); one plan belongs to one thread at a time.  Conventions as in
 * attnscope.h: caller-owned results with a _free that accepts NULL; err may be NULL. */
#ifndef ATTNSCOPE_HUB_H
#define ATTNSCOPE_HUB_H

#include "attnscope.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct atn_hub_file {
    char *name;          /* owned: path in the repository, "config.json", "0_Transformer/vocab.txt" */
    int64_t size;        /* bytes (the LFS object's size for LFS files); -1 when the Hub did not say */
    bool lfs;            /* stored with git-lfs: verified against its sha256 */
    char sha256[65];     /* the LFS object's sha256 from the model info; "" when not LFS */
    bool cached;         /* already in the snapshot: not fetched again */
} atn_hub_file;

/* What a download of one model revision will fetch, from the Hub's model-info API. */
typedef struct atn_hub_plan {
    char *id;            /* owned: "org/name" */
    char *revision;      /* owned: as asked ("main" by default) */
    char *commit;        /* owned: the 40-hex commit the revision is at */
    char *endpoint;      /* owned: HF_ENDPOINT or https://huggingface.co, without a trailing '/' */
    char *cache_dir;     /* owned: the cache folder */
    char *snapshot;      /* owned: CACHE/models--ORG--NAME/snapshots/COMMIT */
    const char *weights; /* static: "safetensors" or "pytorch" */
    int32_t n_files;
    atn_hub_file *files; /* [n_files]: config, tokenizer files, weights (shards included) */
    int64_t total_bytes; /* sum of the files' sizes (known ones) */
    int64_t fetch_bytes; /* of those not cached yet */
} atn_hub_plan;

enum { ATN_HUB_LOCK_TIMEOUT_DEFAULT = 1800 };   /* seconds; see atn_hub_download */

/* Progress of a download, reported after each chunk and at each file's start and end. */
typedef struct atn_hub_progress {
    const char *file;       /* the file being fetched (borrowed) */
    int32_t file_index;     /* 0-based among the plan's files */
    int32_t n_files;
    int64_t file_done, file_total;   /* bytes of this file (total -1 when unknown) */
    int64_t done, total;    /* bytes of the whole download, counting resumed parts as done */
    double rate;            /* bytes per second over the last few seconds; 0 at first */
    double eta;             /* seconds left at that rate; -1 when unknown */
    const char *waiting_for; /* NULL; while another process holds the lock of the blob to be
                                written: that lock file (borrowed), reported every 0.1 s */
} atn_hub_progress;

/* Called on the downloading thread; return false to cancel (ATN_E_CANCELLED, the partial
 * blob kept as .incomplete for the next try). */
typedef bool (*atn_hub_progress_fn)(const atn_hub_progress *p, void *user_data);

/* Whether HF_HUB_OFFLINE asks for no network (1, true, yes, on; any case). */
bool atn_hub_offline(void);

/* Asks the Hub about spec ("org/name" or "org/name@revision") and chooses what attnscope
 * needs: config.json, the tokenizer files (tokenizer.json, tokenizer_config.json,
 * special_tokens_map.json, added_tokens.json, vocab.txt, vocab.json, merges.txt,
 * sentencepiece/spiece models), and one weights format: model.safetensors (or its index and
 * shards), else pytorch_model.bin (or its index and shards).  A sentence-transformers
 * repository (modules.json) gets modules.json plus those files of its Transformer module's
 * folder.  Marks the files already in the snapshot.  *out is the caller's
 * (atn_hub_plan_free), NULL on failure.  Statuses and messages:
 *   ATN_E_INVALID  a bad model id;
 *   ATN_E_IO       offline mode ("HF_HUB_OFFLINE is set"), the network ("cannot reach
 *                  ENDPOINT: ..."), 404 (no such repository, or no such revision),
 *                  401/403 (private or gated: "set HF_TOKEN or log in"), other HTTP errors;
 *   ATN_E_FORMAT   a model-info answer that is not what the Hub sends;
 *   ATN_E_UNSUPPORTED  a repository without config.json or without weights attnscope reads;
 *   ATN_E_NOMEM.
 * keep_going may be NULL (no cancel); ATN_E_CANCELLED when it said stop.  Every request is
 * bounded: an API or HEAD answer not complete within HF_HUB_ETAG_TIMEOUT seconds (default
 * 60) is ATN_E_IO.  Sizes must be whole numbers up to 2^53 and sum within int64
 * (ATN_E_FORMAT).  A control character in the token is ATN_E_INVALID (it would inject a
 * header).  Credentials in HF_ENDPOINT (https://user:password@host) go to that host only
 * and appear in no message and in no URL of the plan. */
/* Asked about once a second while an answer is awaited; false cancels (ATN_E_CANCELLED). */
typedef bool (*atn_hub_keep_going_fn)(void *user_data);
atn_status atn_hub_plan_fetch(const char *spec, atn_hub_keep_going_fn keep_going, void *user_data,
                              atn_hub_plan **out, atn_error *err);

/* Fetches the plan's files that are not cached (a blob already there is linked, not
 * fetched), verifies each (size; sha256 of LFS files against the linked etag; the git blob
 * id, sha1("blob <size>\0" + content), of other files against their ETag when it is 40 hex
 * digits: a mismatch is deleted and reported, never linked), links them into the snapshot, then writes
 * refs/REVISION.  progress may be NULL.  ATN_OK; ATN_E_CANCELLED (progress said stop: the
 * partial blob stays as .incomplete); ATN_E_IO (network, HTTP status, "no space left on
 * device" naming the file: nothing half-written is visible in the snapshot); ATN_E_FORMAT
 * (the Hub's headers lack the commit or etag, a size or checksum mismatch, a body longer
 * than the size the Hub announced (stopped there, deleted), a Content-Encoding other than
 * identity); ATN_E_NOMEM.  Files of the cache it creates or appends to (blobs/ETAG.incomplete,
 * the lock) are never opened through a symbolic link (ATN_E_IO naming it).  Waiting for the
 * lock another process holds on the same blob is reported through progress (waiting_for)
 * and cancelled by it, and bounded: after ATTNSCOPE_HUB_LOCK_TIMEOUT seconds (1..86400;
 * default ATN_HUB_LOCK_TIMEOUT_DEFAULT, 30 minutes: the other process may be fetching a
 * shard of gigabytes) it is ATN_E_IO naming the file and the lock file. */
atn_status atn_hub_download(atn_hub_plan *plan, atn_hub_progress_fn progress, void *user_data,
                            atn_error *err);

void atn_hub_plan_free(atn_hub_plan *plan);   /* NULL: nothing */

#ifdef __cplusplus
}
#endif

#endif
