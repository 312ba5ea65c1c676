/*
 * Store maintenance: census, verify, gc and repair, as specified in
 * docs/store-format.md ("Garbage collection and repair"). Each step there
 * is one function here, and each is idempotent, so a collector killed
 * anywhere is run again and finishes the work.
 *
 * The collector keeps its own clock on the remote (gc/seen, gc/marked,
 * tombstone dates) because the backends' modification times cannot be
 * trusted alike: a dropped manifest is set aside (trash/) and deleted by
 * a run at least G later that still drops it; a pack is deleted only
 * after two runs at least G apart saw it unreferenced and a third, at
 * least G after its index was removed, still finds no manifest naming
 * it, once before and once after it wrote gc/sweeping/<id>. What keeps
 * concurrent pushes safe is not the clock but two write-then-read
 * handshakes with the writer (store.c): touch marks against setting a
 * manifest aside, sweeping marks against deleting a pack.
 */
#define _GNU_SOURCE /* strptime, timegm */
#include "store/maint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>
#include <zstd.h>

#include "codec/session_codec.h"
#include "util/array.h"
#include "store/backend.h"
#include "store/chunkindex.h"
#include "store/store.h"
#include "results/error.h"

/* Caps on what the collector reads from the remote (untrusted). */
#define STAMP_MAX 256
/* A pack holds at most this many entries before the census gives up walking it. */
#define PACK_ENTRIES_MAX (1u << 20)

static int id_cmp_v(const void *a, const void *b)
{
	return rs_id_cmp(a, b);
}

static int pack_cmp_v(const void *a, const void *b)
{
	return rs_id_cmp(&((const struct rs_pack_state *)a)->id,
			 &((const struct rs_pack_state *)b)->id);
}

/* Everything but `going`, which outlives a census taken again. */
static void census_clear_listing(struct rs_store_census *c)
{
	struct rs_id *going = c->going;
	size_t ngoing = c->ngoing, agoing = c->agoing;

	free(c->packs);
	free(c->objects);
	free(c->removed);
	free(c->trash);
	free(c->touched);
	memset(c, 0, sizeof(*c));
	c->going = going;
	c->ngoing = ngoing;
	c->agoing = agoing;
}

void rs_store_census_release(struct rs_store_census *c)
{
	free(c->going);
	c->going = NULL;
	census_clear_listing(c);
	c->ngoing = c->agoing = 0;
}

struct census_build {
	struct rs_store_census *c;
	size_t packs_alloc, objects_alloc, removed_alloc, trash_alloc, touched_alloc;
	/* Timestamped keys, resolved once every pack is known. */
	struct rs_id *seen, *marked, *quar, *sweeping;
	size_t nseen, nmarked, nquar, nsweeping, seen_alloc, marked_alloc, quar_alloc, sweeping_alloc;
};

/* A new pack `id` at the end of the census' packs (unsorted), in `*out`. */
static int add_pack(struct census_build *b, const struct rs_id *id, struct rs_pack_state **out)
{
	struct rs_store_census *c = b->c;
	int err = rs_array_grow(&c->packs, &b->packs_alloc, c->npacks + 1, sizeof(*c->packs), 64);

	if (err)
		return err;
	memset(&c->packs[c->npacks], 0, sizeof(c->packs[0]));
	c->packs[c->npacks].id = *id;
	*out = &c->packs[c->npacks++];
	return 0;
}

/* Sort the packs and fold the .pack and .idx entries of one id together. */
static void merge_packs(struct rs_store_census *c)
{
	size_t i, n = 0;

	if (c->npacks)
		qsort(c->packs, c->npacks, sizeof(*c->packs), pack_cmp_v);
	for (i = 0; i < c->npacks; i++) {
		if (n && !rs_id_cmp(&c->packs[n - 1].id, &c->packs[i].id)) {
			struct rs_pack_state *d = &c->packs[n - 1], *s = &c->packs[i];

			if (s->has_pack) {
				d->has_pack = 1;
				d->pack_size = s->pack_size;
			}
			d->has_idx |= s->has_idx;
			continue;
		}
		c->packs[n++] = c->packs[i];
	}
	c->npacks = n;
}

static int on_key(const char *key, uint64_t size, void *payload)
{
	struct census_build *b = payload;
	struct rs_pack_state *p;
	struct rs_id id;

	if (!rs_key_parse(key, RS_KEY_PACKS, ".pack", &id) || !rs_key_parse(key, RS_KEY_PACKS, ".idx", &id)) {
		int is_pack = key[strlen(key) - 1] == 'k';
		int err = add_pack(b, &id, &p);

		if (err)
			return err;
		if (is_pack) {
			p->has_pack = 1;
			p->pack_size = size;
		} else {
			p->has_idx = 1;
		}
	} else if (!rs_key_parse(key, RS_KEY_OBJECTS, "", &id)) {
		return rs_array_push_id(&b->c->objects, &b->c->nobjects, &b->objects_alloc, &id);
	} else if (!rs_key_parse(key, RS_KEY_REMOVED, "", &id)) {
		return rs_array_push_id(&b->c->removed, &b->c->nremoved, &b->removed_alloc, &id);
	} else if (!rs_key_parse(key, RS_KEY_TRASH, "", &id)) {
		return rs_array_push_id(&b->c->trash, &b->c->ntrash, &b->trash_alloc, &id);
	} else if (!rs_key_parse(key, RS_KEY_TOUCHED, "", &id)) {
		return rs_array_push_id(&b->c->touched, &b->c->ntouched, &b->touched_alloc, &id);
	} else if (!rs_key_parse(key, RS_KEY_SWEEPING, "", &id)) {
		return rs_array_push_id(&b->sweeping, &b->nsweeping, &b->sweeping_alloc, &id);
	} else if (!rs_key_parse(key, "gc/seen/", "", &id)) {
		return rs_array_push_id(&b->seen, &b->nseen, &b->seen_alloc, &id);
	} else if (!rs_key_parse(key, "gc/marked/", "", &id)) {
		return rs_array_push_id(&b->marked, &b->nmarked, &b->marked_alloc, &id);
	} else if (!rs_key_parse(key, RS_KEY_PACKS, ".quarantine", &id)) {
		return rs_array_push_id(&b->quar, &b->nquar, &b->quar_alloc, &id);
	} else if (!strcmp(key, RS_KEY_FORMAT)) {
		b->c->has_format = 1;
	}
	return 0;
}

/* Read the small file at `key` (a stamp or a tombstone) into `b`, NUL-terminated. */
static int get_small(struct rs_remote *remote, const char *key, struct rs_buf *b)
{
	uint64_t size = 0;
	int err;

	err = remote->stat(remote, key, &size);
	if (err)
		return err;
	if (size >= STAMP_MAX)
		return rs_error_set(RS_ECORRUPT, "'%s' is %" PRIu64 " bytes, more than a stamp", key, size);
	err = remote->get(remote, key, 0, size, b);
	if (err)
		return err;
	return rs_buf_putc(b, '\0');
}

/* Read the "<unix seconds>..." stamp at `key`; 0 when absent or unreadable. */
static int64_t read_stamp(struct rs_remote *remote, const char *key)
{
	struct rs_buf b;
	long long v = 0;

	rs_buf_init(&b, STAMP_MAX);
	if (get_small(remote, key, &b) || sscanf(b.ptr, "%lld", &v) != 1 || v < 0)
		v = 0;
	rs_buf_release(&b);
	return (int64_t)v;
}

