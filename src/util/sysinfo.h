/* pacer — facts about the machine a result was measured on. */
#ifndef PACER_UTIL_SYSINFO_H
#define PACER_UTIL_SYSINFO_H

struct sysinfo_facts {
	char hostname[128];
	char os[72];        /* "Linux" */
	char kernel[128];   /* uname release */
	char arch[72];      /* uname machine */
	char cpu_model[160];
	int cores;          /* online CPUs */
};

/* Fill from uname(2), /proc/cpuinfo and sysconf; fields it cannot read are
 * "unknown" (cores 0). Never fails. */
void sysinfo_read(struct sysinfo_facts *s);

#endif
