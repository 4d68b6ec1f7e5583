/* Fuzz target for the C core's entry points: Lemke, the time step (with joints and joint friction),
 * the relaxations and fixed point, full-rank friction, the cone complementarity solvers and the
 * contacts of round bodies.
 *
 * Each input is decoded into one problem of small size whose numbers are drawn from a palette that
 * mixes ordinary values with the extremes (0, +-1e-300, +-1e300, denormals, huge ratios), settings
 * (valid and invalid) and an exactly sized heap workspace, so that AddressSanitizer and UBSan see
 * every overrun and undefined operation. Beyond "no crash", every SOLVED answer is checked: Lemke's
 * z by the componentwise verification, a step's reduced LCP likewise, CCP impulses in their cones.
 *
 * Build with libFuzzer:  clang -fsanitize=fuzzer,address,undefined -DMBDCP_LIBFUZZER ...
 * or without it (gcc): a driver that feeds seeded random inputs for a given number of seconds:
 *     fuzz_core SECONDS [SEED]
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mbdcp/mbdcp.h"

typedef struct {
    const uint8_t *data;
    size_t size, at;
} Reader;

static unsigned byte(Reader *r)
{
    return r->at < r->size ? r->data[r->at++] : 0u;
}

static double number(Reader *r)
{
    static const double palette[] = {0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 1e-300, -1e-300, 1e300, -1e300, 4.9e-324,
                                     1e-12, 1e12, 3.0, -0.25, 1e-8, 1e8, 7.0};
    const unsigned k = byte(r);
    if (k < 128) return palette[k % (sizeof palette / sizeof palette[0])];
    /* a mantissa from two bytes, an exponent from one, a sign from k */
    const double m = 1.0 + (byte(r) * 256.0 + byte(r)) / 65536.0;
    const int e = (int)byte(r) - 128;
    return (k & 1 ? -1.0 : 1.0) * ldexp(m, e / 2);
}

static void fill(Reader *r, double *x, size_t n)
{
    for (size_t i = 0; i < n; ++i) x[i] = number(r);
}

/* A symmetric matrix made positive definite unless the input says otherwise (then anything). */
static void spd(Reader *r, double *M, int n)
{
    fill(r, M, (size_t)n * n);
    if (byte(r) % 8 == 0) return;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < i; ++j) M[i * n + j] = M[j * n + i] = 0.5 * (M[i * n + j] + M[j * n + i]);
    for (int i = 0; i < n; ++i) {
        double s = 1.0;
        for (int j = 0; j < n; ++j) s += fabs(M[i * n + j]);
        if (isfinite(s)) M[i * n + i] = s;
    }
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz: %s\n", what);
        abort(); /* test harness only: the core itself never aborts */
    }
}

static void *workspace(size_t bytes)
{
    return malloc(bytes ? bytes : 1);
}

static void fuzz_lemke(Reader *r)
{
    const int n = (int)(byte(r) % 12);
    double *M = malloc(sizeof(double) * (n * n + 1)), *q = malloc(sizeof(double) * (n + 1));
    double *z = malloc(sizeof(double) * (n + 1)), *w = malloc(sizeof(double) * (n + 1));
    double *ray = malloc(sizeof(double) * (n + 1)), *s = malloc(sizeof(double) * (n + 1));
    int *basis = malloc(sizeof(int) * (n + 1)), *start = malloc(sizeof(int) * (n + 1));
    fill(r, M, (size_t)n * n);
    fill(r, q, (size_t)n);
    for (int i = 0; i < n; ++i) start[i] = byte(r) & 1;
    MbdcpLemkeSettings st;
    mbdcp_lemke_default_settings(&st);
    const unsigned flags = byte(r);
    if (flags & 1) st.max_pivots = (int)byte(r);
    if (flags & 2) st.tol = number(r);
    if (flags & 4) st.scale = (int)(byte(r) % 3);
    if (flags & 8) st.refine = (int)(byte(r) % 12);
    size_t bytes = mbdcp_lemke_workspace_size(n);
    void *work = workspace(bytes);
    const MbdcpLemkeOutput out = {z, w, basis, ray};
    MbdcpLemkeInfo info;
    MbdcpReturn rc = mbdcp_lemke_solve(n, M, q, &st, (flags & 16) ? start : NULL, &out, &info, work, bytes);
    if (rc == MBDCP_OK && info.status == MBDCP_SOLVED && n > 0)
        check(mbdcp_lcp_verify(n, M, q, z, st.tol, w, s), "Lemke SOLVED on a non-solution");
    if (rc == MBDCP_OK && info.certified) {
        double qy = 0.0;
        for (int i = 0; i < n; ++i) qy += q[i] * ray[i];
        check(qy < 0.0, "a ray certificate with q^T y >= 0");
    }
    free(M), free(q), free(z), free(w), free(ray), free(s), free(basis), free(start), free(work);
}

