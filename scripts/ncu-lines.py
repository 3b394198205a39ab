#!/usr/bin/env python3
"""Where a kernel's time goes, by source line: the warp-state samples and the
executed instructions of one profiled launch, summed over the instructions of
each line (the tables behind docs/bench/media.md, "Each lane's medium from the
step's records", and docs/bench/per-spot-slots.md).

Profile one launch with source counters from a -lineinfo build (the Makefile's
default), then read the report where Nsight Compute is installed:

  ncu --kernel-name regex:fused_kernel --launch-skip N --launch-count 1 \\
      --set full --import-source yes -o step BINARY --bench production ...
  python3 scripts/ncu-lines.py step.ncu-rep [--top 40] [--action K]

The script imports ncu_report, which ships with Nsight Compute
(<install>/extras/python); it looks for it under /usr/local/cuda*/ and
/opt/nvidia/nsight-compute/, or NCU_PYTHON names the folder.
"""
import argparse
import collections
import glob
import os
import sys

STALL = "smsp__pcsamp_warps_issue_stalled_"


def import_ncu_report():
    dirs = [os.environ.get("NCU_PYTHON", "")]
    dirs += glob.glob("/usr/local/cuda*/nsight-compute*/extras/python")
    dirs += glob.glob("/opt/nvidia/nsight-compute/*/extras/python")
    for d in dirs:
        if d and os.path.isdir(d):
            sys.path.insert(0, d)
    try:
        import ncu_report  # noqa: E402 (found on the paths above)
    except ImportError:
        sys.exit("ncu-lines: ncu_report not found; set NCU_PYTHON to Nsight Compute's extras/python")
    return ncu_report


def line_of(action, pc):
    """(file, line) of the instruction at pc, or ('?', 0) without line info."""
    si = action.source_info(pc)
    return (os.path.basename(si.file_name()), si.line()) if si else ("?", 0)


def per_line(action, metric_names):
    """Sums of the per-instruction metrics over each source line, and per
    metric (reason) within each line."""
    total = collections.Counter()
    parts = collections.defaultdict(collections.Counter)
    for name in metric_names:
        m = action.metric_by_name(name)
        if m is None or m.num_instances() == 0:
            continue
        pcs = m.correlation_ids()
        for i in range(m.num_instances()):
            v = m.as_uint64(i)
            if v:
                key = line_of(action, pcs.as_uint64(i))
                total[key] += v
                parts[key][name] += v
    return total, parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report")
    ap.add_argument("--top", type=int, default=40, help="lines to print (default 40)")
    ap.add_argument("--action", type=int, default=0, help="which profiled launch (default 0)")
    a = ap.parse_args()
    ncu_report = import_ncu_report()
    action = ncu_report.load_report(a.report).range_by_idx(0).action_by_idx(a.action)
    dur = action.metric_by_name("gpu__time_duration.sum")
    print("%s: %.3f ms" % (action.name(), dur.as_double() / 1e6 if dur else float("nan")))

    reasons = [n for n in action.metric_names()
               if n.startswith(STALL) and not n.endswith("_not_issued")]
    samples, why = per_line(action, reasons)
    n = sum(samples.values())
    print("\nwarp-state samples by line (%d in all), with the three largest reasons:" % n)
    for key, v in samples.most_common(a.top):
        top = ", ".join("%s %d" % (r[len(STALL):], c) for r, c in why[key].most_common(3))
        print("%6.1f%%  %s:%d  %s" % (100.0 * v / max(n, 1), key[0], key[1], top))

    inst, _ = per_line(action, ["inst_executed"])
    n = sum(inst.values())
    print("\nwarp instructions executed by line (%d in all):" % n)
    for key, v in inst.most_common(a.top):
        print("%6.1f%%  %s:%d" % (100.0 * v / max(n, 1), key[0], key[1]))


if __name__ == "__main__":
    main()
