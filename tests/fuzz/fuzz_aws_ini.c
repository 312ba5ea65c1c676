/*
 * Fuzz the AWS credentials/config INI lookup (remote/aws_config.h): the
 * files are the user's, but a parser of any file gets caps and no
 * surprises. Property besides memory safety: a found value is trimmed and
 * has no line break.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/aws_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "aws_access_key_id", "region", "endpoint_url" };
	static const char *const sections[] = { "default", "profile dev" };
	size_t i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < 3; j++) {
			char *v = NULL;

			if (rs_aws_ini_find(&v, (const char *)data, size, sections[i], keys[j]) == 0) {
				size_t n = strlen(v);

				if (!n || strchr(v, '\n') || v[0] == ' ' || v[n - 1] == ' ')
					abort();
				free(v);
			}
		}
	}
	return 0;
}
