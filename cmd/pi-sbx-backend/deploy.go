package main

// deployEnv documents the variables of the docker_* tools and GC.
var deployEnv = []envDoc{
	{"DOCKER_SANDBOX_CPUS, _MEMORY, _TEMPLATE", "sbx create --cpus (whole number, 0 = all), --memory (>= 512m), --template"},
	{"PI_SBX_MODE=tools|deploy|both", "the tools serve lists: pi's seven, the docker_* tools, or both (default both; the pi package starts serve with tools unless set)"},
	{"DOCKER_SANDBOX_GC_HOURS", "at session start, remove stale pi-sbx-* sandboxes older than this (default 24, 0 = off)"},
	{"XDG_STATE_HOME", "owner records for GC live in $XDG_STATE_HOME/pi-sbx-backend/owners (default ~/.local/state)"},
}
