# Sourced by the end-to-end tests: one temporary folder, a HOME and git
# configuration of their own (never the user's), the programs under test,
# and the helpers every test uses.
#
#   . "$(dirname "$0")/lib.sh" test_name
#
# A test that starts servers defines on_exit() to stop them; it runs before
# the temporary folder is removed (KEEP=1 keeps the folder for a post-mortem).

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
: "${RS_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
RESULTS=$RS_BIN_DIR/src/results
AGENT=$RS_BIN_DIR/lfs-agent/lfs-agent
GEN=$RS_BIN_DIR/tests/gen-session
SERVERS=$RS_SOURCE_DIR/tests/servers

T=$(mktemp -d "${TMPDIR:-/tmp}/${1:-e2e}.XXXXXX")
on_exit() { :; }
rs_e2e_cleanup() {
	on_exit || true
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap rs_e2e_cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_status STATUS COMMAND...: run it, output in $T/out and $T/err.
expect_status() {
	local want=$1 got=0
	shift
	"$@" >"$T/out" 2>"$T/err" || got=$?
	[ "$got" = "$want" ] || { cat "$T/out" "$T/err" >&2; fail "'$*' exited $got, want $want"; }
}

# The generator is a test tool, not under test: its leaks at exit (if any)
# must not fail the sanitizer run of these tests.
gen() { ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$GEN" "$@"; }

export HOME="$T/home" GIT_CONFIG_GLOBAL="$T/home/.gitconfig" GIT_CONFIG_NOSYSTEM=1 \
	GIT_TERMINAL_PROMPT=0
unset GIT_DIR GIT_WORK_TREE GITHUB_REF_NAME GITHUB_HEAD_REF RUNNER_NAME RESULTS_RECORDED_AT || true
mkdir -p "$HOME"
git config --global user.name "CI"
git config --global user.email "ci@example.com"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
# git-lfs's filters, in this test's own global config (GIT_CONFIG_NOSYSTEM
# keeps the machine's out: a fresh machine may have none).
git lfs install --skip-repo >/dev/null
