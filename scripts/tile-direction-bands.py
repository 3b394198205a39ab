#!/usr/bin/env python3
"""How many direction chunks each GPU tile of the one-pass step needs, from
the psi snapshots of a result file: the census behind docs/bench/per-spot-slots.md,
"A tile's band of directions".

  python3 scripts/tile-direction-bands.py RESULT.h5

Snapshots /psi/step_N are [E][theta][z][x] float32; read one energy bin at a time.
Tile = 32 consecutive columns (x0 = 32*k) of one row z. Directions j = 0..nth-1 are
processed in chunks of 8 (chunk c = j // 8). Occupied = value > 1e-12.

Per snapshot:
 1. occupied tiles, their bin range [bmin, bmax]; today's visits = sum (bmax-bmin+1) * nchunks.
 2. per-tile direction band [jlo, jhi] (over all its bins), expanded by K in {0,2,4},
    aligned chunk count = hi//8 - lo//8 + 1; histogram weighted by bin-range length;
    sum len*chunks vs today's.
 3. same per (tile, bin): band of that bin alone, summed over the tile's bin range
    (empty (tile, bin) pairs count 0).
 4. fraction (weighted by bin-range length) of tiles whose K=2 band needs <= 3 / <= 4
    aligned chunks (also: band width <= 24 / <= 32 directions, i.e. unaligned chunks).
"""
import sys

import h5py
import numpy as np

THR = 1e-12
TW = 32          # tile width (columns)
CW = 8           # chunk width (directions)
KS = (0, 2, 4)


def bin_bands(a, ntx):
    """For one energy bin a[theta][z][x]: per tile (z, k) whether occupied and lowest/highest
    occupied direction."""
    nth, nz, nx = a.shape
    m = a > THR
    if nx < ntx * TW:
        m = np.concatenate([m, np.zeros((nth, nz, ntx * TW - nx), bool)], axis=2)
    occ = m.reshape(nth, nz, ntx, TW).any(axis=3)          # [j][z][k]
    has = occ.any(axis=0)                                   # [z][k]
    jlo = np.where(has, np.argmax(occ, axis=0), -1)
    jhi = np.where(has, nth - 1 - np.argmax(occ[::-1], axis=0), -1)
    return has, jlo, jhi, int(m.sum()), float(a.max())


def nchunks(lo, hi, K, nth):
    lo2 = np.maximum(0, lo - K)
    hi2 = np.minimum(nth - 1, hi + K)
    return hi2 // CW - lo2 // CW + 1, hi2 - lo2 + 1


