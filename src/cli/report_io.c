/* pacer — reading result files and writing report folders (see
 * cli/report_io.h). */
#include "cli/report_io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/signals.h"
#include "dist/frame.h"
#include "report/render.h"
#include "util/afile.h"
#include "util/err.h"
#include "util/file.h"
#include "util/text.h"

int cli_result_load(struct loaded_result *r, const char *file, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	/* "-": standard input, named so in messages */
	const char *path = file_shown(file);
	bool in = strcmp(file, "-") == 0;
	char *buf = NULL;
	size_t len = 0;
	struct stat st;
	/* refuse a big regular file before reading any of it */
	if (!in && stat(file, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size > RESULT_READ_CAP) {
		text_errf(err, errlen, "%s: larger than %u MiB", path, RESULT_READ_CAP >> 20);
		return PACER_ETOOBIG;
	}
	if (!in && stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
		text_errf(err, errlen, "%s: cannot read: is a directory", path);
		return -EISDIR;
	}
	int rc = file_read_all(file, RESULT_READ_CAP, &buf, &len);
	if (rc == PACER_ETOOBIG) {
		text_errf(err, errlen, "%s: larger than %u MiB", path, RESULT_READ_CAP >> 20);
		return rc;
	}
	if (rc) {
		text_errf(err, errlen, "%s: cannot read: %s", path, err_name(rc));
		return rc;
	}
	if (frame_present(buf, len)) {
		/* a log with one framed result (pacer merge takes several apart) */
		struct frame_list fl;
		char ferr[512];
		rc = frame_scan(buf, len, RESULT_READ_CAP, &fl, ferr, sizeof ferr);
		free(buf);
		if (rc) {
			text_errf(err, errlen, "%s: %s", path, ferr);
			return rc;
		}
		if (fl.n != 1) {
			text_errf(err, errlen, "%s: %zu framed results in it: merge them (pacer merge), or "
					       "give one",
				  path, fl.n);
			frame_list_free(&fl);
			return PACER_EUNSUPPORTED;
		}
		rc = result_read_mem(r, fl.v[0].json, fl.v[0].len, path, err, errlen);
		frame_list_free(&fl);
		return rc;
	}
	rc = result_read_mem(r, buf, len, path, err, errlen);
	free(buf);
	return rc;
}

/* File i of the folder d, into tmp/NAME; messages name dir/NAME, where it
 * is meant to go. */
static int write_one(const struct report_dir *d, size_t i, const char *tmp, const char *dir,
		     char *err, size_t errlen)
{
	const char *name = report_dir_name(d, i);
	char path[PATH_MAX], shown[PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", tmp, name) >= sizeof path) {
		snprintf(err, errlen, "%s/%s: path too long", dir, name);
		return -ENAMETOOLONG;
	}
	snprintf(shown, sizeof shown, "%s/%s", dir, name);
	struct afile af;
	int rc = afile_open(&af, path);
	if (rc) {
		snprintf(err, errlen, "%s: cannot create: %s", shown, err_name(rc));
		return rc;
	}
	char e2[512] = "";
	rc = report_dir_write(d, i, af.f, e2, sizeof e2);
	if (rc) {
		afile_abort(&af);
		snprintf(err, errlen, "%s: %s", shown, e2[0] ? e2 : err_name(rc));
	} else {
		rc = afile_commit(&af);
		if (rc)
			snprintf(err, errlen, "%s: cannot write: %s", shown, err_name(rc));
	}
	return rc;
}

/* Remove the first n files of d from tmp, then tmp. */
static void remove_tmp(const struct report_dir *d, size_t n, const char *tmp)
{
	char path[PATH_MAX];
	for (size_t i = 0; i < n; i++)
		if ((size_t)snprintf(path, sizeof path, "%s/%s", tmp, report_dir_name(d, i)) <
		    sizeof path)
			unlink(path);
	rmdir(tmp);
}

/* The temporaries of cli_report_folder_write_trend, the first n files
 * in[] and the folder tmp, no longer named to afile; in freed. */
static void forget_tmp(char (*in)[PATH_MAX], size_t n, const char *tmp)
{
	for (size_t i = 0; i < n; i++)
		afile_pending_forget(in[i]);
	afile_pending_forget(tmp);
	free(in);
}

int cli_report_folder_write(const struct loaded_result *r, const char *dir, char *err,
			    size_t errlen)
{
	return cli_report_folder_write_trend(r, NULL, dir, err, errlen);
}

int cli_report_folder_write_trend(const struct loaded_result *r, const struct report_trend *trend,
				  const char *dir, char *err, size_t errlen)
{
	char scratch[8];
	if (!err || !errlen) {
		err = scratch;
		errlen = sizeof scratch;
	}
	err[0] = '\0';
	if (!r || !r->root || !dir || !*dir) {
		snprintf(err, errlen, "no result or no folder");
		return -EINVAL;
	}
	int rc = file_mkdir_p(dir);
	if (rc) {
		snprintf(err, errlen, "%s: cannot create the folder: %s", dir, err_name(rc));
		text_one_line(err);
		return rc;
	}
	struct report_dir *d;
	rc = report_dir_open_trend(&d, r, trend, err, errlen);
	if (rc) {
		text_one_line(err);
		return rc;
	}
	/* All or nothing: every file is written into a fresh folder inside dir
	 * first, and only when all of them are complete are they renamed into
	 * place; a failure leaves dir as it was. */
	char tmp[PATH_MAX];
	int tl = snprintf(tmp, sizeof tmp, "%s/.pacer-report-XXXXXX", dir);
	if (tl < 0 || (size_t)tl >= sizeof tmp)
		rc = -ENAMETOOLONG;
	else if (!mkdtemp(tmp))
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "%s: cannot create a folder in it: %s", dir, err_name(rc));
		report_dir_free(d);
		text_one_line(err);
		return rc;
	}
	size_t n = report_dir_count(d), done = 0;
	/* the folder and each file in it are named to afile before they are
	 * made: a signal that ends pacer meanwhile removes them */
	char(*inside)[PATH_MAX] = calloc(n ? n : 1, sizeof *inside);
	if (!inside) {
		rmdir(tmp);
		report_dir_free(d);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	afile_pending_add(tmp);
	for (; rc == 0 && done < n; done++) {
		if ((size_t)snprintf(inside[done], sizeof inside[done], "%s/%s", tmp,
				     report_dir_name(d, done)) < sizeof inside[done])
			afile_pending_add(inside[done]); /* else write_one says so */
		rc = write_one(d, done, tmp, dir, err, errlen);
		if (!rc && done == 0)
			cli_test_signal("report-file"); /* the first file */
	}
	if (rc) {
		remove_tmp(d, done, tmp);
		forget_tmp(inside, done, tmp);
		report_dir_free(d);
		text_one_line(err);
		return rc;
	}
	/* what would make a rename fail half-way, or land where it must not:
	 * anything but a regular file (a folder, a link, a device) in a file's
	 * place */
	for (size_t i = 0; i < n && rc == 0; i++) {
		char to[PATH_MAX + 64];
		struct stat st;
		int l = snprintf(to, sizeof to, "%s/%s", dir, report_dir_name(d, i));
		if (l > 0 && (size_t)l < sizeof to && lstat(to, &st) == 0 && !S_ISREG(st.st_mode)) {
			rc = S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
			snprintf(err, errlen, "%s: cannot write: %s", to,
				 S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file");
		}
	}
	if (rc) {
		remove_tmp(d, n, tmp);
		forget_tmp(inside, n, tmp);
		report_dir_free(d);
		text_one_line(err);
		return rc;
	}
	/* the renames with SIGINT and SIGTERM held back (a moment: no file is
	 * written), so that a signal never leaves the folder half the new
	 * report and half the old */
	sigset_t sigs, old;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	for (size_t i = 0; i < n && rc == 0; i++) {
		char from[PATH_MAX + 64], to[PATH_MAX + 64];
		const char *name = report_dir_name(d, i);
		int l1 = snprintf(from, sizeof from, "%s/%s", tmp, name);
		int l2 = snprintf(to, sizeof to, "%s/%s", dir, name);
		if (l1 < 0 || l2 < 0 || (size_t)l1 >= sizeof from || (size_t)l2 >= sizeof to) {
			rc = -ENAMETOOLONG;
			snprintf(err, errlen, "%s/%s: path too long", dir, name);
		} else if (rename(from, to) != 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: cannot write: %s", to, err_name(rc));
		}
	}
	remove_tmp(d, n, tmp); /* empty unless a rename failed */
	forget_tmp(inside, n, tmp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	report_dir_free(d);
	text_one_line(err);
	return rc;
}

int cli_report_folder_write_from(const char *result_path, const char *dir, char *err,
				 size_t errlen)
{
	struct loaded_result r;
	int rc = cli_result_load(&r, result_path, err, errlen);
	if (rc)
		return rc;
	rc = cli_report_folder_write(&r, dir, err, errlen);
	result_free(&r);
	return rc;
}

const char *cli_output_why(int rc)
{
	return rc == -ENXIO ? "a FIFO that no process reads (start its reader first)"
			    : err_name(rc);
}

int cli_outputs_check(const char *cmd, const char *const *opt, const char *const *path,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!path[i])
			continue;
		int rc = afile_check(path[i]);
		if (rc) {
			fprintf(stderr, "pacer %s: --%s %s: cannot write there: %s\n", cmd, opt[i],
				path[i], cli_output_why(rc));
			return EXIT_USAGE;
		}
	}
	return 0;
}

