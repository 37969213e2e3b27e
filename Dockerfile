# For people who build their own image (docker build -t catchup .). The
# binary is static (CGO_ENABLED=0), so the image holds it and the CA
# certificates for TLS to the brokers, nothing else.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build context holds no .git (.dockerignore): pass what `make build`
# reads from git, e.g. --build-arg VERSION=$(git describe --tags --always)
# --build-arg COMMIT=$(git rev-parse --short HEAD).
ARG VERSION=devel
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
      -X github.com/kafka-catchup/catchup/internal/version.version=${VERSION} \
      -X github.com/kafka-catchup/catchup/internal/version.commit=${COMMIT} \
      -X github.com/kafka-catchup/catchup/internal/version.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    -o /out/catchup ./cmd/catchup

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/catchup /catchup
USER 65532:65532
ENTRYPOINT ["/catchup"]
CMD ["--help"]
