"""fleet: make fleet, relay and load hosts over SSH with Ansible (lab/fleet/run)."""
