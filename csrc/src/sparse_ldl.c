/* Sparse block factorisation A = P^T L D U P with an approximate-minimum-degree ordering and static
 * pivoting; see sparse_ldl.h. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "mbdcp/sparse_ldl.h"

enum { VARIABLE = 0, ELEMENT = 1, DEAD = 2 };

/* Where a block of A goes (MbdcpSldl.amap_upper): as given (L or D), into U's slot (unsymmetric),
 * transposed into L's slot (symmetric), or nowhere (symmetric, above the diagonal). */
enum { TO_L = 0, TO_U = 1, TO_LT = 2, SKIP = 3 };

/* A symmetric factor's dense tail (the last columns, each full below its diagonal: the root of the
 * elimination tree, where most of the work of a fill-heavy pattern lies) is factored by panels of
 * TAIL_PANEL block columns: each target block is read and written once per panel, not once per
 * column, and its sums stay in registers. Only from TAIL_MIN columns on. */
#define TAIL_PANEL 8
#define TAIL_MIN 16

static size_t align8(size_t bytes)
{
    return (bytes + 7) & ~(size_t)7;
}

/* ---- patterns ----------------------------------------------------------------------------------- */

static MbdcpReturn check_pattern(mbdcp_int n, const mbdcp_int *ptr, const mbdcp_int *ind)
{
    if (n < 0) return MBDCP_ERR_DIMENSION;
    if (!ptr || (n > 0 && ptr[n] > 0 && !ind)) return MBDCP_ERR_NULL;
    if (ptr[0] != 0) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int i = 0; i < n; ++i)
        if (ptr[i + 1] < ptr[i]) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int k = 0; k < ptr[n]; ++k)
        if (ind[k] < 0 || ind[k] >= n) return MBDCP_ERR_DIMENSION;
    return MBDCP_OK;
}

/* The symmetrised pattern without its diagonal, duplicates removed, in the numbering pos (identity if
 * NULL); lower = 1 keeps only the neighbours numbered below each row. sptr: n + 1, sind: 2 ptr[n],
 * mark: n. */
static void symmetrise(mbdcp_int n, const mbdcp_int *ptr, const mbdcp_int *ind, const mbdcp_int *pos, int lower,
                       mbdcp_int *sptr, mbdcp_int *sind, mbdcp_int *mark)
{
    memset(sptr, 0, (size_t)(n + 1) * sizeof(mbdcp_int));
    for (mbdcp_int i = 0; i < n; ++i)
        for (mbdcp_int k = ptr[i]; k < ptr[i + 1]; ++k) {
            const mbdcp_int a = pos ? pos[i] : i, b = pos ? pos[ind[k]] : ind[k];
            if (a == b) continue;
            if (!lower || b < a) ++sptr[a + 1];
            if (!lower || a < b) ++sptr[b + 1];
        }
    for (mbdcp_int i = 0; i < n; ++i) sptr[i + 1] += sptr[i];
    /* fill, using mark as each row's next free slot */
    for (mbdcp_int i = 0; i < n; ++i) mark[i] = sptr[i];
    for (mbdcp_int i = 0; i < n; ++i)
        for (mbdcp_int k = ptr[i]; k < ptr[i + 1]; ++k) {
            const mbdcp_int a = pos ? pos[i] : i, b = pos ? pos[ind[k]] : ind[k];
            if (a == b) continue;
            if (!lower || b < a) sind[mark[a]++] = b;
            if (!lower || a < b) sind[mark[b]++] = a;
        }
    /* remove duplicates row by row, compacting */
    for (mbdcp_int i = 0; i < n; ++i) mark[i] = -1;
    mbdcp_int out = 0;
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_int start = sptr[i], end = sptr[i + 1];
        sptr[i] = out;
        for (mbdcp_int k = start; k < end; ++k)
            if (mark[sind[k]] != i) {
                mark[sind[k]] = i;
                sind[out++] = sind[k];
            }
    }
    sptr[n] = out;
}

/* ---- approximate minimum degree ------------------------------------------------------------------ */

/* The quotient graph: node i's list iw[pe[i] .. pe[i] + len[i]) holds its elen[i] adjacent elements
 * first, then its adjacent variables; an element's list holds its variables. */
typedef struct {
    mbdcp_int n, iwlen, pfree, wflg, mindeg;
    mbdcp_int *iw, *pe, *len, *elen, *deg, *state, *head, *next, *last, *w, *mark, *lp, *buf;
} Amd;

static void deg_remove(Amd *g, mbdcp_int i)
{
    if (g->last[i] >= 0) g->next[g->last[i]] = g->next[i];
    else g->head[g->deg[i]] = g->next[i];
    if (g->next[i] >= 0) g->last[g->next[i]] = g->last[i];
}

static void deg_insert(Amd *g, mbdcp_int i)
{
    const mbdcp_int d = g->deg[i];
    g->next[i] = g->head[d];
    g->last[i] = -1;
    if (g->head[d] >= 0) g->last[g->head[d]] = i;
    g->head[d] = i;
    if (d < g->mindeg) g->mindeg = d;
}

/* Compact the live lists to the front of iw (each list's first entry is replaced by -1 - node while
 * scanning; buf keeps the entries replaced). */
static void garbage_collect(Amd *g)
{
    for (mbdcp_int i = 0; i < g->n; ++i)
        if (g->state[i] != DEAD && g->pe[i] >= 0 && g->len[i] > 0) {
            g->buf[i] = g->iw[g->pe[i]];
            g->iw[g->pe[i]] = -1 - i;
        }
    mbdcp_int dst = 0;
    for (mbdcp_int src = 0; src < g->pfree;) {
        if (g->iw[src] >= 0) {
            ++src;
            continue;
        }
        const mbdcp_int i = -1 - g->iw[src], l = g->len[i];
        g->pe[i] = dst;
        g->iw[dst] = g->buf[i];
        for (mbdcp_int k = 1; k < l; ++k) g->iw[dst + k] = g->iw[src + k];
        dst += l;
        src += l;
    }
    g->pfree = dst;
}

