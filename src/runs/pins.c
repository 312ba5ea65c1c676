/*
 * results/pins.h: pins.txt of HEAD, edited in memory and committed; gc
 * reads it back through runs/retention.h.
 */
#include "results/pins.h"

#include <stdlib.h>
#include <string.h>

#include "git/commit.h"
#include "git/repo.h"
#include "runs/retention.h"
#include "runs/runs.h"

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
	err = rs_repo_read_tree_file(repo, NULL, RS_PINS_FILE, RS_PINS_MAX, &p->text);
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

/*
 * The next line of pins.txt from `*p` (before `end`): the whole line
 * (`*line`, `*len`, without its '\n') and the run id it names (`*id`,
 * `*idlen`: trimmed of blanks and a CR; 0 for a blank or '#' line).
 * `*p` moves past the line; 0 at the end.
 */
static int next_pin_line(const char **p, const char *end, const char **line, size_t *len,
			 const char **id, size_t *idlen)
{
	const char *nl, *a, *z;

	if (!*p || *p >= end)
		return 0;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	*line = *p;
	*len = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
	*p = nl ? nl + 1 : NULL;
	a = *line;
	z = *line + *len;
	while (a < z && (*a == ' ' || *a == '\t' || *a == '\r'))
		a++;
	while (z > a && (z[-1] == ' ' || z[-1] == '\t' || z[-1] == '\r'))
		z--;
	*id = a;
	*idlen = a < z && *a != '#' ? (size_t)(z - a) : 0;
	return 1;
}

int rs_pins_text_names(const struct rs_buf *text, const char *id)
{
	const char *p = text->ptr, *end = text->ptr + text->len, *line, *name;
	size_t len, nlen, want = strlen(id);

	while (next_pin_line(&p, end, &line, &len, &name, &nlen))
		if (nlen == want && !memcmp(name, id, want))
			return 1;
	return 0;
}

int rs_pins_text_drop(struct rs_buf *out, const struct rs_buf *text, const char *id, int *found)
{
	const char *p = text->ptr, *end = text->ptr + text->len, *line, *name;
	size_t len, nlen, want = strlen(id);
	int err;

	*found = 0;
	while (next_pin_line(&p, end, &line, &len, &name, &nlen)) {
		if (nlen == want && !memcmp(name, id, want)) {
			*found = 1;
			continue;
		}
		err = rs_buf_put(out, line, len);
		if (err)
			return err;
		err = rs_buf_putc(out, '\n');
		if (err)
			return err;
	}
	return 0;
}

/* The line ending of `text`: CRLF when its first line has one (a file edited on Windows). */
static const char *line_ending(const struct rs_buf *text)
{
	const char *nl = text->len ? memchr(text->ptr, '\n', text->len) : NULL;

	return nl && nl > text->ptr && nl[-1] == '\r' ? "\r\n" : "\n";
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
	err = rs_pins_text_drop(&next, &pins->text, id, &had);
	if (err)
		goto out;
	err = note_change(pins, pin, id);
	if (err)
		goto out;
	/* Already as asked: the file stays as it is (lines in their order). */
	if (pin != had) {
		if (pin) {
			err = rs_buf_printf(&next, "%s%s", id, line_ending(&pins->text));
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
