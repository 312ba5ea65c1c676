/*
 * results fetch: download the raw sessions of chosen runs straight from
 * the store (no git-lfs in the way), verify them, and put them in place.
 *
 * A query is a run id, or a profiled commit (full sha or unique prefix),
 * resolved against the committed run index. For each run the session
 * pointers are read from the committed tree (the pointer is the authority
 * on oid and size; run.json's copy is cross-checked). Only those objects
 * are fetched. rs_store_get_file checks every chunk and the whole object
 * against its oid and only then renames the file into place, so a failed
 * fetch leaves nothing half-written.
 *
 * Without -o the object goes into .git/lfs/objects (where git-lfs would
 * put it) and the pointer file in the working tree is replaced by the
 * content, as `git lfs checkout` would do; with -o DIR the session is
 * written to DIR/<run id>/<file> and the repository is left alone.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "remote/remote.h"
#include "repo/pointer.h"
#include "repo/repo.h"
#include "repo/runindex.h"
#include "results/checkout.h"
#include "store/store.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/path.h"

#define RUN_JSON_MAX (64u * 1024 * 1024)

static const char usage[] =
	"usage: results fetch <commit-or-run>... [-o DIR]\n"
	"\n"
	"Download the raw sessions of the given runs from the store, verify them\n"
	"and print their paths. A run is named by its id (see 'results list') or\n"
	"by the profiled commit: a full sha or a unique prefix (the most recent\n"
	"run of that commit). Only the requested sessions are downloaded.\n"
	"\n"
	"  -o, --output DIR  write DIR/<run id>/<file> and leave the repository\n"
	"                    alone; without it the session goes into the local\n"
	"                    LFS store and replaces its pointer in the working tree\n"
	"                    (one line on stderr says so, and how to free the space)\n"
	"\n"
	"exit status: 0 ok, 2 usage, 3 not a results repository, 4 unknown or\n"
	"ambiguous run, 5 remote unreachable, 6 object missing on the remote,\n"
	"7 corrupt data, 8 other error (also: the committed remote is not the\n"
	"one this clone uses; run 'results init')\n";

struct fetcher {
	struct rs_repo *repo;
	struct rs_remote *remote; /* opened on first need */
	struct rs_store *store;
	struct rs_buf url;
	const char *outdir;
};

/* Open the remote and check that it answers: exit 5 when it does not. */
static int open_store(struct fetcher *f)
{
	struct rs_store_options opts = { 0 };
	int err;

	if (f->store)
		return RS_EXIT_OK;
	/* A pulled change of remote this clone has not followed: a set-up
	   problem (8), not an unreachable remote. */
	if (rs_repo_check_remote(f->repo) != 0)
		return rs_cli_error(RS_EXIT_OTHER);
	err = rs_repo_open_remote(f->repo, &f->remote, &f->url);
	if (err == RS_ENOTFOUND)
		return rs_cli_error(RS_EXIT_NOT_REPO);
	/* A remote that cannot be opened is unreachable from here, whatever
	   the backend's reason (missing folder, bad host, refused credentials). */
	if (err)
		return rs_cli_fail(RS_EXIT_REMOTE, "cannot open the remote: %s; check results.remote "
				   "('results doctor')", rs_error_message());
	err = rs_store_open(&f->store, f->remote, &opts);
	if (err)
		return rs_cli_report(err);
	/* A remote without FORMAT is a wrong results.remote: the store's one message. */
	err = rs_store_check_format(f->store);
	if (err) {
		/* Not usable: the next call must not take it for an open store. */
		rs_store_free(f->store);
		f->store = NULL;
	}
	if (err == RS_ENOTFOUND)
		return rs_cli_fail(RS_EXIT_REMOTE, "%s", rs_error_message());
	if (err == RS_EUSAGE)
		return rs_cli_report(err);
	if (err)
		return rs_cli_fail(RS_EXIT_REMOTE, "the remote '%s' does not answer: %s; check the "
				   "URL ('results doctor') and your credentials",
				   f->remote->display_url, rs_error_message());
	return RS_EXIT_OK;
}

