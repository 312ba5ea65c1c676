/*
 * Lines for the user from a long library operation (verify --repair,
 * prune): the program's callback, called as each thing happens, since
 * the library never prints.
 */
#ifndef RS_REPO_NOTE_H
#define RS_REPO_NOTE_H

struct rs_notes {
	void (*fn)(const char *line, void *payload); /* NULL: nobody listens */
	void *payload;
};

/* One formatted line to `n`; one that cannot be formatted is not worth failing for. */
void rs_note(const struct rs_notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
