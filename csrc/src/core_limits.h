/* Limits that more than one solver of the core keeps (internal: not part of the public headers). */
#ifndef MBDCP_CORE_LIMITS_H
#define MBDCP_CORE_LIMITS_H

/* Beyond R_LIMIT times a solution's natural size no residual can be verified in double precision
 * (an iterate's rounding alone then exceeds any tolerance worth asking): the Coulomb solvers
 * (coulomb.c) and the CCP's interior-point method (ccp_ipm.c) stop there as diverged. */
#define R_LIMIT 1e14

#endif
