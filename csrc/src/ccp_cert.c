/* Certificates that a CCP has no solution, from the direction along which a first-order method's
 * iterates grow (see ccp.h and ccp_ops.h).
 *
 * When no solution exists, projected gradient iterates grow along a fixed direction, the minimal
 * displacement vector of the iteration (Pazy 1971; Banjac, Goulart, Stellato & Boyd 2019 for the
 * same idea in ADMM): the direction of an impulse pattern in equilibrium (P d = 0) that lowers the
 * objective. APGD's growing direction is such a d only approximately; this file turns it into an
 * exact one. Its support, the contacts where it is not small, is few contacts among few bodies (a
 * jammed cluster); on that support each contact is held at zero, on its cone's boundary (a ray
 * d_i = s_i (1, mu_i cos t_i, mu_i sin t_i), unknowns s_i, t_i) or in its interior (three
 * unknowns), and the Gauss-Newton method with the minimum-norm step (Nocedal & Wright 2006,
 * sec. 10.3) drives the cluster's rows of P d to zero, to rounding. The result is accepted only
 * if it passes mbdcp_ccp_is_certificate(), which reads all of P. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ccp_ops.h"
#include "mbdcp/cone.h"
#include "mbdcp/dense.h"

/* The support: at most CERT_SET contacts, and the velocities (rows of P) they touch. */
#define CERT_SET 48
#define CERT_ROWS (12 * CERT_SET)
/* A contact enters the support when its normal entry exceeds tau times the largest one, for tau
 * in CERT_TAUS in turn (the first support that yields a certificate is kept). */
static const mbdcp_float CERT_TAUS[] = {1e-1, 1e-2, 1e-3};
/* A contact whose tangential part reaches mu (1 - CERT_BOUNDARY) times its normal one is on its
 * cone's boundary. */
#define CERT_BOUNDARY 1e-6
#define GN_STEPS 30
/* Rows of P d must vanish within CERT_ROUNDING eps times their magnitude sum_j |P_rj d_j|. */
#define CERT_ROUNDING 64.0

static size_t align8(size_t bytes)
{
    return (bytes + 7) & ~(size_t)7;
}

/* The rows of P a support may touch. */
static mbdcp_int cert_rows(const MbdcpCcpProblem *p)
{
    return p->n_v < CERT_ROWS ? p->n_v : CERT_ROWS;
}

/* ints: the row map (n_v), the set, its classes, the pool, its components (CERT_SET each), the
 * rows (cert_rows); floats: A and J (rows x 3 CERT_SET each), G ((3 CERT_SET)^2), z, dz, d
 * (3 CERT_SET each), r and a solve's vector (rows + 3 CERT_SET each), and P d, |P| |d| (n_v each). */
size_t mbdcp_ccp_cert_bytes(const MbdcpCcpProblem *p)
{
    const size_t R = (size_t)cert_rows(p), K = 3 * CERT_SET, nv = (size_t)p->n_v;
    const size_t ints = nv + 4 * CERT_SET + R;
    const size_t floats = 2 * R * K + K * K + 3 * K + 2 * (R + K) + 2 * nv;
    return align8(ints * sizeof(mbdcp_int)) + floats * sizeof(mbdcp_float);
}

typedef struct {
    const MbdcpCcpProblem *p;
    mbdcp_int *rowmap, *set, *ray, *rows; /* ray[a]: 1 if contact set[a] is on its cone's boundary */
    mbdcp_int *pool, *comp, npool;        /* the support's contacts and their component labels */
    mbdcp_float *A, *J, *G, *z, *dz, *d, *r, *v, *Pd, *Pabs;
    mbdcp_int k, R, nz; /* contacts, rows, unknowns */
} Cert;

