"""falseneg: does epoll_wait(..., 0) miss a ready event? make kernel-falseneg (lab/falseneg/run)."""
