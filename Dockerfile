# sqsemu: a local Amazon SQS-compatible server.
#   docker build -t sqsemu .
#   docker run --rm -p 9324:9324 sqsemu
# Configure with SQSEMU_* environment variables or a mounted config file (SQSEMU_CONFIG; README, "Docker").
#
# BASE_IMAGE: any Debian-like image with Python 3.11+ and its venv module. Where Docker Hub cannot be reached,
# docker/build-base.sh makes a stand-in from Debian's packages: --build-arg BASE_IMAGE=sqsemu-base:bookworm.
# Behind a TLS-intercepting proxy, give pip the proxy's certificates as a build secret (BuildKit):
#   docker build --secret id=pip_cert,src=/etc/ssl/certs/ca-certificates.crt -t sqsemu .
# AWS_CLI=1 adds the AWS CLI v1 (pip's awscli, into sqsemu's environment), so that `awslocal` in LocalStack-style
# ready.d init scripts (SQSEMU_COMPAT=localstack) works: docker build --build-arg AWS_CLI=1 -t sqsemu . It costs
# about 140 MB (199 MB became 339 MB on the Debian stand-in: awscli carries its own copy of botocore); without it,
# awslocal says that the AWS CLI is not in the image (docs/coming-from-localstack.md).
ARG BASE_IMAGE=python:3.11-slim

# ---- build: sqsemu and its dependencies installed from wheels into a virtual environment
FROM ${BASE_IMAGE} AS build
ARG AWS_CLI=0
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ONLY_BINARY=:all:
WORKDIR /src
# The hot path is compiled with mypyc (setup.py; the modules listed in sqsemu/compiled.py), so this stage installs
# a C compiler from Debian's packages, and Python's headers where the base lacks them (Debian's python3 does; the
# official image has them); the final image gets only the installed environment, no compiler. Where the packages
# cannot be had, the build goes on and makes the pure-Python package, as its log and the server's /health say.
# Binary wheels only for the dependencies (PIP_ONLY_BINARY; sqsemu's own wheel is built here from source). The auth
# extra (botocore) lets the image run --auth sigv4 (SQSEMU_AUTH=sigv4). pip's download cache and setup.py's build
# cache (the compiled modules, keyed by every source; id sqsemu-mypyc) are build cache mounts, kept between builds
# and never part of an image: a rebuild of sources compiled before does not compile them again. pip and setuptools
# leave the environment at the end: the final image runs sqsemu, it installs nothing.
RUN packages="gcc libc6-dev"; \
    python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))' \
        || packages="${packages} python3-dev"; \
    if command -v apt-get >/dev/null \
        && apt-get update -qq >/dev/null \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${packages} >/dev/null; then \
        echo "sqsemu image: installed ${packages} to compile the hot path"; \
    else \
        echo "sqsemu image: could not install ${packages}: the image will be the pure-Python build"; \
    fi
# The sources come after the compiler's layer, so that a change to them does not install the compiler again.
COPY pyproject.toml setup.py README.md LICENSE ./
COPY sqsemu ./sqsemu
RUN --mount=type=secret,id=pip_cert --mount=type=cache,target=/root/.cache/pip \
    --mount=type=cache,id=sqsemu-mypyc,target=/root/.cache/sqsemu \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && cli="" \
    && if [ "${AWS_CLI}" = 1 ]; then cli="awscli>=1.32"; echo "sqsemu image: with the AWS CLI (${cli})"; fi \
    && python3 -m venv /opt/sqsemu \
    && /opt/sqsemu/bin/pip wheel --wheel-dir /wheels '.[auth]' ${cli} \
    && /opt/sqsemu/bin/pip install --no-index --find-links /wheels 'sqsemu[auth]' ${cli} \
    && /opt/sqsemu/bin/pip uninstall --yes pip setuptools

# ---- the image: the base, the installed environment, an unprivileged user
FROM ${BASE_IMAGE}
ENV PATH=/opt/sqsemu/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SQSEMU_HOST=0.0.0.0 \
    SQSEMU_PORT=9324
COPY --from=build /opt/sqsemu /opt/sqsemu
# Other emulators' conventions (docker/entrypoint.sh): /opt/elasticmq.conf read when mounted, LocalStack's port 4566
# with SQSEMU_COMPAT=localstack.
COPY docker/entrypoint.sh /usr/local/bin/sqsemu-entrypoint
# /data is where durable mode keeps its state (SQSEMU_DATA_DIR=/data, a volume in docker-compose.yml); a new named
# volume takes this folder's owner, so the unprivileged user can write there.
RUN groupadd --gid 10001 sqsemu \
    && useradd --uid 10001 --gid sqsemu --no-create-home --shell /usr/sbin/nologin sqsemu \
    && mkdir /data \
    && chown sqsemu:sqsemu /data

USER sqsemu
EXPOSE 9324 4566

# Host and port come from SQSEMU_HOST and SQSEMU_PORT (set above; `docker run -e SQSEMU_PORT=...` changes them), and
# the health check asks the port the server listens on (4566 with SQSEMU_COMPAT=localstack and the image's port, as
# the entrypoint decides), over HTTPS with SQSEMU_TLS set as sqsemu reads it (its own port: no certificate check).
# The image has no curl: the standard library asks /health.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python3", "-c", "import os, ssl, sys, urllib.request; port = os.environ.get('SQSEMU_PORT', '9324'); port = '4566' if port == '9324' and os.environ.get('SQSEMU_COMPAT') == 'localstack' else port; tls = os.environ.get('SQSEMU_TLS', '').strip().lower() in ('1', 'true', 't', 'yes', 'y', 'on'); sys.exit(0 if urllib.request.urlopen('%s://127.0.0.1:%s/health' % ('https' if tls else 'http', port), timeout=2, **({'context': ssl._create_unverified_context()} if tls else {})).status == 200 else 1)"]

ENTRYPOINT ["sqsemu-entrypoint"]
CMD ["sqsemu"]