/*
 * DIR/<run id>/<file> for -o, checked: the id and the file name come
 * from the repository (rs_path_join refuses what would leave DIR), and
 * the folders below DIR are made without following a symlink that a
 * hostile tree may have checked out there. DIR itself is the user's.
 */
static int output_path(struct rs_buf *dest, const char *outdir, const struct rs_run_entry *run,
		       const char *name)
{
	struct rs_buf rel = RS_BUF_INIT;
	int err = rs_buf_printf(&rel, "%s/%s", run->id, name);

	if (!err)
		err = rs_path_join(dest, outdir, rel.ptr, RS_PATH_NO_DOTFILES, "output path");
	if (!err)
		err = rs_fs_mkdir_p(outdir, 0755);
	if (!err)
		err = rs_path_mkdirs_under(outdir, rel.ptr);
	rs_buf_release(&rel);
	return err;
}

/* Map a store error on object download to an exit status, with a message. */
static int download_failed(int err, const char *what)
{
	switch (err) {
	case RS_ENOTFOUND:
		return rs_cli_fail(RS_EXIT_MISSING, "%s: %s", what, rs_error_message());
	case RS_ECORRUPT:
		return rs_cli_fail(RS_EXIT_CORRUPT, "%s: %s", what, rs_error_message());
	case RS_EAUTH:
	case RS_ERETRY:
		return rs_cli_fail(RS_EXIT_REMOTE, "%s: %s", what, rs_error_message());
	default:
		return rs_cli_fail(RS_EXIT_OTHER, "%s: %s", what, rs_error_message());
	}
}

/*
 * Replace the pointer in the working tree by the content
 * (rs_repo_checkout_object). Returns 1 when the working-tree file holds
 * the session; a failed copy is not fatal (the object is in place), but
 * says why.
 */
static int checkout_file(struct fetcher *f, const char *rel, const char *object,
			 const struct rs_pointer *p, const struct rs_buf *blob_text, int fresh)
{
	int placed = 0;

	if (rs_repo_checkout_object(f->repo, rel, object, p, blob_text, fresh, &placed) != 0)
		fprintf(stderr, "results: cannot check out '%s' (%s); the session is in the "
			"local LFS store\n", rel, rs_error_message());
	rs_error_clear();
	return placed;
}

