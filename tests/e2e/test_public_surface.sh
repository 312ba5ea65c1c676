#!/usr/bin/env bash
# The library's public headers (include/results/, docs/architecture.md):
#  - each compiles on its own with include/ alone on the path: no public
#    header leans on an internal one (src/) or on libgit2;
#  - the types they hand out are opaque: a program that reaches into one
#    does not compile;
#  - the programs (every file of src/cli and lfs-agent) use the library
#    only through them: their own headers, results/*.h and system headers,
#    nothing of a layer (repo/, store/, remote/, util/, analysis/,
#    session/, codec/), and no jansson or libgit2 of the library's (the
#    agent's protocol.c parses git-lfs's JSON lines with jansson: that is
#    its own protocol, not the library's types).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_public_surface

CC=${CC:-cc}
INC=$RS_SOURCE_DIR/include
command -v "$CC" >/dev/null || fail "no C compiler '$CC' to compile the public headers with"

[ -d "$INC/results" ] || fail "no public headers: $INC/results is missing"
n=0
for h in "$INC"/results/*.h; do
	name=results/${h##*/}
	printf '#include "%s"\n#include "%s"\nint main(void) { return 0; }\n' "$name" "$name" >"$T/one.c"
	"$CC" -std=c11 -Wall -Werror -fsyntax-only -I "$INC" "$T/one.c" 2>"$T/err" ||
		fail "$name does not compile on its own with only include/ on the path: $(cat "$T/err")"
	n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "expected at least 4 public headers in $INC/results, found $n"
pass "$n public headers compile alone, twice included, with include/ only"

# Every opaque type of the public surface, by its header.
for t in "repo.h rs_repo" "config.h rs_config" "runs.h rs_runs" "runs.h rs_run_entry" \
	"runs.h rs_run_doc" "record.h rs_record" "pins.h rs_pins" "store.h rs_objstore" \
	"store.h rs_survey" "store.h rs_fetch"; do
	set -- $t
	printf '#include "results/%s"\nunsigned long size(void) { return sizeof(struct %s); }\n' "$1" "$2" >"$T/peek3.c"
	if "$CC" -std=c11 -fsyntax-only -I "$INC" "$T/peek3.c" 2>"$T/err"; then
		fail "struct $2 is not opaque in results/$1"
	fi
	grep -q "incomplete\|invalid application of 'sizeof'" "$T/err" ||
		fail "unexpected error for struct $2: $(cat "$T/err")"
done
pass "the public surface's types are opaque to programs"

# The programs, whole: every source file of the CLI and of lfs-agent.
: >"$T/bad"
n=0
for f in "$RS_SOURCE_DIR"/src/cli/*.[ch] "$RS_SOURCE_DIR"/lfs-agent/*.[ch]; do
	grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		grep -vE '#[[:space:]]*include[[:space:]]*"(results/[a-z_]+\.h|cli/[a-z_]+\.h|protocol\.h|results_version\.h)"' \
		>>"$T/bad" || true
	case $f in
	*/lfs-agent/protocol.c) ;;
	*)
		grep -HnE '#[[:space:]]*include[[:space:]]*<(jansson|git2)(\.h|/)' "$f" >>"$T/bad" || true
		grep -HnwE 'json_t|json_[a-z_]+|git_[a-z_]+' "$f" >>"$T/bad" || true
		;;
	esac
	n=$((n + 1))
done
[ "$n" -ge 30 ] || fail "expected the CLI's and lfs-agent's sources, found $n files"
[ ! -s "$T/bad" ] || fail "programs reach past include/results/:
$(cat "$T/bad")"
pass "all $n source files of the CLI and lfs-agent use the library only through include/results/"
