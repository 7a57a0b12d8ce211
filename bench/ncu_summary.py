#!/usr/bin/env python3
"""Key metrics of ncu --page raw --csv reports: one block per report.

Usage: bench/ncu_summary.py DIR [SUBSTRING]  (every DIR/*.csv; with SUBSTRING, also
every raw metric whose name contains it, e.g. "cluster")."""
import csv, sys, glob, os
if len(sys.argv) < 2:
    print(__doc__.strip().splitlines()[-2], file=sys.stderr)
    sys.exit(2)
want = ["Kernel Name", "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "launch__grid_size", "launch__block_size",
        "launch__registers_per_thread", "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_requests_srcunit_tex_op_read.sum",
        "lts__t_sectors_op_read.sum", "lts__t_requests_op_read.sum", "dram__bytes_read.sum", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__m_xbar2l1tex_read_bytes.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
        "lts__d_sectors_fill_device.sum", "lts__t_bytes.sum", "lts__average_t_sectors_per_request_srcunit_tex_op_read.ratio"]
for f in sorted(glob.glob(sys.argv[1] + "/*.csv")):
    rows = [r for r in csv.reader(open(f)) if r]
    hdr = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if hdr is None:
        print(os.path.basename(f), "no data"); continue
    h, units, data = rows[hdr], rows[hdr + 1], rows[hdr + 2:]
    if not data:
        print(os.path.basename(f), "no data"); continue
    print("==", os.path.basename(f))
    for d in data[:1]:
        for w in want:
            if w in h:
                i = h.index(w); print(f"  {w}: {d[i]} {units[i]}"[:160])
    if len(sys.argv) > 2:
        for i, name in enumerate(h):
            if sys.argv[2] in name: print("   ", name, data[0][i], units[i])