/* Fetch one session file of one run and print where it is. */
static int fetch_one(struct fetcher *f, const struct rs_run_entry *run, const char *name,
		     const char *json_oid)
{
	struct rs_buf rel = RS_BUF_INIT, text = RS_BUF_INIT, object = RS_BUF_INIT;
	struct rs_buf dest = RS_BUF_INIT, what = RS_BUF_INIT;
	struct rs_pointer p = RS_POINTER_INIT;
	struct rs_id want;
	char hex[RS_ID_HEXSZ + 1];
	int err, status = RS_EXIT_OTHER, fresh = 0;

	/* fetch_run checked `name`; the run path was checked with the index. */
	rs_buf_printf(&rel, "%s/%s", run->path, name);
	rs_buf_printf(&what, "run %s, %s", run->id, name);
	err = rs_repo_read_tree_file(f->repo, NULL, rel.ptr, RS_POINTER_MAX, &text);
	if (err == 0)
		err = rs_pointer_parse(&p, text.ptr, text.len);
	if (err) {
		status = rs_cli_fail(err == RS_EGENERIC ? RS_EXIT_OTHER : RS_EXIT_CORRUPT,
				     "%s: no valid LFS pointer at '%s': %s", what.ptr, rel.ptr,
				     rs_error_message());
		goto out;
	}
	rs_id_to_hex(hex, &p.oid);
	if (json_oid && (rs_id_from_hex(&want, json_oid, strlen(json_oid)) != 0 ||
			 rs_id_cmp(&want, &p.oid) != 0)) {
		status = rs_cli_fail(RS_EXIT_CORRUPT, "%s: run.json says oid %.12s but the pointer "
				     "says %.12s", what.ptr, json_oid, hex);
		goto out;
	}
	err = rs_repo_lfs_object_path(&object, f->repo, &p.oid);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	if (rs_repo_lfs_has(f->repo, &p.oid, p.size) != 0) {
		fresh = 1;
		rs_error_clear();
		if (f->outdir) {
			/* Straight to DIR: the repository is left alone. */
			err = output_path(&dest, f->outdir, run, name);
		} else {
			/* Into .git/lfs/tmp, then renamed to its object path: a killed
			   fetch leaves a temporary file there (removed once stale by
			   the next add or fetch), never a partial file among the
			   objects. */
			err = rs_repo_lfs_tmp_path(&dest, f->repo);
		}
		if (err) {
			status = rs_cli_fail(rs_cli_exit_for(err), "%s: %s", what.ptr,
					     rs_error_message());
			goto out;
		}
		status = open_store(f);
		if (status != RS_EXIT_OK)
			goto out;
		err = rs_store_get_file(f->store, &p.oid, p.size, dest.ptr, NULL, NULL);
		if (err) {
			status = download_failed(err, what.ptr);
			goto out;
		}
		if (!f->outdir) {
			err = rs_repo_lfs_adopt(f->repo, dest.ptr, &p.oid);
			if (err) {
				status = rs_cli_report(err);
				goto out;
			}
		}
		if (f->outdir) {
			printf("%s\n", dest.ptr);
			status = RS_EXIT_OK;
			goto out;
		}
	} else if (f->outdir) {
		err = output_path(&dest, f->outdir, run, name);
		if (err) {
			status = rs_cli_fail(rs_cli_exit_for(err), "%s: %s", what.ptr,
					     rs_error_message());
			goto out;
		}
		err = rs_repo_copy_object(NULL, object.ptr, dest.ptr, &p.oid);
		if (err) {
			status = rs_cli_report(err);
			goto out;
		}
		printf("%s\n", dest.ptr);
		status = RS_EXIT_OK;
		goto out;
	}
	/* The run folder in the work tree: never through a symlink there. */
	err = rs_path_mkdirs_under(rs_repo_workdir(f->repo), rel.ptr);
	if (err) {
		status = rs_cli_fail(rs_cli_exit_for(err), "%s: %s", what.ptr, rs_error_message());
		goto out;
	}
	if (checkout_file(f, rel.ptr, object.ptr, &p, &text, fresh)) {
		printf("%s%s\n", rs_repo_workdir(f->repo), rel.ptr);
		/* Sessions are large and the work tree is where nobody looks. */
		fprintf(stderr, "results: %s (%.1f MB) is checked out in the work tree and kept "
			"in .git/lfs/objects; to free the space: rm '%s' '%s' && GIT_LFS_SKIP_SMUDGE=1 "
			"git checkout -- '%s'\n",
			rel.ptr, (double)p.size / 1e6, object.ptr, rel.ptr, rel.ptr);
	} else
		printf("%s\n", object.ptr);
	status = RS_EXIT_OK;
out:
	rs_pointer_release(&p);
	rs_buf_release(&rel);
	rs_buf_release(&text);
	rs_buf_release(&object);
	rs_buf_release(&dest);
	rs_buf_release(&what);
	return status;
}

/*
 * A file name from run.json becomes DIR/<id>/<name> and <run folder>/<name>
 * in the work tree: one plain name, no dot file (`results add` never
 * stores one; a '.gitattributes' there would change how git reads the
 * folder).
 */
static int check_file_name(const struct rs_run_entry *run, const char *run_json,
			   const char *name)
{
	if (rs_path_check(name, strlen(name), RS_PATH_NO_DOTFILES, "file name") != 0)
		return rs_cli_fail(RS_EXIT_CORRUPT, "run %s: %s: %s", run->id, run_json,
				   rs_error_message());
	return RS_EXIT_OK;
}

/*
 * The session files of a run, from its committed run.json: every file of
 * role "session" stored in LFS, else the "session" entry.
 */