/* Resolve timestamped keys onto their packs (a key whose pack is gone is kept for sweeping). */
static int apply_stamps(struct census_build *b, struct rs_remote *remote,
			const struct rs_id *ids, size_t n, const char *prefix, int kind)
{
	struct rs_buf key = RS_BUF_INIT;
	int err = 0;
	size_t i;

	for (i = 0; i < n && !err; i++) {
		struct rs_pack_state *p = rs_store_census_pack(b->c, &ids[i]);

		if (!p) {
			err = add_pack(b, &ids[i], &p);
			if (err)
				break;
			qsort(b->c->packs, b->c->npacks, sizeof(*b->c->packs), pack_cmp_v);
			p = rs_store_census_pack(b->c, &ids[i]);
		}
		if (kind == 2) {
			p->quarantined = 1;
			continue;
		}
		err = rs_key_make(&key, prefix, &ids[i], "");
		if (err)
			break;
		{
			int64_t *at = kind == 0 ? &p->seen_at : kind == 1 ? &p->marked_at : &p->sweeping_at;

			*at = read_stamp(remote, key.ptr);
			/* An unreadable stamp counts as written now: the clock restarts, never skips. */
			if (!*at)
				*at = INT64_MAX;
		}
	}
	rs_buf_release(&key);
	return err;
}

/*
 * A store whose FORMAT names another format was written by a newer
 * results: nothing in it may be judged (or collected) by this one's rules.
 */
static int check_census_format(struct rs_remote *remote)
{
	int err = rs_store_read_format(remote);

	if (err == RS_ENOTFOUND) {
		/* Deleted since the listing: as if never listed. */
		rs_error_clear();
		err = 0;
	}
	return err;
}

int rs_store_census_take(struct rs_store_census *c, struct rs_remote *remote)
{
	static const char *const prefixes[] = { RS_KEY_PACKS, RS_KEY_OBJECTS, RS_KEY_TRASH,
						RS_KEY_REMOVED, "gc/", RS_KEY_FORMAT };
	struct census_build b;
	int err = 0;
	size_t i;

	census_clear_listing(c);
	err = rs_store_check_backend(remote);
	if (err)
		return err;
	memset(&b, 0, sizeof(b));
	b.c = c;
	for (i = 0; i < sizeof(prefixes) / sizeof(*prefixes) && !err; i++)
		err = remote->list(remote, prefixes[i], on_key, &b);
	if (!err) {
		merge_packs(c);
		/* qsort(NULL, 0, ...) is undefined: a store may have neither */
		if (c->nobjects)
			qsort(c->objects, c->nobjects, sizeof(*c->objects), id_cmp_v);
		if (c->nremoved)
			qsort(c->removed, c->nremoved, sizeof(*c->removed), id_cmp_v);
		if (c->ntrash)
			qsort(c->trash, c->ntrash, sizeof(*c->trash), id_cmp_v);
		if (c->ntouched)
			qsort(c->touched, c->ntouched, sizeof(*c->touched), id_cmp_v);
		err = c->has_format ? check_census_format(remote) : 0;
	}
	if (!err)
		err = apply_stamps(&b, remote, b.seen, b.nseen, "gc/seen/", 0);
	if (!err)
		err = apply_stamps(&b, remote, b.marked, b.nmarked, "gc/marked/", 1);
	if (!err)
		err = apply_stamps(&b, remote, b.quar, b.nquar, RS_KEY_PACKS, 2);
	if (!err)
		err = apply_stamps(&b, remote, b.sweeping, b.nsweeping, RS_KEY_SWEEPING, 3);
	free(b.seen);
	free(b.marked);
	free(b.quar);
	free(b.sweeping);
	if (err)
		rs_store_census_release(c);
	return err;
}

struct rs_pack_state *rs_store_census_pack(const struct rs_store_census *c,
					   const struct rs_id *id)
{
	struct rs_pack_state key;

	if (!c->npacks)
		return NULL;
	key.id = *id;
	return bsearch(&key, c->packs, c->npacks, sizeof(*c->packs), pack_cmp_v);
}

int rs_store_census_has_object(const struct rs_store_census *c, const struct rs_id *oid)
{
	return c->nobjects && bsearch(oid, c->objects, c->nobjects, sizeof(*oid), id_cmp_v);
}

int rs_store_census_in_trash(const struct rs_store_census *c, const struct rs_id *oid)
{
	return c->ntrash && bsearch(oid, c->trash, c->ntrash, sizeof(*oid), id_cmp_v);
}

int rs_store_census_is_removed(const struct rs_store_census *c, const struct rs_id *oid)
{
	return c->nremoved && bsearch(oid, c->removed, c->nremoved, sizeof(*oid), id_cmp_v);
}

/* `oid` among the `n` sorted ids at `ids`. */
static int has_id(const struct rs_id *ids, size_t n, const struct rs_id *oid)
{
	return n && bsearch(oid, ids, n, sizeof(*oid), id_cmp_v);
}

/* `going` is sorted once the drop step has filled it. */
static int is_going(const struct rs_store_census *c, const struct rs_id *oid)
{
	return has_id(c->going, c->ngoing, oid);
}

const char *rs_verify_state_name(enum rs_verify_state st)
{
	switch (st) {
	case RS_VERIFY_OK: return "ok";
	case RS_VERIFY_MISSING: return "missing";
	case RS_VERIFY_REMOVED: return "removed";
	case RS_VERIFY_INCOMPLETE: return "incomplete";
	case RS_VERIFY_DAMAGED: return "damaged";
	case RS_VERIFY_NEWER: return "newer";
	}
	return "?";
}

/*
 * Read one chunk and check it; 0, RS_ECORRUPT (the chunk is bad: `why`
 * says how) or the remote's error. `raw` receives the raw bytes.
 */
static int read_chunk(struct rs_remote *remote, const struct rs_chunk_ref *ref,
		      struct rs_buf *raw, ZSTD_DCtx *dctx, const char **why)
{
	struct rs_buf key = RS_BUF_INIT, got;
	uint64_t want = RS_PACK_ENTRY_HEADER_SIZE + (uint64_t)ref->stored_len;
	int err;

	*why = NULL;
	rs_buf_init(&got, (size_t)want);
	rs_buf_clear(raw);
	if (rs_chunk_lengths_check(ref->codec, ref->raw_len, ref->stored_len)) {
		rs_error_clear(); /* said through *why */
		*why = "has a length no valid chunk has";
		err = RS_ECORRUPT;
		goto out;
	}
	err = rs_key_pack(&key, &ref->pack);
	if (!err)
		err = remote->get(remote, key.ptr, ref->offset, want, &got);
	if (err == RS_ENOTFOUND || err == RS_ECORRUPT) {
		*why = err == RS_ENOTFOUND ? "is missing: its pack is gone"
					   : "lies past the end of its pack";
		err = RS_ECORRUPT;
		goto out;
	}
	if (err)
		goto out;
	err = rs_buf_grow(raw, ref->raw_len ? ref->raw_len : 1);
	if (err)
		goto out;
	err = rs_chunk_decode((const unsigned char *)got.ptr, got.len, ref, (unsigned char *)raw->ptr,
			      dctx, why);
	if (!err)
		raw->len = ref->raw_len;
out:
	rs_buf_release(&key);
	rs_buf_release(&got);
	return err;
}

/*
 * An object stored with a transform (the session codec): its chunks check
 * out; rebuild it the way a reader does (decode, oid check) into a
 * scratch file that is removed again, so the verdict covers the decoder.
 */
static int verify_decoded(struct rs_remote *remote, const struct rs_manifest *m,
			  enum rs_verify_state *state, struct rs_buf *why)
{
	struct rs_store *store = NULL;
	struct rs_store_options o = { 0 };
	char path[4096];
	const char *tmpdir = getenv("TMPDIR");
	int err, fd;