static void carve(Cert *c, const MbdcpCcpProblem *p, void *work)
{
    const size_t R = (size_t)cert_rows(p), K = 3 * CERT_SET, nv = (size_t)p->n_v;
    c->p = p;
    c->rowmap = (mbdcp_int *)work;
    c->set = c->rowmap + nv;
    c->ray = c->set + CERT_SET;
    c->pool = c->ray + CERT_SET;
    c->comp = c->pool + CERT_SET;
    c->rows = c->comp + CERT_SET;
    mbdcp_float *w = (mbdcp_float *)((char *)work + align8((nv + 4 * CERT_SET + R) * sizeof(mbdcp_int)));
    mbdcp_float **slots[] = {&c->A, &c->J, &c->G, &c->z, &c->dz, &c->d, &c->r, &c->v, &c->Pd, &c->Pabs};
    const size_t sizes[] = {R * K, R * K, K * K, K, K, K, R + K, R + K, nv, nv};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        *slots[s] = w;
        w += sizes[s];
    }
}

/* The rows the support's contacts touch (at most cert_rows) and A = P on them (dense, row-major,
 * R x 3 k). 0 if too many. */
static int support_rows(Cert *c)
{
    const MbdcpCcpProblem *p = c->p;
    c->R = 0;
    for (mbdcp_int r = 0; r < p->n_v; ++r) c->rowmap[r] = -1;
    for (mbdcp_int a = 0; a < c->k; ++a)
        for (mbdcp_int t = p->P_colptr[3 * c->set[a]]; t < p->P_colptr[3 * c->set[a] + 3]; ++t) {
            const mbdcp_int r = p->P_rowind[t];
            if (c->rowmap[r] >= 0) continue;
            if (c->R == cert_rows(p)) return 0;
            c->rowmap[r] = c->R;
            c->rows[c->R++] = r;
        }
    const mbdcp_int K = 3 * c->k;
    memset(c->A, 0, (size_t)c->R * K * sizeof(mbdcp_float));
    for (mbdcp_int a = 0; a < K; ++a) {
        const mbdcp_int j = 3 * c->set[a / 3] + a % 3;
        for (mbdcp_int t = p->P_colptr[j]; t < p->P_colptr[j + 1]; ++t)
            c->A[(size_t)c->rowmap[p->P_rowind[t]] * K + a] += p->P_val[t];
    }
    return c->k > 0;
}

/* Do contacts i and j act on a common velocity (row of P)? */
static int share_a_row(const MbdcpCcpProblem *p, mbdcp_int i, mbdcp_int j)
{
    for (mbdcp_int s = p->P_colptr[3 * i]; s < p->P_colptr[3 * i + 3]; ++s)
        for (mbdcp_int t = p->P_colptr[3 * j]; t < p->P_colptr[3 * j + 3]; ++t)
            if (p->P_rowind[s] == p->P_rowind[t]) return 1;
    return 0;
}

/* The pool for tau: the contacts (at most CERT_SET) whose normal entry exceeds tau max_n, labelled
 * by the connected components of "act on a common velocity"; returns the number of components (0
 * if the pool is too large). */
static mbdcp_int pool(Cert *c, const mbdcp_float *dir, mbdcp_float tau)
{
    const MbdcpCcpProblem *p = c->p;
    mbdcp_float top = 0.0;
    for (mbdcp_int i = 0; i < p->n_c; ++i) top = fmax(top, dir[3 * i]);
    c->npool = 0;
    for (mbdcp_int i = 0; i < p->n_c; ++i) {
        if (!(dir[3 * i] > tau * top)) continue;
        if (c->npool == CERT_SET) return 0;
        c->comp[c->npool] = -1;
        c->pool[c->npool++] = i;
    }
    mbdcp_int ncomp = 0;
    for (mbdcp_int a = 0; a < c->npool; ++a) {
        if (c->comp[a] >= 0) continue;
        c->comp[a] = ncomp;
        for (int grew = 1; grew;) { /* the component grows until no contact joins it */
            grew = 0;
            for (mbdcp_int b = 0; b < c->npool; ++b) {
                if (c->comp[b] >= 0) continue;
                for (mbdcp_int e = 0; e < c->npool && c->comp[b] < 0; ++e)
                    if (c->comp[e] == ncomp && share_a_row(p, c->pool[e], c->pool[b])) c->comp[b] = ncomp, grew = 1;
            }
        }
        ++ncomp;
    }
    return ncomp;
}

