#!/usr/bin/env bash
# Checks (and, where it may, installs) what memlab builds with on Debian/Ubuntu:
# the CUDA toolkit (not installed here: it must be present), CMake >= 3.25, Ninja,
# a C++17 compiler, CLI11, nlohmann-json, GoogleTest and python3-jsonschema (the record's schema
# test); with --plots, matplotlib; and
# nvml.h (pip package nvidia-nvml-dev-cu12) when neither the toolkit nor the system has it.
# Sourced by run.sh and test.sh; exits non-zero with the exact command when it cannot install.
set -euo pipefail

want_plots=0
[ "${1:-}" = "--plots" ] && want_plots=1

say() { echo "memlab setup: $*" >&2; }

# The CUDA toolkit: nvcc on PATH, or the usual install location.
if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$d/nvcc" ]; then export PATH="$d:$PATH"; break; fi
  done
fi
if ! command -v nvcc >/dev/null 2>&1; then
  say "the CUDA toolkit (nvcc) was not found. Install it from NVIDIA's repository, e.g.:"
  say "  sudo apt-get install -y cuda-toolkit    (after adding NVIDIA's CUDA apt repository)"
  exit 1
fi
export CUDACXX="${CUDACXX:-$(command -v nvcc)}"

# python3-jsonschema: the record.schema test validates every committed record against
# docs/record.schema.json with it.
pkgs=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev python3-jsonschema)
[ "$want_plots" = 1 ] && pkgs+=(python3-matplotlib)

if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      say "installing ${missing[*]}"
      { apt-get install -y -q "${missing[@]}" || { apt-get update -q && apt-get install -y -q "${missing[@]}"; }; } >&2
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      say "installing ${missing[*]}"
      { sudo apt-get install -y -q "${missing[@]}" || { sudo apt-get update -q && sudo apt-get install -y -q "${missing[@]}"; }; } >&2
    else
      say "missing packages: ${missing[*]}. Install them with:"
      say "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
      exit 1
    fi
  fi
else
  say "not a Debian/Ubuntu system: make sure CMake >= 3.25, Ninja, CLI11, nlohmann-json and GoogleTest are installed"
fi

cmake_version=$(cmake --version | head -n1 | awk '{print $3}')
if [ "$(printf '%s\n3.25.0\n' "$cmake_version" | sort -V | head -n1)" != "3.25.0" ]; then
  say "CMake $cmake_version is older than 3.25. Install a newer one with:"
  say "  python3 -m pip install --user 'cmake>=3.25'   (then put ~/.local/bin first on PATH)"
  exit 1
fi

# nvml.h for the clocks/throttle monitor (only the header: the library is the driver's,
# opened at run time). Optional: without it memlab builds and rows say "nvml": "not built".
nvml_found=0
for d in "$(dirname "$(command -v nvcc)")/../include" /usr/include /usr/local/include; do
  [ -f "$d/nvml.h" ] && nvml_found=1
done
if [ "$nvml_found" = 0 ] && command -v python3 >/dev/null 2>&1; then
  if python3 -c "import glob, site, sys; sys.exit(0 if any(glob.glob(p + '/nvidia/*/include/nvml.h') for p in [*site.getsitepackages(), site.getusersitepackages()]) else 1)" 2>/dev/null; then
    nvml_found=1
  else
    say "nvml.h not found: installing it with 'python3 -m pip install nvidia-nvml-dev-cu12' (header only)"
    if python3 -m pip install -q nvidia-nvml-dev-cu12 >&2 2>/dev/null ||
       python3 -m pip install -q --user nvidia-nvml-dev-cu12 >&2 2>/dev/null; then
      nvml_found=1
    fi
  fi
fi
if [ "$nvml_found" = 0 ]; then
  say "nvml.h is not available (pip could not install nvidia-nvml-dev-cu12): memlab builds without"
  say "  the clocks/throttle monitor; rows will say \"nvml\": \"not built\". To add it later:"
  say "  python3 -m pip install nvidia-nvml-dev-cu12, then reconfigure (cmake --fresh)"
fi
