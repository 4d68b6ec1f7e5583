/* Unit tests of ccp.h's interior-point method and AUTO, built with -fsanitize=address,undefined
 * (tests/c/run.sh). Answers are checked by the CCP's definition (Anitescu and Tasora 2010): nu_i
 * in K_i, g_i = (N nu + p)_i in the dual cone K_i*, nu_i . g_i = 0, each at the contact's own
 * scale, with N = P^T M^-1 P formed here independently of the solver. Prints one line per failure
 * and a closing "N passed, N failed" line. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbdcp/mbdcp.h"
#include "check.h"

/* A CCP with a diagonal M (particles; or recorded spheres, whose M^-1 is diagonal), owned arrays. */
typedef struct {
    int nv, nc;
    mbdcp_int *Pp, *Pi, *Qp, *Qi, *Mp, *Mi;
    mbdcp_float *Pv, *Qv, *Mv, *mu, *p, *minv;
    MbdcpCcpProblem pr;
} Ccp;

static void ccp_free(Ccp *c)
{
    free(c->Pp);
    free(c->Pi);
    free(c->Qp);
    free(c->Qi);
    free(c->Mp);
    free(c->Mi);
    free(c->Pv);
    free(c->Qv);
    free(c->Mv);
    free(c->mu);
    free(c->p);
    free(c->minv);
}

/* Q = M^-1 P and M in CSC (diagonal) from c->minv, P set; then the problem. */
static void ccp_finish(Ccp *c)
{
    const int np_ = 3 * c->nc, nnz = c->Pp[np_];
    c->Qp = malloc((size_t)(np_ + 1) * sizeof(mbdcp_int));
    c->Qi = malloc((size_t)nnz * sizeof(mbdcp_int) + 1);
    c->Qv = malloc((size_t)nnz * sizeof(mbdcp_float) + 1);
    memcpy(c->Qp, c->Pp, (size_t)(np_ + 1) * sizeof(mbdcp_int));
    for (int k = 0; k < nnz; ++k) {
        c->Qi[k] = c->Pi[k];
        c->Qv[k] = c->minv[c->Pi[k]] * c->Pv[k];
    }
    c->Mp = malloc((size_t)(c->nv + 1) * sizeof(mbdcp_int));
    c->Mi = malloc((size_t)c->nv * sizeof(mbdcp_int));
    c->Mv = malloc((size_t)c->nv * sizeof(mbdcp_float));
    for (int r = 0; r < c->nv; ++r) {
        c->Mp[r] = r;
        c->Mi[r] = r;
        c->Mv[r] = 1.0 / c->minv[r];
    }
    c->Mp[c->nv] = c->nv;
    MbdcpCcpProblem pr = {c->nv, c->nc, 0, c->Pp, c->Pi, c->Pv, c->Qp, c->Qi, c->Qv, c->mu, c->p, c->Mp, c->Mi, c->Mv};
    c->pr = pr;
}

static unsigned long long rng = 2024;
static double uniform(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* nb particles (3 velocities each, masses in [0.5, 2]), nc contacts between random pairs or a
 * particle and the ground (ground_share of them), random unit normals, friction in [0, 1] (every
 * fifth contact frictionless when frictionless is set), p = J v + b with b_n >= 0 (a gap that
 * closes no faster than allowed): then p^T d = v^T P d + b^T d >= 0 for d in K with P d = 0, so a
 * solution exists. */
static void random_particles(int nb, int nc, double ground_share, int frictionless, Ccp *c)
{
    memset(c, 0, sizeof *c);
    c->nv = 3 * nb;
    c->nc = nc;
    c->Pp = malloc((size_t)(3 * nc + 1) * sizeof(mbdcp_int));
    c->Pi = malloc((size_t)(18 * nc) * sizeof(mbdcp_int) + 1);
    c->Pv = malloc((size_t)(18 * nc) * sizeof(mbdcp_float) + 1);
    c->mu = malloc((size_t)nc * sizeof(mbdcp_float) + 1);
    c->p = malloc((size_t)(3 * nc) * sizeof(mbdcp_float) + 1);
    c->minv = malloc((size_t)c->nv * sizeof(mbdcp_float));
    double *v = malloc((size_t)c->nv * sizeof(double));
    for (int b = 0; b < nb; ++b)
        for (int a = 0; a < 3; ++a) {
            c->minv[3 * b + a] = 1.0 / (0.5 + 1.5 * uniform());
            v[3 * b + a] = 2.0 * uniform() - 1.0;
        }
    int nnz = 0;
    for (int i = 0; i < nc; ++i) {
        const int A = (int)(uniform() * nb) % nb;
        int B = uniform() < ground_share ? -1 : (int)(uniform() * nb) % nb;
        if (B == A) B = -1;
        double n[3] = {2 * uniform() - 1, 2 * uniform() - 1, 2 * uniform() - 1};
        const double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) + 1e-3;
        for (int a = 0; a < 3; ++a) n[a] /= nn;
        double t1[3] = {-n[1], n[0], 0.0};
        if (fabs(n[2]) > 0.9) {
            t1[0] = 0.0;
            t1[1] = -n[2];
            t1[2] = n[1];
        }
        const double tn = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
        for (int a = 0; a < 3; ++a) t1[a] /= tn;
        const double t2[3] = {n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0]};
        const double *frame[3] = {n, t1, t2};
        c->mu[i] = frictionless && i % 5 == 0 ? 0.0 : uniform();
        for (int a = 0; a < 3; ++a) {
            c->Pp[3 * i + a] = nnz;
            const int lo = B >= 0 && B < A ? B : A, hi = B >= 0 && B < A ? A : B; /* rows increasing */
            const int bodies[2] = {lo, hi};
            double pa = 0.0;
            for (int k = 0; k < 2; ++k) {
                if (bodies[k] < 0) continue;
                const double sign = bodies[k] == A ? 1.0 : -1.0;
                for (int d = 0; d < 3; ++d) {
                    c->Pi[nnz] = 3 * bodies[k] + d;
                    c->Pv[nnz++] = sign * frame[a][d];
                    pa += sign * frame[a][d] * v[3 * bodies[k] + d];
                }
            }
            c->p[3 * i + a] = pa + (a == 0 ? 0.1 * uniform() : 0.0);
        }
    }
    c->Pp[3 * nc] = nnz;
    free(v);
    ccp_finish(c);
}

