#include "util/sysinfo.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
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
