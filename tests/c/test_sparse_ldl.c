/* Unit tests of sparse_ldl.h (built with -fsanitize=address,undefined by tests/c/run.sh, and under
 * valgrind in CI). Every solve is checked by its residual ||A x - b|| against a matrix-vector product
 * written here; orderings are checked to be permutations and, on patterns with a known best order, to
 * reach that order's fill. Prints one line per failure and a closing "N passed, N failed" line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mbdcp/mbdcp.h"

static unsigned long long rng_state = 88172645463325252ULL;

static double uniform(void) /* xorshift64, in [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* A block matrix in block CSR with its values. */
typedef struct {
    int n, bs, nnz;
    int *ptr, *ind;
    double *val;
} Blocks;

static void blocks_free(Blocks *A)
{
    free(A->ptr);
    free(A->ind);
    free(A->val);
}

/* Random pattern: block i couples with i+1 and with `extra` random others per row; values random;
 * diagonal blocks get `shift` on their diagonal; symmetric: the values mirror (A_ji = A_ij^T). */
static Blocks random_blocks(int n, int bs, int extra, double shift, int symmetric)
{
    Blocks A = {n, bs, 0, NULL, NULL, NULL};
    char *dense = calloc((size_t)n * n, 1);
    for (int i = 0; i < n; ++i) {
        dense[i * n + i] = 1;
        if (i + 1 < n) dense[i * n + i + 1] = dense[(i + 1) * n + i] = 1;
        for (int e = 0; e < extra; ++e) {
            const int j = (int)((uniform() + 1.0) * 0.5 * n) % n;
            dense[i * n + j] = dense[j * n + i] = 1;
        }
    }
    A.ptr = malloc((size_t)(n + 1) * sizeof(int));
    A.ptr[0] = 0;
    for (int i = 0; i < n; ++i) {
        int c = 0;
        for (int j = 0; j < n; ++j) c += dense[i * n + j];
        A.ptr[i + 1] = A.ptr[i] + c;
    }
    A.nnz = A.ptr[n];
    A.ind = malloc((size_t)A.nnz * sizeof(int));
    A.val = malloc((size_t)A.nnz * bs * bs * sizeof(double));
    for (int i = 0, k = 0; i < n; ++i)
        for (int j = n - 1; j >= 0; --j) /* reversed: the order within a row must not matter */
            if (dense[i * n + j]) A.ind[k++] = j;
    for (int i = 0; i < n; ++i)
        for (int k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
            const int j = A.ind[k];
            double *v = A.val + (size_t)k * bs * bs;
            for (int a = 0; a < bs * bs; ++a) v[a] = uniform();
            if (i == j)
                for (int a = 0; a < bs; ++a) v[a * bs + a] += shift;
        }
    if (symmetric) /* A_ji = A_ij^T for j > i, and symmetric diagonal blocks */
        for (int i = 0; i < n; ++i)
            for (int k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
                const int j = A.ind[k];
                if (j < i) continue;
                double *v = A.val + (size_t)k * bs * bs;
                if (j == i) {
                    for (int a = 0; a < bs; ++a)
                        for (int b = 0; b < a; ++b) v[b * bs + a] = v[a * bs + b];
                    continue;
                }
                for (int l = A.ptr[j]; l < A.ptr[j + 1]; ++l)
                    if (A.ind[l] == i)
                        for (int a = 0; a < bs; ++a)
                            for (int b = 0; b < bs; ++b) A.val[(size_t)l * bs * bs + b * bs + a] = v[a * bs + b];
            }
    free(dense);
    return A;
}

static void matvec(const Blocks *A, const double *x, double *y)
{
    const int bs = A->bs;
    memset(y, 0, (size_t)A->n * bs * sizeof(double));
    for (int i = 0; i < A->n; ++i)
        for (int k = A->ptr[i]; k < A->ptr[i + 1]; ++k)
            for (int a = 0; a < bs; ++a)
                for (int b = 0; b < bs; ++b) y[i * bs + a] += A->val[(size_t)k * bs * bs + a * bs + b] * x[A->ind[k] * bs + b];
}