/* g = P^T Q nu + p and the magnitudes s_j = |p_j| + (|P|^T |Q| |nu|)_j, computed here. */
static void gradient(const Ccp *c, const double *nu, double *g, double *s)
{
    double *u = calloc((size_t)c->nv, sizeof(double)), *au = calloc((size_t)c->nv, sizeof(double));
    const int np_ = 3 * c->nc;
    for (int j = 0; j < np_; ++j)
        for (int k = c->Qp[j]; k < c->Qp[j + 1]; ++k) {
            u[c->Qi[k]] += c->Qv[k] * nu[j];
            au[c->Qi[k]] += fabs(c->Qv[k] * nu[j]);
        }
    for (int j = 0; j < np_; ++j) {
        g[j] = c->p[j];
        s[j] = fabs(c->p[j]);
        for (int k = c->Pp[j]; k < c->Pp[j + 1]; ++k) {
            g[j] += c->Pv[k] * u[c->Pi[k]];
            s[j] += fabs(c->Pv[k]) * au[c->Pi[k]];
        }
    }
    free(u);
    free(au);
}

/* The largest violation of the CCP's conditions, per contact relative to its own scale: the
 * distance of g_i to K_i* over the magnitudes of its terms, nu_i . g_i over those times the
 * impulses' size (a separating contact's tiny impulse is not a violation). */
static double violation(const Ccp *c, const double *nu)
{
    const int np_ = 3 * c->nc;
    double *g = malloc((size_t)np_ * sizeof(double) + 8), *s = malloc((size_t)np_ * sizeof(double) + 8), worst = 0.0;
    gradient(c, nu, g, s);
    double smax = 0.0, nmax = 0.0;
    for (int j = 0; j < np_; ++j) {
        smax = fmax(smax, s[j]);
        nmax = fmax(nmax, fabs(nu[j]));
    }
    for (int i = 0; i < c->nc; ++i) {
        const double *x = nu + 3 * i, *y = g + 3 * i, mu = c->mu[i];
        const double scale = fmax(fmax(s[3 * i], fmax(s[3 * i + 1], s[3 * i + 2])), 1e-12 * smax);
        const double xn = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        const double cone = fmax(0.0, hypot(x[1], x[2]) - mu * x[0]) / fmax(xn, 1e-300);
        const double dual = mu > 0.0 ? fmax(0.0, mu * hypot(y[1], y[2]) - y[0]) / mu : fmax(0.0, -y[0]);
        const double comp = mu > 0.0 ? fabs(x[0] * y[0] + x[1] * y[1] + x[2] * y[2]) : fabs(x[0] * y[0]);
        worst = fmax(worst, fmax(cone * (xn > 0.0), dual / scale));
        worst = fmax(worst, comp / (scale * fmax(xn, nmax) + 1e-300));
        if (mu == 0.0) worst = fmax(worst, hypot(x[1], x[2]) / fmax(xn, 1e-300));
    }
    free(g);
    free(s);
    return worst;
}

/* mbdcp_ccp_factor_blocks with a workspace of the documented size: the analysis AUTO and IPM need. */
static MbdcpReturn analyse(const Ccp *c, mbdcp_int *blocks, mbdcp_float *flops)
{
    const size_t fbytes = mbdcp_ccp_factor_workspace_size(&c->pr);
    void *fw = malloc(fbytes);
    const MbdcpReturn rc = mbdcp_ccp_factor_blocks(&c->pr, blocks, flops, fw, fbytes);
    free(fw);
    return rc;
}

/* mbdcp_ccp_solve with the method, its factor sized as documented; nu: the start if warm. */
static MbdcpReturn solve(const Ccp *c, MbdcpCcpMethod method, double tol, int warm, double *nu, double *u,
                         MbdcpCcpInfo *info)
{
    MbdcpCcpSettings s;
    mbdcp_ccp_default_settings(&s);
    s.method = method;
    s.tol = tol;
    s.max_iter = 100000;
    s.warm_start = warm;
    MbdcpReturn rc = analyse(c, &s.factor_blocks, &s.factor_flops);
    if (rc != MBDCP_OK) return rc;
    const size_t bytes = mbdcp_ccp_solve_workspace_size(&c->pr, &s);
    void *work = malloc(bytes);
    rc = mbdcp_ccp_solve(&c->pr, &s, nu, u, info, work, bytes);
    if (rc == MBDCP_OK && bytes > 8 && method == MBDCP_CCP_IPM) /* one byte short: refused */
        CHECK(mbdcp_ccp_solve(&c->pr, &s, nu, u, info, work, bytes - 8) == MBDCP_ERR_WORKSPACE);
    free(work);
    return rc;
}

