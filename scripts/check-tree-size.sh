#!/usr/bin/env bash
#===- scripts/check-tree-size.sh - the repository's size budgets ---------===#
#
# Issue #48's budgets, checked before a session stops (and by anyone who
# adds results or figures):
#   - the tracked tree: `git ls-files -z | xargs -0 du -cb` under
#     KB_TREE_BUDGET_BYTES (default 4750000: 4.75 MB since session 32,
#     2026-12-08; 4.5 MB from session 31, 4.2 MB from session 29;
#     bench/results/README.md says why);
#   - bench/results on disk: `du -sk bench/results` under
#     KB_RESULTS_BUDGET_KB (default 2048).
# Prints both figures and the largest tracked files; exits 1 if either
# budget is exceeded. Source files over about 800 lines are listed as a
# warning (the project splits a file by job past about 800), not counted.
#
# Usage: bash scripts/check-tree-size.sh [TOP]   (TOP largest files, default 15)
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
top=${1:-15}
tree_budget=${KB_TREE_BUDGET_BYTES:-4750000}
results_budget=${KB_RESULTS_BUDGET_KB:-2048}
case "$tree_budget$results_budget$top" in
  *[!0-9]*) echo "check-tree-size: budgets and TOP must be whole numbers" >&2; exit 2 ;;
esac

git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  { echo "check-tree-size: not a git checkout" >&2; exit 2; }

# Files deleted in the work tree but still in the index are not counted.
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
results=$(du -sk bench/results | cut -f1)

echo "tracked tree: $tree bytes (budget $tree_budget)"
echo "bench/results: $results KB on disk (budget $results_budget)"
echo "largest tracked files:"
git ls-files -z | xargs -0 du -b 2>/dev/null | sort -n | tail -"$top" | sed 's/^/  /'

long=$(git ls-files -z -- '*.cpp' '*.h' '*.td' '*.py' '*.sh' | xargs -0 wc -l |
       awk '$2 != "total" && $1 > 800 {print "  " $1 " " $2}')
if [ -n "$long" ]; then
  echo "warning: source files over 800 lines:"
  echo "$long"
fi

status=0
if [ "$tree" -ge "$tree_budget" ]; then
  echo "check-tree-size: the tracked tree is $tree bytes, over its budget of $tree_budget" >&2
  status=1
fi
if [ "$results" -ge "$results_budget" ]; then
  echo "check-tree-size: bench/results is $results KB, over its budget of $results_budget" >&2
  status=1
fi
exit $status
