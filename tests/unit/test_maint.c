/*
 * Store maintenance on a folder remote: verify (shallow and deep), the
 * gc protocol step by step (clock, mark, sweep, rescue of a pack that a
 * push in flight came to reference), gc interrupted after every write and
 * run again, and repair of a damaged pack that a later push borrowed from.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/remote.h"
#include "store/format.h"
#include "store/maint.h"
#include "store/store.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"
#include "util/hash.h"

#include "store_fixture.h"

static int setup(void **state)
{
	return store_fixture_setup(state, "maint", STORE_FIXTURE_MKDIR | STORE_FIXTURE_ENV_URL);
}

static int teardown(void **state)
{
	return store_fixture_teardown(state);
}

/* `n` incompressible bytes from `seed`, optionally after the bytes of `prefix_file`. */
static void write_file(const char *path, size_t n, uint64_t seed, const char *prefix_file)
{
	FILE *out = fopen(path, "wb");
	size_t i;

	assert_non_null(out);
	if (prefix_file) {
		struct rs_buf b = RS_BUF_INIT;

		assert_int_equal(rs_fs_read_file(&b, prefix_file, 1u << 30), 0);
		assert_int_equal(fwrite(b.ptr, 1, b.len, out), b.len);
		rs_buf_release(&b);
	}
	for (i = 0; i < n; i += 8) {
		uint64_t v = test_splitmix(&seed);

		assert_int_equal(fwrite(&v, 1, 8, out), 8);
	}
	assert_int_equal(fclose(out), 0);
}

static void put(struct store_fixture *f, const char *name, size_t n, uint64_t seed,
		const char *prefix_file, struct rs_id *oid, uint64_t *size)
{
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	write_file(path, n, seed, prefix_file);
	test_file_id(path, oid, size);
	o.cache_dir = f->cache_dir;
	o.threads = 2;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	assert_int_equal(rs_store_put_file(s, oid, *size, path, NULL, NULL, NULL), 0);
	rs_store_free(s);
}

/* 0 when `oid` reads back equal to the file `name`. */
static int get_equals(struct store_fixture *f, const struct rs_id *oid, uint64_t size, const char *name)
{
	struct rs_store *s = NULL;
	char src[400], dst[400];
	int err;

	snprintf(src, sizeof(src), "%s/%s", f->dir, name);
	snprintf(dst, sizeof(dst), "%s/%s.out", f->dir, name);
	assert_int_equal(rs_store_open(&s, f->remote, NULL), 0);
	err = rs_store_get_file(s, oid, size, dst, NULL, NULL);
	if (err)
		fprintf(stderr, "get: %s\n", rs_error_message());
	rs_store_free(s);
	if (!err)
		err = test_files_equal(src, dst) ? 0 : -100;
	unlink(dst);
	return err;
}

static int exists(struct store_fixture *f, const char *key)
{
	uint64_t n;

	return f->remote->stat(f->remote, key, &n) == 0;
}

static void pack_key(char *out, size_t n, const struct rs_id *id, const char *ext)
{
	char hex[RS_ID_HEXSZ + 1];

	rs_id_to_hex(hex, id);
	snprintf(out, n, "packs/%s.%s", hex, ext);
}

/* The only pack the census holds that is not in `not` (NULL: the first). */
static struct rs_id only_new_pack(const struct rs_store_census *c, const struct rs_id *not)
{
	size_t i;

	for (i = 0; i < c->npacks; i++)
		if (!not || rs_id_cmp(&c->packs[i].id, not))
			return c->packs[i].id;
	fail_msg("no new pack");
	return c->packs[0].id;
}

/* The only pack on the remote that is not `not` (NULL: the first). */
static struct rs_id remote_new_pack(struct store_fixture *f, const struct rs_id *not)
{
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	struct rs_id id;

	assert_int_equal(rs_store_census_take(&c, f->remote), 0);
	id = only_new_pack(&c, not);
	rs_store_census_release(&c);
	return id;
}

/* Byte `at` of `pack`'s .pack file (its key in `key`, kn bytes) made `byte`. */
static void overwrite_pack_byte(struct store_fixture *f, const struct rs_id *pack, long at, int byte,
				char *key, size_t kn)
{
	char path[1000];
	FILE *fp;

	pack_key(key, kn, pack, "pack");
	snprintf(path, sizeof(path), "%s/%s", f->remote_dir, key);
	fp = fopen(path, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, at, SEEK_SET), 0);
	assert_int_equal(fputc(byte, fp) == EOF, 0);
	assert_int_equal(fclose(fp), 0);
}

static enum rs_verify_state verify(struct store_fixture *f, const struct rs_id *oid, uint64_t size, int deep)
{
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	struct rs_buf why = RS_BUF_INIT;
	enum rs_verify_state st = RS_VERIFY_OK;

	assert_int_equal(rs_store_census_take(&c, f->remote), 0);
	assert_int_equal(rs_store_verify_object(f->remote, &c, oid, size, deep, &st, &why), 0);
	rs_buf_release(&why);
	rs_store_census_release(&c);
	return st;
}

/* The policy of these tests: what was dropped stays dropped. */
static enum rs_gc_verdict judge_drop(const struct rs_id *oid, void *payload)
{
	(void)oid;
	(void)payload;
	return RS_GC_DROP;
}

