#!/usr/bin/python3
"""Independent check of recsys's `ease` against the EASE closed form.

Reads the files `recsys eval --models ease --dump DIR` writes (per fold:
train.csv, validation.csv, test.csv and ease.ranks.csv), and for every fold
computes EASE from scratch with numpy (Steck 2019, Eq. 8: P = (XᵀX + λI)⁻¹,
B = I − P·diag(1/diag P)), chooses λ by validation ADG over the same grid,
ranks the test items (among the items not in the user's training row, ties
by training popularity, then item id) and compares its test ADG with the
one of the ranks recsys wrote. Nothing here calls recsys code.

    apt-get install python3-numpy
    /usr/bin/python3 docs/ease_check.py DIR [--lambdas 10,30,100,300,1000,3000]
"""

import argparse
import csv
import math
import os
import sys

import numpy as np


def read_pairs(path):
    with open(path, newline="") as f:
        rows = csv.reader(f)
        next(rows)
        return [(u, i) for u, i, *_ in rows]


def by_user(pairs, uidx, iidx):
    out = {}
    for u, i in pairs:
        out.setdefault(uidx[u], []).append(iidx[i])
    return out


def ease_b(x, lam):
    g = x.T @ x + lam * np.eye(x.shape[1])
    p = np.linalg.inv(g)
    b = -p / np.diag(p)  # column j divided by P_jj
    np.fill_diagonal(b, 0.0)
    return b


def ranks_of(scores, train_row, relevant, pop, ids):
    """Rank (from 0) of each relevant item among the items not in train_row:
    score descending, then popularity descending, then id ascending."""
    s = scores.copy()
    s[train_row] = -np.inf
    order = np.lexsort((ids, -pop, -s))
    pos = np.empty(len(s), dtype=np.int64)
    pos[order] = np.arange(len(s))
    return pos[relevant]


def measures(b, x, held, train, pop, ids):
    adg, rec10, users = 0.0, 0.0, 0
    scores = x @ b
    for u, items in held.items():
        r = ranks_of(scores[u], train.get(u, []), items, pop, ids)
        adg += np.mean(1.0 / np.log2(r + 2.0))
        rec10 += np.mean(r < 10)
        users += 1
    return adg / users, rec10 / users


def adg_from_dump(path, test, uidx, iidx):
    """ADG over the test pairs of recsys's ranks file."""
    per_user = {}
    with open(path, newline="") as f:
        rows = csv.reader(f)
        next(rows)
        for u, i, r in rows:
            uu, ii = uidx[u], iidx[i]
            if ii in test.get(uu, ()):
                per_user.setdefault(uu, []).append(int(r))
    return np.mean([np.mean(1.0 / np.log2(np.array(r) + 2.0)) for r in per_user.values()])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--lambdas", default="10,30,100,300,1000,3000")
    a = ap.parse_args()
    lambdas = [float(v) for v in a.lambdas.split(",")]
    worst = 0.0
    folds = sorted(d for d in os.listdir(a.dump) if d.startswith("fold-"))
    for fold in folds:
        d = os.path.join(a.dump, fold)
        tr, va, te = (read_pairs(os.path.join(d, f + ".csv")) for f in ("train", "validation", "test"))
        users = sorted({u for u, _ in tr + va + te})
        items = sorted({i for _, i in tr + va + te}, key=lambda v: (len(v), v))
        uidx = {u: k for k, u in enumerate(users)}
        iidx = {i: k for k, i in enumerate(items)}
        x = np.zeros((len(users), len(items)))
        for u, i in tr:
            x[uidx[u], iidx[i]] = 1.0
        train = by_user(tr, uidx, iidx)
        val, test = by_user(va, uidx, iidx), by_user(te, uidx, iidx)
        test_sets = {u: set(v) for u, v in test.items()}
        pop = x.sum(axis=0)
        ids = np.arange(len(items))
        best = None
        for lam in lambdas:
            v_adg, _ = measures(ease_b(x, lam), x, val, train, pop, ids)
            if best is None or v_adg > best[1]:
                best = (lam, v_adg)
        lam = best[0]
        t_adg, t_rec = measures(ease_b(x, lam), x, test, train, pop, ids)
        ours = adg_from_dump(os.path.join(d, "ease.ranks.csv"), test_sets, uidx, iidx)
        worst = max(worst, abs(t_adg - ours))
        print(f"{fold}: {len(users)} users, {len(items)} items; numpy EASE λ={lam:g} "
              f"(validation ADG {best[1]:.4f}): test ADG {t_adg:.4f}, REC@10 {t_rec:.4f}; "
              f"recsys ease test ADG {ours:.4f}; |difference| {abs(t_adg - ours):.6f}")
    print(f"largest |difference| {worst:.6f} (target ≤ 0.002)")
    return 0 if worst <= 0.002 else 1


if __name__ == "__main__":
    sys.exit(main())
