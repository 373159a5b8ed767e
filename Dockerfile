# A static pgscale image FROM scratch: what the agents' Indexed Job runs
# (docs/agents.md). CGO_ENABLED=0: pgscale needs no C library (the SQLite
# store is pure Go), so the binary is static and the image is the binary.
#
#   docker build -t registry.example/pgscale:dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o /pgscale ./cmd/pgscale

FROM scratch
COPY --from=build /pgscale /pgscale
# TLS to the coordination database or the target verifies against these.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
USER 65532:65532
ENTRYPOINT ["/pgscale"]
CMD ["agent"]
