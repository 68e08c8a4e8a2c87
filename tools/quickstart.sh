#!/usr/bin/env bash
# Installs what augmentedGP needs, installs the package, and runs the main job
# (inst/scripts/quickstart.R), which writes augp_quickstart.png here.
set -eu
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
R CMD INSTALL --no-multiarch . >/tmp/augp_install.log 2>&1 || { cat /tmp/augp_install.log; exit 1; }
Rscript inst/scripts/quickstart.R
