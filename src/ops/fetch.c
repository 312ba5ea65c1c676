/*
 * results fetch, as a library call (results/store.h): the raw sessions of
 * a run straight from the store (no git-lfs in the way), verified, and put
 * in place.
 *
 * The session pointers are read from the committed tree (the pointer is
 * the authority on oid and size; run.json's copy is cross-checked). Only
 * those objects are fetched. rs_store_get_file checks every chunk and the
 * whole object against its oid and only then renames the file into place,
 * so a failed fetch leaves nothing half-written.
 *
 * Without an outdir the object goes into .git/lfs/objects (where git-lfs
 * would put it) and the pointer file in the working tree is replaced by
 * the content, as `git lfs checkout` does (results/checkout.h); with one
 * the session is written to DIR/<run id>/<file> and the repository is
 * left alone.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/remote.h"
#include "ops/objstore.h"
#include "git/pointer.h"
#include "git/repo.h"
#include "runs/runindex.h"
#include "runs/runs.h"
#include "git/unpushed.h"
#include "results/buf.h"
#include "results/checkout.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/path.h"


struct rs_fetch {
	struct rs_repo *repo;       /* borrowed */
	const char *outdir;         /* borrowed; NULL: into the repository */
	struct rs_objstore *store;  /* opened on first need */
	enum rs_fetch_stage stage;  /* of the last failure */
};

/* What fetching one session file works with. */
struct one {
	const struct rs_run_entry *run;
	const char *name;
	struct rs_buf rel, what, text, object, dest;
	struct rs_pointer p;
	int fresh; /* downloaded (and so verified) a moment ago */
};

int rs_fetch_new(struct rs_fetch **out, struct rs_repo *repo, const char *outdir)
{
	struct rs_fetch *f = calloc(1, sizeof(*f));

	if (!f)
		return rs_error_set(RS_EGENERIC, "out of memory");
	f->repo = repo;
	f->outdir = outdir;
	*out = f;
	return 0;
}

void rs_fetch_free(struct rs_fetch *f)
{
	if (!f)
		return;
	rs_objstore_free(f->store);
	free(f);
}

enum rs_fetch_stage rs_fetch_stage(const struct rs_fetch *f)
{
	return f->stage;
}

/* The current message, saved: rs_error_set must not format from its own slot. */
static const char *saved_message(struct rs_error_saved *old)
{
	rs_error_save(old, rs_error_last());
	return old->message;
}

static int fail(struct rs_fetch *f, enum rs_fetch_stage stage, int err)
{
	f->stage = stage;
	return err;
}

/* Open the remote, once, and check that it answers and holds a store. */
static int open_store(struct rs_fetch *f)
{
	struct rs_remote *remote = NULL;
	long grace;
	struct rs_error_saved old;
	int err;

	if (f->store)
		return 0;
	/* A pulled change of remote this clone has not followed: a set-up problem. */
	err = rs_repo_check_remote(f->repo);
	if (err)
		return fail(f, RS_FETCH_FOLLOW, err);
	err = rs_repo_open_remote(f->repo, &remote, NULL);
	/* A remote that cannot be opened is unreachable from here, whatever
	   the backend's reason (missing folder, bad host, refused credentials). */
	if (err && err != RS_ENOTFOUND)
		rs_error_set(err, "cannot open the remote: %s; check results.remote ('results doctor')",
			     saved_message(&old));
	if (err)
		return fail(f, RS_FETCH_OPEN, err);
	err = rs_repo_tmp_grace(f->repo, &grace);
	if (err) {
		rs_remote_free(remote);
		return fail(f, RS_FETCH_LOCAL, err);
	}
	err = rs_objstore_wrap(&f->store, remote, NULL, grace);
	if (err)
		return fail(f, RS_FETCH_LOCAL, err);
	/* A remote without FORMAT is a wrong results.remote: the store's one message. */
	err = rs_store_check_format(f->store->store);
	if (err && err != RS_ENOTFOUND && err != RS_EFORMAT && err != RS_ETOOBIG &&
	    err != RS_EREMOTE && err != RS_ENEWER)
		rs_error_set(err, "the remote '%s' does not answer: %s; check the URL ('results "
			     "doctor') and your credentials", f->store->remote->display_url,
			     saved_message(&old));
	if (err) {
		/* Not usable: the next call must not take it for an open store. */
		rs_objstore_free(f->store);
		f->store = NULL;
		return fail(f, RS_FETCH_REMOTE, err);
	}
	return 0;
}

/*
 * DIR/<run id>/<file> for an outdir, checked: the id and the file name
 * come from the repository (rs_path_join refuses what would leave DIR),
 * and the folders below DIR are made without following a symlink that a
 * hostile tree may have checked out there. DIR itself is the user's.
 */