static int fetch_run(struct fetcher *f, const struct rs_run_entry *run)
{
	struct rs_buf rel = RS_BUF_INIT, text = RS_BUF_INIT;
	json_t *root = NULL, *files, *item, *session;
	json_error_t jerr;
	size_t i;
	int status = RS_EXIT_OK, found = 0, err;

	rs_buf_printf(&rel, "%s/run.json", run->path);
	err = rs_repo_read_tree_file(f->repo, NULL, rel.ptr, RUN_JSON_MAX, &text);
	if (err) {
		status = rs_cli_fail(err == RS_ENOTFOUND ? RS_EXIT_CORRUPT : rs_cli_exit_for(err),
				     "run %s: cannot read %s: %s", run->id, rel.ptr, rs_error_message());
		goto out;
	}
	root = json_loadb(text.ptr, text.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(root)) {
		status = rs_cli_fail(RS_EXIT_CORRUPT, "run %s: %s is not valid JSON: %s", run->id,
				     rel.ptr, jerr.text);
		goto out;
	}
	files = json_object_get(root, "files");
	json_array_foreach(files, i, item) {
		const char *path = json_string_value(json_object_get(item, "path"));
		const char *role = json_string_value(json_object_get(item, "role"));

		if (!path || !role || strcmp(role, "session") != 0 ||
		    !json_is_true(json_object_get(item, "lfs")))
			continue;
		found++;
		status = check_file_name(run, rel.ptr, path);
		if (status != RS_EXIT_OK)
			goto out;
		status = fetch_one(f, run, path, json_string_value(json_object_get(item, "oid")));
		if (status != RS_EXIT_OK)
			goto out;
	}
	session = json_object_get(root, "session");
	if (!found && json_is_object(session) &&
	    json_is_string(json_object_get(session, "path"))) {
		found++;
		status = check_file_name(run, rel.ptr,
					 json_string_value(json_object_get(session, "path")));
		if (status == RS_EXIT_OK)
			status = fetch_one(f, run, json_string_value(json_object_get(session, "path")),
					   json_string_value(json_object_get(session, "oid")));
	}
	if (!found)
		status = rs_cli_fail(RS_EXIT_UNKNOWN, "run %s has no session to fetch (recorded "
				     "with --raw?)", run->id);
out:
	json_decref(root);
	rs_buf_release(&rel);
	rs_buf_release(&text);
	return status;
}

int cmd_fetch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fetcher f = { NULL, NULL, NULL, RS_BUF_INIT, NULL };
	struct rs_runindex idx;
	const struct rs_run_entry **runs = NULL;
	int c, i, n, status, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': f.outdir = optarg; break;
		case 'h': fputs(usage, stdout); return RS_EXIT_OK;
		default:
			return rs_cli_fail(RS_EXIT_USAGE, "fetch: bad option '%s'; see 'results fetch --help'",
					   argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return rs_cli_fail(RS_EXIT_USAGE, "fetch: name at least one run or commit; "
				   "see 'results list'");
	if (f.outdir && !*f.outdir)
		return rs_cli_fail(RS_EXIT_USAGE, "fetch: -o needs a directory");

	rs_runindex_init(&idx);
	status = rs_cli_open_repo(&f.repo);
	if (status != RS_EXIT_OK)
		goto out;
	/* With -o the repository is left alone, repairs included. */
	status = f.outdir ? RS_EXIT_OK : rs_cli_repair_repo(f.repo);
	if (status != RS_EXIT_OK)
		goto out;
	err = rs_runindex_load(&idx, f.repo, NULL, 0);
	if (err) {
		status = rs_cli_fail(err == RS_ECORRUPT ? RS_EXIT_CORRUPT : rs_cli_exit_for(err),
				     "cannot read the run index: %s", rs_error_message());
		goto out;
	}
	/* Resolve every query before moving any byte: a typo fails fast. */
	n = argc - optind;
	runs = calloc((size_t)n, sizeof(*runs));
	if (!runs) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		err = rs_runindex_resolve(&runs[i], &idx, argv[optind + i]);
		if (err) {
			status = rs_cli_error(err == RS_ENOTFOUND || err == RS_EUSAGE ? RS_EXIT_UNKNOWN
										  : rs_cli_exit_for(err));
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		int j, dup = 0;

		for (j = 0; j < i; j++)
			dup |= runs[j] == runs[i];
		if (dup)
			continue;
		status = fetch_run(&f, runs[i]);
		if (status != RS_EXIT_OK)
			goto out;
	}
out:
	free(runs);
	rs_runindex_release(&idx);
	rs_store_free(f.store);
	rs_remote_free(f.remote);
	rs_buf_release(&f.url);
	rs_repo_free(f.repo);
	return status;
}