/* The reverse mode of a plain step at its answer (solved or not): whatever it decides is finite. */
static void fuzz_step_vjp(Reader *r, const MbdcpStepProblem *p, const MbdcpStepOutput *out)
{
    const int nv = p->n_v, nc = p->n_c, m = p->m;
    MbdcpStepProblem q = *p;
    q.n_b = q.m_j = q.n_j = 0;
    q.dpsi_n = q.dpsi_f = NULL;
    if (byte(r) % 2) q.p_ext = NULL;
    const MbdcpStepVectors x = {out->v_next, out->z, out->z + nc, out->z + nc + m};
    MbdcpStepVjpSettings s;
    mbdcp_step_vjp_default_settings(&s);
    if (byte(r) % 4 == 0) s.degenerate_tol = number(r);
    s.geometry = byte(r) % 2;
    double c[32], g[3 * 6 * 6 + 4 * 8 + 8];
    fill(r, c, (size_t)(nv + 2 * nc + m));
    const MbdcpStepVectors ct = {c, byte(r) % 2 ? c + nv : NULL, c + nv + nc, c + nv + nc + m};
    MbdcpStepGradients gr = {g, byte(r) % 2 ? g + 36 : NULL, g + 72, g + 108, g + 114, g + 120, g + 124, 0.0};
    MbdcpStepVjpOutcome outcome;
    const size_t bytes = mbdcp_step_vjp_workspace_size(nv, nc, m);
    void *work = workspace(bytes);
    if (mbdcp_step_vjp(&q, &x, &ct, &s, &gr, &outcome, work, bytes) == MBDCP_OK && outcome == MBDCP_VJP_DECIDED) {
        int finite = isfinite(gr.h);
        for (int i = 0; i < nv; ++i) finite &= isfinite(gr.v[i]) && isfinite(gr.p_ext[i]);
        for (int i = 0; i < nv * nv; ++i) finite &= isfinite(gr.M[i]);
        check(finite, "step_vjp decided a gradient that is not finite");
    }
    free(work);
}

