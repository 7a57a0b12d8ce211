#===- kb/bench/__init__.py - python3 -m kb.bench ---------------------------===#
#
# Two front ends behind one command:
#   python3 -m kb.bench --suite NAME [...]    the named suites (bench/suites.py,
#                                             docs/bench.md): suite.py
#   python3 -m kb.bench PROBLEM.py [...]      KernelBench-style problem files:
#                                             problems.py
# `--list` shows the suites, `--report` reprints a recorded run's table.
#
#===----------------------------------------------------------------------===#

from .problems import (TOL, EAGER_FACTOR, Problem, Timer, check_problem, compile_problem,  # noqa: F401
                       format_table, instantiate, kernel_work, load_problem, measure_ceilings,
                       run_problem, time_problem)

SUITE_FLAGS = ("--suite", "--list", "--build-only", "--report")


def main(argv=None) -> int:
    import sys
    args = sys.argv[1:] if argv is None else list(argv)
    if any(a.split("=")[0] in SUITE_FLAGS for a in args) or not args:
        from .suite import main as suite_main
        return suite_main(args)
    from .problems import main as problems_main
    return problems_main(args)