def census(d):
    ne, nth, nz, nx = d.shape
    ntx = -(-nx // TW)
    nch_today = -(-nth // CW)
    has = np.zeros((ne, nz, ntx), bool)
    jlo = np.full((ne, nz, ntx), -1, np.int32)
    jhi = np.full((ne, nz, ntx), -1, np.int32)
    nocc = 0
    peak = 0.0
    for e in range(ne):
        a = d[e]
        h, lo, hi, c, mx = bin_bands(a, ntx)
        has[e], jlo[e], jhi[e] = h, lo, hi
        nocc += c
        peak = max(peak, mx)
    out = {"shape": d.shape, "ntx": ntx, "nch_today": nch_today, "nocc": nocc, "peak": peak}
    tile = has.any(axis=0)                                  # [z][k]
    bins_occ = np.where(has.any(axis=(1, 2)))[0]
    out["bins_occ"] = (int(bins_occ.min()), int(bins_occ.max()), len(bins_occ)) if len(bins_occ) else None
    zs, ks = np.where(tile)
    out["ntiles"] = len(zs)
    out["ntiles_total"] = nz * ntx
    if len(zs) == 0:
        return out
    hz = has[:, zs, ks]                                      # [e][t]
    bmin = np.argmax(hz, axis=0)
    bmax = ne - 1 - np.argmax(hz[::-1], axis=0)
    L = bmax - bmin + 1
    out["rows"] = (int(zs.min()), int(zs.max()))
    out["ks"] = sorted(set(int(k) for k in ks))
    out["L_sum"] = int(L.sum())
    out["L_stats"] = (int(L.min()), float(np.median(L)), float(L.mean()), int(L.max()))
    out["pairs_occ"] = int(hz.sum())
    today = int(L.sum()) * nch_today
    out["today"] = today
    lo_e = jlo[:, zs, ks]
    hi_e = jhi[:, zs, ks]
    tlo = np.where(hz, lo_e, nth).min(axis=0)
    thi = hi_e.max(axis=0)
    out["band_width0"] = (thi - tlo + 1)
    per_tile = {}
    per_bin = {}
    for K in KS:
        nc, w = nchunks(tlo, thi, K, nth)
        hist = {c: int(L[nc == c].sum()) for c in range(1, nch_today + 1)}
        hist_n = {c: int((nc == c).sum()) for c in range(1, nch_today + 1)}
        per_tile[K] = dict(hist=hist, hist_n=hist_n, cost=int((L * nc).sum()),
                           le3=float(L[nc <= 3].sum() / L.sum()), le4=float(L[nc <= 4].sum() / L.sum()),
                           w24=float(L[w <= 24].sum() / L.sum()), w32=float(L[w <= 32].sum() / L.sum()),
                           width=(int(w.min()), float(np.median(w)), float((w * L).sum() / L.sum()), int(w.max())))
        ncb, wb = nchunks(lo_e, hi_e, K, nth)
        ncb = np.where(hz, ncb, 0)
        inr = (np.arange(ne)[:, None] >= bmin) & (np.arange(ne)[:, None] <= bmax)   # in the tile's bin range
        hb = {c: int(((ncb == c) & inr).sum()) for c in range(0, nch_today + 1)}
        per_bin[K] = dict(cost=int(ncb.sum()), hist=hb,
                          width_mean=float(np.where(hz, wb, 0).sum() / hz.sum()))
    out["per_tile"] = per_tile
    out["per_bin"] = per_bin
    return out


def report(name, r, emit):
    ne, nth, nz, nx = r["shape"]
    emit(f"== {name}: psi {ne} bins x {nth} dirs x {nz} x {nx}; tiles {nz} rows x {r['ntx']} "
         f"(x0=32k); chunks today {r['nch_today']}")
    emit(f"  occupied values (>1e-12): {r['nocc']}  peak value {r['peak']:.3e}  "
         f"bins with any occupied value: {r['bins_occ']} (min, max, count)")
    if r["ntiles"] == 0:
        emit("  no occupied tile")
        return
    emit(f"  1. occupied tiles {r['ntiles']} of {r['ntiles_total']} (rows {r['rows'][0]}..{r['rows'][1]}, "
         f"tile columns k={r['ks']})")
    emit(f"     bin-range length per tile min/median/mean/max {r['L_stats'][0]}/{r['L_stats'][1]:.0f}/"
         f"{r['L_stats'][2]:.1f}/{r['L_stats'][3]}; sum {r['L_sum']} (tile,bin) pairs, "
         f"{r['pairs_occ']} of them occupied ({r['pairs_occ'] / r['L_sum']:.1%})")
    emit(f"     today's (tile, bin, chunk) visits = {r['L_sum']} x {r['nch_today']} = {r['today']}")
    emit("  2. per-tile band (all bins of the tile), histogram of aligned chunk count weighted by "
         "bin-range length [unweighted tile count]")
    for K in KS:
        p = r["per_tile"][K]
        hs = "  ".join(f"{c}:{p['hist'][c] / r['L_sum']:6.1%}[{p['hist_n'][c]}]" for c in p["hist"])
        emit(f"     K={K}: {hs}")
        emit(f"          visits {p['cost']} vs today {r['today']} = {p['cost'] / r['today']:.3f} "
             f"(mean chunks {p['cost'] / r['L_sum']:.2f}); band width dirs min/median/L-weighted mean/max "
             f"{p['width'][0]}/{p['width'][1]:.0f}/{p['width'][2]:.1f}/{p['width'][3]}")
    emit("  3. per-(tile, bin) band, summed over the tiles' bin ranges (empty pairs 0 chunks)")
    for K in KS:
        p = r["per_bin"][K]
        hs = "  ".join(f"{c}:{p['hist'][c]}" for c in p["hist"])
        emit(f"     K={K}: visits {p['cost']} vs today {r['today']} = {p['cost'] / r['today']:.3f} "
             f"(mean chunks per occupied pair {p['cost'] / r['pairs_occ']:.2f}, mean band width "
             f"{p['width_mean']:.1f}); in-range pairs by chunk count {hs}")
    p = r["per_tile"][2]
    emit(f"  4. K=2 per-tile band, L-weighted: <=3 aligned chunks {p['le3']:.1%}, <=4 aligned chunks "
         f"{p['le4']:.1%}  (width <=24 dirs {p['w24']:.1%}, <=32 dirs {p['w32']:.1%})")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    lines = []

    def emit(s):
        print(s, flush=True)
        lines.append(s)

    results = {}
    with h5py.File(sys.argv[1], "r") as f:
        for name in sorted(f["psi"].keys()):
            r = census(f["psi"][name])
            results[name] = r
            report(name, r, emit)
    emit("")
    emit("summary (visits in (tile, bin, chunk); ratio to today's = bin range x 6 chunks)")
    emit(f"{'snapshot':12s} {'tiles':>5s} {'sumL':>6s} {'today':>7s} | {'tile K0':>13s} {'tile K2':>13s} "
         f"{'tile K4':>13s} | {'bin K0':>13s} {'bin K2':>13s} {'bin K4':>13s} | {'K2<=3c':>6s} {'K2<=4c':>6s}")
    for name, r in results.items():
        if r["ntiles"] == 0:
            emit(f"{name:12s} no occupied tile")
            continue
        t = r["today"]
        pt = "".join(f" {r['per_tile'][K]['cost']:6d}({r['per_tile'][K]['cost'] / t:.2f})" for K in KS)
        pb = "".join(f" {r['per_bin'][K]['cost']:6d}({r['per_bin'][K]['cost'] / t:.2f})" for K in KS)
        emit(f"{name:12s} {r['ntiles']:5d} {r['L_sum']:6d} {t:7d} |{pt} |{pb} | "
             f"{r['per_tile'][2]['le3']:6.1%} {r['per_tile'][2]['le4']:6.1%}")


if __name__ == "__main__":
    main()
