#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_script.h"

void test_source_dir(char *out, size_t n)
{
	const char *data = getenv("RS_TEST_DATA");
	char *p;

	if (data) {
		snprintf(out, n, "%s", data);
		p = strstr(out, "/tests/data");
		if (p)
			*p = '\0';
		return;
	}
	snprintf(out, n, "%s", __FILE__);
	p = strstr(out, "/tests/unit/");
	assert_non_null(p);
	*p = '\0';
}

int test_run_server_script(const char *fmt, ...)
{
	char cmd[8192], line[4096];
	va_list ap;
	FILE *f;
	int ok = 0;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '='), *v;
		size_t n;

		line[strcspn(line, "\n")] = '\0';
		if (!eq)
			continue;
		*eq = '\0';
		v = eq + 1;
		n = strlen(v);
		if (n >= 2 && v[0] == '\'' && v[n - 1] == '\'') {
			v[n - 1] = '\0';
			v++;
		}
		setenv(line, v, 1);
		ok = 1;
	}
	return pclose(f) == 0 && ok ? 0 : -1;
}
