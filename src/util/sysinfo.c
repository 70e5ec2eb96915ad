#include "util/sysinfo.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src && *src ? src : "unknown");
}

void sysinfo_read(struct sysinfo_facts *s)
{
	struct utsname u;
	if (uname(&u) == 0) {
		copy(s->hostname, sizeof s->hostname, u.nodename);
		copy(s->os, sizeof s->os, u.sysname);
		copy(s->kernel, sizeof s->kernel, u.release);
		copy(s->arch, sizeof s->arch, u.machine);
	} else {
		copy(s->hostname, sizeof s->hostname, NULL);
		copy(s->os, sizeof s->os, NULL);
		copy(s->kernel, sizeof s->kernel, NULL);
		copy(s->arch, sizeof s->arch, NULL);
	}
	copy(s->cpu_model, sizeof s->cpu_model, NULL);
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[512];
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0)
				continue;
			char *colon = strchr(line, ':');
			if (!colon)
				continue;
			char *v = colon + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = '\0';
			copy(s->cpu_model, sizeof s->cpu_model, v);
			break;
		}
		fclose(f);
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	s->cores = n > 0 ? (int)n : 0;
}

/* ---- steal time ---------------------------------------------------------- */

/* The next unsigned decimal of [*p, end) after spaces; false if none or it
 * overflows. */
static bool next_u64(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q == end || *q < '0' || *q > '9')
		return false;
	uint64_t x = 0;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		unsigned d = (unsigned)(*q - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*p = q;
	*v = x;
	return true;
}

void sysinfo_steal_parse(const char *text, size_t len, const cpu_set_t *mask,
			 struct steal_sample *s)
{
	memset(s, 0, sizeof *s);
	bool ok = true;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* a cut last line is not read */
		const char *q = p;
		p = nl + 1;
		if (nl - q < 4 || memcmp(q, "cpu", 3) != 0 || q[3] < '0' || q[3] > '9')
			continue; /* not a CPU's own line ("cpu " is their sum) */
		q += 3;
		uint64_t cpu, f[8];
		bool line_ok = next_u64(&q, nl, &cpu) && cpu < CPU_SETSIZE;
		for (int i = 0; i < 8 && line_ok; i++)
			line_ok = next_u64(&q, nl, &f[i]);
		if (!line_ok) {
			ok = false;
			continue;
		}
		if (f[7] > UINT64_MAX - s->all_ticks) {
			ok = false; /* no kernel's figure: not summed past 2^64 */
			continue;
		}
		s->all_ticks += f[7];
		s->all_cpus++;
		if (mask && CPU_ISSET((size_t)cpu, mask)) {
			s->gen_ticks += f[7];
			s->gen_cpus++;
		}
	}
	s->known = ok && s->all_cpus > 0 && (!mask || s->gen_cpus > 0);
}

void sysinfo_steal_sample(struct steal_sample *s)
{
	memset(s, 0, sizeof *s);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t at = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	long hz = sysconf(_SC_CLK_TCK);
	cpu_set_t mask;
	if (hz <= 0 || sched_getaffinity(0, sizeof mask, &mask) != 0)
		return;
	/* The CPU lines come first: 256 KiB holds them for CPU_SETSIZE CPUs. */
	enum { CAP = 256 * 1024 };
	char *buf = malloc(CAP);
	if (!buf)
		return;
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	if (fd >= 0) {
		ssize_t n;
		while (len < CAP && (n = read(fd, buf + len, CAP - len)) > 0)
			len += (size_t)n;
		close(fd);
	}
	if (len)
		sysinfo_steal_parse(buf, len, &mask, s);
	free(buf);
	s->at_ns = at;
	s->tick_ns = (uint64_t)(1000000000L / hz);
}

bool sysinfo_steal_between(const struct steal_sample *a, const struct steal_sample *b,
			   uint64_t from_ns, struct steal_span *out)
{
	memset(out, 0, sizeof *out);
	if (!a->known || !b->known || a->gen_cpus != b->gen_cpus || a->all_cpus != b->all_cpus ||
	    b->at_ns < a->at_ns || b->gen_ticks < a->gen_ticks || b->all_ticks < a->all_ticks ||
	    !a->tick_ns)
		return false;
	uint64_t from = from_ns > a->at_ns && from_ns < b->at_ns ? from_ns : a->at_ns;
	uint64_t wall = b->at_ns - from;
	out->gen_ns = (b->gen_ticks - a->gen_ticks) * a->tick_ns;
	out->all_ns = (b->all_ticks - a->all_ticks) * a->tick_ns;
	out->gen_span_ns = wall * a->gen_cpus;
	out->all_span_ns = wall * a->all_cpus;
	out->gen_err_ns = a->tick_ns * a->gen_cpus;
	out->all_err_ns = a->tick_ns * a->all_cpus;
	/* ticks are coarse: never more than the span */
	out->gen_ns = out->gen_ns < out->gen_span_ns ? out->gen_ns : out->gen_span_ns;
	out->all_ns = out->all_ns < out->all_span_ns ? out->all_ns : out->all_span_ns;
	return true;
}
