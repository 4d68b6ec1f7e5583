/* lemke_avx2.h - Lemke's method compiled a second time, for x86-64 CPUs with AVX2 (lemke_avx2.c).
 * Internal to the core. LEMKE_AVX2 is defined where that copy is built (GCC on x86-64, unless
 * MBDCP_PORTABLE is defined); lemke.c's entry points then take it when the CPU has AVX2. */
#ifndef MBDCP_LEMKE_AVX2_H
#define MBDCP_LEMKE_AVX2_H

#include "mbdcp/lemke.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(MBDCP_PORTABLE)
#define LEMKE_AVX2 1
MbdcpReturn mbdcp_lemke_solve_avx2(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *q_mag,
                                   const MbdcpLemkeSettings *settings, const mbdcp_int *start, int reuse,
                                   const MbdcpLemkeOutput *out, MbdcpLemkeInfo *info, void *work,
                                   size_t work_bytes);
#endif

#endif
