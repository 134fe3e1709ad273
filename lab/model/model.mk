# lab/model/: epmodel, the userspace model of the epoll ready-list locking,
# and `make demo-model` (about 10 s: three lock kinds, 3 s each). The demo
# builds only epmodel and lib/, so it runs whatever state the rest is in.
$(eval $(call program,epmodel,lab/model))

.PHONY: demo-model
demo-model: deps
	@$(MAKE) --no-print-directory $(O)/bin/epmodel
	@lab/model/run $(O)/bin/epmodel
