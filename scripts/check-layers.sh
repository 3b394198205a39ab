#!/bin/sh
# The include rules of docs/architecture.md, checked (`make check-layers`, CI):
#
#   (a) a folder of src/ includes headers only from itself and the folders
#       before it in LAYERS; cuda/ only from itself and CUDA_USES; nothing in
#       src/ includes cuda/.
#   (b) a header NAME_internal.h (.cuh) is included only by the files of its
#       own folder whose names begin with NAME (its module); this holds for
#       tests/, fuzz/ and scripts/ too.
#   (c) no circle among the files of one folder of src/ or cuda/: neither
#       of includes (a header that includes itself through others) nor of
#       units (.c, .cu), where unit A -> unit B when A uses a function or
#       variable that B defines with external linkage (found from the text:
#       comments and strings stripped, names at file scope).
#
# Each finding is one line, FILE:LINE: what, and the rule; exit status 1 if
# there is any, 0 (and one line saying so) otherwise. POSIX sh and awk; run from anywhere.
#   sh scripts/check-layers.sh           the check
#   sh scripts/check-layers.sh --units   also prints each unit -> unit edge of
#                                        rule (c) with the names it takes
set -eu
units=0
case "${1:-}" in
--units) units=1 ;;
"") ;;
*) echo "usage: sh scripts/check-layers.sh [--units]" >&2; exit 2 ;;
esac

# The layers, first to last: the one place that says the order.
LAYERS="base numerics input physics transport report io parallel run tools"
# What cuda/ (the CUDA backend) may include of src/.
CUDA_USES="base numerics transport"
# Headers the build writes into build/ (-I$(BUILD)): every layer may include them.
GENERATED="buildinfo.h"