/* One gc run through `remote` at `now` with grace `grace`, what was dropped dropped again. */
static void gc_through(struct rs_remote *remote, int64_t now, int64_t grace, const struct rs_id *drop,
		       size_t ndrop, struct rs_gc_stats *st)
{
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	struct rs_gc_options o = { 0 };

	o.now = now;
	o.grace = grace;
	o.judge = judge_drop;
	memset(st, 0, sizeof(*st));
	assert_int_equal(rs_store_census_take(&c, remote), 0);
	assert_int_equal(rs_store_gc_drop(remote, &c, drop, ndrop, &o, st), 0);
	assert_int_equal(rs_store_gc_collect(remote, &c, &o, st), 0);
	rs_store_census_release(&c);
}

static void gc(struct store_fixture *f, int64_t now, const struct rs_id *drop, size_t ndrop,
	       struct rs_gc_stats *st)
{
	gc_through(f->remote, now, 100, drop, ndrop, st);
}

static void test_verify_finds_each_kind_of_damage(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	struct rs_id a, pack, missing;
	uint64_t asize;
	char key[300];

	put(f, "a", 5u << 20, 1, NULL, &a, &asize);
	assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_OK);
	assert_int_equal(verify(f, &a, asize, 1), RS_VERIFY_OK);
	/* The pointer says another size: damaged, and the report names the pointer. */
	assert_int_equal(verify(f, &a, asize + 1, 0), RS_VERIFY_DAMAGED);
	memset(&missing, 7, sizeof(missing));
	assert_int_equal(verify(f, &missing, 10, 0), RS_VERIFY_MISSING);

	/* A flipped byte in the pack: shallow verify cannot see it, deep does. */
	assert_int_equal(rs_store_census_take(&c, f->remote), 0);
	assert_int_equal(c.npacks, 1);
	pack = c.packs[0].id;
	rs_store_census_release(&c);
	overwrite_pack_byte(f, &pack, 4096, 0x5a ^ 0xff, key, sizeof(key));
	assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_OK);
	assert_int_equal(verify(f, &a, asize, 1), RS_VERIFY_DAMAGED);

	/* The pack gone: incomplete, without reading a chunk. */
	assert_int_equal(f->remote->del(f->remote, key), 0);
	assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_INCOMPLETE);
}

static void test_gc_clock_mark_sweep(void **state)
{
	struct store_fixture *f = *state;
	struct rs_gc_stats st;
	struct rs_id a, b, apack;
	struct rs_buf date = RS_BUF_INIT;
	uint64_t asize, bsize;
	char pk[300], ik[300];

	put(f, "a", 4u << 20, 11, NULL, &a, &asize);
	apack = remote_new_pack(f, NULL);
	put(f, "b", 4u << 20, 12, NULL, &b, &bsize);
	pack_key(pk, sizeof(pk), &apack, "pack");
	pack_key(ik, sizeof(ik), &apack, "idx");

	/*
	 * Drop a: the tombstone says so, the manifest is set aside (its pack
	 * still referenced, and counted as freed later), nothing is deleted.
	 */
	gc(f, 1000, &a, 1, &st);
	assert_int_equal(st.manifests_removed, 1);
	assert_int_equal(st.packs_started, 0);
	assert_true(st.bytes_pending > 0);
	assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_REMOVED);
	assert_int_equal(rs_store_removed_date(f->remote, &a, &date), 0);
	assert_string_equal(rs_buf_cstr(&date), "1970-01-01");
	assert_true(exists(f, pk) && exists(f, ik));
	/* Within the grace period: the set-aside manifest waits. */
	gc(f, 1099, NULL, 0, &st);
	assert_int_equal(st.manifests_pending, 1);
	assert_int_equal(st.packs_started, 0);
	/* After it: deleted for good, and the pack's clock starts. */
	gc(f, 1100, NULL, 0, &st);
	assert_int_equal(st.manifests_confirmed, 1);
	assert_int_equal(st.packs_started, 1);
	gc(f, 1199, NULL, 0, &st);
	assert_int_equal(st.packs_waiting, 1);
	assert_true(exists(f, ik));
	/* G later: marked (index removed), the pack still there. */
	gc(f, 1200, NULL, 0, &st);
	assert_int_equal(st.packs_marked, 1);
	assert_false(exists(f, ik));
	assert_true(exists(f, pk));
	gc(f, 1250, NULL, 0, &st);
	assert_int_equal(st.packs_waiting, 1);
	assert_true(exists(f, pk));
	/* G after the mark: swept. b was never touched. */
	gc(f, 1300, NULL, 0, &st);
	assert_int_equal(st.packs_swept, 1);
	assert_false(exists(f, pk));
	assert_int_equal(get_equals(f, &b, bsize, "b"), 0);
	assert_int_equal(verify(f, &b, bsize, 1), RS_VERIFY_OK);
	rs_buf_release(&date);
}

/*
 * A push in flight: its pack is on the remote, its manifest not yet. The
 * collector starts the clock and even marks the pack; the manifest then
 * appears (the writer checked the index before the mark); the sweep run
 * reads it and rescues the pack by rebuilding its index, byte for byte.
 */