	snprintf(path, sizeof(path), "%s/results-verify-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return rs_error_errno(RS_EGENERIC, "cannot make a scratch file in '%s'", path);
	close(fd);
	unlink(path);
	o.threads = 1;
	err = rs_store_open(&store, remote, &o);
	if (!err) {
		err = rs_store_get_file(store, &m->oid, m->size, path, NULL, NULL);
		unlink(path);
	}
	rs_store_free(store);
	if (err == RS_ENEWER) {
		*state = RS_VERIFY_NEWER;
		err = rs_buf_printf(why, "needs a newer results: %s", rs_error_message());
	} else if (err == RS_ECORRUPT || err == RS_EUSAGE || err == RS_ETOOBIG || err == RS_EFORMAT) {
		*state = RS_VERIFY_DAMAGED;
		err = rs_buf_printf(why, "its chunks check out but it cannot be rebuilt: %s", rs_error_message());
	}
	return err;
}

/* A chunk failed read_chunk's checks (`why`); `nbad` failed before it. 0 goes on. */
typedef int (*bad_chunk_fn)(void *payload, const struct rs_chunk_ref *ref, const char *why,
			    size_t nbad);

/*
 * Read and check every chunk of `m` in order, hashing them into `whole`
 * (may be NULL) and appending them to `gather` (may be NULL; its cap
 * holds) as long as none has failed. A chunk that fails goes to `bad`;
 * `*nbad` counts them. The one walk for verify and repair.
 */
static int read_chunks(struct rs_remote *remote, const struct rs_manifest *m,
		       struct rs_sha256 *whole, struct rs_buf *gather, bad_chunk_fn bad,
		       void *payload, size_t *nbad)
{
	struct rs_buf raw = RS_BUF_INIT;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	uint32_t i;
	int err = 0;

	*nbad = 0;
	if (!dctx)
		return rs_error_set(RS_EGENERIC, "out of memory reading chunks");
	for (i = 0; i < m->nchunks; i++) {
		const char *why = NULL;

		err = read_chunk(remote, &m->chunks[i], &raw, dctx, &why);
		if (err == RS_ECORRUPT) {
			err = bad(payload, &m->chunks[i], why, (*nbad)++);
			if (err)
				break;
			continue;
		}
		if (err)
			break;
		if (whole && !*nbad)
			rs_sha256_update(whole, raw.ptr, raw.len);
		if (gather && !*nbad) {
			err = rs_buf_put(gather, raw.ptr, raw.len);
			if (err)
				break;
		}
	}
	ZSTD_freeDCtx(dctx);
	rs_buf_release(&raw);
	return err;
}

struct deep_check {
	struct rs_store_census *c;
	struct rs_buf *why;
};

/* A chunk of an object failed its checks: its pack is damaged; the first one says why. */
static int note_bad_chunk(void *payload, const struct rs_chunk_ref *ref, const char *what,
			  size_t nbad)
{
	struct deep_check *d = payload;
	struct rs_pack_state *p = rs_store_census_pack(d->c, &ref->pack);
	char chex[RS_ID_HEXSZ + 1], phex[RS_ID_HEXSZ + 1];

	if (p)
		p->damaged = 1;
	if (nbad)
		return 0;
	rs_id_to_hex(chex, &ref->chunk);
	rs_id_to_hex(phex, &ref->pack);
	return rs_buf_printf(d->why, "chunk %.12s in pack %.12s %s", chex, phex, what);
}

static int verify_deep(struct rs_remote *remote, struct rs_store_census *c,
		       const struct rs_manifest *m, enum rs_verify_state *state, struct rs_buf *why)
{
	struct deep_check d = { c, why };
	struct rs_sha256 *whole = NULL;
	struct rs_id id;
	size_t bad = 0;
	int err;

	if (m->transform == RS_TRANSFORM_IDENTITY) {
		whole = rs_sha256_new();
		if (!whole)
			return rs_error_set(RS_EGENERIC, "out of memory verifying an object");
	}
	err = read_chunks(remote, m, whole, NULL, note_bad_chunk, &d, &bad);
	if (err)
		goto out;
	if (bad) {
		*state = RS_VERIFY_DAMAGED;
		if (bad > 1)
			err = rs_buf_printf(why, " (and %zu more bad chunks)", bad - 1);
		goto out;
	}
	if (!whole) {
		err = verify_decoded(remote, m, state, why);
		goto out;
	}
	rs_sha256_final(whole, &id);
	if (rs_id_cmp(&id, &m->oid)) {
		*state = RS_VERIFY_DAMAGED;
		err = rs_buf_puts(why, "its chunks check out but do not rebuild the object");
	}
out:
	rs_sha256_free(whole);
	return err;
}

int rs_store_verify_object(struct rs_remote *remote, struct rs_store_census *c,
			   const struct rs_id *oid, uint64_t size, int deep,
			   enum rs_verify_state *state, struct rs_buf *why)
{
	struct rs_manifest m;
	int err;
	uint32_t i;

	memset(&m, 0, sizeof(m));
	rs_buf_clear(why);
	*state = RS_VERIFY_OK;
	if (!rs_store_census_has_object(c, oid)) {
		if (rs_store_census_is_removed(c, oid)) {
			struct rs_buf date = RS_BUF_INIT;

			*state = RS_VERIFY_REMOVED;
			err = rs_store_removed_date(remote, oid, &date);
			err = rs_buf_printf(why, "raw session removed by retention on %s; summary kept",
					    err ? "an unknown date" : rs_buf_cstr(&date));
			rs_buf_release(&date);
			return err;
		}
		*state = RS_VERIFY_MISSING;
		return rs_buf_puts(why, "no manifest on the remote: push it from a clone that has it");
	}
	err = rs_store_fetch_manifest(remote, oid, &m);
	if (err == RS_ENEWER) {
		*state = RS_VERIFY_NEWER;
		err = rs_buf_printf(why, "needs a newer results: %s", rs_error_message());
		goto out;
	}
	if (err == RS_ECORRUPT || err == RS_EUSAGE || err == RS_ETOOBIG || err == RS_EFORMAT ||
	    err == RS_ENOTFOUND) {
		*state = err == RS_ENOTFOUND ? RS_VERIFY_MISSING : RS_VERIFY_DAMAGED;
		err = rs_buf_printf(why, "its manifest %s: %s",
				    *state == RS_VERIFY_MISSING ? "vanished" : "is damaged",
				    rs_error_message());
		goto out;
	}
	if (err)
		goto out;
	if (size != UINT64_MAX && m.size != size) {
		*state = RS_VERIFY_DAMAGED;
		err = rs_buf_printf(why, "its manifest describes %" PRIu64 " bytes, the pointer %" PRIu64
				    " (the pointer in the repository is wrong, or the manifest)", m.size, size);
		goto out;
	}
	for (i = 0; i < m.nchunks; i++) {
		struct rs_pack_state *p = rs_store_census_pack(c, &m.chunks[i].pack);
		char phex[RS_ID_HEXSZ + 1];

		if (p && p->has_pack) {
			p->referenced = 1;
			continue;
		}
		rs_id_to_hex(phex, &m.chunks[i].pack);
		*state = RS_VERIFY_INCOMPLETE;
		err = rs_buf_printf(why, "pack %.12s that it names is not on the remote", phex);
		goto out;
	}
	if (deep)
		err = verify_deep(remote, c, &m, state, why);
out:
	rs_manifest_release(&m);
	return err;
}

static int put_stamp(struct rs_remote *remote, const char *prefix, const struct rs_id *id,
		     int64_t now, const char *reason)
{
	struct rs_buf key = RS_BUF_INIT, text = RS_BUF_INIT;
	int err;

	/* The quarantine mark sits beside the pack, where writers list it. */
	err = rs_key_make(&key, prefix, id, strcmp(prefix, RS_KEY_PACKS) ? "" : ".quarantine");
	if (err)
		goto out;
	err = rs_buf_printf(&text, "%" PRId64 "%s%s\n", now, reason ? " " : "", reason ? reason : "");
	if (err)
		goto out;
	err = remote->put_buf(remote, key.ptr, text.ptr, text.len);
out:
	rs_buf_release(&key);
	rs_buf_release(&text);
	return err;
}

/* Delete `prefix<hex id><suffix>`; a key already gone is fine. */
static int del_key(struct rs_remote *remote, const char *prefix, const struct rs_id *id,
		   const char *suffix)
{
	struct rs_buf key = RS_BUF_INIT;
	int err;

	err = rs_key_make(&key, prefix, id, suffix);
	if (!err)
		err = remote->del(remote, key.ptr);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
	}
	rs_buf_release(&key);
	return err;
}

