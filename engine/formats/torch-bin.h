/* pytorch_model.bin: PyTorch's torch.save files read without executing anything.
 *
 * Formats:
 *  - zip (torch >= 1.6): a ZIP archive (engine/formats/zip.h) holding <name>/data.pkl, the pickled
 *    state_dict, and each storage's bytes as <name>/data/<key>; <name> is the file's stem
 *    (torch 1.x: "pytorch_model") or "archive" (torch 2.x, and any torch saving to a
 *    buffer).  An optional <name>/byteorder must say "little".
 *  - legacy (before torch 1.6, _use_new_zipfile_serialization=False): five pickles in a row
 *    (the magic number 0x1950a86a20f9469cfc6c, protocol 1001, sys_info, the state_dict, the
 *    list of storage keys) followed, for each key in that order, by an 8-byte little-endian
 *    element count and the storage's raw bytes.  bert-base-uncased's own file is one.
 * The pickles go through the restricted unpickler (engine/formats/torch-pickle.h), which refuses
 * every global and opcode a state_dict does not use, by name.
 *
 * The result is an atn_st_file (engine/formats/safetensors.h), so the loader binds .bin and
 * safetensors weights through the same calls (atn_st_find, atn_st_detach_map ...).  Every
 * tensor of the top-level dict becomes an atn_st_tensor named by its key, of its storage's
 * dtype (F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL).  Each one's offset, sizes and
 * strides are checked against its storage, and each storage against its zip entry or its
 * raw bytes in the file, with overflow checks.  A contiguous tensor points into the file's
 * mapping (tensors sharing a storage, such as a tied decoder, share bytes).  A strided view
 * (a transposed weight) or a broadcast one (some stride 0 over a size > 1: torch.expand, so
 * a 600-byte file can declare a tensor of terabytes) is kept as a view: its data is NULL
 * and nothing is copied until the caller asks for it with atn_st_materialise, which copies
 * it contiguous into a block the file object owns, bounded by the caller's budget (the
 * Hugging Face loader passes what is left of the memory budget, engine/core/memlimit.h,
 * and refuses a larger one naming the file and tensor).  A view nobody reads costs
 * nothing.  Values of the dict that are not tensors are ignored.
 */
#ifndef ATN_TORCH_BIN_H
#define ATN_TORCH_BIN_H

#include "formats/safetensors.h"

/* Maps path read-only and reads it.  On success *out owns the mapping.  ATN_E_IO (cannot
 * open), ATN_E_FORMAT (malformed: the message names the file, the zip entry or pickle, and
 * the tensor or storage), ATN_E_UNSUPPORTED (a refused global, a compressed entry, a
 * big-endian file), ATN_E_NOMEM. */
atn_status atn_torch_open(const char *path, atn_st_file **out, atn_error *err);

/* The same over an image in memory (borrowed: it must outlive the result, whose contiguous
 * tensors point into it).  origin names it in messages. */
atn_status atn_torch_parse(const char *origin, const void *buf, size_t len,
                           atn_st_file **out, atn_error *err);

#endif