/* The support: component q of the pool (q < 0: the whole pool), and its rows. 0 if too large. */
static int support(Cert *c, mbdcp_int q)
{
    c->k = 0;
    for (mbdcp_int a = 0; a < c->npool; ++a)
        if (q < 0 || c->comp[a] == q) c->set[c->k++] = c->pool[a];
    return support_rows(c);
}

static void unknowns(Cert *c);

/* Each contact of the support on its cone's boundary (a ray: s, t) or inside it (3 entries), as
 * the direction dir has it (rays 1) or all inside (rays 0: a contact that first-order iterates
 * leave on the boundary may lie inside in a certificate); d and the unknowns z from dir. */
static void classify(Cert *c, const mbdcp_float *dir, int rays)
{
    for (mbdcp_int a = 0; a < c->k; ++a) {
        const mbdcp_int i = c->set[a];
        const mbdcp_float *g = dir + 3 * i, mu = c->p->mu[i], t = hypot(g[1], g[2]);
        c->ray[a] = rays && t >= mu * g[0] * (1.0 - CERT_BOUNDARY);
        for (int e = 0; e < 3; ++e) c->d[3 * a + e] = g[e];
    }
    unknowns(c);
}

/* The unknowns z from d (each contact's class kept). */
static void unknowns(Cert *c)
{
    mbdcp_int n = 0;
    for (mbdcp_int a = 0; a < c->k; ++a) {
        const mbdcp_float *g = c->d + 3 * a;
        if (c->ray[a]) {
            c->z[n++] = g[0];
            c->z[n++] = atan2(g[2], g[1]);
        } else {
            for (int e = 0; e < 3; ++e) c->z[n++] = g[e];
        }
    }
    c->nz = n;
}

/* d (3 k) from the unknowns z, and J = A dd/dz (R x nz, row-major). */
static void expand(Cert *c)
{
    const mbdcp_int K = 3 * c->k, R = c->R, nz = c->nz;
    mbdcp_int n = 0;
    for (mbdcp_int a = 0; a < c->k; ++a) {
        const mbdcp_float mu = c->p->mu[c->set[a]], *Aa = c->A + 3 * a;
        mbdcp_float *d = c->d + 3 * a;
        if (!c->ray[a]) {
            for (int e = 0; e < 3; ++e) d[e] = c->z[n + e];
            for (mbdcp_int r = 0; r < R; ++r)
                for (int e = 0; e < 3; ++e) c->J[(size_t)r * nz + n + e] = Aa[(size_t)r * K + e];
            n += 3;
            continue;
        }
        const mbdcp_float s = c->z[n], cs = cos(c->z[n + 1]), sn = sin(c->z[n + 1]);
        d[0] = s;
        d[1] = s * mu * cs;
        d[2] = s * mu * sn;
        for (mbdcp_int r = 0; r < R; ++r) {
            const mbdcp_float *row = Aa + (size_t)r * K;
            c->J[(size_t)r * nz + n] = row[0] + mu * (cs * row[1] + sn * row[2]);
            c->J[(size_t)r * nz + n + 1] = s * mu * (cs * row[2] - sn * row[1]);
        }
        n += 2;
    }
}

/* r = A d and the rows' magnitudes |A| |d|; returns 1 when every row vanishes to rounding. */
static int rows_vanish(Cert *c)
{
    const mbdcp_int K = 3 * c->k;
    int ok = 1;
    for (mbdcp_int r = 0; r < c->R; ++r) {
        mbdcp_float s = 0.0, m = 0.0;
        for (mbdcp_int a = 0; a < K; ++a) {
            const mbdcp_float t = c->A[(size_t)r * K + a] * c->d[a];
            s += t;
            m += fabs(t);
        }
        c->r[r] = s;
        if (!(fabs(s) <= CERT_ROUNDING * DBL_EPSILON * m)) ok = 0;
    }
    return ok;
}

/* The minimum-norm Gauss-Newton step dz solving J dz = r in the least-squares sense, through the
 * smaller of J J^T and J^T J, a relative 1e-14 added to its diagonal (J may lack full rank). */