/* L_p = the variables adjacent to p through its elements and its own list, into g->lp (marked with
 * stamp); p's elements are absorbed. Returns |L_p|. */
static mbdcp_int pivot_list(Amd *g, mbdcp_int p, mbdcp_int stamp)
{
    mbdcp_int cnt = 0;
    g->mark[p] = stamp;
    const mbdcp_int *list = g->iw + g->pe[p];
    for (mbdcp_int k = 0; k < g->len[p]; ++k) {
        const mbdcp_int x = list[k];
        if (k < g->elen[p]) {
            if (g->state[x] != ELEMENT) continue;
            const mbdcp_int *le = g->iw + g->pe[x];
            for (mbdcp_int j = 0; j < g->len[x]; ++j)
                if (g->mark[le[j]] != stamp) {
                    g->mark[le[j]] = stamp;
                    g->lp[cnt++] = le[j];
                }
            g->state[x] = DEAD;
            g->pe[x] = -1;
        } else if (g->state[x] == VARIABLE && g->mark[x] != stamp) {
            g->mark[x] = stamp;
            g->lp[cnt++] = x;
        }
    }
    return cnt;
}

/* Variable i (in L_p): its live elements other than those just absorbed, then p, then its variables
 * outside L_p. */
static void prune(Amd *g, mbdcp_int i, mbdcp_int p, mbdcp_int stamp)
{
    mbdcp_int *list = g->iw + g->pe[i], ne = 0, na = 0;
    for (mbdcp_int k = 0; k < g->len[i]; ++k) {
        const mbdcp_int x = list[k];
        if (k < g->elen[i]) {
            if (g->state[x] == ELEMENT && x != p) list[ne++] = x;
        } else if (g->state[x] == VARIABLE && g->mark[x] != stamp) {
            g->buf[na++] = x;
        }
    }
    list[ne++] = p;
    for (mbdcp_int k = 0; k < na; ++k) list[ne + k] = g->buf[k];
    g->elen[i] = ne;
    g->len[i] = ne + na;
}

/* New approximate external degrees of L_p's variables (Amestoy, Davis and Duff 1996, eq. 4), with
 * aggressive absorption of elements inside L_p. */
static void update_degrees(Amd *g, mbdcp_int p, mbdcp_int cnt, mbdcp_int remaining)
{
    if (g->wflg > INT_MAX - 2 * g->n - 2) {
        for (mbdcp_int i = 0; i < g->n; ++i) g->w[i] = 0;
        g->wflg = 1;
    }
    const mbdcp_int wflg = g->wflg;
    for (mbdcp_int a = 0; a < cnt; ++a) {
        const mbdcp_int i = g->lp[a], *list = g->iw + g->pe[i];
        for (mbdcp_int k = 0; k < g->elen[i]; ++k) {
            const mbdcp_int e = list[k];
            if (e == p || g->state[e] != ELEMENT) continue;
            if (g->w[e] < wflg) g->w[e] = wflg + g->len[e];
            --g->w[e];
        }
    }
    for (mbdcp_int a = 0; a < cnt; ++a) {
        const mbdcp_int i = g->lp[a], *list = g->iw + g->pe[i];
        mbdcp_int d = g->len[i] - g->elen[i] + cnt - 1;
        for (mbdcp_int k = 0; k < g->elen[i]; ++k) {
            const mbdcp_int e = list[k];
            if (e == p || g->state[e] != ELEMENT) continue;
            const mbdcp_int ext = g->w[e] - wflg;
            if (ext <= 0) {
                g->state[e] = DEAD;
                g->pe[e] = -1;
            } else {
                d += ext;
            }
        }
        if (g->deg[i] + cnt - 1 < d) d = g->deg[i] + cnt - 1;
        if (remaining - 1 < d) d = remaining - 1;
        if (d < 0) d = 0;
        deg_remove(g, i);
        g->deg[i] = d;
        deg_insert(g, i);
    }
    g->wflg += g->n + 1;
}

/* Eliminate the variable of least approximate degree; returns it. */
static mbdcp_int eliminate(Amd *g, mbdcp_int k)
{
    while (g->head[g->mindeg] < 0) ++g->mindeg;
    const mbdcp_int p = g->head[g->mindeg], stamp = k + 1;
    deg_remove(g, p);
    const mbdcp_int cnt = pivot_list(g, p, stamp);
    g->state[p] = ELEMENT;
    g->pe[p] = -1; /* its old list is free */
    if (g->pfree + cnt > g->iwlen) garbage_collect(g);
    g->pe[p] = g->pfree;
    memcpy(g->iw + g->pfree, g->lp, (size_t)cnt * sizeof(mbdcp_int));
    g->len[p] = cnt;
    g->elen[p] = 0;
    g->pfree += cnt;
    for (mbdcp_int a = 0; a < cnt; ++a) prune(g, g->lp[a], p, stamp);
    update_degrees(g, p, cnt, g->n - k - 1);
    return p;
}

/* perm (n) from the symmetric pattern (sptr, sind) copied into iw (iwlen >= sptr[n] + n ints);
 * scratch: 12 n ints. */
