/* Messages of the return codes and solver statuses: one table, return codes first. */
#include "mbdcp/mbdcp_types.h"

#define STATUS_ENTRY(s) (MBDCP_N_RETURN_CODES + (s)) /* a status's entry in the table */

/* The message of entry first + i of the table, or unknown when i is not in [0, n). */
static const char *message(int first, int n, int i, const char *unknown)
{
    static const char *const text[MBDCP_N_RETURN_CODES + MBDCP_N_STATUSES] = {
        [MBDCP_OK] = "ok",
        [MBDCP_ERR_NULL] = "a required pointer is NULL",
        [MBDCP_ERR_DIMENSION] = "a dimension is negative or inconsistent",
        [MBDCP_ERR_SETTING] = "a setting is out of range",
        [MBDCP_ERR_NOT_POSDEF] = "matrix is not symmetric positive definite",
        [MBDCP_ERR_RANK_DEFICIENT] = "Jacobian does not have full column rank",
        [MBDCP_ERR_WORKSPACE] = "workspace is smaller than the size query",
        [MBDCP_ERR_NONFINITE] = "input holds a NaN or infinite value",
        /* one literal per entry: clang's -Wstring-concatenation (a missing comma) stays quiet */
        [MBDCP_ERR_DATA] =
            "input data out of range (a negative friction coefficient or bound, or E not one 1 per row in group order)",
        [STATUS_ENTRY(MBDCP_SOLVED)] = "solved: the result satisfies the complementarity conditions",
        [STATUS_ENTRY(MBDCP_RAY_TERMINATION)] =
            "ray termination: no blocking variable (the LCP is infeasible if its matrix is copositive-plus)",
        [STATUS_ENTRY(MBDCP_MAX_ITERATIONS)] = "iteration or pivot limit reached",
        [STATUS_ENTRY(MBDCP_NUMERICAL_ERROR)] = "numerical error: singular pivot, breakdown or a result that failed verification",
        [STATUS_ENTRY(MBDCP_INTERRUPTED)] = "interrupted by the caller",
    };
    return (i < 0 || i >= n) ? unknown : text[first + i];
}

const char *mbdcp_return_message(MbdcpReturn code)
{
    return message(0, MBDCP_N_RETURN_CODES, (int)code, "unknown return code");
}

const char *mbdcp_status_message(MbdcpStatus status)
{
    return message(STATUS_ENTRY(0), MBDCP_N_STATUSES, (int)status, "unknown status");
}
