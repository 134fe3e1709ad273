# make kernel-unixwake: the demo's inversion with an AF_UNIX waker, on the
# 6.12 and 6.1-rt pairs, 6.1.8 and Debian's signed 6.1 image
# (lab/unixwake/run). epoll-unixwake goes, statically linked, into their
# guests.
$(eval $(call program,epoll-unixwake,lab/unixwake))

.PHONY: kernel-unixwake
kernel-unixwake:
	@mk/deps kernel
	@$(MAKE) --no-print-directory VARIANT=static build/static/bin/epoll-unixwake
	@images=$$(lab/unixwake/kernels) && lab/unixwake/run $$images