static void fuzz_step(Reader *r)
{
    MbdcpStepProblem p;
    memset(&p, 0, sizeof p);
    p.n_v = 1 + (int)(byte(r) % 6);
    p.n_c = (int)(byte(r) % 4);
    p.m = p.n_c ? (int)(byte(r) % 5) : 0;
    p.n_b = (int)(byte(r) % 3);
    p.n_j = (int)(byte(r) % 2);
    p.m_j = p.n_j ? 1 + (int)(byte(r) % 2) : 0;
    p.h = number(r);
    const int nv = p.n_v, nc = p.n_c, m = p.m, nb = p.n_b, mj = p.m_j, nj = p.n_j;
    double *buf = calloc((size_t)(nv * nv + nv * (nc + m + nb + mj) + m * nc + mj * nj + 4 * nv + 4 * nc + 2 * m + 3 * nb + nj + 8),
                         sizeof(double));
    double *b = buf;
    double *M = b;      b += nv * nv;
    double *Wn = b;     b += nv * nc;
    double *D = b;      b += nv * m;
    double *E = b;      b += m * nc;
    double *Wb = b;     b += nv * nb;
    double *Dj = b;     b += nv * mj;
    double *Ej = b;     b += mj * nj;
    double *mu = b;     b += nc;
    double *v = b;      b += nv;
    double *pe = b;     b += nv;
    double *psi = b;    b += nc;
    double *dpsi = b;   b += nc;
    double *dpsif = b;  b += m;
    double *theta = b;  b += nb;
    double *dtheta = b; b += nb;
    double *bmax = b;   b += nj;
    spd(r, M, nv);
    fill(r, Wn, (size_t)nv * nc);
    fill(r, D, (size_t)nv * m);
    for (int k = 0; k < m; ++k) E[k * nc + (nc ? k % nc : 0)] = 1.0; /* a grouping (maybe out of order) */
    fill(r, Wb, (size_t)nv * nb);
    fill(r, Dj, (size_t)nv * mj);
    for (int k = 0; k < mj; ++k) Ej[k * nj] = 1.0;
    fill(r, mu, (size_t)nc);
    fill(r, v, (size_t)nv);
    fill(r, pe, (size_t)nv);
    fill(r, psi, (size_t)nc);
    fill(r, dpsi, (size_t)nc);
    fill(r, dpsif, (size_t)m);
    fill(r, theta, (size_t)nb);
    fill(r, dtheta, (size_t)nb);
    fill(r, bmax, (size_t)nj);
    p.M = M, p.Wn = Wn, p.D = D, p.E = E, p.mu = mu, p.v = v, p.p_ext = pe, p.psi_n = psi, p.dpsi_n = dpsi;
    p.dpsi_f = dpsif, p.Wb = Wb, p.theta = theta, p.dtheta = dtheta, p.Dj = Dj, p.Ej = Ej, p.beta_max = bmax;
    const unsigned which = byte(r) % 4;
    MbdcpLemkeSettings st;
    mbdcp_lemke_default_settings(&st);
    const int N = mbdcp_step_lcp_size(&p), N1 = 2 * nc + m + 1;
    const int NN = (N > N1 ? N : N1) + 1;
    double *out_buf = calloc((size_t)(nv + nb + 2 * NN + NN * NN + NN + 1), sizeof(double));
    MbdcpStepOutput out = {out_buf, out_buf + nv, out_buf + nv + nb, out_buf + nv + nb + NN,
                           out_buf + nv + nb + 2 * NN, out_buf + nv + nb + 2 * NN + NN * NN, NULL};
    MbdcpLemkeInfo info;
    if (which == 0) {
        size_t bytes = mbdcp_step_workspace_size(&p);
        void *work = workspace(bytes);
        MbdcpReturn rc = mbdcp_step_solve(&p, &st, NULL, &out, &info, work, bytes);
        if (rc == MBDCP_OK && info.status == MBDCP_SOLVED && N > 0) {
            double *w = calloc((size_t)N, sizeof(double)), *s = calloc((size_t)N, sizeof(double));
            double *fmag = calloc((size_t)N, sizeof(double));
            check(mbdcp_step_rhs_magnitude(&p, fmag, work, bytes) == MBDCP_OK, "step's row scale");
            check(mbdcp_lcp_verify_scaled(N, out.F, out.f, fmag, out.z, st.tol, w, s), "step SOLVED on a non-solution");
            free(w), free(s), free(fmag);
        }
        if (rc == MBDCP_OK && nj == 0) fuzz_step_vjp(r, &p, &out);
        free(work);
    } else {
        p.m_j = p.n_j = 0; /* the relaxations have no joint friction */
        size_t bytes = mbdcp_relax_workspace_size(&p);
        void *work = workspace(bytes);
        if (which == 1) {
            mbdcp_relax_p1(&p, dpsi, &st, &out, &info, work, bytes);
        } else if (which == 2) {
            mbdcp_relax_p2(&p, psi, &st, &out, &info, work, bytes);
        } else {
            MbdcpFixedPointSettings fs;
            mbdcp_fixed_point_default_settings(&fs);
            fs.algorithm = 1 + (int)(byte(r) % 4);
            fs.max_iter = (int)(byte(r) % 20);
            double pn[8], beta[8], lam[8];
            MbdcpFixedPointOutput fo = {out_buf, out_buf + nv, pn, beta, lam, NULL, NULL};
            MbdcpFixedPointInfo fi;
            mbdcp_fixed_point(&p, &fs, &fo, &fi, work, bytes);
        }
        free(work);
    }
    free(buf), free(out_buf);
}

