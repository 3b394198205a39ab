#!/bin/sh
# Rewrites the generated tables of docs/materials.md from the shipped tables and
# constants (the tables test_materials and test_nuclear check). Run from the
# repository root after `make` and `make tables`.
set -eu
materials=$(build/tests/test_materials --print-doc-table)
elements=$(build/tests/test_nuclear --print-doc-table elements)
nonelastic=$(build/tests/test_nuclear --print-doc-table materials)
/usr/bin/python3 - "$materials" "$elements" "$nonelastic" <<'PY'
import sys
doc = "docs/materials.md"
s = open(doc).read()
tables = [
    ("<!-- materials-table:begin (tests/test_materials.c --print-doc-table) -->\n",
     "<!-- materials-table:end -->", sys.argv[1]),
    ("<!-- nonelastic-elements:begin (tests/test_nuclear.c --print-doc-table elements) -->\n",
     "<!-- nonelastic-elements:end -->", sys.argv[2]),
    ("<!-- nonelastic-materials:begin (tests/test_nuclear.c --print-doc-table materials) -->\n",
     "<!-- nonelastic-materials:end -->", sys.argv[3]),
]
for begin, end, table in tables:
    i = s.index(begin) + len(begin)
    j = s.index(end)
    s = s[:i] + table + "\n" + s[j:]
open(doc, "w").write(s)
PY