/* A CCP recorded from mechanics.simulate (tests/c/data, the format of test_core.c: n_v, n_c, n_b,
 * nnz(P), nnz(Q), then P and Q = M^-1 P in CSC, mu, p, the impulses), followed by M in CSC (nnz,
 * colptr, rowind, values: the bodies' 3 x 3 blocks); 0 if unreadable. */
static int load_recorded(const char *path, Ccp *c, double **nu0)
{
    memset(c, 0, sizeof *c);
    *nu0 = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int h[5], nm = -1;
    if (fread(h, sizeof(int), 5, f) != 5 || h[0] < 1 || h[1] < 1 || h[2] != 0 || h[3] < 0 || h[4] < 0) {
        fclose(f);
        return 0;
    }
    c->nv = h[0];
    c->nc = h[1];
    const size_t np_ = 3 * (size_t)h[1], nP = (size_t)h[3], nQ = (size_t)h[4], nv = (size_t)h[0];
    c->Pp = malloc((np_ + 1) * sizeof(mbdcp_int));
    c->Pi = malloc(nP * sizeof(mbdcp_int) + 1);
    c->Qp = malloc((np_ + 1) * sizeof(mbdcp_int));
    c->Qi = malloc(nQ * sizeof(mbdcp_int) + 1);
    c->Pv = malloc(nP * sizeof(mbdcp_float) + 1);
    c->Qv = malloc(nQ * sizeof(mbdcp_float) + 1);
    c->mu = malloc((size_t)h[1] * sizeof(mbdcp_float));
    c->p = malloc(np_ * sizeof(mbdcp_float));
    c->Mp = malloc((nv + 1) * sizeof(mbdcp_int));
    *nu0 = malloc(np_ * sizeof(double));
    size_t got = fread(c->Pp, sizeof(mbdcp_int), np_ + 1, f) + fread(c->Pi, sizeof(mbdcp_int), nP, f) +
                 fread(c->Qp, sizeof(mbdcp_int), np_ + 1, f) + fread(c->Qi, sizeof(mbdcp_int), nQ, f) +
                 fread(c->Pv, sizeof(double), nP, f) + fread(c->Qv, sizeof(double), nQ, f) +
                 fread(c->mu, sizeof(double), (size_t)h[1], f) + fread(c->p, sizeof(double), np_, f) +
                 fread(*nu0, sizeof(double), np_, f) + fread(&nm, sizeof(int), 1, f);
    int ok = got == 2 * (np_ + 1) + 2 * nP + 2 * nQ + (size_t)h[1] + 2 * np_ + 1 && nm >= 0;
    if (ok) {
        c->Mi = malloc((size_t)nm * sizeof(mbdcp_int) + 1);
        c->Mv = malloc((size_t)nm * sizeof(mbdcp_float) + 1);
        ok = fread(c->Mp, sizeof(mbdcp_int), nv + 1, f) + fread(c->Mi, sizeof(mbdcp_int), (size_t)nm, f) +
                 fread(c->Mv, sizeof(double), (size_t)nm, f) == nv + 1 + 2 * (size_t)nm;
    }
    fclose(f);
    MbdcpCcpProblem pr = {c->nv, c->nc, 0, c->Pp, c->Pi, c->Pv, c->Qp, c->Qi, c->Qv, c->mu, c->p, c->Mp, c->Mi, c->Mv};
    c->pr = pr;
    return ok;
}

/* Q nu from the data (u = M^-1 P nu), to compare velocities (unique, where nu need not be). */
static double velocity_gap(const Ccp *c, const double *a, const double *b)
{
    double *ua = calloc((size_t)c->nv, sizeof(double)), *ub = calloc((size_t)c->nv, sizeof(double)), d = 0.0, n = 0.0;
    for (int j = 0; j < 3 * c->nc; ++j)
        for (int k = c->Qp[j]; k < c->Qp[j + 1]; ++k) {
            ua[c->Qi[k]] += c->Qv[k] * a[j];
            ub[c->Qi[k]] += c->Qv[k] * b[j];
        }
    for (int r = 0; r < c->nv; ++r) {
        d = fmax(d, fabs(ua[r] - ub[r]));
        n = fmax(n, fabs(ua[r]));
    }
    free(ua);
    free(ub);
    return d / fmax(n, 1e-300);
}

/* Random particle problems (pairs and ground, with and without frictionless contacts): the
 * interior-point answer meets the definition, its velocities agree with APGD's, and AUTO solves. */