static void fuzz_full_rank(Reader *r)
{
    const int nv = 1 + (int)(byte(r) % 6), nc = (int)(byte(r) % 3), nd = (int)(byte(r) % 5);
    MbdcpFullRankProblem p = {.n_v = nv, .n_c = nc, .n_d = nd};
    p.h = number(r);
    p.rho = byte(r) & 1 ? number(r) : 0.0;
    p.compliance = byte(r) & 1 ? -1.0 : 0.0;
    double *M = malloc(sizeof(double) * nv * nv), *Wn = malloc(sizeof(double) * (nv * nc + 1));
    double *Wt = malloc(sizeof(double) * (2 * nv * nc + 1)), *mu = malloc(sizeof(double) * (nc + 1));
    double *v = malloc(sizeof(double) * nv), *pe = malloc(sizeof(double) * nv), *psi = malloc(sizeof(double) * (nc + 1));
    spd(r, M, nv);
    fill(r, Wn, (size_t)nv * nc);
    fill(r, Wt, (size_t)2 * nv * nc);
    fill(r, mu, (size_t)nc);
    fill(r, v, (size_t)nv);
    fill(r, pe, (size_t)nv);
    fill(r, psi, (size_t)nc);
    p.M = M, p.Wn = Wn, p.Wt = Wt, p.mu = mu, p.v = v, p.p_ext = pe, p.psi_n = psi;
    const int N = mbdcp_full_rank_lcp_size(&p) + 1;
    double *o = calloc((size_t)(nv + 2 * nc + 2 * N + 1), sizeof(double));
    MbdcpFullRankOutput out = {o, o + nv, o + nv + 2 * nc, o + nv + 2 * nc + N, NULL, NULL, 0.0, 0.0};
    MbdcpLemkeSettings st;
    mbdcp_lemke_default_settings(&st);
    MbdcpLemkeInfo info;
    size_t bytes = mbdcp_full_rank_workspace_size(&p);
    void *work = workspace(bytes);
    mbdcp_full_rank_step(&p, &st, &out, &info, work, bytes);
    free(M), free(Wn), free(Wt), free(mu), free(v), free(pe), free(psi), free(o), free(work);
}

/* A random sparse pattern with sorted rows, rows x ncols, in CSC (rowind, val: rows ncols + 1 each);
 * returns the number of entries. */
static int random_csc(Reader *r, int rows, int ncols, int *colptr, int *rowind, double *val)
{
    int nnz = 0;
    colptr[0] = 0;
    for (int j = 0; j < ncols; ++j) {
        for (int i = 0; i < rows; ++i)
            if (byte(r) & 1) {
                rowind[nnz] = i;
                val[nnz++] = number(r);
            }
        colptr[j + 1] = nnz;
    }
    return nnz;
}

static void fuzz_ccp(Reader *r)
{
    /* P = Q = a random sparse n_v x n_p pattern (Q = M^-1 P with M = I) */
    const int nv = 1 + (int)(byte(r) % 8), nc = (int)(byte(r) % 5), nb = (int)(byte(r) % 2), np = 3 * nc + nb;
    MbdcpCcpProblem p = {.n_v = nv, .n_c = nc, .n_b = nb};
    int *colptr = malloc(sizeof(int) * (np + 1)), *rowind = malloc(sizeof(int) * (np * nv + 1));
    double *val = malloc(sizeof(double) * (np * nv + 1)), *mu = malloc(sizeof(double) * (nc + 1));
    double *pv = malloc(sizeof(double) * (np + 1)), *nu = malloc(sizeof(double) * (np + 1)), *u = malloc(sizeof(double) * nv);
    random_csc(r, nv, np, colptr, rowind, val);
    for (int i = 0; i < nc; ++i) mu[i] = fabs(number(r));
    fill(r, pv, (size_t)np);
    fill(r, nu, (size_t)np);
    p.P_colptr = p.Q_colptr = colptr;
    p.P_rowind = p.Q_rowind = rowind;
    p.P_val = p.Q_val = val;
    p.mu = mu;
    p.p = pv;
    MbdcpCcpSettings st;
    mbdcp_ccp_default_settings(&st);
    st.method = (MbdcpCcpMethod)(byte(r) % 3);
    st.max_iter = 1 + (int)(byte(r) % 200);
    st.warm_start = byte(r) & 1;
    if (byte(r) & 1) st.omega = fabs(number(r));
    if (byte(r) & 1) st.tol = number(r);
    size_t bytes = mbdcp_ccp_workspace_size(&p);
    void *work = workspace(bytes);
    MbdcpCcpInfo info;
    MbdcpReturn rc = mbdcp_ccp_solve(&p, &st, nu, u, &info, work, bytes);
    if (rc == MBDCP_OK && info.status == MBDCP_SOLVED)
        for (int i = 0; i < nc; ++i) {
            const double *g = nu + 3 * i;
            check(g[0] >= 0.0 && hypot(g[1], g[2]) <= mu[i] * g[0] * (1 + 1e-12) + 1e-300, "CCP impulse outside its cone");
        }
    free(colptr), free(rowind), free(val), free(mu), free(pv), free(nu), free(u), free(work);
}

