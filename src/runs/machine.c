/*
 * Describing the machine a run was recorded on: uname, hostname, the
 * number of online CPUs and the CPU model from /proc/cpuinfo.
 */
#include "runs/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "results/error.h"

/* The first "model name" of /proc/cpuinfo (x86), or "Model"/"Hardware" (arm). */
static json_t *cpu_model(void)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	json_t *v = NULL;

	if (!f)
		return json_null();
	while (!v && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		char *val;

		if (!colon)
			continue;
		if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0 &&
		    strncmp(line, "Hardware", 8) != 0)
			continue;
		val = colon + 1;
		while (*val == ' ' || *val == '\t')
			val++;
		val[strcspn(val, "\r\n")] = '\0';
		if (*val)
			v = json_string(val);
	}
	fclose(f);
	return v ? v : json_null();
}

int rs_run_detect_machine(struct rs_run *run)
{
	struct utsname u;
	char host[256] = "";
	char os[2 * sizeof(u.release) + 2] = "";
	const char *runner = getenv("RUNNER_NAME");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	json_t *m;

	if (uname(&u) == 0)
		snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
	else
		memset(&u, 0, sizeof(u));
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	m = json_pack("{s:s?, s:s?, s:s?, s:o, s:I, s:s?}",
		      "hostname", host[0] ? host : NULL,
		      "os", os[0] ? os : NULL,
		      "arch", u.machine[0] ? u.machine : NULL,
		      "cpu_model", cpu_model(),
		      "cpus", (json_int_t)(cpus > 0 ? cpus : 0),
		      "runner", runner && *runner ? runner : NULL);
	if (!m)
		return rs_error_set(RS_EGENERIC, "cannot describe this machine");
	json_decref(run->machine);
	run->machine = m;
	return 0;
}
