# kernel/model/: epmodel, the userspace model of the epoll ready-list locking,
# and `make demo-model` (about 10 s: three lock kinds, 3 s each). The demo
# builds only epmodel and lib/, so it runs whatever state the rest is in.
$(eval $(call program,epmodel,kernel/model))

.PHONY: demo-model
demo-model: deps
	@$(MAKE) --no-print-directory $(O)/bin/epmodel
	@kernel/model/demo $(O)/bin/epmodel
