/* lemke_avx2.c - lemke.c compiled again with AVX2 instructions (4 doubles per vector instead of 2)
 * for the CPUs that have them; lemke.c's entry points choose at run time (lemke_avx2.h). The
 * answers are the same bits: C99 mode keeps every product and sum rounded as written (no fused
 * multiply-add, no reordered sums), and the vectors only do more rows at once. The copy's
 * external functions take the suffix _avx2 (hidden in the library like all of the core's). */
#include "lemke_avx2.h"

#ifdef LEMKE_AVX2
#pragma GCC target("avx2")
#define LEMKE_AVX2_COPY 1
#define mbdcp_lemke_default_settings mbdcp_lemke_default_settings_avx2
#define mbdcp_lemke_check_settings mbdcp_lemke_check_settings_avx2
#define mbdcp_lemke_workspace_size mbdcp_lemke_workspace_size_avx2
#define mbdcp_lcp_residual mbdcp_lcp_residual_avx2
#define mbdcp_lcp_row_ratio mbdcp_lcp_row_ratio_avx2
#define mbdcp_lcp_verify mbdcp_lcp_verify_avx2
#define mbdcp_lcp_verify_scaled mbdcp_lcp_verify_scaled_avx2
#include "lemke.c"
#else
typedef int mbdcp_lemke_avx2_not_built; /* ISO C: a translation unit declares something */
#endif
