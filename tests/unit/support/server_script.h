/*
 * What the suites that start the servers of tests/servers share
 * (test_http_remote, test_http_hostile): where the source tree is, and
 * running a server script.
 */
#ifndef RS_TEST_SERVER_SCRIPT_H
#define RS_TEST_SERVER_SCRIPT_H

#include "results/error.h"
#include <stddef.h>

/* The source tree's root, from RS_TEST_DATA (<root>/tests/data) or else
 * from this file's path (asserts it finds one). */
void test_source_dir(char *out, size_t n);

/*
 * Run a tests/servers script (the shell command `fmt` makes) and export
 * the KEY=VALUE lines it prints (values may be single-quoted) into this
 * process's environment: 0, or -1 when it failed or printed none.
 */
RS_MUST_CHECK
int test_run_server_script(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
