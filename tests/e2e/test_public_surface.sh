#!/usr/bin/env bash
# The library's public headers (include/results/, docs/architecture.md):
#  - each compiles on its own with include/ alone on the path: no public
#    header leans on an internal one (src/) or on libgit2;
#  - struct rs_repo and struct rs_config are opaque there: a program that
#    reaches into them does not compile;
#  - lfs-agent reaches the repository layer only through them: no
#    src/repo header and no libgit2 in its sources;
#  - struct rs_record (results/record.h) and struct rs_pins (results/pins.h)
#    are opaque too, and the CLI files that record, list and pin runs, set
#    a clone up and dispatch include only system, cli/ and results/ headers
#    (and the generated results_version.h).
#  - struct rs_objstore, rs_survey and rs_fetch (results/store.h) are opaque;
#  - the CLI's verify, gc, repair, doctor, fetch and show files and
#    lfs-agent include only system, their own and results/*.h headers.
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

cat >"$T/peek.c" <<'C'
#include "results/repo.h"
const char *peek(struct rs_repo *r) { return r->workdir; }
C
if "$CC" -std=c11 -fsyntax-only -I "$INC" "$T/peek.c" 2>"$T/err"; then
	fail "struct rs_repo is not opaque in results/repo.h"
fi
grep -q "undefined type\|incomplete" "$T/err" || fail "unexpected error: $(cat "$T/err")"
cat >"$T/peek2.c" <<'C'
#include "results/config.h"
unsigned long size(void) { return sizeof(struct rs_config); }
C
if "$CC" -std=c11 -fsyntax-only -I "$INC" "$T/peek2.c" 2>"$T/err"; then
	fail "struct rs_config is not opaque in results/config.h"
fi
pass "struct rs_repo and struct rs_config are opaque to programs"

