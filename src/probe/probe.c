#include "probe/probe.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

/* Read a small file (up to cap-1 bytes) into buf, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	while (n < cap - 1) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

/* utime and stime (ticks) and the parent PID from /proc/PID/stat. The
 * command name is in parentheses and may contain anything, so parse after
 * the last ')'. A zombie (exited, not reaped) is -ENOENT: gone. */
static int read_stat(const char *root, pid_t pid, uint64_t *ut, uint64_t *st, pid_t *ppid)
{
	char path[256], buf[1024];
	snprintf(path, sizeof path, "%s/%d/stat", root, (int)pid);
	int n = read_small(path, buf, sizeof buf);
	if (n < 0)
		return n;
	char *p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* fields from 3 on: state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime */
	char state;
	long pp;
	unsigned long long u, s;
	if (sscanf(p + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &pp, &u,
		   &s) != 4)
		return -EINVAL;
	if (state == 'Z' || state == 'X')
		return -ENOENT;
	*ut = u;
	*st = s;
	*ppid = (pid_t)pp;
	return 0;
}

static int read_rss(const char *root, pid_t pid, uint64_t *rss)
{
	char path[256], buf[4096];
	snprintf(path, sizeof path, "%s/%d/status", root, (int)pid);
	int n = read_small(path, buf, sizeof buf);
	if (n < 0)
		return n;
	const char *l = strstr(buf, "\nVmRSS:");
	if (!l)
		return -ENOENT; /* a zombie or kernel thread has none */
	unsigned long long kib;
	if (sscanf(l + 7, " %llu", &kib) != 1)
		return -EINVAL;
	*rss = kib * 1024;
	return 0;
}

static uint64_t ns_per_tick(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	return hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
}

/* ---- waits for a CPU: schedstat of each thread ---- */

/* An unsigned decimal at *p after blanks (no sign, no overflow): 0 and *p
 * past it, or -EINVAL. */
static int parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	uint64_t x = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*v = x;
	*p = s;
	return 0;
}

int probe_read_schedstat(const char *root, pid_t pid, pid_t tid, uint64_t *run_ns,
			 uint64_t *wait_ns)
{
	char path[256], buf[128];
	snprintf(path, sizeof path, "%s/%d/task/%d/schedstat", root, (int)pid, (int)tid);
	int n = read_small(path, buf, sizeof buf);
	if (n < 0)
		return n;
	const char *q = buf;
	uint64_t run, wait, slices;
	if (parse_u64(&q, &run) || parse_u64(&q, &wait) || parse_u64(&q, &slices))
		return -EINVAL;
	while (*q == ' ' || *q == '\t' || *q == '\n')
		q++;
	if (*q)
		return -EINVAL;
	*run_ns = run;
	*wait_ns = wait;
	return 0;
}

static void thr_fail(struct probe_threads *thr, int err, pid_t tid)
{
	if (!thr->err) {
		thr->err = err;
		thr->bad_tid = tid;
	}
}

/* Thread tid of pid's schedstat onto thr: a thread that exited between
 * the listing and the read is skipped. */
static void add_tid(const char *root, pid_t pid, pid_t tid, struct probe_threads *thr)
{
	if (thr->n >= PROBE_MAX_THREADS) {
		thr_fail(thr, -E2BIG, tid);
		return;
	}
	uint64_t run, wait;
	int rc = probe_read_schedstat(root, pid, tid, &run, &wait);
	if (rc == -ENOENT || rc == -ESRCH) {
		char dir[256];
		snprintf(dir, sizeof dir, "%s/%d/task/%d", root, (int)pid, (int)tid);
		if (access(dir, F_OK) == 0)
			thr_fail(thr, -ENOENT, tid); /* the thread is there, its schedstat not */
		return;
	}
	if (rc) {
		thr_fail(thr, rc, tid);
		return;
	}
	if (thr->n == thr->cap) {
		size_t nc = thr->cap ? thr->cap * 2 : 16;
		struct probe_thread *nv = realloc(thr->v, nc * sizeof *nv);
		if (!nv) {
			thr_fail(thr, -ENOMEM, tid);
			return;
		}
		thr->v = nv;
		thr->cap = nc;
	}
	thr->v[thr->n++] = (struct probe_thread){tid, run, wait};
}

static int thread_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct probe_thread *)a)->tid, y = ((const struct probe_thread *)b)->tid;
	return (x > y) - (x < y);
}

