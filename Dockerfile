# sqsemu: a local Amazon SQS-compatible server.
#   docker build -t sqsemu .
#   docker run --rm -p 9324:9324 sqsemu
# Configure with SQSEMU_* environment variables or a mounted config file (SQSEMU_CONFIG; see README); host and port
# are fixed by CMD below.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/sqsemu
COPY pyproject.toml README.md ./
COPY sqsemu ./sqsemu
# The auth extra (botocore) lets the image run --auth sigv4 (SQSEMU_AUTH=sigv4). /data is where durable mode keeps
# its state (SQSEMU_DATA_DIR=/data, a volume in docker-compose.yml); a new named volume takes this folder's owner, so
# the unprivileged user can write there.
RUN pip install .[auth] \
    && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin sqsemu \
    && mkdir /data \
    && chown sqsemu:sqsemu /data

USER sqsemu
EXPOSE 9324

# The slim image has no curl: ask /health with the standard library.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9324/health', timeout=2).status == 200 else 1)"]

CMD ["sqsemu", "--host", "0.0.0.0", "--port", "9324"]