static void test_gc_rescues_a_push_in_flight(void **state)
{
	struct store_fixture *f = *state;
	struct rs_gc_stats st;
	struct rs_buf manifest, idx, idx2;
	struct rs_id a, pack;
	uint64_t asize;
	char mk[300], ik[300], hex[RS_ID_HEXSZ + 1];

	rs_buf_init(&manifest, 1u << 20);
	rs_buf_init(&idx, 1u << 20);
	rs_buf_init(&idx2, 1u << 20);
	put(f, "a", 6u << 20, 21, NULL, &a, &asize);
	rs_id_to_hex(hex, &a);
	snprintf(mk, sizeof(mk), "objects/%s", hex);
	pack = remote_new_pack(f, NULL);
	pack_key(ik, sizeof(ik), &pack, "idx");
	assert_int_equal(f->remote->get(f->remote, mk, 0, UINT64_MAX, &manifest), 0);
	assert_int_equal(f->remote->get(f->remote, ik, 0, UINT64_MAX, &idx), 0);
	assert_int_equal(f->remote->del(f->remote, mk), 0);

	gc(f, 5000, NULL, 0, &st);
	assert_int_equal(st.packs_started, 1);
	gc(f, 5100, NULL, 0, &st);
	assert_int_equal(st.packs_marked, 1);
	assert_false(exists(f, ik));
	/* The writer completes within G of its check. */
	assert_int_equal(f->remote->put_buf(f->remote, mk, manifest.ptr, manifest.len), 0);
	gc(f, 5200, NULL, 0, &st);
	assert_int_equal(st.packs_swept, 0);
	assert_int_equal(st.packs_rescued, 1);
	assert_int_equal(f->remote->get(f->remote, ik, 0, UINT64_MAX, &idx2), 0);
	assert_int_equal(idx.len, idx2.len);
	assert_memory_equal(idx.ptr, idx2.ptr, idx.len);
	assert_int_equal(get_equals(f, &a, asize, "a"), 0);
	/* And later runs leave it alone. */
	gc(f, 9000, NULL, 0, &st);
	assert_int_equal(st.packs_marked + st.packs_swept + st.packs_started, 0);
	rs_buf_release(&manifest);
	rs_buf_release(&idx);
	rs_buf_release(&idx2);
}

/*
 * A remote in front of the fixture's that runs `hook` once, at the first
 * write (put or delete) of a key starting with `prefix`: before it, or
 * right after it with `after` (the exact point of a race, without
 * timing); and that fails every write after `budget` of them (-1: never).
 */
struct hooked {
	struct rs_remote base;
	struct rs_remote *inner;
	const char *prefix;
	int after, fired, budget;
	void (*hook)(struct hooked *h);
	struct store_fixture *f;
	void *arg;
};

/* A write: refused once the budget is spent. */
static int hk_spend(struct hooked *h)
{
	if (h->budget < 0)
		return 0;
	if (h->budget-- <= 0)
		return rs_error_set(RS_ERETRY, "injected failure");
	return 0;
}

static void hk_fire(struct hooked *h, const char *key, int after)
{
	if (!h->hook || h->fired || h->after != after || strncmp(key, h->prefix, strlen(h->prefix)))
		return;
	h->fired = 1;
	h->hook(h);
}

/* Before a write: spend the budget, then fire the hook if it is due before. */
static int hk_begin(struct hooked *h, const char *key)
{
	int err = hk_spend(h);

	if (!err)
		hk_fire(h, key, 0);
	return err;
}

/* After a write (its result `err`): fire the hook if it is due after. */
static int hk_end(struct hooked *h, const char *key, int err)
{
	hk_fire(h, key, 1);
	return err;
}

static int hk_get(struct rs_remote *r, const char *key, uint64_t off, uint64_t len, struct rs_buf *out)
{
	struct hooked *h = (struct hooked *)r;

	return h->inner->get(h->inner, key, off, len, out);
}

static int hk_stat(struct rs_remote *r, const char *key, uint64_t *n)
{
	struct hooked *h = (struct hooked *)r;

	return h->inner->stat(h->inner, key, n);
}

static int hk_list(struct rs_remote *r, const char *prefix, rs_remote_list_cb cb, void *payload)
{
	struct hooked *h = (struct hooked *)r;

	return h->inner->list(h->inner, prefix, cb, payload);
}

static int hk_put_buf(struct rs_remote *r, const char *key, const void *p, size_t n)
{
	struct hooked *h = (struct hooked *)r;
	int err = hk_begin(h, key);

	return err ? err : hk_end(h, key, h->inner->put_buf(h->inner, key, p, n));
}

static int hk_put_file(struct rs_remote *r, const char *key, const char *path)
{
	struct hooked *h = (struct hooked *)r;
	int err = hk_begin(h, key);

	return err ? err : hk_end(h, key, h->inner->put_file(h->inner, key, path));
}

static int hk_del(struct rs_remote *r, const char *key)
{
	struct hooked *h = (struct hooked *)r;
	int err = hk_begin(h, key);

	return err ? err : hk_end(h, key, h->inner->del(h->inner, key));
}

static void hooked_init(struct hooked *h, struct store_fixture *f, const char *prefix, int after,
			void (*hook)(struct hooked *h))
{
	memset(h, 0, sizeof(*h));
	h->base.version = RS_REMOTE_VERSION;
	h->base.get = hk_get;
	h->base.put_buf = hk_put_buf;
	h->base.put_file = hk_put_file;
	h->base.stat = hk_stat;
	h->base.list = hk_list;
	h->base.del = hk_del;
	h->base.display_url = (char *)"hooked";
	h->inner = f->remote;
	h->prefix = prefix;
	h->after = after;
	h->hook = hook;
	h->f = f;
	h->budget = -1;
}

