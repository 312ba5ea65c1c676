#!/usr/bin/env bash
# End-to-end test of the one option parser (src/cli/opts.c, docs/cli.md
# "Options"): every command of the dispatch table (as `results --help`
# lists it, so a new command is covered by its one line in main.c)
#  - given an unknown long or short option prints exactly
#    "results <cmd>: unknown option '<opt>' (see 'results <cmd> --help')"
#    on stderr, nothing on stdout, and exits 2, before it looks for a
#    repository (run outside one);
#  - takes --help and -h (usage on stdout, exit 0);
# and an option without its value, or a switch given one, says so in the
# same shape, for each command that takes such an option; a shortened
# long option that names several is ambiguous. An operand more than a
# command takes is "results <cmd>: unexpected argument '<it>' (see ...)",
# for every command (each is listed below with the operands it takes, so
# a new command must say); the dispatcher's own errors ("results --bogus",
# an unknown command) and lfs-agent's (an unknown option, a missing value,
# an operand) are in the same shape: both programs share one parser
# (results/args.h).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_cli_options

cd "$T" # not a results repository: the options are refused first

"$RESULTS" --help | sed -n '/^commands:/,/^$/p' | awk 'NF >= 2 {print $1}' >"$T/commands"
[ "$(wc -l <"$T/commands")" -ge 19 ] || fail "results --help lists too few commands: $(cat "$T/commands")"

# expect CMD STATUS STDERR-LINE ARGS...: exactly that status, that one
# line on stderr and nothing on stdout
expect() {
	local cmd=$1 want_status=$2 want=$3 status=0
	shift 3
	"$RESULTS" "$cmd" "$@" >"$T/out" 2>"$T/err" </dev/null || status=$?
	[ "$status" -eq "$want_status" ] ||
		fail "results $cmd $*: exit $status, not $want_status (stderr: $(cat "$T/err"))"
	[ "$(cat "$T/err")" = "$want" ] ||
		fail "results $cmd $*: stderr is '$(cat "$T/err")', not '$want'"
	[ ! -s "$T/out" ] || fail "results $cmd $*: printed on stdout: $(cat "$T/out")"
}

n=0
while read -r cmd; do
	see="(see 'results $cmd --help')"
	expect "$cmd" 2 "results $cmd: unknown option '--no-such-option' $see" --no-such-option
	expect "$cmd" 2 "results $cmd: unknown option '--no-such-option' $see" --no-such-option=1
	expect "$cmd" 2 "results $cmd: unknown option '-Z' $see" -Z
	# after an operand too (except run, which stops at its command)
	if [ "$cmd" != run ]; then
		expect "$cmd" 2 "results $cmd: unknown option '--no-such-option' $see" x --no-such-option
	fi
	for h in --help -h; do
		status=0
		"$RESULTS" "$cmd" "$h" >"$T/out" 2>"$T/err" || status=$?
		[ "$status" -eq 0 ] || fail "results $cmd $h: exit $status ($(cat "$T/err"))"
		grep -q '^usage: results' "$T/out" || fail "results $cmd $h: no usage on stdout: $(head -3 "$T/out")"
		[ ! -s "$T/err" ] || fail "results $cmd $h: stderr: $(cat "$T/err")"
	done
	n=$((n + 1))
done <"$T/commands"
pass "all $n commands refuse an unknown option with one message and exit 2, and take --help and -h"

# a missing value: the last word on the line is an option that needs one
while read -r cmd opt; do
	expect "$cmd" 2 "results $cmd: option '$opt' needs a value (see 'results $cmd --help')" "$opt"
done <<'LIST'
add -m
add --branch
run -m
list --branch
fetch -o
fetch --output
compare --format
check --threshold
trend --metric
find --metric
site --title
gc --grace
init --remote
open -o
export --format
LIST
pass "an option without its value says so, in the same shape"

while read -r cmd opt; do
	expect "$cmd" 2 "results $cmd: option '$opt' takes no value (see 'results $cmd --help')" "$opt=yes"
done <<'LIST'
gc --dry-run
prune --dry-run
verify --deep
pin --unpin
show --json
open --force
list --json
LIST
pass "a switch given a value says so, in the same shape"

# short options in a group, after a long one: the unknown one is named
expect gc 2 "results gc: unknown option '-Z' (see 'results gc --help')" --dry-run -Zq
# a long option may be shortened while that names one option only
expect gc 2 "results gc: option '--gr' needs a value (see 'results gc --help')" --gr
expect gc 2 "results gc: option '--dry' takes no value (see 'results gc --help')" --dry=1
expect trend 2 "results trend: option '--f' is ambiguous (see 'results trend --help')" --f x
pass "grouped short options and shortened long ones are named as written"

