# The layer check catches what it is for (cmake -DRS_ROOT=<source tree>
# -DRS_WORK=<scratch dir> -P this): on a copy of src/, include/ and
# lfs-agent/ it passes as the tree is, then fails, naming the file and the
# header, for each include below added on its own, and naming the file and
# the line for a json_dumps call outside src/util/json.c.
cmake_minimum_required(VERSION 3.18)
set(check ${RS_ROOT}/src/check_layers.cmake)

function(copy_tree)
  file(REMOVE_RECURSE ${RS_WORK})
  file(MAKE_DIRECTORY ${RS_WORK})
  file(COPY ${RS_ROOT}/src ${RS_ROOT}/include DESTINATION ${RS_WORK})
  if(EXISTS ${RS_ROOT}/lfs-agent)
    file(COPY ${RS_ROOT}/lfs-agent DESTINATION ${RS_WORK})
  endif()
endfunction()

function(run_check out_rc out_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DRS_ROOT=${RS_WORK} -P ${RS_WORK}/src/check_layers.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_text} "${o}${e}" PARENT_SCOPE)
endfunction()

copy_tree()
run_check(rc text)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the tree as it is fails the layer check:\n${text}")
endif()

# file, the line added at its top, what the message must say
set(cases
  "src/runs/run.c|analysis/check.h|src/runs/run.c includes \"analysis/check.h\" of layer analysis, which is not below runs"
  "src/ops/gcrun.c|analysis/check.h|src/ops/gcrun.c includes \"analysis/check.h\" of layer analysis, which is not below ops"
  "src/runs/runindex.c|report/verdict.h|src/runs/runindex.c includes \"report/verdict.h\" of layer report, which is not below runs"
  "src/runs/run.c|results/report.h|src/runs/run.c includes \"results/report.h\" of layer report, which is not below runs"
  "src/git/repo.c|results/store.h|src/git/repo.c includes \"results/store.h\" of layer ops, which is not below git"
  "src/analysis/check.c|runs/run.h|src/analysis/check.c includes \"runs/run.h\" of layer runs, which is not below analysis"
  "src/util/buf.c|cli/cli.h|src/util/buf.c includes \"cli/cli.h\" of layer cli, which is not below util"
  "include/results/runs.h|results/report.h|include/results/runs.h includes \"results/report.h\" of layer report, which is not below runs"
  "src/runs/run.c|nowhere.h|src/runs/run.c includes \"nowhere.h\", a header of no layer")
foreach(c ${cases})
  string(REPLACE "|" ";" parts "${c}")
  list(GET parts 0 file)
  list(GET parts 1 inc)
  list(GET parts 2 want)
  copy_tree()
  file(READ ${RS_WORK}/${file} body)
  file(WRITE ${RS_WORK}/${file} "#include \"${inc}\"\n${body}")
  run_check(rc text)
  if(rc EQUAL 0)
    message(FATAL_ERROR "the layer check passed with #include \"${inc}\" in ${file}")
  endif()
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${text}")
  string(FIND "${flat}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layer check failed without saying '${want}':\n${text}")
  endif()
  message(STATUS "caught: ${want}")
endforeach()

# JSON text has one writer: a json_dumps call added at the end of
# src/analysis/render.c is named with its line; the same name in a
# comment is not a call
copy_tree()
file(READ ${RS_WORK}/src/analysis/render.c body)
string(REGEX MATCHALL "\n" nls "${body}")
list(LENGTH nls n)
math(EXPR line "${n} + 2")
file(APPEND ${RS_WORK}/src/analysis/render.c
     "/* not json_dumps() but rs_json_dump */\n"
     "static char *injected(json_t *o) { return json_dumps(o, JSON_COMPACT); }\n")
run_check(rc text)
string(REGEX REPLACE "[ \t\r\n]+" " " flat "${text}")
set(want "src/analysis/render.c:${line}: json_dumps() outside src/util/json.c: write JSON text with rs_json_dump")
string(FIND "${flat}" "${want}" at)
if(rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "the layer check took a json_dumps call outside src/util/json.c, or did not say '${want}':\n${text}")
endif()
string(FIND "${flat}" "render.c:${n}:" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "the layer check took json_dumps in a comment for a call:\n${text}")
endif()
message(STATUS "caught: ${want}")

# a new folder of src/ must be given a place in the table
copy_tree()
file(WRITE ${RS_WORK}/src/extra/x.c "int x;\n")
run_check(rc text)
string(REGEX REPLACE "[ \t\r\n]+" " " flat "${text}")
string(FIND "${flat}" "src/extra/ is a folder of no layer" at)
if(rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "the layer check took a folder of no layer:\n${text}")
endif()
file(REMOVE_RECURSE ${RS_WORK})