/* Every gc run (drop, clock, mark, sweep) killed after each of its writes, then run whole. */
static void test_gc_interrupted_at_every_step(void **state)
{
	struct store_fixture *f = *state;
	struct hooked k;
	struct rs_id a, b, apack;
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	uint64_t asize, bsize;
	int64_t when[] = { 1000, 1100, 1200, 1300, 1400 };
	size_t w;
	char pk[300];

	put(f, "a", 4u << 20, 31, NULL, &a, &asize);
	apack = remote_new_pack(f, NULL);
	put(f, "b", 4u << 20, 32, NULL, &b, &bsize);
	pack_key(pk, sizeof(pk), &apack, "pack");
	hooked_init(&k, f, "", 0, NULL);
	for (w = 0; w < sizeof(when) / sizeof(*when); w++) {
		struct rs_gc_options o = { 0 };
		struct rs_gc_stats st;
		int budget, err = -1;

		o.now = when[w];
		o.grace = 100;
		o.judge = judge_drop;
		for (budget = 0; err != 0 && budget < 20; budget++) {
			k.budget = budget;
			memset(&st, 0, sizeof(st));
			assert_int_equal(rs_store_census_take(&c, &k.base), 0);
			err = rs_store_gc_drop(&k.base, &c, w == 0 ? &a : NULL, w == 0, &o, &st);
			if (!err)
				err = rs_store_gc_collect(&k.base, &c, &o, &st);
			rs_store_census_release(&c);
			/* Whatever was cut off, b is intact. */
			assert_int_equal(get_equals(f, &b, bsize, "b"), 0);
		}
		assert_int_equal(err, 0);
	}
	/* Interruptions only delay: a's pack is gone after the same five runs. */
	assert_false(exists(f, pk));
	assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_REMOVED);
	assert_int_equal(verify(f, &b, bsize, 1), RS_VERIFY_OK);
}

/* The same with the default grace period, G = 24 h. */
static void gc_at(struct rs_remote *remote, int64_t now, const struct rs_id *drop, size_t ndrop,
		  struct rs_gc_stats *st)
{
	gc_through(remote, now, 86400, drop, ndrop, st);
}

/* Three gc runs at +0 h, +25 h and +50 h, while the push waits to write its manifest. */
static void three_runs_in_a_jumping_clock(struct hooked *h)
{
	struct rs_gc_stats st;
	int64_t t0 = 1800000000;

	gc_at(h->inner, t0, NULL, 0, &st);
	assert_int_equal(st.packs_started, 1);
	gc_at(h->inner, t0 + 25 * 3600, NULL, 0, &st);
	assert_int_equal(st.packs_marked, 1);
	gc_at(h->inner, t0 + 50 * 3600, NULL, 0, &st);
	assert_int_equal(st.packs_swept, 1); /* the push's own new pack is gone */
}

/*
 * A push in flight loses nothing, whatever the clocks say: its pack is
 * uploaded, then three collections (the clock jumping a day each time)
 * clock, mark and sweep it before its manifest is written. The push
 * finds out after publishing its manifest, sends the pack again under a
 * new id and rewrites the manifest: it reads back, deep verify passes.
 */
static void test_push_outlives_gc_under_a_jumping_clock(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;
	struct hooked h;
	struct rs_id a;
	uint64_t asize;
	char path[400];

	snprintf(path, sizeof(path), "%s/a", f->dir);
	write_file(path, 3u << 20, 61, NULL);
	test_file_id(path, &a, &asize);
	hooked_init(&h, f, "objects/", 0, three_runs_in_a_jumping_clock);
	o.cache_dir = f->cache_dir;
	o.threads = 2;
	assert_int_equal(rs_store_open(&s, &h.base, &o), 0);
	assert_int_equal(rs_store_put_file(s, &a, asize, path, NULL, NULL, NULL), 0);
	rs_store_free(s);
	assert_true(h.fired);
	assert_int_equal(get_equals(f, &a, asize, "a"), 0);
	assert_int_equal(verify(f, &a, asize, 1), RS_VERIFY_OK);
}

/* The writer of `h->arg` (a saved manifest) publishes it while a sweep has begun. */
static void publish_saved_manifest(struct hooked *h)
{
	struct rs_buf *manifest = h->arg;
	char hex[RS_ID_HEXSZ + 1], mk[300];
	struct rs_id oid;

	memcpy(oid.id, manifest->ptr + 16, RS_ID_RAWSZ);
	rs_id_to_hex(hex, &oid);
	snprintf(mk, sizeof(mk), "objects/%s", hex);
	assert_int_equal(h->inner->put_buf(h->inner, mk, manifest->ptr, manifest->len), 0);
}

/*
 * A manifest published after the sweeping run read the manifests, but
 * before it deleted anything: the sweep marks the pack, reads every
 * manifest again, finds the new one and spares the pack; the next run
 * rescues it.
 */
