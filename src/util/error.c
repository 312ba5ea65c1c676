#include "results/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RS_ERROR_MAX RS_ERROR_MESSAGE_MAX

static _Thread_local char error_message[RS_ERROR_MAX];
static _Thread_local int error_code;

int rs_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(error_message, sizeof(error_message), fmt, ap);
	va_end(ap);
	error_code = code;
	return code;
}

int rs_error_errno(int code, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(error_message, sizeof(error_message), fmt, ap);
	va_end(ap);
	len = strlen(error_message);
	snprintf(error_message + len, sizeof(error_message) - len, ": %s",
		 strerror(saved));
	error_code = code;
	return code;
}

int rs_error_wrap(int code, const char *fmt, ...)
{
	char prefix[RS_ERROR_MAX];
	char old[RS_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, error_message, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	/* prefix + ": " + old, cut to the slot (snprintf would warn of it). */
	{
		size_t pl = strlen(prefix), ol = strlen(old);

		if (pl > RS_ERROR_MAX - 3)
			pl = RS_ERROR_MAX - 3;
		memcpy(error_message, prefix, pl);
		memcpy(error_message + pl, ": ", 2);
		if (ol > RS_ERROR_MAX - 1 - pl - 2)
			ol = RS_ERROR_MAX - 1 - pl - 2;
		memcpy(error_message + pl + 2, old, ol);
		error_message[pl + 2 + ol] = '\0';
	}
	error_code = code;
	return code;
}

void rs_error_save(struct rs_error_saved *s, int code)
{
	s->code = code;
	memcpy(s->message, error_message, sizeof(s->message));
	s->message[sizeof(s->message) - 1] = '\0';
}

int rs_error_restore(const struct rs_error_saved *s)
{
	memcpy(error_message, s->message, sizeof(error_message));
	error_message[sizeof(error_message) - 1] = '\0';
	error_code = s->code;
	return s->code;
}

const char *rs_error_message(void)
{
	return error_message[0] ? error_message : "unknown error";
}

int rs_error_last(void)
{
	return error_code;
}

void rs_error_clear(void)
{
	error_message[0] = '\0';
	error_code = 0;
}

const char *rs_error_name(int code)
{
	switch (code) {
	case RS_OK: return "ok";
	case RS_ENOTFOUND: return "not found";
	case RS_ECORRUPT: return "corrupt";
	case RS_ERETRY: return "transient failure";
	case RS_EUSAGE: return "usage";
	case RS_EAUTH: return "authentication";
	case RS_EEXISTS: return "exists";
	case RS_ETOOBIG: return "too large";
	case RS_EFORMAT: return "unknown format";
	case RS_EREMOTE: return "remote unusable";
	case RS_ENEWER: return "newer format";
	default: return "error";
	}
}