/* Analyse, factor and solve A x = b; returns the relative residual (or -1 on a failed call);
 * perturbed (may be NULL) gets the count of replaced pivots. */
static double factor_and_solve(const Blocks *A, int symmetric, int *nnz_l_out, int *perturbed)
{
    const int n = A->n, bs = A->bs, m = n * bs;
    void *aw = malloc(mbdcp_sldl_analyze_workspace_size(n, A->nnz));
    int *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof(int)), nnz_l = -1;
    double flops = 0.0, res = -1.0;
    MbdcpReturn rc = mbdcp_sldl_analyze(n, A->ptr, A->ind, perm, &nnz_l, &flops, aw, mbdcp_sldl_analyze_workspace_size(n, A->nnz));
    free(aw);
    if (nnz_l_out) *nnz_l_out = nnz_l;
    if (rc != MBDCP_OK) {
        free(perm);
        return -1.0;
    }
    const size_t bytes = mbdcp_sldl_workspace_size(n, bs, symmetric, A->nnz, nnz_l);
    void *w = malloc(bytes);
    MbdcpSldl f;
    double *b = malloc((size_t)(m > 0 ? m : 1) * sizeof(double)), *x = malloc((size_t)(m > 0 ? m : 1) * sizeof(double));
    double *r = malloc((size_t)(m > 0 ? m : 1) * sizeof(double));
    for (int i = 0; i < m; ++i) x[i] = b[i] = uniform();
    if (mbdcp_sldl_init(&f, n, bs, symmetric, A->ptr, A->ind, perm, nnz_l, w, bytes) == MBDCP_OK &&
        mbdcp_sldl_factor(&f, A->val, 1e-14) == MBDCP_OK && mbdcp_sldl_solve(&f, x) == MBDCP_OK) {
        matvec(A, x, r);
        double num = 0.0, den = 0.0;
        for (int i = 0; i < m; ++i) {
            num += (r[i] - b[i]) * (r[i] - b[i]);
            den += b[i] * b[i];
        }
        res = sqrt(num / (den > 0 ? den : 1.0));
        if (perturbed) *perturbed = f.perturbed;
    }
    free(w);
    free(perm);
    free(b);
    free(x);
    free(r);
    return res;
}

static void test_random_solves(void)
{
    for (int bs = 1; bs <= 4; ++bs)
        for (int trial = 0; trial < 20; ++trial) {
            const int n = 1 + trial * 7;
            /* unsymmetric, block diagonally dominant: no pivoting across blocks needed */
            Blocks A = random_blocks(n, bs, 3, 12.0 * bs, 0);
            int pert = -1;
            double res = factor_and_solve(&A, 0, NULL, &pert);
            CHECK(res >= 0.0 && res < 1e-12);
            CHECK(pert == 0);
            blocks_free(&A);
            /* symmetric indefinite with a dominant diagonal: LDL^T */
            A = random_blocks(n, bs, 3, (trial % 2 ? -1.0 : 1.0) * 12.0 * bs, 1);
            res = factor_and_solve(&A, 1, NULL, &pert);
            CHECK(res >= 0.0 && res < 1e-12);
            /* the same matrix through the unsymmetric path */
            res = factor_and_solve(&A, 0, NULL, NULL);
            CHECK(res >= 0.0 && res < 1e-12);
            blocks_free(&A);
        }
}

/* The first column of L's dense tail for A's pattern (n if none). */
static int tail_of(const Blocks *A)
{
    const size_t abytes = mbdcp_sldl_analyze_workspace_size(A->n, A->nnz);
    void *aw = malloc(abytes);
    int *perm = malloc((size_t)A->n * sizeof(int)), nnz_l = -1, tail = -1;
    if (mbdcp_sldl_analyze(A->n, A->ptr, A->ind, perm, &nnz_l, NULL, aw, abytes) == MBDCP_OK) {
        const size_t bytes = mbdcp_sldl_workspace_size(A->n, A->bs, 1, A->nnz, nnz_l);
        void *w = malloc(bytes);
        MbdcpSldl f;
        if (mbdcp_sldl_init(&f, A->n, A->bs, 1, A->ptr, A->ind, perm, nnz_l, w, bytes) == MBDCP_OK) tail = f.tail;
        free(w);
    }
    free(aw);
    free(perm);
    return tail;
}