static void test_sweep_spares_a_pack_named_meanwhile(void **state)
{
	struct store_fixture *f = *state;
	struct rs_gc_stats st;
	struct rs_buf manifest;
	struct rs_id a, pack;
	struct hooked h;
	uint64_t asize;
	char mk[300], pk[300], hex[RS_ID_HEXSZ + 1];

	rs_buf_init(&manifest, 1u << 20);
	put(f, "a", 3u << 20, 62, NULL, &a, &asize);
	rs_id_to_hex(hex, &a);
	snprintf(mk, sizeof(mk), "objects/%s", hex);
	pack = remote_new_pack(f, NULL);
	pack_key(pk, sizeof(pk), &pack, "pack");
	assert_int_equal(f->remote->get(f->remote, mk, 0, UINT64_MAX, &manifest), 0);
	assert_int_equal(f->remote->del(f->remote, mk), 0);
	gc_at(f->remote, 1000, NULL, 0, &st);
	gc_at(f->remote, 1000 + 86400, NULL, 0, &st);
	assert_int_equal(st.packs_marked, 1);
	hooked_init(&h, f, "gc/sweeping/", 1, publish_saved_manifest);
	h.arg = &manifest;
	gc_at(&h.base, 1000 + 2 * 86400, NULL, 0, &st);
	assert_true(h.fired);
	assert_int_equal(st.packs_swept, 0);
	assert_int_equal(st.packs_spared, 1);
	assert_true(exists(f, pk));
	gc_at(f->remote, 1000 + 3 * 86400, NULL, 0, &st);
	assert_int_equal(st.packs_rescued, 1);
	assert_int_equal(get_equals(f, &a, asize, "a"), 0);
	assert_int_equal(verify(f, &a, asize, 1), RS_VERIFY_OK);
	rs_buf_release(&manifest);
}

/* A new run records the same bytes: its push finds the manifest and uploads nothing. */
static void dedup_push(struct hooked *h)
{
	struct rs_store_options o = { 0 };
	struct rs_store_put_stats ps;
	struct rs_store *s = NULL;
	const struct rs_id *a = h->arg;
	char path[400];
	uint64_t size = 0;
	struct rs_id id;

	snprintf(path, sizeof(path), "%s/a", h->f->dir);
	test_file_id(path, &id, &size);
	assert_memory_equal(id.id, a->id, RS_ID_RAWSZ);
	o.cache_dir = h->f->cache_dir;
	assert_int_equal(rs_store_open(&s, h->inner, &o), 0);
	assert_int_equal(rs_store_put_file(s, a, size, path, NULL, NULL, &ps), 0);
	rs_store_free(s);
}

/*
 * gc drops a session while a push of the same bytes relies on its
 * manifest. Just before gc deletes it, the push finds it (uploads
 * nothing, touches it): gc, looking for a touch after the deletion,
 * brings it back. Just after, the push finds it gone and pushes it
 * whole. Either way the session reads back, and later runs keep it while
 * the touch lasts (a grace period after gc first saw it).
 */
static void test_gc_keeps_a_manifest_a_push_relies_on(void **state)
{
	struct store_fixture *f = *state;
	struct rs_gc_stats st;
	struct hooked h;
	struct rs_id a;
	uint64_t asize;
	int after;

	put(f, "a", 3u << 20, 63, NULL, &a, &asize);
	/* Just after first (that push leaves no touch), then just before. */
	for (after = 1; after >= 0; after--) {
		hooked_init(&h, f, "objects/", after, dedup_push);
		h.arg = &a;
		gc_at(&h.base, 1000, &a, 1, &st);
		assert_true(h.fired);
		assert_int_equal(get_equals(f, &a, asize, "a"), 0);
		assert_int_equal(verify(f, &a, asize, 1), RS_VERIFY_OK);
		if (!after)
			assert_int_equal(st.manifests_touched, 1);
	}
	/*
	 * The touch is honoured for a grace period after a gc run first saw
	 * it (the next one: it was written during the run at 1000), then expires.
	 */
	gc_at(f->remote, 2000, &a, 1, &st);
	assert_int_equal(st.manifests_touched, 1);
	gc_at(f->remote, 2000 + 86399, &a, 1, &st);
	assert_int_equal(st.manifests_touched, 1);
	assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_OK);
	gc_at(f->remote, 2000 + 86400, &a, 1, &st);
	assert_int_equal(st.manifests_removed, 1);
	assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_REMOVED);
}

static enum rs_gc_verdict verdict_now;

static enum rs_gc_verdict judge_now(const struct rs_id *oid, void *payload)
{
	(void)oid;
	(void)payload;
	return verdict_now;
}

/*
 * A dropped manifest is set aside, not deleted: a run that finds the
 * session kept again (recorded again, pinned) brings it back; one that
 * finds no run naming it keeps it set aside however old; only a run a
 * grace period later that still drops it deletes it.
 */
static void test_set_aside_manifest_is_judged_again(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	struct rs_gc_options o = { 0 };
	struct rs_gc_stats st;
	struct rs_id a;
	uint64_t asize;
	char tk[300], hex[RS_ID_HEXSZ + 1];
	int64_t when[] = { 1000, 1050, 5000, 5001, 5100, 9000 };
	enum rs_gc_verdict verdict[] = { RS_GC_DROP, RS_GC_KEEP, RS_GC_DROP, RS_GC_UNKNOWN,
					 RS_GC_UNKNOWN, RS_GC_DROP };
	size_t w;

	put(f, "a", 2u << 20, 64, NULL, &a, &asize);
	rs_id_to_hex(hex, &a);
	snprintf(tk, sizeof(tk), "trash/%s", hex);
	o.grace = 100;
	o.judge = judge_now;
	for (w = 0; w < sizeof(when) / sizeof(*when); w++) {
		o.now = when[w];
		verdict_now = verdict[w];
		memset(&st, 0, sizeof(st));
		assert_int_equal(rs_store_census_take(&c, f->remote), 0);
		assert_int_equal(rs_store_gc_drop(f->remote, &c, verdict[w] == RS_GC_DROP ? &a : NULL,
						  verdict[w] == RS_GC_DROP, &o, &st), 0);
		assert_int_equal(rs_store_gc_collect(f->remote, &c, &o, &st), 0);
		rs_store_census_release(&c);
		switch (w) {
		case 0: /* set aside: reported removed, the copy kept */
			assert_int_equal(st.manifests_removed, 1);
			assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_REMOVED);
			assert_true(exists(f, tk));
			break;
		case 1: /* kept again: back, readable */
			assert_int_equal(st.manifests_restored, 1);
			assert_int_equal(get_equals(f, &a, asize, "a"), 0);
			break;
		case 2: /* dropped again: set aside again (the old copy served) */
			assert_int_equal(st.manifests_removed, 1);
			break;
		case 3: case 4: /* no run names it: kept set aside, even past the grace */
			assert_int_equal(st.manifests_pending, 1);
			assert_int_equal(st.manifests_confirmed, 0);
			assert_true(exists(f, tk));
			break;
		case 5: /* dropped, a grace period later: deleted for good */
			assert_int_equal(st.manifests_confirmed, 1);
			assert_false(exists(f, tk));
			assert_int_equal(verify(f, &a, asize, 0), RS_VERIFY_REMOVED);
			break;
		}
	}
}

