/*
 * rs_export: convert a pyinstrument session, streamed through the one
 * session parser, to formats flame-graph tools read:
 *
 *  - collapsed stacks ("root;caller;callee weight" per line, the input of
 *    flamegraph.pl, inferno, speedscope and others); the weight is the
 *    record's time in microseconds (pyinstrument merges identical
 *    consecutive samples into one record, so counts would mislead). Lines
 *    are written as records are read; tools add up repeated stacks.
 *  - speedscope's JSON file format (one "sampled" profile, unit seconds,
 *    frames shared per function -- a function's frames at different
 *    executing lines are one frame).
 *
 * Frame names are "function (file:line)", with "Class." in front when the
 * session names a class; ';' in names becomes ':' in collapsed output.
 *
 * Memory: collapsed output holds nothing but the parser's frame tables;
 * speedscope holds one double per record (the weights are written after
 * the samples).
 */
#ifndef RS_ANALYSIS_EXPORT_H
#define RS_ANALYSIS_EXPORT_H

#include "results/error.h"

#include <stdio.h>

#include "results/format.h"

/* enum rs_export_format, rs_export_format_parse and rs_export_session are
 * declared in results/format.h (public). */

#endif