int rs_store_removed_date(struct rs_remote *remote, const struct rs_id *oid, struct rs_buf *date)
{
	struct rs_buf key = RS_BUF_INIT, b;
	const char *p;
	int err;
	size_t n;

	rs_buf_init(&b, STAMP_MAX);
	err = rs_key_make(&key, "removed/", oid, "");
	if (err)
		goto out;
	err = get_small(remote, key.ptr, &b);
	if (err)
		goto out;
	/* "removed-by-retention YYYY-MM-DD..." */
	p = strchr(b.ptr, ' ');
	n = p ? strspn(p + 1, "0123456789-") : 0;
	if (!p || n < 10)
		err = rs_buf_puts(date, "an unknown date");
	else
		err = rs_buf_put(date, p + 1, 10);
out:
	rs_buf_release(&key);
	rs_buf_release(&b);
	return err;
}

static int older(int64_t stamp, const struct rs_gc_options *o)
{
	return stamp && stamp != INT64_MAX && o->now - stamp >= o->grace;
}

/* When retention set `oid` aside: the tombstone's date; INT64_MAX when unreadable (wait). */
static int64_t removed_at(struct rs_remote *remote, const struct rs_id *oid)
{
	struct rs_buf key = RS_BUF_INIT, b;
	struct tm tm;
	int64_t at = INT64_MAX;
	const char *p, *end;

	rs_buf_init(&b, STAMP_MAX);
	memset(&tm, 0, sizeof(tm));
	if (!rs_key_make(&key, RS_KEY_REMOVED, oid, "") && !get_small(remote, key.ptr, &b)) {
		p = strchr(b.ptr, ' ');
		end = p ? strptime(p + 1, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
		if (end)
			at = (int64_t)timegm(&tm);
	}
	rs_error_clear();
	rs_buf_release(&key);
	rs_buf_release(&b);
	return at;
}

/*
 * The touch marks of pushes (gc/touched/<oid>, "<unix seconds> push" as
 * the writer wrote it). The collector keeps its own clock on each: the
 * first run that sees a writer's mark rewrites it "<now> gc"; a mark
 * whose collector's date is G old expires (deleted, and no longer
 * honoured by this run). A writer touching it again starts over. The
 * writer's own date is never trusted: its clock may be anywhere.
 */
static int tend_touches(struct rs_remote *remote, struct rs_store_census *c,
			const struct rs_gc_options *o)
{
	struct rs_buf key = RS_BUF_INIT, b, text = RS_BUF_INIT;
	size_t i, n = 0;
	int err = 0;

	rs_buf_init(&b, STAMP_MAX);
	for (i = 0; i < c->ntouched && !err; i++) {
		long long at = 0;
		char who[8] = "";

		rs_buf_clear(&b);
		err = rs_key_make(&key, RS_KEY_TOUCHED, &c->touched[i], "");
		if (err)
			break;
		err = get_small(remote, key.ptr, &b);
		if (err == RS_ENOTFOUND || err == RS_ECORRUPT) {
			/* Gone meanwhile, or not a mark: honoured this run all the same. */
			rs_error_clear();
			err = 0;
		} else if (err) {
			break;
		} else if (sscanf(b.ptr, "%lld %7s", &at, who) == 2 && !strcmp(who, "gc") &&
			   older((int64_t)at, o)) {
			if (!o->dry_run)
				err = del_key(remote, RS_KEY_TOUCHED, &c->touched[i], "");
			continue; /* expired: not kept in the census */
		} else if (strcmp(who, "gc") && !o->dry_run) {
			rs_buf_clear(&text);
			err = rs_buf_printf(&text, "%" PRId64 " gc\n", o->now);
			if (!err)
				err = remote->put_buf(remote, key.ptr, text.ptr, text.len);
		}
		c->touched[n++] = c->touched[i];
	}
	c->ntouched = n;
	rs_buf_release(&key);
	rs_buf_release(&b);
	rs_buf_release(&text);
	return err;
}

/* A push may have touched `oid` since the census: look again. */
static int touched_now(struct rs_remote *remote, const struct rs_id *oid, int *touched)
{
	struct rs_buf key = RS_BUF_INIT;
	int err;

	*touched = 0;
	err = rs_key_make(&key, RS_KEY_TOUCHED, oid, "");
	if (!err)
		err = rs_store_key_present(remote, key.ptr, touched);
	rs_buf_release(&key);
	return err;
}

/*
 * Bring the set-aside manifest `m` back: objects/<oid> first, then the
 * tombstone goes. The copy in trash/ stays until a later run finds
 * objects/<oid> again (a sweep in progress elsewhere lists objects/, then
 * trash/: the manifest is always in one of them when it looks).
 */
static int restore_manifest(struct rs_remote *remote, const struct rs_manifest *m,
			    struct rs_gc_stats *st)
{
	int err = rs_store_put_manifest(remote, &m->oid, m);

	if (!err)
		err = del_key(remote, RS_KEY_REMOVED, &m->oid, "");
	if (!err)
		st->manifests_restored++;
	return err;
}

/*
 * Set the manifest of `oid` aside (trash/, tombstone, objects/ deleted),
 * then look for a touch: the push and the collector each write, then read
 * what the other writes (the push: its touch, then objects/<oid>; the
 * collector: the deletion, then the touch), so at least one of them sees
 * the other and the manifest stays.
 */
static int set_aside(struct rs_remote *remote, const struct rs_id *oid, const char *date,
		     struct rs_gc_stats *st)
{
	struct rs_buf key = RS_BUF_INIT, text = RS_BUF_INIT;
	struct rs_manifest m;
	int err, touched = 0;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest(remote, oid, &m);
	if (err == RS_ENOTFOUND) {
		/* Deleted meanwhile (another collector): nothing to set aside. */
		rs_error_clear();
		err = 0;
		goto out;
	}
	if (!err)
		err = rs_store_put_manifest_at(remote, RS_KEY_TRASH, oid, &m);
	/* Tombstone before the deletion: a crash between the two leaves a readable object. */
	if (!err)
		err = rs_key_make(&key, RS_KEY_REMOVED, oid, "");
	if (!err)
		err = rs_buf_printf(&text, "removed-by-retention %s\n", date);
	if (!err)
		err = remote->put_buf(remote, key.ptr, text.ptr, text.len);
	if (!err)
		err = del_key(remote, RS_KEY_OBJECTS, oid, "");
	if (!err)
		err = touched_now(remote, oid, &touched);
	if (err)
		goto out;
	if (!touched) {
		st->manifests_removed++;
		goto out;
	}
	st->manifests_touched++;
	err = restore_manifest(remote, &m, st);
out:
	rs_manifest_release(&m);
	rs_buf_release(&key);
	rs_buf_release(&text);
	return err;
}

int rs_store_bring_back(struct rs_remote *remote, const struct rs_store_census *c,
			const struct rs_id *oid)
{
	struct rs_gc_stats st;
	struct rs_manifest m;
	int err;

	if (!has_id(c->trash, c->ntrash, oid))
		return rs_error_set(RS_ENOTFOUND, "no manifest of it is set aside");
	memset(&m, 0, sizeof(m));
	memset(&st, 0, sizeof(st));
	err = rs_store_fetch_manifest_at(remote, RS_KEY_TRASH, oid, &m);
	if (!err)
		err = restore_manifest(remote, &m, &st);
	rs_manifest_release(&m);
	return err;
}

/* One set-aside manifest judged again: back, deleted, or left to wait. */
static int judge_trash(struct rs_remote *remote, struct rs_store_census *c, const struct rs_id *oid,
		       const struct rs_gc_options *o, struct rs_gc_stats *st)
{
	enum rs_gc_verdict v = o->judge ? o->judge(oid, o->judge_payload) : RS_GC_UNKNOWN;
	struct rs_manifest m;
	int err = 0;

	memset(&m, 0, sizeof(m));
	if (rs_store_census_has_object(c, oid)) {
		/* Pushed again or brought back: the copy has served. */
		return o->dry_run ? 0 : del_key(remote, RS_KEY_TRASH, oid, "");
	}
	if (v == RS_GC_KEEP || has_id(c->touched, c->ntouched, oid)) {
		if (o->dry_run) {
			st->manifests_restored++;
			return 0;
		}
		err = rs_store_fetch_manifest_at(remote, RS_KEY_TRASH, oid, &m);
		if (!err)
			err = restore_manifest(remote, &m, st);
		rs_manifest_release(&m);
		return err;
	}
	if (v == RS_GC_DROP && older(removed_at(remote, oid), o)) {
		st->manifests_confirmed++;
		err = rs_array_push_id(&c->going, &c->ngoing, &c->agoing, oid);
		if (!err && !o->dry_run)
			err = del_key(remote, RS_KEY_TRASH, oid, "");
		return err;
	}
	st->manifests_pending++;
	/* Unknown to every run: in doubt it is kept, and not counted as freed. */
	return v == RS_GC_DROP ? rs_array_push_id(&c->going, &c->ngoing, &c->agoing, oid) : 0;
}

int rs_store_gc_drop(struct rs_remote *remote, struct rs_store_census *c,
		     const struct rs_id *drop, size_t ndrop,
		     const struct rs_gc_options *opts, struct rs_gc_stats *stats)
{
	char date[32];
	time_t now = (time_t)opts->now;
	struct tm tm;
	int err = 0;
	size_t i;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	c->ngoing = 0;
	err = tend_touches(remote, c, opts);
	/* The manifests set aside by earlier runs first: this run's join them afterwards. */
	for (i = 0; i < c->ntrash && !err; i++)
		err = judge_trash(remote, c, &c->trash[i], opts, stats);
	for (i = 0; i < ndrop && !err; i++) {
		if (!rs_store_census_has_object(c, &drop[i]))
			continue;
		if (has_id(c->touched, c->ntouched, &drop[i])) {
			stats->manifests_touched++;
			continue;
		}
		if (opts->dry_run) {
			stats->manifests_removed++;
			err = rs_array_push_id(&c->going, &c->ngoing, &c->agoing, &drop[i]);
			continue;
		}
		err = set_aside(remote, &drop[i], date, stats);
		if (!err)
			err = rs_array_push_id(&c->going, &c->ngoing, &c->agoing, &drop[i]);
	}
	if (!err && !opts->dry_run)
		err = rs_store_census_take(c, remote);
	if (!err && c->ngoing)
		qsort(c->going, c->ngoing, sizeof(*c->going), id_cmp_v);
	return err;
}

/* The packs manifest `oid` (under `prefix`) names are referenced; 0 when it is gone meanwhile. */
static int reference_manifest(struct rs_remote *remote, struct rs_store_census *c,
			      const char *prefix, const struct rs_id *oid)
{
	struct rs_manifest m;
	int err, kept = !is_going(c, oid);
	uint32_t k;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest_at(remote, prefix, oid, &m);
	if (err == RS_ENOTFOUND) {
		/* Deleted or moved meanwhile (another collector): it references nothing here. */
		rs_error_clear();
		return 0;
	}
	if (err) {
		char hex[RS_ID_HEXSZ + 1];

		rs_id_to_hex(hex, oid);
		/* A manifest we cannot read may reference anything: collect nothing. */
		return rs_error_wrap(err, "cannot read the manifest of %.12s, so nothing can be collected safely "
				     "(run 'results verify --deep')", hex);
	}
	for (k = 0; k < m.nchunks; k++) {
		struct rs_pack_state *p = rs_store_census_pack(c, &m.chunks[k].pack);

		if (p) {
			p->referenced = 1;
			p->kept_ref |= kept;
			p->ref_bytes += RS_PACK_ENTRY_HEADER_SIZE + (uint64_t)m.chunks[k].stored_len;
		}
	}
	rs_manifest_release(&m);
	return 0;
}

/*
 * Every manifest (objects/ and trash/) in `c` that a newer results
 * wrote: RS_ENEWER for the first, before this run writes anything (a
 * touch mark, a tombstone, a sweeping mark), as such a manifest may name
 * any pack. Other failures to read one are left to step 2, which says
 * so and collects nothing.
 */
static int check_newer(struct rs_remote *remote, const char *prefix, const struct rs_id *oid)
{
	struct rs_manifest m;
	char hex[RS_ID_HEXSZ + 1];
	int err;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest_at(remote, prefix, oid, &m);
	rs_manifest_release(&m);
	if (err != RS_ENEWER) {
		rs_error_clear();
		return 0;
	}
	rs_id_to_hex(hex, oid);
	return rs_error_wrap(err, "the manifest of %.12s needs a newer results, so nothing can be "
			     "collected safely", hex);
}

int rs_store_gc_check_newer(struct rs_remote *remote, const struct rs_store_census *c)
{
	size_t i;
	int err = 0;

	for (i = 0; i < c->nobjects && !err; i++)
		err = check_newer(remote, RS_KEY_OBJECTS, &c->objects[i]);
	for (i = 0; i < c->ntrash && !err; i++)
		err = check_newer(remote, RS_KEY_TRASH, &c->trash[i]);
	return err;
}

/*
 * Step 2: every manifest's packs are referenced, those in objects/ and
 * those set aside in trash/ (which may come back); count their bytes.
 */
static int collect_references(struct rs_remote *remote, struct rs_store_census *c)
{
	size_t i;
	int err = 0;

	for (i = 0; i < c->npacks; i++) {
		c->packs[i].referenced = 0;
		c->packs[i].kept_ref = 0;
		c->packs[i].ref_bytes = 0;
	}
	for (i = 0; i < c->nobjects && !err; i++)
		err = reference_manifest(remote, c, RS_KEY_OBJECTS, &c->objects[i]);
	for (i = 0; i < c->ntrash && !err; i++)
		err = reference_manifest(remote, c, RS_KEY_TRASH, &c->trash[i]);
	return err;
}

/* Read the entry header at `off` of pack `p` (key `key`) into `r`. */
static int read_entry_header(struct rs_remote *remote, const struct rs_pack_state *p,
			     const char *key, uint64_t off, struct rs_buf *head,
			     struct rs_chunk_ref *r)
{
	const unsigned char *h;
	int err;

	rs_buf_clear(head);
	err = remote->get(remote, key, off, RS_PACK_ENTRY_HEADER_SIZE, head);
	if (err)
		return err;
	if (head->len != RS_PACK_ENTRY_HEADER_SIZE)
		return rs_error_set(RS_ECORRUPT, "pack '%s' answered a short entry header", key);
	h = (const unsigned char *)head->ptr;
	memset(r, 0, sizeof(*r));
	memcpy(r->chunk.id, h, RS_ID_RAWSZ);
	r->pack = p->id;
	r->offset = off;
	r->raw_len = rs_get_le32(h + 32);
	r->stored_len = rs_get_le32(h + 36);
	r->codec = h[40];
	err = rs_chunk_lengths_check(r->codec, r->raw_len, r->stored_len);
	if (err)
		return rs_error_wrap(err, "pack '%s' has an invalid entry at offset %" PRIu64, key, off);
	if (!rs_all_zero(h + 41, 7))
		return rs_error_set(RS_ECORRUPT, "pack '%s' has reserved bytes set in the entry at "
				    "offset %" PRIu64, key, off);
	return 0;
}

/* Read and check the header of pack `p` (key `key`): magic, version, reserved. */
static int read_pack_header(struct rs_remote *remote, const struct rs_pack_state *p,
			    const char *key, struct rs_buf *head)
{
	int err;

	rs_buf_clear(head);
	if (p->pack_size < RS_PACK_HEADER_SIZE)
		return rs_error_set(RS_ECORRUPT, "pack '%s' is shorter than a pack header", key);
	err = remote->get(remote, key, 0, RS_PACK_HEADER_SIZE, head);
	if (err)
		return err;
	err = rs_pack_header_check((const unsigned char *)head->ptr, head->len);
	if (err)
		return rs_error_wrap(err, "pack '%s'", key);
	return 0;
}

/* Walk pack `p` (key `key`) entry by entry: its entries into `*refs` (the caller's). */
static int walk_pack(struct rs_remote *remote, const struct rs_pack_state *p, const char *key,
		     struct rs_chunk_ref **refs, size_t *n)
{
	struct rs_buf head;
	size_t alloc = 0;
	uint64_t off = RS_PACK_HEADER_SIZE;
	int err = 0;

	rs_buf_init(&head, RS_PACK_ENTRY_HEADER_SIZE);
	err = read_pack_header(remote, p, key, &head);
	if (err)
		goto out;
	while (off < p->pack_size) {
		if (off + RS_PACK_ENTRY_HEADER_SIZE > p->pack_size || *n >= PACK_ENTRIES_MAX)
			break; /* "ends inside an entry", below */
		err = rs_array_grow(refs, &alloc, *n + 1, sizeof(**refs), 64);
		if (err)
			goto out;
		err = read_entry_header(remote, p, key, off, &head, &(*refs)[*n]);
		if (err)
			goto out;
		off += RS_PACK_ENTRY_HEADER_SIZE + (uint64_t)(*refs)[(*n)++].stored_len;
	}
	if (off != p->pack_size)
		err = rs_error_set(RS_ECORRUPT, "pack '%s' ends inside an entry", key);
out:
	rs_buf_release(&head);
	return err;
}

/*
 * Rebuild the .idx of pack `p` from the pack itself (its entry headers)
 * and upload it. The pack id comes from the file name.
 */
static int rebuild_idx(struct rs_remote *remote, const struct rs_pack_state *p)
{
	struct rs_buf key = RS_BUF_INIT, idx = RS_BUF_INIT;
	struct rs_chunk_ref *refs = NULL;
	size_t n = 0;
	int err;

	err = rs_key_pack(&key, &p->id);
	if (err)
		goto out;
	err = walk_pack(remote, p, key.ptr, &refs, &n);
	if (err)
		goto out;
	err = rs_idx_encode(&idx, &p->id, refs, n);
	if (err)
		goto out;
	err = rs_key_idx(&key, &p->id);
	if (err)
		goto out;
	err = remote->put_buf(remote, key.ptr, idx.ptr, idx.len);
out:
	free(refs);
	rs_buf_release(&key);
	rs_buf_release(&idx);
	return err;
}

/* The collector's bookkeeping of a pack that is gone: its marks and quarantine. */
static int drop_bookkeeping(struct rs_remote *remote, const struct rs_id *id)
{
	int err;

	err = del_key(remote, "gc/marked/", id, "");
	if (err)
		return err;
	err = del_key(remote, "gc/seen/", id, "");
	if (err)
		return err;
	err = del_key(remote, RS_KEY_PACKS, id, ".quarantine");
	if (err)
		return err;
	return del_key(remote, RS_KEY_SWEEPING, id, "");
}

/* Step 3, no .pack listed: an orphan .idx (an interrupted sweep), and leftover bookkeeping. */
static int collect_unlisted(struct rs_remote *remote, const struct rs_pack_state *p,
			    const struct rs_gc_options *o, struct rs_gc_stats *st)
{
	int err;

	if (p->has_idx) {
		st->orphan_indexes++;
		if (!o->dry_run) {
			err = del_key(remote, RS_KEY_PACKS, &p->id, ".idx");
			if (err)
				return err;
		}
	}
	if (o->dry_run || !(p->seen_at || p->marked_at || p->quarantined || p->sweeping_at))
		return 0;
	return drop_bookkeeping(remote, &p->id);
}

/* Step 3, a referenced pack: rescue it if it was marked, stop its clock. */
static int collect_referenced(struct rs_remote *remote, const struct rs_pack_state *p,
			      const struct rs_gc_options *o, struct rs_gc_stats *st)
{
	int err;

	if (!p->kept_ref)
		st->bytes_pending += p->pack_size;
	/* A sweep that began G ago and never finished (killed): its mark goes. */
	if (older(p->sweeping_at, o) && !o->dry_run) {
		err = del_key(remote, RS_KEY_SWEEPING, &p->id, "");
		if (err)
			return err;
	}
	if (!p->has_idx && !p->quarantined) {
		st->packs_rescued++;
		if (o->dry_run)
			return 0;
		err = rebuild_idx(remote, p);
		if (err)
			return err;
		err = del_key(remote, "gc/marked/", &p->id, "");
		if (err)
			return err;
	}
	if (o->dry_run || !p->seen_at)
		return 0;
	return del_key(remote, "gc/seen/", &p->id, "");
}

/*
 * Step 3, an unreferenced pack. Its clock is gc/seen while it has an
 * .idx (then it is marked: gc/marked written, .idx deleted) and gc/marked
 * once it has none (then it is swept): start the clock, wait, or act once
 * the clock is older than G.
 */
static int collect_unreferenced(struct rs_remote *remote, struct rs_pack_state *p,
				const struct rs_gc_options *o, struct rs_gc_stats *st)
{
	int64_t clock = p->has_idx ? p->seen_at : p->marked_at;
	int err;

	st->bytes_unreferenced += p->pack_size;
	if (!clock) {
		st->packs_started++;
		if (o->dry_run)
			return 0;
		return put_stamp(remote, p->has_idx ? "gc/seen/" : "gc/marked/", &p->id, o->now, NULL);
	}
	if (!older(clock, o)) {
		st->packs_waiting++;
		return 0;
	}
	if (p->has_idx) {
		st->packs_marked++;
		if (o->dry_run)
			return 0;
		err = put_stamp(remote, "gc/marked/", &p->id, o->now, NULL);
		if (err)
			return err;
		return del_key(remote, RS_KEY_PACKS, &p->id, ".idx");
	}
	if (o->dry_run) {
		st->packs_swept++;
		st->bytes_swept += p->pack_size;
		return 0;
	}
	p->sweep = 1; /* by sweep_packs, once every pack was seen */
	return 0;
}

/*
 * The sweep itself, for the packs collect_unreferenced found due: write
 * gc/sweeping/<id> for each, read every manifest again (objects/, then
 * trash/), and delete only the packs that none names now, then their
 * bookkeeping. A writer publishes its manifest, then reads gc/sweeping/
 * and lists its packs (store.c, confirm_packs): whichever of the two
 * comes second sees the other, so a pack a new manifest names is either
 * spared here or replaced by its writer, whatever the clocks say.
 */
static int sweep_packs(struct rs_remote *remote, struct rs_store_census *c,
		       const struct rs_gc_options *o, struct rs_gc_stats *st)
{
	struct rs_store_census again = RS_STORE_CENSUS_INIT;
	size_t i, due = 0;
	int err = 0;

	for (i = 0; i < c->npacks && !err; i++) {
		if (!c->packs[i].sweep)
			continue;
		due++;
		err = put_stamp(remote, RS_KEY_SWEEPING, &c->packs[i].id, o->now, NULL);
	}
	if (err || !due)
		return err;
	err = rs_store_census_take(&again, remote);
	if (!err)
		err = collect_references(remote, &again);
	for (i = 0; i < c->npacks && !err; i++) {
		struct rs_pack_state *p = &c->packs[i], *now;

		if (!p->sweep)
			continue;
		now = rs_store_census_pack(&again, &p->id);
		if (now && now->referenced) {
			/* Named meanwhile: the next run rescues it. */
			st->packs_spared++;
			err = del_key(remote, RS_KEY_SWEEPING, &p->id, "");
			continue;
		}
		err = del_key(remote, RS_KEY_PACKS, &p->id, ".pack");
		if (!err)
			err = drop_bookkeeping(remote, &p->id);
		if (!err) {
			st->packs_swept++;
			st->bytes_swept += p->pack_size;
		}
	}
	rs_store_census_release(&again);
	return err;
}

/* Step 3 for one pack. */
static int collect_pack(struct rs_remote *remote, struct rs_pack_state *p,
			const struct rs_gc_options *o, struct rs_gc_stats *st)
{
	if (!p->has_pack)
		return collect_unlisted(remote, p, o, st);
	st->packs++;
	if (p->referenced)
		return collect_referenced(remote, p, o, st);
	return collect_unreferenced(remote, p, o, st);
}

/* A chunk moved by a repack: its reference in the old pack, and where it is now. */
struct moved {
	struct rs_chunk_ref ref;
	uint64_t new_offset;
};

static int moved_cmp(const void *a, const void *b)
{
	const struct moved *x = a, *y = b;

	return x->ref.offset < y->ref.offset ? -1 : x->ref.offset > y->ref.offset;
}

/* One repack of pack `old` into the new pack `id`. */
struct repack {
	struct rs_remote *remote;
	const struct rs_store_census *c;
	const struct rs_pack_state *old;
	struct rs_id id;
	struct moved *mv;   /* the entries manifests reference, each once */
	size_t nmv, amv;
	struct rs_buf pack; /* the new pack's bytes */
};

/* Add the references of `m` into the old pack, each entry once. */
static int repack_note(struct repack *rp, const struct rs_manifest *m)
{
	uint32_t k;
	int err;

	for (k = 0; k < m->nchunks; k++) {
		size_t j;
		int dup = 0;

		if (rs_id_cmp(&m->chunks[k].pack, &rp->old->id))
			continue;
		for (j = 0; j < rp->nmv && !dup; j++)
			dup = rp->mv[j].ref.offset == m->chunks[k].offset;
		if (dup)
			continue;
		err = rs_array_grow(&rp->mv, &rp->amv, rp->nmv + 1, sizeof(*rp->mv), 64);
		if (err)
			return err;
		rp->mv[rp->nmv].ref = m->chunks[k];
		rp->mv[rp->nmv++].new_offset = 0;
	}
	return 0;
}

/* Which entries of the old pack are referenced: from every manifest. */
static int repack_find(struct repack *rp)
{
	size_t i;
	int err;

	for (i = 0; i < rp->c->nobjects; i++) {
		struct rs_manifest m;

		memset(&m, 0, sizeof(m));
		err = rs_store_fetch_manifest(rp->remote, &rp->c->objects[i], &m);
		if (!err)
			err = repack_note(rp, &m);
		rs_manifest_release(&m);
		if (err)
			return err;
	}
	return 0;
}

/* Check one entry, then append it as stored to the new pack. */
static int repack_copy_entry(struct repack *rp, struct moved *mv, ZSTD_DCtx *dctx,
			     struct rs_buf *raw, struct rs_buf *entry, struct rs_buf *key)
{
	const char *why = NULL;
	int err;

	err = read_chunk(rp->remote, &mv->ref, raw, dctx, &why);
	if (err == RS_ECORRUPT)
		return rs_error_set(RS_ECORRUPT, "cannot repack: a chunk %s", why);
	if (err)
		return err;
	rs_buf_clear(entry);
	err = rs_key_pack(key, &mv->ref.pack);
	if (err)
		return err;
	err = rp->remote->get(rp->remote, key->ptr, mv->ref.offset,
			      RS_PACK_ENTRY_HEADER_SIZE + (uint64_t)mv->ref.stored_len, entry);
	if (err)
		return err;
	mv->new_offset = rp->pack.len;
	return rs_buf_put(&rp->pack, entry->ptr, entry->len);
}

/* Copy the referenced entries, checked, into the new pack, in their old order. */
static int repack_copy(struct repack *rp)
{
	struct rs_buf key = RS_BUF_INIT, entry = RS_BUF_INIT, raw = RS_BUF_INIT;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	unsigned char hdr[RS_PACK_HEADER_SIZE];
	size_t i;
	int err;

	if (!dctx)
		return rs_error_set(RS_EGENERIC, "out of memory");
	qsort(rp->mv, rp->nmv, sizeof(*rp->mv), moved_cmp);
	rs_pack_header(hdr);
	err = rs_buf_put(&rp->pack, hdr, sizeof(hdr));
	for (i = 0; !err && i < rp->nmv; i++)
		err = repack_copy_entry(rp, &rp->mv[i], dctx, &raw, &entry, &key);
	ZSTD_freeDCtx(dctx);
	rs_buf_release(&key);
	rs_buf_release(&entry);
	rs_buf_release(&raw);
	return err;
}

/* Upload the new pack, then its index. */
static int repack_send(struct repack *rp)
{
	struct rs_buf key = RS_BUF_INIT, idx = RS_BUF_INIT;
	struct rs_chunk_ref *refs = calloc(rp->nmv, sizeof(*refs));
	size_t i;
	int err;

	if (!refs)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < rp->nmv; i++) {
		refs[i] = rp->mv[i].ref;
		refs[i].pack = rp->id;
		refs[i].offset = rp->mv[i].new_offset;
	}
	err = rs_idx_encode(&idx, &rp->id, refs, rp->nmv);
	if (err)
		goto out;
	err = rs_key_pack(&key, &rp->id);
	if (err)
		goto out;
	err = rp->remote->put_buf(rp->remote, key.ptr, rp->pack.ptr, rp->pack.len);
	if (err)
		goto out;
	err = rs_key_idx(&key, &rp->id);
	if (err)
		goto out;
	err = rp->remote->put_buf(rp->remote, key.ptr, idx.ptr, idx.len);
out:
	free(refs);
	rs_buf_release(&key);
	rs_buf_release(&idx);
	return err;
}