static void amd_order(mbdcp_int n, const mbdcp_int *sptr, const mbdcp_int *sind, mbdcp_int *iw, mbdcp_int iwlen,
                      mbdcp_int *scratch, mbdcp_int *perm)
{
    Amd g;
    g.n = n;
    g.iw = iw;
    g.iwlen = iwlen;
    mbdcp_int *s = scratch;
    g.pe = s;
    g.len = s + n;
    g.elen = s + 2 * n;
    g.deg = s + 3 * n;
    g.state = s + 4 * n;
    g.head = s + 5 * n;
    g.next = s + 6 * n;
    g.last = s + 7 * n;
    g.w = s + 8 * n;
    g.mark = s + 9 * n;
    g.lp = s + 10 * n;
    g.buf = s + 11 * n;
    memcpy(iw, sind, (size_t)sptr[n] * sizeof(mbdcp_int));
    g.pfree = sptr[n];
    g.wflg = 1;
    g.mindeg = n;
    for (mbdcp_int i = 0; i < n; ++i) {
        g.pe[i] = sptr[i];
        g.len[i] = sptr[i + 1] - sptr[i];
        g.elen[i] = 0;
        g.deg[i] = g.len[i];
        g.state[i] = VARIABLE;
        g.head[i] = -1;
        g.w[i] = 0;
        g.mark[i] = 0;
    }
    for (mbdcp_int i = n - 1; i >= 0; --i) deg_insert(&g, i);
    for (mbdcp_int k = 0; k < n; ++k) perm[k] = eliminate(&g, k);
}

/* ---- symbolic factorisation ---------------------------------------------------------------------- */

/* Elimination tree and column counts of L from the lower pattern (lptr, lind) in the new numbering
 * (Liu 1990's row-subtree walk): cnt[j] = blocks of column j below the diagonal. */
static void etree_counts(mbdcp_int n, const mbdcp_int *lptr, const mbdcp_int *lind, mbdcp_int *parent,
                         mbdcp_int *flag, mbdcp_int *cnt)
{
    for (mbdcp_int i = 0; i < n; ++i) {
        parent[i] = -1;
        flag[i] = i;
        cnt[i] = 0;
        for (mbdcp_int k = lptr[i]; k < lptr[i + 1]; ++k)
            for (mbdcp_int j = lind[k]; flag[j] != i; j = parent[j]) {
                if (parent[j] < 0) parent[j] = i;
                ++cnt[j];
                flag[j] = i;
            }
    }
}

size_t mbdcp_sldl_analyze_workspace_size(mbdcp_int n, mbdcp_int nnz)
{
    if (n < 0 || nnz < 0) return 0;
    /* sptr, sind, iw (sind's size + n), 12 n scratch, lptr, lind */
    const size_t N = (size_t)n, Z = 2 * (size_t)nnz;
    return (2 * (N + 1) + 2 * Z + (Z + N) + 12 * N + 8) * sizeof(mbdcp_int);
}

/* The checks shared by mbdcp_sldl_analyze and mbdcp_sldl_count. */
static MbdcpReturn analyze_args(mbdcp_int n, const mbdcp_int *ptr, const mbdcp_int *ind, const mbdcp_int *perm,
                                const mbdcp_int *nnz_l, const void *work, size_t work_bytes)
{
    MbdcpReturn rc = check_pattern(n, ptr, ind);
    if (rc != MBDCP_OK) return rc;
    if (!perm || !nnz_l || !work) return MBDCP_ERR_NULL;
    if (work_bytes < mbdcp_sldl_analyze_workspace_size(n, ptr[n])) return MBDCP_ERR_WORKSPACE;
    return MBDCP_OK;
}

MbdcpReturn mbdcp_sldl_analyze(mbdcp_int n, const mbdcp_int *ptr, const mbdcp_int *ind, mbdcp_int *perm,
                               mbdcp_int *nnz_l, mbdcp_float *flops, void *work, size_t work_bytes)
{
    MbdcpReturn rc = analyze_args(n, ptr, ind, perm, nnz_l, work, work_bytes);
    if (rc != MBDCP_OK) return rc;
    const mbdcp_int Z = 2 * ptr[n];
    mbdcp_int *sptr = (mbdcp_int *)work, *sind = sptr + n + 1, *iw = sind + Z, *scratch = iw + Z + n;
    symmetrise(n, ptr, ind, NULL, 0, sptr, sind, scratch);
    amd_order(n, sptr, sind, iw, Z + n, scratch, perm);
    return mbdcp_sldl_count(n, ptr, ind, perm, nnz_l, flops, work, work_bytes);
}

MbdcpReturn mbdcp_sldl_count(mbdcp_int n, const mbdcp_int *ptr, const mbdcp_int *ind, const mbdcp_int *perm,
                             mbdcp_int *nnz_l, mbdcp_float *flops, void *work, size_t work_bytes)
{
    MbdcpReturn rc = analyze_args(n, ptr, ind, perm, nnz_l, work, work_bytes);
    if (rc != MBDCP_OK) return rc;
    const mbdcp_int Z = 2 * ptr[n];
    mbdcp_int *scratch = (mbdcp_int *)work + (n + 1) + Z + (Z + n);
    mbdcp_int *lptr = scratch + 12 * n, *lind = lptr + n + 1;
    mbdcp_int *pos = scratch, *parent = scratch + n, *flag = scratch + 2 * n, *cnt = scratch + 3 * n;
    for (mbdcp_int k = 0; k < n; ++k) pos[k] = -1;
    for (mbdcp_int k = 0; k < n; ++k) {
        if (perm[k] < 0 || perm[k] >= n || pos[perm[k]] >= 0) return MBDCP_ERR_DATA;
        pos[perm[k]] = k;
    }
    symmetrise(n, ptr, ind, pos, 1, lptr, lind, flag);
    etree_counts(n, lptr, lind, parent, flag, cnt);
    mbdcp_int total = 0;
    mbdcp_float f = 0.0;
    for (mbdcp_int j = 0; j < n; ++j) {
        total += cnt[j];
        f += (mbdcp_float)cnt[j] * (cnt[j] + 1);
    }
    *nnz_l = total;
    if (flops) *flops = f;
    return MBDCP_OK;
}

