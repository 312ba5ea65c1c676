/*
 * AWS-style configuration lookup; aws_config.h states the order and why.
 * Only getenv, two small INI files and the repository config are read;
 * nothing here talks to the network (no instance metadata service: a
 * machine in EC2 can export its role's keys to the environment).
 */
#include "remote/aws_config.h"
#include "results/error.h"
#include "util/fs.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#define AWS_INI_MAX_FILE (1024 * 1024)
#define AWS_INI_MAX_LINE 4096
#define AWS_MAX_VALUE 2048 /* session tokens run to about 1 KiB */

/* malloc'd formatted string or NULL (no asprintf: it needs _GNU_SOURCE). */
static char *format_alloc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format_alloc(const char *fmt, ...)
{
	struct rs_buf b = RS_BUF_INIT;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = rs_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (err) {
		rs_buf_release(&b);
		return NULL;
	}
	return rs_buf_detach(&b, NULL);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static const char *cfg_nonempty(rs_config_get_fn get, void *payload, const char *key)
{
	const char *v = get ? get(key, payload) : NULL;

	return v && *v ? v : NULL;
}

static void trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

/*
 * One pass over the text: track the current section; in the wanted one,
 * return the first top-level "key = value". Indented lines continue the
 * previous key (aws-cli's nested sub-sections) and are skipped.
 */
int rs_aws_ini_find(char **out, const char *text, size_t len, const char *section,
		    const char *key)
{
	const char *p = text, *end = text + len;
	int in_section = 0;
	size_t lineno = 0;

	if (len > AWS_INI_MAX_FILE)
		return rs_error_set(RS_EUSAGE, "AWS settings file larger than %d bytes",
				    AWS_INI_MAX_FILE);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *s = p, *e = le;

		lineno++;
		p = nl ? nl + 1 : end;
		if ((size_t)(le - s) > AWS_INI_MAX_LINE)
			return rs_error_set(RS_EUSAGE, "line %zu is longer than %d bytes",
					    lineno, AWS_INI_MAX_LINE);
		if (s < e && (*s == ' ' || *s == '\t'))
			continue; /* nested value or continuation */
		trim(&s, &e);
		if (s == e || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			const char *cs = s + 1, *ce = e;

			if (ce[-1] != ']')
				continue; /* not a header; ignore like a comment */
			ce--;
			trim(&cs, &ce);
			in_section = (size_t)(ce - cs) == strlen(section) &&
				     !memcmp(cs, section, (size_t)(ce - cs));
			continue;
		}
		if (in_section) {
			const char *eq = memchr(s, '=', (size_t)(e - s));
			const char *ks = s, *ke, *vs, *ve = e;

			if (!eq)
				continue;
			ke = eq;
			vs = eq + 1;
			trim(&ks, &ke);
			trim(&vs, &ve);
			if ((size_t)(ke - ks) != strlen(key) || memcmp(ks, key, (size_t)(ke - ks)))
				continue;
			if (vs == ve)
				continue; /* "s3 =" opens a nested block, not a value */
			if (memchr(vs, '\0', (size_t)(ve - vs)))
				return rs_error_set(RS_EUSAGE, "line %zu has a NUL byte", lineno);
			*out = strndup(vs, (size_t)(ve - vs));
			return *out ? 0 : rs_error_set(RS_EGENERIC, "out of memory");
		}
	}
	return rs_error_set(RS_ENOTFOUND, "no '%s' in section [%s]", key, section);
}

int rs_aws_ini_get(char **out, const char *path, const char *section,
		   const char *key)
{
	struct rs_buf file = RS_BUF_INIT;
	int err;

	rs_buf_init(&file, AWS_INI_MAX_FILE + 1);
	err = rs_fs_read_file(&file, path, AWS_INI_MAX_FILE);
	if (err == RS_ENOTFOUND) {
		err = rs_error_set(RS_ENOTFOUND, "no file '%s'", path);
		goto out;
	}
	if (err) {
		err = rs_error_wrap(err, "cannot read AWS settings '%s'", path);
		goto out;
	}
	err = rs_aws_ini_find(out, rs_buf_cstr(&file), file.len, section, key);
	if (err)
		err = rs_error_wrap(err, "'%s'", path);
out:
	if (file.ptr)
		OPENSSL_cleanse(file.ptr, file.len); /* it held secrets */
	rs_buf_release(&file);
	return err;
}

struct aws_files {
	char *credentials;
	char *config;
	const char *profile;
	char *config_section;
};

static void aws_files_release(struct aws_files *f)
{
	free(f->credentials);
	free(f->config);
	free(f->config_section);
}