static MbdcpReturn gauss_newton_step(Cert *c)
{
    const mbdcp_int R = c->R, nz = c->nz, wide = nz >= R, n = wide ? R : nz;
    mbdcp_float dmax = 0.0;
    for (mbdcp_int a = 0; a < n; ++a)
        for (mbdcp_int b = 0; b <= a; ++b) {
            mbdcp_float s = 0.0;
            if (wide)
                for (mbdcp_int q = 0; q < nz; ++q) s += c->J[(size_t)a * nz + q] * c->J[(size_t)b * nz + q];
            else
                for (mbdcp_int q = 0; q < R; ++q) s += c->J[(size_t)q * nz + a] * c->J[(size_t)q * nz + b];
            c->G[(size_t)a * n + b] = s;
        }
    for (mbdcp_int a = 0; a < n; ++a) dmax = fmax(dmax, c->G[(size_t)a * n + a]);
    if (!(dmax > 0.0)) return MBDCP_ERR_NOT_POSDEF;
    for (mbdcp_int a = 0; a < n; ++a) c->G[(size_t)a * n + a] += 1e-14 * dmax;
    MbdcpReturn rc = mbdcp_cholesky(n, c->G, 0.0);
    if (rc != MBDCP_OK) return rc;
    for (mbdcp_int a = 0; a < n; ++a) {
        mbdcp_float s = 0.0;
        if (wide) s = c->r[a];
        else
            for (mbdcp_int q = 0; q < R; ++q) s += c->J[(size_t)q * nz + a] * c->r[q];
        c->v[a] = s;
    }
    mbdcp_trsv_lower(n, c->G, 0, c->v);
    mbdcp_trsv_lower(n, c->G, 1, c->v);
    for (mbdcp_int q = 0; q < nz; ++q) {
        mbdcp_float s = 0.0;
        if (wide)
            for (mbdcp_int a = 0; a < R; ++a) s += c->J[(size_t)a * nz + q] * c->v[a];
        else
            s = c->v[q];
        c->dz[q] = s;
    }
    return MBDCP_OK;
}

/* Gauss-Newton on A d(z) = 0 from the classified direction: 1 when the rows vanish to rounding. */
static int drive_to_zero(Cert *c)
{
    for (int it = 0; it < GN_STEPS; ++it) {
        expand(c);
        if (rows_vanish(c)) return 1;
        if (gauss_newton_step(c) != MBDCP_OK) return 0;
        for (mbdcp_int q = 0; q < c->nz; ++q) c->z[q] -= c->dz[q];
        if (!mbdcp_all_finite((size_t)c->nz, c->z)) return 0;
    }
    expand(c);
    return rows_vanish(c);
}

/* Gauss-Newton can leave contacts that belong to no certificate at a rounding's size, where their
 * rows cannot vanish relative to their own magnitude: drop the contacts below CERT_PRUNE times the
 * largest entry (when the rows vanish in absolute terms) and solve again on the rest. 1 when
 * dropped and solved. */
#define CERT_PRUNE 1e-9
static int prune(Cert *c)
{
    const mbdcp_int K = 3 * c->k;
    mbdcp_float dmax = 0.0, rmax = 0.0, amax = 0.0;
    for (mbdcp_int a = 0; a < K; ++a) dmax = fmax(dmax, fabs(c->d[a]));
    for (mbdcp_int r = 0; r < c->R; ++r) rmax = fmax(rmax, fabs(c->r[r]));
    for (size_t q = 0; q < (size_t)c->R * K; ++q) amax = fmax(amax, fabs(c->A[q]));
    if (!(rmax <= CERT_ROUNDING * DBL_EPSILON * amax * dmax)) return 0;
    mbdcp_int k = 0;
    for (mbdcp_int a = 0; a < c->k; ++a) {
        const mbdcp_float *g = c->d + 3 * a;
        if (!(fmax(fabs(g[0]), fmax(fabs(g[1]), fabs(g[2]))) > CERT_PRUNE * dmax)) continue;
        c->set[k] = c->set[a];
        c->ray[k] = c->ray[a];
        for (int e = 0; e < 3; ++e) c->d[3 * k + e] = g[e];
        ++k;
    }
    if (k == c->k || k == 0) return 0;
    c->k = k;
    if (!support_rows(c)) return 0;
    unknowns(c);
    return drive_to_zero(c);
}

