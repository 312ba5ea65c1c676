/*
 * Own code versus libraries; the rule is described in owncode.h.
 */
#include "analysis/owncode.h"

#include <string.h>

/* ".../lib/python3.11/..." and the like, but not a virtualenv's or the
 * system's site-packages below it (those are caught first). */
static int is_stdlib(const char *file)
{
	const char *p = strstr(file, "/lib/python");

	if (!p)
		p = strstr(file, "/lib64/python");
	if (!p)
		p = strstr(file, "\\Lib\\");
	return p != NULL;
}

static int module_match(const char *file, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = strstr(file, name); p; p = strstr(p + 1, name)) {
		int start = p == file || p[-1] == '/' || p[-1] == '\\';

		if (start && (p[n] == '/' || p[n] == '\\' || !strcmp(p + n, ".py")))
			return 1;
	}
	return 0;
}

int rs_owncode_match(const struct rs_owncode *oc, const char *file)
{
	size_t i;

	if (!file || !*file || file[0] == '<')
		return 0;
	if (oc && oc->n_specs) {
		for (i = 0; i < oc->n_specs; i++) {
			const char *s = oc->specs[i];

			if (strchr(s, '/') ? strstr(file, s) != NULL : module_match(file, s))
				return 1;
		}
		return 0;
	}
	if (strstr(file, "site-packages") || strstr(file, "dist-packages"))
		return 0;
	return !is_stdlib(file);
}

size_t rs_owncode_from_config(const json_t *config, const char **specs, size_t max)
{
	const json_t *list = json_object_get(config, "own_code");
	size_t i, n = 0;

	if (json_is_string(list) && max && *json_string_value(list)) {
		specs[0] = json_string_value(list);
		return 1;
	}
	for (i = 0; json_is_array(list) && i < json_array_size(list) && n < max; i++) {
		const json_t *v = json_array_get(list, i);

		if (json_is_string(v) && *json_string_value(v))
			specs[n++] = json_string_value(v);
	}
	return n;
}
