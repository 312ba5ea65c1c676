/*
 * The survey for gc and verify, and what its failures mean for the exit
 * status (see survey.h).
 */
#include "cli/survey.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "results/error.h"
#include "results/store.h"

int rs_cli_survey(struct rs_survey **out, struct rs_repo *repo, int64_t now,
		  enum rs_survey_scope scope)
{
	enum rs_survey_step failed;
	int err = rs_survey_open(out, repo, now, scope, &failed);

	if (!err)
		return RS_EXIT_OK;
	switch (failed) {
	case RS_SURVEY_REMOTE:
		return rs_cli_error(err == RS_ENOTFOUND ? RS_EXIT_NOT_REPO : RS_EXIT_REMOTE);
	case RS_SURVEY_PLAN:
		return rs_cli_report(err);
	default:
		return rs_cli_error(rs_cli_exit_in(err, RS_CLI_REMOTE));
	}
}

/* Each line of `text` to `f`, after `prefix`; the number of lines. */
static size_t print_lines(FILE *f, const char *prefix, const char *text)
{
	size_t n = 0;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		fprintf(f, "%s%.*s\n", prefix, (int)len, text);
		text += len + (nl != NULL);
		n++;
	}
	return n;
}

size_t rs_cli_survey_say(const struct rs_survey *s, const char *doubt_prefix)
{
	char prefix[64];

	print_lines(stdout, "", rs_survey_notes(s));
	fflush(stdout);
	snprintf(prefix, sizeof(prefix), "results: %s", doubt_prefix);
	return print_lines(stderr, prefix, rs_survey_doubts(s, NULL));
}