# a bad value of a shared option keeps its own message, still exit 2
status=0
"$RESULTS" compare --format nope a b >/dev/null 2>"$T/err" || status=$?
[ "$status" -eq 2 ] || fail "compare --format nope: exit $status"
pass "bad option values still exit 2"

# An operand too many: every command, with the most operands it takes
# ("many": no most, the operands are runs, files or a command line).
while read -r cmd max; do
	grep -qx "$cmd" "$T/commands" || fail "the operand table names '$cmd', which results --help does not list"
	echo "$cmd" >>"$T/operands-listed"
	[ "$max" = many ] && continue
	args=()
	for ((i = 0; i < max; i++)); do args+=("op$i"); done
	expect "$cmd" 2 "results $cmd: unexpected argument 'extra' (see 'results $cmd --help')" "${args[@]}" extra
done <<'LIST'
init 0
clone 2
doctor 0
add many
run many
list 0
show 1
fetch many
compare 2
check 1
trend 0
find 1
site 1
verify 0
gc 0
prune 0
pin many
open 1
export 1
help 1
version 0
LIST
while read -r cmd; do
	grep -qx "$cmd" "$T/operands-listed" || fail "results $cmd is missing from the operand table of this test"
done <"$T/commands"
pass "an operand too many says so in the same shape, for every command"

# the dispatcher: its own options and an unknown command, in the same shape
expect_top() {
	local want=$1 status=0
	shift
	"$RESULTS" "$@" >"$T/out" 2>"$T/err" </dev/null || status=$?
	[ "$status" -eq 2 ] || fail "results $*: exit $status, not 2 (stderr: $(cat "$T/err"))"
	[ "$(cat "$T/err")" = "$want" ] || fail "results $*: stderr is '$(cat "$T/err")', not '$want'"
	[ ! -s "$T/out" ] || fail "results $*: printed on stdout: $(cat "$T/out")"
}
expect_top "results: unknown option '--bogus' (see 'results --help')" --bogus
expect_top "results: unknown option '--bogus' (see 'results --help')" --bogus add
expect_top "results: unknown option '-Z' (see 'results --help')" -Z
expect_top "results: option '--version' takes no value (see 'results --help')" --version=1
expect_top "results: unknown command 'bogus' (see 'results --help')" bogus
expect_top "results: unknown command 'bogus' (see 'results --help')" help bogus
pass "the dispatcher refuses an unknown option or command in the same shape"

# lfs-agent: the same parser, the same shape, exit 2, nothing on stdout
# (git-lfs reads the agent's stdout: a usage error must not reach it)
expect_agent() {
	local want=$1 status=0
	shift
	"$AGENT" "$@" >"$T/out" 2>"$T/err" </dev/null || status=$?
	[ "$status" -eq 2 ] || fail "lfs-agent $*: exit $status, not 2 (stderr: $(cat "$T/err"))"
	[ "$(cat "$T/err")" = "$want" ] || fail "lfs-agent $*: stderr is '$(cat "$T/err")', not '$want'"
	[ ! -s "$T/out" ] || fail "lfs-agent $*: printed on stdout: $(cat "$T/out")"
}
see="(see 'lfs-agent --help')"
expect_agent "lfs-agent: unknown option '--no-such-option' $see" --no-such-option
expect_agent "lfs-agent: unknown option '-Z' $see" -Z
expect_agent "lfs-agent: option '--remote' needs a value $see" --remote
expect_agent "lfs-agent: option '--threads' needs a value $see" --level 3 --threads
expect_agent "lfs-agent: option '--version' takes no value $see" --version=1
expect_agent "lfs-agent: unexpected argument 'extra' $see" extra
expect_agent "lfs-agent: unexpected argument 'extra' $see" --level 3 extra
# a number that is not one is named, not read as 0 or as its leading digits (atoi did)
expect_agent "lfs-agent: --level '3x' is not a whole number from -131072 to 22 $see" --level 3x
expect_agent "lfs-agent: --level 'fast' is not a whole number from -131072 to 22 $see" --level fast
expect_agent "lfs-agent: --threads '-1' is not a whole number from 0 to 256 $see" --threads -1
expect_agent "lfs-agent: --threads '99999999999999999999' is not a whole number from 0 to 256 $see" --threads 99999999999999999999
for h in --help -h; do
	status=0
	"$AGENT" "$h" >"$T/out" 2>"$T/err" </dev/null || status=$?
	[ "$status" -eq 0 ] || fail "lfs-agent $h: exit $status ($(cat "$T/err"))"
	grep -q '^usage: lfs-agent' "$T/out" || fail "lfs-agent $h: no usage on stdout"
	[ ! -s "$T/err" ] || fail "lfs-agent $h: stderr: $(cat "$T/err")"
done
pass "lfs-agent refuses an unknown option, a missing value, a bad number and an operand in the same shape"
