/* Message tables for return codes and solver statuses. */
#include "mbdcp/mbdcp_types.h"

const char *mbdcp_return_message(MbdcpReturn code)
{
    static const char *const text[MBDCP_N_RETURN_CODES] = {
        "ok",
        "a required pointer is NULL",
        "a dimension is negative or inconsistent",
        "a setting is out of range",
        "matrix is not symmetric positive definite",
        "Jacobian does not have full column rank",
        "workspace is smaller than the size query",
        "input holds a NaN or infinite value",
        "input data out of range (a negative friction coefficient or bound, or a grouping matrix E without exactly one 1 per row in group order)",
    };
    if ((int)code < 0 || (int)code >= MBDCP_N_RETURN_CODES) return "unknown return code";
    return text[code];
}

const char *mbdcp_status_message(MbdcpStatus status)
{
    static const char *const text[MBDCP_N_STATUSES] = {
        "solved: the result satisfies the complementarity conditions",
        "ray termination: no blocking variable (the LCP is infeasible if its matrix is copositive-plus)",
        "iteration or pivot limit reached",
        "numerical error: singular pivot, breakdown or a result that failed verification",
        "interrupted by the caller",
    };
    if ((int)status < 0 || (int)status >= MBDCP_N_STATUSES) return "unknown status";
    return text[status];
}