int cli_result_render(const char *cmd, int (*write)(FILE *f, const void *arg), const void *arg,
		      char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	FILE *m = open_memstream(buf, len);
	int rc = m ? write(m, arg) : -ENOMEM;
	if (m && fclose(m) != 0 && !rc)
		rc = -ENOMEM;
	if (rc) {
		fprintf(stderr, "pacer %s: cannot render the result: %s\n", cmd, err_name(rc));
		free(*buf);
		*buf = NULL;
		*len = 0;
		return EXIT_RUNTIME;
	}
	return 0;
}

int cli_result_emit_buf(const char *cmd, const char *buf, size_t len, const char *out_path,
			const char *dir)
{
	int rc;
	if (out_path) {
		struct afile af;
		rc = afile_open(&af, out_path);
		if (!rc) {
			cli_test_signal("out-open");
			if (fwrite(buf, 1, len, af.f) != len) {
				rc = -(errno ? errno : EIO);
				afile_abort(&af);
			} else {
				rc = afile_commit(&af);
			}
		}
		if (rc) {
			fprintf(stderr, "pacer %s: cannot write --out %s: %s\n", cmd, out_path,
				cli_output_why(rc));
			return EXIT_RUNTIME;
		}
	}
	if (dir) {
		char err[512];
		struct loaded_result r;
		rc = result_read_mem(&r, buf, len, out_path ? out_path : "result", err, sizeof err);
		if (!rc) {
			rc = cli_report_folder_write(&r, dir, err, sizeof err);
			result_free(&r);
		}
		if (rc) {
			fprintf(stderr, "pacer %s: --report-dir: %s\n", cmd, err);
			return EXIT_RUNTIME;
		}
	}
	return 0;
}