void probe_read_tids(const char *root, pid_t pid, const pid_t *tids, size_t n,
		     struct probe_threads *thr)
{
	for (size_t i = 0; i < n; i++)
		add_tid(root, pid, tids[i], thr);
	qsort(thr->v, thr->n, sizeof *thr->v, thread_cmp);
}

/* Every thread of pid (ROOT/PID/task) onto thr, unsorted. A missing task
 * directory is a process gone (skipped) unless `main`: then /proc lacks
 * the threads' folders altogether. */
static void add_task_dir(const char *root, pid_t pid, bool main, struct probe_threads *thr)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%d/task", root, (int)pid);
	DIR *d = opendir(path);
	if (!d) {
		if (main)
			thr_fail(thr, errno == ENOENT ? -ENOENT : -errno, pid);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) && thr->err != -E2BIG) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		add_tid(root, pid, (pid_t)atol(de->d_name), thr);
	}
	closedir(d);
}

void probe_threads_since(const struct probe_threads *prev, const struct probe_threads *cur,
			 uint64_t *wait_ns, uint64_t *run_ns)
{
	uint64_t w = 0, r = 0;
	size_t i = 0;
	for (size_t k = 0; k < cur->n; k++) {
		const struct probe_thread *c = &cur->v[k];
		while (i < prev->n && prev->v[i].tid < c->tid)
			i++;
		const struct probe_thread *o = i < prev->n && prev->v[i].tid == c->tid ? &prev->v[i]
										       : NULL;
		if (o && c->wait_ns >= o->wait_ns && c->run_ns >= o->run_ns) {
			w += c->wait_ns - o->wait_ns;
			r += c->run_ns - o->run_ns;
		} else { /* born since prev, or a reused TID */
			w += c->wait_ns;
			r += c->run_ns;
		}
	}
	*wait_ns = w;
	*run_ns = r;
}

void probe_threads_free(struct probe_threads *thr)
{
	free(thr->v);
	*thr = (struct probe_threads){0};
}

static void threads_reset(struct probe_threads *thr)
{
	thr->n = 0;
	thr->err = 0;
	thr->bad_tid = 0;
}

static void threads_done(struct probe_threads *thr, struct probe_sample *out)
{
	qsort(thr->v, thr->n, sizeof *thr->v, thread_cmp);
	out->wait_ns = 0;
	for (size_t i = 0; i < thr->n; i++)
		out->wait_ns += thr->v[i].wait_ns;
}

int probe_read_proc(const char *root, pid_t pid, bool children, struct probe_sample *out,
		    struct probe_threads *thr)
{
	memset(out, 0, sizeof *out);
	uint64_t ut, st, tick = ns_per_tick();
	pid_t parent;
	int rc = read_stat(root, pid, &ut, &st, &parent);
	if (rc)
		return rc == -ENOENT || rc == -ESRCH ? -ENOENT : rc;
	out->user_ns = ut * tick;
	out->sys_ns = st * tick;
	uint64_t rss = 0;
	out->rss_ok = read_rss(root, pid, &rss) == 0;
	out->rss_bytes = rss;
	if (thr) {
		threads_reset(thr);
		add_task_dir(root, pid, true, thr);
	}
	if (!children) {
		if (thr)
			threads_done(thr, out);
		return 0;
	}
	/* Descendants: one pass over the table of processes, then parent
	 * chains resolved by repeated sweeps (depth is small in practice). */
	DIR *d = opendir(root);
	if (!d)
		return 0;
	size_t cap = 256, n = 0;
	struct ent {
		pid_t pid, ppid;
		bool in;
	} *v = malloc(cap * sizeof *v);
	struct dirent *de;
	while (v && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t q = (pid_t)atol(de->d_name);
		uint64_t u, t;
		pid_t pp;
		if (q == pid || read_stat(root, q, &u, &t, &pp))
			continue;
		if (n == cap) {
			cap *= 2;
			struct ent *nv = realloc(v, cap * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = (struct ent){q, pp, false};
		if (n >= 65536)
			break;
	}
	closedir(d);
	if (!v) {
		if (thr)
			threads_done(thr, out);
		return 0;
	}
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			if (v[i].in)
				continue;
			bool parent_in = v[i].ppid == pid;
			for (size_t k = 0; k < n && !parent_in; k++)
				parent_in = v[k].in && v[k].pid == v[i].ppid;
			if (parent_in) {
				v[i].in = true;
				grew = true;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!v[i].in || read_stat(root, v[i].pid, &ut, &st, &parent))
			continue;
		out->user_ns += ut * tick;
		out->sys_ns += st * tick;
		if (out->rss_ok && read_rss(root, v[i].pid, &rss) == 0)
			out->rss_bytes += rss;
		if (thr)
			add_task_dir(root, v[i].pid, false, thr);
	}
	free(v);
	if (thr)
		threads_done(thr, out);
	return 0;
}

static int read_kv(const char *buf, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);
	for (const char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (!strncmp(l, key, kl) && l[kl] == ' ') {
			unsigned long long x;
			if (sscanf(l + kl + 1, "%llu", &x) != 1)
				return -EINVAL;
			*v = x;
			return 0;
		}
	}
	return -ENOENT;
}

