/*
 * results/pins.h: pins.txt of HEAD, edited in memory and committed; gc
 * reads it back through repo/retention.h.
 */
#include "results/pins.h"

#include <stdlib.h>
#include <string.h>

#include "repo/commit.h"
#include "repo/repo.h"
#include "repo/retention.h"
#include "repo/runs.h"

#define PINS_MAX (1u * 1024 * 1024)

struct rs_pins {
	struct rs_repo *repo;  /* borrowed */
	struct rs_runs *runs;  /* HEAD's index, to resolve queries */
	struct rs_buf text;    /* pins.txt as it will be committed */
	struct rs_buf message; /* the commit message: "results: pin <id>..." */
	int last_pin;          /* the verb of the message's last change */
};

int rs_pins_open(struct rs_pins **out, struct rs_repo *repo)
{
	struct rs_pins *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return rs_error_set(RS_EGENERIC, "out of memory");
	p->repo = repo;
	p->last_pin = -1;
	err = rs_runs_open(&p->runs, repo, NULL);
	if (err)
		goto out;
	err = rs_repo_read_tree_file(repo, NULL, RS_PINS_FILE, PINS_MAX, &p->text);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = rs_buf_puts(&p->text, "# Runs whose raw sessions 'results gc' keeps: "
				  "'results pin <run>'\n");
	}
out:
	if (err) {
		rs_pins_free(p);
		return err;
	}
	*out = p;
	return 0;
}

void rs_pins_free(struct rs_pins *pins)
{
	if (!pins)
		return;
	rs_runs_free(pins->runs);
	rs_buf_release(&pins->text);
	rs_buf_release(&pins->message);
	free(pins);
}

/* `text` without the line `id` into `out`; `*found` 1 when it was there. */
static int drop_line(struct rs_buf *out, const struct rs_buf *text, const char *id, int *found)
{
	const char *p = text->ptr, *end = text->ptr + text->len;
	size_t idlen = strlen(id);
	int err = 0;

	*found = 0;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len == idlen && !memcmp(p, id, len)) {
			*found = 1;
		} else {
			err = rs_buf_put(out, p, len);
			if (err)
				return err;
			err = rs_buf_putc(out, '\n');
			if (err)
				return err;
		}
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

/* Name run `id` in the commit message, after its verb when it changes. */
static int note_change(struct rs_pins *pins, int pin, const char *id)
{
	int err;

	if (pins->last_pin != pin) {
		err = rs_buf_puts(&pins->message, pins->message.len ? ";" : "results:");
		if (err)
			return err;
		err = rs_buf_puts(&pins->message, pin ? " pin" : " unpin");
		if (err)
			return err;
		pins->last_pin = pin;
	}
	return rs_buf_printf(&pins->message, " %s", id);
}

int rs_pins_change(struct rs_pins *pins, const char *query, int pin, const char **run_id,
		   int *was_pinned)
{
	const struct rs_run_entry *run = NULL;
	struct rs_buf next = RS_BUF_INIT;
	const char *id;
	int had, err;

	err = rs_runs_resolve(&run, pins->runs, query);
	if (err)
		return err;
	id = rs_run_entry_id(run);
	err = drop_line(&next, &pins->text, id, &had);
	if (err)
		goto out;
	err = note_change(pins, pin, id);
	if (err)
		goto out;
	/* Already as asked: the file stays as it is (lines in their order). */
	if (pin != had) {
		if (pin) {
			err = rs_buf_printf(&next, "%s\n", id);
			if (err)
				goto out;
		}
		/* The new text replaces the old one whole, so a failure leaves it as it was. */
		rs_buf_release(&pins->text);
		pins->text = next;
		rs_buf_init(&next, 0);
	}
	*run_id = id;
	*was_pinned = had;
out:
	rs_buf_release(&next);
	return err;
}

int rs_pins_commit(struct rs_pins *pins, int *changed)
{
	struct rs_commit_options co = { 0 };
	struct rs_commit_file file = { 0 };

	file.path = RS_PINS_FILE;
	file.data = pins->text.ptr;
	file.size = pins->text.len;
	co.message = pins->message.len ? pins->message.ptr : "results: pins";
	return rs_commit_files(pins->repo, &file, 1, &co, NULL, changed);
}