/* Rewrite the manifest of `oid` if it points into the old pack. */
static int repack_repoint(struct repack *rp, const struct rs_id *oid)
{
	struct rs_manifest m;
	uint32_t k;
	int err, touched = 0;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest(rp->remote, oid, &m);
	if (err)
		goto out;
	for (k = 0; k < m.nchunks; k++) {
		struct moved probe, *hit;

		if (rs_id_cmp(&m.chunks[k].pack, &rp->old->id))
			continue;
		probe.ref.offset = m.chunks[k].offset;
		hit = bsearch(&probe, rp->mv, rp->nmv, sizeof(*rp->mv), moved_cmp);
		if (!hit)
			continue;
		m.chunks[k].pack = rp->id;
		m.chunks[k].offset = hit->new_offset;
		touched = 1;
	}
	if (touched)
		err = rs_store_put_manifest(rp->remote, oid, &m);
out:
	rs_manifest_release(&m);
	return err;
}

/*
 * Step 5 for one pack: copy the entries that manifests reference into a
 * new pack (and its index), then rewrite every manifest that pointed into
 * the old one. The old pack is then unreferenced and collected by later
 * runs. The entries are copied as stored (no recompression) after their
 * header and chunk id were checked; a bad one stops the repack and leaves
 * everything as it was (verify --deep finds it). Pack, then index, then
 * manifests: each step leaves a valid store.
 */
