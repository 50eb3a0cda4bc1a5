# syntax=docker/dockerfile:1
# mcpstack as a container: the binary built static (no cgo: SQLite is
# modernc's pure Go), in a distroless image that has no shell and no
# package manager, running as an unprivileged user. Build it with
#
#   docker build -t mcpstack .
#
# and run it as deploy/kubernetes does: the flags and MCPSTACK_*
# variables of `mcpstack serve --help`.
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOFLAGS=-trimpath go build -ldflags="-s -w" -o /out/mcpstack .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpstack /mcpstack
USER 65532:65532
EXPOSE 8000 9090
ENTRYPOINT ["/mcpstack", "serve"]
CMD ["--http", ":8000", "--metrics-addr", ":9090"]