/* `set` (an environment variable's value) if not NULL, else <home>/<rel> if HOME is set. */
static int file_path(char **out, const char *set, const char *home, const char *rel)
{
	struct rs_buf b = RS_BUF_INIT;
	int err;

	*out = NULL;
	if (set) {
		*out = strdup(set);
		return *out ? 0 : rs_error_set(RS_EGENERIC, "out of memory");
	}
	if (!home)
		return 0;
	err = rs_fs_join(&b, home, rel);
	if (!err)
		*out = rs_buf_detach(&b, NULL);
	rs_buf_release(&b);
	return err;
}

static int aws_files_init(struct aws_files *f)
{
	const char *home = env_nonempty("HOME");
	int err;

	memset(f, 0, sizeof(*f));
	f->profile = env_nonempty("AWS_PROFILE");
	if (!f->profile)
		f->profile = env_nonempty("AWS_DEFAULT_PROFILE");
	if (!f->profile)
		f->profile = "default";

	err = file_path(&f->credentials, env_nonempty("AWS_SHARED_CREDENTIALS_FILE"), home,
			".aws/credentials");
	if (err)
		return err;
	err = file_path(&f->config, env_nonempty("AWS_CONFIG_FILE"), home, ".aws/config");
	if (err)
		return err;
	/* In the config file every profile but "default" is "[profile name]". */
	if (!strcmp(f->profile, "default"))
		f->config_section = strdup("default");
	else
		f->config_section = format_alloc("profile %s", f->profile);
	if (!f->config_section)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

/* Look `key` up in a file; a missing file or key is not an error. */
static int ini_lookup(char **out, const char *path, const char *section, const char *key)
{
	int err;

	*out = NULL;
	if (!path)
		return 0;
	err = rs_aws_ini_get(out, path, section, key);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		return 0;
	}
	if (!err && strlen(*out) > AWS_MAX_VALUE) {
		free(*out);
		*out = NULL;
		return rs_error_set(RS_EUSAGE, "'%s' in '%s' is too long", key, path);
	}
	return err;
}