static int repack_one(struct rs_remote *remote, struct rs_store_census *c,
		      const struct rs_pack_state *p, struct rs_gc_stats *st)
{
	struct repack rp;
	size_t i;
	int err;

	memset(&rp, 0, sizeof(rp));
	rp.remote = remote;
	rp.c = c;
	rp.old = p;
	if (RAND_bytes(rp.id.id, sizeof(rp.id.id)) != 1) {
		err = rs_error_set(RS_EGENERIC, "no random bytes for a pack id");
		goto out;
	}
	err = repack_find(&rp);
	if (err || !rp.nmv)
		goto out;
	err = repack_copy(&rp);
	if (err)
		goto out;
	err = repack_send(&rp);
	for (i = 0; !err && i < c->nobjects; i++)
		err = repack_repoint(&rp, &c->objects[i]);
	if (err)
		goto out;
	st->packs_repacked++;
	st->bytes_repacked += p->pack_size - rp.pack.len;
out:
	free(rp.mv);
	rs_buf_release(&rp.pack);
	return err;
}

int rs_store_gc_collect(struct rs_remote *remote, struct rs_store_census *c,
			const struct rs_gc_options *opts, struct rs_gc_stats *stats)
{
	int err = collect_references(remote, c);
	size_t i, n;

	for (i = 0; i < c->npacks && !err; i++)
		err = collect_pack(remote, &c->packs[i], opts, stats);
	if (!err)
		err = sweep_packs(remote, c, opts, stats);
	if (err || opts->repack <= 0)
		return err;
	/* Repack after collecting: the census' packs are not touched by it. */
	n = c->npacks;
	for (i = 0; i < n && !err; i++) {
		const struct rs_pack_state *p = &c->packs[i];

		if (!p->has_pack || !p->has_idx || !p->referenced || p->quarantined || !p->pack_size ||
		    (double)p->ref_bytes >= opts->repack * (double)p->pack_size)
			continue;
		if (opts->dry_run) {
			stats->packs_repacked++;
			stats->bytes_repacked += p->pack_size - RS_PACK_HEADER_SIZE - p->ref_bytes;
			continue;
		}
		err = repack_one(remote, c, p, stats);
	}
	return err;
}

