# The include check of the layers (cmake -DRS_ROOT=<source tree> -P this).
# Every #include "..." of src/<layer>/*.[ch] and include/results/*.h must
# name a header of the same layer or of one below it (src/layers.cmake);
# one that names a layer above, or a header the table does not know, fails
# with the file, the header and what the layer may use.
#
# It also keeps JSON text to one writer: a call of jansson's json_dumps,
# json_dumpb, json_dumpf, json_dump_file or json_dump_callback in
# src/*/*.[ch], include/results/*.h or lfs-agent/*.[ch] outside
# src/util/json.c fails with the file and the line. jansson 2.14 ignores
# a failed write of a key (akheron/jansson#655): only rs_json_dump
# (results/json.h) reports it (docs/hacking.md). A name in a comment is
# no call: the check skips a match that follows /* or // on its line, or
# a line that starts with *.
cmake_minimum_required(VERSION 3.18)
if(NOT RS_ROOT)
  message(FATAL_ERROR "usage: cmake -DRS_ROOT=<source tree> -P check_layers.cmake")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)

# The layers `layer` may include: itself and the closure of RS_LAYER_USES_.
function(rs_layer_closure layer out)
  set(seen ${layer})
  set(todo ${RS_LAYER_USES_${layer}})
  while(todo)
    list(POP_FRONT todo l)
    if(NOT l IN_LIST seen)
      list(APPEND seen ${l})
      list(APPEND todo ${RS_LAYER_USES_${l}})
    endif()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# The layer of the header named `inc` ("runs/run.h", "results/store.h").
function(rs_header_layer inc out)
  set(layer "")
  if(inc MATCHES "^results/([a-z_]+)\\.h$")
    foreach(l ${RS_LAYERS})
      if(CMAKE_MATCH_1 IN_LIST RS_PUBLIC_${l})
        set(layer ${l})
      endif()
    endforeach()
  elseif(inc MATCHES "^([a-z_]+)/[A-Za-z0-9_]+\\.h$")
    if(CMAKE_MATCH_1 IN_LIST RS_LAYERS)
      set(layer ${CMAKE_MATCH_1})
    endif()
  else()
    foreach(l ${RS_LAYERS})
      if(inc IN_LIST RS_GENERATED_${l})
        set(layer ${l})
      endif()
    endforeach()
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

set(bad "")
set(nfiles 0)
file(GLOB dirs LIST_DIRECTORIES true RELATIVE ${RS_ROOT}/src ${RS_ROOT}/src/*)
foreach(d ${dirs})
  if(IS_DIRECTORY ${RS_ROOT}/src/${d} AND NOT d IN_LIST RS_LAYERS)
    string(APPEND bad "  src/${d}/ is a folder of no layer: add it to src/layers.cmake\n")
  endif()
endforeach()
file(GLOB srcs RELATIVE ${RS_ROOT} ${RS_ROOT}/src/*/*.c ${RS_ROOT}/src/*/*.h
     ${RS_ROOT}/include/results/*.h)
foreach(f ${srcs})
  if(f MATCHES "^src/([a-z_]+)/")
    set(layer ${CMAKE_MATCH_1})
  else()
    string(REGEX REPLACE "^include/" "" pub ${f})
    rs_header_layer(${pub} layer)
    if(NOT layer)
      string(APPEND bad "  ${f} is a public header of no layer: add it to src/layers.cmake\n")
      continue()
    endif()
  endif()
  if(NOT layer IN_LIST RS_LAYERS)
    continue() # said above, once per folder
  endif()
  math(EXPR nfiles "${nfiles} + 1")
  rs_layer_closure(${layer} allowed)
  file(STRINGS ${RS_ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*$" "\\1" inc "${line}")
    rs_header_layer(${inc} to)
    if(NOT to)
      string(APPEND bad "  ${f} includes \"${inc}\", a header of no layer (src/layers.cmake)\n")
    elseif(NOT to IN_LIST allowed)
      set(below ${allowed})
      list(REMOVE_ITEM below ${layer})
      string(REPLACE ";" " " may "${below}")
      string(APPEND bad "  ${f} includes \"${inc}\" of layer ${to}, which is not below ${layer}: "
                        "${layer} may include only its own headers and those of: ${may}\n")
    endif()
  endforeach()
endforeach()

# The calls of jansson's writers in `f` (relative to RS_ROOT), appended
# to the variable `out` as "  file:line: name(...) ..." lines.
function(rs_json_dump_calls f out)
  file(READ ${RS_ROOT}/${f} body)
  set(found "")
  set(from 0)
  while(TRUE)
    string(SUBSTRING "${body}" ${from} -1 rest)
    string(FIND "${rest}" "json_dump" at)
    if(at EQUAL -1)
      break()
    endif()
    math(EXPR at "${from} + ${at}")
    math(EXPR from "${at} + 9")
    string(SUBSTRING "${body}" ${at} 40 tail)
    if(NOT tail MATCHES "^(json_dump(s|b|f|_file|_callback))[ \t\r\n]*\\(")
      continue()
    endif()
    set(name ${CMAKE_MATCH_1})
    string(SUBSTRING "${body}" 0 ${at} head)
    string(FIND "${head}" "\n" nl REVERSE)
    math(EXPR start "${nl} + 1")
    string(SUBSTRING "${head}" ${start} -1 linehead)
    if(linehead MATCHES "[A-Za-z0-9_]$" OR linehead MATCHES "/[*/]" OR linehead MATCHES "^[ \t]*[*]")
      continue() # another name ending so, or a comment
    endif()
    string(REGEX MATCHALL "\n" nls "${head}")
    list(LENGTH nls line)
    math(EXPR line "${line} + 1")
    string(APPEND found "  ${f}:${line}: ${name}() outside src/util/json.c: write JSON text with "
                        "rs_json_dump (results/json.h), which reports a failed write that "
                        "${name} ignores (akheron/jansson#655, docs/hacking.md)\n")
  endwhile()
  set(${out} "${${out}}${found}" PARENT_SCOPE)
endfunction()

set(dumps "")
file(GLOB json_srcs RELATIVE ${RS_ROOT} ${RS_ROOT}/src/*/*.c ${RS_ROOT}/src/*/*.h
     ${RS_ROOT}/include/results/*.h ${RS_ROOT}/lfs-agent/*.c ${RS_ROOT}/lfs-agent/*.h)
foreach(f ${json_srcs})
  if(NOT f STREQUAL "src/util/json.c")
    rs_json_dump_calls(${f} dumps)
  endif()
endforeach()

set(text "")
if(bad)
  string(APPEND text "layers: an include points up (docs/architecture.md, src/layers.cmake):\n${bad}")
endif()
if(dumps)
  string(APPEND text "json: only src/util/json.c calls jansson's writers:\n${dumps}")
endif()
if(text)
  message(FATAL_ERROR "${text}")
endif()
list(LENGTH json_srcs njson)
message(STATUS "layers: the includes of ${nfiles} files point only down; "
               "no json_dump* call in ${njson} files but src/util/json.c")
