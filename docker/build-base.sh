#!/usr/bin/env bash
# Build a local stand-in for python:3.11-slim from Debian's packages, for machines that cannot pull from Docker Hub:
#
#   docker/build-base.sh                       # makes sqsemu-base:bookworm (reused when it exists)
#   docker build --build-arg BASE_IMAGE=sqsemu-base:bookworm -t sqsemu .
#
# Debian 12 (bookworm) ships Python 3.11, which sqsemu needs (>= 3.11). The image is a debootstrap --variant=minbase
# root file system with python3, python3-venv (venv and ensurepip), ca-certificates and netbase, without apt's
# package lists, documentation or locales, imported with `docker import`. Needs root, debootstrap and a Docker
# engine; reads the Debian mirror from DEBIAN_MIRROR (default http://deb.debian.org/debian).
#
# Environment: BASE_TAG (default sqsemu-base:bookworm), DEBIAN_SUITE (default bookworm), FORCE=1 rebuilds.
set -euo pipefail
# The caller's Python byte code settings (the test suite sets PYTHONPYCACHEPREFIX) would reach the Python that the
# packages' install scripts and compileall run inside the new root, and leave its byte code in a cache folder in the
# image (/root/.cache) instead of beside the standard library.
unset PYTHONPYCACHEPREFIX PYTHONDONTWRITEBYTECODE

tag="${BASE_TAG:-sqsemu-base:bookworm}"
suite="${DEBIAN_SUITE:-bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cache="${DEBOOTSTRAP_CACHE:-/var/cache/sqsemu-debootstrap}"  # the downloaded .deb files, kept for a rebuild

# The recipe's version, kept as a label of the image: an image made by an older recipe is made again (2: the standard
# library's byte code compiled without the caller's byte code settings, none left in /root/.cache).
recipe=2
if [ "${FORCE:-0}" != 1 ] && [ "$(docker image inspect -f '{{index .Config.Labels "sqsemu.base-recipe"}}' "${tag}" 2>/dev/null)" = "${recipe}" ]; then
    echo "build-base: ${tag} exists; reusing it (FORCE=1 rebuilds)"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "build-base: debootstrap needs root" >&2
    exit 1
fi
command -v debootstrap >/dev/null || { echo "build-base: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }

mkdir -p "${cache}"
root=$(mktemp -d /tmp/sqsemu-base.XXXXXX)
trap 'rm -rf "${root}"' EXIT
started=$SECONDS
echo "build-base: debootstrap ${suite} (minbase) into ${root}"
debootstrap --variant=minbase --cache-dir="${cache}" --include=python3,python3-venv,ca-certificates,netbase \
    "${suite}" "${root}" "${mirror}" >"${root}.log" 2>&1 || { tail -n 30 "${root}.log" >&2; rm -f "${root}.log"; exit 1; }
rm -f "${root}.log"

# What a slim image leaves out: package lists and caches, documentation, man pages, locales.
rm -rf "${root}"/var/lib/apt/lists/* "${root}"/var/cache/apt/*.bin "${root}"/var/cache/apt/archives/*.deb \
    "${root}"/usr/share/doc/* "${root}"/usr/share/man/* "${root}"/usr/share/info/* "${root}"/usr/share/locale/* \
    "${root}"/var/log/*.log "${root}"/var/log/apt/* "${root}"/tmp/*

# The standard library's byte code, as python:3.11-slim has it: the image's unprivileged user could not write it, and
# every start would compile again what it imports.
chroot "${root}" python3 -m compileall -q -j 0 /usr/lib/python3.11 >/dev/null 2>&1 || true

tar --numeric-owner -C "${root}" -c . | docker import \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["python3"]' \
    --change "LABEL sqsemu.base-recipe=${recipe}" \
    - "${tag}" >/dev/null
echo "build-base: ${tag} built in $((SECONDS - started)) s ($(docker run --rm "${tag}" python3 --version))"
