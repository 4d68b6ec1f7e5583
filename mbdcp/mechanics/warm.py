"""What a simulation carries from step to step: keys that follow each contact, and the last step's
answer (a Lemke basis, the impulses) mapped onto the next step's contacts."""
import numpy as np
import scipy.sparse as sp

__all__ = ["carried", "directions_per_contact", "contact_keys", "key_hash", "sorted_hashes", "match"]


def carried(last, name, keys, k, blocks):
    """The previous step's basis ``last[name]`` carried over to this step's contacts (``keys``, k
    friction directions each): a contact kept from the last step keeps its flags, a new one starts
    as not basic (separating). The LCP's variables come in blocks per contact: p_n, then beta (k),
    then (``blocks`` == 3) sigma or lam. None when there is nothing to carry."""
    flags = last.get(name)
    if flags is None or len(keys) == 0 or k is None or k != last["k"]:
        return None
    old_keys = last["keys"]
    if flags.shape[0] != len(old_keys) * ((blocks - 1) + k):
        return None
    idx = match(old_keys, keys)
    kept = idx >= 0
    n_old, n_new = len(old_keys), len(keys)
    out, at = [], 0
    for width in (1, k, 1)[:blocks]:
        old = flags[at:at + width * n_old].reshape(n_old, width)
        new = np.zeros((n_new, width), dtype=bool)
        new[kept] = old[idx[kept]]
        out.append(new.ravel())
        at += width * n_old
    return np.concatenate(out)


def directions_per_contact(E):
    """Friction directions per contact when E groups them in equal consecutive blocks (each row
    one 1, in the column of its block), else None."""
    m, n_c = E.shape
    if n_c == 0 or m % n_c:
        return None
    k = m // n_c
    owner = np.repeat(np.arange(n_c), k)
    if sp.issparse(E):  # simulate's sparse form
        E = sp.csr_matrix(E, copy=True)
        E.sum_duplicates()
        grouped = (np.all(np.diff(E.indptr) == 1) and np.array_equal(E.indices, owner) and np.all(E.data == 1.0))
    else:
        grouped = np.count_nonzero(E) == m and np.all(E[np.arange(m), owner] == 1.0)
    return k if grouped else None


def contact_keys(contacts):
    """One int64 row per contact that persists from step to step: the bodies and, for a wall, its
    normal in thousandths, then a rank (a box's corners on one wall share the rest: they are
    numbered in order)."""
    n, d = contacts.normal.shape
    K = np.zeros((n, d + 3), dtype=np.int64)
    K[:, 0], K[:, 1] = contacts.a, contacts.b
    wall = contacts.b < 0
    K[wall, 2:2 + d] = np.rint(1000.0 * contacts.normal[wall])
    group = key_hash(K[:, :-1])
    order = np.argsort(group, kind="stable")
    sorted_ = group[order]
    new_group = np.r_[True, sorted_[1:] != sorted_[:-1]]
    if new_group.all():  # every contact its own group (round bodies): all ranks 0
        return K
    first = np.flatnonzero(new_group)
    K[order, -1] = np.arange(n) - np.repeat(first, np.diff(np.r_[first, n]))
    return K


_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB], dtype=np.uint64)


def key_hash(K):
    """A 64-bit hash of each row of the int64 array K (at most 7 columns): the sum of its columns
    times odd constants, modulo 2^64 (column by column: faster than a sum along short rows)."""
    Ku = K.view(np.uint64)
    with np.errstate(over="ignore"):
        h = Ku[:, 0] * _MIX[0]
        for j in range(1, K.shape[1]):
            h += Ku[:, j] * _MIX[j]
        return h ^ (h >> np.uint64(31))


def sorted_hashes(keys, hashes=None):
    """(the rows' hashes sorted, the order sorting them): what :func:`match` looks rows up in."""
    hashes = key_hash(keys) if hashes is None else hashes
    order = np.argsort(hashes)
    return hashes[order], order


def match(old, new, old_sorted=None, new_hashes=None):
    """For each row of ``new`` (contact keys), the index of the same row in ``old``, or -1;
    ``old_sorted``: :func:`sorted_hashes` of old and ``new_hashes``: the hashes of new, when known."""
    if len(old) == 0 or len(new) == 0 or old.shape[1] != new.shape[1]:
        return np.full(len(new), -1)
    h_sorted, order = sorted_hashes(old) if old_sorted is None else old_sorted
    at = order[np.searchsorted(h_sorted, key_hash(new) if new_hashes is None else new_hashes).clip(max=len(old) - 1)]
    return np.where(np.all(old[at] == new, axis=1), at, -1)  # equal rows, not only equal hashes
