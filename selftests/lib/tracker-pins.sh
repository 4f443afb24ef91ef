# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Host tests that give the agent or tandemctl their own tracker folder
# (TANDEM_TRACKER_DIR) and must leave no BPF pin behind.

# tracker_pins_gone TANDEMCTL: unload the tracker pinned at
# $TANDEM_TRACKER_DIR (an agent killed with SIGKILL leaves it loaded), and
# if that fails (seen once: an earlier run's folder left), remove its pins
tracker_pins_gone() {
	[ -d "$TANDEM_TRACKER_DIR" ] || return 0
	"$1" tracker unload >/dev/null 2>&1
	[ -d "$TANDEM_TRACKER_DIR" ] && rm -rf "$TANDEM_TRACKER_DIR"
	return 0
}
