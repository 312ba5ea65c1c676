# The layers of src/ and the arrows between them (docs/architecture.md
# draws them). One table serves the include check (check_layers.cmake,
# run on every build and as the test layers/test_layers); the libraries'
# link lines in src/CMakeLists.txt follow the same arrows.
#
# RS_LAYER_USES_<layer>: the layers <layer> builds on directly. A layer may
# include its own headers and those of every layer below it, directly or
# through another (the closure of these lists), and nothing else.
set(RS_LAYERS util args remote proc codec store session runrec analysis git runs ops report cli)
set(RS_LAYER_USES_util     "")
# the programs' command-line parser (getopt's state is the process's):
# only the CLI uses it (lfs-agent, a program too, outside src/)
set(RS_LAYER_USES_args     util)
set(RS_LAYER_USES_remote   util)
set(RS_LAYER_USES_proc     util)
set(RS_LAYER_USES_codec    util)
# the store includes remote/remote.h (the interface), links no backend
set(RS_LAYER_USES_store    codec remote)
set(RS_LAYER_USES_session  util)
# the typed run record (run.json decoded once), below analysis and runs
set(RS_LAYER_USES_runrec   util)
set(RS_LAYER_USES_analysis session runrec)
set(RS_LAYER_USES_git      remote)
set(RS_LAYER_USES_runs     git session runrec)
set(RS_LAYER_USES_ops      runs store)
set(RS_LAYER_USES_report   analysis runs)
set(RS_LAYER_USES_cli      report ops proc args)

# The public headers (include/results/) by the layer that implements them.
set(RS_PUBLIC_HEADERS buf error escape output json args watch config checkout repo setup unpushed
                      pins record runs store format report)
set(RS_PUBLIC_util      buf error escape output json)
set(RS_PUBLIC_args      args)
set(RS_PUBLIC_proc      watch)
set(RS_PUBLIC_git       config checkout repo setup unpushed)
set(RS_PUBLIC_runs      pins record runs)
set(RS_PUBLIC_ops       store)
set(RS_PUBLIC_analysis  format)
set(RS_PUBLIC_report    report)
# results_version.h (generated from src/version.h.in) holds only the version
set(RS_GENERATED_util   results_version.h)