/*
 * A flipped byte in x's pack; y, pushed later, borrowed x's chunks. Repair:
 * quarantine the pack, push x again from the local copy, re-point y (which
 * no local copy backs) at the good chunks. Both read back byte-identical,
 * and a new push borrows nothing from the quarantined pack.
 */
static void test_repair_restores_what_a_clone_holds(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;
	struct rs_id x, y, xpack;
	uint64_t xsize, ysize;
	char key[300], xpath[400], mk[300], hex[RS_ID_HEXSZ + 1];
	size_t i;

	put(f, "x", 7u << 20, 41, NULL, &x, &xsize);
	xpack = remote_new_pack(f, NULL);
	overwrite_pack_byte(f, &xpack, 100, 0x00, key, sizeof(key));
	snprintf(xpath, sizeof(xpath), "%s/x", f->dir);
	put(f, "y", 3u << 20, 42, xpath, &y, &ysize);
	assert_int_not_equal(get_equals(f, &y, ysize, "y"), 0);

	/* Verify finds both damaged and names the pack. */
	assert_int_equal(rs_store_census_take(&c, f->remote), 0);
	{
		struct rs_buf why = RS_BUF_INIT;
		enum rs_verify_state st;

		assert_int_equal(rs_store_verify_object(f->remote, &c, &x, xsize, 1, &st, &why), 0);
		assert_int_equal(st, RS_VERIFY_DAMAGED);
		assert_int_equal(rs_store_verify_object(f->remote, &c, &y, ysize, 1, &st, &why), 0);
		assert_int_equal(st, RS_VERIFY_DAMAGED);
		rs_buf_release(&why);
	}
	assert_true(rs_store_census_pack(&c, &xpack)->damaged);
	for (i = 0; i < c.npacks; i++)
		if (c.packs[i].damaged)
			assert_int_equal(rs_store_quarantine(f->remote, &c.packs[i].id, "test", 7), 0);
	rs_store_census_release(&c);

	/* x again from the local copy: its manifest goes, the push writes new packs. */
	rs_id_to_hex(hex, &x);
	snprintf(mk, sizeof(mk), "objects/%s", hex);
	assert_int_equal(f->remote->del(f->remote, mk), 0);
	o.cache_dir = f->cache_dir;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	assert_int_equal(rs_store_put_file(s, &x, xsize, xpath, NULL, NULL, NULL), 0);
	rs_store_free(s);
	assert_int_equal(get_equals(f, &x, xsize, "x"), 0);

	/* y is not held here: re-pointed at the good copies. */
	assert_int_equal(rs_store_census_take(&c, f->remote), 0);
	assert_true(rs_store_census_pack(&c, &xpack)->quarantined);
	assert_int_equal(rs_store_repoint(f->remote, &c, &y), 0);
	rs_store_census_release(&c);
	assert_int_equal(get_equals(f, &y, ysize, "y"), 0);
	assert_int_equal(verify(f, &y, ysize, 1), RS_VERIFY_OK);
	assert_int_equal(verify(f, &x, xsize, 1), RS_VERIFY_OK);
}

/* The remote's stat, counted: how many questions a push asks. */
static int (*real_stat)(struct rs_remote *r, const char *key, uint64_t *size);
static int stat_calls;

static int counted_stat(struct rs_remote *r, const char *key, uint64_t *size)
{
	stat_calls++;
	return real_stat(r, key, size);
}

/* Put `name` (already written) again with a store of its own: its stats. */
static struct rs_store_put_stats put_again(struct store_fixture *f, const char *name,
					   const struct rs_id *oid, uint64_t size)
{
	struct rs_store_put_stats st;
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	o.cache_dir = f->cache_dir;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	assert_int_equal(rs_store_put_file(s, oid, size, path, NULL, NULL, &st), 0);
	rs_store_free(s);
	return st;
}

/*
 * A listed manifest is not proof that the object is stored: the push
 * checks the packs it names (a stat of the .pack and of a .quarantine
 * per pack, once per process, never per chunk) and stores the object
 * again when one is gone or quarantined. Before, it uploaded nothing and
 * the object stayed lost while the clone that has it reported success.
 */
