#===- kb/bench/__main__.py - python3 -m kb.bench ---------------------------===#
#
# The command's entry point: kb.bench.main (suites or problem files).
#
#===----------------------------------------------------------------------===#

import sys

from . import main

sys.exit(main())
