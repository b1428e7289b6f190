# Basalt's container image: `basalt` built as a static (musl) binary, run as a non-root user in an
# otherwise empty image. Build from the repository root:
#
#   docker build -t registry.example.com/basalt:v0.1.0 .
#
# (deploy/README.md, "The image"). Not built in this repository's CI: its machines cannot build
# images.

# --- build ---------------------------------------------------------------------------------------
FROM rust:1.95-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools \
 && rm -rf /var/lib/apt/lists/* \
 && rustup target add x86_64-unknown-linux-musl
WORKDIR /src
COPY . .
# --locked: exactly the dependency versions of Cargo.lock. The musl target links statically
# (mimalloc and ring's C parts are built with musl-gcc).
RUN cargo build --release --locked -p basalt-runtime --bin basalt --target x86_64-unknown-linux-musl \
 && install -D -m 0755 target/x86_64-unknown-linux-musl/release/basalt /out/usr/local/bin/basalt \
 && mkdir -p /out/tmp && chmod 1777 /out/tmp

# --- run -----------------------------------------------------------------------------------------
FROM scratch
COPY --from=build /out/ /
ENV PATH=/usr/local/bin
# The Deployment (deploy/base/basalt.yaml) runs it as UID 1000 too, with a read-only root file
# system; in-cluster, the ServiceAccount token and CA come from the mounted volume, so the image
# needs no CA bundle.
USER 1000:1000
ENTRYPOINT ["basalt"]
CMD ["scheduler", "--help"]
