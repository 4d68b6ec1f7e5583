/*
 * batch.h - many problems of one shape solved in one loop
 *
 * A batch is `count` independent problems of equal size. Each is solved exactly as a
 * single call would solve it (same routine, same settings, the workspace reused from one
 * instance to the next: every solve initialises what it reads), so a batched result is bit
 * for bit the result of the single solve. Statuses are per instance; one instance that ends
 * on a ray or at the pivot limit does not stop the others. The loop holds no lock and
 * touches only its own outputs, so a caller may split a batch into parts and run the parts
 * on threads, each with its own workspace. The settings' monitor is called by every solve of a
 * large instance, and before each instance of a small one (at most 1e8 flops at its pivot limit:
 * a call per pivot would cost a few percent of its solve); when it stops one (status
 * MBDCP_INTERRUPTED), the batch stops there and the outputs of the instances after it are left as
 * they were.
 */
#ifndef MBDCP_BATCH_H
#define MBDCP_BATCH_H

#include "lemke.h"
#include "step.h"

/* Outputs of a batch of LCPs of size n, row i of each array for instance i.
 * z, w, status, pivots, residual are required; basis may be NULL (else count x n flags). */
typedef struct {
    mbdcp_float *z;        /* count x n */
    mbdcp_float *w;        /* count x n */
    mbdcp_int *basis;      /* count x n or NULL */
    mbdcp_int *status;     /* count: MbdcpStatus codes */
    mbdcp_int *pivots;     /* count */
    mbdcp_float *residual; /* count */
} MbdcpLemkeBatchOutput;

/* 1 if mbdcp_lemke_batch calls the settings' monitor before each instance of size n, not at
 * every pivot (an instance that costs at most 1e8 flops at its pivot limit). */
int mbdcp_lemke_batch_quiet(mbdcp_int n, const MbdcpLemkeSettings *settings);

/*
 * Solve LCP(M_i, q_i), i = 0..count-1, with mbdcp_lemke_solve.
 *   Ms      count x n x n, row-major, instance after instance; or one n x n matrix shared by
 *           all when M_stride is 0 (M_stride is the distance between instances in doubles:
 *           n * n or 0)
 *   qs      count x n
 *   work    at least mbdcp_lemke_workspace_size(n) bytes, aligned for double
 * Returns MBDCP_OK, or the first argument error with *failed set to the instance (or -1 when
 * the error is in the batch's own arguments); instances after it are not solved.
 */
MbdcpReturn mbdcp_lemke_batch(mbdcp_int count, mbdcp_int n, const mbdcp_float *Ms, size_t M_stride,
                              const mbdcp_float *qs, const MbdcpLemkeSettings *settings,
                              const MbdcpLemkeBatchOutput *out, mbdcp_int *failed, void *work,
                              size_t work_bytes);

/*
 * Solve the time steps problems[i], i = 0..count-1, with mbdcp_step_solve; outputs in outs[i],
 * status, pivots and residual in infos[i]. Every problem must have the shape of problems[0]
 * (n_v, n_c, m, n_b, m_j, n_j), so one workspace of mbdcp_step_workspace_size(&problems[0])
 * bytes serves all. Returns MBDCP_OK, or the first error (e.g. MBDCP_ERR_NOT_POSDEF) with
 * *failed set to its instance; instances after it are not solved.
 */
MbdcpReturn mbdcp_step_batch(mbdcp_int count, const MbdcpStepProblem *problems,
                             const MbdcpLemkeSettings *settings, MbdcpStepOutput *outs,
                             MbdcpLemkeInfo *infos, mbdcp_int *failed, void *work, size_t work_bytes);

#endif /* MBDCP_BATCH_H */
