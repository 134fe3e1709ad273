# make kernel-falseneg: does epoll_wait(..., 0) miss ready events? 6.12,
# 6.1 with and without the backported follow-up, and the historical 6.1.8
# (lab/falseneg/run). epoll-falseneg goes, statically linked, into their
# guests.
$(eval $(call program,epoll-falseneg,lab/falseneg))

.PHONY: kernel-falseneg
kernel-falseneg:
	@mk/deps kernel
	@$(MAKE) --no-print-directory VARIANT=static build/static/bin/epoll-falseneg
	@images=$$(lab/falseneg/kernels) && lab/falseneg/run $$images
