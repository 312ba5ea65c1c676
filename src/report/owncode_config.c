/* The committed own-code setting (owncode_config.h). */
#include "report/owncode_config.h"

#include "git/repo.h"
#include "results/buf.h"

void rs_own_code_load(struct rs_own_code *own, struct rs_repo *repo)
{
	struct rs_buf text = RS_BUF_INIT;

	own->config = NULL;
	if (!rs_repo_read_tree_file(repo, NULL, RS_REPO_MARKER, RS_REPO_MARKER_MAX, &text) &&
	    text.len)
		own->config = json_loadb(text.ptr, text.len, 0, NULL);
	rs_buf_release(&text);
	rs_error_clear();
	if (!json_is_object(own->config)) {
		json_decref(own->config);
		own->config = json_object();
	}
	own->oc.n_specs = rs_owncode_from_config(own->config, own->specs, RS_OWN_SPECS_MAX);
	own->oc.specs = own->specs;
}

void rs_own_code_release(struct rs_own_code *own)
{
	json_decref(own->config);
	own->config = NULL;
}
