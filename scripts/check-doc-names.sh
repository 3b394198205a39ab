#!/bin/sh
# Every file and function docs/dev/architecture.md names is in the tree
# (`make check-layers`, CI): a file name (NAME.c, .h, .cu, .cuh, .py, .sh, .md,
# .yaml; with a folder, under the root, src/ or cuda/; bare, anywhere in the
# sources) and a name in backquotes that reads as a C identifier with an
# underscore (run_setup_init, backend_options, plan_fail_at(), LAYERS) or ends
# in "()", found as a word in src/, cuda/, tests/, scripts/ or the Makefile;
# and "`F` in `FILE.c`": a definition of F at the start of a line of FILE.
# Placeholders in capitals (NAME.cu, NAME_internal.h) are skipped. Each name
# that is not found is one line, DOC:LINE: NAME: not in the tree; exit status
# 1 if there is any.
#   sh scripts/check-doc-names.sh [DOC...]     default docs/dev/architecture.md
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- docs/dev/architecture.md
files=$(find src cuda tests fuzz scripts config schemas docs data -type f 2>/dev/null | sort)
bad=0
for doc in "$@"; do
    # NAME<TAB>LINE<TAB>KIND for each name the document mentions.
    names=$(awk '
    /^```/ { fence = !fence; next }
    {
        line = $0 # "`F` in `FILE.c`": FILE defines F
        while (match(line, /`[A-Za-z_][A-Za-z0-9_]*(\(\))?` in `[A-Za-z0-9_\/]+\.(cu|c)`/)) {
            pair = substr(line, RSTART, RLENGTH)
            line = substr(line, RSTART + RLENGTH)
            gsub(/`|\(\)/, "", pair)
            split(pair, pw, " in ")
            print pw[1] "@" pw[2] "\t" NR "\tdefines"
        }
    }
    fence { next } # a drawing: its names are placeholders (plan.yaml)
    {
        line = $0
        while (match(line, /[A-Za-z0-9_.\/-]+\.(cuh|cu|c|h|py|sh|md|yaml)([^A-Za-z0-9_]|$)/)) {
            n = substr(line, RSTART, RLENGTH)
            line = substr(line, RSTART + RLENGTH)
            sub(/[^A-Za-z0-9_]$/, "", n)
            sub(/^[.\/]+/, "", n)
            if (n !~ /NAME/ && n !~ /^[A-Z]/ || n ~ /^[A-Z]+\.md$/)
                print n "\t" NR "\tfile"
        }
        line = $0
        while (match(line, /`[^`]+`/)) {
            code = substr(line, RSTART + 1, RLENGTH - 2)
            line = substr(line, RSTART + RLENGTH)
            gsub(/[A-Za-z0-9_.\/-]+\.(cuh|cu|c|h|py|sh|md|yaml)/, " ", code) # files: above
            nw = split(code, w, /[^A-Za-z0-9_()]+/)
            for (i = 1; i <= nw; i++) {
                id = w[i]
                fn = id ~ /\(\)$/
                sub(/\(\)$/, "", id)
                if (id ~ /^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+$/ && id !~ /NAME/ || fn && id ~ /^[A-Za-z_][A-Za-z0-9_]*$/)
                    print id "\t" NR "\tname"
            }
        }
    }' "$doc" | sort -u -t "	" -k1,1)
    old_ifs=$IFS
    IFS='
'
    for entry in $names; do
        IFS=$old_ifs
        name=${entry%%	*}
        rest=${entry#*	}
        ln=${rest%%	*}
        kind=${rest#*	}
        found=0
        if [ "$kind" = defines ]; then
            fn=${name%@*}
            in=${name#*@}
            for p in $(printf '%s\n' "$files" | grep "/$in\$"); do
                grep -Eq "^[A-Za-z].*[^A-Za-z0-9_]$fn\(" "$p" && found=1
            done
            [ $found = 1 ] || name="$fn is not defined in $in:"
        elif [ "$kind" = file ]; then
            case $name in
            */*) for p in "$name" "src/$name" "cuda/$name"; do [ -f "$p" ] && found=1; done ;;
            *) printf '%s\n' "$files" | grep -q "/$name\$" && found=1
               [ -f "$name" ] && found=1 ;;
            esac
        else
            grep -rqw --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
                --include='*.sh' --include='*.py' --include='*.cmake' --include=Makefile \
                -e "$name" src cuda tests fuzz scripts Makefile && found=1
        fi
        if [ $found = 0 ]; then
            case $name in
            *:) echo "$doc:$ln: $name the document says it is" ;;
            *) echo "$doc:$ln: $name: not in the tree" ;;
            esac
            bad=$((bad + 1))
        fi
        IFS='
'
    done
    IFS=$old_ifs
done
if [ $bad -gt 0 ]; then
    echo "check-doc-names: $bad name(s) not found"
    exit 1
fi
echo "check-doc-names: the names of $* are in the tree"