/* ---- the handle ---------------------------------------------------------------------------------- */

size_t mbdcp_sldl_workspace_size(mbdcp_int n, mbdcp_int bs, int symmetric, mbdcp_int nnz_a, mbdcp_int nnz_l)
{
    if (n < 0 || bs < 1 || bs > MBDCP_SLDL_MAX_BS || nnz_a < 0 || nnz_l < 0) return 0;
    const size_t N = (size_t)n, B = (size_t)bs * (size_t)bs, L = (size_t)nnz_l, A = (size_t)nnz_a;
    const size_t floats = L * B * (symmetric ? 1 : 2) + N * B + (N + 1) * B + N * (size_t)bs + N;
    /* perm, iperm, Lp, Li, amap, amap_upper, parent, flag, next slot, lower pattern */
    const size_t ints = 2 * N + (N + 1) + L + 2 * A + 3 * N + (N + 1) + 2 * A;
    return align8(floats * sizeof(mbdcp_float)) + ints * sizeof(mbdcp_int) + 8;
}

typedef struct {
    mbdcp_int *parent, *flag, *next, *lptr, *lind;
    mbdcp_float *dscale;
} InitScratch;

/* L's pattern: the row-subtree walk again, each row appended to the columns it reaches (rows come in
 * increasing order, so each column's list is sorted). */
static MbdcpReturn fill_pattern(MbdcpSldl *f, const InitScratch *s, mbdcp_int nnz_l)
{
    const mbdcp_int n = f->n;
    etree_counts(n, s->lptr, s->lind, s->parent, s->flag, s->next);
    f->Lp[0] = 0;
    f->max_col = 0;
    for (mbdcp_int j = 0; j < n; ++j) {
        f->Lp[j + 1] = f->Lp[j] + s->next[j];
        if (s->next[j] > f->max_col) f->max_col = s->next[j];
    }
    if (f->Lp[n] != nnz_l) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int j = 0; j < n; ++j) {
        s->next[j] = f->Lp[j];
        s->flag[j] = -1;
    }
    for (mbdcp_int i = 0; i < n; ++i) {
        s->flag[i] = i;
        for (mbdcp_int k = s->lptr[i]; k < s->lptr[i + 1]; ++k)
            for (mbdcp_int j = s->lind[k]; s->flag[j] != i; j = s->parent[j]) {
                f->Li[s->next[j]++] = i;
                s->flag[j] = i;
            }
    }
    f->tail = n;
    while (f->symmetric && f->tail > 0 && f->Lp[f->tail] - f->Lp[f->tail - 1] == n - f->tail) --f->tail;
    if (n - f->tail < TAIL_MIN) f->tail = n;
    mbdcp_float fl = 0.0;
    const mbdcp_float b3 = (mbdcp_float)f->bs * f->bs * f->bs;
    for (mbdcp_int j = 0; j < n; ++j) {
        const mbdcp_float c = (mbdcp_float)(f->Lp[j + 1] - f->Lp[j]);
        fl += b3 * (c * (c + 1) * (f->symmetric ? 0.5 : 1.0) + c + 1);
    }
    f->flops = fl;
    return MBDCP_OK;
}

