/*
 * mflags: epmodel's command line, from the parameter table of model.h
 * (lib/opt) and options of its own: the lock kinds, the results
 * directory, a run spec, --resolve, --describe and --help.
 */
#ifndef RELAY_MFLAGS_H
#define RELAY_MFLAGS_H

#include <jansson.h>
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
	bool resolve, describe, help;
};

/* The defaults, then argv in order: --spec FILE sets what its "model"
 * object names, a flag after it wins. 0, or -1 with why naming the flag
 * (and the spec's key) and what was wrong with it; a quota below what
 * cpu.max takes is refused here too. */
int mflags_parse(struct mflags *f, int argc, char **argv, char *why,
		 size_t whylen);

/* The parameters as a run spec's "model" object (--resolve). */
json_t *mflags_json(const struct model_params *p);

/* The parameters' table as JSON (--describe: lib/opt's opt_describe). */
json_t *mflags_describe(void);

/* Print the usage, every flag with its default. */
void mflags_usage(FILE *out);

#endif
