/* Float32 bit patterns and ulp distances for the tests that compare bits and errors
 * (engine-activation, precision): shared through test_common_dep.  Written here, not taken
 * from engine/core/bits.h, so the tests measure the engine with casts of their own. */
#ifndef ATN_TEST_FLOATS_H
#define ATN_TEST_FLOATS_H

#include <stddef.h>
#include <stdint.h>

/* The bits of f, and the float with bits u (memcpy casts). */
uint32_t bits_of(float f);
float float_of(uint32_t u);
/* True when a[i] and b[i] have the same bits for every i < n (a NaN equals only the same
 * NaN; 0 and -0 differ). */
int same_bits_n(const float *a, const float *b, size_t n);
/* |r - e| in units of the last place of e rounded to float (the denormal spacing 2^-149 at
 * the bottom). */
double ulp_error(float r, double e);

#endif