int probe_read_cgroup(const char *dir, struct probe_sample *out)
{
	memset(out, 0, sizeof *out);
	char path[512], buf[2048];
	snprintf(path, sizeof path, "%s/cpu.stat", dir);
	int n = read_small(path, buf, sizeof buf);
	if (n < 0)
		return n;
	uint64_t user, sys;
	if (read_kv(buf, "user_usec", &user) || read_kv(buf, "system_usec", &sys))
		return -EINVAL;
	out->user_ns = user * 1000;
	out->sys_ns = sys * 1000;
	snprintf(path, sizeof path, "%s/memory.current", dir);
	if (read_small(path, buf, sizeof buf) > 0) {
		unsigned long long m;
		if (sscanf(buf, "%llu", &m) == 1) {
			out->rss_bytes = m;
			out->rss_ok = true;
		}
	}
	return 0;
}

int probe_read_pressure(const char *dir, uint64_t *some_us)
{
	char path[512], buf[512];
	snprintf(path, sizeof path, "%s/cpu.pressure", dir);
	int n = read_small(path, buf, sizeof buf);
	if (n < 0)
		return n;
	/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=123\nfull ...\n" */
	for (const char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, "some ", 5) != 0)
			continue;
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		for (const char *t = l; t && t < l + len;
		     t = strchr(t, ' '), t = t ? t + 1 : NULL) {
			if (strncmp(t, "total=", 6) != 0)
				continue;
			const char *q = t + 6;
			uint64_t v;
			if (parse_u64(&q, &v) || (*q && *q != '\n' && *q != ' '))
				return -EINVAL;
			*some_us = v;
			return 0;
		}
		return -EINVAL;
	}
	return -EINVAL;
}

