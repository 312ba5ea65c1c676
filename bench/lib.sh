# Sourced by the bench/*.sh scripts: what each of them sets up the same way.

# bench_home DIR: a HOME of its own under DIR (DIR/home), with a global git
# config there naming a committer and git-lfs's filters, so that a
# benchmark neither reads nor changes the user's.
bench_home() {
	export HOME="$1/home" GIT_CONFIG_GLOBAL="$1/home/.gitconfig"
	mkdir -p "$HOME"
	git config --global user.name bench
	git config --global user.email bench@example.com
	git config --global init.defaultBranch main
	git lfs install --skip-repo >/dev/null
}

# The time now, in seconds with nanoseconds.
now() { date +%s.%N; }
