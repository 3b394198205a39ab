#!/bin/sh
# Rewrites the materials table of docs/materials.md from the shipped tables and
# constants (the table test_materials checks). Run from the repository root
# after `make` and `make tables`.
set -eu
table=$(build/tests/test_materials --print-doc-table)
/usr/bin/python3 - "$table" <<'PY'
import sys
doc = "docs/materials.md"
begin = "<!-- materials-table:begin (tests/test_materials.c --print-doc-table) -->\n"
end = "<!-- materials-table:end -->"
s = open(doc).read()
i = s.index(begin) + len(begin)
j = s.index(end)
open(doc, "w").write(s[:i] + sys.argv[1] + "\n" + s[j:])
PY