static int output_path(struct rs_buf *dest, const char *outdir, const struct one *o)
{
	struct rs_buf rel = RS_BUF_INIT;
	int err;

	err = rs_buf_printf(&rel, "%s/%s", o->run->id, o->name);
	if (err)
		goto out;
	err = rs_path_join(dest, outdir, rel.ptr, RS_PATH_NO_DOTFILES, "output path");
	if (err)
		goto out;
	err = rs_fs_mkdir_p(outdir, 0755);
	if (err)
		goto out;
	err = rs_path_mkdirs_under(outdir, rel.ptr);
out:
	rs_buf_release(&rel);
	return err;
}

/*
 * A download to DIR/<run id>/ failed: the run folder output_path made
 * goes again when nothing is in it (rmdir removes only an empty folder;
 * one the user filled stays). The error being reported is kept.
 */
static void drop_empty_run_folder(const char *outdir, const struct one *o)
{
	struct rs_buf dir = RS_BUF_INIT;

	if (!rs_buf_printf(&dir, "%s/%s", outdir, o->run->id))
		(void)rmdir(dir.ptr);
	rs_buf_release(&dir);
}

/* `err` with the message prefixed by what was being fetched. */
static int about(const struct one *o, int err)
{
	return rs_error_wrap(err, "%s", o->what.ptr);
}

/* The committed pointer of the file, cross-checked with run.json's oid. */
static int read_pointer(struct rs_fetch *f, struct one *o, const char *json_oid)
{
	char hex[RS_ID_HEXSZ + 1];
	struct rs_error_saved old;
	struct rs_id want;
	int err;

	err = rs_repo_read_tree_file(f->repo, NULL, o->rel.ptr, RS_POINTER_MAX, &o->text);
	if (!err)
		err = rs_pointer_parse(&o->p, o->text.ptr, o->text.len);
	if (err) {
		err = rs_error_set(err == RS_EGENERIC ? RS_EGENERIC : RS_ECORRUPT,
				   "%s: no valid LFS pointer at '%s': %s", o->what.ptr, o->rel.ptr,
				   saved_message(&old));
		return fail(f, RS_FETCH_RUN, err);
	}
	rs_id_to_hex(hex, &o->p.oid);
	if (json_oid && (rs_id_from_hex(&want, json_oid, strlen(json_oid)) != 0 ||
			 rs_id_cmp(&want, &o->p.oid) != 0))
		return fail(f, RS_FETCH_RUN, rs_error_set(RS_ECORRUPT, "%s: run.json says oid %.12s "
							  "but the pointer says %.12s", o->what.ptr,
							  json_oid, hex));
	err = rs_repo_lfs_object_path(&o->object, f->repo, &o->p.oid);
	if (err)
		return fail(f, RS_FETCH_LOCAL, err);
	return 0;
}

/*
 * The object is not in the local LFS store: download it, to the outdir,
 * or into .git/lfs/tmp and then renamed to its object path (a killed
 * fetch leaves a temporary file there, removed once stale by the next add
 * or fetch, never a partial file among the objects).
 */
static int download(struct rs_fetch *f, struct one *o)
{
	int err;

	o->fresh = 1;
	if (f->outdir)
		err = output_path(&o->dest, f->outdir, o);
	else
		err = rs_repo_lfs_tmp_path(&o->dest, f->repo);
	if (err)
		return fail(f, RS_FETCH_LOCAL, about(o, err));
	err = open_store(f);
	if (err)
		return err;
	err = rs_store_get_file(f->store->store, &o->p.oid, o->p.size, o->dest.ptr, NULL, NULL);
	if (err) {
		err = fail(f, RS_FETCH_DOWNLOAD, about(o, err));
		if (f->outdir)
			drop_empty_run_folder(f->outdir, o);
		return err;
	}
	if (!f->outdir) {
		err = rs_repo_lfs_adopt(f->repo, o->dest.ptr, &o->p.oid);
		if (err)
			return fail(f, RS_FETCH_LOCAL, err);
	}
	return 0;
}

/* Put the object where the user reads it and say so. */
static int place(struct rs_fetch *f, struct one *o,
		 void (*placed)(const struct rs_fetched *, void *), void *payload)
{
	struct rs_fetched done = { NULL, NULL, NULL, 0, NULL, o->p.size };
	struct rs_buf full = RS_BUF_INIT;
	int err = 0;

	if (f->outdir && !o->fresh) {
		err = output_path(&o->dest, f->outdir, o);
		if (err)
			return fail(f, RS_FETCH_LOCAL, about(o, err));
		err = rs_repo_copy_object(NULL, o->object.ptr, o->dest.ptr, &o->p.oid);
		if (err)
			return fail(f, RS_FETCH_LOCAL, err);
	}
	if (f->outdir) {
		done.path = o->dest.ptr;
		placed(&done, payload);
		return 0;
	}
	/* The run folder in the work tree: never through a symlink there. */
	err = rs_path_mkdirs_under(rs_repo_workdir(f->repo), o->rel.ptr);
	if (err)
		return fail(f, RS_FETCH_LOCAL, about(o, err));
	if (rs_repo_checkout_object(f->repo, o->rel.ptr, o->object.ptr, &o->p, &o->text, o->fresh,
				    &done.checked_out) != 0)
		done.checkout_error = rs_error_message();
	done.worktree_rel = o->rel.ptr;
	done.object_path = o->object.ptr;
	done.path = o->object.ptr;
	if (done.checked_out) {
		err = rs_buf_printf(&full, "%s%s", rs_repo_workdir(f->repo), o->rel.ptr);
		if (err) {
			err = fail(f, RS_FETCH_LOCAL, err);
			goto out;
		}
		done.path = full.ptr;
	}
	placed(&done, payload);
	rs_error_clear();
out:
	rs_buf_release(&full);
	return err;
}

