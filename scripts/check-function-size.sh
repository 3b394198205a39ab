#!/bin/sh
# Functions a newcomer reads in one screen (`make check-layers`, CI): in src/
# and cuda/ no function definition longer than MAX_LINES lines (from the line
# of its name to its closing brace), and no host function with more than
# MAX_PARAMS parameters (what it needs more than that goes into a struct with
# a name). Found from the text of the sources as .clang-format lays them out:
# a definition is a "{" at file scope (in a namespace or extern "C" block
# too) whose text since the previous ";", "}" or preprocessor line ends in a
# parameter list (member functions defined inside a struct, small device
# helpers here, are not seen).
#
# Exempt, by rule: __global__ kernels and __device__ functions (not
# __host__) keep scalar parameters, which a launch passes by value; the
# length of a __global__ kernel's body is exempt too (a kernel is one pass
# over its cells, read as a whole). Exempt by name: ALLOW below, each with
# why. A name in ALLOW that no longer needs it is a finding, so the list only
# shrinks.
#
# Each finding is one line, FILE:LINE: NAME: what; exit status 1 if there is
# any, 0 (and one line saying so) otherwise. POSIX sh and awk; run from
# anywhere.
#   sh scripts/check-function-size.sh          the check
#   sh scripts/check-function-size.sh --list   also prints every function: FILE:LINE NAME LINES PARAMS
set -eu
list=0
case "${1:-}" in
--list) list=1 ;;
"") ;;
*) echo "usage: sh scripts/check-function-size.sh [--list]" >&2; exit 2 ;;
esac

MAX_LINES=120
MAX_PARAMS=6
# NAME:WHAT, WHAT "lines", "params" or "both": the exemptions, each with why.
# NAME is a function, or a file (with its folder) for every function it defines.
ALLOW="
cpu_op_stream:lines
src/numerics/deposit_path.h:params
"
# cpu_op_stream (transport/backend_cpu_operators.c): the CPU oracle's
#   streaming body, one pass over the cells, kept whole and in the order of
#   the GPU kernels it is tested against bit for bit.
# src/numerics/deposit_path.h: the __host__ __device__ path both backends run
#   per cell, called from inside kernels; it takes scalars on purpose, so that
#   the GPU's registers and the CPU's loop hold the same values.