int rs_store_quarantine(struct rs_remote *remote, const struct rs_id *id,
			const char *reason, int64_t now)
{
	int err = put_stamp(remote, RS_KEY_PACKS, id, now, reason);

	if (!err)
		err = del_key(remote, RS_KEY_PACKS, id, ".idx");
	return err;
}

static int bad_pack(const struct rs_store_census *c, const struct rs_id *id)
{
	const struct rs_pack_state *p = rs_store_census_pack(c, id);

	return !p || !p->has_pack || p->quarantined || p->damaged;
}

/*
 * Point every reference of `m` into a bad pack at a good copy of its
 * chunk, looked up among the packs that have an index.
 */
static int repoint_refs(struct rs_remote *remote, const struct rs_store_census *c,
			struct rs_manifest *m)
{
	struct rs_chunk_index *ix = NULL;
	uint32_t i;
	int err;

	err = rs_chunk_index_open(&ix, NULL);
	if (err)
		return err;
	err = rs_chunk_index_refresh(ix, remote);
	for (i = 0; !err && i < m->nchunks; i++) {
		struct rs_chunk_ref good;
		char hex[RS_ID_HEXSZ + 1];

		if (!bad_pack(c, &m->chunks[i].pack))
			continue;
		if (!rs_chunk_index_lookup(ix, &m->chunks[i].chunk, &good) && !bad_pack(c, &good.pack)) {
			m->chunks[i] = good;
			continue;
		}
		rs_id_to_hex(hex, &m->chunks[i].chunk);
		err = rs_error_set(RS_ENOTFOUND, "no good copy of chunk %.12s is on the remote", hex);
	}
	rs_chunk_index_free(ix);
	return err;
}

