#!/usr/bin/env bash
# Installs what augmentedGP needs, installs the package with its vignettes, and runs
# the main job (inst/scripts/quickstart.R), which writes augp_quickstart.png here.
#
# The vignettes are built from a copy of the source tree once the package is
# installed (their precomputed fits need the package), placed in inst/doc, and the
# package is installed again so that vignette(package = "augmentedGP") lists them;
# the second install reuses the compiled objects of the first.
set -eu
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
log=/tmp/augp_install.log
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/augmentedGP"
tar --exclude=.git -cf - . | tar -xf - -C "$work/augmentedGP"
R CMD INSTALL --no-multiarch "$work/augmentedGP" >"$log" 2>&1 || { cat "$log"; exit 1; }
(
  cd "$work/augmentedGP"
  Rscript -e 'tools::buildVignettes(dir = ".", tangle = TRUE, quiet = TRUE)' >>"$log" 2>&1
  mkdir -p inst/doc
  mv vignettes/*.html vignettes/*.R inst/doc/
  cp vignettes/*.Rmd inst/doc/
) || { cat "$log"; echo "quickstart: the vignettes could not be built" >&2; exit 1; }
R CMD INSTALL --no-multiarch "$work/augmentedGP" >>"$log" 2>&1 || { cat "$log"; exit 1; }
Rscript inst/scripts/quickstart.R