/* The slot of block (i, j), i > j (new numbering), in L's column j; -1 if absent. */
static mbdcp_int find_slot(const MbdcpSldl *f, mbdcp_int i, mbdcp_int j)
{
    mbdcp_int lo = f->Lp[j], hi = f->Lp[j + 1] - 1;
    while (lo <= hi) {
        const mbdcp_int mid = lo + (hi - lo) / 2;
        if (f->Li[mid] == i) return mid;
        if (f->Li[mid] < i) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* Where each block of A goes. */
static MbdcpReturn map_blocks(MbdcpSldl *f, const mbdcp_int *ptr, const mbdcp_int *ind)
{
    for (mbdcp_int a = 0; a < f->n; ++a)
        for (mbdcp_int k = ptr[a]; k < ptr[a + 1]; ++k) {
            const mbdcp_int i = f->iperm[a], j = f->iperm[ind[k]];
            if (f->symmetric && a < ind[k]) {
                f->amap[k] = 0;
                f->amap_upper[k] = SKIP;
            } else if (i == j) {
                f->amap[k] = -1 - i;
                f->amap_upper[k] = TO_L;
            } else {
                const mbdcp_int s = i > j ? find_slot(f, i, j) : find_slot(f, j, i);
                if (s < 0) return MBDCP_ERR_DIMENSION;
                f->amap[k] = s;
                f->amap_upper[k] = i > j ? TO_L : (f->symmetric ? TO_LT : TO_U);
            }
        }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_sldl_init(MbdcpSldl *f, mbdcp_int n, mbdcp_int bs, int symmetric, const mbdcp_int *ptr,
                            const mbdcp_int *ind, const mbdcp_int *perm, mbdcp_int nnz_l, void *work,
                            size_t work_bytes)
{
    if (!f || !perm || !work) return MBDCP_ERR_NULL;
    MbdcpReturn rc = check_pattern(n, ptr, ind);
    if (rc != MBDCP_OK) return rc;
    if (bs < 1 || bs > MBDCP_SLDL_MAX_BS || nnz_l < 0) return MBDCP_ERR_DIMENSION;
    const mbdcp_int nnz_a = ptr[n];
    if (work_bytes < mbdcp_sldl_workspace_size(n, bs, symmetric, nnz_a, nnz_l)) return MBDCP_ERR_WORKSPACE;
    const size_t B = (size_t)bs * (size_t)bs;
    memset(f, 0, sizeof *f);
    f->n = n;
    f->bs = bs;
    f->symmetric = symmetric ? 1 : 0;
    f->nnz_a = nnz_a;
    f->nnz_l = nnz_l;
    mbdcp_float *fl = (mbdcp_float *)work;
    f->Lx = fl;
    f->Ux = symmetric ? NULL : f->Lx + (size_t)nnz_l * B;
    f->Dinv = (symmetric ? f->Lx : f->Ux) + (size_t)nnz_l * B;
    f->tmp = f->Dinv + (size_t)n * B;
    InitScratch s;
    s.dscale = f->tmp + (size_t)(n + 1) * B + (size_t)n * bs;
    const size_t floats = (size_t)(s.dscale + n - fl);
    mbdcp_int *in = (mbdcp_int *)((char *)work + align8(floats * sizeof(mbdcp_float)));
    f->perm = in;
    f->iperm = in + n;
    f->Lp = f->iperm + n;
    f->Li = f->Lp + n + 1;
    f->amap = f->Li + nnz_l;
    f->amap_upper = f->amap + nnz_a;
    s.parent = f->amap_upper + nnz_a;
    s.flag = s.parent + n;
    s.next = s.flag + n;
    s.lptr = s.next + n;
    s.lind = s.lptr + n + 1;
    for (mbdcp_int k = 0; k < n; ++k) f->iperm[k] = -1;
    for (mbdcp_int k = 0; k < n; ++k) {
        if (perm[k] < 0 || perm[k] >= n || f->iperm[perm[k]] >= 0) return MBDCP_ERR_DIMENSION;
        f->perm[k] = perm[k];
        f->iperm[perm[k]] = k;
    }
    symmetrise(n, ptr, ind, f->iperm, 1, s.lptr, s.lind, s.flag);
    if ((rc = fill_pattern(f, &s, nnz_l)) != MBDCP_OK) return rc;
    return map_blocks(f, ptr, ind);
}

/* ---- numeric factorisation ----------------------------------------------------------------------- */

/* C -= A op(B) for 3 x 3 blocks, op(B)_kj = B[k sk + j sj] (B with sk = 3, sj = 1; B^T with 1, 3): the
 * interior-point method's blocks, unrolled by the compiler, each sum in the order of k. */
static inline void gemm3_sub(const mbdcp_float *A, const mbdcp_float *B, int sk, int sj, mbdcp_float *C)
{
    for (int i = 0; i < 3; ++i) {
        const mbdcp_float a0 = A[3 * i], a1 = A[3 * i + 1], a2 = A[3 * i + 2];
        for (int j = 0; j < 3; ++j) C[3 * i + j] -= a0 * B[j * sj] + a1 * B[sk + j * sj] + a2 * B[2 * sk + j * sj];
    }
}

/* C -= A B (bs x bs, row-major). */
static void gemm_sub(mbdcp_int bs, const mbdcp_float *A, const mbdcp_float *B, mbdcp_float *C)
{
    if (bs == 3) {
        gemm3_sub(A, B, 3, 1, C);
        return;
    }
    for (mbdcp_int i = 0; i < bs; ++i)
        for (mbdcp_int k = 0; k < bs; ++k) {
            const mbdcp_float a = A[i * bs + k];
            for (mbdcp_int j = 0; j < bs; ++j) C[i * bs + j] -= a * B[k * bs + j];
        }
}

/* C -= A B^T. */
static void gemm_sub_t(mbdcp_int bs, const mbdcp_float *A, const mbdcp_float *B, mbdcp_float *C)
{
    if (bs == 3) {
        gemm3_sub(A, B, 1, 3, C);
        return;
    }
    for (mbdcp_int i = 0; i < bs; ++i)
        for (mbdcp_int j = 0; j < bs; ++j) {
            mbdcp_float s = 0.0;
            for (mbdcp_int k = 0; k < bs; ++k) s += A[i * bs + k] * B[j * bs + k];
            C[i * bs + j] -= s;
        }
}

/* X = A B (X distinct from A and B). */
static void gemm(mbdcp_int bs, const mbdcp_float *A, const mbdcp_float *B, mbdcp_float *X)
{
    for (mbdcp_int i = 0; i < bs * bs; ++i) X[i] = 0.0;
    gemm_sub(bs, A, B, X);
    for (mbdcp_int i = 0; i < bs * bs; ++i) X[i] = -X[i];
}

/* Dinv = D^-1 by elimination with partial pivoting; a pivot at or below tol is replaced by +-tol and
 * counted. Returns the count, or -1 for a non-finite pivot. */
static int invert_block(mbdcp_int bs, const mbdcp_float *D, mbdcp_float tol, mbdcp_float *Dinv)
{
    mbdcp_float M[MBDCP_SLDL_MAX_BS][2 * MBDCP_SLDL_MAX_BS];
    int perturbed = 0;
    for (mbdcp_int i = 0; i < bs; ++i)
        for (mbdcp_int j = 0; j < bs; ++j) {
            M[i][j] = D[i * bs + j];
            M[i][bs + j] = i == j ? 1.0 : 0.0;
        }
    for (mbdcp_int c = 0; c < bs; ++c) {
        mbdcp_int piv = c;
        for (mbdcp_int i = c + 1; i < bs; ++i)
            if (fabs(M[i][c]) > fabs(M[piv][c])) piv = i;
        if (piv != c)
            for (mbdcp_int j = 0; j < 2 * bs; ++j) {
                const mbdcp_float t = M[c][j];
                M[c][j] = M[piv][j];
                M[piv][j] = t;
            }
        if (!isfinite(M[c][c])) return -1;
        if (fabs(M[c][c]) <= tol) {
            M[c][c] = M[c][c] < 0.0 ? -tol : tol;
            ++perturbed;
        }
        const mbdcp_float inv = 1.0 / M[c][c];
        for (mbdcp_int j = 0; j < 2 * bs; ++j) M[c][j] *= inv;
        for (mbdcp_int i = 0; i < bs; ++i)
            if (i != c && M[i][c] != 0.0) {
                const mbdcp_float a = M[i][c];
                for (mbdcp_int j = 0; j < 2 * bs; ++j) M[i][j] -= a * M[c][j];
            }
    }
    for (mbdcp_int i = 0; i < bs; ++i)
        for (mbdcp_int j = 0; j < bs; ++j) Dinv[i * bs + j] = M[i][bs + j];
    return perturbed;
}

/* A's blocks into L, U and D (D first in Dinv's storage); dscale[k]: largest entry of A's diagonal
 * block k; returns the largest entry of A. */
static mbdcp_float scatter(MbdcpSldl *f, const mbdcp_float *val, mbdcp_float *dscale)
{
    const mbdcp_int bs = f->bs, B = bs * bs;
    memset(f->Lx, 0, (size_t)f->nnz_l * B * sizeof(mbdcp_float));
    if (f->Ux) memset(f->Ux, 0, (size_t)f->nnz_l * B * sizeof(mbdcp_float));
    memset(f->Dinv, 0, (size_t)f->n * B * sizeof(mbdcp_float));
    mbdcp_float big = 0.0;
    for (mbdcp_int k = 0; k < f->nnz_a; ++k) {
        const mbdcp_float *v = val + (size_t)k * B;
        const mbdcp_int how = f->amap_upper[k], s = f->amap[k];
        if (how == SKIP) continue;
        for (mbdcp_int e = 0; e < B; ++e) big = fmax(big, fabs(v[e]));
        if (s < 0) {
            mbdcp_float *d = f->Dinv + (size_t)(-1 - s) * B;
            for (mbdcp_int i = 0; i < bs; ++i)
                for (mbdcp_int j = 0; j < bs; ++j)
                    d[i * bs + j] += f->symmetric ? v[i >= j ? i * bs + j : j * bs + i] : v[i * bs + j];
        } else if (how == TO_LT) {
            mbdcp_float *d = f->Lx + (size_t)s * B;
            for (mbdcp_int i = 0; i < bs; ++i)
                for (mbdcp_int j = 0; j < bs; ++j) d[i * bs + j] += v[j * bs + i];
        } else {
            mbdcp_float *d = (how == TO_U ? f->Ux : f->Lx) + (size_t)s * B;
            for (mbdcp_int e = 0; e < B; ++e) d[e] += v[e];
        }
    }
    for (mbdcp_int k = 0; k < f->n; ++k) {
        mbdcp_float m = 0.0;
        for (mbdcp_int e = 0; e < B; ++e) m = fmax(m, fabs(f->Dinv[(size_t)k * B + e]));
        dscale[k] = m;
    }
    return big;
}

/* The Schur complement update of column k's blocks onto the columns they reach (right-looking):
 * target (c_y, c_x), y > x, sits in column c_x's slot found by a merge walk. Lk: L's blocks of
 * column k (already times D_k^-1); Rk: the blocks multiplied on the right (U's row k, or column k
 * before scaling, transposed, for the symmetric case). */
static void schur_update(MbdcpSldl *f, mbdcp_int k, const mbdcp_float *Rk)
{
    const mbdcp_int bs = f->bs, B = bs * bs, p0 = f->Lp[k], cnt = f->Lp[k + 1] - p0;
    for (mbdcp_int x = 0; x < cnt; ++x) {
        const mbdcp_int c = f->Li[p0 + x];
        const mbdcp_float *Lx_k = f->Lx + (size_t)(p0 + x) * B, *Rx = Rk + (size_t)x * B;
        mbdcp_float *D = f->Dinv + (size_t)c * B;
        if (f->symmetric) gemm_sub_t(bs, Lx_k, Rx, D);
        else gemm_sub(bs, Lx_k, Rx, D);
        mbdcp_int s = f->Lp[c];
        for (mbdcp_int y = x + 1; y < cnt; ++y) {
            const mbdcp_int row = f->Li[p0 + y];
            while (f->Li[s] != row) ++s;
            const mbdcp_float *Ly = f->Lx + (size_t)(p0 + y) * B;
            if (f->symmetric) {
                gemm_sub_t(bs, Ly, Rx, f->Lx + (size_t)s * B);
            } else {
                gemm_sub(bs, Ly, Rx, f->Lx + (size_t)s * B);
                gemm_sub(bs, Lx_k, Rk + (size_t)y * B, f->Ux + (size_t)s * B);
            }
        }
    }
}

/* D_k^-1 in place of D_k (Dinv's block k), its pivots below pivot_tol times the block's scale
 * replaced (counted in f->perturbed); 0 or MBDCP_ERR_NONFINITE. */
static MbdcpReturn pivot(MbdcpSldl *f, mbdcp_int k, const mbdcp_float *dscale, mbdcp_float big, mbdcp_float pivot_tol)
{
    const mbdcp_int B = f->bs * f->bs;
    mbdcp_float *D = f->Dinv + (size_t)k * B, m = 0.0, Dk[MBDCP_SLDL_MAX_BS * MBDCP_SLDL_MAX_BS];
    for (mbdcp_int e = 0; e < B; ++e) m = fmax(m, fabs(D[e]));
    mbdcp_float scale = fmax(m, dscale[k]);
    if (!(scale > 0.0)) scale = big > 0.0 ? big : 1.0;
    memcpy(Dk, D, (size_t)B * sizeof(mbdcp_float));
    const int pert = invert_block(f->bs, Dk, pivot_tol * scale, D);
    if (pert < 0) return MBDCP_ERR_NONFINITE;
    f->perturbed += pert;
    return MBDCP_OK;
}

/* Block (i, j), i >= j, of the dense tail: D_j's block when i = j, else L's slot. */
static mbdcp_float *tail_block(const MbdcpSldl *f, mbdcp_int i, mbdcp_int j)
{
    const size_t B = (size_t)f->bs * f->bs;
    return i == j ? f->Dinv + (size_t)j * B : f->Lx + (size_t)(f->Lp[j] + i - j - 1) * B;
}

/* Block row i of tail column j -= sum over the panel's columns c of U_ic W_c (bs = 3), U_ic at
 * U[c] + 9 i (the panel's blocks, not yet scaled by D_c^-1; W_c = D_c^-1 U_jc^T, nw of them in W). */
static void tail_row3(const mbdcp_float *const *U, mbdcp_int nw, mbdcp_int i, const mbdcp_float *W, mbdcp_float *T)
{
    mbdcp_float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0, s8 = 0.0;
    for (mbdcp_int c = 0; c < nw; ++c) {
        const mbdcp_float *u = U[c] + 9 * (size_t)i, *w = W + 9 * (size_t)c;
        s0 += u[0] * w[0] + u[1] * w[3] + u[2] * w[6];
        s1 += u[0] * w[1] + u[1] * w[4] + u[2] * w[7];
        s2 += u[0] * w[2] + u[1] * w[5] + u[2] * w[8];
        s3 += u[3] * w[0] + u[4] * w[3] + u[5] * w[6];
        s4 += u[3] * w[1] + u[4] * w[4] + u[5] * w[7];
        s5 += u[3] * w[2] + u[4] * w[5] + u[5] * w[8];
        s6 += u[6] * w[0] + u[7] * w[3] + u[8] * w[6];
        s7 += u[6] * w[1] + u[7] * w[4] + u[8] * w[7];
        s8 += u[6] * w[2] + u[7] * w[5] + u[8] * w[8];
    }
    T[0] -= s0;
    T[1] -= s1;
    T[2] -= s2;
    T[3] -= s3;
    T[4] -= s4;
    T[5] -= s5;
    T[6] -= s6;
    T[7] -= s7;
    T[8] -= s8;
}

/* Rows i >= j of tail column j (j after the panel's columns a .. a + nw - 1) -= sum over the
 * panel's columns c of U_ic W_c (U: the panel's blocks, not yet scaled by D_c^-1; W_c = D_c^-1
 * U_jc^T, nw of them in W). */
static void tail_update(const MbdcpSldl *f, mbdcp_int a, mbdcp_int nw, mbdcp_int j, const mbdcp_float *W)
{
    const mbdcp_int bs = f->bs, B = bs * bs;
    const mbdcp_float *U[TAIL_PANEL]; /* U[c] + B i: block (i, a + c), i > a + c */
    for (mbdcp_int c = 0; c < nw; ++c) U[c] = f->Lx + (size_t)(f->Lp[a + c] - (a + c) - 1) * B;
    mbdcp_float *T = f->Lx + (size_t)(f->Lp[j] - j - 1) * B; /* T + B i: block (i, j), i > j */
    for (mbdcp_int i = j; i < f->n; ++i) {
        mbdcp_float *Ti = i == j ? f->Dinv + (size_t)j * B : T + (size_t)i * B;
        if (bs == 3) {
            tail_row3(U, nw, i, W, Ti);
            continue;
        }
        for (mbdcp_int c = 0; c < nw; ++c) gemm_sub(bs, U[c] + (size_t)i * B, W + (size_t)c * B, Ti);
    }
}

/* W_c = D_c^-1 U_jc^T for the panel's columns a .. a + nw - 1 (into W). */
static void tail_weights(const MbdcpSldl *f, mbdcp_int a, mbdcp_int nw, mbdcp_int j, mbdcp_float *W)
{
    const mbdcp_int bs = f->bs, B = bs * bs;
    for (mbdcp_int c = 0; c < nw; ++c) {
        const mbdcp_float *U = tail_block(f, j, a + c), *Di = f->Dinv + (size_t)(a + c) * B;
        mbdcp_float *Wc = W + (size_t)c * B;
        for (mbdcp_int r = 0; r < bs; ++r)
            for (mbdcp_int q = 0; q < bs; ++q) {
                mbdcp_float s = 0.0;
                for (mbdcp_int e = 0; e < bs; ++e) s += Di[r * bs + e] * U[q * bs + e];
                Wc[r * bs + q] = s;
            }
    }
}

/* The dense tail (columns f->tail on, every update from the columns before it applied), panel by
 * panel: the panel's columns updated by its earlier columns and their pivots inverted, the columns
 * after it updated by the whole panel, then the panel's blocks scaled, L_ic = U_ic D_c^-1. */
static MbdcpReturn factor_tail(MbdcpSldl *f, const mbdcp_float *dscale, mbdcp_float big, mbdcp_float pivot_tol)
{
    const mbdcp_int n = f->n, B = f->bs * f->bs;
    mbdcp_float *W = f->tmp, Lc[MBDCP_SLDL_MAX_BS * MBDCP_SLDL_MAX_BS];
    for (mbdcp_int a = f->tail; a < n; a += TAIL_PANEL) {
        const mbdcp_int nw = n - a < TAIL_PANEL ? n - a : TAIL_PANEL;
        for (mbdcp_int c = 0; c < nw; ++c) {
            tail_weights(f, a, c, a + c, W);
            tail_update(f, a, c, a + c, W);
            const MbdcpReturn rc = pivot(f, a + c, dscale, big, pivot_tol);
            if (rc != MBDCP_OK) return rc;
        }
        for (mbdcp_int j = a + nw; j < n; ++j) {
            tail_weights(f, a, nw, j, W);
            tail_update(f, a, nw, j, W);
        }
        for (mbdcp_int c = a; c < a + nw; ++c)
            for (mbdcp_int i = c + 1; i < n; ++i) {
                mbdcp_float *L = tail_block(f, i, c);
                memcpy(Lc, L, (size_t)B * sizeof(mbdcp_float));
                gemm(f->bs, Lc, f->Dinv + (size_t)c * B, L);
            }
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_sldl_factor(MbdcpSldl *f, const mbdcp_float *val, mbdcp_float pivot_tol)
{
    if (!f || (f->nnz_a > 0 && !val)) return MBDCP_ERR_NULL;
    if (!(pivot_tol > 0.0) || !isfinite(pivot_tol)) return MBDCP_ERR_SETTING;
    const mbdcp_int n = f->n, bs = f->bs, B = bs * bs;
    mbdcp_float *dscale = f->tmp + (size_t)(n + 1) * B + (size_t)n * bs;
    const mbdcp_float big = scatter(f, val, dscale);
    if (!isfinite(big)) return MBDCP_ERR_NONFINITE;
    f->perturbed = 0;
    mbdcp_float *R = f->tmp, Dk[MBDCP_SLDL_MAX_BS * MBDCP_SLDL_MAX_BS];
    for (mbdcp_int k = 0; k < f->tail; ++k) {
        const MbdcpReturn rc = pivot(f, k, dscale, big, pivot_tol);
        if (rc != MBDCP_OK) return rc;
        const mbdcp_float *D = f->Dinv + (size_t)k * B;
        const mbdcp_int p0 = f->Lp[k], cnt = f->Lp[k + 1] - p0;
        for (mbdcp_int x = 0; x < cnt; ++x) {
            mbdcp_float *L = f->Lx + (size_t)(p0 + x) * B;
            if (f->symmetric) memcpy(R + (size_t)x * B, L, (size_t)B * sizeof(mbdcp_float));
            else memcpy(R + (size_t)x * B, f->Ux + (size_t)(p0 + x) * B, (size_t)B * sizeof(mbdcp_float));
            memcpy(Dk, L, (size_t)B * sizeof(mbdcp_float));
            gemm(bs, Dk, D, L);
        }
        schur_update(f, k, R);
    }
    return f->tail < n ? factor_tail(f, dscale, big, pivot_tol) : MBDCP_OK;
}

/* ---- solve ----------------------------------------------------------------------------------------- */

/* y -= A x (bs), or A^T x (trans). */
static void gemv_sub(mbdcp_int bs, const mbdcp_float *A, int trans, const mbdcp_float *x, mbdcp_float *y)
{
    for (mbdcp_int i = 0; i < bs; ++i) {
        mbdcp_float s = 0.0;
        for (mbdcp_int j = 0; j < bs; ++j) s += (trans ? A[j * bs + i] : A[i * bs + j]) * x[j];
        y[i] -= s;
    }
}

MbdcpReturn mbdcp_sldl_solve(const MbdcpSldl *f, mbdcp_float *x)
{
    if (!f || (f->n > 0 && !x)) return MBDCP_ERR_NULL;
    const mbdcp_int n = f->n, bs = f->bs, B = bs * bs;
    mbdcp_float *y = f->tmp + (size_t)(n + 1) * B, t[MBDCP_SLDL_MAX_BS];
    for (mbdcp_int k = 0; k < n; ++k) memcpy(y + (size_t)k * bs, x + (size_t)f->perm[k] * bs, (size_t)bs * sizeof(mbdcp_float));
    for (mbdcp_int k = 0; k < n; ++k) /* L z = b */
        for (mbdcp_int s = f->Lp[k]; s < f->Lp[k + 1]; ++s)
            gemv_sub(bs, f->Lx + (size_t)s * B, 0, y + (size_t)k * bs, y + (size_t)f->Li[s] * bs);
    for (mbdcp_int k = n - 1; k >= 0; --k) {
        mbdcp_float *yk = y + (size_t)k * bs;
        if (f->symmetric) { /* L^T x = D^-1 z */
            for (mbdcp_int i = 0; i < bs; ++i) t[i] = 0.0;
            gemv_sub(bs, f->Dinv + (size_t)k * B, 0, yk, t);
            for (mbdcp_int i = 0; i < bs; ++i) yk[i] = -t[i];
            for (mbdcp_int s = f->Lp[k]; s < f->Lp[k + 1]; ++s)
                gemv_sub(bs, f->Lx + (size_t)s * B, 1, y + (size_t)f->Li[s] * bs, yk);
        } else { /* (D U) x = z */
            for (mbdcp_int s = f->Lp[k]; s < f->Lp[k + 1]; ++s)
                gemv_sub(bs, f->Ux + (size_t)s * B, 0, y + (size_t)f->Li[s] * bs, yk);
            for (mbdcp_int i = 0; i < bs; ++i) t[i] = 0.0;
            gemv_sub(bs, f->Dinv + (size_t)k * B, 0, yk, t);
            for (mbdcp_int i = 0; i < bs; ++i) yk[i] = -t[i];
        }
    }
    for (mbdcp_int k = 0; k < n; ++k) memcpy(x + (size_t)f->perm[k] * bs, y + (size_t)k * bs, (size_t)bs * sizeof(mbdcp_float));
    return MBDCP_OK;
}