/* A pattern that fills in: the symmetric factor's dense tail (factored by panels, one partly
 * filled) solves as the column-by-column factorisation does, for the 3 x 3 blocks' own kernel
 * and the general one. */
static void test_dense_tail(void)
{
    int partial = 0;
    for (int bs = 1; bs <= 4; ++bs)
        for (int n = 40; n <= 90; n += 25) {
            Blocks A = random_blocks(n, bs, 4, (n % 2 ? -1.0 : 1.0) * 12.0 * bs, 1);
            const int tail = tail_of(&A);
            CHECK(tail >= 0 && n - tail >= 16);
            partial += (n - tail) % 8 != 0;
            int pert = -1;
            const double res = factor_and_solve(&A, 1, NULL, &pert);
            CHECK(res >= 0.0 && res < 1e-12);
            CHECK(pert == 0);
            blocks_free(&A);
        }
    CHECK(partial > 0);
}

/* Diagonal blocks that need pivoting inside the block (a zero (0, 0) entry). */
static void test_pivoting_inside_blocks(void)
{
    Blocks A = random_blocks(30, 3, 2, 0.0, 0);
    for (int i = 0; i < A.n; ++i)
        for (int k = A.ptr[i]; k < A.ptr[i + 1]; ++k)
            if (A.ind[k] == i) {
                double *v = A.val + (size_t)k * 9;
                v[0] = 0.0;
                v[1] = v[3] = 40.0;
                v[4] = 0.0;
                v[8] = 40.0;
            }
    int pert = -1;
    const double res = factor_and_solve(&A, 0, NULL, &pert);
    CHECK(res >= 0.0 && res < 1e-11);
    CHECK(pert == 0);
    blocks_free(&A);
}

/* An arrow: block 0 couples with every other block. The natural order fills everything below it; a
 * minimum-degree order eliminates the leaves first (no fill): nnz(L) = n - 1. */
static void test_arrow_fill(void)
{
    const int n = 50;
    Blocks A = {n, 1, 0, NULL, NULL, NULL};
    A.ptr = malloc((size_t)(n + 1) * sizeof(int));
    A.ind = malloc((size_t)(3 * n) * sizeof(int));
    A.val = malloc((size_t)(3 * n) * sizeof(double));
    int k = 0;
    A.ptr[0] = 0;
    for (int i = 0; i < n; ++i) {
        A.val[k] = i == 0 ? (double)n : 2.0;
        A.ind[k++] = i;
        if (i == 0)
            for (int j = 1; j < n; ++j) {
                A.val[k] = 1.0;
                A.ind[k++] = j;
            }
        else {
            A.val[k] = 1.0;
            A.ind[k++] = 0;
        }
        A.ptr[i + 1] = k;
    }
    A.nnz = k;
    int nnz_l = -1;
    const double res = factor_and_solve(&A, 1, &nnz_l, NULL);
    CHECK(nnz_l == n - 1);
    CHECK(res >= 0.0 && res < 1e-13);
    blocks_free(&A);
}

/* A k x k grid (5-point Laplacian): minimum degree keeps the fill well below the banded order's
 * k^3 (for k = 20: 7,600 below the diagonal in the natural order). */
static void test_grid_fill(void)
{
    const int k = 20, n = k * k;
    Blocks A = {n, 1, 0, NULL, NULL, NULL};
    A.ptr = malloc((size_t)(n + 1) * sizeof(int));
    A.ind = malloc((size_t)(5 * n) * sizeof(int));
    A.val = malloc((size_t)(5 * n) * sizeof(double));
    int e = 0;
    A.ptr[0] = 0;
    for (int i = 0; i < n; ++i) {
        const int x = i % k, y = i / k;
        const int nb[5] = {i, x > 0 ? i - 1 : -1, x < k - 1 ? i + 1 : -1, y > 0 ? i - k : -1, y < k - 1 ? i + k : -1};
        for (int t = 0; t < 5; ++t)
            if (nb[t] >= 0) {
                A.ind[e] = nb[t];
                A.val[e++] = t == 0 ? 4.0 : -1.0;
            }
        A.ptr[i + 1] = e;
    }
    A.nnz = e;
    int nnz_l = -1;
    const double res = factor_and_solve(&A, 1, &nnz_l, NULL);
    CHECK(res >= 0.0 && res < 1e-12);
    CHECK(nnz_l > 0 && nnz_l < 4500);
    blocks_free(&A);
}

