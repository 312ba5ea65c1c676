/*
 * Replays every file in the directories (or files) named on the command
 * line through LLVMFuzzerTestOneInput, so that a fuzz target's corpus runs
 * as an ordinary test without libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p;
	long n;

	if (!f) {
		fprintf(stderr, "replay: cannot open '%s'\n", path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc(n > 0 ? (size_t)n : 1);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		fclose(f);
		free(p);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(p, (size_t)n);
	free(p);
	return 0;
}

int main(int argc, char **argv)
{
	int i, files = 0, failed = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: no corpus at '%s'\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed |= run_file(argv[i]);
			files++;
			continue;
		}
		d = opendir(argv[i]);
		for (e = d ? readdir(d) : NULL; e; e = readdir(d)) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			failed |= run_file(path);
			files++;
		}
		if (d)
			closedir(d);
	}
	if (files == 0) {
		fprintf(stderr, "replay: empty corpus\n");
		return 1;
	}
	printf("%d passed, %d failed\n", failed ? files - 1 : files, failed ? 1 : 0);
	return failed;
}