static void fuzz_blocks(Reader *r)
{
    /* nb blocks of k x k (SPD unless the input says otherwise), then Q = Minv P for a random P */
    const int nb = (int)(byte(r) % 5), k = (int)(byte(r) % 5), rows = nb * k, ncols = (int)(byte(r) % 6);
    double *M = malloc(sizeof(double) * (nb * k * k + 1)), *inv = malloc(sizeof(double) * (nb * k * k + 1));
    double *scratch = malloc(sizeof(double) * (k * k + 1));
    for (int b = 0; b < nb; ++b) spd(r, M + b * k * k, k);
    int bad = 0;
    MbdcpReturn rc = mbdcp_block_spd_inverse(nb, k, M, inv, scratch, &bad);
    check(rc != MBDCP_OK || bad == -1, "block inverse: bad set on success");
    if (rc == MBDCP_OK)
        for (int b = 0; b < nb; ++b) {
            /* M_b inv_b = I normwise: |M_b X_b - I| <= c k eps |M_b| |X_b| is all an inverse can promise
               (Higham 2002, ch. 14); a componentwise check fails on blocks with condition near 1/eps */
            const double *A = M + b * k * k, *X = inv + b * k * k;
            double normA = 0.0, normX = 0.0;
            for (int i = 0; i < k; ++i) {
                double ra = 0.0, rx = 0.0;
                for (int t = 0; t < k; ++t) ra += fabs(A[i * k + t]), rx += fabs(X[i * k + t]);
                normA = fmax(normA, ra), normX = fmax(normX, rx);
            }
            for (int i = 0; i < k; ++i) {
                double rowmax = 0.0; /* an entry of inv_b below DBL_MIN loses up to DBL_MIN: times |M_it| */
                for (int t = 0; t < k; ++t) rowmax = fmax(rowmax, fabs(A[i * k + t]));
                for (int j = 0; j < k; ++j) {
                    double s = 0.0;
                    for (int t = 0; t < k; ++t) s += A[i * k + t] * X[t * k + j];
                    const double scale = normA * normX;
                    check(!isfinite(scale) || fabs(s - (i == j)) <= 1e-8 * (scale + k * rowmax * DBL_MIN) + 1e-300,
                          "block inverse: M Minv != I");
                }
            }
        }
    int *colptr = malloc(sizeof(int) * (ncols + 1)), *rowind = malloc(sizeof(int) * (ncols * rows + 1));
    double *val = malloc(sizeof(double) * (ncols * rows + 1));
    const int nnz = random_csc(r, rows, ncols, colptr, rowind, val);
    if (nnz > 1 && byte(r) % 8 == 0) rowind[0] = rowind[nnz - 1]; /* sometimes not sorted or out of range */
    int *qp = malloc(sizeof(int) * (ncols + 1));
    rc = k > 0 ? mbdcp_block_times_csc(nb, k, inv, ncols, colptr, rowind, val, qp, NULL, NULL) : MBDCP_ERR_DIMENSION;
    if (rc == MBDCP_OK) {
        check(qp[ncols] <= ncols * rows, "block product: more entries than the dense Q");
        int *qi = malloc(sizeof(int) * (qp[ncols] + 1));
        double *qv = malloc(sizeof(double) * (qp[ncols] + 1));
        rc = mbdcp_block_times_csc(nb, k, inv, ncols, colptr, rowind, val, qp, qi, qv);
        check(rc == MBDCP_OK, "block product: the fill pass failed after the count pass");
        for (int t = 0; t < qp[ncols]; ++t) check(qi[t] >= 0 && qi[t] < rows, "block product: row out of range");
        free(qi), free(qv);
    }
    free(M), free(inv), free(scratch), free(colptr), free(rowind), free(val), free(qp);
}

/* The pairs i < j with gap <= delta, each tested by the core's distance: the plain one, rescaled
 * where it under- or overflows. */
