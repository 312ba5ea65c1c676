#include "util/secret.h"
#include "results/error.h"

#include <stdlib.h>
#include <string.h>

void rs_secret_free(char *s)
{
	if (s) {
		/* volatile so the compiler keeps the wipe of memory about to die. */
		volatile char *v = s;

		while (*v)
			*v++ = '\0';
		free(s);
	}
}

int rs_secret_set(char **field, const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	memcpy(s, p, n);
	s[n] = '\0';
	rs_secret_free(*field);
	*field = s;
	return 0;
}
