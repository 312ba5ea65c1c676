#include "analysis/jsonview.h"

const char *rs_jsonview_str(const json_t *obj, const char *key, const char *fallback)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : fallback;
}

int rs_jsonview_num(const json_t *obj, const char *key, double *out)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	if (!json_is_number(v))
		return 0;
	*out = json_number_value(v);
	return 1;
}
