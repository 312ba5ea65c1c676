/*
 * Strings that may hold a credential (a password, a key, a token): freed
 * only after their bytes are overwritten, so a secret does not linger in
 * freed heap memory (a later crash dump, an uninitialised read).
 */
#ifndef RS_SECRET_H
#define RS_SECRET_H

#include "results/error.h"

#include <stddef.h>

/* Overwrite the NUL-terminated `s` with zeros, then free it. NULL is a no-op. */
void rs_secret_free(char *s);

/*
 * Replace `*field` (wiped and freed as above) with a new copy of the `n`
 * bytes at `p`, NUL-terminated. RS_EGENERIC when out of memory, leaving
 * `*field` as it was.
 */
RS_MUST_CHECK
int rs_secret_set(char **field, const char *p, size_t n);

#endif
