# Builds. Tests: `bash scripts/test.sh` (what CI runs).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO_BUILD := CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)"

.PHONY: build dist test clean

# build: this machine's pi-sbx-backend and sbxsim, into bin/.
build:
	$(GO_BUILD) -o bin/pi-sbx-backend ./cmd/pi-sbx-backend
	$(GO_BUILD) -o bin/sbxsim ./cmd/sbxsim

# dist: pi-sbx-backend for this machine plus the static linux agents that serve installs
# in VMs of another architecture (looked up beside the executable as
# pi-sbx-backend-linux-<arch>), all with the same version.
dist:
	$(GO_BUILD) -o dist/pi-sbx-backend ./cmd/pi-sbx-backend
	GOOS=linux GOARCH=amd64 $(GO_BUILD) -o dist/pi-sbx-backend-linux-amd64 ./cmd/pi-sbx-backend
	GOOS=linux GOARCH=arm64 $(GO_BUILD) -o dist/pi-sbx-backend-linux-arm64 ./cmd/pi-sbx-backend

test:
	bash scripts/test.sh

clean:
	rm -rf bin dist