static void test_ipm_random(void)
{
    const int sizes[][2] = {{2, 3}, {5, 8}, {10, 30}, {30, 60}, {60, 200}, {100, 150}};
    int ipm_total = 0, apgd_total = 0;
    for (int t = 0; t < 12; ++t) {
        Ccp c;
        random_particles(sizes[t % 6][0], sizes[t % 6][1], t % 3 == 0 ? 0.8 : 0.3, t % 2, &c);
        const int np_ = 3 * c.nc;
        double *nu = calloc((size_t)np_, sizeof(double)), *na = calloc((size_t)np_, sizeof(double));
        double *u = calloc((size_t)c.nv, sizeof(double));
        MbdcpCcpInfo info, ia;
        CHECK(solve(&c, MBDCP_CCP_IPM, 1e-9, 0, nu, u, &info) == MBDCP_OK);
        CHECK(info.status == MBDCP_SOLVED);
        CHECK(violation(&c, nu) <= 1e-7);
        ipm_total += info.iterations;
        CHECK(solve(&c, MBDCP_CCP_APGD, 1e-9, 0, na, u, &ia) == MBDCP_OK);
        if (ia.status == MBDCP_SOLVED) {
            CHECK(violation(&c, na) <= 1e-7);
            CHECK(velocity_gap(&c, nu, na) <= 1e-5);
            apgd_total += ia.iterations;
        }
        memset(na, 0, (size_t)np_ * sizeof(double));
        CHECK(solve(&c, MBDCP_CCP_AUTO, 1e-9, 0, na, u, &ia) == MBDCP_OK && ia.status == MBDCP_SOLVED);
        CHECK(violation(&c, na) <= 1e-7);
        /* warm from the answer: solved again at once */
        CHECK(solve(&c, MBDCP_CCP_IPM, 1e-9, 1, nu, u, &info) == MBDCP_OK && info.status == MBDCP_SOLVED);
        CHECK(violation(&c, nu) <= 1e-7);
        free(nu);
        free(na);
        free(u);
        ccp_free(&c);
    }
    CHECK(ipm_total > 0 && apgd_total > 0);
}

/* Recorded sphere piles: a 19-contact step and a 150-sphere pile at rest with 350 contacts on which
 * APGD's largest residual sits still for hundreds of iterations: IPM and AUTO meet the definition
 * at tight tolerances, from cold and from the recorded warm start. */
static void test_recorded(void)
{
    const char *paths[2] = {"tests/c/data/ccp_polish.bin", "tests/c/data/ccp_stall.bin"};
    const double tols[2] = {1e-9, 1e-10};
    for (int f = 0; f < 2; ++f) {
        Ccp c;
        double *nu0 = NULL;
        const int ok = load_recorded(paths[f], &c, &nu0);
        CHECK(ok);
        if (ok) {
            const int np_ = 3 * c.nc;
            double *nu = malloc((size_t)np_ * sizeof(double)), *na = calloc((size_t)np_, sizeof(double));
            double *u = malloc((size_t)c.nv * sizeof(double));
            MbdcpCcpInfo info, ia;
            CHECK(solve(&c, MBDCP_CCP_APGD, tols[f], 0, na, u, &ia) == MBDCP_OK && ia.status == MBDCP_SOLVED);
            const MbdcpCcpMethod methods[2] = {MBDCP_CCP_IPM, MBDCP_CCP_AUTO};
            for (int m = 0; m < 2; ++m)
                for (int warm = 0; warm < 2; ++warm) {
                    memcpy(nu, nu0, (size_t)np_ * sizeof(double));
                    CHECK(solve(&c, methods[m], tols[f], warm, nu, u, &info) == MBDCP_OK);
                    CHECK(info.status == MBDCP_SOLVED && violation(&c, nu) <= 10 * tols[f]);
                    CHECK(velocity_gap(&c, nu, na) <= 1e-5);
                }
            free(nu);
            free(na);
            free(u);
        }
        free(nu0);
        ccp_free(&c);
    }
}

/* A particle pressed between two walls that both overlap it (p_n < 0 on both, normals opposite):
 * d = (1, 0, 0) on both contacts has P d = 0 and p^T d < 0, so no solution exists; a third,
 * solvable contact on another particle. The solver must return a direction that certifies this
 * by its definition. */
