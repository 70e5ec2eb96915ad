/* pacer — request tables: every file the table module reads goes through
 * here (the files of table_load, table_har_import and table_mix_load, body
 * files a table names, folders of bodies). See table_int.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "http/req.h"
#include "http/url.h"
#include "table/table_int.h"
#include "util/err.h"
#include "util/file.h"

int tb_read_file(const char *path, size_t max_bytes, char **text, size_t *len, char *err,
                 size_t cap)
{
	*text = NULL;
	*len = 0;
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return tb_err(err, cap, -EISDIR, "%s: cannot read: it is a folder", path);
	int rc = file_read_all(path, max_bytes, text, len);
	if (rc == PACER_ETOOBIG)
		return tb_err(err, cap, rc, "%s: over the limit of %zu bytes", file_shown(path),
			      max_bytes);
	if (rc)
		return tb_err(err, cap, rc, "%s: cannot read: %s", file_shown(path), strerror(-rc));
	return 0;
}

char *tb_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

int tb_body_file(struct tb *b, const char *base_dir, const char *path, size_t path_len,
                 const char **body, size_t *len)
{
	if (b->lim.no_body_files)
		return tb_why(b, PACER_EUNSUPPORTED, "body files are not allowed here");
	if (path_len == 0)
		return tb_why(b, PACER_EPARSE, "empty body file name");
	if (memchr(path, '\0', path_len))
		return tb_why(b, PACER_EPARSE, "body file name has a NUL byte");
	if (path_len > 4096)
		return tb_why(b, PACER_ETOOBIG, "body file name longer than 4096 bytes");
	struct tb_map_slot *s = tb_map_find(b, &b->bodies, path, path_len, false, 0);
	if (s) {
		*body = b->cached[s->val].p;
		*len = b->cached[s->val].len;
		return 0;
	}
	char full[8200];
	if (path[0] == '/' || !base_dir || !*base_dir || strcmp(base_dir, ".") == 0)
		snprintf(full, sizeof full, "%.*s", (int)path_len, path);
	else
		snprintf(full, sizeof full, "%s/%.*s", base_dir, (int)path_len, path);
	char *buf = NULL;
	size_t n = 0;
	struct stat st;
	if (stat(full, &st) == 0 && S_ISDIR(st.st_mode))
		return tb_why(b, -EISDIR, "body file %s is a folder", full);
	int rc = file_read_all(full, b->lim.max_body_bytes, &buf, &n);
	if (rc == PACER_ETOOBIG)
		return tb_why(b, rc, "body file %s is over the limit of %zu bytes (--max-body)", full,
		              b->lim.max_body_bytes);
	if (rc)
		return tb_why(b, rc, "cannot read body file %s: %s", full, strerror(-rc));
	if (b->total + n > b->lim.max_total_bytes) {
		free(buf);
		return tb_why(b, PACER_ETOOBIG, "the table is over the limit of %llu bytes in all",
		              (unsigned long long)b->lim.max_total_bytes);
	}
	if (b->n_cached == b->cap_cached) {
		size_t nc = b->cap_cached ? b->cap_cached * 2 : 8;
		struct tb_body *ncached = realloc(b->cached, nc * sizeof *ncached);
		if (!ncached) {
			free(buf);
			return -ENOMEM;
		}
		b->cached = ncached;
		b->cap_cached = nc;
	}
	char *copy = n ? tb_alloc(b, n) : NULL;
	if (n && !copy) {
		free(buf);
		return -ENOMEM;
	}
	if (n)
		memcpy(copy, buf, n);
	free(buf);
	if (!tb_map_find(b, &b->bodies, path, path_len, true, b->n_cached))
		return -ENOMEM;
	b->cached[b->n_cached++] = (struct tb_body){copy, n};
	b->total += n;
	*body = copy;
	*len = n;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int table_from_bodies(const char *dir, const char *url, const char *method,
                      const char *content_type, const struct table_limits *lim,
                      struct table **out, char *err, size_t cap)
{
	*out = NULL;
	if (err && cap)
		err[0] = '\0';
	if (!method)
		method = "POST";
	struct tb b;
	int rc = tb_init(&b, lim, TABLE_FMT_BODIES, dir);
	if (rc)
		return tb_err(err, cap, rc, "%s: out of memory", dir);
	const char *why = NULL, *upath = NULL, *http = NULL;
	size_t upath_len = 0;
	if (req_method_check(method))
		rc = tb_err(err, cap, PACER_EPARSE, "bad method '%.40s': expected a token such as POST",
		            method);
	else if ((rc = table_url_unix(url, &upath, &upath_len, &http, &why)) ||
	         (rc = url_parse(b.u, http, &why)))
		rc = tb_err(err, cap, rc, "bad URL '%.100s': %s", url, why);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	DIR *d = opendir(dir);
	if (!d) {
		rc = -errno;
		tb_abort(&b);
		return tb_err(err, cap, rc, "%s: cannot open the folder: %s", dir, strerror(-rc));
	}
	char **names = NULL;
	size_t n = 0, ncap = 0;
	struct dirent *e;
	errno = 0;
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n >= b.lim.max_requests) {
			rc = tb_err(err, cap, PACER_ETOOBIG, "%s: more than %zu files (the request limit)", dir,
			            b.lim.max_requests);
			break;
		}
		if (n == ncap) {
			size_t nc = ncap ? ncap * 2 : 64;
			char **nn = realloc(names, nc * sizeof *nn);
			if (!nn) {
				rc = -ENOMEM;
				break;
			}
			names = nn;
			ncap = nc;
		}
		if (!(names[n] = strdup(e->d_name)))
			rc = -ENOMEM;
		else
			n++;
	}
	if (!rc && errno)
		rc = tb_err(err, cap, -errno, "%s: cannot list the folder: %s", dir, strerror(errno));
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	struct tb_hdr ct = {"Content-Type", 12, content_type, content_type ? strlen(content_type) : 0};
	size_t made = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		size_t plen = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(plen);
		if (!path) {
			rc = -ENOMEM;
			break;
		}
		snprintf(path, plen, "%s/%s", dir, names[i]);
		struct stat st;
		if (stat(path, &st) != 0) {
			rc = tb_err(err, cap, -errno, "%s: %s", path, strerror(errno));
		} else if (S_ISREG(st.st_mode)) {
			char *body = NULL;
			size_t len = 0;
			rc = file_read_all(path, b.lim.max_body_bytes, &body, &len);
			if (rc == PACER_ETOOBIG)
				rc = tb_err(err, cap, rc, "%s: over the limit of %zu bytes (--max-body)", path,
				            b.lim.max_body_bytes);
			else if (rc)
				rc = tb_err(err, cap, rc, "%s: cannot read: %s", path, strerror(-rc));
			if (!rc) {
				struct tb_req r = {.method = method, .url = url, .headers = &ct,
				                   .n_headers = content_type ? 1 : 0, .body = body,
				                   .body_len = len, .line = (unsigned)(made + 1)};
				rc = tb_add(&b, &r);
				if (rc)
					rc = tb_err(err, cap, rc, "%s: %s", path, b.why[0] ? b.why : err_name(rc));
				made++;
			}
			free(body);
		}
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc == -ENOMEM && err && cap && !err[0])
		tb_err(err, cap, rc, "%s: out of memory", dir);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	struct table *t = tb_finish(&b);
	if (!t)
		return tb_err(err, cap, PACER_EPARSE, "%s: no files to send (the folder is empty)", dir);
	*out = t;
	return 0;
}
