/*
 * AWS-style credential, region and endpoint resolution (aws_config.h):
 * the environment, the two INI files with their profile section names,
 * the repository config, the precedence between them and the caps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "remote/aws_config.h"
#include "results/error.h"

static char tmpdir[64];
static char cred_path[128], conf_path[128];

static const char *const aws_vars[] = {
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
	"AWS_CONFIG_FILE", "AWS_REGION", "AWS_DEFAULT_REGION",
	"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	size_t i;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/rs-awscfg-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(cred_path, sizeof(cred_path), "%s/credentials", tmpdir);
	snprintf(conf_path, sizeof(conf_path), "%s/config", tmpdir);
	for (i = 0; i < sizeof(aws_vars) / sizeof(aws_vars[0]); i++)
		unsetenv(aws_vars[i]);
	/* HOME points at an empty folder: nothing of the real user leaks in. */
	setenv("HOME", tmpdir, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(cred_path);
	unlink(conf_path);
	rmdir(tmpdir);
	return 0;
}

struct fake_config {
	const char *region, *endpoint, *addressing;
};

static const char *fake_get(const char *key, void *payload)
{
	struct fake_config *c = payload;

	if (!strcmp(key, "results.s3.region"))
		return c->region;
	if (!strcmp(key, "results.s3.endpoint"))
		return c->endpoint;
	if (!strcmp(key, "results.s3.addressing"))
		return c->addressing;
	return NULL;
}

/* `cfg` holds these keys (`token` NULL: no session token). */
static void assert_keys(const struct rs_aws_config *cfg, const char *id, const char *secret, const char *token)
{
	assert_string_equal(cfg->access_key_id, id);
	assert_string_equal(cfg->secret_access_key, secret);
	if (token)
		assert_string_equal(cfg->session_token, token);
	else
		assert_null(cfg->session_token);
}

static void test_env_credentials(void **state)
{
	struct rs_aws_config cfg;

	(void)state;
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
	setenv("AWS_SESSION_TOKEN", "envtoken", 1);
	assert_int_equal(rs_aws_config_load(&cfg, NULL, NULL), 0);
	assert_keys(&cfg, "AKIDENV", "envsecret", "envtoken");
	assert_string_equal(cfg.region, "us-east-1");
	assert_null(cfg.endpoint);
	assert_int_equal(cfg.path_style, 0);
	assert_null(strstr(cfg.credential_source, "envsecret"));
	rs_aws_config_release(&cfg);
}

static void test_no_credentials(void **state)
{
	struct rs_aws_config cfg;

	(void)state;
	setenv("AWS_SECRET_ACCESS_KEY", "lonelysecret", 1); /* no key id */
	assert_int_equal(rs_aws_config_load(&cfg, NULL, NULL), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "AWS_ACCESS_KEY_ID"));
	assert_null(strstr(rs_error_message(), "lonelysecret"));
}

static void test_profile_files(void **state)
{
	struct rs_aws_config cfg;

	(void)state;
	write_file(cred_path,
		   "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\n"
		   "aws_secret_access_key = defsecret\n\n"
		   "[dev]\n  aws_access_key_id=ignored-indented\n"
		   "aws_access_key_id =  AKIDDEV  \naws_secret_access_key= devsecret\n"
		   "aws_session_token = devtoken\n");
	write_file(conf_path,
		   "[default]\nregion = eu-central-1\n"
		   "[profile dev]\ns3 =\n  endpoint_url = http://nested.invalid\n"
		   "region = ap-south-1\nendpoint_url = http://127.0.0.1:9000/\n"
		   "[dev]\nregion = wrong-section\n");
	setenv("AWS_SHARED_CREDENTIALS_FILE", cred_path, 1);
	setenv("AWS_CONFIG_FILE", conf_path, 1);

	assert_int_equal(rs_aws_config_load(&cfg, NULL, NULL), 0);
	assert_keys(&cfg, "AKIDDEFAULT", "defsecret", NULL);
	assert_string_equal(cfg.region, "eu-central-1");
	assert_null(cfg.endpoint);
	rs_aws_config_release(&cfg);

	setenv("AWS_PROFILE", "dev", 1);
	assert_int_equal(rs_aws_config_load(&cfg, NULL, NULL), 0);
	assert_keys(&cfg, "AKIDDEV", "devsecret", "devtoken");
	assert_string_equal(cfg.region, "ap-south-1");
	assert_string_equal(cfg.endpoint, "http://127.0.0.1:9000");
	assert_int_equal(cfg.path_style, 1);
	assert_non_null(strstr(cfg.credential_source, "profile 'dev'"));
	rs_aws_config_release(&cfg);

	/* The environment's keys beat the profile, as in aws-cli. */
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
	assert_int_equal(rs_aws_config_load(&cfg, NULL, NULL), 0);
	assert_string_equal(cfg.access_key_id, "AKIDENV");
	assert_null(cfg.session_token);
	rs_aws_config_release(&cfg);

	/* A profile that exists nowhere: a clear error. */
	unsetenv("AWS_ACCESS_KEY_ID");
	setenv("AWS_PROFILE", "nosuch", 1);
	assert_int_equal(rs_aws_config_load(&cfg, NULL, NULL), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "'nosuch'"));
}

