"""Lemke's method in exact rational arithmetic: an independent oracle for tests.

Full tableau [I, -M, -e | q] over fractions.Fraction, the lexicographic
minimum-ratio rule on [q, B^-1], z0 leaving whenever it ties. Slow (n <= 40).
Returns (status, pivots, z, trace) with status "ok" or "ray" and variables
numbered as in the C core (w_i = i, z_i = n + i, z0 = 2n).
"""
from fractions import Fraction


def exact_lemke(M, q, max_pivots=10_000):
    n = len(q)
    z0 = 2 * n
    # rows: [B^-1 (n cols) | column data computed on demand]; keep full tableau for simplicity
    T = [[Fraction(0)] * (2 * n + 1) for _ in range(n)]
    for i in range(n):
        T[i][i] = Fraction(1)
        for j in range(n):
            T[i][n + j] = -Fraction(M[i][j])
        T[i][z0] = Fraction(-1)
    x = [Fraction(v) for v in q]
    Binv = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    basis = list(range(n))
    trace = []
    if min(x) >= 0:
        return "ok", 0, [Fraction(0)] * n, trace

    def do_pivot(r, col):
        d = [T[i][col] for i in range(n)]
        piv = d[r]
        T[r] = [t / piv for t in T[r]]
        Binv[r] = [b / piv for b in Binv[r]]
        x[r] = x[r] / piv
        for i in range(n):
            if i != r and d[i] != 0:
                f = d[i]
                T[i] = [a - f * b for a, b in zip(T[i], T[r])]
                Binv[i] = [a - f * b for a, b in zip(Binv[i], Binv[r])]
                x[i] = x[i] - f * x[r]

    # initial: lexicographically smallest (q_i, e_i) -> largest index among minimal q
    qmin = min(x)
    r = max(i for i in range(n) if x[i] == qmin)
    entering = z0
    pivots = 0
    while True:
        leaving = basis[r]
        trace.append((entering, leaving))
        do_pivot(r, entering)
        basis[r] = entering
        pivots += 1
        if leaving == z0:
            break
        if pivots >= max_pivots:
            return "max", pivots, None, trace
        entering = leaving + n if leaving < n else leaving - n
        d = [T[i][entering] for i in range(n)]
        rows = [i for i in range(n) if d[i] > 0]
        if not rows:
            return "ray", pivots, None, trace
        keys = {i: [x[i] / d[i]] + [b / d[i] for b in Binv[i]] for i in rows}
        theta = min(keys[i][0] for i in rows)
        tied = [i for i in rows if keys[i][0] == theta]
        zrow = [i for i in tied if basis[i] == z0]
        r = zrow[0] if zrow else min(tied, key=lambda i: keys[i])
    z = [Fraction(0)] * n
    for i, b in enumerate(basis):
        if n <= b < 2 * n:
            z[b - n] = x[i]
    return "ok", pivots, z, trace
