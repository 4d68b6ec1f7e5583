/* The Stewart-Trinkle time-stepping LCP (see step.h). */
#include <math.h>
#include <string.h>

#include "mbdcp/step.h"

static mbdcp_int n_w(const MbdcpStepProblem *p)
{
    return p->n_c + p->m + p->m_j;
}

mbdcp_int mbdcp_step_lcp_size(const MbdcpStepProblem *p)
{
    return p ? n_w(p) + p->n_c + p->n_j : 0;
}

/* The reduction, F and f, then Lemke's workspace. */
size_t mbdcp_step_workspace_size(const MbdcpStepProblem *p)
{
    if (!p) return 0;
    const size_t N = (size_t)mbdcp_step_lcp_size(p);
    return mbdcp_reduce_workspace_size(p->n_v, n_w(p), p->n_b) + (N * N + 2 * N) * sizeof(mbdcp_float) +
           mbdcp_lemke_workspace_size((mbdcp_int)N);
}

MbdcpReturn mbdcp_step_assemble(const MbdcpStepProblem *p, const MbdcpReduced *red, mbdcp_float *F,
                                mbdcp_float *f)
{
    if (!p || !red) return MBDCP_ERR_NULL;
    const mbdcp_int nc = p->n_c, m = p->m, mj = p->m_j, nj = p->n_j, nw = n_w(p);
    const mbdcp_int N = mbdcp_step_lcp_size(p);
    if (red->n_w != nw) return MBDCP_ERR_DIMENSION;
    if (N == 0) return MBDCP_OK;
    if (!F || !f) return MBDCP_ERR_NULL;
    /* Row offsets of the blocks of z = (p_n, beta, beta_j, sigma, sigma_j). */
    const mbdcp_int o_b = nc, o_j = nc + m, o_s = nw, o_sj = nw + nc;

    mbdcp_place_gram(red, N, F);
    mbdcp_place_grouping(m, nc, p->E, o_b, o_s, N, F);
    mbdcp_place_grouping(mj, nj, p->Ej, o_j, o_sj, N, F);
    for (mbdcp_int c = 0; c < nc; ++c) F[(size_t)(o_s + c) * N + c] = p->mu[c];

    mbdcp_contact_rhs(p, red, f);
    for (mbdcp_int c = 0; c < nc; ++c) f[o_s + c] = 0.0;
    for (mbdcp_int c = 0; c < nj; ++c) f[o_sj + c] = p->beta_max ? p->beta_max[c] : 0.0;
    return MBDCP_OK;
}

/* The scale of each row of f (mbdcp_contact_rhs_magnitude; sigma's rows are 0, the joints' beta_max). */
static void step_rhs_magnitude(const MbdcpStepProblem *p, const MbdcpReduced *red, mbdcp_float *fmag)
{
    const mbdcp_int nc = p->n_c, nj = p->n_j, nw = n_w(p);
    mbdcp_contact_rhs_magnitude(p, red, fmag);
    for (mbdcp_int c = 0; c < nc; ++c) fmag[nw + c] = 0.0;
    for (mbdcp_int c = 0; c < nj; ++c) fmag[nw + nc + c] = p->beta_max ? fabs(p->beta_max[c]) : 0.0;
}

MbdcpReturn mbdcp_step_solve(const MbdcpStepProblem *p, const MbdcpLemkeSettings *settings, const mbdcp_int *start,
                             MbdcpStepOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
    if (!p || !settings || !out || !info || !work) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_step_problem_check(p);
    if (rc != MBDCP_OK) return rc;
    rc = mbdcp_lemke_check_settings(settings, NULL);
    if (rc != MBDCP_OK) return rc;
    if (work_bytes < mbdcp_step_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    const mbdcp_int N = mbdcp_step_lcp_size(p);
    if (!out->v_next || (p->n_b > 0 && !out->p_b) || (N > 0 && (!out->z || !out->w))) return MBDCP_ERR_NULL;

    const size_t red_bytes = mbdcp_reduce_workspace_size(p->n_v, n_w(p), p->n_b);
    MbdcpReduced red;
    rc = mbdcp_reduce(p, &red, work, red_bytes);
    if (rc != MBDCP_OK) return rc;
    mbdcp_float *F = (mbdcp_float *)((char *)work + red_bytes);
    mbdcp_float *f = F + (size_t)N * N, *fmag = f + N;
    void *lemke_work = fmag + N;
    mbdcp_step_assemble(p, &red, F, f);
    step_rhs_magnitude(p, &red, fmag);
    if (out->F) memcpy(out->F, F, (size_t)N * N * sizeof(mbdcp_float));
    if (out->f) memcpy(out->f, f, (size_t)N * sizeof(mbdcp_float));

    const MbdcpLemkeOutput lout = {out->z, out->w, out->basis, NULL};
    rc = mbdcp_lemke_solve_scaled(N, F, f, fmag, settings, start, 0, &lout, info, lemke_work,
                                  mbdcp_lemke_workspace_size(N));
    if (rc != MBDCP_OK) return rc;
    /* z starts with the contact impulses x = (p_n, beta, beta_j). */
    return mbdcp_reduced_recover(&red, out->z, out->v_next, out->p_b);
}

MbdcpReturn mbdcp_step_rhs_magnitude(const MbdcpStepProblem *p, mbdcp_float *fmag, void *work, size_t work_bytes)
{
    if (!p || !work) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_step_problem_check(p);
    if (rc != MBDCP_OK) return rc;
    if (work_bytes < mbdcp_step_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    if (mbdcp_step_lcp_size(p) > 0 && !fmag) return MBDCP_ERR_NULL;
    MbdcpReduced red;
    rc = mbdcp_reduce(p, &red, work, mbdcp_reduce_workspace_size(p->n_v, n_w(p), p->n_b));
    if (rc != MBDCP_OK) return rc;
    step_rhs_magnitude(p, &red, fmag);
    return MBDCP_OK;
}
