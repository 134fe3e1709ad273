/*
 * merge: "loadgen merge", several runs' HdrHistogram interval logs (from
 * --hlog, on one host or many) added into one result. Percentiles do not
 * add; histograms of the same settings do, count by count, so the merged
 * percentiles are those of one run that had seen every sample.
 */
#ifndef LOADGEN_MERGE_H
#define LOADGEN_MERGE_H

#include <getopt.h>

/* merge's flags (loadgen(1) documents them with the run's). */
extern const struct option merge_longopts[];

/* Run "merge FLAGS FILE.hlog..." (argv[0] is "merge"). Returns the exit
 * status: 0, 64 usage, 66 an input cannot be read, 65 an input is corrupt,
 * cut short, empty or recorded with other histogram settings (each named
 * with its file and line), 73 an output cannot be written. */
int merge_main(int argc, char **argv);

#endif