/* A singular matrix: the zero pivot is replaced and counted, nothing breaks. */
static void test_singular(void)
{
    const int ptr[3] = {0, 2, 4}, ind[4] = {0, 1, 0, 1};
    const double val[4] = {1.0, 1.0, 1.0, 1.0};
    int perm[2], nnz_l = -1;
    char aw[1024], w[1024];
    CHECK(mbdcp_sldl_analyze(2, ptr, ind, perm, &nnz_l, NULL, aw, sizeof aw) == MBDCP_OK && nnz_l == 1);
    MbdcpSldl f;
    CHECK(mbdcp_sldl_init(&f, 2, 1, 0, ptr, ind, perm, nnz_l, w, sizeof w) == MBDCP_OK);
    CHECK(mbdcp_sldl_factor(&f, val, 1e-12) == MBDCP_OK && f.perturbed == 1);
    double x[2] = {1.0, 1.0};
    CHECK(mbdcp_sldl_solve(&f, x) == MBDCP_OK && isfinite(x[0]) && isfinite(x[1]));
    CHECK(fabs(x[0] + x[1] - 1.0) < 1e-9); /* the consistent right-hand side is still met */
}

static void test_errors(void)
{
    const int ptr[3] = {0, 1, 2}, bad[2] = {0, 2}, ind[2] = {0, 1};
    int perm[2], nnz_l;
    char aw[1024], w[1024];
    CHECK(mbdcp_sldl_analyze(2, ptr, bad, perm, &nnz_l, NULL, aw, sizeof aw) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_sldl_analyze(2, ptr, ind, perm, &nnz_l, NULL, aw, 4) == MBDCP_ERR_WORKSPACE);
    CHECK(mbdcp_sldl_analyze(2, ptr, ind, NULL, &nnz_l, NULL, aw, sizeof aw) == MBDCP_ERR_NULL);
    CHECK(mbdcp_sldl_analyze(2, ptr, ind, perm, &nnz_l, NULL, aw, sizeof aw) == MBDCP_OK && nnz_l == 0);
    MbdcpSldl f;
    const int twice[2] = {1, 1};
    CHECK(mbdcp_sldl_init(&f, 2, 3, 0, ptr, ind, twice, 0, w, sizeof w) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_sldl_init(&f, 2, 3, 0, ptr, ind, perm, 5, w, sizeof w) == MBDCP_ERR_WORKSPACE ||
          mbdcp_sldl_init(&f, 2, 3, 0, ptr, ind, perm, 5, w, sizeof w) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_sldl_init(&f, 2, 9, 0, ptr, ind, perm, 0, w, sizeof w) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_sldl_init(&f, 2, 3, 0, ptr, ind, perm, 0, w, 8) == MBDCP_ERR_WORKSPACE);
    CHECK(mbdcp_sldl_init(&f, 2, 3, 0, ptr, ind, perm, 0, w, sizeof w) == MBDCP_OK);
    double val[18] = {0};
    val[0] = val[4] = val[8] = 1.0;
    val[9] = val[13] = val[17] = 2.0;
    CHECK(mbdcp_sldl_factor(&f, val, 0.0) == MBDCP_ERR_SETTING);
    val[3] = NAN;
    CHECK(mbdcp_sldl_factor(&f, val, 1e-14) == MBDCP_ERR_NONFINITE);
    /* no blocks at all */
    const int p0[1] = {0};
    CHECK(mbdcp_sldl_analyze(0, p0, NULL, perm, &nnz_l, NULL, aw, sizeof aw) == MBDCP_OK && nnz_l == 0);
}

int main(void)
{
    test_random_solves();
    test_dense_tail();
    test_pivoting_inside_blocks();
    test_arrow_fill();
    test_grid_fill();
    test_singular();
    test_errors();
    return report();
}
