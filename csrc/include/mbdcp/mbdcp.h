/* mbdcp.h - umbrella header of the mbdcp C core. */
#ifndef MBDCP_H
#define MBDCP_H

#include "mbdcp_types.h"
#include "dense.h"
#include "lemke.h"
#include "assemble.h"
#include "step.h"
#include "step_vjp.h"
#include "relax.h"
#include "relax_sparse.h"
#include "full_rank.h"
#include "cone.h"
#include "ccp.h"
#include "coulomb.h"
#include "batch.h"
#include "blocks.h"
#include "columns.h"
#include "spheres.h"
#include "directions.h"
#include "frame_contacts.h"
#include "sparse_ldl.h"

#endif /* MBDCP_H */