/* The support's d in the whole of out (n_p; zero elsewhere), a boundary contact's tangential part
 * pulled inside its cone by a few roundings (so that it lies in K as computed), scaled to
 * ||d||_inf = 1. */
static void scatter(const Cert *c, mbdcp_float *out)
{
    const MbdcpCcpProblem *p = c->p;
    memset(out, 0, (size_t)ccp_n_p(p) * sizeof(mbdcp_float));
    mbdcp_float m = 0.0;
    for (mbdcp_int a = 0; a < 3 * c->k; ++a) m = fmax(m, fabs(c->d[a]));
    if (!(m > 0.0)) return;
    for (mbdcp_int a = 0; a < c->k; ++a) {
        const mbdcp_float shrink = c->ray[a] ? 1.0 - 8.0 * DBL_EPSILON : 1.0;
        mbdcp_float *o = out + 3 * c->set[a];
        o[0] = c->d[3 * a] / m;
        o[1] = shrink * c->d[3 * a + 1] / m;
        o[2] = shrink * c->d[3 * a + 2] / m;
    }
}

int mbdcp_ccp_is_certificate(const MbdcpCcpProblem *p, const mbdcp_float *d, mbdcp_float *Pd, mbdcp_float *Pabs)
{
    const mbdcp_int np_ = ccp_n_p(p);
    mbdcp_float pd = 0.0, pd_abs = 0.0;
    for (mbdcp_int i = 0; i < p->n_c; ++i) {
        const mbdcp_float *g = d + 3 * i;
        if (!(g[0] >= 0.0) || !(hypot(g[1], g[2]) <= p->mu[i] * g[0] * (1.0 + 2.0 * DBL_EPSILON))) return 0;
    }
    for (mbdcp_int j = 0; j < np_; ++j) {
        if (!isfinite(d[j])) return 0;
        pd += p->p[j] * d[j];
        pd_abs += fabs(p->p[j] * d[j]);
    }
    if (!(pd + 4.0 * DBL_EPSILON * pd_abs < 0.0)) return 0;
    memset(Pd, 0, (size_t)p->n_v * sizeof(mbdcp_float));
    memset(Pabs, 0, (size_t)p->n_v * sizeof(mbdcp_float));
    for (mbdcp_int j = 0; j < np_; ++j) {
        if (d[j] == 0.0) continue;
        for (mbdcp_int t = p->P_colptr[j]; t < p->P_colptr[j + 1]; ++t) {
            Pd[p->P_rowind[t]] += p->P_val[t] * d[j];
            Pabs[p->P_rowind[t]] += fabs(p->P_val[t] * d[j]);
        }
    }
    for (mbdcp_int r = 0; r < p->n_v; ++r)
        if (!(fabs(Pd[r]) <= CERT_ROUNDING * DBL_EPSILON * Pabs[r])) return 0;
    return 1;
}

int mbdcp_ccp_certify(const MbdcpCcpProblem *p, mbdcp_float *dir, mbdcp_float *d, void *work)
{
    if (p->n_c == 0) return 0;
    Cert c;
    carve(&c, p, work);
    mbdcp_ccp_project_all(p, dir);
    for (size_t t = 0; t < sizeof CERT_TAUS / sizeof CERT_TAUS[0]; ++t) {
        const mbdcp_int ncomp = pool(&c, dir, CERT_TAUS[t]);
        for (mbdcp_int q = ncomp > 1 ? -1 : 0; q < ncomp; ++q)
            for (int rays = 1; rays >= 0; --rays) {
                if (!support(&c, q)) break;
                classify(&c, dir, rays);
                if (!drive_to_zero(&c) && !prune(&c)) continue;
                scatter(&c, d);
                if (mbdcp_ccp_is_certificate(p, d, c.Pd, c.Pabs)) return 1;
            }
    }
    return 0;
}