static void test_no_solution(void)
{
    Ccp c;
    memset(&c, 0, sizeof c);
    c.nv = 6;
    c.nc = 3;
    c.Pp = malloc(10 * sizeof(mbdcp_int));
    c.Pi = malloc(9 * sizeof(mbdcp_int));
    c.Pv = malloc(9 * sizeof(mbdcp_float));
    c.mu = malloc(3 * sizeof(mbdcp_float));
    c.p = malloc(9 * sizeof(mbdcp_float));
    c.minv = malloc(6 * sizeof(mbdcp_float));
    const double sign[3] = {1.0, -1.0, 1.0};
    const int body[3] = {0, 0, 1};
    for (int i = 0; i < 3; ++i) {
        c.mu[i] = 0.5;
        /* normal along +-z, tangents x and y */
        const int axis[3] = {2, 0, 1};
        for (int a = 0; a < 3; ++a) {
            c.Pp[3 * i + a] = 3 * i + a;
            c.Pi[3 * i + a] = 3 * body[i] + axis[a];
            c.Pv[3 * i + a] = a == 0 ? sign[i] : 1.0;
        }
    }
    c.Pp[9] = 9;
    const double p[9] = {-0.3, 0.1, 0.0, -0.2, -0.1, 0.05, -1.0, 0.2, 0.0};
    memcpy(c.p, p, sizeof p);
    for (int r = 0; r < 6; ++r) c.minv[r] = r < 3 ? 1.0 : 0.5;
    ccp_finish(&c);
    const MbdcpCcpMethod methods[3] = {MBDCP_CCP_IPM, MBDCP_CCP_AUTO, MBDCP_CCP_APGD};
    for (int m = 0; m < 3; ++m) {
        double nu[9] = {0}, u[6], pabs[6] = {0};
        MbdcpCcpInfo info;
        CHECK(solve(&c, methods[m], 1e-9, 0, nu, u, &info) == MBDCP_OK);
        CHECK(info.status == MBDCP_RAY_TERMINATION && info.certificate == MBDCP_CCP_CERT_DIRECTION);
        /* d in K, P d = 0 (up to rounding), p^T d < 0 */
        double pd = 0.0, dn = 0.0, pdv[6] = {0};
        for (int i = 0; i < 3; ++i) CHECK(hypot(nu[3 * i + 1], nu[3 * i + 2]) <= c.mu[i] * nu[3 * i] * (1 + 1e-12));
        for (int j = 0; j < 9; ++j) {
            pd += c.p[j] * nu[j];
            dn = fmax(dn, fabs(nu[j]));
            for (int k = c.Pp[j]; k < c.Pp[j + 1]; ++k) {
                pdv[c.Pi[k]] += c.Pv[k] * nu[j];
                pabs[c.Pi[k]] += fabs(c.Pv[k] * nu[j]);
            }
        }
        /* APGD's certificate (ccp_cert.c): every row of P d zero to rounding at its own scale */
        for (int r = 0; r < 6 && methods[m] == MBDCP_CCP_APGD; ++r) CHECK(fabs(pdv[r]) <= 64 * DBL_EPSILON * pabs[r]);
        /* N d = P^T M^-1 P d: a solution x would need ||x|| >= -p^T d / ||N d|| (x^T N d >= -p^T d) */
        double nd2 = 0.0;
        for (int j = 0; j < 9; ++j) {
            double ndj = 0.0;
            for (int k = c.Pp[j]; k < c.Pp[j + 1]; ++k) ndj += c.Pv[k] * c.minv[c.Pi[k]] * pdv[c.Pi[k]];
            nd2 += ndj * ndj;
        }
        CHECK(near(dn, 1.0, 1e-12) && pd < -0.1 && -pd >= 1e5 * sqrt(nd2));
    }
    ccp_free(&c);
}

/* The largest Euclidean distance of g_i = (N nu + p)_i to K_i* = {g_n >= mu ||g_t||}, over the
 * magnitudes of its terms (violation() measures it along the tangent, mu times larger, which a
 * tiny mu makes meaningless). */
static double dual_distance(const Ccp *c, const double *nu)
{
    const int np_ = 3 * c->nc;
    double *g = malloc((size_t)np_ * sizeof(double) + 8), *s = malloc((size_t)np_ * sizeof(double) + 8), worst = 0.0;
    gradient(c, nu, g, s);
    for (int i = 0; i < c->nc; ++i) {
        const double *y = g + 3 * i, mu = c->mu[i], t = hypot(y[1], y[2]);
        const double d = y[0] <= -t / mu ? hypot(y[0], t) : fmax(0.0, mu * t - y[0]) / sqrt(1.0 + mu * mu);
        worst = fmax(worst, d / fmax(fmax(s[3 * i], fmax(s[3 * i + 1], s[3 * i + 2])), 1e-300));
    }
    free(g);
    free(s);
    return worst;
}

/* Friction coefficients below DBL_EPSILON, down to subnormal ones: the interior-point method
 * solves those contacts as frictionless (d_n / mu would overflow its coordinates) and its answer
 * meets the definition with the contacts' own mu; so does AUTO's. */
static void test_tiny_friction(void)
{
    Ccp c;
    random_particles(10, 30, 0.3, 0, &c);
    const double tiny[3] = {1e-17, 1e-300, DBL_MIN / 4};
    for (int i = 0; i < c.nc; i += 2) c.mu[i] = tiny[(i / 2) % 3];
    const int np_ = 3 * c.nc;
    double *nu = calloc((size_t)np_, sizeof(double)), *u = calloc((size_t)c.nv, sizeof(double));
    MbdcpCcpInfo info;
    const MbdcpCcpMethod methods[2] = {MBDCP_CCP_IPM, MBDCP_CCP_AUTO};
    for (int m = 0; m < 2; ++m) {
        memset(nu, 0, (size_t)np_ * sizeof(double));
        CHECK(solve(&c, methods[m], 1e-9, 0, nu, u, &info) == MBDCP_OK && info.status == MBDCP_SOLVED);
        CHECK(mbdcp_all_finite((size_t)np_, nu) && mbdcp_all_finite((size_t)c.nv, u));
        for (int i = 0; i < c.nc; i += 2) /* the tiny-mu contacts' tangential impulses: within their cone */
            CHECK(hypot(nu[3 * i + 1], nu[3 * i + 2]) <= c.mu[i] * nu[3 * i] + 1e-300);
        const double *mu = c.mu;
        double big[64];
        for (int i = 0; i < c.nc; ++i) big[i] = i % 2 ? mu[i] : 0.0; /* violation()'s other tests: as frictionless */
        c.mu = big;
        c.pr.mu = big;
        CHECK(violation(&c, nu) <= 1e-7);
        c.mu = (double *)mu;
        c.pr.mu = mu;
        CHECK(dual_distance(&c, nu) <= 1e-7);
    }
    free(nu);
    free(u);
    ccp_free(&c);
}