/* Fetch one session file of one run. */
static int fetch_one(struct rs_fetch *f, const struct rs_run_entry *run, const char *name,
		     const char *json_oid, void (*placed)(const struct rs_fetched *, void *),
		     void *payload)
{
	struct one o = { run, name, RS_BUF_INIT, RS_BUF_INIT, RS_BUF_INIT, RS_BUF_INIT,
			 RS_BUF_INIT, RS_POINTER_INIT, 0 };
	int err;

	/* The caller checked `name`; the run path was checked with the index. */
	err = rs_buf_printf(&o.rel, "%s/%s", run->path, name);
	if (!err)
		err = rs_buf_printf(&o.what, "run %s, %s", run->id, name);
	if (err) {
		err = fail(f, RS_FETCH_LOCAL, err);
		goto out;
	}
	err = read_pointer(f, &o, json_oid);
	if (err)
		goto out;
	/* git lfs prune may have taken a session the store never got: the
	   copy this clone holds for it (results/unpushed.h) is put back. */
	if (rs_unpushed_restore(f->repo, &o.p.oid, o.p.size) != 0) {
		rs_error_clear();
		err = download(f, &o);
		if (err)
			goto out;
	}
	err = place(f, &o, placed, payload);
out:
	rs_pointer_release(&o.p);
	rs_buf_release(&o.rel);
	rs_buf_release(&o.what);
	rs_buf_release(&o.text);
	rs_buf_release(&o.object);
	rs_buf_release(&o.dest);
	return err;
}

/*
 * A file name from run.json becomes DIR/<id>/<name> and <run folder>/<name>
 * in the work tree: one plain name, no dot file (`results add` never
 * stores one; a '.gitattributes' there would change how git reads the
 * folder).
 */
static int check_file_name(struct rs_fetch *f, const struct rs_run_entry *run,
			   const char *run_json, const char *name)
{
	struct rs_error_saved old;

	if (rs_path_check(name, strlen(name), RS_PATH_NO_DOTFILES, "file name") != 0)
		return fail(f, RS_FETCH_RUN, rs_error_set(RS_ECORRUPT, "run %s: %s: %s", run->id,
							  run_json, saved_message(&old)));
	return 0;
}

/* Fetch the file `path` of the run (its oid as run.json says) after checking its name. */
static int fetch_item(struct rs_fetch *f, const struct rs_run_entry *run, const char *run_json,
		      const char *path, const char *oid,
		      void (*placed)(const struct rs_fetched *, void *), void *payload)
{
	int err = check_file_name(f, run, run_json, path);

	if (err)
		return err;
	return fetch_one(f, run, path, oid, placed, payload);
}

int rs_fetch_run(struct rs_fetch *f, const struct rs_runs *runs, const struct rs_run_entry *e,
		 void (*placed)(const struct rs_fetched *file, void *payload), void *payload)
{
	struct rs_buf rel = RS_BUF_INIT;
	rs_runrec *rec = NULL;
	int found = 0, err;

	(void)runs; /* the run's repository is the fetch's */
	err = rs_buf_printf(&rel, "%s/run.json", e->path);
	if (!err)
		err = rs_run_record_read(&rec, NULL, f->repo, NULL, e);
	if (err) {
		err = fail(f, RS_FETCH_RUN, err);
		goto out;
	}
	/* Every file of role "session" stored in LFS, else the "session" entry. */
	for (size_t i = 0; i < rec->nfiles; i++) {
		const struct rs_runrec_file *file = &rec->files[i];

		if (strcmp(file->role, "session") != 0 || !file->lfs)
			continue;
		found++;
		err = fetch_item(f, e, rel.ptr, file->path, file->oid, placed, payload);
		if (err)
			goto out;
	}
	if (!found && rec->has_session) {
		found++;
		err = fetch_item(f, e, rel.ptr, rec->session.path, rec->session.oid, placed, payload);
	}
	if (!found)
		err = fail(f, RS_FETCH_RUN, rs_error_set(RS_ENOTFOUND, "run %s has no session to "
							 "fetch (recorded with --raw?)", e->id));
out:
	rs_runrec_free(rec);
	rs_buf_release(&rel);
	return err;
}
