/* Shared by the table unit tests: a temporary folder of input files.
 * Each test's setup() creates `dir` (tmpdir_make) and writes what it needs. */
#ifndef PACER_TEST_TABLE_TMPFILES_H
#define PACER_TEST_TABLE_TMPFILES_H

#include <stdio.h>
#include <stdlib.h>

#include "common/tmpdir.h"

static char dir[256];

/* Write dir/name with len bytes of data. */
static void write_file(const char *name, const char *data, size_t len)
{
	char path[512];
	tmpdir_path(path, sizeof path, dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Remove the folder and everything in it. */
static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

#endif