/* mbdcp_ccp_solve with these settings and a workspace of the documented size. */
static MbdcpReturn solve_with(const Ccp *c, const MbdcpCcpSettings *s, double *nu, double *u, MbdcpCcpInfo *info)
{
    const size_t bytes = mbdcp_ccp_solve_workspace_size(&c->pr, s);
    void *work = malloc(bytes);
    const MbdcpReturn rc = mbdcp_ccp_solve(&c->pr, s, nu, u, info, work, bytes);
    free(work);
    return rc;
}

/* mbdcp_ccp_resume after first with these settings and a workspace of the documented size. */
static MbdcpReturn resume_with(const Ccp *c, const MbdcpCcpSettings *s, const MbdcpCcpInfo *first, double *nu,
                               double *u, MbdcpCcpInfo *info)
{
    const size_t bytes = mbdcp_ccp_solve_workspace_size(&c->pr, s);
    void *work = malloc(bytes);
    const MbdcpReturn rc = mbdcp_ccp_resume(&c->pr, s, first, nu, u, info, work, bytes);
    free(work);
    return rc;
}

/* The recorded pile at rest whose APGD stalls (tests/c/data/ccp_stall.bin), checked as loaded. */
static int load_stall(Ccp *c, double **nu0)
{
    const int ok = load_recorded("tests/c/data/ccp_stall.bin", c, nu0);
    CHECK(ok);
    return ok;
}

/* mbdcp_ccp_auto_budget, and AUTO in the two calls its comment describes: APGD for the budget,
 * then IPM from APGD's point, give AUTO's answer bit for bit (on the pile at rest, with a budget
 * short of APGD's convergence, so that AUTO hands over). */
static void test_auto_budget(void)
{
    Ccp c;
    double *nu0 = NULL;
    if (!load_stall(&c, &nu0)) return;
    const int np_ = 3 * c.nc;
    MbdcpCcpSettings s;
    mbdcp_ccp_default_settings(&s);
    CHECK(mbdcp_ccp_auto_budget(NULL, &s) == -1 && mbdcp_ccp_auto_budget(&c.pr, &s) == -1); /* no analysis */
    CHECK(analyse(&c, &s.factor_blocks, &s.factor_flops) == MBDCP_OK);
    s.tol = 1e-10;
    s.max_iter = 100000;
    const mbdcp_int budget = mbdcp_ccp_auto_budget(&c.pr, &s);
    CHECK(budget >= 50 && budget < s.max_iter);
    s.factor_flops *= 4.0; /* a costlier factorisation buys APGD more iterations */
    CHECK(mbdcp_ccp_auto_budget(&c.pr, &s) > budget);
    s.factor_flops = 1e30; /* however costly the factorisation, APGD hands over within a quarter of max_iter */
    CHECK(mbdcp_ccp_auto_budget(&c.pr, &s) == s.max_iter / 4);
    s.max_iter = 20; /* capped by max_iter */
    CHECK(mbdcp_ccp_auto_budget(&c.pr, &s) == 20);
    s.max_iter = 100000;
    s.factor_flops = 1.0; /* a factorisation of no cost: APGD hands over before it converges */
    const mbdcp_int short_budget = mbdcp_ccp_auto_budget(&c.pr, &s);
    double *na = calloc((size_t)np_, sizeof(double)), *nb = calloc((size_t)np_, sizeof(double));
    double *u = malloc((size_t)c.nv * sizeof(double));
    MbdcpCcpInfo ia, i1, i2;
    s.method = MBDCP_CCP_AUTO;
    CHECK(solve_with(&c, &s, na, u, &ia) == MBDCP_OK && ia.status == MBDCP_SOLVED);
    s.method = MBDCP_CCP_APGD;
    s.max_iter = short_budget;
    CHECK(solve_with(&c, &s, nb, u, &i1) == MBDCP_OK && i1.status == MBDCP_MAX_ITERATIONS);
    CHECK(i1.iterations == short_budget);
    s.method = MBDCP_CCP_IPM;
    s.max_iter = 100000 - short_budget;
    s.warm_start = 1;
    CHECK(solve_with(&c, &s, nb, u, &i2) == MBDCP_OK && i2.status == MBDCP_SOLVED);
    CHECK(i1.iterations + i2.iterations == ia.iterations && i2.finished == ia.finished);
    CHECK(memcmp(na, nb, (size_t)np_ * sizeof(double)) == 0);
    free(na);
    free(nb);
    free(u);
    free(nu0);
    ccp_free(&c);
}

/* The monitor's calls: their count and whether each iteration number follows the last by one. */
typedef struct {
    mbdcp_int calls, last;
    int consecutive;
} Count;

static int count_calls(void *ctx, mbdcp_int iteration, mbdcp_int entering, mbdcp_int leaving, double value)
{
    Count *n = ctx;
    (void)entering;
    (void)leaving;
    (void)value;
    n->consecutive = n->consecutive && iteration == n->last + 1;
    n->last = iteration;
    n->calls++;
    return 0;
}

