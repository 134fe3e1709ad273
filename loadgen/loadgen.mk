# loadgen/: the open-loop load generator (libevent, one loop per thread).
$(eval $(call program,loadgen,loadgen))
