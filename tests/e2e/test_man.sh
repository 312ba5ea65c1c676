#!/usr/bin/env bash
# End-to-end test of the man pages and the bash completion the build
# writes from --help (scripts/gen-docs.py, installed by the package):
#  - results(1) has a section for every command of the dispatch table (as
#    `results --help` lists it) holding that command's --help, and is what
#    the generator writes from the programs as built now (no stale page);
#  - lfs-agent(1) holds lfs-agent --help;
#  - a command whose --help fails stops the generator (so the build);
#  - completion: commands after `results`, each command's own options.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_man

DOCS=$RS_BIN_DIR/docs
GEN_DOCS=$RS_SOURCE_DIR/scripts/gen-docs.py
for f in results.1.gz lfs-agent.1.gz results.bash; do
	[ -s "$DOCS/$f" ] || fail "no $DOCS/$f: the build writes it (cmake option RS_DOCS, needs python3)"
done
gzip -dc "$DOCS/results.1.gz" >"$T/results.1"
gzip -dc "$DOCS/lfs-agent.1.gz" >"$T/lfs-agent.1"

# --- results(1): one section per command ---------------------------------
"$RESULTS" --help | sed -n '/^commands:/,/^$/p' | awk 'NF >= 2 {print $1}' >"$T/commands"
[ "$(wc -l <"$T/commands")" -ge 10 ] || fail "results --help lists too few commands: $(cat "$T/commands")"
while read -r cmd; do
	grep -qx ".SS \"results $cmd\"" "$T/results.1" || fail "results(1) has no section for '$cmd'"
	# the section holds the command's own usage line and its exit statuses
	usage=$("$RESULTS" "$cmd" --help | sed -n 1p)
	sed -n "/^.SS \"results $cmd\"/,/^.SS /p" "$T/results.1" | grep -qxF -- "$usage" ||
		fail "results(1) section '$cmd' lacks its usage line '$usage'"
done <"$T/commands"
[ "$(grep -c '^.SS ' "$T/results.1")" = "$(wc -l <"$T/commands")" ] ||
	fail "results(1) has sections for commands results does not have"
grep -q '^.TH RESULTS 1 .*"results [0-9]' "$T/results.1" || fail "results(1) has no title line with the version"
pass "results(1) has a section with the --help of each of the $(wc -l <"$T/commands") commands"

# the installed page is what the programs as built say now
python3 "$GEN_DOCS" man-results "$RESULTS" "$T/again.1"
cmp "$T/again.1" "$T/results.1" || fail "results(1) is stale: rebuild (target docs)"
grep -qxF -- "$("$AGENT" --help | sed -n 1p)" "$T/lfs-agent.1" || fail "lfs-agent(1) lacks its usage line"
grep -q 'lfs.standalonetransferagent' "$T/lfs-agent.1" || fail "lfs-agent(1) lacks the set-up text"
pass "the pages match the programs' --help; lfs-agent(1) holds lfs-agent --help"

# --- a command without help stops the generator ---------------------------
mkdir -p "$T/fake"
cat >"$T/fake/results" <<EOF
#!/bin/sh
case "\$1 \$2" in
"--help ") printf 'usage: results <command>\n\ncommands:\n  add        record\n  nohelp     has no help\n\n' ;;
"--version ") echo "results 9.9.9" ;;
"add --help") printf 'usage: results add\n' ;;
*) echo "results: '\$1' is not a results command" >&2; exit 2 ;;
esac
EOF
chmod +x "$T/fake/results"
expect_status 1 python3 "$GEN_DOCS" man-results "$T/fake/results" "$T/fake.1"
grep -q "results nohelp --help exited 2 without a usage line" "$T/err" || fail "generator message: $(cat "$T/err")"
[ ! -e "$T/fake.1" ] || fail "the generator wrote a page without the command"
expect_status 1 python3 "$GEN_DOCS" completion "$T/fake/results" "$T/fake.bash"
pass "a command whose --help fails stops the generator, naming it"

# --- bash completion ---------------------------------------------------------
complete_words() { # complete_words WORD...: COMPREPLY for the last word, sorted
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _results; printf "%s\n" "${COMPREPLY[@]}" | sort' \
		_ "$DOCS/results.bash" "$@"
}
complete_words results "" >"$T/got"
sort "$T/commands" >"$T/want"
printf -- '--help\n--version\n' >>"$T/want"
sort -o "$T/want" "$T/want"
diff -u "$T/want" "$T/got" || fail "completion after 'results' should be every command"
[ "$(complete_words results co)" = "compare" ] || fail "'results co' should complete to compare: $(complete_words results co)"
[ "$(complete_words results add run.pyisession --com)" = "--commit" ] || fail "'add --com' should complete --commit"
complete_words results fetch - | grep -qx -- "--output" || fail "fetch options lack --output"
complete_words results fetch - | grep -qx -- "-o" || fail "fetch options lack -o"
! complete_words results list - | grep -qx -- "--commit" || fail "list should not offer add's --commit"
complete_words results init --r | grep -qx -- "--remote" || fail "init should offer --remote"
[ -z "$(complete_words results nosuchcommand --)" ] || fail "an unknown command should complete nothing"
pass "bash completion: commands, then each command's own options"
echo "all man/completion tests passed"
