#!/bin/sh
# The include rules of docs/dev/architecture.md, checked (`make check-layers`, CI):
#
#   (a) a folder of src/ reaches headers only of itself and the folders
#       before it in LAYERS; cuda/ only of itself and CUDA_USES; nothing in
#       src/ reaches cuda/. "Reaches" is the transitive closure of includes:
#       a header that another folder's header includes counts as included.
#   (b) a header NAME_internal.h (.cuh) is included only by the files of its
#       own folder whose names begin with NAME (its module); this holds for
#       tests/, fuzz/ and scripts/ too.
#   (c) no circle among the files of one folder of src/ or cuda/: neither
#       of includes (a header that includes itself through others) nor of
#       units (.c, .cu), where unit A -> unit B when A uses a function or
#       variable that B defines with external linkage (found from the text:
#       comments and strings stripped, names at file scope); nor of
#       modules through a header: a module is a header NAME.h (.cuh,
#       NAME_internal.h) with the files NAME.* and the files NAME_* that have
#       no header of their own; a header of one module does not include a
#       header of another that needs the first back (a backwards header),
#       except that NAME_X.h may include NAME.h, which it extends.
#
# Each finding is one line, FILE:LINE: what, and the rule; a reach names its
# path: FILE:LINE: reaches DIR/HEADER.h through A.h -> B.h: rule. Exit status
# 1 if there is any, 0 (and one line saying so) otherwise. A finding that
# scripts/check-layers.allow lists ("FILE HEADER" or "FILE VIA HEADER", while
# another change removes it) is counted, not failed; a line there that no
# longer matches is a finding. POSIX sh and awk; run from anywhere.
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

# The layers, first to last: the one place that says the order. A layer
# without a folder yet is allowed.
LAYERS="base numerics input physics transport report io parallel run tools"
# What cuda/ (the CUDA backend) may reach of src/.
CUDA_USES="base numerics physics transport"
# Headers the build writes into build/ (-I$(BUILD)): every layer may include them.
GENERATED="buildinfo.h"