static void free_secret(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

static int load_credentials(struct rs_aws_config *cfg, struct aws_files *f)
{
	const char *id = env_nonempty("AWS_ACCESS_KEY_ID");
	const char *secret = env_nonempty("AWS_SECRET_ACCESS_KEY");
	char *fid = NULL, *fsecret = NULL, *ftoken = NULL;
	const char *where[2] = { f->credentials, f->config };
	const char *sections[2] = { f->profile, f->config_section };
	int i, err = 0;

	if (id && secret) {
		cfg->access_key_id = strdup(id);
		cfg->secret_access_key = strdup(secret);
		cfg->session_token = dup_or_null(env_nonempty("AWS_SESSION_TOKEN"));
		cfg->credential_source = strdup("the environment (AWS_ACCESS_KEY_ID)");
		goto check;
	}
	for (i = 0; i < 2; i++) {
		err = ini_lookup(&fid, where[i], sections[i], "aws_access_key_id");
		if (err)
			goto out;
		if (!fid)
			continue;
		err = ini_lookup(&fsecret, where[i], sections[i], "aws_secret_access_key");
		if (err)
			goto out;
		err = ini_lookup(&ftoken, where[i], sections[i], "aws_session_token");
		if (err)
			goto out;
		if (!fsecret) {
			err = rs_error_set(RS_EAUTH,
					   "profile '%s' in '%s' has aws_access_key_id but no aws_secret_access_key",
					   f->profile, where[i]);
			goto out;
		}
		cfg->access_key_id = fid;
		cfg->secret_access_key = fsecret;
		cfg->session_token = ftoken;
		fid = fsecret = ftoken = NULL;
		cfg->credential_source = format_alloc("profile '%s' in '%s'",
						      f->profile, where[i]);
		goto check;
	}
	err = rs_error_set(RS_EAUTH,
			   "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
			   "or add profile '%s' to '%s'", f->profile,
			   f->credentials ? f->credentials : "~/.aws/credentials");
	goto out;
check:
	if (!cfg->access_key_id || !cfg->secret_access_key || !cfg->credential_source)
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	free(fid);
	free_secret(fsecret);
	free_secret(ftoken);
	return err;
}

/* An endpoint is "http(s)://host[:port][/]" with no path, query or space. */
static int normalise_endpoint(char **out, const char *url, const char *source)
{
	size_t len = strlen(url), i;
	const char *host;

	if (len > 1024)
		return rs_error_set(RS_EUSAGE, "the S3 endpoint from %s is too long", source);
	if (!strncmp(url, "https://", 8))
		host = url + 8;
	else if (!strncmp(url, "http://", 7))
		host = url + 7;
	else
		return rs_error_set(RS_EUSAGE,
				    "the S3 endpoint from %s must start with http:// or https://", source);
	for (i = 0; url[i]; i++)
		if ((unsigned char)url[i] <= ' ' || url[i] == '?' || url[i] == '#' ||
		    url[i] == '@' || (unsigned char)url[i] >= 127)
			return rs_error_set(RS_EUSAGE,
					    "the S3 endpoint from %s has a character that has no place there",
					    source);
	while (len > (size_t)(host - url) && url[len - 1] == '/')
		len--;
	if (len == (size_t)(host - url))
		return rs_error_set(RS_EUSAGE, "the S3 endpoint from %s names no host", source);
	if (memchr(host, '/', len - (size_t)(host - url)))
		return rs_error_set(RS_EUSAGE,
				    "the S3 endpoint from %s has a path; give only scheme://host[:port]",
				    source);
	*out = strndup(url, len);
	return *out ? 0 : rs_error_set(RS_EGENERIC, "out of memory");
}

static int valid_region(const char *r)
{
	size_t i;

	for (i = 0; r[i]; i++)
		if (!(isalnum((unsigned char)r[i]) || r[i] == '-' || r[i] == '_'))
			return 0;
	return i > 0 && i < 64;
}

/* results.s3.region, AWS_REGION, AWS_DEFAULT_REGION, the config file, us-east-1. */
static int load_region(struct rs_aws_config *cfg, rs_config_get_fn config_get,
		       void *config_payload, const struct aws_files *files)
{
	char *file_region = NULL;
	const char *v;
	int err = 0;

	v = cfg_nonempty(config_get, config_payload, "results.s3.region");
	if (!v)
		v = env_nonempty("AWS_REGION");
	if (!v)
		v = env_nonempty("AWS_DEFAULT_REGION");
	if (!v) {
		err = ini_lookup(&file_region, files->config, files->config_section, "region");
		if (err)
			goto out;
		v = file_region;
	}
	if (!v)
		v = "us-east-1";
	if (!valid_region(v)) {
		err = rs_error_set(RS_EUSAGE, "'%.64s' is not an AWS region name", v);
		goto out;
	}
	cfg->region = strdup(v);
	if (!cfg->region)
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	free(file_region);
	return err;
}

/*
 * results.s3.endpoint, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the config
 * file's endpoint_url, else none (AWS itself).
 */
static int load_endpoint(struct rs_aws_config *cfg, rs_config_get_fn config_get,
			 void *config_payload, const struct aws_files *files)
{
	static const char *const envs[] = { "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL" };
	char *file_endpoint = NULL;
	const char *v, *source = "results.s3.endpoint";
	size_t i;
	int err = 0;

	v = cfg_nonempty(config_get, config_payload, "results.s3.endpoint");
	for (i = 0; !v && i < sizeof(envs) / sizeof(envs[0]); i++) {
		v = env_nonempty(envs[i]);
		source = envs[i];
	}
	if (!v) {
		err = ini_lookup(&file_endpoint, files->config, files->config_section,
				 "endpoint_url");
		if (err)
			goto out;
		v = file_endpoint;
		source = "endpoint_url in the AWS config file";
	}
	if (v)
		err = normalise_endpoint(&cfg->endpoint, v, source);
out:
	free(file_endpoint);
	return err;
}

/* Path-style with an endpoint, else virtual hosts; results.s3.addressing decides. */
static int load_addressing(struct rs_aws_config *cfg, rs_config_get_fn config_get,
			   void *config_payload)
{
	const char *addressing = cfg_nonempty(config_get, config_payload, "results.s3.addressing");

	cfg->path_style = cfg->endpoint != NULL;
	if (!addressing)
		return 0;
	if (!strcmp(addressing, "path"))
		cfg->path_style = 1;
	else if (!strcmp(addressing, "virtual"))
		cfg->path_style = 0;
	else
		return rs_error_set(RS_EUSAGE, "results.s3.addressing is '%.32s'; use 'path' or "
				    "'virtual'", addressing);
	return 0;
}

int rs_aws_config_load(struct rs_aws_config *out, rs_config_get_fn config_get,
		       void *config_payload)
{
	struct rs_aws_config cfg;
	struct aws_files files;
	int err;

	memset(&cfg, 0, sizeof(cfg));
	err = aws_files_init(&files);
	if (err)
		goto out;
	err = load_credentials(&cfg, &files);
	if (err)
		goto out;
	err = load_region(&cfg, config_get, config_payload, &files);
	if (err)
		goto out;
	err = load_endpoint(&cfg, config_get, config_payload, &files);
	if (err)
		goto out;
	err = load_addressing(&cfg, config_get, config_payload);
	if (err)
		goto out;
	*out = cfg;
	memset(&cfg, 0, sizeof(cfg));
out:
	rs_aws_config_release(&cfg);
	aws_files_release(&files);
	return err;
}

void rs_aws_config_release(struct rs_aws_config *cfg)
{
	free(cfg->access_key_id);
	free_secret(cfg->secret_access_key);
	free_secret(cfg->session_token);
	free(cfg->region);
	free(cfg->endpoint);
	free(cfg->credential_source);
	memset(cfg, 0, sizeof(*cfg));
}
