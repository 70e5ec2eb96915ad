/* pacer — the shape of a POSIX extended regex, from its text alone: how big
 * an automaton glibc's regcomp builds for it and whether that build can run
 * away, so that rule.c can refuse a pattern before compiling it. Pure. */
#ifndef PACER_PLAN_REGEX_SHAPE_H
#define PACER_PLAN_REGEX_SHAPE_H

#include <stdbool.h>
#include <stddef.h>

#define RE_COST_MAX 2000 /* automaton nodes of a regex once its repetitions are expanded */
#define RE_MAX_GROUPS 257 /* nesting tracked; deeper groups count as atoms */

/* What glibc's regcomp builds for a regex, counted from its structure:
 * `nodes` is the size of its automaton (each atom, bracket expression and
 * anchor 1, each `|`, `?`, `*`, `+` and optional copy of {m,n} one more node,
 * and the operand of `+` copied once more and of {m,n} n times, so nested
 * copies multiply); `loop_nullable` says some `*`, `+` or {m,} repeats a part
 * that can match nothing ((a*)*, a?+, (^)*, (a|)+). Without such a loop the
 * automaton's empty transitions form no cycle, so regcomp computes each
 * node's epsilon closure once and stores at most `nodes` entries for it: its
 * time and memory are bounded by nodes^2 (4 million entries at RE_COST_MAX).
 * With one, glibc recomputes closures along every path through the cycle,
 * exponential in the nesting ("a" + 40 "?" + "+++" runs for minutes in a few
 * kilobytes; 40 "*" + 8 "+" take 13 s and 1.2 GB), so it is refused whatever
 * its size. Counts are capped just past RE_COST_MAX. Also says whether the
 * regex has a back-reference (\1..\9). */
struct re_shape {
	unsigned long nodes;
	bool loop_nullable;
	bool backref;
};

/* The shape of re[0..n) (not NUL-terminated). Never fails: a malformed
 * pattern gets some shape, and regcomp then refuses it. */
struct re_shape regex_shape(const char *re, size_t n);

#endif