cd "$(dirname "$0")/.."
# src/main.c, tests/, fuzz/ and scripts/ sit on top: only rule (b) binds them.
files=$(ls src/*.c src/*/*.c src/*/*.h cuda/*.cu cuda/*.cuh tests/*.c tests/*.h fuzz/*.c \
        scripts/*.c scripts/*.cu 2>/dev/null)

# shellcheck disable=SC2086 # the file list is split on purpose (no spaces in names)
exec awk -v layers="$LAYERS" -v cuda_uses="$CUDA_USES" -v generated="$GENERATED" -v units="$units" '
function dir_of(p) { sub(/\/[^\/]*$/, "", p); return p }
function base_of(p) { sub(/^.*\//, "", p); return p }
function fail(msg) { print msg; bad++ }
function has_word(s, w) { return s ~ ("(^|[^A-Za-z0-9_])" w "([^A-Za-z0-9_]|$)") }

# The line without comments and string or character literals (blanks instead);
# incom carries an open /* comment to the next line.
function strip(line,   out, i, j, n, c, d) {
    out = ""
    n = length(line)
    i = 1
    while (i <= n) {
        if (incom) {
            j = index(substr(line, i), "*/")
            if (!j)
                return out
            i += j + 1
            incom = 0
            out = out " "
            continue
        }
        if (!match(substr(line, i), /[\/"\047]/))
            return out substr(line, i)
        out = out substr(line, i, RSTART - 1)
        i += RSTART - 1
        c = substr(line, i, 1)
        if (c == "/") {
            d = substr(line, i + 1, 1)
            if (d == "/")
                return out
            if (d == "*") {
                incom = 1
                i += 2
                continue
            }
            out = out c
            i++
            continue
        }
        for (j = i + 1; j <= n; j++) {
            d = substr(line, j, 1)
            if (d == "\\")
                j++
            else if (d == c)
                break
        }
        out = out " "
        i = j + 1
    }
    return out
}

# The name a definition at file scope gives: a function (the first NAME( that
# is not an attribute such as __launch_bounds__ or a macro in capitals) or a
# variable (the last name before "=", "[" or the end).
function fn_name(s,   t, id) {
    t = s
    while (match(t, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
        id = substr(t, RSTART, RLENGTH)
        sub(/[ \t]*\($/, "", id)
        t = substr(t, RSTART + RLENGTH)
        if (id !~ /^__/ && id !~ /^[A-Z0-9_]+$/)
            return id
    }
    return ""
}
function var_name(s,   t) {
    t = s
    sub(/=.*/, "", t)
    sub(/\[.*/, "", t)
    sub(/[ \t]+$/, "", t)
    if (match(t, /[A-Za-z_][A-Za-z0-9_]*$/))
        return substr(t, RSTART, RLENGTH)
    return ""
}
function define(name, s) {
    if (name == "")
        return
    anydef[FILENAME, name] = 1
    if (!has_word(s, "static") && !anon)
        extdef[FILENAME, name] = 1
}
function is_decl_only(s) {
    return s ~ /^[ \t]*(typedef|using|struct|union|enum|class|template|extern|namespace)([^A-Za-z0-9_]|$)/
}

# A "{" at file scope ends what came before it: a function, an initialised
# variable, a type, or a block that leaves its contents at file scope
# (extern "C" { }, namespace { }).
function open_top(s) {
    if (s ~ /=/)
        define(var_name(s), s)
    else if (s ~ /\(/)
        define(fn_name(s), s)
    else if (s ~ /^[ \t]*(extern|namespace)[ \t]*[A-Za-z0-9_]*[ \t]*$/) {
        open_blocks[++nopen] = s ~ /^[ \t]*namespace[ \t]*$/ ? "anon" : "block"
        if (open_blocks[nopen] == "anon")
            anon++
        return 0
    } else
        type_prefix = s " " # a type: what follows its "}" declares with it (static struct {...} x[])
    return 1
}
function semi_top(s) {
    if (s ~ /^[ \t]*$/ || s ~ /\(/ || is_decl_only(s))
        return
    define(var_name(s), s)
}
function scan(code,   i, n, c, rest) {
    rest = code
    while (match(rest, /[{};]/)) {
        c = substr(rest, RSTART, 1)
        if (depth == 0)
            stmt = stmt substr(rest, 1, RSTART - 1)
        rest = substr(rest, RSTART + 1)
        if (c == "{") {
            if (depth == 0) {
                if (open_top(stmt))
                    depth = 1
                stmt = ""
            } else
                depth++
        } else if (c == "}") {
            if (depth == 0 && nopen > 0) {
                if (open_blocks[nopen--] == "anon")
                    anon--
            } else if (depth > 0 && --depth == 0 && type_prefix != "") {
                stmt = type_prefix
                type_prefix = ""
                continue
            }
            stmt = ""
        } else if (depth == 0) {
            semi_top(stmt)
            stmt = ""
        }
    }
    if (depth == 0)
        stmt = stmt rest " "
}

FNR == 1 {
    incom = 0; depth = 0; stmt = ""; nopen = 0; anon = 0; type_prefix = ""; pp = 0
    file[++nfiles] = FILENAME
    d = dir_of(FILENAME)
    folder[FILENAME] = d
    isunit[FILENAME] = FILENAME ~ /\.(c|cu)$/ && d != "tests" && d != "fuzz" && d != "scripts"
}
{
    open_before = incom
    code = strip($0)
    if (!open_before && $0 ~ /^[ \t]*#[ \t]*include[ \t]*"/) {
        inc = $0
        sub(/^[^"]*"/, "", inc)
        sub(/".*$/, "", inc)
        ninc++
        inc_file[ninc] = FILENAME
        inc_line[ninc] = FNR
        inc_name[ninc] = inc
        next
    }
    rest = code
    while (match(rest, /[A-Za-z0-9_]+/)) {
        id = substr(rest, RSTART, RLENGTH)
        rest = substr(rest, RSTART + RLENGTH)
        if (id ~ /^[A-Za-z_]/ && !((FILENAME, id) in useln))
            useln[FILENAME, id] = FNR
    }
    if (pp || code ~ /^[ \t]*#/) {
        pp = code ~ /\\[ \t]*$/
        next
    }
    scan(code)
}

END {
    n = split(layers, L, " ")
    for (i = 1; i <= n; i++)
        rank["src/" L[i]] = i
    n = split(cuda_uses, U, " ")
    for (i = 1; i <= n; i++)
        cuda_ok["src/" U[i]] = 1
    n = split(generated, G, " ")
    for (i = 1; i <= n; i++)
        gen[G[i]] = 1

    for (f = 1; f <= nfiles; f++) {
        p = file[f]
        if (p ~ /^src\/[^\/]+\// && !(folder[p] in rank))
            fail(p ":1: folder " folder[p] " is not in the order; rule (a): add it to LAYERS in scripts/check-layers.sh and to docs/architecture.md")
    }

    # Rules (a) and (b), and the include edges of rule (c).
    for (k = 1; k <= ninc; k++) {
        p = inc_file[k]
        inc = inc_name[k]
        where = p ":" inc_line[k] ": #include \"" inc "\""
        if (inc in gen)
            continue
        # A path with a folder is under src/ (-Isrc); a bare name is beside the includer.
        if (inc ~ /^cuda\//)
            t = inc
        else if (inc ~ /\//)
            t = "src/" inc
        else
            t = folder[p] "/" inc
        if (!(t in folder) && inc !~ /\// && (("cuda/" inc) in folder))
            t = "cuda/" inc # scripts/access_probe.cu: built with -Icuda
        if (!(t in folder)) {
            fail(where ": no such file in src/, cuda/ or beside it (an include path the check does not know)")
            continue
        }
        from = folder[p]
        to = folder[t]
        if (from in rank) {
            if (!(to in rank))
                fail(where ": rule (a): " from " includes only src/ folders before it, not " to)
            else if (rank[to] > rank[from])
                fail(where ": rule (a): " to " comes after " from " in the order " layers)
        } else if (from == "cuda" && to != "cuda" && !(to in cuda_ok))
            fail(where ": rule (a): cuda/ includes only itself and src/{" cuda_uses "}, not " to)
        b = base_of(t)
        if (b ~ /_internal\.(h|cuh)$/) {
            module = b
            sub(/_internal\.(h|cuh)$/, "", module)
            if (from != to || index(base_of(p), module) != 1)
                fail(where ": rule (b): " b " is shared only by the files " to "/" module "* of its module")
        }
        if (from == to && t != p && (from in rank || from == "cuda")) {
            iedge[p, t] = inc_line[k]
            itext[p, t] = inc
            reach_i[p, t] = 1
        }
    }

    # Rule (c): circles, per folder, of includes and of units.
    for (f = 1; f <= nfiles; f++)
        members[folder[file[f]]] = members[folder[file[f]]] " " file[f]
    for (key in extdef) {
        split(key, kk, SUBSEP)
        b = kk[1]
        name = kk[2]
        if (!isunit[b])
            continue
        m = split(members[folder[b]], M, " ")
        for (i = 1; i <= m; i++) {
            a = M[i]
            if (a == b || !isunit[a] || !((a, name) in useln) || ((a, name) in anydef))
                continue
            reach_u[a, b] = 1
            allnames[a, b] = allnames[a, b] " " name
            if (!((a, b) in uline) || useln[a, name] < uline[a, b]) {
                uline[a, b] = useln[a, name]
                uname[a, b] = name
            }
        }
    }
    if (units)
        for (key in uline) {
            split(key, kk, SUBSEP)
            print "unit " kk[1] " -> " kk[2] ":" allnames[key]
        }
    for (d in members) {
        m = split(members[d], M, " ")
        # Transitive closure (Warshall) of both graphs over the folder.
        for (x = 1; x <= m; x++)
            for (i = 1; i <= m; i++) {
                if ((M[i], M[x]) in reach_i)
                    for (j = 1; j <= m; j++)
                        if ((M[x], M[j]) in reach_i)
                            reach_i[M[i], M[j]] = 1
                if ((M[i], M[x]) in reach_u)
                    for (j = 1; j <= m; j++)
                        if ((M[x], M[j]) in reach_u)
                            reach_u[M[i], M[j]] = 1
            }
        for (i = 1; i <= m; i++)
            for (j = 1; j <= m; j++) {
                a = M[i]
                b = M[j]
                if ((a, b) in iedge && (b, a) in reach_i)
                    fail(a ":" iedge[a, b] ": #include \"" itext[a, b] "\": rule (c): an include circle in " d \
                         " (" base_of(b) " leads back to " base_of(a) ")")
                if ((a, b) in uline && (b, a) in reach_u)
                    fail(a ":" uline[a, b] ": uses " uname[a, b] " of " b ": rule (c): a circle of units in " d \
                         " (" base_of(b) " leads back to " base_of(a) ")")
            }
    }
    if (bad)
        print "check-layers: " bad " finding(s); the rules: docs/architecture.md, scripts/check-layers.sh"
    else
        print "check-layers: " nfiles " files, " ninc " includes: the layers, modules and folders hold"
    exit bad > 0
}' $files
