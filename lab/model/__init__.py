"""model: make demo-model, the userspace model of the ready-list locking (lab/model/run, epmodel)."""