/* AUTO's plan (ccp.h): an analysed AUTO solve makes one (mbdcp_ccp_auto_budget's budget, its n_c);
 * mbdcp_ccp_needs_factor says when a solve needs the analysis; a plan that serves runs APGD for its
 * budget and, short of an answer, hands over (info->handover) to mbdcp_ccp_resume after the caller's
 * analysis: the same answer, bit for bit, as APGD for the budget then IPM from APGD's point in two
 * calls of their own, and as one call given factor_blocks; a budget that suffices is APGD's own
 * solve; the monitor counts on across the two calls. */
static void test_auto_plan(void)
{
    Ccp c;
    double *nu0 = NULL;
    if (!load_stall(&c, &nu0)) return;
    const int np_ = 3 * c.nc;
    MbdcpCcpSettings s, a;
    mbdcp_ccp_default_settings(&s);
    CHECK(s.plan.budget == 0 && s.plan.n_c == 0);
    s.method = MBDCP_CCP_AUTO;
    s.tol = 1e-10;
    s.max_iter = 100000;
    int needs = -1;
    CHECK(mbdcp_ccp_needs_factor(&c.pr, &s, &needs) == MBDCP_OK && needs == 1); /* no plan: analyse first */
    CHECK(mbdcp_ccp_needs_factor(NULL, &s, &needs) == MBDCP_ERR_NULL && mbdcp_ccp_needs_factor(&c.pr, &s, NULL) == MBDCP_ERR_NULL);
    mbdcp_int blocks = -1;
    mbdcp_float flops = 0.0;
    CHECK(analyse(&c, &blocks, &flops) == MBDCP_OK);
    double *na = calloc((size_t)np_, sizeof(double)), *nb = calloc((size_t)np_, sizeof(double));
    double *nx = calloc((size_t)np_, sizeof(double)), *u = malloc((size_t)c.nv * sizeof(double));
    MbdcpCcpInfo ia, ib, ic, first;
    a = s; /* analysed, no plan: AUTO makes its own */
    a.factor_blocks = blocks;
    a.factor_flops = flops;
    CHECK(solve_with(&c, &a, na, u, &ia) == MBDCP_OK && ia.status == MBDCP_SOLVED && !ia.handover);
    CHECK(ia.plan.budget == mbdcp_ccp_auto_budget(&c.pr, &a) && ia.plan.n_c == c.nc);
    /* which plans serve: those made for contacts numbering within a tenth of the plan's */
    s.plan.budget = 20;
    const mbdcp_int serving[2] = {c.nc + c.nc / 20, c.nc - c.nc / 20}, other[3] = {c.nc + c.nc / 5, c.nc / 2, -c.nc};
    for (int k = 0; k < 2; ++k) {
        s.plan.n_c = serving[k];
        CHECK(mbdcp_ccp_needs_factor(&c.pr, &s, &needs) == MBDCP_OK && needs == 0);
    }
    for (int k = 0; k < 3; ++k) {
        s.plan.n_c = other[k];
        CHECK(mbdcp_ccp_needs_factor(&c.pr, &s, &needs) == MBDCP_OK && needs == 1);
    }
    s.plan.n_c = c.nc;
    s.plan.budget = 0;
    CHECK(mbdcp_ccp_needs_factor(&c.pr, &s, &needs) == MBDCP_OK && needs == 1);
    s.plan.budget = 20;
    s.method = MBDCP_CCP_IPM;
    CHECK(mbdcp_ccp_needs_factor(&c.pr, &s, &needs) == MBDCP_OK && needs == 1);
    s.method = MBDCP_CCP_APGD;
    CHECK(mbdcp_ccp_needs_factor(&c.pr, &s, &needs) == MBDCP_OK && needs == 0);
    s.method = MBDCP_CCP_AUTO;
    /* a plan too short for APGD: the handover, then the resume after the analysis */
    Count n = {0, 0, 1};
    s.monitor.fn = count_calls;
    s.monitor.ctx = &n;
    CHECK(solve_with(&c, &s, nb, u, &ib) == MBDCP_OK && ib.handover == 1 && ib.status == MBDCP_MAX_ITERATIONS);
    CHECK(ib.iterations == 20 && ib.plan.budget == 20 && ib.plan.n_c == c.nc && n.calls == 20);
    first = ib;
    CHECK(resume_with(&c, &s, &first, nb, u, &ib) == MBDCP_ERR_SETTING); /* not analysed: refused */
    s.factor_blocks = blocks;
    s.factor_flops = flops;
    CHECK(resume_with(&c, &s, &first, nb, u, &ib) == MBDCP_OK && ib.status == MBDCP_SOLVED && !ib.handover);
    CHECK(ib.iterations > 20 && ib.plan.budget == 20 && n.consecutive && n.calls == ib.iterations);
    CHECK(resume_with(&c, &s, &ib, nb, u, &ic) == MBDCP_ERR_DATA); /* no handover to resume */
    /* the same, as two solves of their own: APGD for the budget, then IPM from its point */
    s.monitor.fn = NULL;
    a = s;
    a.method = MBDCP_CCP_APGD;
    a.max_iter = 20;
    CHECK(solve_with(&c, &a, nx, u, &ic) == MBDCP_OK && ic.iterations == 20);
    const mbdcp_int done = ic.iterations;
    a.method = MBDCP_CCP_IPM;
    a.max_iter = s.max_iter - done;
    a.warm_start = 1;
    CHECK(solve_with(&c, &a, nx, u, &ic) == MBDCP_OK && ic.status == MBDCP_SOLVED);
    CHECK(done + ic.iterations == ib.iterations && ic.finished == ib.finished && ic.residual == ib.residual);
    CHECK(memcmp(nb, nx, (size_t)np_ * sizeof(double)) == 0);
    /* one call when the caller analysed anyway */
    memset(nx, 0, (size_t)np_ * sizeof(double));
    CHECK(solve_with(&c, &s, nx, u, &ic) == MBDCP_OK && ic.status == MBDCP_SOLVED && !ic.handover);
    CHECK(ic.iterations == ib.iterations && memcmp(nb, nx, (size_t)np_ * sizeof(double)) == 0);
    /* a plan long enough: APGD's own solve, no handover */
    a = s;
    a.method = MBDCP_CCP_APGD;
    a.factor_blocks = -1;
    memset(na, 0, (size_t)np_ * sizeof(double));
    CHECK(solve_with(&c, &a, na, u, &ia) == MBDCP_OK && ia.status == MBDCP_SOLVED);
    s.factor_blocks = -1;
    s.plan.budget = ia.iterations;
    memset(nx, 0, (size_t)np_ * sizeof(double));
    CHECK(solve_with(&c, &s, nx, u, &ic) == MBDCP_OK && ic.status == MBDCP_SOLVED && !ic.handover);
    CHECK(ic.iterations == ia.iterations && ic.finished == MBDCP_CCP_APGD && memcmp(na, nx, (size_t)np_ * sizeof(double)) == 0);
    CHECK(mbdcp_ccp_resume(NULL, &s, &ic, nx, u, &ic, nu0, 0) == MBDCP_ERR_NULL);
    free(na);
    free(nb);
    free(nx);
    free(u);
    free(nu0);
    ccp_free(&c);
}

