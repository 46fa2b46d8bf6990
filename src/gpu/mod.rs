//! GPU driver: NVRTC-compiled kernels from `cuda/`, run through cudarc.
