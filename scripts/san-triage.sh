#!/usr/bin/env bash
# Sorts one compute-sanitizer run of kb-run (scripts/differential-gpu.sh):
# prints clean, error, timeout or library_hazard.
#   rc 0 or 3 (3: a WRONG result, counted by the run phase): clean;
#   124/137: timeout; 99 (--error-exitcode) or anything else: error, except
#   library_hazard: a racecheck whose every reported race is in a library
#   kernel (cuBLAS's reference for the check: racecheck flags cuBLAS's own
#   segment-K kernel), none in kb's (k<N>_...), where the tool itself
#   failed the run (99), every error of its summary is printed ("Race
#   reported" lines = the summary's count) and nothing else went wrong.
#   (Excluding those kernels with --kernel-name-exclude made cuBLAS's kernel
#   fault under racecheck, 2026-12-04: so they are run, and sorted here.)
# Usage: scripts/san-triage.sh TOOL RC OUTPUT_FILE
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 TOOL RC OUTPUT_FILE" >&2; exit 2
fi
tool=$1 rc=$2 f=$3
[ -f "$f" ] || { echo "$0: no sanitizer output '$f'" >&2; exit 2; }
case $rc in
  0|3) echo clean; exit 0 ;;
  124|137) echo timeout; exit 0 ;;
esac
if [ "$tool" = racecheck ] && [ "$rc" = 99 ] \
    && ! grep -q "Program hit\|Internal Sanitizer Error\|Target application returned an error" "$f"; then
  errs=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+ hazards? displayed \([0-9]+ errors?' "$f" | grep -Eo '[0-9]+ errors?' | grep -Eo '[0-9]+')
  races=$(grep -c 'Race reported between' "$f")
  at=$(grep -Eo ' at [A-Za-z_][A-Za-z0-9_]*\+0x' "$f" | sed -E 's/ at //; s/\+0x//' | sort -u)
  if [ -n "$errs" ] && [ "$errs" = "$races" ] && [ -n "$at" ] && ! echo "$at" | grep -Eq '^k[0-9]+_'; then
    echo library_hazard; exit 0
  fi
fi
echo error
