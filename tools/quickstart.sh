#!/usr/bin/env bash
# Installs what augmentedGP needs, builds the source package with its vignettes
# (R CMD build), installs that tarball into R's default library, and runs the
# main job (inst/scripts/quickstart.R), which writes augp_quickstart.png into
# the repository root. Afterwards vignette(package = "augmentedGP") lists the
# vignettes. The build log is kept in $TMPDIR/augp_quickstart.log (or /tmp).
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
bash tools/install_deps.sh
log="${TMPDIR:-/tmp}/augp_quickstart.log"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# compile on all cores unless the caller chose otherwise
export MAKEFLAGS="${MAKEFLAGS:--j$(nproc 2>/dev/null || echo 2)}"
echo "quickstart: building the package and its vignettes (log: $log)"
(cd "$work" && R CMD build --no-manual "$repo") >"$log" 2>&1 || {
  cat "$log"
  echo "quickstart: R CMD build failed" >&2
  exit 1
}
tarball=$(ls "$work"/augmentedGP_*.tar.gz)
echo "quickstart: installing $(basename "$tarball")"
R CMD INSTALL "$tarball" >>"$log" 2>&1 || {
  cat "$log"
  echo "quickstart: R CMD INSTALL failed" >&2
  exit 1
}
Rscript inst/scripts/quickstart.R
