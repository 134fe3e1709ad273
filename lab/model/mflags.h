/*
 * mflags: epmodel's command line, from the parameter table of model.h
 * (lib/opt) and three options of its own: the lock kinds, the results
 * directory and --help.
 */
#ifndef RELAY_MFLAGS_H
#define RELAY_MFLAGS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model.h"

struct mflags {
	struct model_params p;
	enum rlock_kind kinds[RLOCK_KINDS];	/* in the order given */
	int nkinds;
	char out[PATH_MAX];
	bool help;
};

/* The defaults, then argv. 0, or -1 with why naming the flag and what was
 * wrong with it; a quota below what cpu.max takes is refused here too. */
int mflags_parse(struct mflags *f, int argc, char **argv, char *why,
		 size_t whylen);

/* Print the usage, every flag with its default. */
void mflags_usage(FILE *out);

#endif