cd "$(dirname "$0")/.."
files=$(ls src/*.c src/*/*.c src/*/*.h cuda/*.cu cuda/*.cuh 2>/dev/null)

# shellcheck disable=SC2086 # the file list is split on purpose (no spaces in names)
exec awk -v max_lines="$MAX_LINES" -v max_params="$MAX_PARAMS" -v allow="$ALLOW" -v list="$list" '
BEGIN {
    n = split(allow, al, "\n")
    for (i = 1; i <= n; i++)
        if (split(al[i], w, ":") == 2)
            allowed[w[1]] = w[2]
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
function fail(msg) { print msg; bad++ }
# The text before a "{" at file scope, when it is a function: its name and
# the number of its parameters (nparams), or "" when it is not a function
# (a struct, an initializer, extern "C").
function definition(h,   i, c, depth, open, name, params, t) {
    gsub(/__attribute__[ \t]*\(\([^()]*(\([^()]*\))*[^()]*\)\)/, " ", h)
    sub(/[ \t]+$/, "", h)
    sub(/[ \t]*(const|noexcept|override)$/, "", h)
    if (h !~ /\)$/)
        return ""
    # The parameters of a template (their defaults hold "=") are not the function parameters.
    if (h ~ /^[ \t]*template[ \t]*</) {
        depth = 0
        for (i = index(h, "<"); i <= length(h); i++) {
            c = substr(h, i, 1)
            if (c == "<")
                depth++
            else if (c == ">" && --depth == 0)
                break
        }
        h = substr(h, i + 1)
    }
    # An "=" outside parentheses: an initializer (T x[] = { ... }), not a function.
    depth = 0
    for (i = 1; i <= length(h); i++) {
        c = substr(h, i, 1)
        if (c == "(")
            depth++
        else if (c == ")")
            depth--
        else if (c == "=" && depth == 0)
            return ""
    }
    # The last parenthesised group at depth 0: the parameter list.
    depth = 0
    for (i = length(h); i >= 1; i--) {
        c = substr(h, i, 1)
        if (c == ")")
            depth++
        else if (c == "(" && --depth == 0)
            break
    }
    if (i < 1)
        return ""
    open = i
    t = substr(h, 1, open - 1)
    if (!match(t, /[A-Za-z_][A-Za-z0-9_]*[ \t]*$/))
        return ""
    name = substr(t, RSTART, RLENGTH)
    sub(/[ \t]+$/, "", name)
    if (name ~ /^(if|for|while|switch|return|sizeof|__launch_bounds__)$/)
        return ""
    params = substr(h, open + 1, length(h) - open - 1)
    gsub(/[ \t]+/, " ", params)
    sub(/^ /, "", params)
    sub(/ $/, "", params)
    if (params == "" || params == "void") {
        nparams = 0
    } else {
        # Top-level commas (a function pointer parameter has its own parens).
        nparams = 1
        depth = 0
        for (i = 1; i <= length(params); i++) {
            c = substr(params, i, 1)
            if (c == "(" || c == "<" || c == "[")
                depth++
            else if (c == ")" || c == ">" || c == "]")
                depth--
            else if (c == "," && depth == 0)
                nparams++
        }
    }
    kind = "host"
    if (t ~ /(^|[^A-Za-z0-9_])__global__([^A-Za-z0-9_]|$)/)
        kind = "global"
    else if (t ~ /(^|[^A-Za-z0-9_])__device__([^A-Za-z0-9_]|$)/ &&
             t !~ /(^|[^A-Za-z0-9_])__host__([^A-Za-z0-9_]|$)/)
        kind = "device"
    return name
}
FNR == 1 {
    incom = 0
    depth = 0
    ns = 0
    head = ""
    head_line = 0
    pp = 0
    split("", text_of)
}
{
    raw = $0
    text_of[FNR] = raw
    # A preprocessor line (and its continuations) ends any text at file scope.
    if (pp || raw ~ /^[ \t]*#/) {
        pp = raw ~ /\\$/
        if (depth == 0) {
            head = ""
            head_line = 0
        }
        next
    }
    s = strip(raw)
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (depth == 0) {
            if (c == ";" || c == "}") {
                if (c == "}" && ns > 0)
                    ns-- # the end of a namespace or extern "C" block
                head = ""
                head_line = 0
            } else if (c == "{" && head ~ /^[ \t]*(namespace([ \t]+[A-Za-z_][A-Za-z0-9_]*)?|extern)[ \t]*$/) {
                ns++ # its definitions are at file scope
                head = ""
                head_line = 0
            } else if (c == "{") {
                name = definition(head)
                if (name != "") {
                    fn = name
                    fn_file = FILENAME
                    fn_kind = kind
                    fn_params = nparams
                    fn_start = name_line(head_line, FILENAME, name)
                }
                else
                    fn = ""
                depth = 1
                head = ""
                head_line = 0
            } else {
                if (c !~ /[ \t]/ && head_line == 0)
                    head_line = FNR
                head = head c
            }
        } else if (c == "{") {
            depth++
        } else if (c == "}" && --depth == 0 && fn != "") {
            finish(fn, fn_file, fn_start, FNR - fn_start + 1, fn_params, fn_kind)
            fn = ""
        }
    }
    if (depth == 0 && head != "")
        head = head " "
}
# The line of the function name: the first line from the start of the text
# that holds NAME followed by "(" (a template line or a return type comes
# before it).
function name_line(from, file, name,   k) {
    for (k = from; k <= FNR; k++)
        if (k in text_of && text_of[k] ~ ("(^|[^A-Za-z0-9_])" name "[ \t]*(\\(|$)"))
            return k
    return from
}
function finish(name, file, start, lines, np, kind,   a, key, over_l, over_p) {
    if (list)
        printf "%s:%d %s %d %d%s\n", file, start, name, lines, np, kind == "host" ? "" : " " kind
    key = (name in allowed) ? name : (file in allowed) ? file : ""
    a = key != "" ? allowed[key] : ""
    over_l = lines > max_lines && kind != "global"
    over_p = np > max_params && kind == "host"
    if (a != "")
        seen[key] = seen[key] (over_l ? "l" : "") (over_p ? "p" : "")
    if (over_l && a != "lines" && a != "both")
        fail(file ":" start ": " name ": " lines " lines (at most " max_lines "; split it along its jobs)")
    if (over_p && a != "params" && a != "both")
        fail(file ":" start ": " name ": " np " parameters (at most " max_params "; hand it a struct with a name)")
    nfun++
}
END {
    # An exemption no definition uses any more is a finding: the list only shrinks.
    for (key in allowed) {
        a = allowed[key]
        if (!(key in seen))
            fail("scripts/check-function-size.sh: ALLOW names " key ", which no source defines")
        else if ((a == "lines" || a == "both") && seen[key] !~ /l/)
            fail("scripts/check-function-size.sh: ALLOW exempts " key " from the length, which it no longer needs")
        else if ((a == "params" || a == "both") && seen[key] !~ /p/)
            fail("scripts/check-function-size.sh: ALLOW exempts " key " from the parameter count, which it no longer needs")
    }
    if (bad) {
        print "check-function-size: " bad " finding(s)"
        exit 1
    }
    print "check-function-size: " nfun " functions in src/ and cuda/, none over " max_lines " lines or " max_params " host parameters outside ALLOW"
}
' $files
