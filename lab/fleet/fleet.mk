# make fleet INVENTORY=FILE [FLEET_ID=NAME]: deploy/ansible/fleet.yml on
# FILE's hosts: relay on the relay hosts, loadgen@ on the load hosts, the
# results and their merge in results/NAME-fleet/ (lab/fleet/run).
FLEET_ID ?=
.PHONY: fleet
fleet: release
	@mk/deps deploy fleet report
	@lab/fleet/run $(if $(FLEET_ID),--id $(FLEET_ID)) "$(INVENTORY)"
