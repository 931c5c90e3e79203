# Builds. Tests: `bash scripts/test.sh` (what CI runs).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO_BUILD := CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)"

.PHONY: build dist release test clean

# build: this machine's pi-sbx-backend and sbxsim, into bin/.
build:
	$(GO_BUILD) -o bin/pi-sbx-backend ./cmd/pi-sbx-backend
	$(GO_BUILD) -o bin/sbxsim ./cmd/sbxsim

# The platforms Docker Sandboxes runs on. The host side (serve, shell, tool --sandbox)
# builds for all of them; the agent inside the VM is always linux (amd64 or arm64).
HOSTS := darwin/arm64 darwin/amd64 windows/amd64 linux/amd64 linux/arm64

# dist: pi-sbx-backend for this machine, and dist/pi-sbx-backend-<os>-<arch>[.exe] for
# every host platform, all with the same version. The linux ones double as the agents
# serve installs in VMs (it looks for pi-sbx-backend-linux-<arch> beside itself), so keep
# a host binary and the linux ones in one directory.
dist:
	$(GO_BUILD) -o dist/pi-sbx-backend ./cmd/pi-sbx-backend
	@set -e; for t in $(HOSTS); do \
		os=$${t%/*}; arch=$${t#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		echo "dist/pi-sbx-backend-$$os-$$arch$$ext"; \
		GOOS=$$os GOARCH=$$arch $(GO_BUILD) -o dist/pi-sbx-backend-$$os-$$arch$$ext ./cmd/pi-sbx-backend; \
	done

# release: `make release VERSION=x.y.z` writes dist/release/: every platform's archive with
# both linux agents embedded, SHA256SUMS, and the npm packages packed (npm/platforms.json
# names them). Reproducible; publishes nothing (scripts/release.sh).
release:
	@[ "$(origin VERSION)" = "command line" ] || { echo "make release needs VERSION=x.y.z" >&2; exit 2; }
	bash scripts/release.sh $(VERSION) dist/release

test:
	bash scripts/test.sh

clean:
	rm -rf bin dist
