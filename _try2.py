import numpy as np, scipy.sparse as sp, time
import mbdcp
from mbdcp.testing import granular_pile
z = np.load("tests/data/settled150_ccp.npz")
W = {k: sp.csc_matrix((z[f"{k}_data"], z[f"{k}_indices"], z[f"{k}_indptr"]), shape=z[f"{k}_shape"]) for k in ("Wn", "Wt")}
d = dict(M=z["M_blocks"], Wn=W["Wn"], Wt=W["Wt"], mu=z["mu"], v=z["v"], h=float(z["h"]), p_ext=z["p_ext"], psi_n=z["phi"])
r = mbdcp.ccp(**d, method="ipm", tol=1e-10, max_iter=100_000)
print(r.iterations, np.array2string(r.history[:40], precision=2))
for seed in range(3):
    d = granular_pile(12, 24, seed=seed)
    r = mbdcp.ccp(**d, method="ipm", tol=1e-9, max_iter=100_000)
    print(r.iterations, np.array2string(r.history[:30], precision=2))
