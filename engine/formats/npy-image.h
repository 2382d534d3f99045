/* Reading one NumPy .npy array that is already in memory (a mapping, or an entry of an .npz
 * archive): the header is checked and the array handed out as a pointer into the image.
 *
 * Accepted: format 1.0/2.0/3.0, C order, little-endian (or byte-sized) descr among <f4 <f2
 * <f8 <i4 <i8 <i2 |i1 |u1 |b1 <u4 <u8 <u2 and <U<k> (fixed-width UTF-32 strings, k code points:
 * what np.array(["a", "bc"]) is).  Object arrays (pickles) are refused.  The data must fit
 * the image exactly as its shape says. */
#ifndef ATN_NPY_IMAGE_H
#define ATN_NPY_IMAGE_H

#include "formats/safetensors.h"

#include <stddef.h>

typedef struct atn_npy_array {
    atn_st_tensor t;       /* name left NULL; dtype meaningless when unicode_width > 0 */
    int32_t unicode_width; /* > 0: a string array of that many UTF-32 code points each */
} atn_npy_array;

/* origin names the image in messages.  ATN_E_FORMAT (not .npy, truncated, a bad header, a
 * shape the data does not fill), ATN_E_UNSUPPORTED (Fortran order, big-endian, an object
 * array or another dtype: named). */
atn_status atn_npy_parse_image(const char *origin, const void *buf, size_t len, atn_npy_array *out,
                               atn_error *err);

#endif