/* CPUs in a cpuset list ("0-3,6\n"); -EINVAL when it does not parse. */
static int cpuset_count(const char *s, double *n)
{
	double k = 0;
	const char *p = s;
	while (*p && *p != '\n') {
		char *e;
		unsigned long a = strtoul(p, &e, 10), b;
		if (e == p)
			return -EINVAL;
		b = a;
		if (*e == '-') {
			p = e + 1;
			b = strtoul(p, &e, 10);
			if (e == p || b < a)
				return -EINVAL;
		}
		k += (double)(b - a + 1);
		p = e;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	if (k == 0)
		return -ENOENT; /* empty: no limit of its own */
	*n = k;
	return 0;
}

int probe_cgroup_cores(const char *cgroup, double *cores, const char **basis)
{
	char dir[512], path[600], buf[256];
	if (cgroup[0] == '/')
		snprintf(dir, sizeof dir, "%s", cgroup);
	else
		snprintf(dir, sizeof dir, "/sys/fs/cgroup/%s", cgroup);
	snprintf(path, sizeof path, "%s/cpu.max", dir);
	int n = read_small(path, buf, sizeof buf);
	if (n >= 0) {
		char q[32];
		unsigned long long period;
		if (sscanf(buf, "%31s %llu", q, &period) != 2 || period == 0)
			return -EINVAL;
		if (strcmp(q, "max") != 0) {
			char *e;
			unsigned long long quota = strtoull(q, &e, 10);
			if (*e || quota == 0)
				return -EINVAL;
			*cores = (double)quota / (double)period;
			*basis = "cpu.max";
			return 0;
		}
	} else if (n != -ENOENT) {
		return n;
	}
	snprintf(path, sizeof path, "%s/cpuset.cpus.effective", dir);
	n = read_small(path, buf, sizeof buf);
	if (n < 0)
		return n;
	int rc = cpuset_count(buf, cores);
	if (!rc)
		*basis = "cpuset";
	return rc;
}

/* ---- the sampler ---- */

struct probe {
	struct probe_cfg cfg;
	char cgroup[512];
	bool self_rss;          /* self-contained: RSS of this process */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	struct probe_sample *s;
	size_t n, cap;
	bool dropped;
	bool gone;              /* the process exited */
	uint64_t gone_at_ns;
	/* waits for a CPU: the threads of the last two readings (cur the
	 * newer), their waits and run time added up since the first */
	struct probe_threads thr[2];
	int cur;
	uint64_t wait_acc, run_acc;
	int wait_err;       /* the first failure to read them (sticky), with */
	pid_t wait_bad_tid; /* the thread it was */
	int pressure_err;   /* cgroup: the first failure to read cpu.pressure */
	pid_t tids[1024];   /* self-contained: the embedded target's threads */
};

/* The threads just read into p->thr[!cur]: their waits since the previous
 * reading added to the totals, out->wait_ns the total; they become cur. */
static void threads_account(struct probe *p, struct probe_sample *out)
{
	struct probe_threads *next = &p->thr[p->cur ^ 1];
	if (next->err && !p->wait_err) {
		p->wait_err = next->err;
		p->wait_bad_tid = next->bad_tid;
	}
	uint64_t w, r;
	probe_threads_since(&p->thr[p->cur], next, &w, &r);
	p->wait_acc += w;
	p->run_acc += r;
	out->wait_ns = p->wait_acc;
	p->cur ^= 1;
}

static int sample_now(struct probe *p, struct probe_sample *out)
{
	int rc;
	if (p->cfg.pid > 0) {
		rc = probe_read_proc("/proc", p->cfg.pid, p->cfg.children, out,
				     &p->thr[p->cur ^ 1]);
		if (!rc)
			threads_account(p, out);
	} else if (p->cfg.cgroup) {
		rc = probe_read_cgroup(p->cgroup, out);
		uint64_t some_us;
		int prc = probe_read_pressure(p->cgroup, &some_us);
		if (!rc && !prc)
			out->wait_ns = some_us * 1000;
		else if (!rc && !p->pressure_err)
			p->pressure_err = prc;
	} else {
		memset(out, 0, sizeof *out);
		out->user_ns = p->cfg.self_cpu_ns(p->cfg.self_arg);
		uint64_t rss;
		out->rss_ok = read_rss("/proc", getpid(), &rss) == 0;
		out->rss_bytes = out->rss_ok ? rss : 0;
		if (p->cfg.self_tids) {
			size_t n = p->cfg.self_tids(p->cfg.self_arg, p->tids,
						    sizeof p->tids / sizeof p->tids[0]);
			struct probe_threads *next = &p->thr[p->cur ^ 1];
			threads_reset(next);
			probe_read_tids("/proc", getpid(), p->tids, n, next);
			threads_account(p, out);
		}
		rc = 0;
	}
	out->t_ns = clock_now_ns();
	return rc;
}

/* Take one sample and store it (mu held). */
static void take(struct probe *p)
{
	if (p->gone)
		return;
	struct probe_sample s;
	int rc = sample_now(p, &s);
	if (rc) {
		if (rc == -ENOENT && p->cfg.pid > 0) {
			p->gone = true;
			p->gone_at_ns = s.t_ns;
		}
		return;
	}
	if (p->n == p->cap) {
		if (p->cap >= PROBE_MAX_SAMPLES) {
			p->dropped = true;
			return;
		}
		size_t nc = p->cap ? p->cap * 2 : 1024;
		struct probe_sample *ns = realloc(p->s, nc * sizeof *ns);
		if (!ns) {
			p->dropped = true;
			return;
		}
		p->s = ns;
		p->cap = nc;
	}
	p->s[p->n++] = s;
}

static void *sampler(void *arg)
{
	struct probe *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		take(p);
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t due = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
			       p->cfg.interval_ns;
		ts.tv_sec = (time_t)(due / 1000000000ull);
		ts.tv_nsec = (long)(due % 1000000000ull);
		while (!p->stop && pthread_cond_timedwait(&p->cv, &p->mu, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Settle p's configuration and take the first sample: 0, or a negative code
 * with one line in err naming the PID or cgroup and the cause. */
static int probe_init(struct probe *p, const struct probe_cfg *cfg, char *err, size_t cap)
{
	p->cfg = *cfg;
	if (!p->cfg.interval_ns)
		p->cfg.interval_ns = 100 * 1000 * 1000ull;
	if (cfg->cgroup) {
		if (cfg->cgroup[0] == '/')
			snprintf(p->cgroup, sizeof p->cgroup, "%s", cfg->cgroup);
		else
			snprintf(p->cgroup, sizeof p->cgroup, "/sys/fs/cgroup/%s", cfg->cgroup);
		p->cfg.cgroup = p->cgroup;
	}
	struct probe_sample s;
	int rc = sample_now(p, &s);
	if (rc) {
		if (cfg->pid > 0)
			snprintf(err, cap, "--target-pid %d: %s", (int)cfg->pid,
				 rc == -ENOENT ? "no such process" : strerror(-rc));
		else
			snprintf(err, cap, "--target-cgroup %s: cannot read cpu.stat (%s); a cgroup v2 "
				 "directory with the cpu controller is needed",
				 p->cgroup, rc == -EINVAL ? "no user_usec/system_usec" : strerror(-rc));
	}
	return rc;
}

int probe_check(const struct probe_cfg *cfg, char *err, size_t cap)
{
	struct probe *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	int rc = probe_init(p, cfg, err, cap);
	probe_threads_free(&p->thr[0]);
	probe_threads_free(&p->thr[1]);
	free(p);
	return rc;
}

int probe_start(struct probe **out, const struct probe_cfg *cfg, char *err, size_t cap)
{
	*out = NULL;
	struct probe *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	int rc = probe_init(p, cfg, err, cap);
	if (rc) {
		probe_threads_free(&p->thr[0]);
		probe_threads_free(&p->thr[1]);
		free(p);
		return rc;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* every signal blocked in the sampler: a SIGINT or SIGTERM meant for
	 * the run (taken by the thread that waits for it) must never find
	 * this thread and its default action */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int crc = pthread_create(&p->thread, NULL, sampler, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (crc) {
		snprintf(err, cap, "cannot start the resource sampler thread");
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		probe_threads_free(&p->thr[0]);
		probe_threads_free(&p->thr[1]);
		free(p);
		return -EAGAIN;
	}
	p->started = true;
	*out = p;
	return 0;
}

__attribute__((format(printf, 2, 3))) static void note(struct target_usage *u, const char *fmt,
							 ...)
{
	if (u->n_notes >= TARGET_NOTE_CAP)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(u->notes[u->n_notes++], TARGET_NOTE_LEN, fmt, ap);
	va_end(ap);
}

/* Cumulative CPU and waits at time t by linear interpolation (clamped at
 * the ends). */
static void cpu_at(const struct probe_sample *s, size_t n, uint64_t t, double *user, double *sys,
		   double *wait)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* first sample with t_ns >= t */
		size_t mid = (lo + hi) / 2;
		if (s[mid].t_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || lo == n) {
		const struct probe_sample *e = &s[lo ? n - 1 : 0];
		*user = (double)e->user_ns;
		*sys = (double)e->sys_ns;
		*wait = (double)e->wait_ns;
		return;
	}
	const struct probe_sample *a = &s[lo - 1], *b = &s[lo];
	double f = b->t_ns > a->t_ns ? (double)(t - a->t_ns) / (double)(b->t_ns - a->t_ns) : 1;
	*user = (double)a->user_ns + f * ((double)b->user_ns - (double)a->user_ns);
	*sys = (double)a->sys_ns + f * ((double)b->sys_ns - (double)a->sys_ns);
	*wait = (double)a->wait_ns + f * ((double)b->wait_ns - (double)a->wait_ns);
}

/* The waits for a CPU over the window, from the interpolated totals w0 and
 * w1, or a note saying why they were not measured. */
static void window_waits(struct probe *p, double w0, double w1, struct target_usage *out)
{
	double d = w1 > w0 ? (w1 - w0) / 1e9 : 0;
	if (p->cfg.cgroup) {
		if (!p->pressure_err) {
			out->cpu_pressure_known = true;
			out->cpu_pressure_some_s = d;
		} else {
			note(out, "%s/cpu.pressure %s: the cgroup's CPU pressure was not measured",
			     p->cgroup,
			     p->pressure_err == -ENOENT
				     ? "is absent (a kernel without PSI, or booted "
				       "with psi=0)"
			     : p->pressure_err == -EINVAL ? "has no \"some ... total=N\" line"
							  : strerror(-p->pressure_err));
		}
		return;
	}
	if (p->cfg.pid <= 0 && !p->cfg.self_tids)
		return;
	if (p->wait_err == -ENOENT)
		note(out,
		     "no schedstat for thread %d (a kernel without CONFIG_SCHED_INFO): the "
		     "target's waits for a CPU were not measured",
		     (int)p->wait_bad_tid);
	else if (p->wait_err == -EINVAL)
		note(out,
		     "the schedstat of thread %d did not parse: the target's waits for a CPU "
		     "were not measured",
		     (int)p->wait_bad_tid);
	else if (p->wait_err == -E2BIG)
		note(out, "more than %u threads: the target's waits for a CPU were not measured",
		     PROBE_MAX_THREADS);
	else if (p->wait_err)
		note(out,
		     "the schedstat of thread %d could not be read (%s): the target's waits "
		     "for a CPU were not measured",
		     (int)p->wait_bad_tid, strerror(-p->wait_err));
	else if (p->run_acc == 0 && out->cpu_s > 0.01)
		note(out, "schedstat reads zero for every thread (scheduler statistics off in this "
			  "kernel): the target's waits for a CPU were not measured");
	else {
		out->cpu_wait_known = true;
		out->cpu_wait_s = d;
	}
}

void probe_window(struct probe *p, uint64_t t0, uint64_t t1, struct target_usage *out)
{
	memset(out, 0, sizeof *out);
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	if (!p->n || p->s[p->n - 1].t_ns < t1)
		take(p);
	if (p->cfg.pid > 0)
		snprintf(out->source, sizeof out->source, "pid %d%s", (int)p->cfg.pid,
			 p->cfg.children ? " + children" : "");
	else if (p->cfg.cgroup)
		snprintf(out->source, sizeof out->source, "cgroup %.119s", p->cgroup);
	else
		snprintf(out->source, sizeof out->source, "self_contained");
	out->split_known = p->cfg.pid > 0 || p->cfg.cgroup;
	size_t n = p->n;
	const struct probe_sample *s = p->s;
	if (!n || s[n - 1].t_ns < t0 || s[0].t_ns > t1 || t1 <= t0) {
		note(out, "no sample of the target fell in the measured phase");
		if (p->gone)
			note(out, "the target process (%s) exited before the measured phase", out->source);
		pthread_mutex_unlock(&p->mu);
		return;
	}
	out->known = true;
	double u0, s0, w0, u1, s1, w1;
	cpu_at(s, n, t0, &u0, &s0, &w0);
	cpu_at(s, n, t1, &u1, &s1, &w1);
	out->cpu_user_s = (u1 - u0) / 1e9;
	out->cpu_sys_s = (s1 - s0) / 1e9;
	if (out->cpu_user_s < 0)
		out->cpu_user_s = 0;
	if (out->cpu_sys_s < 0)
		out->cpu_sys_s = 0;
	out->cpu_s = out->cpu_user_s + out->cpu_sys_s;
	if (!out->split_known)
		out->cpu_user_s = out->cpu_sys_s = 0;
	out->cores_busy = out->cpu_s / ((double)(t1 - t0) / 1e9);
	/* RSS: the sample nearest the start, the peak inside, the last one */
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (!s[i].rss_ok)
			continue;
		if (s[i].t_ns <= t0 || !any) {
			out->rss_start_bytes = s[i].rss_bytes;
		}
		if (s[i].t_ns >= t0 && s[i].t_ns <= t1 + p->cfg.interval_ns) {
			if (s[i].rss_bytes > out->rss_peak_bytes)
				out->rss_peak_bytes = s[i].rss_bytes;
			out->rss_end_bytes = s[i].rss_bytes;
			any = true;
		}
	}
	out->rss_known = any;
	if (any && out->rss_start_bytes > out->rss_peak_bytes)
		out->rss_peak_bytes = out->rss_start_bytes;
	window_waits(p, w0, w1, out);
	if (p->gone && p->gone_at_ns <= t1)
		note(out, "the target process (%s) exited %.2f s into the measured phase: CPU and "
			  "memory after that were not measured",
		     out->source, p->gone_at_ns > t0 ? (double)(p->gone_at_ns - t0) / 1e9 : 0);
	if (p->dropped)
		note(out, "resource samples past the cap (%u) were dropped", PROBE_MAX_SAMPLES);
	if (!p->cfg.pid && !p->cfg.cgroup)
		note(out, "self-contained: CPU is the embedded target's threads; memory is the whole "
			  "pacer process (driver included)");
	pthread_mutex_unlock(&p->mu);
}

void probe_stop(struct probe *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	free(p->s);
	probe_threads_free(&p->thr[0]);
	probe_threads_free(&p->thr[1]);
	free(p);
}