static void test_credentials_in_config_file(void **state)
{
	struct rs_aws_config cfg;

	(void)state;
	write_file(conf_path, "[profile ci]\naws_access_key_id = AKIDCONF\n"
			      "aws_secret_access_key = confsecret\n");
	setenv("AWS_CONFIG_FILE", conf_path, 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", cred_path, 1); /* does not exist */
	setenv("AWS_PROFILE", "ci", 1);
	unlink(cred_path);
	assert_int_equal(rs_aws_config_load(&cfg, NULL, NULL), 0);
	assert_string_equal(cfg.access_key_id, "AKIDCONF");
	rs_aws_config_release(&cfg);

	write_file(conf_path, "[profile ci]\naws_access_key_id = AKIDCONF\n");
	assert_int_equal(rs_aws_config_load(&cfg, NULL, NULL), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "no aws_secret_access_key"));
}

/* The settings load: `region`, `endpoint` and (unless -1) `path_style`. */
static void assert_loaded(struct fake_config *fc, const char *region, const char *endpoint, int path_style)
{
	struct rs_aws_config cfg;

	assert_int_equal(rs_aws_config_load(&cfg, fake_get, fc), 0);
	assert_string_equal(cfg.region, region);
	assert_string_equal(cfg.endpoint, endpoint);
	if (path_style >= 0)
		assert_int_equal(cfg.path_style, path_style);
	rs_aws_config_release(&cfg);
}

static void test_region_and_endpoint_precedence(void **state)
{
	struct fake_config fc = { NULL, NULL, NULL };
	struct rs_aws_config cfg;

	(void)state;
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
	write_file(conf_path, "[default]\nregion = from-file-1\nendpoint_url = http://file:1\n");
	setenv("AWS_CONFIG_FILE", conf_path, 1);

	assert_loaded(&fc, "from-file-1", "http://file:1", -1);

	setenv("AWS_DEFAULT_REGION", "default-region-1", 1);
	setenv("AWS_ENDPOINT_URL", "http://generic:2", 1);
	assert_loaded(&fc, "default-region-1", "http://generic:2", -1);

	setenv("AWS_REGION", "region-1", 1);
	setenv("AWS_ENDPOINT_URL_S3", "https://s3only:3/", 1);
	assert_loaded(&fc, "region-1", "https://s3only:3", 1);

	fc.region = "repo-region-1";
	fc.endpoint = "http://repo:4";
	fc.addressing = "virtual";
	assert_loaded(&fc, "repo-region-1", "http://repo:4", 0);

	fc.endpoint = "http://repo:4/some/path";
	assert_int_equal(rs_aws_config_load(&cfg, fake_get, &fc), RS_EUSAGE);
	fc.endpoint = "ftp://repo";
	assert_int_equal(rs_aws_config_load(&cfg, fake_get, &fc), RS_EUSAGE);
	fc.endpoint = NULL;
	fc.region = "us-east-1/../x";
	assert_int_equal(rs_aws_config_load(&cfg, fake_get, &fc), RS_EUSAGE);
	fc.region = NULL;
	fc.addressing = "sideways";
	assert_int_equal(rs_aws_config_load(&cfg, fake_get, &fc), RS_EUSAGE);
}

static void test_ini_caps(void **state)
{
	char *v = NULL;
	char *big;
	FILE *f;

	(void)state;
	/* A line over 4 KiB is refused, not truncated into a wrong value. */
	big = malloc(6000);
	assert_non_null(big);
	memset(big, 'a', 5999);
	big[5999] = '\0';
	f = fopen(cred_path, "w");
	assert_non_null(f);
	fprintf(f, "[default]\naws_access_key_id = %s\n", big);
	fclose(f);
	assert_int_equal(rs_aws_ini_get(&v, cred_path, "default", "aws_access_key_id"),
			 RS_EUSAGE);
	free(big);

	/* A file over 1 MiB is refused. */
	f = fopen(cred_path, "w");
	assert_non_null(f);
	for (int i = 0; i < 20000; i++)
		fputs("# padding padding padding padding padding padding padding\n", f);
	fclose(f);
	assert_int_equal(rs_aws_ini_get(&v, cred_path, "default", "x"), RS_ETOOBIG);

	write_file(cred_path, "[default]\nkey=value");  /* no final newline */
	assert_int_equal(rs_aws_ini_get(&v, cred_path, "default", "key"), 0);
	assert_string_equal(v, "value");
	free(v);
	assert_int_equal(rs_aws_ini_get(&v, cred_path, "other", "key"), RS_ENOTFOUND);
	assert_int_equal(rs_aws_ini_get(&v, "/nonexistent/x", "default", "key"), RS_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_env_credentials, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_credentials, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credentials_in_config_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_region_and_endpoint_precedence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ini_caps, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