static int pairs_within(int n, int dim, const double *pos, const double *rad, double delta)
{
    int count = 0;
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
            double d[3] = {0.0, 0.0, 0.0}, big = 0.0;
            for (int a = 0; a < dim; ++a) d[a] = pos[dim * i + a] - pos[dim * j + a], big = fmax(big, fabs(d[a]));
            double dist = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            if (!(dist > 0.0 && dist <= DBL_MAX) && big > 0.0)
                dist = big * sqrt(pow(d[0] / big, 2) + pow(d[1] / big, 2) + pow(d[2] / big, 2));
            count += dist - rad[i] - rad[j] <= delta;
        }
    return count;
}

/* Round bodies' pairs: any positions, radii and delta from the palette (huge, denormal, negative,
 * coincident); an OK answer holds every pair of gap <= delta once, in increasing (i, j), as all
 * pairs tested one by one count them. */
static void fuzz_spheres(Reader *r)
{
    const int n = (int)(byte(r) % 24), dim = 2 + (int)(byte(r) % 2), cap = (int)(byte(r) % 64);
    double *pos = malloc(sizeof(double) * (size_t)(n * dim + 1)), *rad = malloc(sizeof(double) * (size_t)(n + 1));
    fill(r, pos, (size_t)(n * dim));
    if (n > 1 && byte(r) % 4 == 0) memcpy(pos + dim, pos, sizeof(double) * (size_t)dim); /* a coincident pair */
    for (int i = 0; i < n; ++i) rad[i] = byte(r) % 8 ? fabs(number(r)) : number(r);
    const double delta = byte(r) % 8 ? fabs(number(r)) : number(r);
    const size_t bytes = mbdcp_sphere_pairs_workspace_size(n);
    void *work = malloc(bytes);
    int *pair = malloc(sizeof(int) * (size_t)(2 * cap + 2)), m = -1;
    double *gap = malloc(sizeof(double) * (size_t)(cap + 1)), *normal = malloc(sizeof(double) * (size_t)(dim * cap + 1));
    double *point = malloc(sizeof(double) * (size_t)(dim * cap + 1));
    const MbdcpReturn rc = mbdcp_sphere_pairs(n, dim, pos, rad, delta, cap, &m, pair, gap, normal, point, work, bytes);
    if (rc == MBDCP_OK || rc == MBDCP_ERR_WORKSPACE) /* short of capacity, the count is still exact */
        check(m == pairs_within(n, dim, pos, rad, delta), "sphere pairs: not every pair within delta");
    if (rc == MBDCP_OK) {
        for (int k = 0; k < m; ++k) {
            const int after = k == 0 || pair[2 * k - 2] < pair[2 * k] ||
                              (pair[2 * k - 2] == pair[2 * k] && pair[2 * k - 1] < pair[2 * k + 1]);
            check(pair[2 * k] < pair[2 * k + 1] && gap[k] <= delta && after, "sphere pairs: out of order or too far");
        }
    }
    free(pos), free(rad), free(work), free(pair), free(gap), free(normal), free(point);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Reader r = {data, size, 0};
    switch (byte(&r) % 6) {
    case 0: fuzz_lemke(&r); break;
    case 1: fuzz_step(&r); break;
    case 2: fuzz_full_rank(&r); break;
    case 3: fuzz_blocks(&r); break;
    case 4: fuzz_spheres(&r); break;
    default: fuzz_ccp(&r); break;
    }
    return 0;
}

#ifndef MBDCP_LIBFUZZER
int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--replay") == 0) { /* run one saved input (e.g. a libFuzzer crash file) */
        static uint8_t saved[1 << 16];
        FILE *f = fopen(argv[2], "rb");
        if (!f) return 2;
        const size_t size = fread(saved, 1, sizeof saved, f);
        fclose(f);
        LLVMFuzzerTestOneInput(saved, size);
        printf("fuzz_core: input replayed\n");
        return 0;
    }
    const double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    unsigned long long state = argc > 2 ? strtoull(argv[2], NULL, 10) : 20261123ull;
    uint8_t input[4096];
    long runs = 0;
    const clock_t t0 = clock();
    while ((double)(clock() - t0) / CLOCKS_PER_SEC < seconds) {
        size_t size = 0;
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        size = (size_t)((state >> 33) % sizeof input);
        for (size_t i = 0; i < size; ++i) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            input[i] = (uint8_t)(state >> 56);
        }
        LLVMFuzzerTestOneInput(input, size);
        ++runs;
    }
    printf("fuzz_core: %ld inputs, no crash, every SOLVED answer verified\n", runs);
    return 0;
}
#endif
