package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// scaffold is what docker_init writes for one language.
type scaffold struct {
	port       int
	dockerfile string
	ignore     string
}

var scaffolds = map[string]scaffold{
	"node": {3000, `FROM node:22-alpine
WORKDIR /app
COPY package*.json ./
RUN npm ci --omit=dev || npm install --omit=dev
COPY . .
ENV PORT=3000
EXPOSE 3000
CMD ["npm", "start"]
`, "node_modules\nnpm-debug.log\n.git\n.env\n"},
	"pnpm": {3000, `FROM node:22-alpine
RUN corepack enable
WORKDIR /app
COPY package.json pnpm-lock.yaml* ./
RUN pnpm install --prod --frozen-lockfile || pnpm install --prod
COPY . .
ENV PORT=3000
EXPOSE 3000
CMD ["pnpm", "start"]
`, "node_modules\n.pnpm-store\n.git\n.env\n"},
	"go": {8080, `FROM golang:1.23-alpine AS build
WORKDIR /src
COPY go.* ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/app .

FROM alpine:3.20
COPY --from=build /out/app /app
EXPOSE 8080
CMD ["/app"]
`, ".git\nbin/\n*.test\n.env\n"},
	"python": {8000, `FROM python:3.12-slim
WORKDIR /app
COPY requirements*.txt ./
RUN pip install --no-cache-dir -r requirements.txt || true
COPY . .
EXPOSE 8000
CMD ["python", "-m", "http.server", "8000"]
`, "__pycache__\n*.pyc\n.venv\n.git\n.env\n"},
	"rust": {8080, `FROM rust:1-slim AS build
WORKDIR /src
COPY . .
RUN cargo build --release && cp target/release/$(sed -n 's/^name *= *"\(.*\)"/\1/p' Cargo.toml | head -1) /app

FROM debian:bookworm-slim
COPY --from=build /app /app
EXPOSE 8080
CMD ["/app"]
`, "target\n.git\n.env\n"},
	// generic serves the directory with busybox httpd: it builds from the one image a
	// fresh sandbox daemon may already have.
	"generic": {8080, `FROM busybox:latest
WORKDIR /www
COPY . /www
EXPOSE 8080
CMD ["httpd", "-f", "-v", "-p", "8080", "-h", "/www"]
`, ".git\n.env\nDockerfile\n.dockerignore\ncompose.yaml\n"},
}

func composeFor(port int) string {
	return fmt.Sprintf(`services:
  app:
    build: .
    ports:
      - "%d:%d"
    restart: unless-stopped
`, port, port)
}

// writeScript writes stdin to "$1", refusing to replace an existing file (or link) unless
// "$2" is "force". It runs in the sandbox: the host writes nothing into the workspace
// itself. The content goes to a new file of mktemp's (created exclusively: no planted
// link is followed) that is then renamed over the target: a link there is replaced, never
// followed, and readers see the old file or the new one.
const writeScript = `set -e
if [ "$2" != force ] && { [ -e "$1" ] || [ -L "$1" ]; }; then echo "$3 exists (force=true replaces it)" >&2; exit 3; fi
mkdir -p "$(dirname "$1")"
t=$(mktemp "$(dirname "$1")/.pi-sbx-init.XXXXXX")
trap 'rm -f "$t"' EXIT
cat > "$t"
chmod 644 "$t"
mv -f "$t" "$1"`

func (d *Deployer) initTool(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[struct {
		Context string `json:"context"`
		Lang    string `json:"lang"`
		Force   bool   `json:"force"`
		Compose bool   `json:"compose"`
	}](raw)
	if err != nil {
		return "", err
	}
	ctxDir := a.Context
	if ctxDir == "" {
		ctxDir = "."
	}
	dir, err := Confine(d.Workspace, ctxDir)
	if err != nil {
		return "", fmt.Errorf("context: %w", err)
	}
	lang := a.Lang
	if lang == "" {
		lang = "generic"
	}
	sc, ok := scaffolds[lang]
	if !ok {
		return "", refuse("lang %q: want node, pnpm, go, python, rust or generic", lang)
	}
	files := []struct{ name, content string }{{"Dockerfile", sc.dockerfile}, {".dockerignore", sc.ignore}}
	if a.Compose {
		files = append(files, struct{ name, content string }{"compose.yaml", composeFor(sc.port)})
	}
	name, err := d.sandbox(ctx)
	if err != nil {
		return "", err
	}
	mode := "keep"
	if a.Force {
		mode = "force"
	}
	var wrote []string
	for _, f := range files {
		p, err := Confine(d.Workspace, filepath.Join(dir, f.name))
		if err != nil {
			return "", err
		}
		o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, []byte(f.content), "sh", "-c", writeScript, "pi-sbx-init", p, mode, d.rel(p))
		if err != nil {
			return "", err
		}
		if o.code != 0 {
			return strings.Join(wrote, "\n"), fmt.Errorf("writing %s: %s", d.rel(p), d.relText(strings.TrimSpace(o.stderr)))
		}
		wrote = append(wrote, "Wrote "+p)
	}
	return fmt.Sprintf("%s\n%s project, port %d. Next: docker_build {\"context\":%q,\"tag\":\"app:dev\"}, then docker_run {\"image\":\"app:dev\",\"ports\":[\"%d\"]}.",
		strings.Join(wrote, "\n"), lang, sc.port, dir, sc.port), nil
}