cd "$(dirname "$0")/.."
# src/main.c, tests/, fuzz/ and scripts/ sit on top: only rule (b) binds them.
files=$(ls src/*.c src/*/*.c src/*/*.h cuda/*.cu cuda/*.cuh tests/*.c tests/*.h fuzz/*.c \
        scripts/*.c scripts/*.cu 2>/dev/null)
allow=scripts/check-layers.allow
[ -f "$allow" ] || allow=/dev/null

# shellcheck disable=SC2086 # the file list is split on purpose (no spaces in names)
exec awk -v allowf="$allow" -v layers="$LAYERS" -v cuda_uses="$CUDA_USES" -v generated="$GENERATED" -v units="$units" '
function dir_of(p) { sub(/\/[^\/]*$/, "", p); return p }
function base_of(p) { sub(/^.*\//, "", p); return p }
function fail(msg) { print msg; bad++ }
function has_word(s, w) { return s ~ ("(^|[^A-Za-z0-9_])" w "([^A-Za-z0-9_]|$)") }
# A file as the findings show it: under src/ without the "src/".
function shown(p) { sub(/^src\//, "", p); return p }
function stem_of(p) { p = base_of(p); sub(/\.[^.]*$/, "", p); sub(/_internal$/, "", p); return p }
function may_reach(from, to) {
    if (from == to || (!(from in rank) && from != "cuda"))
        return 1
    if (from == "cuda")
        return to in cuda_ok
    return (to in rank) && rank[to] <= rank[from]
}
function rule_a(from, to) {
    if (from == "cuda")
        return "rule (a): cuda/ reaches only itself and src/{" cuda_uses "}, not " to
    if (!(to in rank))
        return "rule (a): " from " reaches only src/ folders before it, not " to
    return "rule (a): " to " comes after " from " in the order " layers
}
# A break of the rules unless the allow-list names it: "FILE HEADER" for an
# include, "FILE VIA HEADER" for a reach.
function break_at(msg, p, t, via,   key) {
    key = shown(p) (via == "" ? "" : " " shown(via)) " " shown(t)
    if (key in allowed) {
        allow_used[key] = 1
        nallowed++
        return
    }
    fail(msg)
}
# The edges from module a to module b, as their witnesses say, breadth first.
function module_path(a, b,   mq, nmq, h, u, k, kk, via, from, v, out) {
    split("", via)
    nmq = 0
    mq[++nmq] = a
    via[a] = ""
    for (h = 1; h <= nmq; h++) {
        u = mq[h]
        for (k in medge) {
            split(k, kk, SUBSEP)
            if (kk[1] != u || kk[2] in via)
                continue
            via[kk[2]] = u
            mq[++nmq] = kk[2]
            if (kk[2] == b) {
                out = ""
                for (v = b; v != a; v = via[v])
                    out = medge[via[v], v] (out == "" ? "" : ", ") out
                return out
            }
        }
    }
    return ""
}
BEGIN {
    while ((getline line < allowf) > 0) {
        allow_ln++
        sub(/#.*/, "", line)
        n = split(line, w, " ")
        if (n == 2 || n == 3)
            allowed[w[1] " " w[2] (n == 3 ? " " w[3] : "")] = allow_ln
    }
}

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
            fail(p ":1: folder " folder[p] " is not in the order; rule (a): add it to LAYERS in scripts/check-layers.sh and to docs/dev/architecture.md")
    }

    # Rules (a) and (b) of each include, and the include edges of rules (a) and (c).
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
        out[p, ++nout[p]] = t
        outln[p, nout[p]] = inc_line[k]
        if (!may_reach(from, to))
            break_at(where ": " rule_a(from, to), p, t)
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

    # Rule (a) through other headers: what each file reaches, breadth first
    # through the headers it may reach, so that the path named is a shortest
    # one. A break is the include that leaves them (VIA -> HEADER), named once
    # per file, and only at the first file of its folder on the path (the
    # files that include that one reach it through it).
    for (f = 1; f <= nfiles; f++) {
        p = file[f]
        from = folder[p]
        if (!(from in rank) && from != "cuda")
            continue
        split("", seen)
        split("", named)
        nq = 0
        for (i = 1; i <= nout[p]; i++) {
            t = out[p, i]
            if (!(t in seen) && may_reach(from, folder[t]) && folder[t] != from) {
                seen[t] = i
                prev[t] = ""
                q[++nq] = t
            }
        }
        for (h = 1; h <= nq; h++) {
            u = q[h]
            for (j = 1; j <= nout[u]; j++) {
                t = out[u, j]
                if (t == p)
                    continue
                if (may_reach(from, folder[t])) {
                    if (!(t in seen)) {
                        seen[t] = seen[u]
                        prev[t] = u
                        q[++nq] = t
                    }
                    continue
                }
                if ((u, t) in named || !may_reach(folder[u], folder[t]))
                    continue # named already, or a break of the folder of VIA, named there
                named[u, t] = 1
                path = ""
                for (v = u; v != ""; v = prev[v])
                    path = shown(v) (path == "" ? "" : " -> ") path
                break_at(p ":" outln[p, seen[u]] ": reaches " shown(t) " through " path ": " rule_a(from, folder[t]), \
                         p, t, u)
            }
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

    # Rule (c), backwards headers: the modules of a folder (a header NAME.h,
    # NAME.cuh or NAME_internal.h with the files NAME.* and the files NAME_*
    # without a header of their own) and their edges (an include, a use); a
    # header whose include the other module answers with a path back is a
    # circle of modules. A header NAME_X.h may include NAME.h: it extends it.
    for (d in members) {
        if (!(d in rank) && d != "cuda")
            continue
        m = split(members[d], M, " ")
        split("", stems)
        for (i = 1; i <= m; i++)
            if (M[i] ~ /\.(h|cuh)$/)
                stems[stem_of(M[i])] = 1
        for (i = 1; i <= m; i++) {
            s = stem_of(M[i])
            mod[M[i]] = s in stems ? s : ""
            if (!(s in stems))
                for (x in stems)
                    if (index(s, x "_") == 1 && length(x) > length(mod[M[i]]))
                        mod[M[i]] = x
            if (mod[M[i]] == "")
                mod[M[i]] = s
        }
        split("", medge)
        for (i = 1; i <= m; i++)
            for (j = 1; j <= m; j++) {
                a = M[i]
                b = M[j]
                if (mod[a] == mod[b])
                    continue
                if ((a, b) in iedge && !((mod[a], mod[b]) in medge))
                    medge[mod[a], mod[b]] = base_of(a) ":" iedge[a, b] " includes " base_of(b)
                else if ((a, b) in uline && !((mod[a], mod[b]) in medge))
                    medge[mod[a], mod[b]] = base_of(a) ":" uline[a, b] " uses " uname[a, b]
            }
        for (i = 1; i <= m; i++)
            for (j = 1; j <= m; j++) {
                a = M[i]
                b = M[j]
                if (!((a, b) in iedge) || mod[a] == mod[b] || a !~ /\.(h|cuh)$/ || index(stem_of(a), mod[b] "_") == 1)
                    continue
                back = module_path(mod[b], mod[a])
                if (back != "")
                    break_at(a ":" iedge[a, b] ": #include \"" itext[a, b] "\": rule (c): a backwards header in " d \
                             ": module " mod[b] " needs module " mod[a] " back (" back ")", a, b)
            }
    }

    for (key in allowed)
        if (!(key in allow_used))
            fail(allowf ":" allowed[key] ": " key ": no such break now; rule: remove the line")
    if (bad)
        print "check-layers: " bad " finding(s); the rules: docs/dev/architecture.md, scripts/check-layers.sh"
    else
        print "check-layers: " nfiles " files, " ninc " includes: the layers, modules and folders hold" \
              (nallowed ? "; " nallowed " break(s) listed in " allowf " still to remove" : "")
    exit bad > 0
}' $files