static void test_put_checks_the_packs_of_a_listed_manifest(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store_options o = { 0 };
	struct rs_store_put_stats st;
	struct rs_store *s = NULL;
	struct rs_id x, xpack;
	uint64_t xsize;
	char key[300], path[400];

	put(f, "x", 3u << 20, 51, NULL, &x, &xsize);
	xpack = remote_new_pack(f, NULL);
	snprintf(path, sizeof(path), "%s/x", f->dir);

	/* Whole: nothing is sent; the packs are asked about once per process. */
	real_stat = f->remote->stat;
	f->remote->stat = counted_stat;
	stat_calls = 0;
	o.cache_dir = f->cache_dir;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	assert_int_equal(rs_store_put_file(s, &x, xsize, path, NULL, NULL, &st), 0);
	assert_true(st.already_present);
	/* the manifest listed, listed again after the touch (gc's protocol:
	   docs/store-format.md), its size read; the .pack and its .quarantine */
	assert_int_equal(stat_calls, 3 + 2);
	stat_calls = 0;
	assert_int_equal(rs_store_put_file(s, &x, xsize, path, NULL, NULL, &st), 0);
	assert_true(st.already_present);
	assert_int_equal(stat_calls, 3);
	rs_store_free(s);
	f->remote->stat = real_stat;

	/* Its pack gone (both files): stored again, and it reads back. */
	pack_key(key, sizeof(key), &xpack, "pack");
	assert_int_equal(f->remote->del(f->remote, key), 0);
	pack_key(key, sizeof(key), &xpack, "idx");
	assert_int_equal(f->remote->del(f->remote, key), 0);
	assert_int_not_equal(get_equals(f, &x, xsize, "x"), 0);
	st = put_again(f, "x", &x, xsize);
	assert_false(st.already_present);
	assert_int_equal(st.chunks_new, st.chunks);
	assert_int_equal(get_equals(f, &x, xsize, "x"), 0);
	assert_int_equal(verify(f, &x, xsize, 1), RS_VERIFY_OK);

	/* Its pack quarantined (damaged): stored again into a new pack. */
	xpack = remote_new_pack(f, NULL);
	assert_int_equal(rs_store_quarantine(f->remote, &xpack, "test", 7), 0);
	st = put_again(f, "x", &x, xsize);
	assert_false(st.already_present);
	assert_int_equal(st.chunks_new, st.chunks);
	assert_int_equal(get_equals(f, &x, xsize, "x"), 0);
	st = put_again(f, "x", &x, xsize);
	assert_true(st.already_present);

	/* An empty object names no pack: its manifest alone is the object. */
	{
		struct rs_id e;
		uint64_t esize;

		put(f, "e", 0, 1, NULL, &e, &esize);
		st = put_again(f, "e", &e, esize);
		assert_true(st.already_present);
		assert_int_equal(get_equals(f, &e, esize, "e"), 0);
	}
}

/*
 * Repack: y borrowed x's first chunk; x is dropped, so x's pack is mostly
 * unused. gc --repack copies the one used chunk into a new pack, rewrites
 * y's manifest, and the old pack is collected by the usual clock.
 */
static void test_gc_repacks_a_mostly_unused_pack(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	struct rs_gc_options o = { 0 };
	struct rs_gc_stats st;
	struct rs_id x, y, xpack;
	uint64_t xsize, ysize, xpack_size;
	char xpath[400], pk[300];

	put(f, "x", 9u << 20, 51, NULL, &x, &xsize);
	assert_int_equal(rs_store_census_take(&c, f->remote), 0);
	xpack = only_new_pack(&c, NULL);
	xpack_size = rs_store_census_pack(&c, &xpack)->pack_size;
	rs_store_census_release(&c);
	snprintf(xpath, sizeof(xpath), "%s/x", f->dir);
	/* y: x's first 3.5 MiB (its first chunk), then bytes of its own. */
	{
		struct rs_buf b = RS_BUF_INIT;
		char cut[400];

		assert_int_equal(rs_fs_read_file(&b, xpath, 1u << 30), 0);
		snprintf(cut, sizeof(cut), "%s/xcut", f->dir);
		assert_int_equal(rs_fs_write_file_atomic(cut, b.ptr, 3584u * 1024), 0);
		rs_buf_release(&b);
		put(f, "y", 4u << 20, 52, cut, &y, &ysize);
	}
	gc(f, 1000, &x, 1, &st);
	assert_int_equal(st.manifests_removed, 1);
	gc(f, 1100, NULL, 0, &st);
	assert_int_equal(st.manifests_confirmed, 1);

	o.now = 1100;
	o.grace = 100;
	o.repack = 0.5;
	memset(&st, 0, sizeof(st));
	assert_int_equal(rs_store_census_take(&c, f->remote), 0);
	assert_int_equal(rs_store_gc_collect(f->remote, &c, &o, &st), 0);
	rs_store_census_release(&c);
	assert_int_equal(st.packs_repacked, 1);
	assert_true(st.bytes_repacked > xpack_size / 2);
	assert_int_equal(get_equals(f, &y, ysize, "y"), 0);
	assert_int_equal(verify(f, &y, ysize, 1), RS_VERIFY_OK);
	/* The old pack is now unreferenced: clock, mark, sweep. */
	pack_key(pk, sizeof(pk), &xpack, "pack");
	gc(f, 1200, NULL, 0, &st);
	gc(f, 1300, NULL, 0, &st);
	gc(f, 1400, NULL, 0, &st);
	assert_false(exists(f, pk));
	assert_int_equal(get_equals(f, &y, ysize, "y"), 0);
}

