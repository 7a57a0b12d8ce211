import re
import sys

td, cpp = open(sys.argv[1]).read(), open(sys.argv[2]).read()
body = td[td.index("def KB_ConfigAttr"):]
start = body.index("let parameters = (ins")
params = body[start : body.index(");", start)]
fields = re.findall(r":\$(\w+)", params)
table = cpp[cpp.index("kFields[]") : cpp.index("};", cpp.index("kFields[]"))]
known = set(re.findall(r'"(\w+)"', table))
missing = [f for f in fields if f not in known]
if not fields or missing:
    sys.exit("kb-run's config parser lacks #kb.config field(s): " + ", ".join(missing))
print(f"all {len(fields)} #kb.config fields known to kb-run")
