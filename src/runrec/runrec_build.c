/*
 * Building run records in memory (runrec.h, "Building a record").
 *
 * The neutral values are those the decoder gives for the smallest
 * run.json: every required string present (""), every nullable one
 * null, every list empty, every optional part absent. So a record built
 * here encodes without the encoder's "incomplete run record" refusal and
 * decodes back to itself (tests/unit/test_runrec.c checks both).
 *
 * Lists grow one element at a time through rs_array_grow with the
 * current count as the capacity: the record stores no capacity, and a
 * decoded list is allocated to its size, so no larger room may be
 * assumed. Each append writes the new element only once all of its
 * allocations succeeded, so a failure leaves the record as it was.
 */
#include "runrec/runrec.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"

static int oom(void)
{
	return rs_error_set(RS_EGENERIC, "out of memory");
}

/* A copy of `s` into *out (NULL for NULL). */
static int copy_str(char **out, const char *s)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : oom();
}

/* Room for element `n` of the list at `arrp` that holds `n` elements of `elem` bytes. */
static int room_for_one(void *arrp, size_t n, size_t elem)
{
	size_t alloc = n;

	return rs_array_grow(arrp, &alloc, n + 1, elem, 1);
}

int rs_runrec_set_string(char **field, const char *value)
{
	char *copy;
	int err;

	err = copy_str(&copy, value);
	if (err)
		return err;
	free(*field);
	*field = copy;
	return 0;
}

int rs_runrec_new(rs_runrec **out)
{
	char **required[5];
	rs_runrec *rec = calloc(1, sizeof(*rec));
	int err = 0;

	if (!rec)
		return oom();
	rec->format = RS_RUNREC_FORMAT;
	required[0] = &rec->id;
	required[1] = &rec->commit;
	required[2] = &rec->branch;
	required[3] = &rec->trigger;
	required[4] = &rec->recorded_at;
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		err = copy_str(required[i], "");
		if (err)
			goto out;
	}
	*out = rec;
	rec = NULL;
out:
	rs_runrec_free(rec);
	return err;
}

int rs_runrec_summary_new(struct rs_runrec_summary **out)
{
	struct rs_runrec_summary *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return oom();
	err = copy_str(&s->layout, "5");
	if (err)
		goto out;
	/* the session's summary names its synthetic root so (session/summary.c) */
	err = copy_str(&s->tree.function, "[root]");
	if (err)
		goto out;
	err = copy_str(&s->tree.file, "");
	if (err)
		goto out;
	*out = s;
	s = NULL;
out:
	rs_runrec_summary_free(s);
	return err;
}

/* Where `name` is in `map`, or would be inserted; *found says which. */
static size_t map_place(const struct rs_runrec_map *map, const char *name, int *found)
{
	size_t lo = 0, hi = map->n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, map->items[mid].name);

		if (!c) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int rs_runrec_map_set(struct rs_runrec_map *map, const char *name,
		      const struct rs_runrec_value *value)
{
	struct rs_runrec_value v = *value;
	char *copy = NULL;
	size_t at;
	int found, err;

	/* as the decoder fills a value: only the members of its kind */
	v.s = NULL;
	if (v.kind == RS_RUNREC_INT)
		v.d = (double)v.i;
	else
		v.i = 0;
	if (v.kind == RS_RUNREC_STRING) {
		v.d = 0;
		err = copy_str(&v.s, value->s ? value->s : "");
		if (err)
			return err;
	}
	at = map_place(map, name, &found);
	if (found) {
		free(map->items[at].value.s);
		map->items[at].value = v;
		return 0;
	}
	err = copy_str(&copy, name);
	if (!err)
		err = room_for_one(&map->items, map->n, sizeof(*map->items));
	if (err) {
		free(copy);
		free(v.s);
		return err;
	}
	memmove(&map->items[at + 1], &map->items[at], (map->n - at) * sizeof(*map->items));
	map->items[at].name = copy;
	map->items[at].value = v;
	map->n++;
	return 0;
}

int rs_runrec_add_function(struct rs_runrec_summary *s, const struct rs_runrec_function *f)
{
	struct rs_runrec_function row = *f;
	int err;

	row.function = row.file = row.class_name = NULL;
	err = copy_str(&row.function, f->function);
	if (err)
		goto out;
	err = copy_str(&row.file, f->file);
	if (err)
		goto out;
	err = copy_str(&row.class_name, f->class_name);
	if (err)
		goto out;
	err = room_for_one(&s->functions, s->nfunctions, sizeof(*s->functions));
	if (err)
		goto out;
	s->functions[s->nfunctions++] = row;
	return 0;
out:
	free(row.function);
	free(row.file);
	free(row.class_name);
	return err;
}

int rs_runrec_node_add(struct rs_runrec_node *parent, const char *function, const char *file,
		       int64_t line, double total, double self, struct rs_runrec_node **out)
{
	struct rs_runrec_node kid = { NULL, NULL, line, total, self, NULL, 0 };
	int err;

	err = copy_str(&kid.function, function);
	if (err)
		goto out;
	err = copy_str(&kid.file, file);
	if (err)
		goto out;
	err = room_for_one(&parent->children, parent->nchildren, sizeof(*parent->children));
	if (err)
		goto out;
	parent->children[parent->nchildren] = kid;
	if (out)
		*out = &parent->children[parent->nchildren];
	parent->nchildren++;
	return 0;
out:
	free(kid.function);
	free(kid.file);
	return err;
}

int rs_runrec_add_more_row(struct rs_runrec_summary *s, const char *function, const char *file,
			   int64_t line, int64_t self_us, int64_t total_us)
{
	struct rs_runrec_more *m = &s->more;
	struct rs_runrec_more_row row = { NULL, 0, line, self_us, total_us };
	char *file_copy = NULL;
	int err;

	while (row.file < m->nfiles && strcmp(m->files[row.file], file) != 0)
		row.file++;
	err = copy_str(&row.function, function);
	if (err)
		goto out;
	if (row.file == m->nfiles) {
		err = copy_str(&file_copy, file);
		if (err)
			goto out;
		err = room_for_one(&m->files, m->nfiles, sizeof(*m->files));
		if (err)
			goto out;
	}
	err = room_for_one(&m->rows, m->nrows, sizeof(*m->rows));
	if (err)
		goto out;
	if (file_copy)
		m->files[m->nfiles++] = file_copy;
	m->rows[m->nrows++] = row;
	s->has_more = 1;
	return 0;
out:
	free(row.function);
	free(file_copy);
	return err;
}