/* One gc collect run at `now`; its result, the message left in the slot. */
static int gc_collect_result(struct store_fixture *f, int64_t now)
{
	struct rs_store_census c = RS_STORE_CENSUS_INIT;
	struct rs_gc_options o = { 0 };
	struct rs_gc_stats st;
	int err;

	o.now = now;
	o.grace = 100;
	o.judge = judge_drop;
	memset(&st, 0, sizeof(st));
	assert_int_equal(rs_store_census_take(&c, f->remote), 0);
	err = rs_store_gc_collect(f->remote, &c, &o, &st);
	rs_store_census_release(&c);
	return err;
}

/*
 * A reader that walks a pack from its start (the collector rebuilding a
 * lost .idx) refuses what docs/store-format.md says it refuses: a bad
 * magic, a pack header or an entry header with a reserved byte set, and
 * writes no index from such a pack. The pack is a real push's.
 */
static void test_rescue_refuses_a_bad_pack_header(void **state)
{
	static const struct {
		long at;
		int byte;
		const char *says;
	} damage[] = {
		{ 12, 1, "pack header has reserved bytes set" },
		{ 15, 0x80, "pack header has reserved bytes set" },
		{ 0, 'X', "not a pack file" },
		{ 8, 2, "pack version 2 is not supported" },
		{ RS_PACK_HEADER_SIZE + 41, 1, "has reserved bytes set in the entry at offset 16" },
		{ RS_PACK_HEADER_SIZE + 47, 1, "has reserved bytes set in the entry at offset 16" },
		/* version 0: below the first, damage rather than a newer writer's */
		{ 8, 0, "pack version 0 is older than any results wrote" },
	};
	long codec_at = RS_PACK_HEADER_SIZE + 40, stored_top = RS_PACK_HEADER_SIZE + 39;
	unsigned char codec_was, top_was;
	struct store_fixture *f = *state;
	struct rs_id a, pack;
	uint64_t asize;
	unsigned char orig;
	char ik[300], pk[300], path[1000];
	size_t i;
	FILE *fp;
	int err;

	put(f, "a", 3u << 20, 31, NULL, &a, &asize);
	pack = remote_new_pack(f, NULL);
	pack_key(ik, sizeof(ik), &pack, "idx");
	assert_int_equal(f->remote->del(f->remote, ik), 0);
	for (i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		pack_key(pk, sizeof(pk), &pack, "pack");
		snprintf(path, sizeof(path), "%s/%s", f->remote_dir, pk);
		fp = fopen(path, "rb");
		assert_non_null(fp);
		assert_int_equal(fseek(fp, damage[i].at, SEEK_SET), 0);
		orig = (unsigned char)fgetc(fp);
		assert_int_equal(fclose(fp), 0);
		overwrite_pack_byte(f, &pack, damage[i].at, damage[i].byte, pk, sizeof(pk));
		err = gc_collect_result(f, 5000 + (int64_t)i);
		assert_int_equal(err, damage[i].byte == 2 ? RS_ENEWER : RS_ECORRUPT);
		if (!strstr(rs_error_message(), damage[i].says) || !strstr(rs_error_message(), pk))
			fail_msg("byte %ld: '%s' does not say '%s' about '%s'", damage[i].at,
				 rs_error_message(), damage[i].says, pk);
		assert_false(exists(f, ik));
		overwrite_pack_byte(f, &pack, damage[i].at, orig, pk, sizeof(pk));
	}
	/*
	 * A zstd entry whose stored length is past RS_STORED_LIMIT (80 MiB and
	 * more): refused by the length rule every reader applies, not walked
	 * past the end of the pack ("ends inside an entry").
	 */
	snprintf(path, sizeof(path), "%s/%s", f->remote_dir, pk);
	fp = fopen(path, "rb");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, stored_top, SEEK_SET), 0);
	top_was = (unsigned char)fgetc(fp);
	codec_was = (unsigned char)fgetc(fp);
	assert_int_equal(fclose(fp), 0);
	overwrite_pack_byte(f, &pack, codec_at, RS_CODEC_ZSTD, pk, sizeof(pk));
	overwrite_pack_byte(f, &pack, stored_top, 5, pk, sizeof(pk));
	assert_int_equal(gc_collect_result(f, 5900), RS_ECORRUPT);
	if (!strstr(rs_error_message(), "has an invalid entry at offset 16: impossible chunk lengths"))
		fail_msg("a stored length past the cap: '%s'", rs_error_message());
	assert_false(exists(f, ik));
	overwrite_pack_byte(f, &pack, codec_at, codec_was, pk, sizeof(pk));
	overwrite_pack_byte(f, &pack, stored_top, top_was, pk, sizeof(pk));
	/* Undamaged again, the same pack is rescued. */
	assert_int_equal(gc_collect_result(f, 6000), 0);
	assert_true(exists(f, ik));
	assert_int_equal(get_equals(f, &a, asize, "a"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_verify_finds_each_kind_of_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_clock_mark_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_rescues_a_push_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rescue_refuses_a_bad_pack_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_interrupted_at_every_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_restores_what_a_clone_holds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_repacks_a_mostly_unused_pack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_checks_the_packs_of_a_listed_manifest, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_push_outlives_gc_under_a_jumping_clock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_spares_a_pack_named_meanwhile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_keeps_a_manifest_a_push_relies_on, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_aside_manifest_is_judged_again, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
