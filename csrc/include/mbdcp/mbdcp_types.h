/*
 * mbdcp_types.h - scalar types, return codes and solver statuses shared by
 * every solver family of the mbdcp C core.
 *
 * Conventions used by all headers:
 *   - matrices are dense, row-major, contiguous (element (i, j) of an r x c
 *     matrix A is A[i * c + j]);
 *   - inputs are const and never modified; outputs are caller-provided;
 *   - scratch memory is one caller-provided block whose size in bytes is
 *     returned by the solver's ..._workspace_size() query;
 *   - every call returns an MbdcpReturn; a solver's outcome (solved, ray,
 *     limit, breakdown) is an MbdcpStatus in its info struct, never mixed
 *     with the return code.
 */
#ifndef MBDCP_TYPES_H
#define MBDCP_TYPES_H

#include <stddef.h>

typedef double mbdcp_float;
typedef int mbdcp_int;

/* Return code of every call: was the call well formed? */
typedef enum {
    MBDCP_OK = 0,
    MBDCP_ERR_NULL = 1,           /* a required pointer is NULL */
    MBDCP_ERR_DIMENSION = 2,      /* a dimension is negative or inconsistent */
    MBDCP_ERR_SETTING = 3,        /* a setting is out of range */
    MBDCP_ERR_NOT_POSDEF = 4,     /* a matrix required SPD is not */
    MBDCP_ERR_RANK_DEFICIENT = 5, /* a Jacobian required full column rank is not */
    MBDCP_ERR_WORKSPACE = 6,      /* workspace smaller than the size query */
    MBDCP_ERR_NONFINITE = 7,      /* an input holds NaN or infinity */
    MBDCP_ERR_DATA = 8            /* input data out of range: mu < 0, a grouping matrix E of the wrong form, ... */
} MbdcpReturn;

/* Outcome of a solver that ran (stored in its info struct). */
typedef enum {
    MBDCP_SOLVED = 0,          /* result verified to satisfy the definition */
    MBDCP_RAY_TERMINATION = 1, /* Lemke: no blocking variable; coulomb.h: no solution (a certificate) or
                                  diverging iterates */
    MBDCP_MAX_ITERATIONS = 2,  /* pivot or iteration limit reached */
    MBDCP_NUMERICAL_ERROR = 3, /* singular pivot, breakdown, failed verification */
    MBDCP_INTERRUPTED = 4      /* the caller's monitor asked the solver to stop */
} MbdcpStatus;

#define MBDCP_N_RETURN_CODES 9
#define MBDCP_N_STATUSES 5

/*
 * Optional progress callback of the iterative and pivoting solvers. Lemke calls it after every
 * pivot with (pivots so far, entering, leaving, NAN); the CCP solvers and the fixed-point
 * algorithms after every iteration with (iterations so far, -1, -1, residual or change). A
 * nonzero return stops the solver with status MBDCP_INTERRUPTED. Callers use it for pivot
 * traces and residual histories of any length and to let a user interrupt a long solve.
 */
typedef int (*mbdcp_monitor_fn)(void *ctx, mbdcp_int iteration, mbdcp_int entering, mbdcp_int leaving,
                                double value);

typedef struct {
    mbdcp_monitor_fn fn; /* NULL: no monitoring */
    void *ctx;
} MbdcpMonitor;

/* Call a monitor; nonzero means stop. */
static inline int mbdcp_monitor_call(const MbdcpMonitor *m, mbdcp_int it, mbdcp_int a, mbdcp_int b, double value)
{
    return m && m->fn ? m->fn(m->ctx, it, a, b, value) : 0;
}

/* Static, human-readable text for a code; never NULL. */
const char *mbdcp_return_message(MbdcpReturn code);
const char *mbdcp_status_message(MbdcpStatus status);

#endif /* MBDCP_TYPES_H */
