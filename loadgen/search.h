/*
 * search: the decisions of loadgen sweep --search, apart from the runs
 * that inform them, so that a test can script the outcomes. A search
 * doubles the rate from --from (at most --to) until a step misses, then
 * halves the gap between the last rate that met and the first that
 * missed until it is within the resolution; its capacity is the last rate
 * that met. A warm search starts near a capacity found before instead and
 * brackets it in small steps that grow (up after a met step, down towards
 * --from after a miss), which spends its steps where the answer is. Over
 * several searches, each started afresh (never from what another found,
 * so that they are independent repeats): the median of their capacities
 * and the interval from the lowest to the highest, or, when some found a
 * capacity and others none, no number but the fraction that found one
 * (unstable); every rate's runs and how many met, and the rates that
 * missed below one that met (not monotonic).
 */
#ifndef LOADGEN_SEARCH_H
#define LOADGEN_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#define SEARCH_MAX 100		/* searches of one sweep */

/* What one step showed a search. */
enum search_outcome {
	SEARCH_MET,
	SEARCH_MISSED,		/* the target did not keep the SLO */
	SEARCH_SENDER,		/* loadgen fell short of the rate while the
				 * target kept up: a higher rate tells
				 * nothing about the target */
};

/* How a search ended. */
enum search_end {
	SEARCH_RUNNING,
	SEARCH_FOUND,		/* a rate met, one missed, within resolution */
	SEARCH_NONE,		/* --from missed: the capacity, if any, is
				 * below it */
	SEARCH_AT_TO,		/* --to met: loadgen may try no higher */
	SEARCH_AT_SENDER,	/* loadgen could not send the rate */
	SEARCH_STOPPED,		/* interrupted */
};

struct search {
	double from, to, resolution;	/* resolution: a fraction */
	double start;		/* the first step's rate */
	double rate;		/* the rate to run next, while running */
	double met, missed;	/* last rate met, first missed; 0: none */
	double ceiling, sent;	/* SEARCH_AT_SENDER: the rate tried and the
				 * rate loadgen sent */
	double factor;		/* the next step's, up or down, until one
				 * met and one missed */
	bool warm;		/* started near an earlier capacity */
	int steps;		/* steps taken */
	enum search_end end;
};

/* Start s at from, never above to, bisecting to resolution_pct. */
void search_start(struct search *s, double from, double to,
		  double resolution_pct);

/* Start s warm at start (clamped to from..to), an earlier capacity: its
 * steps go up (or, while none met, down towards from) by 1 + 4 x the
 * resolution, the factor squared after each step up to 2, until one met
 * and one missed; then it bisects as a search from from does. */
void search_start_warm(struct search *s, double from, double to,
		       double resolution_pct, double start);

/* The step at s->rate had outcome out while loadgen sent achieved pps:
 * the next s->rate, or s->end. */
void search_step(struct search *s, enum search_outcome out, double achieved);

/* The capacity s found: the last rate that met (a lower bound when it
 * ended at a ceiling); 0 when none met. */
double search_capacity(const struct search *s);

/* How s ended, in words: "5000 pps met, 5250 pps missed", "--from
 * 1000 pps missed", ... */
void search_text(const struct search *s, char *buf, size_t len);

/* The end's word for the JSON ("found", "none", "to", "sender",
 * "stopped"; "running" for one that has not ended). */
const char *search_end_name(enum search_end e);

/* One step of any search, as the summary sees it. */
struct search_trial {
	int search;		/* 1, 2, ... */
	double rate;
	enum search_outcome out;
};

/* A rate tried: its runs over every search and how many met. */
struct search_rate {
	double rate;
	int runs, met;
};

/* Every rate of the n trials t, ascending, into out (room for n).
 * Returns how many. */
int search_rates(const struct search_trial *t, int n, struct search_rate *out);

/* Not monotonic: the trials that missed (SEARCH_MISSED; a sender's miss
 * says nothing of the target) below the highest rate that met in any
 * search, their indices into bad (room for n), lowest rate first. Returns
 * how many; *top is the index of the highest trial that met (-1: none). */
int search_nonmonotonic(const struct search_trial *t, int n, int *bad,
			int *top);

/* The capacities of the searches that ended (SEARCH_STOPPED ones are
 * left out), as independent repeats: found counts those that met a rate,
 * none those whose --from missed (a sender's limit at --from says
 * neither). When both happened the searches disagree: unstable, and
 * there is no median, only the interval of those that found one. */
struct search_summary {
	int n;			/* searches that ended */
	int found, none;	/* ... that found a capacity; whose --from missed */
	bool unstable;		/* found and none both > 0 */
	double median;		/* of the found ones, the lower middle one of
				 * an even count; 0: none found, or unstable */
	double min, max;	/* the interval over the found ones; 0: none */
	double confidence;	/* that [min, max] holds the median capacity of
				 * the repeats' distribution: 1 - 2^(1 - found)
				 * for found >= 2 independent ones, else 0 */
	const struct search *mid;	/* the median's search (NULL: none) */
	bool at_least;		/* it ended at a ceiling */
	int at_to, at_sender;	/* searches that ended so */
	const struct search *to, *sender;	/* one of each kind */
};

/* Summarize the n (at most SEARCH_MAX) searches s into sum. */
void search_summarize(const struct search *s, int n,
		      struct search_summary *sum);

/* The verdict line of n searches against objectives ("p99.9 <= 2 ms"):
 * "capacity 4800 pps (median of 3 independent searches, 4650-4900 over
 * them), resolution 5 %, ...", "capacity unstable: found in 2 of 3
 * independent searches (...), none in 1 ...", with any ceiling said as
 * loadgen's, and whether it was monotonic. */
void search_verdict(const struct search *s, int n, bool monotonic,
		    const char *objectives, char *buf, size_t len);

#endif
