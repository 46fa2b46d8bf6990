# bcuda on a CUDA runtime base: the GPU path needs the driver (given by the host through the
# NVIDIA container toolkit: docker run --gpus all) and NVRTC, which this base image holds.
# Build: docker build -t bcuda:0.1.0 .   Run: docker run --gpus all -v $PWD:/data bcuda:0.1.0 bcuda map ...
FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04 AS build
# nasm and autotools: ISA-L (gzip input) is built from its sources and linked statically.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends curl ca-certificates build-essential \
    nasm autoconf automake libtool \
    && rm -rf /var/lib/apt/lists/*
RUN curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
ENV PATH=/root/.cargo/bin:$PATH
WORKDIR /src
COPY . .
RUN cargo install --locked --path . --root /usr/local

FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04
COPY --from=build /usr/local/bin/bcuda /usr/local/bin/bcuda
# procps: Nextflow reads task metrics with ps.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends procps && rm -rf /var/lib/apt/lists/*
CMD ["bcuda", "--help"]
