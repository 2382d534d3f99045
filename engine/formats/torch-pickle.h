/* A restricted unpickler for PyTorch checkpoints: it builds plain values from a pickle and
 * never calls anything.  It understands the opcodes torch.save writes (protocol 2, and the
 * few protocol 4 ones newer Pythons use for the same values) and only the globals a saved
 * state_dict uses:
 *
 *   collections.OrderedDict                      called with () -> a dict
 *   torch._utils._rebuild_tensor_v2 / _rebuild_tensor / _rebuild_parameter
 *                                                called with their arguments -> a tensor
 *   torch.FloatStorage, HalfStorage, BFloat16Storage, DoubleStorage, LongStorage,
 *   IntStorage, ShortStorage, CharStorage, ByteStorage, BoolStorage, and the dtypes
 *   torch.float32/float16/bfloat16/float64/int64/int32/int16/int8/uint8/bool
 *                                                only as the storage type of a persistent id
 *
 * Any other global is refused by name ("global os.system is not allowed"), as is any other
 * opcode (named), REDUCE of anything but the calls above, and a persistent id that is not
 * ('storage', type, key, location, numel[, view]).  Limits: the pickle's size, memo indices
 * (ATN_PK_MAX_MEMO), stack depth, container nesting, string length, total objects and
 * tensors; each is refused with a message, never a crash.  Tensor descriptors are only
 * parsed here; engine/formats/torch-bin.c checks them against the storages' bytes.
 */
#ifndef ATN_TORCH_PICKLE_H
#define ATN_TORCH_PICKLE_H

#include "attnscope.h"
#include "formats/safetensors.h"

#include <stddef.h>
#include <stdint.h>

enum {
    ATN_PK_MAX_MEMO = 1 << 20,        /* memo indices must be below this */
    ATN_PK_MAX_STACK = 1 << 16,       /* values on the stack (all marks together) */
    ATN_PK_MAX_NESTING = 64,          /* containers inside containers */
    ATN_PK_MAX_STRING = 1 << 20,      /* bytes of one string */
    ATN_PK_MAX_OBJECTS = 1 << 20,     /* values made (bert-large's state_dict: ~6000) */
    ATN_PK_MAX_TENSORS = 1 << 17,
    ATN_PK_MAX_STORAGES = 1 << 17,
};

typedef enum atn_pk_kind {
    ATN_PK_NONE, ATN_PK_BOOL, ATN_PK_INT, ATN_PK_BIGINT, ATN_PK_FLOAT, ATN_PK_STR,
    ATN_PK_TUPLE, ATN_PK_LIST, ATN_PK_DICT, ATN_PK_GLOBAL, ATN_PK_STORAGE, ATN_PK_TENSOR,
} atn_pk_kind;

typedef struct atn_pk_value atn_pk_value;
struct atn_pk_value {
    atn_pk_kind kind;
    int depth;                 /* nesting: 0 for scalars */
    int64_t i;                 /* INT, BOOL; GLOBAL: its id; STORAGE / TENSOR: the index */
    double f;
    const char *s;             /* STR: NUL-terminated (may hold NULs; n is the length);
                                  BIGINT: n little-endian two's complement bytes */
    size_t n;                  /* STR / BIGINT length; TUPLE / LIST items; DICT pairs */
    size_t cap;
    atn_pk_value **items;      /* DICT: key, value, key, value ... */
};

/* A storage a persistent id named.  Zip format: the entry <archive>/data/<key>.  Legacy:
 * the raw storage <key>, or a view of numel elements at view_offset in the storage
 * root_key (root_key == key when it is not a view). */
typedef struct atn_pk_storage {
    const char *key;
    const char *root_key;
    atn_st_dtype dtype;
    uint64_t numel;
    uint64_t view_offset;
} atn_pk_storage;

typedef struct atn_pk_tensor {
    int32_t storage;           /* index into the storages */
    uint64_t offset;           /* in elements */
    int ndim;
    int64_t shape[ATN_ST_MAX_DIMS];
    int64_t stride[ATN_ST_MAX_DIMS];   /* in elements, >= 0 */
} atn_pk_tensor;

typedef struct atn_pickle atn_pickle;

/* Unpickles buf[0, len) up to its STOP.  origin names it in messages ("x.bin: archive/
 * data.pkl").  *used gets the bytes the pickle took (the legacy format has several in a
 * row); NULL is fine.  Storages named by the same key are one storage.  On success *out owns
 * every value; atn_pickle_result is the value STOP returned.  ATN_E_FORMAT (malformed or
 * truncated, a refused opcode, REDUCE or persistent id, a limit), ATN_E_UNSUPPORTED (a
 * global that is not allowed, by name), ATN_E_NOMEM. */
atn_status atn_pickle_load(const char *origin, const void *buf, size_t len, size_t *used,
                           atn_pickle **out, atn_error *err);
void atn_pickle_free(atn_pickle *p);   /* NULL is a no-op */

const atn_pk_value *atn_pickle_result(const atn_pickle *p);
int32_t atn_pickle_n_storages(const atn_pickle *p);
const atn_pk_storage *atn_pickle_storage(const atn_pickle *p, int32_t i);
int32_t atn_pickle_n_tensors(const atn_pickle *p);
const atn_pk_tensor *atn_pickle_tensor(const atn_pickle *p, int32_t i);

#endif