bad=$(grep -n '#include *[<"]\(repo/\|git2\.h\)' "$RS_SOURCE_DIR"/lfs-agent/*.c "$RS_SOURCE_DIR"/lfs-agent/*.h || true)
[ -z "$bad" ] || fail "lfs-agent uses the repository layer outside include/results/: $bad"
grep -q '#include "results/repo.h"' "$RS_SOURCE_DIR/lfs-agent/main.c" ||
	fail "lfs-agent/main.c does not include results/repo.h"
pass "lfs-agent uses the repository layer only through include/results/"

for t in "record.h rs_record" "pins.h rs_pins"; do
	set -- $t
	printf '#include "results/%s"\nunsigned long size(void) { return sizeof(struct %s); }\n' "$1" "$2" >"$T/peek3.c"
	if "$CC" -std=c11 -fsyntax-only -I "$INC" "$T/peek3.c" 2>"$T/err"; then
		fail "struct $2 is not opaque in results/$1"
	fi
	grep -q "incomplete\|invalid application of 'sizeof'" "$T/err" || fail "unexpected error: $(cat "$T/err")"
done
pass "struct rs_record and struct rs_pins are opaque to programs"

cli_files="cmd_add.c cmd_list.c cmd_pin.c cmd_init.c main.c cmd_help.c cmd_version.c"
n=0
for f in $cli_files; do
	[ -f "$RS_SOURCE_DIR/src/cli/$f" ] || fail "src/cli/$f is missing"
	bad=$(grep -n '^[[:space:]]*#[[:space:]]*include' "$RS_SOURCE_DIR/src/cli/$f" |
		grep -v '#include <[^>]*>' | grep -v '#include "\(cli\|results\)/[^"]*"' |
		grep -v '#include "results_version\.h"' || true)
	[ -z "$bad" ] || fail "src/cli/$f includes more than system, cli/ and results/ headers: $bad"
	bad=$(grep -n 'json_t\|git_[a-z_]*(\|<jansson\.h>\|<git2\.h>' "$RS_SOURCE_DIR/src/cli/$f" || true)
	[ -z "$bad" ] || fail "src/cli/$f uses jansson or libgit2: $bad"
	n=$((n + 1))
done
pass "$n CLI files use only system, cli/ and results/ headers"
# The store's public surface (results/store.h): its handles are opaque.
for t in rs_objstore rs_survey rs_fetch; do
	printf '#include "results/store.h"\nunsigned long size(void) { return sizeof(struct %s); }\n' "$t" >"$T/peek3.c"
	if "$CC" -std=c11 -fsyntax-only -I "$INC" "$T/peek3.c" 2>"$T/err"; then
		fail "struct $t is not opaque in results/store.h"
	fi
	grep -q "incomplete\|undefined" "$T/err" || fail "unexpected error for struct $t: $(cat "$T/err")"
done
pass "struct rs_objstore, rs_survey and rs_fetch are opaque to programs"

# Programs on the public surface only (issue 14): these CLI files and
# lfs-agent include system headers, their own (cli/, protocol.h, the
# generated version header) and results/*.h, and nothing of the library's
# layers (repo/, store/, remote/, util/, analysis/, session/, codec/), nor
# jansson or libgit2 (lfs-agent's protocol.c parses JSON lines: jansson is
# its own business there).
public_only() {
	local f=$1 allow=$2 line
	[ -f "$f" ] || fail "no such file to check: $f"
	while IFS= read -r line; do
		case $line in
		'#include "results/'*) ;;
		*) printf '%s\n' "$line" | grep -qE "$allow" || echo "$f: $line" ;;
		esac
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
	grep -HnE '#[[:space:]]*include[[:space:]]*<(jansson|git2)(\.h|/)' "$f" || true
	grep -HnwE 'json_t|git_[a-z_]+' "$f" || true
}
cli_files="cmd_verify.c cmd_gc.c repair.c cmd_doctor.c cmd_fetch.c cmd_show.c survey.c survey.h"
: >"$T/bad"
for f in $cli_files; do
	public_only "$RS_SOURCE_DIR/src/cli/$f" '^#[[:space:]]*include[[:space:]]*"cli/' >>"$T/bad"
done
for f in main.c protocol.h; do
	public_only "$RS_SOURCE_DIR/lfs-agent/$f" \
		'^#[[:space:]]*include[[:space:]]*"(protocol\.h|results_version\.h)"' >>"$T/bad"
done
grep -HnE '#[[:space:]]*include[[:space:]]*"(repo|store|remote|util|analysis|session|codec)/' \
	"$RS_SOURCE_DIR"/lfs-agent/*.c "$RS_SOURCE_DIR"/lfs-agent/*.h >>"$T/bad" || true
[ ! -s "$T/bad" ] || fail "programs reach past include/results/:
$(cat "$T/bad")"
pass "verify, gc, repair, doctor, fetch, show and lfs-agent use only public headers"
# The report commands (issue 14) use the library only through include/results/
# (results/report.h, results/runs.h): no src/ layer header, no jansson or
# libgit2 of their own, no run index internals.
report_cli="cmd_check.c cmd_compare.c cmd_find.c cmd_site.c cmd_trend.c cmd_open.c cmd_export.c
	reportsel.c reportsel.h"
for f in $report_cli; do
	src=$RS_SOURCE_DIR/src/cli/$f
	[ -f "$src" ] || fail "src/cli/$f is missing"
	bad=$(grep -n '^#include *"' "$src" | grep -v '#include *"\(cli\|results\)/' || true)
	[ -z "$bad" ] || fail "src/cli/$f includes a header outside cli/ and results/: $bad"
	bad=$(grep -n '^#include *<\(jansson\|git2\)' "$src" || true)
	[ -z "$bad" ] || fail "src/cli/$f includes a library's header of its own: $bad"
	bad=$(grep -n '\bjson_t\b\|\bjson_[a-z_]*(\|\bgit_[a-z_]*(\|\.idx\b' "$src" || true)
	[ -z "$bad" ] || fail "src/cli/$f reaches into the library's JSON, libgit2 or the run index: $bad"
done
pass "the report commands include only system, cli/ and results/ headers"

cat >"$T/peek3.c" <<'C'
#include "results/report.h"
#include "results/runs.h"
const void *peek(const struct rs_run_doc *d) { return d->json; }
C
if "$CC" -std=c11 -fsyntax-only -I "$INC" "$T/peek3.c" 2>"$T/err"; then
	fail "struct rs_run_doc is not opaque to users of results/report.h"
fi
grep -q "undefined type\|incomplete" "$T/err" || fail "unexpected error: $(cat "$T/err")"
pass "the run records results/report.h takes are opaque"