/* Settings and calls the interior-point method refuses. */
static void test_errors(void)
{
    Ccp c;
    random_particles(3, 4, 0.5, 0, &c);
    MbdcpCcpSettings s;
    mbdcp_ccp_default_settings(&s);
    const char *msg = NULL;
    s.method = MBDCP_CCP_IPM;
    CHECK(mbdcp_ccp_check_settings(&s, &msg) == MBDCP_ERR_SETTING && msg != NULL); /* no factor_blocks */
    s.method = MBDCP_CCP_AUTO;
    CHECK(mbdcp_ccp_check_settings(&s, NULL) == MBDCP_OK); /* AUTO without it: APGD alone */
    s.method = MBDCP_CCP_METHOD_COUNT; /* one past the last method of MBDCP_CCP_METHOD_LIST */
    CHECK(mbdcp_ccp_check_settings(&s, NULL) == MBDCP_ERR_SETTING);
    CHECK(MBDCP_CCP_METHOD_COUNT == 5 && MBDCP_CCP_AUTO == 4 && strcmp(mbdcp_ccp_method_name(MBDCP_CCP_IPM), "ipm") == 0);
    CHECK(mbdcp_ccp_method_name(MBDCP_CCP_METHOD_COUNT) == NULL && mbdcp_ccp_method_name((MbdcpCcpMethod)-1) == NULL);
    /* AUTO without a factor bound runs APGD alone */
    double nu[12] = {0}, u[9];
    MbdcpCcpInfo info;
    mbdcp_ccp_default_settings(&s);
    s.method = MBDCP_CCP_AUTO;
    s.tol = 1e-9;
    size_t bytes = mbdcp_ccp_solve_workspace_size(&c.pr, &s);
    CHECK(bytes == mbdcp_ccp_workspace_size(&c.pr));
    void *work = malloc(bytes);
    CHECK(mbdcp_ccp_solve(&c.pr, &s, nu, u, &info, work, bytes) == MBDCP_OK && info.status == MBDCP_SOLVED);
    CHECK(info.finished == MBDCP_CCP_APGD && violation(&c, nu) <= 1e-7);
    free(work);
    /* a factor bound below the fill: refused */
    s.method = MBDCP_CCP_IPM;
    s.factor_blocks = 0;
    bytes = mbdcp_ccp_solve_workspace_size(&c.pr, &s);
    work = malloc(bytes);
    const MbdcpReturn rc = mbdcp_ccp_solve(&c.pr, &s, nu, u, &info, work, bytes);
    CHECK(rc == MBDCP_ERR_WORKSPACE || (rc == MBDCP_OK && info.status == MBDCP_SOLVED));
    /* M missing */
    MbdcpCcpProblem bare = c.pr;
    bare.M_colptr = NULL;
    CHECK(mbdcp_ccp_solve(&bare, &s, nu, u, &info, work, bytes) == MBDCP_ERR_NULL);
    free(work);
    mbdcp_int blocks;
    CHECK(mbdcp_ccp_factor_blocks(&bare, &blocks, NULL, nu, sizeof nu) == MBDCP_ERR_NULL);
    ccp_free(&c);
}

int main(void)
{
    test_ipm_random();
    test_recorded();
    test_no_solution();
    test_errors();
    test_auto_budget();
    test_auto_plan();
    test_tiny_friction();
    return report();
}