bool cli_report_dir_refused(const char *cmd, const char *dir)
{
	if (strcmp(dir, "-") != 0)
		return false;
	fprintf(stderr,
		"pacer %s: --report-dir -: a folder is needed (several files go in it); "
		"for the JSON on stdout: -o -\n",
		cmd);
	return true;
}

int cli_report_dir_prepare(const char *cmd, const char *dir, const char **out_path, char *buf,
			   size_t cap)
{
	if (!dir)
		return 0;
	if (cli_report_dir_refused(cmd, dir))
		return EXIT_USAGE;
	int rc = file_mkdir_p(dir);
	if (rc) {
		fprintf(stderr, "pacer %s: --report-dir %s: cannot create it: %s\n", cmd, dir,
			err_name(rc));
		return EXIT_USAGE;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		fprintf(stderr, "pacer %s: --report-dir %s: cannot write there: %s\n", cmd, dir,
			err_name(-errno));
		return EXIT_USAGE;
	}
	if (!*out_path) {
		if ((size_t)snprintf(buf, cap, "%s/result.json", dir) >= cap) {
			fprintf(stderr, "pacer %s: --report-dir %s: path too long\n", cmd, dir);
			return EXIT_USAGE;
		}
		*out_path = buf;
	}
	return 0;
}

void cli_summary_next(FILE *out, const char *out_path, const char *report_dir)
{
	if (out_path && afile_is_stdout(out_path))
		return;
	fputc('\n', out);
	if (report_dir)
		fprintf(out, "  Full report: %s/report.html (result: %s)\n", report_dir,
			out_path ? out_path : "?");
	else if (out_path)
		fprintf(out, "  Full report: pacer report %s --format html -o report.html\n", out_path);
	else
		fprintf(out, "  Not kept: -o FILE or --report-dir DIR keeps the result and its full "
			     "report.\n");
	fflush(out);
}

/* A terminal's rows when out is one (24 when it does not say), else 0. */
static unsigned terminal_rows(FILE *out)
{
	int fd = fileno(out);
	if (fd < 0 || !isatty(fd))
		return 0;
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	return 24;
}

int cli_summary_print(const char *cmd, const char *json, size_t len, FILE *out)
{
	struct loaded_result r;
	char err[512] = "";
	int rc = result_read_mem(&r, json, len, "result", err, sizeof err);
	if (!rc) {
		struct report_options o;
		report_options_default(&o);
		o.screen_rows = terminal_rows(out);
		rc = report_render_opts(&r, REPORT_FMT_TEXT, &o, out, err, sizeof err);
		result_free(&r);
	}
	if (rc) {
		fprintf(stderr, "pacer %s: cannot print the summary: %s\n", cmd,
			err[0] ? err : err_name(rc));
		return EXIT_RUNTIME;
	}
	return 0;
}