static int replacement_bad(void *payload, const struct rs_chunk_ref *ref, const char *why,
			   size_t nbad)
{
	(void)payload;
	(void)ref;
	(void)nbad;
	return rs_error_set(RS_ENOTFOUND, "the replacement chunk %s", why);
}

struct proof_sink {
	struct rs_sha256 *whole;
	uint64_t n;
};

static int proof_write(void *ctx, const void *p, size_t n)
{
	struct proof_sink *k = ctx;

	rs_sha256_update(k->whole, p, n);
	k->n += n;
	return 0;
}

/*
 * Prove a manifest before writing it: read every chunk back, undo the
 * transform as a reader does (transform 1: decode the session container,
 * capped at the object's size), and hash the object against `oid`.
 * RS_ENOTFOUND, naming what failed, when it does not rebuild. The
 * container is held whole, as a reader's get holds it, because the
 * decoder needs it whole: it is about 1/400 of its session, and capped
 * (RS_CODEC_MAX_CONTAINER) before a byte is read; the session itself
 * is only hashed as it is decoded.
 */
static int prove_manifest(struct rs_remote *remote, const struct rs_manifest *m,
			  const struct rs_id *oid)
{
	struct rs_sha256 *whole = rs_sha256_new();
	struct proof_sink sink = { whole, 0 };
	struct rs_buf container;
	int session = m->transform == RS_TRANSFORM_SESSION;
	struct rs_id got;
	size_t bad = 0;
	int err;

	rs_buf_init(&container, RS_CODEC_MAX_CONTAINER);
	if (!whole)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (session && m->transformed_size > RS_CODEC_MAX_CONTAINER) {
		err = rs_error_set(RS_ENOTFOUND, "its session container is larger than any valid one");
		goto out;
	}
	err = read_chunks(remote, m, session ? NULL : whole, session ? &container : NULL,
			  replacement_bad, NULL, &bad);
	if (err)
		goto out;
	if (session) {
		err = rs_codec_decode((const unsigned char *)container.ptr, container.len, m->size,
				      proof_write, &sink);
		if (err == RS_ECORRUPT)
			err = rs_error_wrap(RS_ENOTFOUND, "the good chunks do not decode");
		if (err)
			goto out;
	} else {
		sink.n = m->transformed_size;
	}
	rs_sha256_final(whole, &got);
	if (sink.n != m->size || rs_id_cmp(&got, oid))
		err = rs_error_set(RS_ENOTFOUND, "the good chunks do not rebuild the object");
out:
	rs_buf_release(&container);
	rs_sha256_free(whole);
	return err;
}

int rs_store_repoint(struct rs_remote *remote, struct rs_store_census *c,
		     const struct rs_id *oid)
{
	struct rs_manifest m;
	int err;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest(remote, oid, &m);
	if (err)
		goto out;
	err = repoint_refs(remote, c, &m);
	if (err)
		goto out;
	err = prove_manifest(remote, &m, oid);
	if (err)
		goto out;
	err = rs_store_put_manifest(remote, oid, &m);
out:
	rs_manifest_release(&m);
	return err;
}
