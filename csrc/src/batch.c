/* batch.c - many LCPs / time steps of one shape in one loop (batch.h). */
#include "mbdcp/batch.h"

#include <stddef.h>

/* Flops below which an instance (at its pivot limit) runs without its monitor (see mbdcp_lemke_batch). */
#define QUIET_FLOPS 1e8

int mbdcp_lemke_batch_quiet(mbdcp_int n, const MbdcpLemkeSettings *settings)
{
    /* a call per pivot costs a few percent of a small solve; one that costs at most QUIET_FLOPS
     * at its pivot limit is over soon enough for the monitor to run between instances */
    if (!settings || n < 0) return 0;
    const double limit = settings->max_pivots > 0 ? (double)settings->max_pivots : 100.0 * ((double)n + 1.0);
    return 4.0 * limit * (double)n * (double)n <= QUIET_FLOPS;
}

MbdcpReturn mbdcp_lemke_batch(mbdcp_int count, mbdcp_int n, const mbdcp_float *Ms, size_t M_stride,
                              const mbdcp_float *qs, const MbdcpLemkeSettings *settings,
                              const MbdcpLemkeBatchOutput *out, mbdcp_int *failed, void *work,
                              size_t work_bytes) {
    if (!failed) return MBDCP_ERR_NULL;
    *failed = -1;
    if (count < 0 || n < 0) return MBDCP_ERR_DIMENSION;
    if (M_stride != 0 && M_stride != (size_t)n * (size_t)n) return MBDCP_ERR_DIMENSION;
    if (!settings || !out) return MBDCP_ERR_NULL;
    if (count > 0 && n > 0 && (!Ms || !qs || !out->z || !out->w || !out->status || !out->pivots || !out->residual))
        return MBDCP_ERR_NULL;
    const int between = settings->monitor.fn && mbdcp_lemke_batch_quiet(n, settings);
    MbdcpLemkeSettings each = *settings;
    if (between) each.monitor.fn = NULL;
    for (mbdcp_int i = 0; i < count; ++i) {
        const size_t row = (size_t)i * (size_t)n;
        if (between && mbdcp_monitor_call(&settings->monitor, i, -1, -1, 0.0)) {
            out->status[i] = (mbdcp_int)MBDCP_INTERRUPTED;
            break;
        }
        MbdcpLemkeOutput one;
        one.z = out->z ? out->z + row : NULL;
        one.w = out->w ? out->w + row : NULL;
        one.basis = out->basis ? out->basis + row : NULL;
        one.ray = NULL;
        MbdcpLemkeInfo info;
        MbdcpReturn rc = mbdcp_lemke_solve(n, Ms ? Ms + (size_t)i * M_stride : NULL, qs ? qs + row : NULL,
                                           &each, NULL, &one, &info, work, work_bytes);
        if (rc != MBDCP_OK) {
            *failed = i;
            return rc;
        }
        out->status[i] = (mbdcp_int)info.status;
        out->pivots[i] = info.pivots;
        out->residual[i] = info.residual;
        if (info.status == MBDCP_INTERRUPTED) break; /* the monitor stopped the batch */
    }
    return MBDCP_OK;
}

static int same_shape(const MbdcpStepProblem *a, const MbdcpStepProblem *b) {
    return a->n_v == b->n_v && a->n_c == b->n_c && a->m == b->m && a->n_b == b->n_b && a->m_j == b->m_j &&
           a->n_j == b->n_j;
}

MbdcpReturn mbdcp_step_batch(mbdcp_int count, const MbdcpStepProblem *problems,
                             const MbdcpLemkeSettings *settings, MbdcpStepOutput *outs,
                             MbdcpLemkeInfo *infos, mbdcp_int *failed, void *work, size_t work_bytes) {
    if (!failed) return MBDCP_ERR_NULL;
    *failed = -1;
    if (count < 0) return MBDCP_ERR_DIMENSION;
    if (count == 0) return MBDCP_OK;
    if (!problems || !settings || !outs || !infos) return MBDCP_ERR_NULL;
    for (mbdcp_int i = 0; i < count; ++i) {
        MbdcpReturn rc = same_shape(&problems[i], &problems[0])
                             ? mbdcp_step_solve(&problems[i], settings, NULL, &outs[i], &infos[i], work, work_bytes)
                             : MBDCP_ERR_DIMENSION;
        if (rc != MBDCP_OK) {
            *failed = i;
            return rc;
        }
        if (infos[i].status == MBDCP_INTERRUPTED) break; /* the monitor stopped the batch */
    }
    return MBDCP_OK;
}
