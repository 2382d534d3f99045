#pragma once

#include <stdint.h>

/* The softmax's exponentials of one row, several at a time, bit for bit as the scalar loop
 *     x = row[j] - mx;  row[j] = x < -110.0f ? 0.0f : expf(x);
 * makes them with this process's libm (glibc's expf, its FMA variant): on a CPU with AVX2
 * and FMA, exponents in [-87, 0] go four at a time through the same operations glibc's
 * expf does (its table and polynomial, the same fused multiply-adds, in doubles); every
 * other x (NaN, infinities, x > 0, x < -87) takes the scalar loop.  A self-check against
 * expf on first use (thread-safe) turns the vector path off where the libm's results differ,
 * so the numbers are the scalar loop's on any machine.  row [n], written in place. */
void atn_expf_row(float *row, float mx, int32_t n);

/* Whether atn_expf_row's vector path is on (AVX2 + FMA and the self-check passed). */
int atn_expf_row_vector(void);
